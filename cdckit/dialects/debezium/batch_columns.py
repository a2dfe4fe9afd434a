"""The columns the batch decoder builds for a block of Debezium messages: images as JSON text (asked of the
whole block at once), MySQL positions as ``seq`` text, clocks as nanoseconds, and the rows of a block.

Used by :mod:`.fast_path`.

>>> times([1], [None], [None])
[1000000]
"""

from __future__ import annotations

from typing import Any

import msgspec
import numpy as np
import orjson
import pyarrow as pa

from ...collector import gc_paused
from ...frame import FastRow
from ...values import DIGIT_MAP, LONG_NUMBER, has_long_number
from .batch_view import HAND_BACK, NULL


def raw_image_text(raw: msgspec.Raw) -> Any:
    """The JSON text of a raw image that needs no typing: None for null, ``HAND_BACK`` for anything but an
    object or for an object holding a number a double cannot carry."""
    if raw is NULL:
        return None
    data = bytes(raw)
    if data[:1] == b"{" and not has_long_number(data) and not record_branch(data):
        return orjson.dumps(orjson.loads(data)).decode()  # as values.image writes it (orjson's error: handed back)
    return None if data == b"null" else HAND_BACK


def record_branch(data: bytes) -> bool:
    """True when a raw image's first field has a dotted name and an object value, as Avro's record union
    branch has (:func:`is_avro_json` judges it: the batch decoder hands such an image back)."""
    end = data.find(b'":')
    return end > 0 and b"." in data[1:end] and data[end + 2 : end + 12].lstrip()[:1] == b"{"


def fast_rows(columns: list[list]) -> list[FastRow]:
    """:meth:`DebeziumFastPath._plain_columns`'s columns as rows (the images as text)."""
    columns = [column.to_pylist() if isinstance(column, pa.Array) else column for column in columns]
    for place in (11, 12):
        columns[place] = [None if text is None else text.decode() for text in columns[place]]
    return [FastRow._make(row) for row in zip(*columns)]


def json_array(texts: list[bytes]) -> bytes:
    """JSON texts joined as one JSON array, in one copy (a block is a megabyte: each copy counts).

    >>> json_array([b'{"a":1}', b'2'])
    b'[{"a":1},2]'
    """
    if len(texts) < 2:
        return b"[" + b"".join(texts) + b"]"
    return b",".join([b"[" + texts[0], *texts[1:-1], texts[-1] + b"]"])


def placed(given: list[bool], texts: list[Any]) -> list[Any]:
    """A column of images: ``texts`` in the places ``given`` marks, None in the others.

    >>> placed([False, True, True], [b"{}", b'{"a":1}'])
    [None, b'{}', b'{"a":1}']
    """
    if len(texts) == len(given):
        return texts
    found = iter(texts)
    return [next(found) if present else None for present in given]


def seq_positions(files: list, positions: list, rows: list) -> list | pa.Array:
    """MySQL-style positions as ``seq`` text, ``file:pos:row`` with the numbers padded to 20 digits (a None
    file: None; a None row: 0). Arrow compute (lpad, join) is no faster than this comprehension.

    >>> seq_positions(["f.1", None], [4, 0], [None, 2])
    ['f.1:00000000000000000004:00000000000000000000', None]
    >>> seq_positions(["f.1", "f.1"], [4, 2**64 - 1], [None, 0]).to_pylist()[1]
    'f.1:18446744073709551615:00000000000000000000'
    """
    first, count = files[0], len(files)
    if first is not None and files.count(first) == count and rows.count(None) + rows.count(0) == count:
        # one binlog file, every row 0 (the usual block): texts of one width, the digits written by numpy
        head, tail = f"{first}:".encode(), b":" + b"0" * 20
        try:
            numbers = np.array(positions, np.uint64)  # msgspec took them as at least 0
        except OverflowError:  # beyond 64 bits: as text below
            pass
        else:
            width = len(head) + 20 + len(tail)
            out = np.empty((count, width), np.uint8)
            out[:, : len(head)] = np.frombuffer(head, np.uint8)
            out[:, len(head) + 20 :] = np.frombuffer(tail, np.uint8)
            out[:, len(head) : len(head) + 20] = numbers[:, None] // _POWERS % 10 + 48
            offsets = np.arange(0, (count + 1) * width, width, dtype=np.int32)
            return pa.Array.from_buffers(pa.string(), count, [None, pa.py_buffer(offsets), pa.py_buffer(out)])
    return [
        None if file is None else f"{file}:{str(pos).zfill(20)}:{str(row or 0).zfill(20)}"
        for file, pos, row in zip(files, positions, rows)
    ]


_POWERS = 10 ** np.arange(19, -1, -1, dtype=np.uint64)  # a position's 20 digits, first to last


def times(ms: list, us: list, ns: list) -> list:
    """Nanoseconds of each clock given to the millisecond, microsecond or nanosecond: the finest one wins
    (as :func:`~.envelope.source_time` reads them).

    >>> times([1, 2, None], [None, 3, None], [None, None, None])
    [1000000, 3000, None]
    """
    count = len(ms)
    if ns.count(None) == count and us.count(None) == count:
        return [None if t is None else t * 1_000_000 for t in ms]
    return [
        n if n is not None else u * 1_000 if u is not None else None if m is None else m * 1_000_000
        for m, u, n in zip(ms, us, ns)
    ]


def block_images(images: list[bytes], unavailable: Any) -> tuple[list[Any], list[Any]]:
    """``(texts, parsed)`` of raw image objects: each one's JSON text as :func:`values.image_text` writes it (as
    UTF-8 bytes; ``HAND_BACK`` for one the batch decoder hands back: a number a double may not carry, Avro's
    record branch (:func:`record_branch`), the placeholder (:meth:`~.unavailable.Unavailable.seen`), text orjson
    refuses) and its parsed value.

    Each question is asked of the whole block at once (one search, one parse, one write): the images are
    joined as a JSON array; where orjson writes the array again byte for byte, every image is written as
    it came, and its text is kept.

    >>> from .unavailable import Unavailable
    >>> block_images([b'{"id":1}', b'{"id": 2.50}'], Unavailable())[0]
    [b'{"id":1}', b'{"id":2.5}']
    """
    if not images:
        return [], []
    joined = json_array(images)
    flagged = None
    if (
        LONG_NUMBER in joined.translate(DIGIT_MAP)
        or joined.count(b"{") != len(images)
        or unavailable.seen_anywhere(joined)
    ):  # the block may hold one: each image is asked (the block's images
        seen, digit_map = unavailable.seen, DIGIT_MAP  # begin and end with a brace: no answer spans two)
        flagged = [LONG_NUMBER in data.translate(digit_map) or record_branch(data) or seen(data) for data in images]
    try:
        with gc_paused():  # thousands of dicts: the collector would pass over each (workers pause it anyway)
            parsed = orjson.loads(joined)
    except ValueError:  # one image orjson refuses: each on its own
        parsed = None
    if parsed is not None and flagged is None and orjson.dumps(parsed) == joined:
        return images, parsed
    texts: list[Any] = []
    found: list[Any] = []
    dumps, loads = orjson.dumps, orjson.loads
    for place, data in enumerate(images):
        if flagged is not None and flagged[place]:
            texts.append(HAND_BACK)
            found.append(None)
            continue
        if parsed is None:
            try:
                value = loads(data)
            except ValueError:  # text orjson refuses (1e400 too: decode() keeps it as text)
                texts.append(HAND_BACK)
                found.append(None)
                continue
        else:
            value = parsed[place]
        text = dumps(value)
        texts.append(data if text == data else text)
        found.append(value)
    return texts, found
