"""``cdckit.read``: any capture to the canonical event frame, losing nothing.

Each source (file, payload or iterable) gets its dialect, given or detected
from its first messages; every message is then decoded by that dialect. A
message that cannot be decoded is quarantined with its source, offset, raw
text and reason (or raises :class:`DecodeError` with ``errors="raise"``);
split updates are paired (:mod:`cdckit.reading.pairing`); the report accounts for
every message.

>>> import cdckit
>>> events = cdckit.read(cdckit.samples.path("canal"))
>>> r = events.attrs["report"]
>>> r["messages"] == r["decoded"] + r["quarantined"]
True
"""

from __future__ import annotations

import itertools
import os
import pathlib
import shutil
import warnings
from collections.abc import Generator, Iterator, Sequence, Sized
from typing import Any, Literal, overload

import pandas as pd
import pyarrow as pa

from ..analysis.keys import Keys, given_keys, key_columns_given, with_keys
from ..collector import gc_paused, gc_resumed
from ..column_types import column_types_frame
from ..dialects import registry
from ..dialects.base import Dialect
from ..dialects.options import DialectOptions
from ..errors import DecodeError
from ..frame import (
    ARROW_SCHEMA,
    Event,
    FrameBuilder,
    QuarantineBuilder,
    arrow_to_pandas,
    empty_quarantine,
    rows_inserted,
)
from ..io import Message, expand_paths, file_container, iter_sources, looks_like_payload
from ..io.kafka import is_kafka_url, parse_kafka_url
from . import workers
from .capture import Capture, new_report
from .detect import DEFAULT_SAMPLE
from .events_files import is_events_file, read_events
from .pairing import PAIRED, Pairer, identity, unpaired_reason
from .progress import Progress, bar_of_read
from .sinks import FrameSink
from .source_decoding import SourceVerdict, decode_file_range, decode_source, source_verdict

__all__ = ["read", "ChunkedRead", "exported_events", "holds_exported_events"]


@overload
def read(
    source: Any,
    dialect: str | None = None,
    errors: str = "quarantine",
    *,
    chunksize: None = None,
    container: str | None = None,
    tz: str | None = None,
    unavailable_value: str | tuple[str, ...] | list[str] = (),
    key_separator: str | None = None,
    sample: int = DEFAULT_SAMPLE,
    workers: int | None = None,
    capture: Literal[False] = False,
    keys: Keys | None = None,
    progress: bool | None = None,
    kafka_config: dict[str, Any] | None = None,
) -> pd.DataFrame: ...


@overload
def read(
    source: Any,
    dialect: str | None = None,
    errors: str = "quarantine",
    *,
    chunksize: None = None,
    container: str | None = None,
    tz: str | None = None,
    unavailable_value: str | tuple[str, ...] | list[str] = (),
    key_separator: str | None = None,
    sample: int = DEFAULT_SAMPLE,
    workers: int | None = None,
    capture: Literal[True],
    keys: Keys | None = None,
    progress: bool | None = None,
    kafka_config: dict[str, Any] | None = None,
) -> Capture: ...


@overload
def read(
    source: Any,
    dialect: str | None = None,
    errors: str = "quarantine",
    *,
    chunksize: int,
    container: str | None = None,
    tz: str | None = None,
    unavailable_value: str | tuple[str, ...] | list[str] = (),
    key_separator: str | None = None,
    sample: int = DEFAULT_SAMPLE,
    workers: int | None = None,
    capture: bool = False,
    keys: Keys | None = None,
    progress: bool | None = None,
    kafka_config: dict[str, Any] | None = None,
) -> ChunkedRead: ...


@overload
def read(
    source: Any,
    dialect: str | None = None,
    errors: str = "quarantine",
    *,
    chunksize: int | None = None,
    container: str | None = None,
    tz: str | None = None,
    unavailable_value: str | tuple[str, ...] | list[str] = (),
    key_separator: str | None = None,
    sample: int = DEFAULT_SAMPLE,
    workers: int | None = None,
    capture: bool = False,
    keys: Keys | None = None,
    progress: bool | None = None,
    kafka_config: dict[str, Any] | None = None,
) -> pd.DataFrame | Capture | ChunkedRead: ...


def read(
    source: Any,
    dialect: str | None = None,
    errors: str = "quarantine",
    *,
    chunksize: int | None = None,
    container: str | None = None,
    tz: str | None = None,
    unavailable_value: str | tuple[str, ...] | list[str] = (),
    key_separator: str | None = None,
    sample: int = DEFAULT_SAMPLE,
    workers: int | None = None,
    capture: bool = False,
    keys: Keys | None = None,
    progress: bool | None = None,
    kafka_config: dict[str, Any] | None = None,
) -> pd.DataFrame | Capture | ChunkedRead:
    """Decode a capture into the canonical event frame.

    Args:
        source: a path (file, directory, glob; ``.gz`` read transparently),
            a list of ``pathlib.Path`` objects (one capture), a
            ``str``/``bytes`` payload, or an iterable of messages (``str``,
            ``bytes``, parsed ``dict`` or Kafka records).
        dialect: a registry name, or None to detect each source's dialect.
        errors: ``"quarantine"`` keeps bad messages in
            ``cdckit.quarantine(events)``; ``"raise"`` raises
            :class:`~cdckit.DecodeError` at the first one.
        chunksize: when given, return an iterator of frames of at most this
            many events, so a capture larger than memory can be decoded.
        container: force ``jsonl``, ``json``, ``text``, ``csv`` or ``parquet``.
        tz: zone for zone-less text times (UTC when None).
        unavailable_value: the Debezium connector's ``unavailable.value.placeholder`` when it is set to
            another text than ``__debezium_unavailable_value`` (which is always recognised), or several
            such texts: a column holding one (as text, Base64 or hex bytes, a one-element array...) is an
            unchanged TOASTed value, left out of its image. Other dialects ignore it.
        key_separator: the ``key.separator`` of lines ``kafka-console-consumer`` printed with their
            keys (``--property print.key=true``), when it is not a tab: such lines are read as the
            Kafka records they show, their value the message, with its key, partition and offset
            (see :mod:`cdckit.io.console`; the tab layout is recognised without it).
        sample: messages per source used for detection.
        workers: processes that decode a large JSON Lines or text file
            together, each a range of its lines (see :mod:`cdckit.reading.workers`);
            None: every core for files of 16 MiB or more, one otherwise.
            The result is the same for any number, chunked reads and
            ``errors="raise"`` included (the range holding the first bad
            message is decoded again in the calling process, so the error's
            ``partial`` frame is the one-process read's).
        capture: return a :class:`~cdckit.reading.capture.Capture` (events, quarantine,
            report and column types as fields) instead of the events alone.
        keys: the key columns of tables whose capture names none (or other
            ones: what is given wins), ``{"customers": "id", "order_lines":
            ["order_id", "line_no"]}`` (``schema.table`` or the bare table
            name), applied after decoding as :func:`cdckit.with_keys` does,
            so every later call (replay, history, explorer) sees them. A
            name that matches no table raises ValueError naming the tables;
            a chunked read applies them to each chunk, skipping names a chunk
            does not hold.
        progress: a progress bar while the read goes on (tqdm's widget in a
            Jupyter notebook where ipywidgets is installed, its text bar on
            stderr elsewhere; see :mod:`cdckit.reading.progress`), in bytes of the
            input files (a gzip file's compressed bytes), or in messages for
            an iterable whose length is known; worker processes report
            their own progress to it. None (automatic): drawn for input of
            8 MiB or more (200,000 messages) once the read has taken a
            second, where it can be seen (a notebook, or stderr on a
            terminal: never into a log file or a test's output); True: always
            drawn; False: never. It is gone when the read ends, fails or is
            interrupted.
        kafka_config: the Kafka client's settings (SASL, TLS, ``client.id``...: librdkafka's names) for a
            ``kafka://host:port/topic`` source, a bounded sample of a live topic read as its kcat ``-J``
            lines (see :mod:`cdckit.io.kafka` for the URL's options); no offset is ever committed.

    Returns:
        The canonical frame (see :mod:`cdckit.frame`), with
        ``attrs["report"]`` and JSON-safe summaries of the quarantine and the column
        types the dialects declared (:mod:`cdckit.column_types`), which
        :func:`cdckit.quarantine` and :func:`cdckit.column_types_of` give as frames;
        a :class:`~cdckit.reading.capture.Capture` of the same when ``capture=True``; or a
        :class:`ChunkedRead` when ``chunksize`` is given. A path to events
        cdckit itself wrote (:func:`cdckit.export.write_events`, ``cdckit
        convert``: Parquet, CSV or JSON Lines with the canonical columns) is
        read back as those events when no dialect or container is named.
    """
    if errors not in ("quarantine", "raise"):
        raise ValueError(f"errors must be 'quarantine' or 'raise', not {errors!r}")
    if dialect is not None:
        registry.get(dialect)  # a misspelt name fails now, with a suggestion
    options = DialectOptions(tz=tz, unavailable_value=unavailable_value, key_separator=key_separator)
    if workers is not None and workers < 1:
        raise ValueError("workers must be at least 1")
    if keys is not None:
        key_columns_given(keys)  # a malformed mapping fails now, before the (long) read
    if is_kafka_url(source):
        source = parse_kafka_url(source, kafka_config)  # a malformed URL fails now
    if dialect is None and chunksize is None and container is None and holds_exported_events(source):
        found = given_keys(exported_events(source, capture=True), keys)
        return found if capture else found.with_attrs()
    job = _ReadJob(dialect, errors, options, container, sample, workers, progress)
    if chunksize is not None:
        if capture:
            raise ValueError("capture=True gives the whole read: a chunked read has no single capture")
        if chunksize < 1:
            raise ValueError("chunksize must be at least 1")
        return ChunkedRead(job, source, chunksize, keys)
    tables: list[pa.Table] = []
    try:
        for table in job.tables(source, None):
            tables.append(table)
    except DecodeError as err:
        tables.append(job.builder.to_arrow())
        err.partial = arrow_to_pandas(pa.concat_tables(tables))
        raise
    events = arrow_to_pandas(pa.concat_tables(tables) if tables else ARROW_SCHEMA.empty_table())
    found = given_keys(Capture(events, job.quarantine.to_pandas(), job.report(), job.column_types()), keys)
    return found if capture else found.with_attrs()


def holds_exported_events(source: Any) -> bool:
    """True when ``source`` is a path to canonical events cdckit wrote (``write_events``, ``cdckit convert``).

    >>> holds_exported_events("no/such/file.parquet"), holds_exported_events('{"op": "c"}')
    (False, False)
    """
    return isinstance(source, (str, os.PathLike)) and os.path.exists(source) and is_events_file(source)


def exported_events(path: str | os.PathLike[str], capture: bool = False) -> pd.DataFrame | Capture:
    """Canonical events cdckit wrote, read back as they are (no dialect detection), with a report that
    counts each event as a message and an empty quarantine (a :class:`~cdckit.reading.capture.Capture` when
    ``capture=True``)."""
    events = read_events(path)
    counts = events["dialect"].value_counts()
    report = new_report(
        messages=len(events),
        decoded=len(events),
        events=len(events),
        dialects={str(name): int(n) for name, n in counts.items()},
        sources={os.fspath(path): "canonical events (written by cdckit)"},
    )
    found = Capture(events, empty_quarantine(), report, column_types_frame([]))
    return found if capture else found.with_attrs()


class ChunkedRead:
    """Iterator of canonical frames of at most ``chunksize`` events.

    Each frame's quarantine (``cdckit.quarantine(frame)``) holds the messages quarantined since
    the previous frame, ``attrs["report"]`` the running totals and its
    ``cdckit.column_types_of(frame)`` the column types declared so far. After the
    last frame, ``report``, ``quarantine`` and ``column_types`` cover the whole read.
    """

    def __init__(self, job: _ReadJob, source: Any, chunksize: int, keys: Keys | None = None) -> None:
        self._job = job
        self._keys = keys
        self._tables = job.tables(source, chunksize)
        self._quarantine_seen = 0

    def __iter__(self) -> ChunkedRead:
        return self

    def close(self) -> None:
        """Stop the read here (its progress bar goes away); ``report``, ``quarantine`` and ``column_types``
        then cover what was read."""
        self._tables.close()

    def __next__(self) -> pd.DataFrame:
        try:
            table = next(self._tables)
        except DecodeError as err:
            err.partial = self._job.builder.to_pandas()
            raise
        rows = self._job.quarantine.rows
        recent = QuarantineBuilder()
        recent.rows = rows[self._quarantine_seen :]
        self._quarantine_seen = len(rows)
        found = Capture(arrow_to_pandas(table), recent.to_pandas(), self._job.report(), self._job.column_types())
        return (with_keys(found, self._keys, strict=False) if self._keys else found).with_attrs()

    @property
    def report(self) -> dict[str, Any]:
        return self._job.report()

    @property
    def quarantine(self) -> pd.DataFrame:
        return self._job.quarantine.to_pandas()

    @property
    def column_types(self) -> pd.DataFrame:
        return self._job.column_types()


def _paths_of(source: Any) -> list[str] | None:
    """The files ``source`` names when it is a path (a file, a directory, a glob) or a list of paths, else None
    (a payload, messages, or a path that is missing: the read says so, as a quarantined message)."""
    if isinstance(source, (str, os.PathLike)) and not (isinstance(source, str) and looks_like_payload(source)):
        specs = [os.fspath(source)]
    elif isinstance(source, (list, tuple)) and source and all(isinstance(s, os.PathLike) for s in source):
        specs = [os.fspath(s) for s in source]
    else:
        return None
    try:
        return [path for spec in specs for path in expand_paths(spec)]
    except OSError:
        return None


class _ReadJob(FrameSink):
    """The state of one read: the sink that builds the frame, pairs halves and counts."""

    def __init__(
        self,
        dialect: str | None,
        errors: str,
        options: DialectOptions,
        container: str | None,
        sample: int,
        workers: int | None = 1,
        progress: bool | None = False,
    ) -> None:
        self.dialect_name = dialect
        self.show = progress
        self.progress = bar_of_read(list, int, int, False)  # none until a read starts
        self.workers = workers
        self.errors = errors
        self.options = options
        self.container = container
        self.sample = sample
        super().__init__()
        self.quarantine = QuarantineBuilder()
        self.pairer = Pairer()
        self.pending = 0
        self.sources: dict[str, str | None] = {}
        self.detection: dict[str, dict[str, Any]] = {}
        self._all: list[Dialect] | None = None

    # ------------------------------------------------------------ the loop

    def tables(self, source: Any, size: int | None) -> Generator[pa.Table, None, None]:
        """Arrow tables of at most ``size`` events (None: as they come, any size); pairs and accounts as it
        goes.

        The cyclic garbage collector is paused while a table is being filled:
        decoding makes many small objects and no cycles, and collecting the
        growing batch over and over would cost more than the decoding.
        A progress bar (:mod:`cdckit.reading.progress`) follows the read while it goes on, and goes away when it ends.
        """
        with self._progress_of(source) as self.progress:
            yield from self._tables(source, size)

    def _progress_of(self, source: Any) -> Progress:
        """The progress bar of reading ``source`` (see :func:`cdckit.reading.progress.bar_of_read`)."""
        sized = isinstance(source, Sized) and not isinstance(source, (str, bytes, bytearray, dict))
        return bar_of_read(
            lambda: _paths_of(source), lambda: len(source) if sized else None, lambda: self.messages, self.show
        )

    def _tables(self, source: Any, size: int | None) -> Iterator[pa.Table]:
        builder = self.builder
        files = self._files_for_workers(source)
        if files:
            yield from self._files_in_workers(files, size)
        else:
            for name, messages in iter_sources(
                source, container=self.container, key_separator=self.options.key_separator
            ):
                self.progress.started(name)
                head = list(itertools.islice(messages, self.sample))
                verdict = self._verdict(name, head)
                count, kind = self._worker_count(name)
                if count > 1 and kind is not None and not registry.flag(verdict.dialect, "whole_files"):
                    messages.close()
                    yield from self._in_workers(name, kind, verdict, count, size)
                    continue
                yield from self._source_here(name, messages, head, verdict, size)
        for event, msg in self.pairer.drain():
            self.pending -= 1
            self.bad(msg, self.sources.get(msg.source), unpaired_reason(event), "unpaired_half")
        if size is None:
            if len(builder):
                table = builder.to_arrow()
                builder.clear()
                yield table
        else:
            while len(builder):
                yield builder.take(size)

    def _source_here(
        self,
        name: str,
        messages: Generator[Message, None, None],
        head: list[Message],
        verdict: SourceVerdict,
        size: int | None,
    ) -> Iterator[pa.Table]:
        """Decode a source in the calling process, through this read's own sink."""
        builder = self.builder
        with gc_paused():
            for _ in decode_source(name, messages, head, verdict, self, self.options, self.container):
                while size is not None and len(builder) >= size:
                    table = builder.take(size)
                    with gc_resumed():
                        yield table

    def _verdict(self, name: str, head: list[Message]) -> SourceVerdict:
        """The dialect of source ``name``, recorded for the report (and a warning given where one is due)."""
        return self._noted(name, source_verdict(name, head, self.dialect_name, self._dialects()))

    def _noted(self, name: str, verdict: SourceVerdict) -> SourceVerdict:
        self.sources[name] = verdict.dialect
        if verdict.detection is not None:
            self.detection[name] = verdict.detection
        if verdict.warning is not None:
            warnings.warn(verdict.warning, stacklevel=6)
        return verdict

    def _worker_count(self, name: str) -> tuple[int, str | None]:
        """How many processes decode source ``name``, and its container when it is a file that can be cut."""
        if self.workers == 1 or not os.path.isfile(name):
            return 1, None
        kind = file_container(name, self.container, self.options.key_separator)
        if not workers.splittable(name, kind):
            return 1, None
        return workers.worker_count(self.workers, os.path.getsize(name)), kind

    def _in_workers(
        self, name: str, kind: str, verdict: SourceVerdict, count: int, size: int | None
    ) -> Iterator[pa.Table]:
        """Decode a file in ``count`` worker processes, a range of lines each, and replay what they found in
        file order: events, update halves (paired here), quarantined messages and counts."""
        folder = workers.results_folder(os.path.getsize(name))
        try:
            with workers.pool(count) as executor:
                with workers.planned_units(
                    executor,
                    name,
                    kind,
                    verdict.dialect,
                    verdict.unknown,
                    not verdict.given,
                    self.options,
                    count,
                    None if size is None else workers.RANGE_BYTES // 4,
                ) as units:
                    shared = self.progress.watched(workers.shared_units(units, folder), folder)
                    for unit, result in workers.results_in_order(executor, shared):
                        yield from self._range_done(unit, result, size)  # units own a gzip file's copy
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    def _files_for_workers(self, source: Any) -> list[str] | None:
        """The files of ``source`` when it names several (a directory, a glob, a list of paths) and they are
        large enough together for the workers, else None."""
        if self.workers == 1:
            return None
        files = _paths_of(source)
        if files is None:
            return None
        if len(files) < 2 or workers.worker_count(self.workers, sum(map(os.path.getsize, files))) < 2:
            return None
        return files

    def _files_in_workers(self, files: list[str], size: int | None) -> Iterator[pa.Table]:
        """Decode several files in worker processes, a file per task (a large file's ranges, each a task) and
        take what they found in file order."""
        count = workers.worker_count(self.workers, sum(map(os.path.getsize, files)))
        units: list[dict[str, Any]] = []
        owners: list[workers.FileUnits] = []  # a gzip file's decompressed copy lives as long as its units
        verdicts: dict[str, SourceVerdict] = {}
        folder = workers.results_folder(sum(map(os.path.getsize, files)))
        try:
            with workers.pool(count) as executor:
                for path in files:
                    kind = file_container(path, self.container, self.options.key_separator)
                    if workers.splittable(path, kind) and os.path.getsize(path) > workers.RANGE_BYTES:
                        ((name, messages),) = iter_sources(
                            pathlib.Path(path), container=self.container, key_separator=self.options.key_separator
                        )
                        head = list(itertools.islice(messages, self.sample))
                        messages.close()
                        verdict = verdicts[path] = source_verdict(name, head, self.dialect_name, self._dialects())
                        if not registry.flag(verdict.dialect, "whole_files"):
                            owners.append(
                                workers.planned_units(
                                    executor,
                                    path,
                                    kind,
                                    verdict.dialect,
                                    verdict.unknown,
                                    not verdict.given,
                                    self.options,
                                    count,
                                    first_index=len(units),
                                )
                            )
                            units += owners[-1]
                            continue
                    units.append(
                        workers.file_unit(
                            path, self.container, self.dialect_name, self.options, self.sample, len(units)
                        )
                    )
                shared = self.progress.watched(workers.shared_units(units, folder), folder)
                for unit, result in workers.results_in_order(executor, shared):
                    if unit["index"] == unit.get("first_index", unit["index"]):  # a file's first unit
                        source = unit.get("source", unit["path"])
                        self._noted(source, verdicts.get(source) or SourceVerdict(*result["verdict"]))
                    yield from self._range_done(unit, result, size)
        finally:
            shutil.rmtree(folder, ignore_errors=True)
            for owner in owners:
                owner.close()

    def _range_done(self, unit: dict[str, Any], result: dict[str, Any], size: int | None) -> Iterator[pa.Table]:
        """Take one range's (or file's) result, in file order: its events (with the updates its halves
        complete), the quarantined messages, the counts and the column type declarations."""
        builder = self.builder
        unit = {**unit, "first_offset": result["first_offset"], "first_line": result["first_line"]}
        if self.errors == "raise" and result["quarantine"]:
            # the first bad message stops the read: the range is decoded here, so that what was decoded
            # before it is exactly the one-process read's
            workers.events_of(result)
            yield from self._decoded_here(unit, result, size)
            return
        if any(ident in result["paired"] for ident in self.pairer.waiting()):
            # halves left open by earlier ranges pair with halves this range paired among
            # themselves: the range is decoded again here, its halves paired in file order
            workers.events_of(result)
            result = workers.decode_range(unit, pair=False)
        builder.add_frame(self.placed(workers.events_of(result), result["halves"]))
        self.messages += result["messages"]
        self.decoded += result["decoded"]
        self.events_made += result["events"]
        self.by_dialect.update(result["by_dialect"])
        self.skipped_reasons.update(result["skipped"])
        for row in result["quarantine"]:
            self.quarantine.add(*row)
        for table, columns, where, offset in result["declarations"]:
            self.types("", where, offset, table, columns)
        while size is not None and len(builder) >= size:
            yield builder.take(size)

    def _decoded_here(self, unit: dict[str, Any], result: dict[str, Any], size: int | None) -> Iterator[pa.Table]:
        """Decode a range (or a whole file) in the calling process, through this read's own sink."""
        builder = self.builder
        if unit.get("whole"):
            ((name, messages),) = iter_sources(
                pathlib.Path(unit["path"]), container=self.container, key_separator=self.options.key_separator
            )
            head = list(itertools.islice(messages, self.sample))
            yield from self._source_here(name, messages, head, SourceVerdict(*result["verdict"]), size)
            return
        with gc_paused():
            for _ in decode_file_range(unit, self, self.options):
                while size is not None and len(builder) >= size:
                    table = builder.take(size)
                    with gc_resumed():
                        yield table

    def placed(self, table: pa.Table, halves: Sequence[tuple]) -> pa.Table:
        """Events (a worker's, or a batch decoder's run) with the updates their halves complete, each
        placed after the events that came before its second half."""
        merged = FrameBuilder()
        positions = [
            position for position, where, dialect, event in halves if self._pair(where, dialect, event, merged)
        ]
        return rows_inserted(table, merged.to_arrow(), positions)

    def _dialects(self) -> list[Dialect]:
        if self._all is None:
            self._all = registry.all_dialects(options=self.options)
        return self._all

    # ------------------------------------------------------------ the sink

    def half(self, msg: Message, dialect: str, event: Event) -> None:
        self._pair(msg, dialect, event, self.builder)

    def waiting(self, dialect: str, event: Event) -> bool:
        return identity(event, dialect) in self.pairer

    def paired(self, dialect: str, event: Event) -> None:
        self.skipped_reasons[PAIRED] += 1

    def _pair(self, msg: Message, dialect: str, event: Event, builder: FrameBuilder) -> bool:
        """Offer a half to the pairer; a completed update goes to ``builder``. True when one did."""
        self.pending += 1
        paired = self.pairer.offer(event, msg, dialect)
        if paired is None:
            return False
        merged, where, _ = paired
        self.pending -= 2
        self.decoded += 2
        self.skipped_reasons[PAIRED] += 1
        self.events_made += 1
        builder.add(merged, dialect, where.source, where.offset, where.partition)
        return True

    def bad(
        self, msg: Message, dialect: str | None, reason: str, code: str, *, cause: BaseException | None = None
    ) -> None:
        if self.errors == "raise":
            raise DecodeError(msg.source, msg.offset, reason, msg.raw_text()) from cause
        self.quarantine.add(msg.source, msg.offset, msg.partition, msg.line, dialect, reason, msg.raw_text(), code)

    # ------------------------------------------------------------ the report

    def report(self) -> dict[str, Any]:
        return new_report(
            self.messages,
            self.decoded,
            self.events_made,
            len(self.quarantine),
            self.skipped_reasons,
            self.by_dialect,
            self.sources,
            self.detection,
            self.pending,
            self.keys_found,
        )
