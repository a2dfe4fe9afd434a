"""Integer codes and stable orders of a narrow frame: what the finding kernels are written with.

- strings are ranked in code point order (the order Python sorts them in),
  numbers are themselves, missing values come first;
- rows are put in order by stable numpy sorts of those codes (ties keep the
  order of the frame), and a group is a run of equal leading codes;
- op and images (``CHANGE_IDENTITY``) get one DuckDB hash per row, or exact
  codes where hashes must be checked.

>>> frame = pd.DataFrame({"source": ["b", "a", "b"], "offset": [2, 1, 0]})
>>> codes = Codes(frame)
>>> rows, start = sorted_groups(codes, np.arange(3), ["source"], ["offset"])
>>> rows.tolist(), start.tolist()
([1, 2, 0], [True, True, False])
"""

from __future__ import annotations

import functools
from collections.abc import Iterable

import duckdb
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from .identity import CHANGE_IDENTITY, SNAPSHOT_PLACE, snapshot_place

__all__ = [
    "Codes",
    "MISSING",
    "ranks",
    "image_hashes",
    "stable_order",
    "run_starts",
    "sorted_groups",
    "first_alike",
    "running_top",
    "previous_in_group",
]

#: The code of a missing number: it sorts first.
MISSING = np.iinfo(np.int64).min

#: Narrow columns that are numbers (the others are texts, ranked).
_NUMBERS = ("offset", "partition", "_event_us", "_emit_us")


def ranks(values: pd.Series) -> np.ndarray:
    """Dense ranks from 1 in code point order (Python's order of strings); 0 for missing values.

    >>> ranks(pd.Series(["b", None, "a", "é", "z", "b"], dtype=object)).tolist()
    [2, 0, 1, 4, 3, 2]
    """
    array = pa.array(values, from_pandas=True)
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    if array.null_count == len(array):
        return np.zeros(len(array), np.int64)
    ranks = pc.rank(array, tiebreaker="dense").to_numpy(zero_copy_only=False).astype(np.int64)
    if array.null_count:
        ranks[array.is_null().to_numpy(zero_copy_only=False)] = 0
    return ranks


class Codes:
    """Integer codes of a narrow frame's columns (see the module notes), each computed once."""

    def __init__(self, frame: pd.DataFrame) -> None:
        self.frame = frame
        self.done: dict[str, np.ndarray] = {}

    def __call__(self, column: str, rows: np.ndarray | None = None) -> np.ndarray:
        if column not in self.done:
            values = snapshot_place(self.frame) if column == SNAPSHOT_PLACE else self.frame[column]
            if column in _NUMBERS:
                self.done[column] = values.to_numpy("int64", na_value=MISSING)
            else:
                self.done[column] = ranks(values)
        codes = self.done[column]
        return codes if rows is None else codes[rows]

    def known(self, column: str, rows: np.ndarray | None = None) -> np.ndarray:
        """Where ``column`` has a value."""
        name = f"{column} known"
        if name not in self.done:
            self.done[name] = self.frame[column].notna().to_numpy()
        return self.done[name] if rows is None else self.done[name][rows]

    def op_is(self, ops: Iterable[str], rows: np.ndarray | None = None) -> np.ndarray:
        """Where ``op`` is one of ``ops``."""
        found = self.frame["op"].isin(list(ops)).to_numpy()
        return found if rows is None else found[rows]

    def images(self, exact: bool = False) -> np.ndarray:
        """One code per :data:`CHANGE_IDENTITY` (op and images): a hash, or (``exact``) a number per distinct one."""
        name = "images exact" if exact else "images"
        if name not in self.done:
            images = self.frame[list(CHANGE_IDENTITY)]
            if exact:
                codes = (
                    images.astype(object)
                    .where(images.notna(), None)
                    .groupby(list(CHANGE_IDENTITY), dropna=False, sort=False)
                    .ngroup()
                    .to_numpy()
                )
            else:
                codes = image_hashes(images)
            self.done[name] = codes.astype(np.int64)
        return self.done[name]


def image_hashes(images: pd.DataFrame) -> np.ndarray:
    """DuckDB's hash of the columns of ``images`` per row, read from the frame without copying the texts."""
    scan = images.reset_index(drop=True).assign(_row=np.arange(len(images)))
    hashed = ", ".join(f'"{c}"' for c in images.columns)
    with _database().cursor() as con:
        con.register("images", scan)
        found = con.sql(f"SELECT _row, hash({hashed}) AS image FROM images").fetchnumpy()
        con.unregister("images")
    hashes = np.empty(len(images), np.uint64)
    hashes[found["_row"]] = found["image"]
    return hashes.view(np.int64)


@functools.cache
def _database() -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB database, opened once per process (each query uses a cursor of its own)."""
    return duckdb.connect()


def stable_order(keys: list[np.ndarray]) -> np.ndarray:
    """Positions that sort rows by ``keys`` (the first key first); ties keep their order."""
    size = len(keys[0]) if keys else 0
    packed = _packed(keys) if size else []
    if len(packed) == 1:
        return np.argsort(packed[0], kind="stable")
    return np.lexsort([np.arange(size), *packed[::-1]])


def _packed(keys: list[np.ndarray]) -> list[np.ndarray]:
    """The same order as ``keys`` in fewer keys: neighbouring keys combined while their ranges fit in int64."""
    out: list[np.ndarray] = []
    current, span = None, 1
    for key in keys:
        low, high = int(key.min()), int(key.max())
        width = high - low + 1
        if width >= 2**62:  # too wide to combine (e.g. missing numbers, coded as the lowest int64): as it is
            if current is not None:
                out.append(current)
            out.append(key)
            current, span = None, 1
        elif current is not None and span * width < 2**62:
            current, span = current * width + (key - low), span * width
        else:
            if current is not None:
                out.append(current)
            current, span = key - low, width
    if current is not None:
        out.append(current)
    return out


def run_starts(keys: list[np.ndarray]) -> np.ndarray:
    """Where a run of equal keys starts (rows already in order)."""
    start = np.zeros(len(keys[0]), bool)
    start[:1] = True
    for key in keys:
        start[1:] |= key[1:] != key[:-1]
    return start


def sorted_groups(codes: Codes, rows: np.ndarray, group: list[str], order: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """``rows`` sorted by ``group`` then ``order`` (ties in frame order), and where each group starts."""
    rows = rows[stable_order([codes(c, rows) for c in [*group, *order]])]
    return rows, run_starts([codes(c, rows) for c in group])


def first_alike(keys: list[np.ndarray]) -> np.ndarray:
    """For rows in order: the position of the first row with the same ``keys``."""
    order = stable_order(keys)
    start = run_starts([k[order] for k in keys])
    out = np.empty(len(order), np.int64)
    out[order] = order[np.maximum.accumulate(np.where(start, np.arange(len(order)), 0))]
    return out


def running_top(start: np.ndarray, value: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For rows in order: which are below the highest value before them in their group (``start`` marks
    groups), and the position of the latest row (not after this one) that holds the highest value so far."""
    size = len(value)
    if size == 0:
        return np.zeros(0, bool), np.zeros(0, np.int64)
    group = np.cumsum(start)
    high = pd.Series(value).groupby(group, sort=False).cummax().to_numpy()
    before = np.concatenate([high[:1], high[:-1]])
    below = ~start & (value < before)
    top = np.maximum.accumulate(np.where(below, -1, np.arange(size)))
    return below, top


def previous_in_group(start: np.ndarray) -> np.ndarray:
    """For rows in order: the position of the row before in the same group, -1 at a group's start."""
    return np.where(start, -1, np.arange(len(start)) - 1)
