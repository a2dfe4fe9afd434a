"""An ipywidgets explorer of a capture: filter the events, see them on a timeline, inspect one.

``cdckit.explore(events)`` returns an :class:`Explorer` (an ``ipywidgets.VBox``)
to show in JupyterLab, Binder or any front end with ipywidgets:

- filters: a table dropdown, an op list, a key box and a time range slider;
  the key box filters as you type and matches key values exactly
  (:func:`cdckit.analysis.filters.key_mask`: ``3`` finds key 3, never 13 or 30; ``3,7`` or
  ``[3,7]`` a composite key);
- a plotly ``FigureWidget`` timeline of the filtered events
  (:func:`cdckit.viz.timeline`; with one table chosen, one lane per key,
  keys in their natural order);
- a list of the first :data:`LISTED` filtered events;
- clicking a point, selecting points, or picking an event in the list shows
  the event, its before/after diff (:func:`cdckit.viz.diff`) and the history
  of its row (:func:`cdckit.history`). The list, the details and the
  timeline always name the same event: the list highlights it (adding it
  when it is past the first :data:`LISTED`), the timeline enlarges its point
  and dims the others (when the point is drawn; a sample may leave it out);
- filters that match nothing say so, and leave the details empty; an event
  the filters no longer show is no longer shown in the details either;
- transactions (:func:`cdckit.transactions`): the row history has a ``transaction`` column, its versions
  coloured per transaction and those of an incomplete transaction marked (``✗`` and a red edge); the
  details name the event's transaction, its status and its changes; the ``transaction`` box filters the
  events to one transaction, and :meth:`Explorer.transaction` lists its changes.

Nothing is printed: the details are an ``ipywidgets.HTML`` value (every
capture value in it escaped), so notebooks stay stable under strict nbval.
The list's labels are plain text (ipywidgets shows option labels as text,
never as HTML), so they hold the values as they are.

>>> import cdckit
>>> from cdckit.viz.explorer import explore
>>> ex = explore(cdckit.samples.load("canal/shop"))
>>> ex.ops.value = ("delete",)
>>> len(ex.filtered()), ex.status.value
(30, '30 of 320 events shown')
"""

from __future__ import annotations

import html
import re
from collections.abc import Hashable
from typing import Any

import numpy as np
import pandas as pd

from ..analysis.filters import key_mask
from ..analysis.ordering import sort_events
from ..analysis.replay import history
from ..analysis.transactions import transactions_with_rows
from ..frame import CHANGE_OPS, OPS, table_names
from ..keys import Keys, given_keys
from ..optional import require
from ..values import is_missing
from .diffs import diff
from .figures import date_strings, naive_utc
from .sampling import MAX_POINTS
from .style import TXN_COLOURS, WEBGL_ABOVE
from .timelines import timeline_figure
from .transaction_spans import transaction_labels

# The explorer is the ``cdckit[viz]`` extra: its widget class is built on ipywidgets, its timeline is a plotly
# FigureWidget (an anywidget), so this module needs them when it is imported (``cdckit.explore`` imports it).
widgets: Any = require("ipywidgets", "viz", what="cdckit.explore")  # (untyped: its classes are Any to the checker)
require("anywidget", "viz", what="cdckit.explore")
go = require("plotly.graph_objects", "viz", what="cdckit.explore")

__all__ = ["explore", "Explorer", "FIGURE_BOX_HEIGHT", "LISTED", "MAX_LANES", "TIME_STEPS", "TRANSACTION_LISTED"]

#: The event list shows this many of the filtered events (in time order).
LISTED = 200

#: With one table chosen the timeline has a lane per key, up to this many keys (one lane per table beyond).
MAX_LANES = 500

#: The timeline sits in a box at most this tall (it scrolls inside), so the details below stay close to a click.
FIGURE_BOX_HEIGHT = "560px"

#: The details list at most this many changes of the selected event's transaction.
TRANSACTION_LISTED = 50

#: The time slider has at most this many stops (evenly spaced among the event times, first and last included).
TIME_STEPS = 200

_NOTHING = "no event matches the filters"

_HINT = "<i>Click an event in the timeline, select points, or pick one from the list.</i>"

#: Styles of the details pane: the event's long values wrap; the history table, a line per version, scrolls
#: inside its own box (``width:0`` with ``min-width:100%``: the box fills the pane and never widens it).
_STYLE = (
    "<style>"
    ".cdckit-details{max-width:100%;overflow-wrap:break-word}"
    ".cdckit-details table{border-collapse:collapse}"
    ".cdckit-details td,.cdckit-details th{padding:1px 6px;vertical-align:top;text-align:left}"
    ".cdckit-event th{white-space:nowrap}.cdckit-event td{overflow-wrap:anywhere}"
    ".cdckit-history{width:0;min-width:100%;max-height:24em;overflow:auto}"
    ".cdckit-history td,.cdckit-history th{font-size:12px;white-space:nowrap}"
    ".cdckit-transaction{width:0;min-width:100%;max-height:24em;overflow:auto}"
    ".cdckit-transaction td,.cdckit-transaction th{font-size:12px;white-space:nowrap}"
    ".cdckit-incomplete{box-shadow:inset 4px 0 #d62728}.cdckit-incomplete td{color:#a61e1e}"
    "</style>"
)


def escaped_text(value: Any) -> str:
    """A value as HTML-safe text, quotes escaped too ('' for missing)."""
    return "" if is_missing(value) else html.escape(str(value))


def _label(value: Any) -> Hashable:
    """A customdata item as a plain Python value (numpy scalars unwrapped)."""
    return value.item() if isinstance(value, np.generic) else value


def _time_options(times: pd.Series) -> list[tuple[str, pd.Timestamp]]:
    """Slider stops: (label, time) for at most TIME_STEPS distinct times, first and last included."""
    distinct = np.sort(times.dropna().unique())
    if len(distinct) > TIME_STEPS:
        distinct = distinct[(np.arange(TIME_STEPS) * (len(distinct) - 1)) // (TIME_STEPS - 1)]
    stops: dict[str, pd.Timestamp] = {}
    for value in distinct:
        stamp = pd.Timestamp(value)
        stamp = stamp.tz_localize("UTC") if stamp.tzinfo is None else stamp
        stops[stamp.strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]] = stamp  # equal labels keep the latest time
    return list(stops.items())


def _span(times: pd.Series) -> list[str] | None:
    """The time axis range of the whole capture (a second either side of a single time); None without times."""
    timed = naive_utc(times.dropna())
    if not len(timed):
        return None
    pad = pd.Timedelta(seconds=1) if timed.min() == timed.max() else pd.Timedelta(0)
    return list(date_strings(pd.Series([timed.min() - pad, timed.max() + pad])))


def _same_place(one: tuple[Any, ...], other: tuple[Any, ...]) -> bool:
    """Whether two (source, offset, seq) name the same change: seq too, as a kcat file of several topics repeats
    offsets (missing values equal each other)."""
    return all(
        is_missing(a) and is_missing(b) or (not is_missing(a) and not is_missing(b) and a == b)
        for a, b in zip(one, other)
    )


def _values_first(rows: pd.DataFrame) -> pd.DataFrame:
    """A row's history with the row's values right after version, op and time; seq, source and offset last."""
    where = [c for c in ("seq", "source", "offset") if c in rows.columns]
    return rows[[c for c in rows.columns if c not in where] + where]


#: The table dropdown's value for every table (a table's name is never empty).
ALL_TABLES = ""


class Explorer(widgets.VBox):
    """The explorer widget; see the module notes. Build it with :func:`explore`.

    Widgets: ``table`` (Dropdown), ``ops`` (SelectMultiple), ``key`` (Text),
    ``txn`` (Text, a transaction id), ``time`` (SelectionRangeSlider, its range shown in ``time_range``),
    ``figure`` (FigureWidget),
    ``event_list`` (Select), ``details`` (HTML) and ``status`` (HTML).
    ``events`` is the frame explored, ``selected`` the index label of the
    event shown in ``details`` (None before any).
    """

    def __init__(self, events: pd.DataFrame, *, max_points: int = MAX_POINTS) -> None:
        super().__init__()
        self.events = events if events.index.is_unique else events.reset_index(drop=True)
        self.max_points = max_points
        self.selected: Hashable | None = None
        self._names = table_names(self.events)
        self._times = self.events["event_time"].where(self.events["event_time"].notna(), self.events["emit_time"])
        self._webgl = len(self.events) > WEBGL_ABOVE
        self._span = _span(self._times)
        self._quiet = False
        self._member: tuple[pd.DataFrame, np.ndarray, list[str]] | None = None  # see _membership

        present = set(self.events["op"].dropna().astype(str))
        ops = [op for op in OPS if op in present] + sorted(present - set(OPS))
        tables = sorted(set(self._names.dropna()))
        stops = _time_options(self._times) or [("no event times", None)]  # a stop must equal itself (NaT does not)
        # "all tables" is the empty name, not None: ipywidgets takes a None value for "nothing chosen", which
        # JupyterLab shows as a blank box
        self.table = widgets.Dropdown(
            options=[("all tables", ALL_TABLES)] + [(t, t) for t in tables], description="table"
        )
        self.ops = widgets.SelectMultiple(
            options=ops, value=tuple(ops), rows=min(max(len(ops), 2), 6), description="ops"
        )
        self.key = widgets.Text(placeholder="a key, e.g. 42 or 3,7", description="key", continuous_update=True)
        self.txn = widgets.Text(placeholder="a transaction id", description="transaction", continuous_update=True)
        self.time = widgets.SelectionRangeSlider(
            options=stops,
            index=(0, len(stops) - 1),
            description="time",
            disabled=len(stops) < 2,
            continuous_update=False,
            readout=False,
            layout=widgets.Layout(width="60%"),
        )
        self.time_range = widgets.Label()
        self.figure = go.FigureWidget(timeline_figure(self.events, max_points=max_points, webgl=self._webgl))
        self.figure.update_traces(selected={"marker": {"size": 15}}, unselected={"marker": {"opacity": 0.3}})
        self.event_list = widgets.Select(options=[], rows=12, description="events", layout=widgets.Layout(width="45%"))
        self.details = widgets.HTML(value=_HINT, layout=widgets.Layout(width="55%", min_width="0", overflow="auto"))
        self.status = widgets.HTML()
        # a tall figure (a lane per key) keeps its height, so no lane label is dropped, and scrolls in its box
        figure_box = widgets.Box(
            [self.figure], layout=widgets.Layout(max_height=FIGURE_BOX_HEIGHT, overflow="hidden auto")
        )
        self.children = [
            widgets.HBox([self.table, self.ops, self.key, self.txn], layout=widgets.Layout(flex_flow="row wrap")),
            widgets.HBox([self.time, self.time_range]),
            self.status,
            figure_box,
            widgets.HBox([self.event_list, self.details]),
        ]
        for control in (self.table, self.ops, self.key, self.txn, self.time):
            control.observe(self._on_filter, names="value")
        self.time.observe(self._show_range, names="value")
        self._show_range()
        self.event_list.observe(self._on_pick, names="value")
        for trace in self.figure.data:
            trace.on_click(self._on_points)
            trace.on_selection(self._on_points)
        self.refresh()

    def __repr__(self) -> str:
        """A short text form (the widget's own repr lists every child and the whole figure)."""
        tables = self._names.nunique()
        return f"Explorer of {len(self.events):,} events in {tables} table(s); {self.status_text()}"

    def status_text(self) -> str:
        """The status line as plain text, e.g. ``"30 of 320 events shown"``."""
        return html.unescape(re.sub(r"<[^>]*>", "", self.status.value))

    # ------------------------------------------------------------------ filters

    def filtered(self) -> pd.DataFrame:
        """The events the current filters select, in the frame's order.

        >>> import cdckit
        >>> ex = explore(cdckit.samples.load("canal/shop"))
        >>> ex.table.value = "shop.customers"; ex.key.value = "3"
        >>> sorted(set(ex.filtered()["key"]))
        ['[3]']
        """
        events = self.events
        mask = events["op"].astype(str).isin(list(self.ops.value)).to_numpy(copy=True)  # a view is read-only
        if self.table.value != ALL_TABLES:
            mask &= (self._names == self.table.value).to_numpy()
        typed = self.key.value.strip()
        if typed:
            try:
                mask &= key_mask(events["key"], typed)
            except ValueError:  # half-typed (``[3,``): nothing matches yet
                mask[:] = False
        wanted = self.txn.value.strip()
        if wanted:
            member = self._membership()[1]
            mask &= np.isin(member, self._rows_of(wanted)) & (member >= 0)
        if self.time.index != (0, len(self.time.options) - 1):
            low, high = self.time.value
            mask &= ((self._times >= low) & (self._times <= high)).fillna(False).to_numpy(dtype=bool)
        return events[mask]

    def _on_filter(self, change: dict[str, Any]) -> None:
        self.refresh()

    def _show_range(self, change: dict[str, Any] | None = None) -> None:
        """The slider's range as text beside it (the slider's own readout is too narrow for two times)."""
        low, high = self.time.index
        labels = [label for label, _ in self.time.options]
        self.time_range.value = labels[low] if low == high else f"{labels[low]} – {labels[high]}"

    def refresh(self) -> None:
        """Redraw the timeline, the event list and the status for the current filters.

        The event shown in the details stays shown while the filters keep it;
        otherwise the details are cleared (and say so when nothing matches).
        """
        frame = self.filtered()
        self._shown = frame
        by, table = "table", None
        if self.table.value != ALL_TABLES and frame["key"].nunique() <= MAX_LANES:
            by, table = "key", self.table.value
        fresh = timeline_figure(
            frame,
            table=table if len(frame) else None,
            by=by if len(frame) else "table",
            max_points=self.max_points,
            webgl=self._webgl,
        )
        traces = {trace.name: trace for trace in fresh.data}
        with self.figure.batch_update():
            for trace in self.figure.data:
                new = traces.get(trace.name)
                trace.x = new.x if new is not None else []
                trace.y = new.y if new is not None else []
                trace.hovertext = new.hovertext if new is not None else []
                trace.customdata = new.customdata if new is not None else []
            self.figure.layout.title = fresh.layout.title
            self.figure.layout.xaxis = fresh.layout.xaxis
            self.figure.layout.yaxis = fresh.layout.yaxis
            self.figure.layout.height = fresh.layout.height
            self.figure.layout.annotations = fresh.layout.annotations
            if not len(frame):  # an empty figure keeps the capture's time span, not plotly's default axis
                self.figure.layout.xaxis.range = self._span
        drawn = sum(len(trace.x) for trace in fresh.data)
        self.status.value = self._status_html(frame, drawn)
        if self.selected is None or self.selected not in frame.index:
            self.selected = None
            self.details.value = _HINT if len(frame) else f"<p><b>{_NOTHING}</b>{self._filters_html()}</p>"
        self._show_selected()

    def _status_html(self, frame: pd.DataFrame, drawn: int) -> str:
        """How many events the filters show, and how many of those the timeline draws (and why not all)."""
        status = f"{len(frame):,} of {len(self.events):,} events shown"
        if not len(frame):
            return f"<b style='color:#c92a2a'>{status}: {_NOTHING}</b>"
        if drawn == len(frame):
            return status
        untimed = int(self._times.loc[frame.index].isna().sum())
        why = [f"{untimed:,} without a time"] if untimed else []
        if drawn < len(frame) - untimed:
            why.append("the rest sampled evenly per lane and op; small groups kept whole")
        return f"{status}; {drawn:,} drawn ({'; '.join(why)})"

    def _filters_html(self) -> str:
        """The filters that are set, as escaped text for the 'nothing matches' message."""
        shown = []
        if self.table.value != ALL_TABLES:
            shown.append(f"table {escaped_text(self.table.value)}")
        if set(self.ops.value) != set(self.ops.options):
            shown.append("ops " + (", ".join(escaped_text(op) for op in self.ops.value) or "(none)"))
        if self.key.value.strip():
            shown.append(f"key {escaped_text(self.key.value.strip())}")
        if self.txn.value.strip():
            shown.append(f"transaction {escaped_text(self.txn.value.strip())}")
        if self.time.index != (0, len(self.time.options) - 1):
            shown.append(f"time {escaped_text(self.time_range.value)}")
        return f": {'; '.join(shown)}" if shown else ""

    def _show_selected(self) -> None:
        """Make the list and the timeline name the selected event (or none), as the details do."""
        options = self._list_options(self._shown, self.selected)
        self._quiet = True
        try:
            if list(self.event_list.options) != options:
                self.event_list.options = options
            self.event_list.value = self.selected
        finally:
            self._quiet = False
        found = [
            [
                i
                for i, label in enumerate(() if trace.customdata is None else trace.customdata)
                if _label(label) == self.selected
            ]
            if self.selected is not None
            else []
            for trace in self.figure.data
        ]
        drawn = any(found)  # a sample may leave the event out: then no point is marked
        with self.figure.batch_update():
            for trace, points in zip(self.figure.data, found):
                trace.selectedpoints = points if drawn else None

    def _list_options(self, frame: pd.DataFrame, also: Hashable | None = None) -> list[tuple[str, Hashable]]:
        """(label, index label) of the first LISTED events in time order, and ``also``; labels are plain text."""
        times = self._times.loc[frame.index]
        chosen = times.sort_values(kind="stable", na_position="last").index[:LISTED]
        if also is not None and also not in chosen:
            extra = self._times.loc[[also]]
            chosen = pd.concat([times.loc[chosen], extra]).sort_values(kind="stable", na_position="last").index
        first = self.events.loc[chosen]
        when = self._times.loc[first.index].dt.strftime("%Y-%m-%d %H:%M:%S").astype(object).fillna("(no time)")
        options = []
        for label, w, op, name, key in zip(
            first.index.tolist(), when, first["op"], self._names.loc[first.index], first["key"]
        ):
            text = f"{w}  {op}  {name if not is_missing(name) else ''}"
            options.append((text + (f"  {key}" if not is_missing(key) else ""), label))
        return options

    # ------------------------------------------------------------------ selecting one event

    def _on_pick(self, change: dict[str, Any]) -> None:
        if not self._quiet and change["new"] is not None:
            self.select(change["new"])

    def _on_points(self, trace: Any, points: Any, selector: Any = None) -> None:
        """Click and selection callback of every trace: show the first point's event."""
        if points.point_inds:
            self.select(_label(trace.customdata[points.point_inds[0]]))

    def select(self, index: Hashable) -> None:
        """Show one event (by index label): its fields, its diff and the history of its row in ``details``.

        >>> import cdckit
        >>> ex = explore(cdckit.samples.load("canal/shop"))
        >>> ex.select(ex.filtered().index[0])
        >>> "history of" in ex.details.value
        True
        """
        row = self.events.loc[index]
        name = self._names.loc[index]
        parts = [self._fields_html(row, name)]
        if not is_missing(row["before"]) or not is_missing(row["after"]):
            parts.append(diff(row)._repr_html_())
        if row["op"] in CHANGE_OPS and not is_missing(name) and not is_missing(row["key"]):
            rows = _values_first(history(self.events[(self._names == name).to_numpy()], name, row["key"]))
            mark = [
                "▶" if _same_place((s, o, q), (row["source"], row["offset"], row["seq"])) else ""
                for s, o, q in zip(rows["source"], rows["offset"], rows["seq"])
            ]
            rows.insert(0, "", mark, allow_duplicates=True)  # a capture may name a column "" too
            parts.append(
                f"<h4>history of {escaped_text(name)} key {escaped_text(row['key'])}</h4><div class='cdckit-history'>"
                + self._history_html(rows)
                + "</div>"
            )
        else:
            parts.append("<p><i>no row history: this event changes no keyed row</i></p>")
        parts.append(self._transaction_html(index))
        self.details.value = f"{_STYLE}<div class='cdckit-details'>{''.join(parts)}</div>"
        self.selected = index
        self._show_selected()

    # ------------------------------------------------------------------ transactions

    def transactions(self) -> pd.DataFrame:
        """The capture's transactions (:func:`cdckit.transactions`), computed once, on first use."""
        return self._membership()[0]

    def _membership(self) -> tuple[pd.DataFrame, np.ndarray, list[str]]:
        """(the transactions table, each event's row in it or -1, each row's label), computed once."""
        if self._member is None:
            table, rows = transactions_with_rows(self.events)
            self._member = (table, rows.to_numpy(), transaction_labels(table).tolist())
        return self._member

    def _rows_of(self, txn_id: Any, dialect: str | None = None) -> np.ndarray:
        """The table rows of a transaction id (of one dialect, or of any)."""
        table = self.transactions()
        chosen = (table["txn_id"] == str(txn_id)).fillna(False).to_numpy(dtype=bool)
        if dialect is not None:
            chosen &= (table["dialect"] == dialect).fillna(False).to_numpy(dtype=bool)
        return np.flatnonzero(chosen)

    def _members(self, rows: np.ndarray) -> pd.DataFrame:
        """The events of the given table rows: BEGIN markers, the changes in replay order (:func:`cdckit.sort_events`),
        then the commit markers."""
        member = self._membership()[1]
        events = sort_events(self.events[np.isin(member, rows) & (member >= 0)])
        place = events["op"].map({"begin": 0, "commit": 2}).fillna(1)
        return events.iloc[np.argsort(place.to_numpy(), kind="stable")]

    def transaction(self, txn_id: Any, dialect: str | None = None) -> pd.DataFrame:
        """The events of one transaction (its id as :func:`cdckit.transactions` names it): its BEGIN, its changes
        in replay order (:func:`cdckit.sort_events`), its END or COMMIT.

        >>> import cdckit
        >>> ex = explore(cdckit.samples.load("wal2json/postgres_v2"))
        >>> ex.transaction(729)["op"].tolist()
        ['begin', 'insert', 'insert', 'commit']
        """
        return self._members(self._rows_of(txn_id, dialect))

    def _history_html(self, rows: pd.DataFrame) -> str:
        """A row's history as an escaped table: a ``transaction`` column after ``event_time``, each version
        coloured by its transaction, those of an incomplete transaction marked."""
        table, member, names = self._membership()
        where = ["source", "offset", "seq"]  # seq too: a kcat file of several topics repeats offsets
        place = self.events[where].astype(object).fillna("").assign(_row=member)
        place = place[place["_row"] >= 0].drop_duplicates(where)
        found = rows[where].astype(object).fillna("").merge(place, how="left", on=where)
        labels: list[str] = []
        styles: list[str] = []
        colours: dict[int, str] = {}
        for row in found["_row"].tolist():
            if is_missing(row):
                labels.append("")
                styles.append("")
                continue
            info = table.iloc[int(row)]
            colour = colours.setdefault(int(row), TXN_COLOURS[len(colours) % len(TXN_COLOURS)])
            incomplete = not is_missing(info["complete"]) and not bool(info["complete"])
            name = names[int(row)]
            labels.append(f"{name} ✗ {info['status']}" if incomplete else f"{name} ({info['status']})")
            title = escaped_text(info["detail"])
            styles.append(
                f" style='background:{colour}' title=\"{title}\"" + (" class='cdckit-incomplete'" if incomplete else "")
            )
        rows = rows.copy()
        at = list(rows.columns).index("event_time") + 1 if "event_time" in rows.columns else 1
        rows.insert(at, "transaction", labels, allow_duplicates=True)
        html_table = rows.to_html(index=False, escape=True, na_rep="", border=0, max_rows=100)
        shown = styles if len(styles) <= 100 else styles[:50] + [""] + styles[-50:]  # to_html's cut: 50 … 50
        head, _, body = html_table.partition("<tbody>")
        pieces = body.split("<tr>")
        return head + "<tbody>" + pieces[0] + "".join(f"<tr{style}>" + piece for style, piece in zip(shown, pieces[1:]))

    def _transaction_html(self, index: Hashable) -> str:
        """The selected event's transaction: its status and detail, and its first changes."""
        table, member, names = self._membership()
        row = int(member[self.events.index.get_loc(index)])
        if row < 0:
            return ""
        info = table.iloc[row]
        members = self._members(np.array([row]))
        shown = members.head(TRANSACTION_LISTED)
        columns = [c for c in ("op", "table", "key", "seq", "source", "offset") if c in shown.columns]
        more = f" (the first {TRANSACTION_LISTED} of {len(members):,})" if len(members) > len(shown) else ""
        box = (
            "; type its id in the transaction box to see them all on the timeline"
            if not is_missing(info["txn_id"])
            else ""
        )
        return (
            f"<h4>transaction {escaped_text(names[row])}</h4>"
            f"<p><b>{escaped_text(info['status'])}</b>: {escaped_text(info['detail'])}</p>"
            f"<p>{len(members):,} event(s) of it{more}{box}:</p><div class='cdckit-transaction'>"
            + shown[columns].to_html(index=False, escape=True, na_rep="", border=0)
            + "</div>"
        )

    def _fields_html(self, row: pd.Series, name: Any) -> str:
        """The event's own fields as a small escaped table."""
        fields = [
            ("op", row["op"]),
            ("table", name),
            ("key", row["key"]),
            ("event_time", row["event_time"]),
            ("emit_time", row["emit_time"]),
            ("seq", row["seq"]),
            ("txn_id", row["txn_id"]),
            ("at", f"{row['source']}:{row['offset']}"),
            ("ddl", row["ddl"]),
        ]
        cells = "".join(
            f"<tr><th style='text-align:left'>{f}</th><td style='text-align:left'>{escaped_text(v)}</td></tr>"
            for f, v in fields
            if not is_missing(v)
        )
        return f"<table class='cdckit-event'>{cells}</table>"


def explore(events: pd.DataFrame, *, max_points: int = MAX_POINTS, keys: Keys | None = None) -> Explorer:
    """An :class:`Explorer` of the events: filters, a timeline, and the diff and history of one event.

    ``max_points``: the timeline samples above this many events (see :mod:`cdckit.viz.sampling`).
    ``keys``: key columns of tables whose capture names none, as for :func:`cdckit.read`: the key box and
    a row's history then find their rows.

    >>> import cdckit
    >>> ex = explore(cdckit.samples.load("canal/shop"))
    >>> ex.table.value = "shop.customers"
    >>> ex.figure.layout.yaxis.title.text
    'key of shop.customers'
    """
    if not isinstance(events, pd.DataFrame):
        raise TypeError(f"explore takes the events frame cdckit.read returns, not {type(events).__name__}")
    return Explorer(given_keys(events, keys), max_points=max_points)
