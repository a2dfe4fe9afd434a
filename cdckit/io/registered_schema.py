"""A schema of a schema registry, and the folders of schemas exported from one (or saved beside a capture).

>>> import tempfile
>>> folder = tempfile.mkdtemp()
>>> _ = save_schemas([RegisteredSchema(7, "AVRO", '"string"', "t-value", 1)], folder)
>>> [(s.id, s.subject) for s in folder_schemas(folder)]
[(7, 't-value')]
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

__all__ = ["RegisteredSchema", "References", "folder_schemas", "save_schemas"]

_KINDS = {"AVRO", "PROTOBUF", "JSON"}


@dataclass(frozen=True)
class RegisteredSchema:
    """One schema of a registry: its id, kind (``AVRO``, ``PROTOBUF``, ``JSON``), text, where it is registered
    (subject and version, when known) and the schemas it refers to (``{"name", "subject", "version"}``)."""

    id: int
    kind: str
    text: str
    subject: str | None = None
    version: int | None = None
    references: tuple[dict[str, Any], ...] = ()

    def to_json(self) -> dict[str, Any]:
        """The schema as a file of a schemas folder holds it (the registry's own field names)."""
        return {
            "id": self.id,
            "subject": self.subject,
            "version": self.version,
            "schemaType": self.kind,
            "schema": self.text,
            "references": list(self.references),
        }


def _registered(entry: Mapping[str, Any], schema_id: int | None, where: str) -> RegisteredSchema:
    """A schema from a registry answer or a schemas file's object."""
    if not isinstance(entry.get("schema"), str):
        raise ValueError(f"{where}: no schema text (a 'schema' field)")
    kind = str(entry.get("schemaType") or "AVRO").upper()
    if kind not in _KINDS:
        raise ValueError(f"{where}: schemaType {kind!r}, not one of AVRO, PROTOBUF, JSON")
    found_id = entry.get("id", schema_id)
    if not isinstance(found_id, int):
        raise ValueError(f"{where}: no schema id (an 'id' field, or a file named <id>.json)")
    version = entry.get("version")
    return RegisteredSchema(
        found_id,
        kind,
        entry["schema"],
        entry.get("subject"),
        version if isinstance(version, int) else None,
        tuple(dict(r) for r in entry.get("references") or ()),
    )


def folder_schemas(folder: str | os.PathLike[str]) -> list[RegisteredSchema]:
    """The schemas a folder holds, by id: ``<id>.json`` files as ``GET /schemas/ids/{id}`` answers them, or any
    ``.json`` file holding one such object with its ``id`` (``GET /subjects/{s}/versions/{v}`` answers
    have one) or a list of them; and ``<id>.avsc`` (an Avro schema) and ``<id>.proto`` files.

    A file that holds none of these raises ValueError naming it."""
    found: list[RegisteredSchema] = []
    for path in sorted(Path(folder).iterdir()):
        if not path.is_file() or path.name.startswith("."):
            continue
        stem_id = int(path.stem) if path.stem.isdigit() else None
        if path.suffix == ".json":
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
            except ValueError as err:
                raise ValueError(f"{path}: not JSON: {err}") from None
            entries = data if isinstance(data, list) else [data]
            for entry in entries:
                if not isinstance(entry, dict):
                    raise ValueError(f"{path}: a schema is a JSON object, not {type(entry).__name__}")
                found.append(_registered(entry, stem_id if len(entries) == 1 else None, str(path)))
        elif path.suffix in (".avsc", ".proto") and stem_id is not None:
            kind = "AVRO" if path.suffix == ".avsc" else "PROTOBUF"
            found.append(RegisteredSchema(stem_id, kind, path.read_text(encoding="utf-8")))
    return sorted(found, key=lambda schema: schema.id)


def save_schemas(schemas: Iterable[RegisteredSchema], folder: str | os.PathLike[str]) -> list[Path]:
    """Write each schema as ``<id>.json`` under ``folder`` (made when missing), as :func:`folder_schemas` reads
    them back; the paths written."""
    target = Path(folder)
    target.mkdir(parents=True, exist_ok=True)
    written = []
    for schema in sorted(schemas, key=lambda s: s.id):
        path = target / f"{schema.id}.json"
        path.write_text(json.dumps(schema.to_json(), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        written.append(path)
    return written


class References(Protocol):
    """Where a schema's references are found (a :class:`~cdckit.io.schema_book.SchemaBook`)."""

    def referenced(self, reference: Mapping[str, Any]) -> RegisteredSchema | None: ...

    def where(self) -> str: ...
