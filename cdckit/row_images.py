"""Row images: the rules every part of cdckit reads a change's before and after images by.

An image is a row as JSON object text (the canonical frame's ``before`` and
``after``; see ``CONTRACT.md``). Each rule is here once: what counts as no
image and how an image text is parsed (:func:`parse_image`), the key text of
an image (:func:`key_of`, the text of the frame's ``key`` column), the
canonical text of a row (:func:`canonical_text`), whether a before image
describes a row of a table without a key (:func:`describes`), and the order
of key texts (:func:`key_order`, :func:`in_key_order`, :func:`key_permutation`).

>>> image = parse_image('{"id": 9007199254740993, "name": "a"}')
>>> key_of(image, ["id"]), canonical_text(image)
('[9007199254740993]', '{"id":9007199254740993,"name":"a"}')
>>> in_key_order(["[10]", "[null]", "[9]"])
['[9]', '[10]', '[null]']
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal, overload

import numpy as np
import orjson
import pandas as pd

from . import values

__all__ = [
    "parse_image",
    "key_of",
    "canonical_text",
    "describes",
    "key_order",
    "in_key_order",
    "key_permutation",
]


@overload
def parse_image(text: Any, *, keep_other: Literal[False] = False) -> dict[str, Any] | None: ...
@overload
def parse_image(text: Any, *, keep_other: bool) -> Any: ...


def parse_image(text: Any, *, keep_other: bool = False) -> Any:
    """An image text (str or bytes) parsed exactly (:func:`cdckit.values.loads`), as a dict.

    No image is None: a missing cell (None, NaN, ``pd.NA``, ``NaT``: :func:`cdckit.values.is_missing`) and
    the JSON text ``null`` alike. A dict is an image already parsed and comes back as it is. JSON that is not
    an object (a list, a number) is no row: None. A text that is not JSON (the empty text too) raises
    ``ValueError``: the frame is damaged.

    ``keep_other``: for comparing two captures, where such an image must still differ from another: JSON
    that is not an object comes back as parsed, and a text that is not JSON as the text itself.

    >>> parse_image('{"id": 12345678901234567890}'), parse_image(float("nan")), parse_image("[1]")
    ({'id': '12345678901234567890'}, None, None)
    >>> parse_image("[1]", keep_other=True), parse_image("oops", keep_other=True), parse_image("null")
    ([1], 'oops', None)
    """
    if text.__class__ is dict:
        return text
    if values.is_missing(text):
        return None
    if keep_other:
        try:
            return values.loads(text)
        except ValueError:
            return text
    parsed = values.loads(text)
    return parsed if isinstance(parsed, dict) else None


def key_of(row: Mapping[str, Any] | None, columns: Sequence[str] | None) -> str | None:
    """The key text of ``row``: its values of the key ``columns``, in their order, as compact JSON array text
    (the canonical frame's ``key``; an integer beyond 64 bits as text, as :func:`cdckit.values.loads` keeps it).

    None when there is no row (or it is not an object), no key columns, or the row lacks a key column; a key
    column holding ``null`` is part of the key (``[null]``). ``columns`` may be any sequence (a NumPy array
    read back from Parquet too).

    >>> key_of({"id": 7, "name": "a"}, ["id"]), key_of({"b": "x", "a": None}, ["a", "b"])
    ('[7]', '[null,"x"]')
    >>> key_of({"name": "a"}, ["id"]), key_of({"id": 7}, []), key_of(None, ["id"]), key_of({"id": 2**70}, ["id"])
    (None, None, None, '["1180591620717411303424"]')
    """
    if row is None or columns is None or len(columns) == 0:
        return None
    if row.__class__ is not dict and not isinstance(row, Mapping):
        return None
    try:
        parts = [row[c] for c in columns]
    except KeyError:
        return None
    return values.image(parts)


def canonical_text(row: dict[str, Any] | None) -> str:
    """A row as JSON text with sorted columns: equal rows, equal texts (the text order of keyless rows).

    >>> canonical_text({"b": 1, "a": None})
    '{"a":null,"b":1}'
    """
    return orjson.dumps(row, option=orjson.OPT_SORT_KEYS).decode()


def describes(image: dict[str, Any], row: dict[str, Any]) -> bool:
    """Whether a before ``image`` describes ``row`` of a table without a key: each column of the image holds
    the row's value, a ``null`` standing also for a column the row lacks (a Lindorm column delete); a column
    the image lacks (a partial image, an unchanged TOAST value) says nothing.

    >>> describes({"id": 1, "gone": None}, {"id": 1}), describes({"id": 1}, {"id": 1, "b": 2})
    (True, True)
    >>> describes({"id": 1, "b": None}, {"id": 1, "b": 2}), describes({"id": 2}, {"id": 1})
    (False, False)
    """
    for name, value in image.items():
        if name in row:
            if row[name] != value:
                return False
        elif value is not None:
            return False
    return True


def key_order(key: str) -> tuple:
    """Sort key of a key text: numbers by value (exactly: 2**53 + 1 after 2**53), then strings, then nulls.

    >>> sorted(["[null]", '["a"]', "[9007199254740993]", "[9007199254740992]", "[2.5]"], key=key_order)
    ['[2.5]', '[9007199254740992]', '[9007199254740993]', '["a"]', '[null]']
    """
    try:
        parts = json.loads(key)
    except ValueError:
        return ((3, key),)
    if not isinstance(parts, list):
        parts = [parts]
    return tuple(
        (0, p, "")  # Python compares an int with a float exactly
        if isinstance(p, (int, float)) and not isinstance(p, bool)
        else (1, 0.0, str(p))
        if p is not None
        else (2, 0.0, "")
        for p in parts
    )


def in_key_order(keys: Iterable[str]) -> list[str]:
    """Key texts in :func:`key_order`.

    >>> in_key_order(['[10]', '[9]', '[2.5]']), in_key_order(['["b"]', '[1]', '[null]'])
    (['[2.5]', '[9]', '[10]'], ['[1]', '["b"]', '[null]'])
    """
    keys = list(keys)
    return [keys[i] for i in key_permutation(keys).tolist()]


def key_permutation(keys: Sequence[str]) -> np.ndarray:
    """The positions of key texts in :func:`key_order`; keys of one number (the common
    key) sorted by numpy without parsing JSON: whole numbers of up to 18 digits as 64-bit integers, other
    numbers of up to 15 characters (which doubles keep apart and in order) as doubles.

    >>> key_permutation(['[10]', '[9]', '[2.5]']).tolist()
    [2, 1, 0]
    >>> key_permutation(['[900719925474099312]', '[900719925474099311]', '[1]']).tolist()
    [2, 1, 0]
    """
    texts = pd.Series(list(keys), dtype=object)
    inner = texts.str.slice(1, -1)
    if len(texts) and inner.str.fullmatch(r"-?[0-9]{1,18}").all():
        return np.argsort(inner.astype(np.int64).to_numpy(), kind="stable")
    if len(texts) and (inner.str.len() <= 15).all():
        numbers = pd.to_numeric(inner, errors="coerce").to_numpy(float)
        if np.isfinite(numbers).all():
            return np.argsort(numbers, kind="stable")  # stable at ties, as sorted() is
    return np.array(sorted(range(len(texts)), key=lambda i: key_order(texts.iat[i])), dtype=np.int64)
