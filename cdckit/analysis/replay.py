"""Replay: the state of each table at the end (or at a time), a row's history, SCD type 2.

Changes are replayed in canonical order (:func:`cdckit.sort_events`), one
table at a time, with these rules:

- ``insert`` and ``read`` (snapshot) rows set the row; an insert of a live key
  replaces it and is reported;
- an ``update`` replaces the row with its after image, or, for dialects that
  send only the changed columns (SharePlex, UniVerse), merges the after image
  onto the row; a column the after image omits is gone from the row (a
  Lindorm column delete); when the key changes, the old key disappears;
- a ``delete`` removes the row;
- exact redeliveries (same dialect, table, key, seq, op and images) count
  once; a change to a key that is not there (an update before its insert, a
  delete of an unknown key) is applied as well as it can be and reported;
- a table whose changes carry no key is kept as a multiset of whole rows.

The tables :func:`materialize` and :func:`scd2` return are typed
(``typed=True``, the default) by the rule of :mod:`cdckit.analysis.tables`: each
column takes its latest declared kind (``cdckit.column_types_of(events)``),
else the kind inferred from the values returned; decimals stay exact
(``decimal128``, ``decimal256``, or text past 76 digits), times become UTC timestamps, and a value
that does not fit its kind stays as the capture wrote it and is listed (``TableStates.type_problems``, an scd2 frame's
``attrs["type_problems"]``). ``typed=False`` gives the values as the images
hold them (JSON numbers, text, booleans).

How: the work is relational (:mod:`cdckit.analysis.replay_plan` runs it in DuckDB
over the frame): sort once, partition by table and key, and read the state
from window functions. Only the final image of each live row is parsed. Two
kinds of rows are walked one change at a time (:mod:`cdckit.analysis.replayer`),
because their meaning depends on order in a way windows do not express:
rows whose primary key changes (the keys of each chain together) and tables
without a key. Tables whose updates send only the changed columns merge the
images of each row's last life.

>>> import cdckit
>>> state = cdckit.materialize(cdckit.read(cdckit.samples.path("canal/shop")))
>>> sorted(state), len(state["shop.customers"]) > 0
(['shop.customers', 'shop.order_items'], True)
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Iterable
from typing import Any

import duckdb
import numpy as np
import orjson
import pandas as pd
import pyarrow as pa

from .. import values
from ..capture import events_of
from ..duckdb_scans import scan_batches
from ..errors import KeylessTableError, how_to_give_keys
from ..frame import find_table, table_names, utc_nanoseconds
from ..keys import Keys, given_keys
from ..python_columns import object_column, object_columns
from ..row_images import in_key_order, key_order, key_permutation
from .replay_plan import plan_replay
from .replay_prepare import named_key_columns
from .replayer import Step, history_frame, problem_rows
from .tables import declared_types, typed_records, typed_texts
from .tables import problems_frame as type_problems_frame
from .transaction_cut import left_out_warning, through_transaction, whole_transactions_only

__all__ = ["materialize", "history", "scd2", "TableStates", "SCD2Tables", "PROBLEM_COLUMNS", "SCD2_COLUMNS"]

#: Columns of ``TableStates.problems``.
PROBLEM_COLUMNS = ["table", "key", "source", "offset", "seq", "op", "problem"]

#: Columns scd2 adds to the source columns.
SCD2_COLUMNS = ["valid_from", "valid_to", "is_current", "op", "seq"]


class TableStates(dict):
    """``{"database.table": DataFrame}`` with what replay could not apply cleanly.

    ``problems``: one row per change that did not fit (see
    :data:`PROBLEM_COLUMNS`); ``keyless``: tables kept as a multiset of rows;
    ``type_problems``: the values that did not fit their column's kind
    (:data:`cdckit.analysis.tables.TYPE_PROBLEM_COLUMNS`; empty when not typed).
    ``key_columns``: each keyed table's key columns (also in each frame's ``attrs["key_columns"]``).
    ``left_out``: the transactions ``after_transaction=`` or ``whole_transactions=True`` left out (rows of
    :func:`cdckit.transactions`), None when neither was given.
    """

    problems: pd.DataFrame
    keyless: list[str]
    type_problems: pd.DataFrame = type_problems_frame([])
    key_columns: dict[str, list[str]]
    left_out: pd.DataFrame | None = None


class SCD2Tables(dict):
    """``{"database.table": DataFrame}`` of versions (:func:`scd2`); ``keyless``: the tables whose changes
    (some or all) name no key columns, so that those changes make no version (also said in a warning)."""

    keyless: list[str] = []


def transaction_bounds(
    events: pd.DataFrame, after_transaction: Any, whole_transactions: bool
) -> tuple[pd.DataFrame, pd.DataFrame | None]:
    """The events :func:`materialize` replays for ``after_transaction=``/``whole_transactions=`` and the
    transactions they leave out (None when neither is given); see :mod:`cdckit.analysis.transaction_cut`."""
    if after_transaction is None and not whole_transactions:
        return events, None
    left_out = []
    if after_transaction is not None:
        events, later = through_transaction(events, after_transaction)
        left_out.append(later)
    if whole_transactions:
        events, partial = whole_transactions_only(events)
        left_out_warning(partial, "that the capture holds only in part")
        left_out.append(partial)
    return events, pd.concat(left_out, ignore_index=True) if len(left_out) > 1 else left_out[0]


def keyless_left_out(keyless: Iterable[str], keyed: Iterable[str]) -> list[str]:
    """What scd2 says of the ``keyless`` tables (those with changes that name no key columns), given the
    ``keyed`` tables (with changes that name some); raises :class:`cdckit.KeylessTableError` when no table is
    keyed and some are keyless (never an empty answer).

    >>> keyless_left_out(["shop.notes"], ["shop.orders"])  # doctest: +ELLIPSIS
    ["scd2 leaves out shop.notes: shop.notes has no key columns (its changes name none), so its rows have ..."]
    >>> keyless_left_out(["shop.notes"], [])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    cdckit.errors.KeylessTableError: shop.notes has no key columns ...
    """
    keyless, keyed = sorted(keyless), set(keyed)
    if keyless and not keyed:
        raise KeylessTableError(keyless)
    absent = [t for t in keyless if t not in keyed]
    partial = [t for t in keyless if t in keyed]
    said = [f"scd2 leaves out {', '.join(absent)}: {KeylessTableError(absent)}"] if absent else []
    if partial:
        what = f"some changes of {', '.join(partial)} name no key columns and make no version"
        said.append(f"scd2: {KeylessTableError(partial, what)}")
    return said


def key_columns_of(events: pd.DataFrame) -> dict[str, list[str]]:
    """Per table, the key columns its changes name (those of the last change that names any): the rule of
    :func:`cdckit.analysis.replay_prepare.named_key_columns`, over the frame's narrow columns.

    >>> import cdckit
    >>> key_columns_of(cdckit.read(cdckit.samples.path("canal/shop")))
    {'shop.customers': ['id'], 'shop.order_items': ['order_id', 'line_no']}
    """
    columns: dict[str, Any] = {"_row": pa.array(np.arange(len(events), dtype=np.int64))}
    for name in ("database", "schema", "table", "op"):
        columns[name] = pa.array(events[name], type=pa.string(), from_pandas=True)
    try:
        columns["key_columns"] = pa.array(events["key_columns"], pa.list_(pa.string()), from_pandas=True)
    except (pa.ArrowInvalid, pa.ArrowTypeError):  # a frame built by hand: a text, a number
        columns["key_columns"] = pa.array(
            [list(c) if isinstance(c, (list, tuple, np.ndarray)) else None for c in events["key_columns"]],
            pa.list_(pa.string()),
        )
    with duckdb.connect() as con:
        con.register("events", scan_batches(pa.table(columns)))
        return named_key_columns(con)


def problems_frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """Problem rows (with ``_pos``, the replay position) as the sorted :data:`PROBLEM_COLUMNS` frame."""
    frame = pd.DataFrame(rows, columns=[*PROBLEM_COLUMNS, "_pos"]).sort_values("_pos", kind="stable")
    frame = object_columns(frame[PROBLEM_COLUMNS]).astype({"offset": "Int64"})
    return frame.sort_values(["table", "source", "offset"], kind="stable").reset_index(drop=True)


# --------------------------------------------------------------------------- public functions


def materialize(
    events: pd.DataFrame,
    as_of: Any = None,
    order: str = "seq",
    typed: bool = True,
    *,
    keys: Keys | None = None,
    after_transaction: Any = None,
    whole_transactions: bool = False,
) -> TableStates:
    """The state of every table after the changes (or at ``as_of``): ``{"database.table": DataFrame}``.

    One column per source column, one row per live key (rows in key order).
    ``as_of``: a time (text, datetime or Timestamp; zone-less means UTC):
    only changes with ``event_time`` at or before it count. ``order``:
    ``"seq"`` (default), ``"event_time"`` or ``"arrival"``. ``typed``: typed
    columns (see the module docstring), or the image values as they are.
    ``keys``: key columns of tables whose capture names none,
    ``{"customers": "id", "order_lines": ["order_id", "line_no"]}``, as
    :func:`cdckit.with_keys` gives them.

    Transactions (:func:`cdckit.transactions`): ``after_transaction="743"`` gives the state right after that
    transaction committed (the transactions that commit after it left out); ``whole_transactions=True``
    leaves out the transactions the capture holds only in part (never committed in it, changes missing,
    begun before it), with a warning. ``states.left_out`` lists the transactions left out.

    >>> import cdckit
    >>> events = cdckit.read(cdckit.samples.path("shareplex/examples"))
    >>> state = materialize(events)  # line 2 became line 3: the old key is gone
    >>> state["sales.order_lines"][["order_id", "line_no", "product"]].values.tolist()
    [['1001', '3', 'Gadget XL']]
    """
    events = given_keys(events_of(events), keys)
    events, left_out = transaction_bounds(events, after_transaction, whole_transactions)
    declared = declared_types(events) if typed else {}
    type_problems: list[dict[str, Any]] = []
    with plan_replay(events, as_of, order) as plan:
        last = plan.last_images()  # rows that are one after image whole: keys and the images' row numbers
        rows: dict[str, dict[str, Any]] = {table: {} for table in plan.tables}  # the other rows, by key
        bags: dict[str, list[dict[str, Any] | str]] = {table: [] for table in plan.tables}  # a row, or its text
        problems = plan.problems()
        for table, key, row in plan.merged_rows():
            rows[table][key] = row
        for table, replayer, steps, _ in plan.walk():
            rows[table].update(replayer.rows)
            problems.extend(problem_rows(table, steps))
        keyless_rows, wanting = plan.keyless_rows()
        bags.update(keyless_rows)
        problems.extend(wanting)
        _warn_unmatched(wanting)
        columns_of, keyless = {table: plan.columns(table) for table in plan.tables}, plan.keyless_tables()
        named = plan.key_columns()
        plan.close()  # DuckDB's copy of the changes is freed before the frames are made
        states = TableStates()
        afters = None  # the after images as Arrow text, once
        for table in sorted(plan.tables):
            columns = columns_of[table]
            texts_of_keys, numbers = last.get(table, (np.array([], dtype=object), np.array([], dtype=np.int64)))
            if typed and len(numbers) and not rows[table] and not bags[table]:  # each row one whole after image
                placed = key_permutation(texts_of_keys)
                afters = pa.array(events["after"], pa.string(), from_pandas=True) if afters is None else afters
                texts = afters.take(numbers[placed])
                states[table], found = typed_texts(
                    texts, columns, table, declared=declared.get(table), keys=texts_of_keys[placed]
                )
                type_problems += found
                continue
            by_key = dict(zip(texts_of_keys.tolist(), numbers.tolist()))  # a row, or its after image's number
            by_key.update(rows[table])
            in_order = in_key_order(by_key)
            live = [by_key[key] for key in in_order] + bags[table]
            numbered = [i for i, row in enumerate(live) if isinstance(row, int)]
            for i, text in zip(numbered, events["after"].iloc[[live[i] for i in numbered]].tolist()):
                live[i] = text  # a whole after image: its text
            if typed and live and all(isinstance(row, str) for row in live):  # keyless rows come as texts too
                states[table], found = typed_texts(
                    live, columns, table, declared=declared.get(table), keys=in_order + [None] * len(bags[table])
                )
                type_problems += found
                continue
            live = [values.loads(row) if isinstance(row, str) else row for row in live]
            if typed:
                states[table], found = typed_records(
                    live, columns, table, declared=declared.get(table), keys=in_order + [None] * len(bags[table])
                )
                type_problems += found
            else:
                states[table] = (
                    pd.DataFrame.from_records(live, columns=columns) if live else pd.DataFrame(columns=columns)
                )
        states.problems = problems_frame(problems)
        states.keyless = keyless
        states.type_problems = type_problems_frame(type_problems)
        states.left_out = left_out
        states.key_columns = {t: c for t, c in named.items() if t in states}
        for table, columns in states.key_columns.items():
            states[table].attrs["key_columns"] = list(columns)
        return states


def unmatched_warning(problems: list[dict[str, Any]]) -> str | None:
    """What materialize says when changes of tables without a key find no row (their state is then likely
    wrong: an update without a before image adds a row and removes none), or None when every change found one.

    >>> print(unmatched_warning([{"table": "public.t", "op": "update"}]))  # doctest: +ELLIPSIS
    materialize: 1 change(s) of public.t found no row to change: it names no key, so ... cdckit.infer_keys(events) ...
    """
    counts: dict[str, int] = {}
    for problem in problems:
        counts[problem["table"]] = counts.get(problem["table"], 0) + 1
    if not counts:
        return None
    tables = sorted(counts)
    said = ", ".join(f"{counts[t]:,} change(s) of {t}" for t in tables)
    which = "it names" if len(tables) == 1 else "they name"
    return (
        f"materialize: {said} found no row to change: {which} no key, so the state is likely wrong; "
        f"{how_to_give_keys(tables)}"
    )


def _warn_unmatched(problems: list[dict[str, Any]]) -> None:
    said = unmatched_warning(problems)
    if said is not None:
        warnings.warn(said, stacklevel=3)


def given_key_text(key: Any) -> str:
    """A key as its canonical JSON array text: a scalar, a list/tuple of values or the text itself."""
    if isinstance(key, str) and key.startswith("["):
        return orjson.dumps(json.loads(key)).decode()
    if isinstance(key, (list, tuple)):
        return orjson.dumps(list(key)).decode()
    return orjson.dumps([key]).decode()


def _key_of_table(events: pd.DataFrame, table: str, key: Any) -> str:
    """The key text of ``table`` that ``key`` names: its value as given, or the same value written as a number
    or as text (``3`` and ``"3"`` name key ``[3]`` or ``["3"]``, whichever the table has); KeyError when none.

    >>> import cdckit
    >>> events = cdckit.read(cdckit.samples.path("canal/shop"))
    >>> _key_of_table(events, "shop.customers", "3"), _key_of_table(events, "shop.customers", 3)
    ('[3]', '[3]')
    """
    keys = set(events.loc[(table_names(events) == table).to_numpy(), "key"].dropna())
    candidates = [given_key_text(key)]
    if isinstance(key, str) and not key.startswith("["):
        try:
            candidates.append(given_key_text(json.loads(key)))
        except ValueError:
            pass
    elif isinstance(key, (int, float)) and not isinstance(key, bool):
        candidates.append(given_key_text(str(key)))
    for candidate in candidates:
        if candidate in keys:
            return candidate
    examples = ", ".join(sorted(keys, key=key_order)[:3])
    raise KeyError(f"no row of {table} has key {key!r}" + (f" (its keys look like {examples})" if keys else ""))


def keyless_key_error(table: str, key: Any, keyed: bool) -> KeylessTableError:
    """The error of a ``key`` not found in a ``table`` whose changes (some, when ``keyed``, or all) name no key
    columns: the row may be there, without a key to find it by.

    >>> print(keyless_key_error("shop.notes", 1, keyed=True))  # doctest: +ELLIPSIS
    no row of shop.notes has key 1 among the changes that name a key, and some of its changes name none, so ...
    """
    return KeylessTableError(
        [table],
        f"no row of {table} has key {key!r} among the changes that name a key, and some of its changes name none"
        if keyed
        else "",
    )


def history(
    events: pd.DataFrame, table: str, key: Any, order: str = "seq", *, keys: Keys | None = None
) -> pd.DataFrame:
    """Every version of one row: one line per change, the row after it and the columns that changed.

    ``table``: ``"database.table"`` or the bare table name; ``key``: the key
    value, a list of values for a composite key, or the key text (``3`` and
    ``"3"`` both name key 3; an unknown key raises ``KeyError``, and
    :class:`cdckit.KeylessTableError` where the table's changes name no key
    columns: give them with ``keys``, as in :func:`materialize`). Only the
    changes of that key (and of the keys it moved from or to) are walked.

    >>> import cdckit
    >>> events = cdckit.read(cdckit.samples.path("canal/shop"))
    >>> h = history(events, "customers", 3)
    >>> h["op"].iloc[0], list(h.columns[:7])
    ('insert', ['version', 'op', 'event_time', 'seq', 'source', 'offset', 'changed'])
    """
    events = given_keys(events_of(events), keys)
    with plan_replay(events, None, order) as plan:
        name = find_table(plan.tables, table)
        try:
            wanted = _key_of_table(events, name, key)
        except KeyError:
            if name not in plan.keyless_tables():
                raise
            keyed = bool(events.loc[(table_names(events) == name).to_numpy(), "key"].notna().any())
            raise keyless_key_error(name, key, keyed) from None
        columns = plan.columns(name)
        steps = [step for _, _, walked, _ in plan.walk(table=name, key=wanted) for step in walked]
        return history_frame(steps, wanted, columns)


def scd2(events: pd.DataFrame, order: str = "seq", typed: bool = True, *, keys: Keys | None = None) -> SCD2Tables:
    """A type 2 history per table: one row per version of each row, ``valid_from``/``valid_to``/``is_current``.

    A version starts at the ``event_time`` of the insert, snapshot read or
    update that made it (``op``) and ends when the next change of that key
    (or a delete) comes; the current version has ``valid_to`` NaT. A row
    without a key has no identity, so no versions: the tables whose changes
    name no key columns are left out, named in a warning and in the result's
    ``keyless``; when no table has a key, :class:`cdckit.KeylessTableError`
    says how to give them (``keys``, as in :func:`materialize`). ``typed``: typed
    source columns (see the module docstring), the values that did not fit in
    each frame's ``attrs["type_problems"]`` (a list of
    :data:`cdckit.analysis.tables.TYPE_PROBLEM_COLUMNS` records).

    >>> import cdckit
    >>> tables = scd2(cdckit.read(cdckit.samples.path("canal/shop")))
    >>> customers = tables["shop.customers"]
    >>> int(customers.groupby("id")["is_current"].sum().max())
    1
    """
    events = given_keys(events_of(events), keys)
    declared = declared_types(events) if typed else None
    with plan_replay(events, None, order) as plan:
        found = plan.versions()
        walked: dict[str, list[tuple[int, dict[str, Any]]]] = {}
        for table, _, steps, _ in plan.walk(partial_tables=True):
            walked.setdefault(table, []).extend(step_versions(steps))
        columns = {table: plan.columns(table) for table in plan.tables_in_replay_order()}
        keyless = plan.keyless_tables()
    # the frames are made once DuckDB's copy of the changes is gone
    by_table = dict(iter(found.groupby("_table", sort=False))) if len(found) else {}
    del found
    out = SCD2Tables()
    afters = pa.array(events["after"], pa.string(), from_pandas=True)  # once, for every table
    for table, names in columns.items():
        versions = _Versions.of_rows(events, by_table.pop(table, None), afters).joined(walked.pop(table, []))
        if len(versions.positions):
            out[table] = versions.frame(names, table, None if declared is None else declared.get(table, {}))
    out.keyless = keyless
    for said in keyless_left_out(out.keyless, key_columns_of(events) if out.keyless else ()):
        warnings.warn(said, stacklevel=2)
    return out


class _Versions:
    """The versions of one table, column by column, in replay order (for :func:`scd2`).

    Times are integer nanoseconds (``NaT`` as pandas' integer for it), so
    no Timestamp object is made per version.
    """

    def __init__(
        self,
        positions: list[int],
        rows: list[dict[str, Any]] | None,
        starts: np.ndarray,
        ends: np.ndarray,
        ops: list[Any],
        seqs: list[Any],
        keys: list[Any],
        texts: pa.Array | None = None,
    ) -> None:
        self.positions, self.starts, self.ends, self.ops, self.seqs = positions, starts, ends, ops, seqs
        self.keys = keys
        self.texts = texts  # the after images, unparsed, until a walked version joins or a frame is made
        self._rows = rows

    @property
    def rows(self) -> list[dict[str, Any]]:
        if self._rows is None:
            self._rows = [values.loads(text) for text in ([] if self.texts is None else self.texts.to_pylist())]
        return self._rows

    @classmethod
    def of_rows(cls, events: pd.DataFrame, found: pd.DataFrame | None, afters: pa.Array | None = None) -> _Versions:
        """The versions the relational plan found: images unparsed (``afters``: the events' after images as
        Arrow text, when already made), times taken from the frame as they are."""
        if found is None:
            found = pd.DataFrame({"_pos": [], "_row": [], "next_row": []}, dtype="int64")
        rows, ends = found["_row"].to_numpy(), found["next_row"].to_numpy()
        times = utc_nanoseconds(events["event_time"]).array.asi8
        stops = np.full(len(ends), _NAT, dtype=np.int64)
        stops[ends >= 0] = times[ends[ends >= 0]]
        return cls(
            found["_pos"].tolist(),
            None,
            times[rows],
            stops,
            events["op"].iloc[rows].tolist(),
            [None if s is None or s is pd.NA else s for s in events["seq"].iloc[rows].tolist()],
            events["key"].iloc[rows].tolist(),
            texts=(pa.array(events["after"], pa.string(), from_pandas=True) if afters is None else afters).take(rows),
        )

    def joined(self, walked: list[tuple[int, dict[str, Any]]]) -> _Versions:
        """These versions and the walked ones, in replay order."""
        if not walked:
            return self
        items = sorted(
            [
                *zip(
                    self.positions, self.rows, self.starts.tolist(), self.ends.tolist(), self.ops, self.seqs, self.keys
                ),
                *(
                    (p, v["row"], _nanos(v["valid_from"]), _nanos(v["valid_to"]), v["op"], v["seq"], v["key"])
                    for p, v in walked
                ),
            ],
            key=lambda item: item[0],
        )
        positions, rows, starts, ends, ops, seqs, keys = (list(c) for c in zip(*items))
        return _Versions(
            positions, rows, np.array(starts, dtype=np.int64), np.array(ends, dtype=np.int64), ops, seqs, keys
        )

    def frame(self, columns: list[str], table: str = "", declared: dict[str, str] | None = None) -> pd.DataFrame:
        """The SCD2 frame: the source columns (absent values None), then valid_from, valid_to, is_current, op, seq.

        With ``declared`` (a table's declared kinds, maybe none) the source columns are typed."""
        problems = None
        if declared is not None and self._rows is None and self.texts is not None and len(self.texts):  # unparsed
            frame, problems = typed_texts(self.texts, columns, table, declared=declared, keys=self.keys)
        elif declared is not None:
            frame, problems = typed_records(self.rows, columns, table, declared=declared, keys=self.keys)
        else:
            frame = (
                values.images_frame(self.texts, columns)
                if self._rows is None and self.texts is not None and len(self.texts)
                else None
            )
        if frame is None:
            frame = self._parsed_frame(columns)
        frame["valid_from"] = pd.to_datetime(self.starts, utc=True)
        frame["valid_to"] = pd.to_datetime(self.ends, utc=True)
        frame["is_current"] = frame["valid_to"].isna()
        frame["op"] = pd.Series(self.ops, index=frame.index, dtype=object)  # texts as on pandas 2, not pandas 3's str
        frame["seq"] = pd.Series(self.seqs, index=frame.index, dtype=object)
        if problems is not None:
            frame.attrs["type_problems"] = problems  # records: a frame in attrs breaks pandas' concat and repr
        return frame

    def _parsed_frame(self, columns: list[str]) -> pd.DataFrame:
        """The source columns from the rows parsed one by one."""
        frame = pd.DataFrame(self.rows, columns=columns)
        for name in columns:  # a column an image lacks is None, as a present null is
            missing = frame[name].isna()
            if missing.all():
                frame[name] = pd.Series([None] * len(frame), dtype=object)
            else:
                frame[name] = object_column(frame[name])
        return frame


_NAT = pd.NaT.value


def _nanos(value: Any) -> int:
    """A time as integer nanoseconds since the epoch (``NaT``'s integer for none)."""
    return _NAT if value is None or value is pd.NaT else pd.Timestamp(value).value


def step_versions(steps: list[Step]) -> list[tuple[int, dict[str, Any]]]:
    """The versions that walked steps make: ``(replay position, version)``; each version ends at the next change."""
    versions: list[tuple[int, dict[str, Any]]] = []
    open_version: dict[str, dict[str, Any]] = {}
    for step in steps:
        when = step.event["event_time"]
        if step.cleared is not None:  # a truncate: every row of the table goes
            for version in open_version.values():
                version["valid_to"] = when
            open_version.clear()
            continue
        if step.old_key is None and step.new_key is None or (step.problem and step.new_row is step.old_row):
            continue
        if step.old_key is not None and step.old_key in open_version:
            open_version.pop(step.old_key)["valid_to"] = when
        if step.new_key is not None and step.new_row is not None:
            if step.new_key in open_version:
                open_version.pop(step.new_key)["valid_to"] = when
            version = {
                "row": step.new_row,
                "valid_from": when,
                "valid_to": pd.NaT,
                "op": step.event["op"],
                "seq": step.event["seq"],
                "key": step.new_key,
            }
            open_version[step.new_key] = version
            versions.append((step.event["_pos"], version))
    return versions
