"""The timeline: events over time, one lane per table or per key of one table, one trace per op.

>>> import cdckit
>>> fig = timeline(cdckit.samples.load("canal/shop"))
>>> [trace.name for trace in fig.data]
['insert', 'update', 'delete']
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ..analysis.replayer import is_partial
from ..frame import find_table, table_names
from ..optional import require
from ..row_images import key_order, parse_image
from ..values import is_missing
from .figures import add_notes, as_strings, date_strings, naive_utc, scatter_class, unique_index
from .images import compare_images
from .sampling import MAX_POINTS, sample_groups, sampling_note
from .style import HOVER_WIDTH, NO_KEY, NO_TABLE, OP_COLOURS, OP_SYMBOLS
from .text import as_text, cut_text, escaped_text, records_of, shown_text, time_texts, where_text

if TYPE_CHECKING:
    import plotly.graph_objects as go

__all__ = ["timeline"]


def _hover_value(value: Any, absent: str) -> str:
    """An image value for hover text, cut to HOVER_WIDTH; ``absent`` where the image has no such column."""
    return absent if value is pd.NA else cut_text(shown_text(value), HOVER_WIDTH)


def _change_lines(event: dict[str, Any], limit: int = 8) -> list[str]:
    """Escaped hover lines that say what one event did."""
    op = event["op"]
    if op == "ddl":
        return [escaped_text(cut_text(as_text(event["ddl"]), 200))] if not is_missing(event["ddl"]) else []
    before, after = parse_image(event["before"]), parse_image(event["after"])
    if before is None and after is None:
        return []
    cells = compare_images(before, after, op, is_partial(event["dialect"]))
    if op in ("insert", "read", "delete", "tombstone"):
        shown = [f"{c}: {cut_text(shown_text(a if a is not pd.NA else b), HOVER_WIDTH)}" for c, b, a, _ in cells]
        head = f"{len(cells)} column(s)"
    else:
        changed = [(c, b, a, s) for c, b, a, s in cells if s not in ("unchanged", "not sent")]
        shown = [
            f"{c}: {_hover_value(b, '(not sent)' if s == 'changed' else '(new column)')} → "
            f"{_hover_value(a, '(removed)')}"
            for c, b, a, s in changed
        ]
        head = f"changed {len(changed)} of {len(cells)} column(s)"
    more = [f"… and {len(shown) - limit} more"] if len(shown) > limit else []
    return [escaped_text(head + ":")] + [escaped_text(line) for line in shown[:limit]] + more


def _hover(event: dict[str, Any], table: str) -> str:
    """The hover text of one event (everything from the capture escaped, then joined with <br>)."""
    head = f"<b>{escaped_text(event['op'])}</b> {escaped_text(table)}"
    if not is_missing(event["key"]):
        head += f" key {escaped_text(event['key'])}"
    lines = [head, escaped_text(event["_when"])]
    where = where_text(event["source"], event["offset"])
    if not is_missing(event["seq"]):
        where += f" seq {as_text(event['seq'])}"
    lines.append(escaped_text(where))
    return "<br>".join(lines + _change_lines(event))


_HOVER_COLUMNS = ["op", "key", "_when", "source", "offset", "seq", "before", "after", "ddl", "dialect"]


def timeline(
    events: pd.DataFrame, *, table: str | None = None, by: str = "table", max_points: int = MAX_POINTS
) -> go.Figure:
    """Events over time, one lane per table (``by="table"``) or per key of one table (``by="key"``).

    x is ``event_time`` (``emit_time`` for events without one; events with
    neither are left out and the figure says how many). One trace per op,
    coloured by :data:`OP_COLOURS`; DDL, heartbeats, transaction markers and
    tombstones have marker shapes of their own (:data:`OP_SYMBOLS`). The hover
    text says what the change did: for an update, which columns changed and
    from what to what. ``table``: ``"database.table"`` or the bare table
    name; required for ``by="key"`` (events of that table without a key get
    a lane of their own), optional for ``by="table"`` (only that table).
    Lanes are sorted from the top: tables by name, keys in their natural
    order (numbers by value, so ``[2]`` before ``[10]``; the lane of events
    without a key last). Above ``max_points`` events the figure shows a
    sample (module notes).

    >>> import cdckit
    >>> events = cdckit.samples.load("canal/shop")
    >>> fig = timeline(events, table="customers", by="key")
    >>> fig.layout.yaxis.title.text, len(fig.data)
    ('key of shop.customers', 3)
    >>> fig.layout.yaxis.categoryarray[:3]
    ('[1]', '[2]', '[3]')
    """
    return timeline_figure(events, table=table, by=by, max_points=max_points)


def timeline_figure(
    events: pd.DataFrame,
    *,
    table: str | None = None,
    by: str = "table",
    max_points: int = MAX_POINTS,
    webgl: bool | None = None,
) -> go.Figure:
    """:func:`timeline`, with the trace type fixed when ``webgl`` is given (the explorer keeps one type)."""
    go = require("plotly.graph_objects", "viz", what="viz.timeline")
    if by not in ("table", "key"):
        raise ValueError(f"by must be 'table' or 'key', not {by!r}")
    if by == "key" and table is None:
        raise ValueError("by='key' needs a table")
    events = unique_index(events)
    names = table_names(events)
    title = "Events over time per table"
    if table is not None:
        name = find_table(names, table)
        events, names = events[names == name], names[names == name]
        title = f"Events of {escaped_text(name)} per key" if by == "key" else f"Events of {escaped_text(name)}"
    if by == "key":
        lanes = events["key"].astype(object).where(events["key"].notna(), NO_KEY)
    else:
        lanes = names.where(names.notna(), NO_TABLE)
    times = events["event_time"].where(events["event_time"].notna(), events["emit_time"])
    notes = []
    timed = times.notna().to_numpy()
    if not timed.all():
        notes.append(f"{int((~timed).sum()):,} event(s) without a time left out")
    frame = events[timed].assign(
        _lane=lanes[timed].astype(str),
        _x=naive_utc(times[timed]),
        _table=names[timed].where(names[timed].notna(), NO_TABLE),
    )
    frame = frame.sort_values("_x", kind="stable")
    frame["_when"] = time_texts(frame["event_time"]).where(
        frame["event_time"].notna(), "emit_time " + time_texts(frame["emit_time"])
    )
    total = len(frame)
    keep = sample_groups(frame["_lane"] + "\x00" + frame["op"].astype(str), max_points)
    if len(keep) < total:
        notes.insert(0, sampling_note(len(keep), total, "lane and op"))
        frame = frame.iloc[keep]
    fig = go.Figure()
    records = records_of(frame, _HOVER_COLUMNS + ["_table"])
    ops = frame["op"].astype(str).to_numpy()
    labels = frame.index.to_numpy()
    lanes_shown = frame["_lane"].to_numpy()
    xs = date_strings(frame["_x"])
    for op in [o for o in OP_COLOURS if (ops == o).any()] + sorted(set(ops) - set(OP_COLOURS)):
        chosen = np.flatnonzero(ops == op)
        scatter = scatter_class(go, len(chosen), webgl)
        fig.add_trace(
            scatter(
                x=xs[chosen],
                y=as_strings(escaped_text(lanes_shown[i]) for i in chosen),
                mode="markers",
                name=escaped_text(op),
                marker={
                    "color": OP_COLOURS.get(op, "#333"),
                    "symbol": OP_SYMBOLS.get(op, "square"),
                    "size": 9,
                    "line": {"width": 0},
                },
                hovertext=as_strings(_hover(records[i], records[i]["_table"]) for i in chosen),
                hoverinfo="text",
                customdata=labels[chosen],
            )
        )
    order = sorted(set(frame["_lane"]), key=key_order if by == "key" else None)
    fig.update_layout(
        title={"text": title},
        xaxis={"title": {"text": "event_time (UTC)"}, "type": "date"},
        yaxis={
            "title": {"text": f"key of {escaped_text(name)}" if by == "key" else "table"},
            "type": "category",
            "categoryorder": "array",
            "categoryarray": [escaped_text(lane) for lane in order],
            "autorange": "reversed",
            "automargin": True,
        },
        hoverlabel={"align": "left"},
        legend_title_text="op",
        template="plotly_white",
        height=min(900, 220 + 26 * len(order)),
        margin={"t": 70},
    )
    add_notes(fig, notes)
    return fig


# --------------------------------------------------------------------------- diff
