"""DataWorks JSON v2.0, as OceanBase OMS writes it to Kafka and RocketMQ.

One JSON object per change: ``version`` ``"2.0"``, a ``schema`` describing the
table and a ``payload`` holding the change::

    {"version": "2.0",
     "schema": {"source": {"dbType", "dbVersion", "dbName", "schema", "table"},
                "column": [{"name": "id", "type": "bigint"}, ...],
                "pk": ["id"]},
     "payload": {"before": {"data": {...}}, "after": {"data": {...}},
                 "op": "UPDATE", "timestamp": {"eventTime": 1620457659000},
                 "ddl": {"text": "..."}, "scn": "..."},
     "extend": {"load_fm": "CIBS"}}

- ``schema.source`` ``dbName``/``schema``/``table`` -> ``database``/``schema``/
  ``table``; ``schema.pk`` -> ``key_columns``; ``payload.scn`` -> ``seq``
  (zero-padded); ``payload.timestamp.eventTime`` (epoch ms) -> ``event_time``.
  There is no emit time and no transaction id.
- ``schema.column`` types the values: MySQL-ish names (``bigint``,
  ``varchar(20)``, ``decimal(10,2)``, ``binary``, ``datetime``...). Integer,
  float, decimal and boolean columns turn values that arrive as text into
  numbers (a decimal a double cannot hold stays exact text); binary stays
  Base64 text; datetime values stay as they arrive; other columns are kept.
- A datetime may be written with nanoseconds as ``1590315269000.123456789``
  (13-digit ms, ".", 9 digits). A double cannot hold that number, so the
  reader keeps it as its exact text ``"1590315269000.123456789"``; a plain
  ms value ``1590315269000`` stays a number. (When the fraction is one a
  double holds exactly, such as ``.500000000``, the value is that number.)
- ``payload.op`` is case-sensitive: ``INSERT``/``UPDATE``/``DELETE``;
  ``HEARTBEAT`` (its message has no schema at all); ``TRANSACTION_BEGIN``/
  ``TRANSACTION_END`` -> ``begin``/``commit``; ``CREATE``, ``ALTER``,
  ``ERASE``, ``QUERY``, ``TRUNCATE``, ``RENAME``, ``CINDEX``, ``DINDEX`` ->
  ``ddl``; ``GTID``, ``XACOMMIT``, ``XAROLLBACK`` and any other upper-case
  op -> ``other``. ``XACOMMIT`` is not made a ``commit``: it commits a
  prepared XA transaction, a separate, later event than the transaction's
  own ``TRANSACTION_BEGIN``/``TRANSACTION_END`` pair, and counting it as one
  would close a transaction twice. ``payload.ddl.text`` is the ``ddl``
  whenever given (DML messages carry none, or ``{"text": null}``).
- ``extend`` (free-form extension fields) is not part of the frame.
- DataHub Blob (``schema.dataColumn``, ``payload.before.dataColumn``,
  ``sequenceId``, version ``0.0.1``/``1.0.0``) looks alike and is never
  claimed.

Kept whole: one dialect, DataWorks JSON v2.0, its detection, decoding (one message and a batch), the fields
of a message read (ops, images typed by the declared column types, key, times, DDL) and encoding; each
changes only when the format does, and together.

>>> typed_data({"id": "7", "price": "9.90"}, column_kinds([{"name": "id", "type": "bigint"},
...                                                         {"name": "price", "type": "decimal(10,2)"}]))
{'id': 7, 'price': 9.9}
>>> import cdckit
>>> msg = ('{"version": "2.0", "schema": {"source": {"dbName": "shop", "table": "t"}, '
...        '"column": [{"name": "id", "type": "bigint"}, {"name": "price", "type": "decimal(10,2)"}], "pk": ["id"]}, '
...        '"payload": {"after": {"data": {"id": "7", "price": "9.90"}}, "op": "INSERT", '
...        '"timestamp": {"eventTime": 1620457659000}, "scn": "42"}}')
>>> ev = cdckit.read(msg)
>>> ev.loc[0, ["dialect", "op", "database", "table", "seq", "key", "after"]].tolist()
['dataworks', 'insert', 'shop', 't', '00000000000000000042', '[7]', '{"id":7,"price":9.9}']
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import msgspec
import orjson
import pandas as pd

from .. import values
from ..frame import Event, FastRow
from ..io import Message
from ..row_images import key_of
from .base import BadMessage, Dialect, Match, Record, expect_object, require, require_object, rows_of, unpadded_seq
from .registry import register

__all__ = [
    "DECLARED_KINDS",
    "OPS",
    "TYPE_KINDS",
    "VERSION",
    "DataWorks",
    "canonical_op",
    "column_kinds",
    "ddl_text",
    "declared_columns",
    "declared_kind",
    "epoch_ms_to_ns",
    "event_time",
    "keyed_image",
    "primary_key",
    "require_images",
    "type_kind",
    "typed_data",
    "typed_image",
]

VERSION = "2.0"

OPS = {
    "INSERT": "insert",
    "UPDATE": "update",
    "DELETE": "delete",
    "HEARTBEAT": "heartbeat",
    "TRANSACTION_BEGIN": "begin",
    "TRANSACTION_END": "commit",
    "CREATE": "ddl",
    "ALTER": "ddl",
    "ERASE": "ddl",
    "QUERY": "ddl",
    "TRUNCATE": "ddl",
    "RENAME": "ddl",
    "CINDEX": "ddl",
    "DINDEX": "ddl",
    "GTID": "other",
    "XACOMMIT": "other",
    "XAROLLBACK": "other",
}

#: Column type names (lower case, without length or ``unsigned``) -> value kind.
TYPE_KINDS = {
    **dict.fromkeys(
        (
            "tinyint",
            "smallint",
            "mediumint",
            "int",
            "integer",
            "bigint",
            "int2",
            "int4",
            "int8",
            "serial",
            "bigserial",
            "smallserial",
        ),
        "int",
    ),
    **dict.fromkeys(
        ("float", "double", "double precision", "real", "float4", "float8", "binary_float", "binary_double"), "float"
    ),
    **dict.fromkeys(("decimal", "numeric", "number", "dec", "fixed"), "decimal"),
    **dict.fromkeys(("bool", "boolean"), "bool"),
}
#: Other column type names (as :func:`type_kind` reads them) -> the kind declared (:mod:`cdckit.column_types`);
#: a name not known here declares ``string`` (its values are kept as they arrive).
DECLARED_KINDS = {
    **dict.fromkeys(("binary", "varbinary", "tinyblob", "blob", "mediumblob", "longblob", "bytea", "raw"), "binary"),
    "date": "date",
    "time": "time",
    "datetime": "timestamp",
    "timestamp": "timestamp",
    "timestamptz": "timestamp",
    "year": "int",
    "bit": "int",
    "enum": "enum",
    "json": "json",
    "jsonb": "json",
}
_TYPE_MODIFIERS = (" unsigned", " signed", " zerofill")
_PARAMETERS = re.compile(r"\(\s*(\d+)\s*(?:,\s*(-?\d+)\s*)?\)")


#: The op written for a canonical op whose ``op_raw`` is not a DataWorks op.
_OP_NAMES = {
    "insert": "INSERT",
    "update": "UPDATE",
    "delete": "DELETE",
    "heartbeat": "HEARTBEAT",
    "begin": "TRANSACTION_BEGIN",
    "commit": "TRANSACTION_END",
    "ddl": "QUERY",
}
#: DataHub Blob's versions: a message with one of them is never DataWorks.
_BLOB_VERSIONS = frozenset({"0.0.1", "1.0.0"})

_EMPTY: dict[str, Any] = {}

# Encoding: the column type written for the kind of values a column holds.
_NS_TIME = re.compile(r"\d{13}\.\d{9}\Z")
_BIG_NUMBER = re.compile(r"-?\d+(\.\d+)?\Z")
_TEXT_TYPE = "varchar(255)"


@register
class DataWorks(Dialect):
    """DataWorks JSON v2.0 change messages (OceanBase OMS)."""

    name = "dataworks"
    title = "DataWorks JSON v2.0"
    spec = "oceanbase-oms-formats.txt"
    quirks = (
        "Images are nested one level down: payload.before.data and payload.after.data.",
        "schema.column gives MySQL-style types: integer, float and decimal columns make text values numbers, "
        "binary stays Base64 text and datetime values stay as they arrive.",
        "A datetime with nanoseconds is written 1590315269000.123456789 (13-digit ms, a dot, 9 digits); "
        "a double cannot hold it, so it is kept as that exact text while a plain ms value stays a number.",
        "payload.op is case-sensitive: TRANSACTION_BEGIN/END are begin/commit; CREATE, ALTER, ERASE, QUERY, "
        "TRUNCATE, RENAME, CINDEX and DINDEX are ddl (text in payload.ddl.text); GTID, XACOMMIT, XAROLLBACK "
        "and any other upper-case op are 'other'.",
        "XACOMMIT stays 'other', not 'commit': it commits a prepared XA transaction in a later, separate event.",
        "A heartbeat has no schema at all: only version, payload.op HEARTBEAT and payload.timestamp.",
        "seq is payload.scn; event_time is payload.timestamp.eventTime; there is no emit time or transaction id.",
        "The extend object (free-form extension fields such as load_fm) is not part of the frame.",
        "Version 2.0 with schema.column and payload.*.data tells it apart from DataHub Blob "
        "(schema.dataColumn, payload.*.dataColumn, sequenceId, version 0.0.1/1.0.0).",
    )

    # ------------------------------------------------------------ detection

    def detect(self, value: Any) -> Match | None:
        if not isinstance(value, dict):
            return None
        payload = value.get("payload")
        if not isinstance(payload, dict) or "sequenceId" in payload:
            return None
        op = payload.get("op")
        if not isinstance(op, str) or not op.isupper():
            return None
        version = value.get("version")
        if version in _BLOB_VERSIONS:
            return None
        schema = value.get("schema")
        evidence = ["version=2.0"] if version == VERSION else []
        evidence.append("payload.op=" + op)
        if isinstance(schema, dict):
            if "dataColumn" in schema:
                return None
            if isinstance(schema.get("column"), list):
                evidence.append("schema.column")
        for side in ("before", "after"):
            image = payload.get(side)
            if isinstance(image, dict):
                if "dataColumn" in image:
                    return None
                if "data" in image:
                    evidence.append(f"payload.{side}.data")
        structure = len(evidence) > (2 if version == VERSION else 1)
        if version == VERSION:
            score = 0.95 if structure else 0.9 if op in OPS else 0.6
        else:
            score = 0.6 if structure and op in OPS else 0.0
        return Match(score, tuple(evidence)) if score else None

    # ------------------------------------------------------------ decoding

    def decode(self, message: Message) -> list[Event]:
        value = message.value
        if type(value) is not dict:
            expect_object(value, "a DataWorks message")
        payload = require_object(value, "payload")
        op_raw = require(payload, "op", "payload.")
        op = canonical_op(op_raw)
        schema = value.get("schema")
        if schema is None:
            schema = _EMPTY
        elif type(schema) is not dict:
            expect_object(schema, "schema")
        source = schema.get("source") or _EMPTY
        if type(source) is not dict:
            expect_object(source, "schema.source")
        kinds = column_kinds(schema.get("column"))
        self.declare(
            source.get("dbName"), source.get("schema"), source.get("table"), declared_columns(schema.get("column"))
        )
        before = typed_image(payload.get("before"), kinds, "payload.before")
        after = typed_image(payload.get("after"), kinds, "payload.after")
        require_images(op, op_raw, before, after)
        key_columns = primary_key(schema.get("pk"))
        keyed = keyed_image(op, before, after)
        return [
            Event(
                op=op,
                op_raw=op_raw,
                database=source.get("dbName"),
                schema=source.get("schema"),
                table=source.get("table"),
                event_time=event_time(payload.get("timestamp")),
                seq=values.sortable(payload.get("scn")),
                key_columns=key_columns,
                key=key_of(keyed, key_columns),
                before=values.image(before),
                after=values.image(after),
                ddl=ddl_text(payload.get("ddl")),
            )
        ]

    # ------------------------------------------------------------ batch decoding (the fast path)

    has_line_decoder = True

    def __init__(self, tz: str | None = None) -> None:
        super().__init__(tz)
        # raw schema.column text -> (its column kinds, the pattern that finds text in those columns, declared types)
        self._kinds_by_text: dict[bytes, tuple[dict[str, str], re.Pattern[bytes] | None, dict]] = {}
        self._last_kinds: tuple[msgspec.Raw, tuple[dict[str, str], re.Pattern[bytes] | None, dict]] | None = None

    def decode_lines(self, lines: list[bytes]) -> list[tuple | None]:
        """The events of many raw DataWorks messages at once, one tuple of the frame's event fields each.

        msgspec checks the shape (:class:`_Message`) and reads the fields; an
        image's JSON text is taken as it stands unless a key must be read from
        it, a typed column may hold text to retype, or it holds a number a
        double cannot carry: then it is parsed and typed by :func:`typed_data`.
        A message gives None (handed back to :meth:`decode`) when it is not
        valid UTF-8, has another shape (unknown top-level fields, values of
        other types, an ``eventTime`` that is not an integer) or is one
        :meth:`decode` refuses.
        """
        out: list[tuple | None] = []
        append = out.append
        decode = _MESSAGE.decode
        for index, line in enumerate(lines):
            try:
                if not line.isascii():
                    line.decode()  # invalid UTF-8 raises here: decode() quarantines such a line
                append(self._line_event(decode(line), index))
            except _HAND_BACK:
                append(None)
        return out

    def _line_event(self, message: _Message, index: int | None = None) -> tuple:
        """The event of one message read by msgspec, as :meth:`decode` makes it (``index``: its line's)."""
        payload = message.payload
        op_raw = payload.op
        op = canonical_op(op_raw)
        schema = message.schema or _NO_SCHEMA
        source = schema.source or _NO_SOURCE
        before, after = payload.before, payload.after
        require_images(op, op_raw, before, after)
        kinds, typed_text, declared = self._column_kinds(schema.column)
        self.declare(source.dbName, source.schema, source.table, declared, index)
        key_columns = primary_key(schema.pk)
        keyed = keyed_image(op, before, after) if key_columns else None
        before_text, before_row = self._image(before, kinds, typed_text, before is keyed)
        after_text, after_row = self._image(after, kinds, typed_text, after is keyed)
        ddl = ddl_text(payload.ddl)
        if ddl is not None and ddl.__class__ is not str:
            raise BadMessage("payload.ddl.text is not text")
        timestamp = payload.timestamp
        return FastRow(
            op,
            op_raw,
            source.dbName,
            source.schema,
            source.table,
            None if timestamp is None else epoch_ms_to_ns(timestamp.eventTime),
            None,
            values.sortable(payload.scn),
            None,
            key_columns,
            key_of(keyed_image(op, before_row, after_row), key_columns) if key_columns else None,
            before_text,
            after_text,
            ddl,
        )

    def _image(
        self, image: _Image | None, kinds: dict[str, str], typed_text: re.Pattern[bytes] | None, keyed: bool
    ) -> tuple[str | None, dict[str, Any] | None]:
        """``(JSON text, typed row)`` of an image; the row is parsed only when needed (else None)."""
        if image is None:
            return None, None
        data = bytes(image.data)
        if data[:1] != b"{":
            raise BadMessage("payload image data is not a JSON object")
        if (
            not keyed
            and not values.has_long_number(data)
            and (typed_text is None or (b"\\" not in data and typed_text.search(data) is None))
        ):
            return values.image_text(data), None  # no key to read, nothing to type
        row = typed_data(values.loads(data), kinds)
        return values.image(row), row

    def _column_kinds(self, column: msgspec.Raw) -> tuple[dict[str, str], re.Pattern[bytes] | None, dict]:
        """The kinds of a raw ``schema.column``, the pattern of text values in those columns and the column
        types it declares, cached."""
        last = self._last_kinds
        if last is not None and last[0] == column:  # the same table again
            return last[1]
        text = bytes(column)
        found = self._kinds_by_text.get(text)
        if found is None:
            columns = values.loads(text)
            kinds = column_kinds(columns)
            found = (kinds, _text_value_pattern(kinds), declared_columns(columns))
            if len(self._kinds_by_text) >= 4096:
                self._kinds_by_text.clear()
            self._kinds_by_text[text] = found
        self._last_kinds = (column, found)
        return found

    # ------------------------------------------------------------ encoding

    def encode(self, events: pd.DataFrame) -> Iterator[Record]:
        """Version 2.0 messages, with ``schema.column`` types derived from the images.

        Skipped, because DataWorks has no way to say them: ``read`` (snapshot)
        rows, ``tombstone`` events, and ``other`` events whose ``op_raw`` is
        not an upper-case DataWorks op. ``emit_time`` and ``txn_id`` have no
        field and are not written. When no event has a ``seq``, ``scn`` is
        synthesized as 1, 2, 3... in event order; otherwise an event without
        one is written without ``scn`` (as the spec's heartbeat is). Column types are derived per table from every
        image of it (``bigint``, ``double``, ``decimal(65,30)``, ``boolean``,
        ``datetime`` for nanosecond-form times, else ``varchar(255)``), always
        so that reading them back types every value as it was. A nanosecond
        time is written as the raw JSON number it stands for (an
        ``orjson.Fragment``): serialize the records with
        :func:`cdckit.values.dumps`, as :func:`cdckit.io.write_messages` does.
        """
        rows = list(rows_of(events))
        types = _column_types_by_table(rows)
        synthesize = all(row["seq"] is None for row in rows)
        for number, row in enumerate(rows):
            op_raw = _op_name(row["op"], row["op_raw"])
            if op_raw is None:
                continue
            before = None if row["before"] is None else values.loads(row["before"])
            after = None if row["after"] is None else values.loads(row["after"])
            table_types = types.get((row["database"], row["schema"], row["table"]), {})
            message: dict[str, Any] = {"version": VERSION}
            has_image = before is not None or after is not None
            if has_image or any(row[f] is not None for f in ("database", "schema", "table", "key_columns")):
                message["schema"] = _schema(row, table_types if has_image else None)
            payload: dict[str, Any] = {}
            if before is not None:
                payload["before"] = {"data": _raw_times(before, table_types)}
            if after is not None:
                payload["after"] = {"data": _raw_times(after, table_types)}
            payload["op"] = op_raw
            if row["event_time"] is not None:
                payload["timestamp"] = {"eventTime": values.ns_to_ms(row["event_time"])}
            if row["ddl"] is not None:
                payload["ddl"] = {"text": row["ddl"]}
            scn = unpadded_seq(row["seq"], str(number + 1) if synthesize else None)
            if scn is not None:
                payload["scn"] = scn
            message["payload"] = payload
            yield Record(message)


# ---------------------------------------------------------------- decoding helpers


def canonical_op(op_raw: Any) -> str:
    """The canonical op of ``payload.op``: a known op's, else ``other`` for any upper-case text."""
    op = OPS.get(op_raw) if type(op_raw) is str else None
    if op is None:
        if not (isinstance(op_raw, str) and op_raw.isupper()):
            raise BadMessage(f"unknown op {op_raw!r}")
        op = "other"
    return op


def require_images(op: str, op_raw: str, before: Any, after: Any) -> None:
    """BadMessage when the op's image is missing: after for insert and update, before for delete."""
    if after is None and op in ("insert", "update"):
        raise BadMessage(f"missing required field payload.after (op {op_raw})")
    if before is None and op == "delete":
        raise BadMessage(f"missing required field payload.before (op {op_raw})")


def keyed_image(op: str, before: Any, after: Any) -> Any:
    """The image the key is read from: before for a delete or when there is no after, else after."""
    return before if op == "delete" or after is None else after


def type_kind(type_name: str) -> str | None:
    """The value kind of a column type name: ``int``, ``float``, ``decimal``, ``bool`` or None.

    >>> type_kind("bigint"), type_kind("decimal(10,2)"), type_kind("INT(11) UNSIGNED"), type_kind("binary")
    ('int', 'decimal', 'int', None)
    """
    base = type_name.lower().partition("(")[0].strip()
    for modifier in _TYPE_MODIFIERS:
        base = base.removesuffix(modifier)
    return TYPE_KINDS.get(base)


def declared_kind(type_name: str) -> str:
    """The kind (:mod:`cdckit.column_types`) a column type name declares.

    >>> declared_kind("decimal(10,2)"), declared_kind("bigint"), declared_kind("datetime"), declared_kind("varchar(20)")
    ('decimal(10,2)', 'int', 'timestamp', 'string')
    """
    kind = type_kind(type_name)
    if kind is None:
        base = type_name.lower().partition("(")[0].strip()
        return DECLARED_KINDS.get(base.split(" ", 1)[0], "string")
    if kind == "decimal":
        found = _PARAMETERS.search(type_name)
        if found is not None:
            kind = f"decimal({found.group(1)},{found.group(2) or 0})"
    return kind


def declared_columns(columns: Any) -> dict[str, tuple[str, str]]:
    """The column types a ``schema.column`` declares, ``{column: (type, kind)}`` (entries that are not
    ``{"name", "type"}`` objects with text in both ignored)."""
    declared = {}
    if columns.__class__ is list:
        for column in columns:
            if column.__class__ is dict and column.get("name").__class__ is str and column.get("type").__class__ is str:
                declared[column["name"]] = (column["type"], declared_kind(column["type"]))
    return declared


#: Kinds of the column type names met so far (type names in a stream are few).
_KIND_OF_TYPE: dict[str, str | None] = {}


def column_kinds(columns: Any) -> dict[str, str]:
    """``{column: kind}`` of the ``schema.column`` entries whose values are typed.

    Entries that are not ``{"name", "type"}`` objects with a text type are ignored.
    """
    if not columns:
        return {}
    if type(columns) is not list:
        raise BadMessage("expected schema.column as a JSON array")
    kinds = {}
    known = _KIND_OF_TYPE
    for column in columns:
        try:
            kind = known[column["type"]]
        except KeyError:  # a type not met yet, or an entry without one
            kind = _learn_type(column)
        except TypeError:  # an entry that is not an object, or a type that is not text
            continue
        if kind is not None:
            kinds[column.get("name")] = kind
    return kinds


def _learn_type(column: dict[str, Any]) -> str | None:
    type_name = column.get("type")
    if not isinstance(type_name, str):
        return None
    kind = type_kind(type_name)
    if len(_KIND_OF_TYPE) < 4096:
        _KIND_OF_TYPE[type_name] = kind
    return kind


def typed_image(side: Any, kinds: dict[str, str], where: str) -> dict[str, Any] | None:
    """The row of ``payload.before``/``payload.after`` (its ``data``), text values typed by ``kinds``."""
    if side is None:
        return None
    if type(side) is not dict:
        expect_object(side, where)
    data = require_object(side, "data", where + ".")
    return typed_data(data, kinds)


def typed_data(data: dict[str, Any], kinds: dict[str, str]) -> dict[str, Any]:
    """``data`` with the text values of typed columns typed: a copy when there are any, else ``data`` itself."""
    row = data
    for name, kind in kinds.items():
        value = data.get(name)
        if type(value) is str:
            if row is data:
                row = dict(data)
            row[name] = values.coerce(value, kind)
    return row


def _text_value_pattern(kinds: dict[str, str]) -> re.Pattern[bytes] | None:
    """What finds a text value (``"name": "``) of a typed column in an image's JSON text, or None.

    Only in text without backslashes: an escaped name or quote could hide one.
    """
    names = [re.escape(name.encode()) for name in kinds if type(name) is str]
    if not names:
        return None
    return re.compile(rb'"(?:' + b"|".join(names) + rb')"\s*:\s*"')


def primary_key(pk: Any) -> list[str] | None:
    if not pk:
        return None
    if not isinstance(pk, list):
        raise BadMessage("expected schema.pk as a JSON array of column names")
    return [str(name) for name in pk]


def event_time(timestamp: Any) -> int | None:
    if type(timestamp) is not dict:
        return None
    return epoch_ms_to_ns(timestamp.get("eventTime"))


def epoch_ms_to_ns(ms: Any) -> int | None:
    """``payload.timestamp.eventTime`` (epoch milliseconds) in nanoseconds."""
    try:
        return values.ms_to_ns(ms)
    except (TypeError, ValueError):
        raise BadMessage(f"payload.timestamp.eventTime is not epoch milliseconds: {ms!r}") from None


def ddl_text(ddl: Any) -> str | None:
    if isinstance(ddl, dict):
        return ddl.get("text")
    return ddl if isinstance(ddl, str) else None


# ---------------------------------------------------------------- the batch decoder's view of a message

_NULL = msgspec.Raw(b"null")


class _Source(msgspec.Struct):
    """``schema.source``: the names the frame takes (other fields skipped)."""

    dbName: str | None = None
    schema: str | None = None
    table: str | None = None


class _Schema(msgspec.Struct):
    """``schema``: the column list kept raw, to cache its kinds by its text."""

    source: _Source | None = None
    column: msgspec.Raw = _NULL
    pk: list[str] | None = None


class _Image(msgspec.Struct):
    """``payload.before`` or ``payload.after``: the row kept raw."""

    data: msgspec.Raw


class _Timestamp(msgspec.Struct):
    eventTime: int | None = None


class _Payload(msgspec.Struct):
    op: str
    before: _Image | None = None
    after: _Image | None = None
    timestamp: _Timestamp | None = None
    scn: str | int | None = None
    ddl: Any = None


class _Message(msgspec.Struct, forbid_unknown_fields=True):
    """A DataWorks message as the batch decoder reads it; another top-level field (a saved Kafka
    record's ``offset``, say) fails validation and the message goes to :meth:`DataWorks.decode`."""

    payload: _Payload
    schema: _Schema | None = None
    version: msgspec.Raw = _NULL
    extend: msgspec.Raw = _NULL


_MESSAGE = msgspec.json.Decoder(_Message)
_NO_SCHEMA = _Schema()
_NO_SOURCE = _Source()
#: What makes the batch decoder hand a message back to :meth:`DataWorks.decode`.
_HAND_BACK = (msgspec.DecodeError, msgspec.ValidationError, BadMessage, ValueError, TypeError)


# ---------------------------------------------------------------- encoding helpers


def _op_name(op: str, op_raw: Any) -> str | None:
    """The DataWorks op to write: ``op_raw`` when it says the same thing, else the default, else None."""
    if isinstance(op_raw, str) and OPS.get(op_raw, "other" if op_raw.isupper() else None) == op:
        return op_raw
    return _OP_NAMES.get(op)


def _schema(row: dict[str, Any], types: dict[str, str] | None) -> dict[str, Any]:
    source: dict[str, Any] = {"dbType": "mysql"}
    for field, name in (("dbName", "database"), ("schema", "schema"), ("table", "table")):
        if row[name] is not None:
            source[field] = row[name]
    schema: dict[str, Any] = {"source": source}
    if types is not None:
        schema["column"] = [{"name": name, "type": type_name} for name, type_name in types.items()]
    if row["key_columns"] is not None:
        schema["pk"] = list(row["key_columns"])
    return schema


def _raw_times(row: dict[str, Any], types: dict[str, str]) -> dict[str, Any]:
    """The row with nanosecond-form times of datetime columns as raw JSON numbers."""
    out = dict(row)
    for name, value in row.items():
        if types.get(name) == "datetime" and isinstance(value, str):
            out[name] = orjson.Fragment(value)
    return out


def _value_class(value: Any) -> str:
    """The kind of a non-null image value (:func:`values.kind_of_value`), with two text kinds of this dialect."""
    if isinstance(value, str):
        if _NS_TIME.match(value):
            return "ns"
        if _BIG_NUMBER.match(value) and values.exact_number(value) == value:
            return "bignumber"
    return values.kind_of_value(value) or "text"


def _column_type(classes: set[str]) -> str:
    """A column type under which every value seen reads back unchanged."""
    if not classes:
        return _TEXT_TYPE
    if classes == {"bool"}:
        return "boolean"
    if classes == {"int"}:
        return "bigint"
    if classes <= {"int", "float"}:
        return "double"
    if classes <= {"int", "float", "bignumber"}:
        return "decimal(65,30)"
    if "ns" in classes and classes <= {"int", "ns"}:
        return "datetime"
    return _TEXT_TYPE


def _column_types_by_table(rows: list[dict[str, Any]]) -> dict[tuple, dict[str, str]]:
    seen: dict[tuple, dict[str, set[str]]] = {}
    for row in rows:
        for side in ("before", "after"):
            if row[side] is None:
                continue
            columns = seen.setdefault((row["database"], row["schema"], row["table"]), {})
            for name, value in values.loads(row[side]).items():
                classes = columns.setdefault(name, set())
                if value is not None:
                    classes.add(_value_class(value))
    return {
        table: {name: _column_type(classes) for name, classes in columns.items()} for table, columns in seen.items()
    }
