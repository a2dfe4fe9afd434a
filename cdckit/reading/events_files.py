"""Canonical events that cdckit wrote (``cdckit.export.write_events``, ``cdckit convert``) read back as
they are: :func:`read_events`, :func:`is_events_file` (``cdckit.read`` of such a file takes this way, with
no dialect detection; the writers are in :mod:`cdckit.export`).

>>> import tempfile, shutil, cdckit
>>> out = Path(tempfile.mkdtemp())
>>> events = cdckit.samples.load("canal/shop")
>>> _ = cdckit.export.write_events(events, out / "events.csv")
>>> is_events_file(out / "events.csv"), read_events(out / "events.csv").equals(events)
(True, True)
>>> shutil.rmtree(out)
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import orjson
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pyarrow.json as pajson
import pyarrow.parquet as pq

from .. import values
from ..frame import ARROW_SCHEMA, COLUMN_NAMES, arrow_to_pandas, empty_events
from ..io.formats import SUFFIX_FORMATS, format_of

__all__ = ["read_events", "is_events_file", "data_files", "read_file", "canonical", "count_rows", "TIME_TYPE", "BLOCK"]

#: The type of the canonical time columns in Arrow.
TIME_TYPE = pa.timestamp("ns", tz="UTC")
#: Read block size: a JSON line or CSV row must fit in one block.
BLOCK = 64 << 20


def read_events(path: str | os.PathLike[str]) -> pd.DataFrame:
    """The canonical frame back from what :func:`write_events` wrote (a file or a folder, any format).

    Types are those of ``cdckit.read`` (:func:`cdckit.frame.arrow_to_pandas`);
    columns besides the canonical ones follow them. A folder is read file by
    file in path order (hidden files and Spark's ``_SUCCESS`` left out).

    >>> import tempfile, shutil, cdckit
    >>> from cdckit.export import write_events
    >>> out = Path(tempfile.mkdtemp())
    >>> events = cdckit.samples.load("lindorm")
    >>> _ = write_events(events, out / "events.jsonl")
    >>> read_events(out / "events.jsonl").equals(events)
    True
    >>> shutil.rmtree(out)
    """
    path = Path(path)
    files = data_files(path)
    formats = {format_of(file, None) for file in files}
    if len(formats) > 1:
        raise ValueError(f"{path} holds files of several formats ({', '.join(sorted(formats))})")
    tables = [canonical(read_file(file, format_of(file, None)), file) for file in files]
    if not tables:
        return empty_events()
    return arrow_to_pandas(pa.concat_tables(tables, promote_options="permissive"))


def is_events_file(path: str | os.PathLike[str]) -> bool:
    """True when ``path`` holds canonical events as :func:`write_events` writes them (any format).

    Only the column names are looked at (the Parquet schema, the CSV header
    or the first JSON line), so it is cheap; the CLI uses it to read its own
    output back with :func:`read_events` instead of detecting a dialect.

    >>> import tempfile, shutil, cdckit
    >>> from cdckit.export import write_events
    >>> out = Path(tempfile.mkdtemp())
    >>> _ = write_events(cdckit.samples.load("lindorm"), out / "events.csv")
    >>> is_events_file(out / "events.csv"), is_events_file(cdckit.samples.path("lindorm"))
    (True, False)
    >>> shutil.rmtree(out)
    """
    path = Path(path)
    try:
        files = data_files(path)
    except FileNotFoundError:
        return False
    fmt = SUFFIX_FORMATS.get(files[0].suffix.lower()) if files else None
    if fmt is None:
        return False
    try:
        if fmt == "parquet":
            names = pq.read_schema(files[0]).names
        else:
            with open(files[0], "rb") as file:
                first = file.readline(1 << 20)
            if fmt == "csv":
                names = [name.strip('"') for name in first.decode("utf-8").strip().split(",")]
            else:
                parsed = orjson.loads(first)
                names = list(parsed) if isinstance(parsed, dict) else []
    except (OSError, ValueError, pa.ArrowException):
        return False
    return set(COLUMN_NAMES) <= set(names)


def data_files(path: Path) -> list[Path]:
    """``path`` itself, or the data files under a folder (hidden files and ``_``-files left out), sorted."""
    if not path.exists():
        raise FileNotFoundError(f"{path} does not exist")
    if not path.is_dir():
        return [path]
    return sorted(
        file
        for file in path.rglob("*")
        if file.is_file() and not any(part.startswith((".", "_")) for part in file.relative_to(path).parts)
    )


def read_file(path: Path, fmt: str) -> pa.Table:
    """One file of canonical events as Arrow (canonical columns as text where the format keeps no type)."""
    if fmt == "parquet":
        return pq.read_table(path)
    if fmt == "csv":
        types = {f.name: (f.type if f.type == pa.int64() else pa.string()) for f in ARROW_SCHEMA}
        return pacsv.read_csv(
            path,
            read_options=pacsv.ReadOptions(block_size=BLOCK),
            parse_options=pacsv.ParseOptions(newlines_in_values=True),
            convert_options=pacsv.ConvertOptions(
                column_types=types, strings_can_be_null=True, quoted_strings_can_be_null=False
            ),
        )
    schema = pa.schema([pa.field(f.name, pa.string() if f.type == TIME_TYPE else f.type) for f in ARROW_SCHEMA])
    if path.stat().st_size == 0:  # no events (pyarrow refuses an empty JSON file)
        return schema.empty_table()
    options = pajson.ParseOptions(explicit_schema=schema, unexpected_field_behavior="infer")
    return pajson.read_json(path, read_options=pajson.ReadOptions(block_size=BLOCK), parse_options=options)


def canonical(table: pa.Table, where: Any) -> pa.Table:
    """A table read from a file as the canonical Arrow table (other columns after the canonical ones)."""
    missing = [name for name in COLUMN_NAMES if name not in table.column_names]
    if missing:
        raise ValueError(f"{where} does not hold canonical events: no column {', '.join(missing)}")
    arrays = []
    for column_field in ARROW_SCHEMA:
        column = table.column(column_field.name)
        if column_field.type == TIME_TYPE and not pa.types.is_timestamp(column.type):
            parsed = pd.to_datetime(pd.Series(column.to_pylist(), dtype=object), utc=True, format="ISO8601")
            column = pa.array(parsed, TIME_TYPE)
        elif pa.types.is_list(column_field.type) and pa.types.is_string(column.type):  # JSON text in CSV
            column = pa.array([None if v is None else values.loads(v) for v in column.to_pylist()], column_field.type)
        arrays.append(pc.cast(column, column_field.type))
    extra = [name for name in table.column_names if name not in COLUMN_NAMES]
    return pa.Table.from_arrays(
        arrays + [table.column(name) for name in extra],
        schema=pa.schema(list(ARROW_SCHEMA) + [table.field(name) for name in extra]),
    )


def count_rows(files: list[Path], fmt: str) -> int:
    """The rows in ``files`` (Parquet from its metadata, other formats by reading)."""
    if fmt == "parquet":
        return sum(pq.ParquetFile(file).metadata.num_rows for file in files)
    return sum(read_file(file, fmt).num_rows for file in files)
