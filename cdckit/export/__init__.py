"""Export and conversion: the canonical frame, replayed state and SCD2 tables to
Parquet, CSV or JSON Lines, and canonical events re-encoded in any dialect.

>>> import tempfile, shutil, cdckit
>>> from pathlib import Path
>>> out = Path(tempfile.mkdtemp())
>>> events = cdckit.samples.load("canal/shop")
>>> written = write_events(events, out / "events.parquet")
>>> print(written)  # doctest: +ELLIPSIS
wrote 320 rows to .../events.parquet (parquet, 1 file, ... KB)
>>> read_events(out / "events.parquet").equals(events)
True
>>> shutil.rmtree(out)

One module per job:

- :mod:`~cdckit.export.frames`: the canonical frame (:func:`write_events`,
  :func:`read_events`, :func:`is_events_file`);
- :mod:`~cdckit.export.tables`: replayed state and SCD2 tables
  (:func:`write_state`, :func:`write_scd2`);
- :mod:`~cdckit.export.conversion`: :func:`convert` to another dialect;
- :mod:`~cdckit.export.atomic`: atomic writes (:func:`atomic_path`);
- :mod:`~cdckit.io.formats`: formats, suffixes and file names;
- :mod:`~cdckit.export.written`: :class:`Written`, what a write did;
- :mod:`cdckit.spark.export`: the Spark writers.

Every write is atomic and careful:

- the output is built under a hidden temporary folder next to the target and
  renamed into place only when it is complete; a write that fails midway
  leaves nothing behind (neither a partial output nor the temporary folder);
- an existing target is refused with :class:`FileExistsError` unless
  ``overwrite=True`` (an existing directory is then renamed away, the new
  output renamed in, and the old one removed);
- each write returns a :class:`Written`: the path, the format, the rows, the
  files and bytes written, and notes on anything that did not fit.

File formats (:data:`FORMATS`): the canonical columns keep their types in
Parquet (times as UTC timestamps with nanoseconds, ``key_columns`` a list of
strings); in CSV and JSON Lines times are ISO 8601 UTC text (``...Z``,
trailing zeros of the fraction dropped) and in CSV ``key_columns`` is JSON
array text. Images, keys and DDL stay JSON/SQL text columns in every format,
so nothing is lost: :func:`read_events` gives back the frame ``cdckit.read``
gave (its ``attrs``, quarantine and report, are not written). In CSV a SQL
NULL is an empty field and an empty string is ``""``.

``partition_by="table"`` (every format) writes one Hive-style folder per
table, ``<path>/table_name=<database.table>/part-0.<ext>``; each file keeps
every canonical column, and the folder name is the table's
``database.table`` name (escaped as Spark escapes partition values, with
``__HIVE_DEFAULT_PARTITION__`` for events without a table). The same layout
comes from Spark (``partitionBy("table_name")``), so ``spark.read`` and
``pyarrow.dataset`` see a ``table_name`` column; :func:`read_events` reads
the files and leaves it out. A partitioned output reads back grouped by
table, each table's events in their original order.

Spark: :func:`write_events`, :func:`write_state` and :func:`write_scd2` take
Spark DataFrames too (recognised without importing pyspark) and hand them to
:mod:`cdckit.spark.export`, which writes them with Spark's own writers (a
folder of ``part-*`` files; local paths only; times in CSV and JSON Lines
with six fraction digits, as Spark keeps microseconds). :func:`convert`
collects a Spark frame to pandas first.

Conversion (:func:`convert`) re-encodes events with the target dialect's own
encoder and decodes the result again to account for every event: what the
target has no form for is counted in ``dropped`` with the reason, never lost
silently, and an encoder failure is an :class:`EncodeError` naming the event.
"""

from __future__ import annotations

from ..io.formats import FORMATS, PARTITION_COLUMN
from .atomic import atomic_path
from .conversion import Converted, EncodeError, convert
from .frames import is_events_file, read_events, write_events
from .tables import write_scd2, write_state
from .written import Written

__all__ = [
    "FORMATS",
    "atomic_path",
    "PARTITION_COLUMN",
    "Written",
    "Converted",
    "EncodeError",
    "write_events",
    "read_events",
    "is_events_file",
    "write_state",
    "write_scd2",
    "convert",
]
