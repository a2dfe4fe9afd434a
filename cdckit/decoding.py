"""The decode loop both engines run: messages in, events, halves, skips and bad messages out.

:class:`MessageDecoder` runs one dialect over messages (one by one, or a
JSON Lines block at a time through the dialect's batch decoder) and tells a
:class:`Sink` what became of each message. ``cdckit.read`` (pandas) and
``cdckit.spark`` (inside Spark tasks) differ only in their sinks.

>>> from cdckit.io import Message
>>> from cdckit.dialects import registry
>>> class Printing(Sink):
...     def events(self, msg, dialect, events): print(msg.offset, [e.op for e in events])
...     def bad(self, msg, dialect, reason, code, cause=None): print(msg.offset, "bad:", reason)
>>> decoder = MessageDecoder(registry.create("maxwell"), Printing())
>>> decoder.message(Message({"database": "d", "table": "t", "type": "insert", "ts": 1, "data": {"id": 1}}, "s", 0))
0 ['insert']
>>> decoder.message(Message({"type": "insert"}, "s", 1))
1 bad: missing required field data
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

import msgspec
import pandas as pd
import pyarrow as pa

from . import shapes
from .io import LineBlock, Message, parse_line, record_message, saved_records
from .io.console import console_lines, console_message
from .io.tables import RowBlock
from .detect import FLOOR, score_message
from .dialects import registry
from .column_types import TYPE_COLUMNS
from .dialects.base import BadMessage, Columns, Decoded, Dialect, SkipMessage
from .dialects.options import DialectOptions, resolved
from .errors import InvalidValue
from .pairing import identity, merge
from .frame import PANDAS_TYPES, TABLE_ROW, Event, FastRow, FrameBuilder, event_row, event_table, row_problem

__all__ = ["Sink", "FrameSink", "MessageDecoder", "column_types_frame", "family_hint"]


class Sink:
    """Receives what became of each message. Every method does nothing unless overridden."""

    def read(self, dialect: str | None, count: int) -> None:
        """``count`` messages were read for ``dialect`` (None: no dialect recognised them)."""

    def events(self, msg: Message, dialect: str, events: list[Event]) -> None:
        """One message decoded into these events (none are update halves)."""

    def rows(
        self, table: pa.Table, dialect: str, source: str, offsets: list[int], messages: int,
        partition: int | list[int | None] | None, halves: Sequence[tuple] = (),
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
        """Whether a half of ``event``'s identity (:func:`cdckit.pairing.identity`) waits here for its
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

    def bad(self, msg: Message, dialect: str | None, reason: str, code: str, *,
            cause: BaseException | None = None) -> None:
        """One message that could not be decoded; ``code`` is one of :data:`cdckit.errors.REASON_CODES`,
        ``cause`` the exception behind it, if any."""

    def types(self, dialect: str, source: str, offset: int, table: str, columns: Columns) -> None:
        """The message at ``source``/``offset`` declared ``table``'s column types (see
        :meth:`cdckit.dialects.base.Dialect.declare`); a declaration may repeat the last one for the table."""

    def inferred_keys(self, source: str, dialect: str, found: dict[str, dict[str, Any]]) -> None:
        """The dialect inferred these tables' key columns from ``source``'s evidence (see
        :meth:`cdckit.dialects.base.Dialect.settle`): ``{table: {"columns": [...], "evidence": text}}``."""


class FrameSink(Sink):
    """A sink that puts events in a :class:`~cdckit.frame.FrameBuilder` and counts messages, decoded
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
        self, table: pa.Table, dialect: str, source: str, offsets: list[int], messages: int,
        partition: int | list[int | None] | None, halves: Sequence[tuple] = (),
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

    def placed(self, table: pa.Table, halves: Sequence[tuple]) -> pa.Table:
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
        from .capture import merged_keys

        self.keys_found = merged_keys([self.keys_found, {table: {**found[table], "sources": [source]}
                                                         for table in found}])

    def column_types(self) -> pd.DataFrame:
        """The declarations as ``cdckit.column_types_of(events)`` holds them (:func:`column_types_frame`)."""
        return column_types_frame(self.declarations)


def column_types_frame(declarations: list[tuple[str, Columns, str, int]]) -> pd.DataFrame:
    """Declarations ``(table, columns, source, offset)`` as a frame of :data:`cdckit.column_types.TYPE_COLUMNS`,
    one row per column (empty, with those columns, when there is none).

    >>> column_types_frame([("shop.items", {"id": ("bigint(20)", "int")}, "f.jsonl", 3)]).values.tolist()
    [['shop.items', 'id', 'bigint(20)', 'int', 'f.jsonl', 3]]
    >>> list(column_types_frame([]).columns)
    ['table', 'column', 'type', 'kind', 'source', 'offset']
    """
    rows = [(_text(table), _text(column), _text(raw), _text(kind), _text(source), offset)  # a Python message's
            for table, columns, source, offset in declarations for column, (raw, kind) in columns.items()]  # names may be any
    arrays = [pa.array(list(values), pa.int64() if name == "offset" else pa.string())
              for name, values in zip(TYPE_COLUMNS, zip(*rows) if rows else [[]] * len(TYPE_COLUMNS))]
    return pa.Table.from_arrays(arrays, names=list(TYPE_COLUMNS)).to_pandas(types_mapper=PANDAS_TYPES.get)


def _text(value: Any) -> str | None:
    """A declared name or type as text (a message given as a Python dict may name a column by a number, or
    by text holding a lone surrogate, which Arrow cannot hold: it becomes U+FFFD).

    >>> _text(3), _text("id"), _text("a" + chr(0xD800)) == "a" + chr(0xFFFD)
    ('3', 'id', True)
    """
    if value is None:
        return None
    text = value if isinstance(value, str) else str(value)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "".join("\ufffd" if "\ud800" <= c <= "\udfff" else c for c in text)
    return text


class MessageDecoder:
    """Runs ``dialect`` over messages and tells ``sink`` what became of each one.

    This is the one guard around everything a single message can cause: the
    decoder, the batch decoders (fast paths), the values it yields (checked by
    :func:`cdckit.frame.row_problem`, so turning a batch into Arrow cannot
    fail) and pairing. Whatever goes wrong ends as one quarantined message
    with its reason and ``reason_code``; nothing raises.

    ``unknown`` is the reason given when ``dialect`` is None. With
    ``each=True`` (the file's dialect was detected, not given), a message the
    file's dialect cannot decode is detected on its own and decoded by the
    dialect that claims it: a file that mixes dialects is decoded message by
    message, the file's dialect winning every tie.

    A dialect that ``settles`` (:meth:`cdckit.dialects.base.Dialect.settle`:
    test_decoding's prepared transactions and inferred keys) has the events
    of its source held here until :meth:`finish`, then revised and handed to
    the sink in input order: such a source's events stay in memory until it
    ends (a ``whole_files`` dialect's source is decoded in one piece anyway).
    """

    def __init__(self, dialect: Dialect | None, sink: Sink, unknown: str | None = None, *, each: bool = False,
                 tz: str | None = None, options: DialectOptions | None = None) -> None:
        self.dialect = dialect
        self.sink = sink
        self.unknown = unknown or "no dialect recognises this message"
        self.each = each
        self.options = dialect.options if dialect is not None else resolved(options, tz)
        self.tz = self.options.tz
        self._name = dialect.name if dialect is not None else None
        self._all: list[Dialect] | None = None
        self._batch_types: list[tuple] = []
        self._batch_table: pa.Table | None = None
        self._held: list[Decoded] | None = [] if dialect is not None and dialect.settles else None

    def _given(self) -> Dialect:
        """The dialect given: the batch paths run only with one (:meth:`_batches`), as does settling."""
        if self.dialect is None:
            raise RuntimeError("no dialect was given: the batch paths need one")
        return self.dialect

    # ------------------------------------------------------------ one message

    def message(self, msg: Message) -> None:
        """Decode one message and tell the sink."""
        if msg.error is not None:
            self._bad(msg, self._name, msg.error, msg.code or "damaged_input", None)
            return
        dialect = self.dialect
        first = self._attempt(dialect, msg) if dialect is not None else None
        if dialect is not None and first is not None and first[0] != "bad":
            self._deliver(dialect, msg, first)
            return
        other = self._claimant(msg) if self.each or dialect is None else None
        if other is not None:
            second = self._attempt(other, msg)
            # two instances declared for one stream: neither's last declarations can be trusted now
            other.forget_declarations()
            if dialect is not None:
                dialect.forget_declarations()
            if second[0] != "bad":
                self._deliver(other, msg, second)
                return
            first, dialect = second, other  # the message looks like `other`: its reason says most
        known = _explained(shapes.unsupported_reason, msg.value)
        if known is None and first is None:
            known = _explained(shapes.bare_row_reason, msg.value)
        if known is not None:
            self._bad(msg, self._name if other is None else other.name, known, "unsupported_format", None)
        elif first is None:
            self._bad(msg, None, self.unknown, "unknown_dialect", None)
        else:
            _, reason, code, cause = first
            hint = self.hint(msg) if other is None else ""
            self._bad(msg, None if dialect is None else dialect.name, reason + hint, code, cause)

    def _attempt(self, dialect: Dialect, msg: Message) -> tuple:
        """``("events", events)``, ``("skip", reason)`` or ``("bad", reason, code, cause)``; the column types
        the dialect declared meanwhile go to the sink (whatever became of the message)."""
        outcome = self._outcome(dialect, msg)
        declared = dialect.take_declarations()
        if declared:
            for table, columns, _ in declared:
                self.sink.types(dialect.name, msg.source, msg.offset, table, columns)
        self._given_up(dialect)
        return outcome

    def finish(self) -> None:
        """A source's messages are over: what its dialect still holds (see :meth:`Dialect.finish`) is
        quarantined."""
        if self.dialect is not None:
            self.dialect.finish()
            self._given_up(self.dialect)
        held = self._held
        if held is None:
            return
        self._held = []
        dialect = self._given()  # a list of held messages only where the dialect settles
        found = dialect.settle(held)
        for decoded in held:
            if decoded.events:
                self.sink.events(decoded.message, decoded.dialect, decoded.events)
            else:
                self.sink.skipped(decoded.message, decoded.dialect,
                                  decoded.skip or f"{decoded.dialect}: message without rows")
        keys = found.get("inferred_keys")
        if keys and held:
            self.sink.inferred_keys(held[0].message.source, dialect.name, keys)

    def _given_up(self, dialect: Dialect) -> None:
        """Quarantine the messages ``dialect`` held (counted as skipped when they came) and gave up."""
        for msg, skip_reason, reason in dialect.take_failed():
            self.sink.unskip(msg, dialect.name, skip_reason)
            self.sink.bad(msg, dialect.name, reason, "invalid_message")

    def _outcome(self, dialect: Dialect, msg: Message) -> tuple:
        try:
            events = dialect.decode(msg)
            if not events:
                return ("skip", f"{dialect.name}: message without rows")
            for event in events:
                problem = row_problem(event_row(event))
                if problem is None and event.half not in (None, "before", "after"):
                    problem = f"update half {event.half!r} is neither before nor after"
                if problem is not None:
                    return ("bad", problem, "invalid_value", None)
        except SkipMessage as skip:
            return ("skip", str(skip))
        except BadMessage as bad:
            return ("bad", str(bad), "invalid_message", bad)
        except InvalidValue as err:
            return ("bad", str(err), "invalid_value", err)
        except RecursionError as err:
            return ("bad", "the message nests too deep to decode", "too_deep", err)
        except Exception as err:  # a decoder bug or a shape it did not foresee: quarantine, never stop
            text = str(err)
            code = ("too_deep" if "Recursion limit" in text else "invalid_utf8" if "surrogates not allowed" in text
                    else "decoder_error")
            return ("bad", f"{type(err).__name__}: {err}", code, err)
        return ("events", events)

    def _deliver(self, dialect: Dialect, msg: Message, outcome: tuple) -> None:
        sink, name = self.sink, dialect.name
        sink.read(name, 1)
        if outcome[0] == "skip":
            sink.skipped(msg, name, outcome[1])
            return
        events = outcome[1]
        if len(events) == 1 and events[0].half is not None:
            sink.half(msg, name, events[0])
        elif self._held is not None:
            self._held.append(Decoded(msg, name, events))
        else:
            sink.events(msg, name, events)

    def _bad(self, msg: Message, dialect: str | None, reason: str, code: str, cause: BaseException | None) -> None:
        self.sink.read(dialect, 1)
        self.sink.bad(msg, dialect, reason, code, cause=cause)

    def _claimant(self, msg: Message) -> Dialect | None:
        """Another dialect whose detector is sure enough that ``msg`` is its own (see :data:`detect.FLOOR`)."""
        for name, match in score_message(msg.value, self._dialects()):
            if match.score < FLOOR:
                return None
            if name != self._name:
                return next(d for d in self._dialects() if d.name == name)
        return None

    def _dialects(self) -> list[Dialect]:
        if self._all is None:
            self._all = registry.all_dialects(options=self.options)
        return self._all

    # ------------------------------------------------------------ many messages at once

    def block(self, block: LineBlock, source: str, partition: int | None = None) -> None:
        """Decode a block of JSON Lines, through the dialect's batch decoder when it has one (a
        :class:`~cdckit.io.tables.RowBlock` of CSV or Parquet rows: see :meth:`rows`)."""
        if isinstance(block, RowBlock):
            self.rows(block, source, partition)
            return
        lines = block.lines

        separator = self.options.key_separator

        def slow(index: int) -> None:
            msg = console_message(parse_line(lines[index].strip(), source, block.first_offset + index,
                                             block.line_of(index)), separator)
            if partition is not None and msg.partition is None:
                msg.partition = partition
            self.message(msg)

        def light(index: int) -> Message:  # the position of a message whose half the batch decoder gave
            return Message(None, source, block.first_offset + index, raw=lines[index].strip(),
                           line=block.line_of(index), partition=partition)

        count = len(lines)
        first = block.first_offset
        saved = saved_records(lines) if self._batches() else None
        if saved is not None:  # kcat -J lines or Kafka-shaped frames: their messages go to the batch decoder
            self._saved(saved, block, source, partition, slow)
            return
        printed = console_lines(lines, separator) if self._batches() else None
        if printed is not None:  # kafka-console-consumer lines: the same, their values to the batch decoder
            self._saved(printed, block, source, partition, slow)
            return
        results = self._batch(lines)
        if results is None:
            for index in range(count):
                slow(index)
            return
        self._fast(results, range(first, first + count), [source] * count, [partition] * count, slow, light,
                   self._batch_types)

    def rows(self, block: RowBlock, source: str, partition: int | None = None) -> None:
        """Decode a block of table rows (CSV or Parquet), through the dialect's ``decode_rows`` when it has
        one: ``decode_rows(names, columns)`` gives for each row what ``decode_lines`` gives for a line (None
        hands the row back, to be decoded alone as the message the file's reader makes of it)."""
        count = block.count

        def slow(index: int) -> None:
            msg = block.message(index, source)
            if partition is not None and msg.partition is None:
                msg.partition = partition
            self.message(msg)

        def light(index: int) -> Message:  # an update half's message (its raw text is the row's)
            msg = block.message(index, source)
            if partition is not None and msg.partition is None:
                msg.partition = partition
            return msg

        dialect = self.dialect
        decode = getattr(dialect, "decode_rows", None) if dialect is not None else None
        results = None
        if dialect is not None and decode is not None and count:
            dialect.forget_declarations()
            try:
                results = decode(block.names, block.columns)
            except Exception:  # a fast path must never stop a read: the general decoder takes every row
                results = None
            dialect.forget_declarations()
        if results is None or len(results) != count:
            for index in range(count):
                slow(index)
            return
        for index in block.messages:
            results[index] = None
        _pair_adjacent(results, self.sink, self._given().name)
        first = block.first_offset
        self._fast(results, range(first, first + count), [source] * count, [partition] * count, slow, light)

    def _saved(self, saved: list, block: LineBlock, source: str, partition: int | None, slow: Any) -> None:
        """A block of saved Kafka records (:class:`~cdckit.io.SavedRecord`, or the
        :class:`~cdckit.io.console.ConsoleLine` of console-consumer lines): the messages through the batch
        decoder, with their records' offsets and partitions (a line that is not a record goes to ``slow``,
        which says why)."""
        count, first, unset = len(saved), block.first_offset, msgspec.UNSET
        offsets = list(range(first, first + count))
        partitions: list[int | None] = [partition] * count
        chosen: list[int] = []
        messages: list[bytes] = []
        keys: list[str | None] = []
        topics: list[str | None] = []
        for index, record in enumerate(saved):
            if record is None:
                continue
            at, part = record.offset, record.partition
            if at is not None and at is not unset:
                offsets[index] = at
            if part is not None and part is not unset:
                partitions[index] = part
            message = record.message_bytes()
            if message is not None:
                chosen.append(index)
                messages.append(message)
                keys.append(record.key_text())
                topics.append(record.topic_text())
        found = self._batch(messages, keys, topics) if chosen else None
        results: list[Any] = [None] * count
        declared: list[tuple] = []
        if found is not None:
            for index, result in zip(chosen, found):
                results[index] = result
            declared = [(chosen[index], table, columns) for index, table, columns in self._batch_types]

        def light(index: int) -> Message:
            return Message(None, source, offsets[index], raw=block.lines[index].strip(), line=block.line_of(index),
                           partition=partitions[index])

        self._fast(results, offsets, [source] * count, partitions, slow, light, declared)

    def _batches(self) -> bool:
        return self.dialect is not None and self.dialect.has_line_decoder

    def records(self, values: list, keys: list, sources: list, partitions: list, offsets: list,
                topics: list | None = None) -> None:
        """Decode Kafka records (value and key as bytes or text; ``topics``: their topics, when known): keyless
        ones through the batch decoder."""
        count = len(values)

        def slow(index: int) -> None:
            self.message(record_message(values[index], keys[index], sources[index], offsets[index],
                                        partitions[index], None if topics is None else topics[index]))

        keyed = self._batches() and self._given().uses_kafka_key
        chosen = [i for i in range(count) if (keyed or keys[i] is None) and isinstance(values[i], (bytes, bytearray))]
        found = self._batch([bytes(values[i]) for i in chosen],
                            [_key_text(keys[i]) for i in chosen] if keyed else None,
                            None if topics is None else [topics[i] for i in chosen]) if chosen else None
        if found is None:
            for index in range(count):
                slow(index)
            return
        def light(index: int) -> Message:
            return Message(None, sources[index], offsets[index], raw=values[index], partition=partitions[index])

        results: list[Any] = [None] * count
        for index, result in zip(chosen, found):
            results[index] = result
        declared = [(chosen[index], table, columns) for index, table, columns in self._batch_types]
        self._fast(results, offsets, sources, partitions, slow, light, declared)

    def _batch(self, lines: list[bytes], keys: list | None = None, topics: list | None = None) -> list | None:
        """The batch decoder's results, or None when there is none or it failed (then each line goes alone).

        ``keys`` (Kafka keys as text, None when a message has none) and ``topics`` (Kafka topics, None
        where unknown) reach dialects that read them.
        The column types the batch declared are left in ``self._batch_types`` as ``(index, table, columns)``,
        and the dialect forgets its last declarations (see :meth:`_fast`)."""
        dialect = self.dialect
        self._batch_types = []
        self._batch_table = None
        if dialect is None or not dialect.has_line_decoder:
            return None
        dialect.forget_declarations()  # what decode() last declared came before or among these lines
        columnar = getattr(dialect, "decode_columns", None)
        decode: Callable[..., Any] = dialect.decode_lines if columnar is None else columnar
        results: Any
        try:
            named = dialect.uses_kafka_topic and topics is not None and any(t is not None for t in topics)
            if dialect.uses_kafka_key and keys is not None and any(key is not None for key in keys):
                results = decode(lines, keys, topics=topics) if named else decode(lines, keys)
            elif named:
                results = decode(lines, topics=topics)
            else:
                results = decode(lines)
            if columnar is not None:
                results, table = results
                if table is not None and table.num_rows != results.count(TABLE_ROW):
                    results = None
                self._batch_table = table
        except Exception:  # a fast path must never stop a read: the general decoder takes every line
            results = None
        declared = dialect.take_declarations()
        dialect.forget_declarations()
        if results is None or len(results) != len(lines):
            return None
        self._batch_types = [(index, table, columns) for table, columns, index in declared if index is not None]
        return results

    def _fast(self, results: list, offsets: Any, sources: list, partitions: list, slow: Any, light: Any,
              declared: Sequence[tuple] = ()) -> None:
        """Hand the batch decoder's rows to the sink in runs of one source, in input order (the partitions of
        a run's rows reach the sink as a column when they differ: a multi-partition capture interleaves them);
        a message it handed back (None) goes to ``slow``. An update half (an :class:`Event`) stays in its
        run, its place kept, and reaches the sink with the message's position from ``light``.

        ``declared``: the column types the batch declared, ``(index, table, columns)``. They reach the
        sink in input order with those of the messages decoded alone: the ones up to a message before it
        is decoded alone, by a dialect that has forgotten its last declarations (lines it did not see
        came between), so its own are complete."""
        if declared or self._batches():
            slow = self._interleaved(slow, sorted(declared, key=_first), offsets, sources)
        table, self._batch_table = self._batch_table, None
        run = self._run if table is None else _TableRuns(self, table).run
        start, count = 0, len(results)
        if table is not None and count and results.count(TABLE_ROW) == count and \
                sources.count(sources[0]) == count and partitions.count(partitions[0]) == count:
            start = count  # the usual block: one run, the whole table (the loop below would find no break)
            run(results, offsets, sources, partitions, 0, count, slow, light)
        for index, result in enumerate(results if start < count else ()):
            if result is None or (result.__class__ is list and not result) or (
                    result.__class__ is Event and not _sound_half(result)):
                run(results, offsets, sources, partitions, start, index, slow, light)
                slow(index)
                start = index + 1
            elif sources[index] != sources[start] or (
                    table is not None and (result is TABLE_ROW) is not (results[start] is TABLE_ROW)):
                run(results, offsets, sources, partitions, start, index, slow, light)
                start = index
        run(results, offsets, sources, partitions, start, count, slow, light)
        if declared:
            slow(len(results))  # the declarations left (no message at that index)

    def _interleaved(self, slow: Any, declared: list[tuple], offsets: Any, sources: list) -> Any:
        """``slow`` that first hands the sink the batch's declarations up to its message, and has the
        dialect forget its last declarations; ``slow(len(results))`` hands the rest only."""
        sink, dialect, count = self.sink, self._given(), len(sources)
        name = dialect.name
        at = 0

        def decoded_alone(index: int) -> None:
            nonlocal at
            while at < len(declared) and declared[at][0] <= index:
                place, table, columns = declared[at]
                sink.types(name, sources[place], offsets[place], table, columns)
                at += 1
            if index < count:
                dialect.forget_declarations()
                slow(index)

        return decoded_alone

    def _run(self, results: list, offsets: Any, sources: list, partitions: list, lo: int, hi: int,
             slow: Any, light: Any) -> None:
        """Messages ``lo`` to ``hi`` (one source) as one Arrow table, with the update halves
        among them and their places; a message whose rows the frame cannot hold is decoded alone instead,
        where the guard names the field. A short run goes to the sink as events: an Arrow table of a few
        rows costs more than them."""
        if lo >= hi:
            return
        name, sink = self._given().name, self.sink
        if hi - lo <= _SHORT_RUN:
            for index in range(lo, hi):
                result = results[index]
                if result.__class__ is Event:
                    sink.read(name, 1)
                    sink.half(light(index), name, result)
                    continue
                if result is _PAIRED_AWAY:
                    sink.read(name, 1)
                    sink.events(light(index), name, [])
                    continue
                events = [result] if isinstance(result, tuple) else result  # a tuple or a FastRow: one event
                if any(row_problem(row) for row in events):
                    slow(index)
                else:
                    sink.read(name, 1)
                    sink.events(light(index), name, [Event(*row) for row in events])
            return
        rows: list[tuple] = []
        row_offsets: list[int] = []
        firsts: list[bool] = []
        halves: list[tuple] = []
        for index in range(lo, hi):
            result = results[index]
            kind = result.__class__
            if kind is FastRow or kind is tuple:
                rows.append(result)
                row_offsets.append(offsets[index])
                firsts.append(True)
            elif kind is Event:
                halves.append((len(rows), light(index), name, result))
            elif result is not _PAIRED_AWAY:
                rows.extend(result)
                row_offsets.extend([offsets[index]] * len(result))
                firsts.extend([True] + [False] * (len(result) - 1))
        try:
            table = event_table(rows)
        except Exception:
            self._split(results, offsets, sources, partitions, lo, hi, slow, light)
            return
        sink.read(name, hi - lo)
        sink.rows(table, name, sources[lo], row_offsets, hi - lo - len(halves),
                  _run_partition(partitions, lo, hi, results), halves, firsts)

    def _split(self, results: list, offsets: Any, sources: list, partitions: list, lo: int, hi: int,
               slow: Any, light: Any) -> None:
        bad = [index for index in range(lo, hi) if results[index].__class__ is not Event
               and results[index] is not _PAIRED_AWAY
               and any(row_problem(row) for row in ([results[index]] if isinstance(results[index], tuple)
                                                   else results[index]))]
        if not bad:  # the rule missed what Arrow refused: every message of the run goes alone
            for index in range(lo, hi):
                slow(index)
            return
        start = lo
        for index in bad:
            self._run(results, offsets, sources, partitions, start, index, slow, light)
            slow(index)
            start = index + 1
        self._run(results, offsets, sources, partitions, start, hi, slow, light)

    def hint(self, msg: Message) -> str:
        """`` (it looks like a X message)`` when another dialect explains the message better."""
        if self.dialect is None:
            return ""
        return family_hint(msg.value, self.dialect, self._dialects())


class _TableRuns:
    """:meth:`MessageDecoder._run` for a batch decoder's results where :data:`~cdckit.frame.TABLE_ROW` stands for
    the next row of its ``table`` (``decode_columns``): a run of those goes to the sink as a slice of the table
    (their rows passed the frame's checks as Arrow built it), any other run as :meth:`MessageDecoder._run` takes it.
    Runs come in input order, each all table rows or none."""

    def __init__(self, decoder: MessageDecoder, table: pa.Table) -> None:
        self.decoder, self.table, self.at = decoder, table, 0

    def run(self, results: list, offsets: Any, sources: list, partitions: list, lo: int, hi: int,
            slow: Any, light: Any) -> None:
        if lo >= hi:
            return
        if results[lo] is not TABLE_ROW:
            self.decoder._run(results, offsets, sources, partitions, lo, hi, slow, light)
            return
        count, decoder = hi - lo, self.decoder
        rows, self.at = self.table.slice(self.at, count), self.at + count
        name = decoder._given().name
        decoder.sink.read(name, count)
        decoder.sink.rows(rows, name, sources[lo], list(offsets[lo:hi]), count,
                          _run_partition(partitions, lo, hi), [], [True] * count)


def _run_partition(partitions: Any, lo: int, hi: int, results: list | None = None) -> Any:
    """The partition of messages ``lo`` to ``hi`` as :meth:`Sink.rows` takes it: one value when they share it,
    else one per row, the rows being ``results[lo:hi]`` (a row, a list of rows or an update half, which has
    none) or one per message when ``results`` is None.

    >>> _run_partition([1, 1], 0, 2), _run_partition([0, 1, 2], 0, 3, [(), [(), ()], Event("u", "u")])
    (1, [0, 1, 1])
    """
    part = list(partitions[lo:hi])
    if part.count(part[0]) == len(part):
        return part[0]
    if results is None:
        return part
    out: list = []
    for index in range(lo, hi):
        result = results[index]
        kind = result.__class__
        if kind is FastRow or kind is tuple:
            out.append(partitions[index])
        elif kind is not Event and result is not _PAIRED_AWAY:
            out.extend([partitions[index]] * len(result))
    return out


class _PairedAway:
    """The result of a before half the decoder paired with the after half after it (:func:`_pair_adjacent`)."""

    __slots__ = ()


#: Stands, among a batch decoder's results, for a before half paired with the next message (no row of its own).
_PAIRED_AWAY = _PairedAway()


def _pair_adjacent(results: list, sink: Sink, dialect: str) -> None:
    """Each before half of ``results`` followed by its after half becomes one update in the after half's
    place (the before half's result :data:`_PAIRED_AWAY`), as ``sink`` would pair them: only when no half
    of their identity waits in the sink (:meth:`Sink.waiting`) nor came earlier in the block unpaired, and
    until the first message decoded alone (it may be a half of any identity).

    >>> class Waiting(Sink):
    ...     def waiting(self, dialect, event): return False
    >>> halves = [Event("update", "U", table="t", seq="1", before='{"a":1}', half="before"),
    ...           Event("update", "U", table="t", seq="1", after='{"a":2}', half="after")]
    >>> results = list(halves); _pair_adjacent(results, Waiting(), "d")
    >>> results[0] is _PAIRED_AWAY, results[1].before, results[1].after
    (True, '{"a":1}', '{"a":2}')
    >>> results = list(halves); _pair_adjacent(results, Sink(), "d"); results == halves
    True
    """
    count = len(results)
    if count < 2 or sink.waiting(dialect, Event("update", "")) is None:
        return
    unpaired: set = set()
    index = 0
    while index < count:
        result = results[index]
        if result is None or (result.__class__ is list and not result):
            return  # decoded alone: what it makes is not known here
        if result.__class__ is not Event:
            index += 1
            continue
        if not _sound_half(result):
            return
        ident = identity(result)
        after = results[index + 1] if index + 1 < count else None
        if result.half == "before" and after.__class__ is Event and after.half == "after" and \
                identity(after) == ident and ident not in unpaired and _sound_half(after) and \
                not sink.waiting(dialect, result):
            paired = merge(result, after)
            sink.paired(dialect, paired)
            results[index] = _PAIRED_AWAY
            results[index + 1] = FastRow._make(event_row(paired))
            index += 2
            continue
        unpaired.add(ident)
        index += 1


def _first(item: tuple) -> Any:
    return item[0]


def _sound_half(event: Event) -> bool:
    """True when a batch decoder's :class:`Event` is an update half the frame can hold."""
    return event.half in ("before", "after") and row_problem(event_row(event)) is None


#: Runs of at most this many messages go to the sink as events, not as an Arrow table.
_SHORT_RUN = 16


def _key_text(key: Any) -> Any:
    """A Kafka key (bytes, text or None) as the batch decoders take it."""
    return bytes(key) if isinstance(key, (bytearray, memoryview)) else key


def _explained(explain: Any, value: Any) -> str | None:
    """A reason from ``explain`` (a :mod:`cdckit.shapes` rule), or None: explaining must never stop a read."""
    try:
        return explain(value)
    except Exception:
        return None


def family_hint(value: Any, dialect: Dialect, dialects: list[Dialect]) -> str:
    """Which other dialect ``value`` looks like, unless it is ``dialect``'s own family (a subclass)."""
    matches = score_message(value, dialects)
    if not matches or matches[0][0] == dialect.name:
        return ""
    best = registry.get(matches[0][0])
    if issubclass(best, type(dialect)) or isinstance(dialect, best):
        return ""
    return f" (it looks like a {best.name} message)"
