"""Conversion between dialects: :func:`convert` re-encodes canonical events with the target dialect's encoder.

The result is decoded again to account for every event: what the target has
no form for is counted in ``dropped`` with the reason, never lost silently,
and an encoder failure is an :class:`EncodeError` naming the event.

>>> import cdckit
>>> converted = convert(cdckit.samples.load("canal/shop"), "maxwell")
>>> converted
<Converted: 320 maxwell messages, 0 events left out>
"""

from __future__ import annotations

import gzip
import os
import shutil
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from .. import values
from ..capture import events_of
from ..dialects import registry
from ..dialects.base import Dialect, Record
from ..engines import pandas_events
from ..errors import CdcError
from ..frame import CHANGE_OPS, table_names
from ..io import write_messages
from ..reading.read import read
from .atomic import atomic_path, refuse_existing
from .written import Written

__all__ = ["convert", "Converted", "EncodeError"]


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
        return [
            {"topic": topic, "partition": 0, "offset": number, "key": _text(record.key), "payload": _text(record.value)}
            for number, record in enumerate(self.records)
        ]


class EncodeError(CdcError, ValueError):
    """An encoder failed on an event; the message names the event (source, offset) and the reason."""

    def __init__(self, dialect: str, reason: str, source: str | None = None, offset: int | None = None) -> None:
        self.dialect = dialect
        self.reason = reason
        self.source = source
        self.offset = offset
        where = "the events" if source is None else f"the event at {source}, message {offset}"
        super().__init__(f"cannot encode {where} as {dialect}: {reason}")


def convert(
    events: Any,
    to: str,
    path: str | os.PathLike[str] | None = None,
    *,
    layout: str | None = None,
    overwrite: bool = False,
) -> Converted | Written:
    """Re-encode canonical events in dialect ``to``; return the messages, or write them to ``path``.

    Every event is accounted for: the messages are decoded again by ``to``
    and compared, op by op, with the events given. Events the dialect has no
    form for (transaction markers, DDL, heartbeats... depending on the
    dialect, or an update without the before image the dialect needs) are
    counted in ``dropped`` with the reason and named in the notes; snapshot
    reads written as inserts are noted. An encoder that raises on an event
    gives an :class:`EncodeError` naming the event (source, offset).

    With ``path``, the messages are written atomically with
    :func:`cdckit.io.write_messages` in the dialect's layout: one
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
    frame = pandas_events(events_of(events))
    dialect = registry.create(to)
    if not dialect.can_encode():
        writable = registry.writable()
        raise ValueError(f"the {dialect.name} dialect cannot be written; these can: {', '.join(writable)}")
    target = None if path is None else Path(path)
    file_layout = ""  # the layout of the file written, checked before anything is encoded
    if target is not None:
        file_layout = _layout(dialect, target, layout)
        refuse_existing(target, overwrite)
    records = _encode(dialect, frame)
    converted = Converted(dialect.name, records, *_account(frame, records, dialect.name))
    if target is None:
        return converted
    notes = list(converted.notes)
    keyed = sum(record.key is not None for record in records)
    if keyed and file_layout not in ("kcat", "console"):
        notes.append(
            f"{keyed:,} Kafka keys were not written ({file_layout} has no place for them; the kcat and "
            "console layouts keep them, and with them the key columns)"
        )
    with atomic_path(target, overwrite) as staged:
        if target.suffix.lower() == ".gz":
            plain = staged.with_suffix("")
            write_messages(records, plain, file_layout)
            with open(plain, "rb") as source, gzip.GzipFile(staged, "wb", mtime=0) as sink:
                shutil.copyfileobj(source, sink)
        else:
            write_messages(records, staged, file_layout)
    return Written(target, file_layout, len(records), [target], target.stat().st_size, notes)


def _layout(dialect: Dialect, path: Path, layout: str | None) -> str:
    """The file layout for ``dialect``'s messages at ``path`` (checked when given)."""
    suffix = path.suffix.lower() if path.suffix.lower() != ".gz" else Path(path.stem).suffix.lower()
    allowed: tuple[str, ...]
    if dialect.layout == "rows":
        allowed, default = ("jsonl", "csv", "parquet"), {".csv": "csv", ".parquet": "parquet"}.get(suffix, "jsonl")
    elif dialect.layout == "text":
        allowed, default = ("text",), "text"
    else:
        allowed, default = ("jsonl", "kcat", "console"), "jsonl"
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
    back = read(Converted(dialect, records, {}, []).kafka_records(), dialect=dialect, capture=True)
    given = Counter(frame["op"].astype(object))
    got = Counter(back.events["op"].astype(object))
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
    unreadable = back.quarantine
    if len(unreadable):
        first = unreadable["reason"].iloc[0]
        notes.append(f"{len(unreadable):,} messages written in {dialect} could not be read back (first: {first})")
    return dropped, notes


def _drop_reason(rows: pd.DataFrame, op: str, missing: int, dialect: str) -> str:
    """Why ``missing`` of the ``op`` events in ``rows`` did not come back."""
    if op in CHANGE_OPS:  # every dialect writes row changes: which image is missing?
        for side in ("before", "after"):
            if int(rows[side].isna().sum()) == missing:
                return f"{op} events without a {side} image cannot be written in {dialect}"
    if missing == len(rows):
        return f"{op} events have no form in {dialect}"
    return f"{op} events that {dialect} cannot write (names, values or kinds its format cannot carry)"


def _text(value: Any) -> str | None:
    """A record's key or value as Kafka text: text as it is, anything else as JSON."""
    if value is None or isinstance(value, str):
        return value
    return values.dumps(value)
