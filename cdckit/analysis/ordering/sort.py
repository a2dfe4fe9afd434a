"""The canonical order of a capture: events sorted by seq, event time or arrival.

- **arrival order** is ``(source, partition, offset)``: the position of the
  message in what was captured.
- **seq order** is ``(seq, source, partition, offset)``. An event without a
  ``seq`` of its own (a transaction marker, a tombstone, every Lindorm event)
  takes the ``seq`` of the event that arrived before it in the same source
  and partition, so it stays just after it (:func:`filled_seq`).
- **a place in a message is no position**: where a dialect's ``seq`` ends with
  the event's place in its message (Canal's ``es:id:row``, flag
  ``seq_row_in_message``), that part orders only the rows of one message:
  messages that share the rest (one batch in one millisecond) keep the
  capture's order (:func:`message_positions`).
- **a position shared by partitions**: a topic partitioned by key sends the two
  halves of a primary-key change (a delete of the old key, a create of the new
  one, at one LSN or binlog position) to different partitions, and the
  partitions' interleaving says nothing about their order. Where events of
  several partitions of one source share a ``seq``, the deletes (and their
  tombstones) that open each partition's run at that ``seq`` go first: the rest
  of the run takes the ``seq`` with :data:`TIE_MARK` appended, which sorts just
  after it and before every longer position. Within one partition the capture's
  order is never changed; a capture in one partition keeps ``seq`` as it is.

>>> import cdckit
>>> events = cdckit.read(cdckit.samples.path("canal/examples"))
>>> sort_events(events, by="arrival")["offset"].is_monotonic_increasing
True
"""

from __future__ import annotations

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ...dialects import registry

__all__ = [
    "sort_events",
    "filled_seq",
    "message_positions",
    "row_in_message_dialects",
    "TIE_MARK",
    "FIRST_AT_A_TIE",
    "IN_MESSAGE",
]

#: Appended to the filled ``seq`` of the events that follow the deletes at a position several partitions
#: share (see the module notes): below every character a position is written with.
TIE_MARK = "\x01"
#: The ops that open a position several partitions share: the old key's delete and its tombstone.
FIRST_AT_A_TIE = ("delete", "tombstone")


#: The part of a ``seq`` that is a place in its message (the last ``:`` part), as a regular expression.
IN_MESSAGE = r":[^:]*$"


def row_in_message_dialects() -> list[str]:
    """The dialects whose ``seq`` ends with the event's place in its message (flag ``seq_row_in_message``).

    >>> row_in_message_dialects()
    ['canal']
    """
    return [name for name in registry.names() if registry.flag(name, "seq_row_in_message")]


def message_positions(events: pd.DataFrame) -> pd.Series:
    """``seq`` without the place in its message where the dialect writes one (see the module notes).

    >>> message_positions(pd.DataFrame({"dialect": ["canal", "maxwell"], "seq": ["5:7:2", "5:7:2"]})).tolist()
    ['5:7', '5:7:2']
    """
    seq = events["seq"].astype(object).where(events["seq"].notna(), None)
    if "dialect" not in events.columns:
        return seq
    placed = events["dialect"].isin(row_in_message_dialects()).to_numpy() & seq.notna().to_numpy()
    if placed.any():
        seq = seq.copy()
        try:  # by Arrow: a Python call per seq costs more than the rest
            cut = pc.replace_substring_regex(pa.array(seq[placed], pa.string()), pattern=IN_MESSAGE, replacement="")
            seq[placed] = cut.to_numpy(zero_copy_only=False)
        except (pa.ArrowInvalid, pa.ArrowTypeError):  # a seq that is not text (a frame built by hand)
            seq[placed] = seq[placed].str.replace(IN_MESSAGE, "", regex=True)
    return seq


def filled_seq(events: pd.DataFrame) -> pd.Series:
    """``seq`` with each missing value taken from the event that arrived before it in the same source and
    partition ('' first), and :data:`TIE_MARK` after a position several partitions share (module notes).

    >>> filled_seq(pd.DataFrame({"source": ["s"] * 3, "partition": [None] * 3, "offset": [0, 1, 2],
    ...                          "seq": [None, "5", None], "op": "insert"})).tolist()
    ['', '5', '5']
    >>> filled_seq(pd.DataFrame({"source": "s", "partition": [0, 1, 1], "offset": [0, 0, 1],
    ...                          "seq": ["7", "7", None], "op": ["insert", "delete", "tombstone"]})).tolist()
    ['7\\x01', '7', '7']
    """
    source = events["source"].astype(object).fillna("")
    partition = events["partition"].astype("Int64").fillna(-1).astype("int64")
    arrival = pd.DataFrame({"source": source, "partition": partition, "offset": events["offset"]})
    arrival = arrival.sort_values(["source", "partition", "offset"], kind="stable")
    seq = message_positions(events).reindex(arrival.index)
    filled = seq.groupby([arrival["source"], arrival["partition"]], sort=False).ffill()
    filled = filled.where(filled.notna(), "")
    if "op" not in events.columns or (arrival["partition"].groupby(arrival["source"]).nunique() < 2).all():
        return filled.reindex(events.index)
    position = [arrival["source"], filled]
    shared = (filled != "") & (arrival["partition"].groupby(position).transform("nunique") > 1)
    later = ~events["op"].reindex(arrival.index).isin(FIRST_AT_A_TIE)
    later = later.astype("int8").groupby([arrival["source"], arrival["partition"], filled]).cummax().astype(bool)
    return filled.where(~(shared & later), filled + TIE_MARK).reindex(events.index)


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
