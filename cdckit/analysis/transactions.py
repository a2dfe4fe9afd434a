"""Transactions of a capture: one row per transaction, with where it begins and commits and whether the
capture holds all of it.

A transaction is named by its dialect and its transaction key (``txn_id`` cut by the dialect's
``transaction_key``: Debezium for PostgreSQL writes ``txId:LSN`` and only ``txId`` names it); markers
without a key (wal2json and test_decoding without xids) frame the changes between them. Which events belong
to which transaction and its status are decided in one place,
:mod:`cdckit.analysis.ordering.transaction_members`, which the ordering report's transaction findings
read too.

Statuses (the first that applies):

- ``undeclared``: its dialect marks no transaction end anywhere in the capture (no begin or commit marker,
  no ``transaction_end`` change): nothing tells whether it is whole (``complete`` is NA);
- ``no_commit``: it never ends in the capture (cut, or rolled back);
- ``missing_changes``: fewer changes than its commit declares (in total or for a table), or a gap in the
  places its changes declare (Maxwell numbers a transaction's rows 0..n-1);
- ``extra_changes``: more changes than declared;
- ``no_begin``: its dialect writes begins, it has none, and nothing declares its count (the capture began in
  the middle of it);
- ``complete``.

>>> import cdckit
>>> table = cdckit.transactions(cdckit.read(cdckit.samples.path("debezium/examples")))
>>> table[["txn_id", "status", "changes", "declared_changes"]].values.tolist()
[['file=mysql-bin.000003,pos=154', 'complete', 2, 2], ['644', 'no_commit', 1, <NA>]]
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ..capture import Capture
from .ordering.codes import Codes
from .ordering.narrow import narrow
from .ordering.transaction_members import TransactionMembers, declared_text, transaction_members

__all__ = ["transactions", "transaction_rows", "transactions_with_rows", "TRANSACTION_COLUMNS"]

#: The columns of :func:`transactions`, in order, with their pandas dtypes.
TRANSACTION_COLUMNS: dict[str, str] = {
    "txn_id": "string",
    "dialect": "string",
    "status": "string",
    "complete": "boolean",
    "changes": "Int64",
    "tables": "string",
    "declared_changes": "Int64",
    "declared_tables": "string",
    "begin_source": "string",
    "begin_partition": "Int64",
    "begin_offset": "Int64",
    "begin_seq": "string",
    "commit_source": "string",
    "commit_partition": "Int64",
    "commit_offset": "Int64",
    "commit_seq": "string",
    "begin_time": "datetime64[ns, UTC]",
    "commit_time": "datetime64[ns, UTC]",
    "duration": "timedelta64[ns]",
    "places": "Int64",
    "redelivered": "Int64",
    "misordered": "Int64",
    "begins": "Int64",
    "commits": "Int64",
    "detail": "string",
}

#: The sort of the table: commit position, then begin position (nulls last), then dialect and id.
SORT_COLUMNS = (
    "commit_seq",
    "commit_source",
    "commit_partition",
    "commit_offset",
    "begin_seq",
    "begin_source",
    "begin_partition",
    "begin_offset",
    "dialect",
    "txn_id",
)


def transactions(events: Capture | pd.DataFrame) -> pd.DataFrame:
    """One row per transaction of a capture (a frame :func:`cdckit.read` returns, or several concatenated),
    in commit order: its id, status, changes per table, what its producer declared, where it begins and
    commits, its times, and a sentence saying what the capture tells of it. The columns are
    :data:`TRANSACTION_COLUMNS`; a capture without transactions gives no rows.

    >>> import cdckit
    >>> events = cdckit.read(cdckit.samples.path("wal2json/examples"))
    >>> table = cdckit.transactions(events)
    >>> table["status"].value_counts().to_dict()
    {'complete': 16}
    >>> table.loc[0, ["txn_id", "tables", "begin_seq"]].tolist()
    ['743', '{"public.p":1}', '00000000/01951530/00000000/00000000']
    """
    frame = Capture.of(events).events
    if frame.empty:
        return _empty()
    table, _ = _table(frame.reset_index(drop=True))  # the rows of several reads concatenated share index labels
    return table


def transaction_rows(events: Capture | pd.DataFrame) -> pd.Series:
    """Each event's transaction: its row in :func:`transactions` (``-1`` for an event in none), markers and
    changes alike, indexed as ``events``.

    >>> import cdckit
    >>> events = cdckit.read(cdckit.samples.path("wal2json/examples"))
    >>> rows = transaction_rows(events)
    >>> int(rows.max()) + 1 == len(cdckit.transactions(events)), rows.iloc[:3].tolist()
    (True, [0, 0, 0])
    """
    frame = Capture.of(events).events
    if frame.empty:
        return pd.Series(np.zeros(0, np.int64), index=frame.index)
    _, at = _table(frame.reset_index(drop=True))
    return pd.Series(at, index=frame.index)


def transactions_with_rows(events: Capture | pd.DataFrame) -> tuple[pd.DataFrame, pd.Series]:
    """:func:`transactions` and :func:`transaction_rows` of ``events``, found once.

    >>> import cdckit
    >>> table, rows = transactions_with_rows(cdckit.read(cdckit.samples.path("wal2json/examples")))
    >>> len(table), int(rows.max()) + 1
    (16, 16)
    """
    frame = Capture.of(events).events
    if frame.empty:
        return _empty(), pd.Series(np.zeros(0, np.int64), index=frame.index)
    table, at = _table(frame.reset_index(drop=True))
    return table, pd.Series(at, index=frame.index)


def _table(frame: pd.DataFrame) -> tuple[pd.DataFrame, np.ndarray]:
    """:func:`transactions` of ``frame`` (a RangeIndex) and each event's row in it (-1 for none)."""
    narrowed = narrow(frame, ordered=False)
    found = transaction_members(Codes(narrowed))
    if found.count == 0:
        return _empty(), np.full(len(frame), -1, np.int64)
    ids = narrowed["txn_id"].to_numpy(dtype=object)[found.first_row]
    ids[~found.named] = None
    data: dict[str, object] = {
        "txn_id": ids,
        "dialect": narrowed["dialect"].to_numpy(dtype=object)[found.first_row],
        "status": found.status,
        "complete": found.complete(),
        "changes": found.changes,
        "tables": [declared_text(t) for t in found.tables],
        "declared_changes": pd.array(found.declared_changes, dtype="Int64"),
        "declared_tables": [declared_text(t) for t in found.declared_tables],
    }
    times = pd.Series(frame["event_time"]).astype("datetime64[ns, UTC]").array
    for end, rows in (("begin", found.begin_row), ("commit", found.commit_row)):
        for column in ("source", "partition", "offset", "seq"):
            data[f"{end}_{column}"] = frame[column].array.take(rows, allow_fill=True)
        data[f"{end}_time"] = times.take(rows, allow_fill=True)
    data["duration"] = pd.Series(data["commit_time"]) - pd.Series(data["begin_time"])
    data.update(
        places=found.places,
        redelivered=found.redelivered,
        misordered=found.misordered,
        begins=found.begins,
        commits=found.commits,
        detail=_details(found, ids),
    )
    table = pd.DataFrame(
        {
            name: pd.Series(np.asarray(data[name]) if isinstance(data[name], list) else data[name]).array
            for name in TRANSACTION_COLUMNS
        }
    ).astype(TRANSACTION_COLUMNS)
    order = _commit_order(table)
    row_of = np.empty(found.count, np.int64)
    row_of[order] = np.arange(found.count)
    txn_of = np.asarray(found.txn_of)
    at = np.where(txn_of >= 0, row_of[np.clip(txn_of, 0, None)], -1)
    return table.iloc[order].reset_index(drop=True), at


def _empty() -> pd.DataFrame:
    """The table without rows."""
    return pd.DataFrame({name: pd.Series(dtype=dtype) for name, dtype in TRANSACTION_COLUMNS.items()})


def _commit_order(table: pd.DataFrame) -> np.ndarray:
    """The order of the rows sorted by :data:`SORT_COLUMNS` (texts by code point, nulls last), ties kept."""
    keys = pa.table({c: pa.array(table[c], from_pandas=True) for c in SORT_COLUMNS})
    return pc.sort_indices(keys, sort_keys=[(c, "ascending", "at_end") for c in SORT_COLUMNS]).to_numpy()


def _listed(tables: dict[str, int] | None) -> str:
    """``a 1, b 2`` (changes per table) for a sentence."""
    return ", ".join(f"{name} {n}" for name, n in (tables or {}).items())


def _details(found: TransactionMembers, ids: np.ndarray) -> list[str]:
    """The sentence of each transaction."""
    out = []
    for t in range(found.count):
        name = f"transaction {ids[t]}" if ids[t] is not None else "a transaction without an id"
        tables = _listed(found.tables[t])
        held = f"{found.changes[t]} change(s)" + (f" ({tables})" if tables else "") + f" in {found.places[t]} place(s)"
        status = found.status[t]
        declared = found.declared_changes[t]
        said = (
            f"declares {declared if declared is not None else sum((found.declared_tables[t] or {}).values())}"
            f" change(s)" + (f" ({_listed(found.declared_tables[t])})" if found.declared_tables[t] else "")
        )
        if status == "undeclared":
            state = "its dialect marks no transaction ends in this capture, so whether it is whole is unknown"
        elif status == "no_commit":
            state = "no commit in the capture: cut at the end of the capture, or rolled back"
        elif status in ("missing_changes", "extra_changes"):
            parts = [said] if (declared is not None or found.declared_tables[t]) else []
            if found.gaps[t]:
                parts.append(f"{found.gaps[t]} of its declared places hold no change")
            state = "; ".join(parts) + (
                ": changes are missing" if status == "missing_changes" else ": more than declared"
            )
        elif status == "no_begin":
            state = "its BEGIN is not in the capture: the capture began in the middle of it"
        else:
            state = "complete" + (f", as declared ({said})" if declared is not None or found.declared_tables[t] else "")
            if found.unbegun[t]:
                state += "; its BEGIN is not in the capture"
        notes = []
        if found.begins[t] > 1:
            notes.append(f"begun {found.begins[t]} times (the producer restarted in it)")
        if found.redelivered[t]:
            notes.append(f"{found.redelivered[t]} change(s) delivered again")
        if found.misordered[t]:
            notes.append(f"{found.misordered[t]} change(s) arrived after a later one")
        out.append(f"{name}: {held}; {state}" + "".join(f"; {n}" for n in notes))
    return out
