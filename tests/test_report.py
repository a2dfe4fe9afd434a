"""The standalone report: its content, its escaping, and how it behaves in a real headless Chromium.

The browser test needs Debian's ``chromium`` (``/usr/bin/chromium``), which
``.ci/run`` installs; it drives it with playwright (the Python package, no
browser download). Without Chromium it is skipped locally and fails in CI
(``CDCKIT_REQUIRE_BROWSER=1``). Its screenshot is kept in ``out/test-artifacts/``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest

import cdckit
from cdckit.report import build_report, write_report

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

    It also has an update delivered before the update it follows (an inversion)
    and one truncated line (quarantined, its raw text holding a script).
    """
    t = 1_700_000_000_000
    lines = [
        _line("c", "customers", 100, None, {"id": 1, "name": SCRIPT, "note": "plain"}, t),
        _line("u", "customers", 300, {"id": 1, "name": IMG, "note": "plain"},
              {"id": 1, "name": "fixed", "note": "plain"}, t + 3000),
        _line("u", "customers", 200, {"id": 1, "name": SCRIPT, "note": "plain"},
              {"id": 1, "name": IMG, "note": "plain"}, t + 2000),
        _line("c", SCRIPT, 400, None, {"id": 7, IMG: "column name is hostile"}, t + 4000),
        _line("u", SCRIPT, 500, {"id": 7, IMG: "column name is hostile"}, {"id": 7, IMG: SCRIPT}, t + 5000),
        '{"before": null, "after": {"id": 9, "name": "' + SCRIPT.replace('"', "'") + '"',  # truncated
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_report_sections_hold_what_the_capture_says():
    events = cdckit.read(cdckit.samples.path("canal/shop"))
    page = build_report(events)
    for heading in ("Detection", "Read accounting", "Op counts per table", "Timeline", "Ordering findings",
                    "Capture lag", "Sample diffs"):
        assert f"<h2>{heading}</h2>" in page
    # op counts per table: every table's total is in the page
    counts = cdckit.ordering.table_names(events).value_counts()
    ops_html = page.split("<section id='ops'>")[1].split("</section>")[0]
    for table, count in counts.items():
        assert f"<td>{table}</td>" in ops_html and f"<td class='num'>{count}</td>" in ops_html
    assert "canal" in page.split("<section id='detection'>")[1].split("</section>")[0]
    ordering_html = page.split("<section id='ordering'>")[1].split("</section>")[0]
    assert "events compared within each source (file or topic) and dialect" in ordering_html
    # plotly.js inline, once; nothing loaded from elsewhere (plotly.js names a CDN only for geo maps)
    assert page.count("* plotly.js v") == 1
    assert not re.search(r"<(script|link|img|iframe)[^>]*(src|href)=", page)


def test_report_escapes_every_capture_value(tmp_path):
    events = cdckit.read(hostile_capture(tmp_path / "hostile.jsonl"))
    assert events.attrs["report"]["quarantined"] == 1
    page = build_report(events)
    # the only script elements are plotly's own (library + newPlot calls)
    scripts = re.findall(r"<script[^>]*>", page)
    assert set(scripts) <= {"<script>", '<script type="text/javascript">'}, set(scripts)
    assert "<img" not in page
    assert "&lt;script&gt;window.__pwned" in page  # shown as text in the tables


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


def test_report_in_headless_chromium(tmp_path):
    capture = hostile_capture(tmp_path / "hostile.jsonl")
    out = tmp_path / "report.html"
    write_report(capture, out)
    with _browser() as pw:
        browser = pw.chromium.launch(
            executable_path=CHROMIUM,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                  "--disable-sync", "--no-first-run", "--disable-quic"])
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 2000})
            problems: list[str] = []
            dialogs: list[str] = []
            requests: list[str] = []
            page.on("console", lambda m: problems.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
            page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
            page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))

            def only_the_file(route):
                requests.append(route.request.url)
                if route.request.url == out.as_uri():
                    route.continue_()
                else:
                    route.abort()

            page.route("**/*", only_the_file)
            page.goto(out.as_uri(), wait_until="load")
            page.wait_for_selector(".js-plotly-plot .main-svg", timeout=30_000)
            plots = page.eval_on_selector_all(".js-plotly-plot", "els => els.map(e => e.querySelectorAll('.main-svg').length)")
            points = page.eval_on_selector_all(".js-plotly-plot .point", "els => els.length")
            pwned = page.evaluate("window.__pwned === undefined ? null : String(window.__pwned)")
            text = page.inner_text("body")
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / "report.png"), full_page=True)
            shutil.copy(out, ARTIFACTS / "report.html")
        finally:
            browser.close()
    assert problems == []
    assert dialogs == [] and pwned is None  # the injected script and onerror handler never ran
    assert requests == [out.as_uri()]  # self-contained: nothing fetched besides the page itself
    assert len(plots) == 3 and all(n >= 1 for n in plots)  # timeline, ordering, lag all drawn
    assert points > 0
    assert SCRIPT in text and "column name is hostile" in text  # the injection shows as text
    assert (ARTIFACTS / "report.png").stat().st_size > 10_000


def test_report_figures_are_sampled_above_their_point_budget():
    events = cdckit.read(cdckit.samples.path("canal/shop"))
    assert "sampled evenly" not in build_report(events)  # 320 events: everything drawn
    page = build_report(events, max_points=100)
    assert page.count("showing 100 of 320 events (sampled evenly") == 3  # timeline, ordering and lag
