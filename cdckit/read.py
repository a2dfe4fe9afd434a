"""``cdckit.read``: any capture to the canonical event frame, losing nothing.

Each source (file, payload or iterable) gets its dialect, given or detected
from its first messages; every message is then decoded by that dialect. A
message that cannot be decoded is quarantined with its source, offset, raw
text and reason (or raises :class:`DecodeError` with ``errors="raise"``);
split updates are paired (:mod:`cdckit.pairing`); the report accounts for
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
import warnings
from typing import Any, Iterator

import pandas as pd
import pyarrow as pa

from . import workers
from .capture import Capture, new_report
from .decoding import FrameSink, MessageDecoder, column_types_frame, gc_paused, gc_resumed
from .detect import DEFAULT_SAMPLE, choose_for_read
from .dialects import registry
from .dialects.base import Dialect
from .dialects.options import DialectOptions
from .errors import DecodeError, UnknownDialectError
from .frame import (ARROW_SCHEMA, Event, FrameBuilder, QuarantineBuilder, arrow_to_pandas, empty_quarantine,
                    rows_inserted)
from .keys import Keys, given_keys, key_columns_given, with_keys
from .io import LineBlock, Message, file_container, file_pieces, iter_sources
from .pairing import PAIRED, Pairer, unpaired_reason

__all__ = ["read", "ChunkedRead", "exported_events", "holds_exported_events"]

_BATCH = 65_536


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
    keys: "Keys | None" = None,
) -> "pd.DataFrame | Capture | ChunkedRead":
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
            together, each a range of its lines (see :mod:`cdckit.workers`);
            None: every core for files of 16 MiB or more, one otherwise.
            The result is the same for any number. ``errors="raise"`` and
            chunked reads use one unless given.
        capture: return a :class:`~cdckit.capture.Capture` (events, quarantine,
            report and column types as fields) instead of the events alone.
        keys: the key columns of tables whose capture names none (or other
            ones: what is given wins), ``{"customers": "id", "order_lines":
            ["order_id", "line_no"]}`` (``schema.table`` or the bare table
            name), applied after decoding as :func:`cdckit.with_keys` does,
            so every later call (replay, history, explorer) sees them. A
            name that matches no table raises ValueError naming the tables;
            a chunked read applies them to each chunk, skipping names a chunk
            does not hold.

    Returns:
        The canonical frame (see :mod:`cdckit.frame`), with
        ``attrs["report"]`` and JSON-safe summaries of the quarantine and the column
        types the dialects declared (:mod:`cdckit.column_types`), which
        :func:`cdckit.quarantine` and :func:`cdckit.column_types_of` give as frames;
        a :class:`~cdckit.capture.Capture` of the same when ``capture=True``; or a
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
    if workers is None and (errors == "raise" or chunksize is not None):
        workers = 1  # stop at the first bad message; keep a chunked read's memory to one process
    if keys is not None:
        key_columns_given(keys)  # a malformed mapping fails now, before the (long) read
    if dialect is None and chunksize is None and container is None and holds_exported_events(source):
        found = given_keys(exported_events(source, capture=True), keys)
        return found if capture else found.with_attrs()
    job = _ReadJob(dialect, errors, options, container, sample, workers)
    if chunksize is not None:
        if capture:
            raise ValueError("capture=True gives the whole read: a chunked read has no single capture")
        if chunksize < 1:
            raise ValueError("chunksize must be at least 1")
        return ChunkedRead(job, source, chunksize, keys)
    tables: list[pa.Table] = []
    try:
        for table in job.tables(source, _BATCH):
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
    from .export import is_events_file  # export builds on this module

    return isinstance(source, (str, os.PathLike)) and os.path.exists(source) and is_events_file(source)


def exported_events(path: str | os.PathLike[str], capture: bool = False) -> "pd.DataFrame | Capture":
    """Canonical events cdckit wrote, read back as they are (no dialect detection), with a report that
    counts each event as a message and an empty quarantine (a :class:`~cdckit.capture.Capture` when
    ``capture=True``)."""
    from .export import read_events  # export builds on this module

    events = read_events(path)
    counts = events["dialect"].value_counts()
    report = new_report(messages=len(events), decoded=len(events), events=len(events),
                        dialects={str(name): int(n) for name, n in counts.items()},
                        sources={os.fspath(path): "canonical events (written by cdckit)"})
    found = Capture(events, empty_quarantine(), report, column_types_frame([]))
    return found if capture else found.with_attrs()


class ChunkedRead:
    """Iterator of canonical frames of at most ``chunksize`` events.

    Each frame's quarantine (``cdckit.quarantine(frame)``) holds the messages quarantined since
    the previous frame, ``attrs["report"]`` the running totals and its
    ``cdckit.column_types_of(frame)`` the column types declared so far. After the
    last frame, ``report``, ``quarantine`` and ``column_types`` cover the whole read.
    """

    def __init__(self, job: "_ReadJob", source: Any, chunksize: int, keys: "Keys | None" = None) -> None:
        self._job = job
        self._keys = keys
        self._tables = job.tables(source, chunksize)
        self._quarantine_seen = 0

    def __iter__(self) -> "ChunkedRead":
        return self

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


class _ReadJob(FrameSink):
    """The state of one read: the sink that builds the frame, pairs halves and counts."""

    def __init__(self, dialect: str | None, errors: str, options: DialectOptions, container: str | None,
                 sample: int, workers: int | None = 1) -> None:
        self.dialect_name = dialect
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

    def tables(self, source: Any, size: int) -> Iterator[pa.Table]:
        """Arrow tables of at most ``size`` events; pairs and accounts as it goes.

        The cyclic garbage collector is paused while a table is being filled:
        decoding makes many small objects and no cycles, and collecting the
        growing batch over and over would cost more than the decoding.
        """
        builder = self.builder
        separator = self.options.key_separator
        for name, messages in iter_sources(source, container=self.container, key_separator=separator):
            head = list(itertools.islice(messages, self.sample))
            dialect, unknown = self._dialect_for(name, head)
            count, kind = self._worker_count(name)
            if count > 1 and not (dialect is not None and dialect.whole_files):
                messages.close()
                yield from self._in_workers(name, kind, dialect, unknown, count, size)
                continue
            decoder = MessageDecoder(dialect, self, unknown, each=self.dialect_name is None,
                                     options=self.options)
            with gc_paused():
                blocks = self._block_container(name) if dialect is not None and dialect.has_line_decoder else None
                if blocks is not None:
                    messages.close()
                    for piece in file_pieces(name, blocks, key_separator=separator):
                        if isinstance(piece, LineBlock):
                            decoder.block(piece, name)
                        else:
                            decoder.message(piece)
                        while len(builder) >= size:
                            table = builder.take(size)
                            with gc_resumed():
                                yield table
                else:
                    for msg in itertools.chain(head, messages):
                        decoder.message(msg)
                        while len(builder) >= size:
                            table = builder.take(size)
                            with gc_resumed():
                                yield table
                decoder.finish()
        for event, msg in self.pairer.drain():
            self.pending -= 1
            self.bad(msg, self.sources.get(msg.source), unpaired_reason(event), "unpaired_half")
        while len(builder):
            yield builder.take(size)

    def _worker_count(self, name: str) -> tuple[int, str | None]:
        """How many processes decode source ``name``, and its container when it is a file that can be cut."""
        if self.workers == 1 or not os.path.isfile(name):
            return 1, None
        kind = file_container(name, self.container, self.options.key_separator)
        if not workers.splittable(name, kind):
            return 1, None
        return workers.worker_count(self.workers, os.path.getsize(name)), kind

    def _in_workers(self, name: str, kind: str, dialect: Dialect | None, unknown: str | None, count: int,
                    size: int) -> Iterator[pa.Table]:
        """Decode a file in ``count`` worker processes, a range of lines each, and replay what they found in
        file order: events, update halves (paired here), quarantined messages and counts."""
        builder = self.builder
        units = workers.file_units(name, kind, dialect.name if dialect is not None else None, unknown,
                                   self.dialect_name is None, self.options, count)
        with units, workers.pool(count) as executor:  # units own a gzip file's decompressed copy
            for unit, result in workers.results_in_order(executor, units):
                if any(ident in result["paired"] for ident in self.pairer.waiting()):
                    # halves left open by earlier ranges pair with halves this range paired among
                    # themselves: the range is decoded again here, its halves paired in file order
                    result = workers.decode_range(unit, pair=False)
                builder.add_frame(self.placed(result["table"], result["halves"]))
                while len(builder) >= size:
                    yield builder.take(size)
                self.messages += result["messages"]
                self.decoded += result["decoded"]
                self.events_made += result["events"]
                self.by_dialect.update(result["by_dialect"])
                self.skipped_reasons.update(result["skipped"])
                for row in result["quarantine"]:
                    self.quarantine.add(*row)
                for table, columns, where, offset in result["declarations"]:
                    self.types("", where, offset, table, columns)

    def placed(self, table: pa.Table, halves: list[tuple]) -> pa.Table:
        """Events (a worker's, or a batch decoder's run) with the updates their halves complete, each
        placed after the events that came before its second half."""
        merged = FrameBuilder()
        positions = [position for position, where, dialect, event in halves
                     if self._pair(where, dialect, event, merged)]
        return rows_inserted(table, merged.to_arrow(), positions)

    def _block_container(self, name: str) -> str | None:
        """The container of a file read in blocks for a batch decoder ("jsonl" or "json"), else None."""
        if not os.path.isfile(name):
            return None
        container = file_container(name, self.container, self.options.key_separator)
        return container if container in ("jsonl", "json") else None

    def _dialect_for(self, name: str, head: list[Message]) -> tuple[Dialect | None, str | None]:
        if self.dialect_name is not None:
            self.sources[name] = self.dialect_name
            return registry.create(self.dialect_name, options=self.options), None
        found = choose_for_read(head, self._dialects())
        if isinstance(found, UnknownDialectError):
            err = found
            self.sources[name] = None
            self.detection[name] = {"dialect": None, "confidence": err.best[1] if err.best else 0.0,
                                    "best_guess": err.best[0] if err.best else None, "low_confidence": True,
                                    "reason": str(err)}
            if not any(m.error is None for m in head):
                return None, "unreadable message and no readable one to detect a dialect from"
            warnings.warn(f"{name}: {err}; each message is detected on its own", stacklevel=4)
            return None, err.brief  # each quarantined message says it briefly; the report holds the whole
        self.sources[name] = found.dialect
        self.detection[name] = {"dialect": found.dialect, "confidence": found.confidence,
                                "runner_up": found.runner_up, "runner_up_confidence": found.runner_up_confidence,
                                "low_confidence": found.low_confidence}
        if found.low_confidence:
            warnings.warn(f"{name}: {found}: a low-confidence verdict, check it", stacklevel=4)
        return registry.create(found.dialect, options=self.options), None

    def _dialects(self) -> list[Dialect]:
        if self._all is None:
            self._all = registry.all_dialects(options=self.options)
        return self._all

    # ------------------------------------------------------------ the sink

    def half(self, msg: Message, dialect: str, event: Event) -> None:
        self._pair(msg, dialect, event, self.builder)

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

    def bad(self, msg: Message, dialect: str | None, reason: str, code: str, *,
            cause: BaseException | None = None) -> None:
        if self.errors == "raise":
            raise DecodeError(msg.source, msg.offset, reason, msg.raw_text()) from cause
        self.quarantine.add(msg.source, msg.offset, msg.partition, msg.line, dialect, reason, msg.raw_text(), code)

    # ------------------------------------------------------------ the report

    def report(self) -> dict[str, Any]:
        return new_report(self.messages, self.decoded, self.events_made, len(self.quarantine),
                          self.skipped_reasons, self.by_dialect, self.sources, self.detection, self.pending,
                          self.keys_found)
