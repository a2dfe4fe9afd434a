"""The ordering report's transaction findings on Spark, read from the transactions of
:mod:`cdckit.spark.transactions` (the pandas report's rules, the same rows).

Each function gives finding rows as a frame with ``finding`` and the columns of
:data:`~cdckit.analysis.ordering.catalogue.FINDING_COLUMNS` it fills;
:func:`cdckit.spark.ordering.order_report` types them and adds the rest.

>>> from cdckit.spark import transaction_findings
>>> len(transaction_findings.FOUND)
6
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from ..analysis.ordering._shared import REPLAY_OPS
from .transactions import aggregated, prepared

__all__ = ["transaction_rows", "FOUND"]

#: The findings given here.
FOUND = (
    "incomplete_transactions",
    "unbegun_transactions",
    "repeated_begins",
    "unended_transactions",
    "split_transactions",
    "misordered_transactions",
)


def _name() -> Column:
    """How a detail names the transaction of a row (its ``txn_id``)."""
    return F.when(F.col("txn_id").isNotNull(), F.concat(F.lit("transaction "), "txn_id")).otherwise(
        F.lit("a transaction without an id")
    )


def _at(pointer: str) -> dict[str, Column]:
    """The finding columns of the member a pointer (see :func:`cdckit.spark.transactions._pointer`) names."""
    at = F.col(pointer)
    return {
        "table": at["p__table"],
        "key": at["p_key"],
        "source": at["p_source"],
        "offset": at["p_offset"],
        "partition": at["p_partition"],
        "seq": at["p_seq"],
        "op": at["p_op"],
    }


def _listed(entries: Column, field: str) -> Column:
    """``table n, table n`` of (``t``, ``field``) entries, those with ``field`` 0 left out."""
    kept = F.filter(entries, lambda e: e[field] != 0)
    return F.array_join(F.transform(kept, lambda e: F.concat(e["t"], F.lit(" "), e[field].cast("string"))), ", ")


def _in_brackets(text: Column) -> Column:
    return F.when(text != "", F.concat(F.lit(" ("), text, F.lit(")"))).otherwise(F.lit(""))


def _incomplete(txns: DataFrame) -> DataFrame:
    """Transactions whose declared counts (total or per table) differ from the changes held, at the commit that
    declares them; ``count`` = declared - held."""
    declared_total = F.coalesce(
        F.col("declared_changes"),
        F.aggregate(F.map_values("_declared_map"), F.lit(0).cast("long"), lambda a, n: a + n),
    )
    differ = F.col("_differ")
    found = txns.filter(F.col("_declaring").isNotNull() & ((declared_total != F.col("changes")) | (F.size(differ) > 0)))
    detail = F.concat(
        _name(),
        F.lit(" declares "),
        declared_total.cast("string"),
        F.lit(" change(s)"),
        _in_brackets(_listed(differ, "d")),
        F.lit("; the capture holds "),
        F.col("changes").cast("string"),
        _in_brackets(_listed(differ, "h")),
    )
    return found.select(
        F.lit("incomplete_transactions").alias("finding"),
        *[c.alias(n) for n, c in _at("_declaring").items() if n not in ("table", "key")],
        (declared_total - F.col("changes")).alias("count"),
        detail.alias("detail"),
    )


def _unbegun(txns: DataFrame) -> DataFrame:
    """Commit markers whose BEGIN is not in the capture (dialects that write begins), at the first commit."""
    found = txns.filter(F.col("_writes_begins") & (F.col("begins") == 0) & F.col("_first_commit").isNotNull())
    return found.select(
        F.lit("unbegun_transactions").alias("finding"),
        *[c.alias(n) for n, c in _at("_first_commit").items() if n not in ("table", "key")],
        F.concat(_name(), F.lit(" commits here; its BEGIN is not in the capture")).alias("detail"),
    )


def _unended(txns: DataFrame) -> DataFrame:
    """Transactions with changes, neither a BEGIN nor an end, of a dialect that declares ends: at the first change."""
    found = txns.filter((F.col("status") == "no_commit") & (F.col("begins") == 0) & (F.col("changes") > 0))
    return found.select(
        F.lit("unended_transactions").alias("finding"),
        *[c.alias(n) for n, c in _at("_first_change").items()],
        F.col("changes").alias("count"),
        F.concat(
            _name(), F.lit(" has "), F.col("changes").cast("string"), F.lit(" change(s) here and after; it never ends")
        ).alias("detail"),
    )


def _repeated(frame: DataFrame, ids: DataFrame) -> DataFrame:
    """Each BEGIN of a transaction after its first (arrival order); ``other_*`` the first."""
    begins = frame.filter(F.col("op") == "begin")
    arrival = Window.partitionBy("_txn").orderBy("_source", "_partition", "offset", "_row")
    begins = begins.withColumn("_first", F.first(F.struct("source", "offset", "seq")).over(arrival))
    begins = begins.withColumn("_nth", F.row_number().over(arrival)).filter(F.col("_nth") > 1)
    return begins.join(ids, "_txn").select(
        F.lit("repeated_begins").alias("finding"),
        "source",
        "offset",
        "partition",
        "seq",
        "op",
        F.col("_first")["source"].alias("other_source"),
        F.col("_first")["offset"].alias("other_offset"),
        F.col("_first")["seq"].alias("other_seq"),
        F.concat(_name(), F.lit(" begins again here: the producer restarted in it")).alias("detail"),
    )


def _split(frame: DataFrame, ids: DataFrame) -> DataFrame:
    """Per transaction and source whose changes lie in more than one partition: at its first change there
    (arrival order); ``count`` = partitions."""
    changes = frame.filter(F.col("op").isin(*REPLAY_OPS))
    first = F.min(F.struct("_partition", "offset", "_row", "partition", "seq", "op", "_table", "key"))
    per_source = changes.groupBy("_txn", "source").agg(
        F.count_distinct("_partition").alias("count"), first.alias("_first")
    )
    found = per_source.filter(F.col("count") > 1).join(ids, "_txn")
    at = F.col("_first")
    return found.select(
        F.lit("split_transactions").alias("finding"),
        at["_table"].alias("table"),
        at["key"].alias("key"),
        "source",
        at["offset"].alias("offset"),
        at["partition"].alias("partition"),
        at["seq"].alias("seq"),
        at["op"].alias("op"),
        "count",
        F.concat(_name(), F.lit(" lies in "), F.col("count").cast("string"), F.lit(" partitions of this source")).alias(
            "detail"
        ),
    )


def _misordered(frame: DataFrame, ids: DataFrame) -> DataFrame:
    """Each change that arrived after a higher-seq change of its transaction in its place; ``other_*`` that one."""
    found = frame.filter(F.col("_misordered").isNotNull()).join(ids, "_txn")
    top = F.col("_misordered")
    return found.select(
        F.lit("misordered_transactions").alias("finding"),
        F.col("_table").alias("table"),
        "key",
        "source",
        "offset",
        "partition",
        "seq",
        "op",
        top["source"].alias("other_source"),
        top["offset"].alias("other_offset"),
        top["seq"].alias("other_seq"),
        F.concat(_name(), F.lit(": arrived after a change of it with a higher seq")).alias("detail"),
    )


def transaction_rows(events: DataFrame) -> list[DataFrame]:
    """The rows of every finding of :data:`FOUND` in ``events``, a frame per finding."""
    frame = prepared(events)
    txns = aggregated(events, frame)
    ids = txns.select("_txn", "txn_id")
    return [
        _incomplete(txns),
        _unbegun(txns),
        _repeated(frame, ids),
        _unended(txns),
        _split(frame, ids),
        _misordered(frame, ids),
    ]
