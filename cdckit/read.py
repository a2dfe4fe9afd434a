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

import gc
import itertools
import os
import warnings
from contextlib import contextmanager
from collections import Counter
from typing import Any, Iterator

import pandas as pd
import pyarrow as pa

from .containers import Message, file_container, iter_sources, jsonl_blocks, parse_line
from .detect import DEFAULT_SAMPLE, choose, score_message
from .dialects import registry
from .dialects.base import BadMessage, Dialect, SkipMessage
from .errors import AmbiguousDialectError, DecodeError, UnknownDialectError
from .frame import ARROW_SCHEMA, FrameBuilder, QuarantineBuilder, arrow_to_pandas
from .pairing import Pairer

__all__ = ["read", "ChunkedRead"]

_BATCH = 65_536
PAIRED = "update half: merged with its partner into one row"


def read(
    source: Any,
    dialect: str | None = None,
    errors: str = "quarantine",
    *,
    chunksize: int | None = None,
    container: str | None = None,
    tz: str | None = None,
    sample: int = DEFAULT_SAMPLE,
) -> pd.DataFrame | "ChunkedRead":
    """Decode a capture into the canonical event frame.

    Args:
        source: a path (file, directory, glob; ``.gz`` read transparently), a
            ``str``/``bytes`` payload, or an iterable of messages (``str``,
            ``bytes``, parsed ``dict`` or Kafka records).
        dialect: a registry name, or None to detect each source's dialect.
        errors: ``"quarantine"`` keeps bad messages in
            ``events.attrs["quarantine"]``; ``"raise"`` raises
            :class:`~cdckit.DecodeError` at the first one.
        chunksize: when given, return an iterator of frames of at most this
            many events, so a capture larger than memory can be decoded.
        container: force ``jsonl``, ``json``, ``text``, ``csv`` or ``parquet``.
        tz: zone for zone-less text times (UTC when None).
        sample: messages per source used for detection.

    Returns:
        The canonical frame (see :mod:`cdckit.frame`), with
        ``attrs["quarantine"]`` and ``attrs["report"]``; or a
        :class:`ChunkedRead` when ``chunksize`` is given.
    """
    if errors not in ("quarantine", "raise"):
        raise ValueError(f"errors must be 'quarantine' or 'raise', not {errors!r}")
    if dialect is not None:
        registry.get(dialect)  # a misspelt name fails now, with a suggestion
    job = _ReadJob(dialect, errors, tz, container, sample)
    if chunksize is not None:
        if chunksize < 1:
            raise ValueError("chunksize must be at least 1")
        return ChunkedRead(job, source, chunksize)
    tables: list[pa.Table] = []
    try:
        for table in job.tables(source, _BATCH):
            tables.append(table)
    except DecodeError as err:
        tables.append(job.builder.to_arrow())
        err.partial = arrow_to_pandas(pa.concat_tables(tables))
        raise
    events = arrow_to_pandas(pa.concat_tables(tables) if tables else ARROW_SCHEMA.empty_table())
    events.attrs["quarantine"] = job.quarantine.to_pandas()
    events.attrs["report"] = job.report()
    return events


class ChunkedRead:
    """Iterator of canonical frames of at most ``chunksize`` events.

    Each frame's ``attrs["quarantine"]`` holds the messages quarantined since
    the previous frame and ``attrs["report"]`` the running totals. After the
    last frame, ``report`` and ``quarantine`` cover the whole read.
    """

    def __init__(self, job: "_ReadJob", source: Any, chunksize: int) -> None:
        self._job = job
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
        frame = arrow_to_pandas(table)
        rows = self._job.quarantine.rows
        recent = QuarantineBuilder()
        recent.rows = rows[self._quarantine_seen :]
        self._quarantine_seen = len(rows)
        frame.attrs["quarantine"] = recent.to_pandas()
        frame.attrs["report"] = self._job.report()
        return frame

    @property
    def report(self) -> dict[str, Any]:
        return self._job.report()

    @property
    def quarantine(self) -> pd.DataFrame:
        return self._job.quarantine.to_pandas()


@contextmanager
def _gc_paused() -> Iterator[None]:
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


@contextmanager
def _gc_resumed() -> Iterator[None]:
    """Inside :func:`_gc_paused`: the collector runs normally while the caller's code runs."""
    paused = not gc.isenabled()
    if paused:
        gc.enable()
    try:
        yield
    finally:
        if paused:
            gc.disable()


class _ReadJob:
    """The state of one read: builders, pairing, counts."""

    def __init__(self, dialect: str | None, errors: str, tz: str | None, container: str | None, sample: int) -> None:
        self.dialect_name = dialect
        self.errors = errors
        self.tz = tz
        self.container = container
        self.sample = sample
        self.builder = FrameBuilder()
        self.quarantine = QuarantineBuilder()
        self.pairer = Pairer()
        self.messages = 0
        self.decoded = 0
        self.events = 0
        self.pending = 0
        self.skipped: Counter[str] = Counter()
        self.by_dialect: Counter[str] = Counter()
        self.sources: dict[str, str | None] = {}
        self._all: list[Dialect] | None = None

    # ------------------------------------------------------------ the loop

    def tables(self, source: Any, size: int) -> Iterator[pa.Table]:
        """Arrow tables of at most ``size`` events; pairs and accounts as it goes.

        The cyclic garbage collector is paused while a table is being filled:
        decoding makes many small objects and no cycles, and collecting the
        growing batch over and over would cost more than the decoding.
        """
        for name, messages in iter_sources(source, container=self.container):
            head = list(itertools.islice(messages, self.sample))
            dialect, unknown = self._dialect_for(name, head)
            if dialect is not None and dialect.has_line_decoder and self._is_jsonl_file(name):
                messages.close()
                yield from self._decode_jsonl_file(dialect, name, size)
                continue
            with _gc_paused():
                for msg in itertools.chain(head, messages):
                    self.messages += 1
                    if dialect is not None:
                        self.by_dialect[dialect.name] += 1
                    if msg.error is not None:
                        self._bad(msg, dialect, msg.error)
                    elif dialect is None:
                        self._bad(msg, None, unknown or "no dialect")
                    else:
                        self._decode(dialect, msg)
                    if len(self.builder) >= size:
                        table = self._flush()
                        with _gc_resumed():
                            yield table
        for event, msg in self.pairer.drain():
            self.pending -= 1
            reason = f"{event.op_raw} with no partner half (table {event.table}, seq {event.seq})"
            self._bad(msg, None, reason, hint=False, dialect_name=self.sources.get(msg.source))
        if len(self.builder):
            yield self._flush()

    def _is_jsonl_file(self, name: str) -> bool:
        return os.path.isfile(name) and file_container(name, self.container) == "jsonl"

    def _decode_jsonl_file(self, dialect: Dialect, path: str, size: int) -> Iterator[pa.Table]:
        """A JSON Lines file through the dialect's batch decoder (messages it hands back go one by one)."""
        name = dialect.name
        builder = self.builder
        with _gc_paused():
            for block in jsonl_blocks(path):
                first = block.first_offset
                results = dialect.decode_lines(block.lines)
                count = len(results)
                if None not in results and all(r.__class__ is tuple for r in results):
                    start = 0  # the common case: one event per message, none handed back
                    while start < count:
                        take = min(count - start, max(size - len(builder), 1))
                        offsets = range(first + start, first + start + take)
                        builder.add_rows(results[start : start + take], name, path, offsets)
                        self.messages += take
                        self.decoded += take
                        self.events += take
                        self.by_dialect[name] += take
                        start += take
                        if len(builder) >= size:
                            table = self._flush()
                            with _gc_resumed():
                                yield table
                    continue
                for index, (raw, result) in enumerate(zip(block.lines, results)):
                    offset = first + index
                    self.messages += 1
                    self.by_dialect[name] += 1
                    if result.__class__ is tuple:
                        self.decoded += 1
                        self.events += 1
                        builder.add_row(result, name, path, offset)
                    elif result is None:
                        msg = parse_line(raw.strip(), path, offset, block.line_of(index))
                        if msg.error is not None:
                            self._bad(msg, dialect, msg.error)
                        else:
                            self._decode(dialect, msg)
                    else:
                        self.decoded += 1
                        for row in result:
                            self.events += 1
                            builder.add_row(row, name, path, offset)
                    if len(builder) >= size:
                        table = self._flush()
                        with _gc_resumed():
                            yield table

    def _flush(self) -> pa.Table:
        table = self.builder.to_arrow()
        self.builder.clear()
        return table

    def _dialect_for(self, name: str, head: list[Message]) -> tuple[Dialect | None, str | None]:
        if self.dialect_name is not None:
            self.sources[name] = self.dialect_name
            return registry.create(self.dialect_name, tz=self.tz), None
        try:
            found = choose(head, self._dialects())
        except UnknownDialectError as err:
            self.sources[name] = None
            if not any(m.error is None for m in head):
                return None, "unreadable message and no readable one to detect a dialect from"
            warnings.warn(f"{name}: {err}; its messages are quarantined", stacklevel=4)
            return None, str(err)
        except AmbiguousDialectError as err:
            raise AmbiguousDialectError(f"{name}: {err}", err.candidates) from None
        self.sources[name] = found.dialect
        return registry.create(found.dialect, tz=self.tz), None

    def _dialects(self) -> list[Dialect]:
        if self._all is None:
            self._all = registry.all_dialects(tz=self.tz)
        return self._all

    def _decode(self, dialect: Dialect, msg: Message) -> None:
        try:
            events = dialect.decode(msg)
        except SkipMessage as skip:
            self.decoded += 1
            self.skipped[str(skip)] += 1
            return
        except BadMessage as bad:
            self._bad(msg, dialect, str(bad))
            return
        except Exception as err:  # a decoder bug or a shape it did not foresee: quarantine, never stop
            self._bad(msg, dialect, f"{type(err).__name__}: {err}")
            return
        if len(events) == 1 and events[0].half is not None:
            self.pending += 1
            paired = self.pairer.offer(events[0], msg, dialect.name)
            if paired is not None:
                merged, where = paired
                self.pending -= 2
                self.decoded += 2
                self.skipped[PAIRED] += 1
                self.events += 1
                self.builder.add(merged, dialect.name, where.source, where.offset, where.partition)
            return
        self.decoded += 1
        if not events:
            self.skipped[f"{dialect.name}: message without rows"] += 1
        for event in events:
            self.events += 1
            self.builder.add(event, dialect.name, msg.source, msg.offset, msg.partition)

    def _bad(
        self, msg: Message, dialect: Dialect | None, reason: str, hint: bool = True, dialect_name: str | None = None
    ) -> None:
        name = dialect.name if dialect is not None else dialect_name
        if hint and dialect is not None and msg.error is None:
            reason += self._hint(msg, dialect)
        if self.errors == "raise":
            raise DecodeError(msg.source, msg.offset, reason, msg.raw_text())
        self.quarantine.add(msg.source, msg.offset, msg.partition, msg.line, name, reason, msg.raw_text())

    def _hint(self, msg: Message, dialect: Dialect) -> str:
        """Which other dialect the message looks like, unless it is the same family (a subclass)."""
        matches = score_message(msg.value, self._dialects())
        if not matches or matches[0][0] == dialect.name:
            return ""
        best = registry.get(matches[0][0])
        if issubclass(best, type(dialect)) or isinstance(dialect, best):
            return ""
        return f" (it looks like a {best.name} message)"

    # ------------------------------------------------------------ the report

    def report(self) -> dict[str, Any]:
        report = {
            "messages": self.messages,
            "decoded": self.decoded,
            "events": self.events,
            "quarantined": len(self.quarantine),
            "skipped": dict(self.skipped),
            "dialects": dict(self.by_dialect),
            "sources": dict(self.sources),
        }
        if self.pending:
            report["pending"] = self.pending
        return report
