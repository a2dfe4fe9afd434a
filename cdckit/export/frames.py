"""The canonical event frame to files and back: :func:`write_events`, :func:`read_events`, :func:`is_events_file`.

The canonical columns keep their types in Parquet (times as UTC timestamps
with nanoseconds, ``key_columns`` a list of strings); in CSV and JSON Lines
times are ISO 8601 UTC text and in CSV ``key_columns`` is JSON array text.
Images, keys and DDL stay JSON/SQL text columns in every format, so
:func:`read_events` gives back the frame ``cdckit.read`` gave (its ``attrs``
are not written).

>>> import tempfile, shutil, cdckit
>>> out = Path(tempfile.mkdtemp())
>>> events = cdckit.samples.load("canal/shop")
>>> print(write_events(events, out / "events.parquet"))  # doctest: +ELLIPSIS
wrote 320 rows to .../events.parquet (parquet, 1 file, ... KB)
>>> read_events(out / "events.parquet").equals(events)
True
>>> shutil.rmtree(out)
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import orjson
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from ..reading.capture import events_of
from ..frame import COLUMN_NAMES, arrow_to_pandas, empty_events
from ..frame import table_names
from ._arrow_files import canonical, check_columns, data_files, events_table, read_file, write_file
from .atomic import atomic_path, written_at
from .engines import is_spark, spark_export
from .formats import EXTENSIONS, PARTITION_COLUMN, SUFFIX_FORMATS, format_of, partition_folder
from .written import Written

__all__ = ["write_events", "read_events", "is_events_file"]


def write_events(events: Any, path: str | os.PathLike[str], format: str | None = None, *,
                 partition_by: str | None = None, overwrite: bool = False) -> Written:
    """Write a canonical event frame (pandas, a capture, or a Spark DataFrame) as Parquet, CSV or JSON Lines.

    Args:
        events: the frame of ``cdckit.read`` or of ``cdckit.spark.read``;
            columns besides the canonical ones are written too.
        path: the file to write (a folder with ``partition_by`` or for Spark).
        format: ``parquet``, ``csv`` or ``jsonl``; None takes it from the
            suffix (``.parquet``/``.pq``, ``.csv``, ``.jsonl``/``.json``/``.ndjson``).
        partition_by: ``"table"`` for one folder per table (see :mod:`cdckit.export`).
        overwrite: replace an existing output instead of refusing.

    >>> import tempfile, shutil, cdckit
    >>> out = Path(tempfile.mkdtemp())
    >>> written = write_events(cdckit.samples.load("canal/shop"), out / "events", "csv", partition_by="table")
    >>> [str(f.relative_to(out)) for f in written.files]
    ['events/table_name=shop.customers/part-0.csv', 'events/table_name=shop.order_items/part-0.csv']
    >>> write_events(cdckit.samples.load("canal/shop"), out / "events", "csv")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    FileExistsError: .../events exists; pass overwrite=True to replace it (CLI: --force)
    >>> shutil.rmtree(out)
    """
    events = events_of(events)
    path = Path(path)
    fmt = format_of(path, format)
    if partition_by not in (None, "table"):
        raise ValueError(f"partition_by must be 'table' (one folder per database.table) or None, not {partition_by!r}")
    check_columns(events.columns)
    if partition_by is not None and PARTITION_COLUMN in events.columns:
        raise ValueError(f"the frame has a column {PARTITION_COLUMN!r}, the partition folder key: rename it first")
    if is_spark(events):
        return spark_export().write_events(events, path, fmt, partition_by is not None, overwrite)
    table, notes = events_table(events)
    with atomic_path(path, overwrite) as staged:
        if partition_by is None:
            write_file(table, staged, fmt)
        else:
            _write_partitions(table, table_names(events).tolist(), staged, fmt)
        files = data_files(staged)
    return written_at(path, staged, fmt, len(events), files, notes)


def read_events(path: str | os.PathLike[str]) -> pd.DataFrame:
    """The canonical frame back from what :func:`write_events` wrote (a file or a folder, any format).

    Types are those of ``cdckit.read`` (:func:`cdckit.frame.arrow_to_pandas`);
    columns besides the canonical ones follow them. A folder is read file by
    file in path order (hidden files and Spark's ``_SUCCESS`` left out).

    >>> import tempfile, shutil, cdckit
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


def _write_partitions(table: pa.Table, names: list[str | None], folder: Path, fmt: str) -> None:
    """One ``table_name=<name>/part-0.<ext>`` file per table name, rows in their order."""
    folder.mkdir()
    groups: dict[str, list[int]] = {}
    for index, name in enumerate(names):
        groups.setdefault(partition_folder(name), []).append(index)
    for part_name, rows in groups.items():
        part = folder / part_name
        part.mkdir()
        write_file(table.take(pa.array(rows, pa.int64())), part / f"part-0{EXTENSIONS[fmt]}", fmt)
