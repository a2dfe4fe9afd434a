"""Decoding one Canal flat message: one event per row of ``data``, DDL and TiCDC watermark messages.

>>> from cdckit.io import Message
>>> value = {"type": "INSERT", "database": "shop", "table": "t", "es": 1, "isDdl": False, "data": [{"id": "1"}],
...          "pkNames": ["id"]}
>>> events = CanalDecoder().decode(Message(value, "example", 0))
>>> events[0].op, events[0].after
('insert', '{"id":"1"}')
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson

from ... import row_images, values
from ...errors import InvalidValue
from ...frame import Event, FastRow
from ...io import Message
from ..base import BadMessage, Dialect, SkipMessage, expect_object, require
from .message import (
    DDL_TYPES,
    DML_OPS,
    ROW_ZERO,
    WATERMARK,
    check_whole_row,
    column_converters,
    declared_columns,
    kind_name,
    tidb_ts,
    txn_id_of,
    typed_row,
)

__all__ = ["CanalDecoder"]


class CanalDecoder(Dialect):
    """One Canal flat message at a time (the base of :class:`~cdckit.dialects.canal.Canal`)."""

    def __init__(self, tz: str | None = None) -> None:
        super().__init__(tz)
        # (database, table) -> (mysqlType, sqlType, (converters, declared column types)): reused while a table's
        # types stay the same
        self._types: dict[tuple, tuple[Any, Any, tuple]] = {}
        # (mysqlType text, sqlType text) -> the batch decoder's typing plan (see CanalFastPath._plan)
        self._by_text: dict[tuple[bytes, bytes], tuple] = {}

    # ------------------------------------------------------------ decoding

    def decode(self, message: Message) -> list[Event]:
        value = expect_object(message.value, "a Canal flat message")
        op_raw = require(value, "type")
        if not isinstance(op_raw, str):
            raise BadMessage(f"unknown type {op_raw!r}")
        tidb = value.get("_tidb")
        if tidb is not None:
            expect_object(tidb, "_tidb")
        op = DML_OPS.get(op_raw)
        if op is None:
            if value.get("isDdl") is True or op_raw in DDL_TYPES:
                return [self.ddl(value, op_raw)]
            if op_raw == WATERMARK:
                return [self.watermark(value)]
            raise BadMessage(f"unknown type {op_raw!r}")
        if tidb is not None:
            check_whole_row(tidb)
        data = value.get("data")
        if data is None or data == []:
            raise SkipMessage(f"canal {op_raw} message with no rows in data")
        if not isinstance(data, list):
            raise BadMessage(f"expected data as a JSON array, got {kind_name(data)}")
        old = value.get("old") if op == "update" else None
        if old is None:
            old = []
        elif not isinstance(old, list):
            raise BadMessage(f"expected old as a JSON array, got {kind_name(old)}")
        for name in ("database", "table"):  # the type cache is keyed on them
            if not isinstance(value.get(name), (str, type(None))):
                raise InvalidValue(f"{name} holds a {type(value[name]).__name__}, not text")
        converters, declared = self.converters(value)
        self.declare(value.get("database") or None, None, value.get("table") or None, declared)
        rows = self.dml_rows(
            op,
            op_raw,
            data,
            old,
            converters,
            value.get("pkNames"),
            value.get("database"),
            value.get("table"),
            value.get("es"),
            value.get("ts"),
            value.get("id"),
            value.get("gtid"),
            tidb_ts(tidb, "commitTs"),
        )
        return [Event(*row) for row in rows]

    def dml_rows(
        self,
        op: str,
        op_raw: str,
        data: list,
        old: list,
        converters: dict[str, Callable[[Any], Any]],
        pk: Any,
        database: Any,
        table: Any,
        es: Any,
        ts: Any,
        batch_id: Any,
        gtid: Any,
        commit_ts: int | str | None = None,
        fresh: bool = False,
    ) -> list[FastRow]:
        """The events of a DML message as tuples of the frame's event fields (shared by both decoders).

        ``commit_ts``: TiCDC's ``_tidb.commitTs`` (checked by :func:`tidb_ts`): every row's ``seq``, and
        the ``txn_id`` where there is no ``gtid``.
        ``fresh``: the rows in ``data``/``old`` are this call's to change (typed in place, not copied).
        """
        key_columns = list(pk) if isinstance(pk, list) and pk else None
        database = database or None
        table = table or None
        event_time = es * 1_000_000 if es.__class__ is int else values.ms_to_ns(es)
        emit_time = ts * 1_000_000 if ts.__class__ is int else values.ms_to_ns(ts)
        commit_seq = values.sortable(commit_ts)
        if commit_seq is not None:
            prefix = ""
        elif es.__class__ is int and batch_id.__class__ is int and es >= 0 and batch_id >= 0:
            prefix = f"{str(es).zfill(20)}:{str(batch_id).zfill(20)}:"  # the common case of the line below
        else:
            prefix = f"{values.sortable(es) or ''}:{values.sortable(batch_id) or ''}:"
        txn_id = txn_id_of(gtid, commit_ts)
        dumps = orjson.dumps
        key_of = row_images.key_of
        update = op == "update"
        rows: list[FastRow] = []
        before_text: str | None
        after_text: str | None
        for index, raw in enumerate(data):
            if raw.__class__ is not dict:
                expect_object(raw, f"data[{index}]")
            row = typed_row(raw if fresh else dict(raw), converters) if converters else raw
            after_text = dumps(row).decode()
            if update:
                changed = old[index] if index < len(old) else None
                if changed and changed.__class__ is not dict:
                    expect_object(changed, f"old[{index}]")
                if changed:
                    changed = typed_row(changed if fresh else dict(changed), converters) if converters else changed
                    before_text = dumps({**row, **changed}).decode()
                else:
                    before_text = after_text
            else:
                before_text = None
            if op == "delete":
                before_text, after_text = after_text, None
            rows.append(
                FastRow(
                    op,
                    op_raw,
                    database,
                    None,
                    table,
                    event_time,
                    emit_time,
                    # TiCDC's commit TSO, else values.sortable_text(es, id, index)
                    commit_seq or prefix + (ROW_ZERO if index == 0 else str(index).zfill(20)),
                    txn_id,
                    key_columns,
                    key_of(row, key_columns) if key_columns else None,
                    before_text,
                    after_text,
                    None,
                )
            )
        return rows

    def converters(self, value: dict[str, Any]) -> tuple[dict[str, Callable[[Any], Any]], dict[str, tuple[str, str]]]:
        """``({column: converter}, declared column types)`` of a message, from its ``mysqlType`` and
        ``sqlType`` (cached per table)."""
        mysql_types, sql_types = value.get("mysqlType"), value.get("sqlType")
        table = (value.get("database"), value.get("table"))
        cached = self._types.get(table)
        if cached is not None and cached[0] == mysql_types and cached[1] == sql_types:
            return cached[2]
        found = (
            column_converters(mysql_types, sql_types),
            declared_columns(mysql_types, sql_types),
        )
        if len(self._types) >= 4096:
            self._types.clear()
        self._types[table] = (mysql_types, sql_types, found)
        return found

    def ddl(self, value: dict[str, Any], op_raw: str) -> Event:
        """The event of a DDL message: its statement in ``ddl``, no images."""
        commit_ts = tidb_ts(value.get("_tidb"), "commitTs")
        return Event(
            op="ddl",
            op_raw=op_raw,
            **_table_and_times(value),
            seq=values.sortable(commit_ts) or values.sortable_text(value.get("es"), value.get("id"), 0),
            txn_id=txn_id_of(value.get("gtid"), commit_ts),
            ddl=value.get("sql") or None,
        )

    def watermark(self, value: dict[str, Any]) -> Event:
        """The ``heartbeat`` event of a TiCDC WATERMARK message: its ``_tidb.watermarkTs`` as ``seq``.

        A watermark says that every change committed before that TSO has been sent: a mark of progress
        with no change of its own, which is what the canonical ``heartbeat`` is.
        """
        return Event(
            op="heartbeat",
            op_raw=WATERMARK,
            **_table_and_times(value),
            seq=values.sortable(tidb_ts(value.get("_tidb"), "watermarkTs")),
        )


def _table_and_times(value: dict[str, Any]) -> dict[str, Any]:
    """The event fields of a message without rows (DDL, watermark): its table (empty names as none), ``es``
    as the event time and ``ts`` as the emit time."""
    return {
        "database": value.get("database") or None,
        "table": value.get("table") or None,
        "event_time": values.ms_to_ns(value.get("es")),
        "emit_time": values.ms_to_ns(value.get("ts")),
    }
