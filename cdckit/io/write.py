"""Writing captures: encoded records to a file in one of the layouts the readers take back.

>>> import os, tempfile
>>> path = os.path.join(tempfile.mkdtemp(), "x.jsonl")
>>> write_messages([{"a": 1}, {"a": 2}], path)
2
>>> open(path).read()
'{"a":1}\\n{"a":2}\\n'
"""

from __future__ import annotations

import csv
import os
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from .. import values

__all__ = ["LAYOUTS", "ConsoleLayout", "write_messages", "console_text"]

#: The layouts :func:`write_messages` writes.
LAYOUTS = ("jsonl", "kcat", "console", "text", "csv", "parquet")


@dataclass(frozen=True)
class ConsoleLayout:
    """What ``kafka-console-consumer`` is told to print (``--property print.X=true``) before each key and
    value, and its ``key.separator``: the ``console`` layout of :func:`write_messages`."""

    separator: str = "\t"
    timestamp: bool = True
    partition: bool = True
    offset: bool = True
    headers: bool = False


def console_text(
    value: Any, key: Any, offset: int, timestamp: int | None = None, layout: ConsoleLayout = ConsoleLayout()
) -> str:
    """One record as ``kafka-console-consumer`` prints it with ``print.key=true`` (partition 0, no headers;
    ``timestamp``: the record's CreateTime in epoch milliseconds, if it has one).

    >>> console_text({"op": "c"}, {"id": 1}, 7, 1714554000000)
    'CreateTime:1714554000000\\tPartition:0\\tOffset:7\\t{"id":1}\\t{"op":"c"}'
    >>> console_text(None, "k1", 8, layout=ConsoleLayout(" => ", timestamp=False, partition=False))
    'Offset:8 => k1 => null'
    """
    fields = []
    if layout.timestamp:
        fields.append("NO_TIMESTAMP" if timestamp is None else f"CreateTime:{timestamp}")
    if layout.partition:
        fields.append("Partition:0")
    if layout.offset:
        fields.append(f"Offset:{offset}")
    if layout.headers:
        fields.append("NO_HEADERS")
    fields.append(_printed(key))
    fields.append(_printed(value))
    return layout.separator.join(fields)


def _printed(part: Any) -> str:
    """A key or value as the console consumer prints it: text as it is, ``null`` for none, JSON else."""
    if part is None:
        return "null"
    if isinstance(part, (bytes, bytearray)):
        return bytes(part).decode("utf-8", "replace")
    return part if isinstance(part, str) else values.dumps(part)


def write_messages(
    records: Iterable[Any],
    path: str | os.PathLike[str],
    layout: str = "jsonl",
    topic: str | None = None,
    *,
    console: ConsoleLayout = ConsoleLayout(),
    timestamps: Iterable[int | None] | None = None,
) -> int:
    """Write encoded records (``Record`` objects or plain values) to ``path``; returns the count.

    ``layout`` is ``jsonl`` (one JSON value per line), ``kcat`` (kcat ``-J``
    lines carrying the Kafka key and the value as JSON text), ``console``
    (the lines ``kafka-console-consumer`` prints with ``print.key=true`` and
    what ``console`` asks for: timestamp, partition, offset, headers, then key
    and value, between ``console.separator``; ``timestamps``: each record's
    CreateTime in epoch milliseconds, ``NO_TIMESTAMP`` without), ``text`` (one
    line each, UTF-8, or Latin-1 when the file name contains ``.latin-1.``),
    ``csv`` or ``parquet`` (rows). The file is written to a temporary name
    and renamed into place.

    >>> write_messages([], "never-written.jsonl", layout="xml")
    Traceback (most recent call last):
    ...
    ValueError: unknown layout 'xml'; expected one of jsonl, kcat, console, text, csv, parquet
    """
    if layout not in LAYOUTS:
        raise ValueError(f"unknown layout {layout!r}; expected one of {', '.join(LAYOUTS)}")
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
        stamps = iter(timestamps or ())
        with open(tmp, "w", encoding=encoding, newline="\n") as out:
            for number, (value, key) in enumerate(items):
                if layout == "console":
                    out.write(console_text(value, key, number, next(stamps, None), console) + "\n")
                elif layout == "text":
                    out.write(f"{value}\n")
                elif layout == "kcat":
                    record = {
                        "topic": topic or "cdckit",
                        "partition": 0,
                        "offset": number,
                        "key": None if key is None else values.dumps(key),
                        "payload": None if value is None else values.dumps(value),
                    }
                    out.write(values.dumps(record) + "\n")
                else:
                    out.write(values.dumps(value) + "\n")
    os.replace(tmp, path)
    return len(items)
