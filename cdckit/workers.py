"""Reading a large file on every core: ``cdckit.read(path, workers=N)``.

A JSON Lines or text file is cut at line ends into ranges, as the Spark
engine cuts it (:func:`cdckit.io.line_ranges`); each range is
decoded in a worker process by the same :class:`~cdckit.decoding.MessageDecoder`
the one-process read runs. A worker's :class:`RangeSink` keeps, in input
order, the events (as Arrow tables) and pairs the update halves whose
partner is in its range; the calling process replays the ranges in order
and pairs the halves left, so the frame, its order, the quarantine and the
report are exactly those of a read in one process. (When a half left open
by an earlier range would have taken a half the worker paired, the range
is decoded again in the calling process.) Each range's column type
declarations are replayed through the calling process's sink, whose rule
drops a declaration equal to the last one for its table: the same
``cdckit.column_types_of(events)`` as one process.

>>> import cdckit
>>> path = cdckit.samples.path("canal/shop.jsonl")
>>> one, two = cdckit.read(path, workers=1), cdckit.read(path, workers=2)
>>> one.equals(two) and one.attrs["report"] == two.attrs["report"]
True
"""

from __future__ import annotations

import bisect
import math
import multiprocessing
import os
import shutil
import tempfile
import weakref
from concurrent.futures import Executor, ProcessPoolExecutor
from typing import Any, Iterator

import pyarrow as pa

from .decoding import FrameSink, MessageDecoder, gc_paused
from .dialects import registry
from .dialects.options import DialectOptions
from .frame import Event, FrameBuilder, rows_inserted
from .io import LineBlock, Message, file_pieces, is_gzip, line_ranges, text_encoding
from .io.array_ranges import array_ranges, holds_array
from .io.table_ranges import csv_ranges, parquet_ranges
from .io.unpacked import gunzipped
from .pairing import PAIRED, Pairer, identity

__all__ = ["PARALLEL_BYTES", "RANGE_BYTES", "worker_count", "splittable", "FileUnits", "file_units",
           "decode_range", "RangeSink", "pool"]

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
    """True when ``path`` may be cut into ranges: a JSON Lines or text file (console-consumer lines
    included), a JSON array, a CSV file, plain or gzip, or a plain Parquet file. (:func:`file_units` may still find it
    cannot be cut: a broken array, a CSV cell holding a line end, a damaged gzip file.)"""
    if container not in ("jsonl", "text", "json", "parquet", "csv") or not os.path.isfile(path):
        return False
    if container == "parquet":
        return not is_gzip(path)  # the one-process read cannot seek in a gzip Parquet file: kept as it reads
    return container != "json" or holds_array(path)


class FileUnits(list):
    """The units of one file (a list), owning the folder of a gzip file's decompressed copy: removed by
    :meth:`close` (or ``with``), else when the list is dropped (the read ended, or failed) or at exit."""

    def __init__(self, units: list[dict[str, Any]] = (), folder: str | None = None) -> None:
        super().__init__(units)
        self._removal = weakref.finalize(self, shutil.rmtree, folder, True) if folder else None

    def close(self) -> None:
        if self._removal is not None:
            self._removal()

    def __enter__(self) -> "FileUnits":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def file_units(path: str, container: str, dialect: str | None, unknown: str | None, each: bool,
               options: DialectOptions | None, workers: int) -> FileUnits:
    """The ranges of a file for ``workers`` processes: a multiple of ``workers`` pieces of about the same size,
    none larger than :data:`RANGE_BYTES`; each unit carries the read's dialect ``options`` (default ones
    when None), and ``source``, the name its messages carry (``path``).

    A gzip file is decompressed once into a temporary folder (removed with the units, see
    :class:`FileUnits`), whose copy is cut; a file that cannot be cut (see :func:`splittable`) is one
    unit, read whole."""
    common = {"container": container, "dialect": dialect, "unknown": unknown, "each": each,
              "options": options if options is not None else DialectOptions(), "source": path, "encoding": None}
    whole = [{**common, "path": path, "start": 0, "end": -1, "first_offset": 0, "first_line": 1}]
    folder = None
    plain = path
    if is_gzip(path):
        folder = tempfile.mkdtemp(prefix="cdckit-")
        try:
            plain = gunzipped(path, folder)
        except BaseException:
            shutil.rmtree(folder, True)
            raise
        if plain is None:  # damaged: the whole read says where
            shutil.rmtree(folder, True)
            return FileUnits(whole)
    units = FileUnits(folder=folder)
    size = os.path.getsize(plain)
    pieces = max(1, math.ceil(math.ceil(size / RANGE_BYTES) / workers) * workers)
    ranges = _ranges(plain, container, size, pieces)
    if not ranges:
        units.extend(whole)
        units.close()
        return units
    if container == "text":
        common["encoding"] = text_encoding(plain)
    units.extend({**common, "path": plain, "start": start, "end": end, "first_offset": first_offset,
                  "first_line": first_line} for start, end, first_offset, first_line in ranges)
    return units


def _ranges(path: str, container: str, size: int, pieces: int) -> list[tuple] | None:
    """The ranges of a plain file of ``container``, or None where it cannot be cut."""
    if size == 0:
        return None
    if container == "json":
        return array_ranges(path, math.ceil(size / pieces))
    if container == "csv":
        return csv_ranges(path, math.ceil(size / pieces))
    if container == "parquet":
        try:
            return parquet_ranges(path, pieces)
        except Exception:  # a damaged file: the whole read says why
            return None
    return line_ranges(path, math.ceil(size / pieces))


class RangeSink(FrameSink):
    """What became of a range's messages: one Arrow table of its events, the quarantined messages, the
    counts the report needs, and the update halves.

    Halves whose partner is in the range are paired here (``pair=True``), the
    completed update placed where its second half was, and the identities so
    paired are listed; the halves left are returned each with the number of
    events before it, for the calling process to pair in input order.
    """

    def __init__(self, pair: bool = True) -> None:
        super().__init__()
        self.quarantine: list[tuple] = []
        self._pairer = Pairer() if pair else None
        self._halves: list[tuple] = []  # (position, msg, dialect, event) in input order
        self._merged = FrameBuilder()
        self._merged_at: list[int] = []  # each completed update's position and the index of its second half
        self._merged_after: list[int] = []
        self._paired: set[tuple] = set()

    def half(self, msg: Message, dialect: str, event: Event) -> None:
        self._offer(len(self.builder), msg, dialect, event)

    def placed(self, table: pa.Table, halves: list[tuple]) -> pa.Table:
        start = len(self.builder)
        for position, msg, dialect, event in halves:
            self._offer(start + position, msg, dialect, event)
        return table

    def _offer(self, position: int, msg: Message, dialect: str, event: Event) -> None:
        index = len(self._halves)
        self._halves.append((position, msg, dialect, event))
        if self._pairer is None:
            return
        paired = self._pairer.offer(event, index, dialect)
        if paired is None:
            return
        merged, after, _ = paired
        where = self._halves[after][1]
        self._merged.add(merged, dialect, where.source, where.offset, where.partition)
        self._merged_at.append(position)
        self._merged_after.append(index)
        self._paired.add(identity(event, dialect))
        self.decoded += 2
        self.events_made += 1
        self.skipped_reasons[PAIRED] += 1

    def bad(self, msg: Message, dialect: str | None, reason: str, code: str, *,
            cause: BaseException | None = None) -> None:
        self.quarantine.append((msg.source, msg.offset, msg.partition, msg.line, dialect, reason, msg.raw_text(),
                                code))

    def result(self) -> dict[str, Any]:
        table = rows_inserted(self.builder.to_arrow(), self._merged.to_arrow(), self._merged_at)
        left = range(len(self._halves)) if self._pairer is None else sorted(
            index for _, index in self._pairer.drain())
        halves = []
        for index in left:  # its place counts the completed updates placed before it
            position, msg, dialect, event = self._halves[index]
            halves.append((position + bisect.bisect_left(self._merged_after, index), _position(msg), dialect,
                           event))
        return {"table": table, "halves": halves, "paired": self._paired, "quarantine": self.quarantine,
                "declarations": self.declarations,
                "messages": self.messages,
                "decoded": self.decoded, "events": self.events_made, "by_dialect": self.by_dialect,
                "skipped": self.skipped_reasons}


def _position(msg: Message) -> Message:
    """What the parent needs of a half's message: its position and raw text (a message that pickles)."""
    return Message(None, msg.source, msg.offset, raw=msg.raw_text(), partition=msg.partition, line=msg.line)


def decode_range(unit: dict[str, Any], pair: bool = True) -> dict[str, Any]:
    """Worker: decode one range of a file (a :func:`file_units` entry); see :meth:`RangeSink.result`."""
    sink = RangeSink(pair)
    dialect = registry.create(unit["dialect"], options=unit["options"]) if unit["dialect"] else None
    decoder = MessageDecoder(dialect, sink, unit["unknown"], each=unit["each"], options=unit["options"])
    with gc_paused():
        source = unit.get("source", unit["path"])
        for piece in file_pieces(unit["path"], unit["container"], unit["start"], unit["end"],
                                 unit["first_offset"], unit["first_line"], unit["encoding"],
                                 unit["options"].key_separator, source):
            if isinstance(piece, LineBlock):
                decoder.block(piece, source)
            else:
                decoder.message(piece)
        decoder.finish()
    return sink.result()


def pool(workers: int) -> Executor:
    """Worker processes, forked where the system allows (no start-up import), else spawned."""
    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
    return ProcessPoolExecutor(workers, mp_context=context)


def results_in_order(executor: Executor, units: list[dict[str, Any]]) -> Iterator[tuple[dict, dict[str, Any]]]:
    """Each range with the worker's result, range by range in file order (at most two ranges per worker
    ahead)."""
    ahead = 2 * getattr(executor, "_max_workers", 2)
    pending = [(unit, executor.submit(decode_range, unit)) for unit in units[:ahead]]
    following = iter(units[ahead:])
    while pending:
        unit, future = pending.pop(0)
        result = future.result()
        later = next(following, None)
        if later is not None:
            pending.append((later, executor.submit(decode_range, later)))
        yield unit, result
