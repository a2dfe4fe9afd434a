"""Debezium PostgreSQL change events shaped as the connector (pgoutput) writes them, for tests.

Kafka records as kcat ``-J`` saves them: the key and the value each in the
schema/payload wrapper, a ``source`` block with ``lsn`` and ``txId``, a
tombstone (null value) after each delete, and a primary-key update written as
a delete, a tombstone and a create at one LSN in one transaction. Under
``REPLICA IDENTITY DEFAULT`` an update that leaves a TOASTed value unchanged
carries the placeholder in the column's shape, and a delete's before image
holds the key and, for the other columns, null or (``NOT NULL`` columns) the
type's default.
"""

from __future__ import annotations

import base64
import json
from typing import Any

PLACEHOLDER = "__debezium_unavailable_value"
TOPIC = "pg.public.docs"

#: The table: id int PRIMARY KEY, name text NOT NULL, qty int NOT NULL, bio text, pic bytea, tags text[],
#: doc jsonb, nums int[].
FIELDS = [
    {"type": "int32", "optional": False, "default": 0, "field": "id"},
    {"type": "string", "optional": False, "field": "name"},
    {"type": "int32", "optional": False, "field": "qty"},
    {"type": "string", "optional": True, "field": "bio"},
    {"type": "bytes", "optional": True, "field": "pic"},
    {"type": "array", "items": {"type": "string", "optional": True}, "optional": True, "field": "tags"},
    {"type": "string", "optional": True, "name": "io.debezium.data.Json", "version": 1, "field": "doc"},
    {"type": "array", "items": {"type": "int32", "optional": True}, "optional": True, "field": "nums"},
]
#: What a delete's before image holds for a column that is not the key (REPLICA IDENTITY DEFAULT).
DEFAULTS = {"name": "", "qty": 0, "bio": None, "pic": None, "tags": None, "doc": None, "nums": None}


def unavailable(placeholder: str = PLACEHOLDER) -> dict[str, Any]:
    """The TOASTable columns as an update that left them unchanged carries them."""
    raw = placeholder.encode()
    return {"bio": placeholder, "pic": base64.b64encode(raw).decode(), "tags": [placeholder], "doc": placeholder,
            "nums": list(raw)}


def _source(lsn: int, txid: int, ts: int) -> dict[str, Any]:
    return {"version": "3.6.0.Final", "connector": "postgresql", "name": "pg", "ts_ms": ts, "snapshot": "false",
            "db": "shop", "sequence": f'[null,"{lsn}"]', "ts_us": ts * 1000, "ts_ns": ts * 1_000_000,
            "schema": "public", "table": "docs", "txId": txid, "lsn": lsn, "xmin": None}


def _image_schema(which: str) -> dict[str, Any]:
    return {"type": "struct", "fields": FIELDS, "optional": True, "name": f"{TOPIC}.Value", "field": which}


_SOURCE_SCHEMA = {"type": "struct", "fields": [
    {"type": "string", "optional": False, "field": name} for name in ("version", "connector", "name")] + [
    {"type": "int64", "optional": False, "field": "ts_ms"}, {"type": "string", "optional": False, "field": "db"},
    {"type": "string", "optional": False, "field": "schema"}, {"type": "string", "optional": False, "field": "table"},
    {"type": "int64", "optional": True, "field": "txId"}, {"type": "int64", "optional": True, "field": "lsn"},
    {"type": "int64", "optional": True, "field": "xmin"}], "optional": False, "name": "io.debezium.connector.postgresql.Source",
    "field": "source"}

VALUE_SCHEMA = {"type": "struct", "fields": [
    _image_schema("before"), _image_schema("after"), _SOURCE_SCHEMA,
    {"type": "string", "optional": False, "field": "op"}, {"type": "int64", "optional": True, "field": "ts_ms"}],
    "optional": False, "name": f"{TOPIC}.Envelope", "version": 2}


def _key(id_: int) -> str:
    return json.dumps({"schema": {"type": "struct", "fields": [{"type": "int32", "optional": False, "field": "id"}],
                                  "optional": False, "name": f"{TOPIC}.Key"}, "payload": {"id": id_}})


class Capture:
    """Builds the records of one capture, in order (``records``); ``placeholder``: the connector's
    ``unavailable.value.placeholder``."""

    def __init__(self, placeholder: str = PLACEHOLDER) -> None:
        self.placeholder = placeholder
        self.records: list[dict[str, Any]] = []
        self.lsn, self.txid, self.ts = 24_000_000, 700, 1_714_554_000_000

    def _add(self, key: int, value: dict[str, Any] | None) -> None:
        payload = None if value is None else json.dumps({"schema": VALUE_SCHEMA, "payload": value})
        self.records.append({"topic": TOPIC, "partition": 0, "offset": len(self.records), "key": _key(key),
                             "payload": payload})

    def _envelope(self, op: str, before: Any, after: Any) -> dict[str, Any]:
        return {"before": before, "after": after, "source": _source(self.lsn, self.txid, self.ts), "op": op,
                "ts_ms": self.ts + 40}

    def _next(self) -> None:
        self.lsn += 1000
        self.txid += 1
        self.ts += 1000

    def insert(self, row: dict[str, Any]) -> Capture:
        self._next()
        self._add(row["id"], self._envelope("c", None, row))
        return self

    def update(self, row: dict[str, Any], unchanged: bool = True) -> Capture:
        """An update (before null: REPLICA IDENTITY DEFAULT); ``unchanged``: the TOAST columns as placeholders."""
        self._next()
        self._add(row["id"], self._envelope("u", None, {**row, **(unavailable(self.placeholder) if unchanged else {})}))
        return self

    def delete(self, id_: int) -> Capture:
        self._next()
        self._add(id_, self._envelope("d", {"id": id_, **DEFAULTS}, None))
        self._add(id_, None)
        return self

    def change_key(self, old: int, row: dict[str, Any]) -> Capture:
        """``UPDATE ... SET id = new, <row's other columns>``: delete, tombstone and create at one LSN."""
        self._next()
        self._add(old, self._envelope("d", {"id": old, **DEFAULTS}, None))
        self._add(old, None)
        self._add(row["id"], self._envelope("c", None, {**row, **unavailable(self.placeholder)}))
        return self
