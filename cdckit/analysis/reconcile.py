"""Reconcile: a replayed table against a snapshot of the source table, by key, row by row and cell by cell.

Two values are the same when :func:`normal` makes them equal. That one rule
serves here and in :func:`cdckit.compare`:

- null, ``None``, ``NaN``, ``pd.NA`` and ``NaT`` are one null;
- numbers compare by value, whatever carries them: ``int``, ``float``,
  ``Decimal``, numpy scalars, ``True``/``False`` (as 1/0) and number text
  (``"10.50"`` equals ``10.5``, ``1`` equals ``1.0``);
- times compare by instant: ``Timestamp``, ``datetime``, ``date`` (midnight)
  and ISO text (``"2024-01-01 00:00:00"``, ``"2024-01-01T00:00:00Z"``); a time
  without a zone is UTC;
- times of day compare by the time they name: ``datetime.time`` and text
  (``"05:44:35.183"``, PostgreSQL's ``24:00:00``); one with a zone (a
  ``time with time zone``) by the UTC time of day it names, as Debezium
  writes it;
- durations (MySQL's ``TIME``, -838:59:59 to 838:59:59) compare by their
  length: ``timedelta``, pandas ``Timedelta`` and the text MySQL writes
  (``"-838:59:59.000000"``, ``"25:00:00"``); one within a day equals the time
  of day it reaches (``Timedelta("01:00:00")`` equals ``"01:00:00"``);
- JSON text of an object or an array equals the object or list it spells;
  objects and lists compare member by member under the same rule;
- any other text compares exactly (so ``"007"`` equals ``7``: a number text
  is a number, whatever the column).

A time written as epoch milliseconds is a number, not a time: it does not
equal the ISO text of the same instant.

The snapshot may be a pandas DataFrame, a Spark DataFrame (collected with
``toPandas``: the replayed state it is compared with is a pandas frame on the
driver already, so the snapshot of the same table fits there too, and the
cell rule runs once, in Python, for both), or the path of a Parquet file or
folder or of a CSV file (read as text: the rule above makes ``"10.50"`` equal
the state's 10.5).

>>> import pandas as pd
>>> state = pd.DataFrame({"id": [1, 2, 3], "price": [10.5, 2.0, 7.25]})
>>> snapshot = pd.DataFrame({"id": ["1", "2", "4"], "price": ["10.50", "2.5", "1"]})
>>> result = reconcile(state, snapshot, key="id")
>>> print(result)
Reconciliation by id: 3 rows in the state, 3 in the snapshot: 1 matched, 1 missing, 1 extra, 1 different
  missing (in the snapshot only): ["4"]
  extra (in the state only): [3]
  different: [2] price: 2.0 in the state, '2.5' in the snapshot
"""

from __future__ import annotations

import html
import math
import os
import re
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import pandas as pd

from .. import times, values
from ..engines import is_spark, spark_export
from ..errors import CdcError
from ..python_columns import object_columns
from .replay import find_table

__all__ = ["reconcile", "Reconciliation", "ReconcileError", "TableDiff"]

#: Columns of ``Reconciliation.different``: one row per differing cell.
DIFFERENT_COLUMNS = ["key", "column", "state", "snapshot"]

#: Columns of ``Reconciliation.summary`` (one row).
SUMMARY_COLUMNS = [
    "table",
    "key",
    "state_rows",
    "snapshot_rows",
    "matched",
    "missing",
    "extra",
    "different_rows",
    "different_cells",
    "columns_only_in_state",
    "columns_only_in_snapshot",
]

_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\Z")
_CLOCK = re.compile(r"\d\d:\d\d(:\d\d(\.\d+)?)?\s*(Z|[+-]\d\d(:?\d\d(:?\d\d)?)?)?\Z")
_DURATION = re.compile(r"-?\d+:[0-5]\d:[0-5]\d(\.\d{1,9})?\Z")
_TIME = re.compile(r"-?\d{4,}-\d\d-\d\d([T ]\d\d:\d\d(:\d\d(\.\d+)?)?)?\s*(Z|[+-]\d\d(:?\d\d(:?\d\d)?)?)?( BC)?\Z")


class ReconcileError(CdcError, ValueError):
    """Bad input to :func:`reconcile` or :func:`cdckit.compare`: the message names what and what to pass."""


# --------------------------------------------------------------------------- the rule


def normal(value: Any) -> Hashable:
    """The value two cells share when they are the same (see the module notes): equal ``normal`` means same.

    >>> normal("10.50") == normal(10.5) == normal(Decimal("10.5")), normal(1) == normal(1.0)
    (True, True)
    >>> normal("2024-01-01 00:00:00") == normal(pd.Timestamp("2024-01-01", tz="UTC"))
    True
    >>> normal(float("nan")), normal(pd.NA), normal(None), normal("abc")
    (None, None, None, 'abc')
    """
    if value is None or value is pd.NA or value is pd.NaT:
        return None
    if isinstance(value, str):
        return _normal_text(value)
    if isinstance(value, (bool, np.bool_, int, np.integer)):
        return Decimal(int(value))
    if isinstance(value, (float, np.floating)):
        number = float(value)
        if math.isnan(number):
            return None
        return Decimal(repr(number)) if math.isfinite(number) else Decimal(number)
    if isinstance(value, Decimal):
        return None if value.is_nan() else value
    if isinstance(value, (datetime, np.datetime64, date)):
        return _instant(value)
    if isinstance(value, time):
        return _time_of_day(value)
    if isinstance(value, (timedelta, np.timedelta64)):
        return _duration(pd.Timedelta(value).value)
    if isinstance(value, dict):
        return ("{}",) + tuple(sorted(((str(k), normal(v)) for k, v in value.items()), key=lambda kv: kv[0]))
    if isinstance(value, (list, tuple, np.ndarray)):
        return ("[]",) + tuple(normal(v) for v in value)
    try:
        hash(value)
    except TypeError:
        return repr(value)
    return value


def _normal_text(text: str) -> Hashable:
    if _NUMBER.match(text):
        try:
            return Decimal(text)
        except InvalidOperation:  # pragma: no cover - the pattern admits only numbers
            return text
    if _TIME.match(text):
        try:
            return _text_instant(text)
        except (ValueError, OverflowError):  # no time: the text itself
            return text
    if _CLOCK.match(text):
        try:
            return ("time of day", values.time_of_day_ns(text))
        except ValueError:  # 25:00 and the like: a duration below
            pass
    if _DURATION.match(text):
        return _duration(times.duration_ns(text))
    if text[:1] in "{[" and text[-1:] in "}]":
        try:
            parsed = values.loads(text)
        except ValueError:
            return text
        if isinstance(parsed, (dict, list)):
            return normal(parsed)
    return text


def _duration(ns: int) -> Hashable:
    """A duration's normal: within a day, the time of day it reaches; else its length.

    >>> _duration(3_600_000_000_000) == normal("01:00:00"), normal("-00:00:01") == normal(timedelta(seconds=-1))
    (True, True)
    """
    if 0 <= ns < times.DAY_NS:
        return ("time of day", ns)
    return ("duration", ns)


def _text_instant(text: str) -> Hashable:
    """A time text (PostgreSQL's forms, :func:`cdckit.values.instant_ns`) as the UTC Timestamp a typed cell holds
    (in microseconds unless it needs nanoseconds, so years 1 to 9999 fit); beyond them, its instant in ns.

    >>> _text_instant("1900-06-01 08:29:08-03:30:52") == pd.Timestamp("1900-06-01T12:00:00Z")
    True
    """
    ns = values.instant_ns(text)
    try:
        if ns % 1000 == 0:
            return pd.Timestamp(np.datetime64(ns // 1000, "us")).tz_localize("UTC")
        return pd.Timestamp(np.datetime64(ns, "ns")).tz_localize("UTC")
    except (ValueError, OverflowError):
        return ("instant", ns)


def _time_of_day(value: time) -> Hashable:
    """A ``datetime.time`` as nanoseconds after midnight, a zoned one as the UTC time of day it names.

    >>> _time_of_day(time(5, 44, 35, 183000)) == normal("05:44:35.183")
    True
    """
    ns = ((value.hour * 60 + value.minute) * 60 + value.second) * 1_000_000_000 + value.microsecond * 1000
    offset = value.utcoffset()
    if offset is not None:
        ns = (ns - int(offset.total_seconds() * 1_000_000_000)) % (24 * 3600 * 1_000_000_000)
    return ("time of day", ns)


def _instant(value: Any) -> Hashable:
    """A time as a UTC Timestamp (zone-less means UTC); NaT as null."""
    stamp = pd.Timestamp(value)
    if stamp is pd.NaT:
        return None
    return stamp.tz_localize("UTC") if stamp.tzinfo is None else stamp.tz_convert("UTC")


def same(a: Any, b: Any) -> bool:
    """Whether two values are the same under :func:`normal`.

    >>> same("10.50", 10.5), same(1, "1.0"), same(None, float("nan")), same("a", "A")
    (True, True, True, False)
    """
    return normal(a) == normal(b)


def plain(value: Any) -> Any:
    """A cell as a value JSON can carry (for key texts and images): Decimal as a number, times as ISO text.

    >>> plain(Decimal("10.50")), plain(pd.Timestamp("2024-01-01", tz="UTC")), plain(np.int64(3)), plain(pd.NA)
    (10.5, '2024-01-01T00:00:00+00:00', 3, None)
    """
    if values.is_missing(value):
        return None
    if isinstance(value, Decimal):
        return values.exact_number(str(value)) if value.is_finite() else str(value)  # text when a float would round
    if isinstance(value, (datetime, date, np.datetime64)):
        return pd.Timestamp(value).isoformat()
    if isinstance(value, np.ndarray):
        return [plain(v) for v in value.tolist()]
    if isinstance(value, int) and not values.INT64_MIN <= value <= values.INT64_MAX:
        return str(value)
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):  # numpy scalars
        return value.item()
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


def json_text(value: Any) -> str:
    """A value (a row as a dict, key values as a list) as compact JSON text, cells made :func:`plain`.

    >>> json_text({"id": np.int64(3), "at": pd.Timestamp("2024-01-01", tz="UTC"), "big": 2**70})
    '{"id":3,"at":"2024-01-01T00:00:00+00:00","big":"1180591620717411303424"}'
    """
    return orjson.dumps(plain(value), default=str).decode()


def key_text(parts: Iterable[Any]) -> str:
    """Key values as a compact JSON array text, as the event frame writes keys.

    >>> key_text([103, 1]), key_text(["a", Decimal("2.50")])
    ('[103,1]', '["a",2.5]')
    """
    return json_text(list(parts))


# --------------------------------------------------------------------------- two tables by key


@dataclass
class TableDiff:
    """Two tables compared by key (see :func:`diff_tables`); ``a`` and ``b`` name the sides."""

    key: list[str]
    only_a: pd.DataFrame
    only_b: pd.DataFrame
    cells: pd.DataFrame  # key, column, a, b: one row per differing cell of paired rows
    paired: int
    different: list[tuple[int, int]]  # positions in a and b of the paired rows that differ
    columns_only_a: list[str] = field(default_factory=list)
    columns_only_b: list[str] = field(default_factory=list)

    @property
    def matched(self) -> int:
        return self.paired - len(self.different)

    @property
    def ok(self) -> bool:
        return not (
            len(self.only_a) or len(self.only_b) or len(self.cells) or self.columns_only_a or self.columns_only_b
        )


def diff_tables(a: pd.DataFrame, b: pd.DataFrame, key: Sequence[str]) -> TableDiff:
    """Rows of ``a`` and ``b`` paired by their ``key`` columns' values (under :func:`normal`), cells compared.

    Rows with the same key are paired in order (the n-th with the n-th): a
    key twice on one side and once on the other leaves one row unpaired.
    Columns on one side only are listed, and the other columns compared.

    >>> d = diff_tables(pd.DataFrame({"id": [1, 2], "x": ["a", "b"]}), pd.DataFrame({"id": [2.0], "x": ["c"]}), ["id"])
    >>> d.only_a["id"].tolist(), d.cells.values.tolist(), d.matched
    ([1], [['[2]', 'x', 'b', 'c']], 0)
    """
    key = list(key)
    common = [c for c in a.columns if c in set(b.columns) and c not in key]
    a_rows, b_rows = _rows_by_key(a, key), _rows_by_key(b, key)
    only_a: list[int] = []
    pairs: list[tuple[int, int]] = []
    for k, rows in a_rows.items():
        others = b_rows.get(k, [])
        pairs.extend(zip(rows, others))
        only_a.extend(rows[len(others) :])
    only_b = [r for k, rows in b_rows.items() for r in rows[len(a_rows.get(k, [])) :]]
    cells = []
    different: list[tuple[int, int]] = []
    a_values = {c: a[c].tolist() for c in common}
    b_values = {c: b[c].tolist() for c in common}
    a_keys = {c: a[c].tolist() for c in key}
    for i, j in sorted(pairs):
        found = [
            (column, a_values[column][i], b_values[column][j])
            for column in common
            if normal(a_values[column][i]) != normal(b_values[column][j])
        ]
        if found:
            different.append((i, j))
            text = key_text(a_keys[c][i] for c in key)
            cells += [(text, column, plain(left), plain(right)) for column, left, right in found]
    return TableDiff(
        key,
        a.iloc[sorted(only_a)].reset_index(drop=True),
        b.iloc[sorted(only_b)].reset_index(drop=True),
        object_columns(pd.DataFrame(cells, columns=["key", "column", "a", "b"])),
        len(pairs),
        different,
        [c for c in a.columns if c not in set(b.columns)],
        [c for c in b.columns if c not in set(a.columns)],
    )


def _rows_by_key(frame: pd.DataFrame, key: list[str]) -> dict[Hashable, list[int]]:
    """Row positions per normalised key, in frame order."""
    rows: dict[Hashable, list[int]] = {}
    columns = [[normal(v) for v in frame[c].tolist()] for c in key]
    for position, k in enumerate(zip(*columns) if columns else [() for _ in range(len(frame))]):
        rows.setdefault(k, []).append(position)
    return rows


# --------------------------------------------------------------------------- reconcile


class Reconciliation:
    """A replayed table against a snapshot (see :func:`reconcile`).

    ``missing``: snapshot rows whose key is not in the state; ``extra``:
    state rows whose key is not in the snapshot; ``different``: one row per
    cell that differs in rows of the same key (:data:`DIFFERENT_COLUMNS`);
    ``matched``: rows the same in every column both sides have;
    ``columns_only_in_state`` / ``columns_only_in_snapshot``: columns one
    side lacks (not compared); ``ok``: nothing of the above differs.
    """

    def __init__(self, table: str | None, diff: TableDiff) -> None:
        self.table, self.key, self._diff = table, diff.key, diff
        self.missing, self.extra = diff.only_b, diff.only_a
        self.different = diff.cells.rename(columns={"a": "state", "b": "snapshot"})[DIFFERENT_COLUMNS]
        self.matched = diff.matched
        self.columns_only_in_state, self.columns_only_in_snapshot = diff.columns_only_a, diff.columns_only_b
        self.state_rows = diff.paired + len(diff.only_a)
        self.snapshot_rows = diff.paired + len(diff.only_b)

    @property
    def ok(self) -> bool:
        return self._diff.ok

    @property
    def summary(self) -> pd.DataFrame:
        """One row: the table, its key, the row counts and the columns one side lacks (see :data:`SUMMARY_COLUMNS`)."""
        return pd.DataFrame(
            [
                [
                    self.table,
                    ", ".join(self.key),
                    self.state_rows,
                    self.snapshot_rows,
                    self.matched,
                    len(self.missing),
                    len(self.extra),
                    len(self._diff.different),
                    len(self.different),
                    ", ".join(self.columns_only_in_state),
                    ", ".join(self.columns_only_in_snapshot),
                ]
            ],
            columns=SUMMARY_COLUMNS,
        )

    def frames(self) -> dict[str, pd.DataFrame]:
        """The result's tables by name: ``summary``, ``missing``, ``extra``, ``different`` (for writing out)."""
        return {"summary": self.summary, "missing": self.missing, "extra": self.extra, "different": self.different}

    def _headline(self) -> str:
        where = f" of {self.table}" if self.table else ""
        return (
            f"Reconciliation{where} by {', '.join(self.key)}: {self.state_rows} rows in the state, "
            f"{self.snapshot_rows} in the snapshot: {self.matched} matched, {len(self.missing)} missing, "
            f"{len(self.extra)} extra, {len(self._diff.different)} different"
        )

    def __str__(self) -> str:
        lines = [self._headline() + (" (ok)" if self.ok else "")]
        if self.columns_only_in_state:
            lines.append(f"  columns only in the state: {', '.join(self.columns_only_in_state)}")
        if self.columns_only_in_snapshot:
            lines.append(f"  columns only in the snapshot: {', '.join(self.columns_only_in_snapshot)}")
        lines += _listed("missing (in the snapshot only)", self._keys(self.missing))
        lines += _listed("extra (in the state only)", self._keys(self.extra))
        lines += [
            f"  different: {r.key} {r.column}: {r.state!r} in the state, {r.snapshot!r} in the snapshot"
            for r in self.different.head(_SHOWN).itertuples()
        ]
        if len(self.different) > _SHOWN:
            lines.append(f"  ... {len(self.different) - _SHOWN} more differing cells (see .different)")
        return "\n".join(lines)

    __repr__ = __str__

    def _keys(self, rows: pd.DataFrame) -> list[str]:
        return [key_text(parts) for parts in zip(*(rows[c].tolist() for c in self.key))]

    def _repr_html_(self) -> str:
        parts = [f"<p><b>{html.escape(self._headline())}</b>{' &#10003;' if self.ok else ''}</p>"]
        for label, names in (
            ("columns only in the state", self.columns_only_in_state),
            ("columns only in the snapshot", self.columns_only_in_snapshot),
        ):
            if names:
                parts.append(f"<p>{label}: {html.escape(', '.join(names))}</p>")
        for label, frame in (
            ("missing: in the snapshot, not in the state", self.missing),
            ("extra: in the state, not in the snapshot", self.extra),
            ("different cells", self.different),
        ):
            if len(frame):
                parts.append(f"<p>{label} ({len(frame)})</p>{html_table(frame)}")
        return "".join(parts)


_SHOWN = 10


def _listed(label: str, keys: list[str]) -> list[str]:
    if not keys:
        return []
    more = f" ... and {len(keys) - _SHOWN} more" if len(keys) > _SHOWN else ""
    return [f"  {label}: {', '.join(keys[:_SHOWN])}{more}"]


def html_table(frame: pd.DataFrame, rows: int = 20) -> str:
    """The first ``rows`` rows of ``frame`` as an HTML table, every header and cell escaped."""
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in frame.columns)
    body = "".join(
        "<tr>" + "".join(f"<td>{html.escape(_cell(v))}</td>" for v in row) + "</tr>"
        for row in frame.head(rows).itertuples(index=False)
    )
    more = f"<p>... {len(frame) - rows} more rows</p>" if len(frame) > rows else ""
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>{more}"


def _cell(value: Any) -> str:
    value = plain(value)
    if value is None:
        return ""
    return value if isinstance(value, str) else json_text(value)


def reconcile(
    state: Any, snapshot: Any, *, table: str | None = None, key: str | Sequence[str] | None = None
) -> Reconciliation:
    """The replayed ``state`` against a ``snapshot`` of the source table: rows missing, extra and different, by key.

    ``state``: one table's DataFrame from :func:`cdckit.materialize`, or the
    whole result with ``table=`` naming one (``"database.table"`` or the bare
    name; not needed when there is only one). ``snapshot``: a pandas or Spark
    DataFrame, or the path of a Parquet file or folder or a CSV file. ``key``:
    the key column(s); by default the key columns the events named, which
    ``materialize`` keeps on the state. Values are compared under
    :func:`normal` (see the module notes).

    >>> import cdckit
    >>> states = cdckit.materialize(cdckit.read(cdckit.samples.path("canal/shop")))
    >>> snapshot = states["shop.customers"].iloc[1:].copy()
    >>> snapshot.loc[snapshot["id"] == 3, "tier"] = "gold"
    >>> result = reconcile(states, snapshot, table="customers")
    >>> result.ok, result.extra["id"].tolist(), result.different[["key", "column", "snapshot"]].values.tolist()
    (False, [1], [['[3]', 'tier', 'gold']])
    """
    name, frame = _state_table(state, table)
    snap = _snapshot_frame(snapshot)
    columns = _key_columns(key, frame, state, name)
    for side, data in (("state", frame), ("snapshot", snap)):
        missing = [c for c in columns if c not in data.columns]
        if missing:
            raise ReconcileError(
                f"key column {', '.join(missing)} is not in the {side}"
                f"{f' of {name}' if name else ''}; its columns: {', '.join(map(str, data.columns))}"
            )
    return Reconciliation(name, diff_tables(frame, snap, columns))


def _state_table(state: Any, table: str | None) -> tuple[str | None, pd.DataFrame]:
    """The table's name (when known) and its DataFrame."""
    if isinstance(state, pd.DataFrame):
        return table, state
    if not isinstance(state, dict):
        raise ReconcileError(
            f"state must be a DataFrame or what cdckit.materialize returns, not {type(state).__name__}"
        )
    if table is None:
        if len(state) != 1:
            raise ReconcileError(
                f"the state holds {len(state)} tables: pass table= (one of {', '.join(sorted(state))})"
            )
        table = next(iter(state))
    try:
        name = find_table(state, table)
    except KeyError as err:
        raise ReconcileError(err.args[0]) from None
    return name, state[name]


def _key_columns(key: str | Sequence[str] | None, frame: pd.DataFrame, state: Any, name: str | None) -> list[str]:
    if key is not None:
        return [key] if isinstance(key, str) else [str(k) for k in key]
    known = frame.attrs.get("key_columns") or getattr(state, "key_columns", {}).get(name)
    if known:
        return list(known)
    raise ReconcileError(
        f"no key columns are known for {name or 'this table'}: pass key= "
        f"(one or more of {', '.join(map(str, frame.columns))})"
    )


def _snapshot_frame(snapshot: Any) -> pd.DataFrame:
    """A pandas frame from a pandas or Spark frame or a Parquet/CSV path (CSV values kept as text)."""
    if isinstance(snapshot, pd.DataFrame):
        return snapshot
    if is_spark(snapshot):
        return spark_export().to_pandas(snapshot)
    if not isinstance(snapshot, (str, os.PathLike)):
        raise ReconcileError(
            f"snapshot must be a DataFrame (pandas or Spark) or a path to Parquet or CSV, not {type(snapshot).__name__}"
        )
    path = Path(snapshot)
    if not path.exists():
        raise ReconcileError(f"snapshot {path} does not exist")
    suffixes = [s.lower() for s in path.suffixes]
    try:
        if ".csv" in suffixes:
            return pd.read_csv(path, dtype=str, keep_default_na=False, na_values=[""])
        if ".parquet" in suffixes or ".pq" in suffixes or path.is_dir():
            return pd.read_parquet(path)
    except Exception as err:  # any reader's failure: name the file and what went wrong
        raise ReconcileError(f"cannot read snapshot {path}: {err}") from err
    raise ReconcileError(f"snapshot {path}: unknown suffix (give a .parquet or .csv file, or a Parquet folder)")
