"""What the pandas and Spark ordering share, and what the rest of cdckit takes from ordering (internal).

The op groups, the streams ``by=`` may name, what makes two rows the same
delivered message. Other modules import these names
from here; :mod:`cdckit.analysis.ordering` exports only the public functions.

>>> REDELIVERY_IDENTITY
('seq', 'op', 'before', 'after')
"""

from __future__ import annotations

from typing import Any

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
#: What makes two changes of one row the same delivered message (a redelivery; only rows with a ``seq``).
REDELIVERY_IDENTITY = ("seq", *CHANGE_IDENTITY)

#: A heartbeat gap is this many times the usual (median) interval, or longer.
HEARTBEAT_FACTOR = 3.0


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
