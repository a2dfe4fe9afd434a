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
    return None


def bare_row_reason(value: Any) -> str | None:
    """The reason for a message no dialect recognises that is a plain row of column values, or None."""
    if isinstance(value, dict) and value and all(not isinstance(v, (dict, list)) for v in value.values()):
        return BARE_ROW
    return None
