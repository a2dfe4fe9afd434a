"""Debezium's MongoDB connector: documents as extended-JSON text, updates as patches or update descriptions.

The envelope is Debezium's (``op``, ``source``, ``ts_ms``), but a document is
sent as the TEXT of MongoDB extended JSON (the connector's
``io.debezium.data.Json`` type), not as an object:

- ``after`` holds the whole document of an insert, a snapshot read, and of
  an update when the connector is set to look it up
  (``capture.mode=change_streams_update_full``); ``before`` holds the
  document before the change when pre-images are captured;
- connectors of the change-streams era describe an update in
  ``updateDescription``: ``updatedFields`` (text: the new values, dotted
  paths for nested fields), ``removedFields`` (names) and
  ``truncatedArrays``;
- older, oplog-based connectors send an update's ``patch`` (text:
  ``{"$set": ..., "$unset": ...}``, the ``{"$v": 2, "diff": ...}`` form, or a
  whole replacement document) and a ``filter`` (text: ``{"_id": ...}``) for
  updates and deletes.

cdckit turns every document into plain JSON values: ``{"$oid": h}`` → ``h``,
``{"$date": ms}`` → ISO-8601 UTC text with milliseconds, ``$numberLong`` and
``$numberInt`` → integers, ``$numberDouble`` → a number (``NaN`` and the
infinities stay text), ``$numberDecimal`` → an exact number (text when a
double would lose digits), ``$binary`` → its Base64 text, ``$uuid``,
``$symbol`` and ``$code`` → text; other wrappers stay objects. An update
without a whole document is a PARTIAL after image: ``_id`` plus the updated
fields, a removed field as ``null``. This dialect declares
``partial_updates``, so replay merges such an image onto the row. The key is
``_id``: the Kafka key's ``id`` (extended-JSON text), else the document's or
the filter's ``_id``. A delete without a pre-image has ``{"_id": ...}`` as
its before image.

A capture read with ``dialect="debezium"`` decodes MongoDB messages the same
way (:class:`~cdckit.dialects.debezium.Debezium` and this dialect share
:mod:`cdckit.dialects.debezium.mongodb`), but only
this dialect's name tells replay to merge partial updates; detection picks
it for MongoDB messages.

>>> import cdckit, json
>>> msg = {"op": "u", "after": None, "source": {"connector": "mongodb", "db": "inventory",
...        "collection": "customers", "ts_ms": 1558965508000, "ord": 6},
...        "updateDescription": {"updatedFields": json.dumps({"email": "a@b.c"}), "removedFields": ["nick"]}}
>>> key = json.dumps({"id": json.dumps({"$oid": "596e275826f08b2730779e1f"})})
>>> ev = cdckit.read([json.dumps({"topic": "t", "partition": 0, "offset": 5, "key": key, "payload": json.dumps(msg)})])
>>> ev.loc[0, ["dialect", "op", "table", "key"]].tolist()
['debezium_mongodb', 'update', 'customers', '["596e275826f08b2730779e1f"]']
>>> ev.loc[0, "after"]
'{"_id":"596e275826f08b2730779e1f","email":"a@b.c","nick":null}'
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timezone
from typing import Any

import msgspec
import orjson
import pandas as pd

from .. import values
from ..frame import Event, FastRow
from ..io import Message, kafka_key
from ..row_images import key_of, parse_image
from .base import BadMessage, Match, Record, rows_of
from .debezium import Debezium
from .debezium.envelope import OPS, envelope_time, source_time, unwrap
from .debezium.mongodb import MISSING, MONGODB_FIELDS, id_of, is_mongodb, kafka_id, mongodb_change, transaction_of
from .registry import register

__all__ = ["DebeziumMongoDB"]

EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


@register
class DebeziumMongoDB(Debezium):
    """Debezium change events of the MongoDB connector."""

    name = "debezium_mongodb"
    uses_kafka_topic = False  # a collection is named db.collection by its source block alone
    title = "Debezium MongoDB connector JSON"
    spec = "docs/specs/debezium_mongodb.md (public Debezium documentation, MongoDB connector)"
    partial_updates = True
    quirks = (
        "Documents arrive as extended-JSON text; $oid, $date, $numberLong... become plain values.",
        "An update without the whole document is partial: _id plus the updated fields; replay merges it.",
        "A removed field is written as null in the partial image (an image cannot say 'absent from now on').",
        "truncatedArrays (an array cut to a size) cannot be shown without the array: such a field is left out.",
        'The key is _id; a delete without a pre-image carries only {"_id": ...} as its before image.',
    )

    def detect(self, value: Any) -> Match | None:
        if value is None:
            return Match(0.3, ("null value (Kafka tombstone)",))
        payload, _ = unwrap(value)
        if payload is None or not is_mongodb(payload):
            return None
        evidence = ["op=" + str(payload.get("op"))]
        evidence += [f for f in MONGODB_FIELDS if f in payload]
        evidence += [f"{f} is text" for f in ("after", "before") if isinstance(payload.get(f), str)]
        if isinstance(payload.get("source"), dict) and payload["source"].get("connector") == "mongodb":
            evidence.append("source.connector=mongodb")
        return Match(0.95, tuple(evidence))

    def change(
        self, payload: dict[str, Any], schema: dict[str, Any] | None, kafka_key: Any, topic: str | None = None
    ) -> Event:
        if is_mongodb(payload):
            return mongodb_change(self, payload, kafka_key)
        return super().change(payload, schema, kafka_key, topic)

    def tombstone(self, message: Message, op_raw: str) -> Event:
        """A Kafka tombstone: the ``_id`` its key names."""
        ident = kafka_id(message.key)
        return Event(
            op="tombstone",
            op_raw=op_raw,
            key_columns=None if ident is MISSING else ["_id"],
            key=None if ident is MISSING else key_of({"_id": ident}, ["_id"]),
        )

    def decode_lines(
        self, lines: list[bytes], keys: list | None = None, topics: list | None = None
    ) -> list[tuple | None]:
        """The usual MongoDB change (whole documents or none, no update description or patch, in a bare
        or wrapped envelope) read by msgspec, a document's text parsed once by orjson when it holds no
        extended-JSON wrapper and no number a double cannot carry. Anything else is handed back to
        :meth:`decode` (None); what is taken equals what :meth:`decode` gives. ``topics`` are not read
        (a collection is named by the source block alone).
        """
        out: list[tuple | None] = []
        append = out.append
        errors = (msgspec.DecodeError, msgspec.ValidationError, ValueError, BadMessage, TypeError)
        for index, line in enumerate(lines):
            try:
                append(self._fast_document(_payload_of(line), None if keys is None else keys[index]))
            except errors:
                append(None)
        return out

    def _fast_document(self, payload: _Change | None, key_text: Any) -> tuple | None:
        if payload is None:
            return None
        op_raw = payload.op
        op = OPS.get(op_raw)
        if op not in ("insert", "read", "update", "delete"):
            return None
        after, before = _plain_document(payload.after), _plain_document(payload.before)
        if after is MISSING or before is MISSING or (after is None and op != "delete"):
            return None
        ident = kafka_id(kafka_key(key_text)) if key_text is not None else MISSING
        if ident is MISSING:
            ident = id_of(after, before)
        if op == "delete" and before is None:
            if ident is MISSING:
                return None
            before = {"_id": ident}
        source = payload.source
        envelope = {"ts_ms": payload.ts_ms, "transaction": payload.transaction}
        key_columns = None if ident is MISSING else ["_id"]
        return FastRow(
            op,
            op_raw,
            source.get("db"),
            None,
            source.get("collection") or source.get("table"),
            source_time(source),
            envelope_time(envelope),
            self.position(source),
            transaction_of(self, envelope, source),
            key_columns,
            None if key_columns is None else key_of({"_id": ident}, key_columns),
            values.image(before),
            None if op == "delete" else values.image(after),
            None,
        )

    # ------------------------------------------------------------ encoding

    def encode(self, events: pd.DataFrame) -> Iterator[Record]:
        """MongoDB connector messages: whole documents as relaxed extended-JSON text, keys as ``{"id": text}``.

        Updates are written with the whole document in ``after`` (as with
        ``capture.mode=change_streams_update_full``) and the pre-image in
        ``before``; a document without ``_id`` gets its key value (a list
        for a composite key): the event's key, and for a before image its
        own, so an update that changes the key names the old document. A ``seq`` of the form ``ts_ms:ord`` is
        written back as ``source.ts_ms``/``ord``; other events get ``ord``
        in input order. Only row changes are written (MongoDB's connector
        sends no DDL or truncate).
        """
        for number, row in enumerate(rows_of(events)):
            op = row["op"]
            code = {"insert": "c", "update": "u", "delete": "d", "read": "r"}.get(op)
            if code is None:
                continue
            key_value = _key_value(row["key"])
            after = _with_id(row["after"], key_value)
            before = _with_id(
                row["before"],
                key_value if op == "delete" else _key_value(key_of(parse_image(row["before"]), row["key_columns"])),
            )
            ident = (after or before or {}).get("_id", key_value)
            payload = {
                "before": None if before is None else values.image(before),
                "after": None if after is None or op == "delete" else values.image(after),
                "updateDescription": None,
                "source": _encode_source(row, number),
                "op": code,
                "ts_ms": values.ns_to_ms(row["emit_time"]),
                "transaction": None
                if row["txn_id"] is None
                else {"id": row["txn_id"], "total_order": None, "data_collection_order": None},
            }
            key = None if ident is None else {"id": values.dumps(ident)}
            yield Record(payload, key)


# ---------------------------------------------------------------- decoding


class _Change(msgspec.Struct, forbid_unknown_fields=True):
    """A MongoDB change as the batch decoder takes it: documents as text or null, no update description
    other than null, no ``patch``/``filter`` (unknown fields fail and the message goes to ``decode``)."""

    op: str
    source: dict
    after: str | None = None
    before: str | None = None
    updateDescription: None = None
    ts_ms: int | None = None
    transaction: dict | None = None


class _Wrapped(msgspec.Struct, forbid_unknown_fields=True):
    schema: msgspec.Raw
    payload: _Change


_CHANGE = msgspec.json.Decoder(_Change)
_WRAPPED = msgspec.json.Decoder(_Wrapped)


def _payload_of(line: bytes) -> _Change | None:
    if not line.isascii():
        line.decode()  # msgspec skips unread fields unchecked: bad UTF-8 anywhere is bad JSON
    if line.startswith(b'{"schema"'):
        return _WRAPPED.decode(line).payload
    return _CHANGE.decode(line)


def _plain_document(text: str | None) -> Any:
    """A document's text parsed when it holds no extended-JSON wrapper (else ``MISSING``: decode reads it)."""
    if text is None:
        return None
    data = text.encode()
    if not data.lstrip().startswith(b"{") or b'"$' in data or b"\\u" in data or values.has_long_number(data):
        return MISSING
    parsed = orjson.loads(data)
    return parsed if isinstance(parsed, dict) else MISSING


# ---------------------------------------------------------------- encoding helpers


def _key_value(key: str | None) -> Any:
    """A key text as one value (a list for a composite key), or None."""
    if key is None:
        return None
    parts = values.loads(key)
    return parts[0] if isinstance(parts, list) and len(parts) == 1 else parts


def _with_id(image: Any, key_value: Any) -> dict[str, Any] | None:
    if image is None:
        return None
    doc = values.loads(image)
    if "_id" not in doc and key_value is not None:
        doc = {"_id": key_value, **doc}
    return doc


def _encode_source(row: dict[str, Any], number: int) -> dict[str, Any]:
    seq = row["seq"] or ""
    ts, _, ord_ = seq.partition(":")
    event_ms = values.ns_to_ms(row["event_time"])
    if ts.isdigit() and ord_.isdigit() and int(ts) == (event_ms or 0):
        ordinal = int(ord_)
    else:
        ordinal = number + 1
    return {
        "version": "2.7.0.Final",
        "connector": "mongodb",
        "name": "cdckit",
        "ts_ms": event_ms,
        "snapshot": "true" if row["op"] == "read" else "false",
        "db": row["database"],
        "rs": "rs0",
        "collection": row["table"],
        "ord": ordinal,
        "lsid": None,
        "txnNumber": None,
    }
