"""``cdckit.read``: any capture to the canonical event frame, losing nothing.

Each source (file, payload or iterable) gets its dialect, given or detected
from its first messages; every message is then decoded by that dialect. A
message that cannot be decoded is quarantined with its source, offset, raw
text and reason (or raises :class:`DecodeError` with ``errors="raise"``);
split updates are paired (:mod:`cdckit.reading.pairing`); the report accounts for
every message.

>>> import cdckit
>>> events = cdckit.read(cdckit.samples.path("canal"))
>>> r = events.attrs["report"]
>>> r["messages"] == r["decoded"] + r["quarantined"]
True
"""

from __future__ import annotations

import os
from typing import Any, Literal, overload

import pandas as pd
import pyarrow as pa

from ..capture import Capture, new_report
from ..column_types import column_types_frame
from ..dialects import registry
from ..dialects.options import DialectOptions
from ..errors import DecodeError
from ..frame import ARROW_SCHEMA, arrow_to_pandas, empty_quarantine
from ..frame_builders import QuarantineBuilder
from ..io.kafka import is_kafka_url, parse_kafka_url
from ..io.schema_book import book_for
from ..keys import Keys, given_keys, key_columns_given, with_keys
from .detect import DEFAULT_SAMPLE
from .events_files import is_events_file, read_events
from .read_job import ReadJob

__all__ = ["read", "ChunkedRead", "exported_events", "holds_exported_events"]


@overload
def read(
    source: Any,
    dialect: str | None = None,
    errors: str = "quarantine",
    *,
    chunksize: None = None,
    container: str | None = None,
    tz: str | None = None,
    unavailable_value: str | tuple[str, ...] | list[str] = (),
    key_separator: str | None = None,
    sample: int = DEFAULT_SAMPLE,
    workers: int | None = None,
    capture: Literal[False] = False,
    keys: Keys | None = None,
    progress: bool | None = None,
    kafka_config: dict[str, Any] | None = None,
    schema_registry: str | None = None,
    schema_registry_config: dict[str, Any] | None = None,
    schemas: str | os.PathLike[str] | None = None,
) -> pd.DataFrame: ...


@overload
def read(
    source: Any,
    dialect: str | None = None,
    errors: str = "quarantine",
    *,
    chunksize: None = None,
    container: str | None = None,
    tz: str | None = None,
    unavailable_value: str | tuple[str, ...] | list[str] = (),
    key_separator: str | None = None,
    sample: int = DEFAULT_SAMPLE,
    workers: int | None = None,
    capture: Literal[True],
    keys: Keys | None = None,
    progress: bool | None = None,
    kafka_config: dict[str, Any] | None = None,
    schema_registry: str | None = None,
    schema_registry_config: dict[str, Any] | None = None,
    schemas: str | os.PathLike[str] | None = None,
) -> Capture: ...


@overload
def read(
    source: Any,
    dialect: str | None = None,
    errors: str = "quarantine",
    *,
    chunksize: int,
    container: str | None = None,
    tz: str | None = None,
    unavailable_value: str | tuple[str, ...] | list[str] = (),
    key_separator: str | None = None,
    sample: int = DEFAULT_SAMPLE,
    workers: int | None = None,
    capture: bool = False,
    keys: Keys | None = None,
    progress: bool | None = None,
    kafka_config: dict[str, Any] | None = None,
    schema_registry: str | None = None,
    schema_registry_config: dict[str, Any] | None = None,
    schemas: str | os.PathLike[str] | None = None,
) -> ChunkedRead: ...


@overload
def read(
    source: Any,
    dialect: str | None = None,
    errors: str = "quarantine",
    *,
    chunksize: int | None = None,
    container: str | None = None,
    tz: str | None = None,
    unavailable_value: str | tuple[str, ...] | list[str] = (),
    key_separator: str | None = None,
    sample: int = DEFAULT_SAMPLE,
    workers: int | None = None,
    capture: bool = False,
    keys: Keys | None = None,
    progress: bool | None = None,
    kafka_config: dict[str, Any] | None = None,
    schema_registry: str | None = None,
    schema_registry_config: dict[str, Any] | None = None,
    schemas: str | os.PathLike[str] | None = None,
) -> pd.DataFrame | Capture | ChunkedRead: ...


def read(
    source: Any,
    dialect: str | None = None,
    errors: str = "quarantine",
    *,
    chunksize: int | None = None,
    container: str | None = None,
    tz: str | None = None,
    unavailable_value: str | tuple[str, ...] | list[str] = (),
    key_separator: str | None = None,
    sample: int = DEFAULT_SAMPLE,
    workers: int | None = None,
    capture: bool = False,
    keys: Keys | None = None,
    progress: bool | None = None,
    kafka_config: dict[str, Any] | None = None,
    schema_registry: str | None = None,
    schema_registry_config: dict[str, Any] | None = None,
    schemas: str | os.PathLike[str] | None = None,
) -> pd.DataFrame | Capture | ChunkedRead:
    """Decode a capture into the canonical event frame.

    Args:
        source: a path (file, directory, glob; ``.gz`` read transparently),
            a list of ``pathlib.Path`` objects (one capture), a
            ``str``/``bytes`` payload, or an iterable of messages (``str``,
            ``bytes``, parsed ``dict`` or Kafka records).
        dialect: a registry name, or None to detect each source's dialect.
        errors: ``"quarantine"`` keeps bad messages in
            ``cdckit.quarantine(events)``; ``"raise"`` raises
            :class:`~cdckit.DecodeError` at the first one.
        chunksize: when given, return an iterator of frames of at most this
            many events, so a capture larger than memory can be decoded.
        container: force ``jsonl``, ``json``, ``text``, ``csv``, ``parquet`` or ``avro``.
        tz: zone for zone-less text times (UTC when None).
        unavailable_value: the Debezium connector's ``unavailable.value.placeholder`` when it is set to
            another text than ``__debezium_unavailable_value`` (which is always recognised), or several
            such texts: a column holding one (as text, Base64 or hex bytes, a one-element array...) is an
            unchanged TOASTed value, left out of its image. Other dialects ignore it.
        key_separator: the ``key.separator`` of lines ``kafka-console-consumer`` printed with their
            keys (``--property print.key=true``), when it is not a tab: such lines are read as the
            Kafka records they show, their value the message, with its key, partition and offset
            (see :mod:`cdckit.io.console`; the tab layout is recognised without it).
        sample: messages per source used for detection.
        workers: processes that decode a large JSON Lines or text file
            together, each a range of its lines (see :mod:`cdckit.reading.workers`);
            None: every core for files of 16 MiB or more, one otherwise.
            The result is the same for any number, chunked reads and
            ``errors="raise"`` included (the range holding the first bad
            message is decoded again in the calling process, so the error's
            ``partial`` frame is the one-process read's).
        capture: return a :class:`~cdckit.capture.Capture` (events, quarantine,
            report and column types as fields) instead of the events alone.
        keys: the key columns of tables whose capture names none (or other
            ones: what is given wins), ``{"customers": "id", "order_lines":
            ["order_id", "line_no"]}`` (``schema.table`` or the bare table
            name), applied after decoding as :func:`cdckit.with_keys` does,
            so every later call (replay, history, explorer) sees them. A
            name that matches no table raises ValueError naming the tables;
            a chunked read applies them to each chunk, skipping names a chunk
            does not hold.
        progress: a progress bar while the read goes on (tqdm's widget in a
            Jupyter notebook where ipywidgets is installed, its text bar on
            stderr elsewhere; see :mod:`cdckit.reading.progress`), in bytes of the
            input files (a gzip file's compressed bytes), or in messages for
            an iterable whose length is known; worker processes report
            their own progress to it. None (automatic): drawn for input of
            8 MiB or more (200,000 messages) once the read has taken a
            second, where it can be seen (a notebook, or stderr on a
            terminal: never into a log file or a test's output); True: always
            drawn; False: never. It is gone when the read ends, fails or is
            interrupted.
        kafka_config: the Kafka client's settings (SASL, TLS, ``client.id``...: librdkafka's names) for a
            ``kafka://host:port/topic`` source, a bounded sample of a live topic read as its kcat ``-J``
            lines (see :mod:`cdckit.io.kafka` for the URL's options); no offset is ever committed.
        schema_registry: the URL of the schema registry that holds the schemas of framed records (Avro,
            Protobuf or JSON Schema in Confluent's wire format, as Confluent's converters write them); its
            client's settings (``basic.auth.user.info``, ``ssl.ca.location``...) go in
            ``schema_registry_config``. Avro records are read as the JSON converter writes the same records.
        schemas: a folder of schemas exported from a registry (:func:`cdckit.io.schema_book.folder_schemas`).
            A capture file's own schemas, saved beside it by ``cdckit capture`` (``<file>.schemas/``), are
            found without it. A record whose schema is found nowhere is quarantined, the id in its reason.

    Returns:
        The canonical frame (see :mod:`cdckit.frame`), with
        ``attrs["report"]`` and JSON-safe summaries of the quarantine and the column
        types the dialects declared (:mod:`cdckit.column_types`), which
        :func:`cdckit.quarantine` and :func:`cdckit.column_types_of` give as frames;
        a :class:`~cdckit.capture.Capture` of the same when ``capture=True``; or a
        :class:`ChunkedRead` when ``chunksize`` is given. A path to events
        cdckit itself wrote (:func:`cdckit.export.write_events`, ``cdckit
        convert``: Parquet, CSV or JSON Lines with the canonical columns) is
        read back as those events when no dialect or container is named.
    """
    if errors not in ("quarantine", "raise"):
        raise ValueError(f"errors must be 'quarantine' or 'raise', not {errors!r}")
    if dialect is not None:
        registry.get(dialect)  # a misspelt name fails now, with a suggestion
    book = book_for(source, schema_registry, schema_registry_config, schemas)
    options = DialectOptions(tz=tz, unavailable_value=unavailable_value, key_separator=key_separator, schemas=book)
    if workers is not None and workers < 1:
        raise ValueError("workers must be at least 1")
    if keys is not None:
        key_columns_given(keys)  # a malformed mapping fails now, before the (long) read
    if is_kafka_url(source):
        source = parse_kafka_url(source, kafka_config)  # a malformed URL fails now
    if dialect is None and chunksize is None and container is None and holds_exported_events(source):
        found = given_keys(exported_events(source, capture=True), keys)
        return found if capture else found.with_attrs()
    job = ReadJob(dialect, errors, options, container, sample, workers, progress)
    if chunksize is not None:
        if capture:
            raise ValueError("capture=True gives the whole read: a chunked read has no single capture")
        if chunksize < 1:
            raise ValueError("chunksize must be at least 1")
        return ChunkedRead(job, source, chunksize, keys)
    tables: list[pa.Table] = []
    try:
        for table in job.tables(source, None):
            tables.append(table)
    except DecodeError as err:
        tables.append(job.builder.to_arrow())
        err.partial = arrow_to_pandas(pa.concat_tables(tables))
        raise
    events = arrow_to_pandas(pa.concat_tables(tables) if tables else ARROW_SCHEMA.empty_table())
    found = given_keys(Capture(events, job.quarantine.to_pandas(), job.report(), job.column_types()), keys)
    return found if capture else found.with_attrs()


def holds_exported_events(source: Any) -> bool:
    """True when ``source`` is a path to canonical events cdckit wrote (``write_events``, ``cdckit convert``).

    >>> holds_exported_events("no/such/file.parquet"), holds_exported_events('{"op": "c"}')
    (False, False)
    """
    return isinstance(source, (str, os.PathLike)) and os.path.exists(source) and is_events_file(source)


def exported_events(path: str | os.PathLike[str], capture: bool = False) -> pd.DataFrame | Capture:
    """Canonical events cdckit wrote, read back as they are (no dialect detection), with a report that
    counts each event as a message and an empty quarantine (a :class:`~cdckit.capture.Capture` when
    ``capture=True``)."""
    events = read_events(path)
    counts = events["dialect"].value_counts()
    report = new_report(
        messages=len(events),
        decoded=len(events),
        events=len(events),
        dialects={str(name): int(n) for name, n in counts.items()},
        sources={os.fspath(path): "canonical events (written by cdckit)"},
    )
    found = Capture(events, empty_quarantine(), report, column_types_frame([]))
    return found if capture else found.with_attrs()


class ChunkedRead:
    """Iterator of canonical frames of at most ``chunksize`` events.

    Each frame's quarantine (``cdckit.quarantine(frame)``) holds the messages quarantined since
    the previous frame, ``attrs["report"]`` the running totals and its
    ``cdckit.column_types_of(frame)`` the column types declared so far. After the
    last frame, ``report``, ``quarantine`` and ``column_types`` cover the whole read.
    """

    def __init__(self, job: ReadJob, source: Any, chunksize: int, keys: Keys | None = None) -> None:
        self._job = job
        self._keys = keys
        self._tables = job.tables(source, chunksize)
        self._quarantine_seen = 0

    def __iter__(self) -> ChunkedRead:
        return self

    def close(self) -> None:
        """Stop the read here (its progress bar goes away); ``report``, ``quarantine`` and ``column_types``
        then cover what was read."""
        self._tables.close()

    def __next__(self) -> pd.DataFrame:
        try:
            table = next(self._tables)
        except DecodeError as err:
            err.partial = self._job.builder.to_pandas()
            raise
        rows = self._job.quarantine.rows
        recent = QuarantineBuilder()
        recent.rows = rows[self._quarantine_seen :]
        self._quarantine_seen = len(rows)
        found = Capture(arrow_to_pandas(table), recent.to_pandas(), self._job.report(), self._job.column_types())
        return (with_keys(found, self._keys, strict=False) if self._keys else found).with_attrs()

    @property
    def report(self) -> dict[str, Any]:
        return self._job.report()

    @property
    def quarantine(self) -> pd.DataFrame:
        return self._job.quarantine.to_pandas()

    @property
    def column_types(self) -> pd.DataFrame:
        return self._job.column_types()
