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

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ..analysis.transactions import transactions as table_of
from ..optional import require
from ..values import is_missing
from .figures import add_notes, date_strings, naive_utc
from .sampling import MAX_POINTS, sample_groups
from .style import TXN_STATUS_COLOURS
from .text import escaped_text, time_text

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


def _hover(row: dict[str, Any], end_said: str) -> str:
    """A transaction's hover text, every value from the capture escaped."""
    lines = [
        f"<b>transaction {escaped_text(row['_label'])}</b>: {escaped_text(row['status'])}",
        f"{escaped_text(row['changes'])} change(s): {escaped_text(row['tables'])}",
        f"begin {escaped_text(time_text(row['begin_time']))}"
        if not is_missing(row["begin_time"])
        else "begin time unknown",
        end_said,
    ]
    if not is_missing(row["detail"]):
        lines.append(escaped_text(row["detail"]))
    return "<br>".join(lines)


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
    records = table.to_dict("records")
    statuses = table["status"].astype(str).to_numpy()
    fig = go.Figure()
    for status in [s for s in TXN_STATUS_COLOURS if (statuses == s).any()] + sorted(
        set(statuses) - set(TXN_STATUS_COLOURS)
    ):
        chosen = np.flatnonzero(statuses == status)
        incomplete = status not in ("complete", "undeclared")
        xs: list[Any] = []
        ys: list[Any] = []
        texts: list[Any] = []
        for i in chosen:
            row = records[i]
            said = (
                f"commit {escaped_text(time_text(row['commit_time']))}"
                if not is_missing(row["commit_time"])
                else "no commit in the capture"
                if status == "no_commit"
                else "commit time unknown"
            )
            if not is_missing(row["duration"]):
                said += f" (took {escaped_text(row['duration'])})"
            text = _hover(row, said)
            label = escaped_text(row["_label"])
            xs += [xs_start[i], xs_end[i], None]
            ys += [label, label, None]
            texts += [text, text, None]
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
                customdata=[v for i in chosen for v in (i, i, None)],
                meta={"count": len(chosen), "what": "transaction(s)"},
            )
        )
    lanes = [escaped_text(label) for label in table["_label"]]
    fig.update_layout(
        title={"text": "Transactions from begin to commit"},
        xaxis={"title": {"text": "time (UTC)"}, "type": "date"},
        yaxis={
            "title": {"text": "transaction (commit order)"},
            "type": "category",
            "categoryorder": "array",
            "categoryarray": list(dict.fromkeys(lanes)),
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
