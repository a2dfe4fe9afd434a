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
    "InvalidValue",
    "UnknownDialectError",
    "AmbiguousDialectError",
    "SparkSetupError",
    "KafkaSourceError",
    "KeylessTableError",
    "how_to_give_keys",
    "REASON_CODES",
]

#: The stable ``reason_code`` of a quarantine row, and what it means (the ``reason`` sentence gives the detail).
REASON_CODES: dict[str, str] = {
    "invalid_json": "the message is not valid JSON",
    "truncated_json": "the message's JSON value never closes: it was cut off",
    "invalid_utf8": "the bytes are not valid UTF-8 text (or a Python str holds a lone surrogate)",
    "too_deep": "the message nests deeper than a JSON parser allows (1,024 levels)",
    "binary_data": "binary bytes where a text capture was expected",
    "damaged_input": "a container row that cannot be a message (a CSV row with more fields than its header)",
    "damaged_container": "the container is damaged (gzip, Parquet, CSV): the messages before the damage are kept "
    "and this one entry stands for the rest of the file",
    "unreadable_file": "the file could not be opened or read (permissions, I/O error)",
    "unknown_dialect": "no dialect recognises the message",
    "unsupported_format": "a known shape cdckit does not decode; the reason names it and what to do",
    "invalid_message": "the dialect recognises the message but a field is missing or of the wrong kind",
    "invalid_value": "a field holds a value the frame cannot hold (a time out of range, a name that is not text)",
    "decoder_error": "the decoder failed on a shape it did not foresee",
    "unpaired_half": "half of an update whose other half never came",
    "unknown_schema": "a framed record (Confluent's wire format) whose schema id no schema registry or schemas "
    "folder given has",
    "invalid_encoding": "a framed record whose body does not match its schema (Avro, Protobuf or JSON Schema)",
}


class CdcError(Exception):
    """Base class of every error cdckit raises on purpose."""


class DecodeError(CdcError, ValueError):
    """A message could not be decoded (raised by ``read(..., errors="raise")``).

    Names where the message is (``source``, ``offset``) and why it failed
    (``reason``). ``raw`` holds the message text and ``partial`` the events
    decoded before it, so nothing already decoded is lost.
    """

    def __init__(self, source: str, offset: int, reason: str, raw: str | None = None, partial: Any = None) -> None:
        self.source = source
        self.offset = offset
        self.reason = reason
        self.raw = raw
        self.partial = partial
        super().__init__(f"{source}, message {offset}: {reason}")


class InvalidValue(CdcError, ValueError):
    """A value in a message that the frame cannot hold (a time out of range, text that is not a time).

    Raised by the value helpers (:mod:`cdckit.values`) while a message is
    decoded; the message is quarantined with the ``invalid_value`` code.
    """


class UnknownDialectError(CdcError, LookupError):
    """A dialect name is not registered, or no dialect recognises the input (or none is sure enough).

    ``tried`` lists the dialects that were tried, ``suggestion`` the nearest
    registered name for a misspelt one. When some dialect matched but below
    the confidence floor, ``best`` and ``runner_up`` are ``(name, confidence)``.
    ``brief`` is the message without the list of dialects tried: what each
    quarantined message of such an input says (the list goes once into the
    read's report).

    >>> UnknownDialectError("none fits; tried: a, b", ("a", "b"), brief="none fits").brief
    'none fits'
    """

    def __init__(
        self,
        message: str,
        tried: tuple[str, ...] = (),
        suggestion: str | None = None,
        *,
        best: tuple[str, float] | None = None,
        runner_up: tuple[str, float] | None = None,
        brief: str | None = None,
    ) -> None:
        self.brief = brief or message
        self.tried = tried
        self.suggestion = suggestion
        self.best = best
        self.runner_up = runner_up
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


class KafkaSourceError(CdcError, ConnectionError):
    """A Kafka topic cannot be read: the broker is unreachable, the topic or a partition is missing, or a
    partition did not catch up in time; the one-line message says which (:mod:`cdckit.io.kafka`)."""


def how_to_give_keys(tables: list[str] | tuple[str, ...]) -> str:
    """How to find and give the key columns of ``tables`` (full ``database.table`` names), said once for the
    ``keyless_tables`` finding (pandas and Spark) and :class:`KeylessTableError`: the call that proposes keys and
    how to give them, each with its command-line form in ``(CLI: ...)`` (which the command line says instead).

    >>> print(how_to_give_keys(["shop.notes"]))
    cdckit.infer_keys(events) proposes its key columns (CLI: cdckit keys FILE); give them with \
keys={'shop.notes': [...]} on read, materialize, scd2, history, explore or the report, as cdckit.with_keys does \
(CLI: --keys shop.notes=COL,...)
    """
    its = "its" if len(tables) == 1 else "their"
    example = ", ".join(f"{t!r}: [...]" for t in tables)
    options = " ".join(f"--keys {t}=COL,..." for t in tables)
    return (
        f"cdckit.infer_keys(events) proposes {its} key columns (CLI: cdckit keys FILE); give them with "
        f"keys={{{example}}} on read, materialize, scd2, history, explore or the report, as cdckit.with_keys "
        f"does (CLI: {options})"
    )


class KeylessTableError(CdcError, LookupError):
    """A table whose changes name no key columns, asked for what needs a row's identity (``scd2``, ``history``).

    ``tables`` names the tables; the message says what is missing (``what``, by default that no change of
    theirs names key columns) and how to find and give their key columns (:func:`how_to_give_keys`).

    >>> err = KeylessTableError(["shop.customers"])
    >>> str(err).split(": ")[0]
    'shop.customers has no key columns (its changes name none), so its rows have no identity'
    >>> "cdckit.infer_keys(events)" in str(err) and "keys={'shop.customers': [...]}" in str(err)
    True
    """

    def __init__(self, tables: list[str] | tuple[str, ...], what: str = "") -> None:
        self.tables = tuple(tables)
        its, has = ("its", "has") if len(self.tables) == 1 else ("their", "have")
        what = what or f"{', '.join(self.tables)} {has} no key columns ({its} changes name none)"
        super().__init__(f"{what}, so {its} rows have no identity: {how_to_give_keys(self.tables)}")

    def __str__(self) -> str:  # LookupError would quote the message
        return str(self.args[0])
