"""Bytes in: a file or payload opened for reading, through gzip when it starts with gzip's magic bytes.

A damaged gzip stream ends early instead of raising; :func:`damage_of` says
where and why.

>>> import gzip
>>> stream = payload_stream(gzip.compress(b'{"a": 1}\\n')[:-4])  # the length trailer cut off
>>> stream.read(), damage_of(stream) is not None
(b'{"a": 1}\\n', True)

``BLOCK``, ``HEAD``, ``payload_stream`` and ``without_bom`` are shared by the
modules of :mod:`cdckit.io` (not public).
"""

from __future__ import annotations

import gzip
import io
import zlib
from typing import IO, Any

__all__ = ["open_file", "is_gzip", "damage_of"]

#: Bytes read at a time.
BLOCK = 1 << 20
#: Bytes looked at to guess a container or an encoding.
HEAD = 1 << 16
GZIP_MAGIC = b"\x1f\x8b"


def open_file(path: str) -> IO[bytes]:
    """A file opened for reading bytes, through gzip when it is gzip (by its magic bytes).

    A damaged gzip file ends early instead of raising; :func:`damage_of`
    says where and why. Raises ``OSError`` when the file cannot be opened.
    """
    return _through_gzip(open(path, "rb"))


def payload_stream(data: bytes) -> IO[bytes]:
    """A bytes payload as a stream, through gzip when it is gzip."""
    return _through_gzip(io.BytesIO(data))


def _through_gzip(raw: IO[bytes]) -> IO[bytes]:
    gzipped = raw.read(2) == GZIP_MAGIC
    raw.seek(0)
    return io.BufferedReader(_GuardedGzip(raw), buffer_size=BLOCK) if gzipped else raw


def is_gzip(path: str) -> bool:
    """True when the file starts with gzip's magic bytes (False when it cannot be read)."""
    try:
        with open(path, "rb") as probe:
            return probe.read(2) == GZIP_MAGIC
    except OSError:
        return False


def damage_of(stream: Any) -> str | None:
    """Where and why a gzip stream opened by :func:`open_file` ended early (None: it ended well)."""
    return getattr(getattr(stream, "raw", None), "damage", None)


def without_bom(data: bytes) -> bytes:
    """``data`` without the UTF-8 byte-order marks it starts with (a file saved twice may carry two).

    >>> without_bom(b"\\xef\\xbb\\xbf\\xef\\xbb\\xbf{}")
    b'{}'
    """
    while data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    return data


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
