"""The Spark side of :mod:`cdckit.export`: Spark DataFrames written with Spark's own writers.

:func:`cdckit.export.write_events`, ``write_state`` and ``write_scd2`` come
here when given a Spark DataFrame. Each output is a folder of ``part-*``
files (local paths only), staged and renamed into place as the pandas writers
do; times in CSV and JSON Lines are UTC with six fraction digits (Spark keeps
microseconds), in Parquet UTC microseconds.

>>> from cdckit.spark import export
>>> export.SPARK_FORMATS
{'parquet': 'parquet', 'csv': 'csv', 'jsonl': 'json'}
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from ..export.atomic import atomic_path, written_at
from ..export.written import Written
from ..frame import COLUMN_NAMES, arrow_to_pandas
from ..io.formats import PARTITION_COLUMN
from ..reading.events_files import canonical, count_rows, data_files
from .columns import table_name_column

__all__ = ["SPARK_FORMATS", "write_events", "write_table", "to_pandas", "to_pandas_events"]

#: Spark's name of each export format.
SPARK_FORMATS = {"parquet": "parquet", "csv": "csv", "jsonl": "json"}
#: How Spark writes times in CSV and JSON (with the writer's timeZone set to UTC).
_SPARK_TIME = "yyyy-MM-dd'T'HH:mm:ss.SSSSSSXXX"


def write_events(events: DataFrame, path: Path, fmt: str, partitioned: bool, overwrite: bool) -> Written:
    """Write a canonical Spark frame as a folder at ``path``; ``partitioned``: one ``table_name=`` folder per table.

    Called by :func:`cdckit.export.write_events`, which checks the arguments.

    >>> from cdckit import export                                                    # doctest: +SKIP
    >>> export.write_events(cdcspark.read(spark, "capture.jsonl"), "events.parquet")  # doctest: +SKIP
    """
    if partitioned:
        events = events.withColumn(PARTITION_COLUMN, table_name_column())
    with atomic_path(path, overwrite) as staged:
        write_table(events, staged, fmt, PARTITION_COLUMN if partitioned else None)
        files = data_files(staged)
        rows = count_rows(files, fmt)
    return written_at(path, staged, fmt, rows, files, [])


def write_table(frame: DataFrame, target: Path, fmt: str, partition_column: str | None = None) -> None:
    """Write a Spark DataFrame with Spark's writer as a folder at ``target`` (a local path that must not exist).

    CSV has no lists, maps or structs: such columns are written as JSON text.

    >>> write_table(spark.range(3), Path("ids.csv"), "csv")  # doctest: +SKIP
    """
    if fmt == "csv":
        nested = (T.ArrayType, T.MapType, T.StructType)
        frame = frame.select(
            *[
                F.to_json(F.col(f.name)).alias(f.name) if isinstance(f.dataType, nested) else F.col(f.name)
                for f in frame.schema.fields
            ]
        )
    writer = frame.write.mode("errorifexists").format(SPARK_FORMATS[fmt])
    if fmt == "csv":
        writer = writer.options(
            header=True,
            escape='"',
            ignoreLeadingWhiteSpace=False,
            ignoreTrailingWhiteSpace=False,
            timestampFormat=_SPARK_TIME,
            timeZone="UTC",
        )
    elif fmt == "jsonl":
        writer = writer.options(ignoreNullFields=False, timestampFormat=_SPARK_TIME, timeZone="UTC")
    if partition_column is not None:
        writer = writer.partitionBy(partition_column)
    if fmt != "parquet":
        writer.save(str(target))
        return
    # times as UTC microseconds, as pandas writes them (Spark's default INT96 reads back without a zone)
    conf, key = frame.sparkSession.conf, "spark.sql.parquet.outputTimestampType"
    previous = conf.get(key, None)
    conf.set(key, "TIMESTAMP_MICROS")
    try:
        writer.save(str(target))
    finally:
        if previous is None:
            conf.unset(key)
        else:
            conf.set(key, previous)


def to_pandas(frame: DataFrame) -> pd.DataFrame:
    """Any Spark frame (a snapshot table, say) collected to the driver as pandas.

    >>> to_pandas(spark.createDataFrame([(1, "a")], "id long, name string")).to_dict("records")  # doctest: +SKIP
    [{'id': 1, 'name': 'a'}]
    """
    return frame.toPandas()


def to_pandas_events(events: DataFrame) -> pd.DataFrame:
    """The canonical columns of a Spark event frame as the pandas frame ``cdckit.read`` gives (collected to the
    driver with ``toArrow``: fine for what fits there).

    >>> to_pandas_events(cdcspark.read(spark, "capture.jsonl")).equals(cdckit.read("capture.jsonl"))  # doctest: +SKIP
    True
    """
    return arrow_to_pandas(canonical(events.select(*COLUMN_NAMES).toArrow(), "the Spark frame"))
