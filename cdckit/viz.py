"""Views of a capture: a timeline of events, before/after diffs, capture lag and arrival order.

>>> import cdckit
>>> from cdckit import viz
>>> events = cdckit.samples.load("canal/shop")
>>> print(viz.describe(viz.timeline(events)))
title: Events over time per table
x: event_time (UTC)
y: table
insert: 141 points
update: 149 points
delete: 30 points

The figures are plain ``plotly.graph_objects`` figures built with
``go.Scatter`` (``go.Scattergl`` above :data:`WEBGL_ABOVE` points, as plotly
express does); every trace keeps the index label of each event in
``customdata`` (its position instead when the frame's index repeats), which
the explorer (:mod:`cdckit.explorer`) uses to find the event a click points at.

Escaping: every value that comes from a capture (table names, keys, column
names and values, DDL text, source paths) is passed through
:func:`html.escape` before it reaches hover text, trace names, titles or tick
labels, and the diff's HTML (quotes are left alone outside attributes: plotly
shows ``&quot;`` as written). Plotly shows ``&lt;`` as ``<``, so a value
``<script>alert(1)</script>`` reads as itself and never runs. The diff's plain
text form shows values as they are, with control characters (terminal escape
sequences, new lines) written as ``\\x1b``, ``\\n``.

Big captures: above ``max_points`` (default :data:`MAX_POINTS`) the figures
show a deterministic sample. Each group of points (a table and op for the
timeline, a table for the lag and ordering views) gets a fair share of the
budget: groups smaller than their share are kept whole, so rare ops (DDL,
heartbeats, transaction markers) and small tables are never thinned, and the
larger groups are sampled evenly in time (or arrival) order. The figure then
says so in an annotation, e.g. ``showing 50,000 of 1,200,000 events (sampled
evenly per table and op; small groups kept whole)``, which :func:`describe`
repeats.
"""

from __future__ import annotations

import html
import os
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from . import values
from .dialects import registry
from .errors import UnknownDialectError
from .ordering import order_report, sort_events
from .ordering._shared import table_names
from .replay import find_table
from .replayer import key_order

if TYPE_CHECKING:
    from .ordering import OrderReport

__all__ = [
    "MAX_POINTS",
    "WEBGL_ABOVE",
    "HOVER_WIDTH",
    "OP_COLOURS",
    "OP_SYMBOLS",
    "STATUSES",
    "timeline",
    "diff",
    "Diff",
    "lag",
    "ordering",
    "describe",
    "compare_images",
    "sample_groups",
]

#: Above this many points a figure shows a sample (see the module notes).
MAX_POINTS: int = 50_000

#: Traces with more points than this are drawn with WebGL (``go.Scattergl``).
WEBGL_ABOVE: int = 1_000

#: Values in hover text are cut to this many characters.
HOVER_WIDTH: int = 40

#: One colour per canonical op, the same in every view.
OP_COLOURS: dict[str, str] = {
    "insert": "#2ca02c",
    "update": "#1f77b4",
    "delete": "#d62728",
    "read": "#9467bd",
    "truncate": "#000000",
    "ddl": "#ff7f0e",
    "heartbeat": "#7f7f7f",
    "begin": "#17becf",
    "commit": "#bcbd22",
    "tombstone": "#8c564b",
    "other": "#e377c2",
}

#: Marker symbols: row changes are dots, everything else has a shape of its own.
OP_SYMBOLS: dict[str, str] = {
    "insert": "circle",
    "update": "circle",
    "delete": "circle",
    "read": "circle-open",
    "truncate": "star",
    "ddl": "diamond",
    "heartbeat": "triangle-up",
    "begin": "triangle-right",
    "commit": "triangle-left",
    "tombstone": "x",
    "other": "square",
}

#: The status of a column in a diff row.
STATUSES = ("changed", "unchanged", "added", "removed", "not sent")

#: Lane label of events without a table (timeline by table) or a key (timeline by key).
NO_TABLE = "(no table)"
NO_KEY = "(no key)"

_STATUS_STYLE = {
    "changed": "background-color:#fff3bf",
    "added": "background-color:#d3f9d8",
    "removed": "background-color:#ffe3e3;text-decoration:line-through",
    "not sent": "color:#868e96;font-style:italic",
    "unchanged": "",
}


# --------------------------------------------------------------------------- small helpers


def _missing(value: Any) -> bool:
    return value is None or value is pd.NA or value is pd.NaT or (isinstance(value, float) and np.isnan(value))


def _text(value: Any) -> str:
    """A frame value as text ('' for missing)."""
    return "" if _missing(value) else str(value)


def _show(value: Any) -> str:
    """An image value as people read it: strings as they are, everything else as JSON (``null``, ``3``)."""
    if isinstance(value, str):
        return value
    return values.dumps(value)


def _cut(text: str, width: int) -> str:
    """``text`` cut to ``width`` characters, the last one an ellipsis when something was cut."""
    return text if len(text) <= width else text[: max(width - 1, 0)] + "…"


def _esc(value: Any) -> str:
    """A value as HTML-safe text ('' for missing).

    Quotes stay as they are: plotly's labels decode only a few named
    entities (``&quot;`` would show as written), and text outside a tag needs
    no quote escaping; attribute values are escaped with quotes where they
    are written.
    """
    return html.escape(_text(value), quote=False)


def _where(source: Any, offset: Any) -> str:
    """Where an event came from, as people read it: the file name (not its folders) and the offset.

    The full source stays in the frame (and in :attr:`Diff.rows`).

    >>> _where("/data/captures/orders.jsonl", 7), _where("topic.shop", 0)
    ('orders.jsonl:7', 'topic.shop:0')
    """
    text = _text(source)
    return f"{os.path.basename(text.rstrip('/')) or text}:{offset}"


def _printable(text: str) -> str:
    """Control characters (new lines, terminal escapes) written as escapes, for plain-text output."""
    return "".join(ch if ch.isprintable() else ch.encode("unicode_escape").decode("ascii") for ch in text)


def _parse(text: Any) -> dict[str, Any] | None:
    """An image text as a dict (None when there is no image)."""
    if _missing(text):
        return None
    parsed = values.loads(text)
    return parsed if isinstance(parsed, dict) else None


_PARTIAL: dict[str, bool] = {}


def _partial(dialect: Any) -> bool:
    """Does the dialect send only the changed columns in an update's after image?"""
    name = _text(dialect)
    if name not in _PARTIAL:
        try:
            _PARTIAL[name] = bool(registry.get(name).partial_updates)
        except UnknownDialectError:
            _PARTIAL[name] = False
    return _PARTIAL[name]


def _time_text(value: Any) -> str:
    return "" if _missing(value) else pd.Timestamp(value).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3] + " UTC"


def _time_texts(times: pd.Series) -> pd.Series:
    """:func:`_time_text` of every value, vectorised."""
    text = pd.to_datetime(times, utc=True).dt.strftime("%Y-%m-%d %H:%M:%S.%f").str[:-3] + " UTC"
    return text.astype(object).where(times.notna(), "")


def _naive_utc(times: pd.Series) -> pd.Series:
    """UTC timestamps without their zone (plotly draws zone-less times as given)."""
    times = pd.to_datetime(times, utc=True)
    return times.dt.tz_convert("UTC").dt.tz_localize(None)


def _date_strings(times: pd.Series) -> np.ndarray:
    """Zone-less UTC times as ISO texts (µs): what plotly reads as dates, also in a FigureWidget,
    whose serializer would send a datetime64 array as integer nanoseconds."""
    return np.datetime_as_string(times.to_numpy(dtype="datetime64[us]"), unit="us")


def _unique_index(events: pd.DataFrame) -> pd.DataFrame:
    """The events with a unique index (a fresh RangeIndex when the given one repeats)."""
    return events if events.index.is_unique else events.reset_index(drop=True)


def _strings(texts: Any) -> np.ndarray:
    """Texts as a numpy object array (plotly checks arrays far faster than lists)."""
    return np.array(list(texts), dtype=object)


def _scatter(count: int, webgl: bool | None) -> type:
    use_gl = count > WEBGL_ABOVE if webgl is None else webgl
    return go.Scattergl if use_gl else go.Scatter


def _note(fig: go.Figure, notes: list[str]) -> None:
    """Add the notes (sampling, left-out events) as one annotation named ``note`` above the plot."""
    if notes:
        fig.add_annotation(name="note", text="; ".join(notes), xref="paper", yref="paper", x=0, y=1.0,
                           xanchor="left", yanchor="bottom", showarrow=False, font={"size": 11, "color": "#555"})


# --------------------------------------------------------------------------- comparing images


def compare_images(before: dict[str, Any] | None, after: dict[str, Any] | None, op: str = "update",
                   partial: bool = False) -> list[tuple[str, Any, Any, str]]:
    """``(column, before, after, status)`` for every column of a change; a value absent from its image is ``pd.NA``.

    Status rules: an insert or snapshot read (no before image) has every
    column ``added``, a delete (no after image) every column ``removed``.
    For an update: a column in both images is ``changed`` or ``unchanged``; a
    column only in the before image is ``removed`` (a Lindorm column delete),
    or ``not sent`` when the dialect sends partial after images (SharePlex,
    UniVerse) or the update has no after image; a column only in the after
    image is ``added``, or ``changed`` (its old value not sent) for partial
    dialects and updates without a before image.

    >>> compare_images({"id": 1, "a": "x", "b": 2}, {"id": 1, "a": "y"})
    [('id', 1, 1, 'unchanged'), ('a', 'x', 'y', 'changed'), ('b', 2, <NA>, 'removed')]
    >>> compare_images({"id": 1}, {"qty": 3}, partial=True)
    [('id', 1, <NA>, 'not sent'), ('qty', <NA>, 3, 'changed')]
    """
    old, new = before or {}, after or {}
    is_update = op == "update"
    partial = is_update and (partial or before is None or after is None)
    rows = []
    for column in dict.fromkeys([*old, *new]):
        if column in old and column in new:
            status = "unchanged" if old[column] == new[column] else "changed"
        elif column in old:
            status = "not sent" if partial else "removed"
        else:
            status = "changed" if partial else "added"
        rows.append((column, old.get(column, pd.NA), new.get(column, pd.NA), status))
    return rows


def _hover_value(value: Any, absent: str) -> str:
    """An image value for hover text, cut to HOVER_WIDTH; ``absent`` where the image has no such column."""
    return absent if value is pd.NA else _cut(_show(value), HOVER_WIDTH)


def _change_lines(event: dict[str, Any], limit: int = 8) -> list[str]:
    """Escaped hover lines that say what one event did."""
    op = event["op"]
    if op == "ddl":
        return [_esc(_cut(_text(event["ddl"]), 200))] if not _missing(event["ddl"]) else []
    before, after = _parse(event["before"]), _parse(event["after"])
    if before is None and after is None:
        return []
    cells = compare_images(before, after, op, _partial(event["dialect"]))
    if op in ("insert", "read", "delete", "tombstone"):
        shown = [f"{c}: {_cut(_show(a if a is not pd.NA else b), HOVER_WIDTH)}" for c, b, a, _ in cells]
        head = f"{len(cells)} column(s)"
    else:
        changed = [(c, b, a, s) for c, b, a, s in cells if s not in ("unchanged", "not sent")]
        shown = [f"{c}: {_hover_value(b, '(not sent)' if s == 'changed' else '(new column)')} → "
                 f"{_hover_value(a, '(removed)')}" for c, b, a, s in changed]
        head = f"changed {len(changed)} of {len(cells)} column(s)"
    more = [f"… and {len(shown) - limit} more"] if len(shown) > limit else []
    return [_esc(head + ":")] + [_esc(line) for line in shown[:limit]] + more


def _hover(event: dict[str, Any], table: str) -> str:
    """The hover text of one event (everything from the capture escaped, then joined with <br>)."""
    head = f"<b>{_esc(event['op'])}</b> {_esc(table)}"
    if not _missing(event["key"]):
        head += f" key {_esc(event['key'])}"
    lines = [head, _esc(event["_when"])]
    where = _where(event["source"], event["offset"])
    if not _missing(event["seq"]):
        where += f" seq {_text(event['seq'])}"
    lines.append(_esc(where))
    return "<br>".join(lines + _change_lines(event))


_HOVER_COLUMNS = ["op", "key", "_when", "source", "offset", "seq", "before", "after", "ddl", "dialect"]


def _records(frame: pd.DataFrame, columns: list[str]) -> list[dict[str, Any]]:
    return [dict(zip(columns, row)) for row in zip(*(frame[c].tolist() for c in columns))]


# --------------------------------------------------------------------------- sampling


def sample_groups(groups: pd.Series, max_points: int) -> np.ndarray:
    """Positions (sorted) of at most ``max_points`` rows, each group keeping a fair share, evenly spaced.

    Groups are served smallest first: each takes all its rows or an equal
    share of what is left, whichever is less, so small groups stay whole.
    Within a group the rows kept are evenly spaced in the given order.

    >>> groups = pd.Series(["ddl"] * 2 + ["update"] * 10)
    >>> sample_groups(groups, 6).tolist()
    [0, 1, 2, 4, 7, 9]
    """
    if max_points < 1:
        raise ValueError("max_points must be at least 1")
    if len(groups) <= max_points:
        return np.arange(len(groups))
    positions = groups.reset_index(drop=True).groupby(groups.to_numpy(), sort=False, dropna=False).indices
    members = sorted(positions.values(), key=len)
    left = max_points
    kept = []
    for number, rows in enumerate(members):
        share = min(len(rows), left // (len(members) - number))
        left -= share
        picks = (np.arange(share) * len(rows)) // share if share else np.array([], dtype=int)
        kept.append(rows[picks])
    return np.sort(np.concatenate(kept))


def _sampling_note(shown: int, total: int, what: str) -> str:
    return f"showing {shown:,} of {total:,} events (sampled evenly per {what}; small groups kept whole)"


# --------------------------------------------------------------------------- timeline


def timeline(events: pd.DataFrame, *, table: str | None = None, by: str = "table",
             max_points: int = MAX_POINTS) -> go.Figure:
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
    return _timeline_figure(events, table=table, by=by, max_points=max_points)


def _timeline_figure(events: pd.DataFrame, *, table: str | None = None, by: str = "table",
                     max_points: int = MAX_POINTS, webgl: bool | None = None) -> go.Figure:
    """:func:`timeline`, with the trace type fixed when ``webgl`` is given (the explorer keeps one type)."""
    if by not in ("table", "key"):
        raise ValueError(f"by must be 'table' or 'key', not {by!r}")
    if by == "key" and table is None:
        raise ValueError("by='key' needs a table")
    events = _unique_index(events)
    names = table_names(events)
    title = "Events over time per table"
    if table is not None:
        name = find_table(names, table)
        events, names = events[names == name], names[names == name]
        title = f"Events of {_esc(name)} per key" if by == "key" else f"Events of {_esc(name)}"
    if by == "key":
        lanes = events["key"].astype(object).where(events["key"].notna(), NO_KEY)
    else:
        lanes = names.where(names.notna(), NO_TABLE)
    times = events["event_time"].where(events["event_time"].notna(), events["emit_time"])
    notes = []
    timed = times.notna().to_numpy()
    if not timed.all():
        notes.append(f"{int((~timed).sum()):,} event(s) without a time left out")
    frame = events[timed].assign(_lane=lanes[timed].astype(str), _x=_naive_utc(times[timed]),
                                 _table=names[timed].where(names[timed].notna(), NO_TABLE))
    frame = frame.sort_values("_x", kind="stable")
    frame["_when"] = _time_texts(frame["event_time"]).where(
        frame["event_time"].notna(), "emit_time " + _time_texts(frame["emit_time"]))
    total = len(frame)
    keep = sample_groups(frame["_lane"] + "\x00" + frame["op"].astype(str), max_points)
    if len(keep) < total:
        notes.insert(0, _sampling_note(len(keep), total, "lane and op"))
        frame = frame.iloc[keep]
    fig = go.Figure()
    records = _records(frame, _HOVER_COLUMNS + ["_table"])
    ops = frame["op"].astype(str).to_numpy()
    labels = frame.index.to_numpy()
    lanes_shown = frame["_lane"].to_numpy()
    xs = _date_strings(frame["_x"])
    for op in [o for o in OP_COLOURS if (ops == o).any()] + sorted(set(ops) - set(OP_COLOURS)):
        chosen = np.flatnonzero(ops == op)
        scatter = _scatter(len(chosen), webgl)
        fig.add_trace(scatter(
            x=xs[chosen], y=_strings(_esc(lanes_shown[i]) for i in chosen), mode="markers",
            name=_esc(op),
            marker={"color": OP_COLOURS.get(op, "#333"), "symbol": OP_SYMBOLS.get(op, "square"), "size": 9,
                    "line": {"width": 0}},
            hovertext=_strings(_hover(records[i], records[i]["_table"]) for i in chosen), hoverinfo="text",
            customdata=labels[chosen]))
    order = sorted(set(frame["_lane"]), key=key_order if by == "key" else None)
    fig.update_layout(
        title={"text": title}, xaxis={"title": {"text": "event_time (UTC)"}, "type": "date"},
        yaxis={"title": {"text": f"key of {_esc(name)}" if by == "key" else "table"}, "type": "category",
               "categoryorder": "array", "categoryarray": [_esc(lane) for lane in order],
               "autorange": "reversed", "automargin": True},
        hoverlabel={"align": "left"}, legend_title_text="op", template="plotly_white",
        height=min(900, 220 + 26 * len(order)), margin={"t": 70})
    _note(fig, notes)
    return fig


# --------------------------------------------------------------------------- diff


def _aligned(rows: list[dict[str, str]]) -> list[str]:
    """Plain-text table lines: a header and one line per row, columns left-aligned."""
    names = list(rows[0])
    widths = {n: max(len(n), *(len(r[n]) for r in rows)) for n in names}
    lines = [[n.ljust(widths[n]) for n in names]] + [[r[n].ljust(widths[n]) for n in names] for r in rows]
    return ["  ".join(line).rstrip() for line in lines]


_ROW_COLUMNS = ["event", "source", "offset", "table", "key", "op", "column", "before", "after", "status"]


class Diff:
    """Before and after images of changes, column by column.

    ``rows``: one row per (event, column) with :data:`_ROW_COLUMNS`
    (``event`` is the event's index label; ``before``/``after`` hold the
    image values, ``pd.NA`` where the image has no such column and ``None``
    for a SQL NULL; ``status`` is one of :data:`STATUSES`). ``events``: the
    events shown, one row each. ``left_out``: changes not shown (past the
    limit). In Jupyter a diff shows as HTML tables side by side (changed
    cells highlighted, long values cut to ``width`` with the full value on
    hover); ``str()`` gives the same as plain text.
    """

    def __init__(self, rows: pd.DataFrame, events: pd.DataFrame, left_out: int = 0, width: int = 40,
                 considered: int | None = None) -> None:
        self.rows = rows
        self.events = events
        self.left_out = left_out
        self.width = width
        self.considered = len(events) if considered is None else considered

    def _cells(self, value: Any, status: str, side: str) -> tuple[str, str]:
        """(full text, shown text) of one image cell."""
        if value is pd.NA:
            text = "(not sent)" if (status, side) in (("not sent", "after"), ("changed", "before")) else "—"
            return text, text
        full = _show(value)
        return full, _cut(full, self.width)

    def _header(self, event: dict[str, Any]) -> tuple[str, list[str]]:
        """(op, [table, key, where]) of one event, as plain text."""
        parts = [_text(event["table"]), f"key {_text(event['key'])}" if not _missing(event["key"]) else "",
                 _where(event["source"], event["offset"]), _time_text(event["event_time"])]
        return event["op"], [p for p in parts if p]

    def _footer(self) -> str:
        if not len(self.events):
            return f"no updates among {self.considered:,} event(s)"
        if self.left_out:
            return f"{self.left_out:,} more update(s) not shown (limit {len(self.events):,})"
        return ""

    def _repr_html_(self) -> str:
        blocks = []
        for event in self.events.to_dict("records"):
            op, parts = self._header(event)
            head = (f"<div class='cdckit-diff-head'><b>{_esc(op)}</b> "
                    + " · ".join(f"<code>{_esc(p)}</code>" for p in parts) + "</div>")
            body = []
            for row in self.rows[self.rows["event"] == event["event"]].itertuples(index=False):
                cells = []
                for side, value in (("before", row.before), ("after", row.after)):
                    full, shown = self._cells(value, row.status, side)
                    style = _STATUS_STYLE[row.status]
                    if row.status == "removed" and side == "after" or row.status == "added" and side == "before":
                        style = ""
                    if row.status == "not sent" and side == "before":
                        style = ""
                    title = f" title=\"{html.escape(full, quote=True)}\"" if shown != full else ""
                    cls = f"cdckit-{row.status.replace(' ', '-')}" if style else "cdckit-same"
                    cells.append(f"<td class='{cls}' style='{style}'{title}>{_esc(shown)}</td>")
                marker = "" if row.status == "unchanged" else _esc(row.status)
                body.append(f"<tr><td><code>{_esc(str(row.column))}</code></td>{''.join(cells)}"
                            f"<td class='cdckit-status'>{marker}</td></tr>")
            blocks.append(f"<div class='cdckit-diff-event' style='margin-bottom:1em'>{head}"
                          "<table class='cdckit-diff-table'><thead><tr><th>column</th><th>before</th>"
                          f"<th>after</th><th>status</th></tr></thead><tbody>{''.join(body)}</tbody></table></div>")
        footer = self._footer()
        if footer:
            blocks.append(f"<p class='cdckit-diff-footer'><i>{_esc(footer)}</i></p>")
        return f"<div class='cdckit-diff'>{''.join(blocks)}</div>"

    def __str__(self) -> str:
        blocks = []
        for event in self.events.to_dict("records"):
            op, parts = self._header(event)
            lines = [_printable(" ".join([op, *parts]))]
            table = [{"column": _printable(_cut(str(row.column), self.width)),
                      "before": _printable(self._cells(row.before, row.status, "before")[1]),
                      "after": _printable(self._cells(row.after, row.status, "after")[1]),
                      "status": "" if row.status == "unchanged" else row.status}
                     for row in self.rows[self.rows["event"] == event["event"]].itertuples(index=False)]
            if table:
                lines += ["  " + line for line in _aligned(table)]
            blocks.append("\n".join(lines))
        footer = self._footer()
        if footer:
            blocks.append(footer)
        return "\n\n".join(blocks)

    __repr__ = __str__


def diff(events_or_row: pd.DataFrame | pd.Series, *, limit: int = 20, width: int = 40) -> Diff:
    """Before and after images side by side: the updates among the events, or one event row.

    A DataFrame shows its first ``limit`` updates (and says how many more
    there are); a Series (one row of the frame) shows that event whatever its
    op. Column statuses follow :func:`compare_images`: for dialects that send
    partial after images (the registry's ``partial_updates``) a column the
    after image leaves out is ``not sent``, not removed. Values longer than
    ``width`` characters are cut, with the full value on hover.

    >>> import cdckit
    >>> events = cdckit.read(cdckit.samples.path("lindorm"))
    >>> d = diff(events.loc[4])  # a column delete
    >>> d.rows[["column", "status"]].values.tolist()
    [['id', 'unchanged'], ['first_name', 'unchanged'], ['last_name', 'removed']]
    >>> len(diff(events).events), diff(events, limit=1).left_out
    (3, 2)
    """
    if isinstance(events_or_row, pd.Series):
        shown = events_or_row.to_frame().T
        considered, left_out = 1, 0
    else:
        updates = events_or_row[events_or_row["op"] == "update"]
        shown = updates.iloc[:limit]
        considered, left_out = len(events_or_row), len(updates) - len(shown)
    table = table_names(shown) if len(shown) else pd.Series([], dtype=object)
    meta = pd.DataFrame({"event": shown.index.tolist(), "op": shown["op"].astype(str).tolist(),
                         "table": table.tolist(), "key": shown["key"].tolist(), "source": shown["source"].tolist(),
                         "offset": shown["offset"].tolist(), "event_time": shown["event_time"].tolist()})
    rows = []
    for where, event in zip(meta.to_dict("records"), _records(shown, ["before", "after", "dialect"])):
        cells = compare_images(_parse(event["before"]), _parse(event["after"]), where["op"],
                               _partial(event["dialect"]))
        rows += [{"event": where["event"], "source": where["source"], "offset": where["offset"],
                  "table": where["table"], "key": where["key"], "op": where["op"], "column": c, "before": b,
                  "after": a, "status": s} for c, b, a, s in cells]
    frame = pd.DataFrame(rows, columns=_ROW_COLUMNS).astype({"before": object, "after": object})
    return Diff(frame, meta, left_out=left_out, width=width, considered=considered)


# --------------------------------------------------------------------------- lag


def lag(events: pd.DataFrame, *, max_points: int = MAX_POINTS) -> go.Figure:
    """Capture lag (``emit_time - event_time``, seconds) over ``event_time``, one trace per table.

    Only events with both times count; above ``max_points`` the figure shows
    a sample, evenly spaced in time per table.

    >>> import cdckit
    >>> fig = lag(cdckit.samples.load("canal/shop"))
    >>> sorted(t.name for t in fig.data)
    ['shop.customers', 'shop.order_items']
    """
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
        fig.add_trace(_scatter(len(group), None)(
            x=_date_strings(group["_x"]), y=group["_lag"].to_numpy(), mode="markers", name=_esc(name),
            hovertext=hover, hoverinfo="text", customdata=group.index.to_numpy(), marker={"size": 6}))
    fig.update_layout(title={"text": "Capture lag per table"},
                      xaxis={"title": {"text": "event_time (UTC)"}, "type": "date"},
                      yaxis_title="lag (s) = emit_time − event_time", legend_title_text="table",
                      hoverlabel={"align": "left"}, template="plotly_white", margin={"t": 70})
    _note(fig, notes)
    return fig


# --------------------------------------------------------------------------- ordering


def ordering(events: pd.DataFrame, report: "OrderReport | None" = None, *,
             max_points: int = MAX_POINTS) -> go.Figure:
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
    labels = events.index.to_numpy()
    frame = events.reset_index(drop=True)  # positions; labels[position] is the event's index label
    arrival = pd.Series(np.arange(len(frame)), index=sort_events(frame, by="arrival").index)
    in_seq = pd.Series(np.arange(len(frame)), index=sort_events(frame, by="seq").index)
    frame = frame.assign(_arrival=arrival.reindex(frame.index).to_numpy(),
                         _seq_rank=in_seq.reindex(frame.index).to_numpy())
    names = table_names(frame)
    frame["_table"] = names.where(names.notna(), NO_TABLE).astype(str)
    report = order_report(events) if report is None else report
    inv = report["inversions"]
    other = {(_text(s), int(o)): (_text(os_), oo, _text(oseq))
             for s, o, os_, oo, oseq in zip(inv["source"], inv["offset"], inv["other_source"], inv["other_offset"],
                                           inv["other_seq"])}
    position = list(zip(frame["source"].map(_text), frame["offset"].astype("int64")))
    inverted = np.array([p in other for p in position], dtype=bool)
    frame = frame.sort_values("_arrival", kind="stable")
    inverted = inverted[frame.index.to_numpy()]
    bad, good = frame[inverted], frame[~inverted]
    notes = []
    keep_bad = sample_groups(pd.Series(["inversions"] * len(bad)), max_points)
    keep_good = sample_groups(good["_table"], max(max_points - len(keep_bad), 1)) if len(good) else np.arange(0)
    if len(keep_bad) + len(keep_good) < len(frame):
        notes.append(_sampling_note(len(keep_bad) + len(keep_good), len(frame), "table; inversions kept"))
        bad, good = bad.iloc[keep_bad], good.iloc[keep_good]

    def hover(group: pd.DataFrame, extra: bool) -> np.ndarray:
        out = []
        for t, k, op, src, o, seq, a, s in zip(group["_table"], group["key"], group["op"], group["source"],
                                                group["offset"], group["seq"], group["_arrival"], group["_seq_rank"]):
            text = (f"<b>{_esc(op)}</b> {_esc(t)}" + (f" key {_esc(k)}" if not _missing(k) else "")
                    + f"<br>{_esc(_where(src, o))} seq {_esc(seq)}<br>arrival #{a}, seq order #{s}")
            if extra:
                osrc, ooff, oseq = other[(_text(src), int(o))]
                text += f"<br>arrived after {_esc(_where(osrc, ooff))} (seq {_esc(oseq)}), a later change to the same row"
            out.append(text)
        return _strings(out)

    fig = go.Figure()
    for name, group in good.groupby("_table", sort=True):
        fig.add_trace(_scatter(len(group), None)(
            x=group["_arrival"].to_numpy(), y=group["_seq_rank"].to_numpy(), mode="markers", name=_esc(name),
            hovertext=hover(group, False), hoverinfo="text", customdata=labels[group.index.to_numpy()],
            marker={"size": 6}))
    fig.add_trace(_scatter(len(bad), None)(
        x=bad["_arrival"].to_numpy(), y=bad["_seq_rank"].to_numpy(), mode="markers", name="inversions",
        hovertext=hover(bad, True), hoverinfo="text", customdata=labels[bad.index.to_numpy()],
        marker={"size": 11, "color": "#d62728", "symbol": "x", "line": {"width": 1}}))
    last = max(len(frame) - 1, 0)
    fig.add_shape(type="line", x0=0, y0=0, x1=last, y1=last, line={"color": "#bbb", "dash": "dot", "width": 1})
    fig.update_layout(title={"text": "Arrival order against seq order"},
                      xaxis_title="arrival position (source, partition, offset)",
                      yaxis_title="position in seq order", legend_title_text="table",
                      hoverlabel={"align": "left"}, template="plotly_white", margin={"t": 70})
    _note(fig, notes)
    return fig


# --------------------------------------------------------------------------- describe


def describe(fig: go.Figure) -> str:
    """A short, stable text summary of a figure: title, axis titles, points per trace, notes.

    Notebooks print this instead of the figure's JSON, which changes with every plotly release.

    >>> fig = go.Figure(go.Scatter(x=[1, 2], y=[3, 4], name="a"), layout={"title": {"text": "T"}})
    >>> print(describe(fig))
    title: T
    x:
    y:
    a: 2 points
    """
    layout = fig.layout
    lines = [f"title: {layout.title.text or ''}", f"x: {layout.xaxis.title.text or ''}",
             f"y: {layout.yaxis.title.text or ''}"]
    for trace in fig.data:
        points = trace.x if trace.x is not None else trace.y
        lines.append(f"{trace.name}: {0 if points is None else len(points)} points")
    lines += [f"note: {a.text}" for a in layout.annotations if a.name == "note"]
    return "\n".join(line.rstrip() for line in lines)
