"""Known shapes cdckit does not decode, recognised so that the quarantine can name them.

A message no dialect decodes gets "no dialect recognises this message"
unless it has a shape that is known: then the reason says what it is and
what to do (code ``unsupported_format``).

>>> unsupported_reason({"encrypted": {"iv": "9Gw=", "bytes": "Zm9v"}})
"an encrypted Maxwell message (Maxwell's encrypt option): decrypt it with the secret key first"
>>> bare_row_reason({"id": 1, "name": "a"})[:56]
'a bare row with no change metadata (no op, table or time'
>>> unsupported_reason({"type": "insert"}) is None
True
"""

from __future__ import annotations

from typing import Any

__all__ = ["unsupported_reason", "bare_row_reason", "BARE_ROW"]

#: Why a plain row of column values cannot be read as changes (the debezium_flat dialect quarantines it too).
BARE_ROW = (
    "a bare row with no change metadata (no op, table or time: no __op, __table, __source_ts_ms or "
    "__deleted field), as Debezium's ExtractNewRecordState writes without add.fields: add them with "
    "add.fields=op,db,table,source.ts_ms and delete.tombstone.handling.mode=rewrite (read as debezium_flat), "
    "or load the rows as a table snapshot"
)


def unsupported_reason(value: Any) -> str | None:
    """Why cdckit does not decode a message of a known shape, or None when its shape is not one of them.

    These shapes are told apart by fields no dialect has, so the reason
    stands even when a dialect tried the message.
    """
    if not isinstance(value, dict):
        return None
    encrypted = value.get("encrypted")
    if isinstance(encrypted, dict) and "iv" in encrypted and "bytes" in encrypted:
        return "an encrypted Maxwell message (Maxwell's encrypt option): decrypt it with the secret key first"
    key = _record_key(value)
    if key is not None:
        return (
            f"a Kafka record key alone ({key}), not a change: a printer wrote the key on its own line, or this is a "
            "tombstone whose null value it left out; read the records with their keys (kcat -J, or "
            "kafka-console-consumer with print.key=true) so that each key stays with its value"
        )
    return None


def _record_key(value: dict[str, Any]) -> str | None:
    """What names a message as a record key of Kafka Connect (a struct schema named ``*.Key`` and its payload) or
    of Debezium MongoDB (only ``id``, the document's id as extended JSON text), or None.

    >>> _record_key({"schema": {"type": "struct", "name": "srv.inv.t.Key"}, "payload": {"id": 1}})
    'schema srv.inv.t.Key'
    >>> _record_key({"id": '{"$oid": "5f05a9a9"}'}), _record_key({"id": '"sku-7"'}), _record_key({"id": "7"})
    ('a MongoDB document id', 'a MongoDB document id', None)
    """
    schema = value.get("schema")
    if value.keys() == {"schema", "payload"} and isinstance(schema, dict):
        name = schema.get("name")
        if schema.get("type") == "struct" and isinstance(name, str) and name.endswith(".Key"):
            return f"schema {name}"
    ident = value.get("id")
    if value.keys() == {"id"} and isinstance(ident, str) and ident.lstrip().startswith(('{"$', '"')):
        return "a MongoDB document id"  # (an ObjectId, a number type or a string id, as extended JSON text)
    return None


def bare_row_reason(value: Any) -> str | None:
    """The reason for a message no dialect recognises that is a plain row of column values, or None."""
    if isinstance(value, dict) and value and all(not isinstance(v, (dict, list)) for v in value.values()):
        return BARE_ROW
    return None
