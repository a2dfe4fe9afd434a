r"""Turn a source (paths, globs, directories, payloads, iterables) into messages, and write them back.

A *container* is how messages are laid out in a file: JSON Lines, a JSON
array, concatenated (pretty-printed) JSON values, delimited text lines
(UTF-8 or Latin-1), CSV or Parquet rows, Avro object container files. ``.gz`` files are read through gzip.
Everything is streamed: a file is read in blocks, never whole. Kafka records
saved with their envelope are unwrapped. Nothing here knows any dialect's
field names.

One module per job:

- :mod:`~cdckit.io.sources`: what a source names (paths, globs, payloads, iterables);
- :mod:`~cdckit.io.files`: one file's messages, damage reported once;
- :mod:`~cdckit.io.streams`: opening bytes, through gzip;
- :mod:`~cdckit.io.sniff`: which container a file is;
- :mod:`~cdckit.io.json_lines`, :mod:`~cdckit.io.json_values`, :mod:`~cdckit.io.text`,
  :mod:`~cdckit.io.tables`: the readers of each container; :mod:`~cdckit.io.avro_files`: Avro container
  files (a storage sink's), each record as a framed record of its schema would be;
- :mod:`~cdckit.io.records`: one message from its raw form, Kafka records unwrapped;
- :mod:`~cdckit.io.console`: the lines ``kafka-console-consumer`` prints with keys, unwrapped alike;
- :mod:`~cdckit.io.ranges`: byte ranges of whole lines, to read a file in pieces;
- :mod:`~cdckit.io.array_ranges`, :mod:`~cdckit.io.table_ranges`: ranges of a JSON array's elements, of
  Parquet rows and of CSV lines; :mod:`~cdckit.io.unpacked`: a gzip file decompressed once, to be cut;
- :mod:`~cdckit.io.message`: :class:`Message` and :class:`LineBlock`;
- :mod:`~cdckit.io.write`: writing messages to a file.

>>> from cdckit.io import iter_sources
>>> [(m.offset, m.value) for name, msgs in iter_sources('{"a": 1}\n{"a": 2}\n') for m in msgs]
[(0, {'a': 1}), (1, {'a': 2})]
"""

from __future__ import annotations

from .files import file_messages, file_pieces
from .json_lines import jsonl_blocks
from .message import LineBlock, Message
from .ranges import ByteRange, count_messages, line_cuts, line_ranges, open_range
from .records import SavedRecord, kafka_key, parse_line, record_message, saved_records
from .sniff import CONTAINERS, file_container, is_binary, sniff_container
from .sources import expand_paths, iter_sources, looks_like_payload
from .streams import damage_of, is_gzip, open_file
from .text import text_encoding, text_messages
from .write import LAYOUTS, ConsoleLayout, write_messages

__all__ = [
    "Message",
    "LineBlock",
    "CONTAINERS",
    "iter_sources",
    "looks_like_payload",
    "expand_paths",
    "file_messages",
    "file_pieces",
    "file_container",
    "sniff_container",
    "is_binary",
    "is_gzip",
    "open_file",
    "damage_of",
    "jsonl_blocks",
    "ByteRange",
    "open_range",
    "line_ranges",
    "line_cuts",
    "count_messages",
    "text_messages",
    "text_encoding",
    "parse_line",
    "kafka_key",
    "record_message",
    "SavedRecord",
    "saved_records",
    "LAYOUTS",
    "ConsoleLayout",
    "write_messages",
]
