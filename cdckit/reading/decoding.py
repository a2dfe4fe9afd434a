"""The decode loop both engines run: messages in, events, halves, skips and bad messages out.

:class:`MessageDecoder` runs one dialect over messages (one by one, or a block at a time: JSON Lines,
table rows or Kafka records through the dialect's batch decoder, ``decode_lines``, ``decode_columns`` or
``decode_rows``, their results handed to the sink in runs) and tells a
:class:`~cdckit.reading.sinks.Sink` what became of each message. ``cdckit.read`` (pandas) and
``cdckit.spark`` (inside Spark tasks) differ only in their sinks.

Kept whole: the decode loop, one message's guard and the batch paths that hand every message they cannot
take back to it, is one concept with one state (the dialect, the sink, the batch's declarations and table);
split in two, each half declared the other's attributes.

>>> from cdckit.io import LineBlock, Message
>>> from cdckit.dialects import registry
>>> class Printing(Sink):
...     def events(self, msg, dialect, events): print(msg.offset, [e.op for e in events])
...     def bad(self, msg, dialect, reason, code, cause=None): print(msg.offset, "bad:", reason)
...     def rows(self, table, dialect, source, offsets, messages, partition, halves, firsts):
...         print(dialect, table.num_rows, "rows")
>>> decoder = MessageDecoder(registry.create("maxwell"), Printing())
>>> decoder.message(Message({"database": "d", "table": "t", "type": "insert", "ts": 1, "data": {"id": 1}}, "s", 0))
0 ['insert']
>>> decoder.message(Message({"type": "insert"}, "s", 1))
1 bad: missing required field data
>>> line = b'{"database": "d", "table": "t", "type": "insert", "ts": 1, "data": {"id": 1}}'
>>> decoder.block(LineBlock(0, 1, [line] * 20), "s")
maxwell 20 rows
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import msgspec
import pyarrow as pa

from ..dialects import registry, shapes
from ..dialects.base import BadMessage, Decoded, Dialect, SkipMessage
from ..dialects.options import DialectOptions, resolved
from ..errors import InvalidValue
from ..frame import TABLE_ROW, Event, FastRow, event_row, event_table, row_problem
from ..io import LineBlock, Message, parse_line, record_message, saved_records
from ..io.console import console_lines, console_message
from ..io.schema_book import unframed
from ..io.tables import RowBlock
from ..io.wire_format import Framed
from .detect import FLOOR, family_hint, score_message
from .pairing import PAIRED_AWAY, pair_adjacent, sound_half
from .sinks import Sink

__all__ = ["MessageDecoder"]


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

    def __init__(
        self,
        dialect: Dialect | None,
        sink: Sink,
        unknown: str | None = None,
        *,
        each: bool = False,
        tz: str | None = None,
        options: DialectOptions | None = None,
    ) -> None:
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
        if msg.value.__class__ is Framed or msg.key.__class__ is Framed:
            msg = unframed(msg, self.options.schemas)
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
                self.sink.skipped(
                    decoded.message, decoded.dialect, decoded.skip or f"{decoded.dialect}: message without rows"
                )
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
            code = (
                "too_deep"
                if "Recursion limit" in text
                else "invalid_utf8"
                if "surrogates not allowed" in text
                else "decoder_error"
            )
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

    def hint(self, msg: Message) -> str:
        """`` (it looks like a X message)`` when another dialect explains the message better."""
        if self.dialect is None:
            return ""
        return family_hint(msg.value, self.dialect, self._dialects())

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
            msg = console_message(
                parse_line(lines[index].strip(), source, block.first_offset + index, block.line_of(index)), separator
            )
            if partition is not None and msg.partition is None:
                msg.partition = partition
            self.message(msg)

        def light(index: int) -> Message:  # the position of a message whose half the batch decoder gave
            return Message(
                None,
                source,
                block.first_offset + index,
                raw=lines[index].strip(),
                line=block.line_of(index),
                partition=partition,
            )

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
        self._fast(
            results, range(first, first + count), [source] * count, [partition] * count, slow, light, self._batch_types
        )

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
        pair_adjacent(results, self.sink, self._given().name)
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
            return Message(
                None,
                source,
                offsets[index],
                raw=block.lines[index].strip(),
                line=block.line_of(index),
                partition=partitions[index],
            )

        self._fast(results, offsets, [source] * count, partitions, slow, light, declared)

    def _batches(self) -> bool:
        return self.dialect is not None and self.dialect.has_line_decoder

    def records(
        self, values: list, keys: list, sources: list, partitions: list, offsets: list, topics: list | None = None
    ) -> None:
        """Decode Kafka records (value and key as bytes or text; ``topics``: their topics, when known): keyless
        ones through the batch decoder."""
        count = len(values)

        def slow(index: int) -> None:
            self.message(
                record_message(
                    values[index],
                    keys[index],
                    sources[index],
                    offsets[index],
                    partitions[index],
                    None if topics is None else topics[index],
                )
            )

        keyed = self._batches() and self._given().uses_kafka_key
        chosen = [
            i
            for i in range(count)
            if (keyed or keys[i] is None) and isinstance(values[i], (bytes, bytearray)) and values[i][:1] != b"\x00"
        ]  # a framed value (Confluent's wire format) is decoded with its schema, on the slow path
        found = (
            self._batch(
                [bytes(values[i]) for i in chosen],
                [_key_text(keys[i]) for i in chosen] if keyed else None,
                None if topics is None else [topics[i] for i in chosen],
            )
            if chosen
            else None
        )
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

    def _fast(
        self,
        results: list,
        offsets: Any,
        sources: list,
        partitions: list,
        slow: Any,
        light: Any,
        declared: Sequence[tuple] = (),
    ) -> None:
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
        if (
            table is not None
            and count
            and results.count(TABLE_ROW) == count
            and sources.count(sources[0]) == count
            and partitions.count(partitions[0]) == count
        ):
            start = count  # the usual block: one run, the whole table (the loop below would find no break)
            run(results, offsets, sources, partitions, 0, count, slow, light)
        for index, result in enumerate(results if start < count else ()):
            if (
                result is None
                or (result.__class__ is list and not result)
                or (result.__class__ is Event and not sound_half(result))
            ):
                run(results, offsets, sources, partitions, start, index, slow, light)
                slow(index)
                start = index + 1
            elif sources[index] != sources[start] or (
                table is not None and (result is TABLE_ROW) is not (results[start] is TABLE_ROW)
            ):
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

    def _run(
        self, results: list, offsets: Any, sources: list, partitions: list, lo: int, hi: int, slow: Any, light: Any
    ) -> None:
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
                if result is PAIRED_AWAY:
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
            elif result is not PAIRED_AWAY:
                rows.extend(result)
                row_offsets.extend([offsets[index]] * len(result))
                firsts.extend([True] + [False] * (len(result) - 1))
        try:
            table = event_table(rows)
        except Exception:
            self._split(results, offsets, sources, partitions, lo, hi, slow, light)
            return
        sink.read(name, hi - lo)
        sink.rows(
            table,
            name,
            sources[lo],
            row_offsets,
            hi - lo - len(halves),
            _run_partition(partitions, lo, hi, results),
            halves,
            firsts,
        )

    def _split(
        self, results: list, offsets: Any, sources: list, partitions: list, lo: int, hi: int, slow: Any, light: Any
    ) -> None:
        bad = [
            index
            for index in range(lo, hi)
            if results[index].__class__ is not Event
            and results[index] is not PAIRED_AWAY
            and any(
                row_problem(row) for row in ([results[index]] if isinstance(results[index], tuple) else results[index])
            )
        ]
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


class _TableRuns:
    """:meth:`MessageDecoder._run` for a batch decoder's results where :data:`~cdckit.frame.TABLE_ROW` stands for
    the next row of its ``table`` (``decode_columns``): a run of those goes to the sink as a slice of the table
    (their rows passed the frame's checks as Arrow built it), any other run as :meth:`MessageDecoder._run` takes it.
    Runs come in input order, each all table rows or none."""

    def __init__(self, decoder: MessageDecoder, table: pa.Table) -> None:
        self.decoder, self.table, self.at = decoder, table, 0

    def run(
        self, results: list, offsets: Any, sources: list, partitions: list, lo: int, hi: int, slow: Any, light: Any
    ) -> None:
        if lo >= hi:
            return
        if results[lo] is not TABLE_ROW:
            self.decoder._run(results, offsets, sources, partitions, lo, hi, slow, light)
            return
        count, decoder = hi - lo, self.decoder
        rows, self.at = self.table.slice(self.at, count), self.at + count
        name = decoder._given().name
        decoder.sink.read(name, count)
        decoder.sink.rows(
            rows, name, sources[lo], list(offsets[lo:hi]), count, _run_partition(partitions, lo, hi), [], [True] * count
        )


def _run_partition(partitions: Any, lo: int, hi: int, results: list | None = None) -> Any:
    """The partition of messages ``lo`` to ``hi`` as :meth:`cdckit.reading.sinks.Sink.rows` takes it: one value
    when they share it,
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
        elif kind is not Event and result is not PAIRED_AWAY:
            out.extend([partitions[index]] * len(result))
    return out


def _first(item: tuple) -> Any:
    return item[0]


#: Runs of at most this many messages go to the sink as events, not as an Arrow table.
_SHORT_RUN = 16


def _key_text(key: Any) -> Any:
    """A Kafka key (bytes, text or None) as the batch decoders take it."""
    return bytes(key) if isinstance(key, (bytearray, memoryview)) else key


def _explained(explain: Any, value: Any) -> str | None:
    """A reason from ``explain`` (a :mod:`cdckit.dialects.shapes` rule), or None: explaining must never stop a read."""
    try:
        return explain(value)
    except Exception:
        return None
