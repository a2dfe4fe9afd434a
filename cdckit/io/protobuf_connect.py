"""Protobuf records as Kafka Connect's JSON converter writes the same records (extra ``avro``: ``protobuf``,
``grpcio-tools``).

A registered ``.proto`` (and the files it imports: the registry's references,
Confluent's ``confluent/meta.proto`` and ``confluent/type/decimal.proto``,
``google/type/date.proto`` and ``timeofday.proto``, and Google's well-known
types, which protoc ships) is compiled at run time by ``grpc_tools.protoc``
into a FileDescriptorSet (once per schema text); the message a body names by
its indexes (:func:`cdckit.io.wire_format.message_indexes`, an index path into
nested messages) is parsed, and given the form the JSON converter
(``schemas.enable=true``) gives what Confluent's Protobuf converter
(``ProtobufData.toConnectSchema``/``toConnectData``) reads:

- ``int32``/``sint32``/``sfixed32`` are ``int32``; the 64-bit types and
  ``uint32``/``fixed32`` ``int64`` (a ``uint64`` above 2^63 wraps to negative,
  as Java's long does); ``float`` ``float`` (float32), ``double`` ``float64``,
  ``bool`` ``boolean``, ``string``, ``bytes`` (Base64 text); an enum the
  ``string`` of its value's name; ``repeated`` an ``array``, ``map<,>`` a
  ``map``, a message a ``struct`` named by its full name (the converter's
  ``enhanced.protobuf.schema.support``), a ``oneof`` a ``struct`` named
  ``io.confluent.connect.protobuf.Union.<oneof>`` in a field ``<oneof>_<index>``.
- ``google.protobuf.Timestamp`` is Connect's ``Timestamp`` (milliseconds),
  ``google.type.Date`` ``Date`` (days), ``google.type.TimeOfDay`` ``Time``
  (milliseconds), ``confluent.type.Decimal`` ``Decimal`` (its scale and
  precision from the field's ``confluent.field_meta``; the unscaled number's
  bytes in Base64), and the wrappers (``google.protobuf.StringValue``...)
  optional scalars (``wrapper.for.nullables``; a wrapper at the root is its
  scalar).
- A proto3 scalar is not optional and an unset one reads as its default (``0``,
  ``""``, ``false``), as the converter reads it; a scalar marked ``optional``
  (``optional.for.nullables``), a message, an enum, a list and a map are
  optional, and an unset message or ``optional`` scalar is null.

>>> proto = 'syntax = "proto3"; package shop; message Item { int64 id = 1; optional string name = 2; }'
>>> decoder = ProtobufDecoder(proto)
>>> body = bytes([0]) + decoder.message_class([0])(id=7).SerializeToString()
>>> decoder.read(body)["payload"]
{'id': 7, 'name': None}
>>> [(f["field"], f["type"], f["optional"]) for f in decoder.read(body)["schema"]["fields"]]
[('id', 'int64', False), ('name', 'string', True)]
"""

from __future__ import annotations

import base64
import datetime
import importlib
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable, Mapping
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..optional import require
from .wire_format import message_indexes

if TYPE_CHECKING:
    from .registered_schema import References, RegisteredSchema

__all__ = ["ProtobufBodies", "ProtobufDecoder", "compile_proto"]

_NS = "io.confluent.connect.protobuf"
_TAG, _TYPE, _ENUM, _UNION = f"{_NS}.Tag", f"{_NS}.Type", f"{_NS}.Enum", f"{_NS}.Union."
_META_FIELD = 1088  # confluent.field_meta, on google.protobuf.FieldOptions
_EPOCH = datetime.date(1970, 1, 1)

#: The files Confluent's and Google's types live in that protoc does not ship; a schema that imports one
#: without a registered reference for it is compiled with this text.
KNOWN_FILES = {
    "confluent/meta.proto": """syntax = "proto3";
package confluent;
import "google/protobuf/descriptor.proto";
option java_package = "io.confluent.protobuf";
option java_outer_classname = "MetaProto";
message Meta { string doc = 1; map<string, string> params = 2; repeated string tags = 3; repeated Rule rules = 4; }
message Rule { string name = 1; string doc = 2; string expr = 3; string sql = 4; }
extend google.protobuf.FileOptions { Meta file_meta = 1088; }
extend google.protobuf.MessageOptions { Meta message_meta = 1088; }
extend google.protobuf.FieldOptions { Meta field_meta = 1088; }
extend google.protobuf.EnumOptions { Meta enum_meta = 1088; }
extend google.protobuf.EnumValueOptions { Meta enum_value_meta = 1088; }
""",
    "confluent/type/decimal.proto": """syntax = "proto3";
package confluent.type;
message Decimal { bytes value = 1; uint32 precision = 2; int32 scale = 3; }
""",
    "google/type/date.proto": """syntax = "proto3";
package google.type;
message Date { int32 year = 1; int32 month = 2; int32 day = 3; }
""",
    "google/type/timeofday.proto": """syntax = "proto3";
package google.type;
message TimeOfDay { int32 hours = 1; int32 minutes = 2; int32 seconds = 3; int32 nanos = 4; }
""",
}

_WRAPPERS = {
    "google.protobuf.DoubleValue": "float64",
    "google.protobuf.FloatValue": "float",
    "google.protobuf.Int64Value": "int64",
    "google.protobuf.UInt64Value": "int64",
    "google.protobuf.Int32Value": "int32",
    "google.protobuf.UInt32Value": "int64",
    "google.protobuf.BoolValue": "boolean",
    "google.protobuf.StringValue": "string",
    "google.protobuf.BytesValue": "bytes",
}
_LOGICAL = {
    "google.protobuf.Timestamp": ("int64", "org.apache.kafka.connect.data.Timestamp"),
    "google.type.Date": ("int32", "org.apache.kafka.connect.data.Date"),
    "google.type.TimeOfDay": ("int32", "org.apache.kafka.connect.data.Time"),
    "confluent.type.Decimal": ("bytes", "org.apache.kafka.connect.data.Decimal"),
}
# FieldDescriptor.TYPE_* numbers -> Connect type and the converter's protobuf type parameter.
_SCALARS = {
    1: ("float64", None),  # double
    2: ("float", None),  # float
    3: ("int64", None),  # int64
    4: ("int64", "uint64"),
    5: ("int32", None),  # int32
    6: ("int64", "fixed64"),
    7: ("int64", "fixed32"),
    8: ("boolean", None),
    9: ("string", None),
    12: ("bytes", None),
    13: ("int64", "uint32"),
    14: ("string", None),  # enum
    15: ("int32", "sfixed32"),
    16: ("int64", "sfixed64"),
    17: ("int32", "sint32"),
    18: ("int64", "sint64"),
}
_MESSAGE, _ENUM_TYPE, _BYTES, _FLOAT, _UNSIGNED64 = 11, 14, 12, 2, (4, 6)

Convert = Callable[[Any], Any]


# ---------------------------------------------------------------- compiling


def compile_proto(text: str, imports: Mapping[str, str] | None = None, name: str = "schema.proto") -> bytes:
    """The FileDescriptorSet (serialized, its imports included) of the ``.proto`` ``text``; ``imports``: the text
    of the files it imports, by import path (Confluent's and Google's types protoc lacks are added). ValueError
    with protoc's message when it does not compile."""
    return _compiled(text, tuple(sorted((imports or {}).items())), name)


@lru_cache(maxsize=256)
def _compiled(text: str, imports: tuple[tuple[str, str], ...], name: str) -> bytes:
    grpc_tools = require("grpc_tools", "avro", what="reading Protobuf records")
    include = os.path.join(os.path.dirname(str(grpc_tools.__file__)), "_proto")
    more = [f"-I{root}" for root in _common_protos()]
    files = {**KNOWN_FILES, **dict(imports), name: text}
    with tempfile.TemporaryDirectory(prefix="cdckit-proto-") as folder:
        for path, content in files.items():
            if path.startswith("google/protobuf/") or Path(path).is_absolute() or ".." in Path(path).parts:
                continue  # protoc's own well-known types; a path outside the folder is not written
            target = Path(folder, path)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(content, encoding="utf-8")
        out = os.path.join(folder, "out.pb")
        done = subprocess.run(
            [sys.executable, "-m", "grpc_tools.protoc", f"-I{folder}", f"-I{include}", *more, "--include_imports",
             f"--descriptor_set_out={out}", name],
            cwd=folder, capture_output=True, text=True, check=False,
        )  # fmt: skip
        if done.returncode != 0:
            said = " ".join((done.stderr or done.stdout).replace(folder + os.sep, "").split())
            raise ValueError(f"protoc: {said or f'exit status {done.returncode}'}")
        return Path(out).read_bytes()


def _common_protos() -> list[str]:
    """The folder holding ``google/type/*.proto`` (datetime, money, latlng...) where googleapis-common-protos is
    installed; none otherwise (Date and TimeOfDay are in :data:`KNOWN_FILES`)."""
    try:
        common = importlib.import_module("google.type")  # googleapis-common-protos
    except ImportError:
        return []
    for folder in getattr(common, "__path__", ()):
        if os.path.exists(os.path.join(folder, "datetime.proto")):
            return [os.path.dirname(os.path.dirname(folder))]
    return []


class ProtobufDecoder:
    """The messages of one ``.proto`` text, read as ``{"schema": <Connect schema>, "payload": ...}``.

    ``imports``: the text of the files it imports, by import path. ``read(body)`` takes a framed body (message
    indexes first); ``message_class(indexes)`` the generated class of a message (what tests serialize with);
    ``messages`` the full names of the file's top-level messages, in order (index ``[i]`` names the i-th).
    """

    def __init__(self, text: str, imports: Mapping[str, str] | None = None, name: str = "schema.proto") -> None:
        descriptor_pb2 = require("google.protobuf.descriptor_pb2", "avro", what="reading Protobuf records")
        descriptor_pool = importlib.import_module("google.protobuf.descriptor_pool")
        message_factory = importlib.import_module("google.protobuf.message_factory")
        self._factory = message_factory

        files = descriptor_pb2.FileDescriptorSet.FromString(compile_proto(text, imports, name))
        self._pool = descriptor_pool.DescriptorPool()
        self._optional: set[str] = set()  # fields read as optional scalars: proto3 `optional`, proto2 optional
        self._metas: dict[str, dict[str, str]] = {}
        main = None
        for file in files.file:
            self._pool.Add(file)
            if file.name == name:
                main = file
        for file in files.file:
            self._note_fields(file)
        if main is None:
            raise ValueError(f"protoc gave no descriptor of {name}")
        self._file = self._pool.FindFileByName(name)
        self.messages = [f"{main.package}.{m.name}" if main.package else m.name for m in main.message_type]
        if not self.messages:
            raise ValueError("the schema defines no message")
        self._readers: dict[tuple[int, ...], tuple[Any, dict[str, Any], Convert]] = {}

    def _note_fields(self, file: Any) -> None:
        """Which fields have presence as scalars (proto3 ``optional``, proto2 ``optional``) and their
        ``confluent.field_meta`` parameters, by the field's full name."""
        unknown_fields = importlib.import_module("google.protobuf.unknown_fields")

        stack = [(file.package, m) for m in file.message_type]
        while stack:
            scope, message = stack.pop()
            full = f"{scope}.{message.name}" if scope else message.name
            stack.extend((full, m) for m in message.nested_type)
            for field in message.field:
                key = f"{full}.{field.name}"
                proto2 = file.syntax in ("", "proto2")
                if field.proto3_optional or (proto2 and field.label == 1 and not field.HasField("oneof_index")):
                    self._optional.add(key)
                for unknown in unknown_fields.UnknownFieldSet(field.options):
                    if unknown.field_number == _META_FIELD and isinstance(unknown.data, bytes):
                        self._metas[key] = self._meta_params(unknown.data)

    def _meta_params(self, data: bytes) -> dict[str, str]:
        """The ``params`` of a serialized ``confluent.Meta`` (a field's ``confluent.field_meta``), parsed by the
        ``Meta`` class compiled from ``confluent/meta.proto``, which a schema using the option imports."""
        meta = self._factory.GetMessageClass(self._pool.FindMessageTypeByName("confluent.Meta"))
        return dict(meta.FromString(data).params)

    def message_class(self, indexes: list[int] | tuple[int, ...]) -> Any:
        """The generated class of the message ``indexes`` names (``[0]``: the file's first message)."""
        return self._reader(tuple(indexes))[0]

    def read(self, body: bytes) -> dict[str, Any]:
        """The Connect schema and payload of one framed body; ValueError when it does not parse."""
        indexes, start = message_indexes(body)
        cls, schema, convert = self._reader(tuple(indexes))
        try:
            message = cls.FromString(body[start:])
        except Exception as err:  # google.protobuf.message.DecodeError and the like
            raise ValueError(f"{type(err).__name__}: {err}") from None
        return {"schema": schema, "payload": convert(message)}

    def _reader(self, indexes: tuple[int, ...]) -> tuple[Any, dict[str, Any], Convert]:
        found = self._readers.get(indexes)
        if found is None:
            descriptor = self._descriptor(indexes)
            cls = self._factory.GetMessageClass(descriptor)
            wrapped = _WRAPPERS.get(descriptor.full_name)
            if wrapped is not None:  # wrapper.for.raw.primitives: a wrapper at the root is its scalar
                field = descriptor.fields_by_name["value"]
                schema = {"type": wrapped, "optional": False}
                scalar = self._scalar(field)
                found = (cls, schema, lambda m: scalar(m.value))
            else:
                schema, convert = self._struct(descriptor, {})
                schema = {**schema, "optional": False}
                found = (cls, schema, convert)
            self._readers[indexes] = found
        return found

    def _descriptor(self, indexes: tuple[int, ...]) -> Any:
        if not indexes or not 0 <= indexes[0] < len(self.messages):
            raise ValueError(f"message indexes {list(indexes)} name no message of the schema")
        descriptor = self._pool.FindMessageTypeByName(self.messages[indexes[0]])
        for index in indexes[1:]:
            nested = descriptor.nested_types
            if not 0 <= index < len(nested):
                raise ValueError(f"message indexes {list(indexes)} name no message of the schema")
            descriptor = nested[index]
        return descriptor

    # ------------------------------------------------------------ schemas and converters

    def _struct(self, descriptor: Any, seen: dict[str, Any]) -> tuple[dict[str, Any], Convert]:
        """A message's struct schema and the converter of its values."""
        if descriptor.full_name in seen:  # a recursive message: the schema stops here
            schema = {"type": "struct", "fields": [], "optional": True, "name": descriptor.full_name}
            return schema, lambda m: seen[descriptor.full_name](m)
        holder: dict[str, Convert] = {}
        seen = {**seen, descriptor.full_name: lambda m: holder["convert"](m)}
        fields: list[dict[str, Any]] = []
        steps: list[tuple[str, str | None, Convert]] = []  # (field, the name to read or None, converter)
        presence: set[str] = set()
        for index, oneof in enumerate(_real_oneofs(descriptor, self._optional)):
            members = [(f, *self._field(f, seen, True)) for f in oneof.fields]
            name = f"{oneof.name}_{index}"
            union = {
                "type": "struct",
                "fields": [{**s, "field": f.name} for f, s, _ in members],
                "optional": True,
                "name": _UNION + oneof.full_name,
            }
            fields.append({**union, "field": name})
            steps.append((name, None, _union_converter(oneof, members)))
        union_fields = {f.full_name for o in _real_oneofs(descriptor, self._optional) for f in o.fields}
        for field in descriptor.fields:
            if field.full_name in union_fields:
                continue
            schema, convert = self._field(field, seen, False)
            fields.append({**schema, "field": field.name})
            if field.type == _MESSAGE and not field.is_repeated or field.full_name in self._optional:
                presence.add(field.name)
            steps.append((field.name, field.name, convert))

        def convert_struct(message: Any) -> dict[str, Any]:
            out: dict[str, Any] = {}
            for name, read, step in steps:
                if read is None:
                    out[name] = step(message)
                elif read in presence and not message.HasField(read):
                    out[name] = None
                else:
                    out[name] = step(getattr(message, read))
            return out

        holder["convert"] = convert_struct
        return {"type": "struct", "fields": fields, "optional": True, "name": descriptor.full_name}, convert_struct

    def _field(self, field: Any, seen: dict[str, Any], member: bool) -> tuple[dict[str, Any], Convert]:
        """A field's Connect schema and converter, as ``ProtobufData`` makes them."""
        tag = {_TAG: str(field.number)}
        schema: dict[str, Any]
        if field.is_repeated and field.type == _MESSAGE and field.message_type.GetOptions().map_entry:
            entry = field.message_type
            keys, key = self._field(entry.fields_by_name["key"], seen, False)
            values, value = self._field(entry.fields_by_name["value"], seen, False)
            schema = {"type": "map", "keys": keys, "values": values, "optional": True, "name": _map_name(entry)}
            schema["parameters"] = tag
            if keys["type"] == "string":
                return schema, lambda m: {key(k): value(v) for k, v in m.items()}
            return schema, lambda m: [[key(k), value(v)] for k, v in m.items()]
        schema, convert = self._single(field, seen)
        if field.is_repeated:
            schema = {"type": "array", "items": {**schema, "optional": True}, "optional": True}
            item = convert

            def convert(values: Any) -> list[Any]:
                return [item(v) for v in values]

        elif member or field.full_name in self._optional or field.type in (_MESSAGE, _ENUM_TYPE):
            schema["optional"] = True
        schema["parameters"] = {**dict(schema.get("parameters") or {}), **tag}
        return schema, convert

    def _single(self, field: Any, seen: dict[str, Any]) -> tuple[dict[str, Any], Convert]:
        """The schema (parameters without the tag) and converter of one value of a field."""
        if field.type == _MESSAGE:
            full = field.message_type.full_name
            if full in _WRAPPERS:
                inner = self._scalar(field.message_type.fields_by_name["value"])
                return {"type": _WRAPPERS[full], "optional": True}, lambda m: inner(m.value)
            if full in _LOGICAL:
                kind, name = _LOGICAL[full]
                schema: dict[str, Any] = {"type": kind, "optional": True, "name": name, "version": 1}
                if full == "confluent.type.Decimal":
                    meta = self._metas.get(field.full_name, {})
                    scale = _int(meta.get("scale"), 0) or 0
                    schema["parameters"] = {"scale": str(scale)}
                    if _int(meta.get("precision"), None) is not None:
                        schema["parameters"]["connect.decimal.precision"] = str(int(meta["precision"]))
                    return schema, lambda m: _decimal(m, scale)
                return schema, _LOGICAL_VALUES[full]
            return self._struct(field.message_type, seen)
        kind, proto_type = _SCALARS[field.type]
        schema = {"type": kind, "optional": False}
        if field.type == _ENUM_TYPE:
            enum = field.enum_type
            schema["name"] = enum.full_name
            schema["parameters"] = {_ENUM: enum.name, **{f"{_ENUM}.{v.name}": str(v.number) for v in enum.values}}
        elif proto_type is not None:
            schema["parameters"] = {_TYPE: proto_type}
        meta_type = self._metas.get(field.full_name, {}).get("connect.type")
        if kind == "int32" and meta_type in ("int8", "int16"):
            schema = {"type": meta_type, "optional": False}
        return schema, self._scalar(field)

    def _scalar(self, field: Any) -> Convert:
        if field.type == _ENUM_TYPE:
            names = {v.number: v.name for v in field.enum_type.values}
            return lambda number: names.get(number, str(number))
        if field.type == _BYTES:
            return lambda data: base64.b64encode(data).decode("ascii")
        if field.type == _FLOAT:
            return _float32
        if field.type in _UNSIGNED64:
            return lambda n: n - (1 << 64) if n >= 1 << 63 else n
        return _same


def _same(value: Any) -> Any:
    return value


def _real_oneofs(descriptor: Any, optional: set[str]) -> list[Any]:
    """A message's oneofs, without the synthetic ones of proto3 ``optional`` fields."""
    return [o for o in descriptor.oneofs if not all(f.full_name in optional for f in o.fields)]


def _union_converter(oneof: Any, members: list[tuple[Any, dict[str, Any], Convert]]) -> Convert:
    def convert(message: Any) -> dict[str, Any] | None:
        which = message.WhichOneof(oneof.name)
        if which is None:
            return None
        return {f.name: (step(getattr(message, f.name)) if f.name == which else None) for f, _, step in members}

    return convert


def _map_name(entry: Any) -> str:
    """The converter's name of a map: its entry's full name, ``...TagsEntry`` as ``...tags``."""
    scope, _, last = entry.full_name.rpartition(".")
    if last.endswith("Entry"):
        last = "".join("_" + c.lower() if c.isupper() else c for c in last[: -len("Entry")]).lstrip("_")
    return f"{scope}.{last}" if scope else last


def _int(text: Any, default: int | None) -> int | None:
    try:
        return int(text)
    except (TypeError, ValueError):
        return default


def _float32(value: float) -> float:
    """A float32 as Java's JSON writer prints it: the shortest decimal that reads back as the same float32."""
    import numpy

    return float(str(numpy.float32(value)))


def _timestamp(message: Any) -> int:
    return message.seconds * 1000 + message.nanos // 1_000_000


def _date(message: Any) -> int:
    try:
        return (datetime.date(message.year, message.month, message.day) - _EPOCH).days
    except ValueError as err:
        raise ValueError(f"google.type.Date {message.year}-{message.month}-{message.day}: {err}") from None


def _time(message: Any) -> int:
    return ((message.hours * 60 + message.minutes) * 60 + message.seconds) * 1000 + message.nanos // 1_000_000


_LOGICAL_VALUES: dict[str, Convert] = {
    "google.protobuf.Timestamp": _timestamp,
    "google.type.Date": _date,
    "google.type.TimeOfDay": _time,
}


def _decimal(message: Any, scale: int) -> str:
    """A ``confluent.type.Decimal`` as the JSON converter writes a Connect Decimal of ``scale``: the unscaled
    number's two's-complement bytes (big-endian, as few as hold it) in Base64."""
    unscaled = int.from_bytes(message.value, "big", signed=True) if message.value else 0
    if message.scale != scale:
        shift = scale - message.scale
        if shift >= 0:
            unscaled *= 10**shift
        elif unscaled % 10**-shift:
            raise ValueError(f"a decimal of scale {message.scale} does not fit the schema's scale {scale}")
        else:
            unscaled //= 10**-shift
    size = (~unscaled if unscaled < 0 else unscaled).bit_length() // 8 + 1
    return base64.b64encode(unscaled.to_bytes(size, "big", signed=True)).decode("ascii")


# ---------------------------------------------------------------- the schema book's decoder


class ProtobufBodies:
    """Protobuf bodies of one registered schema, each as ``{"schema": <Connect schema>, "payload": ...}``;
    ValueError when the schema does not compile (protoc's message), LookupError when a reference is not found."""

    kind = "Protobuf schema"

    def __init__(self, schema: RegisteredSchema, book: References | None) -> None:
        imports = _imports(schema, book)
        try:
            self._decoder = ProtobufDecoder(schema.text, imports, _main_name(schema, imports))
        except ValueError as err:
            raise ValueError(f"the Protobuf schema of id {schema.id} cannot be compiled: {err}") from None
        parts = [f"subject {schema.subject}"] if schema.subject else []
        parts.append(f"record {self._decoder.messages[0]}")  # as framed_decoders' evidence of the other kinds
        self.evidence = f"Confluent wire format, Protobuf schema id {schema.id} ({', '.join(parts)})"

    def decode(self, body: bytes) -> Any:
        return self._decoder.read(body)


def _main_name(schema: RegisteredSchema, imports: Mapping[str, str]) -> str:
    name = f"schema_{schema.id}.proto"
    while name in imports:
        name = "_" + name
    return name


def _imports(schema: RegisteredSchema, book: References | None) -> dict[str, str]:
    """The text of every file ``schema`` refers to (and they refer to), by import path."""
    out: dict[str, str] = {}
    pending = [(schema, r) for r in schema.references]
    while pending:
        owner, reference = pending.pop()
        name = str(reference.get("name"))
        if name in out:
            continue
        found = None if book is None else book.referenced(reference)
        if found is None:
            if name in KNOWN_FILES or name.startswith("google/protobuf/"):
                continue  # compiled with the text cdckit and protoc carry
            raise LookupError(
                f"schema id {owner.id} refers to {name} (subject {reference.get('subject')}, version "
                f"{reference.get('version')}), which was not found in {'nowhere' if book is None else book.where()}"
            )
        out[name] = found.text
        pending.extend((found, r) for r in found.references)
    return out
