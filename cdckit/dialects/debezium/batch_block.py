"""One msgspec call for a block of Debezium messages without Kafka keys, all bare or all in a
``{"payload": ...}`` wrapper: the batch decoder's columns of the whole block (:func:`block_columns`), each
column one comprehension. Used by :mod:`.fast_path`, which reads any other block line by line.
"""

from __future__ import annotations

from itertools import compress, repeat
from typing import Any

import msgspec
import pyarrow as pa

from . import naming
from .batch_columns import block_images, json_array, placed, seq_positions, times
from .batch_view import HAND_BACK, PAYLOADS, PLAINS
from .envelope import OPS
from .unavailable import Unavailable

__all__ = ["block_columns"]


def block_columns(
    lines: list[bytes], topics: list | None, unavailable: Unavailable
) -> tuple[list[int], list[list]] | None:
    """The batch decoder's ``(kept, columns)`` of a block of messages without Kafka keys that are all bare
    (:class:`Plain`) or all in a ``{"payload": ...}`` wrapper: one msgspec call reads the whole block (joined as a
    JSON array), each column is one comprehension. None when the block is of another kind (a message msgspec refuses
    as :class:`Plain` included): ``_plain_columns`` then reads it line by line.

    >>> line = b'{"op":"c","after":{"id":1},"source":{"table":"t","file":"f","pos":4}}'
    >>> kept, columns = block_columns([line, b'{"op":"d","before":null,"source":{}}'], None, Unavailable())
    >>> kept, columns[4], columns[12]
    ([0], ['t'], [b'{"id":1}'])
    """
    count = len(lines)
    if not count or lines[0].startswith(b'{"schema"'):
        return None
    wrapped = lines[0].startswith(b'{"payload"')
    try:
        block = json_array(lines)
        messages = [wrapper.payload for wrapper in PAYLOADS.decode(block)] if wrapped else PLAINS.decode(block)
    except (msgspec.DecodeError, msgspec.ValidationError, UnicodeDecodeError):
        return None
    if len(messages) != count:  # a line that is not one JSON value
        return None
    before = [bytes(message.before) for message in messages]
    after = [bytes(message.after) for message in messages]
    op_raw = [message.op for message in messages]
    ops = OPS
    op = [ops[raw] for raw in op_raw]
    sources = [message.source for message in messages]
    bad: set[int] = set()  # the lines handed back (to _plain_columns's line-by-line loop, then decode())
    # the images: null (None), an object (its text, see block_images), anything else handed back
    null, brace = b"null", b"{"
    before_given, after_given = list(map(null.__ne__, before)), list(map(null.__ne__, after))
    images = list(compress(before, before_given))
    split = len(images)
    images += compress(after, after_given)
    if not all(map(bytes.startswith, images, repeat(brace))):  # an image neither null nor an object
        bad.update(
            i for column in (before, after) for i, raw in enumerate(column) if raw != null and not raw.startswith(brace)
        )
        images = [raw if raw.startswith(brace) else b"{}" for raw in images]  # its line is left out
    texts = block_images(images, unavailable)[0]
    del images
    if texts.count(HAND_BACK):
        places = [*compress(range(count), before_given), *compress(range(count), after_given)]
        bad.update(index for index, text in zip(places, texts) if text is HAND_BACK)
    before, after = placed(before_given, texts[:split]), placed(after_given, texts[split:])
    if len(texts) - split != count:  # only a delete may have no after image, only a delete must have a before
        bad.update(i for i, text in enumerate(after) if text is None and op_raw[i] != "d")
    if "d" in op_raw:
        bad.update(i for i, text in enumerate(before) if text is None and op_raw[i] == "d")
    files = [src.file for src in sources]
    if files.count(None) == count:
        seq = files
    else:
        positions = [src.pos for src in sources]
        if (
            None in files
            or None in positions
            or not all(file and not (file.isascii() and file.isdigit()) for file in set(files))
        ):
            bad.update(
                i
                for i, (file, pos) in enumerate(zip(files, positions))
                if file is not None and (pos is None or not file or (file.isascii() and file.isdigit()))
            )
            files = [None if i in bad else file for i, file in enumerate(files)]
            positions = [0 if pos is None else pos for pos in positions]
        seq = seq_positions(files, positions, [src.row for src in sources])
    event_time = times([src.ts_ms for src in sources], [src.ts_us for src in sources], [src.ts_ns for src in sources])
    emit_time = times([m.ts_ms for m in messages], [m.ts_us for m in messages], [m.ts_ns for m in messages])
    # as the connector names the table (the topic may say where the record does not)
    table = [src.table for src in sources]
    where = list(
        zip(
            [src.connector for src in sources],
            [src.db for src in sources],
            [src.schema for src in sources],
            table,
            topics or [None] * count,
        )
    )
    name_of = naming.named
    names = {place: name_of(*place) for place in set(where)}
    if len(names) == 1:
        ((one_database, one_schema),) = names.values()
        database, schema = [one_database] * count, [one_schema] * count
    else:
        named = [names[place] for place in where]
        database, schema = [n[0] for n in named], [n[1] for n in named]
    nothing = [None] * count
    columns: list[Any] = [
        op,
        op_raw,
        database,
        schema,
        table,
        event_time,
        emit_time,
        seq,
        nothing,
        nothing,
        nothing,
        before,
        after,
        nothing,
    ]
    kept = list(range(count))
    if bad:
        kept = [index for index in kept if index not in bad]
        taken = pa.array(kept, pa.int64())
        columns = [
            column.take(taken) if isinstance(column, pa.Array) else [column[index] for index in kept]
            for column in columns
        ]
    return kept, columns
