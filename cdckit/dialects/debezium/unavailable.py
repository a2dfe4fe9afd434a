"""Debezium's placeholder for a value it could not read: an unchanged TOASTed (or LOB) column.

Under ``REPLICA IDENTITY DEFAULT`` PostgreSQL does not send a large
(TOASTed) value an update left unchanged; Debezium writes in its place the
connector's ``unavailable.value.placeholder`` (``__debezium_unavailable_value``
by default; Oracle's connector does the same for LOBs it did not read), in
the shape of the column's type:

- text, ``jsonb``, ``xml``, ``uuid``, ``numeric`` as text...: the placeholder itself;
- ``bytea`` (and a ``Decimal`` carried as bytes): its bytes, which JSON shows
  as Base64 (``binary.handling.mode`` bytes or base64, URL-safe too) or hex
  (``hex``);
- a text array: a one-element array of it; an ``int``/``bigint`` array: one
  number per byte of it; ``hstore``: a map of it to itself (or that map as
  JSON text, ``hstore.handling.mode=json``).

The value means *unchanged*, not a value: the decoders leave the column out of
the image, as wal2json and test_decoding do for an unchanged TOAST value, and
replay keeps the value the row had (see :mod:`cdckit.analysis.replayer`).

>>> placeholder = Unavailable()
>>> placeholder.stripped({"id": 1, "bio": "__debezium_unavailable_value", "tags": ["__debezium_unavailable_value"],
...                       "pic": "X19kZWJleml1bV91bmF2YWlsYWJsZV92YWx1ZQ==", "note": None})
{'id': 1, 'note': None}
>>> placeholder.seen(b'{"id":1,"bio":"__debezium_unavailable_value"}'), placeholder.seen(b'{"id":1}')
(True, False)

A connector whose ``unavailable.value.placeholder`` is set to another text writes that one; several
connectors' captures read together may hold several (``cdckit.read(..., unavailable_value=...)``):

>>> Unavailable("__debezium_unavailable_value", "<unchanged>").stripped({"id": 1, "bio": "<unchanged>",
...                                                                       "pic": "PHVuY2hhbmdlZD4="})
{'id': 1}
"""

from __future__ import annotations

import base64
import json
import re
from typing import Any

__all__ = ["DEFAULT_PLACEHOLDER", "Unavailable"]

#: The connector's default ``unavailable.value.placeholder``.
DEFAULT_PLACEHOLDER = "__debezium_unavailable_value"


class Unavailable:
    """The forms the placeholder texts (the default one when none is given) take in an image (see the module
    notes), and the tests for them."""

    def __init__(self, *placeholders: str) -> None:
        placeholders = tuple(dict.fromkeys(placeholders)) or (DEFAULT_PLACEHOLDER,)
        for placeholder in placeholders:
            if not isinstance(placeholder, str) or not placeholder:
                raise ValueError(f"the unavailable value placeholder must be a non-empty text, not {placeholder!r}")
        self.placeholders = placeholders
        texts: set[str] = set()
        lists: list[list[Any]] = []
        maps: list[dict[str, str]] = []
        for placeholder in placeholders:
            raw = placeholder.encode()
            texts |= {
                placeholder,
                base64.b64encode(raw).decode(),
                base64.urlsafe_b64encode(raw).decode(),
                raw.hex(),
                raw.hex().upper(),
                *(
                    json.dumps({placeholder: placeholder}, separators=separators, ensure_ascii=ascii)
                    for separators in ((", ", ": "), (",", ":"))
                    for ascii in (True, False)
                ),
            }
            lists += [[placeholder], [b for b in raw], [b - 256 if b > 127 else b for b in raw]]
            maps.append({placeholder: placeholder})
        self.texts = frozenset(texts)
        self.lists = tuple(lists)
        self.maps = tuple(maps)
        #: Byte strings one of which any raw JSON image holding a placeholder contains (a cheap first test: the
        #: first bytes of each form, as a long needle costs a search more than the image's length).
        forms = {
            *(
                json.dumps(t, ensure_ascii=ascii)[1:-1].encode()
                for t in texts
                if not t.startswith("{")
                for ascii in (True, False)
            ),
            *(",".join(str(b) for b in numbers).encode() for numbers in lists if numbers[0].__class__ is int),
        }
        self.needles = tuple(sorted({form[:8] for form in forms}))
        #: The same forms' first 32 bytes: over a long text without escapes (:meth:`seen_anywhere`) a longer
        #: needle skips further (three times faster than 8 bytes).
        self.long_needles = tuple(sorted({form[:32] for form in forms}))
        self._search = re.compile(b"|".join(re.escape(needle) for needle in self.needles)).search

    def seen(self, data: bytes) -> bool:
        """Whether the raw JSON ``data`` may hold the placeholder (one search: the images to look at)."""
        return self._search(data) is not None

    def seen_anywhere(self, data: bytes) -> bool:
        """:meth:`seen`, a search per needle: faster over a long text (a block of images).

        >>> Unavailable().seen_anywhere(b'[{"id":1},{"bio":"__debezium_unavailable_value"}]')
        True
        """
        needles = self.needles if b"\\" in data else self.long_needles  # an escape may cut a form short
        return any(needle in data for needle in needles)

    def means_unavailable(self, value: Any) -> bool:
        """Whether one image value is the placeholder, in any of its forms."""
        if value.__class__ is str:
            return value in self.texts
        if value.__class__ is list:
            return value in self.lists
        if value.__class__ is dict:
            return value in self.maps
        return False

    def stripped(self, image: Any) -> Any:
        """``image`` without the columns that hold the placeholder (anything but an object as it is)."""
        if image.__class__ is not dict:
            return image
        for value in image.values():
            if self.means_unavailable(value):
                return {name: v for name, v in image.items() if not self.means_unavailable(v)}
        return image
