"""One normal form for the rows of pandas and Spark frames, so the tests compare the two engines one way.

- :func:`cell`: one value: None for every missing marker (None, NaN, NA,
  NaT), whole floats and decimals as ints, lists, tuples, arrays and dicts as
  JSON text (keys sorted), times as UTC ISO text to the microsecond (Spark
  holds microseconds), a time of day as ISO text; anything else as it is.
- :func:`rows`: a frame's rows as dicts of cells (a pandas frame, a Spark
  DataFrame, or Spark rows).
- :func:`row_texts`: those rows as sorted JSON texts with every value as
  text (a column of mixed kinds is text on Spark, Python objects in pandas).
- :func:`event_rows`: canonical event rows, images and keys parsed first (so
  JSON spelled differently compares equal), sorted.

>>> import pandas as pd
>>> rows(pd.DataFrame({"a": [1.0, None], "t": pd.to_datetime(["2024-05-01 09:00:00.000001", None], utc=True)}))
[{'a': 1, 't': '2024-05-01T09:00:00.000001+00:00'}, {'a': None, 't': None}]
>>> row_texts(pd.DataFrame({"a": [2.0], "b": [{"x": 1}]}))
['{"a": "2", "b": "{\\\\"x\\\\":1}"}']
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
from typing import Any

import numpy as np
import orjson
import pandas as pd

__all__ = ["cell", "rows", "row_texts", "event_rows"]

#: Columns of an event frame that hold JSON text.
JSON_COLUMNS = ("key", "before", "after")


def is_missing(value: Any) -> bool:
    """None, NaN, pandas' NA or NaT."""
    return value is None or value is pd.NA or value is pd.NaT or (isinstance(value, float) and value != value)


def cell(value: Any) -> Any:
    """One value in the form both engines share (see the module docstring).

    >>> cell(float("nan")), cell(3.0), cell(2.5), cell([1, "a"]), cell(dt.time(9, 30))
    (None, 3, 2.5, '[1,"a"]', '09:30:00')
    """
    if is_missing(value):
        return None
    if isinstance(value, (float, decimal.Decimal, np.floating)) and value == int(value):
        return int(value)
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (list, tuple, np.ndarray, dict)):
        plain = value.tolist() if isinstance(value, np.ndarray) else value
        return orjson.dumps(plain, option=orjson.OPT_SORT_KEYS | orjson.OPT_SERIALIZE_NUMPY,
                            default=str).decode()
    if isinstance(value, dt.time):
        return value.isoformat()
    if isinstance(value, (dt.datetime, np.datetime64)):  # pd.Timestamp is a datetime
        stamp = pd.Timestamp(value)
        stamp = stamp.tz_localize("UTC") if stamp.tzinfo is None else stamp.tz_convert("UTC")
        return stamp.floor("us").isoformat()
    return value


def _records(frame: Any) -> list[dict[str, Any]]:
    if isinstance(frame, pd.DataFrame):
        return frame.astype(object).to_dict("records")
    if hasattr(frame, "collect"):  # a Spark DataFrame
        frame = frame.collect()
    return [row.asDict() if hasattr(row, "asDict") else dict(row) for row in frame]


def rows(frame: Any) -> list[dict[str, Any]]:
    """A frame's rows, in order, as dicts of :func:`cell` values."""
    return [{name: cell(value) for name, value in record.items()} for record in _records(frame)]


def row_texts(frame: Any) -> list[str]:
    """A frame's rows as sorted JSON texts, every value as text (None stays null)."""
    return sorted(json.dumps({k: None if v is None else str(v) for k, v in row.items()}, sort_keys=True)
                  for row in rows(frame))


def event_rows(frame: Any, columns: list[str]) -> list[tuple]:
    """Canonical event rows on ``columns``, images and keys parsed and written back with sorted keys; sorted."""
    out = []
    for record in _records(frame):
        row = []
        for name in columns:
            value = record[name]
            if name in JSON_COLUMNS and isinstance(value, str):
                value = json.loads(value)
            row.append(cell(value))
        out.append(tuple(row))
    return sorted(out, key=repr)
