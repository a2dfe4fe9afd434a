r"""JSON Lines: one JSON message per line, blank lines left out, a leading byte-order mark ignored.

>>> import io
>>> [(m.offset, m.line, m.value) for m in jsonl_messages(io.BytesIO(b'{"a": 1}\n\n{"a": 2}\n'), "<bytes>")]
[(0, 1, {'a': 1}), (1, 3, {'a': 2})]

``jsonl_messages`` is shared by the modules of :mod:`cdckit.io` (not public).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import IO

from .message import LineBlock, Message
from .records import parse_line
from .streams import BLOCK, without_bom

__all__ = ["jsonl_blocks"]


def jsonl_messages(stream: IO[bytes], name: str) -> Iterator[Message]:
    """The messages of a JSON Lines stream, one line at a time."""
    offset = 0
    for number, raw in enumerate(stream, start=1):
        if number == 1:
            raw = without_bom(raw)
        raw = raw.strip()
        if not raw:
            continue
        yield parse_line(raw, name, offset, number)
        offset += 1


def jsonl_blocks(
    stream: IO[bytes], first_offset: int = 0, first_line: int = 1, block_size: int = BLOCK
) -> Iterator[LineBlock]:
    r"""The messages of a JSON Lines stream in blocks of about ``block_size`` bytes.

    The same offsets and line numbers as the messages :func:`cdckit.io.iter_sources`
    gives (counting from ``first_offset`` and ``first_line`` when the stream
    is a part of a file), read with C-speed splitting instead of line by line.

    >>> import io
    >>> [(b.first_offset, b.lines, b.line_numbers) for b in jsonl_blocks(io.BytesIO(b'{"a": 1}\n\n{"a": 2}\n'))]
    [(0, [b'{"a": 1}', b'{"a": 2}'], [1, 3])]
    """
    offset = first_offset
    line = first_line
    tail = b""
    first = first_line == 1
    while True:
        data = stream.read(block_size)
        if first:  # read on until a byte-order mark, cut by a small block, is whole (or the stream ends)
            first = False
            while data and len(without_bom(data)) < 3 and (more := stream.read(block_size)):
                data += more
            data = without_bom(data)
        if not data:
            if tail.strip():
                yield LineBlock(offset, line, [tail])
            return
        lines = data.split(b"\n")  # the block's lines, split once: no copy of the block joined to the tail
        if len(lines) == 1:
            tail += data
            continue
        lines[0] = tail + lines[0]
        tail = lines.pop()
        if b"" in lines or any(map(bytes.isspace, lines)):
            kept = [(number, raw) for number, raw in enumerate(lines, start=line) if raw and not raw.isspace()]
            block = LineBlock(offset, line, [raw for _, raw in kept], [number for number, _ in kept])
        else:
            block = LineBlock(offset, line, lines)
        line += len(lines)
        if block.lines:
            offset += len(block.lines)
            yield block
