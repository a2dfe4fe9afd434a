"""The preparation of a capture's changes for replay, in DuckDB: one query over narrow columns.

:func:`prepare` registers the frame's columns (``events``), finds the exact
redeliveries (``redelivered``) and writes ``prep``: every row change kept (cut
at ``as_of``), its table's name, its replay position ``_pos`` (the canonical
order: a missing seq filled, a position that partitions share tied), whether
an update's images name another key (``may_move``), a truncate's delete of
each key changed before it, and whether the key was live before the change
(``live_before``). :mod:`cdckit.analysis.replay_plan` reads the lanes from it.

>>> import duckdb, cdckit
>>> con = duckdb.connect()
>>> prepare(con, cdckit.read(cdckit.samples.path("shareplex/examples")))
>>> con.execute("SELECT count(*) > 0, count(*) = count(DISTINCT _pos) FROM prep").fetchone()
(True, True)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import duckdb
import numpy as np
import pandas as pd
import pyarrow as pa

from ..duckdb_scans import scan_batches
from ..frame import REPLAY_OPS
from ..sql_literals import sql_text
from .ordering.identity import REDELIVERY_IDENTITY, SNAPSHOT_PLACE, SNAPSHOT_PLACE_SQL
from .ordering.sort import FIRST_AT_A_TIE, IN_MESSAGE, TIE_MARK, row_in_message_dialects

__all__ = ["prepare", "named_key_columns", "ORDERS", "NAMES", "SIGNATURE", "stream_table"]

_ARRIVAL = 'coalesce(source, \'\'), "partition" NULLS FIRST, "offset"'

#: Replay orders as SQL ``ORDER BY`` lists (``_row``, the input position, breaks ties as a stable sort would).
ORDERS = {
    "seq": f"_seq, {_ARRIVAL}, _row",
    "event_time": f"_time NULLS LAST, {_ARRIVAL}, _row",
    "arrival": f"{_ARRIVAL}, _row",
}

_TABLE_NAME = """CASE WHEN "table" IS NULL THEN NULL
                      WHEN coalesce(database, schema) IS NULL THEN "table"
                      ELSE coalesce(database, schema) || '.' || "table" END"""


def _json_path(column: str) -> str:
    """The JSON path of a top-level ``column``, as a SQL text literal.

    >>> print(_json_path('say "hi"'))
    '$."say \\"hi\\""'
    """
    return sql_text('$."' + column.replace('"', '\\"') + '"')


#: Above this many distinct key column lists, key parts are found with a path built per row (see :func:`_key_parts`).
_CONSTANT_PATH_LISTS = 64


def _key_parts(image: str, key_lists: Sequence[Sequence[str]] | None = None) -> str:
    """SQL: the key column values of an update's ``image`` as JSON texts (NULL where a column is missing).

    ``key_lists``: the distinct key column lists of the updates, when few: each is read with constant paths,
    the image parsed once (a path built per row parses the image once per key column, and costs the building).
    """
    head = "CASE WHEN op = 'update' AND key IS NOT NULL AND len(key_columns) > 0 "
    if key_lists is not None and len(key_lists) <= _CONSTANT_PATH_LISTS:
        cases = [
            f"WHEN key_columns = [{', '.join(sql_text(c) for c in columns)}] "
            f"THEN try(json_extract({image}, [{', '.join(_json_path(c) for c in columns)}])) "
            for columns in key_lists
        ]
        return head + "THEN CASE " + "".join(cases) + "END END" if cases else "CAST(NULL AS JSON[])"
    path = "'$.\"' || replace(c, '\"', '\\\"') || '\"'"
    return head + f"THEN try(list_transform(key_columns, lambda c: json_extract({image}, {path}))) END"


def _names_other_key(parts: str) -> str:
    """SQL: whether key ``parts`` are whole and, written as a key text, differ from ``key``."""
    return f"coalesce(list_count({parts}) = len({parts}) AND to_json({parts})::VARCHAR <> key, false)"


#: SQL: the names of a change's key columns and of its images' columns, in that order.
NAMES = (
    "list_concat(coalesce(key_columns, []), coalesce(try(json_keys(before)), []), coalesce(try(json_keys(after)), []))"
)


def _signature(before_names: str, after_names: str) -> str:
    """SQL: a hash of a change's key column names and of each image's column names (``_sig``: changes alike in
    these share it), from the SQL of the images' names."""
    # a list of the three lists: DuckDB hashes a row of lists as their elements end to end (a name moved from
    # one image to the next would not change it)
    return f"hash([coalesce(key_columns, []), coalesce({before_names}, []), coalesce({after_names}, [])])"


#: SQL: the signature of a change, read from its images.
SIGNATURE = _signature("try(json_keys(before))", "try(json_keys(after))")

_CHANGES = "op IN (" + ", ".join(f"'{op}'" for op in REPLAY_OPS) + ") {cut}"
_IDENTITY_PARTS = ["dialect", "database", "schema", '"table"', "key"] + [
    SNAPSHOT_PLACE_SQL if c == SNAPSHOT_PLACE else c for c in REDELIVERY_IDENTITY
]
_IDENTITY = ", ".join(_IDENTITY_PARTS)  # ordering's rule, per row

#: The identity without the images: changes that share it are the only ones whose images are compared.
_PLACE = ", ".join(c for c in _IDENTITY_PARTS if c not in ("before", "after"))

#: Exact redeliveries (same identity, position and images; seq set): every copy after the first to arrive.
#: Only rows whose identity hash without the images is seen twice are compared column by column (hashing
#: every image costs more than the rest of the query).
_REDELIVERED = """
CREATE TEMP TABLE redelivered AS
SELECT _row FROM (
    SELECT _row, row_number() OVER (PARTITION BY {identity} ORDER BY {arrival}, _row) AS copy
    FROM events
    WHERE {changes} AND seq IS NOT NULL AND hash({place}) IN (
        SELECT hash({place}) FROM events WHERE {changes} AND seq IS NOT NULL GROUP BY 1 HAVING count(*) > 1))
WHERE copy > 1
"""

#: ``seq``, or where it is missing the ``seq`` of the change that arrived before it in the same stream, source
#: and partition (see :func:`cdckit.analysis.ordering.sort.filled_seq`); a plain ``seq`` when no change lacks one.
_FILLED_SEQ = """coalesce(last_value({position} IGNORE NULLS) OVER (
    PARTITION BY {stream}coalesce(source, ''), coalesce("partition", -1) ORDER BY "offset", _row
    ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW), '')"""


def _message_position() -> str:
    """SQL: ``seq`` without the place in its message where the dialect writes one
    (:func:`cdckit.analysis.ordering.sort.message_positions`)."""
    names = ", ".join(f"'{name}'" for name in row_in_message_dialects())
    if not names:
        return "seq"
    return f"CASE WHEN dialect IN ({names}) THEN regexp_replace(seq, '{IN_MESSAGE}', '') ELSE seq END"


#: The filled seq (``_fill``) with the tie mark after the deletes at a position several partitions of one
#: source share (see :mod:`cdckit.analysis.ordering.sort`); ``_fill`` as it is when no source has two partitions.
_TIED_SEQ = f"""CASE WHEN _fill <> ''
    AND min(coalesce("partition", -1)) OVER (PARTITION BY {{stream}}coalesce(source, ''), _fill)
        < max(coalesce("partition", -1)) OVER (PARTITION BY {{stream}}coalesce(source, ''), _fill)
    AND bool_or(op NOT IN {tuple(FIRST_AT_A_TIE)}) OVER (
        PARTITION BY {{stream}}coalesce(source, ''), coalesce("partition", -1), _fill ORDER BY "offset", _row
        ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
    THEN _fill || chr({ord(TIE_MARK)}) ELSE _fill END"""

_PREPARE = """
CREATE TEMP TABLE prep AS
WITH kept AS (  -- narrow from here on: windows sort whole rows, so the images stay behind
    SELECT _row, dialect, {table_name} AS _table, key, op, seq, source, "partition", "offset", _time,
        after IS NOT NULL AS has_after, {signature} AS _sig,
        {before_parts} AS _before_key, {after_parts} AS _after_key
    FROM (SELECT *, try(json_keys(before)) AS _before_names, try(json_keys(after)) AS _after_names  -- parsed once
          FROM events WHERE {changes} AND NOT EXISTS (SELECT 1 FROM redelivered r WHERE r._row = events._row))
), filled AS (  -- an update may move its row when an image names a whole key other than the event's
    SELECT * EXCLUDE (_before_key, _after_key), {filled_seq} AS _fill,
        {before_moves} OR {after_moves} AS may_move
    FROM kept
), tied AS (
    SELECT * EXCLUDE (_fill), {tied_seq} AS _seq FROM filled
), positions AS (  -- the replay order, sorting the narrow columns it reads only
    SELECT _row, row_number() OVER (ORDER BY {order}) AS _pos FROM tied WHERE _table IS NOT NULL
), placed AS (
    SELECT _row, dialect, _table, key, op, has_after, _seq, source, "partition", "offset", _sig, may_move,
        _pos, false AS _cleared
    FROM tied JOIN positions USING (_row)
), cleared AS (  -- a truncate deletes every key of its table changed before it: a delete of each, in its place
    SELECT t._row, t.dialect, t._table, k.key, 'delete' AS op, false AS has_after, t._seq, t.source,
        t."partition", t."offset", t._sig, false AS may_move, t._pos,
        true AS _cleared
    FROM placed t JOIN (SELECT _table, key, min(_pos) AS _first FROM placed WHERE key IS NOT NULL GROUP BY ALL) k
        ON k._table = t._table AND k._first < t._pos
    WHERE t.op = 'truncate'
), every AS (
    {every}
), lives AS (  -- whether the key was live before the change (1), dead (0) or never seen (NULL); narrow
    SELECT _pos, _cleared, key, last_value(CASE WHEN op = 'delete' THEN 0 WHEN has_after THEN 1 END IGNORE NULLS)
        OVER (PARTITION BY _table, key ORDER BY _pos ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS live_before
    FROM every
)
SELECT e.*, l.live_before  -- a change is one _pos; a truncate's deletes share its _pos, one per key
FROM every e JOIN lives l ON e._pos = l._pos AND e._cleared = l._cleared AND (NOT e._cleared OR e.key = l.key)
"""
#: :data:`_PREPARE`'s changes, with a truncate's deletes or (no truncate in the capture) without.
_EVERY = {True: "SELECT * FROM placed UNION ALL SELECT * FROM cleared", False: "SELECT * FROM placed"}


def _streamed_table_name(stream: Sequence[str]) -> str:
    """SQL: the name a change's table goes by: ``database.table``, or, given the columns of a ``stream``
    (the ordering report's ``by=``), those columns' values and it joined by the unit separator (U+001F), so that
    each stream replays on its own (see :func:`stream_table`).

    >>> _streamed_table_name([]) == _TABLE_NAME
    True
    """
    if not stream:
        return _TABLE_NAME
    parts = ", ".join(f"coalesce(CAST(\"{c}\" AS VARCHAR), '')" for c in stream)
    return f"CASE WHEN ({_TABLE_NAME}) IS NULL THEN NULL ELSE concat_ws(chr(31), {parts}, {_TABLE_NAME}) END"


def _stream_partition(stream: Sequence[str]) -> str:
    """SQL: the ``stream`` columns heading a window's PARTITION BY (a stream is a capture of its own: a missing
    seq is filled, and a shared position tied, within it). ``_stream_partition(["dialect"])`` is ``'dialect, '``."""
    return "".join(f'"{c}", ' if c == "partition" else f"{c}, " for c in stream if c != "source")


def stream_table(name: str) -> str:
    """The table's own name in a table name qualified by its stream (see :func:`_streamed_table_name`).

    >>> stream_table("debezium\x1fpg.jsonl\x1fpublic.t"), stream_table("public.t")
    ('public.t', 'public.t')
    """
    return name.rpartition("\x1f")[2]


def _frame_for_sql(events: pd.DataFrame) -> pa.Table:
    """The columns replay reads as an Arrow table (Arrow-backed pandas columns are not copied), plus ``_row``, in
    batches DuckDB scans in parallel."""
    columns: dict[str, Any] = {"_row": pa.array(np.arange(len(events), dtype=np.int64))}
    for name in ("dialect", "database", "schema", "table", "key", "op", "seq", "source", "before", "after"):
        columns[name] = pa.array(events[name], type=pa.string(), from_pandas=True)
    columns["partition"] = pa.array(events["partition"], type=pa.int64(), from_pandas=True)
    columns["offset"] = pa.array(np.asarray(events["offset"], dtype=np.int64))
    times = pd.to_datetime(events["event_time"], utc=True)
    columns["_time"] = pa.array(times.array.asi8, mask=times.isna().to_numpy())  # nanoseconds, exact
    columns["key_columns"] = pa.array(events["key_columns"], type=pa.list_(pa.string()), from_pandas=True)
    return scan_batches(pa.table(columns))


def _timestamp(value: Any) -> pd.Timestamp:
    """A time as a UTC timestamp (zone-less values are UTC)."""
    stamp = pd.Timestamp(value)
    return stamp.tz_localize("UTC") if stamp.tzinfo is None else stamp.tz_convert("UTC")


def named_key_columns(con: duckdb.DuckDBPyConnection) -> dict[str, list[str]]:
    """Per table of the ``events`` :func:`prepare` registered, the key columns its changes name (those of the last
    change, in input order, that names any), as :func:`cdckit.analysis.replay.key_columns_of` finds them."""
    changes = _CHANGES.format(cut="")
    found = con.execute(
        f"SELECT {_TABLE_NAME} AS name, arg_max(key_columns, _row) FROM events "
        f"WHERE {changes} AND len(key_columns) > 0 GROUP BY name HAVING name IS NOT NULL"
    ).fetchall()
    return {name: [str(c) for c in columns] for name, columns in sorted(found)}


def prepare(
    con: duckdb.DuckDBPyConnection,
    events: pd.DataFrame,
    as_of: Any = None,
    order: str = "seq",
    stream: Sequence[str] = (),
) -> None:
    """Register ``events`` on ``con`` and write the ``redelivered`` and ``prep`` tables (module notes).

    ``order``: a key of :data:`ORDERS`; ``stream``: columns whose values keep changes apart (see
    :func:`_streamed_table_name`)."""
    con.register("events", _frame_for_sql(events))
    cut = "" if as_of is None else f"AND _time IS NOT NULL AND _time <= {_timestamp(as_of).value}"
    changes = _CHANGES.format(cut=cut)
    con.execute(_REDELIVERED.format(identity=_IDENTITY, place=_PLACE, arrival=_ARRIVAL, changes=changes))
    key_lists = [  # the key column lists of the updates, for key parts read with constant paths
        list(columns)
        for (columns,) in con.execute(
            f"SELECT DISTINCT key_columns FROM events WHERE op = 'update' AND key IS NOT NULL "
            f"AND len(key_columns) > 0 LIMIT {_CONSTANT_PATH_LISTS + 1}"
        ).fetchall()
    ]
    ((gaps, shared, truncated),) = con.execute(  # some change lacks a seq, some source is split, some truncates
        f"SELECT bool_or(seq IS NULL), count(DISTINCT (coalesce(source, ''), coalesce(\"partition\", -1))) "
        f"> count(DISTINCT coalesce(source, '')), coalesce(bool_or(op = 'truncate'), false) "
        f"FROM events WHERE {changes}"
    ).fetchall()
    con.execute(
        _PREPARE.format(
            changes=changes,
            filled_seq=(_FILLED_SEQ if gaps else "coalesce({position}, '')").format(
                position=_message_position(), stream=_stream_partition(stream)
            ),
            tied_seq=_TIED_SEQ.format(stream=_stream_partition(stream)) if shared else "_fill",
            arrival=_ARRIVAL,
            table_name=_streamed_table_name(stream),
            signature=_signature("_before_names", "_after_names"),  # the names parsed once
            before_parts=_key_parts("before", key_lists),
            after_parts=_key_parts("after", key_lists),
            before_moves=_names_other_key("_before_key"),
            after_moves=_names_other_key("_after_key"),
            order=ORDERS[order],
            every=_EVERY[bool(truncated)],
        )
    )
