"""A transaction's declared tables against the tables the capture holds of it, as Spark expressions.

The rule is :func:`cdckit.analysis.ordering.transaction_members.match_tables`: a declared name matches the
same held name, else the held name (not matched already) that shares the most trailing dotted parts with it
(at least the table's own), declared names taken in sorted order, each held name matched once. Written with
higher-order functions over each transaction's few tables (no Python runs).

>>> from cdckit.spark import transaction_tables
>>> transaction_tables.__all__
['differing_tables']
"""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F

__all__ = ["differing_tables"]


def _shared_parts(a: Column, b: Column) -> Column:
    """How many trailing dotted parts the names ``a`` and ``b`` share."""
    left, right = F.reverse(F.split(a, r"\.")), F.reverse(F.split(b, r"\."))
    steps = F.sequence(F.lit(0), F.least(F.size(left), F.size(right)) - 1)
    start = F.struct(F.lit(0).alias("n"), F.lit(True).alias("same"))

    def step(acc: Column, i: Column) -> Column:
        same = acc["same"] & (F.get(left, i) == F.get(right, i))
        return F.struct((acc["n"] + same.cast("int")).alias("n"), same.alias("same"))

    return F.aggregate(steps, start, step)["n"]


def _matched(declared: Column, held: Column) -> Column:
    """(declared name, held name or null) per declared name, in sorted order."""
    names = F.array_sort(F.map_keys(declared))
    held_names = F.transform(held, lambda e: e["t"])
    pair = "struct<d: string, h: string>"
    start = F.struct(
        F.filter(held_names, lambda h: ~F.array_contains(names, h)).alias("free"),
        F.array().cast(f"array<{pair}>").alias("pairs"),
    )

    def take(acc: Column, name: Column) -> Column:
        scores = F.transform(acc["free"], lambda h: F.struct(_shared_parts(name, h).alias("s"), h.alias("h")))
        top = F.array_max(F.transform(scores, lambda x: x["s"]))
        best = F.get(F.filter(scores, lambda x: (x["s"] == top) & (top > 0)), 0)["h"]
        best = F.when(F.array_contains(held_names, name), name).otherwise(best)
        free = F.when(best.isNull(), acc["free"]).otherwise(F.filter(acc["free"], lambda h: h != best))
        pairs = F.array_append(acc["pairs"], F.struct(name.alias("d"), best.alias("h")))
        return F.struct(free.alias("free"), pairs.alias("pairs"))

    return F.aggregate(names, start, take)["pairs"]


def differing_tables(declared: Column, held: Column) -> Column:
    """Where the capture differs from a declaration: an array of (table, declared, held) structs, the declared
    names first (sorted; held counts of their matched names), then the held names no declared one matched
    (declared 0); entries that agree left out. Null without a declaration.

    ``declared``: a map of table name to declared changes; ``held``: an array of (``t`` table, ``n`` changes)
    structs sorted by table.
    """
    pairs = _matched(declared, held)
    held_map = F.map_from_entries(held)

    def held_of(name: Column) -> Column:
        return F.when(name.isNull(), F.lit(0)).otherwise(F.coalesce(F.try_element_at(held_map, name), F.lit(0)))

    entry = "struct<t: string, d: bigint, h: bigint>"
    said = F.transform(
        pairs,
        lambda p: F.struct(
            p["d"].alias("t"), F.try_element_at(declared, p["d"]).alias("d"), held_of(p["h"]).cast("long").alias("h")
        ).cast(entry),
    )
    unmatched = F.filter(held, lambda e: ~F.exists(pairs, lambda p: F.coalesce(p["h"] == e["t"], F.lit(False))))
    extra = F.transform(unmatched, lambda e: F.struct(e["t"].alias("t"), F.lit(0).alias("d"), e["n"].alias("h")))
    both = F.concat(said, F.transform(extra, lambda e: e.cast(entry)))
    return F.when(declared.isNotNull(), F.filter(both, lambda e: e["d"] != e["h"]))
