"""A short, stable text summary of a figure, for notebooks and tests (a figure's JSON changes with plotly).

>>> import plotly.graph_objects as go
>>> figure = go.Figure(go.Scatter(x=[1, 2], y=[3, 4], name="inserts"), layout_title_text="Two points")
>>> print(describe(figure.update_layout(xaxis_title_text="when", yaxis_title_text="what")))
title: Two points
x: when
y: what
inserts: 2 points
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import plotly.graph_objects as go

__all__ = ["describe"]


def describe(fig: go.Figure) -> str:
    """A short, stable text summary of a figure: title, axis titles, points per trace, notes.

    A trace whose ``meta`` holds ``{"count": n, "what": "transactions"}`` (a line per item) says ``n transactions``.

    Notebooks print this instead of the figure's JSON, which changes with every plotly release.

    >>> import plotly.graph_objects as go
    >>> fig = go.Figure(go.Scatter(x=[1, 2], y=[3, 4], name="a"), layout={"title": {"text": "T"}})
    >>> print(describe(fig))
    title: T
    x:
    y:
    a: 2 points
    """
    layout = fig.layout
    lines = [
        f"title: {layout.title.text or ''}",
        f"x: {layout.xaxis.title.text or ''}",
        f"y: {layout.yaxis.title.text or ''}",
    ]
    for trace in fig.data:
        if isinstance(trace.meta, dict) and "count" in trace.meta:  # a trace of spans says how many it draws
            lines.append(f"{trace.name}: {trace.meta['count']} {trace.meta.get('what', 'items')}")
            continue
        points = trace.x if trace.x is not None else trace.y
        lines.append(f"{trace.name}: {0 if points is None else len(points)} points")
    lines += [f"note: {a.text}" for a in layout.annotations if a.name == "note"]
    return "\n".join(line.rstrip() for line in lines)
