"""Captures shaped as peers' test files are: a licence header, a cut first record, comments and blank lines
between the messages, a trailing cut record; in each container a capture comes in (shared by
tests/test_peer_captures.py and tests/test_spark.py)."""

from __future__ import annotations

import json
from pathlib import Path

HEADERS = {
    "hash": "# Licensed to the Apache Software Foundation (ASF) under one\n# or more contributor agreements.\n#\n",
    "dashes": "-- Licensed under the Apache License, Version 2.0\n-- you may not use this file except in compliance\n",
    "block": "/*\n * Licensed to the Apache Software Foundation (ASF) under one\n * or more contributor agreements.\n */\n",
    "slashes": "// Copyright the authors\n// SPDX-License-Identifier: Apache-2.0\n",
}
SHAPES = ("jsonl", "pretty", "kcat", "console")


def change(i: int, source_ms: int = 1_700_000_000_000) -> dict:
    """A Debezium change of row ``i`` (an insert; its source time ``source_ms`` + i)."""
    return {"before": None, "after": {"id": i, "name": f"row {i}"}, "op": "c", "ts_ms": source_ms + i + 5,
            "source": {"db": "shop", "table": "items", "ts_ms": source_ms + i, "file": "binlog.1", "pos": 100 + i}}


def _record(shape: str, i: int, value: dict) -> str:
    if shape == "jsonl":
        return json.dumps(value)
    if shape == "pretty":
        return json.dumps(value, indent=2)
    if shape == "kcat":
        return json.dumps({"topic": "shop.items", "partition": 0, "offset": i, "tstype": "create", "ts": 1,
                           "broker": 1, "key": json.dumps({"id": i}), "payload": json.dumps(value)})
    return json.dumps({"id": i}) + "\t" + json.dumps(value)


def peer_capture(path: Path, shape: str, header: str = "hash", count: int = 6) -> tuple[Path, int]:
    """Write a capture of ``count`` whole changes in ``shape`` to ``path``, the way peers' files are: a licence
    header and a blank line, the cut tail of a record, a comment and blank lines in the middle, a cut record
    at the end. Returns the path and how many lines there are that are not messages (each quarantined)."""
    whole = [_record(shape, i, change(i)) for i in range(1, count + 1)]
    cut_head = whole[0][len(whole[0]) // 2 :] if shape != "pretty" else "\n".join(whole[0].split("\n")[-3:])
    parts = [HEADERS[header] + "\n" + cut_head]
    bad = HEADERS[header].count("\n") + cut_head.count("\n") + 1
    for i, record in enumerate(whole):
        parts.append(record)
        if i == len(whole) // 2:
            parts.append("# a comment between the records\n")
            bad += 1
    parts.append(whole[-1][: len(whole[-1]) // 2])
    bad += 1
    path.write_text("\n".join(parts))
    return path, bad
