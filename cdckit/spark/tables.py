"""One table's changes as typed Spark columns, by the rules of :mod:`cdckit.analysis.tables`.

The kinds come from ``types`` (a frame laid out like ``cdckit.column_types_of(events)``,
or ``{column: kind}``), else they are inferred from a sample of the table's
images with :func:`cdckit.column_types.infer_kind`; a kind whose Arrow type
depends on the values (a decimal without scale, whole numbers beyond 64
bits) is fixed from that sample. The images are then typed inside Spark tasks
(``mapInArrow``) by :func:`cdckit.column_types.typed_array` itself, so that a
value is typed exactly as in pandas. Typing never turns a value into null: a
Spark column has one type, so a column where any value does not fit its kind
or its Spark type (found by a first pass over the images) is text, each value
as the capture wrote it (as pandas keeps such a value in an ``object`` column).
Spark keeps times in microseconds (nanoseconds are cut) and has no time of
day: a ``time`` column is ``HH:MM:SS.ffffff`` text. ``DecimalType`` holds 38
digits: a wider decimal is its exact text.

>>> from cdckit.spark import tables
>>> tables.spark_arrow_type(pa.time64("us")), tables.spark_arrow_type(pa.timestamp("ns", tz="UTC"))
(DataType(string), TimestampType(timestamp[us, tz=UTC]))
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import pandas as pd
import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from .. import values
from ..analysis.tables import META_COLUMNS, declared_kinds
from ..column_types import infer_kind, is_kind, parse_kind, typed_array
from ..frame import REPLAY_OPS, find_table
from ..python_columns import object_columns
from ..row_images import parse_image
from .columns import table_name_column
from .session import check_workers

__all__ = ["table", "spark_arrow_type", "kinds_given", "fixed_kinds", "typed_column", "misfit_count", "typed_json"]

_META_TYPES = {
    "op": pa.string(),
    "key": pa.string(),
    "seq": pa.string(),
    "event_time": pa.timestamp("us", tz="UTC"),
    "source": pa.string(),
    "offset": pa.int64(),
}


def spark_arrow_type(kind: pa.DataType) -> pa.DataType:
    """The Arrow type a typed column takes on Spark: times in microseconds, a time of day as text, a decimal
    past Spark's 38 digits as its exact text.

    >>> spark_arrow_type(pa.decimal256(50, 2)), spark_arrow_type(pa.decimal128(38, 2))
    (DataType(string), Decimal128Type(decimal128(38, 2)))
    """
    if pa.types.is_decimal(kind) and (kind.precision > 38 or not pa.types.is_decimal128(kind)):
        return pa.string()
    if pa.types.is_timestamp(kind):
        return pa.timestamp("us", tz="UTC")
    if pa.types.is_time(kind):
        return pa.string()
    return kind


def kinds_given(types: Any, name: str) -> dict[str, str]:
    """``{column: kind}`` of table ``name`` from ``types``: a declarations frame (the latest row of each column
    of ``name``), ``{column: kind}``, or ``{table: {column: kind}}`` (the entry of ``name``); texts that are not
    kinds are left out.

    >>> kinds_given({"price": "decimal(10,2)", "x": "varchar"}, "shop.items")
    {'price': 'decimal(10,2)'}
    >>> kinds_given({"shop.items": {"seen": "timestamp"}}, "shop.items"), kinds_given(None, "t")
    ({'seen': 'timestamp'}, {})
    """
    if types is None:
        return {}
    if isinstance(types, pd.DataFrame):
        return declared_kinds(types).get(name, {})
    types = dict(types)
    if isinstance(types.get(name), Mapping):
        types = dict(types[name])
    return {column: kind for column, kind in types.items() if is_kind(kind)}


def fixed_kinds(
    kinds: Mapping[str, str], found: Mapping[str, Sequence[Any]]
) -> tuple[dict[str, str], dict[str, pa.DataType]]:
    """Each column's kind made definite by a sample of its values (``found``), and the Arrow type it takes
    on Spark: a decimal without scale gets the scale the sample needs, an ``int`` with a value beyond 64 bits
    is ``decimal(38,0)``, numbers too long for any decimal are text.

    >>> kinds, targets = fixed_kinds({"d": "decimal", "t": "timestamp(ns)"}, {"d": ["1.25", 3], "t": []})
    >>> kinds, targets["t"]
    ({'d': 'decimal(38,2)', 't': 'timestamp(ns)'}, TimestampType(timestamp[us, tz=UTC]))
    """
    kinds, targets = dict(kinds), {}
    for column, kind in kinds.items():
        targets[column] = spark_arrow_type(typed_array(list(found.get(column, [])), kind)[0].type)
        if pa.types.is_decimal(targets[column]):  # the scale the sample needs, for every batch
            kinds[column] = f"decimal({targets[column].precision},{targets[column].scale})"
        elif targets[column] == pa.string() and kind.startswith(("decimal", "int")):
            kinds[column] = "string"
    return kinds, targets


def typed_column(column: Sequence[Any], kind: str, target: pa.DataType) -> pa.Array:
    """Image values (JSON values, None for null) as the Arrow array of ``target``; a value that does not fit its
    kind or the target is null (:func:`misfit_count` counts them: the callers make such a column text).

    >>> typed_column([1.5, "12345678901234567.89", "nope"], "decimal(20,2)", pa.decimal128(20, 2)).to_pylist()
    [Decimal('1.50'), Decimal('12345678901234567.89'), None]
    >>> typed_column([1.5, "1" * 50], "string", pa.string()).to_pylist() == ["1.5", "1" * 50]
    True
    """
    array, _ = typed_array(column, kind)
    return _fitted(array, target)


def misfit_count(column: Sequence[Any], kind: str, target: pa.DataType) -> int:
    """How many values :func:`typed_column` turns into null.

    >>> misfit_count([1.5, "12345678901234567.89", "nope", None], "decimal(20,2)", pa.decimal128(20, 2))
    1
    """
    typed = typed_column(column, kind, target)
    return sum(1 for value, done in zip(column, typed.is_null().to_pylist()) if done and value is not None)


def _without_misfits(
    kinds: dict[str, str], targets: dict[str, pa.DataType], misfits: set[str]
) -> tuple[dict[str, str], dict[str, pa.DataType]]:
    """The kinds and targets with each column in ``misfits`` made text (each value as the capture wrote it)."""
    return (
        {c: "string" if c in misfits else k for c, k in kinds.items()},
        {c: pa.string() if c in misfits else t for c, t in targets.items()},
    )


def typed_json(frame: DataFrame, kinds: Mapping[str, str], sample: int = 10_000) -> DataFrame:
    """``frame`` with each column named in ``kinds`` (JSON value texts, null for none) typed as its kind,
    in Spark tasks (``mapInArrow``); the other columns as they are. A kind whose type depends on the
    values (an ``int``, a decimal without scale) is fixed from the first ``sample`` rows."""
    from pyspark.sql.pandas.types import from_arrow_type

    kinds = {c: k for c, k in kinds.items() if c in frame.columns}
    if not kinds:
        return frame
    check_workers(frame.sparkSession)
    found: dict[str, list[Any]] = {}
    unsettled = [c for c, k in kinds.items() if _unsettled(k)]
    if unsettled:
        picked = frame.select(*unsettled).limit(sample).toArrow()
        found = {c: [values.loads(t) for t in picked.column(c).to_pylist() if t is not None] for c in unsettled}
    kinds, targets = fixed_kinds(kinds, found)
    kinds, targets = _without_misfits(kinds, targets, _misfit_columns_of_values(frame, kinds, targets))
    schema = T.StructType(
        [
            T.StructField(f.name, from_arrow_type(targets[f.name])) if f.name in targets else f
            for f in frame.schema.fields
        ]
    )

    def typed(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            arrays = [
                typed_column(
                    [None if t is None else values.loads(t) for t in batch.column(c).to_pylist()], kinds[c], targets[c]
                )
                if c in kinds
                else batch.column(c)
                for c in batch.schema.names
            ]
            yield pa.RecordBatch.from_arrays(arrays, names=batch.schema.names)

    return frame.mapInArrow(typed, schema)


def _misfit_columns_of_values(
    frame: DataFrame, kinds: Mapping[str, str], targets: Mapping[str, pa.DataType]
) -> set[str]:
    """The columns of ``frame`` (JSON value texts) where a value does not fit its kind or target (a Spark job)."""
    checked = [c for c in kinds if targets[c] != pa.string()]
    if not checked:
        return set()

    def found(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            bad = [
                c
                for c in checked
                if misfit_count(
                    [None if t is None else values.loads(t) for t in batch.column(c).to_pylist()], kinds[c], targets[c]
                )
            ]
            yield pa.RecordBatch.from_pydict({"column": bad}, schema=pa.schema([("column", pa.string())]))

    return {r[0] for r in frame.select(*checked).mapInArrow(found, "column string").distinct().collect()}


def _unsettled(kind: str) -> bool:
    """Whether a kind's Arrow type depends on the values: ``int`` (64 bits or more), a decimal without scale."""
    name, args = parse_kind(kind)
    return name == "int" or name == "decimal" and not (len(args) > 1 and args[1].isdigit())


def table(events: DataFrame, name: str, *, types: Any = None, before: bool = False, sample: int = 10_000) -> DataFrame:
    """One table's changes in a Spark events frame as typed columns: the columns of :func:`cdckit.table`.

    ``name``: ``"database.table"`` or the bare name; ``types``: a column types
    frame (as ``cdckit.column_types_of(events)``) or ``{column: kind}`` (see :func:`kinds_given`); columns
    nothing declares are inferred from the first ``sample`` changes.
    """
    check_workers(events.sparkSession)
    names = [r[0] for r in events.select(table_name_column().alias("t")).distinct().collect()]
    full = find_table(names, name)
    rows = events.filter((table_name_column() == F.lit(full)) & F.col("op").isin(*REPLAY_OPS))
    given = kinds_given(types, full)
    picked = object_columns(rows.select("key_columns", "before", "after").limit(sample).toPandas())  # None, not NaN
    images = [parse_image(v) for v in [*picked["before"].tolist(), *picked["after"].tolist()]]
    columns: dict[str, None] = dict.fromkeys(given)
    for key_columns, image in zip([*picked["key_columns"].tolist()] * 2, images):
        for column in [*(list(key_columns) if key_columns is not None else []), *(image or {})]:
            columns.setdefault(column, None)
    found = {column: [image[column] for image in images if image is not None and column in image] for column in columns}
    kinds, targets = fixed_kinds({column: given.get(column) or infer_kind(found[column]) for column in columns}, found)
    kinds, targets = _without_misfits(kinds, targets, _misfit_columns_of_images(rows, kinds, targets, before))
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
                    arrays.append(
                        typed_column(
                            [None if i is None else i.get(column) for i in parsed], kinds[column], targets[column]
                        )
                    )
            yield pa.RecordBatch.from_arrays(arrays, schema=schema)

    from .engine import spark_schema

    return rows.select(*META_COLUMNS, "before", "after").mapInArrow(typed, spark_schema(schema))


def _misfit_columns_of_images(
    rows: DataFrame, kinds: Mapping[str, str], targets: Mapping[str, pa.DataType], before: bool
) -> set[str]:
    """The columns where a value of the after (and with ``before`` the before) images does not fit (a Spark job)."""
    checked = [c for c in kinds if targets[c] != pa.string()]
    if not checked:
        return set()

    def found(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            images = [parse_image(v) for v in batch.column("after").to_pylist()]
            if before:
                images += [parse_image(v) for v in batch.column("before").to_pylist()]
            bad = [
                c
                for c in checked
                if misfit_count([None if i is None else i.get(c) for i in images], kinds[c], targets[c])
            ]
            yield pa.RecordBatch.from_pydict({"column": bad}, schema=pa.schema([("column", pa.string())]))

    return {r[0] for r in rows.select("before", "after").mapInArrow(found, "column string").distinct().collect()}


def _fitted(array: pa.Array, target: pa.DataType) -> pa.Array:
    """A typed array as the sample fixed its Spark type (a value that does not fit it is null)."""
    if pa.types.is_time(array.type):
        return pa.array([None if v is None else v.isoformat() for v in array.to_pylist()], pa.string())
    if array.type == target:
        return array
    if pa.types.is_decimal(array.type) and target == pa.string():
        return pa.array([None if v is None else format(v, "f") for v in array.to_pylist()], pa.string())
    try:
        return array.cast(target, safe=not pa.types.is_timestamp(target))  # a decimal that does not fit: an error
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return pa.array([_one_fitted(v, target) for v in array.to_pylist()], target)


def _one_fitted(value: Any, target: pa.DataType) -> Any:
    """One value of a typed array as ``target`` holds it, None when it does not fit."""
    try:
        return pa.array([value]).cast(target)[0].as_py()
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
        return None
