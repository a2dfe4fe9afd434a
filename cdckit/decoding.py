"""The decode loop both engines run: messages in, events, halves, skips and bad messages out.

:class:`MessageDecoder` runs one dialect over messages (one by one, or a
JSON Lines block at a time through the dialect's batch decoder) and tells a
:class:`Sink` what became of each message. ``cdckit.read`` (pandas) and
``cdckit.spark`` (inside Spark tasks) differ only in their sinks.

>>> from cdckit.containers import Message
>>> from cdckit.dialects import registry
>>> class Printing(Sink):
...     def events(self, msg, dialect, events): print(msg.offset, [e.op for e in events])
...     def bad(self, msg, dialect, reason, code): print(msg.offset, "bad:", reason)
>>> decoder = MessageDecoder(registry.create("maxwell"), Printing())
>>> decoder.message(Message({"database": "d", "table": "t", "type": "insert", "ts": 1, "data": {"id": 1}}, "s", 0))
0 ['insert']
>>> decoder.message(Message({"type": "insert"}, "s", 1))
1 bad: missing required field data
"""

from __future__ import annotations

import gc
from contextlib import contextmanager
from typing import Any, Iterator

from .containers import LineBlock, Message, parse_line
from .detect import score_message
from .dialects import registry
from .dialects.base import BadMessage, Dialect, SkipMessage
from .frame import Event

__all__ = ["Sink", "MessageDecoder", "family_hint", "gc_paused", "gc_resumed"]


class Sink:
    """Receives what became of each message. Every method does nothing unless overridden."""

    def read(self, dialect: str | None, count: int) -> None:
        """``count`` messages were read for ``dialect`` (None: no dialect recognised them)."""

    def events(self, msg: Message, dialect: str, events: list[Event]) -> None:
        """One message decoded into these events (none are update halves)."""

    def rows(
        self, rows: list[tuple], dialect: str, source: str, offsets: Any, messages: int, partition: int | None
    ) -> None:
        """``messages`` messages decoded by a batch decoder into event tuples (``offsets``: one per row)."""

    def half(self, msg: Message, dialect: str, event: Event) -> None:
        """One message decoded into half of an update, to be paired with its partner."""

    def skipped(self, msg: Message, dialect: str, reason: str) -> None:
        """One message that rightly produces no row."""

    def bad(self, msg: Message, dialect: str | None, reason: str, code: str) -> None:
        """One message that could not be decoded; ``code`` is one of :data:`cdckit.errors.REASON_CODES`."""


class MessageDecoder:
    """Runs ``dialect`` over messages; ``unknown`` is the reason given when ``dialect`` is None."""

    def __init__(self, dialect: Dialect | None, sink: Sink, unknown: str | None = None) -> None:
        self.dialect = dialect
        self.sink = sink
        self.unknown = unknown or "no dialect recognises this message"
        self._name = dialect.name if dialect is not None else None
        self._all: list[Dialect] | None = None

    def message(self, msg: Message) -> None:
        """Decode one message and tell the sink."""
        sink, dialect, name = self.sink, self.dialect, self._name
        sink.read(name, 1)
        if msg.error is not None:
            sink.bad(msg, name, msg.error, "damaged_input")
            return
        if dialect is None:
            sink.bad(msg, None, self.unknown, "unknown_dialect")
            return
        try:
            events = dialect.decode(msg)
        except SkipMessage as skip:
            sink.skipped(msg, name, str(skip))
            return
        except BadMessage as bad:
            sink.bad(msg, name, str(bad) + self.hint(msg), "invalid_message")
            return
        except Exception as err:  # a decoder bug or a shape it did not foresee: quarantine, never stop
            sink.bad(msg, name, f"{type(err).__name__}: {err}" + self.hint(msg), "decoder_error")
            return
        if not events:
            sink.skipped(msg, name, f"{name}: message without rows")
        elif len(events) == 1 and events[0].half is not None:
            sink.half(msg, name, events[0])
        else:
            sink.events(msg, name, events)

    def block(self, block: LineBlock, source: str, partition: int | None = None) -> None:
        """Decode a block of JSON Lines, through the dialect's batch decoder when it has one."""
        dialect = self.dialect
        if dialect is None or not dialect.has_line_decoder:
            for index, raw in enumerate(block.lines):
                msg = parse_line(raw.strip(), source, block.first_offset + index, block.line_of(index))
                if partition is not None:
                    msg.partition = partition
                self.message(msg)
            return
        results = dialect.decode_lines(block.lines)
        first = block.first_offset
        if None not in results and all(r.__class__ is tuple for r in results):  # the common case
            self.sink.read(self._name, len(results))
            self.sink.rows(results, self._name, source, range(first, first + len(results)), len(results), partition)
            return
        rows: list[tuple] = []
        offsets: list[int] = []
        messages = 0
        for index, result in enumerate(results):
            if result is None:
                if messages:
                    self.sink.read(self._name, messages)
                    self.sink.rows(rows, self._name, source, offsets, messages, partition)
                    rows, offsets, messages = [], [], 0
                msg = parse_line(block.lines[index].strip(), source, first + index, block.line_of(index))
                if partition is not None:
                    msg.partition = partition
                self.message(msg)
                continue
            messages += 1
            if result.__class__ is tuple:
                rows.append(result)
                offsets.append(first + index)
            else:
                rows.extend(result)
                offsets.extend([first + index] * len(result))
        if messages:
            self.sink.read(self._name, messages)
            self.sink.rows(rows, self._name, source, offsets, messages, partition)

    def hint(self, msg: Message) -> str:
        """`` (it looks like a X message)`` when another dialect explains the message better."""
        if self.dialect is None:
            return ""
        if self._all is None:
            self._all = registry.all_dialects(tz=self.dialect.tz)
        return family_hint(msg.value, self.dialect, self._all)


def family_hint(value: Any, dialect: Dialect, dialects: list[Dialect]) -> str:
    """Which other dialect ``value`` looks like, unless it is ``dialect``'s own family (a subclass)."""
    matches = score_message(value, dialects)
    if not matches or matches[0][0] == dialect.name:
        return ""
    best = registry.get(matches[0][0])
    if issubclass(best, type(dialect)) or isinstance(dialect, best):
        return ""
    return f" (it looks like a {best.name} message)"


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while decoding.

    Decoding makes many small objects and no cycles; collecting the growing
    batch over and over would cost more than the decoding itself.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


@contextmanager
def gc_resumed() -> Iterator[None]:
    """Inside :func:`gc_paused`: the collector runs normally while the caller's code runs."""
    paused = not gc.isenabled()
    if paused:
        gc.enable()
    try:
        yield
    finally:
        if paused:
            gc.disable()
