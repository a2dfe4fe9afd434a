"""Arrival order against seq order: where each event arrived and where its ``seq`` puts it, inversions in red.

>>> import cdckit
>>> fig = ordering(cdckit.samples.load("canal/shop"))
>>> fig.layout.title.text
'Arrival order against seq order'
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from ..analysis.ordering import order_report, sort_events
from ..frame import table_names
from ..optional import require
from ..values import is_missing
from .figures import add_notes, as_strings, scatter_class
from .sampling import MAX_POINTS, sample_groups, sampling_note
from .style import NO_TABLE
from .text import as_text, escaped_text, where_text

if TYPE_CHECKING:
    import plotly.graph_objects as go

    from ..analysis.ordering import OrderReport

__all__ = ["ordering"]


def ordering(events: pd.DataFrame, report: OrderReport | None = None, *, max_points: int = MAX_POINTS) -> go.Figure:
    """Arrival position (x) against position in seq order (y), with the inversions in red.

    Arrival order is ``(source, partition, offset)``, seq order is
    :func:`cdckit.sort_events` (``seq``, with gaps filled from the event
    before). An event on the diagonal arrived where its seq puts it. The
    events the ordering report lists as inversions (``report``, or
    ``order_report(events)``; matched by source and offset) form their own
    red trace. One trace per table otherwise; above ``max_points`` the
    inversions are kept and the rest sampled evenly per table.

    >>> import cdckit
    >>> fig = ordering(cdckit.samples.load("canal/shop"))
    >>> [t.name for t in fig.data][-1], len(fig.data[-1].x)
    ('inversions', 0)
    """
    go = require("plotly.graph_objects", "viz", what="viz.ordering")
    labels = events.index.to_numpy()
    frame = events.reset_index(drop=True)  # positions; labels[position] is the event's index label
    arrival = pd.Series(np.arange(len(frame)), index=sort_events(frame, by="arrival").index)
    in_seq = pd.Series(np.arange(len(frame)), index=sort_events(frame, by="seq").index)
    frame = frame.assign(
        _arrival=arrival.reindex(frame.index).to_numpy(), _seq_rank=in_seq.reindex(frame.index).to_numpy()
    )
    names = table_names(frame)
    frame["_table"] = names.where(names.notna(), NO_TABLE).astype(str)
    report = order_report(events) if report is None else report
    inv = report["inversions"]
    other = {
        (as_text(s), int(o)): (as_text(os_), oo, as_text(oseq))
        for s, o, os_, oo, oseq in zip(
            inv["source"], inv["offset"], inv["other_source"], inv["other_offset"], inv["other_seq"]
        )
    }
    position = list(zip(frame["source"].map(as_text), frame["offset"].astype("int64")))
    inverted = np.array([p in other for p in position], dtype=bool)
    frame = frame.sort_values("_arrival", kind="stable")
    inverted = inverted[frame.index.to_numpy()]
    bad, good = frame[inverted], frame[~inverted]
    notes = []
    keep_bad = sample_groups(pd.Series(["inversions"] * len(bad)), max_points)
    keep_good = sample_groups(good["_table"], max(max_points - len(keep_bad), 1)) if len(good) else np.arange(0)
    if len(keep_bad) + len(keep_good) < len(frame):
        notes.append(sampling_note(len(keep_bad) + len(keep_good), len(frame), "table; inversions kept"))
        bad, good = bad.iloc[keep_bad], good.iloc[keep_good]

    def hover(group: pd.DataFrame, extra: bool) -> np.ndarray:
        out = []
        for t, k, op, src, o, seq, a, s in zip(
            group["_table"],
            group["key"],
            group["op"],
            group["source"],
            group["offset"],
            group["seq"],
            group["_arrival"],
            group["_seq_rank"],
        ):
            text = (
                f"<b>{escaped_text(op)}</b> {escaped_text(t)}"
                + (f" key {escaped_text(k)}" if not is_missing(k) else "")
                + f"<br>{escaped_text(where_text(src, o))} seq {escaped_text(seq)}<br>arrival #{a}, seq order #{s}"
            )
            if extra:
                osrc, ooff, oseq = other[(as_text(src), int(o))]
                text += (
                    f"<br>arrived after {escaped_text(where_text(osrc, ooff))} (seq {escaped_text(oseq)}), "
                    "a later change to the same row"
                )
            out.append(text)
        return as_strings(out)

    fig = go.Figure()
    for name, group in good.groupby("_table", sort=True):
        fig.add_trace(
            scatter_class(go, len(group), None)(
                x=group["_arrival"].to_numpy(),
                y=group["_seq_rank"].to_numpy(),
                mode="markers",
                name=escaped_text(name),
                hovertext=hover(group, False),
                hoverinfo="text",
                customdata=labels[group.index.to_numpy()],
                marker={"size": 6},
            )
        )
    fig.add_trace(
        scatter_class(go, len(bad), None)(
            x=bad["_arrival"].to_numpy(),
            y=bad["_seq_rank"].to_numpy(),
            mode="markers",
            name="inversions",
            hovertext=hover(bad, True),
            hoverinfo="text",
            customdata=labels[bad.index.to_numpy()],
            marker={"size": 11, "color": "#d62728", "symbol": "x", "line": {"width": 1}},
        )
    )
    last = max(len(frame) - 1, 0)
    fig.add_shape(type="line", x0=0, y0=0, x1=last, y1=last, line={"color": "#bbb", "dash": "dot", "width": 1})
    fig.update_layout(
        title={"text": "Arrival order against seq order"},
        xaxis_title="arrival position (source, partition, offset)",
        yaxis_title="position in seq order",
        legend_title_text="table",
        hoverlabel={"align": "left"},
        template="plotly_white",
        margin={"t": 70},
    )
    add_notes(fig, notes)
    return fig
