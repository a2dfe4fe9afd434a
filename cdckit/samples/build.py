"""Write the shop scenario in every dialect with the dialect's own encoder.

Run ``python -m cdckit.samples.build`` after changing an encoder or the
scenario; a test checks that the committed files match what this writes.

>>> sorted(SHOP_FILES)[:2]
['arcion', 'datahub_tuple']
"""

from __future__ import annotations

import gzip
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import pandas as pd

from ..dialects import registry
from ..io import write_messages
from . import DATA
from .shop import shop_events

__all__ = ["SHOP_FILES", "shop_file_names", "build_shop"]

#: Dialects whose shop files are not one plain ``shop.jsonl``: (file name, layout). The ``console`` layout
#: is what ``kafka-console-consumer`` prints with print.key, print.timestamp (the record's CreateTime: the
#: event's emit time), print.partition and print.offset.
SHOP_FILES: dict[str, list[tuple[str, str]]] = {
    "debezium": [("shop.jsonl", "kcat"), ("console_keys.txt", "console")],
    "arcion": [("shop.jsonl", "kcat")],
    "universe": [("shop.txt", "text")],
    "datahub_tuple": [("shop.jsonl", "jsonl"), ("shop.csv", "csv"), ("shop.parquet", "parquet")],
    "maxwell": [("shop.jsonl.gz", "jsonl")],
    "debezium_mongodb": [("shop.jsonl", "kcat")],
    "debezium_flat": [("shop.jsonl", "kcat")],
    "pg_test_decoding": [("shop.txt", "text")],
}


def shop_file_names(dialect: str) -> list[tuple[str, str]]:
    """(file name, layout) of the shop files of ``dialect``."""
    return SHOP_FILES.get(dialect, [("shop.jsonl", "jsonl")])


def build_shop(target: Path = DATA, dialects: list[str] | None = None) -> list[Path]:
    """Write the shop files of each dialect under ``target``; returns the paths."""
    events = shop_events()
    written = []
    for name in dialects or registry.names():
        dialect = registry.create(name)
        if not dialect.can_encode():
            continue
        records = list(dialect.encode(events))
        created = _created(events) if len(records) == len(events) else None
        folder = target / name
        folder.mkdir(parents=True, exist_ok=True)
        for file_name, layout in shop_file_names(name):
            path = folder / file_name
            if file_name.endswith(".gz"):
                plain = folder / file_name[:-3]
                write_messages(records, plain, layout, topic=f"shop.{name}", timestamps=created)
                with open(plain, "rb") as src, gzip.GzipFile(path, "wb", mtime=0) as dst:
                    shutil.copyfileobj(src, dst)
                os.remove(plain)
            else:
                write_messages(records, path, layout, topic=f"shop.{name}", timestamps=created)
            written.append(path)
    return written


def _created(events: Any) -> list[int | None]:
    """Each event's Kafka CreateTime for the console layout: its emit time (else its event time), epoch ms."""
    times = events["emit_time"].fillna(events["event_time"])
    return [None if pd.isna(t) else int(t.timestamp() * 1000) for t in times]


if __name__ == "__main__":
    for written_path in build_shop(dialects=sys.argv[1:] or None):
        print(written_path)
