"""Capture lag: ``emit_time - event_time`` in seconds over ``event_time``, one trace per table.

>>> import cdckit
>>> from cdckit.viz import describe
>>> print(describe(lag(cdckit.samples.load("canal/shop"))).splitlines()[0])
title: Capture lag per table
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

from ..frame import table_names
from ..optional import require
from ..values import is_missing
from .figures import add_notes, as_strings, date_strings, naive_utc, scatter_class, unique_index
from .sampling import MAX_POINTS, sample_groups, sampling_note
from .style import NO_TABLE
from .text import escaped_text, time_texts, where_text

if TYPE_CHECKING:
    import plotly.graph_objects as go

__all__ = ["lag"]


def lag(events: pd.DataFrame, *, max_points: int = MAX_POINTS) -> go.Figure:
    """Capture lag (``emit_time - event_time``, seconds) over ``event_time``, one trace per table.

    Only events with both times count; above ``max_points`` the figure shows
    a sample, evenly spaced in time per table.

    >>> import cdckit
    >>> fig = lag(cdckit.samples.load("canal/shop"))
    >>> sorted(t.name for t in fig.data)
    ['shop.customers', 'shop.order_items']
    """
    go = require("plotly.graph_objects", "viz", what="viz.lag")
    events = unique_index(events)
    events = events.assign(
        event_time=pd.to_datetime(events["event_time"], utc=True),
        emit_time=pd.to_datetime(events["emit_time"], utc=True),
    )
    both = events["event_time"].notna() & events["emit_time"].notna()
    frame = events[both]
    names = table_names(frame)
    frame = frame.assign(
        _table=names.where(names.notna(), NO_TABLE).astype(str),
        _x=naive_utc(frame["event_time"]),
        _lag=(frame["emit_time"] - frame["event_time"]).dt.total_seconds(),
    )
    frame = frame.sort_values("_x", kind="stable")
    notes = [] if len(frame) else ["no event has both event_time and emit_time"]
    keep = sample_groups(frame["_table"], max_points)
    if len(keep) < len(frame):
        notes.append(sampling_note(len(keep), len(frame), "table"))
        frame = frame.iloc[keep]
    fig = go.Figure()
    for name, group in frame.groupby("_table", sort=True):
        hover = as_strings(
            f"<b>{escaped_text(t)}</b>"
            + (f" key {escaped_text(k)}" if not is_missing(k) else "")
            + f"<br>{escaped_text(op)}<br>lag {s:.3f} s<br>event_time {escaped_text(a)}"
            f"<br>emit_time {escaped_text(b)}<br>{escaped_text(where_text(src, o))}"
            for t, k, op, s, a, b, src, o in zip(
                group["_table"],
                group["key"],
                group["op"],
                group["_lag"],
                time_texts(group["event_time"]),
                time_texts(group["emit_time"]),
                group["source"],
                group["offset"],
            )
        )
        fig.add_trace(
            scatter_class(go, len(group), None)(
                x=date_strings(group["_x"]),
                y=group["_lag"].to_numpy(),
                mode="markers",
                name=escaped_text(name),
                hovertext=hover,
                hoverinfo="text",
                customdata=group.index.to_numpy(),
                marker={"size": 6},
            )
        )
    fig.update_layout(
        title={"text": "Capture lag per table"},
        xaxis={"title": {"text": "event_time (UTC)"}, "type": "date"},
        yaxis_title="lag (s) = emit_time − event_time",
        legend_title_text="table",
        hoverlabel={"align": "left"},
        template="plotly_white",
        margin={"t": 70},
    )
    add_notes(fig, notes)
    return fig
