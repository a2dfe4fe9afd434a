"""cdckit.explore: filters drive filtered() and the figure; clicks and the list show a diff and the row's history;
capture values are escaped; nothing is printed (strict nbval)."""

from __future__ import annotations

import html
import json

import pandas as pd
import plotly.graph_objects as go
import pytest
from plotly.callbacks import Points

import cdckit
from cdckit import viz
from cdckit.explorer import LISTED, Explorer, explore
from cdckit.ordering import table_names
from test_viz import SCRIPT, Cells, assert_escaped, figure_strings, hostile_events, synthetic


def shop() -> pd.DataFrame:
    return cdckit.samples.load("canal/shop")


def points_by_op(ex: Explorer) -> dict[str, int]:
    return {t.name: len(t.x) for t in ex.figure.data}


def click(ex: Explorer, op: str, position: int = 0) -> object:
    """Dispatch a click on a point of the trace of ``op``, as the front end does; returns its event label."""
    trace = next(t for t in ex.figure.data if t.name == op)
    points = Points(point_inds=[position], xs=[trace.x[position]], ys=[trace.y[position]], trace_name=trace.name,
                    trace_index=list(ex.figure.data).index(trace))
    trace._dispatch_on_click(points, None)
    return trace.customdata[position]


def test_explore_returns_a_widget_with_its_parts():
    ex = explore(shop())
    assert isinstance(ex, Explorer) and isinstance(ex.figure, go.FigureWidget)
    assert ex.figure in ex.children
    assert len(ex.filtered()) == len(ex.events) == 320
    assert ex.status.value == "320 of 320 events shown"
    counts = shop()["op"].value_counts().to_dict()
    assert points_by_op(ex) == counts


def test_filters_change_filtered_and_the_figure():
    events = shop()
    names = table_names(events)
    ex = explore(events)

    ex.ops.value = ("delete", "insert")
    expected = events[events["op"].isin(["delete", "insert"])]
    assert ex.filtered().index.equals(expected.index)
    assert points_by_op(ex) == {"insert": (expected["op"] == "insert").sum(),
                                "update": 0, "delete": (expected["op"] == "delete").sum()}

    ex.table.value = "shop.customers"
    expected = expected[names.loc[expected.index] == "shop.customers"]
    assert ex.filtered().index.equals(expected.index)
    assert sorted(lab for t in ex.figure.data for lab in t.customdata) == sorted(expected.index)
    # one table chosen: one lane per key
    assert ex.figure.layout.yaxis.title.text == "key of shop.customers"
    assert set(ex.figure.layout.yaxis.categoryarray) == set(expected["key"])

    ex.key.value = "[1"
    expected = expected[expected["key"].str.contains("[1", regex=False)]
    assert ex.filtered().index.equals(expected.index) and len(expected) > 0
    assert ex.status.value == f"{len(expected)} of 320 events shown"
    assert [label for _, label in ex.event_list.options] == \
        expected.sort_values("event_time", kind="stable").index.tolist()[:LISTED]

    ex.key.value, ex.table.value, ex.ops.value = "", None, tuple(ex.ops.options)
    stops = [value for _, value in ex.time.options]
    ex.time.index = (2, 5)
    labels = [label for label, _ in ex.time.options]
    assert ex.time_range.value == f"{labels[2]} – {labels[5]}"
    expected = events[(events["event_time"] >= stops[2]) & (events["event_time"] <= stops[5])]
    assert 0 < len(expected) < len(events)
    assert ex.filtered().index.equals(expected.index)
    assert sum(points_by_op(ex).values()) == len(expected)


def test_click_shows_the_diff_and_the_row_history():
    events = shop()
    ex = explore(events)
    label = click(ex, "update", 3)
    assert ex.selected == label
    row = events.loc[label]
    before, after = json.loads(row["before"]), json.loads(row["after"])
    changed = {c for c in after if before.get(c) != after[c]}
    cells = Cells(ex.details.value).cells
    highlighted = [text for attrs, text in cells if attrs.get("class") == "cdckit-changed"]
    shown = [v if isinstance(v, str) else json.dumps(v) for c in changed for v in (before[c], after[c])]
    assert sorted(highlighted) == sorted(shown) and changed
    name = table_names(events).loc[label]
    rows = cdckit.history(events, name, row["key"])
    assert len(rows) > 1
    assert f"history of {html.escape(name)} key {html.escape(row['key'])}" in ex.details.value
    for seq in rows["seq"]:
        assert seq in ex.details.value
    texts = [text for _, text in cells]
    assert texts.count("▶") == 1  # the selected version is marked


def test_list_and_selection_callbacks_select_too():
    events = shop()
    ex = explore(events)
    _, label = ex.event_list.options[7]
    ex.event_list.value = label
    assert ex.selected == label and events.loc[label, "source"] in ex.details.value

    trace = next(t for t in ex.figure.data if t.name == "delete")
    points = Points(point_inds=[2, 4], xs=[trace.x[2], trace.x[4]], ys=[trace.y[2], trace.y[4]],
                    trace_name=trace.name, trace_index=2)
    trace._dispatch_on_selection(points, None)
    assert ex.selected == trace.customdata[2]
    assert "no row history" not in ex.details.value


def test_refreshing_the_filters_does_not_select_anything():
    ex = explore(shop())
    ex.ops.value = ("update",)
    assert ex.selected is None and ex.event_list.value is None


def test_escaping_in_details_figure_and_status():
    events = hostile_events()
    ex = explore(events)
    assert_escaped(figure_strings(ex.figure))
    update = events.index[events["op"] == "update"][0]
    ex.select(update)
    assert_escaped(ex.details.value)
    assert html.escape(SCRIPT) in ex.details.value and "history of" in ex.details.value
    ddl = events.index[events["op"] == "ddl"][0]
    ex.select(ddl)
    assert_escaped(ex.details.value)
    ex.table.value = ex.table.options[1][1]  # the hostile table: one lane per (hostile) key
    assert_escaped(figure_strings(ex.figure))


def test_big_capture_samples_and_says_so():
    events = synthetic(1200)
    ex = explore(events, max_points=300)
    assert sum(points_by_op(ex).values()) == 300
    assert ex.status.value.startswith("1,200 of 1,200 events shown; showing 300 of 1,200 events (sampled evenly")
    assert len(ex.event_list.options) == LISTED
    assert viz.describe(ex.figure).count("note: showing 300") == 1


def test_nothing_is_printed(capsys):
    ex = explore(shop())
    ex.ops.value = ("update",)
    click(ex, "update")
    ex.event_list.value = ex.event_list.options[0][1]
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == ""


def test_redrawn_times_stay_dates():
    # the widget serializer would send a datetime64 array as integer nanoseconds: times must go as date texts
    events = shop()
    ex = explore(events)
    ex.ops.value = ("update",)
    trace = next(t for t in ex.figure.data if t.name == "update")
    assert ex.figure.layout.xaxis.type == "date" and all(isinstance(x, str) for x in trace.x)
    shown = pd.to_datetime(pd.Series(list(trace.x)), utc=True)
    expected = events.loc[list(trace.customdata), "event_time"].reset_index(drop=True)
    assert shown.equals(expected.astype(shown.dtype))


def test_explore_names_what_it_takes():
    with pytest.raises(TypeError, match="explore takes the events frame cdckit.read returns, not list"):
        cdckit.explore([1, 2, 3])
