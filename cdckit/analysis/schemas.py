"""Schema history: each table's columns, their kinds and key over time, and its schema now.

:func:`schema_history` walks the events in input order and writes one row per
change it sees (:data:`HISTORY_COLUMNS`), from three sources:

- the declarations a read kept (``cdckit.column_types_of(events)``): a table's
  first declaration sets its columns; a later one that adds, drops or retypes
  a column gives ``column added``, ``column dropped`` or ``type changed``
  (placed at the first event of the message that declared it; declarations of
  messages that made no event come last);
- the images, for columns nothing declares: a column seen for the first time
  in an image after the table's first change is ``column added``; for a table
  with no declarations, a whole-row image (insert or snapshot read) without a
  column the table had is ``column dropped`` (updates and deletes are not
  used: some dialects send only the changed columns, and a Lindorm update may
  delete one cell);
- the events themselves: ``table first seen`` (its first change, DDL or
  declaration), ``key changed`` (``old_type``/``new_type`` hold the old and
  new key columns as JSON arrays), and every ``ddl`` event with its text.

The kind of a column no declaration names is inferred from all its values
(:func:`cdckit.column_types.infer_kind`).

>>> import cdckit
>>> history = schema_history(cdckit.read(cdckit.samples.path("canal/examples.jsonl")))
>>> history.loc[history["table"] == "shop.products", "change"].tolist()
['table first seen', 'ddl', 'ddl']
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any, TypeGuard

import pandas as pd

from .. import values
from ..capture import column_types_of, events_of
from ..column_types import infer_kind, is_kind
from ..frame import REPLAY_OPS, table_names
from ..python_columns import object_columns
from ..row_images import parse_image
from .tables import declared_types

__all__ = ["schema_history", "table_schema", "HISTORY_COLUMNS", "SCHEMA_COLUMNS", "CHANGES"]

#: Columns of :func:`schema_history`.
HISTORY_COLUMNS = [
    "table",
    "source",
    "offset",
    "event_time",
    "change",
    "column",
    "old_type",
    "new_type",
    "key_columns",
    "ddl",
]

#: Columns of :func:`table_schema`.
SCHEMA_COLUMNS = ["table", "position", "column", "kind", "declared", "type", "key"]

#: The values of ``change``.
CHANGES = ("table first seen", "column added", "column dropped", "type changed", "key changed", "ddl")


class _Table:
    """What the walk knows of one table so far."""

    def __init__(self) -> None:
        self.columns: dict[str, None] = {}  # from the images, in order of appearance
        self.declared: dict[str, str] | None = None  # the latest declaration: column -> kind
        self.raw: dict[str, str] = {}
        self.key: list[str] | None = None
        self.values: dict[str, list[Any]] = {}


class _Walk:
    """One pass over the events: the history rows and each table's final schema."""

    def __init__(self, events: pd.DataFrame) -> None:
        self.tables: dict[str, _Table] = {}
        self.rows: list[dict[str, Any]] = []
        self.pending = _declarations(events)
        names = table_names(events).tolist()
        columns = ["op", "source", "offset", "event_time", "key_columns", "before", "after", "ddl"]
        for name, event in zip(names, events[columns].to_dict("records")):
            self._declared_at(event["source"], event["offset"], event["event_time"])
            self._event(name, event)
        for source, offset in list(self.pending):
            self._declared_at(source, offset, None)

    def _row(
        self,
        table: str | None,
        event: dict[str, Any],
        change: str,
        column: str | None = None,
        old: str | None = None,
        new: str | None = None,
        ddl: str | None = None,
    ) -> None:
        known = self.tables.get(table) if table is not None else None
        self.rows.append(
            {
                "table": table,
                "source": event["source"],
                "offset": event["offset"],
                "event_time": event["event_time"],
                "change": change,
                "column": column,
                "old_type": old,
                "new_type": new,
                "key_columns": None if known is None or known.key is None else list(known.key),
                "ddl": ddl,
            }
        )

    def _seen(self, name: str, event: dict[str, Any]) -> _Table:
        if name not in self.tables:
            self.tables[name] = _Table()
            key = event.get("key_columns")
            if _is_list(key) and len(key):
                self.tables[name].key = list(key)
            self._row(name, event, "table first seen")
        return self.tables[name]

    def _declared_at(self, source: Any, offset: Any, when: Any) -> None:
        for name, kinds, raw in self.pending.pop((source, offset), []):
            event = {"source": source, "offset": offset, "event_time": when}
            known = self._seen(name, event)
            old = known.declared or {}
            for column, kind in kinds.items():
                if (
                    known.declared is not None
                    and column not in old
                    or (known.declared is None and known.columns and column not in known.columns)
                ):
                    self._row(name, event, "column added", column, None, kind)
                elif column in old and old[column] != kind:
                    self._row(name, event, "type changed", column, old[column], kind)
            for column in old:
                if column not in kinds:
                    self._row(name, event, "column dropped", column, old[column], None)
            known.declared, known.raw = dict(kinds), dict(raw)

    def _event(self, name: str | None, event: dict[str, Any]) -> None:
        if name is None:
            if event["op"] == "ddl":
                self._row(None, event, "ddl", ddl=_text(event["ddl"]))
            return
        known = self._seen(name, event)
        if event["op"] == "ddl":
            self._row(name, event, "ddl", ddl=_text(event["ddl"]))
        key = event["key_columns"]
        if _is_list(key) and len(key) and known.key is not None and list(key) != known.key:
            old = values.dumps(known.key)
            known.key = list(key)
            self._row(name, event, "key changed", None, old, values.dumps(known.key))
        elif _is_list(key) and len(key):
            known.key = list(key)
        if event["op"] not in REPLAY_OPS:
            return
        after, before = parse_image(event["after"]), parse_image(event["before"])
        first = not known.columns  # the table's first image sets its columns: no change
        for image in (before, after):
            for column, value in (image or {}).items():
                known.values.setdefault(column, []).append(value)
                if column not in known.columns:
                    known.columns[column] = None
                    if not first and (known.declared is None or column not in known.declared):
                        self._row(name, event, "column added", column)
        if known.declared is None and after is not None and event["op"] in ("insert", "read"):
            for column in [c for c in known.columns if c not in after]:
                del known.columns[column]
                self._row(name, event, "column dropped", column)

    def kind(self, name: str, column: str) -> str:
        known = self.tables[name]
        if known.declared and column in known.declared:
            return known.declared[column]
        return infer_kind(known.values.get(column, []))


def _declarations(events: pd.DataFrame) -> dict[tuple[Any, Any], list[tuple[str, dict[str, str], dict[str, str]]]]:
    """``{(source, offset): [(table, {column: kind}, {column: raw type})]}`` in input order."""
    frame = column_types_of(events)
    if not isinstance(frame, pd.DataFrame) or frame.empty or not declared_types(events):
        return {}
    out: dict[tuple[Any, Any], list[tuple[str, dict[str, str], dict[str, str]]]] = {}
    groups: dict[tuple[Any, Any, str], tuple[dict[str, str], dict[str, str]]] = {}
    for name, column, raw, kind, source, offset in frame[
        ["table", "column", "type", "kind", "source", "offset"]
    ].itertuples(index=False):
        if not isinstance(name, str) or not isinstance(column, str) or not is_kind(kind):
            continue
        place = (source, None if offset is None or offset is pd.NA else int(offset))
        at = (*place, name)
        if at not in groups:
            groups[at] = ({}, {})
            out.setdefault(place, []).append((name, *groups[at]))
        kinds, raws = groups[at]
        kinds[column], raws[column] = kind, raw
    return out


def _is_list(value: Any) -> TypeGuard[Collection[Any]]:
    """A list, tuple or array (anything with ``tolist`` but a text)."""
    return isinstance(value, (list, tuple)) or (hasattr(value, "tolist") and not isinstance(value, str))


def _text(value: Any) -> str | None:
    return None if value is None or value is pd.NA else str(value)


def schema_history(events: pd.DataFrame) -> pd.DataFrame:
    """Every change of each table's columns, kinds and key, and every DDL event, in input order
    (:data:`HISTORY_COLUMNS`; ``change`` one of :data:`CHANGES`; see the module docstring).

    >>> import cdckit
    >>> h = schema_history(cdckit.read(cdckit.samples.path("debezium/examples.json")))
    >>> h.loc[h["change"] == "ddl", "ddl"].tolist()
    ['ALTER TABLE customers ADD COLUMN middle_name VARCHAR(255)']
    """
    events = events_of(events)
    walk = _Walk(events)
    for row in walk.rows:
        if row["change"] == "column added" and row["new_type"] is None:
            row["new_type"] = walk.kind(row["table"], row["column"])
        elif row["change"] == "column dropped" and row["old_type"] is None:
            row["old_type"] = walk.kind(row["table"], row["column"])
    return object_columns(pd.DataFrame(walk.rows, columns=HISTORY_COLUMNS)).astype({"offset": "Int64"})


def table_schema(events: pd.DataFrame) -> pd.DataFrame:
    """Each table's columns now (:data:`SCHEMA_COLUMNS`): position, kind, whether declared (and the raw
    declared type), whether in the key. The columns are the latest declaration's, else those the
    images hold (less those dropped, see :func:`schema_history`).

    >>> import cdckit
    >>> s = table_schema(cdckit.read(cdckit.samples.path("canal/shop")))
    >>> s[s["table"] == "shop.order_items"][["column", "kind", "key"]].head(2).values.tolist()
    [['order_id', 'int', True], ['line_no', 'int', True]]
    """
    events = events_of(events)
    walk = _Walk(events)
    rows = []
    for name in sorted(walk.tables):
        known = walk.tables[name]
        columns = list(known.declared) if known.declared else list(known.columns)
        for position, column in enumerate(columns):
            rows.append(
                {
                    "table": name,
                    "position": position,
                    "column": column,
                    "kind": walk.kind(name, column),
                    "declared": bool(known.declared and column in known.declared),
                    "type": known.raw.get(column),
                    "key": column in (known.key or []),
                }
            )
    return object_columns(pd.DataFrame(rows, columns=SCHEMA_COLUMNS))
