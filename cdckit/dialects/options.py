"""What a read tells every dialect it creates: one small carrier, so that a new setting is one field here.

- ``tz``: the zone of zone-less text times (UTC when None);
- ``unavailable_value``: the texts a connector writes for a value it could not read, besides Debezium's
  default ``__debezium_unavailable_value`` (its ``unavailable.value.placeholder`` setting; see
  :mod:`cdckit.dialects.debezium.unavailable`). Only the Debezium family reads it.
- ``key_separator``: the ``key.separator`` ``kafka-console-consumer`` printed between its fields, when
  not a tab (see :mod:`cdckit.io.console`). The readers follow it, not the dialects; it travels here
  with the rest of a read's settings (to the worker processes and Spark tasks).
- ``schemas``: where the schemas of framed records (Avro, Protobuf, JSON Schema in Confluent's wire format)
  are found (:class:`cdckit.io.schema_book.SchemaBook`); the read path decodes such records with it before
  any dialect sees them.

>>> DialectOptions(unavailable_value="__unchanged__")
DialectOptions(tz=None, unavailable_value=('__unchanged__',), key_separator=None, schemas=None)
>>> resolved(DialectOptions(unavailable_value=("a", "b")), tz="Asia/Tokyo").unavailable_value
('a', 'b')
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

from ..io.schema_book import SchemaBook

__all__ = ["DialectOptions", "resolved"]


@dataclasses.dataclass(frozen=True, init=False)
class DialectOptions:
    """The settings of a read that dialects follow (see the module notes); ``unavailable_value`` may be given
    as one text or several, and is kept as a tuple."""

    tz: str | None = None
    unavailable_value: tuple[str, ...] = ()
    key_separator: str | None = None
    schemas: SchemaBook | None = None

    def __init__(
        self,
        tz: str | None = None,
        unavailable_value: str | Iterable[str] | None = (),
        key_separator: str | None = None,
        schemas: SchemaBook | None = None,
    ) -> None:
        if key_separator is not None and (
            not isinstance(key_separator, str) or not key_separator or "\n" in key_separator
        ):
            raise ValueError(f"key_separator takes a non-empty text without a line end, not {key_separator!r}")
        given = unavailable_value
        texts = (given,) if isinstance(given, str) else tuple(dict.fromkeys(given or ()))
        for text in texts:
            if not isinstance(text, str) or not text:
                raise ValueError(f"unavailable_value takes non-empty texts, not {text!r}")
        object.__setattr__(self, "tz", tz)
        object.__setattr__(self, "unavailable_value", texts)
        object.__setattr__(self, "key_separator", key_separator)
        object.__setattr__(self, "schemas", schemas)


def resolved(options: DialectOptions | None = None, tz: str | None = None) -> DialectOptions:
    """``options`` (default ones when None), with ``tz`` when that is given too: the public ``tz=`` arguments
    keep working beside ``options=``."""
    if options is None:
        return DialectOptions(tz=tz)
    return options if tz is None or tz == options.tz else dataclasses.replace(options, tz=tz)
