"""The decoder of each kind of registered schema: Avro, JSON Schema and Protobuf bodies to message values.

>>> from cdckit.io.schema_book import RegisteredSchema
>>> decoder = decoder_for(RegisteredSchema(3, "JSON", '{"type": "object"}', "t-value"), None)
>>> decoder.decode(b'{"id": 1}'), decoder.evidence
({'id': 1}, 'Confluent wire format, JSON Schema id 3 (subject t-value)')
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from .. import values
from .avro_connect import AvroDecoder

if TYPE_CHECKING:
    from .schema_book import RegisteredSchema, SchemaBook

__all__ = ["decoder_for", "AvroBodies", "JsonBodies"]


def _evidence(kind: str, schema: RegisteredSchema, name: str | None) -> str:
    """What detection shows of a framed record: the format, the schema id, its subject and record name."""
    parts = [f"subject {schema.subject}"] if schema.subject else []
    if name:
        parts.append(f"record {name}")
    return f"Confluent wire format, {kind} id {schema.id}" + (f" ({', '.join(parts)})" if parts else "")


class AvroBodies:
    """Avro bodies of one schema, each as ``{"schema": <Connect schema>, "payload": ...}`` (the JSON converter's
    form, :mod:`cdckit.io.avro_connect`), whatever the schema (a key that is one string too, as the JSON
    converter wraps it)."""

    kind = "Avro schema"

    def __init__(self, schema: RegisteredSchema, book: SchemaBook | None) -> None:
        try:
            parsed = json.loads(schema.text)
        except ValueError as err:
            raise ValueError(f"the Avro schema of id {schema.id} is not JSON: {err}") from None
        named: dict[str, Any] = {}
        for reference in schema.references:
            found = None if book is None else book.referenced(reference)
            if found is None:
                raise LookupError(
                    f"schema id {schema.id} refers to {reference.get('name')} "
                    f"(subject {reference.get('subject')}, version {reference.get('version')}), "
                    f"which was not found in {'nowhere' if book is None else book.where()}"
                )
            named[str(reference.get("name"))] = json.loads(found.text)
        try:
            self._decoder = AvroDecoder(parsed, named)
        except (ValueError, KeyError, TypeError) as err:
            raise ValueError(f"the Avro schema of id {schema.id} cannot be read: {err}") from None
        self._schema = self._decoder.connect_schema
        self.evidence = _evidence("Avro schema", schema, self._decoder.name)

    def decode(self, body: bytes) -> Any:
        return {"schema": self._schema, "payload": self._decoder.read(body)}


class JsonBodies:
    """JSON Schema bodies: the JSON text after the frame, parsed."""

    kind = "JSON Schema"

    def __init__(self, schema: RegisteredSchema, book: SchemaBook | None) -> None:
        self.evidence = _evidence("JSON Schema", schema, None)

    def decode(self, body: bytes) -> Any:
        return values.loads(body)


def decoder_for(schema: RegisteredSchema, book: SchemaBook | None) -> Any:
    """The decoder of ``schema``'s bodies (ValueError when the schema itself cannot be read)."""
    if schema.kind == "AVRO":
        return AvroBodies(schema, book)
    if schema.kind == "JSON":
        return JsonBodies(schema, book)
    from .protobuf_connect import ProtobufBodies  # grpcio-tools' protoc, only where Protobuf is read

    return ProtobufBodies(schema, book)
