"""The Debezium envelope: its field values, its Kafka Connect schema types, and the helpers the family shares.

Used by :mod:`.decode`, :mod:`.fast_path` and :mod:`.encode`, and by the
dialects built on Debezium (Arcion, Lindorm, Debezium MongoDB, Debezium
flat).

>>> unwrap({"schema": {}, "payload": {"op": "c"}})
({'op': 'c'}, {})
>>> envelope_shape({"op": "c", "after": {"id": 1}, "source": {}})
('op=c', 'after', 'source')
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import Any

from ... import times, values
from ..base import BadMessage

__all__ = [
    "OPS",
    "KNOWN_CONNECTORS",
    "LOGICAL_KINDS",
    "SCHEMA_KINDS",
    "AVRO_TYPES",
    "field_kind",
    "declared_columns",
    "unwrap",
    "envelope_shape",
    "is_avro_json",
    "avro_unwrapped",
    "table_id_parts",
    "field_types",
    "field_types_of",
    "typed_value",
    "kafka_payload",
    "kafka_schema_name",
    "source_time",
    "envelope_time",
    "change_op",
]

OPS = {"c": "insert", "u": "update", "d": "delete", "r": "read", "t": "truncate", "m": "other"}

KNOWN_CONNECTORS = frozenset(
    {
        "mysql",
        "mariadb",
        "postgresql",
        "sqlserver",
        "oracle",
        "mongodb",
        "db2",
        "informix",
        "vitess",
        "spanner",
        "cassandra",
        "jdbc",
        "ibmi",
    }
)
INT_TYPES = frozenset({"int8", "int16", "int32", "int64"})
FLOAT_TYPES = frozenset({"float", "float32", "float64", "double"})
DECIMAL_TYPE = "org.apache.kafka.connect.data.Decimal"
VARIABLE_DECIMAL = "io.debezium.data.VariableScaleDecimal"
#: MySQL's ``BIT(n)``, n > 1: bytes, least significant first (``BIT(1)`` is a boolean).
BITS = "io.debezium.data.Bits"
#: The times of day, as a number of this many nanoseconds after midnight (MySQL's ``TIME`` may lie outside).
TIME_UNITS = {
    "io.debezium.time.Time": 1_000_000,
    "org.apache.kafka.connect.data.Time": 1_000_000,
    "io.debezium.time.MicroTime": 1_000,
    "io.debezium.time.NanoTime": 1,
}
#: The logical types whose values :func:`typed_value` may rewrite (the fast path retypes their images).
RETYPED_NAMES = frozenset({DECIMAL_TYPE, VARIABLE_DECIMAL, BITS, *TIME_UNITS})
#: Kafka Connect logical types (a field's ``name``) -> the kind declared (:mod:`cdckit.column_types`);
#: ``org.apache.kafka.connect.data.Decimal`` is ``decimal(P,S)`` from its parameters (:func:`field_kind`).
LOGICAL_KINDS = {
    "io.debezium.time.Date": "date",
    "org.apache.kafka.connect.data.Date": "date",
    "io.debezium.time.Timestamp": "timestamp(ms)",
    "org.apache.kafka.connect.data.Timestamp": "timestamp(ms)",
    "io.debezium.time.MicroTimestamp": "timestamp(us)",
    "io.debezium.time.NanoTimestamp": "timestamp(ns)",
    "io.debezium.time.ZonedTimestamp": "timestamp",
    "io.debezium.time.Time": "time(ms)",
    "org.apache.kafka.connect.data.Time": "time(ms)",
    "io.debezium.time.MicroTime": "time(us)",
    "io.debezium.time.NanoTime": "time(ns)",
    "io.debezium.time.ZonedTime": "time",
    VARIABLE_DECIMAL: "decimal",
    "io.debezium.data.Json": "json",
    "io.debezium.data.Enum": "enum",
    "io.debezium.data.EnumSet": "enum",
    BITS: "int",
}
#: Kafka Connect schema types -> the kind declared for a field with no logical type known here.
SCHEMA_KINDS = {
    "int8": "int",
    "int16": "int",
    "int32": "int",
    "int64": "int",
    "float32": "float",
    "float64": "float",
    "float": "float",
    "double": "float",
    "boolean": "bool",
    "string": "string",
    "bytes": "binary",
    "struct": "json",
    "array": "json",
    "map": "json",
}


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
    if name == DECIMAL_TYPE:
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


def unwrap(value: Any) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """``(payload, schema)`` of a value with or without the schema/payload wrapper."""
    if not isinstance(value, dict):
        return None, None
    payload = value.get("payload")
    if isinstance(payload, dict) and value.keys() <= {"schema", "payload"}:
        schema = value.get("schema")
        return payload, schema if isinstance(schema, dict) else None
    return value, None


def change_op(payload: dict[str, Any]) -> tuple[Any, str]:
    """``(op_raw, op)`` of a change event: its ``op`` and the canonical op it names, or :class:`BadMessage`.

    >>> change_op({"op": "u"})
    ('u', 'update')
    >>> change_op({"op": "x"})
    Traceback (most recent call last):
    ...
    cdckit.dialects.base.BadMessage: unknown op 'x'
    """
    op_raw = payload.get("op")
    if op_raw is None:
        raise BadMessage("missing required field op")
    op = OPS.get(op_raw)
    if op is None:
        raise BadMessage(f"unknown op {op_raw!r}")
    return op_raw, op


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
            ((branch, inner),) = image.items()
            if "." in branch and isinstance(inner, dict):
                return True
    stamp = payload.get("ts_ms")
    return isinstance(stamp, dict) and len(stamp) == 1 and next(iter(stamp)) in ("long", "int")


#: Debezium's records whose fields of type ``bytes`` Avro's JSON encoding writes as a plain string when the
#: field is not nullable (``VariableScaleDecimal.value``, a geometry's ``wkb``): ``{field names: bytes fields}``.
_BYTES_FIELDS = {
    frozenset({"scale", "value"}): ("value",),
    frozenset({"wkb", "srid"}): ("wkb",),
    frozenset({"x", "y", "wkb", "srid"}): ("wkb",),
}


def avro_unwrapped(value: Any) -> Any:
    """A value of Avro's JSON encoding with every union branch ``{type: value}`` replaced by its value
    (``bytes`` as Base64 text, as binary is kept elsewhere). A ``bytes`` field of Debezium's own records
    is Base64 too where it is not a union (a plain string of code points U+0000..U+00FF): a
    ``VariableScaleDecimal``'s ``value``, a geometry's ``wkb``.

    >>> avro_unwrapped({"after": {"s.t.Value": {"id": 1, "email": {"string": "a@b"}, "raw": {"bytes": "\u0001"}}}})
    {'after': {'id': 1, 'email': 'a@b', 'raw': 'AQ=='}}
    >>> avro_unwrapped({"n": {"io.debezium.data.VariableScaleDecimal": {"scale": 2, "value": "\u0001\u00e2"}}})
    {'n': {'scale': 2, 'value': 'AeI='}}
    >>> avro_unwrapped({"after": {"s.t.Value": {"scale": 2, "value": "text"}}})  # a table's row: kept
    {'after': {'scale': 2, 'value': 'text'}}
    """
    return _unwrapped(value, False)


def _unwrapped(value: Any, row: bool) -> Any:
    """:func:`avro_unwrapped`; ``row``: ``value`` is a table's row (a ``*.Value``/``*.Key`` record), whose
    columns may happen to be named like a Debezium record's fields."""
    if isinstance(value, dict):
        if len(value) == 1:
            ((branch, inner),) = value.items()
            if branch == "bytes" and isinstance(inner, str):
                return _avro_bytes(inner)
            if branch in AVRO_TYPES or ("." in branch and isinstance(inner, dict)):
                return _unwrapped(inner, branch.endswith((".Value", ".Key")))
        out = {name: _unwrapped(inner, False) for name, inner in value.items()}
        fields = _BYTES_FIELDS.get(frozenset(out)) if 1 < len(out) < 5 and not row else None
        for name in fields or ():
            if isinstance(value[name], str):  # written plain (not a union): bytes as code points
                out[name] = _avro_bytes(value[name])
        return out
    if isinstance(value, list):
        return [_unwrapped(inner, False) for inner in value]
    return value


def _avro_bytes(text: str) -> str:
    """Avro JSON bytes (one code point U+0000..U+00FF a byte) as Base64; other text is kept."""
    try:
        return base64.b64encode(text.encode("latin-1")).decode()
    except UnicodeEncodeError:
        return text


def table_id_parts(table_id: Any) -> list[str]:
    """The names in a schema change's table ``id`` (``"db"."table"`` or ``db.schema.table``, quotes optional).

    >>> table_id_parts('"inventory"."customers"'), table_id_parts("db.public.t"), table_id_parts('"a.b".c')
    (['inventory', 'customers'], ['db', 'public', 't'], ['a.b', 'c'])
    """
    if not isinstance(table_id, str) or not table_id:
        return []
    return [
        part[1:-1].replace('""', '"') if part.startswith('"') else part
        for part in re.findall(r'"(?:[^"]|"")*"|[^.]+', table_id)
    ]


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
    """One value typed by its Kafka Connect field schema.

    ``io.debezium.data.Bits`` (MySQL's ``BIT(n)``: bytes, least significant
    first, Base64 in JSON) is the number its bits spell. A time of day
    (``io.debezium.time.MicroTime``, ``Time``, ``NanoTime``) stays the number
    of its unit after midnight (24:00:00 included, as PostgreSQL has it); one
    outside (negative, or beyond 24 hours: MySQL's ``TIME`` holds
    -838:59:59 to 838:59:59) is the duration text MySQL writes
    (:func:`cdckit.times.duration_text`), never a bare number that would read
    as a time of day.

    >>> typed_value("//////////8=", {"type": "bytes", "name": BITS}), typed_value("qgI=", {"name": BITS})
    (18446744073709551615, 682)
    >>> micro = {"type": "int64", "name": "io.debezium.time.MicroTime"}
    >>> typed_value(45296000000, micro), typed_value(-3020399000000, micro), typed_value(90000000001, micro)
    (45296000000, '-838:59:59', '25:00:00.000001')
    """
    if field is None or value is None:
        return value
    kind = field.get("type")
    name = field.get("name")
    if name == BITS and isinstance(value, str):
        return _bits_number(value)
    unit = TIME_UNITS.get(name) if name.__class__ is str else None
    if unit is not None and value.__class__ is int and not 0 <= value * unit <= times.DAY_NS:
        return times.duration_text(value * unit)
    if name == DECIMAL_TYPE and isinstance(value, str):
        scale = (field.get("parameters") or {}).get("scale", "0")
        return _decimal_from_bytes(value, int(scale))
    if name == VARIABLE_DECIMAL and isinstance(value, dict):
        return _decimal_from_bytes(value.get("value"), int(value.get("scale") or 0))
    if kind in INT_TYPES:
        return values.coerce(value, "int")
    if kind in FLOAT_TYPES:
        return values.coerce(value, "float")
    if kind == "boolean":
        return values.coerce(value, "bool")
    return value


def _bits_number(b64: str) -> Any:
    """The bytes of a ``Bits`` value (Base64, least significant byte first) as the number they spell."""
    try:
        return int.from_bytes(base64.b64decode(b64, validate=True), "little")
    except (binascii.Error, ValueError):
        return b64


def _decimal_from_bytes(b64: Any, scale: int) -> Any:
    """Connect ``Decimal`` bytes (Base64 of the unscaled two's-complement big-endian integer) as the exact number,
    every digit kept (an int or float when one holds it, else its text).

    >>> _decimal_from_bytes("AeJA", 2), _decimal_from_bytes("/w==", 0), _decimal_from_bytes(1.5, 2)
    (1234.56, -1, 1.5)
    """
    if not isinstance(b64, str):
        return b64
    try:
        raw = base64.b64decode(b64, validate=True)
    except (binascii.Error, ValueError):
        return values.exact_number(b64)
    unscaled = int.from_bytes(raw, "big", signed=True)
    return values.exact_number(values.decimal_text(unscaled, scale))


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
