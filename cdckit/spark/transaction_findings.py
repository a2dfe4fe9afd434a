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

from ..analysis.ordering.catalogue import TRANSACTION_FINDINGS
from ..frame import REPLAY_OPS
from .transactions import aggregated, declared_total, label, listed, prepared, unbegun

__all__ = ["transaction_rows", "FOUND"]

#: The findings given here.
FOUND = TRANSACTION_FINDINGS


def _at(pointer: str, *left_out: str) -> list[Column]:
    """The finding columns of the member a pointer (see :func:`cdckit.spark.transactions._pointer`) names, but
    ``left_out``."""
    at = F.col(pointer)
    fields = {"table": "p__table", "key": "p_key", "source": "p_source", "offset": "p_offset"}
    fields.update(partition="p_partition", seq="p_seq", op="p_op")
    columns = {name: at[field] for name, field in fields.items() if name not in left_out}
    columns["source"] = F.coalesce(columns["source"], F.lit(""))  # as the narrow frames hold it
    return [column.alias(name) for name, column in columns.items()]


def _commit_at() -> Column:
    """A transaction's commit row: its first commit marker, else its first end change."""
    return F.coalesce("_first_commit", "_first_end")


def _incomplete(txns: DataFrame) -> DataFrame:
    """Transactions whose declared counts (total or per table), or declared places, differ from the changes
    held, at the commit; ``count`` = declared - held (the places missing where only places are declared)."""
    found = txns.filter(F.col("status").isin("missing_changes", "extra_changes"))
    total = declared_total()
    tables = F.transform(F.map_entries("_declared_map"), lambda e: F.struct(e["key"].alias("t"), e["value"].alias("n")))
    holds = F.transform(F.col("_differ"), lambda e: F.struct(e["t"].alias("t"), e["h"].alias("n")))

    def bracketed(entries: Column) -> Column:
        return F.when(F.size(entries) > 0, F.concat(F.lit(" ("), listed(entries), F.lit(")"))).otherwise(F.lit(""))

    counted = F.concat(
        label(),
        F.lit(" declares "),
        total.cast("string"),
        F.lit(" change(s)"),
        bracketed(tables),
        F.lit("; the capture holds "),
        F.col("changes").cast("string"),
        F.coalesce(bracketed(holds), F.lit("")),
    )
    placed = F.concat(
        label(),
        F.lit(" numbers its changes 0..n-1 in their seq; the capture holds "),
        F.col("changes").cast("string"),
        F.lit(" and none at "),
        F.col("_gaps").cast("string"),
        F.lit(" of those places"),
    )
    return found.withColumn("_commit", _commit_at()).select(
        F.lit("incomplete_transactions").alias("finding"),
        *_at("_commit", "table", "key"),
        F.when(total.isNull(), F.col("_gaps")).otherwise(total - F.col("changes")).alias("count"),
        F.when(total.isNull(), placed).otherwise(counted).alias("detail"),
    )


def _unbegun(txns: DataFrame) -> DataFrame:
    """Commit markers whose BEGIN is not in the capture (dialects that write begins), at the first commit."""
    detail = F.concat(
        label(),
        F.lit(" commits here without its BEGIN in the capture"),
        F.when(F.col("status") == "no_begin", F.lit(" or a declared count: it began before the capture")).otherwise(
            F.lit("")
        ),
    )
    return txns.filter(unbegun()).select(
        F.lit("unbegun_transactions").alias("finding"), *_at("_first_commit", "table", "key"), detail.alias("detail")
    )


def _unended(txns: DataFrame) -> DataFrame:
    """Changes of a transaction with neither BEGIN nor end, of a dialect that marks ends: at its first change."""
    found = txns.filter((F.col("status") == "no_commit") & (F.col("begins") == 0) & (F.col("changes") > 0))
    detail = F.concat(
        label(),
        F.lit(": "),
        F.col("changes").cast("string"),
        F.lit(" change(s) from here, no BEGIN and no commit in the capture, though its dialect marks transaction "),
        F.lit("ends there"),
    )
    return found.select(
        F.lit("unended_transactions").alias("finding"),
        *_at("_first_change", "key"),
        F.col("changes").alias("count"),
        detail.alias("detail"),
    )


def _repeated(frame: DataFrame, ids: DataFrame) -> DataFrame:
    """Each BEGIN of a transaction after its first (arrival order); ``other_*`` the first."""
    begins = frame.filter(F.col("op") == "begin")
    arrival = Window.partitionBy("_txn").orderBy("_source", "_partition", "offset", "_row")
    begins = begins.withColumn("_first", F.first(F.struct("source", "offset", "seq")).over(arrival))
    begins = begins.withColumn("_nth", F.row_number().over(arrival)).filter(F.col("_nth") > 1)
    detail = F.concat(
        label(),
        F.lit(" begins again here: the producer restarted in it, and the changes between the two may come "),
        F.lit("twice"),
    )
    return begins.join(ids, "_txn").select(
        F.lit("repeated_begins").alias("finding"),
        F.coalesce("source", F.lit("")).alias("source"),
        "offset",
        "partition",
        "seq",
        "op",
        F.coalesce(F.col("_first")["source"], F.lit("")).alias("other_source"),
        F.col("_first")["offset"].alias("other_offset"),
        F.col("_first")["seq"].alias("other_seq"),
        detail.alias("detail"),
    )


def _split(frame: DataFrame, ids: DataFrame) -> DataFrame:
    """Per transaction and source whose changes lie in more than one partition: at its first change there
    (change order); ``count`` = partitions."""
    changes = frame.filter(F.col("op").isin(*REPLAY_OPS))
    order: list[Column | str] = [F.col("seq").isNull().alias("_unsequenced"), F.col("seq").alias("_seq")]
    order += ["_partition", "offset", "_row"]
    first = F.min(F.struct(*order, "partition", "seq"))
    # the distinct partitions, null (no partition) as -1: a set of scalars, as a set of structs beside the
    # struct min held duplicates on Spark 4 (two equal {0, 0} entries on a real Debezium capture)
    partitions = F.array_sort(F.collect_set("_partition"))
    per_source = changes.groupBy("_txn", "source").agg(first.alias("_first"), partitions.alias("_partitions"))
    found = per_source.filter(F.size("_partitions") > 1).join(ids, "_txn")
    named = F.array_join(
        F.transform("_partitions", lambda p: F.when(p == -1, F.lit("<NA>")).otherwise(p.cast("string"))), ", "
    )
    detail = F.concat(
        label(),
        F.lit(": its changes in "),
        F.coalesce("source", F.lit("")),
        F.lit(" lie in "),
        F.size("_partitions").cast("string"),
        F.lit(" partitions ("),
        named,
        F.lit("): consumers reading the partitions apart see it in parts"),
    )
    at = F.col("_first")
    return found.select(
        F.lit("split_transactions").alias("finding"),
        F.coalesce("source", F.lit("")).alias("source"),
        at["offset"].alias("offset"),
        at["partition"].alias("partition"),
        at["seq"].alias("seq"),
        F.size("_partitions").alias("count"),
        detail.alias("detail"),
    )


def _misordered(frame: DataFrame, ids: DataFrame) -> DataFrame:
    """Each change that arrived after a higher-seq change of its transaction in its place; ``other_*`` that one."""
    found = frame.filter(F.col("_misordered").isNotNull()).join(ids, "_txn")
    top = F.col("_misordered")
    detail = F.concat(
        label(), F.lit(": this change arrived after a later one of its transaction (seq "), top["seq"], F.lit(")")
    )
    return found.select(
        F.lit("misordered_transactions").alias("finding"),
        F.col("_table").alias("table"),
        "key",
        F.coalesce("source", F.lit("")).alias("source"),
        "offset",
        "partition",
        "seq",
        "op",
        F.coalesce(top["source"], F.lit("")).alias("other_source"),
        top["offset"].alias("other_offset"),
        top["seq"].alias("other_seq"),
        detail.alias("detail"),
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
