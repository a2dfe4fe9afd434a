"""One file's (or payload's) messages, through the reader of its container; damage ends them with one entry.

A damaged container (a truncated gzip, a broken CSV or Parquet file, an I/O
error) never raises: every message before the damage is kept, then one
quarantine entry says where the damage is and why.

>>> import os, tempfile
>>> path = os.path.join(tempfile.mkdtemp(), "x.jsonl")
>>> _ = open(path, "wb").write(b'{"a": 1}\\n{"a": 2}\\n')
>>> [m.value for m in file_messages(path)]
[{'a': 1}, {'a': 2}]

``stream_messages_guarded`` is shared by the modules of :mod:`cdckit.io` (not public).
"""

from __future__ import annotations

from typing import IO, Any
from collections.abc import Generator, Iterator

from .console import console_message
from .json_lines import jsonl_blocks, jsonl_messages
from .json_values import json_value_messages, json_value_pieces
from .message import LineBlock, Message, error_message, unreadable_message
from .ranges import open_range
from .sniff import binary_message, container_by_name, csv_delimiter, sniff_container
from .streams import HEAD, damage_of, open_file
from .table_ranges import csv_range_blocks, parquet_range_blocks
from .tables import RowBlock, csv_blocks, csv_messages, parquet_blocks, parquet_messages
from .text import head_encoding, text_messages

__all__ = ["file_messages", "file_pieces"]


def file_messages(path: str, container: str | None = None, key_separator: str | None = None
                  ) -> Generator[Message, None, None]:
    """The messages of one file (see :func:`cdckit.io.iter_sources`); ``container`` forces one;
    ``key_separator``: that of ``kafka-console-consumer`` lines (:mod:`cdckit.io.console`)."""
    try:
        stream = open_file(path)
    except OSError as err:
        yield unreadable_message(path, 0, err)
        return
    yield from stream_messages_guarded(stream, path, container or container_by_name(path), csv_delimiter(path),
                                       key_separator)


def stream_messages_guarded(stream: IO[bytes], name: str, container: str | None,
                            delimiter: str = ",", key_separator: str | None = None) -> Generator[Message, None, None]:
    """The messages of a stream; a damaged container ends them with one error message.

    Every message before the damage is kept. The error names where the
    damage is (messages and bytes read) and why; nothing is raised. A line
    ``kafka-console-consumer`` printed is unwrapped to the record it shows
    (:func:`cdckit.io.console.console_message`).
    """
    count = 0
    try:
        with stream:
            try:
                for msg in _stream_messages(stream, name, container, delimiter, key_separator):
                    yield console_message(msg, key_separator)
                    count += 1
            except Exception as err:  # csv.Error, pyarrow's errors on a damaged Parquet file, I/O errors...
                yield _damage(name, count, container, f"{type(err).__name__}: {err}", stream)
                return
            damage = damage_of(stream)
            if damage is not None:
                yield _damage(name, count, container, damage, stream)
    except OSError as err:  # closing failed: the messages are out already
        yield _damage(name, count, container, f"{type(err).__name__}: {err}", None)


def _stream_messages(stream: IO[bytes], name: str, container: str | None, delimiter: str,
                     key_separator: str | None) -> Iterator[Message]:
    if container == "parquet":
        yield from parquet_messages(stream, name)
        return
    if container == "csv":
        yield from csv_messages(stream, name, delimiter)
        return
    head = stream.read(HEAD)
    stream.seek(0)
    if container is None:
        container = sniff_container(head, key_separator)
    if container == "binary":
        yield binary_message(head, name)
        return
    if container == "jsonl":
        yield from jsonl_messages(stream, name)
    elif container == "json":
        yield from json_value_messages(stream, name)
    else:
        yield from text_messages(stream, name, head_encoding(head))


def file_pieces(path: str, container: str, start: int = 0, end: int = -1, first_offset: int = 0,
                first_line: int = 1, encoding: str | None = None,
                key_separator: str | None = None, source: str | None = None) -> Iterator[LineBlock | Message]:
    """A file (or bytes ``start`` to ``end`` of it) as blocks of messages or, for other containers, messages.

    A range is one :func:`cdckit.io.line_ranges` gives (JSON Lines, text), one of
    :func:`cdckit.io.array_ranges.array_ranges` (a JSON array's elements), or one of
    :mod:`cdckit.io.table_ranges` (Parquet: rows ``start`` to ``end``; CSV: lines after the header).
    ``source`` names the messages when it is not ``path`` (a gzip file's decompressed copy is read).

    JSON Lines, and runs of whole objects in a JSON array or in JSON values
    one after another, come as :class:`LineBlock` (for batch decoders); text
    lines and every other container as :class:`Message`. CSV and Parquet rows come as
    :class:`~cdckit.io.tables.RowBlock` (a :class:`LineBlock` of columns, no lines). A file that cannot be read or
    is damaged ends with one error message (see :func:`cdckit.io.iter_sources`). A message read as text
    that ``kafka-console-consumer`` printed is unwrapped (``key_separator``: its separator); a block's lines
    are left as they are, for :class:`~cdckit.decoding.MessageDecoder` to unwrap.
    """
    name = path if source is None else source
    if end >= 0 and container in ("parquet", "csv"):
        yield from _table_range(path, name, container, start, end, first_offset, first_line)
        return
    if container in ("parquet", "csv"):
        yield from _table_file(path, container, key_separator)
        return
    if container not in ("jsonl", "text", "json") or (end < 0 and container == "text" and encoding is None):
        yield from file_messages(path, container, key_separator)
        return
    try:
        stream = open_range(path, start, end) if end >= 0 else open_file(path)
    except OSError as err:
        yield unreadable_message(name, first_offset, err)
        return
    offset = first_offset
    try:
        with stream:
            if container == "text":
                for msg in text_messages(stream, name, encoding or "utf-8", first_offset, first_line):
                    yield console_message(msg, key_separator)
                    offset += 1
            else:
                pieces = jsonl_blocks(stream, first_offset, first_line) if container == "jsonl" \
                    else json_value_pieces(stream, name, first_offset, first_line, in_array=end >= 0)
                for piece in pieces:
                    yield piece
                    offset += len(piece.lines) if isinstance(piece, LineBlock) else 1
            damage = damage_of(stream) and f"gzip: {damage_of(stream)}"
    except Exception as err:  # an I/O error while reading
        damage = f"{type(err).__name__}: {err}"
    if damage is not None:
        yield _damage(name, offset, container, damage, None, kept=offset - first_offset)


def _table_range(path: str, name: str, container: str, start: int, end: int, first_offset: int,
                 first_line: int) -> Iterator[RowBlock | Message]:
    """The rows of a range of a Parquet or CSV file; damage ends them with one entry, as for the whole file."""
    offset = first_offset
    try:
        pieces = parquet_range_blocks(path, name, start, end) if container == "parquet" \
            else csv_range_blocks(path, name, start, end, first_offset, first_line, csv_delimiter(name))
        for piece in pieces:
            yield piece
            offset += piece.count if isinstance(piece, RowBlock) else 1
    except Exception as err:  # csv.Error, pyarrow's errors on a damaged Parquet file, I/O errors...
        yield _damage(name, offset, container, f"{type(err).__name__}: {err}", None)


def _table_file(path: str, container: str, key_separator: str | None) -> Iterator[RowBlock | Message]:
    """The rows of a whole Parquet or CSV file as :func:`file_messages` gives them, in blocks; damage ends
    them with one entry (see :func:`stream_messages_guarded`, whose rule this follows)."""
    try:
        stream = open_file(path)
    except OSError as err:
        yield unreadable_message(path, 0, err)
        return
    count = 0
    try:
        with stream:
            try:
                if container == "parquet":
                    import pyarrow.parquet as pq

                    pieces = parquet_blocks(pq.ParquetFile(stream).iter_batches(batch_size=65_536), path)
                else:
                    pieces = csv_blocks(stream, path, csv_delimiter(path))
                for piece in pieces:
                    if isinstance(piece, RowBlock):
                        piece.messages = {index: console_message(msg, key_separator)
                                          for index, msg in piece.messages.items()}
                        yield piece
                        count += piece.count
                    else:
                        yield console_message(piece, key_separator)
                        count += 1
            except Exception as err:  # csv.Error, pyarrow's errors on a damaged Parquet file, I/O errors...
                yield _damage(path, count, container, f"{type(err).__name__}: {err}", stream)
                return
            damage = damage_of(stream)
            if damage is not None:
                yield _damage(path, count, container, damage, stream)
    except OSError as err:  # closing failed: the messages are out already
        yield _damage(path, count, container, f"{type(err).__name__}: {err}", None)


def _damage(name: str, offset: int, container: str | None, why: str, stream: IO[bytes] | None,
            kept: int | None = None) -> Message:
    """The one quarantine entry of a damaged container, at ``offset`` (the next message's)."""
    kind = f"{container} file" if container in ("csv", "parquet") else "file"
    if damage_of(stream) is not None or why.startswith("gzip: "):
        kind = "gzip file"
        why = damage_of(stream) or why.removeprefix("gzip: ")
    else:
        why += _near(stream)
    kept = offset if kept is None else kept
    return error_message(name, offset, f"damaged {kind}: {why}; the {kept} message(s) before the damage are kept",
                         "damaged_container", raw=f"<damaged {kind}: the rest of {name} is unreadable>")


def _near(stream: Any) -> str:
    """`` (near byte N)``: how far into the file reading had got, when the stream can say."""
    try:
        return f" (near byte {stream.tell():,})" if stream is not None and not stream.closed else ""
    except (OSError, ValueError):
        return ""
