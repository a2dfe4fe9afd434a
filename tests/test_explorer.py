"""cdckit.explore: filters drive filtered() and the figure; clicks and the list show a diff and the row's history;
capture values are escaped; nothing is printed (strict nbval)."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pandas as pd
import plotly.graph_objects as go
import pytest
from plotly.callbacks import Points
from test_viz import SCRIPT, Cells, assert_escaped, build, cut_postgres, figure_strings, hostile_events, synthetic

import cdckit
from cdckit import viz
from cdckit.frame import table_names
from cdckit.notebook import slim_widget_state
from cdckit.viz.explorer import ALL_TABLES, LISTED, Explorer, explore


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
    assert ex.figure in ex.children[3].children  # in its scrolling box
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

    ex.key.value = "1"
    expected = expected[expected["key"] == "[1]"]
    assert ex.filtered().index.equals(expected.index) and len(expected) > 0
    assert ex.status.value == f"{len(expected)} of 320 events shown"
    assert [label for _, label in ex.event_list.options] == \
        expected.sort_values("event_time", kind="stable").index.tolist()[:LISTED]

    ex.key.value, ex.table.value, ex.ops.value = "", ALL_TABLES, tuple(ex.ops.options)
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
    assert ex.status.value == ("1,200 of 1,200 events shown; 300 drawn "
                               "(the rest sampled evenly per lane and op; small groups kept whole)")
    assert len(ex.event_list.options) == LISTED
    assert viz.describe(ex.figure).count("note: showing 300") == 1


def untimed(count: int) -> pd.DataFrame:
    """The Canal shop's first 20 events, the first ``count`` of them with no time at all."""
    events = shop().head(20).copy()
    events.loc[events.index[:count], ["event_time", "emit_time"]] = pd.NaT
    return events


def test_the_status_counts_the_events_drawn_and_those_without_a_time():
    ex = explore(untimed(2))
    assert sum(points_by_op(ex).values()) == 18
    assert ex.status_text() == "20 of 20 events shown; 18 drawn (2 without a time)"
    ex.ops.value = (ex.events.loc[ex.events.index[0], "op"],)
    shown = ex.filtered()
    missing = int(shown["event_time"].isna().sum())
    assert missing and ex.status_text() == f"{len(shown)} of 20 events shown; {len(shown) - missing} drawn " \
                                          f"({missing} without a time)"
    ex = explore(untimed(0))
    assert ex.status_text() == "20 of 20 events shown"


def test_a_figure_with_no_match_keeps_the_time_span_of_the_capture():
    events = synthetic(50)
    ex = explore(events)
    first, last = (t.tz_convert("UTC").tz_localize(None) for t in (events["event_time"].min(),
                                                                     events["event_time"].max()))
    ex.key.value = "no such key"
    low, high = (pd.Timestamp(x) for x in ex.figure.layout.xaxis.range)
    assert (low, high) == (first, last)
    ex.key.value = ""
    assert ex.figure.layout.xaxis.range is None  # plotly fits the axis to the points again
    single = explore(untimed(0).head(1))
    single.key.value = "no such key"
    low, high = (pd.Timestamp(x) for x in single.figure.layout.xaxis.range)
    assert low < high


def test_the_timeline_scrolls_in_a_box_so_the_details_stay_close():
    ex = explore(shop())
    ex.table.value = "shop.customers"
    box = next(child for child in ex.children if ex.figure in getattr(child, "children", ()))
    assert box.layout.max_height == "560px" and box.layout.overflow == "hidden auto"
    assert ex.figure.layout.height > 560  # a lane per key keeps its height (no lane label dropped)
    assert ex.children.index(box) + 1 == len(ex.children) - 1  # the list and details come right after


def test_the_history_shows_the_values_before_seq_source_and_offset():
    ex = explore(shop())
    click(ex, "update", 3)
    header = ex.details.value.split("history of")[1].split("</thead>")[0]
    names = re.findall(r"<th>([^<]*)</th>", header)
    assert names[:4] == ["", "version", "op", "event_time"] and names[-3:] == ["seq", "source", "offset"]
    values = set(names) - {"", "version", "op", "event_time", "changed", "problem", "seq", "source", "offset"}
    assert len(values) >= 3  # the row's own columns, all before seq


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


# --------------------------------------------------------------------------- issue 13: the explorer's sharp edges


def keyed(keys: list[str]) -> pd.DataFrame:
    """One insert per key text, in table t, a second apart."""
    return build([dict(op="insert", op_raw="c", table="t", key=key, key_columns=["id"], after={"id": key},
                       event_time=i) for i, key in enumerate(keys)])


def shown_keys(ex: Explorer, typed: str) -> set[str]:
    ex.key.value = typed
    return set(ex.filtered()["key"])


def test_key_box_matches_key_values_exactly_as_you_type():
    ex = explore(shop())
    assert ex.key.continuous_update  # the filter follows each keystroke
    for typed in ("3", " 3 ", '"3"', "[3]"):
        assert shown_keys(ex, typed) == {"[3]"}, typed  # never [13], [23], [30]
    for typed in ("103,1", "103, 1", "[103,1]", '"103","1"'):
        assert shown_keys(ex, typed) == {"[103,1]"}, typed
    assert shown_keys(ex, "1") == {"[1]"}
    for typed in ("10", "[1", "3,", "no such key", "[[3]]", "1" * 30):
        assert shown_keys(ex, typed) == ({"[10]"} if typed == "10" else set()), typed
    assert shown_keys(ex, "") == set(shop()["key"].dropna())


def test_key_box_matches_text_keys_and_composite_keys():
    ex = explore(keyed(['["3"]', '["13"]', '[30]', '["a",1]', '["a","1"]', '["a,b"]', "[null]", '["é"]']))
    assert shown_keys(ex, "3") == shown_keys(ex, '"3"') == {'["3"]'}
    assert shown_keys(ex, "30") == shown_keys(ex, '"30"') == {"[30]"}
    assert shown_keys(ex, '"a",1') == shown_keys(ex, "a, 1") == shown_keys(ex, '["a",1]') == {'["a",1]', '["a","1"]'}
    assert shown_keys(ex, '["a",1]') == {'["a",1]', '["a","1"]'}
    assert shown_keys(ex, '"a,b"') == {'["a,b"]'}
    assert shown_keys(ex, "null") == {"[null]"}
    assert shown_keys(ex, "é") == {'["é"]'}


def test_a_filter_that_matches_nothing_says_so_and_clears_the_details():
    events = shop()
    ex = explore(events)
    label = click(ex, "update", 3)
    assert events.loc[label, "seq"] in ex.details.value
    ex.key.value = "<b>99999</b>"
    assert ex.filtered().empty
    assert "no event matches the filters" in ex.status_text()
    assert "no event matches the filters" in ex.details.value and "key &lt;b&gt;99999&lt;/b&gt;" in ex.details.value
    assert "<b>99999" not in ex.details.value + ex.status.value
    assert events.loc[label, "seq"] not in ex.details.value and "history of" not in ex.details.value
    assert ex.selected is None and ex.event_list.value is None and ex.event_list.options == ()
    assert all(len(t.x) == 0 and t.selectedpoints is None for t in ex.figure.data)
    ex.key.value = ""
    assert ex.selected is None and "history of" not in ex.details.value and "no event matches" not in ex.details.value


def test_a_filter_keeps_the_shown_event_only_while_it_matches():
    events = shop()
    ex = explore(events)
    label = click(ex, "update", 3)
    ex.ops.value = ("update", "delete")  # still matches: still shown, listed and marked
    assert ex.selected == label and ex.event_list.value == label and events.loc[label, "seq"] in ex.details.value
    ex.ops.value = ("insert",)  # filtered out: the details no longer show it
    assert ex.selected is None and ex.event_list.value is None
    assert events.loc[label, "seq"] not in ex.details.value and "no event matches" not in ex.details.value


def marked(ex: Explorer) -> list:
    """The event labels of the points the timeline marks as selected."""
    return [t.customdata[i] for t in ex.figure.data for i in (t.selectedpoints or ())]


def test_a_click_highlights_the_same_event_in_the_list_and_the_timeline():
    events = shop()
    ex = explore(events)
    assert ex.event_list.value is None and marked(ex) == []
    label = click(ex, "update", 3)
    assert ex.selected == label and ex.event_list.value == label and marked(ex) == [label]
    # an event past the first LISTED of the list: the list takes it in, and highlights it
    trace = next(t for t in ex.figure.data if t.name == "update")
    last = trace.customdata[-1]
    assert last not in [value for _, value in ex.event_list.options]
    click(ex, "update", len(trace.x) - 1)
    assert ex.selected == last and ex.event_list.value == last and marked(ex) == [last]
    assert len(ex.event_list.options) == LISTED + 1
    assert events.loc[last, "seq"] in ex.details.value


def test_picking_in_the_list_shows_the_event_and_marks_its_point():
    events = shop()
    ex = explore(events)
    click(ex, "insert", 0)
    _, label = ex.event_list.options[9]
    ex.event_list.value = label
    assert ex.selected == label and marked(ex) == [label] and events.loc[label, "seq"] in ex.details.value
    dimmed = [t for t in ex.figure.data if label not in list(t.customdata)]
    assert dimmed and all(t.selectedpoints == () for t in dimmed)  # the other ops' points are dimmed, none marked


def test_an_event_the_sample_leaves_out_is_listed_but_no_point_is_marked():
    events = synthetic(1200)
    ex = explore(events, max_points=300)
    drawn = {label for t in ex.figure.data for label in t.customdata}
    left_out = next(label for label in events.index if label not in drawn)
    ex.select(left_out)
    assert ex.event_list.value == left_out and marked(ex) == []
    assert all(t.selectedpoints is None for t in ex.figure.data)


def test_swimlanes_are_sorted_by_key_from_the_top():
    ex = explore(shop())
    ex.table.value = "shop.customers"
    lanes = list(ex.figure.layout.yaxis.categoryarray)
    assert lanes[:4] == ["[1]", "[2]", "[3]", "[4]"] and lanes.index("[2]") < lanes.index("[10]")
    assert lanes == sorted(lanes, key=lambda lane: int(lane[1:-1]))
    assert ex.figure.layout.yaxis.autorange == "reversed"  # the first key on top
    ex.table.value = "shop.order_items"
    lanes = [json.loads(lane) for lane in ex.figure.layout.yaxis.categoryarray]
    assert lanes == sorted(lanes) and lanes[0] == [101, 1]
    text_keys = keyed(['["b"]', "[10]", '["a"]', "[2]", "[null]"])
    ex = explore(text_keys)
    ex.table.value = "t"
    assert list(ex.figure.layout.yaxis.categoryarray) == ["[2]", "[10]", '["a"]', '["b"]', "[null]"]


def test_the_history_table_scrolls_inside_its_own_box():
    ex = explore(shop())
    click(ex, "update", 3)
    details = ex.details.value
    assert ex.details.layout.overflow == "auto" and ex.details.layout.min_width == "0"
    box = details.split("<div class='cdckit-history'>", 1)[1]
    assert box.lstrip().startswith("<table") and "history of" in details
    style = details.split("<style>", 1)[1].split("</style>", 1)[0]
    assert ".cdckit-history{width:0;min-width:100%;max-height:24em;overflow:auto}" in style
    assert ".cdckit-event td{overflow-wrap:anywhere}" in style


NOTEBOOK = Path(__file__).resolve().parent.parent / "notebooks" / "05_before_after.ipynb"
STATE = "application/vnd.jupyter.widget-state+json"
VIEW = "application/vnd.jupyter.widget-view+json"


def test_the_committed_notebook_keeps_the_explorers_state_and_stays_small():
    notebook = json.loads(NOTEBOOK.read_text(encoding="utf-8"))
    assert NOTEBOOK.stat().st_size < 1_000_000  # plotly.js (5 MB) is not saved with it
    models = notebook["metadata"]["widgets"][STATE]["state"]
    shown = [output["data"][VIEW]["model_id"] for cell in notebook["cells"] for output in cell.get("outputs", [])
             if VIEW in output.get("data", {})]
    assert len(shown) == 1 and models[shown[0]]["model_name"] == "VBoxModel"

    def model(reference: str) -> dict:
        return models[reference.removeprefix("IPY_MODEL_")]["state"]

    filters, times, status, figure, panes = (model(child) for child in model(shown[0])["children"])
    table, ops, key = (model(child) for child in filters["children"])
    assert table["_options_labels"][table["index"]] == "shop.customers" and key["value"] == "[3]"
    assert status["value"] == "4 of 320 events shown"
    assert "notebook runs" in figure["_esm"] and len(figure["_esm"]) < 1000
    event_list, details = (model(child) for child in panes["children"])
    picked = event_list["_options_labels"][event_list["index"]]  # the list highlights the event in the details
    assert picked.endswith("shop.customers  [3]") and "history of shop.customers key [3]" in details["value"]
    assert picked[:19] in details["value"]  # its time


def test_slim_widget_state_leaves_small_widgets_alone():
    small = {"model_module": "anywidget", "state": {"_esm": "export default {}", "_widget_data": [1]}}
    other = {"model_module": "@jupyter-widgets/controls", "state": {"value": "x" * 200_000}}
    notebook = {"metadata": {"widgets": {STATE: {"state": {"a": small, "b": other}}}}}
    assert slim_widget_state(json.loads(json.dumps(notebook))) == notebook
    assert slim_widget_state({"cells": []}) == {"cells": []}


@pytest.mark.parametrize("make", [
    lambda: pd.concat([cdckit.samples.load("canal/shop"), cdckit.samples.load("maxwell")]),
    lambda: pd.concat([cdckit.samples.load("canal/shop").head(30), cdckit.samples.load("canal/shop").tail(30)]),
    lambda: pd.DataFrame(cdckit.samples.load("canal/shop")),  # attrs kept
    lambda: cdckit.samples.load("canal/shop").pipe(lambda f: f.set_axis(f.index, axis=0)).assign(),
    lambda: cdckit.samples.load("canal/shop").iloc[:0],  # nothing at all: no time to put on the slider
])
def test_any_frame_with_the_canonical_columns_explores(make):
    frame = make()
    frame.attrs = {} if len(frame) % 2 else frame.attrs  # with and without attrs
    ex = explore(frame)
    assert ex.status_text().startswith(f"{len(frame):,} of {len(frame):,} events shown")
    if len(frame):
        ex.select(ex.filtered().index[-1])
        assert "<table" in ex.details.value
    else:
        assert "no event matches" in ex.status_text()


def test_notebook_05_leaves_nothing_in_the_temp_folder(tmp_path, monkeypatch):
    """Its big-capture cell wrote 58 MB under the temp folder on every run and never removed it."""
    import tempfile

    notebook = json.loads(NOTEBOOK.read_text(encoding="utf-8"))
    cell = next("".join(c["source"]) for c in notebook["cells"] if "write_capture" in "".join(c["source"]))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    exec(compile(cell, "notebook-05", "exec"), {"cdckit": cdckit, "viz": viz, "print": lambda *a: None})
    assert list(tmp_path.iterdir()) == []


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_every_view_takes_two_reads_joined_with_repeated_labels_and_row_columns_named_as_history_columns():
    """pd.concat of two reads of different dialects (index labels 0.. twice), one table's columns named
    version, source and op as the history's own are: every view works, the explorer shows each event."""
    from cdckit.viz.report import build_report

    lines = "".join(
        json.dumps({"op": op, "ts_ms": 1_700_000_000_000 + i, "source": {"db": "shop", "table": "runs", "pos": i},
                    "before": None if op == "c" else {"id": 1, "version": i, "source": "old", "op": "x"},
                    "after": None if op == "d" else {"id": 1, "version": i + 1, "source": "web", "op": "y"}})
        + "\n"
        for i, op in enumerate(["c", "u", "u", "d"])
    )
    events = pd.concat([cdckit.samples.load("canal/shop"), cdckit.read(lines, dialect="debezium")])
    assert not events.index.is_unique
    runs = events[events["table"] == "runs"]
    runs = runs.assign(key_columns=[["id"]] * len(runs), key="[1]")
    events = pd.concat([events[events["table"] != "runs"], runs])
    history = cdckit.history(events, "shop.runs", 1)
    assert history["version"].tolist() == [1, 2, 3, 4]
    assert history["version (row)"].tolist()[:3] == [1, 2, 3] and history["op"].tolist()[0] == "insert"
    assert history["source (row)"].tolist()[:3] == ["web"] * 3
    ex = explore(events)
    for label in ex.filtered().index[-6:]:
        ex.select(label)
        assert "<table" in ex.details.value
    ex.table.value = "shop.runs"
    assert len(ex.filtered()) == 4
    viz.timeline(events), viz.diff(events[events["op"] == "update"].iloc[[0]]), viz.lag(events)
    viz.ordering(events)
    assert len(cdckit.materialize(events)["shop.customers"]) > 0
    cdckit.order_report(events), cdckit.scd2(events), cdckit.profile(events), cdckit.table(events, "shop.runs")
    assert "shop.runs" in build_report(events)


# --------------------------------------------------------------------------- transactions


def _history_rows(details: str) -> list[tuple[str, list[str]]]:
    """(the <tr> tag, its cells' texts) of each version in the details' row history."""
    table = details.split("history of", 1)[1].split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    return [(tag, [text for _, text in Cells(body).cells])
            for tag, body in re.findall(r"(<tr[^>]*>)(.*?)</tr>", table, flags=re.S)]


def test_the_row_history_is_grouped_and_coloured_by_transaction():
    events = cut_postgres()
    table = cdckit.transactions(events)
    ex = explore(events)
    changes = events[(events["table"] == "customers") & (events["op"] == "update")]
    ex.select(changes.index[0])
    header = ex.details.value.split("history of")[1].split("</thead>")[0]
    names = re.findall(r"<th>([^<]*)</th>", header)
    assert names[names.index("event_time") + 1] == "transaction"
    rows = _history_rows(ex.details.value)
    history = cdckit.history(events, "public.customers", events.loc[changes.index[0], "key"])
    assert len(rows) == len(history) > 2
    place = events.set_index(["source", "offset"])["txn_id"]
    ids = [place.loc[(s, o)] for s, o in zip(history["source"], history["offset"])]
    column = names.index("transaction")
    status = dict(zip(table["txn_id"], table["status"]))
    assert [cells[column] for _, cells in rows] == [f"{i} ({status[i]})" for i in ids]
    colours = [re.search(r"background:(#[0-9a-f]{6})", tag).group(1) for tag, _ in rows]
    # one colour per transaction: versions of the same transaction share it, the next one differs
    assert all((colours[i] == colours[j]) == (ids[i] == ids[j]) for i in range(len(ids)) for j in (i - 1,) if j >= 0)
    assert len(set(colours)) > 1


def test_an_incomplete_transaction_is_marked_in_the_history_and_the_details():
    events = cdckit.samples.load("wal2json/postgres_v2")
    open_id = events.loc[(events["table"] == "customers") & (events["op"] == "update"), "txn_id"].iloc[0]
    events = events.drop(index=events.index[(events["txn_id"] == open_id) & (events["op"] == "commit")])
    table = cdckit.transactions(events)
    assert table.loc[table["txn_id"] == open_id, "status"].tolist() == ["no_commit"]
    members = events[(events["txn_id"] == open_id) & (events["table"] == "customers")]
    ex = explore(events)
    ex.select(members.index[-1])
    tags = [tag for tag, cells in _history_rows(ex.details.value) if f"{open_id} ✗ no_commit" in cells]
    assert len(tags) == 1 and "class='cdckit-incomplete'" in tags[0]
    transaction = ex.details.value.split(f"<h4>transaction {open_id}</h4>")[1]
    assert "<b>no_commit</b>" in transaction
    assert f"{len(ex.transaction(open_id))} event(s) of it;" in transaction


def test_the_transaction_box_and_method_list_a_transactions_changes():
    events = cdckit.samples.load("wal2json/postgres_v2")
    ex = explore(events)
    members = events[events["txn_id"] == "730"]
    listed = ex.transaction("730")
    assert listed.index.tolist() == cdckit.sort_events(members).index.tolist()
    assert listed["op"].iloc[0] == "begin" and listed["op"].iloc[-1] == "commit"
    ex.txn.value = "730"
    assert ex.filtered().index.equals(members.index)
    assert ex.status_text() == f"{len(members)} of {len(events)} events shown"
    assert sum(len(t.x) for t in ex.figure.data) == len(members)
    ex.txn.value = "no such transaction"
    assert "transaction no such transaction" in ex.details.value and not len(ex.filtered())


def test_transaction_ids_in_the_details_are_escaped():
    rows = [dict(op="begin", op_raw="BEGIN", txn_id=SCRIPT, seq="001", event_time=0),
            dict(op="insert", op_raw="c", database="db", table="t", key_columns=["id"], key="[1]", txn_id=SCRIPT,
                 seq="002", event_time=0, after={"id": 1}),
            dict(op="commit", op_raw="COMMIT", txn_id=SCRIPT, seq="003", event_time=1)]
    ex = explore(build(rows, dialect="wal2json"))
    ex.select(1)
    assert html.escape(SCRIPT) in ex.details.value and SCRIPT not in ex.details.value
    assert [cells[4] for _, cells in _history_rows(ex.details.value)] == [f"{SCRIPT} (complete)"]
    assert f"<h4>transaction {html.escape(SCRIPT)}</h4>" in ex.details.value


def test_a_transaction_without_an_id_is_framed_by_its_markers():
    events = cdckit.samples.load("wal2json/examples_v1_plain")  # BEGIN and COMMIT lines without xids
    assert events["txn_id"].isna().all()
    ex = explore(events)
    insert = events.index[events["op"] == "insert"][3]
    ex.select(insert)
    offset = events.loc[insert, "offset"]
    members = events[events["offset"] == offset]  # one wal2json v1 message: a whole transaction
    assert f"<h4>transaction (unnamed) at offset {offset}</h4>" in ex.details.value
    assert f"{len(members)} event(s) of it:" in ex.details.value
    assert "<b>complete</b>" in ex.details.value


def test_a_history_of_a_capture_of_several_topics_names_each_versions_own_transaction():
    """A kcat file of the data topics and the transaction topic repeats offsets (each topic counts its own): the
    history tells its versions apart by seq too."""
    events = cdckit.samples.load("debezium/postgres_transactions")
    txn = events["txn_id"].str.split(":").str[0]
    chosen = events.index[(events["table"] == "documents") & (txn == "740")][0]
    assert (events["offset"] == events.loc[chosen, "offset"]).sum() > 1  # the offset alone is not the change's
    ex = explore(events)
    ex.select(chosen)
    rows = _history_rows(ex.details.value)
    history = cdckit.history(events, "public.documents", events.loc[chosen, "key"])
    expected = [txn.loc[(events["seq"] == seq)].iloc[0] for seq in history["seq"]]
    assert [cells[4] for _, cells in rows] == [f"{i} (complete)" for i in expected]
    assert [cells[0] for _, cells in rows].count("▶") == 1
    assert rows[[cells[0] for _, cells in rows].index("▶")][1][4] == "740 (complete)"
