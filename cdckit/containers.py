"""The old home of :mod:`cdckit.io`: its public names, re-exported so old imports keep working.

>>> from cdckit.containers import iter_sources
>>> [(m.offset, m.value) for name, msgs in iter_sources('{"a": 1}\\n{"a": 2}\\n') for m in msgs]
[(0, {'a': 1}), (1, {'a': 2})]
"""

from __future__ import annotations

from .io import (
    CONTAINERS,
    ByteRange,
    LineBlock,
    Message,
    SavedRecord,
    damage_of,
    expand_paths,
    file_container,
    file_messages,
    file_pieces,
    is_binary,
    is_gzip,
    iter_sources,
    jsonl_blocks,
    kafka_key,
    line_ranges,
    open_file,
    open_range,
    parse_line,
    record_message,
    saved_records,
    sniff_container,
    text_encoding,
    text_messages,
    write_messages,
)

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
    "ByteRange",
    "SavedRecord",
    "saved_records",
    "damage_of",
    "is_binary",
]
