"""Typed tables: one table's changes as typed columns, the typing replay shares, and a column profile.

Each column of a table gets one kind (:mod:`cdckit.column_types`):

- the latest declaration of the column in ``cdckit.column_types_of(events)``
  (what the dialect said: Canal's MySQL types, Debezium's schema...). When a
  column's declared type changed during the capture, the last one types every
  value of it; an earlier value that does not fit it is null and reported;
- else the kind inferred from the values (:func:`cdckit.column_types.infer_kind`):
  for :func:`table` and :func:`profile` every image value of the column, for
  :func:`cdckit.materialize` and :func:`cdckit.scd2` the values they return;
- ``types={column: kind}`` given by the caller overrides both.

Typing never turns a value into null: a value that does not fit its column's
kind (``infinity`` in a timestamp column, text in an ``int`` column, a decimal
wider than its declared type) stays as the capture wrote it, and its column
becomes an ``object`` column holding the typed values of the others and that
value (the common case, where every value fits, keeps the typed dtypes below).
Each such value is reported, never fatal: the result's ``attrs["type_problems"]`` holds one record per such
value (a list of dicts of :data:`TYPE_PROBLEM_COLUMNS`; :func:`problems_frame`
makes it a frame. Not a frame itself: pandas compares ``attrs`` when it
concatenates, and a frame there breaks ``concat`` and even ``repr``). In pandas, a column's values keep
their Arrow type: ``int`` is ``Int64``, ``float`` ``float64``, ``bool``
``boolean``, text kinds ``object`` (``str``), ``timestamp`` ``datetime64[us|ns, UTC]`` (microseconds
unless a value needs nanoseconds, so years 1 to 9999 fit),
and ``decimal``, ``date`` and ``time`` are ``pd.ArrowDtype`` columns
(``decimal128``, ``decimal256`` past 38 digits, ``date32``, ``time64``: exact, written as such to
Parquet); a decimal of more than 76 digits is its exact text.

>>> import cdckit
>>> events = cdckit.read(cdckit.samples.path("canal/shop"))
>>> customers = table(events, "customers")
>>> list(customers.columns[:8])
['op', 'key', 'seq', 'event_time', 'source', 'offset', 'id', 'name']
>>> str(customers["id"].dtype), str(customers["balance"].dtype)
('Int64', 'float64')
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from .. import values
from ..capture import Capture, column_types_of, events_of, plain
from ..column_types import infer_kind, is_kind, typed_array
from ..frame import REPLAY_OPS, find_table, table_names
from ..python_columns import object_column, object_columns
from ..row_images import parse_image

__all__ = [
    "table",
    "declared_types",
    "typed_records",
    "typed_texts",
    "to_pandas",
    "with_misfits",
    "problems_frame",
    "profile",
    "TYPE_PROBLEM_COLUMNS",
    "META_COLUMNS",
    "PROFILE_COLUMNS",
]

#: Columns of ``attrs["type_problems"]``: where a value that did not fit its kind was, and why.
TYPE_PROBLEM_COLUMNS = ["table", "column", "key", "source", "offset", "value", "reason"]

#: The columns :func:`table` puts before the source columns.
META_COLUMNS = ["op", "key", "seq", "event_time", "source", "offset"]

#: Columns of :func:`profile`.
PROFILE_COLUMNS = [
    "table",
    "column",
    "kind",
    "declared",
    "values",
    "null_rate",
    "distinct",
    "min",
    "max",
    "updates_compared",
    "change_rate",
]


# --------------------------------------------------------------------------- declarations


def declared_types(events: pd.DataFrame | Capture) -> dict[str, dict[str, str]]:
    """``{table: {column: kind}}`` of the declarations a read kept (a capture's, or the events' ``attrs``);
    see :func:`declared_kinds`."""
    return declared_kinds(column_types_of(events))


def declared_kinds(frame: pd.DataFrame | None) -> dict[str, dict[str, str]]:
    """``{table: {column: kind}}``: the latest declared kind of each column, in the order the latest
    declaration of the table lists them (``frame``: :data:`cdckit.column_types.TYPE_COLUMNS`); empty when
    there is none.

    >>> from cdckit.column_types import TYPE_COLUMNS
    >>> declared_kinds(pd.DataFrame([("shop.t", "id", "int", "int", "f", 0),
    ...     ("shop.t", "price", "decimal(10,2)", "decimal(10,2)", "f", 0),
    ...     ("shop.t", "price", "decimal(12,2)", "decimal(12,2)", "f", 7)], columns=list(TYPE_COLUMNS)))
    {'shop.t': {'id': 'int', 'price': 'decimal(12,2)'}}
    """
    if not isinstance(frame, pd.DataFrame) or frame.empty or not {"table", "column", "kind"} <= set(frame.columns):
        return {}
    out: dict[str, dict[str, str]] = {}
    for name, column, kind in frame[["table", "column", "kind"]].itertuples(index=False):
        if not isinstance(name, str) or not isinstance(column, str) or not is_kind(kind):
            continue
        kinds = out.setdefault(name, {})
        kinds.pop(column, None)
        kinds[column] = kind
    return out


# --------------------------------------------------------------------------- typing rows


def to_pandas(array: pa.Array | pa.ChunkedArray) -> pd.Series:
    """An Arrow column as the pandas column the typed frames use (see the module docstring).

    >>> to_pandas(pa.array([1, None])).dtype, to_pandas(pa.array(["a", None])).tolist()
    (Int64Dtype(), ['a', None])
    """
    kind = array.type
    if pa.types.is_integer(kind):
        return pd.Series(array.to_pandas(types_mapper={kind: pd.Int64Dtype()}.get), dtype="Int64")
    if pa.types.is_boolean(kind):
        return pd.Series(array.to_pandas(types_mapper={kind: pd.BooleanDtype()}.get), dtype="boolean")
    if pa.types.is_decimal(kind) or pa.types.is_date(kind) or pa.types.is_time(kind):
        return pd.Series(pd.array(array, dtype=pd.ArrowDtype(kind)))
    if pa.types.is_timestamp(kind):
        return pd.Series(array.to_pandas(coerce_temporal_nanoseconds=False))
    return object_column(pd.Series(array.to_pandas()))


def typed_records(
    rows: Sequence[Mapping[str, Any] | None],
    columns: Sequence[str],
    table: str,
    *,
    declared: Mapping[str, str] | None = None,
    keys: Sequence[Any] | None = None,
    where: Sequence[tuple[Any, Any]] | None = None,
    kinds: Mapping[str, str] | None = None,
) -> tuple[pd.DataFrame, list[dict[str, Any]]]:
    """Row images (dicts of JSON values; a missing column or row is null) as a typed frame of ``columns``,
    and the problem rows of the values that did not fit (:data:`TYPE_PROBLEM_COLUMNS`).

    A column's kind: ``kinds`` (already chosen), else ``declared``, else inferred
    from these values. ``keys`` and ``where`` (source, offset) per row name the problems.

    >>> frame, problems = typed_records([{"id": 1, "d": "2024-05-01"}, {"id": 2, "d": "soon"}], ["id", "d"], "t",
    ...                                 declared={"d": "date"}, keys=["[1]", "[2]"])
    >>> frame["d"].tolist(), [(p["key"], p["value"], p["reason"]) for p in problems]
    ([datetime.date(2024, 5, 1), 'soon'], [('[2]', '"soon"', "text 'soon' is not a date")])
    """
    frame = pd.DataFrame(index=range(len(rows)))
    problems: list[dict[str, Any]] = []
    for name in columns:
        column = [None if row is None else row.get(name) for row in rows]
        kind = (kinds or {}).get(name) or (declared or {}).get(name) or infer_kind(column)
        array, misfits = typed_array(column, kind)
        frame[name] = with_misfits(to_pandas(array), column, misfits).set_axis(frame.index)
        for index, reason in misfits:
            source, offset = where[index] if where is not None else (None, None)
            problems.append(
                {
                    "table": table,
                    "column": name,
                    "key": None if keys is None else keys[index],
                    "source": source,
                    "offset": offset,
                    "value": values.dumps(column[index]),
                    "reason": reason,
                }
            )
    return frame, problems


def typed_texts(
    texts: Sequence[str] | pa.Array,
    columns: Sequence[str],
    table: str,
    *,
    declared: Mapping[str, str] | None = None,
    keys: Sequence[Any] | None = None,
) -> tuple[pd.DataFrame, list[dict[str, Any]]]:
    """:func:`typed_records` of row images given as JSON object texts, with the same result: read by Arrow
    in one pass (:func:`cdckit.values.images_table`) and each column taken as Arrow read it where that is
    what its kind gives (whole numbers for ``int``, numbers for ``float``, booleans, text no other kind
    could claim); the other columns, or all when Arrow cannot read the texts as :func:`cdckit.values.loads`
    does, are typed value by value as :func:`typed_records` types them.

    >>> frame, problems = typed_texts(['{"id":1,"d":"2024-05-01"}', '{"id":2,"d":"soon"}'], ["id", "d"], "t",
    ...                               declared={"d": "date"}, keys=["[1]", "[2]"])
    >>> frame["id"].dtype, frame["d"].tolist(), [(p["key"], p["reason"]) for p in problems]
    (Int64Dtype(), [datetime.date(2024, 5, 1), 'soon'], [('[2]', "text 'soon' is not a date")])
    """
    read = values.images_table(texts if isinstance(texts, (pa.Array, pa.ChunkedArray)) else list(texts))
    rows: list[dict[str, Any] | None] | None = None
    frame = pd.DataFrame(index=range(len(texts)))
    problems: list[dict[str, Any]] = []
    for name in columns:
        array = None if read is None else read.column(name) if name in read.column_names else pa.nulls(len(texts))
        typed = None if array is None else _as_read(array, (declared or {}).get(name))
        if typed is not None:
            frame[name] = to_pandas(typed).set_axis(frame.index)
            continue
        if rows is None:
            rows = [
                parse_image(text)
                for text in (texts.to_pylist() if isinstance(texts, (pa.Array, pa.ChunkedArray)) else texts)
            ]
        one, found = typed_records(rows, [name], table, declared=declared, keys=keys)
        frame[name] = one[name]
        problems += found
    return frame, problems


#: Kinds whose values Arrow's JSON reader gives as they are typed: the Arrow type it reads for each.
_READ_AS_TYPED = {
    "int": pa.types.is_int64,
    "float": pa.types.is_float64,
    "bool": pa.types.is_boolean,
    "string": pa.types.is_string,
    "enum": pa.types.is_string,
    "json": pa.types.is_string,
    "binary": pa.types.is_string,
}

#: Text that :func:`cdckit.column_types.infer_kind` may take for something other than ``string`` (a number
#: kept as text, a date or date-time), tested with Arrow's regular expressions (RE2): a superset.
_NOT_PLAIN_TEXT = r"^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?$|^[0-9]{4}-[0-9]{2}-[0-9]{2}"


def _as_read(array: pa.ChunkedArray | pa.Array, declared: str | None) -> pa.Array | None:
    """The typed column of an image column Arrow read, when it is exactly what typing the values one by one
    gives (the declared kind, else the kind inferred from them); None when it may not be."""
    array = array.combine_chunks() if isinstance(array, pa.ChunkedArray) else array
    kind = array.type
    if declared is None:
        if pa.types.is_null(kind):  # a column only ever null (or absent) is text
            return pa.nulls(len(array), pa.string())
        if pa.types.is_string(kind) and pc.any(pc.match_substring_regex(array, _NOT_PLAIN_TEXT)).as_py():
            return None
        return array if any(test(kind) for test in _READ_AS_TYPED.values()) else None
    test = _READ_AS_TYPED.get(declared)
    if test is None:
        return None
    if pa.types.is_null(kind):
        return pa.nulls(
            len(array),
            pa.int64()
            if declared == "int"
            else pa.float64()
            if declared == "float"
            else pa.bool_()
            if declared == "bool"
            else pa.string(),
        )
    return array if test(kind) else None


def with_misfits(typed: pd.Series, column: Sequence[Any], misfits: Sequence[tuple[int, str]]) -> pd.Series:
    """A typed column with each value that did not fit its kind (``misfits``: ``[(index, reason)]``) put back
    as the capture wrote it (``column``): an ``object`` column then; ``typed`` itself when all fit.

    >>> with_misfits(pd.Series([1, None], dtype="Int64"), [1, "x"], [(1, "'x' is not a number")]).tolist()
    [1, 'x']
    """
    if not misfits:
        return typed
    cells = typed.astype(object).where(typed.notna(), None).tolist()
    for index, _ in misfits:
        cells[index] = column[index]
    out = pd.Series(index=typed.index, dtype=object)
    out[:] = None
    for index in range(len(cells)):  # element by element: a list or dict is one cell, not a sequence to spread
        out.iat[index] = cells[index]
    return out


def problems_frame(problems: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """Type problem rows as the :data:`TYPE_PROBLEM_COLUMNS` frame."""
    return object_columns(pd.DataFrame(list(problems), columns=TYPE_PROBLEM_COLUMNS)).astype({"offset": "Int64"})


# --------------------------------------------------------------------------- one table


class _Changes:
    """One table's row changes, images parsed, columns and kinds chosen (shared by :func:`table` and
    :func:`profile`)."""

    def __init__(
        self, events: pd.DataFrame, name: str, as_of: Any = None, types: Mapping[str, str] | None = None
    ) -> None:
        names = table_names(events)
        self.name = find_table(names.dropna().unique(), name)
        mask = (names == self.name).to_numpy() & events["op"].isin(REPLAY_OPS).to_numpy()
        if as_of is not None:
            cut = _utc(as_of)
            times = pd.to_datetime(events["event_time"], utc=True)
            mask &= (times.notna() & (times <= cut)).to_numpy()
        self.rows = events.loc[mask]
        self.after = [parse_image(v) for v in self.rows["after"].tolist()]
        self.before = [parse_image(v) for v in self.rows["before"].tolist()]
        self.declared = declared_types(events).get(self.name, {})
        self.columns = self._columns()
        self.kinds = {}
        for column in self.columns:
            given = (types or {}).get(column) or self.declared.get(column)
            self.kinds[column] = given or infer_kind(
                [
                    image[column]
                    for images in (self.after, self.before)
                    for image in images
                    if image is not None and column in image
                ]
            )

    def _columns(self) -> list[str]:
        """Declared columns in the declaration's order, then the others where they first appear
        (key columns, then each change's before and after image)."""
        seen: dict[str, None] = dict.fromkeys(self.declared)
        for key_columns, before, after in zip(self.rows["key_columns"].tolist(), self.before, self.after):
            for column in [*(key_columns if _is_list(key_columns) else []), *(before or {}), *(after or {})]:
                seen.setdefault(column, None)
        return list(seen)

    def where(self) -> list[tuple[Any, Any]]:
        return list(zip(self.rows["source"].tolist(), self.rows["offset"].tolist()))

    def typed(self, images: list[dict[str, Any] | None]) -> tuple[pd.DataFrame, list[dict[str, Any]]]:
        return typed_records(
            images, self.columns, self.name, kinds=self.kinds, keys=self.rows["key"].tolist(), where=self.where()
        )


def _is_list(value: Any) -> bool:
    return isinstance(value, (list, tuple)) or hasattr(value, "tolist") and not isinstance(value, str)


def _utc(value: Any) -> pd.Timestamp:
    stamp = pd.Timestamp(value)
    return stamp.tz_localize("UTC") if stamp.tzinfo is None else stamp.tz_convert("UTC")


def table(
    events: pd.DataFrame, name: str, *, before: bool = False, as_of: Any = None, types: Mapping[str, str] | None = None
) -> pd.DataFrame:
    """One table's changes (insert, update, delete, snapshot read, truncate) as a typed frame, in input order.

    Columns: :data:`META_COLUMNS` (``op``, ``key``, ``seq``, ``event_time``,
    and ``source``/``offset`` to trace each row to its message), then one
    column per source column holding the after image (null where the change
    has none, as a delete, or the image lacks the column), then with
    ``before=True`` a ``before_<column>`` per source column. A source column
    named like a meta column is ``after_<column>``. ``name``: ``"database.table"``
    or the bare table name when it is unambiguous. ``as_of``: only changes with
    ``event_time`` at or before it (zone-less means UTC). ``types``:
    ``{column: kind}`` to override the declared or inferred kinds.

    Values that do not fit their kind stay as the capture wrote them, listed in ``attrs["type_problems"]``
    (records).

    >>> import cdckit
    >>> events = cdckit.read(cdckit.samples.path("canal/shop"))
    >>> t = table(events, "shop.customers", before=True)
    >>> t.loc[t["op"] == "update", ["key", "tier", "before_tier"]].dropna().shape[1]
    3
    """
    events = events_of(events)
    changes = _Changes(events, name, as_of, types)
    frame = plain(changes.rows[META_COLUMNS].reset_index(drop=True))  # the events' attrs are not this frame's
    frame = frame.astype({"offset": "Int64"}) if len(frame) else frame
    after, problems = changes.typed(changes.after)
    frame = pd.concat([frame, after.rename(columns={c: f"after_{c}" for c in META_COLUMNS})], axis=1)
    if before:
        old, more = changes.typed(changes.before)
        frame = pd.concat([frame, old.add_prefix("before_")], axis=1)
        problems += [{**p, "column": f"before_{p['column']}"} for p in more]
    frame.attrs["type_problems"] = problems
    frame.attrs["column_kinds"] = dict(changes.kinds)
    return frame


# --------------------------------------------------------------------------- profile


def profile(events: pd.DataFrame, table: str | None = None) -> pd.DataFrame:
    """Per table and column, over the after images that carry the column: its kind (and whether declared),
    how many ``values``, the null rate, the distinct count, min and max (compared as typed values: numbers
    as numbers, dates as dates), and how often updates change it: ``change_rate`` is the share of the
    ``updates_compared`` (updates whose before and after images both carry the column) where they differ.

    ``table``: one table (as :func:`table` names it), else every table with row changes.

    >>> import cdckit
    >>> p = profile(cdckit.read(cdckit.samples.path("canal/shop")), "customers")
    >>> row = p.set_index("column").loc["id"]
    >>> row["kind"], float(row["null_rate"]), int(row["distinct"]) == int(row["max"]) - int(row["min"]) + 1
    ('int', 0.0, True)
    """
    events = events_of(events)
    names = table_names(events)
    rows_of = events["op"].isin(REPLAY_OPS).to_numpy()
    tables = [table] if table is not None else sorted(set(names[rows_of].dropna()))
    out = []
    for name in tables:
        changes = _Changes(events, name)
        after, _ = changes.typed(changes.after)
        before, _ = changes.typed(changes.before)
        updates = (changes.rows["op"] == "update").to_numpy()
        for column in changes.columns:
            out.append(_column_profile(changes, column, after[column], before[column], updates))
    return object_columns(pd.DataFrame(out, columns=PROFILE_COLUMNS))


def _column_profile(
    changes: _Changes, column: str, after: pd.Series, before: pd.Series, updates: Any
) -> dict[str, Any]:
    carried = [image is not None and column in image for image in changes.after]
    had = [image is not None and column in image for image in changes.before]
    present = after[carried]
    array = pa.array(present.dropna(), from_pandas=True) if present.notna().any() else None
    low_high = pc.min_max(array).as_py() if array is not None else {"min": None, "max": None}
    compared = [i for i, u in enumerate(updates) if u and carried[i] and had[i]]
    changed = sum(1 for i in compared if not _same(after.iloc[i], before.iloc[i]))
    return {
        "table": changes.name,
        "column": column,
        "kind": changes.kinds[column],
        "declared": column in changes.declared,
        "values": len(present),
        "null_rate": float(present.isna().mean()) if len(present) else None,
        "distinct": int(present.nunique(dropna=True)),
        "min": low_high["min"],
        "max": low_high["max"],
        "updates_compared": len(compared),
        "change_rate": changed / len(compared) if compared else None,
    }


def _same(a: Any, b: Any) -> bool:
    if pd.isna(a) or pd.isna(b):
        return bool(pd.isna(a) and pd.isna(b))
    return bool(a == b)
