r"""Ranges of the rows of a Parquet or CSV file, so workers can read it in pieces.

A Parquet file is cut by rows, counted from its metadata (a range reads only
the row groups it overlaps). A CSV file is cut at line ends, only when no
quoted cell holds a line end (or a NUL): else it is not cut. Each range
carries its first row's offset and line, so the pieces, read each on its own
(:func:`cdckit.io.file_pieces`), give the messages the whole file would.

>>> import tempfile, os
>>> path = os.path.join(tempfile.mkdtemp(), "x.csv")
>>> _ = open(path, "wb").write(b"id,name\n1,a\n\n2,b\n3,c\n")
>>> csv_ranges(path, 5)
[(8, 13, 0, 2), (13, 21, 1, 4)]
>>> [(m.offset, m.line, m.value["id"]) for m in csv_range_messages(path, path, 13, 21, 1, 4, ",")]
[(1, 4, '2'), (2, 5, '3')]
"""

from __future__ import annotations

import csv
import io
import os
import re
from collections.abc import Iterator
from typing import IO, Any

import numpy as np

from .message import Message
from .ranges import next_line_end, open_range
from .records import unwrap_record
from .sniff import csv_delimiter
from .streams import BLOCK
from .tables import RowBlock, csv_blocks, csv_messages, parquet_blocks, rows_of

__all__ = [
    "parquet_ranges",
    "parquet_range_messages",
    "parquet_range_blocks",
    "csv_ranges",
    "csv_range_messages",
    "csv_range_blocks",
]

_LINE_END = re.compile(rb"\r\n?|\n")


def parquet_ranges(path: str, pieces: int) -> list[tuple[int, int, int, None]]:
    """Cut a Parquet file's rows into ``pieces`` ranges of about as many rows: ``(start, end, first_offset,
    None)`` with ``start`` and ``end`` row numbers (a row's offset is its number). Raises what pyarrow raises
    when the file's metadata cannot be read.

    >>> import tempfile, os, pyarrow as pa, pyarrow.parquet as pq
    >>> path = os.path.join(tempfile.mkdtemp(), "x.parquet")
    >>> pq.write_table(pa.table({"a": list(range(10))}), path, row_group_size=4)
    >>> parquet_ranges(path, 3)
    [(0, 3, 0, None), (3, 6, 3, None), (6, 10, 6, None)]
    """
    import pyarrow.parquet as pq

    rows = pq.ParquetFile(path).metadata.num_rows
    pieces = max(1, min(pieces, rows))
    cuts = [rows * index // pieces for index in range(pieces + 1)]
    return [(start, end, start, None) for start, end in zip(cuts, cuts[1:])]


def parquet_range_messages(path: str, name: str, start: int, end: int) -> Iterator[Message]:
    """Rows ``start`` to ``end`` of a Parquet file, as :func:`cdckit.io.file_messages` gives them (named
    ``name``); only the row groups they lie in are read."""
    offset = start
    for batch in _parquet_range_batches(path, start, end):
        for row in rows_of(batch):
            yield unwrap_record(Message(row, name, offset))
            offset += 1


def parquet_range_blocks(path: str, name: str, start: int, end: int) -> Iterator[RowBlock | Message]:
    """:func:`parquet_range_messages` as :class:`~cdckit.io.tables.RowBlock` (see
    :func:`~cdckit.io.tables.parquet_blocks`)."""
    return parquet_blocks(_parquet_range_batches(path, start, end), name, start)


def _parquet_range_batches(path: str, start: int, end: int) -> Iterator[Any]:
    """The record batches of rows ``start`` to ``end`` of a Parquet file, in order (the first row is ``start``)."""
    import pyarrow.parquet as pq

    parquet = pq.ParquetFile(path)
    groups: list[int] = []
    first = at = 0
    for index in range(parquet.metadata.num_row_groups):
        count = parquet.metadata.row_group(index).num_rows
        if at + count > start and at < end:
            if not groups:
                first = at
            groups.append(index)
        at += count
    offset = first
    for batch in parquet.iter_batches(batch_size=65_536, row_groups=groups):
        if offset + batch.num_rows <= start:
            offset += batch.num_rows
            continue
        low = max(start - offset, 0)
        batch = batch.slice(low, min(end - offset, batch.num_rows) - low)
        offset += low
        if batch.num_rows:
            yield batch
        offset += batch.num_rows
        if offset >= end:
            return


def csv_ranges(path: str, bytes_per_range: int) -> list[tuple[int, int, int, int]] | None:
    r"""Cut a CSV file (plain, with a header line) into ranges of whole lines: ``(start, end, first_offset,
    first_line)``, the first starting after the header (the delimiter as the name says: a tab for ``.tsv``).
    None when the file cannot be cut safely: a quoted
    cell holds a line end, a NUL is in it, or its first line is empty.

    Lines are counted as the csv module counts them (``\r``, ``\n`` and ``\r\n`` end one), and an empty line
    is no row. The file is read in large blocks; only a file holding quotes is parsed (by the csv module) to
    check that no row spans lines.
    """
    with open(path, "rb") as stream:
        head = stream.read(BLOCK)
        found = _LINE_END.search(head)
        if found is None or found.end() == len(head) or not head[: found.start()].lstrip(b"\xef\xbb\xbf"):
            return None  # a header longer than a block, or an empty one
        quoted = _scan(stream, head)
        if quoted is None or (quoted and not _rows_on_own_lines(path, csv_delimiter(path))):
            return None
        size = os.fstat(stream.fileno()).st_size
        ranges = []
        start, offset, line = found.end(), 0, 2
        while start < size:
            stream.seek(start + max(bytes_per_range, 1) - 1)
            end = next_line_end(stream, size)
            rows, lines = _count_rows(stream, start, end)
            ranges.append((start, end, offset, line))
            start, offset, line = end, offset + rows, line + lines
    return ranges


def _scan(stream: IO[bytes], head: bytes) -> bool | None:
    """Whether the file holds a quote (None: it holds a NUL)."""
    quoted = False
    data = head
    while data:
        if b"\x00" in data:
            return None
        quoted = quoted or b'"' in data
        data = stream.read(BLOCK)
    return quoted


def _rows_on_own_lines(path: str, delimiter: str) -> bool:
    """True when no row of the CSV file spans lines (no quoted cell holds a line end), parsed in C."""
    with open(path, "rb") as stream:
        text = io.TextIOWrapper(stream, encoding="utf-8-sig", errors="surrogateescape", newline="")
        reader = csv.reader(text, delimiter=delimiter)
        rows = 0
        try:
            for rows, _ in enumerate(reader, start=1):
                if rows != reader.line_num:
                    return False
        except csv.Error:
            return False
        finally:
            text.detach()
        return True


def _count_rows(stream: IO[bytes], start: int, end: int) -> tuple[int, int]:
    """``(rows, lines)`` in bytes ``start`` to ``end`` (whole lines, ``start`` at a line's start): a line
    ends at ``\\r``, ``\\n`` or ``\\r\\n``; an empty line is no row."""
    stream.seek(start)
    left, tail = end - start, b""
    rows = lines = 0
    while left > 0 or tail:
        data = stream.read(min(BLOCK, left)) if left > 0 else b""
        left -= len(data)
        data = tail + data
        cut = data.rfind(b"\n") + 1 if left > 0 else len(data)
        whole, tail = data[:cut], data[cut:]
        ends = np.frombuffer(whole.replace(b"\r\n", b"\n").replace(b"\r", b"\n"), dtype=np.uint8) == 0x0A
        count = int(np.count_nonzero(ends))
        empty = int(np.count_nonzero(ends[1:] & ends[:-1])) + int(ends[:1].sum())
        last = 0 if not ends.size or ends[-1] else 1  # the file's last line, without a line end
        lines += count + last
        rows += count + last - empty
        if left <= 0 and not tail:
            break
    return rows, lines


def csv_header(path: str, delimiter: str) -> list[str]:
    """The column names of a CSV file (its first row), read as :func:`cdckit.io.file_messages` reads them."""
    with open(path, "rb") as stream:
        text = io.TextIOWrapper(stream, encoding="utf-8-sig", errors="surrogateescape", newline="")
        try:
            return next(csv.reader(text, delimiter=delimiter), [])
        finally:
            text.detach()


def csv_range_messages(
    path: str, name: str, start: int, end: int, first_offset: int, first_line: int, delimiter: str
) -> Iterator[Message]:
    """The rows in bytes ``start`` to ``end`` of a CSV file (a :func:`csv_ranges` entry), as
    :func:`cdckit.io.file_messages` gives them (named ``name``)."""
    header = csv_header(path, delimiter)
    with open_range(path, start, end) as stream:
        yield from csv_messages(stream, name, delimiter, header, first_offset, first_line)


def csv_range_blocks(
    path: str, name: str, start: int, end: int, first_offset: int, first_line: int, delimiter: str
) -> Iterator[RowBlock]:
    """:func:`csv_range_messages` as :class:`~cdckit.io.tables.RowBlock` (see :func:`~cdckit.io.tables.csv_blocks`)."""
    header = csv_header(path, delimiter)
    with open_range(path, start, end) as stream:
        yield from csv_blocks(stream, name, delimiter, header, first_offset, first_line)
