"""Tables without a key on Spark: a multiset of row images and their net counts, by window functions.

The rule is that of :mod:`cdckit.analysis.replay_keyless` (its SQL,
:data:`~cdckit.analysis.replay_keyless.FAILED_SQL` and
:data:`~cdckit.analysis.replay_keyless.LIVE_SQL`, is read here as it is): each change adds its after image (insert,
snapshot read, update: +1) and removes its before image (update, delete: -1, before its own addition); a
truncate starts the counts again. The running sum ``s`` of an image's items in replay order, and the least
``m`` before each item, tell a removal that finds no image there (``s < least(0, m)``) and the count at the
end (``s - least(0, min s)``). Images are compared as their text; no Python runs per row or per table.

A table where some removal finds no image as written, but might describe a
row the table adds in another shape (an added image with other column names,
or the same in another order, that lacks only columns the removal holds as
null), is left to the walk (:func:`cdckit.analysis.replay_keyless.walked_tables`), as
pandas leaves it: the walk finds the row such an image describes. Any other
removal that finds no image is a row not there: counted, and reported.

>>> from cdckit.spark import keyless
>>> keyless.ITEM_COLUMNS
['_table', '_seg', '_last', 't', 'd', 'sub', '_position', 'op', 'source', 'partition', 'offset', 'seq']
"""

from __future__ import annotations

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from ..analysis.replay_keyless import FAILED_SQL, LIVE_SQL, NO_BEFORE, NOT_THERE

__all__ = ["KeylessCounts", "ITEM_COLUMNS"]

#: The columns of one image a change adds or removes: its table, segment (truncates before it) and the table's
#: last segment, its text, +1/-1, 0 for a removal (before its change's addition, 1), the change's position, and
#: the change's op, source, offset and seq (for its problem).
ITEM_COLUMNS = ["_table", "_seg", "_last", "t", "d", "sub", "_position", "op", "source", "partition", "offset", "seq"]


def _segments(changes: DataFrame, truncated: list[str]) -> DataFrame:
    """The keyless changes with ``_seg`` (how many truncates of their table came before) and ``_last`` (how many
    the table has); only tables with a truncate are sorted for it."""
    plain = changes.filter(~F.col("_table").isin(*truncated)) if truncated else changes
    plain = plain.withColumn("_seg", F.lit(0).cast("long")).withColumn("_last", F.lit(0).cast("long"))
    if not truncated:
        return plain
    cut = (F.col("op") == "truncate").cast("long")
    by_table = Window.partitionBy("_table").orderBy("_position")
    counted = (
        changes.filter(F.col("_table").isin(*truncated))
        .withColumn("_seg", F.sum(cut).over(by_table.rowsBetween(Window.unboundedPreceding, Window.currentRow)))
        .withColumn("_last", F.sum(cut).over(Window.partitionBy("_table")))
    )
    return plain.unionByName(counted)


def _items(changes: DataFrame) -> DataFrame:
    """One row per image a change adds (+1) or removes (-1): :data:`ITEM_COLUMNS`."""
    op = F.col("op")
    removed = changes.filter(op.isin("update", "delete") & F.col("before").isNotNull()).select(
        "_table",
        "_seg",
        "_last",
        F.col("before").alias("t"),
        F.lit(-1).alias("d"),
        F.lit(0).alias("sub"),
        "_position",
        "op",
        "source",
        "partition",
        "offset",
        "seq",
    )
    added = changes.filter(op.isin("insert", "read", "update") & F.col("after").isNotNull()).select(
        "_table",
        "_seg",
        "_last",
        F.col("after").alias("t"),
        F.lit(1).alias("d"),
        F.lit(1).alias("sub"),
        "_position",
        "op",
        "source",
        "partition",
        "offset",
        "seq",
    )
    return removed.unionByName(added)


def _running(items: DataFrame) -> DataFrame:
    """The items with their running sum ``s``, the least before it ``m``, ``failed`` and ``live``."""
    image = Window.partitionBy("_table", "_seg", "t").orderBy("_position", "sub")
    return (
        items.withColumn("s", F.sum("d").over(image.rowsBetween(Window.unboundedPreceding, Window.currentRow)))
        .withColumn("m", F.min("s").over(image.rowsBetween(Window.unboundedPreceding, -1)))
        .withColumn("failed", F.expr(FAILED_SQL))
        .withColumn("live", F.expr(LIVE_SQL))
    )


def _counted(running: DataFrame) -> DataFrame:
    """Per table, segment and image: in the table's last segment, its count at the end (``n``)."""
    return running.groupBy("_table", "_seg", "t").agg(
        F.max_by(F.when(F.col("_seg") == F.col("_last"), F.col("live")), F.struct("_position", "sub")).alias("n")
    )


def _unlike(running: DataFrame) -> set[str]:
    """The tables with a failed removal the walk might still match (the rule of
    :data:`cdckit.analysis.replay_keyless._UNLIKE`: an added image with other column names, or the same in another
    order, that lacks only columns the removal holds as null); one Spark job."""
    names = F.json_object_keys("t")
    nulls = F.map_keys(F.map_filter(F.from_json("t", "map<string,string>"), lambda k, v: v.isNull()))
    failing = running.filter("failed").select("_table", names.alias("names"), nulls.alias("nulls")).distinct()
    added = (
        running.filter(F.col("d") > 0)
        .join(failing.select("_table").distinct(), "_table")
        .select("_table", names.alias("added"))
        .distinct()
    )
    lacked = F.array_except("names", "added")
    could = failing.join(added, "_table").filter(
        (F.col("added") != F.col("names")) & F.forall(lacked, lambda n: F.array_contains("nulls", n))
    )
    return {r[0] for r in could.select("_table").distinct().collect()}


class KeylessCounts:
    """The net counts of the keyless changes (``key`` null) of ``tables`` among ``changes`` (redeliveries dropped,
    with ``_position``); ``truncated``: those of the tables that have a truncate.

    One Spark job finds :attr:`failing` (the tables to walk instead); the running counts are persisted, and
    :meth:`rows` and :meth:`problems` read them lazily.
    """

    def __init__(self, changes: DataFrame, tables: list[str], truncated: list[str]) -> None:
        self.tables = list(tables)
        frame = changes.filter(F.col("_table").isin(*tables) & F.col("key").isNull()) if tables else changes.limit(0)
        self._changes = frame
        self.failing: set[str] = set()
        if not tables:  # nothing counted, nothing cached
            return
        self._running = _running(_items(_segments(frame, [t for t in truncated if t in tables]))).persist()
        self._counts = _counted(self._running)
        self.failing = _unlike(self._running)

    def rows(self, table: str) -> DataFrame:
        """The live images of ``table`` (a column ``row``, the image text), each as many times as it is live."""
        live = self._counts.filter((F.col("_table") == table) & (F.col("n") > 0))
        return live.select(F.explode(F.array_repeat("t", F.col("n").cast("int"))).alias("row"))

    def problems(self, tables: list[str]) -> DataFrame:
        """The updates and deletes of ``tables`` without a before image, as :func:`cdckit.spark.replay` problem rows
        (``table``, ``key``, ``source``, ``partition``, ``offset``, ``seq``, ``op``, ``problem``, ``_position``)."""
        frame = self._changes.filter(F.col("_table").isin(*tables)) if tables else self._changes.limit(0)
        unmatched = frame.filter(F.col("op").isin("update", "delete") & F.col("before").isNull()).select(
            F.col("_table").alias("table"),
            "key",
            "source",
            "partition",
            "offset",
            "seq",
            "op",
            F.concat("op", F.lit(NO_BEFORE)).alias("problem"),
            "_position",
        )
        if not tables or not self.tables:
            return unmatched
        failed = self._running.filter(F.col("failed") & F.col("_table").isin(*tables))
        return unmatched.unionByName(
            failed.select(
                F.col("_table").alias("table"),
                F.lit(None).cast("string").alias("key"),
                "source",
                "partition",
                "offset",
                "seq",
                "op",
                F.concat("op", F.lit(NOT_THERE)).alias("problem"),
                "_position",
            )
        )
