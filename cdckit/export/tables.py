"""Replayed state and SCD2 tables to files: :func:`write_state` and :func:`write_scd2`, one file per table.

>>> import tempfile, shutil, cdckit
>>> out = Path(tempfile.mkdtemp())
>>> print(write_scd2(cdckit.scd2(cdckit.samples.load("canal/shop")), out / "scd2.jsonl"))  # doctest: +ELLIPSIS
wrote ... rows to .../scd2.jsonl (jsonl, 2 files, ... KB)
>>> shutil.rmtree(out)
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa

from ..capture import plain
from ..engines import is_spark, spark_export
from ..io.formats import EXTENSIONS, SUFFIX_FORMATS, file_stems, format_of
from ..reading.events_files import count_rows, data_files
from ._arrow_files import frame_table, write_file
from .atomic import atomic_path, written_at
from .written import Written

__all__ = ["write_state", "write_scd2"]


def write_state(
    states: dict[str, Any], path: str | os.PathLike[str], format: str | None = None, *, overwrite: bool = False
) -> Written:
    """Write the tables of ``cdckit.materialize`` (or ``cdckit.spark.materialize``): one file per table.

    ``path`` is a folder; each table is ``<name>.<ext>`` in it, the name being
    the ``database.table`` name with the characters a file name cannot hold
    escaped as ``%XX`` (and a leading ``.`` or ``_``, which readers would
    take for a hidden file). ``format`` is taken from the folder's suffix
    when it has a known one, else Parquet. In Parquet and CSV a column whose
    values are not all of one kind (numbers and text mixed, say) or that
    holds lists or objects is written as JSON text, with a note; JSON Lines
    keeps every value as it is. Typed tables (the default of ``materialize``
    and ``scd2``) keep their types in Parquet: ``decimal128(P,S)``, UTC
    timestamps, ``date32``, ``time64``, ``int64``, ``bool``; in CSV and JSON
    Lines a decimal is its exact text (a JSON string), a date ``2024-05-01``
    and a time UTC ISO text. Spark tables are each written by Spark as a
    folder ``<name>.<ext>``. Replay problems (``states.problems``) are not
    written; a note counts them.

    >>> import tempfile, shutil, cdckit
    >>> out = Path(tempfile.mkdtemp())
    >>> states = cdckit.materialize(cdckit.samples.load("canal/shop"))
    >>> written = write_state(states, out / "state")
    >>> [f.name for f in written.files], written.rows == sum(len(t) for t in states.values())
    (['shop.customers.parquet', 'shop.order_items.parquet'], True)
    >>> shutil.rmtree(out)
    """
    notes = []
    problems = getattr(states, "problems", None)
    if problems is not None and len(problems):
        notes.append(f"{len(problems):,} replay problems were not written (see states.problems)")
    return _write_tables(states, Path(path), format, overwrite, notes)


def write_scd2(
    tables: dict[str, Any], path: str | os.PathLike[str], format: str | None = None, *, overwrite: bool = False
) -> Written:
    """Write the tables of ``cdckit.scd2``: one file per table, as :func:`write_state` does.

    >>> import tempfile, shutil, cdckit
    >>> out = Path(tempfile.mkdtemp())
    >>> written = write_scd2(cdckit.scd2(cdckit.samples.load("canal/shop")), out / "scd2", "csv")
    >>> [f.name for f in written.files]
    ['shop.customers.csv', 'shop.order_items.csv']
    >>> shutil.rmtree(out)
    """
    return _write_tables(tables, Path(path), format, overwrite, [])


def _write_tables(tables: dict[str, Any], path: Path, format: str | None, overwrite: bool, notes: list[str]) -> Written:
    fmt = format_of(path, format) if format is not None or path.suffix.lower() in SUFFIX_FORMATS else "parquet"
    stems = file_stems(list(tables))
    rows = 0
    with atomic_path(path, overwrite) as staged:
        staged.mkdir()
        for name, frame in tables.items():
            target = staged / f"{stems[name]}{EXTENSIONS[fmt]}"
            if is_spark(frame):
                spark_export().write_table(frame, target, fmt)
                continue
            table, column_notes = frame_table(frame, raw_json=fmt == "jsonl")
            if fmt == "parquet":
                table = _with_pandas_metadata(table, frame)
            notes += [f"{name}: {note}" for note in column_notes]
            write_file(table, target, fmt)
            rows += len(frame)
        files = data_files(staged)
        if any(is_spark(frame) for frame in tables.values()):
            rows = count_rows(files, fmt)
    return written_at(path, staged, fmt, rows, files, notes)


def _with_pandas_metadata(table: pa.Table, frame: pd.DataFrame) -> pa.Table:
    """``table`` with pandas' schema metadata of ``frame``, so that ``pandas.read_parquet`` gives back the typed
    columns' dtypes (``Int64``, ``boolean``, dates); the table unchanged when pandas cannot describe the frame."""
    head = plain(frame.head(0))  # problems ride in attrs; they are not written
    try:
        metadata = pa.Schema.from_pandas(head, preserve_index=False).metadata
    except (pa.ArrowException, TypeError, ValueError):
        return table
    return table.replace_schema_metadata(metadata)
