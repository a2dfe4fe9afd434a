r"""Delimited text captures: one message per non-blank line, UTF-8 or Latin-1.

A file is Latin-1 when its first line holding non-ASCII bytes is not valid
UTF-8; a line that does not decode is quarantined on its own.

>>> import io
>>> [(m.offset, m.line, m.value) for m in text_messages(io.BytesIO(b"op=c\n\nop=d\n"), "<bytes>", "utf-8")]
[(0, 1, 'op=c'), (1, 3, 'op=d')]

A line keeps what the reader took off (a value running over lines is put back byte for byte):

>>> [(m.value, m.line_end, m.gap) for m in text_messages(io.BytesIO(b"a'\r\n \r\nb'\n"), "<bytes>", "utf-8")]
[("a'", '\r', None), ("b'", None, ' \r\n')]
>>> [m.line_end for m in text_messages(io.BytesIO(b"x\ny\r\nz\r"), "<bytes>", "utf-8")]
[None, '\r', '\r']
>>> head_encoding("src=cssþ\n".encode("latin-1"))
'latin-1'

``head_encoding`` is shared by the modules of :mod:`cdckit.io` (not public).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import IO

from .message import Message, error_message
from .streams import HEAD, open_file, without_bom

__all__ = ["text_messages", "text_encoding"]


def text_encoding(path: str) -> str:
    """The encoding of a text file: UTF-8, unless its first non-ASCII line is not (then Latin-1).

    UTF-8 when the file cannot be read (reading it then says why, as one quarantined entry).
    """
    try:
        with open_file(path) as stream:
            return head_encoding(stream.read(HEAD))
    except OSError:
        return "utf-8"


def head_encoding(head: bytes) -> str:
    """UTF-8 unless the first line with non-ASCII bytes in ``head`` (a file's first bytes) is not valid UTF-8."""
    for line in head.split(b"\n")[:-1] or [head]:
        if line.isascii():
            continue
        try:
            line.decode("utf-8")
        except UnicodeDecodeError:
            return "latin-1"
        return "utf-8"
    return "utf-8"


def text_messages(
    stream: IO[bytes], name: str, encoding: str, first_offset: int = 0, first_line: int = 1
) -> Iterator[Message]:
    """The messages of a text stream (one per non-blank line), as :func:`cdckit.io.iter_sources` gives them."""
    offset = first_offset
    gap: list[bytes] = []  # the blank lines since the last message, as they were
    for number, whole in enumerate(stream, start=first_line):
        raw = whole.rstrip(b"\r\n")
        end = whole[len(raw) :].removesuffix(b"\n")  # the carriage returns before the line feed
        if number == 1:
            raw = without_bom(raw)
        if not raw.strip():
            gap.append(whole)
            continue
        try:
            text = raw.decode(encoding)
        except UnicodeDecodeError as err:
            yield error_message(name, offset, f"invalid UTF-8: {err}", "invalid_utf8", raw, number)
        else:
            message = Message(text, name, offset, raw=text, line=number)
            if end:
                message.line_end = end.decode("latin-1")
            if gap:
                message.gap = b"".join(gap).decode(encoding, "replace")
            yield message
        gap = []
        offset += 1
