"""The rows of the ordering report, computed a column at a time (the pandas kernels).

Every finding function takes the narrow frame of
:func:`cdckit.analysis.ordering.narrow.narrow` (all of it, or whole groups of it) and
returns finding rows (:mod:`cdckit.analysis.ordering.rows`). The findings are
those of :mod:`cdckit.analysis.ordering.catalogue`; here they are comparisons
of neighbouring or running values, events put in order and grouped by the
integer codes of :mod:`cdckit.analysis.ordering.codes`; texts (``detail``) are
written in Python, for the finding rows only. The findings about one row's
changes are in :mod:`cdckit.analysis.ordering.row_changes`, those replay gives
in :mod:`cdckit.analysis.ordering.replayed`; :func:`finding_frames` gathers the rest.

>>> import cdckit
>>> from cdckit.analysis.ordering.catalogue import FINDINGS
>>> from cdckit.analysis.ordering.narrow import narrow
>>> events = cdckit.read(cdckit.samples.path("canal/examples"))
>>> found = finding_frames(narrow(events), ["dialect", "source"])
>>> set(found) <= set(FINDINGS)
True
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ...dialects import registry
from ...frame import CHANGE_OPS
from ...values import none_if_missing
from .catalogue import LAG_COLUMNS, keyless_detail
from .codes import Codes, run_starts, running_top, sorted_groups, stable_order
from .narrow import SEQ_ORDER
from .row_changes import key_rows
from .rows import finding_frame, finding_rows
from .transaction_findings import transaction_kernel_rows

__all__ = [
    "finding_frames",
    "time_findings",
    "sequence_gap_findings",
    "offset_gap_findings",
    "quarantined_offsets",
    "transaction_findings",
    "heartbeat_findings",
    "keyless_findings",
    "keyless_rows",
    "unpaired_findings",
    "lag_summary",
]

# --------------------------------------------------------------------------- the finding functions

#: A heartbeat gap is this many times the usual (median) interval, or longer.
HEARTBEAT_FACTOR = 3.0


def _in(codes: Codes, rows: np.ndarray, columns: list[str], wanted: frozenset[tuple]) -> np.ndarray:
    """Whether each row's ``columns`` are a tuple in ``wanted`` (looked up once per distinct tuple)."""
    if not wanted or len(rows) == 0:
        return np.zeros(len(rows), bool)
    order = stable_order([codes(c, rows) for c in columns])
    start = run_starts([codes(c, rows[order]) for c in columns])
    firsts = rows[order[start]]
    hit = np.array([tuple(none_if_missing(codes.frame[c].iat[r]) for c in columns) in wanted for r in firsts])
    out = np.empty(len(rows), bool)
    out[order] = hit[np.cumsum(start) - 1]
    return out


def time_findings(frame: pd.DataFrame, stream: Sequence[str] = ("dialect",)) -> pd.DataFrame:
    """Per stream and table, events whose ``event_time`` is earlier than an event before them in seq order.

    >>> frame = pd.DataFrame({"dialect": "d", "_table": "t", "key": None, "source": "s", "offset": [0, 1],
    ...     "partition": pd.array([None] * 2, "Int64"), "op": "insert", "seq": ["1", "2"], "_seq": ["1", "2"],
    ...     "_event_us": pd.array([2_500_000, 0], "Int64")})
    >>> time_findings(frame)["detail"].tolist()
    ['event_time 2.5 s earlier than an event before it in seq order']
    """
    return _time_rows(Codes(frame), stream)


def _time_rows(codes: Codes, stream: Sequence[str]) -> pd.DataFrame:
    timed = np.flatnonzero(codes.op_is(CHANGE_OPS) & codes.known("seq") & codes.known("_event_us"))
    rows, start = sorted_groups(codes, timed, [*stream, "_table"], SEQ_ORDER)
    when = codes("_event_us", rows)
    below, top = running_top(start, when)
    at, other = rows[below], rows[top[below]]
    back = ((codes("_event_us", other) - codes("_event_us", at)) / 1e6).tolist()
    return finding_rows(
        "time_inversions",
        codes.frame,
        at,
        other,
        value=back,
        detail=[f"event_time {b:g} s earlier than an event before it in seq order" for b in back],
    )


def _dialects_with(frame: pd.DataFrame, flag: str) -> list[str]:
    """The dialects of the frame whose class sets ``flag`` (names not in the registry do not)."""
    names = []
    for name in frame["dialect"].dropna().unique():
        try:
            if getattr(registry.get(name), flag):
                names.append(name)
        except Exception:
            pass
    return names


def _integers(texts: pd.Series) -> np.ndarray:
    """Digit texts as integers (int64, or Python ints where they do not fit)."""
    try:
        return texts.astype(object).astype(np.int64).to_numpy()
    except (OverflowError, ValueError):
        return np.array([int(t) for t in texts], dtype=object)


def sequence_gap_findings(
    frame: pd.DataFrame, max_gap: int = 1000, stream: Sequence[str] = ("dialect",)
) -> pd.DataFrame:
    """Missing numbers in contiguous sequences, per stream and partition, in seq order.

    Only dialects whose ``seq`` is meant to be contiguous (their class sets
    ``contiguous_seq``: UniVerse, DataHub) and only all-digit seqs; a jump of
    more than ``max_gap`` numbers is taken as the start of a new run, not a loss.

    >>> frame = pd.DataFrame({"dialect": "universe", "source": "s", "offset": [0, 1, 2],
    ...     "partition": pd.array([None] * 3, "Int64"), "seq": ["1", "2", "5"], "_seq": ["1", "2", "5"]})
    >>> sequence_gap_findings(frame)["detail"].tolist()
    ['universe: 2 number(s) missing after 2']
    """
    return _sequence_gap_rows(Codes(frame), max_gap, stream)


def _sequence_gap_rows(codes: Codes, max_gap: int, stream: Sequence[str]) -> pd.DataFrame:
    frame = codes.frame
    numbered = np.flatnonzero(
        frame["dialect"].isin(_dialects_with(frame, "contiguous_seq")).to_numpy() & codes.known("seq")
    )
    digits = frame["seq"].iloc[numbered].astype(str).str.fullmatch(r"\d+").to_numpy(bool)
    rows, start = sorted_groups(codes, numbered[digits], list(dict.fromkeys([*stream, "partition"])), ["_seq"])
    number = _integers(frame["seq"].iloc[rows])
    missing = np.concatenate([[0], number[1:] - number[:-1] - 1]) if len(rows) else np.zeros(0, np.int64)
    hits = np.flatnonzero(~start & (missing > 0) & (missing <= max_gap))
    at, other = rows[hits], rows[hits - 1]
    counts, afters = missing[hits].tolist(), number[hits - 1].tolist()
    dialects = frame["dialect"].iloc[at].tolist()
    return finding_rows(
        "sequence_gaps",
        frame,
        at,
        other,
        count=counts,
        table=None,
        key=None,
        detail=[f"{d}: {m} number(s) missing after {a}" for d, m, a in zip(dialects, counts, afters)],
    )


def offset_gap_findings(frame: pd.DataFrame, held: dict[tuple[str, int], np.ndarray] | None = None) -> pd.DataFrame:
    """Holes in Kafka offsets per source and partition (events with a partition only).

    Dialects that send an update as two messages are left out: the update row
    keeps one of the two offsets. ``held``: the offsets quarantined records
    hold (:func:`quarantined_offsets`), which are no hole.

    >>> frame = pd.DataFrame({"dialect": "x", "source": "t", "offset": [0, 3],
    ...     "partition": pd.array([0, 0], "Int64"), "seq": None})
    >>> offset_gap_findings(frame)[["offset", "other_offset", "count"]].values.tolist()
    [[3, 0, 2]]
    """
    return _offset_gap_rows(Codes(frame), held)


def quarantined_offsets(quarantine: pd.DataFrame | None) -> dict[tuple[str, int], np.ndarray]:
    """The Kafka offsets the quarantine holds, sorted, per source and partition (records whose place is known).

    >>> quarantined_offsets(pd.DataFrame({"source": ["t", "t"], "partition": pd.array([0, None], "Int64"),
    ...                                   "offset": [4, 5]}))
    {('t', 0): array([4])}
    """
    if quarantine is None or quarantine.empty:
        return {}
    placed = quarantine[quarantine["partition"].notna() & quarantine["offset"].notna()]
    return {
        (str(source), int(partition)): np.unique(group["offset"].to_numpy("int64"))
        for (source, partition), group in placed.groupby(["source", "partition"])
    }


def _offset_gap_rows(codes: Codes, held: dict[tuple[str, int], np.ndarray] | None = None) -> pd.DataFrame:
    frame = codes.frame
    kafka = np.flatnonzero(
        codes.known("partition") & ~frame["dialect"].isin(_dialects_with(frame, "splits_updates")).to_numpy()
    )
    rows, start = sorted_groups(codes, kafka, ["source", "partition"], ["offset"])
    offset = codes("offset", rows)
    step = np.concatenate([[0], offset[1:] - offset[:-1]]) if len(rows) else np.zeros(0, np.int64)
    hits = np.flatnonzero(~start & (step > 1))
    missing = step[hits] - 1
    if held:  # a quarantined record holds its offset: it arrived, it is not lost
        for n, hit in enumerate(hits):
            place = (frame["source"].iat[rows[hit]], int(frame["partition"].iat[rows[hit]]))
            offsets = held.get(place)
            if offsets is not None:
                low, high = offset[hit - 1], offset[hit]
                missing[n] -= np.searchsorted(offsets, high, "left") - np.searchsorted(offsets, low, "right")
        hits, missing = hits[missing > 0], missing[missing > 0]
    return finding_rows(
        "offset_gaps",
        frame,
        rows[hits],
        rows[hits - 1],
        count=missing,
        table=None,
        key=None,
        seq=None,
        op=None,
        other_seq=None,
    )


def transaction_findings(frame: pd.DataFrame) -> pd.DataFrame:
    """Transactions with a begin and no commit, per dialect, source and partition, in seq order.

    A begin with a ``txn_id`` waits for a commit with the same id, wherever
    it is (the last begin of an id is open when no commit has that id); a
    begin without one is closed by the next commit that closes no begin of
    its own id (the latest such begin first).

    >>> frame = pd.DataFrame({"dialect": "d", "source": "s", "offset": [0, 1, 2, 3],
    ...     "partition": pd.array([None] * 4, "Int64"), "op": ["begin", "begin", "commit", "begin"],
    ...     "txn_id": [None, None, None, "7"], "seq": None, "_seq": ""})
    >>> transaction_findings(frame)["detail"].tolist()  # the begin at offset 1 is the one committed
    ['a transaction without an id begins here; no commit follows', 'transaction 7 begins here; no commit follows']
    """
    return _transaction_rows(Codes(frame))


def _transaction_rows(codes: Codes) -> pd.DataFrame:
    frame = codes.frame
    rows, start = sorted_groups(
        codes, np.flatnonzero(codes.op_is(("begin", "commit"))), ["dialect", "source", "partition"], ["_seq", "offset"]
    )
    group = np.cumsum(start)
    begin = codes.op_is(("begin",), rows)
    named = codes.known("txn_id", rows)
    # per group and id, in any order (a producer may write its transaction records apart from the changes, and
    # their positions need not sort with them): a commit of an id that begins closes it; the last begin of an id
    # without a commit is open
    ids = np.flatnonzero(named)
    by_id = ids[stable_order([group[ids], codes("txn_id", rows[ids])])]
    id_start = run_starts([group[by_id], codes("txn_id", rows[by_id])])
    run = np.cumsum(id_start) - 1
    begins = np.bincount(run, weights=begin[by_id], minlength=int(id_start.sum())) > 0
    commits = np.bincount(run, weights=~begin[by_id], minlength=int(id_start.sum())) > 0
    closes = np.zeros(len(rows), bool)
    closes[by_id[~begin[by_id] & begins[run]]] = True
    last_begin = np.zeros(len(by_id), bool)  # the last begin of each id
    begin_at = np.flatnonzero(begin[by_id])
    if len(begin_at):
        later = np.append(run[begin_at][1:] != run[begin_at][:-1], True)
        last_begin[begin_at[later]] = True
    open_begins = [by_id[last_begin & ~commits[run]]]
    # begins without an id: a stack per group, pushed by each of them and popped (when not empty) by each
    # commit that closes no named begin; a begin stays open when the stack never drops below its depth again
    moves = np.flatnonzero((begin & ~named) | (~begin & ~closes))
    by_group = group[moves]
    total = pd.Series(np.where(begin[moves], 1, -1)).groupby(by_group).cumsum()
    depth = (total - np.minimum(total.groupby(by_group).cummin(), 0)).to_numpy()
    lowest_from = pd.Series(depth[::-1]).groupby(by_group[::-1]).cummin().to_numpy()[::-1]
    lowest_after = np.append(lowest_from[1:], 0)
    last = np.append(by_group[1:] != by_group[:-1], True)
    stays = begin[moves] & (last | (lowest_after >= depth))
    open_begins.append(moves[stays])
    found = np.concatenate(open_begins).astype(np.int64)
    found = found[stable_order([group[found], codes("offset", rows[found])])]
    at = rows[found]
    txns = frame["txn_id"].iloc[at].tolist()
    labels = [f"transaction {t}" if none_if_missing(t) else "a transaction without an id" for t in txns]
    return finding_rows(
        "open_transactions",
        frame,
        at,
        detail=[f"{label} begins here; no commit follows" for label in labels],
        table=None,
        key=None,
    )


def heartbeat_findings(frame: pd.DataFrame, factor: float = HEARTBEAT_FACTOR) -> pd.DataFrame:
    """Heartbeat intervals longer than ``factor`` times the usual (median) one, per dialect and source.

    >>> frame = pd.DataFrame({"dialect": "d", "source": "s", "offset": range(5), "op": ["heartbeat"] * 4 + ["x"],
    ...     "_event_us": pd.array([0, 1_000_000, 2_000_000, 9_000_000, 5_000_000], "Int64")})
    >>> heartbeat_findings(frame)["detail"].tolist()
    ['7 s without a heartbeat (usual 1 s); 1 other event(s) in between']
    """
    return _heartbeat_rows(Codes(frame), factor)


def _heartbeat_rows(codes: Codes, factor: float) -> pd.DataFrame:
    frame = codes.frame
    timed = np.flatnonzero(codes.known("_event_us"))
    beat = codes.op_is(("heartbeat",))
    # only the groups with three heartbeats or more are put in order
    rows, start = sorted_groups(codes, timed[beat[timed]], ["dialect", "source"], [])
    counts = np.diff(np.append(np.flatnonzero(start), len(rows)))
    beating = rows[np.flatnonzero(start)[counts >= 3]]
    wanted = _in(
        codes,
        timed,
        ["dialect", "source"],
        frozenset(tuple(none_if_missing(frame[c].iat[r]) for c in ("dialect", "source")) for r in beating),
    )
    rows, start = sorted_groups(codes, timed[wanted], ["dialect", "source"], ["_event_us", "offset"])
    at, other, gaps, between, usuals = [], [], [], [], []
    bounds = np.append(np.flatnonzero(start), len(rows))
    for first, end in zip(bounds[:-1], bounds[1:]):
        group = rows[first:end]
        when, is_beat = codes("_event_us", group), beat[group]
        beats, others = when[is_beat], when[~is_beat]
        gap = np.diff(beats)
        usual = float(np.median(gap))
        if usual <= 0:
            continue
        for i in np.flatnonzero(gap > factor * usual):
            at.append(group[is_beat][i + 1])
            other.append(group[is_beat][i])
            gaps.append(int(gap[i]))
            usuals.append(usual)
            between.append(
                int(np.searchsorted(others, beats[i + 1], "left") - np.searchsorted(others, beats[i], "right"))
            )
    return finding_rows(
        "heartbeat_gaps",
        frame,
        np.array(at, np.int64),
        np.array(other, np.int64),
        value=[g / 1e6 for g in gaps],
        count=between,
        table=None,
        key=None,
        partition=None,
        seq=None,
        other_seq=None,
        detail=[
            f"{g / 1e6:g} s without a heartbeat (usual {u / 1e6:g} s); {n} other event(s) in between"
            for g, u, n in zip(gaps, usuals, between)
        ],
    )


def keyless_findings(frame: pd.DataFrame) -> pd.DataFrame:
    """Tables with changes that carry no key.

    >>> detail = keyless_findings(pd.DataFrame({"op": ["insert"], "key": [None], "_table": ["t"]}))["detail"]
    >>> detail.iat[0].split("; ")[0]
    '1 change(s) of t without a key: replayed as a multiset of rows'

    """
    keyless = frame[frame["op"].isin(CHANGE_OPS) & frame["key"].isna() & frame["_table"].notna()]
    return keyless_rows(keyless.groupby("_table").size().to_dict())


def keyless_rows(counts: dict[str, int]) -> pd.DataFrame:
    """Finding rows for ``{table: changes without a key}``."""
    return finding_frame(
        {"finding": "keyless_tables", "table": table, "count": int(n), "detail": keyless_detail(table, int(n))}
        for table, n in sorted(counts.items())
    )


def unpaired_findings(quarantine: pd.DataFrame | None) -> pd.DataFrame:
    """Quarantined update halves that never met their partner (``reason_code == "unpaired_half"``)."""
    if quarantine is None or quarantine.empty:
        return finding_frame([])
    halves = quarantine[quarantine["reason_code"] == "unpaired_half"]
    columns = [halves[c].tolist() for c in ("source", "offset", "partition", "reason")]
    return finding_frame(
        {
            "finding": "unpaired_halves",
            "source": none_if_missing(source),
            "offset": none_if_missing(offset),
            "partition": none_if_missing(partition),
            "detail": none_if_missing(reason),
        }
        for source, offset, partition, reason in zip(*columns)
    )


def lag_summary(frame: pd.DataFrame) -> pd.DataFrame:
    """Per table, the distribution of ``emit_time - event_time`` in seconds (exact percentiles).

    >>> lag_summary(pd.DataFrame({"_table": ["t", "t"], "_event_us": [0, 0], "_emit_us": [1_000_000, 3_000_000]}
    ...     ))[["table", "events", "p50_s"]].values.tolist()
    [['t', 2, 2.0]]
    """
    timed = frame[frame["_table"].notna() & frame["_event_us"].notna() & frame["_emit_us"].notna()]
    rows = []
    for table, group in timed.groupby("_table", sort=True):
        lag = (group["_emit_us"] - group["_event_us"]).astype("float64").to_numpy() / 1e6
        rows.append(
            {
                "table": table,
                "events": len(lag),
                "negative": int((lag < 0).sum()),
                "min_s": lag.min(),
                "p50_s": np.percentile(lag, 50),
                "p90_s": np.percentile(lag, 90),
                "p99_s": np.percentile(lag, 99),
                "max_s": lag.max(),
                "mean_s": lag.mean(),
            }
        )
    return pd.DataFrame(rows, columns=list(LAG_COLUMNS)).astype(LAG_COLUMNS)


def finding_frames(
    frame: pd.DataFrame,
    stream: Sequence[str],
    max_gap: int = 1000,
    heartbeat_factor: float = HEARTBEAT_FACTOR,
    refused: np.ndarray | None = None,
    quarantine: pd.DataFrame | None = None,
) -> dict[str, pd.DataFrame]:
    """The finding rows of the narrow ``frame`` by finding, except those replay gives (impossible transitions and
    unmatched rows: :mod:`cdckit.analysis.ordering.replayed`), unpaired halves (from the quarantine) and lag.

    ``stream``: the columns of one stream (``STREAMS`` of :mod:`cdckit.analysis.ordering.identity`);
    ``refused``: the positions of the changes replay refuses; ``quarantine``: the capture's quarantine (its
    records hold their Kafka offsets).

    >>> import cdckit
    >>> from cdckit.analysis.ordering.narrow import narrow
    >>> events = cdckit.read(cdckit.samples.path("debezium/examples"))
    >>> found = finding_frames(narrow(events[events["op"] != "commit"]), ["dialect", "source"])
    >>> found["open_transactions"]["detail"].tolist()
    ['transaction file=mysql-bin.000003,pos=154 begins here; no commit follows']
    """
    codes = Codes(frame)
    parts = [
        *key_rows(codes, stream, refused),
        _time_rows(codes, stream),
        _sequence_gap_rows(codes, max_gap, stream),
        _offset_gap_rows(codes, quarantined_offsets(quarantine)),
        _transaction_rows(codes),
        *transaction_kernel_rows(codes),
        _heartbeat_rows(codes, heartbeat_factor),
        keyless_findings(frame),
    ]
    return {part["finding"].iat[0]: part for part in parts if len(part)}  # each part holds one finding
