"""The value rules of DataHub Blob (:mod:`cdckit.dialects.datahub_blob`): the primary key and the column kinds
a ``schema`` names, and the images typed by them (StreamX sends numbers and booleans as text).

>>> column_kinds([{"name": "id", "type": "LONG"}, {"name": "note", "type": "STRING"}])
{'id': 'int'}
"""

from __future__ import annotations

from typing import Any

from .. import values
from .base import BadMessage, expect_object, require_object

__all__ = ["KINDS", "DECLARED_KINDS", "primary_key", "column_kinds", "declared_columns", "typed_image", "typed_row"]

#: StreamX column type -> values.coerce kind (STRING and BYTES stay text).
KINDS = {"LONG": "int", "DOUBLE": "float", "BOOLEAN": "bool", "DATE": "int"}
#: StreamX column type -> the kind declared (:mod:`cdckit.column_types`); DATE is epoch milliseconds.
DECLARED_KINDS = {
    "LONG": "int",
    "DOUBLE": "float",
    "BOOLEAN": "bool",
    "STRING": "string",
    "DATE": "timestamp(ms)",
    "BYTES": "binary",
}


def primary_key(names: Any) -> list[str] | None:
    """``schema.primaryKey`` as a list of names (None when absent or empty: no key)."""
    if not names:
        return None
    if type(names) is not list:
        raise BadMessage("schema.primaryKey is not a list")
    return [n if type(n) is str else str(n) for n in names]


def column_kinds(columns: Any) -> dict[str, str]:
    """``{column: coerce kind}`` from ``schema.dataColumn`` for the types that need typing."""
    if not columns:
        return {}
    try:
        return {c["name"]: kind for c in columns if (kind := KINDS.get(c["type"])) is not None}
    except (TypeError, KeyError):
        raise BadMessage("schema.dataColumn is not a list of {name, type} objects") from None


def declared_columns(columns: Any) -> dict[str, tuple[str, str]]:
    """The column types a ``schema.dataColumn`` declares, ``{column: (type, kind)}`` (a type not known here
    declares ``string``; entries without a text name and type are left out).

    >>> declared_columns([{"name": "id", "type": "LONG"}, {"name": "at", "type": "DATE"}])
    {'id': ('LONG', 'int'), 'at': ('DATE', 'timestamp(ms)')}
    """
    declared = {}
    if columns.__class__ is list:
        for column in columns:
            if column.__class__ is dict and column.get("name").__class__ is str and column.get("type").__class__ is str:
                declared[column["name"]] = (column["type"], DECLARED_KINDS.get(column["type"], "string"))
    return declared


def typed_image(image: Any, kinds: dict[str, str], side: str) -> dict[str, Any] | None:
    """``payload.<side>.dataColumn`` with text values typed by their column kind (None when absent)."""
    if image is None:
        return None
    if type(image) is not dict:
        image = expect_object(image, f"payload.{side}")
    row = require_object(image, "dataColumn", f"payload.{side}.")
    return typed_row(row, kinds)


def typed_row(row: dict[str, Any], kinds: dict[str, str]) -> dict[str, Any]:
    """``row`` with its text values typed by their column kind (``row`` itself when none is text).

    >>> typed_row({"id": "7", "ok": "true", "note": "x"}, {"id": "int", "ok": "bool"})
    {'id': 7, 'ok': True, 'note': 'x'}
    """
    typed = None
    for name, kind in kinds.items():
        value = row.get(name)
        if value.__class__ is str:
            if typed is None:
                typed = dict(row)
            typed[name] = values.coerce(value, kind)
    return row if typed is None else typed
