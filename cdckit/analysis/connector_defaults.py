"""What a connector writes for a column whose value it did not read, and what an image then tells of its row.

Debezium writes a delete of a table whose replica identity is its key
(PostgreSQL's ``REPLICA IDENTITY DEFAULT``) with the key and, for every other
column, null or its type's default: those are not the row's values
(:func:`known_values`). Replay's keyless matching, compare, key inference and the
before/after views read images through it.

>>> known_values({"id": 1, "name": "", "qty": 0}, ["id"])
{'id': 1}
"""

from __future__ import annotations

import decimal
import re
from typing import Any

from .. import values

__all__ = ["known_values", "is_type_default"]


#: Texts a connector writes for a column it did not read, besides ``""``: a number, time or interval of zero
#: (``0``, ``0.0000000000``, epoch 0 as a date, time or timestamp with or without its zone), a Connect
#: ``Decimal``'s zero as the Base64 of its one zero byte (``AA==``) and the nil UUID.
_DEFAULT_TEXT = re.compile(
    r"[+-]?(?:0+(?:\.0*)?|\.0+)(?:[eE][+-]?\d+)?"
    r"|(?:1970-01-01(?:[T ]00:00(?::00(?:\.0+)?)?)?|00:00(?::00(?:\.0+)?)?)(?:Z|[+-]00(?::?00)?)?"
    r"|AA==|PT0S|P0Y0M0DT0H0M0S|00000000-0000-0000-0000-000000000000"
)


def is_type_default(value: Any) -> bool:
    """Whether ``value`` is what a connector writes for a column whose value it did not read: null, false, a
    zero (number or text, a time at epoch 0 or midnight), an empty text, list or object, Base64 ``AA==`` (a
    Connect ``Decimal`` zero) or a ``VariableScaleDecimal`` of it.

    >>> [is_type_default(v) for v in (None, 0, 0.0, "", False, "0.0000000000", "AA==", "1970-01-01T00:00:00Z")]
    [True, True, True, True, True, True, True, True]
    >>> [is_type_default(v) for v in (1, "Ann", True, "1970-01-02", {"scale": 0, "value": "AQ=="}, [0])]
    [False, False, False, False, False, False]
    """
    if value is None or value is False:
        return True
    kind = value.__class__
    if kind is str:
        return not value or _DEFAULT_TEXT.fullmatch(value) is not None
    if kind is list:
        return not value
    if kind is dict:
        return not value or (value.keys() == {"scale", "value"} and is_type_default(value["value"]))
    return kind is not bool and isinstance(value, (int, float, decimal.Decimal)) and value == 0


def known_values(image: dict[str, Any] | None, key_columns: Any) -> dict[str, Any] | None:
    """The part of a delete's before image that tells the row's values.

    Debezium writes a delete of a table whose replica identity is its key (PostgreSQL's ``REPLICA IDENTITY
    DEFAULT``) with the key and, for every other column, null or its type's default (``0``, ``""``,
    ``false``, epoch 0, ``AA==``...: :func:`is_type_default`): those are not the row's values. With the key
    columns known, such an image tells its key columns only, any other image all of itself. With none known
    (a capture of values without their Kafka keys), which columns are the key cannot be told, so a value a
    connector may have filled in tells nothing: the image without them (the whole image when none is).

    >>> known_values({"id": 1, "name": "", "qty": 0, "note": None}, ["id"])
    {'id': 1}
    >>> known_values({"id": 1, "name": "Ann", "qty": 0}, ["id"])
    {'id': 1, 'name': 'Ann', 'qty': 0}
    >>> known_values({"id": 7, "amount": "AA==", "at": "1970-01-01T00:00:00Z", "day": 0, "note": None}, None)
    {'id': 7}
    """
    if image is None or image.__class__ is not dict:
        return image
    keys = set() if key_columns is None or values.is_missing(key_columns) else set(key_columns)
    if not keys:
        known = {name: value for name, value in image.items() if not is_type_default(value)}
        return known if len(known) < len(image) else image
    if any(c not in image for c in keys) or len(image) <= len(keys):
        return image
    for name, value in image.items():
        if name not in keys and not is_type_default(value):
            return image
    return {name: value for name, value in image.items() if name in keys}
