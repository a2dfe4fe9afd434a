"""MongoDB documents in a Debezium envelope: the change rules the ``debezium`` dialect and the
``debezium_mongodb`` dialect (:mod:`cdckit.dialects.debezium_mongodb`, which builds on this package) share.

The connector sends each document as the text of MongoDB extended JSON; these
rules turn it into plain JSON values, an update without a whole document into
a partial after image, and name the key ``_id`` (see the dialect's notes).

>>> plain_value({"$oid": "596e275826f08b2730779e1f"}), plain_value({"$numberLong": "7"})
('596e275826f08b2730779e1f', 7)
>>> is_mongodb({"op": "u", "patch": "{}"}), is_mongodb({"op": "u", "after": {"id": 1}})
(True, False)
"""

from __future__ import annotations

import math
from datetime import datetime, timedelta, timezone
from typing import Any

from ... import values
from ...frame import Event
from ...row_images import key_of
from ..base import BadMessage, expect_object
from .envelope import change_op, envelope_time, kafka_payload, source_time

__all__ = [
    "MONGODB_FIELDS",
    "MISSING",
    "is_mongodb",
    "mongodb_change",
    "document",
    "partial_update",
    "plain_value",
    "kafka_id",
    "id_of",
    "transaction_of",
]

#: Fields only the MongoDB connector's envelope has.
MONGODB_FIELDS = ("patch", "filter", "updateDescription")
EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def is_mongodb(payload: dict[str, Any]) -> bool:
    """True when a Debezium payload is the MongoDB connector's (JSON object text as documents, patch, filter...)."""
    source = payload.get("source")
    if isinstance(source, dict) and source.get("connector") == "mongodb":
        return True
    return any(f in payload for f in MONGODB_FIELDS) or any(
        isinstance(payload.get(f), str) and payload[f].lstrip().startswith("{") for f in ("after", "before")
    )


def mongodb_change(dialect: Any, payload: dict[str, Any], kafka_key: Any) -> Event:
    """The event of one MongoDB connector change (see the module notes)."""
    op_raw, op = change_op(payload)
    source = expect_object(payload.get("source") or {}, "source")
    after = document(payload.get("after"), "after")
    before = document(payload.get("before"), "before")
    ident = kafka_id(kafka_key)
    if ident is MISSING:
        ident = id_of(after, before, document(payload.get("filter"), "filter"))
    if op == "update" and after is None:
        after = partial_update(payload)
        if after is None:
            raise BadMessage("update with neither a document, an updateDescription nor a patch")
        if ident is not MISSING:
            after = {"_id": ident, **{k: v for k, v in after.items() if k != "_id"}}
    if op == "delete" and before is None and ident is not MISSING:
        before = {"_id": ident}
    if op in ("insert", "read") and after is None:
        raise BadMessage(f"op {op_raw!r} without an after document")
    if op == "delete" and before is None:
        raise BadMessage("delete without a document, a filter or a key to name the deleted _id")
    key_columns = None if ident is MISSING else ["_id"]
    return Event(
        op=op,
        op_raw=op_raw,
        database=source.get("db"),
        table=source.get("collection") or source.get("table"),
        event_time=source_time(source),
        emit_time=envelope_time(payload),
        seq=dialect.position(source),
        txn_id=transaction_of(dialect, payload, source),
        key_columns=key_columns,
        key=None if key_columns is None else key_of({"_id": ident}, key_columns),
        before=values.image(before),
        after=None if op == "delete" else values.image(after),
    )


def document(text: Any, which: str) -> dict[str, Any] | None:
    """A document sent as extended-JSON text (or an object), with plain values; None for none.

    >>> document('{"_id": {"$oid": "5d2"}, "n": {"$numberLong": "7"}, "at": {"$date": 0}}', "after")
    {'_id': '5d2', 'n': 7, 'at': '1970-01-01T00:00:00.000Z'}
    """
    if text is None:
        return None
    if isinstance(text, str):
        try:
            text = values.loads(text)
        except ValueError as err:
            raise BadMessage(f"{which} is not extended JSON: {err}") from err
    return plain_value(expect_object(text, which))


def partial_update(payload: dict[str, Any]) -> dict[str, Any] | None:
    """The changed fields of an update sent without its document (a removed field as None), or None."""
    described = payload.get("updateDescription")
    if described is not None:
        described = expect_object(described, "updateDescription")
        updated = document(described.get("updatedFields"), "updateDescription.updatedFields") or {}
        removed = described.get("removedFields") or []
        if not isinstance(removed, list):
            raise BadMessage(f"removedFields is not a list: {removed!r}")
        return {**updated, **{str(name): None for name in removed if str(name) not in updated}}
    patch = document(payload.get("patch"), "patch")
    if patch is None:
        return None
    if not any(name.startswith("$") for name in patch):
        return patch  # a whole replacement document
    if isinstance(patch.get("diff"), dict):  # the {"$v": 2, "diff": {"u": ..., "i": ..., "d": ...}} form
        diff = patch["diff"]
        changed = {**_object(diff.get("i")), **_object(diff.get("u"))}
        return {**changed, **{name: None for name in _object(diff.get("d")) if name not in changed}}
    updated = _object(patch.get("$set"))
    return {**updated, **{name: None for name in _object(patch.get("$unset")) if name not in updated}}


def plain_value(value: Any) -> Any:
    """A value of relaxed or canonical extended JSON as a plain JSON value (see the module notes).

    >>> plain_value({"$numberDecimal": "1.10"}), plain_value([{"$numberInt": "3"}, {"$numberDouble": "NaN"}])
    (1.1, [3, 'NaN'])
    """
    if isinstance(value, dict):
        if value and len(value) <= 2 and next(iter(value)).startswith("$"):
            plain = _unwrapped(value)
            if plain is not MISSING:
                return plain
        return {name: plain_value(v) for name, v in value.items()}
    if isinstance(value, list):
        return [plain_value(v) for v in value]
    return value


def _unwrapped(value: dict[str, Any]) -> Any:
    """The plain value of one extended-JSON type wrapper, or ``MISSING`` when it is not one."""
    (name, inner), *rest = value.items()
    if rest and not (name in ("$binary", "$regex", "$code") and rest[0][0] in ("$type", "$options", "$scope")):
        return MISSING
    if name == "$oid" and isinstance(inner, str):
        return inner
    if name == "$date":
        return _date(inner)
    if name in ("$numberLong", "$numberInt") and isinstance(inner, str):
        return values.coerce(inner, "int")
    if name == "$numberDouble" and isinstance(inner, str):
        number = values.coerce(inner, "float")
        return number if isinstance(number, float) and math.isfinite(number) else inner
    if name == "$numberDecimal" and isinstance(inner, str):
        return values.exact_number(inner) if values.coerce(inner, "float") != inner else inner
    if name == "$binary":
        return inner.get("base64", inner) if isinstance(inner, dict) else inner
    if name in ("$uuid", "$symbol") and isinstance(inner, str):
        return inner
    if name == "$code" and not rest:
        return inner
    if name == "$undefined":
        return None
    return MISSING


def _date(inner: Any) -> Any:
    """A ``$date`` as ISO-8601 UTC text with milliseconds (text dates as given)."""
    if isinstance(inner, dict) and isinstance(inner.get("$numberLong"), str):
        inner = values.coerce(inner["$numberLong"], "int")
    if isinstance(inner, (int, float)) and not isinstance(inner, bool):
        try:
            return (EPOCH + timedelta(milliseconds=inner)).isoformat(timespec="milliseconds").replace("+00:00", "Z")
        except OverflowError:
            return inner
    return inner


MISSING = object()


def kafka_id(kafka_key: Any) -> Any:
    """The ``_id`` the Kafka key names (its ``id`` field, extended-JSON text), or ``MISSING``."""
    key = kafka_payload(kafka_key)
    if not isinstance(key, dict) or "id" not in key:
        return MISSING
    text = key["id"]
    if isinstance(text, str):
        try:
            return plain_value(values.loads(text))
        except ValueError:
            return text  # an id written as bare text
    return plain_value(text)


def id_of(*documents: dict[str, Any] | None) -> Any:
    for doc in documents:
        if doc is not None and "_id" in doc:
            return doc["_id"]
    return MISSING


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def transaction_of(dialect: Any, payload: dict[str, Any], source: dict[str, Any]) -> str | None:
    """Debezium's transaction id, else the session's ``lsid`` and ``txnNumber`` of a MongoDB transaction."""
    found = dialect.transaction_id(payload, source)
    if found is not None or source.get("txnNumber") is None:
        return found
    lsid = source.get("lsid")
    return f"{lsid}:{source['txnNumber']}" if lsid else str(source["txnNumber"])


# ---------------------------------------------------------------- the batch decoder's view of a message
