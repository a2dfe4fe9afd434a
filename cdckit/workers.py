"""Reading a large file on every core: ``cdckit.read(path, workers=N)``.

A JSON Lines or text file is cut at line ends into ranges, as the Spark
engine cuts it (:func:`cdckit.containers.line_ranges`); each range is
decoded in a worker process by the same :class:`~cdckit.decoding.MessageDecoder`
the one-process read runs. A worker's :class:`RangeSink` keeps, in input
order, the events (as Arrow tables) and the update halves, which only the
calling process can pair; the calling process replays them range by range,
so the frame, its order, the quarantine and the report are exactly those
of a read in one process.

>>> import cdckit
>>> path = cdckit.samples.path("canal/shop.jsonl")
>>> one, two = cdckit.read(path, workers=1), cdckit.read(path, workers=2)
>>> one.equals(two) and one.attrs["report"] == two.attrs["report"]
True
"""

from __future__ import annotations

import math
import multiprocessing
import os
from concurrent.futures import Executor, ProcessPoolExecutor
from typing import Any, Iterator

import pyarrow as pa

from . import containers
from .containers import LineBlock, Message
from .decoding import FrameSink, MessageDecoder, gc_paused
from .dialects import registry
from .frame import Event

__all__ = ["PARALLEL_BYTES", "RANGE_BYTES", "worker_count", "splittable", "file_units", "decode_range",
           "RangeSink", "pool"]

#: With ``workers=None``, files smaller than this are read in the calling process (starting workers costs more).
PARALLEL_BYTES = 16 << 20
#: The largest range of a file one worker decodes at a time.
RANGE_BYTES = 64 << 20


def worker_count(workers: int | None, size: int) -> int:
    """How many processes read a file of ``size`` bytes: ``workers``, or every core for a large file."""
    if workers is not None:
        if workers < 1:
            raise ValueError("workers must be at least 1")
        return workers
    if size < PARALLEL_BYTES:
        return 1
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def splittable(path: str, container: str) -> bool:
    """True when ``path`` can be cut at line ends: a plain (not gzip) JSON Lines or text file."""
    return container in ("jsonl", "text") and os.path.isfile(path) and not containers.is_gzip(path)


def file_units(path: str, container: str, dialect: str | None, unknown: str | None, each: bool,
               tz: str | None, workers: int) -> list[dict[str, Any]]:
    """The ranges of a file for ``workers`` processes: a multiple of ``workers`` pieces of about the same size,
    none larger than :data:`RANGE_BYTES`."""
    size = os.path.getsize(path)
    pieces = math.ceil(math.ceil(size / RANGE_BYTES) / workers) * workers
    encoding = containers.text_encoding(path) if container == "text" else None
    return [{"path": path, "container": container, "dialect": dialect, "unknown": unknown, "each": each, "tz": tz,
             "start": start, "end": end, "first_offset": first_offset, "first_line": first_line,
             "encoding": encoding}
            for start, end, first_offset, first_line in containers.line_ranges(path, math.ceil(size / pieces))]


class RangeSink(FrameSink):
    """What became of a range's messages: one Arrow table of its events, its update halves each with the
    number of events before it (so they are paired in input order), the quarantined messages, and the
    counts the report needs."""

    def __init__(self) -> None:
        super().__init__()
        self.halves: list[tuple] = []
        self.quarantine: list[tuple] = []

    def half(self, msg: Message, dialect: str, event: Event) -> None:
        self.halves.append((len(self.builder), _position(msg), dialect, event))

    def placed(self, table: pa.Table, halves: list[tuple]) -> pa.Table:
        start = len(self.builder)
        self.halves.extend((start + position, _position(msg), dialect, event)
                           for position, msg, dialect, event in halves)
        return table

    def bad(self, msg: Message, dialect: str | None, reason: str, code: str, *,
            cause: BaseException | None = None) -> None:
        self.quarantine.append((msg.source, msg.offset, msg.partition, msg.line, dialect, reason, msg.raw_text(),
                                code))

    def result(self) -> dict[str, Any]:
        return {"table": self.builder.to_arrow(), "halves": self.halves, "quarantine": self.quarantine,
                "messages": self.messages,
                "decoded": self.decoded, "events": self.events_made, "by_dialect": self.by_dialect,
                "skipped": self.skipped_reasons}


def _position(msg: Message) -> Message:
    """What the parent needs of a half's message: its position and raw text (a message that pickles)."""
    return Message(None, msg.source, msg.offset, raw=msg.raw_text(), partition=msg.partition, line=msg.line)


def decode_range(unit: dict[str, Any]) -> dict[str, Any]:
    """Worker: decode one range of a file (a :func:`file_units` entry); see :meth:`RangeSink.result`."""
    sink = RangeSink()
    dialect = registry.create(unit["dialect"], tz=unit["tz"]) if unit["dialect"] else None
    decoder = MessageDecoder(dialect, sink, unit["unknown"], each=unit["each"], tz=unit["tz"])
    with gc_paused():
        for piece in containers.file_pieces(unit["path"], unit["container"], unit["start"], unit["end"],
                                            unit["first_offset"], unit["first_line"], unit["encoding"]):
            if isinstance(piece, LineBlock):
                decoder.block(piece, unit["path"])
            else:
                decoder.message(piece)
    return sink.result()


def pool(workers: int) -> Executor:
    """Worker processes, forked where the system allows (no start-up import), else spawned."""
    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
    return ProcessPoolExecutor(workers, mp_context=context)


def results_in_order(executor: Executor, units: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """The workers' results, range by range in file order (at most two ranges per worker ahead)."""
    ahead = 2 * getattr(executor, "_max_workers", 2)
    pending = [executor.submit(decode_range, unit) for unit in units[:ahead]]
    following = iter(units[ahead:])
    while pending:
        result = pending.pop(0).result()
        unit = next(following, None)
        if unit is not None:
            pending.append(executor.submit(decode_range, unit))
        yield result
