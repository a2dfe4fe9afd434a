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

>>> import cdckit
>>> state = cdckit.materialize(cdckit.read(cdckit.samples.path("canal/shop")))
>>> sorted(state), len(state["shop.customers"]) > 0
(['shop.customers', 'shop.order_items'], True)
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from typing import Any, Iterable, Iterator

import orjson
import pandas as pd

from . import values
from .dialects import registry
from .ordering import CHANGE_OPS, filled_seq, none_if_missing, sort_events, table_names

__all__ = ["materialize", "history", "scd2", "TableStates", "Replayer", "Step", "replay_rows", "find_table", "PROBLEM_COLUMNS",
           "drop_redeliveries", "old_key", "SCD2_COLUMNS",
           "column_order"]

#: Columns of ``TableStates.problems``.
PROBLEM_COLUMNS = ["table", "key", "source", "offset", "seq", "op", "problem"]


class TableStates(dict):
    """``{"database.table": DataFrame}`` with what replay could not apply cleanly.

    ``problems``: one row per change that did not fit (see
    :data:`PROBLEM_COLUMNS`); ``keyless``: tables kept as a multiset of rows.
    """

    problems: pd.DataFrame
    keyless: list[str]


@dataclass
class Step:
    """What one change did to one table: the row under its old key before, under its new key after."""

    event: dict[str, Any]
    old_key: str | None
    new_key: str | None
    old_row: dict[str, Any] | None
    new_row: dict[str, Any] | None
    problem: str | None = None


def _parse(text: Any) -> dict[str, Any] | None:
    """An image text as a dict (None for none; a dict already parsed is returned as it is)."""
    if text is None or text is pd.NA:
        return None
    if text.__class__ is dict:
        return text
    parsed = values.loads(text)
    return parsed if isinstance(parsed, dict) else None


def _key_of(row: dict[str, Any] | None, columns: Any) -> str | None:
    """The key text of ``row`` when it has every key column."""
    if row is None or columns is None or len(columns) == 0 or any(c not in row for c in columns):
        return None
    return values.key_of(row, list(columns))


def _canonical(row: dict[str, Any] | None) -> str:
    """A row as JSON text with sorted columns: equal rows, equal texts."""
    return orjson.dumps(row, option=orjson.OPT_SORT_KEYS).decode()


def old_key(op: Any, key: Any, key_columns: Any, before: Any) -> str | None:
    """The key a change starts from: the before image's key where it has one, else ``key``."""
    own = none_if_missing(key)
    if op != "update":
        return own
    return _key_of(_parse(before), key_columns) or own


class Replayer:
    """Replays one table's changes, in the order given.

    >>> r = Replayer(partial=False)
    >>> _ = r.apply({"op": "insert", "key": "[1]", "key_columns": ["id"], "before": None,
    ...              "after": '{"id":1,"name":"a"}'})
    >>> step = r.apply({"op": "update", "key": "[1]", "key_columns": ["id"], "before": '{"id":1,"name":"a"}',
    ...                 "after": '{"id":1,"name":"b"}'})
    >>> r.rows, step.old_row
    ({'[1]': {'id': 1, 'name': 'b'}}, {'id': 1, 'name': 'a'})
    """

    def __init__(self, partial: bool = False) -> None:
        self.partial = partial
        self.rows: dict[str, dict[str, Any]] = {}
        self.bag: Counter[str] = Counter()

    def apply(self, event: dict[str, Any]) -> Step:
        """Apply one change; returns what it did."""
        op = event["op"]
        columns = event.get("key_columns")
        before, after = _parse(event.get("before")), _parse(event.get("after"))
        key = none_if_missing(event.get("key"))
        if key is None:
            return self._apply_keyless(event, op, before, after)
        if op in ("insert", "read"):
            old = self.rows.get(key)
            problem = "insert of a live key (row replaced)" if op == "insert" and old is not None else None
            if after is None:
                return Step(event, key, key, old, old, f"{op} without an after image (ignored)")
            self.rows[key] = after
            return Step(event, key, key, old, after, problem)
        if op == "delete":
            old = self.rows.pop(key, None)
            return Step(event, key, None, old, None, None if old is not None else "delete of a key not in the table")
        start = _key_of(before, columns) or key
        current = self.rows.get(start)
        problem = None if current is not None else "update of a key not in the table"
        if after is None:
            return Step(event, start, start, current, current, "update without an after image (ignored)")
        if self.partial:
            base = current if current is not None else (before or {})
            new_row = {**base, **after}
        else:
            new_row = after
        end = _key_of(new_row, columns) or key
        if end != start:
            self.rows.pop(start, None)
        self.rows[end] = new_row
        return Step(event, start, end, current, new_row, problem)

    def _apply_keyless(self, event: dict[str, Any], op: str, before: dict | None, after: dict | None) -> Step:
        """A change to a table without a key: the multiset of rows."""
        problem = None
        if op in ("update", "delete") and before is not None:
            text = _canonical(before)
            if self.bag[text] > 0:
                self.bag[text] -= 1
                if not self.bag[text]:
                    del self.bag[text]
            else:
                problem = f"{op} of a row not in the table"
        elif op in ("update", "delete"):
            problem = f"{op} without a before image cannot be matched to a row"
        if op != "delete" and after is not None:
            self.bag[_canonical(after)] += 1
        return Step(event, None, None, before, after if op != "delete" else None, problem)

    def state_rows(self) -> list[dict[str, Any]]:
        """The live rows: keyed rows in key order, then keyless rows in text order."""
        keyed = [row for _, row in sorted(self.rows.items(), key=lambda kv: _key_order(kv[0]))]
        keyless = [values.loads(text) for text, n in sorted(self.bag.items()) for _ in range(n)]
        return keyed + keyless


def _key_order(key: str) -> tuple:
    """Sort key of a key text: numbers by value, then strings, then nulls."""
    try:
        parts = json.loads(key)
    except ValueError:
        return ((3, key),)
    if not isinstance(parts, list):
        parts = [parts]
    return tuple((0, float(p), "") if isinstance(p, (int, float)) and not isinstance(p, bool) else
                 (1, 0.0, str(p)) if p is not None else (2, 0.0, "") for p in parts)


# --------------------------------------------------------------------------- preparing events


_REPLAY_COLUMNS = ["dialect", "_table", "key", "key_columns", "op", "before", "after", "seq", "_seq", "source",
                   "partition", "offset", "event_time"]


def drop_redeliveries(events: pd.DataFrame) -> pd.DataFrame:
    """The events without exact redeliveries (same dialect, table, key, seq, op and images; seq set)."""
    subset = ["dialect", "database", "schema", "table", "key", "seq", "op", "before", "after"]
    arrival = sort_events(events, by="arrival")  # the copy that arrived first is the one kept
    text = arrival[subset].astype(object).where(arrival[subset].notna(), "\x00")
    duplicated = text.duplicated(keep="first").to_numpy() & arrival["seq"].notna().to_numpy()
    kept = arrival.index[~duplicated]
    return events[events.index.isin(kept)]


def _prepared(events: pd.DataFrame, as_of: Any, order: str) -> pd.DataFrame:
    """Row changes, redeliveries dropped, cut at ``as_of``, in replay order, with ``_table`` and ``_seq``."""
    changes = events[events["op"].isin(CHANGE_OPS)].reset_index(drop=True)
    if as_of is not None:
        cut = _timestamp(as_of)
        changes = changes[changes["event_time"].notna() & (changes["event_time"] <= cut)]
    changes = drop_redeliveries(changes)
    ordered = sort_events(changes, by=order)
    frame = ordered.reset_index(drop=True)
    frame.insert(0, "_table", table_names(frame).to_numpy())
    frame["_seq"] = filled_seq(frame)
    return frame[frame["_table"].notna()]


def _timestamp(value: Any) -> pd.Timestamp:
    """A time as a UTC timestamp (zone-less values are UTC)."""
    stamp = pd.Timestamp(value)
    return stamp.tz_localize("UTC") if stamp.tzinfo is None else stamp.tz_convert("UTC")


def _partial(dialect: Any) -> bool:
    try:
        return bool(registry.get(dialect).partial_updates)
    except Exception:
        return False


def _event_dicts(frame: pd.DataFrame) -> Iterator[dict[str, Any]]:
    columns = [c for c in _REPLAY_COLUMNS if c in frame.columns]
    for row in zip(*(frame[c].tolist() for c in columns)):
        event = {c: none_if_missing(v) for c, v in zip(columns, row)}
        if event.get("key_columns") is not None:  # a list in pandas, an array from Spark
            event["key_columns"] = list(event["key_columns"])
        yield event


def replay_rows(frame: pd.DataFrame) -> Iterator[tuple[str, Replayer, list[Step], dict[str, str]]]:
    """Replay a prepared frame (in order) table by table: ``(table, replayer, steps, column ranks)``.

    Used by both engines (Spark calls it on groups of rows). The column
    ranks say where each column first appears in seq order (key columns,
    then the before and after images): a text that sorts like that position,
    so ranks from different groups can be compared; a table's columns are
    shown in rank order (:func:`column_order`).
    """
    tables: dict[str, tuple[Replayer, list[Step], dict[str, str]]] = {}
    for event in _event_dicts(frame):
        table = event["_table"]
        if table not in tables:
            tables[table] = (Replayer(partial=_partial(event["dialect"])), [], {})
        replayer, steps, ranks = tables[table]
        event["before"], event["after"] = _parse(event["before"]), _parse(event["after"])  # parsed once
        partition = "" if event["partition"] is None else f"{int(event['partition']):020d}"
        where = f"{event['_seq']}\x00{event['source']}\x00{partition}\x00{int(event['offset']):020d}\x00"
        names = [*(event.get("key_columns") or ()), *(event["before"] or ()), *(event["after"] or ())]
        for position, name in enumerate(names):
            rank = f"{where}{position:06d}"
            if ranks.get(name, "\U0010ffff") > rank:
                ranks[name] = rank
        steps.append(replayer.apply(event))
    for table, (replayer, steps, ranks) in tables.items():
        yield table, replayer, steps, ranks


def column_order(ranks: dict[str, str]) -> list[str]:
    """Columns in the order of their ranks (see :func:`replay_rows`)."""
    return sorted(ranks, key=lambda name: (ranks[name], name))


def _problems(table: str, steps: Iterable[Step]) -> list[dict[str, Any]]:
    return [{"table": table, "key": s.new_key or s.old_key, "source": s.event["source"], "offset": s.event["offset"],
             "seq": s.event["seq"], "op": s.event["op"], "problem": s.problem} for s in steps if s.problem]


# --------------------------------------------------------------------------- public functions


def materialize(events: pd.DataFrame, as_of: Any = None, order: str = "seq") -> TableStates:
    """The state of every table after the changes (or at ``as_of``): ``{"database.table": DataFrame}``.

    One column per source column, one row per live key (rows in key order).
    ``as_of``: a time (text, datetime or Timestamp; zone-less means UTC):
    only changes with ``event_time`` at or before it count. ``order``:
    ``"seq"`` (default), ``"event_time"`` or ``"arrival"``.

    >>> import cdckit
    >>> events = cdckit.read(cdckit.samples.path("shareplex/examples"))
    >>> state = materialize(events)  # line 2 became line 3: the old key is gone
    >>> state["sales.order_lines"][["order_id", "line_no", "product"]].values.tolist()
    [['1001', '3', 'Gadget XL']]
    """
    frame = _prepared(events, as_of, order)
    states = TableStates()
    problems: list[dict[str, Any]] = []
    for table, replayer, steps, ranks in replay_rows(frame):
        rows = replayer.state_rows()
        columns = column_order(ranks)
        states[table] = pd.DataFrame.from_records(rows, columns=columns) if rows else pd.DataFrame(columns=columns)
        problems.extend(_problems(table, steps))
    states.problems = pd.DataFrame(problems, columns=PROBLEM_COLUMNS).astype({"offset": "Int64"}).sort_values(
        ["table", "source", "offset"], kind="stable").reset_index(drop=True)
    states.keyless = sorted(set(frame.loc[frame["key"].isna(), "_table"]))
    return dict_sorted(states)


def dict_sorted(states: TableStates) -> TableStates:
    """The same states with tables in name order."""
    out = TableStates((name, states[name]) for name in sorted(states))
    out.problems, out.keyless = states.problems, states.keyless
    return out


def find_table(names: Iterable[Any], table: str) -> str:
    """The full name in ``names`` that ``table`` means: the full ``database.table`` name or the bare table name.

    >>> find_table(["shop.customers", "shop.orders"], "orders")
    'shop.orders'
    """
    known = sorted({n for n in names if isinstance(n, str)})
    if table in known:
        return table
    matches = [n for n in known if n.rsplit(".", 1)[-1] == table]
    if len(matches) == 1:
        return matches[0]
    raise KeyError(f"table {table!r} not in the events; tables: {known}" if not matches else
                   f"table {table!r} is ambiguous: {matches}")


def _key_text(key: Any) -> str:
    """A key as its canonical JSON array text: a scalar, a list/tuple of values or the text itself."""
    if isinstance(key, str) and key.startswith("["):
        return orjson.dumps(json.loads(key)).decode()
    if isinstance(key, (list, tuple)):
        return orjson.dumps(list(key)).decode()
    return orjson.dumps([key]).decode()


def history(events: pd.DataFrame, table: str, key: Any, order: str = "seq") -> pd.DataFrame:
    """Every version of one row: one line per change, the row after it and the columns that changed.

    ``table``: ``"database.table"`` or the bare table name; ``key``: the key
    value, a list of values for a composite key, or the key text.

    >>> import cdckit
    >>> events = cdckit.read(cdckit.samples.path("canal/shop"))
    >>> h = history(events, "customers", 3)
    >>> h["op"].iloc[0], list(h.columns[:7])
    ('insert', ['version', 'op', 'event_time', 'seq', 'source', 'offset', 'changed'])
    """
    frame = _prepared(events, None, order)
    name = find_table(frame["_table"], table)
    wanted = _key_text(key)
    lines = []
    columns: list[str] = []
    for _, _, steps, ranks in replay_rows(frame[frame["_table"] == name]):
        columns = column_order(ranks)
        for step in steps:
            if wanted not in (step.old_key, step.new_key):
                continue
            old = step.old_row  # the row before the change, also when it moves here from another key
            new = step.new_row if step.new_key == wanted else None
            changed = [c for c in columns if (old or {}).get(c, _ABSENT) != (new or {}).get(c, _ABSENT)]
            op = step.event["op"]
            if step.old_key != step.new_key and op == "update":
                op = "update (key moved here)" if new is not None else "update (key moved away)"
            lines.append({"op": op, "event_time": step.event["event_time"], "seq": step.event["seq"],
                          "source": step.event["source"], "offset": step.event["offset"], "changed": changed,
                          "problem": step.problem, **{f"{c}": (new or {}).get(c) for c in columns}})
    out = pd.DataFrame(lines, columns=["op", "event_time", "seq", "source", "offset", "changed", "problem", *columns])
    out.insert(0, "version", range(1, len(out) + 1))
    return out


_ABSENT = object()

#: Columns scd2 adds to the source columns.
SCD2_COLUMNS = ["valid_from", "valid_to", "is_current", "op", "seq"]


def scd2(events: pd.DataFrame, order: str = "seq") -> dict[str, pd.DataFrame]:
    """A type 2 history per table: one row per version of each row, ``valid_from``/``valid_to``/``is_current``.

    A version starts at the ``event_time`` of the insert, snapshot read or
    update that made it (``op``) and ends when the next change of that key
    (or a delete) comes; the current version has ``valid_to`` NaT. Tables
    without a key are left out (their rows have no identity).

    >>> import cdckit
    >>> tables = scd2(cdckit.read(cdckit.samples.path("canal/shop")))
    >>> customers = tables["shop.customers"]
    >>> int(customers.groupby("id")["is_current"].sum().max())
    1
    """
    frame = _prepared(events, None, order)
    out = {}
    for table, _, steps, ranks in replay_rows(frame):
        columns = column_order(ranks)
        versions: list[dict[str, Any]] = []
        open_version: dict[str, dict[str, Any]] = {}
        for step in steps:
            if step.old_key is None and step.new_key is None or (step.problem and step.new_row is step.old_row):
                continue
            when = step.event["event_time"]
            if step.old_key is not None and step.old_key in open_version:
                open_version.pop(step.old_key)["valid_to"] = when
            if step.new_key is not None and step.new_row is not None:
                if step.new_key in open_version:
                    open_version.pop(step.new_key)["valid_to"] = when
                version = {**{c: step.new_row.get(c) for c in columns}, "valid_from": when, "valid_to": pd.NaT,
                           "op": step.event["op"], "seq": step.event["seq"]}
                open_version[step.new_key] = version
                versions.append(version)
        frame_out = pd.DataFrame(versions, columns=[*columns, "valid_from", "valid_to", "op", "seq"])
        frame_out["valid_to"] = pd.to_datetime(frame_out["valid_to"], utc=True)
        frame_out.insert(len(columns) + 2, "is_current", frame_out["valid_to"].isna())
        if versions:
            out[table] = frame_out
    return out

