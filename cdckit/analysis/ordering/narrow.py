"""The narrow frame the finding kernels read: one row per event, the columns they compare, times as µs.

:mod:`cdckit.spark.ordering` builds the same frame with Spark expressions
(images as fingerprints there).

>>> import cdckit
>>> frame = narrow(cdckit.read(cdckit.samples.path("canal/examples")))
>>> [c for c in frame.columns if c.startswith("_")]
['_table', '_seq', '_event_us', '_emit_us']
"""

from __future__ import annotations

import pandas as pd

from ...frame import table_names, utc_nanoseconds
from .identity import transaction_keys
from .sort import filled_seq

__all__ = ["narrow", "ARRIVAL", "SEQ_ORDER"]

#: Arrival order and seq order (see :mod:`cdckit.analysis.ordering.sort`), as sort columns of the narrow frame.
ARRIVAL = ["source", "partition", "offset", "_seq"]
SEQ_ORDER = ["_seq", "source", "partition", "offset"]


def narrow(events: pd.DataFrame, ordered: bool = True) -> pd.DataFrame:
    """The columns the finding functions read: ``_table``, ``_seq`` (filled), times as integer µs.

    The image texts (``before``, ``after``) are the columns of ``events`` as
    they are (not copied; missing values may be None or NA). ``ordered=False``
    leaves out ``_seq`` and the times (what only the seq order and the time
    findings read).
    """
    columns = {
        "dialect": events["dialect"].astype(object),
        "_table": table_names(events),
        "key": events["key"].astype(object).where(events["key"].notna(), None),
        "source": events["source"].astype(object).fillna(""),
        "offset": events["offset"].astype("int64"),
        "partition": events["partition"].astype("Int64"),
        "op": events["op"].astype(object),
        "seq": events["seq"].astype(object).where(events["seq"].notna(), None),
    }
    if ordered:
        columns.update(
            _seq=filled_seq(events), _event_us=_micros(events["event_time"]), _emit_us=_micros(events["emit_time"])
        )
    columns.update(
        txn_id=transaction_keys(events),  # the part of the id that names the transaction
        before=events["before"],
        after=events["after"],
    )
    return pd.DataFrame(columns).reset_index(drop=True)


def _micros(times: pd.Series) -> pd.Series:
    """UTC timestamps as integer microseconds (nullable), the precision both engines share."""
    as_ns = utc_nanoseconds(times)
    out = pd.Series(pd.NA, index=times.index, dtype="Int64")
    known = as_ns.notna()
    out[known] = as_ns[known].astype("int64") // 1000
    return out
