"""Key columns given by the analyst, on Spark frames: :func:`cdckit.with_keys`'s rule in Spark columns.

The rows of each table named in ``keys`` get those ``key_columns`` (a literal
array) and a ``key``: the compact JSON array text of the key values of the
after image (the before image for a delete), rendered by the very function
pandas uses (:func:`cdckit.keys.key_texts`, in an Arrow-batched Python UDF),
so the two engines give the same key texts for every value (numbers beyond
a double, unicode, nulls, nested values). Which tables are meant is decided
as pandas decides it (:func:`cdckit.keys.tables_keyed`).

>>> from cdckit.spark import keys
>>> keys.__all__
['with_keys', 'given_keys']
"""

from __future__ import annotations

import json
from typing import Any

import pandas as pd
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from ..keys import KEY_FROM_BEFORE, Keys, key_columns_given, key_texts, tables_keyed
from .columns import table_name_column

__all__ = ["with_keys", "given_keys"]


def _key_texts(images: pd.Series, columns: pd.Series) -> pd.Series:
    """Per row, the key text of ``images`` (JSON object texts) in the ``columns`` (a JSON array text) named: the
    rows naming the same columns read together by :func:`cdckit.keys.key_texts`."""
    out = pd.Series([None] * len(images), index=images.index, dtype=object)
    named = columns.to_numpy(dtype=object)
    for listed in {c for c in named.tolist() if isinstance(c, str)}:
        rows = (named == listed).nonzero()[0]
        texts = images.iloc[rows].to_numpy(dtype=object)
        out.iloc[rows] = key_texts([t if isinstance(t, str) else None for t in texts], json.loads(listed))
    return out


def with_keys(frame: DataFrame, keys: Keys, strict: bool = True) -> DataFrame:
    """``frame`` (events, or a decode's combined frame) whose rows of the tables named in ``keys`` have those
    key columns and keys, as :func:`cdckit.with_keys` gives them on pandas; other rows and columns as they are.
    A name that matches no table raises ValueError naming the tables there are (one Spark job collects the
    table names; ``strict=False`` skips such names).

    >>> from cdckit import spark as cdcspark                                    # doctest: +SKIP
    >>> events = with_keys(cdcspark.read(spark, "notes.txt"), {"notes": "id"})  # doctest: +SKIP
    """
    named = table_name_column()
    names = [row[0] for row in frame.select(named.alias("_t")).distinct().collect()]
    wanted = tables_keyed(names, keys, strict)
    if not wanted:
        return frame
    image = F.when(F.col("op").isin(*KEY_FROM_BEFORE), F.col("before")).otherwise(F.col("after"))
    listed = F.lit(None).cast("string")
    key_columns = F.col("key_columns")
    for table, columns in wanted.items():
        here = F.coalesce(named == F.lit(table), F.lit(False))
        listed = F.when(here, F.lit(json.dumps(columns))).otherwise(listed)
        key_columns = F.when(here, F.array(*(F.lit(c) for c in columns))).otherwise(key_columns)
    udf = F.pandas_udf(_key_texts, T.StringType())  # type: ignore[call-overload]
    key = F.when(listed.isNotNull(), udf(image, listed)).otherwise(F.col("key"))
    return frame.withColumns({"key_columns": key_columns, "key": key})


def given_keys(frame: Any, keys: Keys | None) -> Any:
    """``frame`` with the key columns ``keys`` gives (:func:`with_keys`), or ``frame`` itself when none are given:
    what every Spark entry point that takes ``keys=`` calls first.

    >>> given_keys("events", None)
    'events'
    """
    if not keys:
        return frame
    key_columns_given(keys)
    return with_keys(frame, keys)
