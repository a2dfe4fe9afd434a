"""The explorer in a real headless Chromium, in a real JupyterLab with a running kernel.

Why JupyterLab and not a static page: ``ipywidgets.embed`` writes the widget
state into a page, but the page then needs the widget manager's JavaScript
(``@jupyter-widgets/html-manager``), which it loads from a CDN. No installed
package ships that bundle (``widgetsnbextension`` holds the classic
notebook's extension, ``jupyterlab_widgets`` a JupyterLab module that needs
JupyterLab around it), and the tests use no network. JupyterLab itself is
installed with the widget, anywidget and plotly extensions and serves all of
it, so the test starts ``jupyter lab`` on a free local port, opens a
notebook that shows two explorers, runs it, and drives the widgets as a user
would: typing in the key box, clicking a point, picking in the list.

Like the report's browser test, it needs Debian's ``chromium``
(``/usr/bin/chromium``) and playwright (the Python package, no browser
download); without Chromium it is skipped locally and fails in CI
(``CDCKIT_REQUIRE_BROWSER=1``). Screenshots go to ``out/test-artifacts/``.
"""

from __future__ import annotations

import json
import os
import secrets
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from test_report import ARTIFACTS, CHROMIUM, ROOT, SCRIPT, _browser, hostile_capture, launched

import cdckit

TOKEN = secrets.token_hex(16)
WIDTH = 1400


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _notebook(folder: Path, hostile: Path) -> Path:
    """A notebook with two explorers: the Canal shop sample, and a capture whose values are HTML injections."""
    cells = [
        "import cdckit\nshop = cdckit.explore(cdckit.samples.load('canal/shop'))\nshop",
        f"hostile = cdckit.explore(cdckit.read({str(hostile)!r}))\nhostile",
    ]
    notebook = {"cells": [{"cell_type": "code", "metadata": {}, "source": c, "outputs": [], "execution_count": None}
                          for c in cells],
                "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
                "nbformat": 4, "nbformat_minor": 5}
    path = folder / "explore.ipynb"
    path.write_text(json.dumps(notebook), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """A JupyterLab server on a free local port, its settings in a temporary folder; yields its base URL."""
    if not Path(CHROMIUM).exists():
        _browser()  # skips, or fails in CI
    folder = tmp_path_factory.mktemp("lab")
    _notebook(folder, hostile_capture(folder / "hostile.jsonl"))
    home = folder / ".home"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
               IPYTHONDIR=str(ROOT / "tests" / "ipython"), JUPYTER_CONFIG_DIR=str(home / "config"),
               JUPYTER_RUNTIME_DIR=str(home / "runtime"), JUPYTERLAB_SETTINGS_DIR=str(home / "settings"),
               JUPYTERLAB_WORKSPACES_DIR=str(home / "workspaces"))
    news = home / "settings" / "@jupyterlab" / "apputils-extension" / "notification.jupyterlab-settings"
    news.parent.mkdir(parents=True)
    news.write_text('{"fetchNews": "false"}', encoding="utf-8")  # no "get Jupyter news?" prompt over the widgets
    port = _free_port()
    log = open(folder / "lab.log", "wb")
    server = subprocess.Popen(
        [sys.executable, "-m", "jupyterlab", "--no-browser", "--allow-root", f"--port={port}", "--ip=127.0.0.1",
         "--LabApp.extension_manager=readonly",
         f"--ServerApp.root_dir={folder}", f"--IdentityProvider.token={TOKEN}", "--LabApp.news_url=None",
         "--LabApp.expose_app_in_browser=True", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"],
        cwd=folder, env=env, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                urllib.request.urlopen(f"{base}/api/status?token={TOKEN}", timeout=5).read()
                break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"jupyter lab did not start: {(folder / 'lab.log').read_text(errors='replace')}")
                time.sleep(0.5)
        yield base
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
        log.close()


class Page:
    """The lab page and what it saw: errors, dialogs and requests that left the server."""

    def __init__(self, browser, base: str) -> None:
        self.page = browser.new_page(viewport={"width": WIDTH, "height": 1600})
        self.errors: list[str] = []
        self.dialogs: list[str] = []
        self.outside: list[str] = []
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("dialog", lambda d: (self.dialogs.append(d.message), d.dismiss()))

        def local_only(route):
            if route.request.url.startswith(base):
                route.continue_()
            else:
                self.outside.append(route.request.url)
                route.abort()

        self.page.route("**/*", local_only)

    def explorer(self, number: int):
        """The ``number``-th explorer (0 or 1) on the page, once its timeline is drawn."""
        box = self.page.locator(".jp-OutputArea-output .widget-vbox").nth(number)
        box.locator(".js-plotly-plot .main-svg").first.wait_for(timeout=120_000)
        return box

    def shot(self, name: str, part=None) -> None:
        """A screenshot of the page, and of ``part`` (a locator) when given."""
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        self.page.screenshot(path=str(ARTIFACTS / f"explorer-{name}.png"))
        if part is not None:
            part.scroll_into_view_if_needed()
            part.screenshot(path=str(ARTIFACTS / f"explorer-{name}-details.png"))


def status(box) -> str:
    return box.locator(".widget-html").nth(0).inner_text()


def details(box):
    return box.locator(".widget-hbox").last.locator(".widget-html")


def event_list(box):
    return box.locator(".widget-hbox").last.locator("select")


def labels(box) -> list[str]:
    """The event list's labels (ipywidgets writes their spaces as no-break spaces)."""
    return [label.replace("\xa0", " ") for label in event_list(box).locator("option").all_inner_texts()]


def wait_for(condition, what: str, timeout: float = 60, seen=None) -> None:
    """Poll ``condition`` (the kernel answers asynchronously) until it holds; ``seen``: what the failure shows."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}" + (f"; the page shows {seen()!r}" if seen else ""))
        time.sleep(0.2)


def shown_event(box) -> dict[str, str]:
    """The fields the details pane shows for its event (its little op/table/key/time table)."""
    rows = details(box).locator("table.cdckit-event tr")
    return {rows.nth(i).locator("th").inner_text(): rows.nth(i).locator("td").inner_text()
            for i in range(rows.count())}


def listed_event(box) -> str:
    """The label of the event the list highlights ('' when none)."""
    chosen = event_list(box).locator("option:checked")
    return chosen.first.inner_text().replace("\xa0", " ") if chosen.count() else ""


def agree(box) -> bool:
    """The list highlights the event the details show: same time, op and key."""
    fields, label = shown_event(box), listed_event(box)
    if not fields or not label:
        return False
    when, op, _, key = (label.split("  ") + ["", "", "", ""])[:4]
    return op == fields["op"] and key == fields.get("key", "") and fields["event_time"].startswith(when)


def test_explorer_in_jupyterlab_in_headless_chromium(lab):
    events = cdckit.samples.load("canal/shop")
    with _browser() as pw:
        browser = launched(pw)
        try:
            lab_page = Page(browser, lab)
            page = lab_page.page
            page.goto(f"{lab}/lab/tree/explore.ipynb?token={TOKEN}", wait_until="load", timeout=120_000)
            page.wait_for_function("window.jupyterapp && window.jupyterapp.shell.currentWidget"
                                   " && window.jupyterapp.shell.currentWidget.sessionContext", timeout=120_000)
            page.evaluate("async () => { await window.jupyterapp.shell.currentWidget.sessionContext.ready;"
                          " await window.jupyterapp.commands.execute('notebook:run-all-cells'); }")
            shop = lab_page.explorer(0)
            hostile = lab_page.explorer(1)
            assert status(shop) == "320 of 320 events shown"
            chosen_table = shop.locator(".widget-dropdown select").first.evaluate(
                "s => s.selectedIndex < 0 ? '' : s.options[s.selectedIndex].text.replace(/\\u00a0/g, ' ')")
            assert chosen_table == "all tables"  # a None value showed a blank box
            lab_page.shot("first-state", shop)  # the explorer alone: docs/assets/explorer.png is one

            # the key box: exact key values, as you type
            key_box = shop.locator(".widget-text input").first
            key_box.press_sequentially("3")
            threes = int((events["key"] == "[3]").sum())
            wait_for(lambda: status(shop) == f"{threes} of 320 events shown", "the key filter")
            assert len(labels(shop)) == threes and all(label.endswith("  [3]") for label in labels(shop))

            # nothing matches: it says so, and the details are empty
            key_box.press_sequentially("9999")
            wait_for(lambda: "no event matches the filters" in status(shop), "the empty filter")
            assert "no event matches the filters" in details(shop).inner_text()
            assert labels(shop) == []
            lab_page.shot("nothing-matches")
            key_box.fill("")
            wait_for(lambda: status(shop) == "320 of 320 events shown", "the cleared filter")

            def y_ticks() -> list:
                return shop.locator(".js-plotly-plot .ytick text").evaluate_all(
                    "ts => ts.map(t => [t.getBoundingClientRect().top, t.textContent])")

            # each keystroke above redrew the figure: plotly has drawn the last (lanes per table) before the next
            wait_for(lambda: (ticks := y_ticks()) and all(text.startswith("shop.") for _, text in ticks),
                     "the figure's lanes per table", seen=y_ticks)

            # a click on a point: the details and the list name the same event, and the history fits its pane
            shop.locator(".widget-dropdown select").first.select_option(label="shop.customers")
            wait_for(lambda: "of 320 events shown" in status(shop) and status(shop) != "320 of 320 events shown",
                     "the table filter")
            # the status is written before plotly has redrawn the figure: wait for its key lanes ("[3]")
            wait_for(lambda: (ticks := y_ticks()) and all(text.startswith("[") for _, text in ticks),
                     "the figure's lanes per key", seen=y_ticks)
            lanes = [int(text.strip("[]")) for _, text in sorted(y_ticks())]
            assert len(lanes) > 3 and lanes == sorted(lanes) and lanes[0] == 1  # swimlanes in key order, from the top
            update = shop.locator(".js-plotly-plot .scatterlayer .trace").nth(1).locator(".point").nth(3)
            update.scroll_into_view_if_needed()
            box = update.bounding_box()
            page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
            page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
            wait_for(lambda: "history of" in details(shop).inner_text() and agree(shop), "the click to show an event")
            assert shown_event(shop)["op"] == "update"
            dimmed = shop.locator(".js-plotly-plot .scatterlayer .point").evaluate_all(
                "points => points.filter(p => parseFloat(getComputedStyle(p).opacity) < 1).length")
            points = shop.locator(".js-plotly-plot .scatterlayer .point").count()
            assert dimmed == points - 1  # the clicked point alone stands out
            pane = details(shop).evaluate("e => { const r = e.getBoundingClientRect(); return [r.left, r.right]; }")
            history = shop.locator(".cdckit-history").evaluate(
                "e => { const r = e.getBoundingClientRect(); return [r.left, r.right, e.scrollWidth, e.clientWidth]; }")
            assert pane[0] <= history[0] and history[1] <= pane[1] + 1  # the history box stays inside its pane
            explorer_right = shop.evaluate("e => e.getBoundingClientRect().right")
            assert pane[1] <= explorer_right + 1 <= WIDTH + 1
            assert shop.evaluate("e => e.scrollWidth <= e.clientWidth + 1")  # nothing spills out of the explorer
            lab_page.shot("clicked", details(shop))

            # a pick in the list: the details follow
            pick = next(label for label in labels(shop)[5:] if "  update  " in label)
            event_list(shop).select_option(label=pick.replace(" ", "\xa0"))
            wait_for(lambda: listed_event(shop) == pick and agree(shop), "the list to show an event")

            # capture values are text: the injected script shows as itself and never runs
            hostile.scroll_into_view_if_needed()
            pick = next(label for label in labels(hostile) if "  update  " in label)
            event_list(hostile).select_option(label=pick.replace(" ", "\xa0"))
            wait_for(lambda: agree(hostile), "the hostile event")
            assert SCRIPT[:30] in details(hostile).inner_text()  # shown as text (cut to the diff's width)
            assert details(hostile).locator("script").count() == 0 and details(hostile).locator("img").count() == 0
            pwned = page.evaluate("window.__pwned === undefined ? null : String(window.__pwned)")
            lab_page.shot("hostile", details(hostile))
        finally:
            browser.close()
    assert lab_page.dialogs == [] and pwned is None
    assert lab_page.errors == []
    assert lab_page.outside == []  # everything came from the local server
    assert (ARTIFACTS / "explorer-clicked.png").stat().st_size > 10_000
