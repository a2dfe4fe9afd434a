"""Avro records as Kafka Connect's JSON converter writes the same records (extra ``avro``: ``fastavro``).

Confluent's Avro converter writes a Connect record as Avro: a Connect type rides
on the Avro type as properties (``connect.name``, ``connect.type``,
``connect.parameters``, ``connect.version``, ``connect.default``). Read back,
each record is given the form the JSON converter (``schemas.enable=true``)
gives the same record: ``{"schema": <Connect schema>, "payload": <value>}``,
so a dialect reads an Avro topic exactly as it reads the same changes captured
as JSON, with the same typed columns.

- The Connect schema is made once per Avro schema (:class:`AvroDecoder`):
  ``int`` is ``int32`` (``int8``/``int16`` where ``connect.type`` says so),
  ``long`` ``int64``, ``double`` ``float64``, a union with ``null`` an optional
  type, a ``record`` a ``struct`` named by its Connect name (else its full Avro
  name), ``fixed`` ``bytes``, ``enum`` ``string``.
- Avro's logical types written by other producers get the Connect names that
  mean the same: ``decimal`` is ``org.apache.kafka.connect.data.Decimal`` (its
  scale a parameter), ``date``/``time-millis``/``timestamp-millis`` Connect's
  ``Date``/``Time``/``Timestamp``, ``time-micros``/``timestamp-micros``
  Debezium's ``MicroTime``/``MicroTimestamp``, ``uuid`` ``io.debezium.data.Uuid``.
- Values are read with the logical types left off (fastavro would turn them into
  Python objects): numbers stay the numbers the JSON converter writes, and
  ``bytes`` (a decimal's unscaled bytes too) become Base64 text, as it writes them.

>>> schema = {"type": "record", "name": "Value", "namespace": "pg.public.t", "fields": [
...     {"name": "id", "type": "int"},
...     {"name": "price", "type": ["null", {"type": "bytes", "logicalType": "decimal", "precision": 5, "scale": 2}]}]}
>>> decoder = AvroDecoder(schema)
>>> decoder.connect_schema["fields"][1]
{'type': 'bytes', 'optional': True, 'name': 'org.apache.kafka.connect.data.Decimal', 'version': 1, \
'parameters': {'scale': '2', 'connect.decimal.precision': '5'}, 'field': 'price'}
>>> decoder.read(b"\\x02\\x02\\x04\\x30\\x39")
{'id': 1, 'price': 'MDk='}
"""

from __future__ import annotations

import copy
import io
from binascii import b2a_base64
from collections.abc import Callable
from typing import Any

from ..optional import require

__all__ = ["AvroDecoder", "connect_schema", "record_name"]

_PRIMITIVES = {
    "int": "int32",
    "long": "int64",
    "float": "float",
    "double": "float64",
    "boolean": "boolean",
    "string": "string",
    "bytes": "bytes",
    "fixed": "bytes",
    "enum": "string",
}
#: Avro logical types (as other producers write them) -> the Connect or Debezium name that means the same.
_LOGICAL_NAMES = {
    "decimal": "org.apache.kafka.connect.data.Decimal",
    "date": "org.apache.kafka.connect.data.Date",
    "time-millis": "org.apache.kafka.connect.data.Time",
    "timestamp-millis": "org.apache.kafka.connect.data.Timestamp",
    "local-timestamp-millis": "org.apache.kafka.connect.data.Timestamp",
    "time-micros": "io.debezium.time.MicroTime",
    "timestamp-micros": "io.debezium.time.MicroTimestamp",
    "local-timestamp-micros": "io.debezium.time.MicroTimestamp",
    "uuid": "io.debezium.data.Uuid",
}
_CONNECT_INTS = {"int8", "int16"}

Convert = Callable[[Any], Any]


class AvroDecoder:
    """Reads the Avro bodies of one schema as the JSON converter's payloads; ``connect_schema`` is their
    Connect schema (one dict, shared by every record), ``name`` the record's full Avro name.

    ``named``: the schemas this one refers to by name (a registry's references), full name -> schema.
    """

    def __init__(self, schema: Any, named: dict[str, Any] | None = None) -> None:
        fastavro = require("fastavro", "avro", what="reading Avro records")
        self.name = record_name(schema)
        known = _named_types(named or {})
        self.connect_schema = connect_schema(schema, dict(known))
        plain = _without_logical_types(schema)
        parsed_named: dict[str, Any] = {}
        for other in (named or {}).values():
            fastavro.parse_schema(_without_logical_types(other), named_schemas=parsed_named)
        self._schema = fastavro.parse_schema(plain, named_schemas=parsed_named)
        self._reader = fastavro.schemaless_reader
        self._convert = _converter(schema, dict(known), {})

    def read(self, body: bytes) -> Any:
        """The payload of one Avro body; ValueError when the body does not match the schema (too short, a bad
        union branch, bytes left over)."""
        stream = io.BytesIO(body)
        try:
            value = self._reader(stream, self._schema, None)
        except Exception as err:  # fastavro raises what its reading met (EOFError, IndexError, UnicodeDecodeError)
            raise ValueError(f"{type(err).__name__}: {err}") from None
        left = len(body) - stream.tell()
        if left:
            raise ValueError(f"{left} byte(s) left over after the record")
        return value if self._convert is None else self._convert(value)

    def read_many(self, data: bytes, count: int) -> list[Any]:
        """The payloads of ``count`` Avro bodies one after another in ``data`` (a container file's block);
        ValueError when they do not match the schema or bytes are left over."""
        stream = io.BytesIO(data)
        reader, schema = self._reader, self._schema
        try:
            values = [reader(stream, schema, None) for _ in range(count)]
        except Exception as err:  # fastavro raises what its reading met
            raise ValueError(f"{type(err).__name__}: {err}") from None
        left = len(data) - stream.tell()
        if left:
            raise ValueError(f"{left} byte(s) left over after the block's {count} record(s)")
        convert = self._convert
        return values if convert is None else [convert(value) for value in values]


def record_name(schema: Any) -> str | None:
    """The full name of a named Avro schema (a record's), or None.

    >>> record_name({"type": "record", "name": "Envelope", "namespace": "pg.public.t", "fields": []})
    'pg.public.t.Envelope'
    """
    if isinstance(schema, dict) and isinstance(schema.get("name"), str):
        return _full_name(schema["name"], schema.get("namespace"))
    return None


def _full_name(name: str, namespace: str | None) -> str:
    return name if "." in name or not namespace else f"{namespace}.{name}"


def _named_types(named: dict[str, Any]) -> dict[str, Any]:
    """Every named type the referenced schemas define, by full name."""
    found: dict[str, Any] = {}
    for schema in named.values():
        _collect(schema, None, found)
    return found


def _collect(schema: Any, namespace: str | None, found: dict[str, Any]) -> None:
    if isinstance(schema, list):
        for branch in schema:
            _collect(branch, namespace, found)
    elif isinstance(schema, dict):
        kind = schema.get("type")
        if kind in ("record", "error", "enum", "fixed") and isinstance(schema.get("name"), str):
            full = _full_name(schema["name"], schema.get("namespace", namespace))
            found[full] = schema
            namespace = full.rpartition(".")[0] or None
        for field in schema.get("fields", ()) if kind in ("record", "error") else ():
            _collect(field.get("type"), namespace, found)
        if kind == "array":
            _collect(schema.get("items"), namespace, found)
        elif kind == "map":
            _collect(schema.get("values"), namespace, found)
        elif isinstance(kind, (dict, list)):
            _collect(kind, namespace, found)


def connect_schema(schema: Any, named: dict[str, Any] | None = None, namespace: str | None = None) -> dict[str, Any]:
    """The Connect schema (as the JSON converter writes it) of an Avro schema.

    >>> connect_schema({"type": "int", "connect.type": "int16"}), connect_schema(["null", "string"])
    ({'type': 'int16', 'optional': False}, {'type': 'string', 'optional': True})
    """
    named = {} if named is None else named
    optional = False
    if isinstance(schema, list):
        branches = [b for b in schema if b != "null"]
        optional = len(branches) < len(schema)
        if len(branches) == 1:
            out = connect_schema(branches[0], named, namespace)
            out["optional"] = optional or out["optional"]
            return out
        fields = [{**connect_schema(b, named, namespace), "field": _branch_name(b)} for b in branches]
        return {"type": "struct", "fields": fields, "optional": optional, "name": "io.confluent.connect.avro.Union"}
    if isinstance(schema, str):
        if schema in _PRIMITIVES:
            return {"type": _PRIMITIVES[schema], "optional": False}
        if schema == "null":
            return {"type": "string", "optional": True}
        full = _full_name(schema, namespace)
        target = named.get(full, named.get(schema))
        if target is None:
            raise ValueError(f"the Avro schema refers to {schema!r}, a type it does not define")
        return connect_schema(target, named, namespace)
    if not isinstance(schema, dict):
        raise ValueError(f"not an Avro schema: {schema!r}")
    kind = schema.get("type")
    if isinstance(kind, (dict, list)) or (
        isinstance(kind, str) and kind not in _PRIMITIVES and kind not in ("record", "error", "array", "map", "null")
    ):
        out = connect_schema(kind, named, namespace)
        return _with_connect_properties(out, schema)
    if kind in ("record", "error"):
        full = _full_name(schema["name"], schema.get("namespace", namespace))
        named[full] = schema
        inner = full.rpartition(".")[0] or None
        fields = [{**connect_schema(f["type"], named, inner), "field": f["name"]} for f in schema.get("fields", ())]
        out = {"type": "struct", "fields": fields, "optional": False, "name": full}
    elif kind in ("enum", "fixed"):
        named[_full_name(schema["name"], schema.get("namespace", namespace))] = schema
        out = {"type": _PRIMITIVES[kind], "optional": False}
    elif kind == "array":
        out = {"type": "array", "items": connect_schema(schema["items"], named, namespace), "optional": False}
    elif kind == "map":
        out = {
            "type": "map",
            "keys": {"type": "string", "optional": False},
            "values": connect_schema(schema["values"], named, namespace),
            "optional": False,
        }
    elif kind == "null":
        out = {"type": "string", "optional": True}
    else:
        out = {"type": _PRIMITIVES[str(kind)], "optional": False}
    return _with_connect_properties(out, schema)


def _branch_name(branch: Any) -> str:
    """The field a branch of a union takes in Connect's Union struct: its type's (short) name."""
    if isinstance(branch, dict):
        name = branch.get("name") if branch.get("type") in ("record", "error", "enum", "fixed") else branch.get("type")
        return str(name).rpartition(".")[2]
    return str(branch).rpartition(".")[2]


def _with_connect_properties(out: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    """``out`` with the Connect type the Avro properties carry (``connect.*``), or the one a logical type means."""
    connect_type = schema.get("connect.type")
    if connect_type in _CONNECT_INTS:
        out["type"] = connect_type
    logical = schema.get("logicalType")
    name = schema.get("connect.name")
    if name is None and logical in _LOGICAL_NAMES:
        name = _LOGICAL_NAMES[logical]
    if name is not None:
        out["name"] = name
    version = schema.get("connect.version")
    if version is None and logical in _LOGICAL_NAMES and name == _LOGICAL_NAMES[logical] and name.startswith("org."):
        version = 1
    if version is not None:
        out["version"] = version
    parameters = schema.get("connect.parameters")
    if parameters is None and logical == "decimal":
        parameters = {"scale": str(schema.get("scale", 0)), "connect.decimal.precision": str(schema["precision"])}
    if parameters is not None:
        out["parameters"] = dict(parameters)
    if "connect.default" in schema:
        out["default"] = schema["connect.default"]
    return out


def _without_logical_types(schema: Any) -> Any:
    """A copy of ``schema`` without ``logicalType``: fastavro then reads the underlying ints and bytes."""
    schema = copy.deepcopy(schema)
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            stack.extend(node)
        elif isinstance(node, dict):
            node.pop("logicalType", None)
            stack.extend(v for k, v in node.items() if k in ("type", "items", "values", "fields"))
    return schema


# ---------------------------------------------------------------- values


def _converter(
    schema: Any, named: dict[str, Any], seen: dict[str, Convert | None], namespace: str | None = None
) -> Convert | None:
    """A function giving a value of ``schema`` its JSON converter's form (bytes as Base64 text), or None when
    every value of the schema is already in that form (no bytes anywhere in it)."""
    if isinstance(schema, list):
        branches = [_converter(b, named, seen, namespace) for b in schema]
        if not any(branches):
            return None
        if sum(1 for b in schema if b != "null") == 1:  # ["null", X]: a converter is only given values, never None
            return next(c for b, c in zip(schema, branches) if b != "null")
        return _union(schema, branches)
    if isinstance(schema, str):
        if schema in ("bytes", "fixed"):
            return _bytes_base64
        if schema in _PRIMITIVES or schema == "null":
            return None
        full = _full_name(schema, namespace)
        target = named.get(full, named.get(schema))
        if full in seen:
            return seen[full] if seen[full] is not None else None
        return None if target is None else _converter(target, named, seen, namespace)
    if not isinstance(schema, dict):
        return None
    kind = schema.get("type")
    if kind in ("bytes", "fixed"):
        if kind == "fixed":
            named[_full_name(schema["name"], schema.get("namespace", namespace))] = schema
        return _bytes_base64
    if kind == "enum":
        named[_full_name(schema["name"], schema.get("namespace", namespace))] = schema
        return None
    if kind in ("record", "error"):
        full = _full_name(schema["name"], schema.get("namespace", namespace))
        named[full] = schema
        seen[full] = None  # a recursive reference inside reads as plain until the record is known
        inner = full.rpartition(".")[0] or None
        fields = [(f["name"], _converter(f["type"], named, seen, inner)) for f in schema.get("fields", ())]
        converted = [(name, convert) for name, convert in fields if convert is not None]
        if not converted:
            return None
        convert_record = _record(converted)
        seen[full] = convert_record
        return convert_record
    if kind == "array":
        item = _converter(schema["items"], named, seen, namespace)
        return None if item is None else (lambda values: [None if v is None else item(v) for v in values])
    if kind == "map":
        value = _converter(schema["values"], named, seen, namespace)
        if value is None:
            return None
        return lambda values: {k: None if v is None else value(v) for k, v in values.items()}
    if isinstance(kind, (dict, list, str)) and kind not in _PRIMITIVES and kind != "null":
        return _converter(kind, named, seen, namespace)
    return None


def _bytes_base64(value: bytes | bytearray) -> str:
    """Bytes (what a ``bytes`` or ``fixed`` schema reads) as Base64 text."""
    return b2a_base64(value, newline=False).decode("ascii")


def _record(converted: list[tuple[str, Convert]]) -> Convert:
    fields = tuple(converted)

    def convert(record: Any) -> Any:
        for name, field in fields:
            value = record[name]
            if value is not None:
                record[name] = field(value)
        return record

    return convert


def _union(schema: list[Any], branches: list[Convert | None]) -> Convert:
    """A union's converter: by the value's kind (bytes, a dict of a record, a list), the branch that takes it."""
    takers = [c for c in branches if c is not None]

    def convert(value: Any) -> Any:
        if isinstance(value, (bytes, bytearray)):
            return _bytes_base64(value)
        for taker in takers:
            if taker is not _bytes_base64:
                return taker(value)
        return value

    return convert
