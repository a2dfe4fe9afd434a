"""The canonical frame on Spark, from files or from a Kafka-shaped DataFrame.

The dialects run inside Spark tasks (``mapInArrow``) through the same decode
loop as ``cdckit.read`` (:mod:`cdckit.reading.decoding`); only the sink differs: here
every message becomes rows of one *combined* frame, the canonical columns plus

- ``_status``: ``event``, ``half`` (an update half waiting for its partner),
  ``skipped`` (a message that rightly produces no row) or ``quarantined``;
- ``_half``, ``_reason``, ``_code``, ``_raw``, ``_line``: what the status needs;
- ``_count``: 1 on the first row of each message, 0 on the others, so one
  aggregation gives the report.

Halves are paired after a shuffle that brings each pair together, wherever
the two messages were read. :func:`read` and :func:`decode` return the
events; :func:`quarantine` and :func:`report` give the rest of the same decode.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import pyarrow as pa

from ..collector import gc_paused
from ..dialects import registry
from ..dialects.options import DialectOptions
from ..errors import CdcError, UnknownDialectError
from ..frame import ARROW_SCHEMA, EVENT_FIELDS, Event
from ..frame_builders import FrameBuilder
from ..io import (
    LineBlock,
    Message,
    file_pieces,
    record_message,
)
from ..io.schema_book import book_for, unframed
from ..keys import Keys
from ..reading.decoding import MessageDecoder
from ..reading.detect import DEFAULT_SAMPLE, choose_for_read
from ..reading.pairing import PAIRED, Pairer, unpaired_reason
from ..reading.sinks import Sink
from .capture import SparkCapture, capture_of
from .file_units import file_units, placed_units
from .framed import look_up_schemas
from .keys import given_keys
from .session import check_workers, ship_cdckit

__all__ = ["read", "decode", "quarantine", "report", "combined", "COMBINED_COLUMNS", "COMBINED_ARROW"]

#: Bytes of a JSON Lines or text file per Spark task (larger files are cut at line ends).
SPLIT_BYTES = 64 << 20
#: Rows per Arrow batch handed to Spark.
BATCH_ROWS = 10_000

EXTRA_FIELDS = [
    pa.field("_status", pa.string()),
    pa.field("_half", pa.string()),
    pa.field("_reason", pa.string()),
    pa.field("_code", pa.string()),
    pa.field("_raw", pa.string()),
    pa.field("_line", pa.int64()),
    pa.field("_count", pa.int64()),
]
_TIME_US = pa.timestamp("us", tz="UTC")
#: The Arrow schema of the combined frame (Spark keeps times in microseconds).
COMBINED_ARROW = pa.schema(
    [pa.field(f.name, _TIME_US if pa.types.is_timestamp(f.type) else f.type) for f in ARROW_SCHEMA] + EXTRA_FIELDS
)
COMBINED_COLUMNS = [f.name for f in COMBINED_ARROW]
_EXTRA_ARROW = pa.schema(EXTRA_FIELDS)
_EMPTY_ROW = (None,) * len(EVENT_FIELDS)
_EVENT = ("event", None, None, None, None, None, 1)
_MORE = ("event", None, None, None, None, None, 0)


def spark_schema(arrow: pa.Schema) -> Any:
    from pyspark.sql.pandas.types import from_arrow_schema

    return from_arrow_schema(arrow)


class _CombinedSink(Sink):
    """Collects the combined rows of a Spark task and hands them out as Arrow batches.

    Update halves wait for the shuffle that pairs them (:func:`_paired`),
    unless ``pair_here``: then no dialect of the read splits updates, and the
    odd half a message-by-message detection brought in (a DataHub half in a
    Maxwell file) is paired within the task, as :func:`finish` says.
    """

    def __init__(self, pair_here: bool = False) -> None:
        self.builder = FrameBuilder()
        #: The extra columns of the rows made one by one, as tuples of :data:`EXTRA_FIELDS` values ...
        self.extras: list[tuple] = []
        # ... and of all rows, in order: Arrow tables (the extras sealed) and each batch's run of events
        self._extra_tables: list[pa.Table] = []
        self.pairer = Pairer() if pair_here else None

    def __len__(self) -> int:
        return len(self.builder)

    def events(self, msg: Message, dialect: str, events: list[Event]) -> None:
        for event in events:
            self.builder.add(event, dialect, msg.source, msg.offset, msg.partition)
        self.extras.append(_EVENT)
        self.extras.extend([_MORE] * (len(events) - 1))

    def rows(
        self,
        table: pa.Table,
        dialect: str,
        source: str,
        offsets: list[int],
        messages: int,
        partition: int | list[int | None] | None,
        halves: Sequence[tuple] = (),
        firsts: list[bool] | None = None,
    ) -> None:
        start = 0
        for position, msg, _, event in halves:  # each half in its place, between the rows around it
            self._rows(
                table.slice(start, position - start),
                dialect,
                source,
                offsets[start:position],
                None if firsts is None else firsts[start:position],
                partition[start:position] if isinstance(partition, list) else partition,
            )
            self.half(msg, dialect, event)
            start = position
        self._rows(
            table.slice(start),
            dialect,
            source,
            offsets[start:],
            None if firsts is None else firsts[start:],
            partition[start:] if isinstance(partition, list) else partition,
        )  # a list: one per row

    def _rows(
        self,
        table: pa.Table,
        dialect: str,
        source: str,
        offsets: list[int],
        firsts: list[bool] | None,
        partition: int | list[int | None] | None,
    ) -> None:
        if not table.num_rows:
            return
        self.builder.add_table(table, dialect, source, offsets, partition)
        self._seal_extras()
        self._extra_tables.append(_event_extras(offsets, firsts))

    def half(self, msg: Message, dialect: str, event: Event) -> None:
        if self.pairer is None:
            self.builder.add(event, dialect, msg.source, msg.offset, msg.partition)
            self.extras.append(("half", event.half, None, None, msg.raw_text(), msg.line, 1))
            return
        paired = self.pairer.offer(event, msg, dialect)
        if paired is not None:
            merged, after, before = paired
            self.builder.add(merged, dialect, after.source, after.offset, after.partition)
            self.extras.append(_EVENT)
            self.builder.add_row(_EMPTY_ROW, dialect, before.source, before.offset, before.partition)
            self.extras.append(("skipped", None, PAIRED, None, None, before.line, 1))

    def finish(self) -> None:
        """The end of the task: halves paired here that never met their partner are quarantined."""
        if self.pairer is None:
            return
        for event, msg in self.pairer.drain():
            self.bad(msg, None, unpaired_reason(event), "unpaired_half")

    def skipped(self, msg: Message, dialect: str, reason: str) -> None:
        self.builder.add_row(_EMPTY_ROW, dialect, msg.source, msg.offset, msg.partition)
        self.extras.append(("skipped", None, reason, None, None, msg.line, 1))

    def unskip(self, msg: Message, dialect: str, reason: str) -> None:
        # a skipped row counting -1: the report sums the counts (the first row may be in an earlier batch)
        self.builder.add_row(_EMPTY_ROW, dialect, msg.source, msg.offset, msg.partition)
        self.extras.append(("skipped", None, reason, None, None, msg.line, -1))

    def bad(
        self, msg: Message, dialect: str | None, reason: str, code: str, *, cause: BaseException | None = None
    ) -> None:
        self.builder.add_row(_EMPTY_ROW, dialect, msg.source, msg.offset, msg.partition)
        self.extras.append(("quarantined", None, reason, code, msg.raw_text(), msg.line, 1))

    def _seal_extras(self) -> None:
        if self.extras:
            arrays = [pa.array(values, field.type) for values, field in zip(zip(*self.extras), EXTRA_FIELDS)]
            self._extra_tables.append(pa.Table.from_arrays(arrays, schema=_EXTRA_ARROW))
            self.extras = []

    def take(self) -> pa.RecordBatch:
        """Every row held, as one batch of :data:`COMBINED_ARROW`."""
        table = self.builder.take(len(self.builder))
        self._seal_extras()
        extras = pa.concat_tables(self._extra_tables) if self._extra_tables else _EXTRA_ARROW.empty_table()
        self._extra_tables = []
        return _combined_batch(table, extras)


def _event_extras(offsets: Any, firsts: list[bool] | None) -> pa.Table:
    """The extra columns of a run of events: status ``event``, and ``_count`` 1 on the first row of each
    message (``firsts``; by default each row whose offset differs from the row before), 0 on the others.

    >>> _event_extras([4, 4, 5], None).column("_count").to_pylist()
    [1, 0, 1]
    """
    import numpy as np

    count = len(offsets)
    if firsts is None:
        at = np.asarray(offsets, dtype=np.int64)
        first = np.empty(count, dtype=bool)
        first[:1] = True
        np.not_equal(at[1:], at[:-1], out=first[1:])
    else:
        first = np.asarray(firsts, dtype=bool)
    arrays = [pa.repeat("event", count).cast(pa.string())]
    arrays += [pa.nulls(count, field.type) for field in EXTRA_FIELDS[1:-1]]
    arrays.append(pa.array(first.astype(np.int64)))
    return pa.Table.from_arrays(arrays, schema=_EXTRA_ARROW)


def _combined_batch(table: pa.Table, extras: pa.Table) -> pa.RecordBatch:
    import pyarrow.compute as pc

    arrays = []
    for column in table.columns:
        array = column.combine_chunks()
        arrays.append(pc.cast(array, _TIME_US, safe=False) if pa.types.is_timestamp(array.type) else array)
    arrays += [column.combine_chunks() for column in extras.columns]
    return pa.RecordBatch.from_arrays(arrays, schema=COMBINED_ARROW)


# ---------------------------------------------------------------- reading files


def _unit_reader(options: DialectOptions, units: list[dict[str, Any]]):
    """The task function of :func:`read`: decode ``units[i]`` for each ``i`` of its input (a ``spark.range``
    column), the dialects following ``options`` (the same for every task)."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            for index in batch.column(0).to_pylist():
                batches_of_unit = _decode_unit(units[index], options)
                while True:
                    with gc_paused():
                        decoded = next(batches_of_unit, None)
                    if decoded is None:
                        break
                    yield decoded

    return run


def _decode_unit(unit: dict[str, Any], options: DialectOptions) -> Iterator[pa.RecordBatch]:
    sink = _CombinedSink(pair_here=bool(unit["pair_here"]))
    dialect = registry.create(unit["dialect"], options=options) if unit["dialect"] else None
    decoder = MessageDecoder(dialect, sink, unit["unknown"], each=bool(unit["each"]), options=options)
    pieces = file_pieces(
        unit["path"],
        unit["container"],
        unit["start"],
        unit["end"],
        unit["first_offset"],
        unit["first_line"],
        unit["encoding"],
        options.key_separator,
    )
    for piece in pieces:
        if isinstance(piece, LineBlock):
            decoder.block(piece, unit["path"])
        else:
            decoder.message(piece)
        if len(sink) >= BATCH_ROWS:
            yield sink.take()
    yield from _last_batches(decoder, sink)


def _last_batches(decoder: MessageDecoder, sink: _CombinedSink) -> Iterator[pa.RecordBatch]:
    """What a task's decoder and sink still hold when its input ends."""
    decoder.finish()
    sink.finish()
    if len(sink):
        yield sink.take()


_UNIT_FIELDS = [
    "path",
    "container",
    "dialect",
    "unknown",
    "start",
    "end",
    "first_offset",
    "first_line",
    "encoding",
    "each",
    "pair_here",
]


def read(
    spark: Any,
    path: Any,
    dialect: str | None = None,
    *,
    tz: str | None = None,
    container: str | None = None,
    split_bytes: int = SPLIT_BYTES,
    split_messages: int | None = None,
    sample: int = DEFAULT_SAMPLE,
    capture: bool = False,
    unavailable_value: str | tuple[str, ...] | list[str] = (),
    keys: Keys | None = None,
    key_separator: str | None = None,
    schema_registry: str | None = None,
    schema_registry_config: dict[str, Any] | None = None,
    schemas: str | None = None,
) -> Any:
    """Decode files into a Spark DataFrame with exactly the canonical columns (a
    :class:`~cdckit.spark.capture.SparkCapture` of events, quarantine and report when ``capture=True``).

    ``path`` is a file, directory or glob readable by Python on the driver and
    the executors (local disk, NFS...); for data in HDFS or object stores read
    it with Spark and use :func:`decode`. Each file's dialect is detected on
    the driver from its first ``sample`` messages unless ``dialect`` is given.
    JSON Lines and text files larger than ``split_bytes`` are cut at line
    ends into several tasks (``split_messages`` cuts every N messages instead,
    for tests); offsets stay those of the whole file. ``tz``,
    ``unavailable_value``, ``keys``, ``key_separator`` and the schemas of framed records (``schema_registry``,
    ``schema_registry_config``, ``schemas``) are those of :func:`cdckit.read` (keys
    given with :func:`cdckit.spark.keys.with_keys`: one job collects the
    table names the names in ``keys`` are matched with).

    >>> from cdckit import spark as cdcspark                      # doctest: +SKIP
    >>> events = cdcspark.read(cdcspark.get_spark(), "capture.jsonl")  # doctest: +SKIP
    """
    if dialect is not None:
        registry.get(dialect)
    book = book_for(path, schema_registry, schema_registry_config, schemas)
    options = DialectOptions(tz=tz, unavailable_value=unavailable_value, key_separator=key_separator, schemas=book)
    ship_cdckit(spark)
    check_workers(spark)
    parallelism = spark.sparkContext.defaultParallelism if getattr(spark, "sparkContext", None) else 1
    units = file_units(path, dialect, options, container, split_bytes, split_messages, sample, parallelism)
    if not units:
        raise CdcError(f"nothing to read in {path}")
    units = placed_units(spark, units, parallelism)
    # halves are paired after a shuffle only where two tasks may hold the halves of one update; one task
    # (a file not cut in pieces: most captures) pairs its own, and no shuffle is planned
    splits = len(units) > 1 and any(registry.flag(u["dialect"], "splits_updates") for u in units)
    units = [{f: dict(unit, pair_here=not splits)[f] for f in _UNIT_FIELDS} for unit in units]
    # one row per task, made in the JVM (Spark Connect too): the unit descriptions travel with the task
    # function, whose pickle a stage ships once, and no Python stage builds the input rows
    tasks = spark.range(0, len(units), 1, len(units))
    all_rows = tasks.mapInArrow(_unit_reader(options, units), spark_schema(COMBINED_ARROW))
    return _result(given_keys(_paired(all_rows) if splits else all_rows, keys), capture)


# ---------------------------------------------------------------- decoding a Kafka-shaped DataFrame


def _decode_records(dialect_name: str | None, options: DialectOptions, unknown: str | None, each: bool):
    """The task function of :func:`decode`. A ``whole_files`` dialect gets a fresh instance for each topic
    partition (whose rows come together, in offset order): what it remembers of one stream must not reach
    the next."""
    whole = registry.flag(dialect_name, "whole_files")

    def new_decoder(sink: _CombinedSink) -> MessageDecoder:
        dialect = registry.create(dialect_name, options=options) if dialect_name else None
        return MessageDecoder(dialect, sink, unknown, each=each, options=options)

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        sink = _CombinedSink(pair_here=not registry.flag(dialect_name, "splits_updates"))
        decoder = new_decoder(sink)
        stream = None
        for batch in batches:
            columns = batch.to_pydict()
            runs = _stream_runs(columns["source"], columns["partition"]) if whole else [(0, batch.num_rows)]
            for start, end in runs:
                if whole and stream != (columns["source"][start], columns["partition"][start]):
                    if stream is not None:
                        decoder.finish()
                        decoder = new_decoder(sink)
                    stream = (columns["source"][start], columns["partition"][start])
                with gc_paused():
                    decoder.records(
                        *(
                            columns[name][start:end]
                            for name in ("value", "key", "source", "partition", "offset", "topic")
                        )
                    )
            if len(sink) >= BATCH_ROWS:
                yield sink.take()
        yield from _last_batches(decoder, sink)

    return run


def _stream_runs(sources: list, partitions: list) -> list[tuple[int, int]]:
    """``(start, end)`` of each run of rows with one source and partition.

    >>> _stream_runs(["a", "a", "b"], [0, 0, 0])
    [(0, 2), (2, 3)]
    """
    runs, start = [], 0
    for index in range(1, len(sources) + 1):
        if index == len(sources) or (sources[index], partitions[index]) != (sources[start], partitions[start]):
            runs.append((start, index))
            start = index
    return runs


def decode(
    df: Any,
    value_col: str = "value",
    key_col: str | None = None,
    dialect: str | None = None,
    *,
    tz: str | None = None,
    sample: int = DEFAULT_SAMPLE,
    capture: bool = False,
    unavailable_value: str | tuple[str, ...] | list[str] = (),
    keys: Keys | None = None,
    schema_registry: str | None = None,
    schema_registry_config: dict[str, Any] | None = None,
    schemas: str | None = None,
) -> Any:
    """Decode a DataFrame of messages (Kafka-shaped) into the canonical Spark DataFrame (a
    :class:`~cdckit.spark.capture.SparkCapture` when ``capture=True``).

    ``value_col`` holds the messages (binary or string). ``key_col`` the Kafka
    keys (default: the ``key`` column when there is one). ``topic``,
    ``partition`` and ``offset`` columns, when present, become ``source``,
    ``partition`` and ``offset``; without an ``offset`` column each row gets
    a unique increasing id. The dialect is detected on the driver from the
    first ``sample`` rows unless given. A dialect whose messages depend on
    the ones before them (``whole_files``: wal2json, test_decoding) decodes
    each topic partition in one task, in offset order. ``tz``,
    ``unavailable_value`` and ``keys`` are those of :func:`cdckit.read` (as for :func:`read`).

    Framed keys and values (Avro, Protobuf or JSON Schema in Confluent's wire format, as
    ``spark.read.format("kafka")`` gives them) are decoded with the schemas of ``schema_registry`` (its client's
    settings in ``schema_registry_config``) or the folder ``schemas``: the driver looks up every schema id the
    frame's records use, once, and the tasks take the schemas with them (executors need not reach the
    registry). A record whose schema is found nowhere is quarantined with the id in its reason.

    >>> raw = spark.read.format("kafka").option("subscribe", "shop").load()   # doctest: +SKIP
    >>> events = cdcspark.decode(raw, dialect="debezium")                     # doctest: +SKIP
    """
    from pyspark.sql import functions as F

    book = book_for(None, schema_registry, schema_registry_config, schemas)
    spark = df.sparkSession
    ship_cdckit(spark)
    check_workers(spark)
    columns = set(df.columns)
    if key_col is None and "key" in columns:
        key_col = "key"
    prepared = df.select(
        F.col(value_col).cast("binary").alias("value"),
        (F.col(key_col).cast("binary") if key_col else F.lit(None).cast("binary")).alias("key"),
        (F.col("topic").cast("string") if "topic" in columns else F.lit("<dataframe>")).alias("source"),
        (F.col("partition").cast("long") if "partition" in columns else F.lit(None).cast("long")).alias("partition"),
        (F.col("offset").cast("long") if "offset" in columns else F.monotonically_increasing_id()).alias("offset"),
        (F.col("topic").cast("string") if "topic" in columns else F.lit(None).cast("string")).alias("topic"),
    )
    if book is not None:
        look_up_schemas(prepared, book)
    options = DialectOptions(tz=tz, unavailable_value=unavailable_value, schemas=book)
    unknown = None
    each = dialect is None
    if dialect is None:
        head = [
            unframed(record_message(r["value"], r["key"], r["source"], r["offset"], r["partition"], r["topic"]), book)
            for r in prepared.limit(sample).collect()
        ]
        detection = choose_for_read(head, registry.all_dialects(options=options))
        if isinstance(detection, UnknownDialectError):
            unknown = detection.brief
        else:
            dialect = detection.dialect
    else:
        registry.get(dialect)
    if registry.flag(dialect, "whole_files"):
        # each message depends on those before it: one task per topic partition, in offset order
        prepared = prepared.repartition("source", "partition").sortWithinPartitions("source", "partition", "offset")
    all_rows = prepared.mapInArrow(_decode_records(dialect, options, unknown, each), spark_schema(COMBINED_ARROW))
    splits = registry.flag(dialect, "splits_updates")
    return _result(given_keys(_paired(all_rows) if splits else all_rows, keys), capture)


# ---------------------------------------------------------------- pairing halves across tasks

_IDENT = ["dialect", "database", "schema", "table", "seq"]


def _paired(all_rows: Any) -> Any:
    """Bring each update's halves together (one shuffle) and join them; the rest passes through."""
    shuffled = all_rows.repartition(*_IDENT).sortWithinPartitions("source", "partition", "offset")
    return shuffled.mapInArrow(_pair_partition, spark_schema(COMBINED_ARROW))


def _pair_partition(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """Spark task: join the update halves of one partition (first in, first out); the rest passes through."""
    import pyarrow.compute as pc

    pairer = Pairer()
    sink = _CombinedSink()
    for batch in batches:
        is_half = pc.fill_null(pc.equal(batch.column("_status"), "half"), False)
        rest = batch.filter(pc.invert(is_half))
        if rest.num_rows:
            yield rest
        halves = batch.filter(is_half)
        for name in ("event_time", "emit_time"):  # to integer microseconds, for Event
            index = halves.schema.get_field_index(name)
            halves = halves.set_column(index, name, pc.cast(halves.column(name), pa.int64()))
        for row in halves.to_pylist():
            fields: dict[str, Any] = {
                f: _ns(row[f]) if f in ("event_time", "emit_time") else row[f] for f in EVENT_FIELDS
            }
            event = Event(**fields, half=row["_half"])
            paired = pairer.offer(event, row, row["dialect"])
            if paired is None:
                continue
            merged, after_row, before_row = paired
            sink.builder.add(
                merged, after_row["dialect"], after_row["source"], after_row["offset"], after_row["partition"]
            )
            sink.extras.append(_EVENT)
            _add_marker(sink, before_row, "skipped", PAIRED, None, None)
        if len(sink) >= BATCH_ROWS:
            yield sink.take()
    for event, row in pairer.drain():
        _add_marker(sink, row, "quarantined", unpaired_reason(event), row["_raw"], "unpaired_half")
    if len(sink):
        yield sink.take()


def _add_marker(
    sink: _CombinedSink, row: dict[str, Any], status: str, reason: str, raw: str | None, code: str | None
) -> None:
    sink.builder.add_row(_EMPTY_ROW, row["dialect"], row["source"], row["offset"], row["partition"])
    sink.extras.append((status, None, reason, code, raw, row["_line"], 1))


def _ns(micros: int | None) -> int | None:
    return None if micros is None else micros * 1_000


# ---------------------------------------------------------------- the events, the quarantine, the report


def _result(all_rows: Any, capture: bool) -> Any:
    found = SparkCapture(all_rows)
    return found if capture else found.remembered()


def combined(events: Any) -> Any:
    """The combined frame (events, skipped and quarantined messages) behind events from :func:`read`/:func:`decode`
    (or their ``capture=True`` result)."""
    return capture_of(events).combined


def quarantine(events: Any) -> Any:
    """The quarantined messages of the decode behind ``events``: the columns of the pandas quarantine."""
    return capture_of(events).quarantine


def report(events: Any) -> dict[str, Any]:
    """The same accounting as ``cdckit.read``'s report, for the decode behind ``events`` (one Spark job)."""
    return capture_of(events).report
