"""What the containers give: one :class:`Message`, or a :class:`LineBlock` of raw JSON messages.

>>> Message({"a": 1}, "<string>", 0).raw_text()
'{"a":1}'
>>> LineBlock(5, 10, [b'{"a": 1}', b'{"a": 2}'], [10, 12]).line_of(1)
12

``error_message`` and ``safe_repr`` are shared by the modules of
:mod:`cdckit.io` (not public).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .. import values

__all__ = ["Message", "LineBlock"]


@dataclass(slots=True)
class Message:
    """One message of a source, ready for a dialect to decode.

    ``value`` is the parsed JSON value, a text line (str) or a row (dict).
    ``error`` is set instead when the container could not read the message
    (bad JSON, invalid UTF-8, a damaged file); such a message goes straight
    to quarantine with ``code`` (one of :data:`cdckit.errors.REASON_CODES`).
    ``topic`` is the Kafka topic of a record that names it (kcat ``-J``, a client's record);
    ``layout`` names the layout the message was unwrapped from when detection should say so
    (a ``kafka-console-consumer`` line, :mod:`cdckit.io.console`).
    A text line (:mod:`cdckit.io.text`) keeps what the reader took off, so that a value running over
    several lines can be put back byte for byte: ``line_end`` the carriage returns before its line feed,
    ``gap`` the blank or whitespace-only lines just before it, each with its line feed (None: none).
    """

    value: Any
    source: str
    offset: int
    raw: bytes | str | None = None
    key: Any = None
    partition: int | None = None
    line: int | None = None
    error: str | None = None
    code: str | None = None
    topic: str | None = None
    layout: str | None = None
    line_end: str | None = None
    gap: str | None = None

    def raw_text(self) -> str:
        """The message as text, for quarantine and error messages."""
        if isinstance(self.raw, (bytes, bytearray)):
            return bytes(self.raw).decode("utf-8", errors="backslashreplace")
        if isinstance(self.raw, str):
            return self.raw
        try:
            return values.dumps(self.value)
        except Exception:  # not JSON (a set, a lone surrogate) or nested too deep for the encoder
            return safe_repr(self.value)


@dataclass(slots=True)
class LineBlock:
    """Consecutive messages of a JSON Lines file, for decoders that take many raw lines at once.

    ``lines`` are the raw messages (blank lines left out, trailing CR kept);
    message ``i`` has offset ``first_offset + i`` and sits on line
    ``line_numbers[i]`` (or ``first_line + i`` when ``line_numbers`` is None,
    that is when the block had no blank line).
    """

    first_offset: int
    first_line: int
    lines: list[bytes]
    line_numbers: list[int] | None = None

    def line_of(self, index: int) -> int:
        return self.first_line + index if self.line_numbers is None else self.line_numbers[index]


def error_message(
    name: str, offset: int, reason: str, code: str, raw: bytes | str = b"", line: int | None = None
) -> Message:
    """A message the container could not read: quarantined with ``reason`` and ``code``."""
    return Message(None, name, offset, raw=raw, line=line, error=reason, code=code)


def unreadable_message(path: str, offset: int, err: OSError) -> Message:
    """The one message of a file that cannot be opened."""
    return error_message(path, offset, f"cannot read {path}: {err.strerror or err}", "unreadable_file")


def safe_repr(value: Any) -> str:
    """``repr(value)``, or a short note when the value is nested too deep to print."""
    try:
        return repr(value)
    except (RecursionError, ValueError):
        return f"<a {type(value).__name__} nested too deep to print>"
