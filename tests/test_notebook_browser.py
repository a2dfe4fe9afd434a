"""``cdckit.notebook.setup()``'s outputs in a real headless Chromium, shown one by one as JupyterLab shows them.

JupyterLab puts each display output in the page as it arrives and runs its
scripts then (``evalInnerHTMLScriptTags``), so an output whose script uses
what a later output defines fails. The page below does the same with
setup()'s outputs and a DataFrame's, a pause between each, and no network;
any console error fails the test (itables 2.9's own order logged "Cannot
destructure property 'set_or_remove_dark_class'"). Needs Debian's
``chromium`` and playwright, like the report's browser test (skipped
without it, except in CI: ``CDCKIT_REQUIRE_BROWSER=1``).
"""

from __future__ import annotations

import json

import pandas as pd
from test_interactive import ipython  # noqa: F401 - the fixture
from test_report import ARTIFACTS, _browser, launched

from cdckit import notebook

# What JupyterLab does with an HTML output: set it as innerHTML, then run each script (a fresh <script> copy).
SHOW = """async (outputs) => {
  for (const html of outputs) {
    const box = document.createElement("div");
    box.innerHTML = html;
    document.body.appendChild(box);
    for (const old of box.querySelectorAll("script")) {
      const script = document.createElement("script");
      for (const attr of old.attributes) script.setAttribute(attr.name, attr.value);
      script.textContent = old.textContent;
      old.replaceWith(script);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}"""


def test_setup_outputs_run_without_error_in_headless_chromium(ipython, tmp_path):  # noqa: F811
    from IPython.utils.capture import capture_output

    with capture_output() as shown:
        notebook.setup()
    frame = pd.DataFrame({"offset": [1, 2], "op": ["insert", "update"]})
    outputs = [out.data["text/html"] for out in shown.outputs] + [frame._repr_html_()]
    page_file = tmp_path / "outputs.html"
    page_file.write_text("<!doctype html><html><head><meta charset='utf-8'></head><body></body></html>", encoding="utf-8")
    with _browser() as pw:
        browser = launched(pw)
        try:
            page = browser.new_page(viewport={"width": 900, "height": 500})
            problems: list[str] = []
            page.on("console", lambda m: problems.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
            page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
            page.route("**/*", lambda route: route.continue_() if route.request.url == page_file.as_uri() else route.abort())
            page.goto(page_file.as_uri(), wait_until="load")
            page.evaluate(SHOW, outputs)
            page.wait_for_selector("table.dataTable", timeout=30_000)
            page.wait_for_timeout(500)
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / "notebook-setup.png"))
            headers = page.eval_on_selector_all("table.dataTable thead th", "ths => ths.map(th => th.textContent)")
            assert problems == [], json.dumps(problems, indent=1)
            assert "offset" in headers and "op" in headers
        finally:
            browser.close()
