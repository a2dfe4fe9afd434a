"""The batch half of the decode loop: blocks of lines, table rows and Kafka records through a dialect's
batch decoder (``decode_lines``, ``decode_columns``, ``decode_rows``), their results handed to the sink in runs.

:class:`BatchDecoding` is the base of :class:`~cdckit.reading.decoding.MessageDecoder`, which decodes one
message at a time (every message the batch decoder hands back goes there, through :meth:`message`).

>>> from cdckit.dialects import registry
>>> from cdckit.io import LineBlock
>>> from cdckit.reading.decoding import MessageDecoder
>>> class Printing(Sink):
...     def rows(self, table, dialect, source, offsets, messages, partition, halves, firsts):
...         print(dialect, table.num_rows, "rows")
...     def events(self, msg, dialect, events): print(msg.offset, [e.op for e in events])
>>> line = b'{"database": "d", "table": "t", "type": "insert", "ts": 1, "data": {"id": 1}}'
>>> MessageDecoder(registry.create("maxwell"), Printing()).block(LineBlock(0, 1, [line] * 20), "s")
maxwell 20 rows
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import msgspec
import pyarrow as pa

from ..dialects.base import Dialect
from ..dialects.options import DialectOptions
from ..frame import TABLE_ROW, Event, FastRow, event_table, row_problem
from ..io import LineBlock, Message, parse_line, record_message, saved_records
from ..io.console import console_lines, console_message
from ..io.tables import RowBlock
from .pairing import PAIRED_AWAY, pair_adjacent, sound_half
from .sinks import Sink

__all__ = ["BatchDecoding"]


class BatchDecoding:
    """The batch paths of :class:`~cdckit.reading.decoding.MessageDecoder` (its base): a block of messages
    through the dialect's batch decoder, the messages it hands back through :meth:`message`."""

    dialect: Dialect | None
    sink: Sink
    options: DialectOptions
    _batch_types: list[tuple]
    _batch_table: pa.Table | None

    def message(self, msg: Message) -> None:
        """Decode one message alone and tell the sink (:class:`~cdckit.reading.decoding.MessageDecoder` does)."""
        raise NotImplementedError

    def _given(self) -> Dialect:
        """The dialect given: the batch paths run only with one (:meth:`_batches`), as does settling."""
        if self.dialect is None:
            raise RuntimeError("no dialect was given: the batch paths need one")
        return self.dialect

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
    """:meth:`BatchDecoding._run` for a batch decoder's results where :data:`~cdckit.frame.TABLE_ROW` stands for
    the next row of its ``table`` (``decode_columns``): a run of those goes to the sink as a slice of the table
    (their rows passed the frame's checks as Arrow built it), any other run as :meth:`BatchDecoding._run` takes it.
    Runs come in input order, each all table rows or none."""

    def __init__(self, decoder: BatchDecoding, table: pa.Table) -> None:
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
