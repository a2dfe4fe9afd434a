"""The canonical event frame: its columns, their types, and the events that fill it.

This is the one place the frame is defined. Every dialect decodes into
:class:`Event` objects (or tuples of :data:`EVENT_FIELDS`);
:class:`~cdckit.frame_builders.FrameBuilder` gathers them into Arrow columns
and turns them into the pandas frame ``cdckit.read`` returns.

>>> from cdckit.frame import Event, COLUMN_NAMES
>>> from cdckit.frame_builders import FrameBuilder
>>> b = FrameBuilder()
>>> b.add(Event(op="insert", op_raw="c", table="t", after='{"id":1}'),
...       dialect="debezium", source="<string>", offset=0)
>>> df = b.to_pandas()
>>> list(df.columns) == COLUMN_NAMES, df.loc[0, "op"], df.loc[0, "after"]
(True, 'insert', '{"id":1}')

Conventions every decoder follows:

- ``op`` is one of :data:`OPS`; ``op_raw`` is the dialect's own spelling.
- ``key`` is a compact JSON array of the key values in ``key_columns`` order,
  taken from the after image for insert/update/read and from the before image
  for delete.
- ``before``/``after`` are JSON object texts; a column absent from an image is
  absent from the object, a SQL NULL is ``null``.
- Times are held as integer nanoseconds since the epoch (UTC) while building
  and become ``datetime64[ns, UTC]`` in the frame.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from operator import attrgetter
from typing import Any, NamedTuple

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from .collector import gc_paused
from .python_columns import object_column
from .values import INT64_MAX, INT64_MIN

__all__ = [
    "OPS",
    "CHANGE_OPS",
    "REPLAY_OPS",
    "check_columns",
    "TIME_TYPE",
    "COLUMNS",
    "COLUMN_NAMES",
    "EVENT_FIELDS",
    "FastRow",
    "ARROW_SCHEMA",
    "QUARANTINE_SCHEMA",
    "Event",
    "event_row",
    "row_problem",
    "encodes_as_utf8",
    "event_table",
    "arrow_array",
    "columns_table",
    "TABLE_ROW",
    "arrow_to_pandas",
    "empty_events",
    "table_names",
    "find_table",
    "empty_quarantine",
]

#: The values ``op`` may take.
OPS = ("insert", "update", "delete", "read", "truncate", "ddl", "heartbeat", "begin", "commit", "tombstone", "other")
#: The ops that change a row.
CHANGE_OPS = ("insert", "update", "delete", "read")
#: The ops replay reads: the row changes and ``truncate`` (every row of the table goes).
REPLAY_OPS = CHANGE_OPS + ("truncate",)

#: The Arrow type of the frame's times (``event_time``, ``emit_time``).
TIME_TYPE = pa.timestamp("ns", tz="UTC")

#: (name, Arrow type, meaning) of every canonical column, in frame order.
COLUMNS: list[tuple[str, pa.DataType, str]] = [
    ("dialect", pa.string(), "registry name of the dialect that decoded it"),
    ("source", pa.string(), "file path, topic or other origin"),
    ("offset", pa.int64(), "ordinal of the message within its source (Kafka offset when given)"),
    ("partition", pa.int64(), "Kafka partition / DataHub shard when known"),
    ("op", pa.string(), "canonical operation, one of OPS"),
    ("op_raw", pa.string(), "the operation exactly as the dialect wrote it"),
    ("database", pa.string(), "database name"),
    ("schema", pa.string(), "schema / namespace"),
    ("table", pa.string(), "table name"),
    ("event_time", TIME_TYPE, "when the change happened at the source"),
    ("emit_time", TIME_TYPE, "when the capture system wrote or processed it"),
    ("seq", pa.string(), "the dialect's ordering key; string order is true order"),
    ("txn_id", pa.string(), "transaction id"),
    ("key_columns", pa.list_(pa.string()), "primary key column names"),
    ("key", pa.string(), "primary key values as a compact JSON array"),
    ("before", pa.string(), "before image as JSON object text"),
    ("after", pa.string(), "after image as JSON object text"),
    ("ddl", pa.string(), "DDL statement text"),
]

COLUMN_NAMES: list[str] = [name for name, _, _ in COLUMNS]
ARROW_SCHEMA = pa.schema([pa.field(name, typ) for name, typ, _ in COLUMNS])

#: Columns of ``cdckit.quarantine(events)``.
QUARANTINE_SCHEMA = pa.schema(
    [
        pa.field("source", pa.string()),
        pa.field("offset", pa.int64()),
        pa.field("partition", pa.int64()),
        pa.field("line", pa.int64()),
        pa.field("dialect", pa.string()),
        pa.field("reason", pa.string()),
        pa.field("reason_code", pa.string()),
        pa.field("raw", pa.string()),
    ]
)

PANDAS_TYPES = {pa.string(): pd.StringDtype("pyarrow"), pa.int64(): pd.Int64Dtype()}


@dataclass(slots=True)
class Event:
    """One canonical change, as a decoder produces it.

    ``dialect``, ``source``, ``offset`` and ``partition`` are filled in by the
    reader from the message the event came from. ``half`` is set only on one
    half of an update that the dialect sends as two messages (``"before"`` or
    ``"after"``); the reader pairs halves with the same table and ``seq``.
    """

    op: str
    op_raw: str | None
    database: str | None = None
    schema: str | None = None
    table: str | None = None
    event_time: int | None = None
    emit_time: int | None = None
    seq: str | None = None
    txn_id: str | None = None
    key_columns: list[str] | None = None
    key: str | None = None
    before: str | None = None
    after: str | None = None
    ddl: str | None = None
    half: str | None = None


#: The event fields in frame order: every column but the four the reader fills in.
EVENT_FIELDS: list[str] = COLUMN_NAMES[4:]


class FastRow(NamedTuple):
    """One event as a batch decoder (``decode_lines``) gives it: the :data:`EVENT_FIELDS`, named, in frame order.

    Built positionally (as fast as a plain tuple to read, and the field
    order is checked against the columns when this module loads).

    >>> row = FastRow("insert", "c", "shop", None, "t", 0, None, None, None, ["id"], "[1]", None, '{"id":1}', None)
    >>> row.table, row_problem(row) is None
    ('t', True)
    """

    op: str
    op_raw: str
    database: str | None
    schema: str | None
    table: str | None
    event_time: int | None
    emit_time: int | None
    seq: str | None
    txn_id: str | None
    key_columns: list[str] | None
    key: str | None
    before: str | None
    after: str | None
    ddl: str | None


if list(FastRow._fields) != EVENT_FIELDS:  # the batch decoders' rows go into the frame by position
    raise ImportError(f"FastRow's fields {FastRow._fields} are not the frame's event columns {EVENT_FIELDS}")
event_row = attrgetter(*EVENT_FIELDS)
EVENT_SCHEMA = pa.schema([field for field in ARROW_SCHEMA if field.name in EVENT_FIELDS])

_OPS = frozenset(OPS)
#: What each event field must hold (besides None): text, a time (int nanoseconds) or a list of texts.
_KINDS = ["time" if typ == TIME_TYPE else "texts" if pa.types.is_list(typ) else "text" for _, typ, _ in COLUMNS[4:]]


def row_problem(row: tuple) -> str | None:
    """Why an event row (a tuple of :data:`EVENT_FIELDS`, e.g. a :class:`FastRow`) cannot go into the frame, or
    None when it can.

    The one rule for what the frame holds: ``op`` one of :data:`OPS`, names
    and images text (valid UTF-8), times whole nanoseconds a timestamp can
    hold (years 1677 to 2262), ``key_columns`` a list of texts. A decoder's
    rows pass this check before they are gathered, so that turning a batch
    into Arrow cannot fail.

    >>> row = ("insert", "c", "shop", None, "t", 0, None, None, None, ["id"], "[1]", None, '{"id":1}', None)
    >>> row_problem(row) is None
    True
    >>> row_problem(row[:4] + (["t"],) + row[5:])
    'table holds a list, not text'
    >>> row_problem(row[:5] + (10**22,) + row[6:])
    'event_time 10000000000000000000000 ns is beyond the years a timestamp can hold (1677 to 2262)'
    """
    if not isinstance(row, tuple) or len(row) != len(EVENT_FIELDS):  # a tuple or a FastRow
        return (
            f"a decoder gave {type(row).__name__} of {len(row) if hasattr(row, '__len__') else '?'} values "
            f"for an event of {len(EVENT_FIELDS)} fields"
        )
    if row[0] not in _OPS:
        return f"op {row[0]!r} is not one of the canonical ops"
    for name, kind, value in zip(EVENT_FIELDS, _KINDS, row):
        if value is None:
            continue
        if kind == "text":
            if value.__class__ is not str:
                return f"{name} holds {_kind_name(value)}, not text"
            if not value.isascii() and not encodes_as_utf8(value):
                return f"{name} holds a lone surrogate, not valid UTF-8 text"
        elif kind == "time":
            if value.__class__ is not int:
                return f"{name} holds {_kind_name(value)}, not a time"
            if not INT64_MIN <= value <= INT64_MAX:
                return f"{name} {value} ns is beyond the years a timestamp can hold (1677 to 2262)"
        elif value.__class__ is not list or not all(v.__class__ is str and encodes_as_utf8(v) for v in value):
            return f"{name} holds {_kind_name(value)}, not a list of texts"
    return None


def encodes_as_utf8(text: str) -> bool:
    """True when ``text`` can be written as UTF-8 (no lone surrogates).

    >>> encodes_as_utf8("ok"), encodes_as_utf8("\\udc80")
    (True, False)
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _kind_name(value: Any) -> str:
    kinds = {bool: "a boolean", int: "a number", float: "a number", dict: "an object", list: "a list", str: "text"}
    return kinds.get(type(value), f"a {type(value).__name__}")


def event_table(rows: list[tuple]) -> pa.Table:
    """Event rows (tuples of :data:`EVENT_FIELDS`) as an Arrow table of those columns.

    Raises an Arrow, type or overflow error when a row holds what the frame
    cannot (see :func:`row_problem`, which names the field).

    >>> event_table([("delete", "d", None, None, "t", None, None, "1", None, None, None, "{}", None, None)]).num_rows
    1
    """
    columns = zip(*rows) if rows else [[] for _ in EVENT_FIELDS]
    return pa.Table.from_arrays(
        [arrow_array(list(values), field.type) for values, field in zip(columns, EVENT_SCHEMA)], schema=EVENT_SCHEMA
    )


def columns_table(columns: list[list], utf8: tuple[str, ...] = ()) -> pa.Table:
    """Event columns (one list per :data:`EVENT_FIELDS`, text also as UTF-8 bytes, or an Arrow array of the
    field's type, taken as it is) as an :func:`event_table`.

    Raises as :func:`event_table` does (bytes that are not UTF-8 too), except in the columns named in ``utf8``:
    their values are bytes (or None) the caller knows to be valid UTF-8 (orjson parsed or wrote them), taken
    as they are.

    >>> columns_table([["insert"], ["c"], [None], [None], ["t"], [0], [None], [None], [None], [["id"]], ["[1]"],
    ...                [None], [b'{"id":1}'], [None]], utf8=("after",)).column("after").to_pylist()
    ['{"id":1}']
    """
    count = len(columns[0])
    return pa.Table.from_arrays(
        [
            values
            if isinstance(values, pa.Array)
            else pa.nulls(count, field.type)
            if values.count(None) == count
            else _utf8_array(values)
            if field.name in utf8
            else arrow_array(values, field.type)
            for values, field in zip(columns, EVENT_SCHEMA)
        ],
        schema=EVENT_SCHEMA,
    )


def _utf8_array(values: list) -> pa.Array:
    """A string array of UTF-8 bytes (or None) known to be valid, their bytes joined in one copy (Arrow's
    builder appends value by value and grows its buffer as it goes).

    >>> _utf8_array([b"ab", None, "é".encode()]).to_pylist()
    ['ab', None, 'é']
    """
    present = values if None not in values else [value for value in values if value is not None]
    data = b"".join(present)
    if len(data) >= 1 << 31:  # beyond 32-bit offsets: Arrow's builder splits it as it must
        return pa.array(values, pa.binary()).view(pa.string())
    offsets = np.zeros(len(values) + 1, np.int32)
    np.cumsum(
        list(map(len, values)) if present is values else [0 if value is None else len(value) for value in values],
        out=offsets[1:],
    )
    valid = None if present is values else pa.array([value is not None for value in values]).buffers()[1]
    return pa.Array.from_buffers(
        pa.string(),
        len(values),
        [valid, pa.py_buffer(offsets), pa.py_buffer(data)],
        null_count=len(values) - len(present),
    )


def arrow_array(values: Any, typ: pa.DataType) -> pa.Array:
    """A column of the frame as Arrow: ``values`` (a list) of the column's type ``typ``.

    A time of 0 (the epoch itself) is no time: producers write ``ts_ms: 0`` (or ``ts: 0``, ``es: 0``) where
    they know none, so it becomes null, never 1970-01-01; every dialect's times pass here, pandas and Spark.

    >>> times = arrow_array([0, 1_000, None], TIME_TYPE)
    >>> times.null_count, times.cast(pa.int64()).to_pylist()
    (2, [None, 1000, None])
    """
    # Python ints become timestamps some twenty times faster through int64 than directly.
    if typ == TIME_TYPE:
        numbers = pa.array(values, pa.int64())
        if pc.any(pc.equal(numbers, 0)).as_py():
            numbers = pc.if_else(pc.equal(numbers, 0), pa.scalar(None, pa.int64()), numbers)
        return numbers.cast(typ)
    if typ == pa.string() and len(values) > 1 and values.count(values[0]) == len(values):
        return pa.repeat(pa.scalar(values[0], typ), len(values))  # a block's one table: no text read per row
    return pa.array(values, typ)


class _TableRow:
    """The type of :data:`TABLE_ROW`."""

    def __repr__(self) -> str:
        return "TABLE_ROW"


#: What a batch decoder's ``decode_columns`` gives for a message whose one event is the next row of its table.
TABLE_ROW = _TableRow()


def arrow_to_pandas(table: pa.Table) -> pd.DataFrame:
    """Turn an Arrow table with :data:`ARROW_SCHEMA` into the canonical pandas frame.

    Strings become ``string[pyarrow]``, ``offset``/``partition`` nullable
    ``Int64``, times ``datetime64[ns, UTC]`` and ``key_columns`` Python lists.
    """
    at = table.schema.get_field_index("key_columns")
    df = table.remove_column(at).to_pandas(types_mapper=PANDAS_TYPES.get)  # not as NumPy arrays, thrown away
    column = table.column(at)
    if column.null_count == len(column):  # a capture that names no key
        lists: Any = np.full(len(column), None, dtype=object)
    else:
        with gc_paused():  # a list per event: the collector would cost ten times the lists
            lists = column.to_pylist()
    df.insert(at, "key_columns", pd.Series(lists, index=df.index, dtype=object))
    df["offset"] = df["offset"].astype("int64")
    return df


def utc_nanoseconds(times: pd.Series) -> pd.Series:
    """``times`` (timestamps of any resolution, or what :func:`pandas.to_datetime` reads) as UTC timestamps
    of nanosecond resolution, whose integers are nanoseconds since the epoch: pandas 3 makes microsecond
    or second timestamps where pandas 2 made nanoseconds (a Parquet file, ``pd.to_datetime(..., unit="s")``).

    >>> utc_nanoseconds(pd.Series(pd.to_datetime([1.5], unit="s", utc=True)).dt.as_unit("us")).astype("int64").tolist()
    [1500000000]
    """
    return pd.to_datetime(times, utc=True).dt.as_unit("ns")


def table_names(events: pd.DataFrame) -> pd.Series:
    """``database.table`` per event (``schema.table`` or ``table`` where parts are missing; None for no table).

    >>> table_names(pd.DataFrame({"database": ["shop", None, None], "schema": [None, "ns", None],
    ...                           "table": ["items", "t", None]})).tolist()
    ['shop.items', 'ns.t', None]
    """
    try:  # by Arrow: a Python call per event costs more than the rest of many analyses
        database, schema, table = (
            pa.array(events[c], pa.string(), from_pandas=True) for c in ("database", "schema", "table")
        )
    except (pa.ArrowInvalid, pa.ArrowTypeError):  # a name that is not text: each joined as Python writes it
        database, schema, table = (object_column(events[name]) for name in ("database", "schema", "table"))
        prefix = database.where(database.notna(), schema)
        pairs = zip(prefix.tolist(), table.tolist())
        names = [None if t is None else (t if p is None else f"{p}.{t}") for p, t in pairs]
        return pd.Series(names, index=events.index, dtype=object)
    prefix = pc.coalesce(database, schema)
    joined = pc.if_else(pc.is_null(prefix), table, pc.binary_join_element_wise(prefix, table, "."))
    return pd.Series(joined.to_numpy(zero_copy_only=False), index=events.index, dtype=object)


def find_table(names: Iterable[Any], table: str) -> str:
    """The full name in ``names`` that ``table`` means: the full ``database.table`` name or the bare table name.

    >>> find_table(["shop.customers", "shop.orders"], "orders")
    'shop.orders'
    """
    known = sorted({n for n in names if isinstance(n, str)})
    if table in known:
        return table
    matches = [n for n in known if n.rsplit(".", 1)[-1] == table]
    if len(matches) == 1:
        return matches[0]
    raise KeyError(
        f"table {table!r} not in the events; tables: {known}"
        if not matches
        else f"table {table!r} is ambiguous: {matches}"
    )


def check_columns(columns: Any) -> None:
    """Raise ValueError unless ``columns`` hold every canonical column.

    >>> check_columns(["op", "table"])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: not a canonical event frame: no column dialect, source, ...
    """
    missing = [name for name in COLUMN_NAMES if name not in list(columns)]
    if missing:
        raise ValueError(f"not a canonical event frame: no column {', '.join(missing)}")


def empty_events() -> pd.DataFrame:
    """A canonical frame with no rows."""
    return arrow_to_pandas(ARROW_SCHEMA.empty_table())


def empty_quarantine() -> pd.DataFrame:
    """A quarantine frame with no rows."""
    return QUARANTINE_SCHEMA.empty_table().to_pandas(types_mapper=PANDAS_TYPES.get)
