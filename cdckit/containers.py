"""Turn a source (paths, globs, directories, payloads, iterables) into messages.

A *container* is how messages are laid out in a file: JSON Lines, a JSON
array, concatenated (pretty-printed) JSON values, delimited text lines
(UTF-8 or Latin-1), CSV or Parquet rows. ``.gz`` files are read through gzip.
Everything is streamed: a file is read in blocks, never whole.

Kafka records saved with their envelope (``kcat -J`` lines with ``key`` and
``payload``, or rows with ``key``/``value``/``topic``/``partition``/``offset``
as Spark writes them) are unwrapped here: the message value is the record
value, and its Kafka key, partition and offset are kept.

Nothing here knows any dialect's field names.

>>> from cdckit.containers import iter_sources
>>> [(m.offset, m.value) for name, msgs in iter_sources('{"a": 1}\\n{"a": 2}\\n') for m in msgs]
[(0, {'a': 1}), (1, {'a': 2})]
"""

from __future__ import annotations

import csv
import glob
import gzip
import io
import os
import re
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Annotated, Any, Iterable, Iterator

import msgspec
import numpy as np

from . import values

__all__ = [
    "Message",
    "iter_sources",
    "expand_paths",
    "file_messages",
    "is_gzip",
    "sniff_container",
    "file_container",
    "open_file",
    "file_pieces",
    "jsonl_blocks",
    "LineBlock",
    "open_range",
    "line_ranges",
    "text_messages",
    "text_encoding",
    "kafka_key",
    "record_message",
    "parse_line",
    "write_messages",
    "CONTAINERS",
]

CONTAINERS = ("jsonl", "json", "text", "csv", "parquet")

_BLOCK = 1 << 20
_HEAD = 1 << 16
_GZIP_MAGIC = b"\x1f\x8b"
#: Bytes that text rarely holds (controls other than tab, newline, form feed, carriage return, escape).
_CONTROL = bytes(c for c in range(32) if c not in (9, 10, 12, 13, 27)) + b"\x7f"
#: The largest CSV cell read (the csv module's default, 131,072 characters, is too small for large images).
_CSV_FIELD_LIMIT = 2**31 - 1
#: Characters of a damaged or binary file's bytes kept as the quarantine entry's raw text.
_RAW_KEPT = 1024


@dataclass(slots=True)
class Message:
    """One message of a source, ready for a dialect to decode.

    ``value`` is the parsed JSON value, a text line (str) or a row (dict).
    ``error`` is set instead when the container could not read the message
    (bad JSON, invalid UTF-8, a damaged file); such a message goes straight
    to quarantine with ``code`` (one of :data:`cdckit.errors.REASON_CODES`).
    """

    value: Any
    source: str
    offset: int
    raw: bytes | str | None = None
    key: Any = None
    partition: int | None = None
    line: int | None = None
    error: str | None = None
    code: str | None = None

    def raw_text(self) -> str:
        """The message as text, for quarantine and error messages."""
        if isinstance(self.raw, (bytes, bytearray)):
            return bytes(self.raw).decode("utf-8", errors="backslashreplace")
        if isinstance(self.raw, str):
            return self.raw
        try:
            return values.dumps(self.value)
        except Exception:  # not JSON (a set, a lone surrogate) or nested too deep for the encoder
            return _repr(self.value)


def _error(name: str, offset: int, reason: str, code: str, raw: bytes | str = b"", line: int | None = None) -> Message:
    """A message the container could not read: quarantined with ``reason`` and ``code``."""
    return Message(None, name, offset, raw=raw, line=line, error=reason, code=code)


# ---------------------------------------------------------------- sources


def iter_sources(source: Any, container: str | None = None) -> Iterator[tuple[str, Iterator[Message]]]:
    """Yield ``(source name, messages)`` for each file or payload in ``source``.

    ``source`` may be a path (file, directory or glob), a list of
    ``pathlib.Path`` objects (read one after another), a ``str``/``bytes``
    payload, or an iterable of messages (``str``, ``bytes``, ``dict`` or Kafka
    record objects with ``value``/``key``/``offset``/``partition``).
    ``container`` forces one of :data:`CONTAINERS` instead of sniffing.
    """
    if container is not None and container not in CONTAINERS:
        raise ValueError(f"unknown container {container!r}; expected one of {', '.join(CONTAINERS)}")
    if isinstance(source, os.PathLike):
        for path in _expand_paths(os.fspath(source)):
            yield path, _file_messages(path, container)
    elif isinstance(source, (list, tuple)) and source and all(isinstance(s, os.PathLike) for s in source):
        for spec in source:  # several paths (pathlib.Path objects): one capture
            for path in _expand_paths(os.fspath(spec)):
                yield path, _file_messages(path, container)
    elif isinstance(source, str):
        if _looks_like_payload(source):
            data = source.encode("utf-8", "surrogatepass")  # a lone surrogate becomes invalid UTF-8, quarantined
            yield "<string>", _guarded(_payload_stream(data), "<string>", container)
        else:
            for path in _expand_paths(source):
                yield path, _file_messages(path, container)
    elif isinstance(source, (bytes, bytearray)):
        yield "<bytes>", _guarded(_payload_stream(bytes(source)), "<bytes>", container)
    elif isinstance(source, dict):
        yield "<iterable>", _iterable_messages([source])
    else:
        try:
            items = iter(source)
        except TypeError:
            raise TypeError(
                f"cannot read a {type(source).__name__}: pass a path, a str/bytes payload or an iterable of messages"
            ) from None
        yield "<iterable>", _iterable_messages(items)


def _looks_like_payload(text: str) -> bool:
    if "\n" in text or "\xfe" in text:
        return True
    stripped = text.lstrip("\ufeff \t\r")
    return stripped[:1] in ("{", "[", '"')


def expand_paths(spec: str) -> list[str]:
    """The files a path names: the file itself, a directory's files (recursively, hidden ones left out), or a glob's."""
    return _expand_paths(spec)


def _expand_paths(spec: str) -> list[str]:
    if os.path.isdir(spec):
        found = [
            str(p)
            for p in sorted(Path(spec).rglob("*"))
            if p.is_file() and not any(part.startswith(".") for part in p.relative_to(spec).parts)
        ]
        if not found:
            raise FileNotFoundError(f"no files in directory {spec}")
        return found
    if os.path.exists(spec):
        return [spec]
    if glob.has_magic(spec):
        found = sorted(p for p in glob.glob(spec, recursive=True) if os.path.isfile(p))
        if not found:
            raise FileNotFoundError(f"no files match {spec}")
        return found
    raise FileNotFoundError(f"no such file or directory: {spec}")


def _file_messages(path: str, container: str | None) -> Iterator[Message]:
    try:
        stream = open_file(path)
    except OSError as err:
        yield _error(path, 0, f"cannot read {path}: {err.strerror or err}", "unreadable_file")
        return
    tsv = path.lower().removesuffix(".gz").endswith(".tsv")
    yield from _guarded(stream, path, container or _container_by_name(path), tsv)


def _guarded(stream: IO[bytes], name: str, container: str | None, tsv: bool = False) -> Iterator[Message]:
    """The messages of a stream; a damaged container ends them with one error message.

    Every message before the damage is kept. The error names where the
    damage is (messages and bytes read) and why; nothing is raised.
    """
    count = 0
    try:
        with stream:
            try:
                for msg in _stream_messages(stream, name, container, tsv=tsv):
                    yield msg
                    count += 1
            except Exception as err:  # csv.Error, pyarrow's errors on a damaged Parquet file, I/O errors...
                yield _damage(name, count, container, f"{type(err).__name__}: {err}", stream)
                return
            damage = damage_of(stream)
            if damage is not None:
                yield _damage(name, count, container, damage, stream)
    except OSError as err:  # closing failed: the messages are out already
        yield _damage(name, count, container, f"{type(err).__name__}: {err}", None)


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
    return _error(name, offset, f"damaged {kind}: {why}; the {kept} message(s) before the damage are kept",
                  "damaged_container", raw=f"<damaged {kind}: the rest of {name} is unreadable>")


def _near(stream: Any) -> str:
    """`` (near byte N)``: how far into the file reading had got, when the stream can say."""
    try:
        return f" (near byte {stream.tell():,})" if stream is not None and not stream.closed else ""
    except (OSError, ValueError):
        return ""


def damage_of(stream: Any) -> str | None:
    """Where and why a gzip stream opened by :func:`open_file` ended early (None: it ended well)."""
    return getattr(getattr(stream, "raw", None), "damage", None)


class _GuardedGzip(io.RawIOBase):
    """The content of a gzip file that ends, instead of raising, where the file is damaged.

    A truncated or corrupt gzip gives every byte before the damage; then the
    stream ends and ``damage`` says where (bytes of content given) and why.
    """

    def __init__(self, fileobj: IO[bytes]) -> None:
        self._file = fileobj
        self._gzip = gzip.GzipFile(fileobj=fileobj, mode="rb")
        self.damage: str | None = None
        self.position = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self.position

    def seek(self, offset: int, whence: int = 0) -> int:
        if whence != 0 or offset != 0:
            raise io.UnsupportedOperation("a gzip stream rewinds only to its start")
        self._file.seek(0)  # a fresh reader: one that failed may not read again after a rewind
        self._gzip = gzip.GzipFile(fileobj=self._file, mode="rb")
        self.position, self.damage = 0, None
        return 0

    def readinto(self, buffer: Any) -> int:
        if self.damage is not None:
            return 0
        try:
            data = self._gzip.read1(len(buffer))
        except (EOFError, OSError, zlib.error) as err:  # truncated, bad CRC or length, corrupt deflate data
            self.damage = f"{err} (after {self.position:,} bytes of content)"
            return 0
        count = len(data)
        buffer[:count] = data
        self.position += count
        return count

    def close(self) -> None:
        try:
            self._gzip.close()
        finally:
            self._file.close()
            super().close()


def _payload_stream(data: bytes) -> IO[bytes]:
    if data[:2] == _GZIP_MAGIC:
        return io.BufferedReader(_GuardedGzip(io.BytesIO(data)), buffer_size=_BLOCK)
    return io.BytesIO(data)


def is_gzip(path: str) -> bool:
    """True when the file starts with gzip's magic bytes (False when it cannot be read)."""
    try:
        with open(path, "rb") as probe:
            return probe.read(2) == _GZIP_MAGIC
    except OSError:
        return False


def file_messages(path: str, container: str | None = None) -> Iterator[Message]:
    """The messages of one file (see :func:`iter_sources`)."""
    return _file_messages(path, container)


def open_file(path: str) -> IO[bytes]:
    """A file opened for reading bytes, through gzip when it is gzip (by its magic bytes).

    A damaged gzip file ends early instead of raising; :func:`damage_of`
    says where and why. Raises ``OSError`` when the file cannot be opened.
    """
    raw = open(path, "rb")
    if raw.read(2) == _GZIP_MAGIC:
        raw.seek(0)
        return io.BufferedReader(_GuardedGzip(raw), buffer_size=_BLOCK)
    raw.seek(0)
    return raw


def file_pieces(path: str, container: str, start: int = 0, end: int = -1, first_offset: int = 0,
                first_line: int = 1, encoding: str | None = None) -> Iterator["LineBlock | Message"]:
    """A file (or bytes ``start`` to ``end`` of it) as blocks of messages or, for other containers, messages.

    JSON Lines, and runs of whole objects in a JSON array or in JSON values
    one after another, come as :class:`LineBlock` (for batch decoders); text
    lines and every other container as :class:`Message`. A file that cannot be read or
    is damaged ends with one error message (see :func:`iter_sources`).
    """
    if container not in ("jsonl", "text", "json") or (end < 0 and container == "text" and encoding is None) \
            or (container == "json" and end >= 0):
        yield from _file_messages(path, container)
        return
    try:
        stream = open_range(path, start, end) if end >= 0 else open_file(path)
    except OSError as err:
        yield _error(path, first_offset, f"cannot read {path}: {err.strerror or err}", "unreadable_file")
        return
    offset = first_offset
    try:
        with stream:
            if container == "text":
                for msg in _text_messages(stream, path, encoding or "utf-8", first_offset, first_line):
                    yield msg
                    offset += 1
            else:
                pieces = jsonl_blocks(stream, first_offset, first_line) if container == "jsonl" \
                    else _json_value_pieces(stream, path)
                for piece in pieces:
                    yield piece
                    offset += len(piece.lines) if isinstance(piece, LineBlock) else 1
            damage = damage_of(stream) and f"gzip: {damage_of(stream)}"
    except Exception as err:  # an I/O error while reading
        damage = f"{type(err).__name__}: {err}"
    if damage is not None:
        yield _damage(path, offset, container, damage, None, kept=offset - first_offset)


def _container_by_name(path: str) -> str | None:
    plain = path.lower().removesuffix(".gz")
    if plain.endswith(".parquet"):
        return "parquet"
    if plain.endswith((".csv", ".tsv")):
        return "csv"
    return None


def file_container(path: str, container: str | None = None) -> str:
    """The container of a file: forced, by its name (CSV, Parquet), or sniffed from its first bytes."""
    if container is not None:
        return container
    by_name = _container_by_name(path)
    if by_name is not None:
        return by_name
    try:
        with open_file(path) as stream:
            return sniff_container(stream.read(_HEAD))
    except OSError:
        return "jsonl"  # unreadable: reading it says so, as one quarantined entry


@dataclass(slots=True)
class LineBlock:
    """Consecutive messages of a JSON Lines file, for decoders that take many raw lines at once.

    ``lines`` are the raw messages (blank lines left out, trailing CR kept);
    message ``i`` has offset ``first_offset + i`` and sits on line
    ``line_numbers[i]`` (or ``first_line + i`` when ``line_numbers`` is None,
    that is when the block had no blank line).
    """

    first_offset: int
    first_line: int
    lines: list[bytes]
    line_numbers: list[int] | None = None

    def line_of(self, index: int) -> int:
        return self.first_line + index if self.line_numbers is None else self.line_numbers[index]


def jsonl_blocks(
    stream: IO[bytes], first_offset: int = 0, first_line: int = 1, block_size: int = 1 << 20
) -> Iterator[LineBlock]:
    """The messages of a JSON Lines stream in blocks of about ``block_size`` bytes.

    The same offsets and line numbers as the messages :func:`iter_sources`
    gives (counting from ``first_offset`` and ``first_line`` when the stream
    is a part of a file), read with C-speed splitting instead of line by line.
    """
    offset = first_offset
    line = first_line
    tail = b""
    first = first_line == 1
    while True:
        data = stream.read(block_size)
        if first:
            first = False
            data = _without_bom(data)
        if not data:
            if tail.strip():
                yield LineBlock(offset, line, [tail])
            return
        data = tail + data
        cut = data.rfind(b"\n")
        if cut < 0:
            tail = data
            continue
        tail = data[cut + 1 :]
        lines = data[:cut].split(b"\n")
        if b"" in lines or any(map(bytes.isspace, lines)):
            kept = [(number, raw) for number, raw in enumerate(lines, start=line) if raw and not raw.isspace()]
            block = LineBlock(offset, line, [raw for _, raw in kept], [number for number, _ in kept])
        else:
            block = LineBlock(offset, line, lines)
        line += len(lines)
        if block.lines:
            offset += len(block.lines)
            yield block


class ByteRange(io.RawIOBase):
    """Bytes ``start`` to ``end`` of a file as a stream of their own (a piece of a large file)."""

    def __init__(self, path: str, start: int, end: int) -> None:
        self._file = open(path, "rb")
        self._file.seek(start)
        self._left = end - start

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if self._left <= 0:
            return 0
        view = memoryview(buffer)[: self._left]
        count = self._file.readinto(view)
        self._left -= count
        return count

    def close(self) -> None:
        self._file.close()
        super().close()


def open_range(path: str, start: int, end: int) -> IO[bytes]:
    """A buffered stream over bytes ``start`` to ``end`` of a file."""
    return io.BufferedReader(ByteRange(path, start, end), buffer_size=1 << 20)


def line_ranges(
    path: str, bytes_per_range: int, messages_per_range: int | None = None
) -> list[tuple[int, int, int, int]]:
    r"""Cut a JSON Lines or text file into ranges of whole lines: ``(start, end, first_offset, first_line)``.

    A range ends at the first line end past ``bytes_per_range`` bytes, or
    after ``messages_per_range`` messages (blank lines do not count), so each
    piece can be decoded on its own with the offsets and line numbers the
    whole file would give. Cutting by bytes reads the file in large blocks
    and counts lines in C (``cdckit.read`` with workers and Spark cut alike).

    >>> import tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "x.jsonl")
    >>> _ = open(path, "wb").write(b'{"a": 1}\n\n{"a": 2}\n{"a": 3}\n')
    >>> line_ranges(path, 10)
    [(0, 10, 0, 1), (10, 28, 1, 3)]
    """
    if messages_per_range:
        return _ranges_by_messages(path, bytes_per_range, messages_per_range)
    ranges = []
    start = offset = 0
    line = 1
    with open(path, "rb") as stream:
        size = os.fstat(stream.fileno()).st_size
        while start < size:
            stream.seek(start + max(bytes_per_range, 1) - 1)
            end = _next_line_end(stream, size)
            stream.seek(start)
            messages, lines = _count_lines(stream, end - start)
            ranges.append((start, end, offset, line))
            start, offset, line = end, offset + messages, line + lines
    return ranges


def _next_line_end(stream: IO[bytes], size: int) -> int:
    """The position just past the next line end at or after the stream's position (or the file's end)."""
    while True:
        here = stream.tell()
        data = stream.read(_BLOCK)
        if not data:
            return size
        cut = data.find(b"\n")
        if cut >= 0:
            return here + cut + 1


_BLANK_LINE = re.compile(rb"(?m)^[ \t\r\x0b\x0c]*$")


_LINE_STARTS_BLANK = re.compile(rb"\n[\n \t\r\x0b\x0c]")


def _blank_lines(text: bytes) -> int:
    """The number of blank (empty or whitespace) lines in ``text``; a search of the text for a line that
    starts blank comes first, as the regular expression is much slower and blank lines are rare.

    >>> _blank_lines(b'{"a": 1}\\n\\n  \\n{"a": 2}'), _blank_lines(b'{"a": 1}\\n {"a": 2}')
    (2, 0)
    """
    if text[:1] not in _BLANK_START and text[-1:] not in _BLANK_START and _LINE_STARTS_BLANK.search(text) is None:
        return 0
    return len(_BLANK_LINE.findall(text))


_BLANK_START = (b"", b"\n", b" ", b"\t", b"\r", b"\x0b", b"\x0c")


def _count_lines(stream: IO[bytes], length: int) -> tuple[int, int]:
    """``(messages, lines)`` in the next ``length`` bytes (whole lines): blank lines are not messages."""
    messages = lines = 0
    tail = b""
    while length > 0:
        data = stream.read(min(_BLOCK, length))
        if not data:
            break
        length -= len(data)
        data = tail + data
        cut = data.rfind(b"\n") + 1
        whole, tail = data[:cut], data[cut:]
        count = whole.count(b"\n")
        lines += count
        messages += count - _blank_lines(whole[:-1]) if count else 0
    if tail:
        lines += 1
        messages += 0 if tail.isspace() else 1
    return messages, lines


def _ranges_by_messages(path: str, bytes_per_range: int, messages_per_range: int) -> list[tuple[int, int, int, int]]:
    ranges = []
    start = position = 0
    offset = first_offset = 0
    line = first_line = 1
    with open(path, "rb") as stream:
        for raw in stream:
            position += len(raw)
            if raw.strip():
                offset += 1
            line += 1
            if position - start >= bytes_per_range or offset - first_offset >= messages_per_range:
                ranges.append((start, position, first_offset, first_line))
                start, first_offset, first_line = position, offset, line
    if position > start:
        ranges.append((start, position, first_offset, first_line))
    return ranges


def text_messages(stream: IO[bytes], name: str, encoding: str, first_offset: int = 0,
                  first_line: int = 1) -> Iterator[Message]:
    """The messages of a text stream (one per non-blank line), as :func:`iter_sources` gives them."""
    return _text_messages(stream, name, encoding, first_offset, first_line)


def text_encoding(path: str) -> str:
    """The encoding of a text file: UTF-8, unless its first non-ASCII line is not (then Latin-1).

    UTF-8 when the file cannot be read (reading it then says why, as one quarantined entry).
    """
    try:
        with open_file(path) as stream:
            return _text_encoding(stream.read(_HEAD))
    except OSError:
        return "utf-8"


def parse_line(raw: bytes, name: str, offset: int, line: int | None) -> Message:
    """One JSON message from its raw bytes (Kafka records unwrapped; errors kept on the message)."""
    return _parse(raw, name, offset, line)


def _stream_messages(stream: IO[bytes], name: str, container: str | None, tsv: bool = False) -> Iterator[Message]:
    if container == "parquet":
        yield from _parquet_messages(stream, name)
        return
    if container == "csv":
        yield from _csv_messages(stream, name, "\t" if tsv else ",")
        return
    head = stream.read(_HEAD)
    stream.seek(0)
    if container is None:
        container = sniff_container(head)
    if container == "binary":
        yield _binary(head, name)
        return
    if container == "jsonl":
        yield from _jsonl_messages(stream, name)
    elif container == "json":
        yield from _json_value_messages(stream, name)
    else:
        yield from _text_messages(stream, name, _text_encoding(head))


def _without_bom(data: bytes) -> bytes:
    """``data`` without the UTF-8 byte-order marks it starts with (a file saved twice may carry two).

    >>> _without_bom(b"\\xef\\xbb\\xbf\\xef\\xbb\\xbf{}")
    b'{}'
    """
    while data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    return data


def sniff_container(head: bytes) -> str:
    """Guess the container from the first bytes of a file.

    >>> sniff_container(b'{"a": 1}\\n{"a": 2}\\n'), sniff_container(b'{\\n  "a": 1\\n}\\n')
    ('jsonl', 'json')
    >>> sniff_container(b'[{"a": 1}]')
    'json'
    >>> sniff_container(b"src=css\\xfens=X"), sniff_container(bytes(range(256)))
    ('text', 'binary')
    """
    if head.startswith(b"PAR1"):
        return "parquet"
    if is_binary(head):
        return "binary"
    text = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    if not text:
        return "jsonl"
    first = text[:1]
    if first == b"[":
        return "json"
    if first not in (b"{", b'"'):
        return "text"
    lines = [ln for ln in head.split(b"\n")[:-1] if ln.strip()][:10] or [text]
    complete = sum(1 for ln in lines if _one_line_value(ln.rstrip(b"\r")))
    return "jsonl" if complete * 2 >= len(lines) else "json"


def is_binary(head: bytes) -> bool:
    """True when bytes are not text: more than one byte in sixteen a control character (NUL included).

    Compressed, encrypted or random bytes hold about one in nine; text with a
    stray NUL or escape holds far fewer, and is read as text (a damaged line is
    quarantined on its own). A head of under 64 bytes needs one in four.

    >>> is_binary(b'{"a": 1}\\n{"b": "x\\x00y"}\\n'), is_binary(b"src=x\\xfeop=I"), is_binary(bytes(range(256)))
    (False, False, True)
    """
    if not head:
        return False
    controls = len(head) - len(head.translate(None, _CONTROL))
    return controls * (16 if len(head) >= 64 else 4) > len(head)


def _binary(head: bytes, name: str) -> Message:
    kept = head[:_RAW_KEPT].decode("latin-1").encode("unicode_escape").decode("ascii")
    return _error(name, 0, f"binary data, not a text or JSON capture ({len(head):,} bytes looked at, "
                  f"{len(head) - len(head.translate(None, _CONTROL)):,} of them control bytes)", "binary_data",
                  raw=kept)


def _one_line_value(line: bytes) -> bool:
    line = line.lstrip(b"\xef\xbb\xbf").rstrip()
    return (line[:1] == b"{" and line[-1:] == b"}") or (line[:1] == b'"' and line[-1:] == b'"' and len(line) > 1)


# ---------------------------------------------------------------- JSON


def _parse(raw: bytes, name: str, offset: int, line: int | None) -> Message:
    try:
        value = values.loads(raw)
    except (ValueError, RecursionError) as err:
        reason, code = _json_error(err, raw)
        return Message(None, name, offset, raw=raw, line=line, error=reason, code=code)
    return _unwrap_record(Message(value, name, offset, raw=raw, line=line))


def _json_error(err: Exception, raw: bytes) -> tuple[str, str]:
    """The reason and ``reason_code`` of a message that is not JSON."""
    text = str(err)
    if "UTF-8" in text or "surrogate" in text:
        return f"invalid UTF-8: {text}", "invalid_utf8"
    if "depth" in text or isinstance(err, RecursionError):
        return f"nested deeper than the JSON parser allows: {text}", "too_deep"
    if raw.strip() and raw.count(b"{") + raw.count(b"[") > raw.count(b"}") + raw.count(b"]"):
        return f"truncated JSON: {text}", "truncated_json"
    return f"invalid JSON: {text}", "invalid_json"


def _jsonl_messages(stream: IO[bytes], name: str) -> Iterator[Message]:
    offset = 0
    for number, raw in enumerate(stream, start=1):
        if number == 1:
            raw = _without_bom(raw)
        raw = raw.strip()
        if not raw:
            continue
        yield _parse(raw, name, offset, number)
        offset += 1


_STRUCTURE = re.compile(rb'[{}\[\]"]')
_STRING_END = re.compile(rb'["\\]')
_SCALAR_END = re.compile(rb'[\s,\[\]{}"]')
_SPACE = re.compile(rb"[\s,]*")


def _json_value_messages(stream: IO[bytes], name: str) -> Iterator[Message]:
    """Messages from a JSON array or from JSON values one after another (see :func:`_json_value_pieces`)."""
    for piece in _json_value_pieces(stream, name):
        if isinstance(piece, LineBlock):
            for index, raw in enumerate(piece.lines):
                yield _parse(raw, name, piece.first_offset + index, piece.line_of(index))
        else:
            yield piece


def _json_value_pieces(stream: IO[bytes], name: str) -> Iterator["LineBlock | Message"]:
    """The values of a JSON array, or of JSON values one after another, as blocks and messages.

    Runs of whole objects are cut out many at a time (:func:`_whole_objects`)
    and come as a :class:`LineBlock` whose lines are the values' texts, so a
    batch decoder takes them as it takes JSON Lines. Anything else is cut
    out by scanning brackets and strings value by value, so a broken value
    is quarantined on its own. Outside an array, a ``{`` at the start of a
    line inside an unfinished value is taken as the start of the next
    message (the unfinished one was truncated).
    """
    buf = stream.read(_BLOCK)
    buf = _without_bom(buf)
    eof = not buf
    pos = 0
    line = 1  # the line buf starts on
    offset = 0
    depth_base: int | None = None  # 1 inside a top-level array, 0 between values
    scanned_alone = 0  # values to scan one by one before cutting many at once again
    while True:
        pos = _SPACE.match(buf, pos).end()
        if pos >= len(buf):
            if eof:
                return
            line += buf.count(b"\n", 0, pos)
            buf, pos = stream.read(_BLOCK), 0
            eof = not buf
            continue
        if depth_base is None or (depth_base == 0 and buf[pos : pos + 1] == b"["):
            if buf[pos : pos + 1] == b"[":
                depth_base, pos = 1, pos + 1
                continue
            depth_base = 0
        if depth_base == 1 and buf[pos : pos + 1] == b"]":
            depth_base, pos = 0, pos + 1
            continue
        if scanned_alone == 0 and buf[pos] == 0x7B:
            spans, unusual = _whole_objects(buf, pos, depth_base)
            if spans:
                starts = [start for start, _ in spans]
                first_line = line + buf.count(b"\n", 0, pos)
                numbers = _line_numbers(buf, pos, starts, first_line)
                yield LineBlock(offset, first_line, [buf[start:end] for start, end in spans], numbers)
                end = spans[-1][1]
                offset += len(spans)
                line += buf.count(b"\n", 0, end)
                buf, pos = buf[end:], 0
                continue
            if not unusual and not eof:  # the first object does not end in this block: read on
                more = stream.read(max(_BLOCK, len(buf)))  # doubling: a huge object is cut in linear time
                if more:
                    line += buf.count(b"\n", 0, pos)
                    buf, pos = buf[pos:] + more, 0
                    continue
                eof = True
            scanned_alone = 16
        scanned_alone = max(scanned_alone - 1, 0)
        end, truncated = _value_end(buf, pos, eof, resync=depth_base == 0)
        if end is None:
            more = stream.read(_BLOCK)
            if more:
                line += buf.count(b"\n", 0, pos)
                buf, pos = buf[pos:] + more, 0
                continue
            eof = True
            end, truncated = len(buf), True
        raw = buf[pos:end]
        start_line = line + buf.count(b"\n", 0, pos)
        if truncated:
            yield _error(name, offset, "truncated JSON: the value never closes", "truncated_json", raw, start_line)
        else:
            yield _parse(raw, name, offset, start_line)
        offset += 1
        line += buf.count(b"\n", 0, end)
        buf, pos = buf[end:], 0


# Bracket depth change of each byte, for cutting many objects at once.
_BRACKET_STEP = np.zeros(256, dtype=np.int8)
_BRACKET_STEP[list(b"{[")] = 1
_BRACKET_STEP[list(b"}]")] = -1


def _whole_objects(buf: bytes, pos: int, depth_base: int) -> tuple[list[tuple[int, int]], bool]:
    r"""``(spans, unusual)``: the whole objects from ``pos`` on, each ``(start, end)``, as :func:`_value_end`
    would cut them one by one, found with array operations instead of a loop.

    Cutting stops before anything the one-by-one scan must judge: a value
    that is not an object, text between values other than whitespace and
    commas, the array's end, a bracket closing below ``depth_base``, or
    (outside an array) a ``{`` opening a line inside an object, which marks
    a truncated message. ``unusual`` says the cut stopped for such a reason
    rather than at the end of ``buf``.

    >>> _whole_objects(b'[{"a": "}"},\n {"b": [1]}, 7]', 1, 1)
    ([(1, 11), (14, 24)], True)
    """
    data = np.frombuffer(buf, dtype=np.uint8)[pos:]
    limit = data.size  # cutting stops before the value holding this position
    quotes = np.flatnonzero(data == 0x22)
    if quotes.size and buf.find(b"\\", pos) >= 0:  # a quote after an odd run of backslashes is escaped
        backslash = data == 0x5C
        run = np.zeros(quotes.size, dtype=np.int64)
        before = quotes - 1
        more = before >= 0
        more[more] = backslash[before[more]]
        while more.any():
            run += more
            before -= 1
            more &= before >= 0
            more[more] = backslash[before[more]]
        escaped = quotes[run % 2 == 1]
        quotes = quotes[run % 2 == 0]
        # Backslashes escape only inside strings: where an "escaped" quote lies outside one (broken
        # text), the scan reads it differently, so cutting stops there.
        outside = escaped[np.searchsorted(quotes, escaped) % 2 == 0]
        if outside.size:
            limit = int(outside[0])
    steps = _BRACKET_STEP[data]
    brackets = np.flatnonzero(steps)
    if quotes.size:  # a bracket after an odd number of quotes is inside a string
        brackets = brackets[np.searchsorted(quotes, brackets) % 2 == 0]
    step = steps[brackets].astype(np.int64)
    after = depth_base + np.cumsum(step)
    before_depth = after - step
    below = np.flatnonzero(after < depth_base)
    if below.size:
        limit = min(limit, int(brackets[below[0]]))
    if depth_base == 0:  # resync: an opening brace at a line start inside a value
        inner = brackets[(before_depth > 0) & (step == 1)]
        inner = inner[(data[inner] == 0x7B) & (data[inner - 1] == 0x0A)]
        if inner.size:
            limit = min(limit, int(inner[0]))
    starts = brackets[(before_depth == depth_base) & (step == 1)]
    ends = brackets[(after == depth_base) & (step == -1)] + 1
    starts, ends = starts[starts < limit], ends[ends <= limit]
    count = min(starts.size, ends.size)
    unusual = limit < data.size or count < starts.size - 1
    spans = []
    gap_start = 0
    for start, end in zip(starts[:count].tolist(), ends[:count].tolist()):
        if data[start] != 0x7B or _SPACE.fullmatch(buf, pos + gap_start, pos + start) is None:
            return spans, True
        spans.append((pos + start, pos + end))
        gap_start = end
    return spans, unusual


def _line_numbers(buf: bytes, pos: int, starts: list[int], first_line: int) -> list[int]:
    """The line each of ``starts`` (ascending, at or after ``pos``) is on, ``pos`` being on ``first_line``."""
    newlines = np.flatnonzero(np.frombuffer(buf, dtype=np.uint8)[pos : starts[-1]] == 0x0A) + pos
    return (np.searchsorted(newlines, starts) + first_line).tolist()


def _value_end(buf: bytes, start: int, eof: bool, resync: bool) -> tuple[int | None, bool]:
    """End index of the JSON value starting at ``start`` (None: need more bytes)."""
    first = buf[start : start + 1]
    if first == b'"':
        end = _string_end(buf, start + 1)
        return end, False
    if first not in (b"{", b"["):
        match = _SCALAR_END.search(buf, start + 1)
        if match is None:
            return (len(buf), False) if eof else (None, False)
        return max(match.start(), start + 1), False
    depth = 0
    pos = start
    while True:
        match = _STRUCTURE.search(buf, pos)
        if match is None:
            return None, False
        at = match.start()
        char = buf[at : at + 1]
        if char == b'"':
            end = _string_end(buf, at + 1)
            if end is None:
                return None, False
            pos = end
            continue
        if char in (b"{", b"["):
            if resync and depth > 0 and char == b"{" and at > 0 and buf[at - 1 : at] == b"\n":
                return at, True
            depth += 1
        else:
            depth -= 1
        pos = at + 1
        if depth == 0:
            return pos, False


def _string_end(buf: bytes, pos: int) -> int | None:
    while True:
        match = _STRING_END.search(buf, pos)
        if match is None:
            return None
        if buf[match.start()] == 0x5C:  # backslash: skip the escaped byte
            pos = match.start() + 2
            continue
        return match.start() + 1


# ---------------------------------------------------------------- text, CSV, Parquet


def _text_encoding(head: bytes) -> str:
    """UTF-8 unless the first line with non-ASCII bytes is not valid UTF-8."""
    for line in head.split(b"\n")[:-1] or [head]:
        if line.isascii():
            continue
        try:
            line.decode("utf-8")
        except UnicodeDecodeError:
            return "latin-1"
        return "utf-8"
    return "utf-8"


def _text_messages(stream: IO[bytes], name: str, encoding: str, first_offset: int = 0,
                   first_line: int = 1) -> Iterator[Message]:
    offset = first_offset
    for number, raw in enumerate(stream, start=first_line):
        raw = raw.rstrip(b"\r\n")
        if number == 1:
            raw = _without_bom(raw)
        if not raw.strip():
            continue
        try:
            text = raw.decode(encoding)
        except UnicodeDecodeError as err:
            yield _error(name, offset, f"invalid UTF-8: {err}", "invalid_utf8", raw, number)
        else:
            yield Message(text, name, offset, raw=text, line=number)
        offset += 1


def _csv_messages(stream: IO[bytes], name: str, delimiter: str) -> Iterator[Message]:
    text = io.TextIOWrapper(stream, encoding="utf-8-sig", errors="surrogateescape", newline="")
    reader = csv.DictReader(text, delimiter=delimiter)
    for offset, row in enumerate(_csv_rows(reader)):
        line = reader.line_num
        clean = {k: (None if v == "" else v) for k, v in row.items()}
        if any(isinstance(v, str) and _has_surrogate(v) for v in (*clean.values(), *clean.keys())):
            raw = delimiter.join(v or "" for v in row.values() if isinstance(v, str))
            raw = raw.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
            yield _error(name, offset, "invalid UTF-8 in CSV row", "invalid_utf8", raw, line)
            continue
        if None in clean:  # more fields than the header names
            extra = clean.pop(None)  # type: ignore[call-overload]
            yield _error(name, offset, f"CSV row has {len(extra)} more fields than the header", "damaged_input",
                         values.dumps(clean), line)
            continue
        yield _unwrap_record(Message(clean, name, offset, line=line))
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


def _parquet_messages(stream: IO[bytes], name: str) -> Iterator[Message]:
    import pyarrow.parquet as pq

    offset = 0
    for batch in pq.ParquetFile(stream).iter_batches(batch_size=65_536):
        for row in batch.to_pylist():
            yield _unwrap_record(Message(row, name, offset))
            offset += 1


# ---------------------------------------------------------------- iterables and Kafka records


def _iterable_messages(items: Iterable[Any]) -> Iterator[Message]:
    name = "<iterable>"
    for offset, item in enumerate(items):
        if isinstance(item, dict):
            yield _unwrap_record(Message(item, name, offset))
        elif isinstance(item, (str, bytes, bytearray)):
            yield _payload_message(bytes(item) if not isinstance(item, str) else item, name, offset)
        elif item is None:
            yield Message(None, name, offset, raw="null")
        elif hasattr(item, "value") and hasattr(item, "offset"):
            yield _record_object(item, name, offset)
        else:
            yield Message(item, name, offset, raw=_repr(item))


def _record_object(item: Any, name: str, ordinal: int) -> Message:
    """The message of a Kafka record object (``value``, ``key``, ``offset``, ``partition``, as clients give)."""
    kafka_offset, partition = item.offset, getattr(item, "partition", None)
    bad = _position_problem(kafka_offset, "offset", required=True) or _position_problem(partition, "partition")
    if bad is not None:
        return _error(name, ordinal, bad, "invalid_value", _repr(item.value))
    return record_message(item.value, getattr(item, "key", None), name, kafka_offset, partition)


def _position_problem(value: Any, what: str, required: bool = False) -> str | None:
    """Why a Kafka offset or partition is not one (a whole number of 64 bits), or None."""
    if value is None and not required:
        return None
    if value.__class__ is int and values.INT64_MIN <= value <= values.INT64_MAX:
        return None
    return f"the Kafka record's {what} is {_repr(value)[:40]}, not a whole number"


def _repr(value: Any) -> str:
    try:
        return repr(value)
    except (RecursionError, ValueError):
        return f"<a {type(value).__name__} nested too deep to print>"


def _payload_message(item: str | bytes, name: str, offset: int, **extra: Any) -> Message:
    """A message from one payload: JSON when it looks like JSON, else a text line."""
    if isinstance(item, str) and not item.isascii():
        try:
            item.encode("utf-8")
        except UnicodeEncodeError as err:
            return _error(name, offset, f"the text holds a lone surrogate ({item[err.start]!r} at character "
                          f"{err.start}), not valid UTF-8", "invalid_utf8",
                          item.encode("utf-8", "backslashreplace").decode("utf-8"), extra.get("line"))
    data = item.encode("utf-8") if isinstance(item, str) else item
    if data.lstrip()[:1] in (b"{", b"[", b'"') or data.strip() in (b"null", b"true", b"false"):
        msg = _parse(data.strip(), name, offset, None)
    elif isinstance(item, str):
        msg = Message(item.rstrip("\r\n"), name, offset, raw=item)
    else:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            text = data.decode("latin-1")
        msg = Message(text.rstrip("\r\n"), name, offset, raw=text)
    for attr, value in extra.items():
        setattr(msg, attr, value)
    return msg


_RECORD_FIELDS = frozenset(
    {"topic", "partition", "offset", "timestamp", "timestampType", "tstype", "ts", "broker",
     "key", "value", "payload", "headers", "key_error", "payload_error"}
)


def _unwrap_record(msg: Message) -> Message:
    """Unwrap a saved Kafka record (kcat ``-J`` or key/value/offset rows)."""
    record = msg.value
    if not isinstance(record, dict) or not record.keys() <= _RECORD_FIELDS:
        return msg
    body = "payload" if "payload" in record else "value" if "value" in record else None
    if body is None or not ({"key", "offset", "partition", "topic"} & record.keys()):
        return msg
    value = record[body]
    if isinstance(value, dict):  # a value already parsed; the record is not a kcat line
        inner = Message(value, msg.source, msg.offset, raw=msg.raw, line=msg.line)
    elif value is None:
        inner = Message(None, msg.source, msg.offset, raw=msg.raw, line=msg.line)
    elif isinstance(value, (str, bytes, bytearray)):
        inner = _payload_message(value if isinstance(value, str) else bytes(value), msg.source, msg.offset,
                                 line=msg.line)
    else:
        return msg
    inner.key = kafka_key(record.get("key"))
    bad = _position_problem(record.get("offset"), "offset") or _position_problem(record.get("partition"), "partition")
    if bad is not None:
        return _error(msg.source, msg.offset, bad, "invalid_value", msg.raw or _repr(record), msg.line)
    if record.get("offset") is not None:
        inner.offset = record["offset"]
    if record.get("partition") is not None:
        inner.partition = record["partition"]
    if msg.raw is not None:
        inner.raw = msg.raw
    return inner


_Position = Annotated[int, msgspec.Meta(ge=values.INT64_MIN, le=values.INT64_MAX)]


class SavedRecord(msgspec.Struct, forbid_unknown_fields=True):
    """One saved Kafka record as the batch path reads it: a kcat ``-J`` line or a Kafka-shaped frame
    whose value is JSON text.

    The same records :func:`_unwrap_record` unwraps, read in C: ``payload``
    (kcat) or ``value`` holds the message, ``key`` the Kafka key as text.
    A field left out stays ``UNSET``.
    """

    topic: Any = msgspec.UNSET
    partition: _Position | None | msgspec.UnsetType = msgspec.UNSET
    offset: _Position | None | msgspec.UnsetType = msgspec.UNSET
    key: str | None | msgspec.UnsetType = msgspec.UNSET
    payload: str | None | msgspec.UnsetType = msgspec.UNSET
    value: str | None | msgspec.UnsetType = msgspec.UNSET
    timestamp: Any = None
    timestampType: Any = None
    tstype: Any = None
    ts: Any = None
    broker: Any = None
    headers: Any = None

    def message_bytes(self) -> bytes | None:
        """The message as raw JSON object text, or None when it is anything else (null, text, absent)."""
        body = self.payload if self.payload is not msgspec.UNSET else self.value
        if body.__class__ is not str or body[:1] != "{":
            return None
        return body.encode()

    def key_text(self) -> str | None:
        return None if self.key is msgspec.UNSET else self.key


_SAVED_RECORD = msgspec.json.Decoder(SavedRecord)


def saved_records(lines: list[bytes]) -> list[SavedRecord | None] | None:
    """The lines of a block as saved Kafka records (None for a line that is not one), or None at once
    when the first line is not one: the block is not a saved-records file.

    A record counts only when it has a body (``payload`` or ``value``) and one
    of ``topic``, ``partition``, ``offset``, ``key``, as for :func:`_unwrap_record`.

    >>> saved = saved_records([b'{"topic": "t", "partition": 0, "offset": 7, "key": null, "payload": "{}"}'])
    >>> saved[0].offset, saved[0].message_bytes()
    (7, b'{}')
    """
    decode, unset = _SAVED_RECORD.decode, msgspec.UNSET
    out: list[SavedRecord | None] = []
    for line in lines:
        try:
            record = decode(line)
        except (msgspec.DecodeError, msgspec.ValidationError, UnicodeDecodeError, RecursionError):  # the slow
            # path says why (msgspec gives up on very deep nesting with RecursionError)
            record = None
        if record is not None and (record.payload is unset and record.value is unset or (
                record.topic is unset and record.partition is unset and record.offset is unset
                and record.key is unset)):
            record = None
        if record is None and not out:
            return None
        out.append(record)
    return out


def kafka_key(key: Any) -> Any:
    """A Kafka key as a message carries it: JSON parsed when it is a JSON object or array, else text."""
    if isinstance(key, (bytes, bytearray)):
        key = bytes(key).decode("utf-8", errors="replace")
    if isinstance(key, str) and key.lstrip()[:1] in ("{", "["):
        try:
            key = values.loads(key)
        except ValueError:
            pass
    return key


def record_message(value: Any, key: Any, source: str, offset: int, partition: int | None = None) -> Message:
    """The message of one Kafka record (value and key as bytes, text or None)."""
    if value is None:
        msg = Message(None, source, offset, raw="null")
    elif isinstance(value, dict):  # a client that parsed the value already
        msg = Message(value, source, offset)
    elif isinstance(value, (str, bytes, bytearray, memoryview)):
        msg = _payload_message(bytes(value) if isinstance(value, (bytearray, memoryview)) else value, source, offset)
    else:
        return _error(source, offset, f"the Kafka record's value is a {type(value).__name__}, not bytes or text",
                      "invalid_message", _repr(value))
    msg.key = kafka_key(key)
    msg.partition = partition
    return msg


# ---------------------------------------------------------------- writing


def write_messages(records: Iterable[Any], path: str | os.PathLike[str], layout: str = "jsonl",
                   topic: str | None = None) -> int:
    """Write encoded records (``Record`` objects or plain values) to ``path``; returns the count.

    ``layout`` is ``jsonl`` (one JSON value per line), ``kcat`` (kcat ``-J``
    lines carrying the Kafka key and the value as JSON text), ``text`` (one
    line each, UTF-8, or Latin-1 when the file name contains ``.latin-1.``),
    ``csv`` or ``parquet`` (rows). The file is written to a temporary name
    and renamed into place.
    """
    path = os.fspath(path)
    items = [(getattr(r, "value", r), getattr(r, "key", None)) for r in records]
    tmp = f"{path}.tmp"
    if layout in ("parquet", "csv"):
        names = list(dict.fromkeys(k for value, _ in items for k in value))  # every column, first seen first
    if layout == "parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        pq.write_table(pa.Table.from_pylist([{k: value.get(k) for k in names} for value, _ in items]), tmp)
    elif layout == "csv":
        with open(tmp, "w", encoding="utf-8", newline="") as out:
            writer = csv.DictWriter(out, fieldnames=names, lineterminator="\n")
            writer.writeheader()
            for value, _ in items:
                writer.writerow({k: ("" if v is None else v) for k, v in value.items()})
    else:
        encoding = "latin-1" if ".latin-1." in os.path.basename(path) else "utf-8"
        with open(tmp, "w", encoding=encoding, newline="\n") as out:
            for number, (value, key) in enumerate(items):
                if layout == "text":
                    out.write(f"{value}\n")
                elif layout == "kcat":
                    record = {"topic": topic or "cdckit", "partition": 0, "offset": number,
                              "key": None if key is None else values.dumps(key),
                              "payload": None if value is None else values.dumps(value)}
                    out.write(values.dumps(record) + "\n")
                elif layout == "jsonl":
                    out.write(values.dumps(value) + "\n")
                else:
                    raise ValueError(f"unknown layout {layout!r}")
    os.replace(tmp, path)
    return len(items)
