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

from typing import Annotated, Any, Callable

import msgspec

from ... import values
from ..base import BadMessage
from .decode import CanalDecoder
from .message import CONVERTERS, DML_OPS, column_kinds, declared_columns

__all__ = ["CanalFastPath"]


class CanalFastPath(CanalDecoder):
    """:class:`~.decode.CanalDecoder` with the batch decoder (the base of :class:`~cdckit.dialects.canal.Canal`)."""

    has_line_decoder = True

    def decode_lines(self, lines: list[bytes]) -> list[tuple | list[tuple] | None]:
        """The events of many raw Canal flat messages (one JSON text each) at once.

        msgspec reads each message (checking its shape in C), :meth:`dml_rows`
        makes the rows, with the converters of each distinct
        ``mysqlType``/``sqlType`` text worked out once. For each line it hands
        back the event tuple (a message with one row), the list of them (several
        rows), or None for :meth:`decode` to take: bad JSON, DDL, empty
        ``data``, unknown fields and anything not of the usual shape (values
        other than strings, say).
        """
        out: list[tuple | list[tuple] | None] = []
        append = out.append
        decode = _FLAT.decode
        dml_rows = self.dml_rows
        raw_converters, declare = self._raw_converters, self.declare
        for index, line in enumerate(lines):
            try:
                flat = decode(line)
            except (msgspec.DecodeError, msgspec.ValidationError):
                append(None)
                continue
            op_raw = flat.type
            op = DML_OPS.get(op_raw)
            data = flat.data
            tidb = flat.tidb
            if op is None or not data or (tidb is not None and (tidb.onlyHandleKey or tidb.claimCheckLocation)):
                append(None)
                continue
            try:
                converters, declared = raw_converters(flat.mysqlType, flat.sqlType)
                declare(flat.database or None, None, flat.table or None, declared, index)
                rows = dml_rows(op, op_raw, data, flat.old or _NO_ROWS if op == "update" else _NO_ROWS,
                                converters, flat.pkNames, flat.database,
                                flat.table, flat.es, flat.ts, flat.id, flat.gtid,
                                None if flat.tidb is None else flat.tidb.commitTs, fresh=True)
            except (BadMessage, ValueError):
                append(None)
                continue
            append(rows[0] if len(rows) == 1 else rows)
        return out

    def _raw_converters(self, mysql_types: msgspec.Raw,
                        sql_types: msgspec.Raw) -> tuple[dict[str, Callable[[Any], Any]], dict[str, tuple]]:
        """The converters and declared column types of raw ``mysqlType``/``sqlType`` texts, remembered by
        those texts."""
        last = self._last_types
        if last is not None and last[0] == mysql_types and last[1] == sql_types:  # the same table again
            return last[2]
        ident = (bytes(mysql_types), bytes(sql_types))
        found = self._by_text.get(ident)
        if found is None:
            if len(self._by_text) >= 4096:
                self._by_text.clear()
            mysql, sql = values.loads(ident[0]), values.loads(ident[1])
            found = self._by_text[ident] = ({name: CONVERTERS[kind] for name, kind in column_kinds(mysql, sql).items()},
                                            declared_columns(mysql, sql))
        self._last_types = (mysql_types, sql_types, found)
        return found

# ---------------------------------------------------------------- the batch decoder's view of a message

_NULL = msgspec.Raw(b"null")
_NO_ROWS: list = []


class _Tidb(msgspec.Struct):
    """TiCDC's ``_tidb`` extension as the batch decoder reads it (anything but a TSO goes to ``decode``)."""

    commitTs: Annotated[int, msgspec.Meta(ge=0)] | None = None
    onlyHandleKey: bool = False
    claimCheckLocation: str = ""


class _Flat(msgspec.Struct):
    """A Canal flat message as the batch decoder reads it (types kept raw, to cache converters by their text).

    Fields not named here are skipped: :meth:`CanalDecoder.decode` reads none of them either, and Canal builds
    add their own."""

    type: str
    data: list[dict[str, str | None]] | None = None
    old: list[dict[str, str | None] | None] | None = None
    database: str | None = None
    table: str | None = None
    pkNames: list[str] | None = None
    isDdl: bool | None = None
    es: int | None = None
    ts: int | None = None
    id: int | None = None
    gtid: str | None = None
    sql: str | None = None
    mysqlType: msgspec.Raw = _NULL
    sqlType: msgspec.Raw = _NULL
    tidb: _Tidb | None = msgspec.field(default=None, name="_tidb")


_FLAT = msgspec.json.Decoder(_Flat)
