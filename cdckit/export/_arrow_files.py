"""Internal to :mod:`cdckit.export`: frames as Arrow tables, and Arrow tables as the files written and read back.

Shared by the frame and table writers and by :mod:`cdckit.spark.export`; not
a public API. Times are UTC ISO 8601 text outside Parquet, and a column Arrow
cannot type as one kind becomes JSON text.

>>> import pandas as pd
>>> table, notes = frame_table(pd.DataFrame({"id": [1, 2], "v": [1, "one"]}), raw_json=False)
>>> table.column("v").to_pylist(), notes
(['1', '"one"'], ['column v holds values of several kinds and was written as JSON text'])
"""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from typing import Any

import orjson
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from .. import times, values
from ..capture import plain
from ..frame import ARROW_SCHEMA, COLUMN_NAMES

__all__ = ["events_table", "frame_table", "write_file"]

_BATCH = 65_536
#: Field metadata marking a column of JSON text that stands for values of any kind.
_JSON_MARK = b"cdckit.json"


# ---------------------------------------------------------------- frames as Arrow tables


def events_table(events: pd.DataFrame) -> tuple[pa.Table, list[str]]:
    """The frame as an Arrow table: canonical columns with their types, then the others; and notes."""
    canonical = plain(events[COLUMN_NAMES])  # the quarantine and report are not written
    table = pa.Table.from_pandas(canonical, schema=ARROW_SCHEMA, preserve_index=False)
    extra = [name for name in events.columns if name not in COLUMN_NAMES]
    if not extra:
        return table.replace_schema_metadata(None), []
    others, notes = frame_table(events[extra], raw_json=False)  # read_events reads JSON text back
    for name in others.column_names:
        table = table.append_column(others.field(name), others.column(name))
    return table.replace_schema_metadata(None), notes


def frame_table(frame: pd.DataFrame, raw_json: bool) -> tuple[pa.Table, list[str]]:
    """Any frame as an Arrow table, and notes on the columns written as JSON text.

    A column whose values are not of one kind, or of lists or objects (which
    Arrow would turn into structs, adding absent keys as nulls), becomes JSON
    text. With ``raw_json`` (a JSON Lines table file) such a column is marked
    in its field's metadata so that the values are written as they were, and
    needs no note.
    """
    fields, arrays, notes = [], [], []
    for name in frame.columns:
        column = frame[name]
        array, why = _typed_array(column)
        if array is not None:  # (else why says why not)
            fields.append(pa.field(str(name), array.type))
        else:
            text = [None if missing else values.dumps(_plain(v)) for v, missing in zip(column, column.isna())]
            array = pa.array(text, pa.string())
            fields.append(pa.field(str(name), pa.string(), metadata={_JSON_MARK: b"1"} if raw_json else None))
            if not raw_json:
                notes.append(f"column {name} holds {why} and was written as JSON text")
        arrays.append(array)
    return pa.Table.from_arrays(arrays, schema=pa.schema(fields)), notes


def _typed_array(column: pd.Series) -> tuple[pa.Array | None, str | None]:
    """``(array, None)``, or ``(None, why)`` when the column must become JSON text."""
    if column.dtype == object and len({type(v) for v in column[column.notna()]}) > 1:
        return None, "values of several kinds"  # Arrow would coerce ints to floats, or fail
    try:
        array = pa.array(column, from_pandas=True)
    except (pa.ArrowException, TypeError, ValueError, OverflowError):
        return None, "values Arrow cannot type"
    if pa.types.is_nested(array.type):
        return None, "lists or objects"
    return array, None


def _plain(value: Any) -> Any:
    """A cell as a value JSON can carry (an exact decimal as a JSON number of every digit).

    >>> values.dumps([_plain(Decimal("12345678901234567890.123456789")), _plain(pd.Timestamp("2024-01-01", tz="UTC"))])
    '[12345678901234567890.123456789,"2024-01-01T00:00:00+00:00"]'
    >>> _plain(pd.Timedelta(hours=-838, minutes=-59, seconds=-59))
    '-838:59:59'
    """
    if isinstance(value, pd.Timestamp):
        return value.isoformat()
    if isinstance(value, pd.Timedelta):  # a duration (MySQL's TIME) as the text its images hold
        return times.duration_text(value.value)
    if isinstance(value, Decimal):
        return orjson.Fragment(format(value, "f")) if value.is_finite() else str(value)
    if hasattr(value, "tolist"):  # numpy scalars and arrays
        return value.tolist()
    return value


# ---------------------------------------------------------------- writing files


def write_file(table: pa.Table, path: Path, fmt: str) -> None:
    """Write ``table`` as one file of format ``fmt`` (``parquet``, ``csv`` or ``jsonl``)."""
    if fmt == "parquet":
        pq.write_table(table, path)
    elif fmt == "csv":
        pacsv.write_csv(_text_columns(table, json_lists=True), path, pacsv.WriteOptions(quoting_style="needed"))
    else:
        raw = [f.name for f in table.schema if f.metadata and f.metadata.get(_JSON_MARK)]
        with open(path, "wb") as out:
            for batch in _text_columns(table, json_lists=False).to_batches(_BATCH):
                for row in batch.to_pylist():
                    for name in raw:
                        if row[name] is not None:
                            row[name] = orjson.Fragment(row[name])
                    out.write(orjson.dumps(row, default=str, option=orjson.OPT_APPEND_NEWLINE))


def _text_columns(table: pa.Table, json_lists: bool) -> pa.Table:
    """Times as ISO 8601 UTC text; with ``json_lists``, lists and structs as JSON text."""
    for index, column_field in enumerate(table.schema):
        column = table.column(index)
        if pa.types.is_timestamp(column_field.type):
            table = table.set_column(index, column_field.name, _iso(column))
        elif json_lists and pa.types.is_nested(column_field.type):
            text = pa.array([None if v is None else values.dumps(v) for v in column.to_pylist()], pa.string())
            table = table.set_column(index, column_field.name, text)
    return table


def _iso(times: pa.ChunkedArray) -> pa.ChunkedArray:
    """Timestamps as ``2024-05-01T09:00:00.5Z`` text (UTC, fraction without trailing zeros)."""
    unit = times.type.unit  # kept: a time in microseconds may lie beyond nanoseconds' years (1677 to 2262)
    utc = pc.cast(times, pa.timestamp(unit, tz="UTC") if times.type.tz is not None else pa.timestamp(unit))
    text = pc.strftime(pc.cast(utc, pa.timestamp(unit, tz="UTC")), format="%Y-%m-%dT%H:%M:%S")
    text = pc.replace_substring_regex(text, pattern=r"\.?0+$", replacement="")
    return pc.binary_join_element_wise(text, "Z", "")
