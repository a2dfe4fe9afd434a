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

import contextlib
from collections.abc import Generator, Iterator
from typing import IO, Any

from .avro_files import avro_messages, keys_file
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


def file_messages(
    path: str, container: str | None = None, key_separator: str | None = None
) -> Generator[Message, None, None]:
    """The messages of one file (see :func:`cdckit.io.iter_sources`); ``container`` forces one;
    ``key_separator``: that of ``kafka-console-consumer`` lines (:mod:`cdckit.io.console`)."""
    try:
        stream = open_file(path)
    except OSError as err:
        yield unreadable_message(path, 0, err)
        return
    yield from stream_messages_guarded(
        stream, path, container or container_by_name(path), csv_delimiter(path), key_separator
    )


def stream_messages_guarded(
    stream: IO[bytes], name: str, container: str | None, delimiter: str = ",", key_separator: str | None = None
) -> Generator[Message, None, None]:
    """The messages of a stream; a damaged container ends them with one error message.

    Every message before the damage is kept. The error names where the
    damage is (messages and bytes read) and why; nothing is raised. A line
    ``kafka-console-consumer`` printed is unwrapped to the record it shows
    (:func:`cdckit.io.console.console_message`).
    """
    messages = (
        console_message(msg, key_separator)
        for msg in _stream_messages(stream, name, container, delimiter, key_separator)
    )
    yield from guarded(messages, name, container, stream)


def guarded(
    pieces: Iterator[Any],
    name: str,
    container: str | None,
    stream: IO[bytes] | None = None,
    first_offset: int = 0,
    *,
    near: bool = True,
) -> Iterator[Any]:
    """``pieces`` (messages or blocks of them) passed on; damage ends them with one quarantine entry.

    Damage is an exception while reading (``csv.Error``, pyarrow's errors on a
    damaged Parquet file, I/O errors...), a gzip ``stream`` that ended early,
    or a failure to close ``stream`` (the pieces are out already). Every
    piece before the damage is kept; the entry sits at the next message's
    offset (from ``first_offset``, that of the first piece) and counts the
    messages of the file before it. ``near``: name the byte reading had got
    to in ``stream`` when reading failed. ``stream`` (closed here) may be None
    where ``pieces`` read on their own.

    >>> import io
    >>> def pieces():
    ...     yield from stream_messages_guarded(io.BytesIO(b'{"a": 1}\\n{"a": 2}\\n'), "x.jsonl", "jsonl")
    ...     raise OSError("the disk went away")
    >>> [m.value or m.error for m in guarded(pieces(), "x.jsonl", "jsonl")]
    [{'a': 1}, {'a': 2}, 'damaged file: OSError: the disk went away; the 2 message(s) before the damage are kept']
    """
    count, piece = 0, None
    try:
        with stream if stream is not None else contextlib.nullcontext():
            try:
                for piece in pieces:
                    yield piece
                    count += _messages_in(piece)
            except Exception as err:  # csv.Error, pyarrow's errors on a damaged Parquet file, I/O errors...
                yield _damage(
                    name, first_offset + count, container, f"{type(err).__name__}: {err}", stream if near else None
                )
                return
            damage = damage_of(stream)
            if damage is not None and not _is_damage(piece):  # one entry: the reader may have said so already
                yield _damage(name, first_offset + count, container, damage, stream)
    except OSError as err:  # closing failed: the messages are out already
        yield _damage(name, first_offset + count, container, f"{type(err).__name__}: {err}", None)


def _is_damage(piece: Any) -> bool:
    return isinstance(piece, Message) and piece.code == "damaged_container"


def _messages_in(piece: Any) -> int:
    """How many messages a piece holds (a block of rows, a block of lines, a message)."""
    if isinstance(piece, RowBlock):
        return piece.count
    return len(piece.lines) if isinstance(piece, LineBlock) else 1


def _stream_messages(
    stream: IO[bytes], name: str, container: str | None, delimiter: str, key_separator: str | None
) -> Iterator[Message]:
    head = b""
    if container is None:  # sniffed first: a Parquet file under another name is still Parquet
        head = stream.read(HEAD)
        stream.seek(0)
        container = sniff_container(head, key_separator)
    if container == "parquet":
        yield from parquet_messages(stream, name)
        return
    if container == "csv":
        yield from csv_messages(stream, name, delimiter)
        return
    if container == "avro":
        yield from _avro_file(stream, name)
        return
    if not head:
        head = stream.read(HEAD)
        stream.seek(0)
    if container == "binary":
        yield binary_message(head, name)
        return
    if container == "jsonl":
        yield from jsonl_messages(stream, name)
    elif container == "json":
        yield from json_value_messages(stream, name)
    else:
        yield from text_messages(stream, name, head_encoding(head))


def _avro_file(stream: IO[bytes], name: str) -> Iterator[Message]:
    """An Avro container file's records, with the keys of a sink's keys file beside it."""
    keys_path = keys_file(name)
    try:
        keys = open_file(keys_path) if keys_path is not None else None
    except OSError:
        keys = None
    yield from avro_messages(stream, name, keys)


def file_pieces(
    path: str,
    container: str,
    start: int = 0,
    end: int = -1,
    first_offset: int = 0,
    first_line: int = 1,
    encoding: str | None = None,
    key_separator: str | None = None,
    source: str | None = None,
) -> Iterator[LineBlock | Message]:
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
    are left as they are, for :class:`~cdckit.reading.decoding.MessageDecoder` to unwrap.
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

    def pieces() -> Iterator[LineBlock | Message]:
        if container == "text":
            for msg in text_messages(stream, name, encoding or "utf-8", first_offset, first_line):
                yield console_message(msg, key_separator)
        elif container == "jsonl":
            yield from jsonl_blocks(stream, first_offset, first_line)
        else:
            yield from json_value_pieces(stream, name, first_offset, first_line, in_array=end >= 0)

    yield from guarded(pieces(), name, container, stream, first_offset, near=False)


def _table_range(
    path: str, name: str, container: str, start: int, end: int, first_offset: int, first_line: int
) -> Iterator[RowBlock | Message]:
    """The rows of a range of a Parquet or CSV file; damage ends them with one entry, as for the whole file."""

    def pieces() -> Iterator[RowBlock | Message]:
        if container == "parquet":
            yield from parquet_range_blocks(path, name, start, end)
        else:
            yield from csv_range_blocks(path, name, start, end, first_offset, first_line, csv_delimiter(name))

    yield from guarded(pieces(), name, container, None, first_offset)


def _table_file(path: str, container: str, key_separator: str | None) -> Iterator[RowBlock | Message]:
    """The rows of a whole Parquet or CSV file as :func:`file_messages` gives them, in blocks; damage ends
    them with one entry (see :func:`stream_messages_guarded`, whose rule this follows)."""
    try:
        stream = open_file(path)
    except OSError as err:
        yield unreadable_message(path, 0, err)
        return

    def pieces() -> Iterator[RowBlock | Message]:
        if container == "parquet":
            import pyarrow.parquet as pq

            found = parquet_blocks(pq.ParquetFile(stream).iter_batches(batch_size=65_536), path)
        else:
            found = csv_blocks(stream, path, csv_delimiter(path))
        for piece in found:
            if isinstance(piece, RowBlock):
                piece.messages = {index: console_message(msg, key_separator) for index, msg in piece.messages.items()}
                yield piece
            else:
                yield console_message(piece, key_separator)

    yield from guarded(pieces(), path, container, stream)


def _damage(name: str, offset: int, container: str | None, why: str, stream: IO[bytes] | None) -> Message:
    """The one quarantine entry of a damaged container, at ``offset`` (the next message's: the messages
    before it are kept)."""
    kind = f"{container} file" if container in ("csv", "parquet") else "file"
    if damage_of(stream) is not None:
        kind = "gzip file"
        why = damage_of(stream) or why
    else:
        why += _near(stream)
    return error_message(
        name,
        offset,
        f"damaged {kind}: {why}; the {offset} message(s) before the damage are kept",
        "damaged_container",
        raw=f"<damaged {kind}: the rest of {name} is unreadable>",
    )


def _near(stream: Any) -> str:
    """`` (near byte N)``: how far into the file reading had got, when the stream can say."""
    try:
        return f" (near byte {stream.tell():,})" if stream is not None and not stream.closed else ""
    except (OSError, ValueError):
        return ""
