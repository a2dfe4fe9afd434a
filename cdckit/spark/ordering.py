"""Order of a capture on Spark, in Spark SQL: the canonical sort and the ordering report.

Every rule of :mod:`cdckit.analysis.ordering` is written here as DataFrame
expressions (window functions over the events of one row key, table, stream
or partition); no Python worker runs, and only the finding rows (few by
construction) and per-capture metadata (the dialects present) reach the
driver. The pandas report is the reference: the same rows come out.

>>> from cdckit.spark import ordering
>>> sorted(ordering.STREAMS)
['capture', 'partition', 'source']
"""

from __future__ import annotations

from typing import Any

import pandas as pd
from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F
from pyspark.sql import types as T

from ..analysis.ordering.catalogue import FINDING_COLUMNS, LAG_COLUMNS, REPEAT_CAUSES, keyless_detail
from ..analysis.ordering.identity import ROW_KEY, STREAMS, stream_columns
from ..analysis.ordering.kernels import HEARTBEAT_FACTOR
from ..analysis.ordering.report import OrderReport, report_from_rows
from ..dialects import registry
from ..frame import CHANGE_OPS
from ..values import none_if_missing
from . import replay
from .columns import table_name_column
from .sorting import (
    arrival_order,
    filled_seq,
    message_position,
    redelivery_identity,
    seq_order,
    snapshot_place,
    sort_events,
    split_sources,
    tied_seq,
    transaction_key,
)
from .transaction_findings import transaction_rows

__all__ = [
    "sort_events",
    "order_report",
    "narrow",
    "filled_seq",
    "message_position",
    "tied_seq",
    "split_sources",
    "dialect_flags",
    "snapshot_place",
    "redelivery_identity",
    "STREAMS",
]

_SPARK_TYPES = {"string": T.StringType(), "Int64": T.LongType(), "float64": T.DoubleType()}
#: Extra columns finding frames carry to the driver, where the detail texts are written.
_EXTRAS = {"_dialect": T.StringType(), "_usual": T.DoubleType()}


def _digest(column: str) -> Column:
    """A 96-bit fingerprint of an image text (null stays null): images are compared by it, not carried whole."""
    return F.when(F.col(column).isNull(), F.lit(None)).otherwise(F.struct(F.xxhash64(column), F.hash(column)))


def narrow(events: DataFrame, fill: bool = True, split: bool = True) -> DataFrame:
    """The narrow frame of :func:`cdckit.analysis.ordering.narrow.narrow`, with ``_row`` (frame order), the images
    (``before``, ``after``) as fingerprints and ``txn_id`` cut (:func:`transaction_key`).

    ``fill=False`` when no event lacks a ``seq``: ``_seq`` is then ``seq``, and no window over sources is needed;
    ``split=False`` when no source has two partitions: no position is then shared by partitions (:func:`tied_seq`).
    """
    frame = events.select(
        "dialect",
        table_name_column().alias("_table"),
        "key",
        F.coalesce("source", F.lit("")).alias("source"),
        "offset",
        "partition",
        "op",
        "seq",
        F.unix_micros("event_time").alias("_event_us"),
        F.unix_micros("emit_time").alias("_emit_us"),
        transaction_key().alias("txn_id"),
        _digest("before").alias("before"),
        _digest("after").alias("after"),
        F.monotonically_increasing_id().alias("_row"),
    )
    frame = frame.withColumn("_seq", filled_seq() if fill else F.coalesce(message_position(), F.lit("")))
    return frame.withColumn("_seq", tied_seq()) if split else frame


def dialect_flags(dialects: list[Any], flag: str) -> list[str]:
    """The dialects among ``dialects`` whose class sets ``flag`` (names not in the registry have none)."""
    return sorted(name for name in dialects if registry.flag(name, flag))


def _isin(column: str, names: list[str]) -> Column:
    """``column IN names``, false (never null) for nulls and an empty list."""
    return F.coalesce(F.col(column).isin(*names), F.lit(False)) if names else F.lit(False)


def _rows(frame: DataFrame, finding: str | Column, **columns: Column) -> DataFrame:
    """Finding rows: every column of :data:`FINDING_COLUMNS` (and the extras), null unless given."""
    out = [(F.lit(finding) if isinstance(finding, str) else finding).alias("finding")]
    for name, kind in [*((n, _SPARK_TYPES[t]) for n, t in FINDING_COLUMNS.items() if n != "finding"), *_EXTRAS.items()]:
        out.append((columns[name] if name in columns else F.lit(None)).cast(kind).alias(name))
    return frame.select(*out)


def _at() -> dict[str, Column]:
    """The event a finding points at (its table, key and position)."""
    return {
        "table": F.col("_table"),
        "key": F.col("key"),
        "source": F.col("source"),
        "offset": F.col("offset"),
        "partition": F.col("partition"),
        "seq": F.col("seq"),
        "op": F.col("op"),
    }


def _other(event: str) -> dict[str, Column]:
    """The event a finding conflicts with, from a struct column holding its source, offset and seq."""
    return {
        "other_source": F.col(event)["source"],
        "other_offset": F.col(event)["offset"],
        "other_seq": F.col(event)["seq"],
    }


def _pointer() -> Column:
    return F.struct("source", "offset", "seq")


# --------------------------------------------------------------------------- findings


def key_findings(changes: DataFrame, stream: list[str]) -> DataFrame:
    """Redeliveries, semantic duplicates and inversions, per stream, table and key (impossible transitions and
    unmatched rows are replay's: :func:`cdckit.spark.replay.problems`).

    ``changes``: the narrow row changes. One pass: the events are partitioned
    by row key once, and each window below partitions by the key and a flag
    that keeps the rows it must not see (redeliveries, events without seq)
    apart; an event can give several findings. Events without a key form one
    group per table; their inversions are judged per row (the before image,
    else the after image). A semantic duplicate's ``detail`` is left null:
    :func:`order_report` writes its cause once it knows what replay refuses.
    """
    group = [*stream, *ROW_KEY]
    frame = changes.repartition(*group)  # every window partitions by these columns and more: one shuffle
    arrival = arrival_order()
    position = Window.partitionBy(*group, *redelivery_identity()).orderBy(*arrival)
    frame = frame.withColumn("_position_first", F.first(_pointer()).over(position)).withColumn(
        "_copy", F.col("seq").isNotNull() & (F.row_number().over(position) > 1)
    )
    partition = F.when(F.col("partition").isNull() | (F.col("partition") == 0), F.lit(-1)).otherwise(
        F.col("partition")
    )  # `partition or -1`, as the pandas engine orders a row's changes
    steps = Window.partitionBy(*group, "_copy").orderBy("_seq", "source", partition, "offset", "_row")
    previous = F.lag(F.struct("op", "before", "after", "seq", "txn_id", "source", "offset")).over(steps)
    frame = frame.withColumn("_previous", previous)
    last = F.col("_previous")
    duplicate = (  # the change of its row just before it, again: at another seq, in no other transaction
        ~F.col("_copy")
        & last.isNotNull()
        & (F.col("op") == last["op"])
        & F.col("before").eqNullSafe(last["before"])
        & F.col("after").eqNullSafe(last["after"])
        & ~F.coalesce(F.col("seq") == last["seq"], F.lit(False))
        & ~F.coalesce(F.col("txn_id") != last["txn_id"], F.lit(False))
    )
    frame = frame.withColumn("_ranked", ~F.col("_copy") & F.col("seq").isNotNull()).withColumn(
        "_image_row", F.when(F.col("key").isNull(), F.coalesce("before", "after"))
    )
    before = (  # inversions within one partition (the partitions of a topic have no arrival order between them)
        Window.partitionBy(*group, "_ranked", "partition", "_image_row")  # and per row where there is no key
        .orderBy(*arrival)
        .rowsBetween(Window.unboundedPreceding, -1)
    )
    frame = frame.withColumn(
        "_top", F.max(F.struct("_seq", "source", "partition", "offset", "_row", "seq")).over(before)
    )

    def found(name: str, when: Column, other: str) -> Column:
        pointer = F.struct(*[F.col(other)[c].alias(c) for c in ("source", "offset", "seq")])
        return F.when(when, F.struct(F.lit(name).alias("finding"), pointer.alias("other")))

    findings = F.array_compact(
        F.array(
            found("redeliveries", F.col("_copy"), "_position_first"),
            found("semantic_duplicates", duplicate, "_previous"),
            found("inversions", F.col("_ranked") & (F.col("_seq") < F.col("_top")["_seq"]), "_top"),
        )
    )
    rows = frame.select("*", F.explode(findings).alias("_found")).withColumn("_other", F.col("_found")["other"])
    return _rows(rows, F.col("_found")["finding"], **_at(), **_other("_other"))


def replayed_findings(events: DataFrame, stream: list[str]) -> DataFrame:
    """``impossible_transitions`` (keyed rows, pointing at the change of the row before) and ``unmatched_rows``
    (rows without a key): the changes replay refuses, each stream replayed on its own
    (:func:`cdckit.spark.replay.problems`), as the pandas report's :mod:`cdckit.analysis.ordering.replayed`."""
    refused = replay.problems(events, stream)
    name = F.when(F.col("key").isNull(), F.lit("unmatched_rows")).otherwise(F.lit("impossible_transitions"))
    pointed = (
        "table",
        "key",
        "source",
        "offset",
        "partition",
        "seq",
        "op",
        "other_source",
        "other_offset",
        "other_seq",
    )
    return _rows(refused, name, **{column: F.col(column) for column in pointed}, detail=F.col("problem"))


def time_findings(changes: DataFrame, stream: list[str]) -> DataFrame:
    """Per stream and table, events whose ``event_time`` is earlier than an event before them in seq order."""
    timed = changes.filter(F.col("seq").isNotNull() & F.col("_event_us").isNotNull())
    before = Window.partitionBy(*stream, "_table").orderBy(*seq_order()).rowsBetween(Window.unboundedPreceding, -1)
    top = F.max(F.struct("_event_us", "_seq", "source", "partition", "offset", "_row", "seq")).over(before)
    timed = timed.withColumn("_top", top).filter(F.col("_event_us") < F.col("_top")["_event_us"])
    return _rows(
        timed,
        "time_inversions",
        **_at(),
        **_other("_top"),
        value=(F.col("_top")["_event_us"] - F.col("_event_us")) / F.lit(1e6),
    )


def sequence_gap_findings(frame: DataFrame, contiguous: list[str], max_gap: int, stream: list[str]) -> DataFrame:
    """Missing numbers in contiguous sequences (dialects in ``contiguous``), per stream and partition."""
    numbered = frame.filter(_isin("dialect", contiguous) & F.col("seq").isNotNull() & F.col("seq").rlike(r"^[0-9]+\z"))
    by = list(dict.fromkeys([*stream, "partition"]))
    previous = F.lag(F.struct("source", "offset", "seq")).over(Window.partitionBy(*by).orderBy("_seq", "_row"))
    number = F.col("seq").try_cast(T.DecimalType(38, 0))
    missing = number - F.col("_previous")["seq"].try_cast(T.DecimalType(38, 0)) - F.lit(1)
    numbered = (
        numbered.withColumn("_previous", previous)
        .withColumn("_missing", missing)
        .filter((F.col("_missing") > 0) & (F.col("_missing") <= max_gap))
    )
    return _rows(
        numbered,
        "sequence_gaps",
        source=F.col("source"),
        offset=F.col("offset"),
        partition=F.col("partition"),
        seq=F.col("seq"),
        **_other("_previous"),
        count=F.col("_missing"),
        _dialect=F.col("dialect"),
    )


def offset_gap_findings(frame: DataFrame, split: list[str], quarantine: DataFrame | None = None) -> DataFrame:
    """Holes in offsets per source and partition; dialects that split updates in two messages are left out. A
    quarantined record (``quarantine``) holds its offset: it arrived, and is no hole."""
    kafka = frame.filter(F.col("partition").isNotNull() & ~_isin("dialect", split))
    previous = F.lag(F.struct("source", "offset")).over(
        Window.partitionBy("source", "partition").orderBy("offset", "_row")
    )
    kafka = kafka.withColumn("_previous", previous).filter(F.col("offset") - F.col("_previous")["offset"] > 1)
    kafka = kafka.withColumn("_missing", F.col("offset") - F.col("_previous")["offset"] - F.lit(1))
    if quarantine is not None:  # the few gaps against the quarantined records between their ends
        held = (
            quarantine.filter(F.col("partition").isNotNull() & F.col("offset").isNotNull())
            .select(
                F.col("source").alias("_h_source"),
                F.col("partition").alias("_h_partition"),
                F.col("offset").alias("_h_offset"),
            )
            .distinct()
        )
        inside = (
            (F.col("source") == F.col("_h_source"))
            & (F.col("partition") == F.col("_h_partition"))
            & (F.col("_h_offset") > F.col("_previous")["offset"])
            & (F.col("_h_offset") < F.col("offset"))
        )
        kafka = (
            kafka.withColumn("_gap", F.monotonically_increasing_id())
            .join(held, inside, "left")
            .groupBy("_gap", "source", "offset", "partition", "_previous", "_missing")
            .agg(F.count("_h_offset").alias("_held"))
            .withColumn("_missing", F.col("_missing") - F.col("_held"))
            .filter(F.col("_missing") > 0)
        )
    return _rows(
        kafka,
        "offset_gaps",
        source=F.col("source"),
        offset=F.col("offset"),
        partition=F.col("partition"),
        other_source=F.col("_previous")["source"],
        other_offset=F.col("_previous")["offset"],
        count=F.col("_missing"),
    )


def transaction_findings(frame: DataFrame) -> DataFrame:
    """Begins without a commit, per dialect, source and partition, in seq order.

    A begin with a ``txn_id`` waits for a commit with the same id, wherever it
    is (the last begin of an id is open when no commit has that id); a begin
    without one is closed by the next commit that closes no named begin (a
    commit whose id has no begin), last opened first: a bracket matching, read
    from running sums.
    """
    group = ["dialect", "source", "partition"]
    order = ["_seq", "offset", "_row"]
    markers = frame.filter(F.col("op").isin("begin", "commit"))
    named = F.col("txn_id").isNotNull()
    same_id = Window.partitionBy(*group, "txn_id")
    begin = F.col("op") == "begin"
    markers = markers.withColumn("_begun", F.when(named, F.max(begin.cast("int")).over(same_id) == 1)).withColumn(
        "_committed", F.when(named, F.max((~begin).cast("int")).over(same_id) == 1)
    )
    begins = markers.filter(named & begin)  # the last begin of each id
    begins = begins.withColumn("_last", F.row_number().over(same_id.orderBy(*[F.col(c).desc() for c in order])) == 1)
    open_named = begins.filter(F.col("_last") & ~F.col("_committed"))
    step = F.when(begin, F.lit(1)).otherwise(F.lit(-1))
    anonymous = markers.filter((begin & ~named) | (~begin & ~F.coalesce(F.col("_begun"), F.lit(False))))
    running = Window.partitionBy(*group).orderBy(*order).rowsBetween(Window.unboundedPreceding, Window.currentRow)
    # the rows after this one, walked back from the end: a growing frame (one to the end of the partition is
    # evaluated afresh for every row on Spark, quadratic)
    later = Window.partitionBy(*group).orderBy(*[F.col(c).desc() for c in order])
    later = later.rowsBetween(Window.unboundedPreceding, -1)
    anonymous = (
        anonymous.withColumn("_sum", F.sum(step).over(running))
        .withColumn("_depth", F.col("_sum") - F.least(F.min("_sum").over(running), F.lit(0)))
        .withColumn("_later", F.min("_depth").over(later))
    )
    open_anonymous = anonymous.filter(begin & (F.col("_later").isNull() | (F.col("_later") >= F.col("_depth"))))
    found = open_named.select(*frame.columns).unionByName(open_anonymous.select(*frame.columns))
    label = F.when(
        F.col("txn_id").isNotNull() & (F.col("txn_id") != ""), F.concat(F.lit("transaction "), "txn_id")
    ).otherwise(F.lit("a transaction without an id"))
    return _rows(
        found,
        "open_transactions",
        source=F.col("source"),
        offset=F.col("offset"),
        partition=F.col("partition"),
        seq=F.col("seq"),
        op=F.col("op"),
        detail=F.concat(label, F.lit(" begins here; no commit follows")),
    )


def heartbeat_findings(frame: DataFrame, factor: float) -> DataFrame:
    """Heartbeat intervals longer than ``factor`` times the median one, per dialect and source."""
    group = ["dialect", "source"]
    timed = frame.filter(F.col("_event_us").isNotNull())
    beating = timed.filter(F.col("op") == "heartbeat").select(*[F.col(c).alias(f"_b_{c}") for c in group]).distinct()
    timed = timed.join(F.broadcast(beating), [F.col(c).eqNullSafe(F.col(f"_b_{c}")) for c in group], "left_semi")
    other = F.coalesce(F.col("op") != "heartbeat", F.lit(True)).cast("long")
    by_time = Window.partitionBy(*group).orderBy("_event_us")
    timed = timed.withColumn(
        "_lt", F.coalesce(F.sum(other).over(by_time.rangeBetween(Window.unboundedPreceding, -1)), F.lit(0))
    ).withColumn("_le", F.sum(other).over(by_time.rangeBetween(Window.unboundedPreceding, 0)))
    beats = timed.filter(F.col("op") == "heartbeat")
    previous = F.lag(F.struct("_event_us", "source", "offset", "_le")).over(
        Window.partitionBy(*group).orderBy("_event_us", "offset", "_row")
    )
    whole = Window.partitionBy(*group)
    beats = (
        beats.withColumn("_previous", previous)
        .withColumn("_gap", F.col("_event_us") - F.col("_previous")["_event_us"])
        .withColumn("_beats", F.count(F.lit(1)).over(whole))
        .withColumn("_usual", F.percentile(F.col("_gap").cast("double"), 0.5).over(whole))
        .filter((F.col("_beats") >= 3) & (F.col("_usual") > 0) & (F.col("_gap") > F.lit(factor) * F.col("_usual")))
    )
    return _rows(
        beats,
        "heartbeat_gaps",
        source=F.col("source"),
        offset=F.col("offset"),
        op=F.col("op"),
        other_source=F.col("_previous")["source"],
        other_offset=F.col("_previous")["offset"],
        value=F.col("_gap") / F.lit(1e6),
        count=F.col("_lt") - F.col("_previous")["_le"],
        _usual=F.col("_usual"),
    )


def keyless_findings(changes: DataFrame) -> DataFrame:
    """Tables with changes that carry no key."""
    counts = changes.filter(F.col("key").isNull() & F.col("_table").isNotNull()).groupBy("_table").count()
    return _rows(counts, "keyless_tables", table=F.col("_table"), count=F.col("count"))  # detail: _details


def unpaired_findings(quarantine: DataFrame) -> DataFrame:
    """Quarantined update halves that never met their partner."""
    halves = quarantine.filter(F.col("reason_code") == "unpaired_half")
    return _rows(
        halves,
        "unpaired_halves",
        source=F.col("source"),
        offset=F.col("offset"),
        partition=F.col("partition"),
        detail=F.col("reason"),
    )


def lag_summary(frame: DataFrame) -> pd.DataFrame:
    """Per table, the distribution of ``emit_time - event_time`` in seconds (exact percentiles), as pandas."""
    timed = frame.filter(F.col("_table").isNotNull() & F.col("_event_us").isNotNull() & F.col("_emit_us").isNotNull())
    lag = (F.col("_emit_us") - F.col("_event_us")).cast("double") / F.lit(1e6)
    points = F.percentile(lag, F.array(F.lit(0.5), F.lit(0.9), F.lit(0.99)))
    summary = timed.groupBy(F.col("_table").alias("table")).agg(
        F.count(F.lit(1)).alias("events"),
        F.sum((lag < 0).cast("long")).alias("negative"),
        F.min(lag).alias("min_s"),
        points.alias("_p"),
        F.max(lag).alias("max_s"),
        F.avg(lag).alias("mean_s"),
    )
    summary = summary.select(
        "table",
        "events",
        "negative",
        "min_s",
        F.col("_p")[0].alias("p50_s"),
        F.col("_p")[1].alias("p90_s"),
        F.col("_p")[2].alias("p99_s"),
        "max_s",
        "mean_s",
    )
    lags: pd.DataFrame = summary.toPandas()
    out = lags.sort_values("table").reset_index(drop=True)
    return out[list(LAG_COLUMNS)].astype(LAG_COLUMNS)


def _details(rows: pd.DataFrame) -> pd.DataFrame:
    """The detail texts written with Python number formatting (as the pandas report writes them)."""
    rows = rows.copy()
    detail = rows["detail"].astype(object).tolist()
    for i, (name, table, value, count, other_seq, dialect, usual) in enumerate(
        zip(
            rows["finding"],
            rows["table"],
            rows["value"],
            rows["count"],
            rows["other_seq"],
            rows["_dialect"],
            rows["_usual"],
        )
    ):
        if name == "keyless_tables":
            detail[i] = keyless_detail(table, int(count))
        elif name == "time_inversions":
            detail[i] = f"event_time {value:g} s earlier than an event before it in seq order"
        elif name == "sequence_gaps":
            detail[i] = f"{dialect}: {count} number(s) missing after {int(other_seq)}"
        elif name == "heartbeat_gaps":
            detail[i] = f"{value:g} s without a heartbeat (usual {usual / 1e6:g} s); {count} other event(s) in between"
    rows["detail"] = pd.Series(detail, index=rows.index, dtype="string")
    return rows.drop(columns=list(_EXTRAS))


#: The columns that name a change in a finding row (a change replay refuses is found by them).
_CHANGE_AT = ["table", "key", "source", "partition", "offset", "seq", "op"]


def _repeat_causes(rows: pd.DataFrame) -> pd.DataFrame:
    """The finding rows with each semantic duplicate's cause written (:data:`REPEAT_CAUSES`, by whether replay
    refuses the change: one of the impossible transitions or unmatched rows among ``rows``)."""
    refused = rows["finding"].isin(["impossible_transitions", "unmatched_rows"]).to_numpy()
    duplicate = (rows["finding"] == "semantic_duplicates").to_numpy()
    if not duplicate.any():
        return rows

    def at(where: Any) -> list[tuple]:
        picked = rows.loc[where, _CHANGE_AT].astype(object)
        return [tuple(none_if_missing(v) for v in r) for r in picked.itertuples(index=False)]

    known = set(at(refused))
    rows = rows.copy()
    rows.loc[duplicate, "detail"] = [REPEAT_CAUSES[change in known] for change in at(duplicate)]
    return rows


def order_report(
    events: DataFrame,
    quarantine: DataFrame | None = None,
    by: str = "source",
    max_gap: int = 1000,
    heartbeat_factor: float = HEARTBEAT_FACTOR,
) -> OrderReport:
    """The ordering report of a Spark event frame (the same as :func:`cdckit.order_report` gives).

    ``by``: which events are compared (see :data:`STREAMS`);
    ``quarantine``: the frame of :func:`cdckit.spark.quarantine`, for
    unpaired update halves. Runs as Spark SQL; only findings and the lag
    summary are collected.
    """
    stream = stream_columns(by)
    (meta,) = events.agg(
        F.collect_set("dialect").alias("dialects"),  # one row: an aggregate of the whole frame
        F.sum(F.col("seq").isNull().cast("long")).alias("unsequenced"),
        split_sources().alias("split"),
    ).collect()
    dialects = list(meta["dialects"])
    frame = narrow(events, fill=bool(meta["unsequenced"]), split=bool(meta["split"])).cache()
    try:
        changes = frame.filter(F.col("op").isin(*CHANGE_OPS))
        parts = [
            replayed_findings(events, stream),
            key_findings(changes, stream),
            time_findings(changes, stream),
            sequence_gap_findings(frame, dialect_flags(dialects, "contiguous_seq"), max_gap, stream),
            offset_gap_findings(frame, dialect_flags(dialects, "splits_updates"), quarantine),
            transaction_findings(frame),
            *[
                _rows(part, F.col("finding"), **{c: F.col(c) for c in part.columns if c != "finding"})
                for part in transaction_rows(events)
            ],
            heartbeat_findings(frame, heartbeat_factor),
            keyless_findings(changes),
        ]
        if quarantine is not None:
            parts.append(unpaired_findings(quarantine))
        rows = parts[0]
        for part in parts[1:]:
            rows = rows.unionByName(part)
        collected: pd.DataFrame = rows.toPandas()
        found = _repeat_causes(collected.astype({**FINDING_COLUMNS, "_dialect": "string", "_usual": "float64"}))
        return report_from_rows(_details(found), lag_summary(frame), by)
    finally:
        frame.unpersist()
