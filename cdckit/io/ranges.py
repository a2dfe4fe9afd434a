r"""Byte ranges of whole lines, so a large JSON Lines or text file can be read in pieces.

Each range carries the offset and line number its first message has in the
whole file, so the pieces, read on their own, give the messages the whole
file would.

>>> import tempfile, os
>>> path = os.path.join(tempfile.mkdtemp(), "x.jsonl")
>>> _ = open(path, "wb").write(b'{"a": 1}\n{"a": 2}\n')
>>> line_ranges(path, 5)
[(0, 9, 0, 1), (9, 18, 1, 2)]
>>> with open_range(path, 9, 18) as piece:
...     piece.read()
b'{"a": 2}\n'
"""

from __future__ import annotations

import io
import os
import re
from typing import IO, Any

from .streams import BLOCK

__all__ = ["ByteRange", "open_range", "line_ranges", "line_cuts", "count_messages", "next_line_end"]


class ByteRange(io.RawIOBase):
    """Bytes ``start`` to ``end`` of a file as a stream of their own (a piece of a large file)."""

    def __init__(self, path: str, start: int, end: int) -> None:
        self._file = open(path, "rb")
        self._file.seek(start)
        self._left = end - start

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if self._left <= 0:
            return 0
        view = memoryview(buffer)[: self._left]
        count = self._file.readinto(view)
        self._left -= count
        return count

    def close(self) -> None:
        self._file.close()
        super().close()


def open_range(path: str, start: int, end: int) -> IO[bytes]:
    """A buffered stream over bytes ``start`` to ``end`` of a file."""
    return io.BufferedReader(ByteRange(path, start, end), buffer_size=BLOCK)


def line_ranges(
    path: str, bytes_per_range: int, messages_per_range: int | None = None
) -> list[tuple[int, int, int, int]]:
    r"""Cut a JSON Lines or text file into ranges of whole lines: ``(start, end, first_offset, first_line)``.

    A range ends at the first line end past ``bytes_per_range`` bytes, or
    after ``messages_per_range`` messages (blank lines do not count), so each
    piece can be decoded on its own with the offsets and line numbers the
    whole file would give. Cutting by bytes reads the file in large blocks
    and counts lines in C (``cdckit.read`` with workers and Spark cut alike).

    >>> import tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "x.jsonl")
    >>> _ = open(path, "wb").write(b'{"a": 1}\n\n{"a": 2}\n{"a": 3}\n')
    >>> line_ranges(path, 10)
    [(0, 10, 0, 1), (10, 28, 1, 3)]
    >>> line_ranges(path, 10**9, 2)
    [(0, 19, 0, 1), (19, 28, 2, 4)]
    """
    if messages_per_range:
        return _ranges_by_messages(path, bytes_per_range, messages_per_range)
    ranges = []
    offset, line = 0, 1
    for start, end in line_cuts(path, bytes_per_range):
        messages, lines = count_messages(path, start, end)
        ranges.append((start, end, offset, line))
        offset, line = offset + messages, line + lines
    return ranges


def line_cuts(path: str, bytes_per_range: int) -> list[tuple[int, int]]:
    r"""Cut a file into ranges of whole lines, ``(start, end)``, without reading it: each range ends at the
    first line end past ``bytes_per_range`` bytes. The offsets and line numbers of each range's first message
    come later, from :func:`count_messages` of the ranges before it (a worker counts its own range).

    >>> import tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "x.jsonl")
    >>> _ = open(path, "wb").write(b'{"a": 1}\n\n{"a": 2}\n{"a": 3}\n')
    >>> line_cuts(path, 10)
    [(0, 10), (10, 28)]
    """
    cuts = []
    start = 0
    with open(path, "rb") as stream:
        size = os.fstat(stream.fileno()).st_size
        while start < size:
            stream.seek(start + max(bytes_per_range, 1) - 1)
            end = next_line_end(stream, size)
            cuts.append((start, end))
            start = end
    return cuts


def count_messages(path: str, start: int, end: int) -> tuple[int, int]:
    r"""``(messages, lines)`` in bytes ``start`` to ``end`` of a file (whole lines): blank lines are lines but
    not messages.

    >>> import tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "x.jsonl")
    >>> _ = open(path, "wb").write(b'{"a": 1}\n\n{"a": 2}\n{"a": 3}\n')
    >>> count_messages(path, 0, 28), count_messages(path, 10, 28)
    ((3, 4), (2, 2))
    """
    with open(path, "rb") as stream:
        stream.seek(start)
        return _count_lines(stream, end - start)


def next_line_end(stream: IO[bytes], size: int) -> int:
    """The position just past the next line end at or after the stream's position (or the file's end)."""
    while True:
        here = stream.tell()
        data = stream.read(BLOCK)
        if not data:
            return size
        cut = data.find(b"\n")
        if cut >= 0:
            return here + cut + 1


_BLANK_LINE = re.compile(rb"(?m)^[ \t\r\x0b\x0c]*$")
_LINE_STARTS_BLANK = re.compile(rb"\n[\n \t\r\x0b\x0c]")
_BLANK_START = (b"", b"\n", b" ", b"\t", b"\r", b"\x0b", b"\x0c")


def _blank_lines(text: bytes) -> int:
    """The number of blank (empty or whitespace) lines in ``text``; a search of the text for a line that
    starts blank comes first, as the regular expression is much slower and blank lines are rare.

    >>> _blank_lines(b'{"a": 1}\\n\\n  \\n{"a": 2}'), _blank_lines(b'{"a": 1}\\n {"a": 2}')
    (2, 0)
    """
    if text[:1] not in _BLANK_START and text[-1:] not in _BLANK_START and _LINE_STARTS_BLANK.search(text) is None:
        return 0
    return len(_BLANK_LINE.findall(text))


def _count_lines(stream: IO[bytes], length: int) -> tuple[int, int]:
    """``(messages, lines)`` in the next ``length`` bytes (whole lines): blank lines are not messages."""
    messages = lines = 0
    tail = b""
    while length > 0:
        data = stream.read(min(BLOCK, length))
        if not data:
            break
        length -= len(data)
        data = tail + data
        cut = data.rfind(b"\n") + 1
        whole, tail = data[:cut], data[cut:]
        count = whole.count(b"\n")
        lines += count
        messages += count - _blank_lines(whole[:-1]) if count else 0
    if tail:
        lines += 1
        messages += 0 if tail.isspace() else 1
    return messages, lines


def _ranges_by_messages(path: str, bytes_per_range: int, messages_per_range: int) -> list[tuple[int, int, int, int]]:
    ranges = []
    start = position = 0
    offset = first_offset = 0
    line = first_line = 1
    with open(path, "rb") as stream:
        for raw in stream:
            position += len(raw)
            if raw.strip():
                offset += 1
            line += 1
            if position - start >= bytes_per_range or offset - first_offset >= messages_per_range:
                ranges.append((start, position, first_offset, first_line))
                start, first_offset, first_line = position, offset, line
    if position > start:
        ranges.append((start, position, first_offset, first_line))
    return ranges
