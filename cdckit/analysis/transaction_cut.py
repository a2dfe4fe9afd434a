"""Replay to a transaction boundary: which changes the state right after a transaction committed holds, and
which the state of the transactions a capture holds whole holds.

:func:`cdckit.materialize` takes ``after_transaction=`` and ``whole_transactions=`` and replays what
:func:`through_transaction` and :func:`whole_transactions_only` keep; the transactions left out are in the
result (``states.left_out``), never dropped silently.

>>> import cdckit
>>> events = cdckit.read(cdckit.samples.path("wal2json/postgres_v2"))
>>> kept, left_out = through_transaction(events, "730")
>>> len(kept) < len(events), "730" in set(left_out["txn_id"])
(True, False)
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd

from ..errors import CdcError
from ..frame import REPLAY_OPS
from .ordering.sort import sort_events
from .transactions import transactions_with_rows

__all__ = ["through_transaction", "whole_transactions_only", "TransactionNotFoundError", "left_out_warning"]


class TransactionNotFoundError(CdcError, KeyError):
    """``after_transaction=`` names a transaction the capture does not hold (the message lists some it does)."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


def _chosen(table: pd.DataFrame, txn_id: Any) -> int:
    """The row of ``table`` (:func:`cdckit.transactions`) whose transaction is ``txn_id``."""
    wanted = str(txn_id)
    ids = table["txn_id"].astype(object)
    found = np.flatnonzero(ids.eq(wanted).fillna(False).to_numpy(bool))
    if len(found) == 1:
        return int(found[0])
    if len(found) > 1:
        dialects = ", ".join(str(d) for d in table["dialect"].iloc[found])
        raise TransactionNotFoundError(
            f"transaction {wanted} is named by more than one dialect in this capture ({dialects}): "
            "read one dialect's capture (dialect=...) to replay to it"
        )
    named = [str(i) for i in ids.dropna()]
    if not named:
        raise TransactionNotFoundError(
            f"transaction {wanted} is not in the capture: it names no transaction (cdckit.transactions(events) "
            "lists what it holds)"
        )
    some = ", ".join(named[:5]) + (f" ... {', '.join(named[-3:])}" if len(named) > 8 else "")
    if 5 < len(named) <= 8:
        some = ", ".join(named)
    raise TransactionNotFoundError(
        f"transaction {wanted} is not in the capture; it holds {len(named):,} named transaction(s): {some} "
        "(cdckit.transactions(events) lists them)"
    )


def through_transaction(events: pd.DataFrame, txn_id: Any) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The events of the state right after transaction ``txn_id`` committed, and the transactions left out.

    Kept: every transaction that commits at or before it (:func:`cdckit.transactions` lists them in commit
    order), and every event in no transaction that comes before its last change in the canonical order
    (snapshot rows, schema changes). Left out: the transactions that commit after it, as rows of
    :func:`cdckit.transactions`. Raises :class:`TransactionNotFoundError` for an id the capture does not hold.

    >>> import cdckit
    >>> events = cdckit.read(cdckit.samples.path("pg_test_decoding/postgres"))
    >>> kept, left_out = through_transaction(events, 726)
    >>> sorted(set(kept["txn_id"].dropna())), len(left_out) > 0
    (['725', '726'], True)
    """
    events = events.reset_index(drop=True)
    table, rows = transactions_with_rows(events)
    at = _chosen(table, txn_id)
    if bool(table["complete"].eq(False).fillna(False).iat[at]):  # an undeclared one (NA) says nothing
        warnings.warn(
            f"transaction {txn_id} is not whole in this capture ({table['status'].iat[at]}: "
            f"{table['detail'].iat[at]}): the state holds its changes as the capture has them",
            UserWarning,
            stacklevel=3,
        )
    member = rows.to_numpy()
    rank = np.empty(len(events), np.int64)
    rank[sort_events(events).index.to_numpy()] = np.arange(len(events))
    changes = (member >= 0) & events["op"].isin(REPLAY_OPS).to_numpy()
    last = rank[changes & (member == at)].max() if (changes & (member == at)).any() else rank[member == at].max()
    if pd.isna(table["commit_offset"].iat[at]):  # it never commits here: its place is that of its last change
        ends = np.full(len(table), -1, np.int64)
        np.maximum.at(ends, member[member >= 0], rank[member >= 0])
        later = ends > last
        later[at] = False
    else:  # the table is in commit order
        later = np.arange(len(table)) > at
    keep = ((member >= 0) & ~later[np.clip(member, 0, None)]) | ((member < 0) & (rank <= last))
    return events[keep], table[later].reset_index(drop=True)


def whole_transactions_only(events: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The events without the transactions the capture holds only in part, and those transactions.

    Left out: every transaction whose ``complete`` is False in :func:`cdckit.transactions` (it never commits in
    the capture, changes are missing or more than declared, or it began before the capture). Kept: the
    complete ones, those whose producer declares no boundaries here (``undeclared``: nothing tells they are
    whole), and the events in no transaction.

    >>> import cdckit
    >>> events = cdckit.read(cdckit.samples.path("pg_test_decoding/postgres"))
    >>> cut = events.iloc[:-1]  # the capture ends before its last COMMIT
    >>> kept, left_out = whole_transactions_only(cut)
    >>> left_out["status"].tolist(), len(kept) < len(cut)
    (['no_commit'], True)
    """
    events = events.reset_index(drop=True)
    table, rows = transactions_with_rows(events)
    partial = table["complete"].eq(False).fillna(False).to_numpy(bool)
    member = rows.to_numpy()
    dropped = np.zeros(len(events), bool)
    if partial.any():
        dropped = (member >= 0) & partial[np.clip(member, 0, None)]
    return events[~dropped], table[partial].reset_index(drop=True)


def left_out_warning(left_out: pd.DataFrame, why: str) -> None:
    """Say in one line how many transactions a replay left out and why (``states.left_out`` lists them)."""
    if not len(left_out):
        return
    counts = left_out["status"].value_counts()
    kinds = ", ".join(f"{n:,} {status}" for status, n in counts.items())
    warnings.warn(
        f"materialize left out {len(left_out):,} transaction(s) {why} ({kinds}); states.left_out lists them",
        UserWarning,
        stacklevel=3,
    )
