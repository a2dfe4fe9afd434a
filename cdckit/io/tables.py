r"""Tables: CSV (or tab-separated) and Parquet rows, one message per row.

A row's value is a dict of its columns (an empty CSV cell is None); a row
holding a saved Kafka record is unwrapped like any other message.

>>> import io
>>> [m.value for m in csv_messages(io.BytesIO(b"id,name\n1,\n"), "<bytes>", ",")]
[{'id': '1', 'name': None}]

``csv_messages`` and ``parquet_messages`` are shared by the modules of
:mod:`cdckit.io` (not public).
"""

from __future__ import annotations

import csv
import io
from typing import IO, Any, Iterator

from .. import values
from .message import Message, error_message
from .records import unwrap_record

__all__: list[str] = ["rows_of"]

#: The largest CSV cell read (the csv module's default, 131,072 characters, is too small for large images).
_CSV_FIELD_LIMIT = 2**31 - 1


def csv_messages(stream: IO[bytes], name: str, delimiter: str, fieldnames: list[str] | None = None,
                 first_offset: int = 0, first_line: int = 1) -> Iterator[Message]:
    """The rows of a CSV stream with a header line; a row with invalid UTF-8 or extra fields is quarantined.

    With ``fieldnames`` (the header), the stream is a part of a file after its header, from a line's start:
    its first row has offset ``first_offset`` and starts on line ``first_line``."""
    text = io.TextIOWrapper(stream, encoding="utf-8-sig" if fieldnames is None else "utf-8",
                            errors="surrogateescape", newline="")
    reader = csv.DictReader(text, fieldnames=fieldnames, delimiter=delimiter)
    lines_before = 0 if fieldnames is None else first_line - 1
    for offset, row in enumerate(_csv_rows(reader), start=first_offset):
        line = lines_before + reader.line_num
        clean = {k: (None if v == "" else v) for k, v in row.items()}
        if any(isinstance(v, str) and _has_surrogate(v) for v in (*clean.values(), *clean.keys())):
            raw = delimiter.join(v or "" for v in row.values() if isinstance(v, str))
            raw = raw.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
            yield error_message(name, offset, "invalid UTF-8 in CSV row", "invalid_utf8", raw, line)
            continue
        if None in clean:  # more fields than the header names
            extra = clean.pop(None)  # type: ignore[call-overload]
            yield error_message(name, offset, f"CSV row has {len(extra)} more fields than the header",
                                "damaged_input", values.dumps(clean), line)
            continue
        yield unwrap_record(Message(clean, name, offset, line=line))
    text.detach()


def _csv_rows(reader: csv.DictReader) -> Iterator[dict]:
    """The rows of a CSV reader, with cells of any size (the csv module's limit is raised while a row is read)."""
    while True:
        previous = csv.field_size_limit(_CSV_FIELD_LIMIT)
        try:
            row = next(reader, None)
        finally:
            csv.field_size_limit(previous)
        if row is None:
            return
        yield row


def _has_surrogate(text: str) -> bool:
    return any("\udc80" <= ch <= "\udcff" for ch in text)


def parquet_messages(stream: IO[bytes], name: str) -> Iterator[Message]:
    """The rows of a Parquet stream, read a batch at a time."""
    import pyarrow.parquet as pq

    offset = 0
    for batch in pq.ParquetFile(stream).iter_batches(batch_size=65_536):
        for row in rows_of(batch):
            yield unwrap_record(Message(row, name, offset))
            offset += 1


def rows_of(batch: Any, step: int = 4_096) -> Iterator[dict[str, Any]]:
    """The rows of an Arrow record batch as dicts, made ``step`` rows at a time (a reader that stops after the
    first few, as detection does, does not pay for the whole batch).

    >>> import pyarrow as pa
    >>> list(rows_of(pa.record_batch({"a": [1, 2, 3]}), step=2))
    [{'a': 1}, {'a': 2}, {'a': 3}]
    """
    for start in range(0, batch.num_rows, step):
        yield from batch.slice(start, step).to_pylist()
