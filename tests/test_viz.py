"""cdckit.viz: timeline hover summaries, diffs (column delete, partial images, truncation), lag, ordering,
sampling of big captures, and escaping of capture values in every view."""

from __future__ import annotations

import html
import json
from html.parser import HTMLParser

import numpy as np
import pandas as pd
import pytest
from histories import capture, deliver

import cdckit
from cdckit import values, viz
from cdckit.dialects import registry
from cdckit.frame import Event, empty_events
from cdckit.frame_builders import FrameBuilder
from cdckit.row_images import key_of

SCRIPT = "<script>alert(1)</script>"
IMG = "<img src=x onerror=alert(1)>"
_T0 = 1_714_554_000 * 10**9


# --------------------------------------------------------------------------- helpers


def build(rows: list[dict], dialect: str = "debezium", source: str = "test") -> pd.DataFrame:
    """A canonical frame from dicts of Event fields (images as dicts, times as seconds after _T0)."""
    builder = FrameBuilder()
    for offset, row in enumerate(rows):
        row = dict(row)
        for image in ("before", "after"):
            row[image] = values.image(row.get(image))
        for time in ("event_time", "emit_time"):
            if row.get(time) is not None:
                row[time] = _T0 + int(row[time] * 10**9)
        builder.add(Event(**row), dialect=dialect, source=source, offset=offset)
    return builder.to_pandas()


def hostile_events() -> pd.DataFrame:
    """Table, key, column names, values, DDL text and source all carry HTML; one update arrives inverted."""
    column = IMG
    first = {column: SCRIPT, "note": IMG, "qty": 1}
    second = dict(first, note=SCRIPT, qty=2)
    third = dict(second, note=IMG + SCRIPT, qty=3)
    common = {"database": IMG, "table": SCRIPT, "key_columns": [column], "key": key_of(first, [column])}
    rows = [
        dict(common, op="insert", op_raw="c", seq="001", event_time=0, emit_time=1, after=first),
        dict(common, op="update", op_raw="u", seq="003", event_time=2, emit_time=3, before=second, after=third),
        dict(common, op="update", op_raw="u", seq="002", event_time=1, emit_time=2, before=first, after=second),
        dict(op="ddl", op_raw="ddl", database=IMG, table=SCRIPT, seq="004", event_time=3, ddl=f"ALTER {SCRIPT}"),
        dict(common, op="delete", op_raw="d", seq="005", event_time=4, emit_time=5, before=third),
    ]
    return build(rows, source=f"{IMG}.jsonl")


def figure_strings(fig) -> list[str]:
    """Every string in the figure's JSON, decoded (plotly writes '<' as \\u003c in the JSON text itself)."""
    out: list[str] = []

    def walk(node):
        if isinstance(node, str):
            out.append(node)
        elif isinstance(node, dict):
            for k, v in node.items():
                walk(k)
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(json.loads(fig.to_json()))
    return out


def assert_escaped(texts: list[str] | str) -> None:
    """No raw tag from the capture, and the escaped text is there."""
    texts = [texts] if isinstance(texts, str) else texts
    joined = "\n".join(texts)
    assert "<script" not in joined.lower() and "<img" not in joined.lower()
    assert html.escape(SCRIPT) in joined and html.escape(IMG) in joined


class Cells(HTMLParser):
    """The <td> cells of an HTML fragment: (attributes, text)."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.cells: list[tuple[dict, str]] = []
        self._open: dict | None = None
        self._text: list[str] = []
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        if tag == "td":
            self._open, self._text = dict(attrs), []

    def handle_endtag(self, tag):
        if tag == "td" and self._open is not None:
            self.cells.append((self._open, "".join(self._text)))
            self._open = None

    def handle_data(self, data):
        if self._open is not None:
            self._text.append(data)


def trace(fig, name):
    return next(t for t in fig.data if t.name == name)


def total_points(fig) -> int:
    return sum(len(t.x) for t in fig.data)


# --------------------------------------------------------------------------- timeline


def test_hover_says_which_columns_changed_from_what_to_what():
    events = cdckit.samples.load("canal/shop")
    fig = viz.timeline(events)
    updates = trace(fig, "update")
    checked = 0
    for label, hover in zip(updates.customdata, updates.hovertext):
        before, after = json.loads(events.loc[label, "before"]), json.loads(events.loc[label, "after"])
        changed = [c for c in after if before.get(c) != after[c]]
        lines = hover.split("<br>")
        head = next(i for i, line in enumerate(lines) if line.startswith("changed "))
        assert lines[head] == f"changed {len(changed)} of {len(after)} column(s):"
        shown = lines[head + 1:]
        assert [line.split(": ", 1)[0] for line in shown] == [html.escape(c, quote=False) for c in changed]
        for column, line in zip(changed, shown):
            old, new = ("null" if v is None else str(v) for v in (before[column], after[column]))
            assert line == html.escape(f"{column}: {old} → {new}", quote=False)  # plotly shows &quot; as is
        checked += 1
    assert checked == (events["op"] == "update").sum()


def test_timeline_lanes_traces_and_marker_shapes():
    events = pd.concat([cdckit.samples.load("debezium"), cdckit.samples.load("oceanbase_extend/examples_idle")],
                       ignore_index=True)
    fig = viz.timeline(events)
    timed = events[events["event_time"].notna() | events["emit_time"].notna()]
    assert total_points(fig) == len(timed)
    for t in fig.data:
        assert len(t.x) == (timed["op"] == t.name).sum()
        assert t.marker.color == viz.OP_COLOURS[t.name]
    symbols = {t.name: t.marker.symbol for t in fig.data}
    marker_ops = [op for op in ("ddl", "heartbeat", "begin", "commit") if op in symbols]
    assert len(marker_ops) == 4
    assert len({symbols[op] for op in marker_ops} | {symbols["insert"]}) == 5
    names = cdckit.frame.table_names(timed)
    lanes = set(names.dropna()) | ({viz.NO_TABLE} if names.isna().any() else set())
    assert set(fig.layout.yaxis.categoryarray) == lanes


def test_events_without_any_time_are_left_out_and_said_so():
    events = build([dict(op="insert", op_raw="c", table="t", key="[1]", key_columns=["id"], after={"id": 1},
                         event_time=0),
                    dict(op="heartbeat", op_raw="hb")])
    fig = viz.timeline(events)
    assert total_points(fig) == 1
    assert "note: 1 event(s) without a time left out" in viz.describe(fig)


def test_timeline_by_key_one_lane_per_key_of_one_table():
    events = cdckit.samples.load("canal/shop")
    names = cdckit.frame.table_names(events)
    fig = viz.timeline(events, table="customers", by="key")
    customers = events[names == "shop.customers"]
    assert total_points(fig) == len(customers)
    numbers = sorted(customers["key"].str[1:-1].astype(int).unique())
    assert list(fig.layout.yaxis.categoryarray) == [f"[{n}]" for n in numbers]  # [2] before [10]
    for t in fig.data:
        assert list(t.y) == events.loc[list(t.customdata), "key"].tolist()
    assert viz.describe(viz.timeline(events, table="shop.customers", by="key")) == viz.describe(fig)
    with pytest.raises(ValueError):
        viz.timeline(events, by="key")
    with pytest.raises(KeyError):
        viz.timeline(events, table="nope", by="key")


def test_empty_frame_gives_an_empty_figure():
    fig = viz.timeline(empty_events())
    assert len(fig.data) == 0 and viz.describe(fig).startswith("title: Events over time per table")
    assert "no event has both" in viz.describe(viz.lag(empty_events()))


# --------------------------------------------------------------------------- diff


def _column_delete(events: pd.DataFrame) -> pd.Series:
    for _, row in events[events["op"] == "update"].iterrows():
        before, after = json.loads(row["before"]), json.loads(row["after"])
        if set(before) - set(after):
            return row
    raise AssertionError("no update drops a column")


def test_lindorm_column_delete_reads_as_removed():
    events = cdckit.read(cdckit.samples.path("lindorm"))
    assert not registry.get("lindorm").partial_updates
    row = _column_delete(events)
    gone = set(json.loads(row["before"])) - set(json.loads(row["after"]))
    d = viz.diff(row)
    status = dict(zip(d.rows["column"], d.rows["status"]))
    assert {c for c, s in status.items() if s == "removed"} == gone
    for column in gone:
        assert d.rows.loc[d.rows["column"] == column, "after"].iloc[0] is pd.NA
    cells = Cells(d._repr_html_()).cells
    assert sum(1 for attrs, _ in cells if "cdckit-removed" in attrs.get("class", "")) == len(gone)
    text = str(d)
    assert all(any(line.split()[:1] == [c] and line.rstrip().endswith("removed") for line in text.splitlines())
               for c in gone)
    hover = trace(viz.timeline(events), "update").hovertext
    assert any(f"{c}: " in h and "(removed)" in h for h in hover for c in gone)


@pytest.mark.parametrize("sample", ["shareplex", "shareplex/shop"])
def test_shareplex_partial_image_columns_are_not_sent_not_removed(sample):
    events = cdckit.read(cdckit.samples.path(sample))
    assert registry.get("shareplex").partial_updates
    d = viz.diff(events, limit=1000)
    updates = events[events["op"] == "update"]
    assert len(d.events) == len(updates) and d.left_out == 0
    assert "removed" not in set(d.rows["status"]) and "added" not in set(d.rows["status"])
    for label, row in updates.iterrows():
        before, after = json.loads(row["before"]), json.loads(row["after"])
        mine = d.rows[d.rows["event"] == label].set_index("column")["status"]
        for column in set(before) - set(after):
            assert mine[column] == "not sent"
        for column in after:
            assert mine[column] == ("unchanged" if before.get(column, object()) == after[column] else "changed")
    assert "(not sent)" in str(d) and "(not sent)" in d._repr_html_()


def test_added_column_and_the_partial_flag_decides():
    before, after = {"id": 1, "a": "x", "gone": 5}, {"id": 1, "a": "y", "new": True}
    row = dict(op="update", op_raw="u", table="t", key="[1]", key_columns=["id"], before=before, after=after)
    plain = viz.diff(build([row], dialect="canal"))  # whole images: an absent column is gone
    assert dict(zip(plain.rows["column"], plain.rows["status"])) == {
        "id": "unchanged", "a": "changed", "gone": "removed", "new": "added"}
    partial = viz.diff(build([row], dialect="shareplex"))
    assert dict(zip(partial.rows["column"], partial.rows["status"]))["gone"] == "not sent"
    html_text = plain._repr_html_()
    classes = [attrs.get("class") for attrs, _ in Cells(html_text).cells]
    assert "cdckit-added" in classes and "cdckit-changed" in classes and "cdckit-removed" in classes


def test_diff_of_a_frame_shows_the_first_updates_and_counts_the_rest():
    events = cdckit.samples.load("canal/shop")
    updates = events[events["op"] == "update"]
    d = viz.diff(events, limit=5)
    assert d.events["event"].tolist() == updates.index[:5].tolist()
    assert d.left_out == len(updates) - 5
    assert f"{len(updates) - 5} more update(s) not shown" in str(d)
    assert f"{len(updates) - 5} more update(s) not shown" in d._repr_html_()
    assert set(d.rows["status"]) <= set(viz.STATUSES)
    assert repr(d) == str(d)


def test_long_values_are_cut_with_the_full_value_on_hover():
    long = "x" * 60 + SCRIPT
    row = dict(op="update", op_raw="u", table="t", key="[1]", key_columns=["id"],
               before={"id": 1, "v": "short"}, after={"id": 1, "v": long})
    d = viz.diff(build([row]), width=20)
    html_text = d._repr_html_()
    cut = [(attrs, text) for attrs, text in Cells(html_text).cells if text.endswith("…")]
    assert len(cut) == 1
    attrs, text = cut[0]
    assert text == long[:19] + "…" and attrs["title"] == long  # the parser unescapes the attribute
    assert html.escape(long, quote=True) in html_text
    assert "<script" not in html_text
    assert long[:19] + "…" in str(d) and long not in str(d)


# --------------------------------------------------------------------------- escaping, every view


def test_every_view_escapes_capture_values():
    events = hostile_events()
    for fig in (viz.timeline(events), viz.timeline(events, table=SCRIPT, by="key"), viz.lag(events),
                viz.ordering(events)):
        assert_escaped(figure_strings(fig))
    assert_escaped(viz.diff(events)._repr_html_())
    assert_escaped(viz.diff(events.iloc[0])._repr_html_())
    hover = "".join(trace(viz.timeline(events), "ddl").hovertext)
    assert html.escape(f"ALTER {SCRIPT}") in hover


def test_diff_text_shows_values_as_text_and_neutralises_control_characters():
    # Plain text is shown as text (Jupyter's text/plain, a terminal): the value reads as itself; what a
    # terminal would act on (escape sequences, new lines) is written out.
    row = dict(op="update", op_raw="u", table=SCRIPT, key="[1]", key_columns=["id"],
               before={"id": 1, IMG: "a"}, after={"id": 1, IMG: "\x1b[2J" + SCRIPT + "\nnext"})
    text = str(viz.diff(build([row]), width=200))
    assert SCRIPT in text and IMG in text
    assert "\x1b" not in text and "\\x1b[2J" in text and "\\nnext" in text


# --------------------------------------------------------------------------- lag


def test_lag_is_emit_minus_event_time_per_table():
    events = cdckit.samples.load("canal/shop")
    fig = viz.lag(events)
    names = cdckit.frame.table_names(events)
    for t in fig.data:
        rows = events.loc[list(t.customdata)]
        assert set(names.loc[rows.index]) == {t.name}
        expected = (rows["emit_time"] - rows["event_time"]).dt.total_seconds().to_numpy()
        assert np.allclose(np.asarray(t.y, dtype=float), expected)
    assert total_points(fig) == (events["event_time"].notna() & events["emit_time"].notna()).sum()


def test_lag_takes_time_columns_of_plain_objects():
    """A frame built by hand may hold its times as Python objects (None where missing), not datetime64."""
    events = cdckit.samples.load("canal/shop").head(20)
    plain = events.astype({"event_time": object, "emit_time": object})
    plain.loc[plain.index[:5], "emit_time"] = None
    fig = viz.lag(plain)
    assert total_points(fig) == 15
    assert total_points(viz.lag(plain.assign(emit_time=None))) == 0


# --------------------------------------------------------------------------- ordering


def test_inverted_update_is_in_the_highlighted_trace():
    cap = capture("canal", [("insert", 0), ("update", 0), ("update", 0)])
    messages, _ = deliver(cap, [0, 2, 1], [])  # the second change arrives after the third
    events = cdckit.read(messages, dialect="canal")
    fig = viz.ordering(events)
    inverted = trace(fig, "inversions")
    qty = {label: json.loads(after)["qty"] for label, after in zip(events.index, events["after"])}
    assert [qty[label] for label in inverted.customdata] == [1]  # history change 1 wrote qty 1
    label = inverted.customdata[0]
    arrival = events.sort_values("offset").index.tolist()
    in_seq = events.sort_values("seq").index.tolist()
    assert (inverted.x[0], inverted.y[0]) == (arrival.index(label), in_seq.index(label))
    assert "#d62728" == inverted.marker.color
    others = [lab for t in fig.data if t.name != "inversions" for lab in t.customdata]
    assert sorted(others + [label]) == sorted(events.index)
    assert len(trace(viz.ordering(cdckit.read(cap.messages, dialect="canal")), "inversions").x) == 0


def test_ordering_uses_a_given_report():
    events = hostile_events()
    report = cdckit.order_report(events)
    assert len(report["inversions"]) == 1
    assert viz.describe(viz.ordering(events, report)) == viz.describe(viz.ordering(events))


# --------------------------------------------------------------------------- sampling


def synthetic(n: int, ddl_every: int = 500) -> pd.DataFrame:
    """n events over two tables, cheaply with pandas: updates and inserts, a DDL every ``ddl_every``."""
    i = np.arange(n)
    ops = np.where(i % ddl_every == 0, "ddl", np.where(i % 3 == 0, "insert", "update"))
    frame = pd.DataFrame({
        "dialect": "debezium", "source": "big", "offset": i, "partition": 0, "op": ops, "op_raw": ops,
        "database": "db", "schema": None, "table": np.where(i % 2 == 0, "a", "b"),
        "event_time": pd.to_datetime(1_714_554_000_000 + i * 10, unit="ms", utc=True),
        "emit_time": pd.to_datetime(1_714_554_000_000 + i * 10 + 250, unit="ms", utc=True),
        "seq": [f"{k:020d}" for k in i], "txn_id": None, "key_columns": [["id"]] * n,
        "key": [f"[{k % 997}]" for k in i],
        "before": [f'{{"id":{k % 997},"v":{k}}}' if op == "update" else None for k, op in zip(i, ops)],
        "after": [f'{{"id":{k % 997},"v":{k + 1}}}' if op != "ddl" else None for k, op in zip(i, ops)],
        "ddl": np.where(ops == "ddl", "ALTER TABLE a ADD c INT", None)})
    return frame.astype(empty_events().dtypes.to_dict())


def test_sampling_caps_points_keeps_rare_ops_and_says_so():
    events = synthetic(3000)
    ddl = (events["op"] == "ddl").sum()
    for fig in (viz.timeline(events, max_points=500), viz.lag(events, max_points=500),
                viz.ordering(events, max_points=500)):
        shown = total_points(fig)
        assert shown == 500
        labels = [lab for t in fig.data for lab in t.customdata]
        assert len(set(labels)) == shown and set(labels) <= set(events.index)
        assert f"note: showing 500 of {len(events):,} events (sampled evenly" in viz.describe(fig)
    fig = viz.timeline(events, max_points=500)
    assert len(trace(fig, "ddl").x) == ddl
    group = events.index[(events["op"] == "update") & (events["table"] == "a")].tolist()
    kept = [group.index(k) for k in trace(fig, "update").customdata if k in set(group)]
    step = len(group) / len(kept)  # evenly spread over the whole lane, not its first rows
    assert kept[0] == 0 and set(np.diff(sorted(kept))) <= {int(step), int(step) + 1}
    for fig in (viz.timeline(events), viz.lag(events), viz.ordering(events)):
        assert total_points(fig) == len(events) and "note:" not in viz.describe(fig)


def test_sample_groups_serves_small_groups_whole():
    groups = pd.Series(["a"] * 5 + ["b"] * 100 + ["c"] * 100)
    kept = viz.sample_groups(groups, 45)
    counts = groups.iloc[kept].value_counts().to_dict()
    assert counts == {"a": 5, "b": 20, "c": 20}
    assert len(viz.sample_groups(groups, 1000)) == len(groups)


def test_default_threshold_on_sixty_thousand_events():
    events = synthetic(60_000, ddl_every=5_000)
    fig = viz.timeline(events)
    assert viz.MAX_POINTS == 50_000
    assert total_points(fig) == 50_000
    assert len(trace(fig, "ddl").x) == (events["op"] == "ddl").sum()
    assert "note: showing 50,000 of 60,000 events" in viz.describe(fig)
    assert all(t.type == "scattergl" for t in fig.data if len(t.x) > viz.WEBGL_ABOVE)


def test_quotes_in_keys_read_as_quotes_in_plotly_text():
    # plotly decodes &lt; &gt; &amp; and numeric entities but shows &quot; as written
    events = cdckit.read(cdckit.samples.path("shareplex"))
    strings = figure_strings(viz.timeline(events, table="order_lines", by="key"))
    assert '["1001","1"]' in strings and not any("&quot;" in s for s in strings)


def test_a_wrong_table_name_lists_the_tables():
    events = cdckit.samples.load("canal/shop")
    with pytest.raises(KeyError, match="shop.order_items"):
        viz.timeline(events, table="no_such_table")


# --------------------------------------------------------------------------- transactions


def cut_postgres() -> pd.DataFrame:
    """The real wal2json capture of the PostgreSQL sample with its last COMMIT dropped (the capture ends before
    its last transaction commits)."""
    events = cdckit.samples.load("wal2json/postgres_v2")
    last = events.index[events["op"] == "commit"][-1]
    return events.drop(index=last)


def transactions_table(rows: list[dict]) -> pd.DataFrame:
    """A transactions table (the columns the views read) from a few hand-written rows."""
    base = {"dialect": "debezium", "status": "complete", "complete": True, "changes": 1, "tables": '{"t":1}',
            "begin_offset": 0, "begin_time": pd.NaT, "commit_time": pd.NaT, "detail": "one change"}
    frame = pd.DataFrame([dict(base, **row) for row in rows])
    for column in ("begin_time", "commit_time"):
        frame[column] = pd.to_datetime(frame[column], utc=True)
    frame["duration"] = frame["commit_time"] - frame["begin_time"]
    frame["complete"] = frame["complete"].astype("boolean")
    return frame


def test_transaction_timeline_draws_each_transaction_from_begin_to_commit_in_commit_order():
    events = cut_postgres()
    table = cdckit.transactions(events)
    open_ = table[table["status"] == "no_commit"]
    assert len(open_) == 1 and len(table) == 60
    fig = viz.transaction_timeline(events)
    assert [t.name for t in fig.data] == ["complete", "no_commit (incomplete)"]
    assert list(fig.layout.yaxis.categoryarray) == table["txn_id"].tolist()  # one lane each, in commit order
    done = trace(fig, "complete")
    # a line per transaction: begin, commit, gap
    assert list(done.y[:3]) == [table["txn_id"].iloc[0]] * 2 + [None]
    first = table.iloc[0]
    assert pd.Timestamp(done.x[0]) == first["begin_time"].tz_convert(None)
    assert pd.Timestamp(done.x[1]) == first["commit_time"].tz_convert(None)
    assert done.marker.symbol == "circle" and done.line.dash == "solid"
    cut = trace(fig, "no_commit (incomplete)")
    # the transaction the capture never sees commit runs, dashed and crossed, to the capture's last time
    assert cut.line.dash == "dash" and cut.marker.symbol == "x"
    assert cut.y[0] == open_["txn_id"].iloc[0]
    assert pd.Timestamp(cut.x[1]) == events["event_time"].max().tz_convert(None)
    assert "no commit in the capture" in cut.hovertext[0]
    assert "complete: 59 transaction(s)" in viz.describe(fig) and "(incomplete): 1 transaction(s)" in viz.describe(fig)


def test_transaction_timeline_escapes_and_says_what_it_left_out():
    table = transactions_table([
        {"txn_id": SCRIPT, "detail": IMG, "begin_time": "2024-05-01 09:00:00", "commit_time": "2024-05-01 09:00:02",
         "tables": json.dumps({SCRIPT: 1})},
        {"txn_id": "2", "status": "missing_changes", "complete": False, "commit_time": "2024-05-01 09:00:03"},
        {"txn_id": "3"},  # no time at all
    ])
    fig = viz.transaction_timeline(empty_events(), transactions=table)
    assert_escaped(figure_strings(fig))
    assert [t.name for t in fig.data] == ["complete", "missing_changes (incomplete)"]
    # without a begin time the line is a point at its commit
    assert list(trace(fig, "missing_changes (incomplete)").x[:2]) == ["2024-05-01T09:00:03.000000"] * 2
    assert "note: 1 transaction(s) without a time left out" in viz.describe(fig)


def test_transaction_timeline_samples_above_its_budget_keeping_the_incomplete_ones():
    events = cut_postgres()
    fig = viz.transaction_timeline(events, max_points=10)
    assert len(trace(fig, "no_commit (incomplete)").x) == 3  # a small group, kept whole
    assert "showing 10 of 60 transactions (sampled evenly per status)" in viz.describe(fig)
    assert len(fig.layout.yaxis.categoryarray) == 10


def test_transaction_timeline_of_a_capture_without_transactions_is_empty():
    fig = viz.transaction_timeline(cdckit.samples.load("universe/shop"))
    assert len(fig.data) == 0
