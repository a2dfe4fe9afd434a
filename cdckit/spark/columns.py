"""Column expressions shared by the Spark modules, each written once.

>>> from cdckit.spark import columns
>>> columns.__all__
['table_name_column']
"""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F

__all__ = ["table_name_column"]


def table_name_column() -> Column:
    """``database.table`` (or ``schema.table``, ``table``; null without a table) as a Spark expression, like
    :func:`cdckit.frame.table_names`.

    >>> from cdckit.spark import get_spark                                       # doctest: +SKIP
    >>> get_spark().createDataFrame([("shop", None, "items")], "database string, schema string, table string") \\
    ...     .select(table_name_column().alias("name")).first().name              # doctest: +SKIP
    'shop.items'
    """
    return F.when(F.col("table").isNull(), F.lit(None)).otherwise(
        F.concat_ws(".", F.coalesce(F.col("database"), F.col("schema")), F.col("table"))
    )
