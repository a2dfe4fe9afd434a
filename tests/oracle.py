"""The reference oracle: the first, per-event implementation of ordering findings and replay.

It walks every event in Python, one row key at a time. It is slow and plain,
which is what an oracle should be: the property tests check that the
columnar pandas engine (:mod:`cdckit.analysis.ordering`, :mod:`cdckit.analysis.replay`) and
the Spark engine (:mod:`cdckit.spark`) give exactly its answers. It is not
part of the package.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import numpy as np
import pandas as pd
import transaction_oracle

import cdckit
from cdckit.analysis.ordering import sort_events
from cdckit.analysis.ordering.catalogue import FINDING_COLUMNS
from cdckit.analysis.ordering.identity import STREAMS
from cdckit.analysis.ordering.kernels import (  # per table, never walked event by event
    HEARTBEAT_FACTOR,
    keyless_findings,
    lag_summary,
)
from cdckit.analysis.ordering.narrow import ARRIVAL, SEQ_ORDER, narrow
from cdckit.analysis.ordering.report import report_from_rows
from cdckit.analysis.ordering.sort import filled_seq
from cdckit.analysis.replay import PROBLEM_COLUMNS, TableStates, given_key_text

# The walk of one table, change by change, is the first implementation's own (the package keeps it for the
# rows that need it: key-change chains, keyless tables); what the oracle adds is walking every row with it.
from cdckit.analysis.replayer import Step, column_order, history_frame, problem_rows, replay_rows
from cdckit.dialects import registry
from cdckit.frame import CHANGE_OPS, REPLAY_OPS, find_table, table_names


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


_KEY_COLUMNS = ["dialect", "_table", "key", "source", "offset", "partition", "op", "seq", "_seq", "before", "after",
                "txn_id", "_row"]

#: The semantic duplicate's cause, by whether replay refuses it (the words are cdckit's own: the oracle checks
#: which rows get which).
from cdckit.analysis.ordering.catalogue import REPEAT_CAUSES  # noqa: E402


def key_findings(frame: pd.DataFrame, refused: frozenset = frozenset(), stream: Sequence[str] = ("dialect",)
                 ) -> pd.DataFrame:
    """Redeliveries, semantic duplicates and inversions, per row key.

    Events without a key form one group per table; their inversions are
    judged per row (the before image, else the after image). ``refused``:
    the ``_row`` of every change replay refuses.
    """
    changes = frame[frame["op"].isin(CHANGE_OPS)]
    out: list[dict[str, Any]] = []
    for group, events in _groups(changes, [*stream, "_table", "key"], ARRIVAL, _KEY_COLUMNS):
        *where, table, key = group
        firsts = []
        by_position: dict[tuple, dict] = {}
        for event in events:
            image = (event["op"], event["before"], event["after"])
            if event["seq"] is not None:
                # a snapshot row's place in the capture tells it apart: a snapshot gives all its rows one seq
                place = (event["source"], event["partition"], event["offset"]) if event["op"] == "read" else None
                position = (event["seq"], place, *image)
                if position in by_position:
                    out.append(_finding("redeliveries", event, by_position[position]))
                    continue
                by_position[position] = event
            firsts.append(event)
        previous = None  # in seq order: a change equal to the one just before it, at another seq, in no other txn
        for event in sorted(firsts, key=lambda e: (e["_seq"], e["source"], e["partition"] or -1, e["offset"])):
            if previous is not None and (event["op"], event["before"], event["after"]) == (
                    previous["op"], previous["before"], previous["after"]) and not (
                    event["seq"] is not None and event["seq"] == previous["seq"]) and not (
                    event["txn_id"] is not None and previous["txn_id"] is not None
                    and event["txn_id"] != previous["txn_id"]):
                out.append(_finding("semantic_duplicates", event, previous,
                                    detail=REPEAT_CAUSES[event["_row"] in refused]))
            previous = event
        tops: dict[Any, dict] = {}  # per partition (or none), and per row where the table has no key
        for event in firsts:
            if event["seq"] is None:
                continue
            place = None if pd.isna(event["partition"]) else int(event["partition"])
            if key is None:
                place = (place, event["before"] if event["before"] is not None else event["after"])
            top = tops.get(place)
            if top is not None and event["_seq"] < top["_seq"]:
                out.append(_finding("inversions", event, top))
            elif top is None or event["_seq"] >= top["_seq"]:
                tops[place] = event
    return finding_frame(out)


def replayed_findings(events: pd.DataFrame, frame: pd.DataFrame, stream: Sequence[str]
                      ) -> tuple[pd.DataFrame, frozenset]:
    """The changes each stream's replay (the Replayer's walk, change by change) refuses: impossible transitions
    (keyed rows, pointing at the change of the row before) and unmatched rows (rows without a key)."""
    numbered = events.reset_index(drop=True).assign(_row=np.arange(len(events)))
    at = {r["_row"]: r for r in _records(frame.assign(_row=np.arange(len(frame))), [*frame.columns, "_row"])}
    out, refused = [], set()
    keys = [numbered[c].astype(object).where(numbered[c].notna(), "\x00") for c in stream]
    for _, part in numbered.groupby(keys, sort=False, dropna=False):
        for table, _, steps, _ in replay_rows(_prepared(part, None, "seq")):
            for problem in problem_rows(table, steps):
                event = at[problem["_row"]]
                refused.add(problem["_row"])
                if problem["key"] is None:
                    out.append(_finding("unmatched_rows", event, detail=problem["problem"]))
                else:
                    other = None if problem["_previous_row"] is None else at[problem["_previous_row"]]
                    out.append(_finding("impossible_transitions", event, other, detail=problem["problem"]))
    return finding_frame(out), frozenset(refused)


def time_findings(frame: pd.DataFrame, stream: Sequence[str] = ("dialect",)) -> pd.DataFrame:
    """Per table, events whose ``event_time`` is earlier than an event before them in seq order."""
    timed = frame[frame["op"].isin(CHANGE_OPS) & frame["seq"].notna() & frame["_event_us"].notna()]
    out = []
    columns = ["_table", "key", "source", "offset", "partition", "op", "seq", "_seq", "_event_us"]
    for _, events in _groups(timed, [*stream, "_table"], SEQ_ORDER, [*columns, *stream]):
        top = None
        for event in events:
            if top is not None and event["_event_us"] < top["_event_us"]:
                back = (top["_event_us"] - event["_event_us"]) / 1e6
                out.append(_finding("time_inversions", event, top, value=back,
                                    detail=f"event_time {back:g} s earlier than an event before it in seq order"))
            elif top is None or event["_event_us"] >= top["_event_us"]:
                top = event
    return finding_frame(out)


def sequence_gap_findings(frame: pd.DataFrame, max_gap: int = 1000, stream: Sequence[str] = ("dialect",)) -> pd.DataFrame:
    """Missing numbers in contiguous sequences, per dialect and partition.

    Only dialects whose ``seq`` is meant to be contiguous (their class sets
    ``contiguous_seq``: UniVerse, DataHub); a jump of more than ``max_gap`` numbers is taken
    as the start of a new run, not a loss.
    """
    contiguous = {name for name in frame["dialect"].dropna().unique() if _dialect_flag(name, "contiguous_seq")}
    numbered = frame[frame["dialect"].isin(contiguous) & frame["seq"].notna()]
    numbered = numbered[numbered["seq"].astype(str).str.fullmatch(r"\d+")]
    out = []
    by = list(dict.fromkeys([*stream, "partition"]))
    for group, events in _groups(numbered, by, ["_seq"], ["source", "offset", "seq"]):
        dialect = group[0]
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


def offset_gap_findings(frame: pd.DataFrame, quarantine: pd.DataFrame | None = None) -> pd.DataFrame:
    """Holes in Kafka offsets per source and partition (frames with a partition only); a quarantined record
    holds its offset.

    Dialects that send an update as two messages are left out: the update row
    keeps one of the two offsets.
    """
    held = set()
    if quarantine is not None and not quarantine.empty:
        placed = quarantine[quarantine["partition"].notna() & quarantine["offset"].notna()]
        held = {(s, int(p), int(o)) for s, p, o in zip(placed["source"], placed["partition"], placed["offset"])}
    split = {name for name in frame["dialect"].dropna().unique() if _dialect_flag(name, "splits_updates")}
    kafka = frame[frame["partition"].notna() & ~frame["dialect"].isin(split)]
    out = []
    for _, events in _groups(kafka, ["source", "partition"], ["offset"], ["seq"]):
        previous = None
        for event in events:
            missing = 0 if previous is None else sum(
                (event["source"], int(event["partition"]), o) not in held
                for o in range(previous["offset"] + 1, event["offset"]))
            if missing:
                out.append(_finding("offset_gaps", event, previous, count=missing,
                                    table=None, key=None, seq=None, op=None, other_seq=None))
            previous = event
    return finding_frame(out)


def transaction_findings(frame: pd.DataFrame) -> pd.DataFrame:
    """Transactions with a begin and no commit, per dialect, source and partition, in seq order.

    A begin with a ``txn_id`` waits for a commit with the same id anywhere in the group; a begin without one
    is closed by the next commit that closes no named begin.
    """
    markers = frame[frame["op"].isin(("begin", "commit"))]
    out = []
    for _, events in _groups(markers, ["dialect", "source", "partition"], ["_seq", "offset"], ["op", "txn_id", "seq"]):
        begun = {e["txn_id"] for e in events if e["op"] == "begin" and e["txn_id"] is not None}
        committed = {e["txn_id"] for e in events if e["op"] != "begin" and e["txn_id"] is not None}
        named: dict[str, dict] = {}
        anonymous: list[dict] = []
        for event in events:
            txn = event["txn_id"]
            if event["op"] == "begin":
                if txn is not None:
                    if txn not in committed:
                        named[txn] = event
                else:
                    anonymous.append(event)
            elif txn is not None and txn in begun:
                pass
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


def unpaired_findings(quarantine: pd.DataFrame | None) -> pd.DataFrame:
    """Quarantined update halves that never met their partner."""
    if quarantine is None or quarantine.empty:
        return finding_frame([])
    halves = quarantine[quarantine["reason_code"] == "unpaired_half"]
    return finding_frame({"finding": "unpaired_halves", "source": r["source"], "offset": r["offset"],
                          "partition": r["partition"], "detail": r["reason"]}
                         for r in _records(halves, ["source", "offset", "partition", "reason"]))


def _dialect_flag(name: str, flag: str) -> bool:
    """A dialect class attribute, False for names not in the registry (e.g. the shop scenario)."""
    try:
        return bool(getattr(registry.get(name), flag))
    except Exception:
        return False




_REPLAY_COLUMNS = ["dialect", "_table", "key", "key_columns", "op", "before", "after", "seq", "_seq", "source",
                   "partition", "offset", "event_time"]


def drop_redeliveries(events: pd.DataFrame) -> pd.DataFrame:
    """The events without exact redeliveries (same dialect, table, key, seq, op and images; seq set; a snapshot
    row, also at the same place in the capture)."""
    subset = ["dialect", "database", "schema", "table", "key", "seq", "op", "before", "after"]
    arrival = sort_events(events, by="arrival")  # the copy that arrived first is the one kept
    text = arrival[subset].astype(object).where(arrival[subset].notna(), "\x00")
    reads = arrival["op"] == "read"
    text["_place"] = [f"{s}|{p}|{o}" if r else "\x00" for s, p, o, r in
                      zip(arrival["source"], arrival["partition"], arrival["offset"], reads)]
    duplicated = text.duplicated(keep="first").to_numpy() & arrival["seq"].notna().to_numpy()
    kept = arrival.index[~duplicated]
    return events[events.index.isin(kept)]


def _prepared(events: pd.DataFrame, as_of: Any, order: str) -> pd.DataFrame:
    """Row changes, redeliveries dropped, cut at ``as_of``, in replay order, with ``_table`` and ``_seq``."""
    changes = events[events["op"].isin(REPLAY_OPS)].reset_index(drop=True)
    if as_of is not None:
        cut = _timestamp(as_of)
        changes = changes[changes["event_time"].notna() & (changes["event_time"] <= cut)]
    changes = drop_redeliveries(changes)
    ordered = sort_events(changes, by=order)
    frame = ordered.reset_index(drop=True)
    frame.insert(0, "_table", table_names(frame).to_numpy())
    frame["_seq"] = filled_seq(frame)
    return frame[frame["_table"].notna()]


def _timestamp(value: Any) -> pd.Timestamp:
    """A time as a UTC timestamp (zone-less values are UTC)."""
    stamp = pd.Timestamp(value)
    return stamp.tz_localize("UTC") if stamp.tzinfo is None else stamp.tz_convert("UTC")


def _problems(table: str, steps: Iterable[Step]) -> list[dict[str, Any]]:
    return [{k: v for k, v in row.items() if k != "_pos"} for row in problem_rows(table, steps)]


def materialize(events: pd.DataFrame, as_of: Any = None, order: str = "seq") -> TableStates:
    """The state of every table after the changes (or at ``as_of``): ``{"database.table": DataFrame}``.

    One column per source column, one row per live key (rows in key order).
    ``as_of``: a time (text, datetime or Timestamp; zone-less means UTC):
    only changes with ``event_time`` at or before it count. ``order``:
    ``"seq"`` (default), ``"event_time"`` or ``"arrival"``.

    """
    frame = _prepared(events, as_of, order)
    states = TableStates()
    problems: list[dict[str, Any]] = []
    for table, replayer, steps, ranks in replay_rows(frame):
        rows = replayer.state_rows()
        columns = column_order(ranks)
        states[table] = pd.DataFrame.from_records(rows, columns=columns) if rows else pd.DataFrame(columns=columns)
        problems.extend(_problems(table, steps))
    states.problems = pd.DataFrame(problems, columns=PROBLEM_COLUMNS).astype({"offset": "Int64"}).sort_values(
        ["table", "source", "offset"], kind="stable").reset_index(drop=True)
    states.keyless = sorted(set(frame.loc[frame["key"].isna() & (frame["op"] != "truncate"), "_table"]))
    return dict_sorted(states)


def dict_sorted(states: TableStates) -> TableStates:
    """The same states with tables in name order."""
    out = TableStates((name, states[name]) for name in sorted(states))
    out.problems, out.keyless = states.problems, states.keyless
    return out


def history(events: pd.DataFrame, table: str, key: Any, order: str = "seq") -> pd.DataFrame:
    """Every version of one row: one line per change, the row after it and the columns that changed.

    ``table``: ``"database.table"`` or the bare table name; ``key``: the key
    value, a list of values for a composite key, or the key text.

    """
    frame = _prepared(events, None, order)
    name = find_table(frame["_table"], table)
    wanted = given_key_text(key)
    for _, _, steps, ranks in replay_rows(frame[frame["_table"] == name]):
        return history_frame(steps, wanted, column_order(ranks))
    return history_frame([], wanted, [])


#: Columns scd2 adds to the source columns.
SCD2_COLUMNS = ["valid_from", "valid_to", "is_current", "op", "seq"]


def scd2(events: pd.DataFrame, order: str = "seq") -> dict[str, pd.DataFrame]:
    """A type 2 history per table: one row per version of each row, ``valid_from``/``valid_to``/``is_current``.

    A version starts at the ``event_time`` of the insert, snapshot read or
    update that made it (``op``) and ends when the next change of that key
    (or a delete) comes; the current version has ``valid_to`` NaT. Tables
    without a key are left out (their rows have no identity).

    """
    frame = _prepared(events, None, order)
    out = {}
    for table, _, steps, ranks in replay_rows(frame):
        columns = column_order(ranks)
        versions: list[dict[str, Any]] = []
        open_version: dict[str, dict[str, Any]] = {}
        for step in steps:
            when = step.event["event_time"]
            if step.cleared is not None:  # a truncate: every row of the table goes
                for version in open_version.values():
                    version["valid_to"] = when
                open_version.clear()
                continue
            if step.old_key is None and step.new_key is None or (step.problem and step.new_row is step.old_row):
                continue
            if step.old_key is not None and step.old_key in open_version:
                open_version.pop(step.old_key)["valid_to"] = when
            if step.new_key is not None and step.new_row is not None:
                if step.new_key in open_version:
                    open_version.pop(step.new_key)["valid_to"] = when
                version = {**{c: step.new_row.get(c) for c in columns}, "valid_from": when, "valid_to": pd.NaT,
                           "op": step.event["op"], "seq": step.event["seq"]}
                open_version[step.new_key] = version
                versions.append(version)
        frame_out = pd.DataFrame(versions, columns=[*columns, "valid_from", "valid_to", "op", "seq"])
        frame_out["valid_to"] = pd.to_datetime(frame_out["valid_to"], utc=True)
        # Fixed since the first version: a table whose events have no time gave a zone-less valid_from.
        frame_out["valid_from"] = pd.to_datetime(frame_out["valid_from"], utc=True)
        frame_out.insert(len(columns) + 2, "is_current", frame_out["valid_to"].isna())
        if versions:
            out[table] = frame_out
    return out



def order_report(events: pd.DataFrame, by: str = "source", max_gap: int = 1000,
                 heartbeat_factor: float = HEARTBEAT_FACTOR):
    """The ordering report, finding by finding, one event at a time."""
    stream = STREAMS[by]
    frame = narrow(events)
    replayed, refused = replayed_findings(events, frame, stream)
    rows = pd.concat([replayed, key_findings(frame.assign(_row=np.arange(len(frame))), refused, stream),
                      time_findings(frame, stream),
                      sequence_gap_findings(frame, max_gap, stream),
                      offset_gap_findings(frame, cdckit.quarantine(events)),
                      transaction_findings(frame), transaction_oracle.findings(events),
                      heartbeat_findings(frame, heartbeat_factor),
                      keyless_findings(frame), unpaired_findings(cdckit.quarantine(events))])
    return report_from_rows(rows, lag_summary(frame), by)
