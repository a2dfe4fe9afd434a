"""What the pandas and Spark ordering share, and what the rest of cdckit takes from ordering (internal).

The op groups, the streams ``by=`` may name, what makes two rows the same
delivered message. Other modules import these names
from here; :mod:`cdckit.analysis.ordering` exports only the public functions.

>>> REDELIVERY_IDENTITY
('seq', '_snapshot_place', 'op', 'before', 'after')
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ...dialects import registry
from ...frame import table_names  # noqa: F401  (the frame's rule, named here for the ordering modules)
from ...values import is_missing

#: The ops that change a row.
CHANGE_OPS = ("insert", "update", "delete", "read")
#: The ops replay reads: the row changes and ``truncate`` (every row of the table goes).
REPLAY_OPS = CHANGE_OPS + ("truncate",)

#: What ``by=`` may name: the columns that make one stream. Events are compared (inversions, duplicates,
#: transitions, time inversions, sequence gaps) only with events of the same stream, so unrelated captures
#: that share a table name never meet.
STREAMS: dict[str, list[str]] = {
    "capture": ["dialect"],
    "source": ["dialect", "source"],
    "partition": ["dialect", "source", "partition"],
}

#: Within a stream, the columns of the narrow frame (either engine's) that name one row: its table and key.
ROW_KEY = ("_table", "key")
#: What makes two changes of one row the same change (a semantic duplicate when they are at different positions).
CHANGE_IDENTITY = ("op", "before", "after")
#: Where a snapshot row (op ``read``) sits in the capture: its source, partition and offset; null for every
#: other op. A snapshot gives each of its rows one source position (Debezium's MySQL connector: the binlog file
#: and position it started from; PostgreSQL: one LSN), so equal rows of a table without a key differ only by
#: their place in the capture: they are distinct rows, not copies. A change's place does not count: the same
#: change delivered again sits elsewhere and is a redelivery all the same. Each engine computes the column
#: from this rule: :func:`snapshot_place` (pandas), :data:`SNAPSHOT_PLACE_SQL` (DuckDB) and
#: ``cdckit.spark.ordering.snapshot_place`` (Spark).
SNAPSHOT_PLACE = "_snapshot_place"
#: What makes two changes of one row the same delivered message (a redelivery; only rows with a ``seq``).
REDELIVERY_IDENTITY = ("seq", SNAPSHOT_PLACE, *CHANGE_IDENTITY)
#: :data:`SNAPSHOT_PLACE` as a DuckDB expression over the event frame's columns.
SNAPSHOT_PLACE_SQL = (
    "CASE WHEN op = 'read' THEN concat_ws(':', coalesce(source, ''), coalesce(CAST(\"partition\" AS VARCHAR), ''),"
    ' CAST("offset" AS VARCHAR)) END'
)

#: A heartbeat gap is this many times the usual (median) interval, or longer.
HEARTBEAT_FACTOR = 3.0


def snapshot_place(frame: pd.DataFrame) -> pd.Series:
    """:data:`SNAPSHOT_PLACE` of each row of ``frame`` (its ``op``, ``source``, ``partition``, ``offset``).

    >>> frame = pd.DataFrame({"op": ["read", "insert"], "source": ["f", "f"],
    ...                       "partition": pd.array([None, 1], "Int64"), "offset": [3, 4]})
    >>> snapshot_place(frame).tolist()
    ['f::3', None]
    """
    reads = (frame["op"] == "read").to_numpy()
    place = np.full(len(frame), None, dtype=object)
    if reads.any():
        rows = frame.loc[reads]
        partition = rows["partition"].astype("string").fillna("") if "partition" in rows else ""
        text = rows["source"].astype("string").fillna("") + ":" + partition + ":" + rows["offset"].astype("string")
        place[reads] = text.to_numpy(dtype=object)
    return pd.Series(place, index=frame.index, dtype=object)


def transaction_keys(events: pd.DataFrame) -> pd.Series:
    """Each event's ``txn_id`` cut to the part that names its transaction, by its dialect's ``transaction_key``
    (Debezium for PostgreSQL: ``txId`` of ``txId:LSN``); None where it has none.

    >>> frame = pd.DataFrame({"dialect": ["debezium", "debezium", "maxwell"], "txn_id": ["729:2215", "u-1:7", "9:1"]})
    >>> transaction_keys(frame).tolist()
    ['729', 'u-1:7', '9:1']
    """
    ids = events["txn_id"].astype(object).where(events["txn_id"].notna(), None)
    for name, pattern in registry.transaction_keys().items():
        rows = (events["dialect"] == name).to_numpy() & ids.notna().to_numpy()
        if rows.any():
            named = ids[rows].astype(str)
            cut = named.str.extract(pattern, expand=False)
            ids = ids.copy()
            ids[rows] = cut.where(cut.notna(), named).to_numpy(dtype=object)
    return ids


def stream_columns(by: str) -> list[str]:
    """The columns of one stream for ``by`` (see :data:`STREAMS`), or ValueError naming the choices.

    >>> stream_columns("partition")
    ['dialect', 'source', 'partition']
    """
    if by not in STREAMS:
        raise ValueError(f"by must be one of {sorted(STREAMS)}, not {by!r}")
    return STREAMS[by]


def none_if_missing(value: Any) -> Any:
    """None for pandas' and Spark's missing markers (None, NA, float NaN); other values as they are.

    >>> none_if_missing(float("nan")), none_if_missing(None), none_if_missing(0)
    (None, None, 0)
    """
    return None if is_missing(value) else value
