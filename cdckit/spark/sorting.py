"""The canonical order of a capture on Spark: seq as the pandas engine fills and ties it, arrival order, redeliveries.

These expressions are shared by the ordering report (:mod:`cdckit.spark.ordering`) and replay
(:mod:`cdckit.spark.replay_survey`), as :mod:`cdckit.analysis.ordering.sort` is by the pandas engine.

>>> from cdckit.spark import sorting
>>> callable(sorting.filled_seq)
True
"""

from __future__ import annotations

from collections.abc import Sequence

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from ..analysis.ordering.identity import REDELIVERY_IDENTITY, SNAPSHOT_PLACE
from ..analysis.ordering.sort import FIRST_AT_A_TIE, IN_MESSAGE, TIE_MARK, row_in_message_dialects
from ..dialects import registry

__all__ = [
    "message_position",
    "filled_seq",
    "tied_seq",
    "split_sources",
    "arrival_order",
    "seq_order",
    "sort_events",
    "snapshot_place",
    "redelivery_identity",
    "transaction_key",
]


def message_position() -> Column:
    """``seq`` without the place in its message where the dialect writes one, as the pandas
    ``message_positions``."""
    names = row_in_message_dialects()
    if not names:
        return F.col("seq")
    return F.when(F.col("dialect").isin(*names), F.regexp_replace("seq", IN_MESSAGE, "")).otherwise(F.col("seq"))


def _streamed(stream: Sequence[str]) -> list[Column]:
    """The ``stream`` columns that head a window's partition (a stream is a capture of its own: a missing seq is
    filled, and a shared position tied, within it); ``source`` comes coalesced after them."""
    return [F.col(c) for c in stream if c != "source"]


def filled_seq(stream: Sequence[str] = ()) -> Column:
    """``seq`` (its message position) filled from the previous arrival in the same stream, source and partition
    ('' first), as the pandas ``filled_seq`` fills it (:func:`tied_seq` adds its tie mark)."""
    arrival = (
        Window.partitionBy(*_streamed(stream), F.coalesce("source", F.lit("")), F.coalesce("partition", F.lit(-1)))
        .orderBy("offset", "_row")
        .rowsBetween(Window.unboundedPreceding, Window.currentRow)
    )
    return F.coalesce(F.last(message_position(), ignorenulls=True).over(arrival), F.lit(""))


def tied_seq(stream: Sequence[str] = ()) -> Column:
    """``_seq`` (filled) with :data:`~cdckit.analysis.ordering.sort.TIE_MARK` after the deletes that open a
    position several partitions of one source (in one stream) share, as the pandas ``filled_seq`` marks it.
    Needs ``op``, ``_row``."""
    source, partition = F.coalesce("source", F.lit("")), F.coalesce("partition", F.lit(-1))
    position = Window.partitionBy(*_streamed(stream), source, "_seq")
    run = (
        Window.partitionBy(*_streamed(stream), source, partition, "_seq")
        .orderBy("offset", "_row")
        .rowsBetween(Window.unboundedPreceding, Window.currentRow)
    )
    shared = (F.col("_seq") != "") & (F.min(partition).over(position) < F.max(partition).over(position))
    later = F.max((~F.col("op").isin(*FIRST_AT_A_TIE)).cast("int")).over(run) == 1
    return F.when(shared & later, F.concat("_seq", F.lit(TIE_MARK))).otherwise(F.col("_seq"))


def split_sources() -> Column:
    """An aggregate: whether some source has events in more than one partition."""
    source = F.coalesce("source", F.lit(""))
    return F.count_distinct(source, F.coalesce("partition", F.lit(-1))) > F.count_distinct(source)


def arrival_order() -> list[Column]:
    """Arrival order (source, partition, offset), ties in frame order (``_row``)."""
    return [F.col("source").asc(), F.col("partition").asc_nulls_first(), F.col("offset").asc(), F.col("_row").asc()]


def seq_order() -> list[Column]:
    """Seq order (``_seq``, source, partition, offset), ties in frame order."""
    return [F.col("_seq").asc(), *arrival_order()]


def sort_events(events: DataFrame, by: str = "seq") -> DataFrame:
    """The events in canonical order (see :func:`cdckit.sort_events`); the same columns."""
    if by not in ("seq", "event_time", "arrival"):
        raise ValueError(f"by must be 'seq', 'event_time' or 'arrival', not {by!r}")
    columns = events.columns
    frame = events.withColumn("_row", F.monotonically_increasing_id())
    arrival = [
        F.coalesce(F.col("source"), F.lit("")).asc(),
        F.col("partition").asc_nulls_first(),
        F.col("offset").asc(),
        F.col("_row").asc(),
    ]
    if by == "seq":
        frame = frame.withColumn("_seq", filled_seq()).withColumn("_seq", tied_seq())
        return frame.orderBy(F.col("_seq").asc(), *arrival).select(*columns)
    if by == "event_time":
        return frame.orderBy(F.col("event_time").asc_nulls_last(), *arrival).select(*columns)
    return frame.orderBy(*arrival).select(*columns)


def snapshot_place() -> Column:
    """:data:`cdckit.analysis.ordering.identity.SNAPSHOT_PLACE` (a snapshot row's source, partition and offset;
    null for other ops), from the event frame's columns (``source`` as given or coalesced to "")."""
    place = F.concat_ws(
        ":",
        F.coalesce(F.col("source"), F.lit("")),
        F.coalesce(F.col("partition").cast("string"), F.lit("")),
        F.col("offset").cast("string"),
    )
    return F.when(F.col("op") == "read", place)


def redelivery_identity() -> list[Column]:
    """The columns of :data:`~cdckit.analysis.ordering.identity.REDELIVERY_IDENTITY`, the snapshot place computed."""
    return [snapshot_place() if c == SNAPSHOT_PLACE else F.col(c) for c in REDELIVERY_IDENTITY]


def transaction_key() -> Column:
    """``txn_id`` cut to the part that names its transaction by its dialect's ``transaction_key`` (Debezium for
    PostgreSQL: ``txId`` of ``txId:LSN``), as :func:`cdckit.analysis.ordering.identity.transaction_keys` cuts it."""
    out = F.col("txn_id")
    for name, pattern in sorted(registry.transaction_keys().items()):
        cut = (F.col("dialect") == name) & F.col("txn_id").rlike(pattern)
        out = F.when(F.coalesce(cut, F.lit(False)), F.regexp_extract("txn_id", pattern, 1)).otherwise(out)
    return out
