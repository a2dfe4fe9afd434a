"""One read's job: the sink that builds the frame, its sources decoded here or in worker processes.

:class:`ReadJob` is what :func:`cdckit.read` runs (a :class:`~cdckit.reading.read.ChunkedRead` takes its
tables one chunk at a time): each source gets its dialect, is decoded in the calling process
(:mod:`cdckit.reading.source_decoding`) or in worker processes, a range of a file each
(:mod:`cdckit.reading.workers`), and their events, update halves (paired here), quarantined messages and
counts come back in file order.

>>> import cdckit
>>> job = ReadJob("canal", "quarantine", DialectOptions(), None, 100)
>>> rows = sum(table.num_rows for table in job.tables(cdckit.samples.path("canal"), None))
>>> rows == job.report()["events"], job.report()["messages"] > 0
(True, True)
"""

from __future__ import annotations

import itertools
import os
import pathlib
import shutil
import warnings
from collections.abc import Generator, Iterator, Sequence, Sized
from typing import Any

import pyarrow as pa

from ..capture import new_report
from ..collector import gc_paused, gc_resumed
from ..dialects import registry
from ..dialects.base import Dialect
from ..dialects.options import DialectOptions
from ..errors import DecodeError
from ..frame import Event
from ..frame_builders import FrameBuilder, QuarantineBuilder, rows_inserted
from ..io import Message, expand_paths, file_container, iter_sources, looks_like_payload
from ..io.kafka import KafkaSpec
from . import workers
from .pairing import PAIRED, Pairer, identity, unpaired_reason
from .progress import Progress, bar_of_read
from .sinks import FrameSink
from .source_decoding import SourceVerdict, decode_file_range, decode_source, source_verdict
from .topic_progress import TopicProgress, bar_of_topic

__all__ = ["ReadJob"]


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


class ReadJob(FrameSink):
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
        """The progress bar of reading ``source`` (see :func:`cdckit.reading.progress.bar_of_read`; a live topic's:
        :mod:`cdckit.reading.topic_progress`)."""
        if isinstance(source, KafkaSpec):
            return bar_of_topic(self.show)
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
            counts = self.progress.counts if isinstance(self.progress, TopicProgress) else None
            for name, messages in iter_sources(
                source, container=self.container, key_separator=self.options.key_separator, counts=counts
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
        return self._noted(name, source_verdict(name, head, self.dialect_name, self._dialects(), self.options))

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
                        verdict = verdicts[path] = source_verdict(
                            name, head, self.dialect_name, self._dialects(), self.options
                        )
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
            self.producer_losses(),
        )

    def producer_losses(self) -> list[dict[str, Any]]:
        """What the dialects read tell of their producers' losses, from the column declarations so far."""
        losses: list[dict[str, Any]] = []
        if not self.declarations:
            return losses
        types = self.column_types()
        for name in self.by_dialect:
            if name in registry.names():
                losses += [loss for loss in registry.get(name).producer_losses(types) if loss not in losses]
        return losses
