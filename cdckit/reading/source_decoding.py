"""One source of a read decoded into a sink: its dialect chosen from its first messages, then every message.

The calling process of :func:`cdckit.read` and a worker process given a
whole file (:func:`cdckit.reading.workers.decode_file`) run the same two steps, so a
directory read a file per worker gives the one-process read:

- :func:`source_verdict`: the dialect of a source, given or detected from
  its first messages, with what the report and the warnings say of it;
- :func:`decode_source`: every message of the source through a
  :class:`~cdckit.reading.decoding.MessageDecoder` (a file of JSON Lines or one JSON
  value after another in blocks, for a dialect's batch decoder).

>>> import cdckit, itertools
>>> from cdckit.io import iter_sources
>>> from cdckit.reading.sinks import FrameSink
>>> (name, messages), = iter_sources(cdckit.samples.path("canal/shop.jsonl"))
>>> head = list(itertools.islice(messages, 50))
>>> verdict = source_verdict(name, head, None, registry.all_dialects())
>>> verdict.dialect, verdict.warning
('canal', None)
>>> sink = FrameSink()
>>> for _ in decode_source(name, messages, head, verdict, sink, DialectOptions(), None):
...     pass
>>> len(sink.builder) > 0
True
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Generator, Iterator
from typing import Any, NamedTuple

from ..dialects import registry
from ..dialects.base import Dialect
from ..dialects.options import DialectOptions
from ..errors import UnknownDialectError
from ..io import LineBlock, Message, file_container, file_pieces
from ..io.kafka import TopicMessages
from ..io.schema_book import unframed
from .decoding import MessageDecoder
from .detect import choose_for_read
from .sinks import Sink

__all__ = ["SourceVerdict", "source_verdict", "decode_source", "block_container"]

#: Why a source's messages have no dialect when none of its first messages could be read.
NOTHING_READABLE = "unreadable message and no readable one to detect a dialect from"


class SourceVerdict(NamedTuple):
    """The dialect of one source and what the read's report and warnings say of it."""

    dialect: str | None  #: registry name; None: each message is detected on its own
    unknown: str | None  #: why there is no dialect (each quarantined message says it), else None
    given: bool  #: the caller named the dialect (nothing was detected)
    detection: dict[str, Any] | None  #: the report's ``detection`` entry of the source (None when given)
    warning: str | None  #: a warning for the caller (a low-confidence verdict, or none found)


def source_verdict(
    name: str,
    head: list[Message],
    dialect_name: str | None,
    dialects: list[Dialect],
    options: DialectOptions | None = None,
) -> SourceVerdict:
    """The dialect of source ``name``: ``dialect_name`` when given, else detected from ``head`` (its first
    messages, framed ones decoded with ``options.schemas``) among ``dialects``."""
    if dialect_name is not None:
        return SourceVerdict(dialect_name, None, True, None, None)
    head = [unframed(m, None if options is None else options.schemas) for m in head]
    found = choose_for_read(head, dialects)
    if isinstance(found, UnknownDialectError):
        err = found
        detection = {
            "dialect": None,
            "confidence": err.best[1] if err.best else 0.0,
            "best_guess": err.best[0] if err.best else None,
            "low_confidence": True,
            "reason": str(err),
        }
        if not any(m.error is None for m in head):
            return SourceVerdict(None, NOTHING_READABLE, False, detection, None)
        # each quarantined message says it briefly; the report holds the whole
        return SourceVerdict(None, err.brief, False, detection, f"{name}: {err}; each message is detected on its own")
    detection = {
        "dialect": found.dialect,
        "confidence": found.confidence,
        "runner_up": found.runner_up,
        "runner_up_confidence": found.runner_up_confidence,
        "low_confidence": found.low_confidence,
    }
    warning = f"{name}: {found}: a low-confidence verdict, check it" if found.low_confidence else None
    return SourceVerdict(found.dialect, None, False, detection, warning)


def block_container(name: str, container: str | None, options: DialectOptions) -> str | None:
    """The container of a file read in blocks for a batch decoder ("jsonl", "json", or "csv" and "parquet",
    whose rows come as :class:`~cdckit.io.tables.RowBlock`), else None."""
    if not os.path.isfile(name):
        return None
    found = file_container(name, container, options.key_separator)
    return found if found in ("jsonl", "json", "csv", "parquet") else None


def decode_source(
    name: str,
    messages: Generator[Message, None, None],
    head: list[Message],
    verdict: SourceVerdict,
    sink: Sink,
    options: DialectOptions,
    container: str | None,
) -> Iterator[None]:
    """Decode every message of a source (``head``, its first messages already read, then the rest of
    ``messages``) into ``sink``; yields after each block or message, so that the caller can hand on what
    the sink holds."""
    dialect = registry.create(verdict.dialect, options=options) if verdict.dialect is not None else None
    decoder = MessageDecoder(dialect, sink, verdict.unknown, each=not verdict.given, options=options)
    blocks = block_container(name, container, options) if dialect is not None and dialect.has_line_decoder else None
    if isinstance(messages, TopicMessages) and dialect is not None and dialect.has_line_decoder:
        yield from decode_pieces(decoder, messages.pieces(), name)  # a topic's kcat -J lines, as a file's
    elif blocks is not None:
        messages.close()
        yield from decode_pieces(decoder, file_pieces(name, blocks, key_separator=options.key_separator), name)
    else:
        for msg in itertools.chain(head, messages):
            decoder.message(msg)
            yield
    decoder.finish()


def decode_file_range(unit: dict[str, Any], sink: Sink, options: DialectOptions) -> Iterator[None]:
    """Decode one range of a file (a :func:`cdckit.reading.workers.file_units` entry whose first offset and line
    are known) into ``sink``; yields after each block or message, as :func:`decode_source` does.

    >>> import cdckit
    >>> from cdckit.reading.sinks import FrameSink
    >>> path = str(cdckit.samples.path("canal/shop.jsonl"))
    >>> unit = {"path": path, "dialect": "canal", "unknown": None, "each": False, "container": "jsonl",
    ...         "start": 0, "end": os.path.getsize(path), "first_offset": 0, "first_line": 1, "encoding": "utf-8"}
    >>> sink = FrameSink()
    >>> for _ in decode_file_range(unit, sink, DialectOptions()):
    ...     pass
    >>> len(sink.builder) > 0
    True
    """
    dialect = registry.create(unit["dialect"], options=options) if unit["dialect"] else None
    decoder = MessageDecoder(dialect, sink, unit["unknown"], each=unit["each"], options=options)
    source = unit.get("source", unit["path"])
    yield from decode_pieces(
        decoder,
        file_pieces(
            unit["path"],
            unit["container"],
            unit["start"],
            unit["end"],
            unit["first_offset"],
            unit["first_line"],
            unit["encoding"],
            options.key_separator,
            source,
        ),
        source,
    )
    decoder.finish()


def decode_pieces(decoder: MessageDecoder, pieces: Iterator[LineBlock | Message], source: Any) -> Iterator[None]:
    """Each piece of a file (a block of lines for a batch decoder, or one message) through ``decoder``;
    yields after each."""
    for piece in pieces:
        if isinstance(piece, LineBlock):
            decoder.block(piece, source)
        else:
            decoder.message(piece)
        yield
