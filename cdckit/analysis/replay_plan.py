"""The relational half of replay: a capture's changes prepared once in DuckDB, read with window functions.

:func:`plan_replay` keeps the row changes of a frame (redeliveries dropped by
a hash of their images, cut at ``as_of``), gives each its replay position and
sorts nothing but narrow columns (:mod:`cdckit.analysis.replay_prepare`'s one
query): the image texts stay in the pandas frame
and are fetched by row number only where a row's state needs them. Each change
falls in one of three lanes:

- **keyed**: the common case, answered with windows over ``(table, key)``:
  whether the key was live before the change (hence the problems), the last
  change that counts (hence the final row), the next one (hence SCD2's
  ``valid_to``);
- **chain**: the keys of a primary-key change and every key linked to them,
  walked together by :class:`cdckit.analysis.replayer.Replayer`;
- **keyless**: changes without a key, a multiset of row images counted with windows
  (:mod:`cdckit.analysis.replay_keyless`), or walked where a before image is not a live row as written.

>>> import cdckit
>>> events = cdckit.read(cdckit.samples.path("shareplex/examples"))
>>> with plan_replay(events) as plan:
...     plan.tables, plan.columns("sales.order_lines")[:2]
(['sales.order_lines'], ['order_id', 'line_no'])
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import duckdb
import numpy as np
import pandas as pd
import pyarrow as pa

from .. import values
from ..row_images import canonical_text, key_of, parse_image
from ..values import none_if_missing
from .ordering.sort import TIE_MARK
from .replay_keyless import keyless_state
from .replay_prepare import NAMES, ORDERS, SIGNATURE, named_key_columns, prepare, stream_table
from .replayer import Replayer, Step, is_partial, old_key, problem_rows, replay_rows
from .transitions import problem_sql

__all__ = ["plan_replay", "ReplayPlan", "ORDERS", "stream_table"]

#: Where each table's first snapshot row is: a change after it has a snapshot before it (transitions.RULES).
_FIRST_READ = "(SELECT _table, min(_pos) AS _first_read FROM prep WHERE op = 'read' GROUP BY _table)"
#: SQL: whether a snapshot row of the change's table came before it (a query joined with :data:`_FIRST_READ`).
_SNAPSHOT_BEFORE = "coalesce(_first_read < _pos, false)"


#: A primary-key update sent as a delete and a create (Debezium): an insert right after a delete of another
#: key at the same seq, in a table whose images are merged; the two keys replay together (as a chain).
_REKEYED = """
SELECT _table, previous_key, key FROM (
    SELECT _table, key, op, _seq, lag(op) OVER w AS previous_op, lag(key) OVER w AS previous_key,
        lag(_seq) OVER w AS previous_seq, lag(_cleared) OVER w AS previous_cleared
    FROM prep WHERE list_contains($partial, _table)
    WINDOW w AS (PARTITION BY _table ORDER BY _pos, key NULLS LAST))
WHERE op = 'insert' AND previous_op = 'delete' AND NOT previous_cleared AND previous_key <> key
    AND rtrim(previous_seq, chr({mark})) = rtrim(_seq, chr({mark})) AND _seq <> ''
""".format(mark=ord(TIE_MARK))  # the create of the new key may carry the tie mark (ordering.sort)

#: The names (key columns, before image, after image) of one change of each distinct signature, and its images'.
_SIGNATURES = f"""
SELECT {SIGNATURE} AS _sig, {NAMES} AS names, coalesce(try(json_keys(before)), []) AS before_names,
    coalesce(try(json_keys(after)), []) AS after_names
FROM events WHERE _row IN (SELECT arg_min(_row, _pos) FROM prep GROUP BY _sig)
"""

#: The keyed lane: changes with a key that no primary-key change links to another.
_KEYED = """
CREATE TEMP VIEW keyed AS
SELECT * FROM prep
WHERE key IS NOT NULL AND NOT EXISTS (SELECT 1 FROM chain_keys c WHERE c._table = prep._table AND c.key = prep.key)
"""

#: The keyed changes that do not fit, each with the change of its row before it (``_previous_row``: found for
#: these few rows only, by an as-of join). A truncate changed the rows live at it only: its delete of a key
#: already gone is no change of that key.
_PROBLEMS = f"""
WITH found AS (
    SELECT _row, _pos, _table, key, op,
        {problem_sql("op", "live_before", "has_after", _SNAPSHOT_BEFORE)} AS problem
    FROM keyed LEFT JOIN {_FIRST_READ} USING (_table) WHERE problem IS NOT NULL AND NOT _cleared
)
SELECT k.*, p._row AS _previous_row, e.source, e."offset", e.seq
FROM found k ASOF LEFT JOIN (SELECT _table, key, _pos, _row FROM prep WHERE NOT _cleared OR live_before = 1) p
    ON k._table = p._table AND k.key = p.key AND k._pos > p._pos
JOIN events e ON e._row = k._row ORDER BY k._pos
"""

#: The change that made each live row (full-image tables): the last change that counts, unless a delete.
_LAST_FULL = """
SELECT _table, key, _row FROM (
    SELECT _table, key, arg_max(_row, _pos) AS _row, arg_max(op, _pos) AS op
    FROM keyed WHERE NOT list_contains($partial, _table) AND (op = 'delete' OR has_after)
    GROUP BY _table, key)
WHERE op <> 'delete'
"""

#: The changes of each live row's last life (partial-image tables): from its last reset on, in order.
_LAST_PARTIAL = """
WITH counted AS (
    SELECT *, op = 'delete' OR (has_after AND (op <> 'update' OR coalesce(live_before, 0) = 0)) AS reset
    FROM keyed WHERE list_contains($partial, _table) AND (op = 'delete' OR has_after)
), life AS (
    SELECT *, max(CASE WHEN reset THEN _pos END) OVER (PARTITION BY _table, key) AS life_start,
        arg_max(op, CASE WHEN reset THEN _pos END) OVER (PARTITION BY _table, key) AS life_op
    FROM counted
)
SELECT _table, key, _row, op, reset FROM life
WHERE _pos >= life_start AND life_op <> 'delete'
ORDER BY _table, key, _pos
"""

#: Versions of full-image rows: each change that sets a row, until the next change of its key that counts.
_VERSIONS = """
WITH counts AS (
    SELECT _row, _pos, _table, key, op,
        lead(_row) OVER (PARTITION BY _table, key ORDER BY _pos) AS next_row
    FROM keyed
    WHERE NOT list_contains($partial, _table)
      AND ((op <> 'delete' AND has_after) OR (op = 'delete' AND live_before = 1))
)
SELECT _table, _pos, _row, coalesce(next_row, -1) AS next_row FROM counts WHERE op <> 'delete' ORDER BY _pos
"""


class ReplayPlan:
    """The prepared changes of one capture (see the module notes); use through :func:`plan_replay`."""

    def __init__(self, events: pd.DataFrame, as_of: Any = None, order: str = "seq", stream: Sequence[str] = ()) -> None:
        if order not in ORDERS:
            raise ValueError(f"order must be 'seq', 'event_time' or 'arrival', not {order!r}")
        self.events = events
        self.con = duckdb.connect()
        self.con.execute("SET enable_progress_bar = false")  # no bar drawn over a notebook or a terminal
        prepare(self.con, events, as_of, order, stream)
        tables = self.con.execute(
            "SELECT _table, arg_min(dialect, _pos), min(_pos), bool_or(key IS NULL AND op <> 'truncate') FROM prep "
            "GROUP BY _table "
            "ORDER BY min(_pos)"
        ).fetchall()
        self._replay_order = [t for t, _, _, _ in tables]
        self.tables = sorted(self._replay_order)
        self._ranks, shapes = self._column_ranks()
        # tables (of dialects whose images may leave unchanged columns out) whose images do not all have the same
        # columns: only these are merged (where every image has the same columns, merging is replacing)
        self.partial = {t: is_partial(dialect) and len(shapes[t]) > 1 for t, dialect, _, _ in tables}
        self._keyless = sorted(t for t, _, _, keyless in tables if keyless)
        self.chains = self._chains()
        linked = [(t, k) for t, keys in self.chains.items() for k in keys]
        self.con.register(
            "chain_keys",
            pa.table(
                {
                    "_table": pa.array([t for t, _ in linked], pa.string()),
                    "key": pa.array([k for _, k in linked], pa.string()),
                }
            ),
        )
        self.con.execute(_KEYED)

    # ---------------------------------------------------------------- set-up

    def _column_ranks(self) -> tuple[dict[str, dict[str, tuple[Any, int]]], dict[str, set[tuple[str, ...]]]]:
        """Per table, where each column first appears in seq order: ``(position, place in the event's names)``;
        and the shapes of its images (each one's column names, in name order)."""
        found = self.con.execute(_SIGNATURES).fetchall()
        signatures = {sig: (names, before, after) for sig, names, before, after in found}
        ranks: dict[str, dict[str, tuple[Any, int]]] = {t: {} for t in self.tables}
        shapes: dict[str, set[tuple[str, ...]]] = {t: set() for t in self.tables}
        seen = self.con.execute(  # where: the seq order, as in cdckit.analysis.ordering.narrow.SEQ_ORDER
            'SELECT _table, _sig, min(row(_seq, coalesce(source, \'\'), coalesce("partition", -1), "offset")) '
            "FROM prep GROUP BY _table, _sig"
        ).fetchall()
        for table, signature, where in seen:
            names, before, after = signatures[signature]
            table_ranks = ranks[table]
            for place, name in enumerate(names):
                if name not in table_ranks or (where, place) < table_ranks[name]:
                    table_ranks[name] = (where, place)
            shapes[table].update(tuple(sorted(image)) for image in (before, after) if image)
        return ranks, shapes

    def _chains(self) -> dict[str, set[str]]:
        """Per table, the keys linked by primary-key changes (each chain replays together)."""
        movers = self.con.execute("SELECT _row, _table, key FROM prep WHERE may_move ORDER BY _pos").fetchall()
        merged = [t for t, merge in self.partial.items() if merge]
        rekeyed = self.con.execute(_REKEYED, {"partial": merged}).fetchall() if merged else []
        if not movers and not rekeyed:
            return {}
        parent: dict[tuple[str, str], tuple[str, str]] = {}

        def root(node: tuple[str, str]) -> tuple[str, str]:
            while parent.get(node, node) != node:
                node = parent[node]
            return node

        rows = [r[0] for r in movers]
        pairs = zip(movers, *(self._fetch(rows, c) for c in ("key_columns", "before", "after")))
        for (_, table, key), columns, before, after in pairs:
            start = old_key("update", key, columns, before)
            end = key_of(parse_image(after), columns)
            for other in (start, end):
                if other is None or other == key:
                    continue
                a, b = root((table, key)), root((table, other))
                if a != b:
                    parent[a] = b
        for table, old, new in rekeyed:
            a, b = root((table, new)), root((table, old))
            if a != b:
                parent[a] = b
        chains: dict[str, set[str]] = {}
        for node in list(parent):
            for member in (node, parent[node]):
                chains.setdefault(member[0], set()).add(member[1])
        return chains

    # ---------------------------------------------------------------- reading

    def tables_in_replay_order(self) -> list[str]:
        """The tables in the order their first change is replayed."""
        return list(self._replay_order)

    def columns(self, table: str) -> list[str]:
        """The columns of ``table`` in the order they first appear (key columns, before image, after image)."""
        ranks = self._ranks[table]
        return sorted(ranks, key=lambda name: (ranks[name], name))

    def key_columns(self) -> dict[str, list[str]]:
        """Per table, the key columns its changes name (see :func:`named_key_columns`)."""
        return named_key_columns(self.con)

    def keyless_tables(self) -> list[str]:
        """Tables with changes that carry no key."""
        return list(self._keyless)

    def _fetch(self, rows: list[int], column: str) -> list[Any]:
        return self.events[column].iloc[rows].tolist() if rows else []

    def problems(self) -> list[dict[str, Any]]:
        """Keyed-lane changes that did not apply cleanly, as problem rows with their replay position."""
        return [
            {
                "table": table,
                "key": key,
                "source": source,
                "offset": offset,
                "seq": seq,
                "op": op,
                "problem": problem,
                "_pos": pos,
                "_row": row,
                "_previous_row": previous,
            }
            for row, pos, table, key, op, problem, previous, source, offset, seq in self.con.execute(
                _PROBLEMS
            ).fetchall()
        ]

    def keyless_rows(self) -> tuple[dict[str, list[Any]], list[dict[str, Any]]]:
        """The live rows of the keyless changes per table (each as many times as it is live, in text order:
        the image's text where it was counted whole, the row where it was walked), and the problem rows of the
        changes that remove a row not there (see :mod:`cdckit.analysis.replay_keyless`)."""
        partial = [t for t in self._keyless if self.partial.get(t)]
        found, wanting, walked = keyless_state(self.con, self._keyless, partial)
        rows: dict[str, list[tuple[str, str]]] = {}
        for table, text, count in found:  # each text as many times as it is live, in canonical text order
            rows.setdefault(table, []).extend([(canonical_text(values.loads(text)), text)] * int(count))
        bags: dict[str, list[Any]] = {t: [text for _, text in sorted(found)] for t, found in rows.items()}
        numbers = [r[0] for r in wanting]
        sources, offsets, seqs = (self._fetch(numbers, c) for c in ("source", "offset", "seq"))
        problems = [
            {
                "table": table,
                "key": None,
                "source": none_if_missing(source),
                "offset": offset,
                "seq": none_if_missing(seq),
                "op": op,
                "problem": problem,
                "_pos": pos,
                "_row": row,
                "_previous_row": None,
            }
            for (row, pos, table, op, problem), source, offset, seq in zip(wanting, sources, offsets, seqs)
        ]
        for table, replayer, steps in self._walk_keyless(walked):
            bags[table] = [values.loads(text) for text, n in sorted(replayer.bag.items()) for _ in range(n)]
            problems.extend(problem_rows(table, steps))
        return bags, problems

    def _walk_keyless(self, tables: list[str]) -> Iterator[tuple[str, Replayer, list[Step]]]:
        """The keyless changes (truncates included) of ``tables``, walked as a multiset of rows."""
        if not tables:
            return
        found = self.con.execute(
            "SELECT _row, _pos, _table, _seq FROM prep WHERE key IS NULL AND NOT _cleared "
            "AND list_contains($tables, _table) ORDER BY _pos",
            {"tables": tables},
        ).fetchall()
        frame = self.events.iloc[[r[0] for r in found]].reset_index(drop=True)
        frame["_table"] = [r[2] for r in found]
        frame["_seq"] = [r[3] for r in found]
        frame["_pos"] = [r[1] for r in found]
        frame["_row"] = [r[0] for r in found]
        for table, replayer, steps, _ in replay_rows(frame, self.partial):
            yield table, replayer, steps

    def last_images(self) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """Per full-image table, its live keyed-lane rows, each one after image whole: their keys, and the events'
        row numbers of those images (arrays, in no order)."""
        partial = [t for t, merge in self.partial.items() if merge]
        found = self.con.execute(f"{_LAST_FULL} ORDER BY _table", {"partial": partial}).fetchnumpy()
        tables, keys, rows = found["_table"], found["key"], np.asarray(found["_row"], dtype=np.int64)
        starts = np.flatnonzero(np.r_[True, tables[1:] != tables[:-1]]) if len(tables) else np.array([], int)
        ends = np.r_[starts[1:], len(tables)]
        return {tables[a]: (keys[a:b], rows[a:b]) for a, b in zip(starts.tolist(), ends.tolist())}

    def merged_rows(self) -> Iterator[tuple[str, str, dict[str, Any]]]:
        """``(table, key, row)`` for every live keyed-lane row of the partial-image tables."""
        partial = [t for t, merge in self.partial.items() if merge]
        if partial:
            yield from self._merged_rows(partial)

    def _merged_rows(self, partial: list[str]) -> Iterator[tuple[str, str, dict[str, Any]]]:
        """Rows of partial-image tables: each column's last value present in the row's last life."""
        life = self.con.execute(_LAST_PARTIAL, {"partial": partial}).fetchall()
        rows = [r[2] for r in life]
        befores, afters = self._fetch(rows, "before"), self._fetch(rows, "after")
        current: tuple[str, str] | None = None
        row: dict[str, Any] = {}
        for (table, key, _, op, reset), before, after in zip(life, befores, afters):
            if (table, key) != current:
                if current is not None:
                    yield (*current, row)
                current = (table, key)
            image = parse_image(after) or {}
            if reset:
                row = {**(parse_image(before) or {}), **image} if op == "update" else image
            else:
                row = {**row, **image}
        if current is not None:
            yield (*current, row)

    def versions(self) -> pd.DataFrame:
        """Versions of full-image keyed rows, for SCD2: ``_table``, ``_pos``, ``_row`` (the change that made the
        version) and ``next_row`` (the change that ended it, -1 for the current version), in replay order."""
        partial = [t for t, merge in self.partial.items() if merge]
        return pd.DataFrame(self.con.execute(_VERSIONS, {"partial": partial}).fetchnumpy())

    def walk(
        self, table: str | None = None, key: str | None = None, partial_tables: bool = False
    ) -> Iterator[tuple[str, Replayer, list[Step], dict[str, str]]]:
        """Walk, change by change, the chain lane and the truncates (and, with ``partial_tables``, the keyed changes
        of partial-image tables); with ``table`` and ``key``, only that key's changes and its chain's."""
        where = [
            "(op = 'truncate' AND key IS NULL) OR EXISTS (SELECT 1 FROM chain_keys c "
            "WHERE c._table = prep._table AND c.key = prep.key)"
        ]
        if partial_tables:
            where.append("(list_contains($partial, _table) AND key IS NOT NULL)")
        condition = " OR ".join(where)
        params: dict[str, Any] = {}
        if partial_tables:
            params["partial"] = [t for t, merge in self.partial.items() if merge]
        if table is not None:
            linked = self.chains.get(table, set())
            keys = sorted(linked) if key in linked else [key]
            condition = "_table = $table AND list_contains($keys, key)"
            params = {"table": table, "keys": keys}
        found = self.con.execute(
            f"SELECT _row, _pos, _table, _seq, _cleared, key, {_SNAPSHOT_BEFORE} FROM prep "
            f"LEFT JOIN {_FIRST_READ} USING (_table) WHERE {condition} ORDER BY _pos, key NULLS LAST",
            params,
        ).fetchall()
        if not found:
            return
        rows = [r[0] for r in found]
        frame = self.events.iloc[rows].reset_index(drop=True)
        frame["_table"] = [r[2] for r in found]
        frame["_seq"] = [r[3] for r in found]
        frame["_pos"] = [r[1] for r in found]
        frame["_row"] = rows
        frame["_snapshot_before"] = [r[6] for r in found]  # the walk sees these keys' changes only
        if any(r[4] for r in found):  # a truncate's delete of one key: the truncate, naming that key
            frame["key"] = pd.array(
                [r[5] if r[4] else k for r, k in zip(found, frame["key"])], dtype=frame["key"].dtype
            )
        yield from replay_rows(frame, self.partial)

    def close(self) -> None:
        self.con.close()

    def __enter__(self) -> ReplayPlan:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def plan_replay(events: pd.DataFrame, as_of: Any = None, order: str = "seq", stream: Sequence[str] = ()) -> ReplayPlan:
    """The changes of ``events`` prepared for replay (a context manager: the DuckDB connection closes after).

    ``stream``: columns whose values keep changes apart, as if each stream were a capture of its own (the
    ordering report replays each ``by=`` stream so); the plan's table names are then qualified by them
    (:func:`stream_table` gives the table's own)."""
    return ReplayPlan(events, as_of, order, stream)
