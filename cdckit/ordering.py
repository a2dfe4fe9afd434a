"""Order of a capture: the canonical sort and the ordering report.

``sort_events`` puts events in the order they happened; ``order_report``
says what is wrong with the order they arrived in. Both work on the pandas
frame of :func:`cdckit.read`; the finding rows are computed column by column
in :mod:`cdckit.findings`, and :mod:`cdckit.spark` gives the same answers on
a Spark frame.

Definitions used throughout:

- **arrival order** is ``(source, partition, offset)``: the position of the
  message in what was captured.
- **seq order** is ``(seq, source, partition, offset)``. An event without a
  ``seq`` of its own (a transaction marker, a tombstone, every Lindorm event)
  takes the ``seq`` of the event that arrived before it in the same source,
  so it stays just after it.
- a **table** is named ``database.table`` (``schema.table`` where the dialect
  names no database, ``table`` where it names neither).

>>> import cdckit
>>> events = cdckit.read(cdckit.samples.path("canal/examples"))
>>> report = cdckit.order_report(events)
>>> int(report.summary().set_index("finding").loc["inversions", "rows"])
0
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from typing import Any, Iterable, Iterator

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

__all__ = [
    "sort_events",
    "order_report",
    "OrderReport",
    "Finding",
    "FINDINGS",
    "FINDING_COLUMNS",
    "LAG_COLUMNS",
    "CHANGE_OPS",
    "REPLAY_OPS",
    "STREAMS",
    "stream_columns",
    "table_names",
    "narrow",
    "key_findings",
    "time_findings",
    "sequence_gap_findings",
    "offset_gap_findings",
    "transaction_findings",
    "heartbeat_findings",
    "lag_summary",
    "keyless_findings",
    "keyless_rows",
    "unpaired_findings",
    "report_from_rows",
    "finding_frame",
    "filled_seq",
    "none_if_missing",
]

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

#: Arrival order and seq order, as sort columns of the narrow frame (see :func:`narrow`).
ARRIVAL = ["source", "partition", "offset", "_seq"]
SEQ_ORDER = ["_seq", "source", "partition", "offset"]

#: Columns every finding row may fill, with their pandas dtypes (Spark types in cdckit.spark).
FINDING_COLUMNS: dict[str, str] = {
    "finding": "string", "table": "string", "key": "string", "source": "string", "offset": "Int64",
    "partition": "Int64", "seq": "string", "op": "string", "other_source": "string", "other_offset": "Int64",
    "other_seq": "string", "count": "Int64", "value": "float64", "detail": "string",
}

#: Columns of the lag summary (seconds).
LAG_COLUMNS: dict[str, str] = {
    "table": "string", "events": "Int64", "negative": "Int64", "min_s": "float64", "p50_s": "float64",
    "p90_s": "float64", "p99_s": "float64", "max_s": "float64", "mean_s": "float64",
}


@dataclass(frozen=True)
class FindingSpec:
    """What a finding is: its severity, what it means, and the columns that show it."""

    severity: str
    meaning: str
    columns: tuple[str, ...]


_AT = ("source", "offset", "partition", "seq", "op")
_OTHER = ("other_source", "other_offset", "other_seq")

#: Every finding of the report, in the order the summary lists them.
FINDINGS: dict[str, FindingSpec] = {
    "inversions": FindingSpec(
        "warning",
        "These events arrived after a later change (higher seq) to the same row, or to the same table when it "
        "has no key: replay in seq order, not arrival order, or the final state is wrong.",
        ("table", "key", *_AT, *_OTHER)),
    "time_inversions": FindingSpec(
        "info",
        "event_time goes backwards here while seq goes forward: seq is the order to trust; event_time is often "
        "the commit time or coarser than the log position.",
        ("table", *_AT, *_OTHER, "detail")),
    "redeliveries": FindingSpec(
        "warning",
        "The same change (same position, op and images) was delivered more than once: replay is idempotent, but "
        "counts and sums over events count it twice.",
        ("table", "key", *_AT, *_OTHER)),
    "semantic_duplicates": FindingSpec(
        "info",
        "A different position carries the same change (same key, op and images): a retry or replayed batch "
        "upstream, harmless for the state but not for event counts.",
        ("table", "key", *_AT, *_OTHER)),
    "sequence_gaps": FindingSpec(
        "error",
        "Numbers are missing from a sequence that should be contiguous: messages were lost between the source "
        "and this capture.",
        ("source", "partition", "seq", "other_seq", "count", "detail")),
    "offset_gaps": FindingSpec(
        "warning",
        "Kafka offsets are missing in this partition: messages were lost or filtered, unless the topic is "
        "compacted or written in transactions (commit markers take offsets).",
        ("source", "partition", "offset", "other_offset", "count")),
    "unpaired_halves": FindingSpec(
        "error",
        "Half of an update never met its other half: that update is not among the events (it is in the "
        "quarantine).",
        ("source", "offset", "partition", "detail")),
    "open_transactions": FindingSpec(
        "warning",
        "A transaction began and did not commit within the capture: its changes may be rolled back, or the "
        "capture was cut in the middle of it.",
        ("source", "offset", "partition", "seq", "detail")),
    "impossible_transitions": FindingSpec(
        "error",
        "In seq order this row's history cannot happen (insert of a live key, a change after a delete, a "
        "change of a key the snapshot never had): events are missing or keys were reused.",
        ("table", "key", *_AT, *_OTHER, "detail")),
    "heartbeat_gaps": FindingSpec(
        "warning",
        "No heartbeat for much longer than usual: the capture may have stalled, and changes from that window "
        "may be missing.",
        ("source", "offset", "other_offset", "value", "count", "detail")),
    "keyless_tables": FindingSpec(
        "warning",
        "Changes without a primary key: replay keeps these tables as a multiset of rows, and per-row checks "
        "compare whole rows.",
        ("table", "count", "detail")),
    "lag": FindingSpec(
        "info",
        "Capture lag (emit_time - event_time) per table in seconds; negative values mean the clocks disagree.",
        tuple(LAG_COLUMNS)),
}

#: A heartbeat gap is this many times the usual (median) interval, or longer.
HEARTBEAT_FACTOR = 3.0


# --------------------------------------------------------------------------- order


def table_names(events: pd.DataFrame) -> pd.Series:
    """``database.table`` per event (``schema.table`` or ``table`` where parts are missing; None for no table).

    >>> table_names(pd.DataFrame({"database": ["shop", None, None], "schema": [None, "ns", None],
    ...                           "table": ["items", "t", None]})).tolist()
    ['shop.items', 'ns.t', None]
    """
    prefix = events["database"].astype(object).where(events["database"].notna(), events["schema"].astype(object))
    table = events["table"].astype(object)
    names = [None if t is None or t is pd.NA else (t if p is None or p is pd.NA else f"{p}.{t}")
             for p, t in zip(prefix.tolist(), table.tolist())]
    return pd.Series(names, index=events.index, dtype=object)


def filled_seq(events: pd.DataFrame) -> pd.Series:
    """``seq`` with each missing value taken from the event that arrived before it in the same source ('' first)."""
    arrival = events[["source", "partition", "offset"]].sort_values(
        ["source", "partition", "offset"], kind="stable", na_position="first")
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
    keys = pd.DataFrame({"source": events["source"].astype(object).fillna(""),
                         "partition": events["partition"], "offset": events["offset"]}, index=events.index)
    if by == "seq":
        keys.insert(0, "_seq", filled_seq(events))
    elif by == "event_time":
        keys.insert(0, "_time", events["event_time"])
    order = keys.reset_index(drop=True).sort_values(list(keys.columns), kind="stable", na_position="first")
    if by == "event_time":  # events without a time go last, in arrival order
        known = keys["_time"].reset_index(drop=True).notna()
        order = pd.concat([order[known.loc[order.index]], order[~known.loc[order.index]]])
    return events.iloc[order.index.to_numpy()]


def narrow(events: pd.DataFrame) -> pd.DataFrame:
    """The columns the finding functions read: ``_table``, ``_seq`` (filled), times as integer µs.

    The image texts (``before``, ``after``) are the columns of ``events`` as
    they are (not copied; missing values may be None or NA).
    :mod:`cdckit.spark` builds the same frame with Spark expressions.
    """
    frame = pd.DataFrame({
        "dialect": events["dialect"].astype(object),
        "_table": table_names(events),
        "key": events["key"].astype(object).where(events["key"].notna(), None),
        "source": events["source"].astype(object).fillna(""),
        "offset": events["offset"].astype("int64"),
        "partition": events["partition"].astype("Int64"),
        "op": events["op"].astype(object),
        "seq": events["seq"].astype(object).where(events["seq"].notna(), None),
        "_seq": filled_seq(events),
        "_event_us": _micros(events["event_time"]),
        "_emit_us": _micros(events["emit_time"]),
        "txn_id": events["txn_id"].astype(object).where(events["txn_id"].notna(), None),
        "before": events["before"],
        "after": events["after"],
    })
    return frame.reset_index(drop=True)


def _micros(times: pd.Series) -> pd.Series:
    """UTC timestamps as integer microseconds (nullable), the precision both engines share."""
    as_ns = pd.to_datetime(times, utc=True)
    out = pd.Series(pd.NA, index=times.index, dtype="Int64")
    known = as_ns.notna()
    out[known] = as_ns[known].astype("int64") // 1000
    return out


# --------------------------------------------------------------------------- finding rows
# The finding functions (cdckit.findings) take a narrow frame holding one or more whole groups and return
# finding rows (FINDING_COLUMNS).


def none_if_missing(value: Any) -> Any:
    """None for pandas' and Spark's missing markers (None, NA, float NaN); other values as they are."""
    return None if value is None or value is pd.NA or (isinstance(value, float) and np.isnan(value)) else value


def finding_frame(rows: Iterable[dict[str, Any]]) -> pd.DataFrame:
    """Finding rows as a frame with exactly :data:`FINDING_COLUMNS`."""
    rows = list(rows)
    return pd.DataFrame({name: pd.array([row.get(name) for row in rows], dtype=dtype)
                         for name, dtype in FINDING_COLUMNS.items()})


# --------------------------------------------------------------------------- the report


@dataclass
class Finding:
    """One kind of finding: its rows and what they mean."""

    name: str
    severity: str
    meaning: str
    frame: pd.DataFrame

    def __len__(self) -> int:
        return len(self.frame)


class OrderReport:
    """The ordering findings of a capture, one DataFrame each.

    ``report["inversions"]`` is a finding's frame (each row points at the
    event by ``source``/``offset``, and at the event it conflicts with by
    ``other_source``/``other_offset``); ``report.summary()`` counts them; in
    a notebook the report shows itself as a table.
    """

    def __init__(self, frames: dict[str, pd.DataFrame], by: str = "source") -> None:
        self.by = by
        self.findings: dict[str, Finding] = {}
        for name, spec in FINDINGS.items():
            frame = frames.get(name)
            if frame is None:
                frame = pd.DataFrame(columns=list(spec.columns))
            frame = frame[list(spec.columns)] if name != "lag" else frame
            self.findings[name] = Finding(name, spec.severity, spec.meaning, _sorted(frame.reset_index(drop=True)))

    def __getitem__(self, name: str) -> pd.DataFrame:
        return self.findings[name].frame

    def __iter__(self) -> Iterator[str]:
        return iter(self.findings)

    def grouping(self) -> str:
        """Which events were compared with each other (the ``by=`` of :func:`order_report`), in words."""
        return {"capture": "within each dialect across the whole capture",
                "source": "within each source (file or topic) and dialect",
                "partition": "within each source partition and dialect"}[self.by]

    def problems(self) -> int:
        """Rows in all findings except the lag summary."""
        return sum(len(f) for name, f in self.findings.items() if name != "lag")

    def summary(self) -> pd.DataFrame:
        """One row per finding: severity (``ok`` when there are no rows), rows, meaning."""
        return pd.DataFrame([{"finding": f.name, "severity": f.severity if len(f) and f.name != "lag" else "ok",
                              "rows": len(f), "meaning": f.meaning} for f in self.findings.values()])

    def __repr__(self) -> str:
        lines = [f"OrderReport: {self.problems()} finding row(s); events compared {self.grouping()}"]
        for f in self.findings.values():
            if f.name != "lag":
                state = f"{len(f)} {f.severity}" if len(f) else "none"
                lines.append(f"  {f.name:<24} {state}")
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        cells = []
        for row in self.summary().itertuples():
            colour = {"error": "#c0392b", "warning": "#b9770e", "info": "#2e86c1"}.get(row.severity, "#1e8449")
            cells.append(f"<tr><td><code>{html.escape(row.finding)}</code></td>"
                         f"<td style='color:{colour}'>{html.escape(row.severity)}</td><td>{row.rows}</td>"
                         f"<td style='text-align:left'>{html.escape(row.meaning)}</td></tr>")
        return (f"<p>Events compared {html.escape(self.grouping())} (<code>by={html.escape(repr(self.by))}</code>)"
                "</p><table><thead><tr><th>finding</th><th>severity</th><th>rows</th><th>meaning</th></tr></thead>"
                f"<tbody>{''.join(cells)}</tbody></table>")


def _sorted(frame: pd.DataFrame) -> pd.DataFrame:
    """A finding frame in a stable order (both engines give the same rows, not always in the same order)."""
    by = [c for c in ("table", "source", "partition", "offset", "other_offset", "key", "seq") if c in frame.columns]
    if frame.empty or not by:
        return frame
    # Arrow's sort is stable and orders texts by code point, as pandas' stable sort_values does (only faster)
    table = pa.table({c: pa.array(frame[c], from_pandas=True) for c in by})
    order = pc.sort_indices(table, sort_keys=[(c, "ascending", "at_start") for c in by])
    return frame.iloc[order.to_numpy()].reset_index(drop=True)


def order_report(events: pd.DataFrame, by: str = "source", max_gap: int = 1000,
                 heartbeat_factor: float = HEARTBEAT_FACTOR) -> OrderReport:
    """Everything wrong with the order of a capture; see :data:`FINDINGS` for the list.

    ``by``: which events are compared with each other (see :data:`STREAMS`):
    ``"source"`` (default: within each file or topic), ``"partition"`` or
    ``"capture"`` (within each dialect across all sources). Unpaired update
    halves come from ``events.attrs["quarantine"]`` (as :func:`cdckit.read`
    leaves it).

    >>> import cdckit
    >>> events = cdckit.read(cdckit.samples.path("oceanbase_extend/examples_idle"))
    >>> report = order_report(events)
    >>> len(report["heartbeat_gaps"]), report.by, "inversions" in report.summary()["finding"].tolist()
    (0, 'source', True)
    """
    stream = stream_columns(by)
    frame = narrow(events)
    frames = findings.finding_frames(frame, stream, max_gap, heartbeat_factor)
    frames["unpaired_halves"] = findings.unpaired_findings(events.attrs.get("quarantine"))
    frames["lag"] = findings.lag_summary(frame)
    return OrderReport(frames, by)


def report_from_rows(rows: pd.DataFrame, lag: pd.DataFrame, by: str = "source") -> OrderReport:
    """The report from all finding rows (any engine), the lag summary and the grouping used."""
    frames = {name: group.drop(columns="finding") for name, group in rows.groupby("finding", sort=False)}
    frames["lag"] = lag
    return OrderReport(frames, by)


def stream_columns(by: str) -> list[str]:
    """The columns of one stream for ``by`` (see :data:`STREAMS`), or ValueError naming the choices."""
    if by not in STREAMS:
        raise ValueError(f"by must be one of {sorted(STREAMS)}, not {by!r}")
    return STREAMS[by]


# The finding functions live in cdckit.findings (which imports the definitions above); this module offers
# their names as it always has.
from . import findings  # noqa: E402
from .findings import (heartbeat_findings, key_findings, keyless_findings, keyless_rows,  # noqa: E402
                       lag_summary, offset_gap_findings, sequence_gap_findings, time_findings,
                       transaction_findings, unpaired_findings)
