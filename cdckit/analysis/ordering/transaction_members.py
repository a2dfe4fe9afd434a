"""Which events make each transaction, and what the capture holds of it: the one rule (pandas) behind
:func:`cdckit.transactions` and the transaction findings of the ordering report.

A transaction is named by its dialect and its transaction key (``txn_id`` cut by the dialect's
``transaction_key``); its members are its changes (ops of ``REPLAY_OPS``) and its ``begin`` and ``commit``
markers. Markers without a key frame the changes without a key between them, per dialect, source and
partition in arrival order: a begin opens a transaction that the next commit without a key closes (the latest
open begin first); such a commit that closes no begin is a transaction of its own, holding the changes since
the marker before it. Computed on the narrow frame (:mod:`cdckit.analysis.ordering.narrow`) with the integer
codes of :mod:`cdckit.analysis.ordering.codes`; the per-transaction texts are written in Python, once per
transaction.

Orders: **arrival** is (source, partition with nulls first, offset, row in the frame); **change order** is
(seq with nulls last, then arrival).

>>> import cdckit
>>> from cdckit.analysis.ordering.narrow import narrow
>>> found = transaction_members(Codes(narrow(cdckit.read(cdckit.samples.path("debezium/examples")))))
>>> found.count, found.status.tolist(), found.changes.tolist()
(2, ['no_commit', 'complete'], [1, 2])
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import orjson
import pandas as pd

from ... import values
from ...dialects import registry
from ...frame import REPLAY_OPS
from .codes import Codes, run_starts, running_top, stable_order

__all__ = ["STATUSES", "TransactionMembers", "transaction_members", "match_tables", "declared_text"]

#: The statuses of a transaction, in the order they are decided (the first that applies).
STATUSES = ("undeclared", "no_commit", "missing_changes", "extra_changes", "no_begin", "complete")


@dataclass
class TransactionMembers:
    """Every transaction of a narrow frame (numbered from 0: named ones by dialect and key, then the unnamed
    ones in the order of their first marker) and its members. Arrays of positions hold -1 for none."""

    count: int
    txn_of: np.ndarray  # per event: its transaction, -1 for none
    named: np.ndarray  # per transaction: whether a key names it
    first_row: np.ndarray  # per transaction: a member (its dialect and key are the transaction's)
    changes: np.ndarray  # changes held, a redelivered one once
    redelivered: np.ndarray
    misordered: np.ndarray
    places: np.ndarray
    begins: np.ndarray
    commits: np.ndarray  # commit markers and end changes
    commit_markers: np.ndarray
    begin_row: np.ndarray  # its BEGIN, else its first change in change order
    commit_row: np.ndarray  # its commit marker or end change, else (undeclared) its last change
    first_change: np.ndarray  # its first change in change order
    tables: list[dict[str, int]]  # changes held per table (redelivered once), names sorted
    declared_changes: list[int | None]
    declared_tables: list[dict[str, int] | None]
    differ: list[list[tuple[str, int, int]]]  # (table, declared, held) where they differ
    gaps: np.ndarray  # declared places missing (Maxwell numbers a transaction's rows 0..n-1)
    status: np.ndarray
    unbegun: np.ndarray = field(default_factory=lambda: np.zeros(0, bool))  # a commit marker, no BEGIN, though
    # its dialect writes begins in this capture
    begin_rows: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))  # every BEGIN marker, arrival
    misordered_at: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    misordered_other: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    arrival: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))  # per event: its arrival rank
    in_change_order: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))  # per event: change rank

    def complete(self) -> pd.array:
        """True/False per transaction; NA when ``undeclared``."""
        out = pd.array(self.status == "complete", dtype="boolean")
        out[self.status == "undeclared"] = pd.NA
        return out


def _seq_matches(codes: Codes, patterns: dict[str, str], rows_wanted: np.ndarray) -> pd.Series:
    """Per event, the first group of its dialect's pattern on ``seq`` (``extract``), or whether it matches."""
    frame = codes.frame
    out = pd.Series(None, index=frame.index, dtype=object)
    for name, pattern in patterns.items():
        rows = rows_wanted & (frame["dialect"] == name).to_numpy() & codes.known("seq")
        if rows.any():
            seq = frame["seq"][rows].astype(str)
            found = seq.str.extract(pattern, expand=False) if "(" in pattern else seq.str.contains(pattern)
            out[rows] = found.to_numpy(dtype=object)
    return out


def _ranks(keys: list[np.ndarray]) -> np.ndarray:
    """Each row's place (0..n-1) in the stable order of ``keys``."""
    order = stable_order(keys)
    rank = np.empty(len(order), np.int64)
    rank[order] = np.arange(len(order))
    return rank


def _pick(txn: np.ndarray, key: np.ndarray, rows: np.ndarray, count: int, last: bool = False) -> np.ndarray:
    """Per transaction, the row with the lowest (``last``: highest) ``key`` among ``rows``; -1 for none."""
    out = np.full(count, -1, np.int64)
    if len(rows):
        order = stable_order([txn, key])
        txns, rows = txn[order], rows[order]
        start = run_starts([txns])
        at = np.append(np.flatnonzero(start)[1:] - 1, len(order) - 1) if last else np.flatnonzero(start)
        out[txns[at]] = rows[at]
    return out


def _distinct(txn: np.ndarray, keys: list[np.ndarray], count: int) -> np.ndarray:
    """Per transaction, the number of distinct ``keys`` tuples among its rows."""
    if len(txn) == 0:
        return np.zeros(count, np.int64)
    order = stable_order([txn, *keys])
    start = run_starts([txn[order], *(k[order] for k in keys)])
    return np.bincount(txn[order][start], minlength=count)


def _unnamed(
    codes: Codes, arrival: np.ndarray, change: np.ndarray, begin: np.ndarray, commit: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The events of unnamed transactions (module notes) and, for each, the marker that names its transaction
    (its BEGIN, or the commit that closes no begin)."""
    named = codes.known("txn_id")
    markers = ~named & (begin | commit)
    if not markers.any():
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    place = ["dialect", "source", "partition"]
    rows = np.flatnonzero(markers | (~named & change))
    rows = rows[stable_order([*(codes(c, rows) for c in place), arrival[rows]])]
    group = np.cumsum(run_starts([codes(c, rows) for c in place])) - 1
    has_marker = np.bincount(group, weights=markers[rows]) > 0
    rows, group = rows[has_marker[group]], group[has_marker[group]]
    start = run_starts([group])
    # the stack: each begin pushes, each commit pops when it is not empty; depth after each event
    move = begin[rows].astype(np.int64) - commit[rows].astype(np.int64)
    total = pd.Series(move).groupby(group).cumsum().to_numpy()
    depth = total - np.minimum(pd.Series(total).groupby(group).cummin().to_numpy(), 0)
    before = np.concatenate([[0], depth[:-1]])
    before[start] = 0
    is_begin, is_commit = begin[rows], commit[rows]
    level = np.where(is_commit, before, depth)  # a begin and its commit, and the changes it holds, share a level
    owner = np.full(len(rows), -1, np.int64)
    # at a level above 0, a run of (group, level) reads begin, changes, commit, begin...: each event's owner is
    # the begin before it in that run
    index = np.arange(len(rows))
    order = stable_order([group, level])
    run = np.cumsum(run_starts([group[order], level[order]]))  # the latest begin of its own run, never another's
    last_begin = pd.Series(np.where(is_begin[order], index[order], -1)).groupby(run).cummax().to_numpy()
    inside = level[order] > 0
    owner[order[inside]] = last_begin[inside]
    # at level 0: a commit that closes no begin owns itself and the changes since the marker before it
    orphan = is_commit & (level == 0)
    owner[orphan] = index[orphan]
    marker = is_begin | is_commit
    big = len(rows)
    following = np.minimum.accumulate(np.where(marker, index, big)[::-1])[::-1]
    loose = ~marker & (level == 0)
    found = np.where(following < big, following, 0)
    claims = loose & (following < big) & (group[found] == group) & orphan[found]
    owner[claims] = following[claims]
    held = owner >= 0
    return rows[held], rows[owner[held]]


def transaction_members(codes: Codes) -> TransactionMembers:
    """Every transaction of the narrow frame of ``codes`` and what the capture holds of it (module notes)."""
    frame = codes.frame
    size = len(frame)
    change, begin, commit = codes.op_is(REPLAY_OPS), codes.op_is(("begin",)), codes.op_is(("commit",))
    named = codes.known("txn_id")
    arrival = _ranks([codes("source"), codes("partition"), codes("offset")]) if size else np.zeros(0, np.int64)
    in_change_order = (
        _ranks([(~codes.known("seq")).astype(np.int64), codes("seq"), arrival]) if size else np.zeros(0, np.int64)
    )
    ends = _seq_matches(codes, registry.transaction_ends(), change).to_numpy(dtype=object, copy=True)
    ends[pd.isna(ends)] = False  # in NumPy: pandas 2 warns of a downcast when fillna leaves object values
    end = ends.astype(bool)
    places = _seq_matches(codes, registry.transaction_places(), change & ~end)
    place = pd.to_numeric(places, errors="coerce").fillna(-1).astype(np.int64).to_numpy()

    # the transactions: named ones by (dialect, key), then one per unnamed BEGIN or commit closing no begin
    txn_of = np.full(size, -1, np.int64)
    rows = np.flatnonzero(named & (change | begin | commit))
    order = stable_order([codes("dialect", rows), codes("txn_id", rows)]) if len(rows) else rows
    rows = rows[order]
    txn_of[rows] = np.cumsum(run_starts([codes(c, rows) for c in ("dialect", "txn_id")])) - 1 if len(rows) else 0
    count = int(txn_of.max()) + 1 if len(rows) else 0
    loose, owners = _unnamed(codes, arrival, change, begin, commit)
    if len(owners):
        heads, numbered = np.unique(owners, return_inverse=True)
        heads_in_order = np.argsort(arrival[heads], kind="stable")
        number = np.empty(len(heads), np.int64)
        number[heads_in_order] = np.arange(len(heads)) + count
        txn_of[loose] = number[numbered]
        count += len(heads)
    is_named = np.zeros(count, bool)
    is_named[np.unique(txn_of[named & (txn_of >= 0)])] = True

    member = np.flatnonzero(txn_of >= 0)
    txn = txn_of[member]
    first_row = _pick(txn, arrival[member], member, count)
    cm = member[change[member]]  # the changes
    ct = txn_of[cm]
    # redelivered: a change whose (table, op, seq, key) an earlier one of its transaction has (seq known)
    sequenced = cm[codes.known("seq", cm)]
    identity = [txn_of[sequenced], *(codes(c, sequenced) for c in ("_table", "op", "seq", "key"))]
    dup = np.zeros(size, bool)
    if len(sequenced):
        order = stable_order([*identity, arrival[sequenced]])
        dup[sequenced[order][~run_starts([k[order] for k in identity])]] = True
    held = cm[~dup[cm]]
    ht = txn_of[held]
    # misordered: per transaction and place, in arrival order, a change below the highest seq before it. The
    # place is (source, partition, table): offsets are a Kafka topic's, and a capture saved to one file from
    # several topics (a Debezium topic per table) keeps each topic's offsets, which say nothing of the order
    # between tables
    known = cm[codes.known("seq", cm)]
    place_of = ["source", "partition", "_table"]
    order = stable_order([txn_of[known], *(codes(c, known) for c in place_of), arrival[known]])
    known = known[order]
    start = run_starts([txn_of[known], *(codes(c, known) for c in place_of)]) if len(known) else known
    below, top = running_top(start.astype(bool), codes("seq", known))
    marker_begin = member[begin[member]]
    marker_commit = member[commit[member]]
    ends_at = cm[end[cm]]

    begin_row = _pick(txn_of[marker_begin], arrival[marker_begin], marker_begin, count)
    first_change = _pick(ct, in_change_order[cm], cm, count)
    begin_row = np.where(begin_row >= 0, begin_row, first_change)
    commit_row = _pick(txn_of[marker_commit], arrival[marker_commit], marker_commit, count)
    end_row = _pick(txn_of[ends_at], arrival[ends_at], ends_at, count)
    commit_row = np.where(commit_row >= 0, commit_row, end_row)
    last_change = _pick(ct, in_change_order[cm], cm, count, last=True)

    found = TransactionMembers(
        count=count,
        txn_of=txn_of,
        named=is_named,
        first_row=first_row,
        changes=np.bincount(ht, minlength=count),
        redelivered=np.bincount(txn_of[dup], minlength=count),
        misordered=np.bincount(txn_of[known[below]], minlength=count),
        places=_distinct(ct, [codes("source", cm), codes("partition", cm)], count),
        begins=np.bincount(txn_of[marker_begin], minlength=count),
        commits=np.bincount(txn_of[marker_commit], minlength=count) + np.bincount(txn_of[ends_at], minlength=count),
        commit_markers=np.bincount(txn_of[marker_commit], minlength=count),
        begin_row=begin_row,
        commit_row=commit_row,
        first_change=first_change,
        tables=_tables(codes, held, ht, count),
        declared_changes=[None] * count,
        declared_tables=[None] * count,
        differ=[[] for _ in range(count)],
        gaps=_gaps(held[place[held] >= 0], ht[place[held] >= 0], place, count),
        status=np.full(count, "complete", dtype=object),
        begin_rows=marker_begin[np.argsort(arrival[marker_begin], kind="stable")],
        misordered_at=known[below],
        misordered_other=known[top[below]],
        arrival=arrival,
        in_change_order=in_change_order,
    )
    _declarations(found, frame, marker_commit, arrival)
    sequenced_changes = np.bincount(txn_of[cm[codes.known("seq", cm)]], minlength=count)
    _statuses(found, frame, begin, commit, end, sequenced_changes)
    found.commit_row = np.where((found.commit_row < 0) & (found.status == "undeclared"), last_change, found.commit_row)
    return found


def _tables(codes: Codes, held: np.ndarray, txn: np.ndarray, count: int) -> list[dict[str, int]]:
    """Per transaction, its changes held per table (names sorted; a change without a table is not named)."""
    out: list[dict[str, int]] = [{} for _ in range(count)]
    tabled = codes.known("_table", held)
    held, txn = held[tabled], txn[tabled]
    if len(held):
        order = stable_order([txn, codes("_table", held)])
        held, txn = held[order], txn[order]
        start = np.flatnonzero(run_starts([txn, codes("_table", held)]))
        sizes = np.diff(np.append(start, len(held)))
        names = codes.frame["_table"].to_numpy(dtype=object)[held[start]]
        for t, name, n in zip(txn[start].tolist(), names.tolist(), sizes.tolist()):
            out[t][name] = n
    return out


def _gaps(rows: np.ndarray, txn: np.ndarray, place: np.ndarray, count: int) -> np.ndarray:
    """Per transaction, how many of the places 0..(highest declared) no change holds."""
    highest = np.full(count, -1, np.int64)
    np.maximum.at(highest, txn, place[rows])
    distinct = _distinct(txn, [place[rows]], count)
    return np.where(highest >= 0, highest + 1 - distinct, 0)


def match_tables(declared: list[str], held: list[str]) -> dict[str, str]:
    """Each declared table name's name in the frame: the same name, else the held name that shares the most
    trailing dotted parts with it (at least the table's own), each held name matched once.

    >>> match_tables(["public.orders", "dbo.items"], ["shop.orders", "shop.dbo.items", "public.x"])
    {'public.orders': 'shop.orders', 'dbo.items': 'shop.dbo.items'}
    """
    found = {name: name for name in declared if name in held}
    free = [name for name in held if name not in found.values()]
    for name in declared:
        if name in found:
            continue
        parts = name.split(".")[::-1]
        best, shared = None, 0
        for other in free:
            same = 0
            for a, b in zip(parts, other.split(".")[::-1]):
                if a != b:
                    break
                same += 1
            if same > shared:
                best, shared = other, same
        if best is not None:
            found[name] = best
            free.remove(best)
    return found


def _declarations(found: TransactionMembers, frame: pd.DataFrame, commits: np.ndarray, arrival: np.ndarray) -> None:
    """What each transaction's first commit marker declaring something declares, and where the capture
    differs (the declared tables matched to the frame's by :func:`match_tables`)."""
    said = commits[frame["after"].iloc[commits].notna().to_numpy()] if len(commits) else commits
    first = _pick(found.txn_of[said], arrival[said], said, found.count)
    txns = np.flatnonzero(first >= 0)
    texts = frame["after"].array.take(first[txns]).tolist() if len(txns) else []
    for t, text in zip(txns.tolist(), texts):
        try:
            declared = orjson.loads(text)
        except (orjson.JSONDecodeError, TypeError):
            continue
        if not isinstance(declared, dict):
            continue
        total = declared.get("event_count")
        if total.__class__ is int:
            found.declared_changes[t] = total
        tables = declared.get("data_collections")
        if isinstance(tables, dict):
            tables = {str(k): v for k, v in sorted(tables.items()) if v.__class__ is int}
            found.declared_tables[t] = tables
            held = found.tables[t]
            if tables == held:
                continue
            names = match_tables(list(tables), list(held))
            differ = [(name, n, held.get(names.get(name, ""), 0)) for name, n in tables.items()]
            differ += [(name, 0, n) for name, n in held.items() if name not in names.values()]
            found.differ[t] = [d for d in differ if d[1] != d[2]]


def _statuses(
    found: TransactionMembers,
    frame: pd.DataFrame,
    begin: np.ndarray,
    commit: np.ndarray,
    end: np.ndarray,
    sequenced: np.ndarray,
) -> None:
    """Each transaction's status: the first of :data:`STATUSES` that applies.

    A dialect that marks a transaction's end only in its changes' ``seq`` (``transaction_end``: Maxwell's
    commit row) cannot tell of a transaction whose changes have no ``seq`` (Maxwell without
    ``output_binlog_position``): such a transaction without markers is ``undeclared``.
    """
    dialects = frame["dialect"].to_numpy(dtype=object)
    declaring = set(pd.unique(dialects[begin | commit | end]).tolist())
    beginning = set(pd.unique(dialects[begin]).tolist())
    dialect = dialects[found.first_row] if found.count else np.zeros(0, object)
    has_total = np.array([d is not None for d in found.declared_changes], bool)
    total = np.array([0 if d is None else d for d in found.declared_changes], np.int64)
    held = found.changes
    tables_fewer = np.array([any(h < d for _, d, h in diff) for diff in found.differ], bool)
    tables_more = np.array([any(h > d for _, d, h in diff) for diff in found.differ], bool)
    fewer = (has_total & (held < total)) | tables_fewer | (found.gaps > 0)
    more = (has_total & (held > total)) | tables_more
    said = has_total | np.array([d is not None for d in found.declared_tables], bool)
    unseen = np.isin(dialect, list(registry.transaction_ends())) & (sequenced == 0) & (found.begins == 0)
    decides = [
        ~np.isin(dialect, list(declaring)) | (unseen & (found.commits == 0)),
        found.commits == 0,
        fewer,
        more,
        np.isin(dialect, list(beginning)) & (found.begins == 0) & ~said,
    ]
    found.unbegun = np.isin(dialect, list(beginning)) & (found.begins == 0) & (found.commit_markers > 0)
    found.status = np.select(decides, list(STATUSES[:-1]), STATUSES[-1]).astype(object)


def declared_text(tables: dict[str, int] | None) -> str | None:
    """Changes per table as compact JSON object text, names sorted (``tables`` and ``declared_tables``).

    >>> declared_text({"public.orders": 1, "public.items": 2})
    '{"public.items":2,"public.orders":1}'
    """
    return None if tables is None else values.image(dict(sorted(tables.items())))
