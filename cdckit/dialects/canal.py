"""Canal flat JSON (as Alibaba Canal and OceanBase OMS write it to Kafka / RocketMQ).

One message is one statement's row change: ``data`` is a LIST of rows,
``old`` (UPDATE only) a parallel list holding just the changed columns'
previous values, ``type`` the operation in capitals (``INSERT``, ``UPDATE``,
``DELETE``, or a DDL type: ``CREATE``, ``ALTER``, ``ERASE``, ``QUERY``,
``TRUNCATE``, ``RENAME``, ``CINDEX``, ``DINDEX``), ``isDdl`` whether it is a
DDL (its text in ``sql``), ``pkNames`` the key columns, ``es`` the event time
and ``ts`` the write time (epoch milliseconds). Real Canal also writes ``id``
(the batch id) and sometimes ``gtid``; OceanBase's Canal writes neither.

- Each element of ``data`` is one event; the before image of row i is
  ``data[i]`` overlaid with ``old[i]``.
- Every value arrives as a string. Values are typed from ``mysqlType``
  (``bigint(20) unsigned``, ``decimal(10,2)``, ``varchar(255)``...), or from
  ``sqlType`` (java.sql.Types codes) for a column ``mysqlType`` does not name
  or names with a type this module does not know: integers become numbers (a
  ``bigint unsigned`` beyond 64 bits stays text), floats floats, decimals
  exact numbers or text, booleans booleans; dates, times and character types
  stay text. Binary columns arrive as the ISO-8859-1 string of their bytes
  and become Base64 of those bytes.
- ``seq`` is ``es:id:row`` (event time, batch id, row index in ``data``),
  zero-padded. It is not a log position: the flat message has none, messages
  of one batch in the same millisecond tie, and without ``id`` only ``es``
  and the row index remain.
- ``gtid`` (when present) is the ``txn_id``.
- A DML message whose ``data`` is null or empty is skipped with a reason.
- A message with no more than ``data`` and ``type`` (no ``database``,
  ``table``, type maps, ``pkNames``, times) still decodes: table and key
  unknown, values as given. Detection proposes canal for it with a low
  confidence (:data:`LENIENT_SCORE`), its evidence naming what is missing.

TiCDC's canal-json (``protocol=canal-json``) is the same message with these
differences: ``id`` is always 0; ``old`` of an UPDATE holds every column
(unless ``only_output_updated_columns`` or ``content-compatible`` is set:
then only the changed ones, as in Canal; either way the overlay gives the
before image); before v5.4 a DELETE's ``old`` repeats ``data`` (ignored);
``mysqlType`` names types without parameters (``decimal``, ``varchar``);
``sqlType`` codes ENUM as 4 and SET as -7 (``mysqlType``, preferred, keeps
them text). With ``enable-tidb-extension=true`` DML and DDL messages carry
``_tidb: {"commitTs": TSO}``: the commit TSO becomes ``seq`` (20 digits
zero-padded, as :func:`cdckit.values.sortable` renders integers) and, as
TiDB's transaction identifier, ``txn_id``; and TiCDC sends WATERMARK
messages (``type`` ``TIDB_WATERMARK``, ``_tidb: {"watermarkTs": TSO}``:
every change committed before that TSO has been sent), which become one
``heartbeat`` event each with the watermark TSO as ``seq``. A "large message"
TiCDC cut down (``_tidb.onlyHandleKey`` true: only the key columns sent; or
``_tidb.claimCheckLocation``: the row stored elsewhere) is quarantined with
that reason rather than read as a row holding only its key.

>>> import cdckit
>>> msg = ('{"id": 7, "database": "shop", "table": "items", "type": "INSERT", "isDdl": false, "es": 1000, '
...        '"ts": 1005, "pkNames": ["id"], "mysqlType": {"id": "bigint(20)", "price": "decimal(10,2)"}, '
...        '"sql": "", "old": null, "data": [{"id": "1", "price": "9.90"}, {"id": "2", "price": null}]}')
>>> ev = cdckit.read(msg, dialect="canal")
>>> ev["after"].tolist(), ev["key"].tolist()
(['{"id":1,"price":9.9}', '{"id":2,"price":null}'], ['[1]', '[2]'])
>>> ev.loc[1, "seq"]
'00000000000000001000:00000000000000000007:00000000000000000001'
"""

from __future__ import annotations

import base64
import binascii
import re
from functools import lru_cache
from typing import Annotated, Any, Callable, Iterator

import msgspec
import orjson
import pandas as pd

from .. import values
from ..containers import Message
from ..errors import InvalidValue
from ..frame import Event
from .base import BadMessage, Dialect, Match, Record, SkipMessage, expect_object, require, rows_of
from .registry import register

#: DML ``type`` values and their canonical ops.
DML_OPS = {"INSERT": "insert", "UPDATE": "update", "DELETE": "delete"}
#: ``type`` values of DDL messages (Canal's EventType names).
DDL_TYPES = frozenset({"CREATE", "ALTER", "ERASE", "QUERY", "TRUNCATE", "RENAME", "CINDEX", "DINDEX"})
_OP_TYPES = {"insert": "INSERT", "update": "UPDATE", "delete": "DELETE", "read": "INSERT"}
#: ``type`` of TiCDC's WATERMARK messages (sent with ``enable-tidb-extension=true``).
WATERMARK = "TIDB_WATERMARK"
#: Every top-level field a Canal flat message may have (Canal, OceanBase and TiCDC's ``_tidb``).
FIELDS = frozenset({"id", "database", "table", "pkNames", "isDdl", "type", "es", "ts", "sql", "sqlType",
                    "mysqlType", "data", "old", "gtid", "_tidb"})
#: The fields whose absence a lenient (``data`` and ``type`` only) verdict names.
_USUAL = ("database", "table", "pkNames", "isDdl", "es", "ts", "mysqlType", "sqlType")
#: Detection score of a message with ``data`` and ``type`` but none of Canal's other markers: above
#: ``cdckit.detect.FLOOR`` (so it is proposed) and below ``cdckit.detect.LOW`` (so it is flagged as a guess).
LENIENT_SCORE = 0.4

#: MySQL type names (before any ``(`` or space) -> the kind declared (:mod:`cdckit.column_types`);
#: ``decimal`` gets its precision and scale from the type's parameters.
MYSQL_DECLARED = {
    "tinyint": "int", "smallint": "int", "mediumint": "int", "int": "int", "integer": "int", "bigint": "int",
    "bit": "int", "year": "int",
    "float": "float", "double": "float", "real": "float",
    "decimal": "decimal", "numeric": "decimal", "dec": "decimal", "fixed": "decimal",
    "bool": "bool", "boolean": "bool",
    "binary": "binary", "varbinary": "binary", "tinyblob": "binary", "blob": "binary", "mediumblob": "binary",
    "longblob": "binary",
    "char": "string", "varchar": "string", "tinytext": "string", "text": "string", "mediumtext": "string",
    "longtext": "string", "set": "string", "enum": "enum", "json": "json",
    "date": "date", "time": "time", "datetime": "timestamp", "timestamp": "timestamp",
}
#: java.sql.Types codes -> the kind declared (codes not listed: ``string``, their values stay text).
SQL_DECLARED = {
    -7: "int", -6: "int", 5: "int", 4: "int", -5: "int",
    6: "float", 7: "float", 8: "float",
    2: "decimal", 3: "decimal",
    16: "bool",
    91: "date", 92: "time", 93: "timestamp",
    -2: "binary", -3: "binary", -4: "binary", 2004: "binary",
}
#: How the values of a declared kind are read; every other kind keeps the string ("text").
_VALUE_KINDS = {"int": "int", "float": "float", "decimal": "decimal", "bool": "bool", "binary": "binary"}
#: MySQL type names -> value kind (a YEAR stays text: it is declared a whole number, but sent as text).
MYSQL_KINDS = {name: "text" if name == "year" else _VALUE_KINDS.get(kind, "text")
               for name, kind in MYSQL_DECLARED.items()}
#: java.sql.Types codes -> value kind (codes not listed: sqlType says nothing; CHAR, VARCHAR, LONGVARCHAR are text).
SQL_KINDS = {**{code: _VALUE_KINDS.get(kind, "text") for code, kind in SQL_DECLARED.items()},
             1: "text", 12: "text", -1: "text"}
_PARAMETERS = re.compile(r"\(\s*(\d+)\s*(?:,\s*(\d+)\s*)?\)")
#: What the encoder declares for each value kind: (mysqlType, sqlType).
_DECLARED = {"int": ("bigint(20)", -5), "float": ("double", 8), "decimal": ("decimal(65,30)", 3),
             "bool": ("boolean", 16),
             "text": ("varchar(255)", 12), "binary": ("blob", 2004)}
_NUMBER = re.compile(r"-?\d+(\.\d+)?([eE][+-]?\d+)?\Z")
_INTEGER = re.compile(r"-?\d+\Z")
_SHORT_DECIMAL = re.compile(r"-?\d+\.\d+\Z")
_SEQ = re.compile(r"(?P<es>\d*):(?P<id>\d*):(?P<row>\d{20})\Z")
_TYPE_END = re.compile(r"[\s(]")


@lru_cache(maxsize=4096)
def mysql_kind(declared: str) -> str | None:
    """The value kind of a ``mysqlType`` text, or None for a type this module does not know.

    >>> mysql_kind("bigint(20) unsigned"), mysql_kind("DECIMAL(10,2)"), mysql_kind("datetime(3)"), mysql_kind("geometry")
    ('int', 'decimal', 'text', None)
    """
    text = declared.strip().lower()
    end = _TYPE_END.search(text)
    return MYSQL_KINDS.get(text[: end.start()] if end else text)


def column_kinds(mysql_types: Any, sql_types: Any) -> dict[str, str]:
    """``{column: kind}`` for the columns whose values must be typed (text columns left out)."""
    kinds: dict[str, str] = {}
    if isinstance(sql_types, dict):
        for name, code in sql_types.items():
            if isinstance(code, str) and code.lstrip("-").isdigit():
                code = int(code)
            kind = SQL_KINDS.get(code) if isinstance(code, int) else None
            if kind is not None:
                kinds[name] = kind
    if isinstance(mysql_types, dict):
        for name, declared in mysql_types.items():
            kind = mysql_kind(declared) if isinstance(declared, str) else None
            if kind is not None:  # mysqlType is preferred; an unknown type leaves sqlType's verdict
                kinds[name] = kind
    return {name: kind for name, kind in kinds.items() if kind != "text"}


@lru_cache(maxsize=4096)
def mysql_declared(declared: str) -> str | None:
    """The kind (:mod:`cdckit.column_types`) a ``mysqlType`` text declares, None for a type not known here.

    >>> mysql_declared("decimal(10,2)"), mysql_declared("DECIMAL(8)"), mysql_declared("decimal")
    ('decimal(10,2)', 'decimal(8,0)', 'decimal')
    >>> mysql_declared("bigint(20) unsigned"), mysql_declared("datetime(3)"), mysql_declared("geometry")
    ('int', 'timestamp', None)
    """
    text = declared.strip().lower()
    end = _TYPE_END.search(text)
    kind = MYSQL_DECLARED.get(text[: end.start()] if end else text)
    if kind == "decimal" and end is not None:
        found = _PARAMETERS.match(text, end.start())
        if found is not None:
            kind = f"decimal({found.group(1)},{found.group(2) or 0})"
    return kind


def declared_columns(mysql_types: Any, sql_types: Any) -> dict[str, tuple[str, str]]:
    """The column types a message declares, ``{column: (raw, kind)}``: ``mysqlType`` preferred, ``sqlType``
    for a column it does not name or names with a type not known here (the same rule as :func:`column_kinds`).

    >>> declared_columns({"id": "bigint(20)", "g": "geometry"}, {"id": -5, "g": 1111, "d": 91})
    {'id': ('bigint(20)', 'int'), 'g': ('1111', 'string'), 'd': ('91', 'date')}
    """
    coded: dict[str, tuple[str, str]] = {}
    if isinstance(sql_types, dict):
        for name, code in sql_types.items():
            if isinstance(code, str) and code.lstrip("-").isdigit():
                code = int(code)
            if isinstance(code, int) and not isinstance(code, bool):
                coded[name] = (str(code), SQL_DECLARED.get(code, "string"))
    columns: dict[str, tuple[str, str]] = {}
    if isinstance(mysql_types, dict):
        for name, declared in mysql_types.items():
            kind = mysql_declared(declared) if isinstance(declared, str) else None
            if kind is not None:
                columns[name] = (declared, kind)
            elif name in coded:
                columns[name] = coded[name]
            elif isinstance(declared, str):
                columns[name] = (declared, "string")  # a type not known here: its values stay text
    for name, found in coded.items():
        columns.setdefault(name, found)
    return columns


def tidb_ts(tidb: dict[str, Any] | None, name: str) -> int | str | None:
    """A TiDB TSO (``commitTs``, ``watermarkTs``) of a ``_tidb`` object: a non-negative integer, or None.

    >>> tidb_ts({"commitTs": 429918007904436226}, "commitTs"), tidb_ts(None, "commitTs")
    (429918007904436226, None)
    >>> tidb_ts({"commitTs": -1}, "commitTs")
    Traceback (most recent call last):
    ...
    cdckit.dialects.base.BadMessage: _tidb.commitTs is not a TiDB timestamp (a non-negative integer): -1
    """
    value = None if tidb is None else tidb.get(name)
    if value is None or (value.__class__ is int and value >= 0):
        return value
    if value.__class__ is str and value.isascii() and value.isdigit():  # beyond 64 bits values.loads keeps text
        return value
    raise BadMessage(f"_tidb.{name} is not a TiDB timestamp (a non-negative integer): {value!r}")


def check_whole_row(tidb: dict[str, Any]) -> None:
    """:class:`BadMessage` for a TiCDC DML message whose ``data`` is not the whole row (a "large message").

    >>> check_whole_row({"commitTs": 1, "onlyHandleKey": True})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    cdckit.dialects.base.BadMessage: TiCDC large message: only the handle key columns were sent ...
    """
    if tidb.get("onlyHandleKey") not in (None, False):
        raise BadMessage("TiCDC large message: only the handle key columns were sent (_tidb.onlyHandleKey); the "
                         f"row must be read from TiDB as of commitTs {tidb.get('commitTs')}")
    location = tidb.get("claimCheckLocation")
    if location not in (None, ""):
        raise BadMessage(f"TiCDC large message: the row was stored at {location!r} (_tidb.claimCheckLocation)")


def latin1_to_base64(value: Any) -> Any:
    """A binary value as Canal writes it (its bytes as ISO-8859-1 text) to Base64 of those bytes."""
    if not isinstance(value, str):
        return value
    try:
        return base64.b64encode(value.encode("latin-1")).decode("ascii")
    except UnicodeEncodeError:  # not bytes-as-Latin-1: keep it as it came
        return value


def to_int(value: Any) -> Any:
    """``values.coerce(value, "int")``, with a fast path for short unsigned digit text."""
    if value.__class__ is str and len(value) < 19 and value.isascii() and value.isdigit():
        return int(value)
    return values.coerce(value, "int")


def to_decimal(value: Any) -> Any:
    """``values.coerce(value, "decimal")``, with a fast path for text of at most 15 digits (a double holds those)."""
    if value.__class__ is str and len(value) <= 16 and _SHORT_DECIMAL.match(value):
        return float(value)
    return values.coerce(value, "decimal")


def to_float(value: Any) -> Any:
    """``values.coerce(value, "float")``, with :func:`to_decimal`'s fast path (the same numbers, the same floats)."""
    if value.__class__ is str and len(value) <= 16 and _SHORT_DECIMAL.match(value):
        return float(value)
    return values.coerce(value, "float")


@lru_cache(maxsize=256)
def _bool_of_text(value: str) -> Any:
    return values.coerce(value, "bool")


def to_bool(value: Any) -> Any:
    """``values.coerce(value, "bool")``, remembered per text (a boolean column holds few distinct texts)."""
    if value.__class__ is str:
        return _bool_of_text(value)
    return values.coerce(value, "bool")


#: kind -> the function that types one value of that kind (non-text values pass through unchanged).
CONVERTERS = {"int": to_int, "float": to_float, "decimal": to_decimal, "bool": to_bool, "binary": latin1_to_base64}


def typed_row(row: dict[str, Any], converters: dict[str, Callable[[Any], Any]]) -> dict[str, Any]:
    """The row with its text values typed by column, in place (column order kept); returns it."""
    if len(row) < len(converters):  # an old image: a few changed columns
        for name, value in tuple(row.items()):
            convert = converters.get(name)
            if convert is not None and value is not None:
                row[name] = convert(value)
        return row
    for name, convert in converters.items():
        value = row.get(name)
        if value is not None:
            row[name] = convert(value)
    return row


@register
class Canal(Dialect):
    """Canal flat messages (Alibaba Canal, OceanBase OMS "Canal" format)."""

    name = "canal"
    title = "Canal flat JSON"
    spec = "oceanbase-oms-formats.txt"
    quirks = (
        "One message carries all rows of a statement: each element of data is one event.",
        "old holds only the changed columns' previous values: the before image is data[i] overlaid with old[i].",
        "Every value arrives as a string; mysqlType (or sqlType when mysqlType lacks the column) types it: "
        "integers and floats become numbers, decimals exact numbers or text, dates and times stay text.",
        "A bigint unsigned value beyond the 64-bit signed range stays text so no digit is lost.",
        "Binary columns arrive as the ISO-8859-1 string of their bytes and become Base64 of those bytes.",
        "es is when the change happened and ts when Canal wrote the message, both epoch milliseconds.",
        "seq is es:id:row (event time, batch id, row index), not a true log position: messages of one batch "
        "in the same millisecond tie, and OceanBase's Canal writes no id.",
        "A DDL message (isDdl true) has no rows: its statement is in sql and its type (CREATE, ALTER, ERASE...) "
        "in op_raw.",
        "A primary-key change is an UPDATE whose old holds the key column: before has the old key, after and "
        "key the new one.",
        "A DML message with null or empty data produces no row; the report counts it under skipped.",
        "gtid, when present, is the transaction id; without it txn_id is empty.",
        "A message with only data and type decodes (table, key and times unknown, values as given); detection "
        "proposes canal for it with a low confidence.",
        "TiCDC writes id 0 and (by default) every column in an UPDATE's old; with enable-tidb-extension its "
        "_tidb.commitTs is seq and txn_id, and its TIDB_WATERMARK messages are heartbeats.",
    )

    def __init__(self, tz: str | None = None) -> None:
        super().__init__(tz)
        # (database, table) -> (mysqlType, sqlType, (converters, declared column types)): reused while a table's
        # types stay the same
        self._types: dict[tuple, tuple[Any, Any, tuple]] = {}
        # (mysqlType text, sqlType text) -> (converters, declared column types), for the batch decoder
        self._by_text: dict[tuple[bytes, bytes], tuple[dict[str, Callable[[Any], Any]], dict[str, tuple]]] = {}
        self._last_types: tuple[msgspec.Raw, msgspec.Raw, tuple] | None = None

    # ------------------------------------------------------------ detection

    def detect(self, value: Any) -> Match | None:
        if not isinstance(value, dict):
            return None
        kind = value.get("type")
        if not isinstance(kind, str) or not kind.isupper():
            return None
        data = value.get("data")
        if data is not None and not isinstance(data, list):
            return None
        evidence = ["data is a list"] if isinstance(data, list) else []
        markers = [f for f in ("isDdl", "es", "pkNames", "mysqlType", "sqlType") if f in value]
        evidence += markers
        if isinstance(value.get("_tidb"), dict):
            evidence.append("_tidb")
        evidence.append("type=" + kind)
        if len(markers) >= 2 and ("data" in value or "sql" in value):
            return Match(0.95, tuple(evidence))
        if isinstance(data, list) and "database" in value and "table" in value:
            return Match(0.6, tuple(evidence + ["database", "table"]))
        if (kind in DML_OPS and data and all(row.__class__ is dict for row in data)
                and all(field in FIELDS for field in value)):
            missing = [field for field in _USUAL if field not in value]
            return Match(LENIENT_SCORE, tuple(evidence + ["no " + ", ".join(missing)]))
        return None

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
            raise BadMessage(f"expected data as a JSON array, got {_kind_name(data)}")
        old = value.get("old") if op == "update" else None
        if old is None:
            old = []
        elif not isinstance(old, list):
            raise BadMessage(f"expected old as a JSON array, got {_kind_name(old)}")
        for name in ("database", "table"):  # the type cache is keyed on them
            if not isinstance(value.get(name), (str, type(None))):
                raise InvalidValue(f"{name} holds a {type(value[name]).__name__}, not text")
        converters, declared = self.converters(value)
        self.declare(value.get("database") or None, None, value.get("table") or None, declared)
        rows = self.dml_rows(op, op_raw, data, old, converters, value.get("pkNames"), value.get("database"),
                             value.get("table"), value.get("es"), value.get("ts"), value.get("id"), value.get("gtid"),
                             tidb_ts(tidb, "commitTs"))
        return [Event(*row) for row in rows]

    def dml_rows(self, op: str, op_raw: str, data: list, old: list, converters: dict[str, Callable[[Any], Any]],
                 pk: Any, database: Any, table: Any, es: Any, ts: Any, batch_id: Any, gtid: Any,
                 commit_ts: int | str | None = None, fresh: bool = False) -> list[tuple]:
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
        txn_id = _txn_id(gtid, commit_ts)
        dumps = orjson.dumps
        key_of = values.key_of
        update = op == "update"
        rows = []
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
            rows.append((
                op, op_raw, database, None, table, event_time, emit_time,
                # TiCDC's commit TSO, else values.sortable_text(es, id, index)
                commit_seq or prefix + (_ROW_ZERO if index == 0 else str(index).zfill(20)),
                txn_id, key_columns, key_of(row, key_columns) if key_columns else None, before_text, after_text,
                None,
            ))
        return rows

    # ------------------------------------------------------------ batch decoding (the fast path)

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

    def converters(self, value: dict[str, Any]) -> tuple[dict[str, Callable[[Any], Any]], dict[str, tuple]]:
        """``({column: converter}, declared column types)`` of a message, from its ``mysqlType`` and
        ``sqlType`` (cached per table)."""
        mysql_types, sql_types = value.get("mysqlType"), value.get("sqlType")
        table = (value.get("database"), value.get("table"))
        cached = self._types.get(table)
        if cached is not None and cached[0] == mysql_types and cached[1] == sql_types:
            return cached[2]
        found = ({name: CONVERTERS[kind] for name, kind in column_kinds(mysql_types, sql_types).items()},
                 declared_columns(mysql_types, sql_types))
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
            database=value.get("database") or None,
            table=value.get("table") or None,
            event_time=values.ms_to_ns(value.get("es")),
            emit_time=values.ms_to_ns(value.get("ts")),
            seq=values.sortable(commit_ts) or values.sortable_text(value.get("es"), value.get("id"), 0),
            txn_id=_txn_id(value.get("gtid"), commit_ts),
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
            database=value.get("database") or None,
            table=value.get("table") or None,
            event_time=values.ms_to_ns(value.get("es")),
            emit_time=values.ms_to_ns(value.get("ts")),
            seq=values.sortable(tidb_ts(value.get("_tidb"), "watermarkTs")),
        )

    # ------------------------------------------------------------ encoding

    def encode(self, events: pd.DataFrame) -> Iterator[Record]:
        """Canal flat messages, every value as a string with ``mysqlType`` and ``sqlType``.

        Consecutive events whose ``seq`` (``es:id:row``) continues one
        message's rows are written as one message with several rows. When no
        event carries such a ``seq`` (events from another dialect), each
        event becomes one message with an increasing batch ``id``.

        Column types are inferred from all the values a column holds (see
        :func:`column_kind`); a text column whose every value is Base64 of
        non-text bytes is declared ``blob`` and its values are written back
        as the ISO-8859-1 text of the bytes. ``read`` events are written as
        INSERT (Canal has no snapshot type); heartbeat, begin, commit,
        tombstone and other events are skipped. The ``txn_id`` is written as
        ``gtid``. An update without a before image comes back with before
        equal to after.
        """
        rows = list(rows_of(events))
        images = [(_load(row["before"]), _load(row["after"])) for row in rows]
        kinds = _kinds_by_table(rows, images)
        positions = [_parse_seq(row["seq"]) for row in rows]
        synthesize = all(position is None for position in positions)
        batch = 0
        pending: dict[str, Any] | None = None
        pending_ident: tuple = ()
        for row, (before, after), position in zip(rows, images, positions):
            op = row["op"]
            if op != "ddl" and (op not in _OP_TYPES or (before if op == "delete" else after) is None):
                continue  # Canal cannot say it
            if position is not None:
                batch_id, index = position[1], position[2]
            else:
                batch += 1
                batch_id, index = (batch if synthesize else None), 0
            ident = (op, row["database"], row["table"], tuple(row["key_columns"] or ()), row["event_time"],
                     row["emit_time"], row["txn_id"], batch_id)
            if (pending is not None and op != "ddl" and position is not None and ident == pending_ident
                    and index == len(pending["data"])):
                add_row(pending, op, before, after, kinds.get((row["database"], row["table"]), {}))
                continue
            if pending is not None:
                yield Record(pending)
            pending, pending_ident = new_message(row, batch_id), ident
            if op != "ddl":
                add_row(pending, op, before, after, kinds.get((row["database"], row["table"]), {}))
        if pending is not None:
            yield Record(pending)


# ---------------------------------------------------------------- the batch decoder's view of a message

_NULL = msgspec.Raw(b"null")
_NO_ROWS: list = []
_ROW_ZERO = "0" * 20


class _Tidb(msgspec.Struct):
    """TiCDC's ``_tidb`` extension as the batch decoder reads it (anything but a TSO goes to ``decode``)."""

    commitTs: Annotated[int, msgspec.Meta(ge=0)] | None = None
    onlyHandleKey: bool = False
    claimCheckLocation: str = ""


class _Flat(msgspec.Struct):
    """A Canal flat message as the batch decoder reads it (types kept raw, to cache converters by their text).

    Fields not named here are skipped: :meth:`Canal.decode` reads none of them either, and Canal builds
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


# ---------------------------------------------------------------- encoder helpers


def new_message(row: dict[str, Any], batch_id: int | None) -> dict[str, Any]:
    """An empty Canal message for the event ``row`` (keys in Canal's alphabetical order)."""
    ddl = row["op"] == "ddl"
    message: dict[str, Any] = {"data": None if ddl else [], "database": row["database"] or "",
                               "es": values.ns_to_ms(row["event_time"])}
    if row["txn_id"] is not None:
        message["gtid"] = row["txn_id"]
    if batch_id is not None:
        message["id"] = batch_id
    message["isDdl"] = ddl
    message["mysqlType"] = None if ddl else {}
    message["old"] = None
    message["pkNames"] = None if ddl else row["key_columns"] or None
    message["sql"] = (row["ddl"] or "") if ddl else ""
    message["sqlType"] = None if ddl else {}
    message["table"] = row["table"] or ""
    message["ts"] = values.ns_to_ms(row["emit_time"])
    if ddl:
        message["type"] = row["op_raw"] if row["op_raw"] in DDL_TYPES else _ddl_type(row["ddl"])
    else:
        message["type"] = _OP_TYPES[row["op"]]
    return message


def add_row(message: dict[str, Any], op: str, before: dict | None, after: dict | None,
            kinds: dict[str, str]) -> None:
    """Append one row (and its ``old`` entry for an update) to a DML message."""
    image = (before if op == "delete" else after) or {}
    message["data"].append({c: _to_text(v, kinds.get(c, "text")) for c, v in image.items()})
    columns = list(image)
    if op == "update":
        changed = {c: v for c, v in (before or {}).items() if c not in image or image[c] != v}
        if message["old"] is None:
            message["old"] = [{} for _ in message["data"][:-1]]
        message["old"].append({c: _to_text(v, kinds.get(c, "text")) for c, v in changed.items()})
        columns += [c for c in changed if c not in image]
    for column in columns:
        mysql_type, sql_type = _DECLARED[kinds.get(column, "text")]
        message["mysqlType"].setdefault(column, mysql_type)
        message["sqlType"].setdefault(column, sql_type)


def _txn_id(gtid: Any, commit_ts: int | str | None) -> str | None:
    """The transaction id: Canal's ``gtid``, else TiCDC's commit TSO (TiDB's transaction identifier)."""
    if gtid not in (None, ""):
        return str(gtid)
    return None if commit_ts is None else str(commit_ts)


def _kind_name(value: Any) -> str:
    return "object" if isinstance(value, dict) else "text" if isinstance(value, str) else type(value).__name__


def _load(text: str | None) -> dict[str, Any] | None:
    return None if text is None else values.loads(text)


def _parse_seq(seq: str | None) -> tuple[str, int | None, int] | None:
    """``(es, batch id, row index)`` of a seq this dialect wrote, else None."""
    match = _SEQ.match(seq) if seq else None
    if match is None:
        return None
    return match["es"], int(match["id"]) if match["id"] else None, int(match["row"])


def _looks_binary(value: Any) -> bool:
    """Base64 text (canonical form) of bytes that are not printable UTF-8 text."""
    if not isinstance(value, str):
        return False
    try:
        raw = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return False
    return base64.b64encode(raw).decode("ascii") == value and values.readable_bytes(value) == value


def _kinds_by_table(rows: list[dict[str, Any]], images: list[tuple]) -> dict[tuple, dict[str, str]]:
    """``{(database, table): {column: kind}}`` from every value each column holds."""
    seen: dict[tuple, dict[str, list]] = {}
    for row, pair in zip(rows, images):
        columns = seen.setdefault((row["database"], row["table"]), {})
        for image in pair:
            for column, value in (image or {}).items():
                found = columns.setdefault(column, [])
                if value is not None:
                    found.append(value)
    return {table: {column: column_kind(found) for column, found in columns.items()}
            for table, columns in seen.items()}


def column_kind(seen: list[Any]) -> str:
    """The kind to declare so that every value ``seen`` decodes back unchanged.

    ``values.infer_kinds`` lets the first value decide; a Canal column must
    also bring back the other values, so mixed columns are widened: integers
    with integer text beyond 64 bits stay ``int``, integers with floats (or
    with decimal text a double cannot hold) become ``decimal``, and text
    that is all Base64 of non-text bytes is ``binary``.

    >>> column_kind([1, "18446744073709551615"]), column_kind([1, 2.5]), column_kind(["AAEC", ""]), column_kind([""])
    ('int', 'decimal', 'binary', 'text')
    """
    kinds = {values.kind_of_value(v) for v in seen}
    if not kinds:
        return "text"
    if kinds == {"bool"}:
        return "bool"
    if kinds != {"text"} and kinds <= {"int", "float", "text"}:
        texts = [v for v in seen if isinstance(v, str)]
        if all(_NUMBER.match(t) and values.exact_number(t) == t for t in texts):
            if kinds <= {"int", "text"} and all(_INTEGER.match(t) for t in texts):
                return "int"
            return "float" if kinds == {"float"} else "decimal"
    if kinds == {"text"}:
        filled = [v for v in seen if v != ""]
        if filled and all(_looks_binary(v) for v in filled):
            return "binary"
    return "text"


def _to_text(value: Any, kind: str) -> str | None:
    """A canonical value as the string Canal writes."""
    if value is None:
        return None
    if kind == "binary" and isinstance(value, str):
        return base64.b64decode(value).decode("latin-1")
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return value
    return values.dumps(value)


_DDL_WORDS = (("create index", "CINDEX"), ("create unique index", "CINDEX"), ("drop index", "DINDEX"),
              ("create", "CREATE"), ("alter", "ALTER"), ("drop", "ERASE"), ("truncate", "TRUNCATE"),
              ("rename", "RENAME"))


def _ddl_type(sql: str | None) -> str:
    """Canal's DDL type for a statement from another dialect."""
    text = " ".join((sql or "").lower().split())
    for start, kind in _DDL_WORDS:
        if text.startswith(start):
            return kind
    return "QUERY"


#: Synthetic lines start at this epoch millisecond (see cdckit.samples.synthetic).
SYNTHETIC_START_MS = 1_700_000_000_000


def synthetic_line(i: int) -> bytes:
    """The ``i``-th insert into an order_items table, as a Canal flat message with one row."""
    row = {"id": str(i), "sku": f"SKU-{i % 500}", "qty": str(i % 9 + 1), "price": f"{i % 1000}.25",
           "note": None if i % 3 else "gift"}
    return orjson.dumps({
        "id": i, "database": "shop", "table": "order_items", "pkNames": ["id"], "isDdl": False, "type": "INSERT",
        "es": SYNTHETIC_START_MS + i, "ts": SYNTHETIC_START_MS + 50 + i, "sql": "",
        "sqlType": {"id": -5, "sku": 12, "qty": 4, "price": 3, "note": 12},
        "mysqlType": {"id": "bigint(20)", "sku": "varchar(32)", "qty": "int(11)", "price": "decimal(10,2)",
                      "note": "varchar(64)"},
        "data": [row], "old": None,
    })
