r"""Tables: CSV (or tab-separated) and Parquet rows, one message per row.

A row's value is a dict of its columns (an empty CSV cell is None); a row
holding a saved Kafka record is unwrapped like any other message.

>>> import io
>>> [m.value for m in csv_messages(io.BytesIO(b"id,name\n1,\n"), "<bytes>", ",")]
[{'id': '1', 'name': None}]

``csv_messages`` and ``parquet_messages`` are shared by the modules of
:mod:`cdckit.io` (not public), as are ``csv_blocks`` and ``parquet_blocks``: the
same rows as :class:`RowBlock` (columns of Python values, no dict or message per
row) for decoders that take a table's rows at once.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import IO, Any

from .. import values
from .message import LineBlock, Message, error_message
from .records import may_be_record, unwrap_record

__all__: list[str] = ["rows_of", "RowBlock"]

#: Rows per :class:`RowBlock` of a CSV file (a Parquet file's come a batch at a time, as its messages do).
_CSV_BLOCK_ROWS = 16_384

#: The largest CSV cell read (the csv module's default, 131,072 characters, is too small for large images).
_CSV_FIELD_LIMIT = 2**31 - 1


def csv_messages(
    stream: IO[bytes],
    name: str,
    delimiter: str,
    fieldnames: list[str] | None = None,
    first_offset: int = 0,
    first_line: int = 1,
) -> Iterator[Message]:
    """The rows of a CSV stream with a header line; a row with invalid UTF-8 or extra fields is quarantined.

    With ``fieldnames`` (the header), the stream is a part of a file after its header, from a line's start:
    its first row has offset ``first_offset`` and starts on line ``first_line``."""
    text = io.TextIOWrapper(
        stream, encoding="utf-8-sig" if fieldnames is None else "utf-8", errors="surrogateescape", newline=""
    )
    reader = csv.DictReader(text, fieldnames=fieldnames, delimiter=delimiter)
    lines_before = 0 if fieldnames is None else first_line - 1
    for offset, row in enumerate(_csv_rows(reader), start=first_offset):
        yield _csv_message(row, name, offset, lines_before + reader.line_num, delimiter)
    text.detach()


def _csv_message(row: dict, name: str, offset: int, line: int, delimiter: str) -> Message:
    """The message of one row as :class:`csv.DictReader` gives it (``None`` keys the fields beyond the header)."""
    clean: dict[str | None, Any] = {k: (None if v == "" else v) for k, v in row.items()}
    if any(isinstance(v, str) and _has_surrogate(v) for v in (*clean.values(), *clean.keys())):
        raw = delimiter.join(v or "" for v in row.values() if isinstance(v, str))
        raw = raw.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
        return error_message(name, offset, "invalid UTF-8 in CSV row", "invalid_utf8", raw, line)
    if None in clean:  # more fields than the header names
        extra = clean.pop(None)
        return error_message(
            name,
            offset,
            f"CSV row has {len(extra)} more fields than the header",
            "damaged_input",
            values.dumps(clean),
            line,
        )
    return unwrap_record(Message(clean, name, offset, line=line))


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


@dataclass(slots=True)
class RowBlock(LineBlock):
    """Consecutive rows of a CSV or Parquet file as columns of Python values (``lines`` is empty).

    Row ``i`` has offset ``first_offset + i``; ``columns[j][i]`` is its value of column ``names[j]`` (None:
    an empty CSV cell, a null, a column a short CSV row lacks). ``line_numbers`` holds each row's line in a
    CSV file (None for Parquet). ``messages`` holds, by row number, the message of each row that is not a
    plain row of the columns (a CSV row the container quarantines); its columns hold None there.
    :meth:`message` gives any row's message as :func:`csv_messages` or :func:`parquet_messages` would.
    """

    names: list[str] = field(default_factory=list)
    columns: list[list] = field(default_factory=list)
    count: int = 0
    messages: dict[int, Message] = field(default_factory=dict)

    def message(self, index: int, name: str) -> Message:
        """Row ``index`` as the message the file's reader gives (named ``name``)."""
        known = self.messages.get(index)
        if known is not None:
            return known
        row = {key: column[index] for key, column in zip(self.names, self.columns)}
        line = None if self.line_numbers is None else self.line_numbers[index]
        return unwrap_record(Message(row, name, self.first_offset + index, line=line))


def parquet_blocks(batches: Iterator[Any], name: str, first_offset: int = 0) -> Iterator[RowBlock | Message]:
    """The rows of Arrow record batches (named ``name``) as :class:`RowBlock`, one per batch; a batch whose
    rows are not plain (see :func:`_plain_names`) comes as messages, as :func:`parquet_messages` gives them."""
    offset = first_offset
    for batch in batches:
        names = batch.schema.names
        if not _plain_names(names):
            for row in rows_of(batch):
                yield unwrap_record(Message(row, name, offset))
                offset += 1
            continue
        yield RowBlock(offset, 1, [], None, names, [column.to_pylist() for column in batch.columns], batch.num_rows)
        offset += batch.num_rows


def csv_blocks(
    stream: IO[bytes],
    name: str,
    delimiter: str,
    fieldnames: list[str] | None = None,
    first_offset: int = 0,
    first_line: int = 1,
) -> Iterator[RowBlock]:
    """:func:`csv_messages` as :class:`RowBlock`: the same rows, with their offsets and lines; a row that
    :func:`csv_messages` would not give as a plain row of the header's columns (extra fields, invalid UTF-8,
    a saved Kafka record) is in the block's ``messages``. When reading fails, the rows read before come as a
    block, then the error is raised.

    Plain text (see :func:`_plain_csv`) is read by pyarrow's CSV parser, a piece at a time; from the first
    piece that is not, the rest goes through the csv module's parser, as :func:`csv_messages` reads it.
    """
    head, rest = _csv_piece(stream, b"")
    data, line, names = head, first_line, fieldnames
    if names is None:
        end = head.find(b"\n")
        names = _plain_header(head if end < 0 else head[:end], delimiter)
        data, line = (b"" if end < 0 else head[end + 1 :]), 2
        if not data and end >= 0:
            data, rest = _csv_piece(stream, rest)
    if names is None or not _plain_names(names) or len(delimiter.encode()) != 1:
        yield from _csv_parsed(_joined(head + rest, stream), name, delimiter, fieldnames, first_offset, first_line)
        return
    offset = first_offset
    while data:
        table = _plain_csv(data, names, delimiter)
        if table is None:
            yield from _csv_parsed(_joined(data + rest, stream), name, delimiter, names, offset, line)
            return
        for start in range(0, table.num_rows, _CSV_BLOCK_ROWS):
            part = table.slice(start, _CSV_BLOCK_ROWS)
            count = part.num_rows
            yield RowBlock(
                offset,
                line,
                [],
                list(range(line, line + count)),
                list(names),
                [column.to_pylist() for column in part.columns],
                count,
            )
            offset, line = offset + count, line + count
        data, rest = _csv_piece(stream, rest)


#: Bytes of CSV text read at a time by pyarrow's parser (a piece ends at a line end).
_CSV_PIECE = 4 << 20


def _csv_piece(stream: IO[bytes], rest: bytes) -> tuple[bytes, bytes]:
    """The next lines of ``stream`` after ``rest`` (bytes read before): about :data:`_CSV_PIECE` bytes that
    end at a line end (or at the stream's end), and the bytes read after them."""
    data = rest
    while True:
        more = stream.read(_CSV_PIECE)
        if not more:
            return data, b""
        data += more
        end = data.rfind(b"\n")
        if end >= 0:
            return data[: end + 1], data[end + 1 :]


def _plain_header(line: bytes, delimiter: str) -> list[str] | None:
    """The column names of a header line that the csv module reads as its cells split at ``delimiter``
    (no quote, no carriage return, no byte order mark, valid UTF-8), else None."""
    if not line or b'"' in line or b"\r" in line or b"\x00" in line or line.startswith(b"\xef\xbb\xbf"):
        return None
    try:
        return line.decode("utf-8").split(delimiter)
    except UnicodeDecodeError:
        return None


def _plain_csv(data: bytes, names: list[str], delimiter: str) -> Any:
    """Lines of CSV text as an Arrow table of strings (null: an empty cell), when the csv module would read
    them alike: one row per line (no quote, no carriage return, no blank line, no NUL), each with a cell per
    name, all valid UTF-8; else None."""
    if b'"' in data or b"\r" in data or b"\n\n" in data or b"\x00" in data or data.startswith(b"\n"):
        return None
    if not data.isascii():
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            return None
    import pyarrow as pa
    import pyarrow.csv as pcsv

    try:
        table = pcsv.read_csv(
            io.BytesIO(data),
            read_options=pcsv.ReadOptions(
                use_threads=False, column_names=names, block_size=max(len(data) + 1, 1 << 20)
            ),
            parse_options=pcsv.ParseOptions(delimiter=delimiter, double_quote=False, quote_char=False),
            convert_options=pcsv.ConvertOptions(
                column_types={n: pa.string() for n in names},
                null_values=[""],
                strings_can_be_null=True,
                check_utf8=True,
            ),
        )
    except Exception:  # a row of another width, invalid UTF-8...: the csv module says what it is
        return None
    lines = data.count(b"\n") + (not data.endswith(b"\n"))
    return table if table.num_rows == lines and table.num_columns == len(names) else None


class _Joined(io.RawIOBase):
    """Bytes already read, then the rest of a stream (a raw stream: see :func:`_joined`)."""

    def __init__(self, first: bytes, stream: IO[bytes]) -> None:
        self._first, self._stream = memoryview(first), stream

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if self._first:
            size = min(len(buffer), len(self._first))
            buffer[:size] = self._first[:size]
            self._first = self._first[size:]
            return size
        data = self._stream.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)


def _joined(first: bytes, stream: IO[bytes]) -> IO[bytes]:
    return io.BufferedReader(_Joined(first, stream))


def _csv_parsed(
    stream: IO[bytes],
    name: str,
    delimiter: str,
    fieldnames: list[str] | None = None,
    first_offset: int = 0,
    first_line: int = 1,
) -> Iterator[RowBlock]:
    """:func:`csv_blocks` read by the csv module's parser (the one of :func:`csv_messages`)."""
    text = io.TextIOWrapper(
        stream, encoding="utf-8-sig" if fieldnames is None else "utf-8", errors="surrogateescape", newline=""
    )
    reader = csv.reader(text, delimiter=delimiter)
    lines_before = 0 if fieldnames is None else first_line - 1
    try:
        if fieldnames is None:
            previous = csv.field_size_limit(_CSV_FIELD_LIMIT)
            try:
                fieldnames = next(reader, None)  # as csv.DictReader reads its header
            finally:
                csv.field_size_limit(previous)
            if fieldnames is None:
                return
        names = list(fieldnames)
        width = len(names)
        plain = _plain_names(names) and not any(_has_surrogate(key) for key in names)
        offset = first_offset
        done = False
        while not done:
            rows: list[list] = []
            lines: list[int] = []
            messages: dict[int, Message] = {}
            previous = csv.field_size_limit(_CSV_FIELD_LIMIT)
            try:
                for row in reader:
                    if not row:  # a blank line: csv.DictReader skips it
                        continue
                    line = lines_before + reader.line_num
                    joined = "".join(row)
                    if plain and len(row) == width and (joined.isascii() or not _has_surrogate(joined)):
                        rows.append([None if v == "" else v for v in row])
                    else:
                        full: dict[str | None, Any] = dict(zip(names, row))
                        if len(row) > width:
                            full[None] = row[width:]
                        else:
                            full.update(dict.fromkeys(names[len(row) :]))
                        messages[len(rows)] = _csv_message(full, name, offset + len(rows), line, delimiter)
                        rows.append([None] * width)
                    lines.append(line)
                    if len(rows) >= _CSV_BLOCK_ROWS:
                        break
                else:
                    done = True
            except Exception:
                if rows:
                    yield _csv_block(offset, names, rows, lines, messages)
                raise
            finally:
                csv.field_size_limit(previous)
            if rows:
                yield _csv_block(offset, names, rows, lines, messages)
                offset += len(rows)
    finally:
        text.detach()


def _csv_block(
    offset: int, names: list[str], rows: list[list], lines: list[int], messages: dict[int, Message]
) -> RowBlock:
    columns = [list(column) for column in zip(*rows)] if names else []
    return RowBlock(offset, lines[0], [], lines, names, columns, len(rows), messages)


def _plain_names(names: list[str]) -> bool:
    """True when a row of these columns is a message of its columns as they are: no name repeats, and the
    row cannot be a saved Kafka record (:func:`cdckit.io.records.unwrap_record`)."""
    return len(set(names)) == len(names) and not may_be_record(names)
