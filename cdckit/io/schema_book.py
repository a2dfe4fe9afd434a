"""The schemas of framed records, from where the analyst has them, and framed messages decoded with them.

A :class:`SchemaBook` finds a schema by its registry id in, in this order:

- the schemas it has already read (a capture's own, given when it was saved);
- folders of schemas exported from a registry (``schemas=FOLDER``; see
  :func:`cdckit.io.registered_schema.folder_schemas` for the files it reads);
- a schema registry (``schema_registry="https://..."``, its client settings, such as
  ``basic.auth.user.info``, given apart as ``schema_registry_config``), through confluent-kafka's registry
  client.

:meth:`SchemaBook.unframe` decodes a message whose value or key is framed (:mod:`cdckit.io.wire_format`):
Avro as the JSON converter writes the same record (:mod:`cdckit.io.avro_connect`), JSON Schema's JSON text
as it is, Protobuf through :mod:`cdckit.io.protobuf_connect`. A record whose schema cannot be found, or whose
body does not match it, is quarantined with a reason that names the id and where the book looked; the read
goes on.

>>> import json, tempfile, pathlib
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> _ = (folder / "7.json").write_text(json.dumps({"id": 7, "subject": "t-value", "schema": '"string"'}))
>>> book = SchemaBook(folders=[folder])
>>> book.lookup(7).subject, book.lookup(8) is None
('t-value', True)
"""

from __future__ import annotations

import base64
import glob
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..optional import MissingExtraError, require
from .framed_decoders import decoder_for
from .message import Message, error_message
from .registered_schema import RegisteredSchema, folder_schemas
from .sources import expand_paths
from .wire_format import Framed

__all__ = ["SchemaBook", "book_for", "unframed", "saved_schemas_folders", "SCHEMAS_SUFFIX"]

#: The folder beside a capture file that holds the schemas its records use (``capture.jsonl.schemas/``).
SCHEMAS_SUFFIX = ".schemas"


def saved_schemas_folders(source: Any) -> list[str]:
    """The schemas folders saved beside the capture files ``source`` names (``<file>.schemas/``).

    >>> saved_schemas_folders('{"op": "c"}'), saved_schemas_folders("no/such/file.jsonl")
    ([], [])
    """
    if isinstance(source, (str, os.PathLike)):
        specs = [os.fspath(source)]
    elif isinstance(source, (list, tuple)) and all(isinstance(s, os.PathLike) for s in source):
        specs = [os.fspath(s) for s in source]
    else:
        return []
    found: list[str] = []
    for spec in specs:
        if "\n" in spec or not (os.path.exists(spec) or glob.has_magic(spec)):
            continue
        try:
            paths = expand_paths(spec)
        except (FileNotFoundError, OSError):
            continue
        found.extend(p + SCHEMAS_SUFFIX for p in paths if os.path.isdir(p + SCHEMAS_SUFFIX))
    return found


def book_for(
    source: Any,
    registry: str | None = None,
    registry_config: Mapping[str, Any] | None = None,
    folder: str | os.PathLike[str] | None = None,
) -> SchemaBook | None:
    """Where a read of ``source`` finds the schemas of framed records: the schemas saved beside each capture file
    (``<file>.schemas/``, first: they are those its records were written with), the folder given, the registry;
    None when there are none.

    >>> book_for('{"op": "c"}') is None, book_for("x.jsonl", "http://localhost:8081").registry
    (True, 'http://localhost:8081')
    """
    if folder is not None and not os.path.isdir(folder):
        raise FileNotFoundError(f"schemas: no such folder: {os.fspath(folder)}")
    if registry_config and not registry:
        raise ValueError("schema_registry_config is the client's settings of a schema_registry: give its URL too")
    given = [] if folder is None else [os.fspath(folder)]
    book = SchemaBook(registry, dict(registry_config or {}), [*saved_schemas_folders(source), *given])
    return book if book else None


@dataclass
class SchemaBook:
    """Where the schemas of a read's framed records are found (see the module notes); decodes framed messages.

    ``registry``: a schema registry's URL; ``registry_config``: its client's settings (confluent-kafka's
    names: ``basic.auth.user.info``, ``ssl.ca.location``...); ``folders``: folders of schemas.
    The book pickles without its client (a worker process makes its own, and keeps what was found)."""

    registry: str | None = None
    registry_config: Mapping[str, Any] = field(default_factory=dict)
    folders: list[str] = field(default_factory=list)
    _known: dict[int, RegisteredSchema] = field(default_factory=dict, repr=False)
    _missing: dict[int, str] = field(default_factory=dict, repr=False)
    _decoders: dict[int, Any] = field(default_factory=dict, repr=False)
    _client: Any = field(default=None, repr=False)
    _read_folders: bool = field(default=False, repr=False)
    _used: set[int] = field(default_factory=set, repr=False)

    def __post_init__(self) -> None:
        self.folders = [os.fspath(f) for f in self.folders]
        if self.registry is not None and not isinstance(self.registry, str):
            raise TypeError(f"schema_registry takes a URL, not {type(self.registry).__name__}")

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_client"] = None
        state["_decoders"] = {}
        return state

    def __bool__(self) -> bool:
        return bool(self.registry or self.folders or self._known)

    def where(self) -> str:
        """Where the book looks, in words."""
        places = [f"the folder {f}" for f in self.folders]
        if self.registry:
            places.append(f"the schema registry {self.registry}")
        return " and ".join(places) if places else "nowhere: no schema registry or schemas folder was given"

    # ------------------------------------------------------------ finding a schema

    def lookup(self, schema_id: int) -> RegisteredSchema | None:
        """The schema of ``schema_id``, or None when no place has it (why: :meth:`missing_reason`)."""
        found = self._known.get(schema_id)
        if found is not None:
            return found
        if not self._read_folders:
            self._load_folders()
            found = self._known.get(schema_id)
            if found is not None:
                return found
        if schema_id in self._missing or not self.registry:
            return None
        try:
            found = self._fetch(schema_id)
        except Exception as err:  # the registry's answer: 404, refused, a TLS or auth failure
            self._missing[schema_id] = f"{type(err).__name__}: {err}"
            return None
        self._known[schema_id] = found
        return found

    def _load_folders(self) -> None:
        """Read the schemas of every folder, once."""
        self._read_folders = True
        for folder in self.folders:
            for schema in folder_schemas(folder):
                self._known.setdefault(schema.id, schema)

    def missing_reason(self, schema_id: int) -> str:
        """Why ``schema_id`` was not found: where the book looked, and what the registry said."""
        said = self._missing.get(schema_id)
        found = f"schema id {schema_id} was not found in {self.where()}"
        return found + (f" (the registry said: {said})" if said else "")

    def _registry_client(self) -> Any:
        if self._client is None:
            registry = require("confluent_kafka.schema_registry", "avro", what="a schema registry")
            self._client = registry.SchemaRegistryClient({"url": self.registry, **dict(self.registry_config)})
        return self._client

    def _fetch(self, schema_id: int) -> RegisteredSchema:
        client = self._registry_client()
        schema = client.get_schema(schema_id)
        subject = version = None
        try:
            versions = client.get_schema_versions(schema_id) if hasattr(client, "get_schema_versions") else []
            if versions:
                subject, version = versions[0].subject, versions[0].version
        except Exception:  # a registry without the call: the subject is evidence, not needed to decode
            pass
        references = tuple(
            {"name": r.name, "subject": r.subject, "version": r.version} for r in (schema.references or ())
        )
        return RegisteredSchema(
            schema_id, str(schema.schema_type or "AVRO").upper(), schema.schema_str, subject, version, references
        )

    def referenced(self, reference: Mapping[str, Any]) -> RegisteredSchema | None:
        """The schema a reference names (by subject and version)."""
        subject, version = reference.get("subject"), reference.get("version")
        if not self._read_folders:
            self._load_folders()
        for schema in self._known.values():
            if schema.subject == subject and (schema.version == version or version in (None, -1)):
                return schema
        if not self.registry or subject is None:
            return None
        try:
            registered = self._registry_client().get_version(subject, version if version is not None else "latest")
        except Exception:
            return None
        schema = registered.schema
        found = RegisteredSchema(
            registered.schema_id,
            str(schema.schema_type or "AVRO").upper(),
            schema.schema_str,
            subject,
            registered.version,
            tuple({"name": r.name, "subject": r.subject, "version": r.version} for r in (schema.references or ())),
        )
        self._known.setdefault(found.id, found)
        return found

    def mark_used(self, ids: Iterable[int]) -> None:
        """Count ``ids`` among the schemas :meth:`used` gives (a capture saves the schemas of its records)."""
        self._used.update(ids)

    def used(self) -> list[RegisteredSchema]:
        """The schemas the book decoded records with, and those they refer to (what a saved capture needs)."""
        out = {i: self._known[i] for i in self._used if i in self._known}
        pending = list(out.values())
        while pending:
            for reference in pending.pop().references:
                found = self.referenced(reference)
                if found is not None and found.id not in out:
                    out[found.id] = found
                    pending.append(found)
        return sorted(out.values(), key=lambda s: s.id)

    # ------------------------------------------------------------ decoding

    def decoded(self, item: Framed) -> tuple[Any, str]:
        """The value of a framed key or value and the evidence that names its schema; ValueError (its reason
        naming the id) when the schema is not found or the body does not match it."""
        decoder = self._decoders.get(item.schema_id)
        if decoder is None:
            schema = self.lookup(item.schema_id)
            if schema is None:
                raise LookupError(self.missing_reason(item.schema_id))
            decoder = self._decoders[item.schema_id] = decoder_for(schema, self)
        self._used.add(item.schema_id)
        try:
            return decoder.decode(item.body), decoder.evidence
        except ValueError as err:
            raise ValueError(f"the body does not match {decoder.kind} id {item.schema_id}: {err}") from None

    def unframe(self, msg: Message) -> Message:
        """``msg`` with its framed value and key decoded, in place (a message with neither is returned as it is);
        a message whose schema is not found, or whose body does not match it, becomes a quarantined one."""
        value, key = msg.value, msg.key
        if value.__class__ is not Framed and key.__class__ is not Framed:
            return msg
        part, layout = key, msg.layout
        try:
            if key.__class__ is Framed:
                key, _ = self.decoded(key)
            part = value
            if value.__class__ is Framed:
                value, layout = self.decoded(value)
        except MissingExtraError as err:  # fastavro or protobuf not installed: each record says how to install it
            return self._bad(msg, part, str(err), "unsupported_format")
        except LookupError as err:
            return self._bad(msg, part, str(err), "unknown_schema")
        except ValueError as err:
            return self._bad(msg, part, str(err), "invalid_encoding")
        msg.value, msg.key, msg.layout = value, key, layout  # decoded once: detection's head is decoded after
        return msg

    def _bad(self, msg: Message, part: Framed, reason: str, code: str) -> Message:
        """The quarantined message of a record whose key or value (``part``) could not be decoded; its raw text
        is the saved record's line, or the part's bytes in Base64."""
        which = "value" if part is msg.value else "key"
        line = msg.raw if isinstance(msg.raw, str) or (isinstance(msg.raw, bytes) and msg.raw[:1] == b"{") else None
        raw = line if line is not None else base64.b64encode(part.raw).decode("ascii")  # a saved record's line
        bad = error_message(msg.source, msg.offset, f"the record's {which}: {reason}", code, raw, msg.line)
        bad.partition, bad.topic = msg.partition, msg.topic
        return bad


def unframed(msg: Message, book: SchemaBook | None) -> Message:
    """``msg`` with a framed value or key decoded with ``book`` (:meth:`SchemaBook.unframe`); quarantined, saying
    how to give schemas, when there is no book. Other messages as they are."""
    if msg.value.__class__ is not Framed and msg.key.__class__ is not Framed:
        return msg
    if book is not None:
        return book.unframe(msg)
    part = msg.value if msg.value.__class__ is Framed else msg.key
    bad = error_message(
        msg.source,
        msg.offset,
        f"a framed record (Confluent's wire format, schema id {part.schema_id}) and no schemas to decode it: "
        "give schema_registry= (--schema-registry URL) or schemas= (--schemas DIR)",
        "unknown_schema",
        msg.raw if isinstance(msg.raw, (bytes, str)) else b"",
        msg.line,
    )
    bad.partition, bad.topic = msg.partition, msg.topic
    return bad
