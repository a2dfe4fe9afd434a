"""Interactive tables (search box, sortable columns, pages) for notebooks and the HTML report, offline.

The tables are itables (DataTables) tables: :func:`table_html` renders a
DataFrame as one, :func:`init_html` is the script that loads DataTables once
per page. Nothing is fetched from a CDN: the DataTables bundle that ships
inside the itables package is embedded, gzip-compressed (about 260 KB of
text instead of itables' own 950 KB), and unpacked in the browser with
``DecompressionStream`` (Chrome 80, Firefox 113, Safari 16.4 and later).
itables is the ``cdckit[viz]`` extra; it is imported when a table is made.

Escaping: itables escapes every header and cell (``allow_html`` stays
off), so a value ``<script>alert(1)</script>`` shows as text. Long values
are cut by the page's style with an ellipsis; the whole value is the cell's
``title`` (its tooltip), set through the DOM, never written as markup.

>>> import pandas as pd
>>> html = table_html(pd.DataFrame({"name": ["<b>x</b>"]}), "names")
>>> "&lt;b&gt;x&lt;/b&gt;" in html, "<b>x</b>" in html, 'id="cdckit-names"' in html
(True, False, True)
"""

from __future__ import annotations

import base64
import contextlib
import functools
import gzip
import re
import tempfile
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd

from ..optional import require

__all__ = [
    "TABLE_CLASS",
    "TABLE_CSS",
    "UNPACK_JS",
    "bundle",
    "bundle_file",
    "init_html",
    "table_html",
    "table_id",
    "table_options",
    "without_script_notes",
]

#: The class of every interactive table cdckit makes (the style below keys on it).
TABLE_CLASS = "cdckit-table"

#: Cells wider than this are cut with an ellipsis (the whole value is the cell's tooltip).
TABLE_CSS = (
    f"table.{TABLE_CLASS} td {{ max-width: 28em; overflow: hidden; text-overflow: ellipsis; }}"
    f" table.{TABLE_CLASS} td.dt-type-numeric {{ font-variant-numeric: tabular-nums; }}"
)

# The tooltip of a long cell: its text, set as a DOM property (never parsed as HTML).
_TOOLTIP = "function (td) { if (td.textContent.length > 24) { td.title = td.textContent; } }"

#: A JavaScript function ``unpack(b64)``: the text of gzip-compressed, base64-encoded bytes (the page's own code).
UNPACK_JS = """const unpack = async (b64) => {
  const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
  return await new Response(stream).text();
};"""

# An ES module that unpacks the gzip-compressed DataTables bundle, adds its style to the page and offers
# the bundle's exports (itables' loader imports this module as the bundle itself).
_STUB = """// DataTables for itables {version}, gzip-compressed and base64-encoded by cdckit
// (cdckit/viz/interactive.py).
{unpack}
const style = document.createElement("style");
style.textContent = await unpack("{css}");
document.head.appendChild(style);
const url = URL.createObjectURL(new Blob([await unpack("{js}")], {{ type: "text/javascript" }}));
const bundle = await import(url);
URL.revokeObjectURL(url);
export const {{ {names} }} = bundle;
export default bundle.default;
"""


# itables' notes for a browser that runs no script: ``<noscript>`` text ("is your notebook trusted?"), and the
# marker of a table's static preview in its first header cell (a lock in a <noscript>, a linked circled i).
_NOSCRIPT = re.compile(r"<noscript>.*?</noscript>", flags=re.S | re.I)
_PREVIEW_MARKER = re.compile(
    r"<sup>(?:<noscript>.*?</noscript>)?<a\b[^>]*static preview[^>]*>.*?</a></sup>", flags=re.S | re.I
)


def without_script_notes(html: str) -> str:
    """``html`` (itables' output) without the notes itables writes for a browser that runs no script.

    A saved notebook is untrusted wherever it is opened (nothing can mark a
    shipped notebook as trusted): JupyterLab strips its scripts and shows
    ``<noscript>`` content as text, so itables' "is your notebook
    *trusted*?" line and the lock and circled-i glyphs (no font of a bare
    system draws the lock) would greet every reader. Without them, the setup
    cell shows nothing and a table shows its static preview: its first rows,
    plain. With scripts, the tables are interactive as before.

    >>> html = '<th><sup><noscript><span>L</span></noscript><a href=x title="v2 static preview">i</a></sup>op</th>'
    >>> without_script_notes(html + "<noscript>trusted?</noscript>")
    '<th>op</th>'
    """
    return _NOSCRIPT.sub("", _PREVIEW_MARKER.sub("", html))


def _gzip64(text: str) -> str:
    return base64.b64encode(gzip.compress(text.encode("utf-8"), compresslevel=9, mtime=0)).decode("ascii")


@functools.cache
def bundle() -> str:
    """The compact offline DataTables bundle: an ES module offering what itables' own bundle offers.

    >>> text = bundle()
    >>> "DecompressionStream" in text, "export const { DateTime, ITable, jQuery" in text
    (True, True)
    """
    itables = require("itables", "viz", what="cdckit's interactive tables")
    opt = require("itables.options", "viz", what="cdckit's interactive tables")

    source = Path(opt.dt_bundle)
    js = source.read_text(encoding="utf-8")
    found = re.search(r"export\s*\{([^}]*)\}\s*;?\s*(/\*.*)?$", js, flags=re.S)
    names = [part.split(" as ")[-1].strip() for part in (found.group(1).split(",") if found else [])]
    names = [name for name in names if name and name != "default"]
    return _STUB.format(
        unpack=UNPACK_JS,
        version=itables.__version__,
        names=", ".join(names),
        js=_gzip64(js),
        css=_gzip64(source.with_suffix(".css").read_text(encoding="utf-8")),
    )


@contextlib.contextmanager
def bundle_file() -> Iterator[Path]:
    """:func:`bundle` as a ``dt_bundle.js`` file (beside an empty ``.css``) in a fresh temporary folder, removed after.

    For itables' ``dt_bundle=`` options, which read the file at once.

    >>> with bundle_file() as path:
    ...     path.name, path.with_suffix(".css").exists()
    ('dt_bundle.js', True)
    """
    with tempfile.TemporaryDirectory(prefix="cdckit-itables-") as folder:
        target = Path(folder) / "dt_bundle.js"
        target.write_text(bundle(), encoding="utf-8")
        target.with_suffix(".css").write_text("/* the style is in dt_bundle.js */\n", encoding="utf-8")
        yield target


def init_html() -> str:
    """The HTML that loads DataTables once in a page (before or after the tables: they wait for it).

    Nothing in it shows where scripts do not run (:func:`without_script_notes`).

    >>> html = init_html()
    >>> html.count("<script"), "https://" in html, "trusted" in html
    (1, False, False)
    """
    javascript = require("itables.javascript", "viz", what="cdckit's interactive tables")
    with bundle_file() as path:
        return without_script_notes(javascript.generate_init_offline_itables_html(path))


def table_options(scroll: bool = True) -> dict[str, Any]:
    """The itables options of cdckit's tables: compact, offline, long cells cut with a tooltip.

    ``scroll``: wide tables scroll inside their box (``scrollX``) rather
    than widen the page.

    >>> sorted(table_options())[:3]
    ['classes', 'columnDefs', 'connected']
    """
    itables = require("itables", "viz", what="cdckit's interactive tables")
    options: dict[str, Any] = {
        "connected": False,
        "display_logo_when_loading": False,
        "classes": f"display nowrap compact {TABLE_CLASS}",
        "columnDefs": [{"targets": "_all", "createdCell": itables.JavascriptFunction(_TOOLTIP)}],
        "lengthMenu": [10, 25, 100, 1000],
        "style": "table-layout:auto;width:auto;margin:0;caption-side:bottom",
        "text_in_header_can_be_selected": False,  # a click on a header sorts by that column
    }
    if scroll:
        options["scrollX"] = True
    return options


def table_id(name: str) -> str:
    """A valid, stable HTML id for a table named ``name`` (itables wants a letter first, no spaces).

    >>> table_id("state shop.customers"), table_id("3 <x>")
    ('cdckit-state-shop-customers', 'cdckit-3-x')
    """
    return "cdckit-" + (re.sub(r"[^A-Za-z0-9_]+", "-", name).strip("-") or "table")


def table_html(frame: pd.DataFrame, name: str, **options: Any) -> str:
    """``frame`` as an interactive table with the id :func:`table_id` of ``name`` (needs :func:`init_html` in the page).

    Every row is sent (no downsampling: cap the frame first); ``options``
    are itables options added to :func:`table_options`.

    >>> html = table_html(pd.DataFrame({"a": [1, 2]}), "small")
    >>> 'id="cdckit-small"' in html, "new ITable" in html
    (True, True)
    """
    itables = require("itables", "viz", what="cdckit's interactive tables")
    frame = frame.reset_index(drop=True)
    frame.columns = [str(c) for c in frame.columns]
    with warnings.catch_warnings():
        # itables 2 sizes the frame through Series.values, which pandas 3.1 deprecates for a column of zoned
        # times (it drops the zone); the size only decides downsampling, which maxBytes=0 turns off. (pandas
        # names its own module as the warning's, so the filter is by message, for this call only.)
        warnings.filterwarnings("ignore", message="Series.values returning an ndarray that drops timezone")
        html = itables.to_html_datatable(
            frame, table_id=table_id(name), maxBytes=0, showIndex=False, **{**table_options(), **options}
        )
    return without_script_notes(html)
