"""Where a decode loop's outcomes go: a :class:`Sink` is told what became of each message, and a
:class:`FrameSink` collects the events into the frame (both engines' decode loops, :mod:`cdckit.reading.decoding`,
tell one; ``cdckit.spark`` has sinks of its own).

>>> from cdckit.io import Message
>>> from cdckit.frame import Event
>>> sink = FrameSink()
>>> sink.read("maxwell", 1)
>>> sink.events(Message({}, "s", 0), "maxwell", [Event("insert", "I", table="t")])
>>> sink.messages, sink.events_made, dict(sink.by_dialect)
(1, 1, {'maxwell': 1})
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pandas as pd
import pyarrow as pa

from ..capture import merged_keys
from ..column_types import column_types_frame
from ..dialects.base import Columns
from ..frame import Event
from ..frame_builders import FrameBuilder
from ..io import Message

__all__ = ["Sink", "FrameSink"]


class Sink:
    """Receives what became of each message. Every method does nothing unless overridden."""

    def read(self, dialect: str | None, count: int) -> None:
        """``count`` messages were read for ``dialect`` (None: no dialect recognised them)."""

    def events(self, msg: Message, dialect: str, events: list[Event]) -> None:
        """One message decoded into these events (none are update halves)."""

    def rows(
        self,
        table: pa.Table,
        dialect: str,
        source: str,
        offsets: list[int],
        messages: int,
        partition: int | list[int | None] | None,
        halves: list[tuple] = (),  # type: ignore[assignment]
        firsts: list[bool] | None = None,
    ) -> None:
        """``messages`` messages decoded by a batch decoder into the events of ``table`` (an
        :func:`cdckit.frame.event_table`; ``offsets``: one per row; ``partition``: the Kafka partition of
        every row, or a list of one per row where partitions interleave), and ``halves`` among them: update
        halves as ``(position, msg, dialect, event)``, ``position`` the number of the table's rows that
        came before the half's message (``messages`` does not count them). ``firsts`` says of each row
        whether it is its message's first (two messages may share an offset: a redelivered record)."""

    def half(self, msg: Message, dialect: str, event: Event) -> None:
        """One message decoded into half of an update, to be paired with its partner."""

    def waiting(self, dialect: str, event: Event) -> bool | None:
        """Whether a half of ``event``'s identity (:func:`cdckit.reading.pairing.identity`) waits here for its
        partner; None (this default) when the sink takes every half through :meth:`half` or :meth:`rows`.
        A sink that answers True or False pairs halves in input order, first in first out, and lets the
        decoder make one update of a before half and the after half right after it when none of their
        identity waits (see :meth:`paired`): the update placed where the after half was, as it pairs them."""
        return None

    def paired(self, dialect: str, event: Event) -> None:
        """The decoder made one update of two adjacent halves of ``event``'s identity (see :meth:`waiting`):
        its row comes through :meth:`rows`, both messages counted there as decoded; count the pairing."""

    def skipped(self, msg: Message, dialect: str, reason: str) -> None:
        """One message that rightly produces no row."""

    def unskip(self, msg: Message, dialect: str, reason: str) -> None:
        """A message counted as skipped for ``reason`` is not (it is about to be quarantined, see :meth:`bad`)."""

    def bad(
        self, msg: Message, dialect: str | None, reason: str, code: str, *, cause: BaseException | None = None
    ) -> None:
        """One message that could not be decoded; ``code`` is one of :data:`cdckit.errors.REASON_CODES`,
        ``cause`` the exception behind it, if any."""

    def types(self, dialect: str, source: str, offset: int, table: str, columns: Columns) -> None:
        """The message at ``source``/``offset`` declared ``table``'s column types (see
        :meth:`cdckit.dialects.base.Dialect.declare`); a declaration may repeat the last one for the table."""

    def inferred_keys(self, source: str, dialect: str, found: dict[str, dict[str, Any]]) -> None:
        """The dialect inferred these tables' key columns from ``source``'s evidence (see
        :meth:`cdckit.dialects.base.Dialect.settle`): ``{table: {"columns": [...], "evidence": text}}``."""


class FrameSink(Sink):
    """A sink that puts events in a :class:`~cdckit.frame_builders.FrameBuilder` and counts messages, decoded
    messages, events, dialects and skip reasons: what the one-process reader and each worker share.
    Halves and bad messages are each user's own (pairing, quarantine)."""

    def __init__(self) -> None:
        self.builder = FrameBuilder()
        self.messages = self.decoded = self.events_made = 0
        self.by_dialect: Counter[str] = Counter()
        self.skipped_reasons: Counter[str] = Counter()
        #: The declarations of column types, ``(table, columns, source, offset)`` in input order, each
        #: different from the one before it for its table.
        self.declarations: list[tuple[str, Columns, str, int]] = []
        self._declared: dict[str, Columns] = {}
        #: The key columns dialects inferred: ``{table: {"columns", "evidence", "sources"}}`` (see
        #: :func:`cdckit.capture.merged_keys`).
        self.keys_found: dict[str, dict[str, Any]] = {}

    def read(self, dialect: str | None, count: int) -> None:
        self.messages += count
        if dialect is not None:
            self.by_dialect[dialect] += count

    def events(self, msg: Message, dialect: str, events: list[Event]) -> None:
        self.decoded += 1
        self.events_made += len(events)
        for event in events:
            self.builder.add(event, dialect, msg.source, msg.offset, msg.partition)

    def rows(
        self,
        table: pa.Table,
        dialect: str,
        source: str,
        offsets: list[int],
        messages: int,
        partition: int | list[int | None] | None,
        halves: list[tuple] = (),  # type: ignore[assignment]
        firsts: list[bool] | None = None,
    ) -> None:
        self.decoded += messages
        self.events_made += table.num_rows
        if not halves:
            self.builder.add_table(table, dialect, source, offsets, partition)
            return
        events = FrameBuilder()
        events.add_table(table, dialect, source, offsets, partition)
        self.builder.add_frame(self.placed(events.to_arrow(), halves))

    def placed(self, table: pa.Table, halves: list[tuple]) -> pa.Table:
        """``table`` (events in the frame's Arrow form) with what its ``halves`` (see :meth:`rows`) make
        in their places; this sink keeps no halves: they are dropped."""
        return table

    def skipped(self, msg: Message, dialect: str, reason: str) -> None:
        self.decoded += 1
        self.skipped_reasons[reason] += 1

    def unskip(self, msg: Message, dialect: str, reason: str) -> None:
        self.decoded -= 1
        self.skipped_reasons[reason] -= 1
        if self.skipped_reasons[reason] <= 0:
            del self.skipped_reasons[reason]

    def types(self, dialect: str, source: str, offset: int, table: str, columns: Columns) -> None:
        last = self._declared.get(table)
        if last is columns or last == columns:  # the one rule: a declaration equal to the last is dropped
            return
        self._declared[table] = columns
        self.declarations.append((table, columns, source, offset))

    def inferred_keys(self, source: str, dialect: str, found: dict[str, dict[str, Any]]) -> None:
        self.keys_found = merged_keys(
            [self.keys_found, {table: {**found[table], "sources": [source]} for table in found}]
        )

    def column_types(self) -> pd.DataFrame:
        """The declarations as ``cdckit.column_types_of(events)`` holds them
        (:func:`cdckit.column_types.column_types_frame`)."""
        return column_types_frame(self.declarations)
