"""The transactions of a capture on Spark: one row per transaction, as :func:`cdckit.transactions` gives them.

Written as DataFrame expressions (windows and aggregations; no Python worker
runs, nothing is collected): the same rows as the pandas table, in the same
order. What a transaction is, its status and its columns are the pandas
module's rules (issue 40's spec): members are the changes and markers of one
(dialect, transaction key) (:func:`~cdckit.spark.sorting.transaction_key`),
or, for markers without a key, the changes without one framed by a begin and
the commit that closes it in arrival order (a stack per dialect, source and
partition, as ``open_transactions`` matches them).

>>> from cdckit.spark.transactions import TRANSACTION_COLUMNS  # (cdckit.spark.transactions is the function)
>>> list(TRANSACTION_COLUMNS)[:3]
['txn_id', 'dialect', 'status']
"""

from __future__ import annotations

import pandas as pd
from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from ..analysis.ordering.transaction_members import STATUSES
from ..analysis.transactions import TRANSACTION_COLUMNS
from ..dialects import registry
from ..frame import REPLAY_OPS
from .columns import table_name_column
from .sorting import transaction_key
from .transaction_tables import differing_tables

__all__ = [
    "transactions",
    "members",
    "prepared",
    "aggregated",
    "to_pandas",
    "TRANSACTION_COLUMNS",
    "MARKERS",
    "STATUSES",
]

#: The markers that frame a transaction.
MARKERS = ("begin", "commit")


def _is(*ops: str) -> Column:
    return F.col("op").isin(*ops)


#: Arrival order as sortable columns of :func:`members` (source and partition coalesced: nulls first).
_ARRIVAL = ("_source", "_partition", "offset", "_row")
#: What a Debezium END declares (the commit event's ``after``), as Spark reads it.
_DECLARATION = "struct<event_count: bigint, data_collections: map<string, bigint>>"
#: What a pointer to a member holds besides its arrival order.
_POINTED = ("source", "partition", "offset", "seq", "event_time", "op", "_table", "key")


def _ends() -> Column:
    """Whether a change is its transaction's last (its dialect's ``transaction_end`` matches its ``seq``)."""
    out = F.lit(False)
    for name, pattern in sorted(registry.transaction_ends().items()):
        out = out | F.coalesce((F.col("dialect") == name) & F.col("seq").rlike(pattern), F.lit(False))
    return _is(*REPLAY_OPS) & out


def _places() -> Column:
    """A change's declared place in its transaction (its dialect's ``transaction_place``, group 1), else null."""
    out = F.lit(None).cast("long")
    for name, pattern in sorted(registry.transaction_places().items()):
        hit = F.coalesce((F.col("dialect") == name) & F.col("seq").rlike(pattern), F.lit(False))
        out = F.when(hit, F.regexp_extract("seq", pattern, 1).try_cast("long")).otherwise(out)
    return F.when(_is(*REPLAY_OPS) & ~_ends(), out)


def _framed(frame: DataFrame) -> DataFrame:
    """The members without a transaction key, each with ``_anchor``: the ``_row`` of the begin that opens its
    transaction, or of the commit that closes no begin; changes that none of them holds are left out.

    Per dialect, source and partition in arrival order, a begin pushes and a commit pops (when the stack is not
    empty): the depth is the running sum of the steps, lifted where a commit found the stack empty. A commit
    closes the latest begin at the depth before it; a change belongs to the latest begin at its depth. A commit
    that closes no begin is a transaction of its own, holding the changes outside every begin since the marker
    before it.
    """
    group = ["dialect", "_source", "_partition"]
    running = Window.partitionBy(*group).orderBy("offset", "_row")
    upto = running.rowsBetween(Window.unboundedPreceding, Window.currentRow)
    step = F.when(_is("begin"), F.lit(1)).when(_is("commit"), F.lit(-1)).otherwise(F.lit(0))
    frame = (
        frame.withColumn("_sum", F.sum(step).over(upto))
        .withColumn("_depth", F.col("_sum") - F.least(F.min("_sum").over(upto), F.lit(0)))
        .withColumn("_before", F.coalesce(F.lag("_depth").over(running), F.lit(0)))
        .withColumn("_level", F.when(_is("commit"), F.col("_before")).otherwise(F.col("_depth")))
    )
    opened = F.last(F.when(_is("begin"), F.col("_row")), ignorenulls=True).over(
        Window.partitionBy(*group, "_level").orderBy("offset", "_row").rowsBetween(Window.unboundedPreceding, 0)
    )
    orphan = _is("commit") & (F.col("_level") == 0)
    # the next marker: the last one seen walking back from the end (a frame to the end of the partition is
    # evaluated afresh for every row on Spark, quadratic; a growing frame in reverse order is not)
    backwards = Window.partitionBy(*group).orderBy(F.col("offset").desc(), F.col("_row").desc())
    following = F.last(F.when(_is(*MARKERS), F.struct(F.col("_row").alias("row"), orphan.alias("orphan"))), True)
    following = following.over(backwards.rowsBetween(Window.unboundedPreceding, -1))
    anchor = (
        F.when(F.col("_level") > 0, opened)
        .when(orphan, F.col("_row"))
        .when(_is(*REPLAY_OPS) & following["orphan"], following["row"])
    )
    return (
        frame.withColumn("_anchor", anchor)
        .filter(F.col("_anchor").isNotNull())
        .drop("_sum", "_depth", "_before", "_level")
    )


def members(events: DataFrame) -> DataFrame:
    """The changes and markers of every transaction, one row each, with ``_txn`` (which transaction: its dialect
    and key, or for an unnamed one its begin), ``_key`` (the transaction key), ``_table``, ``_row`` (frame
    order), ``_source``/``_partition`` (arrival order), ``_end`` and ``_place`` (a change's declared end and
    place), ``_declared`` (a commit's declaration) and ``_redelivered`` (a change whose table, op, seq and key
    repeat an earlier arrival's).
    """
    frame = events.filter(F.col("op").isin(*MARKERS, *REPLAY_OPS)).select(
        "dialect",
        transaction_key().alias("_key"),
        "source",
        "partition",
        "offset",
        "op",
        "seq",
        "key",
        "event_time",
        table_name_column().alias("_table"),
        F.when(_is("commit"), F.col("after")).alias("_declared"),
        F.coalesce("source", F.lit("")).alias("_source"),
        F.coalesce("partition", F.lit(-1)).alias("_partition"),
        F.monotonically_increasing_id().alias("_row"),
    )
    named = frame.filter(F.col("_key").isNotNull()).withColumn("_anchor", F.lit(None).cast("long"))
    frame = named.unionByName(_framed(frame.filter(F.col("_key").isNull())))
    txn = F.concat_ws(
        "\x00",
        F.coalesce("dialect", F.lit("")),
        F.when(F.col("_key").isNotNull(), F.concat(F.lit("k"), "_key")).otherwise(
            F.concat(F.lit("a"), F.col("_anchor").cast("string"))
        ),
    )
    frame = frame.withColumn("_txn", txn).withColumn("_end", _ends()).withColumn("_place", _places())
    copies = Window.partitionBy("_txn", "_table", "op", "seq", "key").orderBy(*_ARRIVAL)
    again = _is(*REPLAY_OPS) & F.col("seq").isNotNull() & (F.row_number().over(copies) > 1)
    return frame.withColumn("_redelivered", again)


def _pointer(when: Column, *extra: str, change_order: bool = False) -> Column:
    """A member where ``when`` holds, as a struct that sorts in arrival order (``change_order``: seq first, nulls
    last), carrying :data:`_POINTED` and ``extra``; null elsewhere (for ``min``/``max`` over a transaction)."""
    order = [F.col("seq").isNull().alias("_unsequenced"), F.col("seq").alias("_seq")] if change_order else []
    fields = [*order, *[F.col(c) for c in _ARRIVAL], *[F.col(c).alias(f"p_{c}") for c in (*_POINTED, *extra)]]
    return F.when(when, F.struct(*fields))


def _misordered(frame: DataFrame) -> DataFrame:
    """``_misordered``: the change of the same transaction and place (source, partition and table: a capture saved
    from several topics keeps each topic's offsets) with the highest seq among those that arrived before this
    change (the latest of them at a tie), where its seq is higher than this one's (null seqs skipped)."""
    sequenced = _is(*REPLAY_OPS) & F.col("seq").isNotNull()
    before = (
        Window.partitionBy("_txn", "_source", "_partition", "_table")
        .orderBy("offset", "_row")
        .rowsBetween(Window.unboundedPreceding, -1)
    )
    top = F.max(F.when(sequenced, F.struct("seq", "offset", "_row", "source", "partition"))).over(before)
    frame = frame.withColumn("_top", top)
    return frame.withColumn("_misordered", F.when(sequenced & (F.col("_top")["seq"] > F.col("seq")), F.col("_top")))


def _table_counts(frame: DataFrame) -> DataFrame:
    """``_held``: per member change (not redelivered) of a table, that table and its transaction's changes of it."""
    counted = _is(*REPLAY_OPS) & ~F.col("_redelivered") & F.col("_table").isNotNull()
    held = F.sum(counted.cast("long")).over(Window.partitionBy("_txn", "_table"))
    return frame.withColumn("_held", F.when(counted, F.struct(F.col("_table").alias("t"), held.alias("n"))))


def _sorted_json(entries: Column) -> Column:
    """An array of (table, count) structs as compact JSON object text, keys sorted."""
    return F.to_json(F.map_from_entries(F.array_sort(entries)))


def _isin(column: str, names: list[str]) -> Column:
    """``column IN names``, false (never null) for nulls and an empty list."""
    return F.coalesce(F.col(column).isin(*names), F.lit(False)) if names else F.lit(False)


def _statuses(frame: DataFrame) -> DataFrame:
    """``status`` and ``complete`` of each aggregated transaction (the first rule of :data:`STATUSES` that
    applies), from its counts, its declaration and its dialect's flags (``_declares``, ``_writes_begins``)."""
    declared, differ = F.col("_declared_map"), F.col("_differ")
    fewer = F.exists(differ, lambda e: e["h"] < e["d"])
    more = F.exists(differ, lambda e: e["h"] > e["d"])
    count = F.col("declared_changes")
    # a dialect that ends transactions only in its changes' seq cannot tell of one whose changes have no seq
    unseen = _isin("dialect", list(registry.transaction_ends())) & (F.col("_sequenced") == 0) & (F.col("begins") == 0)

    def known(condition: Column) -> Column:
        return F.coalesce(condition, F.lit(False))

    status = (
        F.when(~F.col("_declares") | (unseen & (F.col("commits") == 0)), F.lit("undeclared"))
        .when(F.col("commits") == 0, F.lit("no_commit"))
        .when(known(count > F.col("changes")) | known(fewer) | (F.col("_gaps") > 0), F.lit("missing_changes"))
        .when(known(count < F.col("changes")) | known(more), F.lit("extra_changes"))
        .when(F.col("_writes_begins") & (F.col("begins") == 0) & count.isNull() & declared.isNull(), F.lit("no_begin"))
        .otherwise(F.lit("complete"))
    )
    frame = frame.withColumn("status", status)
    return frame.withColumn("complete", F.when(F.col("status") != "undeclared", F.col("status") == "complete"))


def _flags(events: DataFrame) -> DataFrame:
    """Per dialect of ``events``: ``_declares`` (it declares transaction ends in this capture: a marker, or a
    change that ends its transaction) and ``_writes_begins`` (a begin marker of it is in the capture)."""
    return events.groupBy(F.coalesce("dialect", F.lit("")).alias("_dialect")).agg(
        F.max(F.col("op").isin(*MARKERS) | _ends()).alias("_declares"),
        F.max(_is("begin")).alias("_writes_begins"),
    )


def _pick(pointers: list[tuple[Column, Column]], field: str) -> Column:
    """``field`` of the first pointer that is there (not null, and its condition holds); null when none is."""
    out = F.lit(None)
    for pointer, condition in reversed(pointers):
        out = F.when(pointer.isNotNull() & condition, pointer[field]).otherwise(out)
    return out


def prepared(events: DataFrame) -> DataFrame:
    """:func:`members` with ``_misordered`` (the change a misordered one arrived after) and ``_held`` (its
    table's changes in its transaction)."""
    return _table_counts(_misordered(members(events)))


def aggregated(events: DataFrame, frame: DataFrame | None = None) -> DataFrame:
    """One row per transaction: the table's columns (``detail`` left out) and the internal ones the findings
    read: ``_txn``, ``_first_begin``/``_first_commit``/``_first_change`` (member pointers, see
    :func:`_pointer`), ``_declared_map``, ``_differ`` (:func:`~cdckit.spark.transaction_tables.differing_tables`).
    ``frame``: :func:`prepared` of ``events``, where the caller has it."""
    frame = prepared(events) if frame is None else frame
    pointed = {
        "_first_begin": F.min(_pointer(_is("begin"))),
        "_first_commit": F.min(_pointer(_is("commit"))),
        "_declaring": F.min(_pointer(_is("commit") & F.col("_declared").isNotNull(), "_declared")),
        "_first_end": F.min(_pointer(F.col("_end"))),
        "_first_change": F.min(_pointer(_is(*REPLAY_OPS), change_order=True)),
        "_last_change": F.max(_pointer(_is(*REPLAY_OPS), change_order=True)),
    }
    txns = frame.groupBy("_txn").agg(
        F.first("dialect").alias("dialect"),
        F.first("_key").alias("txn_id"),
        F.sum((_is(*REPLAY_OPS) & ~F.col("_redelivered")).cast("long")).alias("changes"),
        _sorted_json(F.collect_set("_held")).alias("tables"),
        F.array_sort(F.collect_set("_held")).alias("_held"),
        F.count_distinct(F.when(_is(*REPLAY_OPS), F.struct("_source", "_partition"))).alias("places"),
        F.sum(F.col("_redelivered").cast("long")).alias("redelivered"),
        F.count("_misordered").alias("misordered"),
        F.sum(_is("begin").cast("long")).alias("begins"),
        F.sum((_is("commit") | F.col("_end")).cast("long")).alias("commits"),
        F.sum((_is(*REPLAY_OPS) & F.col("seq").isNotNull()).cast("long")).alias("_sequenced"),
        F.sum(_is("commit").cast("long")).alias("_commit_markers"),
        F.collect_set("_place").alias("_place_set"),
        *[column.alias(name) for name, column in pointed.items()],
    )
    declaration = F.from_json(F.col("_declaring")["p__declared"], _DECLARATION)
    declared_map = F.map_from_entries(F.array_sort(F.map_entries(declaration["data_collections"])))  # names sorted
    places = F.col("_place_set")
    txns = (
        txns.withColumn("_gaps", F.when(F.size(places) > 0, F.array_max(places) + 1 - F.size(places)).otherwise(0))
        .withColumn("declared_changes", declaration["event_count"])
        .withColumn("_declared_map", declared_map)
        .withColumn("declared_tables", F.when(declared_map.isNotNull(), _sorted_json(F.map_entries(declared_map))))
        .withColumn("_differ", differing_tables(F.col("_declared_map"), F.col("_held")))
    )
    flags = F.broadcast(_flags(events))
    txns = txns.join(flags, F.coalesce(txns["dialect"], F.lit("")) == flags["_dialect"], "left")
    txns = _statuses(txns)
    begin = [(F.col("_first_begin"), F.lit(True)), (F.col("_first_change"), F.lit(True))]
    commit = [(F.col("_first_commit"), F.lit(True)), (F.col("_first_end"), F.lit(True))]
    commit.append((F.col("_last_change"), F.col("status") == "undeclared"))
    for name, at in (("begin", begin), ("commit", commit)):
        for column in ("source", "partition", "offset", "seq", "event_time"):
            txns = txns.withColumn(f"{name}_{column}".replace("event_", ""), _pick(at, f"p_{column}"))
    return txns.withColumn("duration", F.col("commit_time") - F.col("begin_time"))


def listed(entries: Column) -> Column:
    """(``t`` table, ``n`` changes) entries as ``table n, table n`` (the texts of the details)."""
    return F.array_join(F.transform(entries, lambda e: F.concat(e["t"], F.lit(" "), e["n"].cast("string"))), ", ")


def label() -> Column:
    """How a sentence names a transaction: ``transaction <txn_id>``, or ``a transaction without an id``."""
    return F.when(F.col("txn_id").isNotNull(), F.concat(F.lit("transaction "), "txn_id")).otherwise(
        F.lit("a transaction without an id")
    )


def declared_total() -> Column:
    """The changes a transaction's commit declares: its ``event_count``, else the sum of its tables' counts."""
    tables = F.aggregate(F.map_values("_declared_map"), F.lit(0).cast("long"), lambda total, n: total + n)
    return F.coalesce(F.col("declared_changes"), tables)


def _text(number: str) -> Column:
    return F.col(number).cast("string")


def _detail() -> Column:
    """The sentence of a transaction (the words of the pandas table's ``detail``)."""
    tables = listed(F.col("_held"))
    held = F.concat(
        _text("changes"),
        F.lit(" change(s)"),
        F.when(tables != "", F.concat(F.lit(" ("), tables, F.lit(")"))).otherwise(F.lit("")),
        F.lit(" in "),
        _text("places"),
        F.lit(" place(s)"),
    )
    entries = F.map_entries("_declared_map")
    named = F.transform(entries, lambda e: F.struct(e["key"].alias("t"), e["value"].alias("n")))
    said = F.concat(
        F.lit("declares "),
        declared_total().cast("string"),
        F.lit(" change(s)"),
        F.when(F.size(entries) > 0, F.concat(F.lit(" ("), listed(named), F.lit(")"))).otherwise(F.lit("")),
    )
    declares = F.col("declared_changes").isNotNull() | F.coalesce(F.size(entries) > 0, F.lit(False))
    gaps = F.when(F.col("_gaps") > 0, F.concat(_text("_gaps"), F.lit(" of its declared places hold no change")))
    status = F.col("status")
    state = (
        F.when(
            status == "undeclared",
            F.lit("its dialect marks no transaction ends in this capture, so whether it is whole is unknown"),
        )
        .when(status == "no_commit", F.lit("no commit in the capture: cut at the end of the capture, or rolled back"))
        .when(
            status.isin("missing_changes", "extra_changes"),
            F.concat(
                F.concat_ws("; ", F.when(declares, said), gaps),
                F.when(status == "missing_changes", F.lit(": changes are missing")).otherwise(
                    F.lit(": more than declared")
                ),
            ),
        )
        .when(status == "no_begin", F.lit("its BEGIN is not in the capture: the capture began in the middle of it"))
        .otherwise(
            F.concat(
                F.lit("complete"),
                F.when(declares, F.concat(F.lit(", as declared ("), said, F.lit(")"))).otherwise(F.lit("")),
                F.when(unbegun(), F.lit("; its BEGIN is not in the capture")).otherwise(F.lit("")),
            )
        )
    )
    notes = [
        F.when(
            F.col("begins") > 1,
            F.concat(F.lit("begun "), _text("begins"), F.lit(" times (the producer restarted in it)")),
        ),
        F.when(F.col("redelivered") > 0, F.concat(_text("redelivered"), F.lit(" change(s) delivered again"))),
        F.when(F.col("misordered") > 0, F.concat(_text("misordered"), F.lit(" change(s) arrived after a later one"))),
    ]
    return F.concat_ws("; ", F.concat(label(), F.lit(": "), held), state, *notes)


def unbegun() -> Column:
    """A transaction with a commit marker and no BEGIN, of a dialect that writes begins in this capture."""
    return F.col("_writes_begins") & (F.col("begins") == 0) & (F.col("_commit_markers") > 0)


def transactions(events: DataFrame) -> DataFrame:
    """One row per transaction of a Spark event frame, in commit order: the rows :func:`cdckit.transactions`
    gives (columns :data:`TRANSACTION_COLUMNS`), computed by Spark (nothing is collected).

    >>> from cdckit import spark as cdcspark                                     # doctest: +SKIP
    >>> events = cdcspark.read(cdcspark.get_spark(), "captures/orders.jsonl")    # doctest: +SKIP
    >>> cdcspark.transactions(events).filter("status != 'complete'").show()      # doctest: +SKIP
    """
    txns = aggregated(events).withColumn("detail", _detail())
    order = [
        F.col(f"{name}_{column}").asc_nulls_last()
        for name in ("commit", "begin")
        for column in ("seq", "source", "partition", "offset")
    ]
    return txns.orderBy(*order, *[F.col(c).asc_nulls_last() for c in ("dialect", "txn_id")]).select(
        *TRANSACTION_COLUMNS
    )


def to_pandas(table: DataFrame) -> pd.DataFrame:
    """A table :func:`transactions` gives, collected as pandas with the dtypes of :data:`TRANSACTION_COLUMNS`
    (the rows and dtypes :func:`cdckit.transactions` gives)."""
    collected: pd.DataFrame = table.toPandas()
    out = collected.astype(
        {c: t for c, t in TRANSACTION_COLUMNS.items() if not t.startswith(("datetime", "timedelta"))}
    )
    for column in ("begin_time", "commit_time"):
        out[column] = pd.to_datetime(collected[column], utc=True).astype("datetime64[ns, UTC]")
    out["duration"] = pd.to_timedelta(collected["duration"]).astype("timedelta64[ns]")
    return out
