"""The transactions of a capture from begin to commit: one lane per transaction, in commit order.

Each transaction of :func:`cdckit.transactions` is a line from its begin time to its commit time (one point
where both are the same, as wal2json stamps every row of a transaction with its commit time), coloured by
its status (:data:`~cdckit.viz.style.TXN_STATUS_COLOURS`). Incomplete transactions are marked: their ends
are crosses, and their legend entry says "incomplete"; a transaction the capture never sees commit
(``no_commit``) runs, dashed, to the capture's last event time. Transactions without any time are left out,
and the figure says how many. Above ``max_points`` transactions the figure shows a sample, each status
keeping a fair share (small groups, such as the incomplete ones, kept whole).

>>> import cdckit
>>> from cdckit.viz import describe
>>> events = cdckit.samples.load("wal2json/postgres_v2")
>>> print(describe(transaction_timeline(events)))
title: Transactions from begin to commit
x: time (UTC)
y: transaction (commit order)
complete: 60 transaction(s)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from ..analysis.transactions import transactions as table_of
from ..optional import require
from ..values import is_missing
from .figures import add_notes, as_strings, date_strings, naive_utc
from .sampling import MAX_POINTS, sample_groups
from .style import TXN_STATUS_COLOURS
from .text import escaped_text, time_texts

if TYPE_CHECKING:
    import plotly.graph_objects as go

__all__ = ["transaction_timeline", "transactions_of", "transaction_labels"]


def transactions_of(events: pd.DataFrame, transactions: pd.DataFrame | None = None) -> pd.DataFrame:
    """The transactions table of the events (:func:`cdckit.transactions`), unless it is given."""
    return transactions if transactions is not None else table_of(events)


def transaction_labels(table: pd.DataFrame) -> pd.Series:
    """A lane label per transaction: its id (``dialect id`` when the table holds several dialects), or, for an
    unnamed one, where it begins.

    >>> table = pd.DataFrame({"txn_id": ["743", None], "dialect": ["wal2json"] * 2, "begin_offset": [0, 7]})
    >>> transaction_labels(table).tolist()
    ['743', '(unnamed) at offset 7']
    """
    ids = table["txn_id"].astype(object)
    labels = [
        f"(unnamed) at offset {offset}" if is_missing(txn) else str(txn)
        for txn, offset in zip(ids, table["begin_offset"].astype(object))
    ]
    if table["dialect"].nunique() > 1:
        labels = [f"{dialect} {label}" for dialect, label in zip(table["dialect"].astype(object), labels)]
    return pd.Series(labels, index=table.index, dtype=object)


def _hovers(table: pd.DataFrame) -> np.ndarray:
    """Each transaction's hover text, every value from the capture escaped (texts made per column)."""
    begins = time_texts(table["begin_time"]).where(table["begin_time"].notna(), "")
    commits = time_texts(table["commit_time"]).where(table["commit_time"].notna(), "")
    took = table["duration"].astype(object).where(table["duration"].notna(), None)
    texts = []
    for label, status, changes, tables, begin, commit, duration, detail in zip(
        table["_label"].tolist(),
        table["status"].tolist(),
        table["changes"].tolist(),
        table["tables"].tolist(),
        begins.tolist(),
        commits.tolist(),
        took.tolist(),
        table["detail"].tolist(),
    ):
        end = (
            f"commit {commit}"
            if commit
            else "no commit in the capture"
            if status == "no_commit"
            else "commit time unknown"
        )
        lines = [
            f"<b>transaction {escaped_text(label)}</b>: {escaped_text(status)}",
            f"{escaped_text(changes)} change(s): {escaped_text(tables)}",
            f"begin {begin}" if begin else "begin time unknown",
            end + (f" (took {escaped_text(duration)})" if duration is not None else ""),
        ]
        if not is_missing(detail):
            lines.append(escaped_text(detail))
        texts.append("<br>".join(lines))
    return as_strings(texts)


def transaction_timeline(
    events: pd.DataFrame, *, transactions: pd.DataFrame | None = None, max_points: int = MAX_POINTS
) -> go.Figure:
    """The transactions of ``events`` from begin to commit, one lane each in commit order (module notes).

    ``transactions``: the events' :func:`cdckit.transactions` table, when already computed.

    >>> import cdckit
    >>> events = cdckit.samples.load("wal2json/postgres_v2")
    >>> cut = events[events["offset"] != events.loc[events["op"] == "commit", "offset"].max()]
    >>> fig = transaction_timeline(cut)
    >>> [trace.name for trace in fig.data]
    ['complete', 'no_commit (incomplete)']
    """
    go = require("plotly.graph_objects", "viz", what="viz.transaction_timeline")
    table = transactions_of(events, transactions).reset_index(drop=True)
    table = table.assign(_label=transaction_labels(table))
    times = events["event_time"].where(events["event_time"].notna(), events["emit_time"])
    last = times.max() if times.notna().any() else pd.NaT
    open_ended = (table["status"] == "no_commit").to_numpy() & pd.notna(last)
    start = table["begin_time"].where(table["begin_time"].notna(), table["commit_time"])
    end = table["commit_time"].where(~open_ended, last)
    end = end.where(end.notna(), start)
    start = start.where(start.notna(), end)
    timed = start.notna().to_numpy()
    notes = [f"{int((~timed).sum()):,} transaction(s) without a time left out"] if not timed.all() else []
    table, start, end = table[timed], start[timed], end[timed]
    keep = sample_groups(table["status"].astype(str), max_points)
    if len(keep) < len(table):
        notes.insert(0, f"showing {len(keep):,} of {len(table):,} transactions (sampled evenly per status)")
        table, start, end = table.iloc[keep], start.iloc[keep], end.iloc[keep]
    xs_start, xs_end = date_strings(naive_utc(start)), date_strings(naive_utc(end))
    hovers = _hovers(table)
    lanes = as_strings(escaped_text(label) for label in table["_label"])
    statuses = table["status"].astype(str).to_numpy()
    fig = go.Figure()
    for status in [s for s in TXN_STATUS_COLOURS if (statuses == s).any()] + sorted(
        set(statuses) - set(TXN_STATUS_COLOURS)
    ):
        chosen = np.flatnonzero(statuses == status)
        incomplete = status not in ("complete", "undeclared")
        gaps = np.full(len(chosen), None, dtype=object)
        xs = np.column_stack([xs_start[chosen].astype(object), xs_end[chosen].astype(object), gaps]).ravel()
        ys = np.column_stack([lanes[chosen], lanes[chosen], gaps]).ravel()
        texts = np.column_stack([hovers[chosen], hovers[chosen], gaps]).ravel()
        positions = np.column_stack([chosen.astype(object), chosen.astype(object), gaps]).ravel()
        fig.add_trace(
            go.Scatter(
                x=xs,
                y=ys,
                mode="lines+markers",
                name=escaped_text(status) + (" (incomplete)" if incomplete else ""),
                line={
                    "color": TXN_STATUS_COLOURS.get(status, "#333"),
                    "width": 3,
                    "dash": "dash" if status == "no_commit" else "solid",
                },
                marker={"symbol": "x" if incomplete else "circle", "size": 10 if incomplete else 7},
                hovertext=texts,
                hoverinfo="text",
                customdata=positions,
                meta={"count": len(chosen), "what": "transaction(s)"},
            )
        )
    fig.update_layout(
        title={"text": "Transactions from begin to commit"},
        xaxis={"title": {"text": "time (UTC)"}, "type": "date"},
        yaxis={
            "title": {"text": "transaction (commit order)"},
            "type": "category",
            "categoryorder": "array",
            "categoryarray": list(dict.fromkeys(lanes.tolist())),
            "autorange": "reversed",
            "automargin": True,
        },
        hoverlabel={"align": "left"},
        legend_title_text="status",
        template="plotly_white",
        height=min(900, 220 + 14 * len(lanes)),
        margin={"t": 70},
    )
    add_notes(fig, notes)
    return fig
