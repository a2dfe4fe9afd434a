"""The exceptions cdckit raises, one per kind of trouble.

>>> import cdckit
>>> try:
...     cdckit.dialects.get("cannal")
... except cdckit.UnknownDialectError as err:
...     print(err)
unknown dialect 'cannal'; did you mean 'canal'?
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "CdcError",
    "DecodeError",
    "UnknownDialectError",
    "AmbiguousDialectError",
    "SparkSetupError",
    "REASON_CODES",
]

#: The stable ``reason_code`` of a quarantine row, and what it means (the ``reason`` sentence gives the detail).
REASON_CODES: dict[str, str] = {
    "damaged_input": "the container could not give a whole message (truncated JSON, invalid UTF-8, bad CSV row)",
    "unknown_dialect": "no dialect recognises the message",
    "invalid_message": "the dialect recognises the message but a field is missing or of the wrong kind",
    "decoder_error": "the decoder failed on a shape it did not foresee",
    "unpaired_half": "half of an update whose other half never came",
}


class CdcError(Exception):
    """Base class of every error cdckit raises on purpose."""


class DecodeError(CdcError, ValueError):
    """A message could not be decoded (raised by ``read(..., errors="raise")``).

    Names where the message is (``source``, ``offset``) and why it failed
    (``reason``). ``raw`` holds the message text and ``partial`` the events
    decoded before it, so nothing already decoded is lost.
    """

    def __init__(
        self,
        source: str,
        offset: int,
        reason: str,
        raw: str | None = None,
        partial: Any = None,
    ) -> None:
        self.source = source
        self.offset = offset
        self.reason = reason
        self.raw = raw
        self.partial = partial
        super().__init__(f"{source}, message {offset}: {reason}")


class UnknownDialectError(CdcError, LookupError):
    """A dialect name is not registered, or no dialect recognises the input.

    ``tried`` lists the dialects that were tried, ``suggestion`` the nearest
    registered name for a misspelt one.
    """

    def __init__(self, message: str, tried: tuple[str, ...] = (), suggestion: str | None = None) -> None:
        self.tried = tried
        self.suggestion = suggestion
        super().__init__(message)

    def __str__(self) -> str:  # LookupError would quote the message
        return str(self.args[0])


class AmbiguousDialectError(CdcError):
    """Two dialects explain the input equally well; pass ``dialect=`` to choose."""

    def __init__(self, message: str, candidates: tuple[str, ...]) -> None:
        self.candidates = candidates
        super().__init__(message)


class SparkSetupError(CdcError, RuntimeError):
    """Spark cannot start here (no Java 17+, say); the message says what to install."""
