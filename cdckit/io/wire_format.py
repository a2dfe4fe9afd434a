"""Confluent's wire format: a Kafka key or value framed for a schema registry.

A framed record starts with the magic byte ``0``, then the schema's id in the
registry (4 bytes, big-endian), then the body: Avro's binary encoding of the
record, or for Protobuf the message indexes (which message of the ``.proto``
file, :func:`message_indexes`) before the Protobuf encoding. JSON text never
starts with a zero byte, so a key or value that does is taken for a framed one
(:func:`framed`) and decoded with its schema (:mod:`cdckit.io.schema_book`).

>>> f = framed(b"\\x00\\x00\\x00\\x00\\x07\\x02\\x06abc")
>>> f.schema_id, f.body
(7, b'\\x02\\x06abc')
>>> framed(b'{"id": 1}') is None, framed(b"\\x00\\x00") is None
(True, True)
"""

from __future__ import annotations

import base64
from dataclasses import dataclass

__all__ = ["MAGIC", "Framed", "framed", "message_indexes", "line_schema_ids"]

#: The first byte of a framed key or value.
MAGIC = 0
_HEADER = 5


@dataclass(frozen=True, slots=True)
class Framed:
    """A key or value in Confluent's wire format, not yet decoded: its schema id, its body, its raw bytes."""

    schema_id: int
    body: bytes
    raw: bytes

    def __repr__(self) -> str:
        return f"Framed(schema_id={self.schema_id}, {len(self.body)} body bytes)"


def framed(data: bytes | bytearray | memoryview | None) -> Framed | None:
    """``data`` as a framed key or value (magic byte, schema id, body), or None when it is not one."""
    if data is None or len(data) < _HEADER or data[0] != MAGIC:
        return None
    raw = bytes(data)
    return Framed(int.from_bytes(raw[1:_HEADER], "big"), raw[_HEADER:], raw)


def line_schema_ids(line: bytes) -> list[int]:
    """The schema ids of the framed key and value of one line of cdckit's binary capture layout
    (:func:`cdckit.io.kafka.record_line`: ``key_base64`` and ``payload_base64``).

    >>> line_schema_ids(b'{"topic":"t","partition":0,"offset":1,"key_base64":"AAAAAAEC","payload":null}')
    [1]
    """
    ids = []
    for name in (b'"key_base64":"', b'"payload_base64":"'):
        at = line.find(name)
        if at >= 0:
            start = at + len(name)
            head = base64.b64decode(line[start : start + 8] + b"==", validate=False)[:_HEADER]
            if len(head) == _HEADER and head[0] == MAGIC:
                ids.append(int.from_bytes(head[1:], "big"))
    return ids


def message_indexes(body: bytes) -> tuple[list[int], int]:
    """The Protobuf message indexes at the start of a framed body, and where the message starts.

    The indexes are a count and then that many indexes, each a zig-zag varint; a lone ``0`` stands for
    ``[0]`` (the file's first message).

    >>> message_indexes(b"\\x00rest"), message_indexes(b"\\x04\\x02\\x04rest")
    (([0], 1), ([1, 2], 3))
    >>> message_indexes(b"\\x80")
    Traceback (most recent call last):
    ...
    ValueError: the Protobuf message indexes end before their last byte
    """
    count, at = _zigzag(body, 0)
    if count == 0:
        return [0], at
    if count < 0 or count > len(body):
        raise ValueError(f"the Protobuf message indexes give a count of {count}, more than the body holds")
    indexes = []
    for _ in range(count):
        index, at = _zigzag(body, at)
        indexes.append(index)
    return indexes, at


def _zigzag(data: bytes, at: int) -> tuple[int, int]:
    """One zig-zag varint of ``data`` at ``at``: its value and the position after it."""
    shift = result = 0
    while True:
        if at >= len(data) or shift > 63:
            raise ValueError("the Protobuf message indexes end before their last byte")
        byte = data[at]
        at += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return (result >> 1) ^ -(result & 1), at
        shift += 7
