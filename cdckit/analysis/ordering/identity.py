"""Which events are one stream, one row, one change delivered again, one transaction.

The rules the pandas, DuckDB and Spark engines all read (ordering, replay,
key inference, transactions): the streams ``by=`` may name, the columns
that name a row within a stream, what makes two rows the same delivered
change, where a snapshot row sits, and the part of a ``txn_id`` that names
its transaction.

>>> REDELIVERY_IDENTITY
('seq', '_snapshot_place', 'op', 'before', 'after')
>>> stream_columns("source")
['dialect', 'source']
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...dialects import registry

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
