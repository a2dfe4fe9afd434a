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

Spark: :func:`write_events` and :func:`write_state` take Spark DataFrames too
(recognised without importing pyspark) and write them with Spark's own
writers (a folder of ``part-*`` files; local paths only; times in CSV and
JSON Lines with six fraction digits, as Spark keeps microseconds).
:func:`convert` collects a Spark frame to pandas first.

Conversion (:func:`convert`) re-encodes events with the target dialect's own
encoder and decodes the result again to account for every event: what the
target has no form for is counted in ``dropped`` with the reason, never lost
silently, and an encoder failure is an :class:`EncodeError` naming the event.
"""

from __future__ import annotations

import gzip
import os
import shutil
import tempfile
from collections import Counter
from collections.abc import Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

import orjson
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pyarrow.json as pajson
import pyarrow.parquet as pq

from . import values
from .containers import write_messages
from .dialects import registry
from .dialects.base import Dialect, Record
from .errors import CdcError
from .frame import ARROW_SCHEMA, COLUMN_NAMES, arrow_to_pandas, empty_events
from .ordering._shared import table_names
from .read import read

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

#: The file formats the writers know.
FORMATS = ("parquet", "csv", "jsonl")

#: The folder key of a partitioned output: ``table_name=<database.table>``.
PARTITION_COLUMN = "table_name"

#: File suffixes and the format each means.
_SUFFIXES = {".parquet": "parquet", ".pq": "parquet", ".csv": "csv", ".jsonl": "jsonl", ".json": "jsonl",
             ".ndjson": "jsonl"}
_EXTENSIONS = {"parquet": ".parquet", "csv": ".csv", "jsonl": ".jsonl"}
_SPARK_FORMATS = {"parquet": "parquet", "csv": "csv", "jsonl": "json"}
#: How Spark writes times in CSV and JSON (with the writer's timeZone set to UTC).
_SPARK_TIME = "yyyy-MM-dd'T'HH:mm:ss.SSSSSSXXX"
_TIME = pa.timestamp("ns", tz="UTC")
#: Characters Spark (and Hive) escape in partition folder names, besides control characters.
_ESCAPED = frozenset('"#%\'*/:=?\\\x7f{[]^')
_DEFAULT_PARTITION = "__HIVE_DEFAULT_PARTITION__"
#: Read block size: a JSON line or CSV row must fit in one block.
_BLOCK = 64 << 20
_BATCH = 65_536
#: Field metadata marking a column of JSON text that stands for values of any kind.
_JSON_MARK = b"cdckit.json"


# ---------------------------------------------------------------- results


@dataclass
class Written:
    """What a write did: where, in which format, how many rows, which files, how many bytes, and notes.

    >>> print(Written(Path("out/events.parquet"), "parquet", 4684, [Path("out/events.parquet")], 215_040))
    wrote 4,684 rows to out/events.parquet (parquet, 1 file, 210 KB)
    """

    path: Path
    format: str
    rows: int
    files: list[Path]
    bytes: int
    notes: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        files = f"{len(self.files):,} file" + ("" if len(self.files) == 1 else "s")
        return f"wrote {self.rows:,} rows to {self.path} ({self.format}, {files}, {_size(self.bytes)})"


class Converted(Sequence):
    """Canonical events re-encoded in one dialect: a list of message values.

    Iterating (or indexing) gives the message values (a JSON object as a dict,
    a UniVerse line as text, None for a Kafka tombstone). ``records`` holds
    the :class:`~cdckit.dialects.base.Record` objects (value and Kafka key),
    ``dropped`` counts the events the dialect has no form for (reason ->
    count), ``notes`` says the same in sentences, and :meth:`kafka_records`
    gives the messages with their keys in a form ``cdckit.read`` reads back.

    >>> import cdckit
    >>> events = cdckit.samples.load("debezium")
    >>> maxwell = convert(events, "maxwell")
    >>> maxwell.dialect, len(maxwell), maxwell.dropped
    ('maxwell', 5, {'begin events have no form in maxwell': 1, 'commit events have no form in maxwell': 1, \
'tombstone events have no form in maxwell': 1})
    >>> isinstance(maxwell[0], dict), cdckit.read(maxwell)["op"].tolist()
    (True, ['insert', 'update', 'delete', 'insert', 'ddl'])
    """

    def __init__(self, dialect: str, records: list[Record], dropped: dict[str, int], notes: list[str]) -> None:
        self.dialect = dialect
        self.records = records
        self.dropped = dropped
        self.notes = notes

    def __len__(self) -> int:
        return len(self.records)

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return [record.value for record in self.records[index]]
        return self.records[index].value

    def __iter__(self) -> Iterator[Any]:
        return (record.value for record in self.records)

    def __repr__(self) -> str:
        left_out = sum(self.dropped.values())
        return f"<Converted: {len(self):,} {self.dialect} messages, {left_out:,} events left out>"

    def kafka_records(self, topic: str = "cdckit") -> list[dict[str, Any]]:
        """The messages as Kafka records in kcat ``-J`` form: topic, partition, offset, key, payload.

        ``key`` and ``payload`` are text (JSON text, or the line itself for a
        text dialect; None for no key or a tombstone). ``cdckit.read`` reads
        these with their keys, so keyed dialects (debezium, arcion, lindorm)
        keep their key columns, which reading the bare values cannot.

        >>> import cdckit
        >>> converted = convert(cdckit.samples.load("canal/shop").head(1), "debezium")
        >>> records = converted.kafka_records()
        >>> sorted(records[0]), isinstance(records[0]["key"], str)
        (['key', 'offset', 'partition', 'payload', 'topic'], True)
        >>> cdckit.read(records).loc[0, "key_columns"], cdckit.read(converted).loc[0, "key_columns"]
        (['id'], None)
        """
        return [{"topic": topic, "partition": 0, "offset": number, "key": _text(record.key),
                 "payload": _text(record.value)} for number, record in enumerate(self.records)]


class EncodeError(CdcError, ValueError):
    """An encoder failed on an event; the message names the event (source, offset) and the reason."""

    def __init__(self, dialect: str, reason: str, source: str | None = None, offset: int | None = None) -> None:
        self.dialect = dialect
        self.reason = reason
        self.source = source
        self.offset = offset
        where = "the events" if source is None else f"the event at {source}, message {offset}"
        super().__init__(f"cannot encode {where} as {dialect}: {reason}")


# ---------------------------------------------------------------- the canonical frame


def write_events(events: Any, path: str | os.PathLike[str], format: str | None = None, *,
                 partition_by: str | None = None, overwrite: bool = False) -> Written:
    """Write a canonical event frame (pandas, or a Spark DataFrame) as Parquet, CSV or JSON Lines.

    Args:
        events: the frame of ``cdckit.read`` or of ``cdckit.spark.read``;
            columns besides the canonical ones are written too.
        path: the file to write (a folder with ``partition_by`` or for Spark).
        format: ``parquet``, ``csv`` or ``jsonl``; None takes it from the
            suffix (``.parquet``/``.pq``, ``.csv``, ``.jsonl``/``.json``/``.ndjson``).
        partition_by: ``"table"`` for one folder per table (see the module notes).
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
    path = Path(path)
    fmt = _format_of(path, format)
    if partition_by not in (None, "table"):
        raise ValueError(f"partition_by must be 'table' (one folder per database.table) or None, not {partition_by!r}")
    _check_columns(events.columns)
    if partition_by is not None and PARTITION_COLUMN in events.columns:
        raise ValueError(f"the frame has a column {PARTITION_COLUMN!r}, the partition folder key: rename it first")
    if _is_spark(events):
        return _spark_write_events(events, path, fmt, partition_by is not None, overwrite)
    table, notes = _events_arrow(events)
    with atomic_path(path, overwrite) as staged:
        if partition_by is None:
            _write_file(table, staged, fmt)
        else:
            _write_partitions(table, table_names(events).tolist(), staged, fmt)
        files = _data_files(staged)
    return _written(path, staged, fmt, len(events), files, notes)


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
    files = _data_files(path)
    formats = {_format_of(file, None) for file in files}
    if len(formats) > 1:
        raise ValueError(f"{path} holds files of several formats ({', '.join(sorted(formats))})")
    tables = [_canonical(_read_file(file, _format_of(file, None)), file) for file in files]
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
        files = _data_files(path)
    except FileNotFoundError:
        return False
    fmt = _SUFFIXES.get(files[0].suffix.lower()) if files else None
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


# ---------------------------------------------------------------- state and SCD2 tables


def write_state(states: dict[str, Any], path: str | os.PathLike[str], format: str | None = None, *,
                overwrite: bool = False) -> Written:
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


def write_scd2(tables: dict[str, Any], path: str | os.PathLike[str], format: str | None = None, *,
               overwrite: bool = False) -> Written:
    """Write the tables of ``cdckit.scd2``: one file per table, as :func:`write_state` does.

    >>> import tempfile, shutil, cdckit
    >>> out = Path(tempfile.mkdtemp())
    >>> written = write_scd2(cdckit.scd2(cdckit.samples.load("canal/shop")), out / "scd2", "csv")
    >>> [f.name for f in written.files]
    ['shop.customers.csv', 'shop.order_items.csv']
    >>> shutil.rmtree(out)
    """
    return _write_tables(tables, Path(path), format, overwrite, [])


def _write_tables(tables: dict[str, Any], path: Path, format: str | None, overwrite: bool,
                  notes: list[str]) -> Written:
    fmt = _format_of(path, format) if format is not None or path.suffix.lower() in _SUFFIXES else "parquet"
    names = _file_names(list(tables))
    rows = 0
    with atomic_path(path, overwrite) as staged:
        staged.mkdir()
        for name, frame in tables.items():
            target = staged / f"{names[name]}{_EXTENSIONS[fmt]}"
            if _is_spark(frame):
                _spark_write(frame, target, fmt)
                continue
            table, column_notes = _frame_arrow(frame, raw_json=fmt == "jsonl")
            if fmt == "parquet":
                table = _with_pandas_metadata(table, frame)
            notes += [f"{name}: {note}" for note in column_notes]
            _write_file(table, target, fmt)
            rows += len(frame)
        files = _data_files(staged)
        if any(_is_spark(frame) for frame in tables.values()):
            rows = _count_rows(files, fmt)
    return _written(path, staged, fmt, rows, files, notes)


def _with_pandas_metadata(table: pa.Table, frame: pd.DataFrame) -> pa.Table:
    """``table`` with pandas' schema metadata of ``frame``, so that ``pandas.read_parquet`` gives back the typed
    columns' dtypes (``Int64``, ``boolean``, dates); the table unchanged when pandas cannot describe the frame."""
    head = frame.head(0)
    head.attrs = {}  # problems ride in attrs; they are not written
    try:
        metadata = pa.Schema.from_pandas(head, preserve_index=False).metadata
    except (pa.ArrowException, TypeError, ValueError):
        return table
    return table.replace_schema_metadata(metadata)


# ---------------------------------------------------------------- conversion between dialects


def convert(events: Any, to: str, path: str | os.PathLike[str] | None = None, *, layout: str | None = None,
            overwrite: bool = False) -> Converted | Written:
    """Re-encode canonical events in dialect ``to``; return the messages, or write them to ``path``.

    Every event is accounted for: the messages are decoded again by ``to``
    and compared, op by op, with the events given. Events the dialect has no
    form for (transaction markers, DDL, heartbeats... depending on the
    dialect, or an update without the before image the dialect needs) are
    counted in ``dropped`` with the reason and named in the notes; snapshot
    reads written as inserts are noted. An encoder that raises on an event
    gives an :class:`EncodeError` naming the event (source, offset).

    With ``path``, the messages are written atomically with
    :func:`cdckit.containers.write_messages` in the dialect's layout: one
    JSON value per line (``jsonl``), UniVerse lines (``text``), DataHub
    Tuple rows as ``jsonl``, ``csv`` or ``parquet`` (from the suffix), or,
    with ``layout="kcat"``, kcat ``-J`` lines that carry the Kafka keys
    (without them a keyed dialect's key columns are lost, and a note says
    so). A ``.gz`` suffix writes gzip. Returns a :class:`Written` whose rows
    are the messages written.

    A Spark DataFrame is collected to pandas first (``toArrow``): fine for
    what fits on the driver.

    >>> import tempfile, shutil, cdckit
    >>> out = Path(tempfile.mkdtemp())
    >>> blob = cdckit.samples.load("datahub_blob")
    >>> written = convert(blob, "debezium", out / "debezium.jsonl", layout="kcat")
    >>> print(written)  # doctest: +ELLIPSIS
    wrote 4 rows to .../debezium.jsonl (kcat, 1 file, ... KB)
    >>> written.notes
    ['1 heartbeat events have no form in debezium and were left out']
    >>> cdckit.detect(out / "debezium.jsonl").dialect
    'debezium'
    >>> shutil.rmtree(out)
    """
    frame = _pandas_events(events)
    dialect = registry.create(to)
    if not dialect.can_encode():
        writable = [name for name in registry.names() if registry.get(name).can_encode()]
        raise ValueError(f"the {dialect.name} dialect cannot be written; these can: {', '.join(writable)}")
    target = None if path is None else Path(path)
    if target is not None:
        layout = _layout(dialect, target, layout)
        _check_target(target, overwrite)
    records = _encode(dialect, frame)
    converted = Converted(dialect.name, records, *_account(frame, records, dialect.name))
    if target is None:
        return converted
    notes = list(converted.notes)
    keyed = sum(record.key is not None for record in records)
    if keyed and layout != "kcat":
        notes.append(f"{keyed:,} Kafka keys were not written ({layout} has no place for them; the kcat layout "
                     "keeps them, and with them the key columns)")
    with atomic_path(target, overwrite) as staged:
        if target.suffix.lower() == ".gz":
            plain = staged.with_suffix("")
            write_messages(records, plain, layout)
            with open(plain, "rb") as source, gzip.GzipFile(staged, "wb", mtime=0) as sink:
                shutil.copyfileobj(source, sink)
        else:
            write_messages(records, staged, layout)
    return Written(target, layout, len(records), [target], target.stat().st_size, notes)


def _layout(dialect: Dialect, path: Path, layout: str | None) -> str:
    """The file layout for ``dialect``'s messages at ``path`` (checked when given)."""
    suffix = path.suffix.lower() if path.suffix.lower() != ".gz" else Path(path.stem).suffix.lower()
    if dialect.layout == "rows":
        allowed, default = ("jsonl", "csv", "parquet"), {".csv": "csv", ".parquet": "parquet"}.get(suffix, "jsonl")
    elif dialect.layout == "text":
        allowed, default = ("text",), "text"
    else:
        allowed, default = ("jsonl", "kcat"), "jsonl"
    chosen = layout or default
    if chosen not in allowed:
        raise ValueError(f"layout {chosen!r} does not fit {dialect.name} messages; choose one of {', '.join(allowed)}")
    if chosen in ("csv", "parquet") and path.suffix.lower() == ".gz":
        raise ValueError(f"{path}: {chosen} output cannot be gzipped")
    return chosen


def _encode(dialect: Dialect, frame: pd.DataFrame) -> list[Record]:
    """All the records of ``frame``; an encoder error becomes an :class:`EncodeError` naming the event.

    A record that cannot be written as JSON (an integer beyond 64 bits, say)
    is an encoder error too, found here rather than when the file is written.
    """
    try:
        return _encoded(dialect, frame)
    except Exception as err:  # an encoder bug or an event it cannot take: find which event, by halves
        rows, failure = frame, err
        while len(rows) > 1:
            half = len(rows) // 2
            for part in (rows.iloc[:half], rows.iloc[half:]):
                try:
                    _encoded(dialect, part)
                except Exception as found:
                    rows, failure = part, found
                    break
            else:  # each half encodes on its own: the failure needs both
                break
        if len(rows) != 1:
            raise EncodeError(dialect.name, f"{type(err).__name__}: {err} (no single event fails on its own)") from err
        row = rows.iloc[0]
        table = table_names(rows).iloc[0]
        reason = f"{row['op']} of {table or 'no table'}: {type(failure).__name__}: {failure}"
        raise EncodeError(dialect.name, reason, row["source"], int(row["offset"])) from failure


def _encoded(dialect: Dialect, frame: pd.DataFrame) -> list[Record]:
    """The records of ``frame``, each checked to be writable as JSON (raises what the writer would)."""
    records = list(dialect.encode(frame))
    if dialect.layout != "text":
        for record in records:
            values.dumps(record.value)
            if record.key is not None:
                values.dumps(record.key)
    return records


def _account(frame: pd.DataFrame, records: list[Record], dialect: str) -> tuple[dict[str, int], list[str]]:
    """``(dropped, notes)``: the events the records do not give back when decoded, by reason."""
    back = read(Converted(dialect, records, {}, []).kafka_records(), dialect=dialect)
    given = Counter(frame["op"].astype(object))
    got = Counter(back["op"].astype(object))
    notes = []
    as_insert = min(given["read"] - got["read"], got["insert"] - given["insert"])
    if as_insert > 0:
        got["read"] += as_insert
        got["insert"] -= as_insert
        notes.append(f"{as_insert:,} read (snapshot) events were written as insert: {dialect} has no snapshot op")
    dropped = {}
    for op, count in given.items():
        missing = count - got[op]
        if missing > 0:
            dropped[_drop_reason(frame[frame["op"] == op], op, missing, dialect)] = missing
    for reason, count in dropped.items():
        notes.append(f"{count:,} {reason} and were left out")
    for op, count in got.items():
        if count > given[op]:
            notes.append(f"{count - given[op]:,} more {op} events were read back than were given")
    unreadable = back.attrs["quarantine"]
    if len(unreadable):
        first = unreadable["reason"].iloc[0]
        notes.append(f"{len(unreadable):,} messages written in {dialect} could not be read back (first: {first})")
    return dropped, notes


def _drop_reason(rows: pd.DataFrame, op: str, missing: int, dialect: str) -> str:
    """Why ``missing`` of the ``op`` events in ``rows`` did not come back."""
    if op in ("insert", "update", "delete", "read"):  # every dialect writes row changes: which image is missing?
        for side in ("before", "after"):
            if int(rows[side].isna().sum()) == missing:
                return f"{op} events without a {side} image cannot be written in {dialect}"
    if missing == len(rows):
        return f"{op} events have no form in {dialect}"
    return f"{op} events that {dialect} cannot write (names, values or kinds its format cannot carry)"


# ---------------------------------------------------------------- atomic output


def _check_target(path: Path, overwrite: bool) -> None:
    if not overwrite and os.path.lexists(path):
        raise FileExistsError(f"{path} exists; pass overwrite=True to replace it (CLI: --force)")


@contextmanager
def atomic_path(path: Path, overwrite: bool) -> Iterator[Path]:
    """Yield a staging path beside ``path``; move it into place when the block ends without error.

    The staging path lies in a hidden temporary folder in ``path``'s folder
    (same file system, so the final rename is atomic); the folder is removed
    in every case. Parent folders of ``path`` are created.
    """
    _check_target(path, overwrite)
    path.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent))
    try:
        staged = work / path.name
        yield staged
        if not os.path.lexists(staged):
            raise RuntimeError(f"nothing was written for {path}")
        _check_target(path, overwrite)  # created by someone else meanwhile?
        if not os.path.lexists(path) or (staged.is_file() and not path.is_dir()):
            os.replace(staged, path)
        else:  # a folder on either side: rename the old one away, the new one in
            old = work / ".replaced"
            os.replace(path, old)
            try:
                os.replace(staged, path)
            except BaseException:
                os.replace(old, path)
                raise
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _written(path: Path, staged: Path, fmt: str, rows: int, staged_files: list[Path], notes: list[str]) -> Written:
    """The :class:`Written` of an output moved from ``staged`` to ``path``."""
    files = [path / file.relative_to(staged) if file != staged else path for file in staged_files]
    return Written(path, fmt, rows, files, sum(file.stat().st_size for file in files), notes)


# ---------------------------------------------------------------- pandas/Arrow writing


def _events_arrow(events: pd.DataFrame) -> tuple[pa.Table, list[str]]:
    """The frame as an Arrow table: canonical columns with their types, then the others."""
    canonical = events[COLUMN_NAMES]
    canonical.attrs = {}  # the quarantine and report are not written
    table = pa.Table.from_pandas(canonical, schema=ARROW_SCHEMA, preserve_index=False)
    extra = [name for name in events.columns if name not in COLUMN_NAMES]
    if not extra:
        return table.replace_schema_metadata(None), []
    others, notes = _frame_arrow(events[extra], raw_json=False)  # read_events reads JSON text back
    for name in others.column_names:
        table = table.append_column(others.field(name), others.column(name))
    return table.replace_schema_metadata(None), notes


def _write_partitions(table: pa.Table, names: list[str | None], folder: Path, fmt: str) -> None:
    """One ``table_name=<name>/part-0.<ext>`` file per table name, rows in their order."""
    folder.mkdir()
    groups: dict[str, list[int]] = {}
    for index, name in enumerate(names):
        groups.setdefault(_partition_name(name), []).append(index)
    for name, rows in groups.items():
        part = folder / f"{PARTITION_COLUMN}={name}"
        part.mkdir()
        _write_file(table.take(pa.array(rows, pa.int64())), part / f"part-0{_EXTENSIONS[fmt]}", fmt)


def _frame_arrow(frame: pd.DataFrame, raw_json: bool) -> tuple[pa.Table, list[str]]:
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
        if why is None:
            fields.append(pa.field(str(name), array.type))
        else:
            array = pa.array([None if _missing(v) else values.dumps(_plain(v)) for v in column], pa.string())
            fields.append(pa.field(str(name), pa.string(), metadata={_JSON_MARK: b"1"} if raw_json else None))
            if not raw_json:
                notes.append(f"column {name} holds {why} and was written as JSON text")
        arrays.append(array)
    return pa.Table.from_arrays(arrays, schema=pa.schema(fields)), notes


def _typed_array(column: pd.Series) -> tuple[pa.Array | None, str | None]:
    """``(array, None)``, or ``(None, why)`` when the column must become JSON text."""
    if column.dtype == object and len({type(v) for v in column if not _missing(v)}) > 1:
        return None, "values of several kinds"  # Arrow would coerce ints to floats, or fail
    try:
        array = pa.array(column, from_pandas=True)
    except (pa.ArrowException, TypeError, ValueError, OverflowError):
        return None, "values Arrow cannot type"
    if pa.types.is_nested(array.type):
        return None, "lists or objects"
    return array, None


def _missing(value: Any) -> bool:
    return value is None or value is pd.NA or value is pd.NaT or (isinstance(value, float) and value != value)


def _plain(value: Any) -> Any:
    """A cell as a value JSON can carry."""
    if isinstance(value, pd.Timestamp):
        return value.isoformat()
    if hasattr(value, "tolist"):  # numpy scalars and arrays
        return value.tolist()
    return value


def _write_file(table: pa.Table, path: Path, fmt: str) -> None:
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
    utc = pc.cast(times, _TIME if times.type.tz is not None else pa.timestamp("ns"))
    text = pc.strftime(pc.cast(utc, _TIME), format="%Y-%m-%dT%H:%M:%S")
    text = pc.replace_substring_regex(text, pattern=r"\.?0+$", replacement="")
    return pc.binary_join_element_wise(text, "Z", "")


# ---------------------------------------------------------------- reading back


def _data_files(path: Path) -> list[Path]:
    """``path`` itself, or the data files under a folder (hidden files and ``_``-files left out), sorted."""
    if not path.exists():
        raise FileNotFoundError(f"{path} does not exist")
    if not path.is_dir():
        return [path]
    return sorted(file for file in path.rglob("*") if file.is_file()
                  and not any(part.startswith((".", "_")) for part in file.relative_to(path).parts))


def _read_file(path: Path, fmt: str) -> pa.Table:
    if fmt == "parquet":
        return pq.read_table(path)
    if fmt == "csv":
        types = {f.name: (f.type if f.type == pa.int64() else pa.string()) for f in ARROW_SCHEMA}
        return pacsv.read_csv(
            path,
            read_options=pacsv.ReadOptions(block_size=_BLOCK),
            parse_options=pacsv.ParseOptions(newlines_in_values=True),
            convert_options=pacsv.ConvertOptions(column_types=types, strings_can_be_null=True,
                                                 quoted_strings_can_be_null=False),
        )
    schema = pa.schema([pa.field(f.name, pa.string() if f.type == _TIME else f.type) for f in ARROW_SCHEMA])
    if path.stat().st_size == 0:  # no events (pyarrow refuses an empty JSON file)
        return schema.empty_table()
    options = pajson.ParseOptions(explicit_schema=schema, unexpected_field_behavior="infer")
    return pajson.read_json(path, read_options=pajson.ReadOptions(block_size=_BLOCK), parse_options=options)


def _canonical(table: pa.Table, where: Any) -> pa.Table:
    """A table read from a file as the canonical Arrow table (other columns after the canonical ones)."""
    missing = [name for name in COLUMN_NAMES if name not in table.column_names]
    if missing:
        raise ValueError(f"{where} does not hold canonical events: no column {', '.join(missing)}")
    arrays = []
    for column_field in ARROW_SCHEMA:
        column = table.column(column_field.name)
        if column_field.type == _TIME and not pa.types.is_timestamp(column.type):
            parsed = pd.to_datetime(pd.Series(column.to_pylist(), dtype=object), utc=True, format="ISO8601")
            column = pa.array(parsed, _TIME)
        elif pa.types.is_list(column_field.type) and pa.types.is_string(column.type):  # JSON text in CSV
            column = pa.array([None if v is None else values.loads(v) for v in column.to_pylist()], column_field.type)
        arrays.append(pc.cast(column, column_field.type))
    extra = [name for name in table.column_names if name not in COLUMN_NAMES]
    return pa.Table.from_arrays(arrays + [table.column(name) for name in extra],
                                schema=pa.schema(list(ARROW_SCHEMA) + [table.field(name) for name in extra]))


def _count_rows(files: list[Path], fmt: str) -> int:
    if fmt == "parquet":
        return sum(pq.ParquetFile(file).metadata.num_rows for file in files)
    return sum(_read_file(file, fmt).num_rows for file in files)


# ---------------------------------------------------------------- Spark


def _is_spark(frame: Any) -> bool:
    """True for a PySpark DataFrame (classic or Connect), without importing pyspark."""
    return type(frame).__module__.startswith("pyspark.")


def _spark_write_events(events: Any, path: Path, fmt: str, partitioned: bool, overwrite: bool) -> Written:
    from pyspark.sql import functions as F

    if partitioned:
        name = F.when(F.col("table").isNull(), F.lit(None)).otherwise(
            F.concat_ws(".", F.coalesce(F.col("database"), F.col("schema")), F.col("table")))
        events = events.withColumn(PARTITION_COLUMN, name)
    with atomic_path(path, overwrite) as staged:
        _spark_write(events, staged, fmt, PARTITION_COLUMN if partitioned else None)
        files = _data_files(staged)
        rows = _count_rows(files, fmt)
    return _written(path, staged, fmt, rows, files, [])


def _spark_write(frame: Any, target: Path, fmt: str, partition_column: str | None = None) -> None:
    """Write a Spark DataFrame with Spark's writer as a folder at ``target`` (a local path)."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    if fmt == "csv":  # CSV has no lists, maps or structs: JSON text
        nested = (T.ArrayType, T.MapType, T.StructType)
        frame = frame.select(*[F.to_json(F.col(f.name)).alias(f.name) if isinstance(f.dataType, nested)
                               else F.col(f.name) for f in frame.schema.fields])
    writer = frame.write.mode("errorifexists").format(_SPARK_FORMATS[fmt])
    if fmt == "csv":
        writer = writer.options(header=True, escape='"', ignoreLeadingWhiteSpace=False,
                                ignoreTrailingWhiteSpace=False, timestampFormat=_SPARK_TIME, timeZone="UTC")
    elif fmt == "jsonl":
        writer = writer.options(ignoreNullFields=False, timestampFormat=_SPARK_TIME, timeZone="UTC")
    if partition_column is not None:
        writer = writer.partitionBy(partition_column)
    if fmt != "parquet":
        writer.save(str(target))
        return
    # times as UTC microseconds, as pandas writes them (Spark's default INT96 reads back without a zone)
    conf, key = frame.sparkSession.conf, "spark.sql.parquet.outputTimestampType"
    previous = conf.get(key, None)
    conf.set(key, "TIMESTAMP_MICROS")
    try:
        writer.save(str(target))
    finally:
        if previous is None:
            conf.unset(key)
        else:
            conf.set(key, previous)


def _pandas_events(events: Any) -> pd.DataFrame:
    """A canonical pandas frame from a pandas or Spark frame."""
    _check_columns(events.columns)
    if _is_spark(events):
        table = events.select(*COLUMN_NAMES).toArrow()
        return arrow_to_pandas(_canonical(table, "the Spark frame"))
    return events


# ---------------------------------------------------------------- small helpers


def _check_columns(columns: Any) -> None:
    missing = [name for name in COLUMN_NAMES if name not in list(columns)]
    if missing:
        raise ValueError(f"not a canonical event frame: no column {', '.join(missing)}")


def _format_of(path: Path, format: str | None) -> str:
    if format is not None:
        if format.lower() not in FORMATS:
            raise ValueError(f"unknown format {format!r}; choose one of {', '.join(FORMATS)}")
        return format.lower()
    found = _SUFFIXES.get(path.suffix.lower())
    if found is None:
        raise ValueError(f"cannot tell the format of {path} from its suffix; pass format= (one of "
                         f"{', '.join(FORMATS)}) or name it .parquet, .csv or .jsonl")
    return found


def _escape(name: str) -> str:
    """A name as a file or folder name: control characters and :data:`_ESCAPED` as ``%XX`` (as Spark does)."""
    return "".join(f"%{ord(c):02X}" if c in _ESCAPED or ord(c) < 0x20 else c for c in name)


def _partition_name(name: str | None) -> str:
    """The folder value of a table name (Hive's default partition for none)."""
    return _escape(name) if name else _DEFAULT_PARTITION


def _file_names(names: list[str]) -> dict[str, str]:
    """A safe, distinct file stem for each table name.

    >>> _file_names(["shop.customers", "a/b", ".hidden", "_x"])
    {'shop.customers': 'shop.customers', 'a/b': 'a%2Fb', '.hidden': '%2Ehidden', '_x': '%5Fx'}
    """
    stems = {}
    for name in names:
        stem = _escape(str(name)) or "%00"
        if stem[0] in "._":
            stem = f"%{ord(stem[0]):02X}{stem[1:]}"
        stems[name] = stem
    return stems


def _text(value: Any) -> str | None:
    """A record's key or value as Kafka text: text as it is, anything else as JSON."""
    if value is None or isinstance(value, str):
        return value
    return values.dumps(value)


def _size(count: int) -> str:
    """A byte count for people.

    >>> _size(512), _size(215_040), _size(5_347_738)
    ('512 bytes', '210 KB', '5.1 MB')
    """
    if count < 1024:
        return f"{count} bytes"
    if count < 1024**2:
        return f"{count / 1024:.0f} KB"
    if count < 1024**3:
        return f"{count / 1024**2:.1f} MB"
    return f"{count / 1024**3:.1f} GB"
