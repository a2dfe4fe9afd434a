"""Ordering and replay on Spark: the same answers as :mod:`cdckit.ordering` and :mod:`cdckit.replay`.

The finding functions and the replayer are the pandas ones, run on groups of
rows with ``applyInPandas``: per row key for duplicates, inversions,
transitions and replay (per table when a table's keys change or it has none),
per table, partition or source for the rest. Only the narrow columns travel
to the Python workers, and only findings come back to the driver.

>>> from cdckit.spark import replay
>>> [name in replay.__all__ for name in ("sort_events", "order_report", "materialize")]
[True, True, True]
"""

from __future__ import annotations

from typing import Any, Iterator

import orjson
import pandas as pd
from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F
from pyspark.sql import types as T

from .. import ordering, replay
from ..pairing import UNPAIRED

__all__ = ["sort_events", "order_report", "materialize", "narrow"]

_SPARK_TYPES = {"string": T.StringType(), "Int64": T.LongType(), "float64": T.DoubleType()}
FINDING_SCHEMA = T.StructType([T.StructField(n, _SPARK_TYPES[t]) for n, t in ordering.FINDING_COLUMNS.items()])
LAG_SCHEMA = T.StructType([T.StructField(n, _SPARK_TYPES[t]) for n, t in ordering.LAG_COLUMNS.items()])


def _table_name() -> Any:
    """``database.table`` (or ``schema.table``, ``table``) as a Spark expression, like :func:`ordering.table_names`."""
    return F.when(F.col("table").isNull(), F.lit(None)).otherwise(
        F.concat_ws(".", F.coalesce(F.col("database"), F.col("schema")), F.col("table")))


def _filled_seq() -> Any:
    """``seq`` filled from the previous arrival in the same source, like :func:`ordering.filled_seq`."""
    arrival = Window.partitionBy("source").orderBy(F.col("partition").asc_nulls_first(), "offset") \
        .rowsBetween(Window.unboundedPreceding, Window.currentRow)
    return F.coalesce(F.last("seq", ignorenulls=True).over(arrival), F.lit(""))


def sort_events(events: DataFrame, by: str = "seq") -> DataFrame:
    """The events in canonical order (see :func:`cdckit.sort_events`); the same columns."""
    if by not in ("seq", "event_time", "arrival"):
        raise ValueError(f"by must be 'seq', 'event_time' or 'arrival', not {by!r}")
    arrival = [F.coalesce(F.col("source"), F.lit("")).asc(), F.col("partition").asc_nulls_first(),
               F.col("offset").asc()]
    if by == "seq":
        return events.withColumn("_seq", _filled_seq()).orderBy(F.col("_seq").asc(), *arrival).drop("_seq")
    if by == "event_time":
        return events.orderBy(F.col("event_time").asc_nulls_last(), *arrival)
    return events.orderBy(*arrival)


def narrow(events: DataFrame) -> DataFrame:
    """The narrow frame of :func:`cdckit.ordering.narrow`, built with Spark expressions."""
    return events.select(
        "dialect", _table_name().alias("_table"), "key", F.coalesce("source", F.lit("")).alias("source"),
        "offset", "partition", "op", "seq", _filled_seq().alias("_seq"),
        F.unix_micros("event_time").alias("_event_us"), F.unix_micros("emit_time").alias("_emit_us"),
        "txn_id", "before", "after")


def _collect(frame: DataFrame) -> pd.DataFrame:
    return frame.toPandas()


def order_report(events: DataFrame, quarantine: DataFrame | None = None, max_gap: int = 1000,
                 heartbeat_factor: float = ordering.HEARTBEAT_FACTOR) -> ordering.OrderReport:
    """The ordering report of a Spark event frame (the same as :func:`cdckit.order_report` gives).

    ``quarantine``: the frame of :func:`cdckit.spark.quarantine`, for
    unpaired update halves.
    """
    frame = narrow(events).cache()
    try:
        snapshot = frozenset(r[0] for r in frame.filter("op = 'read' AND _table IS NOT NULL")
                             .select("_table").distinct().collect())
        slim = frame.drop("before", "after")
        parts = [
            frame.filter(F.col("op").isin(*ordering.CHANGE_OPS)).groupBy("dialect", "_table", "key")
            .applyInPandas(lambda g: ordering.key_findings(g, snapshot), FINDING_SCHEMA),
            slim.filter(F.col("op").isin(*ordering.CHANGE_OPS) & F.col("seq").isNotNull())
            .groupBy("_table").applyInPandas(ordering.time_findings, FINDING_SCHEMA),
            slim.filter(F.col("seq").isNotNull()).groupBy("dialect", "partition")
            .applyInPandas(lambda g: ordering.sequence_gap_findings(g, max_gap), FINDING_SCHEMA),
            slim.filter(F.col("partition").isNotNull()).groupBy("source", "partition")
            .applyInPandas(ordering.offset_gap_findings, FINDING_SCHEMA),
            slim.filter(F.col("op").isin("begin", "commit")).groupBy("dialect", "source", "partition")
            .applyInPandas(ordering.transaction_findings, FINDING_SCHEMA),
        ]
        beating = [r[0] for r in slim.filter("op = 'heartbeat'").select("source").distinct().collect()]
        if beating:
            parts.append(slim.filter(F.col("source").isin(*beating)).groupBy("dialect", "source")
                         .applyInPandas(lambda g: ordering.heartbeat_findings(g, heartbeat_factor), FINDING_SCHEMA))
        rows = parts[0]
        for part in parts[1:]:
            rows = rows.unionByName(part)
        found = [_collect(rows)]
        keyless = slim.filter(F.col("op").isin(*ordering.CHANGE_OPS) & F.col("key").isNull()
                              & F.col("_table").isNotNull()).groupBy("_table").count().toPandas()
        found.append(ordering.keyless_rows(dict(zip(keyless["_table"], keyless["count"]))))
        if quarantine is not None:
            halves = quarantine.filter(F.col("reason").contains(UNPAIRED)) \
                .select("source", "offset", "partition", "reason").toPandas()
            found.append(ordering.unpaired_findings(halves))
        lag = _collect(slim.filter("_table IS NOT NULL AND _event_us IS NOT NULL AND _emit_us IS NOT NULL")
                       .groupBy("_table").applyInPandas(ordering.lag_summary, LAG_SCHEMA))
        lag = lag.sort_values("table").reset_index(drop=True).astype(ordering.LAG_COLUMNS)
        return ordering.report_from_rows(pd.concat([f.astype(ordering.FINDING_COLUMNS) for f in found]), lag)
    finally:
        frame.unpersist()


# --------------------------------------------------------------------------- materialize

_STATE_SCHEMA = T.StructType([
    T.StructField("kind", T.StringType()), T.StructField("table", T.StringType()),
    T.StructField("key", T.StringType()), T.StructField("row", T.StringType()),
    T.StructField("column", T.StringType()), T.StructField("rank", T.StringType()),
    T.StructField("source", T.StringType()), T.StructField("offset", T.LongType()),
    T.StructField("seq", T.StringType()), T.StructField("op", T.StringType()),
    T.StructField("problem", T.StringType()),
])

_ORDER = {"seq": ["_seq", "source", "partition", "offset"], "event_time": ["event_time", "source", "partition",
                                                                            "offset"],
          "arrival": ["source", "partition", "offset"]}


def _moved_tables(changes: DataFrame) -> list[str]:
    """Tables where an update changes the key (their rows must replay together)."""
    def moved(batches: Iterator[pd.DataFrame]) -> Iterator[pd.DataFrame]:
        for b in batches:
            hit = [t for t, op, key, cols, before in zip(b["_table"], b["op"], b["key"], b["key_columns"], b["before"])
                   if replay.old_key(op, key, cols, before) != (None if key is None or key is pd.NA else key)]
            yield pd.DataFrame({"_table": sorted(set(hit))}, dtype=object)
    updates = changes.filter("op = 'update' AND key IS NOT NULL").select("_table", "op", "key", "key_columns", "before")
    found = updates.mapInPandas(moved, "_table string").distinct().collect()
    return [r[0] for r in found]


def _replay_group(order: list[str]):
    """The applyInPandas function: replay one group, emit live rows, problems and column ranks."""
    def run(group: pd.DataFrame) -> pd.DataFrame:
        group = group.sort_values(order, kind="stable", na_position="first" if order[0] != "event_time" else "last")
        out = []
        for table, replayer, steps, ranks in replay.replay_rows(group):
            for key, row in replayer.rows.items():
                out.append({"kind": "row", "table": table, "key": key, "row": orjson.dumps(row).decode()})
            for text, count in replayer.bag.items():
                out.extend({"kind": "row", "table": table, "row": text} for _ in range(count))
            out.extend({"kind": "problem", **p} for p in replay._problems(table, steps))
            out.extend({"kind": "column", "table": table, "column": c, "rank": r} for c, r in ranks.items())
        frame = pd.DataFrame(out, columns=[f.name for f in _STATE_SCHEMA.fields], dtype=object)
        return frame.astype({f.name: "Int64" if f.name == "offset" else "string" for f in _STATE_SCHEMA.fields})
    return run


def materialize(events: DataFrame, as_of: Any = None, order: str = "seq") -> replay.TableStates:
    """The state of every table (see :func:`cdckit.materialize`): ``{"database.table": Spark DataFrame}``.

    Each frame has one column per source column (types inferred from the
    JSON values by Spark) and one row per live key, in no particular order.
    ``.problems`` is a pandas frame of the changes that did not fit.
    """
    spark = events.sparkSession
    changes = events.filter(F.col("op").isin(*ordering.CHANGE_OPS))
    if as_of is not None:
        changes = changes.filter(F.col("event_time") <= F.lit(replay._timestamp(as_of).to_pydatetime()))
    changes = changes.withColumn("_table", _table_name()).filter(F.col("_table").isNotNull()) \
        .withColumn("_seq", _filled_seq())
    subset = ["dialect", "database", "schema", "table", "key", "seq", "op", "before", "after"]
    first = Window.partitionBy(*subset).orderBy(F.coalesce("source", F.lit("")), F.col("partition").asc_nulls_first(),
                                                "offset")
    changes = changes.withColumn("_copy", F.when(F.col("seq").isNull(), F.lit(1))
                                 .otherwise(F.row_number().over(first))).filter("_copy = 1").drop("_copy")
    changes = changes.withColumn("source", F.coalesce("source", F.lit(""))).cache()
    try:
        moved = _moved_tables(changes)
        # keys replay independently, so a group holds many keys (a hash bucket): fewer, larger Python calls
        buckets = int(spark.conf.get("spark.sql.shuffle.partitions"))
        group = F.when(F.col("_table").isin(*moved) if moved else F.lit(False), F.lit(None)).otherwise(
            F.pmod(F.hash("key"), F.lit(buckets)))
        columns = ["dialect", "_table", "key", "key_columns", "op", "before", "after", "seq", "_seq", "source",
                   "partition", "offset", "event_time"]
        result = changes.select(*columns, group.alias("_group")).groupBy("_table", "_group") \
            .applyInPandas(_replay_group(_ORDER[order]), _STATE_SCHEMA).cache()
        meta = result.filter("kind <> 'row'").toPandas()
        states = replay.TableStates()
        ranks = meta[meta["kind"] == "column"]
        for table in sorted(set(ranks["table"])):
            names = replay.column_order(ranks[ranks["table"] == table].groupby("column")["rank"].min().to_dict())
            rows = result.filter((F.col("kind") == "row") & (F.col("table") == table)).select("row")
            schema = spark.read.json(rows.rdd.map(lambda r: r[0])).schema if not rows.isEmpty() else None
            fields = {f.name: f.dataType for f in schema.fields} if schema else {}
            parsed = rows.select(F.from_json("row", T.StructType([T.StructField(n, fields.get(n, T.StringType()))
                                                                   for n in names])).alias("r"))
            states[table] = parsed.select(*[F.col("r").getField(n).alias(n) for n in names])
        problems = meta[meta["kind"] == "problem"][replay.PROBLEM_COLUMNS]
        states.problems = problems.astype({"offset": "Int64"}).sort_values(["table", "source", "offset"],
                                                                          kind="stable").reset_index(drop=True)
        states.keyless = sorted(r[0] for r in changes.filter("key IS NULL").select("_table").distinct().collect())
        return states
    finally:
        changes.unpersist()
