"""Debezium PostgreSQL changes written twice, for tests: through the JSON converter and through the Avro converter.

The JSON side is written by hand as JsonConverter (``schemas.enable=true``) writes it: the Connect schema of
the key and the envelope, and the payload (bytes and decimals in Base64). The Avro side is written as
Confluent's Avro converter writes the same Connect schema (``connect.*`` properties on the Avro types, a
decimal as ``bytes`` with ``logicalType: decimal``), each key and value framed (magic byte, schema id, body).
Neither side is made by cdckit.
"""

from __future__ import annotations

import base64
import copy
import io
import json
from typing import Any

import fastavro

from cdckit.io.kafka import record_line
from cdckit.io.registered_schema import RegisteredSchema

TOPIC = "pg.public.t"
KEY_ID, VALUE_ID = 3, 8

# ------------------------------------------------------------------ the Connect schemas, as JsonConverter writes them

VALUE_FIELDS = [
    {"type": "int32", "optional": False, "default": 0, "field": "id"},
    {"type": "bytes", "optional": True, "name": "org.apache.kafka.connect.data.Decimal", "version": 1,
     "parameters": {"scale": "2", "connect.decimal.precision": "10"}, "field": "price"},
    {"type": "int16", "optional": True, "field": "small"},
    {"type": "int64", "optional": True, "name": "io.debezium.time.MicroTimestamp", "version": 1, "field": "ts"},
    {"type": "int32", "optional": True, "name": "io.debezium.time.Date", "version": 1, "field": "day"},
    {"type": "bytes", "optional": True, "field": "pic"},
    {"type": "string", "optional": True, "field": "name"},
    {"type": "float64", "optional": True, "field": "ratio"},
    {"type": "boolean", "optional": True, "field": "ok"},
    {"type": "array", "items": {"type": "string", "optional": True}, "optional": True, "field": "tags"},
]
SOURCE_FIELDS = [
    {"type": "string", "optional": False, "field": "version"},
    {"type": "string", "optional": False, "field": "connector"},
    {"type": "string", "optional": False, "field": "name"},
    {"type": "int64", "optional": False, "field": "ts_ms"},
    {"type": "string", "optional": True, "name": "io.debezium.data.Enum", "version": 1,
     "parameters": {"allowed": "true,first,first_in_data_collection,last_in_data_collection,last,false,incremental"},
     "default": "false", "field": "snapshot"},
    {"type": "string", "optional": False, "field": "db"},
    {"type": "string", "optional": False, "field": "schema"},
    {"type": "string", "optional": False, "field": "table"},
    {"type": "int64", "optional": True, "field": "txId"},
    {"type": "int64", "optional": True, "field": "lsn"},
]


def json_envelope_schema(value_fields: list[dict[str, Any]] = VALUE_FIELDS) -> dict[str, Any]:
    image = {"type": "struct", "fields": value_fields, "optional": True, "name": f"{TOPIC}.Value"}
    return {"type": "struct", "fields": [
        {**image, "field": "before"}, {**image, "field": "after"},
        {"type": "struct", "fields": SOURCE_FIELDS, "optional": False, "name": "io.debezium.connector.postgresql.Source",
         "field": "source"},
        {"type": "string", "optional": False, "field": "op"},
        {"type": "int64", "optional": True, "field": "ts_ms"}],
        "optional": False, "name": f"{TOPIC}.Envelope", "version": 2}


JSON_KEY_SCHEMA = {"type": "struct", "fields": [{"type": "int32", "optional": False, "default": 0, "field": "id"}],
                   "optional": False, "name": f"{TOPIC}.Key"}

# ------------------------------------------------------------------ the same schemas as the Avro converter writes them


def _avro_type(field: dict[str, Any]) -> Any:
    """The Avro type AvroData gives a Connect field."""
    kind = field["type"]
    if kind == "array":
        inner = _avro_type(field["items"])
        avro: Any = {"type": "array", "items": inner}
    else:
        base = {"int8": "int", "int16": "int", "int32": "int", "int64": "long", "float32": "float", "float64": "double",
                "boolean": "boolean", "string": "string", "bytes": "bytes"}[kind]
        avro = {"type": base}
        if kind in ("int8", "int16"):
            avro["connect.type"] = kind
        if "name" in field:
            avro["connect.name"] = field["name"]
        if "version" in field:
            avro["connect.version"] = field["version"]
        if "parameters" in field:
            avro["connect.parameters"] = field["parameters"]
        if "default" in field:
            avro["connect.default"] = field["default"]
        if field.get("name") == "org.apache.kafka.connect.data.Decimal":
            avro.update(logicalType="decimal", precision=int(field["parameters"]["connect.decimal.precision"]),
                        scale=int(field["parameters"]["scale"]))
        if len(avro) == 1:
            avro = base
    return ["null", avro] if field["optional"] else avro


def _avro_field(field: dict[str, Any]) -> dict[str, Any]:
    out = {"name": field["field"], "type": _avro_type(field)}
    if field["optional"]:
        out["default"] = None
    elif "default" in field:
        out["default"] = field["default"]
    return out


def avro_envelope_schema(value_fields: list[dict[str, Any]] = VALUE_FIELDS) -> dict[str, Any]:
    value = {"type": "record", "name": "Value", "namespace": TOPIC, "fields": [_avro_field(f) for f in value_fields],
             "connect.name": f"{TOPIC}.Value"}
    source = {"type": "record", "name": "Source", "namespace": "io.debezium.connector.postgresql",
              "fields": [_avro_field(f) for f in SOURCE_FIELDS], "connect.name": "io.debezium.connector.postgresql.Source"}
    snapshot = next(f for f in source["fields"] if f["name"] == "snapshot")
    snapshot["type"] = [snapshot["type"][1], "null"]  # Debezium's snapshot union puts its default branch first
    snapshot["default"] = "false"
    return {"type": "record", "name": "Envelope", "namespace": TOPIC, "fields": [
        {"name": "before", "type": ["null", value], "default": None},
        {"name": "after", "type": ["null", "Value"], "default": None},
        {"name": "source", "type": source},
        {"name": "op", "type": "string"},
        {"name": "ts_ms", "type": ["null", "long"], "default": None}],
        "connect.version": 2, "connect.name": f"{TOPIC}.Envelope"}


AVRO_KEY_SCHEMA = {"type": "record", "name": "Key", "namespace": TOPIC,
                   "fields": [{"name": "id", "type": {"type": "int", "connect.default": 0}, "default": 0}],
                   "connect.name": f"{TOPIC}.Key"}

# ------------------------------------------------------------------ the changes


def _source(lsn: int, snapshot: str = "false") -> dict[str, Any]:
    return {"version": "3.6.3.Final", "connector": "postgresql", "name": "pg", "ts_ms": 1_700_000_000_000 + lsn,
            "snapshot": snapshot, "db": "shop", "schema": "public", "table": "t", "txId": 700 + lsn // 10, "lsn": lsn}


def _row(id_: int, **values: Any) -> dict[str, Any]:
    row = {"id": id_, "price": None, "small": None, "ts": None, "day": None, "pic": None, "name": None,
           "ratio": None, "ok": None, "tags": None}
    row.update(values)
    return row


def changes() -> list[tuple[dict[str, Any], dict[str, Any] | None]]:
    """(key, envelope or None for a tombstone) in Avro's terms: bytes as bytes."""
    full = _row(1, price=(12345).to_bytes(3, "big", signed=True), small=-3, ts=1_700_000_000_123_456, day=19_000,
                pic=b"\xff\x00\x01", name="é\n\u0000x", ratio=2.5, ok=True, tags=["a", None])
    return [
        ({"id": 1}, {"before": None, "after": full, "source": _source(10, "first"), "op": "r", "ts_ms": 1}),
        ({"id": 2}, {"before": None, "after": _row(2, price=(-1).to_bytes(1, "big", signed=True), name=""),
                     "source": _source(20), "op": "c", "ts_ms": 2}),
        ({"id": 1}, {"before": full, "after": {**full, "small": 4, "tags": []}, "source": _source(30), "op": "u",
                     "ts_ms": 3}),
        ({"id": 2}, {"before": _row(2), "after": None, "source": _source(40), "op": "d", "ts_ms": 4}),
        ({"id": 2}, None),
    ]


def _json_value(value: Any) -> Any:
    if isinstance(value, bytes):
        return base64.b64encode(value).decode()
    if isinstance(value, dict):
        return {k: _json_value(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_json_value(v) for v in value]
    return value


def json_lines(rows: list[tuple[dict[str, Any], dict[str, Any] | None]], value_fields=VALUE_FIELDS) -> bytes:
    """The changes as kcat -J lines of the JSON converter's records."""
    out = []
    for offset, (key, value) in enumerate(rows):
        key_text = json.dumps({"schema": JSON_KEY_SCHEMA, "payload": key})
        value_text = None if value is None else json.dumps(
            {"schema": json_envelope_schema(value_fields), "payload": _json_value(value)})
        out.append(json.dumps({"topic": TOPIC, "partition": 0, "offset": offset, "tstype": "create",
                               "ts": 1_700_000_000_000, "key": key_text, "payload": value_text}))
    return ("\n".join(out) + "\n").encode()


def frame(schema_id: int, schema: Any, datum: Any) -> bytes:
    """One record in Confluent's wire format: magic byte, schema id, Avro body."""
    body = io.BytesIO()
    fastavro.schemaless_writer(body, fastavro.parse_schema(copy.deepcopy(schema)), datum)
    return b"\x00" + schema_id.to_bytes(4, "big") + body.getvalue()


def avro_records(rows, value_id: int = VALUE_ID, value_schema: Any = None) -> list[tuple[bytes, bytes | None]]:
    schema = value_schema or avro_envelope_schema()
    return [(frame(KEY_ID, AVRO_KEY_SCHEMA, key), None if value is None else frame(value_id, schema, value))
            for key, value in rows]


def avro_lines(records: list[tuple[bytes, bytes | None]], first_offset: int = 0) -> bytes:
    """Framed records as lines of cdckit's binary capture layout."""
    return b"".join(record_line(TOPIC, 0, first_offset + i, (1, 1_700_000_000_000), key, value, None) + b"\n"
                    for i, (key, value) in enumerate(records))


def registered(value_schema: Any = None, value_id: int = VALUE_ID) -> list[RegisteredSchema]:
    return [RegisteredSchema(KEY_ID, "AVRO", json.dumps(AVRO_KEY_SCHEMA), f"{TOPIC}-key", 1),
            RegisteredSchema(value_id, "AVRO", json.dumps(value_schema or avro_envelope_schema()), f"{TOPIC}-value", 1)]
