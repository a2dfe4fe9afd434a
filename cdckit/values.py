"""Value helpers shared by every dialect: exact JSON parsing, typing of text
values, images as JSON text, sortable sequence strings, times.

Nothing here knows a dialect's field names; dialects call these helpers.

>>> from cdckit import values
>>> values.loads(b'{"big": 123456789012345678901234567890, "x": 1.5}')
{'big': '123456789012345678901234567890', 'x': 1.5}
>>> values.coerce("42", "int"), values.coerce("0.1000000000000000055511", "decimal")
(42, '0.1000000000000000055511')
>>> values.sortable(42)
'00000000000000000042'
>>> values.ms_to_ns(1605339932000)
1605339932000000000
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import re
from collections.abc import Iterable, Mapping
from decimal import Decimal, InvalidOperation
from typing import TYPE_CHECKING, Any, overload

import orjson
import pandas as pd

from .python_columns import object_column
from .times import (
    INT64_MAX,
    INT64_MIN,
    INT_TEXT,
    NUMBER_TEXT,
    checked_ns,
    date_days,
    instant_ns,
    ms_to_ns,
    ns_to_iso,
    ns_to_ms,
    seconds_to_ns,
    text_time_to_ns,
    time_of_day_ns,
)

if TYPE_CHECKING:  # for annotations; the functions import pyarrow where they use it
    import pyarrow as pa

__all__ = [
    "is_missing",
    "none_if_missing",
    "scalar_kind",
    "INT64_MIN",
    "INT64_MAX",
    "loads",
    "has_long_number",
    "dumps",
    "image",
    "coerce",
    "exact_number",
    "sortable",
    "sortable_text",
    "ms_to_ns",
    "seconds_to_ns",
    "checked_ns",
    "text_time_to_ns",
    "instant_ns",
    "date_days",
    "time_of_day_ns",
    "decimal_text",
    "ns_to_ms",
    "ns_to_iso",
    "readable_bytes",
    "b64encode_text",
    "kind_of_value",
    "infer_kinds",
]


# A JSON number that a double may not hold exactly has at least 16
# significant digits, so 17 or more characters of digits and dots in a row.
# To find such a run in C speed, the text is mapped (digits and dots to "0",
# quotes kept, everything else to " ") and searched for a space followed by
# 17 zeros; runs inside strings follow a quote and do not match. A false
# match (say "x 12345678901234567" inside a string) only costs the exact parse.
DIGIT_MAP = bytes(ord("0") if ch in b"0123456789." else ord('"') if ch == ord('"') else ord(" ") for ch in range(256))
LONG_NUMBER = b" " + b"0" * 17
# A number that may lie beyond a double's range: an exponent of three or more digits, or 300 digits in a row.
_OUT_OF_RANGE = re.compile(rb"-?[0-9.]+[eE][+-]?[0-9]{3,}|-?[0-9.]{300,}")


def is_missing(value: Any) -> bool:
    """True for a missing cell: None, NaN, ``pd.NA``, ``NaT`` (pandas' rule); False for any other value,
    lists and arrays included.

    >>> [is_missing(v) for v in (None, float("nan"), pd.NA, pd.NaT, 0, "", [None])]
    [True, True, True, True, False, False, False]
    """
    if value is None or value is pd.NA or value is pd.NaT:
        return True
    kind = value.__class__
    if kind is float:
        return value != value
    if kind in _NEVER_MISSING:  # the usual cells, answered without asking pandas (replay asks per cell)
        return False
    return pd.api.types.is_scalar(value) and bool(pd.isna(value))


_NEVER_MISSING = frozenset({str, int, bool, list, dict, tuple, bytes})


def none_if_missing(value: Any) -> Any:
    """None for pandas' and Spark's missing markers (None, NA, float NaN); other values as they are.

    >>> none_if_missing(float("nan")), none_if_missing(None), none_if_missing(0)
    (None, None, 0)
    """
    return None if is_missing(value) else value


def scalar_kind(value: Any) -> str | None:
    """What a JSON boolean or number holds: ``bool``, ``int``, ``exact`` (an integer beyond 64 bits) or
    ``float``; None for any other value (text included: reading it is each caller's own rule).

    >>> [scalar_kind(v) for v in (True, 7, 2**70, 1.5, "7", None)]
    ['bool', 'int', 'exact', 'float', None, None]
    """
    kind = value.__class__
    if kind is bool:
        return "bool"
    if kind is int:
        return "int" if INT64_MIN <= value <= INT64_MAX else "exact"
    if kind is float:
        return "float"
    return None


def _exact_int(text: str) -> int | str:
    if len(text) > 24 and len(text.lstrip("-+").lstrip("0")) > 19:  # beyond 64 bits (and int() refuses 4300 digits)
        return text
    n = int(text)
    return n if INT64_MIN <= n <= INT64_MAX else text


def exact_number(text: str) -> int | float | str:
    """A number text as an int or float when that keeps every digit, else the text.

    >>> exact_number("12.50"), exact_number("9223372036854775808"), exact_number("abc")
    (12.5, '9223372036854775808', 'abc')
    """
    if INT_TEXT.match(text):
        return _exact_int(text)
    if not NUMBER_TEXT.match(text):
        return text
    if len(text) > 400:  # more digits than a double's 17, or beyond its range
        return text
    f = float(text)
    if not math.isfinite(f):
        return text
    try:
        same = Decimal(repr(f)) == Decimal(text)
    except InvalidOperation:  # pragma: no cover - the regex admits only valid numbers
        return text
    return f if same else text


def loads(raw: bytes | str) -> Any:
    """Parse JSON, keeping numbers exact.

    orjson is used for speed; a number a double cannot hold exactly (more
    than 17 significant digits, an integer beyond 64 bits, or a number
    beyond a double's range) is kept as its text. Raises ``ValueError`` (``orjson.JSONDecodeError``) on bad JSON,
    including invalid UTF-8.
    """
    data = raw.encode() if isinstance(raw, str) else raw
    try:
        if not has_long_number(data):
            return orjson.loads(data)
        parsed = orjson.loads(data)  # validates UTF-8 and syntax with orjson's error messages
        if not has_long_number(_outside_strings(data)) or not _maybe_inexact(parsed):
            return parsed  # the long digit runs were inside strings, or in integers orjson keeps exactly
    except orjson.JSONDecodeError:
        if _OUT_OF_RANGE.search(data) is None:
            raise
        # orjson refuses a number beyond a double's range (1e400); json reads it and it stays text
        orjson.loads(_OUT_OF_RANGE.sub(b"0", data))  # anything else wrong still raises orjson's error
    return json.loads(data, parse_int=_exact_int, parse_float=exact_number)


#: A JSON string (its digits are not numbers).
_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"')


def _outside_strings(data: bytes) -> bytes:
    r"""JSON text with the content of its strings left out.

    >>> _outside_strings(b'{"a": "x1", "b": 2}'), _outside_strings(b'{"a": "\\"1", "b": 2}')
    (b'{ :  ,  : 2}', b'{"": "", "": 2}')
    """
    if b'\\"' in data:  # an escaped quote: the quotes do not alternate
        return _STRING.sub(b'""', data)
    return b" ".join(data.split(b'"')[0::2])


def _maybe_inexact(value: Any) -> bool:
    """True when a value orjson parsed holds a float (maybe rounded) or an integer beyond 64 bits (kept as text
    by :func:`loads`) anywhere.

    >>> _maybe_inexact({"a": ["12345678901234567890", 1]}), _maybe_inexact({"a": [0.5]})
    (False, True)
    """
    kind = value.__class__
    if kind is float:
        return True
    if kind is int:
        return not INT64_MIN <= value <= INT64_MAX
    if kind is dict:
        return any(_maybe_inexact(v) for v in value.values())
    if kind is list:
        return any(_maybe_inexact(v) for v in value)
    return False


def has_long_number(data: bytes) -> bool:
    """True when JSON text may hold a number a double cannot carry exactly (see :func:`loads`).

    >>> has_long_number(b'{"a": 12345678901234567890}'), has_long_number(b'{"a": "12345678901234567890"}')
    (True, False)
    """
    return LONG_NUMBER in data.translate(DIGIT_MAP)


def dumps(value: Any) -> str:
    """Compact JSON text (keys in insertion order, non-ASCII kept)."""
    return orjson.dumps(value).decode()


@overload
def image(row: Mapping[str, Any] | list[Any]) -> str: ...
@overload
def image(row: None) -> None: ...
@overload
def image(row: Mapping[str, Any] | list[Any] | None) -> str | None: ...


def image(row: Mapping[str, Any] | list[Any] | None) -> str | None:
    """A row image as compact JSON object text (a list as a JSON array text), or None."""
    if row is None:
        return None
    try:
        return orjson.dumps(row).decode()
    except TypeError as err:  # a Python integer beyond 64 bits (parsed input): kept as text, as loads keeps it
        if "64-bit" not in str(err):
            raise
        return orjson.dumps(_long_ints_as_text(row)).decode()


def parsed_image(data: bytes) -> tuple[Any, str]:
    """Raw JSON object text parsed as :func:`loads` parses it, and its text as :func:`image` writes it.

    >>> parsed_image(b'{"id": 1, "x": 1.50}')
    ({'id': 1, 'x': 1.5}, '{"id":1,"x":1.5}')
    """
    parsed = loads(data)
    return parsed, image(parsed)


def image_text(data: bytes) -> str:
    """Raw JSON object text as :func:`image` writes it for :func:`loads` of it.

    A fast path that keeps an image unparsed still writes it this way, so
    its text is the general decoder's whatever the producer's style
    (spaces, ``\\u`` escapes, Java's ``1.5E7``, trailing zeros). orjson
    parses and writes it again in about the time a check of the text for
    every such style would take.

    >>> image_text(b'{"id":1}'), image_text(b'{"id": 1, "x": 1e-7, "y": 2.50, "z": 1.5E7}')
    ('{"id":1}', '{"id":1,"x":1e-7,"y":2.5,"z":15000000.0}')
    """
    if not has_long_number(data):
        try:
            return orjson.dumps(orjson.loads(data)).decode()
        except orjson.JSONDecodeError:
            pass  # a number beyond a double's range, kept as text by loads (anything else raises there)
    return image(loads(data))


def _long_ints_as_text(value: Any) -> Any:
    if value.__class__ is int and not INT64_MIN <= value <= INT64_MAX:
        return str(value)
    if isinstance(value, dict):
        return {k: _long_ints_as_text(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_long_ints_as_text(v) for v in value]
    return value


def coerce(value: Any, kind: str) -> Any:
    """Type a value that arrived as text, following the column's kind.

    Kinds: ``int``, ``float``, ``decimal``, ``bool``, anything else is kept.
    Text that does not parse as its kind is kept unchanged (nothing is lost).

    >>> coerce("7", "int"), coerce("x7", "int"), coerce("true", "bool"), coerce("2.5", "float")
    (7, 'x7', True, 2.5)
    """
    if not isinstance(value, str):
        return value
    if kind == "int":
        return _exact_int(value) if INT_TEXT.match(value) else value
    if kind == "decimal":
        return exact_number(value)
    if kind == "float":
        if not NUMBER_TEXT.match(value):
            return value
        f = float(value)
        return f if math.isfinite(f) else value
    if kind == "bool":
        low = value.lower()
        if low in ("true", "t", "1", "y", "yes"):
            return True
        if low in ("false", "f", "0", "n", "no"):
            return False
    return value


def sortable(value: Any) -> str | None:
    """A non-negative integer (or its text) as a 20-digit zero-padded string.

    Anything that is not a non-negative integer is returned as text unchanged.

    >>> sortable("1605339516000000004"), sortable(None), sortable("abc")
    ('01605339516000000004', None, 'abc')
    """
    kind = value.__class__
    if kind is int:
        return str(value).zfill(20) if value >= 0 else str(value)
    if value is None or value == "":
        return None
    if kind is bool:
        return str(value)
    text = value if kind is str else str(value)
    if text.isascii() and text.isdigit():
        return text.zfill(20)
    return text


def sortable_text(*parts: Any) -> str | None:
    """Several ordering parts joined with ``:``; numeric parts zero-padded.

    >>> sortable_text("mysql-bin.000003", 154, 0)
    'mysql-bin.000003:00000000000000000154:00000000000000000000'
    """
    rendered = []
    empty = True
    for part in parts:
        text = sortable(part)
        if text is None:
            rendered.append("")
        else:
            rendered.append(text)
            empty = False
    return None if empty else ":".join(rendered)


def decimal_text(unscaled: int, scale: int) -> str:
    """The exact decimal text of ``unscaled * 10**-scale`` (any number of digits; no decimal context rounds it).

    >>> decimal_text(-12345, 2), decimal_text(5, 3), decimal_text(12, -2), decimal_text(10**40 + 1, 10)
    ('-123.45', '0.005', '1200', '1000000000000000000000000000000.0000000001')
    """
    sign, digits, _ = Decimal(unscaled).as_tuple()  # exact, whatever the length (str() of an int is limited)
    return format(Decimal((sign, digits, -scale)), "f")


# PostgreSQL's date/time output (ISO DateStyle) and ISO 8601: a date of 4 or more year digits (``10000-01-01``),
# a time of day with up to nine fraction digits, an offset ``Z``, ``UTC``, ``+HH``, ``+HHMM``, ``+HH:MM`` or
# ``+HH:MM:SS`` (PostgreSQL's local mean time offsets of old dates), and PostgreSQL's `` BC`` suffix.
def readable_bytes(b64: Any) -> Any:
    """Base64 text decoded to str when the bytes are printable UTF-8 text.

    Otherwise (not Base64, or binary bytes) the value is returned unchanged.

    >>> readable_bytes("dXNlcjE="), readable_bytes("AAEC")
    ('user1', 'AAEC')
    """
    if not isinstance(b64, str):
        return b64
    try:
        raw = base64.b64decode(b64, validate=True)
        text = raw.decode("utf-8")
    except (binascii.Error, ValueError):
        return b64
    if all(ch.isprintable() or ch in "\t\n\r" for ch in text):
        return text
    return b64


def b64encode_text(value: Any) -> Any:
    """The inverse of :func:`readable_bytes`: text back to Base64.

    A value that :func:`readable_bytes` would have left alone (Base64 of
    binary bytes) is returned unchanged, so ``b64encode_text(readable_bytes(x))``
    decodes to the same canonical value as ``x``.

    >>> b64encode_text("user1"), b64encode_text("AAEC")
    ('dXNlcjE=', 'AAEC')
    """
    if not isinstance(value, str):
        return value
    if readable_bytes(value) == value and _is_b64_of_binary(value):
        return value
    return base64.b64encode(value.encode("utf-8")).decode("ascii")


def _is_b64_of_binary(text: str) -> bool:
    try:
        base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return False
    return True


def kind_of_value(value: Any) -> str | None:
    """The kind of a JSON value: ``bool``, ``int``, ``float``, ``text``, or None for null."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float"
    return "text"


def infer_kinds(rows: Iterable[Mapping[str, Any] | None]) -> dict[str, str]:
    """Column kinds seen across row images (the first non-null value decides).

    Encoders use it to write a dialect's type information. Columns only ever
    null are ``text``.

    >>> infer_kinds([{"id": 1, "n": None}, {"id": 2, "n": 2.5}])
    {'id': 'int', 'n': 'float'}
    """
    kinds: dict[str, str] = {}
    for row in rows:
        if not row:
            continue
        for name, value in row.items():
            if kinds.get(name) in (None, "null"):
                kinds[name] = kind_of_value(value) or "null"
    return {name: ("text" if kind == "null" else kind) for name, kind in kinds.items()}


#: :func:`has_long_number` as an RE2 pattern, for Arrow to test many texts at once (twice as fast as translating
#: their bytes): 17 digits or points after anything but a digit, a point or a quote, or at the start.
_LONG_NUMBER_PATTERN = r'(?:^|[^0-9."])[0-9.]{17}'

#: The bytes of JSON lines Arrow's reader takes at a time, a block per thread (see :func:`images_table`).
_JSON_BLOCK = 1 << 23


def images_table(texts: list[str] | pa.Array | pa.ChunkedArray) -> pa.Table | None:
    """Row images (JSON object texts, one per row: a list, or an Arrow string array without nulls) as an Arrow
    table, read by Arrow's JSON reader in one pass; None when that cannot keep every value as :func:`loads`
    does (a number a double cannot carry) or cannot read them one row per text. Arrow infers each column's
    type: the caller checks it is one it can use.

    >>> images_table(['{"id":1,"a":"x"}', '{"id":2}']).to_pylist()
    [{'id': 1, 'a': 'x'}, {'id': 2, 'a': None}]
    >>> images_table(['{"id":12345678901234567890}']) is None
    True
    """
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.json as pa_json

    array = pa.array(texts, pa.large_string()) if isinstance(texts, list) else texts.cast(pa.large_string())
    array = array.combine_chunks() if isinstance(array, pa.ChunkedArray) else array
    if not len(array) or array.null_count:
        return None
    data = memoryview(_text_bytes(array))  # the texts end to end
    step = 1 << 24
    for start in range(0, len(data), step):  # in slices, to keep memory low
        if b"\n" in bytes(data[start : start + step]):
            return None
    if pc.any(pc.match_substring_regex(array, _LONG_NUMBER_PATTERN)).as_py():  # has_long_number, text by text
        return None
    empty, end = pa.scalar("", pa.large_string()), pa.scalar("\n", pa.large_string())
    blob = _text_bytes(pc.binary_join_element_wise(array, empty, end))  # each text and its line end
    # blocks of 8 MiB (or the longest text) are read in parallel; Arrow widens a column's type across blocks
    block = max(_JSON_BLOCK, pc.max(pc.binary_length(array)).as_py() + 1)
    try:
        table = pa_json.read_json(pa.BufferReader(blob), read_options=pa_json.ReadOptions(block_size=block))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None
    return table if table.num_rows == len(array) else None


def _text_bytes(array: pa.LargeStringArray) -> pa.Buffer:
    """The bytes of a large string array's texts, end to end (a slice of its data buffer, not a copy)."""
    import pyarrow as pa

    _, offsets, data = array.buffers()
    if data is None:  # only empty texts
        return pa.py_buffer(b"")
    places = memoryview(offsets).cast("q")
    return data[places[array.offset] : places[array.offset + len(array)]]


def images_frame(texts: list[str], columns: list[str]) -> pd.DataFrame | None:
    """Row images (JSON object texts) as a frame of ``columns``, typed as pandas types the parsed rows.

    A column an image lacks is None, as a present null is. Parsed by Arrow's
    JSON reader in one pass; None when the images hold anything Arrow would
    read differently from :func:`loads` (a number a double cannot carry,
    nested values, text Arrow would take for a time, a column whose kind
    changes), so that the caller parses them one by one instead.

    >>> images_frame(['{"id":1,"a":"x"}', '{"id":2}'], ["id", "a", "b"]).to_dict("list")
    {'id': [1, 2], 'a': ['x', None], 'b': [None, None]}
    >>> images_frame(['{"id":12345678901234567890}'], ["id"]) is None
    True
    """
    import pandas as pd
    import pyarrow as pa

    table = images_table(texts)
    if table is None:
        return None
    plain = (pa.types.is_integer, pa.types.is_floating, pa.types.is_boolean, pa.types.is_string, pa.types.is_null)
    if not all(any(kind(field.type) for kind in plain) for field in table.schema):
        return None
    frame = pd.DataFrame(index=range(len(texts)))
    for name in columns:
        column = table.column(name).to_pandas() if name in table.column_names else None
        if column is None or column.isna().all():
            frame[name] = pd.Series([None] * len(texts), dtype=object)
        else:
            frame[name] = object_column(column)
    return frame
