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
from typing import Any, Iterable

from .. import values

__all__ = ["LAYOUTS", "write_messages"]

#: The layouts :func:`write_messages` writes.
LAYOUTS = ("jsonl", "kcat", "text", "csv", "parquet")


def write_messages(records: Iterable[Any], path: str | os.PathLike[str], layout: str = "jsonl",
                   topic: str | None = None) -> int:
    """Write encoded records (``Record`` objects or plain values) to ``path``; returns the count.

    ``layout`` is ``jsonl`` (one JSON value per line), ``kcat`` (kcat ``-J``
    lines carrying the Kafka key and the value as JSON text), ``text`` (one
    line each, UTF-8, or Latin-1 when the file name contains ``.latin-1.``),
    ``csv`` or ``parquet`` (rows). The file is written to a temporary name
    and renamed into place.

    >>> write_messages([], "never-written.jsonl", layout="xml")
    Traceback (most recent call last):
    ...
    ValueError: unknown layout 'xml'; expected one of jsonl, kcat, text, csv, parquet
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
        with open(tmp, "w", encoding=encoding, newline="\n") as out:
            for number, (value, key) in enumerate(items):
                if layout == "text":
                    out.write(f"{value}\n")
                elif layout == "kcat":
                    record = {"topic": topic or "cdckit", "partition": 0, "offset": number,
                              "key": None if key is None else values.dumps(key),
                              "payload": None if value is None else values.dumps(value)}
                    out.write(values.dumps(record) + "\n")
                else:
                    out.write(values.dumps(value) + "\n")
    os.replace(tmp, path)
    return len(items)
