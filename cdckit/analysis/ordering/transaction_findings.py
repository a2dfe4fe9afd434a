"""The transaction findings of the ordering report (pandas), each read from the one rule of
:mod:`cdckit.analysis.ordering.transaction_members` (the rule :func:`cdckit.transactions` reads too):

- ``incomplete_transactions``: a commit whose declared counts (in total or per table), or declared places,
  differ from the changes the capture holds (statuses ``missing_changes`` and ``extra_changes``);
- ``unbegun_transactions``: a commit marker whose BEGIN is not in the capture (dialects that write begins);
- ``repeated_begins``: a BEGIN seen again for a transaction already begun;
- ``unended_transactions``: changes of a transaction that neither begins nor ends in the capture, though its
  dialect marks transaction ends there;
- ``split_transactions``: a transaction whose changes of one source lie in several partitions;
- ``misordered_transactions``: changes that arrived after a higher-seq change of their transaction in the
  same place.

>>> import cdckit
>>> from cdckit.analysis.ordering.narrow import narrow
>>> events = cdckit.read(cdckit.samples.path("wal2json/examples")).iloc[1:]  # the first BEGIN left out
>>> rows = transaction_kernel_rows(Codes(narrow(events)))
>>> [(part["finding"].iat[0], part["offset"].iat[0]) for part in rows if len(part)]
[('unbegun_transactions', np.int64(2))]
>>> print(rows[1]["detail"].iat[0])
transaction 743 commits here without its BEGIN in the capture or a declared count: it began before the capture
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...frame import REPLAY_OPS
from .codes import Codes, run_starts, stable_order
from .rows import finding_rows
from .transaction_members import TransactionMembers, transaction_members

__all__ = ["transaction_kernel_rows", "transaction_label"]


def transaction_label(found: TransactionMembers, frame: pd.DataFrame, t: int) -> str:
    """``transaction <id>``, or ``a transaction without an id``."""
    if not found.named[t]:
        return "a transaction without an id"
    return f"transaction {frame['txn_id'].iat[int(found.first_row[t])]}"


def transaction_kernel_rows(codes: Codes, found: TransactionMembers | None = None) -> list[pd.DataFrame]:
    """The rows of every transaction finding (module notes), a frame per finding."""
    found = transaction_members(codes) if found is None else found
    frame = codes.frame
    return [
        _incomplete(found, frame),
        _unbegun(found, frame),
        _repeated(codes, found),
        _unended(found, frame),
        _split(codes, found),
        _misordered(found, frame),
    ]


def _listed(tables: list[tuple[str, int]]) -> str:
    return ", ".join(f"{name} {n}" for name, n in tables)


def _incomplete(found: TransactionMembers, frame: pd.DataFrame) -> pd.DataFrame:
    txns = np.flatnonzero(np.isin(found.status, ["missing_changes", "extra_changes"]))
    counts, details = [], []
    for t in txns.tolist():
        label = transaction_label(found, frame, t)
        total, tables = found.declared_changes[t], found.declared_tables[t]
        held = int(found.changes[t])
        if total is None and tables is not None:
            total = sum(tables.values())
        if total is None:  # only places declared
            counts.append(int(found.gaps[t]))
            details.append(
                f"{label} numbers its changes 0..n-1 in their seq; the capture holds {held} and none at "
                f"{found.gaps[t]} of those places"
            )
            continue
        counts.append(total - held)
        differ = found.differ[t]
        said = f" ({_listed(list(tables.items()))})" if tables else ""
        holds = f" ({_listed([(name, h) for name, _, h in differ])})" if differ else ""
        details.append(f"{label} declares {total} change(s){said}; the capture holds {held}{holds}")
    return finding_rows(
        "incomplete_transactions", frame, found.commit_row[txns], count=counts, detail=details, table=None, key=None
    )


def _unbegun(found: TransactionMembers, frame: pd.DataFrame) -> pd.DataFrame:
    txns = np.flatnonzero(found.unbegun)
    details = [
        f"{transaction_label(found, frame, t)} commits here without its BEGIN in the capture"
        + (" or a declared count: it began before the capture" if found.status[t] == "no_begin" else "")
        for t in txns.tolist()
    ]
    return finding_rows("unbegun_transactions", frame, found.commit_row[txns], detail=details, table=None, key=None)


def _repeated(codes: Codes, found: TransactionMembers) -> pd.DataFrame:
    begins = found.begin_rows  # in arrival order
    txn = found.txn_of[begins]
    begins, txn = begins[stable_order([txn])], txn[stable_order([txn])]
    start = run_starts([txn]) if len(begins) else np.zeros(0, bool)
    first = begins[np.maximum.accumulate(np.where(start, np.arange(len(begins)), 0))] if len(begins) else begins
    again = ~start
    frame = codes.frame
    details = [
        f"{transaction_label(found, frame, t)} begins again here: the producer restarted in it, and the changes "
        "between the two may come twice"
        for t in txn[again].tolist()
    ]
    return finding_rows("repeated_begins", frame, begins[again], first[again], detail=details, table=None, key=None)


def _unended(found: TransactionMembers, frame: pd.DataFrame) -> pd.DataFrame:
    txns = np.flatnonzero((found.status == "no_commit") & (found.begins == 0) & (found.changes > 0))
    details = [
        f"{transaction_label(found, frame, t)}: {found.changes[t]} change(s) from here, no BEGIN and no commit in "
        "the capture, though its dialect marks transaction ends there"
        for t in txns.tolist()
    ]
    return finding_rows(
        "unended_transactions", frame, found.first_change[txns], count=found.changes[txns], detail=details, key=None
    )


def _split(codes: Codes, found: TransactionMembers) -> pd.DataFrame:
    frame = codes.frame
    changes = np.flatnonzero((found.txn_of >= 0) & codes.op_is(REPLAY_OPS))
    txn = found.txn_of[changes]
    keys = [txn, codes("source", changes)]
    order = stable_order([*keys, found.in_change_order[changes]])
    changes = changes[order]
    keys = [k[order] for k in keys]
    start = np.flatnonzero(run_starts(keys)) if len(changes) else np.zeros(0, np.int64)
    # distinct partitions per (transaction, source)
    by_part = stable_order([*keys, codes("partition", changes)])
    part_start = run_starts([*(k[by_part] for k in keys), codes("partition", changes[by_part])])
    group = np.cumsum(run_starts(keys)) - 1
    partitions = np.bincount(group[by_part][part_start], minlength=len(start)) if len(changes) else start
    split = np.flatnonzero(partitions > 1)
    at = changes[start[split]]
    distinct, distinct_group = changes[by_part][part_start], group[by_part][part_start]
    wanted = partitions[distinct_group] > 1 if len(changes) else distinct_group.astype(bool)
    lists: dict[int, list[str]] = {}
    for g, p in zip(distinct_group[wanted].tolist(), frame["partition"].array.take(distinct[wanted]).tolist()):
        lists.setdefault(g, []).append(str(p))
    names = [lists[g] for g in split.tolist()]
    details = [
        f"{transaction_label(found, frame, int(found.txn_of[a]))}: its changes in {frame['source'].iat[a]} lie in "
        f"{len(p)} partitions ({', '.join(p)}): consumers reading the partitions apart see it in parts"
        for a, p in zip(at.tolist(), names)
    ]
    return finding_rows(
        "split_transactions", frame, at, count=partitions[split], detail=details, table=None, key=None, op=None
    )


def _misordered(found: TransactionMembers, frame: pd.DataFrame) -> pd.DataFrame:
    at, other = found.misordered_at, found.misordered_other
    details = [
        f"{transaction_label(found, frame, int(found.txn_of[a]))}: this change arrived after a later one of its "
        f"transaction (seq {frame['seq'].iat[o]})"
        for a, o in zip(at.tolist(), other.tolist())
    ]
    return finding_rows("misordered_transactions", frame, at, other, detail=details)
