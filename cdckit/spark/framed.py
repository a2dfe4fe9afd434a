"""The schemas of framed Kafka records (Confluent's wire format) on Spark: found once, on the driver.

A DataFrame read from Kafka holds keys and values framed for a schema registry; the tasks decode them with
the :class:`~cdckit.io.schema_book.SchemaBook` they are given (:func:`cdckit.spark.decode`). Looking every id
up on the driver first means one registry call per schema, not per task, and executors that cannot reach
the registry still decode.

>>> callable(look_up_schemas)
True
"""

from __future__ import annotations

from typing import Any

from ..io.schema_book import SchemaBook

__all__ = ["look_up_schemas"]


def look_up_schemas(prepared: Any, book: SchemaBook) -> None:
    """Look up, on the driver, every schema id the framed keys and values of ``prepared`` use (one job), so that
    ``book`` carries them to the tasks."""
    from pyspark.sql import functions as F

    magic = F.lit(bytearray(b"\x00"))
    ids: set[int] = set()
    for column in ("value", "key"):
        part = F.col(column)
        framed_ids = (
            prepared.filter(part.isNotNull() & (F.length(part) >= 5) & (F.substring(part, 1, 1) == magic))
            .select(F.conv(F.hex(F.substring(part, 2, 4)), 16, 10).cast("long").alias("id"))
            .distinct()
        )
        ids.update(row["id"] for row in framed_ids.collect())
    for schema_id in sorted(ids):
        book.lookup(schema_id)
