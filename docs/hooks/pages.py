"""The documentation pages made from the code: written into the build by the MkDocs hook (``docs/hooks/build.py``).

Nothing here is written to the repository: every page is made from what the code says at build time
(the dialect registry and its samples, the argparse parser, the frame's column list, ``__all__``), so the
site cannot drift from the library. ``tests/test_docs.py`` checks these pages and builds the site.

>>> "dialects/debezium.md" in dialect_pages()
True
"""

from __future__ import annotations

import argparse
import json
import os
import re
from pathlib import Path

import cdckit
from cdckit import frame
from cdckit.cli.parser import build_parser
from cdckit.io import iter_sources

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
NOTEBOOKS = ROOT / "notebooks"

#: The columns a dialect page shows of its sample's rows (the others are the same for every row of a file).
ROW_COLUMNS = ["op", "op_raw", "database", "schema", "table", "event_time", "seq", "key", "before", "after", "ddl"]
#: Rows shown per dialect page, and the longest raw message shown whole.
ROWS = 8
RAW_LIMIT = 2000
#: Width of the command-line help as it is written into the CLI page.
HELP_WIDTH = 100


def rst_to_md(text: str) -> str:
    """reST inline markup of the docstrings as Markdown: ``code`` and :role:`target` become `code`.

    >>> rst_to_md("``a`` and :func:`cdckit.read`")
    '`a` and `cdckit.read`'
    """
    text = re.sub(r":[a-z]+:`~?([^`]+)`", r"`\1`", text)
    return text.replace("``", "`")


def prose(text: str) -> str:
    r"""Plain text (a quirk, a docstring) as Markdown that shows it as written: markup characters escaped
    and ``<`` as an entity, outside `code` spans.

    >>> print(prose("__light_type and <family>_<qualifier>, `a_b`"))
    \_\_light\_type and &lt;family>\_&lt;qualifier>, `a_b`
    """
    parts = re.split(r"(`[^`]*`)", text)
    return "".join(
        part if part.startswith("`") else re.sub(r"([\\`*_\[\]#])", r"\\\1", part).replace("<", "&lt;")
        for part in parts
    )


def cell(value: object) -> str:
    """A value as the text of a Markdown table cell (pipes escaped, missing values empty).

    >>> print(cell("a|b"), cell(None), cell(float("nan")), cell(["id"]), sep=";")
    `a\\|b`;;;`["id"]`
    """
    if value is None or (isinstance(value, float) and value != value):
        return ""
    try:
        import pandas as pd

        if pd.isna(value) is True:
            return ""
    except (TypeError, ValueError):
        pass
    if isinstance(value, (list, tuple)) or type(value).__name__ == "ndarray":
        value = json.dumps(list(value))
    text = str(value).replace("\n", " ").replace("|", "\\|")
    if "`" in text:
        return f"`` {text} ``"
    return f"`{text}`" if text else ""


def table(header: list[str], rows: list[list[object]]) -> str:
    """A Markdown table; every value through :func:`cell` but the first column's, written as given.

    >>> print(table(["a", "b"], [["x", 1]]))
    | a | b |
    | --- | --- |
    | x | `1` |
    """
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join("---" for _ in header) + " |"]
    lines += ["| " + " | ".join([str(row[0])] + [cell(v) for v in row[1:]]) + " |" for row in rows]
    return "\n".join(lines)


def first_message(path: Path) -> str:
    """The first message of a sample file, as stored."""
    for _, messages in iter_sources(path):
        for message in messages:
            return str(message.raw_text())
    return ""


#: A document named by its file name alone: one the project was given with its task, not published here.
_SEED_DOCUMENT = re.compile(r"^[\w.-]+\.(?:txt|md)$")


def specification(name: str, spec: str) -> str:
    """What a dialect page says of the document the dialect follows: a public one as named, a file of this
    repository as a link, and a description the project was given (a bare file name that is nowhere in the
    repository) as what it is, with where its rules are written down here (the dialect's tests).

    >>> specification("arcion", "arcion-json-cdc.txt").startswith("the vendor's format description")
    True
    """
    if _SEED_DOCUMENT.match(spec) and not (ROOT / spec).exists() and not (DOCS / "specs" / spec).exists():
        return (
            f"the vendor's format description cdckit was built from (`{spec}`), which is not published with "
            f"cdckit; what cdckit reads of it is written down as the dialect's tests "
            f"(`tests/dialects/test_{name}.py`, the format's own examples decoded and written back) and as the "
            "quirks below"
        )
    return prose(spec)


def dialect_page(name: str) -> str:
    """The page of one dialect: what it is, its quirks, a raw message of its sample and the rows it becomes."""
    dialect = cdckit.dialects.get(name)
    path = cdckit.samples.path(name)
    doc = prose(rst_to_md((dialect.__doc__ or "").strip()))
    lines = [f"# {dialect.title} (`{name}`)", "", doc, "", f"**Specification:** {specification(name, dialect.spec)}."]
    spec_note = DOCS / "specs" / f"{name}.md"
    if spec_note.exists():
        lines += ["", f"The source notes of this dialect, field by field: [specs/{name}.md](../specs/{name}.md)."]
    samples = [n for n in cdckit.samples.list() if n.startswith(f"{name}/")]
    lines += ["", "## Quirks", ""] + [f"- {prose(quirk)}" for quirk in dialect.quirks]
    raw = first_message(path)
    shown = raw if len(raw) <= RAW_LIMIT else raw[:RAW_LIMIT] + f"\n... ({len(raw)} characters)"
    fence = "```json" if raw.lstrip()[:1] in "{[" else "```text"
    events = cdckit.read(path)
    report = events.attrs["report"]
    detection = cdckit.detect(path)
    columns = [c for c in ROW_COLUMNS if events[c].notna().any()]
    rows = [[i] + [events[c].iloc[i] for c in columns] for i in range(min(ROWS, len(events)))]
    lines += [
        "",
        "## A raw message and its rows",
        "",
        f"The first message of the bundled sample `{path.parent.name}/{path.name}` "
        f"(`cdckit.samples.path(\"{name}\")`):",
        "",
        fence,
        shown,
        "```",
        "",
        f"`cdckit.detect` says: `{detection}`.",
        "",
        f"`cdckit.read` of the whole file: {report['messages']} messages, {report['events']} events, "
        f"{report['quarantined']} quarantined. The first {len(rows)} rows (the columns that hold a value):",
        "",
        table(["#"] + [f"`{c}`" for c in columns], rows),
        "",
        "```python",
        "import cdckit",
        "",
        f'events = cdckit.read(cdckit.samples.path("{name}"))',
        f'print(events[{columns!r}].head({ROWS}))',
        "```",
        "",
        "## Samples",
        "",
        "The bundled captures of this dialect (`cdckit.samples.path(name)`): "
        + ", ".join(f"`{n}`" for n in samples) + ".",
        "",
    ]
    return "\n".join(lines)


def dialect_list() -> str:
    """The table of the registered dialects, each linked to its page."""
    rows = ["| name | title | what it is |", "| --- | --- | --- |"]
    for name in cdckit.dialects.names():
        dialect = cdckit.dialects.get(name)
        summary = prose(rst_to_md((dialect.__doc__ or "").strip().split("\n\n")[0].replace("\n", " ")))
        cells = (prose(dialect.title), summary)
        rows.append(f"| [`{name}`]({name}.md) | " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(rows)


def dialect_pages() -> dict[str, str]:
    """``dialects/<name>.md`` of every registered dialect."""
    return {f"dialects/{name}.md": dialect_page(name) for name in cdckit.dialects.names()}


def subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """The subcommand parsers of ``parser``, by name, in the order of its help."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def help_text(parser: argparse.ArgumentParser) -> str:
    """A parser's help at :data:`HELP_WIDTH` columns, whatever the terminal's width."""
    before = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = str(HELP_WIDTH)
    try:
        return parser.format_help()
    finally:
        if before is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = before


def cli_reference() -> str:
    """The help of ``cdckit`` and of each of its commands, as ``cdckit --help`` prints it."""
    parser = build_parser()
    parts = ["## `cdckit --help`", "", "```text", help_text(parser).rstrip(), "```", ""]
    for name, sub in subcommands(parser).items():
        parts += [f"## `cdckit {name}`", "", "```text", help_text(sub).rstrip(), "```", ""]
    return "\n".join(parts)


def frame_columns() -> str:
    """The canonical columns (name, Arrow type, pandas type, meaning) and the values of ``op``."""
    empty = frame.empty_events()
    rows = [[f"`{name}`", str(typ), str(empty[name].dtype), meaning] for name, typ, meaning in frame.COLUMNS]
    quarantine = [[f"`{field.name}`", str(field.type)] for field in frame.QUARANTINE_SCHEMA]
    lines = [
        "| column | Arrow type | pandas dtype | meaning |",
        "| --- | --- | --- | --- |",
        *("| " + " | ".join(row) + " |" for row in rows),
        "",
        "`op` is one of " + ", ".join(f"`{op}`" for op in frame.OPS) + ".",
        "",
        "The quarantine (`cdckit.quarantine(events)`) has these columns:",
        "",
        "| column | Arrow type |",
        "| --- | --- |",
        *("| " + " | ".join(row) + " |" for row in quarantine),
    ]
    return "\n".join(lines)


def api_block(public: str, obj: object) -> list[str]:
    """The mkdocstrings block of a public name: the object where it is defined, headed by its public name.

    >>> api_block("cdckit.read", cdckit.read)
    ['::: cdckit.reading.read.read', '    options:', '      heading: cdckit.read', '      toc_label: read', '']
    """
    where = f"{obj.__module__}.{obj.__qualname__}"  # cdckit.read is a module and a function: name the function
    return [f"::: {where}", "    options:", f"      heading: {public}", f"      toc_label: {public.rsplit('.', 1)[1]}", ""]


def api_reference() -> str:
    """mkdocstrings blocks of every public name of ``cdckit`` and of ``cdckit.spark``."""
    lines = ["## cdckit", ""]
    modules = []
    for name in cdckit.__all__:
        obj = getattr(cdckit, name)
        if isinstance(obj, type(cdckit)):
            modules.append(name)
        elif callable(obj):
            lines += api_block(f"cdckit.{name}", obj)
    lines += ["## Modules", ""]
    lines += [f"::: cdckit.{name}\n    options:\n      members: false\n" for name in modules]
    lines += ["## cdckit.spark", "", "Needs the `spark` extra (PySpark) and Java 17+.", ""]
    import ast

    spark_init = (ROOT / "cdckit" / "spark" / "__init__.py").read_text()
    names: list[str] = []
    for node in ast.parse(spark_init).body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "__all__" for t in node.targets):
            names = list(ast.literal_eval(node.value))
    lines += [f"::: cdckit.spark.{name}\n    options:\n      heading: cdckit.spark.{name}\n      toc_label: {name}\n"
              for name in names if name.upper() != name]
    return "\n".join(lines)


def landing(readme: str) -> str:
    """The README as the site's front page: links into ``docs/`` lose their ``docs/`` prefix.

    >>> landing("[a](docs/frame.md) [b](notebooks/01_quickstart.ipynb)")
    '[a](frame.md) [b](notebooks/01_quickstart.ipynb)'
    """
    return re.sub(r"\]\(docs/", "](", readme)


def pages() -> dict[str, str]:
    """Every generated page: its path under the docs folder and its Markdown."""
    made = dialect_pages()
    made["index.md"] = landing((ROOT / "README.md").read_text())
    return made


#: What a ``<!-- generated: NAME -->`` line of a written page is replaced with.
INSERTS = {"cli_reference": cli_reference, "frame_columns": frame_columns, "dialect_list": dialect_list,
           "api_reference": api_reference}


def citations(markdown: str) -> str:
    """The source notes' citation marks (``[M][C]``) as text, not reference links.

    >>> citations("dotted paths [M][C]")
    'dotted paths \\\\[M\\\\]\\\\[C\\\\]'
    """
    return re.sub(r"\[([A-Z][0-9]?)\]", r"\\[\1\\]", markdown)


def fill(markdown: str) -> str:
    """A written page with its ``<!-- generated: NAME -->`` lines replaced by the generated text.

    >>> "| `op` |" in fill("<!-- generated: frame_columns -->")
    True
    """
    return re.sub(r"^<!-- generated: (\w+) -->$", lambda m: INSERTS[m.group(1)](), markdown, flags=re.M)


def notebooks() -> list[Path]:
    """The notebooks the site renders (with their stored outputs), in reading order."""
    return sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))


# ---------------------------------------------------------------- the notebooks as the site shows them

#: Where the site serves plotly.js from: the report's own bundle (``cdckit/assets``), so a reader's browser
#: fetches nothing from elsewhere.
PLOTLY_ASSET = "assets/plotly-basic.min.js"
#: The trace types that bundle draws (plotly.js's "basic" partial bundle).
BASIC_TRACES = frozenset({"scatter", "bar", "pie"})
#: A picture of the explorer in JupyterLab, for the page of a notebook that shows one: the explorer of the
#: ``canal/shop`` sample (the capture of notebook 05) as ``tests/test_explorer_browser.py`` draws it in headless
#: Chromium; renew it by copying that test's ``out/test-artifacts/explorer-first-state-details.png``.
EXPLORER_PICTURE = "assets/explorer.png"


def plotly_bundle() -> bytes:
    """plotly.js as the site serves it (:data:`PLOTLY_ASSET`), from the bundle the report embeds."""
    import gzip

    from cdckit.viz.report_html import PLOTLY_BUNDLE

    return gzip.decompress(PLOTLY_BUNDLE.read_bytes())


def figure_html(figure: dict, ident: str, root: str) -> str:
    """A plotly figure (its ``application/vnd.plotly.v1+json`` output) as HTML that draws it with the site's
    plotly.js (``root``: the way from the page to the site's top); a figure the basic bundle cannot draw is
    said to be so. The figure's JSON is written so that no text of the capture can end the script.

    >>> html = figure_html({"data": [{"type": "bar", "x": ["</script>"], "y": [1]}], "layout": {}}, "f0", "../..")
    >>> html.count("</script>"), 'src="../../assets/plotly-basic.min.js"' in html
    (2, True)
    """
    kinds = {trace.get("type", "scatter") for trace in figure.get("data", [])}
    if not kinds <= BASIC_TRACES:
        return f"<p><i>A figure of {', '.join(sorted(kinds))} traces: run the notebook to see it.</i></p>"
    height = (figure.get("layout") or {}).get("height") or 450
    spec = json.dumps({"data": figure.get("data", []), "layout": figure.get("layout", {})}, ensure_ascii=True)
    spec = spec.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")  # no text closes the script
    return (
        f'<div id="{ident}" class="cdckit-figure" style="width:100%;height:{int(height)}px"></div>'
        f'<script src="{root}/{PLOTLY_ASSET}"></script>'
        f"<script>(function () {{ const f = {spec}; "
        f'Plotly.newPlot("{ident}", f.data, f.layout, {{displaylogo: false, responsive: true}}); }})();</script>'
    )


def widget_html(text: str, root: str) -> str:
    """What the site shows for a widget: a note that it is live in JupyterLab, its text form, and a picture."""
    import html as html_text

    return (
        '<div class="cdckit-widget">'
        f'<p><img src="{root}/{EXPLORER_PICTURE}" alt="The explorer in JupyterLab: its filters, its timeline, '
        'the list of events and the details of the one picked" style="max-width:100%;border:1px solid #ddd"></p>'
        f"<p><i>{html_text.escape(text)}.</i> The explorer is a live widget: it runs in JupyterLab "
        "(<code>make lab</code>, or Binder) with a kernel behind it, where its filters, its timeline and its "
        "list answer each other. The picture shows it there, on the same capture.</p></div>"
    )


def site_notebook(notebook: dict, root: str = "../..") -> dict:
    """A copy of ``notebook`` as the site shows it: each plotly figure drawn with the site's plotly.js
    (:func:`figure_html`), each widget as a note and a picture (:func:`widget_html`), and no saved widget
    state (for which the HTML export would load the widget manager from a CDN).

    >>> nb = {"metadata": {"widgets": {}}, "cells": [{"cell_type": "code", "outputs": [{"output_type":
    ...       "display_data", "data": {"application/vnd.plotly.v1+json": {"data": [], "layout": {}}}}]}]}
    >>> shown = site_notebook(nb)
    >>> "widgets" in shown["metadata"], list(shown["cells"][0]["outputs"][0]["data"]), "widgets" in nb["metadata"]
    (False, ['text/html'], True)
    """
    import copy

    shown = copy.deepcopy(notebook)
    shown.get("metadata", {}).pop("widgets", None)
    figures = 0
    for cell in shown.get("cells", []):
        for output in cell.get("outputs", []):
            data = output.get("data")
            if not data:
                continue
            figure = data.pop("application/vnd.plotly.v1+json", None)
            if figure is not None:
                data["text/html"] = figure_html(figure, f"cdckit-figure-{figures}", root)
                figures += 1
            if data.pop("application/vnd.jupyter.widget-view+json", None) is not None:
                text = data.pop("text/plain", "")
                data["text/html"] = widget_html("".join(text) if isinstance(text, list) else str(text), root)
    return shown
