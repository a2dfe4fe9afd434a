"""The canonical order of a capture: events sorted by seq, event time or arrival.

- **arrival order** is ``(source, partition, offset)``: the position of the
  message in what was captured.
- **seq order** is ``(seq, source, partition, offset)``. An event without a
  ``seq`` of its own (a transaction marker, a tombstone, every Lindorm event)
  takes the ``seq`` of the event that arrived before it in the same source,
  so it stays just after it (:func:`filled_seq`).

>>> import cdckit
>>> events = cdckit.read(cdckit.samples.path("canal/examples"))
>>> sort_events(events, by="arrival")["offset"].is_monotonic_increasing
True
"""

from __future__ import annotations

import pandas as pd

__all__ = ["sort_events", "filled_seq"]


def filled_seq(events: pd.DataFrame) -> pd.Series:
    """``seq`` with each missing value taken from the event that arrived before it in the same source ('' first).

    >>> filled_seq(pd.DataFrame({"source": ["s"] * 3, "partition": [None] * 3, "offset": [0, 1, 2],
    ...                          "seq": [None, "5", None]})).tolist()
    ['', '5', '5']
    """
    arrival = events[["source", "partition", "offset"]].sort_values(
        ["source", "partition", "offset"], kind="stable", na_position="first"
    )
    seq = events["seq"].astype(object).where(events["seq"].notna(), None).reindex(arrival.index)
    filled = seq.groupby(arrival["source"].astype(object).fillna(""), sort=False).ffill()
    return filled.where(filled.notna(), "").reindex(events.index)


def sort_events(events: pd.DataFrame, by: str = "seq") -> pd.DataFrame:
    """The events in canonical order; ties keep arrival order. The index moves with the rows.

    ``by``: ``"seq"`` (the dialect's ordering key, see the module notes),
    ``"event_time"`` (source time, events without one last) or
    ``"arrival"`` (``source``, ``partition``, ``offset``).

    >>> import cdckit
    >>> events = cdckit.read(cdckit.samples.path("datahub_blob/examples_split"))
    >>> sort_events(events)["seq"].tolist() == sorted(events["seq"])
    True
    """
    if by not in ("seq", "event_time", "arrival"):
        raise ValueError(f"by must be 'seq', 'event_time' or 'arrival', not {by!r}")
    keys = pd.DataFrame(
        {
            "source": events["source"].astype(object).fillna(""),
            "partition": events["partition"],
            "offset": events["offset"],
        },
        index=events.index,
    )
    if by == "seq":
        keys.insert(0, "_seq", filled_seq(events))
    elif by == "event_time":
        keys.insert(0, "_time", events["event_time"])
    order = keys.reset_index(drop=True).sort_values(list(keys.columns), kind="stable", na_position="first")
    if by == "event_time":  # events without a time go last, in arrival order
        known = keys["_time"].reset_index(drop=True).notna()
        order = pd.concat([order[known.loc[order.index]], order[~known.loc[order.index]]])
    return events.iloc[order.index.to_numpy()]
