"""Capture lag: ``emit_time - event_time`` in seconds over ``event_time``, one trace per table.

>>> import cdckit
>>> from cdckit.viz import describe
>>> print(describe(lag(cdckit.samples.load("canal/shop"))).splitlines()[0])
title: Capture lag per table
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

from ..optional import require
from ..ordering import table_names
from ._figures import _date_strings, _naive_utc, _note, _scatter, _strings, _unique_index
from ._text import _esc, _missing, _time_texts, _where
from .sampling import MAX_POINTS, _sampling_note, sample_groups
from .style import NO_TABLE

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
    events = _unique_index(events)
    events = events.assign(event_time=pd.to_datetime(events["event_time"], utc=True),
                           emit_time=pd.to_datetime(events["emit_time"], utc=True))
    both = events["event_time"].notna() & events["emit_time"].notna()
    frame = events[both]
    names = table_names(frame)
    frame = frame.assign(_table=names.where(names.notna(), NO_TABLE).astype(str),
                         _x=_naive_utc(frame["event_time"]),
                         _lag=(frame["emit_time"] - frame["event_time"]).dt.total_seconds())
    frame = frame.sort_values("_x", kind="stable")
    notes = [] if len(frame) else ["no event has both event_time and emit_time"]
    keep = sample_groups(frame["_table"], max_points)
    if len(keep) < len(frame):
        notes.append(_sampling_note(len(keep), len(frame), "table"))
        frame = frame.iloc[keep]
    fig = go.Figure()
    for name, group in frame.groupby("_table", sort=True):
        hover = _strings(f"<b>{_esc(t)}</b>" + (f" key {_esc(k)}" if not _missing(k) else "") +
                 f"<br>{_esc(op)}<br>lag {s:.3f} s<br>event_time {_esc(a)}"
                 f"<br>emit_time {_esc(b)}<br>{_esc(_where(src, o))}"
                 for t, k, op, s, a, b, src, o in zip(group["_table"], group["key"], group["op"], group["_lag"],
                                                      _time_texts(group["event_time"]),
                                                      _time_texts(group["emit_time"]), group["source"],
                                                      group["offset"]))
        fig.add_trace(_scatter(go, len(group), None)(
            x=_date_strings(group["_x"]), y=group["_lag"].to_numpy(), mode="markers", name=_esc(name),
            hovertext=hover, hoverinfo="text", customdata=group.index.to_numpy(), marker={"size": 6}))
    fig.update_layout(title={"text": "Capture lag per table"},
                      xaxis={"title": {"text": "event_time (UTC)"}, "type": "date"},
                      yaxis_title="lag (s) = emit_time − event_time", legend_title_text="table",
                      hoverlabel={"align": "left"}, template="plotly_white", margin={"t": 70})
    _note(fig, notes)
    return fig
