"""What a Spark replay reads: the changes in replay order and what each table is.

Changes are cut at ``as_of``, given their position in a replay order
(:data:`ORDERS`) and freed of exact redeliveries; one Spark job then surveys
each table (:func:`survey`): its columns in order of first appearance, their
Spark types from the JSON kinds seen, and whether it must be walked in Python
(:mod:`cdckit.spark.replay` reads states and versions from it).

>>> sorted(ORDERS)
['arrival', 'event_time', 'seq']
>>> object_fields("OBJECT<a: BIGINT, b: STRING>")
{'a': 'BIGINT', 'b': 'STRING'}
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd
from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F
from pyspark.sql import types as T

from ..analysis.replayer import column_order, is_partial
from ..frame import REPLAY_OPS
from .columns import table_name_column
from .sorting import filled_seq, message_position, redelivery_identity, split_sources, tied_seq
from .tables import kinds_given, typed_json

__all__ = [
    "ORDERS",
    "Table",
    "survey",
    "shape_groups",
    "rekeyed_tables",
    "object_fields",
    "plan",
    "effective",
    "key_moved",
    "streamed_table_name",
]

#: Replay orders: the fields of a change's position (all non-null, so positions compare in Python too).
ORDERS: dict[str, list[str]] = {
    "seq": ["_seq", "source", "_partition", "offset", "_row"],
    "event_time": ["_untimed", "_time", "source", "_partition", "offset", "_row"],
    "arrival": ["source", "_partition", "offset", "_row"],
}


def _utc(value: Any) -> pd.Timestamp:
    """A time as a UTC timestamp (zone-less values are UTC)."""
    stamp = pd.Timestamp(value)
    return stamp.tz_localize("UTC") if stamp.tzinfo is None else stamp.tz_convert("UTC")


def _position(order: str) -> Column:
    if order not in ORDERS:
        raise ValueError(f"order must be one of {sorted(ORDERS)}, not {order!r}")
    return F.struct(*ORDERS[order])


def effective() -> Column:
    """Changes that set or remove a row (the others are ignored, with a problem)."""
    return (F.col("op") == "delete") | F.col("after").isNotNull()


# --------------------------------------------------------------------------- preparing changes


def streamed_table_name(stream: Sequence[str] = ()) -> Column:
    """A change's table name, or, given the columns of a ``stream`` (the ordering report's ``by=``), those
    columns' values and it joined by the unit separator (U+001F), so that each stream replays on its own (as
    :func:`cdckit.analysis.replay_plan.stream_table` reads it back)."""
    name = table_name_column()
    if not stream:
        return name
    parts = [F.coalesce(F.col(c).cast("string"), F.lit("")) for c in stream]
    return F.when(name.isNull(), F.lit(None)).otherwise(F.concat_ws("\x1f", *parts, name))


def _changes(events: DataFrame, as_of: Any, stream: Sequence[str] = ()) -> DataFrame:
    """Row changes (cut at ``as_of``) with ``_table`` (qualified by ``stream``: :func:`streamed_table_name`),
    ``_row`` (frame order) and the position fields."""
    changes = events.filter(F.col("op").isin(*REPLAY_OPS))
    if as_of is not None:
        cut = _utc(as_of).to_pydatetime()
        changes = changes.filter(F.col("event_time").isNotNull() & (F.col("event_time") <= F.lit(cut)))
    return changes.select(
        "dialect",
        "database",
        "schema",
        streamed_table_name(stream).alias("_table"),
        "key",
        "key_columns",
        "op",
        "before",
        "after",
        "seq",
        F.coalesce("source", F.lit("")).alias("source"),
        "partition",
        "offset",
        "event_time",
        F.monotonically_increasing_id().alias("_row"),
        F.coalesce("partition", F.lit(-1)).alias("_partition"),
        F.col("event_time").isNull().alias("_untimed"),
        F.coalesce("event_time", F.lit(0).cast("timestamp")).alias("_time"),
        F.coalesce(message_position(), F.lit("")).alias("_seq"),
    )


def _prepared(changes: DataFrame, fill: bool, split: bool = False, stream: Sequence[str] = ()) -> DataFrame:
    """The changes without exact redeliveries (first arrival kept), partitioned by table and key.

    ``fill``: some change has no ``seq``; ``_seq`` is then filled from the
    previous arrival in its stream, source and partition, after the redeliveries are gone.
    ``split``: some source has two partitions; ``_seq`` then takes the tie mark
    (:func:`cdckit.spark.sorting.tied_seq`).
    """
    copies = Window.partitionBy("_table", "key", "dialect", "database", "schema", *redelivery_identity()).orderBy(
        "source", "_partition", "offset", "_row"
    )
    frame = changes.repartition("_table", "key")
    frame = (
        frame.withColumn("_copy", F.row_number().over(copies))
        .filter(F.col("seq").isNull() | (F.col("_copy") == 1))
        .drop("_copy")
    )
    if fill or split:
        frame = frame.withColumn("_seq", filled_seq(stream)) if fill else frame
        frame = frame.withColumn("_seq", tied_seq(stream)) if split else frame
        frame = frame.repartition("_table", "key")
    return frame.filter(F.col("_table").isNotNull())


# --------------------------------------------------------------------------- what each table is


@dataclass
class Table:
    """What replay needs to know of one table: its columns in order, their Spark types, how it replays."""

    name: str
    columns: list[str] = field(default_factory=list)
    types: dict[str, T.DataType] = field(default_factory=dict)
    partial: bool = False
    walked: bool = False  # a key changes, a truncate of keyed rows, or keyless rows not counted: walked in Python
    keyless: bool = False  # some changes name no key
    keyed: bool = False  # some changes name a key
    truncated: bool = False
    versions: bool = False  # scd2 has rows for it
    unsequenced: bool = False  # some change has no seq
    kinds: dict[str, str] = field(default_factory=dict)  # columns given a kind: parsed as variants, then typed

    def schema(self) -> T.StructType:
        return T.StructType(
            [
                T.StructField(c, T.VariantType() if c in self.kinds else self.types.get(c, T.StringType()))
                for c in self.columns
            ]
        )

    def values(self, row: Column) -> list[Column]:
        """The source columns of a parsed row (a struct of :meth:`schema`); a column given a kind as JSON text."""
        return [(F.to_json(row[c]) if c in self.kinds else row[c]).alias(c) for c in self.columns]

    def typed(self, frame: DataFrame) -> DataFrame:
        """A frame of :meth:`values` with the columns given a kind typed as in pandas."""
        return typed_json(frame, self.kinds) if self.kinds else frame


def key_moved(names: Column | None = None) -> Column:
    """An update whose before image holds a different key (conservative: texts of the key values differ).

    ``names``: the before image's column names where a caller has them already (else read here)."""
    names = F.coalesce(F.json_object_keys("before"), F.array()) if names is None else names
    values = F.transform(
        "key_columns",
        lambda c: F.call_function("get_json_object", F.col("before"), F.concat(F.lit("$['"), c, F.lit("']"))),
    )
    has_all = F.forall("key_columns", lambda c: F.array_contains(names, c))
    return F.coalesce(
        (F.col("op") == "update")
        & F.col("key").isNotNull()
        & F.col("before").isNotNull()
        & (F.size("key_columns") > 0)
        & has_all
        & (F.to_json(values) != F.to_json(F.from_json("key", "array<string>"))),
        F.lit(False),
    )


def shape_groups(changes: DataFrame, order: str) -> DataFrame:
    """The survey's query (:func:`survey` collects it): per table and shape (key columns, before and after
    image names), the first event, the leading dialect, the JSON kinds of its images and what it holds.

    Each image's names are read once (a column of their own, which Spark does
    not fold back into the three places that use them) and each image is
    parsed once more, for its kinds.
    """
    before, after = F.col("_names_before"), F.col("_names_after")
    key_columns = F.coalesce("key_columns", F.array().cast("array<string>"))
    named = changes.filter(F.col("_table").isNotNull()).select(
        "*",
        F.coalesce(F.json_object_keys("before"), F.array()).alias("_names_before"),
        F.coalesce(F.json_object_keys("after"), F.array()).alias("_names_after"),
    )
    return named.groupBy("_table", F.xxhash64(key_columns, before, after).alias("_shape")).agg(
        F.min(
            F.struct(
                "_seq",
                "source",
                "_partition",
                "offset",
                key_columns.alias("k"),
                before.alias("b"),
                after.alias("a"),
            )
        ).alias("first"),
        F.min(F.struct(_position(order).alias("p"), F.col("dialect").alias("d"))).alias("lead"),
        F.schema_of_variant_agg(F.try_parse_json("before")).alias("kinds_before"),
        F.schema_of_variant_agg(F.try_parse_json("after")).alias("kinds_after"),
        F.max(F.col("key").isNull() & (F.col("op") != "truncate")).alias("keyless"),
        F.max(key_moved(before)).alias("moved"),
        F.max(F.col("op") == "truncate").alias("truncated"),
        F.max(F.col("key").isNotNull()).alias("keyed"),
        F.max(F.col("key").isNotNull() & (F.col("op") != "delete") & F.col("after").isNotNull()).alias("versions"),
        F.max(F.col("seq").isNull()).alias("unsequenced"),
    )


def survey(changes: DataFrame, order: str) -> dict[str, Table]:
    """Per table: columns in order of first appearance, kinds, and whether it must be walked (one Spark job).

    Events are grouped by their column names (key columns, before and after
    image keys: :func:`shape_groups`); each group brings its first event and
    the JSON kinds of its images to the driver, where the table's columns are
    put in order.
    """
    shapes = shape_groups(changes, order)
    by_table: dict[str, list[Any]] = {}
    for row in shapes.collect():
        by_table.setdefault(row["_table"], []).append(row)
    tables = {}
    for name, rows in sorted(by_table.items()):
        ranks: dict[str, tuple] = {}
        kinds: dict[str, set[str]] = {}
        for row in rows:
            first = row["first"]
            where = (first["_seq"], first["source"], first["_partition"], first["offset"])
            for position, column in enumerate([*first["k"], *first["b"], *first["a"]]):
                ranks[column] = min(ranks.get(column, (*where, position)), (*where, position))
            for text in (row["kinds_before"], row["kinds_after"]):
                for column, kind in object_fields(text).items():
                    kinds.setdefault(column, set()).add(_kind(kind))
        lead = min((row["lead"] for row in rows), key=lambda lead: tuple(lead["p"]))
        keyless, moved = any(r["keyless"] for r in rows), any(r["moved"] for r in rows)
        truncated, keyed = any(r["truncated"] for r in rows), any(r["keyed"] for r in rows)
        # merged only where images differ in their columns (otherwise merging is replacing), as in pandas
        image_shapes = {tuple(sorted(names)) for r in rows for names in (r["first"]["b"], r["first"]["a"]) if names}
        tables[name] = Table(
            name,
            column_order(ranks),
            {c: _spark_type(k) for c, k in kinds.items()},
            partial=bool(is_partial(lead["d"])) and len(image_shapes) > 1,
            walked=moved or (truncated and keyed),  # keyless rows: see cdckit.spark.replay
            keyless=keyless,
            keyed=keyed,
            truncated=truncated,
            versions=any(r["versions"] for r in rows),
            unsequenced=any(r["unsequenced"] for r in rows),
        )
    for name in rekeyed_tables(changes, [n for n, t in tables.items() if t.partial and not t.walked]):
        tables[name].walked = True
    return tables


def rekeyed_tables(changes: DataFrame, tables: list[str]) -> set[str]:
    """Of ``tables``, those where a delete and an insert of another key share a seq: maybe a primary-key
    update sent as a delete and a create (see :func:`cdckit.analysis.replayer.moved_row`), which the walk resolves."""
    if not tables:
        return set()
    pairs = (
        changes.filter(
            F.col("_table").isin(*tables)
            & F.col("op").isin("delete", "insert")
            & F.col("seq").isNotNull()
            & (F.col("seq") != "")
        )
        .groupBy("_table", "seq")
        .agg(
            F.max(F.col("op") == "delete").alias("d"),
            F.max(F.col("op") == "insert").alias("i"),
            F.count_distinct("key").alias("keys"),
        )
        .filter(F.col("d") & F.col("i") & (F.col("keys") > 1))
        .select("_table")
        .distinct()
    )
    return {row[0] for row in pairs.collect()}


_KINDS = {
    "BIGINT": "long",
    "INT": "long",
    "SMALLINT": "long",
    "TINYINT": "long",
    "DOUBLE": "double",
    "FLOAT": "double",
    "BOOLEAN": "boolean",
    "STRING": "string",
    "VOID": "null",
    "OBJECT": "nested",
    "ARRAY": "nested",
    "VARIANT": "string",
}


def _kind(variant_type: str) -> str:
    """The JSON kind of a variant type text: ``DECIMAL(p,0)`` is a whole number (``wide`` past 18 digits)."""
    if variant_type.startswith("DECIMAL("):
        precision, scale = (int(part) for part in variant_type[len("DECIMAL(") : -1].split(","))
        return ("long" if precision <= 18 else "wide") if scale == 0 else "double"
    return _KINDS.get(variant_type.split("<")[0], "string")


def _spark_type(kinds: set[str]) -> T.DataType:
    """The column type for the JSON kinds seen in it: numbers widen (long, exact decimal, double); other mixes are
    text."""
    kinds = kinds - {"null"}
    if kinds == {"long"}:
        return T.LongType()
    if kinds and kinds <= {"long", "wide"}:
        return T.DecimalType(38, 0)
    if kinds and kinds <= {"long", "wide", "double"}:
        return T.DoubleType()
    if kinds == {"boolean"}:
        return T.BooleanType()
    return T.StringType()


def object_fields(text: str | None) -> dict[str, str]:
    """The top-level fields of a variant schema text (``schema_of_variant_agg``): ``{name: type text}``.

    >>> object_fields("OBJECT<`a b`: STRING, d: DECIMAL(5,2), n: OBJECT<`x,y`: ARRAY<BIGINT>>>")
    {'a b': 'STRING', 'd': 'DECIMAL(5,2)', 'n': 'OBJECT<`x,y`: ARRAY<BIGINT>>'}
    """
    if not text or not text.startswith("OBJECT<"):
        return {}
    body, out, i = text[len("OBJECT<") : -1], {}, 0
    while i < len(body):
        if body[i] == "`":
            end = i + 1
            while not (body[end] == "`" and body[end + 1 : end + 2] != "`"):
                end += 2 if body[end] == "`" else 1
            name, i = body[i + 1 : end].replace("``", "`"), end + 1
        else:
            end = body.index(":", i)
            name, i = body[i:end], end
        i += 2  # ": "
        depth, quoted, start = 0, False, i
        while i < len(body) and (quoted or depth or body[i] != ","):
            char = body[i]
            quoted = not quoted if char == "`" else quoted
            depth += (char in "<(") - (char in ">)") if not quoted else 0
            i += 1
        out[name] = body[start:i]
        i += 2  # ", "
    return out


# --------------------------------------------------------------------------- the plan


def plan(
    events: DataFrame, as_of: Any, order: str, types: Any, stream: Sequence[str] = ()
) -> tuple[DataFrame, DataFrame, dict[str, Table]]:
    """``(changes for reading states, changes without redeliveries, tables)``, both with ``_position``;
    each table's columns given a kind by ``types`` (see :func:`cdckit.spark.tables.kinds_given`).

    ``stream``: columns whose values keep changes apart, each stream replayed as a capture of its own (the
    ordering report's ``by=``); table names are then qualified by them (:func:`streamed_table_name`)."""
    position = _position(order)
    changes = _changes(events, as_of, stream)
    tables = survey(changes.withColumn("_position", position), order)
    fill = any(t.unsequenced for t in tables.values())
    ((split,),) = changes.agg(split_sources()).collect()  # one row: a position may be shared by partitions
    prepared = _prepared(changes, fill, bool(split), stream).withColumn("_position", position)
    unsequenced = fill or bool(split)  # _seq is then not seq: filled and tie-marked as the pandas engine does
    if unsequenced:  # ranks and first dialects follow the filled seq
        tables = survey(prepared, order)
    for name, table in tables.items():
        table.kinds = {c: k for c, k in kinds_given(types, name).items() if c in table.columns}
    if unsequenced:
        return prepared, prepared, tables
    # redeliveries repeat a change exactly: the state reads the same without dropping them
    return changes.filter(F.col("_table").isNotNull()).withColumn("_position", position), prepared, tables
