"""One table's changes as typed Spark columns, by the rules of :mod:`cdckit.tables`.

The kinds come from ``types`` (a frame laid out like ``events.attrs["column_types"]``,
or ``{column: kind}``), else they are inferred from a sample of the table's
images with :func:`cdckit.column_types.infer_kind`; a kind whose Arrow type
depends on the values (a decimal without scale, whole numbers beyond 64
bits) is fixed from that sample. The images are then typed inside Spark tasks
(``mapInArrow``) by :func:`cdckit.column_types.typed_array` itself, so that a
value is typed exactly as in pandas; a value that does not fit is null.
Spark keeps times in microseconds (nanoseconds are cut) and has no time of
day: a ``time`` column is ``HH:MM:SS.ffffff`` text.

>>> from cdckit.spark import tables
>>> tables.spark_arrow_type(pa.time64("us")), tables.spark_arrow_type(pa.timestamp("ns", tz="UTC"))
(DataType(string), TimestampType(timestamp[us, tz=UTC]))
"""

from __future__ import annotations

from typing import Any, Iterator

import pandas as pd
import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from ..column_types import infer_kind, is_kind, typed_array
from ..ordering import REPLAY_OPS
from ..replay import find_table
from ..replayer import parse_image
from ..tables import META_COLUMNS
from .ordering import table_name

__all__ = ["table", "spark_arrow_type"]

_META_TYPES = {"op": pa.string(), "key": pa.string(), "seq": pa.string(),
               "event_time": pa.timestamp("us", tz="UTC"), "source": pa.string(), "offset": pa.int64()}


def spark_arrow_type(kind: pa.DataType) -> pa.DataType:
    """The Arrow type a typed column takes on Spark: times in microseconds, a time of day as text."""
    if pa.types.is_timestamp(kind):
        return pa.timestamp("us", tz="UTC")
    if pa.types.is_time(kind):
        return pa.string()
    return kind


def _kinds_given(types: Any, name: str) -> dict[str, str]:
    """``{column: kind}`` from ``types``: a declarations frame (the latest row of each column of ``name``) or a dict."""
    if types is None:
        return {}
    if isinstance(types, pd.DataFrame):
        holder = pd.DataFrame()
        holder.attrs["column_types"] = types
        from ..tables import declared_types
        return declared_types(holder).get(name, {})
    return {column: kind for column, kind in dict(types).items() if is_kind(kind)}


def table(events: DataFrame, name: str, *, types: Any = None, before: bool = False,
          sample: int = 10_000) -> DataFrame:
    """One table's changes in a Spark events frame as typed columns: the columns of :func:`cdckit.table`.

    ``name``: ``"database.table"`` or the bare name; ``types``: a column types
    frame (as ``events.attrs["column_types"]``) or ``{column: kind}``; columns
    nothing declares are inferred from the first ``sample`` changes.
    """
    names = [r[0] for r in events.select(table_name().alias("t")).distinct().collect()]
    full = find_table(names, name)
    rows = events.filter((table_name() == F.lit(full)) & F.col("op").isin(*REPLAY_OPS))
    given = _kinds_given(types, full)
    picked = rows.select("key_columns", "before", "after").limit(sample).toPandas()
    images = [parse_image(v) for v in [*picked["before"].tolist(), *picked["after"].tolist()]]
    columns: dict[str, None] = dict.fromkeys(given)
    for key_columns, image in zip([*picked["key_columns"].tolist()] * 2, images):
        for column in [*(list(key_columns) if key_columns is not None else []), *(image or {})]:
            columns.setdefault(column, None)
    kinds, targets = {}, {}
    for column in columns:
        found = [image[column] for image in images if image is not None and column in image]
        kinds[column] = given.get(column) or infer_kind(found)
        targets[column] = spark_arrow_type(typed_array(found, kinds[column])[0].type)
        if pa.types.is_decimal(targets[column]):  # the scale the sample needs, for every batch
            kinds[column] = f"decimal({targets[column].precision},{targets[column].scale})"
        elif targets[column] == pa.string() and not kinds[column].startswith("time"):
            kinds[column] = "string" if kinds[column].startswith(("decimal", "int")) else kinds[column]
    named = {c: (f"after_{c}" if c in META_COLUMNS else c) for c in columns}
    fields = [pa.field(c, _META_TYPES[c]) for c in META_COLUMNS]
    fields += [pa.field(named[c], targets[c]) for c in columns]
    if before:
        fields += [pa.field(f"before_{c}", targets[c]) for c in columns]
    schema = pa.schema(fields)

    def typed(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            data = batch.to_pydict()
            arrays = [batch.column(c).cast(_META_TYPES[c]) for c in META_COLUMNS]
            image_sets = [[parse_image(v) for v in data["after"]]]
            if before:
                image_sets.append([parse_image(v) for v in data["before"]])
            for parsed in image_sets:
                for column in columns:
                    array, _ = typed_array([None if i is None else i.get(column) for i in parsed], kinds[column])
                    arrays.append(_fitted(array, targets[column]))
            yield pa.RecordBatch.from_arrays(arrays, schema=schema)

    from .engine import _spark_schema
    return rows.select(*META_COLUMNS, "before", "after").mapInArrow(typed, _spark_schema(schema))


def _fitted(array: pa.Array, target: pa.DataType) -> pa.Array:
    """A typed array as the sample fixed its Spark type (a value that does not fit it is null)."""
    if pa.types.is_time(array.type):
        return pa.array([None if v is None else v.isoformat() for v in array.to_pylist()], pa.string())
    if array.type == target:
        return array
    try:
        return array.cast(target, safe=False)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return pa.nulls(len(array), target)
