"""The standalone report: its content, its escaping, and how it behaves in a real headless Chromium.

The browser test needs Debian's ``chromium`` (``/usr/bin/chromium``), which
``.ci/run`` installs; it drives it with playwright (the Python package, no
browser download). Without Chromium it is skipped locally and fails in CI
(``CDCKIT_REQUIRE_BROWSER=1``). Its screenshot is kept in ``out/test-artifacts/``.
"""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import warnings
from pathlib import Path

import pandas as pd
import pytest

import cdckit
from cdckit.viz import report, report_html
from cdckit.viz.interactive import init_html
from cdckit.viz.report import build_report, write_report

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = ROOT / "out" / "test-artifacts"
CHROMIUM = os.environ.get("CDCKIT_CHROMIUM", "/usr/bin/chromium")

SCRIPT = "<script>window.__pwned = 'script'; alert(1)</script>"
IMG = "<img src=x onerror=\"window.__pwned = 'img'; alert(2)\">"


def _line(op: str, table: str, pos: int, before: dict | None, after: dict | None, ts: int) -> str:
    """One plain Debezium change event (unwrapped), written by hand."""
    return json.dumps({"before": before, "after": after, "op": op, "ts_ms": ts + 500,
                       "source": {"connector": "mysql", "name": "app", "db": "shop", "table": table,
                                  "ts_ms": ts, "file": "mysql-bin.000001", "pos": pos, "row": 0}})


def hostile_capture(path: Path) -> Path:
    """A Debezium capture whose values, a column name and a table name are HTML/JS injections.

    It also has an update delivered before the insert of the row it changes (an inversion: the rows name no
    key, so a row is its image) and one truncated line (quarantined, its raw text holding a script).
    """
    t = 1_700_000_000_000
    lines = [
        _line("u", "customers", 200, {"id": 1, "name": SCRIPT, "note": "plain"},
              {"id": 1, "name": IMG, "note": "plain"}, t + 2000),
        _line("c", "customers", 100, None, {"id": 1, "name": SCRIPT, "note": "plain"}, t),
        _line("u", "customers", 300, {"id": 1, "name": IMG, "note": "plain"},
              {"id": 1, "name": "fixed", "note": "plain"}, t + 3000),
        _line("c", SCRIPT, 400, None, {"id": 7, IMG: "column name is hostile"}, t + 4000),
        _line("u", SCRIPT, 500, {"id": 7, IMG: "column name is hostile"}, {"id": 7, IMG: SCRIPT}, t + 5000),
        '{"before": null, "after": {"id": 9, "name": "' + SCRIPT.replace('"', "'") + '"',  # truncated
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _rows(page: str, name: str) -> list[list[str]]:
    """The rows of the interactive table ``name`` in a report page (its cells as itables sends them)."""
    args = page.split(f'querySelectorAll("#cdckit-{name}:not(.dataTable)")')[1]
    return json.loads(json.loads(re.search(r'"data_json": (".*?[^\\\\]"),\n', args).group(1)))


def _header(page: str, name: str) -> list[str]:
    args = page.split(f'querySelectorAll("#cdckit-{name}:not(.dataTable)")')[1]
    head = json.loads(re.search(r'"table_html": (".*?[^\\\\]"),?\n', args).group(1))
    return re.findall(r"<th>(.*?)</th>", head)


def _section(page: str, key: str) -> str:
    return page.split(f"<section id='{key}'>")[1].split("</section>")[0]


@pytest.fixture(scope="module")
def shop():
    events = cdckit.read(cdckit.samples.path("canal/shop"))
    return events, build_report(events)


def test_report_sections_hold_what_the_capture_says(shop):
    events, page = shop
    for heading in ("Detection", "Read accounting", "Op counts per table", "Timeline", "Ordering findings",
                    "Transactions", "Capture lag", "Schema history", "Column profile", "Final state", "Diffs"):
        assert f"<h2>{heading}</h2>" in page
    # the column profile: one row per table and column, as cdckit.profile gives them
    profiled = cdckit.profile(events)
    header = _header(page, "profile")
    assert [(r[header.index("table")], r[header.index("column")]) for r in _rows(page, "profile")] == list(
        zip(profiled["table"], profiled["column"]))
    # op counts per table: every table's total is in its row
    counts = cdckit.frame.table_names(events).value_counts()
    header = _header(page, "ops")
    totals = {row[0]: row[header.index("total")] for row in _rows(page, "ops")}
    assert totals == {table: str(count) for table, count in counts.items()}
    assert _rows(page, "detection")[0][1] == "canal"
    assert "events compared within each source (file or topic) and dialect" in _section(page, "ordering")


def test_report_embeds_datatables_and_plotly_once_and_loads_nothing(shop):
    _, page = shop
    assert page.count(init_html()) == 1 and page.count(report_html.plotly_script()) == 1
    assert page.count("new ITable(") >= 10  # every table is interactive
    assert "<table><thead>" not in page.replace('"table_html": "<table><thead>', "")  # no plain table left
    assert not re.search(r"<(script|link|img|iframe)[^>]*(src|href)=", page)
    # the figures' JSON is drawn by the page's own script, from plotly.js's basic bundle: no WebGL trace
    figures = re.findall(r"<script type='application/json' id='figure-\d-data'>(.*?)</script>", page)
    assert len(figures) == 4  # timeline, ordering, transactions (Canal names each change's transaction), lag
    assert all(trace["type"] == "scatter" for f in figures for trace in json.loads(f)["data"])


def test_embedded_plotly_is_the_version_plotly_draws_with():
    import gzip

    import plotly.offline

    head = gzip.decompress(report.PLOTLY_BUNDLE.read_bytes())[:200].decode("utf-8")
    assert f"plotly.js (basic - minified) v{plotly.offline.get_plotlyjs_version()}" in head


def test_report_of_320_events_is_under_2_mb(shop):
    events, page = shop
    assert len(events) == 320
    assert len(page.encode("utf-8")) < 2_000_000


def test_report_numbers_are_rounded_for_reading(shop):
    _, page = shop
    lag = _rows(page, "lag")
    assert lag and all(re.fullmatch(r"-?[\d,]+(\.\d+)?", cell) for row in lag for cell in row[1:])
    significant = [len(cell.replace(",", "").replace(".", "").replace("-", "").lstrip("0")) for row in lag
                   for cell in row[3:]]
    assert max(significant) <= 3  # the mean lag is 1.47 s, not 1.4687...
    assert report.readable(1234567) == "1,234,567" and report.readable(2 / 3) == "0.667"


def test_report_previews_the_final_state_exactly(shop):
    events, page = shop
    state = cdckit.materialize(events)
    for number, (table, frame) in enumerate(state.items()):
        assert f"<code>{table}</code>: {len(frame)} live row(s)" in page
        rows = _rows(page, f"state-{number}")
        assert _header(page, f"state-{number}") == list(frame.columns)
        expected = [["" if pd.isna(v) else html.escape(str(v)) for v in row]
                    for row in frame.head(report.STATE_ROWS).values]
        assert rows == expected  # capture values exactly as they are (not rounded), escaped


def test_report_says_what_materialize_warns_of_on_the_page_not_the_console():
    events = cdckit.read(cdckit.samples.path("lindorm"))  # keyless changes that find no row
    with pytest.warns(UserWarning, match="found no row to change") as said:
        cdckit.materialize(events)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing reaches the console
        page = build_report(events)
    assert f"<strong>Note:</strong> {html.escape(str(said[0].message))}" in page


def test_report_lists_the_schema_history(shop):
    _, page = shop
    rows = _rows(page, "schema")
    header = _header(page, "schema")
    assert {"table", "change", "column"} <= set(header)
    assert {row[header.index("table")] for row in rows} == {"shop.customers", "shop.order_items"}


def test_report_diffs_hold_every_changed_column(shop):
    events, page = shop
    updates = events[events["op"] == "update"]
    rows = cdckit.viz.diff(events, limit=len(events)).rows
    changed = rows[~rows["status"].isin(["unchanged", "not sent"])]
    table = _rows(page, "diffs")
    assert len(table) == len(changed) > report.SAMPLE_DIFFS
    header = _header(page, "diffs")
    assert header[:6] == ["table", "key", "seq", "column", "before", "after"]
    assert {row[header.index("seq")] for row in table} <= set(updates["seq"])
    assert f"{len(changed)} row(s) from {len(updates)} update(s)" in page


def test_report_diffs_are_capped_at_whole_updates(monkeypatch):
    events = cdckit.read(cdckit.samples.path("canal/shop"))
    monkeypatch.setattr(report, "DIFF_ROWS", 5)
    page = build_report(events)
    table = _rows(page, "diffs")
    assert 0 < len(table) <= 5
    covered = len({(row[0], row[1], row[2]) for row in table})
    assert f"They cover the first {covered} of {int((events['op'] == 'update').sum())} updates" in page


def test_report_counts_findings_per_stream(tmp_path):
    folder = tmp_path / "capture"
    folder.mkdir()
    hostile_capture(folder / "a.jsonl")
    hostile_capture(folder / "b.jsonl")
    events = cdckit.read(folder)
    page = build_report(events)
    found = cdckit.order_report(events)["inversions"]
    assert len(found) == 2 and found["source"].nunique() == 2
    header = _header(page, "streams")
    rows = {row[0]: row for row in _rows(page, "streams")}
    assert set(found["source"]) <= set(rows) <= set(found["source"]) | {"(whole capture)"}
    assert [rows[source][header.index("inversions")] for source in sorted(found["source"])] == ["1", "1"]


def test_report_escapes_every_capture_value(tmp_path):
    events = cdckit.read(hostile_capture(tmp_path / "hostile.jsonl"))
    assert events.attrs["report"]["quarantined"] == 1
    page = build_report(events)
    # the only script elements are the page's own: DataTables and plotly loaders, tables, figures' JSON
    scripts = {re.sub(r"figure-\d+-data", "figure-N-data", s) for s in re.findall(r"<script[^>]*>", page)}
    assert scripts <= {"<script>", '<script type="module">', "<script type='application/json' id='figure-N-data'>"}
    assert "<img" not in page
    assert "&lt;script&gt;window.__pwned" in page  # shown as text in the tables
    for spec in re.findall(r"<script type='application/json'[^>]*>(.*?)</script>", page, flags=re.S):
        assert "<" not in spec and ">" not in spec  # written as \u003c: no value can close the script


def test_write_report_is_atomic_and_refuses_to_overwrite(tmp_path):
    out = tmp_path / "report.html"
    written = write_report(cdckit.samples.path("maxwell"), out)
    assert out.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert written.rows == len(cdckit.read(cdckit.samples.path("maxwell")))
    assert written.bytes == out.stat().st_size
    with pytest.raises(FileExistsError, match="report.html"):
        write_report(cdckit.samples.path("maxwell"), out)
    write_report(cdckit.samples.path("canal"), out, overwrite=True)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.html"]  # no temporary left behind


def _browser():
    if not Path(CHROMIUM).exists():
        if os.environ.get("CDCKIT_REQUIRE_BROWSER"):
            pytest.fail(f"{CHROMIUM} is missing (apt-get install chromium); CI requires the browser test")
        pytest.skip(f"{CHROMIUM} is missing: apt-get install chromium (CI installs it in .ci/run)")
    from playwright.sync_api import sync_playwright

    return sync_playwright()


def launched(pw):
    """Debian's Chromium, headless, with nothing of its own reaching out (this machine has no network)."""
    return pw.chromium.launch(
        executable_path=CHROMIUM,
        args=["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
              "--disable-sync", "--no-first-run", "--disable-quic"])


def _open(pw, out: Path, width: int, height: int):
    """The report in headless Chromium: (browser, page, problems, dialogs, requests), every request recorded.

    Requests other than the page itself and the ``blob:`` URLs the page makes
    of its own embedded libraries are aborted (and recorded: none may happen).
    """
    browser = launched(pw)
    page = browser.new_page(viewport={"width": width, "height": height})
    problems: list[str] = []
    dialogs: list[str] = []
    requests: list[str] = []
    page.on("console", lambda m: problems.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.on("request", lambda r: requests.append(r.url))

    def only_the_file(route):
        if route.request.url == out.as_uri():
            route.continue_()
        else:
            route.abort()

    page.route("**/*", only_the_file)
    page.goto(out.as_uri(), wait_until="load")
    page.wait_for_selector(".js-plotly-plot .main-svg", timeout=30_000)
    page.wait_for_selector("table.dataTable", timeout=30_000)
    return browser, page, problems, dialogs, requests


def _shown_rows(page, name: str) -> list[list[str]]:
    return page.eval_on_selector_all(f"#cdckit-{name} tbody tr",
                                     "rows => rows.map(r => Array.from(r.cells).map(c => c.textContent))")


def test_report_in_headless_chromium(tmp_path):
    capture = hostile_capture(tmp_path / "hostile.jsonl")
    out = tmp_path / "report.html"
    write_report(capture, out)
    with _browser() as pw:
        browser, page, problems, dialogs, requests = _open(pw, out, 1280, 2000)
        try:
            plots = page.eval_on_selector_all(".js-plotly-plot", "els => els.map(e => e.querySelectorAll('.main-svg').length)")
            points = page.eval_on_selector_all(".js-plotly-plot .point", "els => els.length")
            pwned = page.evaluate("window.__pwned === undefined ? null : String(window.__pwned)")
            text = page.inner_text("body")
            tooltips = page.eval_on_selector_all("table.dataTable td[title]", "tds => tds.map(td => td.title)")
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / "report.png"), full_page=True)
            shutil.copy(out, ARTIFACTS / "report.html")
        finally:
            browser.close()
    assert problems == []
    assert dialogs == [] and pwned is None  # the injected script and onerror handler never ran
    assert [r for r in requests if not r.startswith("blob:")] == [out.as_uri()]  # nothing fetched
    assert len(plots) == 3 and all(n >= 1 for n in plots)  # timeline, ordering, lag all drawn
    assert points > 0
    assert SCRIPT in text and "column name is hostile" in text  # the injection shows as text
    assert SCRIPT in tooltips  # a long cell's whole value is its tooltip, as text
    assert (ARTIFACTS / "report.png").stat().st_size > 10_000


def test_report_tables_search_sort_and_fit_1400_pixels(tmp_path):
    out = tmp_path / "shop.html"
    write_report(cdckit.samples.path("canal/shop"), out)
    with _browser() as pw:
        browser, page, problems, dialogs, requests = _open(pw, out, 1400, 900)
        try:
            page.wait_for_timeout(500)  # plotly's responsive resize
            width = page.evaluate("document.documentElement.scrollWidth")
            tables = page.eval_on_selector_all("table.dataTable", "els => els.length")
            plain = page.eval_on_selector_all("section table:not(.dataTable):not(.cdckit-diff-table)", "els => els"
                                              ".filter(t => !t.closest('.dt-container') && t.offsetParent).length")
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / "report-1400.png"))
            # search: the diff table keeps only the rows that hold the text typed
            before = page.inner_text("#diffs .dt-info")
            page.fill("#diffs .dt-search input", "balance")
            page.wait_for_function("document.querySelector('#diffs .dt-info').textContent.includes('filtered')")
            found = _shown_rows(page, "diffs")
            after = page.inner_text("#diffs .dt-info")
            page.screenshot(path=str(ARTIFACTS / "report-search.png"))
            # sort: clicks on the balance column of the customers' final state sort it by value, both ways
            balance = _header(out.read_text(encoding="utf-8"), "state-0").index("balance")
            header = page.locator("#state .dt-scroll-head th").nth(balance)
            header.click()
            page.wait_for_function("document.querySelector('#state .dt-scroll-head th.dt-ordering-asc')")
            first = [float(row[balance]) for row in _shown_rows(page, "state-0")]
            header.click()
            page.wait_for_function("document.querySelector('#state .dt-scroll-head th.dt-ordering-desc')")
            second = [float(row[balance]) for row in _shown_rows(page, "state-0")]
        finally:
            browser.close()
    assert problems == [] and dialogs == []
    assert [r for r in requests if not r.startswith("blob:")] == [out.as_uri()]  # no http(s), nothing else
    assert width <= 1400  # no horizontal scroll at 1,400 px: wide tables scroll inside their box
    assert tables >= 10 and plain == 0  # every table is interactive
    assert before.startswith("Showing 1 to 10 of 149") and "filtered from 149 total entries" in after
    matching = int(re.search(r"of ([\d,]+) entries \(filtered", after).group(1))
    assert 0 < matching < 149 and found and all("balance" in " ".join(row) for row in found)
    assert len(first) == 10 and first != second
    assert first == sorted(first) and second == sorted(second, reverse=True)  # by value, not as texts


def test_report_figures_are_sampled_above_their_point_budget(shop):
    events, page = shop
    assert "sampled evenly" not in page  # 320 events: everything drawn
    page = build_report(events, max_points=100)
    assert page.count("showing 100 of 320 events (sampled evenly") == 3  # timeline, ordering and lag


# --------------------------------------------------------------------------- transactions


def _figure(page: str, number: int) -> dict:
    found = re.search(rf"<script type='application/json' id='figure-{number}-data'>(.*?)</script>", page, re.S)
    return json.loads(found.group(1))


def test_report_lists_transactions_by_status_and_the_incomplete_ones():
    from test_viz import cut_postgres

    events = cut_postgres()
    table = cdckit.transactions(events)
    page = build_report(events)
    section = _section(page, "transactions")
    assert "60 transaction(s)" in section and "59 complete" in section and "1 incomplete</span>" in section
    header = _header(page, "transaction-counts")
    counts = {row[0]: row[header.index("transactions")] for row in _rows(page, "transaction-counts")}
    assert counts == {s: str(n) for s, n in table["status"].value_counts().items()}
    header = _header(page, "transactions-incomplete")
    open_ = table[table["status"] == "no_commit"].iloc[0]
    (row,) = _rows(page, "transactions-incomplete")
    assert row[header.index("txn_id")] == open_["txn_id"] and row[header.index("status")] == "no_commit"
    assert row[header.index("detail")] == open_["detail"]
    figure = _figure(page, 3)  # drawn in the section, beside the tables
    assert "id='figure-3'" in section
    assert [trace["name"] for trace in figure["data"]] == ["complete", "no_commit (incomplete)"]
    assert figure["layout"]["yaxis"]["categoryarray"] == table["txn_id"].tolist()


def test_report_of_a_capture_without_transactions_draws_no_transaction_figure():
    page = build_report(cdckit.read(cdckit.samples.path("universe/shop")))
    section = _section(page, "transactions")
    assert "No transactions in this capture" in section
    assert "cdckit-figure" not in section and "figure-3" not in page


def test_report_escapes_transaction_ids_and_details():
    from test_viz import build

    hostile = "<script>window.__pwned = 1</script>"
    rows = [dict(op="begin", op_raw="BEGIN", txn_id=hostile, seq="001", event_time=0),
            dict(op="insert", op_raw="c", database="db", table="t", key_columns=["id"], key="[1]", txn_id=hostile,
                 seq="002", event_time=0, after={"id": 1})]
    page = build_report(build(rows, dialect="wal2json"))
    section = _section(page, "transactions")
    assert "window.__pwned" in section and "<script>window" not in page
    (row,) = _rows(page, "transactions-incomplete")
    assert html.escape(hostile) in row  # escaped in the table's data
    spec = re.search(r"id='figure-3-data'>(.*?)</script>", page, re.S).group(1)
    assert "<" not in spec and hostile.replace("<", "&lt;").replace(">", "&gt;") in json.loads(spec)["data"][0]["y"]


def test_a_report_of_no_event_draws_no_empty_figure(tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    page = build_report(cdckit.read(empty))
    assert "class='cdckit-figure'" not in page  # plotly drew an empty axis from 2000 to 2001
    assert page.count("No event to draw: the capture holds none.") == 3
