r"""A JSON array, or JSON values one after another (pretty-printed or not), cut into messages.

The file is read in blocks, never whole. Runs of whole objects are cut out
many at a time with array operations and come as a :class:`LineBlock`;
anything else is scanned value by value, so a broken value is quarantined
on its own.

>>> import io
>>> [(m.offset, m.line, m.value) for m in json_value_messages(io.BytesIO(b'[{"a": 1},\n 7]'), "<bytes>")]
[(0, 1, {'a': 1}), (1, 2, 7)]

``json_value_messages`` and ``json_value_pieces`` are shared by the modules
of :mod:`cdckit.io` (not public).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import IO

import numpy as np

from .message import LineBlock, Message, error_message
from .records import parse_line
from .streams import BLOCK, without_bom

__all__: list[str] = []

_STRUCTURE = re.compile(rb'[{}\[\]"]')
_STRING_END = re.compile(rb'["\\]')
_SCALAR_END = re.compile(rb'[\s,\[\]{}"]')
_SPACE = re.compile(rb"[\s,]*")


def json_value_messages(stream: IO[bytes], name: str) -> Iterator[Message]:
    """Messages from a JSON array or from JSON values one after another (see :func:`json_value_pieces`)."""
    for piece in json_value_pieces(stream, name):
        if isinstance(piece, LineBlock):
            for index, raw in enumerate(piece.lines):
                yield parse_line(raw, name, piece.first_offset + index, piece.line_of(index))
        else:
            yield piece


def json_value_pieces(
    stream: IO[bytes], name: str, first_offset: int = 0, first_line: int = 1, in_array: bool = False
) -> Iterator[LineBlock | Message]:
    """The values of a JSON array, or of JSON values one after another, as blocks and messages.

    ``in_array``: the stream is a part of an array's elements (from an element's start), the first numbered
    ``first_offset`` on line ``first_line``, as a worker reads a range of a large array
    (:mod:`cdckit.io.array_ranges`).

    Runs of whole objects are cut out many at a time (:func:`_whole_objects`)
    and come as a :class:`LineBlock` whose lines are the values' texts, so a
    batch decoder takes them as it takes JSON Lines. Anything else is cut
    out by scanning brackets and strings value by value, so a broken value
    is quarantined on its own. Outside an array, a ``{`` at the start of a
    line inside an unfinished value is taken as the start of the next
    message (the unfinished one was truncated), and text between values that
    starts no object or array (a comment, a licence header, the cut tail of
    a record) is taken a line at a time, each line one quarantined message.
    """
    buf = stream.read(BLOCK)
    buf = without_bom(buf)
    eof = not buf
    pos = 0
    line = first_line  # the line buf starts on
    offset = first_offset
    depth_base: int | None = 1 if in_array else None  # 1 inside a top-level array, 0 between values
    scanned_alone = 0  # values to scan one by one before cutting many at once again
    end: int | None  # where the value ends (None: more bytes needed)
    while True:
        spaces = _SPACE.match(buf, pos)  # always a match, maybe empty
        pos = spaces.end() if spaces else pos
        if pos >= len(buf):
            if eof:
                return
            line += buf.count(b"\n", 0, pos)
            buf, pos = stream.read(BLOCK), 0
            eof = not buf
            continue
        if depth_base is None or (depth_base == 0 and buf[pos : pos + 1] == b"["):
            if buf[pos : pos + 1] == b"[":
                depth_base, pos = 1, pos + 1
                continue
            depth_base = 0
        if depth_base == 1 and buf[pos : pos + 1] == b"]":
            depth_base, pos = 0, pos + 1
            continue
        if scanned_alone == 0 and buf[pos] == 0x7B:
            spans, unusual = _whole_objects(buf, pos, depth_base)
            if spans:
                starts = [start for start, _ in spans]
                first_line = line + buf.count(b"\n", 0, pos)
                numbers = _line_numbers(buf, pos, starts, first_line)
                yield LineBlock(offset, first_line, [buf[start:end] for start, end in spans], numbers)
                end = spans[-1][1]
                offset += len(spans)
                line += buf.count(b"\n", 0, end)
                buf, pos = buf[end:], 0
                continue
            if not unusual and not eof:  # the first object does not end in this block: read on
                more = stream.read(max(BLOCK, len(buf)))  # doubling: a huge object is cut in linear time
                if more:
                    line += buf.count(b"\n", 0, pos)
                    buf, pos = buf[pos:] + more, 0
                    continue
                eof = True
            scanned_alone = 16
        scanned_alone = max(scanned_alone - 1, 0)
        end, truncated = _value_end(buf, pos, eof, resync=depth_base == 0)
        if end is None:
            more = stream.read(BLOCK)
            if more:
                line += buf.count(b"\n", 0, pos)
                buf, pos = buf[pos:] + more, 0
                continue
            eof = True
            end, truncated = len(buf), True
        raw = buf[pos:end]
        start_line = line + buf.count(b"\n", 0, pos)
        if truncated:
            yield error_message(
                name, offset, "truncated JSON: the value never closes", "truncated_json", raw, start_line
            )
        else:
            yield parse_line(raw, name, offset, start_line)
        offset += 1
        line += buf.count(b"\n", 0, end)
        buf, pos = buf[end:], 0


# Bracket depth change of each byte, for cutting many objects at once.
_BRACKET_STEP = np.zeros(256, dtype=np.int8)
_BRACKET_STEP[list(b"{[")] = 1
_BRACKET_STEP[list(b"}]")] = -1


def _whole_objects(buf: bytes, pos: int, depth_base: int) -> tuple[list[tuple[int, int]], bool]:
    r"""``(spans, unusual)``: the whole objects from ``pos`` on, each ``(start, end)``, as :func:`_value_end`
    would cut them one by one, found with array operations instead of a loop.

    Cutting stops before anything the one-by-one scan must judge: a value
    that is not an object, text between values other than whitespace and
    commas, the array's end, a bracket closing below ``depth_base``, or
    (outside an array) a ``{`` opening a line inside an object, which marks
    a truncated message. ``unusual`` says the cut stopped for such a reason
    rather than at the end of ``buf``.

    >>> _whole_objects(b'[{"a": "}"},\n {"b": [1]}, 7]', 1, 1)
    ([(1, 11), (14, 24)], True)
    """
    data = np.frombuffer(buf, dtype=np.uint8)[pos:]
    limit = data.size  # cutting stops before the value holding this position
    quotes = np.flatnonzero(data == 0x22)
    if quotes.size and buf.find(b"\\", pos) >= 0:  # a quote after an odd run of backslashes is escaped
        backslash = data == 0x5C
        run = np.zeros(quotes.size, dtype=np.int64)
        before = quotes - 1
        more = before >= 0
        more[more] = backslash[before[more]]
        while more.any():
            run += more
            before -= 1
            more &= before >= 0
            more[more] = backslash[before[more]]
        escaped = quotes[run % 2 == 1]
        quotes = quotes[run % 2 == 0]
        # Backslashes escape only inside strings: where an "escaped" quote lies outside one (broken
        # text), the scan reads it differently, so cutting stops there.
        outside = escaped[np.searchsorted(quotes, escaped) % 2 == 0]
        if outside.size:
            limit = int(outside[0])
    steps = _BRACKET_STEP[data]
    brackets = np.flatnonzero(steps)
    if quotes.size:  # a bracket after an odd number of quotes is inside a string
        brackets = brackets[np.searchsorted(quotes, brackets) % 2 == 0]
    step = steps[brackets].astype(np.int64)
    after = depth_base + np.cumsum(step)
    before_depth = after - step
    below = np.flatnonzero(after < depth_base)
    if below.size:
        limit = min(limit, int(brackets[below[0]]))
    if depth_base == 0:  # resync: an opening brace at a line start inside a value
        inner = brackets[(before_depth > 0) & (step == 1)]
        inner = inner[(data[inner] == 0x7B) & (data[inner - 1] == 0x0A)]
        if inner.size:
            limit = min(limit, int(inner[0]))
    starts = brackets[(before_depth == depth_base) & (step == 1)]
    ends = brackets[(after == depth_base) & (step == -1)] + 1
    starts, ends = starts[starts < limit], ends[ends <= limit]
    count = min(starts.size, ends.size)
    unusual = limit < data.size or count < starts.size - 1
    spans: list[tuple[int, int]] = []
    gap_start = 0
    for start, end in zip(starts[:count].tolist(), ends[:count].tolist()):
        if data[start] != 0x7B or _SPACE.fullmatch(buf, pos + gap_start, pos + start) is None:
            return spans, True
        spans.append((pos + start, pos + end))
        gap_start = end
    return spans, unusual


def _line_numbers(buf: bytes, pos: int, starts: list[int], first_line: int) -> list[int]:
    """The line each of ``starts`` (ascending, at or after ``pos``) is on, ``pos`` being on ``first_line``."""
    newlines = np.flatnonzero(np.frombuffer(buf, dtype=np.uint8)[pos : starts[-1]] == 0x0A) + pos
    return (np.searchsorted(newlines, starts) + first_line).tolist()


def _value_end(buf: bytes, start: int, eof: bool, resync: bool) -> tuple[int | None, bool]:
    """End index of the JSON value starting at ``start`` (None: need more bytes)."""
    first = buf[start : start + 1]
    if resync and first not in (b"{", b"["):  # between messages, text that starts no object: its line is one piece
        line_end = buf.find(b"\n", start)
        return (line_end, False) if line_end >= 0 else ((len(buf), False) if eof else (None, False))
    if first == b'"':
        end = _string_end(buf, start + 1)
        return end, False
    if first not in (b"{", b"["):
        match = _SCALAR_END.search(buf, start + 1)
        if match is None:
            return (len(buf), False) if eof else (None, False)
        return max(match.start(), start + 1), False
    depth = 0
    pos = start
    while True:
        match = _STRUCTURE.search(buf, pos)
        if match is None:
            return None, False
        at = match.start()
        char = buf[at : at + 1]
        if char == b'"':
            end = _string_end(buf, at + 1)
            if end is None:
                return None, False
            pos = end
            continue
        if char in (b"{", b"["):
            if resync and depth > 0 and char == b"{" and at > 0 and buf[at - 1 : at] == b"\n":
                return at, True
            depth += 1
        else:
            depth -= 1
        pos = at + 1
        if depth == 0:
            return pos, False


def _string_end(buf: bytes, pos: int) -> int | None:
    while True:
        match = _STRING_END.search(buf, pos)
        if match is None:
            return None
        if buf[match.start()] == 0x5C:  # backslash: skip the escaped byte
            pos = match.start() + 2
            continue
        return match.start() + 1
