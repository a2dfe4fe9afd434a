"""Building the canonical frame: :class:`FrameBuilder` gathers events (with the positions of their messages)
into Arrow and pandas frames of :mod:`cdckit.frame`'s columns, :class:`QuarantineBuilder` the quarantined
messages, and :func:`rows_inserted` places rows among others.

>>> from cdckit.frame import Event
>>> b = FrameBuilder()
>>> b.add(Event(op="delete", op_raw="d", table="t", before='{"id":1}'), "maxwell", "<string>", 3)
>>> b.to_arrow().column("offset").to_pylist(), len(b)
([3], 1)
>>> q = QuarantineBuilder()
>>> q.add("f.jsonl", 7, None, 8, "canal", "not JSON", "{", "damaged_input")
>>> q.to_pandas()[["offset", "line", "reason_code"]].values.tolist()
[[7, 8, 'damaged_input']]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from .frame import (
    ARROW_SCHEMA,
    COLUMNS,
    PANDAS_TYPES,
    QUARANTINE_SCHEMA,
    Event,
    arrow_array,
    arrow_to_pandas,
    encodes_as_utf8,
    event_row,
)
from .values import INT64_MAX, INT64_MIN

__all__ = ["FrameBuilder", "QuarantineBuilder", "rows_inserted"]


def rows_inserted(table: pa.Table, rows: pa.Table, positions: Any) -> pa.Table:
    """``table`` with each row of ``rows`` inserted before the row of ``table`` its position names
    (ascending positions; several at one position keep their order), in one Arrow ``take``.

    >>> t = pa.table({"x": [1, 2, 3]})
    >>> rows_inserted(t, pa.table({"x": [9, 8]}), [1, 3]).column("x").to_pylist()
    [1, 9, 2, 3, 8]
    """
    if not rows.num_rows:
        return table
    order = np.insert(np.arange(table.num_rows), positions, table.num_rows + np.arange(rows.num_rows))
    return pa.concat_tables([table, rows]).take(order)


class FrameBuilder:
    """Collects events with their message positions and builds Arrow or pandas frames.

    Each event is kept as a tuple of :data:`EVENT_FIELDS` (from an
    :class:`Event` with :meth:`add`, or given directly by a dialect's batch
    decoder with :meth:`add_row`). Every :data:`SEAL_ROWS` events the tuples
    become an Arrow table, so that memory holds few Python objects at a time.
    """

    #: Events held as Python tuples before they are turned into Arrow.
    SEAL_ROWS = 16_384

    def __init__(self) -> None:
        self._tables: list[pa.Table] = []
        self._sealed = 0
        self._rows: list[tuple] = []
        self._offsets: list[int] = []
        # (dialect, source, partition, count): the three columns that rarely change, run-length coded
        self._runs: list[list[Any]] = []

    def __len__(self) -> int:
        return self._sealed + len(self._rows)

    def add(self, event: Event, dialect: str, source: str, offset: int, partition: int | None = None) -> None:
        """Append one event with the position of the message it came from."""
        self.add_row(event_row(event), dialect, source, offset, partition)

    def add_row(self, row: tuple, dialect: str | None, source: str, offset: int, partition: int | None = None) -> None:
        """Append one event given as a tuple of :data:`EVENT_FIELDS` values."""
        self._rows.append(row)
        self._offsets.append(offset)
        self._count(dialect, source, partition, 1)
        if len(self._rows) >= self.SEAL_ROWS:
            self._seal()

    def add_rows(
        self, rows: list[tuple], dialect: str, source: str, offsets: Any, partition: int | None = None
    ) -> None:
        """Append many events at once (``offsets``: one per row, any iterable of int)."""
        self._rows.extend(rows)
        self._offsets.extend(offsets)
        self._count(dialect, source, partition, len(rows))
        if len(self._rows) >= self.SEAL_ROWS:
            self._seal()

    def add_table(
        self, table: pa.Table, dialect: str, source: str, offsets: Any, partition: int | list[int | None] | None = None
    ) -> None:
        """Append events already in Arrow (an :func:`event_table`; ``offsets``: one per row; ``partition``: one
        for every row, or a list of one per row)."""
        self._seal()
        count = table.num_rows
        front = [
            pa.array([dialect] * count, pa.string()),
            pa.array([source] * count, pa.string()),
            pa.array(offsets if isinstance(offsets, list) else list(offsets), pa.int64()),
            pa.array(partition if isinstance(partition, list) else [partition] * count, pa.int64()),
        ]
        self._tables.append(pa.Table.from_arrays(front + table.columns, schema=ARROW_SCHEMA))
        self._sealed += count

    def add_frame(self, table: pa.Table) -> None:
        """Append events already in the frame's Arrow form (a table with :data:`ARROW_SCHEMA`)."""
        self._seal()
        self._tables.append(table)
        self._sealed += table.num_rows

    def _count(self, dialect: str | None, source: str, partition: int | None, count: int) -> None:
        runs = self._runs
        if runs:
            last = runs[-1]
            if last[0] == dialect and last[1] == source and last[2] == partition:
                last[3] += count
                return
        runs.append([dialect, source, partition, count])

    def _seal(self) -> None:
        if self._rows:
            table = _table(self._rows, self._offsets, self._runs)
            self._tables.append(table)
            self._sealed += table.num_rows
            self._rows, self._offsets, self._runs = [], [], []

    def to_arrow(self) -> pa.Table:
        """The events gathered so far as an Arrow table with :data:`ARROW_SCHEMA`."""
        self._seal()
        if not self._tables:
            return ARROW_SCHEMA.empty_table()
        return self._tables[0] if len(self._tables) == 1 else pa.concat_tables(self._tables)

    def take(self, count: int) -> pa.Table:
        """The first ``count`` events as an Arrow table, removed from the builder."""
        table = self.to_arrow()
        if table.num_rows and table.column(0).num_chunks > 8:  # many small batches: one piece per column
            table = table.combine_chunks()
        head, rest = table.slice(0, count), table.slice(count)
        self._tables = [rest] if rest.num_rows else []
        self._sealed = rest.num_rows
        return head

    def to_pandas(self) -> pd.DataFrame:
        """The events gathered so far as a canonical pandas frame."""
        return arrow_to_pandas(self.to_arrow())

    def clear(self) -> None:
        self._tables, self._sealed = [], 0
        self._rows, self._offsets, self._runs = [], [], []


def _table(rows: list[tuple], offsets: list[int], runs: list[list[Any]]) -> pa.Table:
    if not rows:
        return ARROW_SCHEMA.empty_table()
    arrays = [
        _repeated([(r[0], r[3]) for r in runs], pa.string()),
        _repeated([(r[1], r[3]) for r in runs], pa.string()),
        pa.array(offsets, pa.int64()),
        _repeated([(r[2], r[3]) for r in runs], pa.int64()),
    ]
    arrays += [arrow_array(values, typ) for values, (_, typ, _) in zip(zip(*rows), COLUMNS[4:])]
    return pa.Table.from_arrays(arrays, schema=ARROW_SCHEMA)


def _repeated(runs: list[tuple[Any, int]], typ: pa.DataType) -> pa.Array:
    """An array of values each repeated its count times."""
    values: list[Any] = []
    for value, count in runs:
        values.extend([value] * count)
    return pa.array(values, typ)


class QuarantineBuilder:
    """Collects quarantined messages: source, offset, partition, line, dialect, reason, reason_code, raw.

    ``line`` is the 1-based line where the message starts in a text file
    (None for other inputs); ``dialect`` is the dialect that was decoding.
    """

    def __init__(self) -> None:
        self.rows: list[
            tuple[str | None, int | None, int | None, int | None, str | None, str | None, str, str | None]
        ] = []

    def __len__(self) -> int:
        return len(self.rows)

    def add(
        self,
        source: str,
        offset: int,
        partition: int | None,
        line: int | None,
        dialect: str | None,
        reason: str,
        raw: str,
        reason_code: str,
    ) -> None:
        self.rows.append(
            (
                _clean_text(source),
                _clean_int(offset),
                _clean_int(partition),
                _clean_int(line),
                _clean_text(dialect),
                _clean_text(reason),
                reason_code,
                _clean_text(raw),
            )
        )

    def to_pandas(self) -> pd.DataFrame:
        columns: list[Sequence[Any]] = list(zip(*self.rows)) if self.rows else [[] for _ in QUARANTINE_SCHEMA]
        arrays = [pa.array(list(values), field.type) for values, field in zip(columns, QUARANTINE_SCHEMA)]
        table = pa.Table.from_arrays(arrays, schema=QUARANTINE_SCHEMA)
        return table.to_pandas(types_mapper=PANDAS_TYPES.get)


def _clean_text(value: Any) -> str | None:
    """Any value as text Arrow can hold: lone surrogates escaped, other kinds written out."""
    if value is None:
        return None
    text = value if isinstance(value, str) else str(value)
    if text.isascii() or encodes_as_utf8(text):
        return text
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _clean_int(value: Any) -> int | None:
    return value if value.__class__ is int and INT64_MIN <= value <= INT64_MAX else None
