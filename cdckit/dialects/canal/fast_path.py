"""The batch decoder of Canal (the fast path): many raw flat messages at once, through msgspec.

:class:`CanalFastPath` adds :meth:`~CanalFastPath.decode_lines` to the
one-message decoder (:class:`~.decode.CanalDecoder`): msgspec checks each
message's shape, the converters of each distinct ``mysqlType``/``sqlType``
text are worked out once, and any other message is handed back (None).

>>> line = b'{"type":"INSERT","database":"shop","table":"t","es":1,"isDdl":false,"data":[{"id":"1"}],"pkNames":["id"]}'
>>> row, = CanalFastPath().decode_lines([line])
>>> row.op, row.table, row.after
('insert', 't', '{"id":"1"}')
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, cast

import msgspec
import orjson

from ... import values
from ...frame import FastRow
from .decode import CanalDecoder
from .message import DML_OPS, ROW_ZERO, column_converters, declared_columns, to_int

__all__ = ["CanalFastPath"]


class CanalFastPath(CanalDecoder):
    """:class:`~.decode.CanalDecoder` with the batch decoder (the base of :class:`~cdckit.dialects.canal.Canal`)."""

    has_line_decoder = True

    def decode_lines(self, lines: list[bytes]) -> list[FastRow | list[FastRow] | None]:
        """The events of many raw Canal flat messages (one JSON text each) at once.

        msgspec reads each message (checking its shape in C). The typing plan
        of each distinct ``mysqlType``/``sqlType`` text is worked out once
        (:meth:`_plan`); a message of the usual kind (DML, ``es`` and ``id``
        non-negative whole numbers or absent, no ``_tidb``) is made into its
        rows right here, any other DML message by :meth:`dml_rows`. For each
        line it hands back the event row (a message with one row), the list
        of them (several rows), or None for :meth:`decode` to take: bad JSON,
        DDL, empty ``data``, anything not of the usual shape (values other
        than strings, say) and any message whose rows fail to build.
        """
        out: list[FastRow | list[FastRow] | None] = []
        append = out.append
        decode = _FLAT.decode
        plan_of, declare = self._plan, self.declare
        dumps, new_row = orjson.dumps, tuple.__new__
        last_mysql = last_sql = plan = last_id = last_id_text = None
        for index, line in enumerate(lines):
            try:
                flat = decode(line)
            except (msgspec.DecodeError, msgspec.ValidationError):
                append(None)
                continue
            op_raw = flat.type
            op = DML_OPS.get(op_raw)
            data = flat.data
            if op is None or not data:
                append(None)
                continue
            mysql, sql = flat.mysqlType, flat.sqlType
            if plan is None or mysql != last_mysql or sql != last_sql:  # Raw compares its bytes
                plan, last_mysql, last_sql = plan_of(mysql, sql), mysql, sql
            converters, by_name, declared = plan
            tidb = flat.tidb
            if tidb is not None and (tidb.onlyHandleKey or tidb.claimCheckLocation):  # decode() says why
                append(None)
                continue
            database, table = flat.database or None, flat.table or None
            es, batch_id = flat.es, flat.id
            try:
                declare(database, None, table, declared, index)
                if tidb is not None or es is None or es < 0 or (batch_id is not None and batch_id < 0):
                    append(self._general(flat, op, op_raw, data, by_name))
                    continue
                ts = flat.ts
                pk = flat.pkNames or None
                gtid = flat.gtid or None
                event_time, emit_time = es * 1_000_000, None if ts is None else ts * 1_000_000
                if batch_id != last_id or last_id_text is None:  # a batch's messages share their id
                    last_id, last_id_text = batch_id, "" if batch_id is None else str(batch_id).zfill(20)
                prefix = f"{str(es).zfill(20)}:{last_id_text}:"
                update = op == "update"
                old = (flat.old or _NO_ROWS) if update else _NO_ROWS
                rows = []
                before: str | None
                after: str | None
                # the rows' texts are typed in place (a number's text becomes the number)
                for row_index, row in enumerate(cast(list[dict[str, Any]], data)):
                    for name, convert in converters:
                        value = row.get(name)
                        if value is not None:
                            if (
                                convert is to_int
                                and value.__class__ is str
                                and len(value) < 19
                                and value.isascii()
                                and value.isdigit()
                            ):  # to_int's own first case, inline
                                row[name] = int(value)
                            else:
                                row[name] = convert(value)
                    after = dumps(row).decode()
                    if update:
                        changed = old[row_index] if row_index < len(old) else None
                        if changed:
                            if converters:
                                for name, convert in converters:
                                    value = changed.get(name)
                                    if value is not None:
                                        changed[name] = convert(value)
                            before = dumps({**row, **changed}).decode()
                        else:
                            before = after
                    elif op == "delete":
                        before, after = after, None
                    else:
                        before = None
                    if pk is None:
                        key = None
                    else:
                        try:
                            key = dumps([row[name] for name in pk]).decode()
                        except KeyError:
                            key = None
                    rows.append(
                        new_row(
                            FastRow,
                            (
                                op,
                                op_raw,
                                database,
                                None,
                                table,
                                event_time,
                                emit_time,
                                prefix + (ROW_ZERO if row_index == 0 else str(row_index).zfill(20)),
                                gtid,
                                pk,
                                key,
                                before,
                                after,
                                None,
                            ),
                        )
                    )
            except Exception:  # noqa: BLE001 - anything odd: decode() takes the message and says what
                append(None)
                continue
            append(rows[0] if len(rows) == 1 else rows)
        return out

    def _general(
        self, flat: _Flat, op: str, op_raw: str, data: list, converters: dict[str, Callable[[Any], Any]]
    ) -> FastRow | list[FastRow]:
        """The rows of a DML message not of the usual kind (``_tidb``, ``es`` or ``id`` absent or negative), by
        :meth:`dml_rows`."""
        tidb = flat.tidb
        rows = self.dml_rows(
            op,
            op_raw,
            data,
            (flat.old or _NO_ROWS) if op == "update" else _NO_ROWS,
            converters,
            flat.pkNames,
            flat.database,
            flat.table,
            flat.es,
            flat.ts,
            flat.id,
            flat.gtid,
            None if tidb is None else tidb.commitTs,
            fresh=True,
        )
        return rows[0] if len(rows) == 1 else rows

    def _plan(self, mysql_types: msgspec.Raw, sql_types: msgspec.Raw) -> tuple:
        """How the rows of messages with these raw ``mysqlType``/``sqlType`` texts are typed, remembered by
        those texts: ``(((column, converter), ...), {column: converter}, declared column types)``."""
        ident = (bytes(mysql_types), bytes(sql_types))
        found = self._by_text.get(ident)
        if found is None:
            if len(self._by_text) >= 4096:
                self._by_text.clear()
            mysql, sql = values.loads(ident[0]), values.loads(ident[1])
            converters = column_converters(mysql, sql)
            found = self._by_text[ident] = (tuple(converters.items()), converters, declared_columns(mysql, sql))
        return found


# ---------------------------------------------------------------- the batch decoder's view of a message

_NULL = msgspec.Raw(b"null")
_NO_ROWS: list = []


class _Tidb(msgspec.Struct):
    """TiCDC's ``_tidb`` extension as the batch decoder reads it (anything but a TSO goes to ``decode``)."""

    commitTs: Annotated[int, msgspec.Meta(ge=0)] | None = None
    onlyHandleKey: bool = False
    claimCheckLocation: str = ""


class _Flat(msgspec.Struct, gc=False):
    """A Canal flat message as the batch decoder reads it (types kept raw, to cache converters by their text).

    Fields not named here are skipped: :meth:`CanalDecoder.decode` reads none of them for a DML message (the
    only kind taken here: ``isDdl`` and ``sql`` matter to DDL), and Canal builds add their own."""

    type: str
    data: list[dict[str, str | None]] | None = None
    old: list[dict[str, str | None] | None] | None = None
    database: str | None = None
    table: str | None = None
    pkNames: list[str] | None = None
    es: int | None = None
    ts: int | None = None
    id: int | None = None
    gtid: str | None = None
    mysqlType: msgspec.Raw = _NULL
    sqlType: msgspec.Raw = _NULL
    tidb: _Tidb | None = msgspec.field(default=None, name="_tidb")


_FLAT = msgspec.json.Decoder(_Flat)
