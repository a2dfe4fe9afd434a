"""The ``dataworks`` dialect: DataWorks JSON v2.0 messages told apart, decoded one by one and in batches, and
written (see the package's documentation, :mod:`cdckit.dialects.dataworks`)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import msgspec
import orjson
import pandas as pd

from ... import values
from ...frame import Event, FastRow
from ...io import Message
from ...row_images import key_of
from ..base import BadMessage, Dialect, Match, Record, expect_object, require, require_object, rows_of, unpadded_seq
from ..registry import register
from .fields import (
    OPS,
    canonical_op,
    column_kinds,
    ddl_text,
    declared_columns,
    epoch_ms_to_ns,
    event_time,
    keyed_image,
    primary_key,
    require_images,
    text_value_pattern,
    typed_data,
    typed_image,
)

VERSION = "2.0"

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
            found = (kinds, text_value_pattern(kinds), declared_columns(columns))
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
