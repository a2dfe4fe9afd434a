"""DataHub Blob: DataWorks Data Integration's JSON messages on a DataHub Blob topic.

One message is one JSON object ``{schema, payload, version}``:

- ``schema.source`` names the table (``dbName``, ``schemaName``, ``tableName``,
  plus ``dbType``/``dbVersion``), ``schema.primaryKey`` the key columns and
  ``schema.dataColumn`` the columns with one of six StreamX types: ``LONG``,
  ``DOUBLE``, ``BOOLEAN``, ``STRING``, ``DATE`` (13-digit epoch milliseconds)
  and ``BYTES`` (Base64 text).
- ``payload.op`` is the operation (case-sensitive), ``payload.before`` /
  ``payload.after`` hold the row as ``{"dataColumn": {column: value}}``,
  ``payload.sequenceId`` orders the DML messages, ``payload.timestamp`` has
  ``eventTime`` (always), ``systemTime`` and ``checkpointTime`` (some
  sources), and ``payload.ddl`` has ``text`` and ``ddlMeta`` for DDL.

Quirks:

- An update is two messages with the same ``sequenceId``: ``UPDATE_BEFOR``
  (spelled so) with the before image and ``UPDATE_AFTER`` with the after
  image. Each is decoded as one half (``Event.half``); the reader pairs them
  into ONE update row wherever they are in the stream and whichever comes
  first. The merged row keeps ``op_raw="UPDATE_AFTER"`` and the after half's
  offset and times. A half that carries both images is a whole update by
  itself; a half whose partner never comes is quarantined at end of stream.
- ``MHEARTBEAT`` (schema ``{}``) is a heartbeat. ``CREATE``, ``ALTER``,
  ``QUERY``, ``TRUNCATE``, ``RENAME``, ``CINDEX``, ``DINDEX`` and ``ERASE`` are
  DDL: ``ddl`` is ``payload.ddl.text``; ``ddlMeta`` (a Java-serialized FastSQL
  object in Base64, useless outside the JVM) is not kept.
  ``TRANSACTION_BEGIN``/``TRANSACTION_END`` are begin/commit, ``XACOMMIT``
  (an XA transaction committed) is a commit, ``GTID`` and ``XAROLLBACK`` are
  ``other``.
- Values are typed by ``schema.dataColumn``: ``LONG``, ``DOUBLE`` and
  ``BOOLEAN`` values that arrive as text become numbers / booleans, ``DATE``
  stays (or becomes) the epoch-millisecond number, ``BYTES`` stays Base64
  text, ``STRING`` stays text. Without ``dataColumn`` values are kept as they
  arrive.
- ``seq`` is ``payload.sequenceId`` zero-padded to 20 digits; ``event_time``
  is ``eventTime``, ``emit_time`` is ``systemTime`` (``checkpointTime``, the
  time an offset reset was set, is not part of the frame). A Blob message has
  no transaction id.
- DML messages must carry ``schema.source.tableName``, ``payload.sequenceId``
  and the image their op needs; DDL messages ``payload.ddl.text``; every
  message ``payload.timestamp.eventTime``.

Kept whole: one dialect, DataHub Blob, its detection, decoding (one message and a batch), value rules (the
key and column kinds a ``schema`` names, the images typed by them) and encoding; each changes only when the
format does, and together.

>>> import cdckit
>>> schema = {"dataColumn": [{"name": "id", "type": "LONG"}, {"name": "note", "type": "STRING"}],
...           "source": {"dbName": "shop", "tableName": "t"}, "primaryKey": ["id"]}
>>> half = {"sequenceId": "1605339516000000005", "timestamp": {"eventTime": 1605339934000}}
>>> ev = cdckit.read([
...     {"schema": schema, "payload": dict(half, op="UPDATE_BEFOR", before={"dataColumn": {"id": "1", "note": "a"}}),
...      "version": "1.0.0"},
...     {"schema": schema, "payload": dict(half, op="UPDATE_AFTER", after={"dataColumn": {"id": "1", "note": "b"}}),
...      "version": "1.0.0"}], dialect="datahub_blob")
>>> ev.loc[0, ["op", "op_raw", "table", "seq", "key", "before", "after"]].tolist()
['update', 'UPDATE_AFTER', 't', '01605339516000000005', '[1]', '{"id":1,"note":"a"}', '{"id":1,"note":"b"}']
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import msgspec
import pandas as pd

from .. import values
from ..frame import Event, FastRow
from ..io import Message
from ..row_images import key_of
from .base import BadMessage, Dialect, Match, Record, expect_object, require, require_object, rows_of
from .registry import register

#: payload.op -> canonical op.
OPS = {
    "INSERT": "insert",
    "UPDATE_BEFOR": "update",
    "UPDATE_AFTER": "update",
    "DELETE": "delete",
    "MHEARTBEAT": "heartbeat",
    "TRANSACTION_BEGIN": "begin",
    "TRANSACTION_END": "commit",
    "XACOMMIT": "commit",
    "GTID": "other",
    "XAROLLBACK": "other",
    "CREATE": "ddl",
    "ALTER": "ddl",
    "QUERY": "ddl",
    "TRUNCATE": "ddl",
    "RENAME": "ddl",
    "CINDEX": "ddl",
    "DINDEX": "ddl",
    "ERASE": "ddl",
}
DDL_OPS = frozenset(op for op, canonical in OPS.items() if canonical == "ddl")
#: The image each DML op must carry.
_NEEDS = {"INSERT": "after", "UPDATE_BEFOR": "before", "UPDATE_AFTER": "after", "DELETE": "before"}
#: Ops no other dialect writes: seeing one is strong evidence.
_OWN_OPS = frozenset({"UPDATE_BEFOR", "UPDATE_AFTER", "MHEARTBEAT"})
VERSIONS = frozenset({"0.0.1", "1.0.0"})
#: StreamX column type -> values.coerce kind (STRING and BYTES stay text).
KINDS = {"LONG": "int", "DOUBLE": "float", "BOOLEAN": "bool", "DATE": "int"}
#: StreamX column type -> the kind declared (:mod:`cdckit.column_types`); DATE is epoch milliseconds.
DECLARED_KINDS = {
    "LONG": "int",
    "DOUBLE": "float",
    "BOOLEAN": "bool",
    "STRING": "string",
    "DATE": "timestamp(ms)",
    "BYTES": "binary",
}
#: values.infer_kinds kind -> StreamX column type, for the encoder.
_STREAMX = {"int": "LONG", "float": "DOUBLE", "bool": "BOOLEAN", "text": "STRING"}
#: canonical op -> payload.op for the events without rows that every source can give.
_ENCODE_OPS = {"heartbeat": "MHEARTBEAT", "begin": "TRANSACTION_BEGIN", "commit": "TRANSACTION_END"}
#: payload.op values written back as they were read.
_KEPT_OPS = frozenset({"XACOMMIT", "GTID", "XAROLLBACK"})
_VERSION = "1.0.0"
#: sequenceIds synthesized when events carry none (the spec's own first one, when there are no times).
_FIRST_SEQUENCE = 1605339516000000000


@register
class DataHubBlob(Dialect):
    """DataHub Blob JSON messages (schema / payload / version)."""

    name = "datahub_blob"
    title = "DataHub Blob JSON"
    spec = "datahub-tuple-and-blob.txt"
    splits_updates = True
    contiguous_seq = True
    quirks = (
        "An update is two messages with the same sequenceId, UPDATE_BEFOR (really spelled so) and UPDATE_AFTER; "
        "they become one update row wherever they are in the stream, and a half with no partner is quarantined.",
        "Values are typed by schema.dataColumn's StreamX types: LONG, DOUBLE and BOOLEAN sent as text become "
        "numbers, DATE is a 13-digit epoch-millisecond number and BYTES stays Base64 text.",
        "MHEARTBEAT messages (with an empty schema) are heartbeats; DDL keeps payload.ddl.text and drops ddlMeta, "
        "a Java-serialized Base64 blob only the JVM can read.",
        "XACOMMIT is read as a commit; GTID and XAROLLBACK have no canonical op and are kept as 'other'.",
        "seq is payload.sequenceId, event_time is eventTime and emit_time is systemTime; checkpointTime and "
        "dbType are not kept, and there is no transaction id.",
        "One Blob topic carries a whole database: schema.source names each message's table.",
    )

    # ------------------------------------------------------------ detection

    def detect(self, value: Any) -> Match | None:
        if not isinstance(value, dict):
            return None
        payload = value.get("payload")
        if not isinstance(payload, dict):
            return None
        op = payload.get("op")
        if not isinstance(op, str) or op not in OPS:
            return None
        version = value.get("version")
        schema = value.get("schema")
        if version == "2.0" or "scn" in payload or "extend" in value:  # DataWorks v2.0 shares the op names
            return None
        evidence = [f"payload.op={op}"]
        strong = op in _OWN_OPS
        if isinstance(schema, dict):
            if "column" in schema or "pk" in schema:  # DataWorks' names for dataColumn / primaryKey
                return None
            for field in ("dataColumn", "primaryKey"):
                if field in schema:
                    evidence.append(f"schema.{field}")
                    strong = True
        for side in ("before", "after"):
            image = payload.get(side)
            if isinstance(image, dict):
                if "dataColumn" in image:
                    evidence.append(f"payload.{side}.dataColumn")
                    strong = True
                elif "data" in image:  # DataWorks
                    return None
        if "sequenceId" in payload:
            evidence.append("payload.sequenceId")
            strong = True
        if isinstance(version, str) and version in VERSIONS:
            evidence.append(f"version={version}")
            return Match(0.95 if strong else 0.8, tuple(evidence))
        return Match(0.9 if strong else 0.4, tuple(evidence))

    # ------------------------------------------------------------ decoding

    def decode(self, message: Message) -> list[Event]:
        value = message.value
        if type(value) is not dict:
            value = expect_object(value, "a DataHub Blob message")
        payload = value.get("payload")
        if type(payload) is not dict:
            payload = expect_object(require(value, "payload"), "payload")
        op_raw = require(payload, "op", "payload.")
        op = OPS.get(op_raw) if type(op_raw) is str else None
        if op is None:
            raise BadMessage(f"unknown op {op_raw!r}")
        schema = value.get("schema") or {}
        if type(schema) is not dict:
            schema = expect_object(schema, "schema")
        source = schema.get("source") or {}
        if type(source) is not dict:
            source = expect_object(source, "schema.source")
        timestamp = require(payload, "timestamp", "payload.")
        if type(timestamp) is not dict:
            timestamp = expect_object(timestamp, "payload.timestamp")
        event = Event(
            op=op,
            op_raw=op_raw,
            database=source.get("dbName"),
            schema=source.get("schemaName"),
            table=source.get("tableName"),
            event_time=_ms(require(timestamp, "eventTime", "payload.timestamp."), "eventTime"),
            emit_time=_ms(timestamp.get("systemTime"), "systemTime"),
            seq=values.sortable(payload.get("sequenceId")),
            key_columns=primary_key(schema.get("primaryKey")),
        )
        needs = _NEEDS.get(op_raw)
        if needs is not None:
            self.fill_images(event, payload, schema.get("dataColumn"), needs)
        elif op == "ddl":
            ddl = expect_object(require(payload, "ddl", "payload."), "payload.ddl")
            event.ddl = require(ddl, "text", "payload.ddl.")
        return [event]

    def fill_images(self, event: Event, payload: dict[str, Any], columns: Any, needs: str) -> None:
        """Images, key and half of a DML event (its op's image and the routing fields are required)."""
        require_routing(event.table, event.seq)
        kinds = column_kinds(columns)
        self.declare(event.database, event.schema, event.table, declared_columns(columns))
        before = typed_image(payload.get("before"), kinds, "before")
        after = typed_image(payload.get("after"), kinds, "after")
        # (op_raw is one of _NEEDS's here: decode fills the images of those ops only)
        event.half, event.key = half_and_key(event.op_raw or "", before, after, event.key_columns)
        event.before = values.image(before)
        event.after = values.image(after)

    # ------------------------------------------------------------ batch decoding (the fast path)

    has_line_decoder = True

    def decode_lines(self, lines: list[bytes]) -> list[tuple | Event | None]:
        """The events of many raw Blob messages at once, read by msgspec (:class:`_Blob`).

        Takes raw JSON lines; gives for each one its event as a tuple of
        :data:`cdckit.frame.EVENT_FIELDS`, an :class:`Event` with ``half`` set
        for one half of an update, or None to hand it back to :meth:`decode`
        (DDL, bad JSON, unknown top-level fields, values of unexpected types,
        anything :meth:`decode` refuses). ``schema.dataColumn`` is kept raw and
        its column kinds parsed once per distinct text; only the row images
        are parsed, and typed by the same helpers as :meth:`decode`.
        """
        out: list[tuple | Event | None] = []
        append = out.append
        decode = _BLOB.decode
        for index, line in enumerate(lines):
            try:
                append(self._fast_event(decode(line), index))
            except (msgspec.DecodeError, BadMessage, ValueError):
                append(None)
        return out

    def _fast_event(self, message: _Blob, index: int | None = None) -> tuple | Event | None:
        """The event of one message read by :data:`_BLOB` (None for DDL, BadMessage where decode refuses)."""
        payload = message.payload
        op_raw = payload.op
        op = OPS.get(op_raw)
        if op is None or op == "ddl":
            return None
        schema = message.schema or _NO_SCHEMA
        source = schema.source or _NO_SOURCE
        table = source.tableName
        timestamp = payload.timestamp
        event_time = _ms(timestamp.eventTime, "eventTime")
        emit_time = _ms(timestamp.systemTime, "systemTime")
        seq = values.sortable(payload.sequenceId)
        key_columns = primary_key(schema.primaryKey)
        if op_raw not in _NEEDS:
            return FastRow(
                op,
                op_raw,
                source.dbName,
                source.schemaName,
                table,
                event_time,
                emit_time,
                seq,
                None,
                key_columns,
                None,
                None,
                None,
                None,
            )
        require_routing(table, seq)
        kinds, declared = self._column_kinds(schema.dataColumn)
        self.declare(source.dbName, source.schemaName, table, declared, index)
        before = _fast_image(payload.before, kinds)
        after = _fast_image(payload.after, kinds)
        half, key = half_and_key(op_raw, before, after, key_columns)
        before_text, after_text = values.image(before), values.image(after)
        if half is not None:
            return Event(
                op=op,
                op_raw=op_raw,
                database=source.dbName,
                schema=source.schemaName,
                table=table,
                event_time=event_time,
                emit_time=emit_time,
                seq=seq,
                key_columns=key_columns,
                key=key,
                before=before_text,
                after=after_text,
                half=half,
            )
        return FastRow(
            op,
            op_raw,
            source.dbName,
            source.schemaName,
            table,
            event_time,
            emit_time,
            seq,
            None,
            key_columns,
            key,
            before_text,
            after_text,
            None,
        )

    def _column_kinds(self, columns: msgspec.Raw) -> tuple[dict[str, str], dict[str, tuple]]:
        """:func:`column_kinds` and :func:`declared_columns` of a raw ``schema.dataColumn``, remembered by its
        text."""
        last = self.__dict__.get("_last_kinds")
        if last is not None and last[0] == columns:  # the same table again
            found = last[1]
        else:
            data = bytes(columns)
            cache = self.__dict__.setdefault("_kinds", {})
            found = cache.get(data)
            if found is None:
                if len(cache) >= 1024:
                    cache.clear()
                try:
                    parsed = values.loads(data)
                    found = (column_kinds(parsed), declared_columns(parsed))
                except (BadMessage, ValueError):
                    found = _BAD_COLUMNS
                cache[data] = found
            self._last_kinds = (columns, found)
        if found is _BAD_COLUMNS:
            raise BadMessage("schema.dataColumn is not a list of {name, type} objects")
        return found

    # ------------------------------------------------------------ encoding

    def encode(self, events: pd.DataFrame) -> Iterator[Record]:
        """Blob messages, one per event and two (UPDATE_BEFOR + UPDATE_AFTER) per update.

        ``dataColumn`` types come from the image values (int LONG, float
        DOUBLE, bool BOOLEAN, anything else STRING). A ``seq`` of digits is
        written back as the ``sequenceId``; events without one get increasing
        sequenceIds in event order, in the spec's style (the first event time
        in ms followed by six counter digits). Snapshot rows are written as
        INSERT (as a full sync does). Not written: updates without a before
        image (Blob needs both halves), tombstones, ``other`` events other
        than GTID / XAROLLBACK, and ``ddlMeta`` (only a JVM can produce it).
        """
        rows = list(rows_of(events))
        images = [(row, _loads(row["before"]), _loads(row["after"])) for row in rows]
        kinds: dict[tuple, list[dict[str, Any]]] = {}
        for row, before, after in images:
            found = kinds.setdefault((row["database"], row["schema"], row["table"]), [])
            found.extend(image for image in (before, after) if image)
        table_kinds = {table: values.infer_kinds(found) for table, found in kinds.items()}
        base = _sequence_base(rows)
        for number, (row, before, after) in enumerate(images):
            op, op_raw = row["op"], row["op_raw"]
            own = _sequence_id(row["seq"])
            sequence_id = own if own is not None else str(base + number)
            column_types = table_kinds.get((row["database"], row["schema"], row["table"]), {})
            if op == "update":
                if before is None or after is None:
                    continue
                yield self.message(row, "UPDATE_BEFOR", sequence_id, column_types, before=before)
                yield self.message(row, "UPDATE_AFTER", sequence_id, column_types, after=after)
            elif op in ("insert", "read"):
                yield self.message(row, "INSERT", sequence_id, column_types, after=after)
            elif op == "delete":
                yield self.message(row, "DELETE", sequence_id, column_types, before=before)
            elif op == "ddl":
                ddl_op = op_raw if op_raw in DDL_OPS else _ddl_op(row["ddl"])
                yield self.message(row, ddl_op, sequence_id, column_types, ddl=row["ddl"])
            elif op_raw in _KEPT_OPS and OPS[op_raw] == op:
                yield self.message(row, op_raw, own, column_types)
            elif op in _ENCODE_OPS:
                yield self.message(row, _ENCODE_OPS[op], own, column_types)

    def message(
        self,
        row: dict[str, Any],
        op: str,
        sequence_id: str | None,
        kinds: dict[str, str],
        before: dict[str, Any] | None = None,
        after: dict[str, Any] | None = None,
        ddl: str | None = None,
    ) -> Record:
        """One Blob message for ``row``, with the image(s) and ddl given."""
        schema: dict[str, Any] = {}
        image = after if after is not None else before
        if image is not None:
            schema["dataColumn"] = [{"name": c, "type": _STREAMX[kinds.get(c, "text")]} for c in image]
        source = {
            field: row[column]
            for field, column in (("dbName", "database"), ("schemaName", "schema"), ("tableName", "table"))
            if row[column] is not None
        }
        if source:
            schema["source"] = source
        if row["key_columns"]:
            schema["primaryKey"] = list(row["key_columns"])
        payload: dict[str, Any] = {"op": op}
        if before is not None:
            payload["before"] = {"dataColumn": before}
        if after is not None:
            payload["after"] = {"dataColumn": after}
        if sequence_id is not None:
            payload["sequenceId"] = sequence_id
        if ddl is not None:
            payload["ddl"] = {"text": ddl}
        timestamp = {"eventTime": values.ns_to_ms(row["event_time"])}
        if row["emit_time"] is not None:
            timestamp["systemTime"] = values.ns_to_ms(row["emit_time"])
        payload["timestamp"] = timestamp
        return Record({"schema": schema, "payload": payload, "version": _VERSION})


# ---------------------------------------------------------------- helpers


def primary_key(names: Any) -> list[str] | None:
    """``schema.primaryKey`` as a list of names (None when absent or empty: no key)."""
    if not names:
        return None
    if type(names) is not list:
        raise BadMessage("schema.primaryKey is not a list")
    return [n if type(n) is str else str(n) for n in names]


def column_kinds(columns: Any) -> dict[str, str]:
    """``{column: coerce kind}`` from ``schema.dataColumn`` for the types that need typing."""
    if not columns:
        return {}
    try:
        return {c["name"]: kind for c in columns if (kind := KINDS.get(c["type"])) is not None}
    except (TypeError, KeyError):
        raise BadMessage("schema.dataColumn is not a list of {name, type} objects") from None


def declared_columns(columns: Any) -> dict[str, tuple[str, str]]:
    """The column types a ``schema.dataColumn`` declares, ``{column: (type, kind)}`` (a type not known here
    declares ``string``; entries without a text name and type are left out).

    >>> declared_columns([{"name": "id", "type": "LONG"}, {"name": "at", "type": "DATE"}])
    {'id': ('LONG', 'int'), 'at': ('DATE', 'timestamp(ms)')}
    """
    declared = {}
    if columns.__class__ is list:
        for column in columns:
            if column.__class__ is dict and column.get("name").__class__ is str and column.get("type").__class__ is str:
                declared[column["name"]] = (column["type"], DECLARED_KINDS.get(column["type"], "string"))
    return declared


def typed_image(image: Any, kinds: dict[str, str], side: str) -> dict[str, Any] | None:
    """``payload.<side>.dataColumn`` with text values typed by their column kind (None when absent)."""
    if image is None:
        return None
    if type(image) is not dict:
        image = expect_object(image, f"payload.{side}")
    row = require_object(image, "dataColumn", f"payload.{side}.")
    return typed_row(row, kinds)


def typed_row(row: dict[str, Any], kinds: dict[str, str]) -> dict[str, Any]:
    """``row`` with its text values typed by their column kind (``row`` itself when none is text).

    >>> typed_row({"id": "7", "ok": "true", "note": "x"}, {"id": "int", "ok": "bool"})
    {'id': 7, 'ok': True, 'note': 'x'}
    """
    typed = None
    for name, kind in kinds.items():
        value = row.get(name)
        if value.__class__ is str:
            if typed is None:
                typed = dict(row)
            typed[name] = values.coerce(value, kind)
    return row if typed is None else typed


def require_routing(table: str | None, seq: str | None) -> None:
    """BadMessage unless a DML message names its table and carries a sequenceId."""
    if table is None:
        raise BadMessage("missing required field schema.source.tableName")
    if seq is None:
        raise BadMessage("missing required field payload.sequenceId")


def half_and_key(
    op_raw: str, before: dict[str, Any] | None, after: dict[str, Any] | None, key_columns: list[str] | None
) -> tuple[str | None, str | None]:
    """``(half, key)`` of a DML message from its typed images; BadMessage when its op's image is missing.

    ``half`` is the image an update message carries when it carries only that one (the other
    half comes in its own message); ``key`` comes from the after image, or the before image of
    a delete or of a message without an after image.
    """
    needs = _NEEDS[op_raw]
    if (before if needs == "before" else after) is None:
        raise BadMessage(f"missing required field payload.{needs} (op {op_raw})")
    half = needs if OPS[op_raw] == "update" and (before is None or after is None) else None
    key = key_of(before if after is None or OPS[op_raw] == "delete" else after, key_columns)
    return half, key


def _fast_image(image: _Image | None, kinds: dict[str, str]) -> dict[str, Any] | None:
    """A raw image's typed row, as :func:`typed_image` gives it (BadMessage when it is not an object)."""
    if image is None:
        return None
    data = bytes(image.dataColumn)
    if data[:1] != b"{":
        raise BadMessage("payload image dataColumn is not a JSON object")
    return typed_row(values.loads(data), kinds)


def _ms(value: Any, field: str) -> int | None:
    try:
        return values.ms_to_ns(value)
    except (TypeError, ValueError):
        raise BadMessage(f"payload.timestamp.{field} is not epoch milliseconds: {value!r}") from None


def _loads(text: str | None) -> dict[str, Any] | None:
    return None if text is None else values.loads(text)


def _sequence_id(seq: str | None) -> str | None:
    """A frame ``seq`` as a sequenceId: zero padding dropped from digits, other text kept."""
    if not seq:
        return None
    return str(int(seq)) if seq.isdigit() else seq


def _sequence_base(rows: list[dict[str, Any]]) -> int:
    for row in rows:
        ms = None if row["event_time"] is None else values.ns_to_ms(row["event_time"])
        if ms is not None:
            return ms * 1_000_000
    return _FIRST_SEQUENCE


def _ddl_op(text: str | None) -> str:
    """The Blob op for a DDL text from another dialect: its first word when Blob has it, else QUERY."""
    word = (text or "").lstrip().split(" ", 1)[0].upper()
    return word if word in DDL_OPS else "QUERY"


# ---------------------------------------------------------------- the batch decoder's view of a message

_NULL = msgspec.Raw(b"null")
#: The cached column kinds of a ``schema.dataColumn`` that :func:`column_kinds` refuses.
_BAD_COLUMNS: dict[str, str] = {}


class _Source(msgspec.Struct):
    """``schema.source``: the names, as text (``dbType`` and the like are skipped)."""

    dbName: str | None = None
    schemaName: str | None = None
    tableName: str | None = None


class _Schema(msgspec.Struct):
    """``schema``: the column list kept raw, to read its kinds once per distinct text."""

    dataColumn: msgspec.Raw = _NULL
    source: _Source | None = None
    primaryKey: list[str] | None = None


class _Image(msgspec.Struct):
    """``payload.before`` / ``payload.after``: the row kept raw."""

    dataColumn: msgspec.Raw


class _Timestamp(msgspec.Struct):
    """``payload.timestamp``: epoch milliseconds as numbers or text (floats go to decode)."""

    eventTime: int | str | None
    systemTime: int | str | None = None


class _Payload(msgspec.Struct):
    """``payload`` as the batch decoder reads it (``ddl`` and ``checkpointTime`` skipped)."""

    op: str
    timestamp: _Timestamp
    sequenceId: str | int | None = None
    before: _Image | None = None
    after: _Image | None = None


class _Blob(msgspec.Struct, forbid_unknown_fields=True):
    """A Blob message: any other top-level field (a saved Kafka record's, say) sends it to decode."""

    payload: _Payload
    schema: _Schema | None = None
    version: msgspec.Raw = _NULL


_BLOB = msgspec.json.Decoder(_Blob)
_NO_SCHEMA = _Schema()
_NO_SOURCE = _Source()
