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

import pyarrow as pa

from ..capture import events_of
from ..engines import is_spark, spark_export
from ..frame import check_columns, table_names
from ..io.formats import EXTENSIONS, PARTITION_COLUMN, format_of, partition_folder
from ..reading.events_files import data_files, is_events_file, read_events
from ._arrow_files import events_table, write_file
from .atomic import atomic_path, written_at
from .written import Written

__all__ = ["write_events", "read_events", "is_events_file"]  # the last two read back (cdckit.reading.events_files)


def write_events(
    events: Any,
    path: str | os.PathLike[str],
    format: str | None = None,
    *,
    partition_by: str | None = None,
    overwrite: bool = False,
) -> Written:
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
