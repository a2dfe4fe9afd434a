"""The tasks of a Spark read of files: one per file, or per range of lines of a large JSON Lines / text file.

Each file's dialect is detected on the driver from its first messages; large
files are cut at line ends without being read (:func:`file_units`), and the
offset and line number each range starts at are counted in Spark tasks
(:func:`placed_units`). :mod:`cdckit.spark.engine` decodes the units.
"""

from __future__ import annotations

import itertools
import math
import os
from collections.abc import Iterator
from typing import Any

import pyarrow as pa

from ..dialects import registry
from ..dialects.options import DialectOptions
from ..errors import UnknownDialectError
from ..io import (
    count_messages,
    expand_paths,
    file_container,
    file_messages,
    is_gzip,
    line_cuts,
    line_ranges,
    text_encoding,
)
from ..reading.detect import choose_for_read

__all__ = ["file_units", "placed_units"]


def file_units(
    path: Any,
    dialect: str | None,
    options: DialectOptions,
    container: str | None,
    split_bytes: int,
    split_messages: int | None,
    sample: int,
    parallelism: int = 1,
) -> list[dict[str, Any]]:
    """The tasks of a read: one per file, or per range of lines of a large JSON Lines / text file.

    A file cut in pieces is cut into a multiple of ``parallelism`` pieces of
    about the same size, so that no core waits for a lone last piece. The
    cuts are made at line ends without reading the file (:func:`cdckit.io.line_cuts`):
    a range after the first has ``first_offset`` and ``first_line`` None
    until its file's earlier ranges are counted (:func:`placed_units`).
    """
    units = []
    all_dialects = registry.all_dialects(options=options)
    for name in expand_paths(os.fspath(path)):
        kind = file_container(name, container, options.key_separator)
        found, unknown = dialect, None
        if found is None:
            messages = file_messages(name, kind, options.key_separator)
            head = list(itertools.islice(messages, sample))
            messages.close()
            detection = choose_for_read(head, all_dialects)
            if isinstance(detection, UnknownDialectError):
                found, unknown = None, detection.brief
            else:
                found = detection.dialect
        unit = {
            "path": name,
            "container": kind,
            "dialect": found,
            "unknown": unknown,
            "start": 0,
            "end": -1,
            "first_offset": 0,
            "first_line": 1,
            "encoding": None,
            "each": dialect is None,
        }
        readable = os.access(name, os.R_OK)
        if kind == "text" and readable:
            unit["encoding"] = text_encoding(name)
        size = os.path.getsize(name)
        splittable = (
            readable
            and size > 0
            and kind in ("jsonl", "text")
            and not is_gzip(name)
            and not registry.flag(found, "whole_files")
        )
        ranges: list[tuple] = []
        if splittable and (split_messages or size > split_bytes):
            pieces = math.ceil(math.ceil(size / split_bytes) / parallelism) * parallelism
            try:
                ranges = (
                    line_ranges(name, math.ceil(size / pieces), split_messages)
                    if split_messages
                    else [
                        (start, end, None if number else 0, None if number else 1)
                        for number, (start, end) in enumerate(line_cuts(name, math.ceil(size / pieces)))
                    ]
                )
            except OSError:  # unreadable after all: one task, whose read quarantines it
                ranges = []
        for start, end, first_offset, first_line in ranges:
            units.append(dict(unit, start=start, end=end, first_offset=first_offset, first_line=first_line))
        if not ranges:
            units.append(unit)
    return units


def placed_units(spark: Any, units: list[dict[str, Any]], parallelism: int = 1) -> list[dict[str, Any]]:
    """``units`` with the offset and line number of each range's first message: the ranges of a file but its
    last are counted in Spark tasks (one job of at most ``parallelism`` tasks, each counting a run of ranges
    in C), and each range starts where the counts of its file's earlier ranges end. Nothing is read on the
    driver.

    >>> placed_units(None, [{"path": "a", "first_offset": 0, "first_line": 1}])  # nothing to count: no job
    [{'path': 'a', 'first_offset': 0, 'first_line': 1}]
    """
    counted = [
        index for index, unit in enumerate(units) if index + 1 < len(units) and units[index + 1]["first_offset"] is None
    ]
    if not counted:
        return units
    ranges = [(units[index]["path"], units[index]["start"], units[index]["end"]) for index in counted]
    tasks = min(len(ranges), max(1, parallelism))  # a task costs tens of ms: a run of ranges each
    runs = [ranges[task * len(ranges) // tasks : (task + 1) * len(ranges) // tasks] for task in range(tasks)]
    rows = spark.range(0, tasks, 1, tasks).mapInArrow(_range_counter(runs), "messages long, lines long").collect()
    counts = dict(zip(counted, rows))
    placed: list[dict[str, Any]] = []
    for index, unit in enumerate(units):
        if unit["first_offset"] is None:
            before, found = placed[-1], counts[index - 1]
            unit = dict(
                unit,
                first_offset=before["first_offset"] + found["messages"],
                first_line=before["first_line"] + found["lines"],
            )
        placed.append(unit)
    return placed


def _range_counter(runs: list[list[tuple[str, int, int]]]):
    """The task function of :func:`placed_units`: ``(messages, lines)`` of each range of ``runs[i]``, in order, for
    each ``i`` of its input (a ``spark.range`` column, in order)."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            found = [count_messages(*piece) for index in batch.column(0).to_pylist() for piece in runs[index]]
            yield pa.RecordBatch.from_arrays(
                [pa.array([m for m, _ in found], pa.int64()), pa.array([n for _, n in found], pa.int64())],
                names=["messages", "lines"],
            )

    return run
