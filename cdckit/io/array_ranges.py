r"""Byte ranges of whole elements of a file holding one JSON array, so workers can read it in pieces.

The array is checked and its elements found by msgspec in C (``list[msgspec.Raw]``: each element's bytes,
left undecoded, pointing into the file's own memory); a range starts at an element and ends where the next
range starts. Each carries its first element's index (the message's offset) and line, so the pieces, read
each on its own (:func:`cdckit.io.file_pieces`), give the messages the whole file would. A file that is not
one well-formed JSON array (a broken element, values one after another, text after the array) is not cut:
the reader's scan must judge it from its start.

>>> import tempfile, os
>>> path = os.path.join(tempfile.mkdtemp(), "x.json")
>>> _ = open(path, "wb").write(b'[{"a": 1},\n {"a": 2},\n {"a": 3}]\n')
>>> array_ranges(path, 11)
[(1, 12, 0, 1), (12, 23, 1, 2), (23, 33, 2, 3)]
>>> array_ranges(path, 10**9)
[(1, 33, 0, 1)]
>>> _ = open(path, "wb").write(b'[{"a": 1}, {"a": ]')  # a broken element: not cut
>>> array_ranges(path, 5) is None
True
"""

from __future__ import annotations

import mmap
import os

import msgspec
import numpy as np

from .streams import HEAD, open_file

__all__ = ["holds_array", "array_ranges"]

_DECODER = msgspec.json.Decoder(list[msgspec.Raw])
_SPACE = b" \t\r\n"
#: Bytes looked at a time when counting lines.
_COUNT_BLOCK = 1 << 26


def holds_array(path: str) -> bool:
    """True when the file (through gzip) starts as a JSON array does (a ``[`` after blanks); False when it
    cannot be read."""
    try:
        with open_file(path) as stream:
            return stream.read(HEAD).lstrip(b"\xef\xbb\xbf \t\r\n")[:1] == b"["
    except OSError:
        return False


def array_ranges(path: str, bytes_per_range: int) -> list[tuple[int, int, int, int]] | None:
    """Cut the JSON array in ``path`` into ranges of whole elements: ``(start, end, first_offset, first_line)``.

    A range ends at the start of the first element past ``bytes_per_range`` bytes (the last one at the file's
    end). None when the file is not one well-formed, non-empty JSON array (then it is read whole).
    """
    size = os.path.getsize(path)
    if size == 0:
        return None
    with open(path, "rb") as stream, mmap.mmap(stream.fileno(), 0, access=mmap.ACCESS_READ) as data:
        view = memoryview(data)
        try:
            starts = _element_starts(view, size, bytes_per_range)
            if starts is None:
                return None
            ranges = []
            line, counted = 1, 0
            for start, end, first_offset in starts:
                line += _newlines(view, counted, start)
                counted = start
                ranges.append((start, end, first_offset, line))
            return ranges
        finally:
            view.release()


def _element_starts(view: memoryview, size: int, bytes_per_range: int) -> list[tuple[int, int, int]] | None:
    """``(start, end, first_index)`` of each range, or None when the bytes are not one JSON array."""
    skip = 0
    while bytes(view[skip : skip + 3]) == b"\xef\xbb\xbf":  # byte-order marks, as the reader strips them
        skip += 3
    body = view[skip:]
    try:
        if bytes(body[:1]) not in (b"[", *(bytes([c]) for c in _SPACE)):
            return None
        try:
            elements = _DECODER.decode(body)
        except (msgspec.DecodeError, RecursionError):
            return None
        if not elements:
            return None
        base = _address(body) - skip

        def start_of(index: int) -> int:
            return _address(elements[index]) - base

        cuts = [0]
        while True:  # the first element starting at or past the next cut's target, found by bisection
            target = start_of(cuts[-1]) + max(bytes_per_range, 1)
            low, high = cuts[-1] + 1, len(elements)
            while low < high:
                middle = (low + high) // 2
                if start_of(middle) < target:
                    low = middle + 1
                else:
                    high = middle
            if low >= len(elements):
                break
            cuts.append(low)
        starts = [start_of(index) for index in cuts]
        elements.clear()  # the elements point into body: release them before it
    finally:
        body.release()
    return [(start, end, index) for start, end, index in zip(starts, starts[1:] + [size], cuts)]


def _address(buffer: object) -> int:
    """Where a buffer's bytes are in memory (an element found by msgspec points into the file's)."""
    return np.frombuffer(buffer, dtype=np.uint8).__array_interface__["data"][0]  # type: ignore[call-overload]


def _newlines(view: memoryview, start: int, end: int) -> int:
    """The line ends in bytes ``start`` to ``end``, counted in blocks."""
    count = 0
    for at in range(start, end, _COUNT_BLOCK):
        count += bytes(view[at : min(at + _COUNT_BLOCK, end)]).count(b"\n")
    return count
