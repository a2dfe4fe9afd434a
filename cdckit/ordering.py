"""Order of a capture: the canonical sort and the ordering report.

``sort_events`` puts events in the order they happened; ``order_report``
says what is wrong with the order they arrived in. Both work on the pandas
frame of :func:`cdckit.read`; :mod:`cdckit.spark` runs the same finding
functions on a Spark frame (one group of rows at a time), so the answers are
the same.

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
import itertools
from dataclasses import dataclass
from typing import Any, Iterable, Iterator

import numpy as np
import pandas as pd

from .dialects import registry
from .pairing import UNPAIRED

__all__ = [
    "sort_events",
    "order_report",
    "OrderReport",
    "Finding",
    "FINDINGS",
    "FINDING_COLUMNS",
    "LAG_COLUMNS",
    "CHANGE_OPS",
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
        "before": events["before"].astype(object).where(events["before"].notna(), None),
        "after": events["after"].astype(object).where(events["after"].notna(), None),
    })
    return frame.reset_index(drop=True)


def _micros(times: pd.Series) -> pd.Series:
    """UTC timestamps as integer microseconds (nullable), the precision both engines share."""
    as_ns = pd.to_datetime(times, utc=True)
    out = pd.Series(pd.NA, index=times.index, dtype="Int64")
    known = as_ns.notna()
    out[known] = as_ns[known].astype("int64") // 1000
    return out


# --------------------------------------------------------------------------- finding functions
# Each takes a narrow frame holding one or more whole groups and returns finding rows
# (FINDING_COLUMNS); Spark calls them once per group, pandas once for everything.


def none_if_missing(value: Any) -> Any:
    """None for pandas' and Spark's missing markers (None, NA, float NaN); other values as they are."""
    return None if value is None or value is pd.NA or (isinstance(value, float) and np.isnan(value)) else value


def _records(frame: pd.DataFrame, columns: list[str]) -> Iterator[dict[str, Any]]:
    """Rows as dicts with None for missing values."""
    names = list(columns)
    for values in zip(*(frame[c].tolist() for c in names)):
        yield {n: none_if_missing(v) for n, v in zip(names, values)}


def _finding(name: str, at: dict[str, Any], other: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    """One finding row pointing at event ``at`` (and ``other``)."""
    row = {"finding": name, "table": at.get("_table"), "key": at.get("key"), "source": at.get("source"),
           "offset": at.get("offset"), "partition": at.get("partition"), "seq": at.get("seq"), "op": at.get("op")}
    if other is not None:
        row.update(other_source=other.get("source"), other_offset=other.get("offset"), other_seq=other.get("seq"))
    row.update(extra)
    return row


def finding_frame(rows: Iterable[dict[str, Any]]) -> pd.DataFrame:
    """Finding rows as a frame with exactly :data:`FINDING_COLUMNS`."""
    frame = pd.DataFrame(list(rows), columns=list(FINDING_COLUMNS))
    return frame.astype(FINDING_COLUMNS)


def _groups(frame: pd.DataFrame, by: list[str], order: list[str], columns: list[str]
            ) -> Iterator[tuple[tuple, list[dict[str, Any]]]]:
    """The rows of ``frame`` grouped by ``by`` (missing values form a group), each group sorted by ``order``."""
    if frame.empty:
        return
    ordered = frame.sort_values(by + order, kind="stable", na_position="first")
    rows = _records(ordered, list(dict.fromkeys(by + order + columns)))
    yield from ((k, list(g)) for k, g in itertools.groupby(rows, key=lambda r: tuple(r[c] for c in by)))


_KEY_COLUMNS = ["dialect", "_table", "key", "source", "offset", "partition", "op", "seq", "_seq", "before", "after"]


def key_findings(frame: pd.DataFrame, snapshot_tables: frozenset[str] = frozenset()) -> pd.DataFrame:
    """Redeliveries, semantic duplicates, inversions and impossible transitions, per row key.

    Events without a key form one group per table (inversions and duplicates
    are then judged per table; transitions are not). ``snapshot_tables``:
    tables whose capture has snapshot (``read``) rows, where a change of a
    key never inserted is impossible.
    """
    changes = frame[frame["op"].isin(CHANGE_OPS)]
    out: list[dict[str, Any]] = []
    for (dialect, table, key), events in _groups(changes, ["dialect", "_table", "key"], ARRIVAL, _KEY_COLUMNS):
        firsts = []
        by_position: dict[tuple, dict] = {}
        by_image: dict[tuple, dict] = {}
        for event in events:
            image = (event["op"], event["before"], event["after"])
            if event["seq"] is not None:
                position = (event["seq"], *image)
                if position in by_position:
                    out.append(_finding("redeliveries", event, by_position[position]))
                    continue
                by_position[position] = event
            if image in by_image:
                out.append(_finding("semantic_duplicates", event, by_image[image]))
            else:
                by_image[image] = event
            firsts.append(event)
        top = None
        for event in firsts:
            if event["seq"] is None:
                continue
            if top is not None and event["_seq"] < top["_seq"]:
                out.append(_finding("inversions", event, top))
            elif top is None or event["_seq"] >= top["_seq"]:
                top = event
        if key is not None:
            out.extend(_transitions(firsts, table in snapshot_tables))
    return finding_frame(out)


def _transitions(events: list[dict[str, Any]], snapshot: bool) -> Iterator[dict[str, Any]]:
    """Impossible steps in one key's history, in seq order."""
    state, previous = None, None
    for event in sorted(events, key=lambda e: (e["_seq"], e["source"], e["partition"] or -1, e["offset"])):
        op = event["op"]
        problem = None
        if op == "insert" and state == "live":
            problem = "insert of a live key"
        elif op in ("update", "delete") and state == "dead":
            problem = f"{op} after the key was deleted"
        elif op in ("update", "delete") and state is None and snapshot:
            problem = f"{op} of a key the snapshot did not have"
        if problem:
            yield _finding("impossible_transitions", event, previous, detail=problem)
        state = "dead" if op == "delete" else "live"
        previous = event


def time_findings(frame: pd.DataFrame) -> pd.DataFrame:
    """Per table, events whose ``event_time`` is earlier than an event before them in seq order."""
    timed = frame[frame["op"].isin(CHANGE_OPS) & frame["seq"].notna() & frame["_event_us"].notna()]
    out = []
    columns = ["_table", "key", "source", "offset", "partition", "op", "seq", "_seq", "_event_us"]
    for _, events in _groups(timed, ["_table"], SEQ_ORDER, columns):
        top = None
        for event in events:
            if top is not None and event["_event_us"] < top["_event_us"]:
                back = (top["_event_us"] - event["_event_us"]) / 1e6
                out.append(_finding("time_inversions", event, top, value=back,
                                    detail=f"event_time {back:g} s earlier than an event before it in seq order"))
            elif top is None or event["_event_us"] >= top["_event_us"]:
                top = event
    return finding_frame(out)


def sequence_gap_findings(frame: pd.DataFrame, max_gap: int = 1000) -> pd.DataFrame:
    """Missing numbers in contiguous sequences, per dialect and partition.

    Only dialects whose ``seq`` is meant to be contiguous (their class sets
    ``contiguous_seq``: UniVerse, DataHub); a jump of more than ``max_gap`` numbers is taken
    as the start of a new run, not a loss.
    """
    contiguous = {name for name in frame["dialect"].dropna().unique() if _dialect_flag(name, "contiguous_seq")}
    numbered = frame[frame["dialect"].isin(contiguous) & frame["seq"].notna()]
    numbered = numbered[numbered["seq"].astype(str).str.fullmatch(r"\d+")]
    out = []
    for (dialect, partition), events in _groups(numbered, ["dialect", "partition"], ["_seq"],
                                                ["source", "offset", "seq"]):
        previous = None
        for event in events:
            if previous is not None:
                missing = int(event["seq"]) - int(previous["seq"]) - 1
                if 0 < missing <= max_gap:
                    out.append(_finding("sequence_gaps", event, previous, count=missing, table=None, key=None,
                                        detail=f"{dialect}: {missing} number(s) missing after "
                                               f"{int(previous['seq'])}"))
            previous = event
    return finding_frame(out)


def offset_gap_findings(frame: pd.DataFrame) -> pd.DataFrame:
    """Holes in Kafka offsets per source and partition (frames with a partition only).

    Dialects that send an update as two messages are left out: the update row
    keeps one of the two offsets.
    """
    split = {name for name in frame["dialect"].dropna().unique() if _dialect_flag(name, "splits_updates")}
    kafka = frame[frame["partition"].notna() & ~frame["dialect"].isin(split)]
    out = []
    for _, events in _groups(kafka, ["source", "partition"], ["offset"], ["seq"]):
        previous = None
        for event in events:
            if previous is not None and event["offset"] - previous["offset"] > 1:
                out.append(_finding("offset_gaps", event, previous, count=event["offset"] - previous["offset"] - 1,
                                    table=None, key=None, seq=None, op=None, other_seq=None))
            previous = event
    return finding_frame(out)


def transaction_findings(frame: pd.DataFrame) -> pd.DataFrame:
    """Transactions with a begin and no commit, per dialect, source and partition, in seq order.

    A begin with a ``txn_id`` waits for a commit with the same id; a begin
    without one is closed by the next commit.
    """
    markers = frame[frame["op"].isin(("begin", "commit"))]
    out = []
    for _, events in _groups(markers, ["dialect", "source", "partition"], ["_seq", "offset"], ["op", "txn_id", "seq"]):
        named: dict[str, dict] = {}
        anonymous: list[dict] = []
        for event in events:
            txn = event["txn_id"]
            if event["op"] == "begin":
                if txn is not None:
                    named[txn] = event
                else:
                    anonymous.append(event)
            elif txn is not None and txn in named:
                named.pop(txn)
            elif anonymous:
                anonymous.pop()
        for event in sorted([*named.values(), *anonymous], key=lambda e: e["offset"]):
            label = f"transaction {event['txn_id']}" if event["txn_id"] else "a transaction without an id"
            out.append(_finding("open_transactions", event, detail=f"{label} begins here; no commit follows",
                                table=None, key=None))
    return finding_frame(out)


def heartbeat_findings(frame: pd.DataFrame, factor: float = HEARTBEAT_FACTOR) -> pd.DataFrame:
    """Heartbeat intervals longer than ``factor`` times the usual (median) one, per dialect and source."""
    timed = frame[frame["_event_us"].notna()]
    out = []
    for _, events in _groups(timed, ["dialect", "source"], ["_event_us", "offset"], ["op"]):
        beats = [e for e in events if e["op"] == "heartbeat"]
        if len(beats) < 3:
            continue
        gaps = [b["_event_us"] - a["_event_us"] for a, b in zip(beats, beats[1:])]
        usual = float(np.median(gaps))
        if usual <= 0:
            continue
        times = [e["_event_us"] for e in events if e["op"] != "heartbeat"]
        for (a, b), gap in zip(zip(beats, beats[1:]), gaps):
            if gap > factor * usual:
                between = sum(1 for t in times if a["_event_us"] < t < b["_event_us"])
                out.append(_finding("heartbeat_gaps", b, a, value=gap / 1e6, count=between, table=None, key=None,
                                    detail=f"{gap / 1e6:g} s without a heartbeat (usual {usual / 1e6:g} s); "
                                           f"{between} other event(s) in between"))
    return finding_frame(out)


def keyless_findings(frame: pd.DataFrame) -> pd.DataFrame:
    """Tables with changes that carry no key."""
    keyless = frame[frame["op"].isin(CHANGE_OPS) & frame["key"].isna() & frame["_table"].notna()]
    return keyless_rows(keyless.groupby("_table").size().to_dict())


def keyless_rows(counts: dict[str, int]) -> pd.DataFrame:
    """Finding rows for ``{table: changes without a key}``."""
    return finding_frame({"finding": "keyless_tables", "table": table, "count": int(n),
                          "detail": f"{n} change(s) without a key: replayed as a multiset of rows"}
                         for table, n in sorted(counts.items()))


def unpaired_findings(quarantine: pd.DataFrame | None) -> pd.DataFrame:
    """Quarantined update halves that never met their partner."""
    if quarantine is None or quarantine.empty:
        return finding_frame([])
    halves = quarantine[quarantine["reason"].astype(str).str.contains(UNPAIRED, regex=False)]
    return finding_frame({"finding": "unpaired_halves", "source": r["source"], "offset": r["offset"],
                          "partition": r["partition"], "detail": r["reason"]}
                         for r in _records(halves, ["source", "offset", "partition", "reason"]))


def lag_summary(frame: pd.DataFrame) -> pd.DataFrame:
    """Per table, the distribution of ``emit_time - event_time`` in seconds (exact percentiles)."""
    timed = frame[frame["_table"].notna() & frame["_event_us"].notna() & frame["_emit_us"].notna()]
    rows = []
    for table, group in timed.groupby("_table", sort=True):
        lag = (group["_emit_us"] - group["_event_us"]).astype("float64").to_numpy() / 1e6
        rows.append({"table": table, "events": len(lag), "negative": int((lag < 0).sum()),
                     "min_s": lag.min(), "p50_s": np.percentile(lag, 50), "p90_s": np.percentile(lag, 90),
                     "p99_s": np.percentile(lag, 99), "max_s": lag.max(), "mean_s": lag.mean()})
    return pd.DataFrame(rows, columns=list(LAG_COLUMNS)).astype(LAG_COLUMNS)


def _dialect_flag(name: str, flag: str) -> bool:
    """A dialect class attribute, False for names not in the registry (e.g. the shop scenario)."""
    try:
        return bool(getattr(registry.get(name), flag))
    except Exception:
        return False


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

    def __init__(self, frames: dict[str, pd.DataFrame]) -> None:
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

    def problems(self) -> int:
        """Rows in all findings except the lag summary."""
        return sum(len(f) for name, f in self.findings.items() if name != "lag")

    def summary(self) -> pd.DataFrame:
        """One row per finding: severity (``ok`` when there are no rows), rows, meaning."""
        return pd.DataFrame([{"finding": f.name, "severity": f.severity if len(f) and f.name != "lag" else "ok",
                              "rows": len(f), "meaning": f.meaning} for f in self.findings.values()])

    def __repr__(self) -> str:
        lines = [f"OrderReport: {self.problems()} finding row(s)"]
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
        return ("<table><thead><tr><th>finding</th><th>severity</th><th>rows</th><th>meaning</th></tr></thead>"
                f"<tbody>{''.join(cells)}</tbody></table>")


def _sorted(frame: pd.DataFrame) -> pd.DataFrame:
    """A finding frame in a stable order (both engines give the same rows, not always in the same order)."""
    by = [c for c in ("table", "source", "partition", "offset", "other_offset", "key", "seq") if c in frame.columns]
    if frame.empty or not by:
        return frame
    return frame.sort_values(by, kind="stable", na_position="first").reset_index(drop=True)


def order_report(events: pd.DataFrame, max_gap: int = 1000,
                 heartbeat_factor: float = HEARTBEAT_FACTOR) -> OrderReport:
    """Everything wrong with the order of a capture; see :data:`FINDINGS` for the list.

    Unpaired update halves come from ``events.attrs["quarantine"]`` (as
    :func:`cdckit.read` leaves it).

    >>> import cdckit
    >>> events = cdckit.read(cdckit.samples.path("oceanbase_extend/examples_idle"))
    >>> report = order_report(events)
    >>> len(report["heartbeat_gaps"]) >= 0, "inversions" in report.summary()["finding"].tolist()
    (True, True)
    """
    frame = narrow(events)
    snapshot_tables = frozenset(frame.loc[frame["op"] == "read", "_table"].dropna())
    rows = pd.concat([key_findings(frame, snapshot_tables), time_findings(frame),
                      sequence_gap_findings(frame, max_gap), offset_gap_findings(frame),
                      transaction_findings(frame), heartbeat_findings(frame, heartbeat_factor),
                      keyless_findings(frame), unpaired_findings(events.attrs.get("quarantine"))])
    return report_from_rows(rows, lag_summary(frame))


def report_from_rows(rows: pd.DataFrame, lag: pd.DataFrame) -> OrderReport:
    """The report from all finding rows (any engine) and the lag summary."""
    frames = {name: group.drop(columns="finding") for name, group in rows.groupby("finding", sort=False)}
    frames["lag"] = lag
    return OrderReport(frames)

