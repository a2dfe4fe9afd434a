"""Reading a large file on every core: ``cdckit.read(path, workers=N)``.

A JSON Lines or text file is cut at line ends into ranges without being read
(:func:`cdckit.io.line_cuts`); each range is decoded in a worker process by
the same :class:`~cdckit.reading.decoding.MessageDecoder` the one-process read runs.
Nothing is done per event in the calling process:

- a worker counts its own range's messages and lines and publishes them in
  shared memory, so that each range learns the offset and line number of its
  first message from the ranges before it (:func:`placed_unit`);
- a worker writes its events as an Arrow IPC file (in shared memory where it
  has room, :func:`results_folder`) that the calling process maps without
  copying or converting (:func:`events_of`); what else it found is small: the
  quarantined messages, the counts of the report, the column type
  declarations and the update halves left without a partner in the range.

A worker's :class:`RangeSink` keeps, in input order, the events and pairs
the update halves whose partner is in its range; the calling process takes
the ranges in order and pairs the halves left, so the frame, its order, the
quarantine and the report are exactly those of a read in one process. (When
a half left open by an earlier range would have taken a half the worker
paired, the range is decoded again in the calling process.) Each range's
column type declarations are replayed through the calling process's sink,
whose rule drops a declaration equal to the last one for its table: the same
``cdckit.column_types_of(events)`` as one process.

>>> import cdckit
>>> path = cdckit.samples.path("canal/shop.jsonl")
>>> one, two = cdckit.read(path, workers=1), cdckit.read(path, workers=2)
>>> one.equals(two) and one.attrs["report"] == two.attrs["report"]
True
"""

from __future__ import annotations

import bisect
import itertools
import math
import mmap
import multiprocessing
import os
import pathlib
import shutil
import tempfile
import time
import uuid
import weakref
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import Executor, ProcessPoolExecutor
from typing import Any

import pyarrow as pa

from ..collector import gc_paused
from ..dialects import registry
from ..dialects.options import DialectOptions
from ..frame import Event
from ..frame_builders import FrameBuilder, rows_inserted
from ..io import Message, count_messages, is_gzip, iter_sources, line_cuts, text_encoding
from ..io.array_ranges import array_ranges, holds_array
from ..io.table_ranges import csv_ranges, parquet_ranges
from ..io.unpacked import gunzipped
from .pairing import PAIRED, Pairer, identity
from .progress import publishing
from .sinks import FrameSink
from .source_decoding import decode_file_range, decode_source, source_verdict

__all__ = [
    "PARALLEL_BYTES",
    "RANGE_BYTES",
    "worker_count",
    "splittable",
    "FileUnits",
    "file_units",
    "file_unit",
    "placed_unit",
    "decode_range",
    "decode_file",
    "decode_unit",
    "RangeSink",
    "pool",
    "planned_units",
    "shared_units",
    "results_folder",
    "events_of",
    "results_in_order",
]

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

    def __init__(self, units: Iterable[dict[str, Any]] = (), folder: str | None = None) -> None:
        super().__init__(units)
        self._folder = folder
        self._removal = weakref.finalize(self, shutil.rmtree, folder, True) if folder else None

    def close(self) -> None:
        if self._removal is not None:
            self._removal()

    def detach(self) -> str | None:
        """Give up the folder (no longer removed with these units): its path, or None."""
        if self._removal is not None:
            self._removal.detach()
            self._removal = None
        return self._folder

    def __enter__(self) -> FileUnits:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def file_units(
    path: str,
    container: str,
    dialect: str | None,
    unknown: str | None,
    each: bool,
    options: DialectOptions | None,
    workers: int,
    range_bytes: int | None = None,
    first_index: int = 0,
) -> FileUnits:
    """The ranges of a file for ``workers`` processes: a multiple of ``workers`` pieces of about the same size,
    none larger than ``range_bytes`` (:data:`RANGE_BYTES` by default); each unit carries the read's dialect
    ``options`` (default ones when None), ``source``, the name its messages carry (``path``), and its
    ``index`` among the read's units (from ``first_index``, that of the file's first range).

    A JSON Lines or text file is not read: the offset and line number of a range's first message are None
    (but the first range's), for the worker to find (:func:`placed_unit`). A gzip file is decompressed once
    into a temporary folder (removed with the units, see :class:`FileUnits`), whose copy is cut; a file that
    cannot be cut (see :func:`splittable`) is one unit, read whole."""
    common = {
        "container": container,
        "dialect": dialect,
        "unknown": unknown,
        "each": each,
        "options": options if options is not None else DialectOptions(),
        "source": path,
        "encoding": None,
        "first_index": first_index,
        "lines": container in ("jsonl", "text"),
    }
    whole = [{**common, "path": path, "start": 0, "end": -1, "first_offset": 0, "first_line": 1, "index": first_index}]
    folder = None
    plain = path
    if is_gzip(path):
        folder = tempfile.mkdtemp(prefix="cdckit-")
        try:
            unpacked = gunzipped(path, folder)
        except BaseException:
            shutil.rmtree(folder, True)
            raise
        if unpacked is None:  # damaged: the whole read says where
            shutil.rmtree(folder, True)
            return FileUnits(whole)
        plain = unpacked
    units = FileUnits(folder=folder)
    size = os.path.getsize(plain)
    pieces = max(1, math.ceil(math.ceil(size / (range_bytes or RANGE_BYTES)) / workers) * workers)
    ranges = _ranges(plain, container, size, pieces)
    if not ranges:
        units.extend(whole)
        units.close()
        return units
    if container == "text":
        common["encoding"] = text_encoding(plain)
    units.extend(
        {
            **common,
            "path": plain,
            "start": start,
            "end": end,
            "first_offset": first_offset,
            "first_line": first_line,
            "index": first_index + number,
        }
        for number, (start, end, first_offset, first_line) in enumerate(ranges)
    )
    return units


def _ranges(path: str, container: str, size: int, pieces: int) -> list[tuple] | None:
    """The ranges of a plain file of ``container`` (``(start, end, first offset, first line)``, the last two
    None where the worker counts them), or None where it cannot be cut."""
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
    return [
        (start, end, None if number else 0, None if number else 1)
        for number, (start, end) in enumerate(line_cuts(path, math.ceil(size / pieces)))
    ]


def file_unit(
    path: str, container: str | None, dialect: str | None, options: DialectOptions, sample: int, index: int
) -> dict[str, Any]:
    """A whole file as one task (:func:`decode_file`): its dialect ``dialect``, or detected from its first
    ``sample`` messages in the worker; ``container`` forces one as :func:`cdckit.read` does."""
    return {
        "path": path,
        "whole": True,
        "container": container,
        "dialect": dialect,
        "options": options,
        "sample": sample,
        "index": index,
        "first_offset": 0,
        "first_line": 1,
    }


def shared_units(units: list[dict[str, Any]], folder: str) -> list[dict[str, Any]]:
    """``units`` as worker processes take them: each names the results ``folder`` and a counts file in it,
    which the workers map and share (the messages and lines of range ``i`` at ``2 * i`` and ``2 * i + 1``,
    -1 until known; see :func:`placed_unit`)."""
    counts = os.path.join(folder, f"counts-{uuid.uuid4().hex}")
    with open(counts, "wb") as out:
        out.write(b"\xff" * (16 * max(1, len(units))))  # -1 in every slot
    return [{**unit, "counts": counts, "folder": folder} for unit in units]


#: The counts files a worker process has mapped (see :func:`shared_units`), by path.
_MAPPED: dict[str, Any] = {}


def _counts_of(unit: dict[str, Any]) -> Any:
    """The shared counts a unit names (an int64 view of its mapped counts file), or None."""
    path = unit.get("counts")
    if path is None:
        return None
    if path not in _MAPPED:
        with open(path, "r+b") as file:
            _MAPPED[path] = memoryview(mmap.mmap(file.fileno(), 0)).cast("q")
    return _MAPPED[path]


def placed_unit(unit: dict[str, Any], counts: Any = None, wait: float = 600.0) -> dict[str, Any]:
    """``unit`` with the offset and line number of its first message: the unit as it is when it has them; else
    this range's messages and lines are counted and published in ``counts`` (shared by the workers) and the
    counts of every earlier range are awaited (each worker counts its range before decoding it, and ranges are
    handed out in file order, so the wait is short). Without shared counts (a range decoded on its own), the
    lines before the range are counted.

    >>> import tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "x.jsonl")
    >>> _ = open(path, "wb").write(b'{"a": 1}\\n\\n{"a": 2}\\n')
    >>> first, second = file_units(path, "jsonl", None, None, True, None, 1, range_bytes=10)
    >>> counts = [-1] * 4
    >>> placed_unit(first, counts)["first_offset"], counts[:2]
    (0, [1, 2])
    >>> placed = placed_unit(second, counts)
    >>> placed["first_offset"], placed["first_line"]
    (1, 3)
    """
    counts = _counts_of(unit) if counts is None else counts
    index, first = unit["index"], unit.get("first_index", 0)
    if unit.get("lines") and counts is not None and 2 * index + 1 < len(counts) and counts[2 * index] < 0:
        messages, lines = count_messages(unit["path"], unit["start"], unit["end"])
        counts[2 * index + 1] = lines
        counts[2 * index] = messages  # published last: a range's messages >= 0 says both are there
    if unit["first_offset"] is not None:
        return unit
    if counts is None:  # outside a pool: the lines before the range are counted here
        messages, lines = count_messages(unit["path"], 0, unit["start"])
        return {**unit, "first_offset": messages, "first_line": 1 + lines}
    deadline = time.monotonic() + wait
    while any(counts[2 * earlier] < 0 for earlier in range(first, index)):
        if time.monotonic() > deadline:
            raise TimeoutError(f"range {index} of {unit['path']}: the earlier ranges were never counted")
        time.sleep(0.001)
    offset = sum(counts[2 * earlier] for earlier in range(first, index))
    line = 1 + sum(counts[2 * earlier + 1] for earlier in range(first, index))
    return {**unit, "first_offset": offset, "first_line": line}


def results_folder(size: int) -> str:
    """A new folder for the workers' results of reading ``size`` bytes: in shared memory (``/dev/shm``) when
    it has room for them with a margin, else in the system's temporary folder."""
    shared = "/dev/shm"
    try:
        room = os.statvfs(shared)
        if os.access(shared, os.W_OK) and room.f_bavail * room.f_frsize > 3 * size + (256 << 20):
            return tempfile.mkdtemp(prefix="cdckit-read-", dir=shared)
    except OSError:
        pass
    return tempfile.mkdtemp(prefix="cdckit-read-")


def _written(table: pa.Table, folder: str) -> str | pa.Table:
    """``table`` written as an Arrow IPC file in ``folder`` (its path), or the table itself when it cannot be
    written (a full disk): it then travels pickled, more slowly."""
    path = os.path.join(folder, f"{uuid.uuid4().hex}.arrow")
    try:
        with pa.OSFile(path, "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
            writer.write_table(table)
        return path
    except (OSError, pa.ArrowException):
        if os.path.exists(path):
            os.unlink(path)
        return table


def events_of(result: dict[str, Any]) -> pa.Table:
    """A worker's events as an Arrow table: its IPC file mapped into memory (not copied, not converted) and
    removed from the folder (the mapping keeps the data while the table lives)."""
    found = result["table"]
    if isinstance(found, pa.Table):
        return found
    table = pa.ipc.open_file(pa.memory_map(found)).read_all()
    os.unlink(found)
    return table


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

    def waiting(self, dialect: str, event: Event) -> bool | None:
        return None if self._pairer is None else identity(event, dialect) in self._pairer

    def paired(self, dialect: str, event: Event) -> None:
        self._paired.add(identity(event, dialect))
        self.skipped_reasons[PAIRED] += 1

    def placed(self, table: pa.Table, halves: Sequence[tuple]) -> pa.Table:
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

    def bad(
        self, msg: Message, dialect: str | None, reason: str, code: str, *, cause: BaseException | None = None
    ) -> None:
        self.quarantine.append((msg.source, msg.offset, msg.partition, msg.line, dialect, reason, msg.raw_text(), code))

    def result(self) -> dict[str, Any]:
        table = rows_inserted(self.builder.to_arrow(), self._merged.to_arrow(), self._merged_at)
        left = range(len(self._halves)) if self._pairer is None else sorted(index for _, index in self._pairer.drain())
        halves = []
        for index in left:  # its place counts the completed updates placed before it
            position, msg, dialect, event = self._halves[index]
            halves.append((position + bisect.bisect_left(self._merged_after, index), _position(msg), dialect, event))
        return {
            "table": table,
            "halves": halves,
            "paired": self._paired,
            "quarantine": self.quarantine,
            "declarations": self.declarations,
            "messages": self.messages,
            "decoded": self.decoded,
            "events": self.events_made,
            "by_dialect": self.by_dialect,
            "skipped": self.skipped_reasons,
        }


def _position(msg: Message) -> Message:
    """What the parent needs of a half's message: its position and raw text (a message that pickles)."""
    return Message(None, msg.source, msg.offset, raw=msg.raw_text(), partition=msg.partition, line=msg.line)


def decode_range(unit: dict[str, Any], pair: bool = True) -> dict[str, Any]:
    """Worker: decode one range of a file (a :func:`file_units` entry); see :meth:`RangeSink.result`. In a
    worker of :func:`pool`, the events come back as the path of an Arrow IPC file (see :func:`events_of`),
    and the result names the offset and line number the range starts at."""
    unit = placed_unit(unit)
    sink = RangeSink(pair)
    with gc_paused():
        for _ in decode_file_range(unit, sink, unit["options"]):
            pass
    return _handed_back(sink.result(), unit)


def decode_file(unit: dict[str, Any]) -> dict[str, Any]:
    """Worker: decode a whole file (a :func:`file_unit`) as the calling process would, its dialect detected
    here when not given; the result is :func:`decode_range`'s, with the ``verdict`` on its dialect (a
    :class:`~cdckit.reading.source_decoding.SourceVerdict` as a tuple)."""
    options = unit["options"]
    sink = RangeSink()
    verdict = None
    with gc_paused():
        for name, messages in iter_sources(
            pathlib.Path(unit["path"]), container=unit["container"], key_separator=options.key_separator
        ):
            head = list(itertools.islice(messages, unit["sample"]))
            dialects = registry.all_dialects(options=options) if unit["dialect"] is None else []
            verdict = source_verdict(name, head, unit["dialect"], dialects, options)
            for _ in decode_source(name, messages, head, verdict, sink, options, unit["container"]):
                pass
    return _handed_back(sink.result(), unit, verdict=tuple(verdict) if verdict is not None else None)


def decode_unit(unit: dict[str, Any]) -> dict[str, Any]:
    """Worker: :func:`decode_file` of a whole file, :func:`decode_range` of a range (how far it has got
    published for the read's progress bar, see :func:`cdckit.reading.progress.publishing`)."""
    with publishing(unit):
        return decode_file(unit) if unit.get("whole") else decode_range(unit)


def _handed_back(result: dict[str, Any], unit: dict[str, Any], **more: Any) -> dict[str, Any]:
    """A worker's result as it goes back: where the unit starts, and the events as an Arrow IPC file."""
    result["first_offset"], result["first_line"] = unit["first_offset"], unit["first_line"]
    result.update(more)
    if unit.get("folder"):
        result["table"] = _written(result["table"], unit["folder"])
    return result


def pool(workers: int) -> Executor:
    """Worker processes, forked where the system allows (no start-up import), else spawned."""
    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
    return ProcessPoolExecutor(workers, mp_context=context)


def planned_units(executor: Executor, *args: Any, **options: Any) -> FileUnits:
    """:func:`file_units` worked out in a worker process (a gzip file is decompressed there, an array's or a
    CSV file's cuts found there), so the calling process only waits."""
    units, folder = executor.submit(_units_planned, *args, **options).result()
    return FileUnits(units, folder)


def _units_planned(*args: Any, **options: Any) -> tuple[list[dict[str, Any]], str | None]:
    """Worker: :func:`file_units`, handed back as ``(units, folder of a decompressed copy)``: the folder now
    belongs to the calling process, which removes it."""
    units = file_units(*args, **options)
    return list(units), units.detach()


def results_in_order(executor: Executor, units: list[dict[str, Any]]) -> Iterator[tuple[dict, dict[str, Any]]]:
    """Each range with the worker's result, range by range in file order (at most two ranges per worker
    ahead)."""
    ahead = 2 * getattr(executor, "_max_workers", 2)
    pending = [(unit, executor.submit(decode_unit, unit)) for unit in units[:ahead]]
    following = iter(units[ahead:])
    while pending:
        unit, future = pending.pop(0)
        result = future.result()
        later = next(following, None)
        if later is not None:
            pending.append((later, executor.submit(decode_unit, later)))
        yield unit, result
