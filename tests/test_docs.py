"""The documentation site: it builds offline with no warning, its generated pages say what the code does,
and the examples of its written pages run."""

from __future__ import annotations

import doctest
import html
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from doc_snippets import python_snippets, run_snippet

import cdckit

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"


def load(name: str):
    """A module of docs/hooks/, loaded from its path (docs/ is not a package)."""
    spec = importlib.util.spec_from_file_location(f"cdckit_docs_{name}", DOCS / "hooks" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


pages = load("pages")


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The site, built as `make docs` builds it, with any network access refused."""
    out = tmp_path_factory.mktemp("site")
    refused = "http://127.0.0.1:9"  # the discard port: a fetch through it fails at once
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "HTTP_PROXY": refused, "HTTPS_PROXY": refused,
           "http_proxy": refused, "https_proxy": refused, "NO_PROXY": "", "no_proxy": ""}
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-4000:]
    assert "WARNING" not in done.stderr, done.stderr[-4000:]
    return out


def text_of(page: Path) -> str:
    """The visible text of a built page, roughly: tags dropped, entities decoded."""
    return html.unescape(re.sub(r"<[^>]+>", "", page.read_text()))


def test_the_site_has_every_page(site):
    for name in cdckit.dialects.names():
        assert (site / "dialects" / name / "index.html").exists(), name
    for notebook in pages.notebooks():
        assert (site / "notebooks" / notebook.stem / "index.html").exists(), notebook.name
    for page in ("getting-started", "reading", "replay", "tables", "views", "spark", "postgres", "cli", "frame",
                 "api", "benchmarks", "specs/wal2json"):
        assert (site / page / "index.html").exists(), page
    for built in site.rglob("*.html"):
        assert "<!-- generated:" not in built.read_text(), built


def test_the_landing_page_is_the_readme(site):
    index = (site / "index.html").read_text()
    assert 'href="getting-started/"' in index  # docs/getting-started.md in the README
    first = (ROOT / "README.md").read_text().split("\n\n")[1].split("\n")[0]
    assert first in text_of(site / "index.html")


def test_the_notebooks_show_their_stored_outputs(site):
    import json

    for notebook in pages.notebooks():
        cells = json.loads(notebook.read_text())["cells"]
        stored = [line.strip() for cell in cells for output in cell.get("outputs", [])
                  for line in output.get("text", []) if len(line.strip()) > 20]
        assert stored, notebook.name  # every notebook keeps printed output
        page = text_of(site / "notebooks" / notebook.stem / "index.html")
        assert stored[0] in page, notebook.name


def test_the_api_reference_has_every_public_name(site):
    page = text_of(site / "api" / "index.html")
    for name in cdckit.__all__:
        obj = getattr(cdckit, name)
        if callable(obj) and not isinstance(obj, type(cdckit)):
            assert f"cdckit.{name}" in page, name
    assert "cdckit.spark.materialize" in page and ">>>" in page  # the doctest examples, as code


def test_each_dialect_page_shows_its_quirks_raw_message_and_rows():
    made = pages.dialect_pages()
    for name in cdckit.dialects.names():
        dialect = cdckit.dialects.get(name)
        page = made[f"dialects/{name}.md"]
        assert page.startswith(f"# {dialect.title}"), name
        assert page.count("\n- ") >= len(dialect.quirks) > 0, name
        path = cdckit.samples.path(name)
        assert pages.first_message(path)[:200] in page, name
        events = cdckit.read(path)
        table = page[page.index("| # |"):].split("\n\n")[0].splitlines()[2:]
        assert len(table) == min(pages.ROWS, len(events)), name
        header = page[page.index("| # |"):].splitlines()[0]
        op = [c.strip() for c in re.split(r"(?<!\\)\|", header)].index("`op`")
        shown = [re.split(r"(?<!\\)\|", row)[op].strip("` ") for row in table]
        assert shown == list(events["op"].head(pages.ROWS)), name


def test_the_cli_page_is_the_parsers_help():
    from cdckit.cli.parser import build_parser

    reference = pages.cli_reference()
    for name in pages.subcommands(build_parser()):
        assert f"## `cdckit {name}`" in reference
        assert f"usage: cdckit {name}" in reference


def test_the_frame_page_lists_the_frames_columns():
    listed = re.findall(r"^\| `(\w+)` \|", pages.frame_columns(), flags=re.M)
    from cdckit.frame import COLUMN_NAMES, QUARANTINE_SCHEMA

    assert listed == COLUMN_NAMES + QUARANTINE_SCHEMA.names


@pytest.mark.parametrize("module", ["pages", "docstrings"])
def test_the_hooks_doctests(module):
    assert doctest.testmod(load(module)).failed == 0


WRITTEN = sorted(DOCS.glob("*.md"))
SNIPPETS = [(page.name, number, code) for page in WRITTEN for number, code in enumerate(python_snippets(page.read_text()))]


@pytest.mark.parametrize("page, number, code", SNIPPETS, ids=[f"{p}-{n}" for p, n, _ in SNIPPETS])
def test_docs_snippet_runs(page, number, code, capsys, tmp_path, request):
    if "cdckit.spark" in code or "cdcspark" in code:
        request.getfixturevalue("spark")  # the suite's one Spark session, which get_spark() then returns
    run_snippet(code, tmp_path, f"docs/{page} snippet {number}")
    assert capsys.readouterr().out.strip()


def test_the_getting_started_page_begins_with_a_file_of_ones_own():
    snippets = python_snippets((DOCS / "getting-started.md").read_text())
    assert all("captures/orders.jsonl" in code for code in snippets)
    steps = "\n".join(snippets)
    for call in ("cdckit.read(", "cdckit.detect(", "cdckit.materialize(", "write_events("):
        assert call in steps, call


def test_the_benchmarks_page_names_the_machine_and_commands_that_exist():
    page = (DOCS / "benchmarks.md").read_text()
    machine = page[: page.index("\n## ")]
    assert re.search(r"\b\d+ cores\b", machine) and "CPU" in machine and "pandas" in machine
    assert page.count("| ---") >= 8  # the decode and replay tables moved here
    scripts = {name: (ROOT / "benchmarks" / f"{name}.py").read_text() for name in ("decode", "replay")}
    for script, flags in re.findall(r"benchmarks/(decode|replay)\.py ([^`]*)`", page):
        for flag in re.findall(r"(--[a-z-]+)", flags):
            assert f'"{flag}"' in scripts[script], f"benchmarks/{script}.py has no {flag}"


def test_no_dialect_page_names_a_file_the_repository_lacks():
    made = pages.dialect_pages()
    for name in cdckit.dialects.names():
        page = made[f"dialects/{name}.md"]
        spec_line = next(line for line in page.splitlines() if line.startswith("**Specification:**"))
        spec_line = spec_line.replace("\\_", "_")  # Markdown escapes
        for named in re.findall(r"\b[\w./-]+\.(?:txt|md|py)\b", spec_line):
            if named.startswith(("docs/", "tests/")):
                assert (ROOT / named).exists(), (name, named)
            else:  # a bare file name: a document not in the repository, said to be so
                assert "not published with cdckit" in spec_line, (name, named)
    assert "not published with cdckit" in made["dialects/arcion.md"]


def test_no_notebook_page_loads_anything_from_outside_the_site(site):
    for notebook in pages.notebooks():
        page = (site / "notebooks" / notebook.stem / "index.html").read_text()
        outside = re.findall(r"""<(?:script|link|img)[^>]+(?:src|href)=["'](?:https?:)?//[^"']+""", page)
        assert not outside, (notebook.name, outside[:3])
        assert "html-manager" not in page and "unpkg.com" not in page, notebook.name


def test_the_notebook_pages_draw_their_figures_and_show_the_explorer_in_headless_chromium(site):
    """Every stored plotly figure is drawn on its page by the site's own plotly.js, the explorer shows as a
    picture with its note, and the pages ask nothing of the network (every request outside the site aborted
    and recorded)."""
    import json

    from test_report import _browser, launched

    figures = {notebook.stem: sum("application/vnd.plotly.v1+json" in output.get("data", {})
                                  for cell in json.loads(notebook.read_text())["cells"]
                                  for output in cell.get("outputs", []))
               for notebook in pages.notebooks()}
    assert figures["01_quickstart"] >= 1 and figures["05_before_after"] >= 1
    assert (ROOT / "docs" / pages.EXPLORER_PICTURE).exists() and (site / pages.PLOTLY_ASSET).exists()
    with _browser() as pw:
        browser = launched(pw)
        try:
            for stem in ("01_quickstart", "05_before_after"):
                assert not _page_problems(browser, site, stem, figures[stem]), stem
        finally:
            browser.close()


def _page_problems(browser, site: Path, stem: str, figures: int) -> list[str]:
    """Open a notebook's page of ``site`` in ``browser``: wait for its ``figures`` to be drawn, check the
    explorer's picture where the page has one, and return what went wrong (console errors, outside fetches)."""
    page = browser.new_page(viewport={"width": 1200, "height": 900})
    problems: list[str] = []
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: problems.append(str(e)))

    def only_the_site(route):
        if route.request.url.startswith(site.as_uri()):
            route.continue_()
        else:
            problems.append(f"fetched {route.request.url}")
            route.abort()

    page.route("**/*", only_the_site)
    page.goto((site / "notebooks" / stem / "index.html").as_uri(), wait_until="load")
    page.wait_for_function(f"document.querySelectorAll('.cdckit-figure .main-svg').length >= {figures}",
                           timeout=30_000)
    if stem == "05_before_after":
        picture = page.locator(".cdckit-widget img")
        assert picture.count() == 1
        assert picture.evaluate("img => img.complete && img.naturalWidth > 100")
        assert "live widget" in page.locator(".cdckit-widget").inner_text()
    page.close()
    return problems
