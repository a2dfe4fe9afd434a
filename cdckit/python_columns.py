"""Columns of Python values, alike on pandas 2 and pandas 3.

The typed tables, histories and parsed images hold a text as a Python ``str``
and a missing value as ``None`` in an ``object`` column. pandas 2 builds such
a column from Python texts (or Arrow strings) by itself; pandas 3 builds its
``str`` dtype instead, where a missing value is NaN. :func:`object_column`
states the dtype, so that both give the same column.
"""

from __future__ import annotations

import pandas as pd


def object_column(column: pd.Series) -> pd.Series:
    """``column`` as an ``object`` column with None for each missing value when it holds texts or Python
    values (``object`` or any pandas string dtype); any other column (numbers, times) as it is.

    >>> object_column(pd.Series(["a", None])).tolist()
    ['a', None]
    >>> object_column(pd.Series(["a", None], dtype="string[pyarrow]")).dtype
    dtype('O')
    >>> object_column(pd.Series([1, None], dtype="Int64")).dtype
    Int64Dtype()
    """
    if column.dtype != object and not isinstance(column.dtype, pd.StringDtype):
        return column
    missing = column.isna()
    if not missing.any():
        return column if column.dtype == object else column.astype(object)
    return column.astype(object).where(~missing, None)


def object_columns(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with each column of texts or Python values made by :func:`object_column` (a new frame;
    ``frame`` itself when there is none): for frames built from Python rows, e.g. ``pd.DataFrame(rows)``.

    >>> object_columns(pd.DataFrame({"a": ["x", None], "n": [1, 2]})).to_dict("list")
    {'a': ['x', None], 'n': [1, 2]}
    """
    texts = [at for at, dtype in enumerate(frame.dtypes) if dtype == "object" or isinstance(dtype, pd.StringDtype)]
    if not texts:
        return frame
    out = frame.copy()
    for at in texts:
        out.isetitem(at, object_column(frame.iloc[:, at]))
    return out
