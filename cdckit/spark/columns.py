"""Column expressions both Spark modules build the same way."""
from __future__ import annotations
from pyspark.sql import Column
from pyspark.sql import functions as F
__all__ = ["table_name_column"]
def table_name_column() -> Column:
    """``database.table`` (the schema where there is no database), as the pandas side names tables."""
    return F.concat_ws(".", F.coalesce(F.col("database"), F.col("schema")), F.col("table"))
