"""Debezium JSON, with or without the Kafka Connect ``schema``/``payload`` wrapper.

The envelope is ``{before, after, source, op, ts_ms, transaction}``; ``op`` is
``c`` create, ``u`` update, ``d`` delete, ``r`` snapshot read, ``t`` truncate,
``m`` message. A truncate is the canonical ``truncate`` (no images: replay
empties the table there); a logical-decoding message (``m``) is ``other``
with its ``message`` (``prefix``, ``content``) kept as the after image. A
Kafka tombstone (a null value after a delete) becomes a ``tombstone`` event
keyed by the Kafka key. Debezium's transaction topic (``status`` BEGIN/END)
gives ``begin``/``commit`` events. Its schema change topic (``ddl``,
``databaseName``, ``tableChanges``), and Flink CDC's schema change records
(a payload with the same record as JSON text in ``historyRecord``), give one
``ddl`` event per changed table: the statement, the table, the change's
``type`` (``CREATE``, ``ALTER``, ``DROP``) as ``op_raw``, the table's key
columns, and its new column list as the after image
(``{"columns": [...], "primaryKeyColumnNames": [...]}`` as Debezium writes
the table).

- Key columns come from the Kafka key (its ``payload`` when wrapped); a file
  of values alone has no key columns.
- Values are typed from the embedded schema where present: integer and float
  types parse text values, ``org.apache.kafka.connect.data.Decimal`` (Base64
  of the unscaled two's-complement integer) and ``VariableScaleDecimal``
  become numbers, or exact text when a double would lose digits.
- ``seq`` is the connector's log position: MySQL ``file:pos:row``, PostgreSQL
  ``lsn``, SQL Server ``commit_lsn:change_lsn:event_serial_no``, Oracle
  ``scn``, MongoDB ``ts_ms:ord``; numbers zero-padded.
- ``event_time`` is ``source.ts_ms`` (``ts_us``/``ts_ns`` when given),
  ``emit_time`` the envelope's ``ts_ms``.
- Records printed in Avro's JSON encoding (``kafka-avro-console-consumer``:
  images as their record branch ``{"<topic>.Value": {...}}``, nullable
  fields as ``{"string": "x"}``, ``{"long": 5}``) have their unions
  unwrapped first (:func:`avro_unwrapped`); Avro ``bytes`` become Base64.

Arcion and Lindorm subclass :class:`Debezium` and change only what differs.

>>> import cdckit
>>> ev = cdckit.read('{"op": "c", "after": {"id": 1}, "source": {"connector": "mysql", "db": "inventory", '
...                  '"table": "customers", "ts_ms": 1000, "file": "mysql-bin.000003", "pos": 154, "row": 0}}',
...                  dialect="debezium")
>>> ev.loc[0, ["op", "database", "table", "after"]].tolist()
['insert', 'inventory', 'customers', '{"id":1}']
>>> ev.loc[0, "seq"]
'mysql-bin.000003:00000000000000000154:00000000000000000000'
"""

from __future__ import annotations

import base64
import binascii
import re
from decimal import Decimal
from typing import Annotated, Any, Iterator, Literal

import msgspec
import orjson
import pandas as pd

from .. import values
from ..containers import Message, kafka_key
from ..values import _DIGIT_MAP, _LONG_NUMBER, has_long_number
from ..frame import Event
from .base import BadMessage, Dialect, Match, Record, SkipMessage, expect_object, rows_of
from .registry import register

OPS = {"c": "insert", "u": "update", "d": "delete", "r": "read", "t": "truncate", "m": "other"}
_OP_CODES = {"insert": "c", "update": "u", "delete": "d", "read": "r", "truncate": "t"}

KNOWN_CONNECTORS = frozenset(
    {"mysql", "mariadb", "postgresql", "sqlserver", "oracle", "mongodb", "db2", "informix", "vitess",
     "spanner", "cassandra", "jdbc", "ibmi"}
)
_INT_TYPES = frozenset({"int8", "int16", "int32", "int64"})
_FLOAT_TYPES = frozenset({"float", "float32", "float64", "double"})
_DECIMAL = "org.apache.kafka.connect.data.Decimal"
_VARIABLE_DECIMAL = "io.debezium.data.VariableScaleDecimal"
_POSITION = re.compile(r"(?P<file>.+):(?P<pos>\d{20}):(?P<row>\d{20})\Z")
#: Kafka Connect logical types (a field's ``name``) -> the kind declared (:mod:`cdckit.column_types`);
#: ``org.apache.kafka.connect.data.Decimal`` is ``decimal(P,S)`` from its parameters (:func:`field_kind`).
LOGICAL_KINDS = {
    "io.debezium.time.Date": "date", "org.apache.kafka.connect.data.Date": "date",
    "io.debezium.time.Timestamp": "timestamp(ms)", "org.apache.kafka.connect.data.Timestamp": "timestamp(ms)",
    "io.debezium.time.MicroTimestamp": "timestamp(us)", "io.debezium.time.NanoTimestamp": "timestamp(ns)",
    "io.debezium.time.ZonedTimestamp": "timestamp",
    "io.debezium.time.Time": "time(ms)", "org.apache.kafka.connect.data.Time": "time(ms)",
    "io.debezium.time.MicroTime": "time(us)", "io.debezium.time.NanoTime": "time(ns)",
    "io.debezium.time.ZonedTime": "time",
    _VARIABLE_DECIMAL: "decimal", "io.debezium.data.Json": "json",
    "io.debezium.data.Enum": "enum", "io.debezium.data.EnumSet": "enum",
}
#: Kafka Connect schema types -> the kind declared for a field with no logical type known here.
SCHEMA_KINDS = {"int8": "int", "int16": "int", "int32": "int", "int64": "int", "float32": "float",
                "float64": "float", "float": "float", "double": "float", "boolean": "bool", "string": "string",
                "bytes": "binary", "struct": "json", "array": "json", "map": "json"}


@register
class Debezium(Dialect):
    """Plain Debezium change events (any connector)."""

    name = "debezium"
    title = "Debezium JSON"
    spec = "public Debezium documentation"
    quirks = (
        "Key columns come only from the Kafka key: a file of values alone has none.",
        "A delete is followed by a tombstone (a null value) that only carries the key.",
        "DECIMAL columns arrive as Base64 of the unscaled integer; the schema's scale makes them numbers again.",
        "seq is the connector's own log position (binlog file:pos:row, LSN, SCN), zero-padded to sort as text.",
        "ts_ms in source is when the change happened; ts_ms in the envelope is when Debezium processed it.",
    )

    # ------------------------------------------------------------ detection

    def detect(self, value: Any) -> Match | None:
        if value is None:
            return Match(0.3, ("null value (Kafka tombstone)",))
        payload, schema = unwrap(value)
        if payload is None:
            return None
        if payload.get("status") in ("BEGIN", "END") and "id" in payload and (
            "event_count" in payload or "data_collections" in payload
        ):
            return Match(0.9, ("status", "id", "data_collections"))
        if "ddl" in payload and ("tableChanges" in payload or "databaseName" in payload):
            return Match(0.9, ("ddl", "tableChanges" if "tableChanges" in payload else "databaseName"))
        if isinstance(payload.get("historyRecord"), str) and "op" not in payload:
            return Match(0.9, ("historyRecord (Flink CDC schema change)",))
        shape = envelope_shape(payload)
        if shape is None:
            return None
        source = payload.get("source")
        if isinstance(source, dict):
            connector = source.get("connector")
            if "namespace" in source:  # Lindorm names its schema this way
                return Match(0.5, shape)
            if isinstance(connector, str) and connector in KNOWN_CONNECTORS:
                return Match(0.9, shape + ("source.connector=" + connector,))
            if isinstance(connector, str) and connector.isupper():  # Arcion writes it in capitals
                return Match(0.5, shape)
            markers = [f"source.{f}" for f in ("file", "lsn", "change_lsn", "scn", "txId", "ord") if f in source]
            if markers:
                return Match(0.85, shape + tuple(markers))
        return Match(0.6, shape)

    # ------------------------------------------------------------ decoding

    def decode(self, message: Message) -> list[Event]:
        value = message.value
        if value is None:
            return [self.tombstone(message, "null")]
        payload, schema = unwrap(value)
        if payload is None:
            raise BadMessage(f"expected a Debezium change event as a JSON object, got {type(value).__name__}")
        if is_avro_json(payload):
            payload = avro_unwrapped(payload)
        if "status" in payload and payload.get("status") in ("BEGIN", "END"):
            return [self.transaction_marker(payload)]
        if "op" not in payload and ("ddl" in payload or "historyRecord" in payload):
            return self.schema_change(payload)
        if payload.get("op") == "m":
            return [self.logical_message(payload)]
        return [self.change(payload, schema, message.key)]

    # ------------------------------------------------------------ batch decoding (the fast path)

    has_line_decoder = True
    uses_kafka_key = True

    def decode_lines(self, lines: list[bytes], keys: list | None = None) -> list[tuple | None]:
        """Change events of many raw messages at once, through msgspec with the images kept raw.

        ``keys`` are the messages' Kafka keys as text (None: no key). The
        images are not parsed when nothing in them needs typing: their JSON
        text is taken as it stands (after checking it holds no number a double
        could not carry and, when a schema is included, that no column the
        schema types holds text). A schema block is read once per distinct
        text (:meth:`_plan`). Everything else (tombstones, transaction
        markers, schema changes, unknown fields, bad JSON) is handed back to
        :meth:`decode`. The result for each message equals what :meth:`decode`
        gives, with images compared as parsed JSON.
        """
        cls = type(self)
        plain = (cls.typed_image is Debezium.typed_image, cls.key_columns is Debezium.key_columns,
                 cls.position is Debezium.position and cls.schema_name is Debezium.schema_name)
        if not all(plain):
            return self._line_by_line(lines, keys, plain)
        out = self._plain_changes(lines, keys)
        if None not in out:
            return out
        missed = [index for index, result in enumerate(out) if result is None]
        again = self._line_by_line([lines[i] for i in missed], None if keys is None else [keys[i] for i in missed],
                                   plain, missed)
        for index, result in zip(missed, again):
            out[index] = result
        return out

    def _line_by_line(self, lines: list[bytes], keys: list | None, plain: tuple[bool, bool, bool],
                      indexes: list[int] | None = None) -> list[tuple | None]:
        """:meth:`decode_lines` one line at a time, for every shape the batch decoder takes on (``indexes``:
        the lines' places in the batch, where column types are declared; by default their own)."""
        decode = _ENVELOPE.decode
        out: list[tuple | None] = []
        append = out.append
        for index, line in enumerate(lines):
            try:
                envelope = decode(line)
                if envelope.op is None and envelope.payload is not _NULL:
                    schema = envelope.schema
                    envelope = decode(envelope.payload)
                    if envelope.payload is not _NULL or envelope.schema is not _NULL:
                        append(None)
                        continue
                elif envelope.payload is not _NULL or envelope.schema is not _NULL:
                    append(None)
                    continue
                else:
                    schema = _NULL
                append(self._fast_change(envelope, schema, plain, None if keys is None else keys[index],
                                         index if indexes is None else indexes[index]))
            except Exception:  # a shape not foreseen here: decode() takes the message and names the problem
                append(None)
        return out

    def _plain_changes(self, lines: list[bytes], keys: list | None) -> list[tuple | None]:
        """The usual message (bare or in the schema/payload wrapper, MySQL-style position or none, no
        transaction fields, a Kafka key or none) in one tight loop: msgspec checks the shape
        (:class:`_Plain`, :class:`_Wrapped`), so the loop only formats. Any other message is handed
        back (None) for :meth:`_line_by_line`."""
        out: list[tuple | None] = []
        append = out.append
        ops, long_number, digit_map, hand_back, record_branch = OPS, _LONG_NUMBER, _DIGIT_MAP, _HAND_BACK, _record_branch
        dumps, loads = orjson.dumps, orjson.loads  # an image without long numbers, as values.image writes it
        plain_decode, wrapped_decode, payload_decode, plan_of = _PLAIN.decode, _WRAPPED.decode, _PAYLOAD.decode, self._plan
        known, key_names = self.__dict__.setdefault("_known", _KnownSchema()), self._key_names
        declare = self.declare
        errors = (msgspec.DecodeError, msgspec.ValidationError, UnicodeDecodeError)
        for index, line in enumerate(lines):
            if line.startswith(b'{"schema"'):  # Kafka Connect writes the wrapper's schema first
                rest = known.rest(line)
                try:
                    if rest is not None:  # the schema of the last message, byte for byte: not read again
                        message, plan = payload_decode(rest).payload, known.plan
                    else:
                        wrapped = wrapped_decode(line)
                        message, plan = wrapped.payload, plan_of(wrapped.schema)
                        known.remember(line, wrapped.schema, plan)
                except errors:
                    append(None)
                    continue
                if plan is None:
                    append(None)
                    continue
            else:
                try:
                    message = plain_decode(line)
                    plan = None
                except errors:
                    try:
                        wrapped = wrapped_decode(line)
                    except errors:
                        append(None)
                        continue
                    message, plan = wrapped.payload, plan_of(wrapped.schema)
                    if plan is None:
                        append(None)
                        continue
            try:
                data = bytes(message.before)
                if data.startswith(b"{") and long_number not in data.translate(digit_map) \
                        and not record_branch(data):
                    before = dumps(loads(data)).decode()
                elif data == b"null":
                    before = None
                else:
                    append(None)
                    continue
                data = bytes(message.after)
                if data.startswith(b"{") and long_number not in data.translate(digit_map) \
                        and not record_branch(data):
                    after = dumps(loads(data)).decode()
                elif data == b"null":
                    after = None
                else:
                    append(None)
                    continue
            except ValueError:  # text orjson refuses (1e400 too: decode() keeps it as text)
                append(None)
                continue
            op_raw = message.op
            op = ops[op_raw]
            if after is None and op != "delete" or before is None and op == "delete":
                append(None)
                continue
            if plan is not None and not (plan.untyped(message.before, "before")
                                         and plan.untyped(message.after, "after")):
                append(None)
                continue
            key_columns = key = None
            if keys is not None and keys[index] is not None:
                key_columns = key_names(keys[index])
                if key_columns is hand_back:
                    append(None)
                    continue
                if key_columns is not None:
                    key = _key_of_raw(message.before if op == "delete" else message.after, key_columns)
            src = message.source
            file = src.file
            if file is None:
                seq = None
            elif not file or (file.isascii() and file.isdigit()):
                append(None)
                continue
            else:
                seq = f"{file}:{str(src.pos).zfill(20)}:{str(src.row or 0).zfill(20)}"
            # Debezium 2 writes ts_us and ts_ns besides ts_ms: the finest one given wins (source_time, envelope_time)
            ts_ms = src.ts_ms
            event_time = (src.ts_ns if src.ts_ns is not None else src.ts_us * 1_000 if src.ts_us is not None
                          else None if ts_ms is None else ts_ms * 1_000_000)
            emit = message.ts_ms
            emit_time = (message.ts_ns if message.ts_ns is not None else message.ts_us * 1_000
                         if message.ts_us is not None else None if emit is None else emit * 1_000_000)
            if plan is not None and plan.declared:
                declare(src.db, src.schema, src.table, plan.declared, index)
            append((op, op_raw, src.db, src.schema, src.table, event_time, emit_time,
                    seq, None, key_columns, key, before, after, None))
        return out

    def _fast_change(self, envelope: "_Envelope", schema: msgspec.Raw, plain: tuple[bool, bool, bool],
                     key_text: Any = None, index: int | None = None) -> tuple | None:
        row = self._fast_row(envelope, schema, plain, key_text)
        if row is not None:
            declared = self._plan(schema).declared
            if declared:
                self.declare(row[2], row[3], row[4], declared, index)
        return row

    def _fast_row(self, envelope: "_Envelope", schema: msgspec.Raw, plain: tuple[bool, bool, bool],
                  key_text: Any = None) -> tuple | None:
        op_raw = envelope.op
        op = OPS.get(op_raw)
        if op is None:
            return None
        plain_images, plain_keys, plain_source = plain
        plan = self._plan(schema)
        if plan is None:
            return None
        parsed_key = None if key_text is None else kafka_key(key_text)
        keyless = plain_keys and not isinstance(kafka_payload(parsed_key), dict)
        before = after = None
        if plain_images and keyless and plan.untyped(envelope.before, "before") \
                and plan.untyped(envelope.after, "after"):  # the images' text as it stands
            before_text = _raw_image_text(envelope.before)
            after_text = _raw_image_text(envelope.after)
        else:
            before_text = after_text = _HAND_BACK
        if before_text is _HAND_BACK or after_text is _HAND_BACK:
            before_text, before = self._fast_image(envelope.before, plan.types, "before")
            after_text, after = self._fast_image(envelope.after, plan.types, "after")
            if before_text is _HAND_BACK or after_text is _HAND_BACK:
                return None
        if after_text is None and op in ("insert", "read") or before_text is None and op == "delete":
            return None
        if keyless:
            key_columns = key = None
        else:
            key_columns = self.key_columns(parsed_key, before, after)
            key = values.key_of(before if op == "delete" else after, key_columns)
        emit_time = envelope.ts_ms
        if envelope.ts_ns is not None:
            emit_time = envelope.ts_ns
        elif envelope.ts_us is not None:
            emit_time = envelope.ts_us * 1_000
        elif emit_time is not None:
            emit_time *= 1_000_000
        src = envelope.source or _EMPTY_SOURCE
        txn_id = None
        txn = envelope.transaction
        if txn and txn.get("id") not in (None, ""):
            txn_id = str(txn["id"])
        elif src.txId is not None or src.gtid is not None or src.xid is not None:
            found = src.txId if src.txId not in (None, "") else src.gtid if src.gtid not in (None, "") else src.xid
            txn_id = None if found in (None, "") else str(found)
        # The common cases inline; anything else through the same helpers as decode().
        ts_ms, file, pos, row = src.ts_ms, src.file, src.pos, src.row or 0
        if plain_source and src.ts_ns is None and src.ts_us is None and (ts_ms is None or ts_ms.__class__ is int):
            if pos.__class__ is int and row.__class__ is int and file.__class__ is str and pos >= 0 and row >= 0 \
                    and file and not (file.isascii() and file.isdigit()):
                return (op, op_raw, src.db, src.schema, src.table or src.collection,
                        None if ts_ms is None else ts_ms * 1_000_000, emit_time,
                        f"{file}:{str(pos).zfill(20)}:{str(row).zfill(20)}", txn_id, key_columns, key,
                        before_text, after_text, src.query if op_raw == "t" else None)
            if file is None and pos is None and src.lsn is None and src.change_lsn is None \
                    and src.commit_lsn is None and src.scn is None and src.ord is None:
                return (op, op_raw, src.db, src.schema, src.table or src.collection,
                        None if ts_ms is None else ts_ms * 1_000_000, emit_time, None, txn_id, key_columns, key,
                        before_text, after_text, src.query if op_raw == "t" else None)
        source = msgspec.structs.asdict(src)
        return (op, op_raw, src.db, self.schema_name(source), src.table or src.collection, source_time(source),
                emit_time, self.position(source), txn_id, key_columns, key, before_text, after_text,
                src.query if op_raw == "t" else None)

    def _fast_image(self, raw: msgspec.Raw, types: dict, which: str) -> tuple[Any, Any]:
        """``(JSON text, parsed image)`` of a raw image typed as :meth:`typed_image` types it.

        ``(None, None)`` for a null image, ``(_HAND_BACK, None)`` for one that is not an object.
        """
        if raw is _NULL:
            return None, None
        data = bytes(raw)
        if data == b"null":
            return None, None
        if data[:1] != b"{" or _record_branch(data):
            return _HAND_BACK, None
        row = self.typed_image(values.loads(data), types.get(which), which)
        return values.image(row), row

    def _key_names(self, text: Any) -> Any:
        """The key columns a Kafka key (JSON text) names, as :meth:`key_columns` takes them; ``_HAND_BACK``
        for a key of another shape. A key schema repeated byte for byte is skipped (:class:`_KnownSchema`)."""
        data = text.encode() if text.__class__ is str else text
        known = self.__dict__.setdefault("_known_key", _KnownSchema())
        try:
            rest = known.rest(data)
            if rest is not None:
                payload = _KEY_PAYLOAD.decode(rest).payload
            else:
                try:
                    wrapped = _WRAPPED_KEY.decode(data)
                    payload = wrapped.payload
                    known.remember(data, wrapped.schema, None)
                except msgspec.ValidationError:
                    payload = _PLAIN_KEY.decode(data)
        except (msgspec.DecodeError, msgspec.ValidationError, TypeError, UnicodeEncodeError):
            return _HAND_BACK
        return list(payload) if payload else None

    def _plan(self, schema: msgspec.Raw) -> "_SchemaPlan | None":
        """The :class:`_SchemaPlan` of a raw envelope schema, made once per distinct schema text
        (None for a schema :func:`field_types` cannot read)."""
        if schema is _NULL:
            return _NO_SCHEMA
        data = bytes(schema)
        last = self.__dict__.get("_last_plan")
        if last is not None and last[0] == data:  # a topic's messages repeat one schema: no hashing
            return last[1]
        cache = self.__dict__.setdefault("_plans", {})
        found = cache.get(data, _HAND_BACK)
        if found is _HAND_BACK:
            if len(cache) >= 256:
                cache.clear()
            try:
                found = _SchemaPlan(field_types(values.loads(data)))
            except Exception:  # a schema decode() would stumble on: it takes these messages and says why
                found = None
            cache[data] = found
        self.__dict__["_last_plan"] = (data, found)
        return found

    def change(self, payload: dict[str, Any], schema: dict[str, Any] | None, kafka_key: Any) -> Event:
        from .debezium_mongodb import is_mongodb, mongodb_change  # its own module, which builds on this one

        if is_mongodb(payload):
            return mongodb_change(self, payload, kafka_key)
        op_raw = payload.get("op")
        if op_raw is None:
            raise BadMessage("missing required field op")
        op = OPS.get(op_raw)
        if op is None:
            raise BadMessage(f"unknown op {op_raw!r}")
        source = payload.get("source") or {}
        types = field_types(schema)
        before = self.typed_image(payload.get("before"), types.get("before"), "before")
        after = self.typed_image(payload.get("after"), types.get("after"), "after")
        if op in ("insert", "read") and after is None:
            raise BadMessage(f"op {op_raw!r} without an after image")
        if op == "delete" and before is None:
            raise BadMessage(f"op {op_raw!r} without a before image")
        key_columns = self.key_columns(kafka_key, before, after)
        keyed = before if op == "delete" else after
        event = Event(
            op=op,
            op_raw=op_raw,
            database=source.get("db"),
            schema=self.schema_name(source),
            table=source.get("table") or source.get("collection"),
            event_time=source_time(source),
            emit_time=envelope_time(payload),
            seq=self.position(source),
            txn_id=self.transaction_id(payload, source),
            key_columns=key_columns,
            key=values.key_of(keyed, key_columns),
            before=values.image(before),
            after=values.image(after),
            ddl=source.get("query") if op_raw == "t" else None,
        )
        if types:
            self.declare(event.database, event.schema, event.table, declared_columns(types))
        return event

    def typed_image(self, row: Any, types: dict[str, dict[str, Any]] | None, which: str) -> dict[str, Any] | None:
        """The image with values typed from the schema (unchanged without one)."""
        if row is None:
            return None
        row = expect_object(row, which)
        if not types:
            return dict(row)
        return {name: typed_value(value, types.get(name)) for name, value in row.items()}

    def key_columns(self, kafka_key: Any, before: dict | None, after: dict | None) -> list[str] | None:
        key = kafka_payload(kafka_key)
        if isinstance(key, dict) and key:
            return list(key)
        return None

    def schema_name(self, source: dict[str, Any]) -> str | None:
        return source.get("schema")

    def position(self, source: dict[str, Any]) -> str | None:
        """The connector's log position as a sortable string."""
        file, pos = source.get("file"), source.get("pos")
        if file is not None or pos is not None:
            row = source.get("row") or 0
            if pos.__class__ is int and row.__class__ is int and file.__class__ is str and pos >= 0 and row >= 0 \
                    and not (file.isascii() and file.isdigit()) and file:
                return f"{file}:{str(pos).zfill(20)}:{str(row).zfill(20)}"  # sortable_text's common MySQL case
            return values.sortable_text(file, pos, row)
        if source.get("lsn") is not None:
            return values.sortable(source["lsn"])
        if source.get("change_lsn") is not None or source.get("commit_lsn") is not None:
            return values.sortable_text(source.get("commit_lsn"), source.get("change_lsn"),
                                        source.get("event_serial_no"))
        if source.get("scn") is not None:
            return values.sortable(source["scn"])
        if source.get("ord") is not None:
            return values.sortable_text(source.get("ts_ms"), source["ord"])
        return None

    def transaction_id(self, payload: dict[str, Any], source: dict[str, Any]) -> str | None:
        txn = payload.get("transaction")
        if isinstance(txn, dict) and txn.get("id") not in (None, ""):
            return str(txn["id"])
        for field in ("txId", "gtid", "xid"):
            found = source.get(field)
            if found is not None and found != "":
                return str(found)
        return None

    def tombstone(self, message: Message, op_raw: str) -> Event:
        """A Kafka tombstone, keyed by the Kafka key (table from the key schema name)."""
        key = kafka_payload(message.key)
        names = kafka_schema_name(message.key)
        database = table = None
        parts = names.split(".") if names else []
        if len(parts) >= 4 and parts[-1] == "Key":
            database, table = parts[-3], parts[-2]
        columns = list(key) if isinstance(key, dict) and key else None
        if columns and isinstance(key, dict):
            types = field_types_of(message.key)
            key = {name: typed_value(v, types.get(name)) for name, v in key.items()}
        return Event(
            op="tombstone",
            op_raw=op_raw,
            database=database,
            table=table,
            key_columns=columns,
            key=values.key_of(key, columns) if isinstance(key, dict) else None,
        )

    def transaction_marker(self, payload: dict[str, Any]) -> Event:
        status = payload["status"]
        return Event(
            op="begin" if status == "BEGIN" else "commit",
            op_raw=status,
            event_time=values.ms_to_ns(payload.get("ts_ms")),
            txn_id=None if payload.get("id") in (None, "") else str(payload["id"]),
        )

    def schema_change(self, payload: dict[str, Any]) -> list[Event]:
        """One ``ddl`` event per table a schema change record changes (one event when it names none)."""
        source = payload.get("source") or {}
        if "historyRecord" in payload:  # Flink CDC: the schema history record as JSON text
            record = payload["historyRecord"]
            try:
                record = values.loads(record) if isinstance(record, str) else record
            except ValueError as err:
                raise BadMessage(f"historyRecord is not JSON: {err}") from err
            payload = expect_object(record, "historyRecord")
            source = source or payload.get("source") or {}
        source = expect_object(source, "source")
        ddl = payload.get("ddl")
        if not ddl:
            raise SkipMessage("schema change without DDL text")
        changes = payload.get("tableChanges") or [None]
        if not isinstance(changes, list):
            raise BadMessage(f"tableChanges is not a list: {changes!r}")
        events = []
        for change in changes:
            database = payload.get("databaseName") or source.get("db")
            schema = payload.get("schemaName") or None
            table = source.get("table")
            op_raw, key_columns, columns = "ddl", None, None
            if change is not None:
                change = expect_object(change, "tableChanges item")
                op_raw = str(change.get("type") or "ddl")
                names = table_id_parts(change.get("id"))
                if names:
                    table = names[-1]
                    if len(names) == 3:
                        database, schema = names[0], names[1]
                    elif len(names) == 2:
                        if database in (None, names[0]):
                            database = names[0]
                        else:
                            schema = names[0]
                definition = change.get("table")
                if isinstance(definition, dict):
                    keys = definition.get("primaryKeyColumnNames")
                    key_columns = [str(k) for k in keys] if isinstance(keys, list) and keys else None
                    columns = definition
            events.append(Event(
                op="ddl",
                op_raw=op_raw,
                database=database,
                schema=schema,
                table=table,
                event_time=source_time(source) or values.ms_to_ns(payload.get("ts_ms")),
                seq=self.position(source),
                key_columns=key_columns,
                after=values.image(columns),
                ddl=ddl,
            ))
        return events

    def logical_message(self, payload: dict[str, Any]) -> Event:
        """A logical-decoding message (``op`` ``m``): ``other``, its ``message`` kept as the after image."""
        source = expect_object(payload.get("source") or {}, "source")
        message = payload.get("message")
        return Event(
            op="other",
            op_raw="m",
            database=source.get("db") or None,
            schema=self.schema_name(source) or None,  # a non-transactional message names none ("")
            table=source.get("table") or None,
            event_time=source_time(source),
            emit_time=envelope_time(payload),
            seq=self.position(source),
            txn_id=self.transaction_id(payload, source),
            after=None if message is None else values.image(expect_object(message, "message")),
        )

    # ------------------------------------------------------------ encoding

    connector = "mysql"

    def encode(self, events: pd.DataFrame) -> Iterator[Record]:
        """Wrapped (schema + payload) values with Kafka keys; MySQL-style positions.

        Each value's schema types its columns from that message's own images
        (``values.infer_kinds``), so a column whose values change type along
        the stream is written as each message has it. A ``seq`` of the form
        ``file:pos:row`` is written back as the binlog position, a plain number
        as a PostgreSQL ``lsn``; events without one get a synthetic binlog
        position in input order.
        """
        for number, row in enumerate(rows_of(events)):
            op = row["op"]
            if op == "tombstone":
                yield Record(None, self.encode_key(row, {}))
                continue
            if op in ("begin", "commit"):
                yield Record({"status": "BEGIN" if op == "begin" else "END", "id": row["txn_id"],
                              "ts_ms": values.ns_to_ms(row["event_time"]), "event_count": None,
                              "data_collections": None})
                continue
            if op == "ddl":
                yield Record({"source": self.encode_source(row, number), "ts_ms": values.ns_to_ms(row["event_time"]),
                              "databaseName": row["database"], "schemaName": row["schema"], "ddl": row["ddl"],
                              "tableChanges": table_changes(row)})
                continue
            if op not in _OP_CODES:
                continue
            before = None if row["before"] is None else values.loads(row["before"])
            after = None if row["after"] is None else values.loads(row["after"])
            kinds = values.infer_kinds([before, after])
            payload = {
                "before": before,
                "after": after,
                "source": self.encode_source(row, number),
                "op": _OP_CODES[op],
                "ts_ms": values.ns_to_ms(row["emit_time"]),
                "transaction": {"id": row["txn_id"], "total_order": None, "data_collection_order": None}
                if row["txn_id"] is not None else None,
            }
            yield Record(self.wrap(payload, row, kinds), self.encode_key(row, kinds))

    def encode_source(self, row: dict[str, Any], number: int) -> dict[str, Any]:
        source: dict[str, Any] = {"version": "2.7.0.Final", "connector": self.connector, "name": "cdckit",
                                  "ts_ms": values.ns_to_ms(row["event_time"]), "db": row["database"]}
        if row["schema"] is not None:
            source["schema"] = row["schema"]
        source["table"] = row["table"]
        seq = row["seq"]
        match = _POSITION.match(seq) if seq else None
        if match:
            source.update(file=match["file"], pos=int(match["pos"]), row=int(match["row"]))
        elif seq and seq.isdigit():
            source["lsn"] = int(seq)
        else:
            source.update(file="mysql-bin.000001", pos=4 + 100 * number, row=0)
        return source

    def wrap(self, payload: dict[str, Any], row: dict[str, Any], kinds: dict[str, str]) -> dict[str, Any]:
        name = f"cdckit.{row['database']}.{row['table']}"
        image = {"type": "struct", "optional": True, "name": f"{name}.Value",
                 "fields": [{"type": CONNECT_TYPES[k], "optional": True, "field": c} for c, k in kinds.items()]}
        schema = {"type": "struct", "optional": False, "name": f"{name}.Envelope", "fields": [
            dict(image, field="before"), dict(image, field="after"),
            {"type": "struct", "optional": False, "field": "source", "name": "io.debezium.connector.mysql.Source",
             "fields": []},
            {"type": "string", "optional": False, "field": "op"},
            {"type": "int64", "optional": True, "field": "ts_ms"},
        ]}
        return {"schema": schema, "payload": payload}

    def encode_key(self, row: dict[str, Any], kinds: dict[str, str]) -> Any:
        """The Kafka key (schema + payload) of an event, typed by its values; None without key columns."""
        columns, key = row["key_columns"], row["key"]
        if not columns or key is None:
            return None
        key_values = values.loads(key)
        schema = {"type": "struct", "optional": False, "name": f"cdckit.{row['database']}.{row['table']}.Key",
                  "fields": [{"type": CONNECT_TYPES[values.kind_of_value(v) or "text"], "optional": False,
                              "field": c} for c, v in zip(columns, key_values)]}
        return {"schema": schema, "payload": dict(zip(columns, key_values))}


def table_changes(row: dict[str, Any]) -> list[dict[str, Any]]:
    """A ``ddl`` event's ``tableChanges``: its table with the change type and definition it carries, if any."""
    definition = None if row["after"] is None else values.loads(row["after"])
    if row["table"] is None or (definition is None and row["op_raw"] not in _CHANGE_TYPES):
        return []
    names = [n for n in (row["database"], row["schema"], row["table"]) if n is not None]
    return [{"type": row["op_raw"] if row["op_raw"] in _CHANGE_TYPES else "ALTER",
             "id": ".".join('"' + n.replace('"', '""') + '"' for n in names), "table": definition}]


_CHANGE_TYPES = ("CREATE", "ALTER", "DROP")

#: canonical value kinds (``values.infer_kinds``) -> Kafka Connect schema types
CONNECT_TYPES = {"int": "int64", "float": "double", "bool": "boolean", "text": "string"}


# ---------------------------------------------------------------- the batch decoder's view of a message

_NULL = msgspec.Raw(b"null")
_HAND_BACK = object()


class _Envelope(msgspec.Struct, forbid_unknown_fields=True):
    """The top level of a Debezium message as the batch decoder reads it.

    The images, the wrapped payload and the schema stay raw JSON; an unknown
    top-level field (a transaction marker's ``status``, a schema change's
    ``ddl``...) fails validation and the message goes to :meth:`Debezium.decode`.
    """

    op: str | None = None
    before: msgspec.Raw = _NULL
    after: msgspec.Raw = _NULL
    source: "_Source | None" = None
    ts_ms: int | None = None
    ts_us: int | None = None
    ts_ns: int | None = None
    transaction: dict[str, Any] | None = None
    payload: msgspec.Raw = _NULL
    schema: msgspec.Raw = _NULL


class _Source(msgspec.Struct):
    """The ``source`` fields the family's helpers read (others are skipped unparsed)."""

    db: Any = None
    schema: Any = None
    namespace: Any = None
    table: Any = None
    collection: Any = None
    ts_ms: Any = None
    ts_us: Any = None
    ts_ns: Any = None
    file: Any = None
    pos: Any = None
    row: Any = None
    lsn: Any = None
    change_lsn: Any = None
    commit_lsn: Any = None
    event_serial_no: Any = None
    scn: Any = None
    ord: Any = None
    txId: Any = None
    gtid: Any = None
    xid: Any = None
    query: Any = None


_EMPTY_SOURCE = _Source()

_ENVELOPE = msgspec.json.Decoder(_Envelope)


class _PlainSource(msgspec.Struct):
    """``source`` of the usual message: a binlog position or none, no transaction or other clocks.

    Any of the typed-``None`` fields holding a value makes the message take the general path.
    """

    db: str | None = None
    schema: str | None = None
    table: str | None = None
    ts_ms: int | None = None
    ts_us: int | None = None
    ts_ns: int | None = None
    file: str | None = None
    pos: Annotated[int, msgspec.Meta(ge=0)] | None = None
    row: Annotated[int, msgspec.Meta(ge=0)] | None = None
    collection: None = None
    lsn: None = None
    change_lsn: None = None
    commit_lsn: None = None
    event_serial_no: None = None
    scn: None = None
    ord: None = None
    txId: None = None
    gtid: None = None
    xid: None = None


class _Plain(msgspec.Struct, forbid_unknown_fields=True):
    """The usual Debezium message, unwrapped: only these fields, and these types."""

    op: Literal["c", "u", "d", "r"]
    source: _PlainSource
    before: msgspec.Raw = _NULL
    after: msgspec.Raw = _NULL
    ts_ms: int | None = None
    ts_us: int | None = None
    ts_ns: int | None = None
    transaction: None = None


_PLAIN = msgspec.json.Decoder(_Plain)


class _Wrapped(msgspec.Struct, forbid_unknown_fields=True):
    """The usual message in Kafka Connect's schema/payload wrapper: the schema stays raw (read once per
    distinct text by :meth:`Debezium._plan`), the payload is :class:`_Plain`."""

    payload: _Plain
    schema: msgspec.Raw = _NULL


_WRAPPED = msgspec.json.Decoder(_Wrapped)


class _PayloadOnly(msgspec.Struct, forbid_unknown_fields=True):
    """What follows a known schema block in a wrapped message (see :class:`_KnownSchema`)."""

    payload: _Plain


_PAYLOAD = msgspec.json.Decoder(_PayloadOnly)


def field_kind(field: dict[str, Any]) -> tuple[str, str] | None:
    """``(raw, kind)`` of a Kafka Connect field schema (None for one that names no type known here): the raw
    text is the type, the logical type's name and its parameters.

    >>> field_kind({"type": "int64", "name": "io.debezium.time.MicroTimestamp", "field": "t"})
    ('int64 io.debezium.time.MicroTimestamp', 'timestamp(us)')
    >>> field_kind({"type": "bytes", "name": "org.apache.kafka.connect.data.Decimal",
    ...             "parameters": {"scale": "2", "connect.decimal.precision": "10"}})
    ('bytes org.apache.kafka.connect.data.Decimal(scale=2,connect.decimal.precision=10)', 'decimal(10,2)')
    """
    kind_name, name = field.get("type"), field.get("name")
    if kind_name.__class__ is not str:
        return None
    raw = kind_name if name.__class__ is not str else f"{kind_name} {name}"
    parameters = field.get("parameters")
    if parameters.__class__ is dict and parameters:
        raw += "(" + ",".join(f"{key}={value}" for key, value in parameters.items()) + ")"
    if name == _DECIMAL:
        parameters = parameters if parameters.__class__ is dict else {}
        scale, precision = parameters.get("scale", ""), parameters.get("connect.decimal.precision", "")
        return raw, f"decimal({precision},{scale})"
    kind = LOGICAL_KINDS.get(name) if name.__class__ is str else None
    if kind is None:
        kind = SCHEMA_KINDS.get(kind_name)
    return None if kind is None else (raw, kind)


def declared_columns(types: dict[str, dict[str, dict[str, Any]]]) -> dict[str, tuple[str, str]]:
    """The column types an envelope schema declares (``types``: :func:`field_types`): the after image's
    columns, then those only the before image has."""
    columns: dict[str, tuple[str, str]] = {}
    for which in ("after", "before"):
        for column, field in (types.get(which) or {}).items():
            if column not in columns and column.__class__ is str:
                found = field_kind(field)
                if found is not None:
                    columns[column] = found
    return columns



class _KnownSchema:
    """The schema block the last wrapped message began with, as bytes.

    A topic's messages repeat one schema byte for byte; a message that
    begins with the same ``{"schema":...,`` bytes is read from its payload
    on (:meth:`rest`), so the schema is neither scanned nor parsed again.
    """

    def __init__(self) -> None:
        self.head: bytes | None = None
        self.plan: Any = None

    def rest(self, data: bytes) -> bytes | None:
        """``data`` without the known schema block, as a JSON object text; None when it begins otherwise."""
        head = self.head
        if head is None or not data.startswith(head):
            return None
        return b"{" + data[len(head):]

    def remember(self, data: bytes, schema: msgspec.Raw, plan: Any) -> None:
        head = b'{"schema":' + bytes(schema) + b","
        if data.startswith(head):
            self.head, self.plan = head, plan

#: The value a JSON column that the schema types as a number or boolean may hold and need no retyping.
_UNTYPED_NUMBER = int | float | bool | None


class _SchemaPlan:
    """What an envelope schema asks of each image, worked out once per distinct schema.

    ``types`` is :func:`field_types` of the schema, ``declared`` the column
    types it declares (:func:`declared_columns`). An image can be taken as
    it stands (:meth:`untyped`) when no column is a decimal (always retyped)
    and no column typed as a number or boolean holds text (the only values
    :func:`typed_value` changes): a msgspec check of just those columns.
    """

    def __init__(self, types: dict[str, dict[str, dict[str, Any]]]) -> None:
        self.types = types
        self.declared = declared_columns(types)
        self._checks: dict[str, Any] = {}
        for which in ("before", "after"):
            columns = types.get(which) or {}
            if any(f.get("name") in (_DECIMAL, _VARIABLE_DECIMAL) for f in columns.values()):
                self._checks[which] = False
                continue
            numbers = [name for name, f in columns.items() if f.get("type") in _RETYPED_KINDS]
            if numbers:
                check = msgspec.defstruct("_Numbers", [(f"c{i}", _UNTYPED_NUMBER, None) for i in range(len(numbers))],
                                          rename={f"c{i}": name for i, name in enumerate(numbers)})
                self._checks[which] = msgspec.json.Decoder(check)

    def untyped(self, raw: msgspec.Raw, which: str) -> bool:
        """True when typing would leave the raw image ``which`` as it is."""
        check = self._checks.get(which)
        if check is None or raw is _NULL:
            return True
        if check is False:
            return raw == _NULL
        try:
            check.decode(raw)
        except (msgspec.DecodeError, msgspec.ValidationError):
            return raw == _NULL
        return True


_NO_SCHEMA = _SchemaPlan({})
_RETYPED_KINDS = _INT_TYPES | _FLOAT_TYPES | {"boolean"}


class _WrappedKey(msgspec.Struct, forbid_unknown_fields=True):
    """A Kafka key in the schema/payload wrapper; only the payload's column names are wanted."""

    payload: dict[str, Any]
    schema: msgspec.Raw = _NULL


_WRAPPED_KEY = msgspec.json.Decoder(_WrappedKey)
_PLAIN_KEY = msgspec.json.Decoder(dict[str, Any])


class _KeyPayload(msgspec.Struct, forbid_unknown_fields=True):
    payload: dict[str, Any]


_KEY_PAYLOAD = msgspec.json.Decoder(_KeyPayload)


def _key_of_raw(raw: msgspec.Raw, columns: list[str]) -> str | None:
    """:func:`values.key_of` a raw image that needs no typing (see :meth:`_SchemaPlan.untyped`)."""
    if raw is _NULL:
        return None
    return values.key_of(orjson.loads(bytes(raw)), columns)


def _raw_image_text(raw: msgspec.Raw) -> Any:
    """The JSON text of a raw image that needs no typing: None for null, ``_HAND_BACK`` for anything but an
    object or for an object holding a number a double cannot carry."""
    if raw is _NULL:
        return None
    data = bytes(raw)
    if data[:1] == b"{" and not has_long_number(data) and not _record_branch(data):
        return orjson.dumps(orjson.loads(data)).decode()  # as values.image writes it (orjson's error: handed back)
    return None if data == b"null" else _HAND_BACK


def _record_branch(data: bytes) -> bool:
    """True when a raw image's first field has a dotted name and an object value, as Avro's record union
    branch has (:func:`is_avro_json` judges it: the batch decoder hands such an image back)."""
    end = data.find(b'":')
    return end > 0 and b"." in data[1:end] and data[end + 2:end + 12].lstrip()[:1] == b"{"


# ---------------------------------------------------------------- helpers shared by the family


def unwrap(value: Any) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """``(payload, schema)`` of a value with or without the schema/payload wrapper."""
    if not isinstance(value, dict):
        return None, None
    payload = value.get("payload")
    if isinstance(payload, dict) and value.keys() <= {"schema", "payload"}:
        schema = value.get("schema")
        return payload, schema if isinstance(schema, dict) else None
    return value, None


def envelope_shape(payload: dict[str, Any]) -> tuple[str, ...] | None:
    """The evidence that ``payload`` is a Debezium-style envelope, or None."""
    op = payload.get("op")
    if op not in OPS:
        return None
    if not ({"before", "after"} & payload.keys()):  # a truncate or a logical message carries no images
        if op not in ("t", "m") or not isinstance(payload.get("source"), dict):
            return None
        return ("op=" + op, "source", "message" if op == "m" else "no images")
    evidence = ["op=" + op]
    evidence += [f for f in ("before", "after", "source") if f in payload]
    return tuple(evidence)


#: Avro's primitive and complex type names: in Avro's JSON encoding a union value is ``{type name: value}``.
AVRO_TYPES = frozenset({"null", "boolean", "int", "long", "float", "double", "bytes", "string", "array", "map"})


def is_avro_json(payload: dict[str, Any]) -> bool:
    """True when a Debezium payload is written in Avro's JSON encoding (``kafka-avro-console-consumer``).

    Its images are the union branch ``{"<server>.<db>.<table>.Value": {...}}`` and nullable fields
    are ``{"long": 5}``-style objects; a plain Debezium message has neither.

    >>> is_avro_json({"op": "c", "after": {"s.inv.t.Value": {"id": 1}}}), is_avro_json({"op": "c", "after": {"id": 1}})
    (True, False)
    """
    for name in ("after", "before"):
        image = payload.get(name)
        if isinstance(image, dict) and len(image) == 1:
            (branch, inner), = image.items()
            if "." in branch and isinstance(inner, dict):
                return True
    stamp = payload.get("ts_ms")
    return isinstance(stamp, dict) and len(stamp) == 1 and next(iter(stamp)) in ("long", "int")


def avro_unwrapped(value: Any) -> Any:
    """A value of Avro's JSON encoding with every union branch ``{type: value}`` replaced by its value
    (``bytes`` as Base64 text, as binary is kept elsewhere).

    >>> avro_unwrapped({"after": {"s.t.Value": {"id": 1, "email": {"string": "a@b"}, "raw": {"bytes": "\u0001"}}}})
    {'after': {'id': 1, 'email': 'a@b', 'raw': 'AQ=='}}
    """
    if isinstance(value, dict):
        if len(value) == 1:
            (branch, inner), = value.items()
            if branch == "bytes" and isinstance(inner, str):
                try:
                    return base64.b64encode(inner.encode("latin-1")).decode()
                except UnicodeEncodeError:
                    return inner
            if branch in AVRO_TYPES or ("." in branch and isinstance(inner, dict)):
                return avro_unwrapped(inner)
        return {name: avro_unwrapped(inner) for name, inner in value.items()}
    if isinstance(value, list):
        return [avro_unwrapped(inner) for inner in value]
    return value


def table_id_parts(table_id: Any) -> list[str]:
    """The names in a schema change's table ``id`` (``"db"."table"`` or ``db.schema.table``, quotes optional).

    >>> table_id_parts('"inventory"."customers"'), table_id_parts("db.public.t"), table_id_parts('"a.b".c')
    (['inventory', 'customers'], ['db', 'public', 't'], ['a.b', 'c'])
    """
    if not isinstance(table_id, str) or not table_id:
        return []
    return [part[1:-1].replace('""', '"') if part.startswith('"') else part
            for part in re.findall(r'"(?:[^"]|"")*"|[^.]+', table_id)]


def field_types(schema: dict[str, Any] | None) -> dict[str, dict[str, dict[str, Any]]]:
    """``{"before": {column: field schema}, "after": {...}}`` from an envelope schema."""
    if not isinstance(schema, dict):
        return {}
    found: dict[str, dict[str, dict[str, Any]]] = {}
    for field in schema.get("fields") or []:
        if isinstance(field, dict) and field.get("field") in ("before", "after"):
            found[field["field"]] = {
                f["field"]: f for f in field.get("fields") or [] if isinstance(f, dict) and "field" in f
            }
    return found


def field_types_of(keyed: Any) -> dict[str, dict[str, Any]]:
    """Column schemas of a wrapped Kafka key."""
    if isinstance(keyed, dict) and isinstance(keyed.get("schema"), dict):
        return {f["field"]: f for f in keyed["schema"].get("fields") or [] if isinstance(f, dict) and "field" in f}
    return {}


def typed_value(value: Any, field: dict[str, Any] | None) -> Any:
    """One value typed by its Kafka Connect field schema."""
    if field is None or value is None:
        return value
    kind = field.get("type")
    name = field.get("name")
    if name == _DECIMAL and isinstance(value, str):
        scale = (field.get("parameters") or {}).get("scale", "0")
        return _decimal_from_bytes(value, int(scale))
    if name == _VARIABLE_DECIMAL and isinstance(value, dict):
        return _decimal_from_bytes(value.get("value"), int(value.get("scale") or 0))
    if kind in _INT_TYPES:
        return values.coerce(value, "int")
    if kind in _FLOAT_TYPES:
        return values.coerce(value, "float")
    if kind == "boolean":
        return values.coerce(value, "bool")
    return value


def _decimal_from_bytes(b64: Any, scale: int) -> Any:
    if not isinstance(b64, str):
        return b64
    try:
        raw = base64.b64decode(b64, validate=True)
    except (binascii.Error, ValueError):
        return values.exact_number(b64)
    unscaled = int.from_bytes(raw, "big", signed=True)
    return values.exact_number(format(Decimal(unscaled).scaleb(-scale), "f"))


def kafka_payload(key: Any) -> Any:
    """The content of a Kafka key, unwrapping a schema/payload wrapper."""
    if isinstance(key, dict) and "payload" in key and key.keys() <= {"schema", "payload"}:
        return key["payload"]
    return key


def kafka_schema_name(key: Any) -> str | None:
    if isinstance(key, dict) and isinstance(key.get("schema"), dict):
        return key["schema"].get("name")
    return None


def source_time(source: dict[str, Any]) -> int | None:
    if source.get("ts_ns") is not None:
        return int(source["ts_ns"])
    if source.get("ts_us") is not None:
        return int(source["ts_us"]) * 1_000
    return values.ms_to_ns(source.get("ts_ms"))


def envelope_time(payload: dict[str, Any]) -> int | None:
    if payload.get("ts_ns") is not None:
        return int(payload["ts_ns"])
    if payload.get("ts_us") is not None:
        return int(payload["ts_us"]) * 1_000
    return values.ms_to_ns(payload.get("ts_ms"))


#: Synthetic lines start at this epoch millisecond (see cdckit.samples.synthetic).
SYNTHETIC_START_MS = 1_700_000_000_000


def synthetic_line(i: int) -> bytes:
    """The ``i``-th change of a customers table (MySQL connector, unwrapped); every fourth an update."""
    row = {"id": i, "first_name": f"first{i % 977}", "last_name": f"last{i % 541}", "email": f"user{i}@example.com",
           "balance": round(i * 0.37 % 10_000, 2), "tier": ("bronze", "silver", "gold")[i % 3],
           "street": f"{i % 9000 + 1} Long Street", "city": ("Lisbon", "Osaka", "Quito", "Tromsø")[i % 4],
           "phone": f"+351 21 {i % 1_000_000:06d}", "company": f"Company {i % 3000} Ltd",
           "website": f"https://company{i % 3000}.example.com/people/{i}", "country_code": "PT",
           "created_at": SYNTHETIC_START_MS + i, "active": i % 7 != 0, "note": None if i % 5 else "called support"}
    before = dict(row, balance=round(row["balance"] - 1.5, 2)) if i % 4 == 1 else None
    return orjson.dumps({
        "before": before, "after": row,
        "source": {"version": "2.7.0.Final", "connector": "mysql", "name": "bench", "ts_ms": SYNTHETIC_START_MS + i,
                   "snapshot": "false", "db": "shop", "table": "customers" if i % 10 else "vip_customers",
                   "server_id": 1, "gtid": None, "file": "mysql-bin.000001", "pos": 4 + 200 * i, "row": 0,
                   "thread": 7, "query": None},
        "op": "u" if before else "c", "ts_ms": SYNTHETIC_START_MS + 100 + i, "transaction": None,
    })
