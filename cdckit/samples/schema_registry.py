"""A stand-in for Confluent's Schema Registry on loopback, for the Avro and Protobuf samples and their tests.

No schema registry server can be installed here (Karapace is not on PyPI,
Confluent's registry is not packaged), yet Confluent's Avro and Protobuf
converters (7.0, bundled with Debezium's engine) register every schema over
HTTP, and a reader of their records fetches the schemas by id. This module
speaks just enough of the registry's REST API for those converters and for
``confluent_kafka.schema_registry.SchemaRegistryClient``, and keeps the
schemas in memory:

- ``POST /subjects/{subject}/versions`` registers (``{"id": N}``; the same schema under a subject keeps its
  version, the same schema anywhere keeps its id; ids are global and count from 1);
- ``POST /subjects/{subject}`` looks a schema up under a subject;
- ``GET /schemas/ids/{id}`` (``schemaType`` left out for Avro), ``/schemas/ids/{id}/versions``,
  ``/schemas/ids/{id}/subjects``, ``GET /subjects``, ``/subjects/{s}/versions``,
  ``/subjects/{s}/versions/{version|latest}``, ``GET /schemas/types``;
- ``GET /config`` and ``/config/{subject}``: compatibility ``NONE``.

An unknown subject, version or id answers 404 with the registry's error body
(``error_code`` 40401, 40402, 40403); any other call answers 404 and is noted
in :attr:`Registry.unknown`. With ``auth=(user, password)`` every call needs
that HTTP basic authentication (401 without it).

:func:`save_schemas` writes the schemas a capture's records name beside it,
one ``<id>.json`` per id, the layout ``cdckit capture`` writes.

>>> import json, urllib.request
>>> with start() as registry:
...     request = urllib.request.Request(registry.url + "/subjects/t-value/versions", method="POST",
...                                      data=json.dumps({"schema": '"string"'}).encode())
...     print(urllib.request.urlopen(request).read().decode())
...     print(urllib.request.urlopen(registry.url + "/schemas/ids/1").read().decode())
{"id": 1}
{"schema": "\\"string\\"", "references": []}
"""

from __future__ import annotations

import base64
import json
import re
import threading
from collections.abc import Iterable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

__all__ = ["Registry", "start", "save_schemas", "CONTENT_TYPE"]

#: The registry's media type, on every answer.
CONTENT_TYPE = "application/vnd.schemaregistry.v1+json"
#: The schema types it keeps.
TYPES = ["AVRO", "JSON", "PROTOBUF"]


class _NotFound(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


class Registry:
    """The schemas registered so far, and the server answering for them (:func:`start` makes one).

    ``url`` is its base URL; ``unknown`` lists the ``(method, path)`` of calls it does not implement.
    """

    def __init__(self, auth: tuple[str, str] | None = None) -> None:
        self.auth = auth
        self.schemas: list[dict[str, Any]] = []  # id - 1 -> {"schemaType", "schema", "references"}
        self.subjects: dict[str, list[int]] = {}  # subject -> the id of each version
        self.unknown: list[tuple[str, str]] = []
        self.lock = threading.Lock()
        self.server: ThreadingHTTPServer | None = None
        self.url = ""

    # ---------------------------------------------------------------- the registry's rules

    def register(self, subject: str, body: dict[str, Any]) -> int:
        """The id of ``body``'s schema under ``subject``: a new version there unless it is already one."""
        schema = _schema(body)
        with self.lock:
            versions = self.subjects.setdefault(subject, [])
            for known in versions:
                if self.schemas[known - 1] == schema:
                    return known
            if schema in self.schemas:
                number = self.schemas.index(schema) + 1
            else:
                self.schemas.append(schema)
                number = len(self.schemas)
            versions.append(number)
            return number

    def lookup(self, subject: str, body: dict[str, Any]) -> dict[str, Any]:
        """The version of ``subject`` holding ``body``'s schema."""
        schema = _schema(body)
        for version, number in enumerate(self._versions(subject), start=1):
            if self.schemas[number - 1] == schema:
                return self._version(subject, version, number)
        raise _NotFound(40403, "Schema not found")

    def schema(self, number: int) -> dict[str, Any]:
        """``GET /schemas/ids/{id}``."""
        if not 1 <= number <= len(self.schemas):
            raise _NotFound(40403, "Schema not found")
        return _shown(self.schemas[number - 1])

    def versions_of(self, number: int) -> list[dict[str, Any]]:
        """Every subject and version holding schema ``number``."""
        self.schema(number)
        return [
            {"subject": subject, "version": version}
            for subject, ids in sorted(self.subjects.items())
            for version, known in enumerate(ids, start=1)
            if known == number
        ]

    def version(self, subject: str, version: str) -> dict[str, Any]:
        """``GET /subjects/{subject}/versions/{version|latest}``."""
        ids = self._versions(subject)
        index = len(ids) if version == "latest" else int(version) if version.isdigit() else 0
        if not 1 <= index <= len(ids):
            raise _NotFound(40402, "Version not found")
        return self._version(subject, index, ids[index - 1])

    def _versions(self, subject: str) -> list[int]:
        if subject not in self.subjects:
            raise _NotFound(40401, f"Subject '{subject}' not found.")
        return self.subjects[subject]

    def _version(self, subject: str, version: int, number: int) -> dict[str, Any]:
        return {"subject": subject, "version": version, "id": number, **_shown(self.schemas[number - 1])}

    def answer(self, method: str, path: str, body: dict[str, Any] | None) -> Any:
        """The JSON answer to one call (raises :class:`_NotFound` for what is not there)."""
        parts = [unquote(part) for part in path.strip("/").split("/")] if path.strip("/") else []
        if method == "POST" and len(parts) == 3 and parts[0] == "subjects" and parts[2] == "versions":
            return {"id": self.register(parts[1], body or {})}
        if method == "POST" and len(parts) == 2 and parts[0] == "subjects":
            return self.lookup(parts[1], body or {})
        if method != "GET":
            raise LookupError(path)
        if parts == ["subjects"]:
            return sorted(self.subjects)
        if parts == ["schemas", "types"]:
            return TYPES
        if parts and parts[0] == "config" and len(parts) <= 2:
            return {"compatibilityLevel": "NONE"}
        if len(parts) >= 3 and parts[:2] == ["schemas", "ids"] and re.fullmatch(r"\d+", parts[2]):
            number = int(parts[2])
            if len(parts) == 3:
                return self.schema(number)
            if parts[3:] == ["versions"]:
                return self.versions_of(number)
            if parts[3:] == ["subjects"]:
                return sorted({item["subject"] for item in self.versions_of(number)})
        if len(parts) == 3 and parts[0] == "subjects" and parts[2] == "versions":
            return list(range(1, len(self._versions(parts[1])) + 1))
        if len(parts) == 4 and parts[0] == "subjects" and parts[2] == "versions":
            return self.version(parts[1], parts[3])
        raise LookupError(path)

    # ---------------------------------------------------------------- the server

    def stop(self) -> None:
        """Stop answering."""
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
            self.server = None

    def __enter__(self) -> Registry:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _schema(body: dict[str, Any]) -> dict[str, Any]:
    """What identifies a registered schema: its type, its text and its references."""
    if not isinstance(body.get("schema"), str):
        raise ValueError("the request names no schema")
    return {
        "schemaType": body.get("schemaType") or "AVRO",
        "schema": body["schema"],
        "references": list(body.get("references") or []),
    }


def _shown(schema: dict[str, Any]) -> dict[str, Any]:
    """A schema as the registry shows it: no ``schemaType`` for Avro."""
    shown = {"schema": schema["schema"], "references": schema["references"]}
    if schema["schemaType"] != "AVRO":
        shown = {"schemaType": schema["schemaType"], **shown}
    return shown


def _handler(registry: Registry) -> type[BaseHTTPRequestHandler]:
    expected = None
    if registry.auth is not None:
        expected = "Basic " + base64.b64encode(":".join(registry.auth).encode()).decode()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # quiet
            pass

        def _send(self, status: int, answer: Any, headers: dict[str, str] | None = None) -> None:
            data = json.dumps(answer).encode()
            self.send_response(status)
            self.send_header("Content-Type", CONTENT_TYPE)
            self.send_header("Content-Length", str(len(data)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

        def _serve(self, method: str) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            if expected is not None and self.headers.get("Authorization") != expected:
                self._send(401, {"error_code": 401, "message": "Unauthorized"}, {"WWW-Authenticate": "Basic"})
                return
            path = urlsplit(self.path).path
            try:
                body = json.loads(raw) if raw else None
                self._send(200, registry.answer(method, path, body))
            except _NotFound as missing:
                self._send(404, {"error_code": missing.code, "message": str(missing)})
            except LookupError:
                registry.unknown.append((method, self.path))
                self._send(404, {"error_code": 404, "message": "HTTP 404 Not Found"})
            except ValueError as bad:
                self._send(422, {"error_code": 42201, "message": f"Invalid schema: {bad}"})

        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            self._serve("GET")

        def do_POST(self) -> None:  # noqa: N802
            self._serve("POST")

        def do_PUT(self) -> None:  # noqa: N802
            self._serve("PUT")

        def do_DELETE(self) -> None:  # noqa: N802
            self._serve("DELETE")

    return Handler


def start(port: int = 0, auth: tuple[str, str] | None = None) -> Registry:
    """A registry answering on ``127.0.0.1:port`` (a free port by default) in a daemon thread.

    ``auth``: ``(user, password)`` that every call must give as HTTP basic authentication.

    >>> with start(auth=("u", "p")) as registry:
    ...     registry.url.startswith("http://127.0.0.1:")
    True
    """
    registry = Registry(auth)
    server = ThreadingHTTPServer(("127.0.0.1", port), _handler(registry))
    server.daemon_threads = True
    registry.server = server
    registry.url = f"http://127.0.0.1:{server.server_address[1]}"
    threading.Thread(target=server.serve_forever, daemon=True, name="schema-registry").start()
    return registry


def save_schemas(
    registry_url: str, ids: Iterable[int], folder: Path, auth: tuple[str, str] | None = None
) -> list[Path]:
    """Write each schema ``ids`` names, fetched from the registry by cdckit's own
    :class:`~cdckit.io.schema_book.SchemaBook` (the schemas they refer to too), to ``folder/<id>.json``, the
    layout ``cdckit capture`` writes and every read finds; the files written.

    >>> import tempfile
    >>> with start() as registry, tempfile.TemporaryDirectory() as folder:
    ...     number = registry.register("t-key", {"schema": '"long"'})
    ...     [path] = save_schemas(registry.url, [number], Path(folder))
    ...     json.loads(path.read_text())["subject"], path.name
    ('t-key', '1.json')
    """
    from ..io.registered_schema import save_schemas as write_schemas
    from ..io.schema_book import SchemaBook

    book = SchemaBook(registry_url, {} if auth is None else {"basic.auth.user.info": ":".join(auth)})
    wanted = sorted(set(ids))
    missing = [number for number in wanted if book.lookup(number) is None]
    if missing:
        raise LookupError("; ".join(book.missing_reason(number) for number in missing))
    book.mark_used(wanted)
    return write_schemas(book.used(), folder)
