"""One call to set up a notebook for cdckit: ``cdckit.notebook.setup()``; and saving notebooks small.

It pins the plotly renderer to ``plotly_mimetype`` (JupyterLab and Binder draw
it with plotly's bundled extension; nothing is fetched from a CDN and the
saved notebook stays small), sets pandas display options that suit event
frames, makes every DataFrame an interactive table (search box, sortable
columns: itables, offline, see :mod:`cdckit.viz.interactive`), and quiets Spark's
logging when a session is running. :func:`slim_widget_state` keeps a notebook
saved with its widget state (an explorer's) small.

The tables and figures are the ``cdckit[viz]`` extra: without it this module
imports, and :func:`setup` and :func:`show` raise
:class:`cdckit.optional.MissingExtraError` naming it.

>>> import plotly.io as pio
>>> from cdckit import notebook
>>> notebook.setup()
>>> pio.renderers.default
'plotly_mimetype'
"""

from __future__ import annotations

import re
from typing import Any

import pandas as pd

from .optional import require

__all__ = ["setup", "show", "slim_widget_state", "init_in_order", "SHOW_ROWS", "SAVED_CODE_LIMIT"]

RENDERER = "plotly_mimetype"

#: The most rows :func:`show` puts in a table (the rest are left out, and the caption says how many).
SHOW_ROWS = 10_000

_shown = 0

#: Widget code (an anywidget's ``_esm``) longer than this is left out of a saved notebook's widget state.
SAVED_CODE_LIMIT = 100_000

#: What a saved notebook shows instead of such a widget (plotly's FigureWidget carries all of plotly.js, 5 MB).
_UNSAVED_CODE = (
    "export default { render({ el }) { el.textContent = 'The timeline is drawn when the notebook runs "
    "(its plotly.js code, 5 MB, is not saved in the notebook).'; } };"
)


def setup(max_colwidth: int = 60, max_rows: int = 30, interactive: bool = True) -> None:
    """Set plotly's renderer, pandas display options and interactive tables.

    ``interactive``: in a notebook (an IPython kernel), every DataFrame and
    Series shows as an interactive table; the cell that calls ``setup()``
    then holds DataTables (about 350 KB, compressed), so the saved notebook
    shows its tables offline. Outside IPython it changes nothing. Returns
    nothing, so the cell shows only what itables displays.
    """
    pio = require("plotly.io", "viz", what="cdckit.notebook.setup")
    pio.renderers.default = RENDERER
    pd.set_option("display.max_colwidth", max_colwidth)
    pd.set_option("display.max_rows", max_rows)
    pd.set_option("display.max_columns", 40)
    pd.set_option("display.width", 160)
    if interactive and _in_ipython():
        _interactive_tables()
    _quiet_spark()


def show(frame: pd.DataFrame | pd.Series, max_rows: int = SHOW_ROWS, **options: Any) -> Any:
    """``frame`` as an interactive table in a notebook, every row up to ``max_rows`` (no downsampling).

    Tables get ids numbered in the order they are shown, so a re-run
    notebook shows the same outputs. ``options``: itables options (such as
    ``pageLength=25`` or ``caption="..."``). Needs :func:`setup` once
    before, in the same notebook (it loads DataTables).

    >>> import cdckit
    >>> table = show(cdckit.samples.load("canal/shop"), max_rows=5)
    >>> "first 5 of 320 rows" in table.data, "new ITable" in table.data
    (True, True)
    """
    from .viz.interactive import table_html

    display = require("IPython.display", "viz", what="cdckit.notebook.show")  # IPython comes with ipywidgets

    global _shown
    _shown += 1
    if isinstance(frame, pd.Series):
        frame = frame.to_frame()
    if len(frame) > max_rows:
        options.setdefault("caption", f"first {max_rows:,} of {len(frame):,} rows")
        frame = frame.head(max_rows)
    return display.HTML(table_html(frame, f"show-{_shown}", **options))


def _in_ipython() -> bool:
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython comes with ipywidgets
        return False
    return get_ipython() is not None


def _interactive_tables() -> None:
    from .viz.interactive import TABLE_CSS, bundle_file, table_options

    itables = require("itables", "viz", what="cdckit.notebook.setup")
    opt: Any = require("itables.options", "viz", what="cdckit.notebook.setup")  # settings it reads, set here
    capture = require("IPython.utils.capture", "viz", what="cdckit.notebook.setup")
    display = require("IPython.display", "viz", what="cdckit.notebook.setup")

    for name, value in table_options(scroll=True).items():
        if name not in ("connected", "display_logo_when_loading"):
            setattr(opt, name, value)
    opt.display_logo_when_loading = False
    opt.css = TABLE_CSS
    with bundle_file() as path, capture.capture_output(stdout=False, stderr=False) as shown:
        itables.init_notebook_mode(all_interactive=True, connected=False, dt_bundle=path)
    display.display(display.HTML(init_in_order([out.data.get("text/html", "") for out in shown.outputs])))
    pd.DataFrame._repr_html_ = _table_html
    pd.Series._repr_html_ = _table_html


# A script that assigns window._itables_<version> (the DataTables module, offline) defines it; the others await it.
_DEFINES = re.compile(r"window\._itables_\w+\s*=(?!=)")


def init_in_order(parts: list[str]) -> str:
    """itables' notebook init outputs as one HTML: the script that defines its module before those that use it.

    itables 2.9 shows, offline, first a script that awaits
    ``window._itables_<version>`` (to follow a dark theme) and then the one
    that defines it, so the first fails (``Cannot destructure property
    'set_or_remove_dark_class'``). What only shows where scripts do not run
    (:func:`cdckit.viz.interactive.without_script_notes`) is left out.

    >>> init_in_order(["<script>await window._itables_2;</script>", "<script>window._itables_2 = f();</script>"])
    '<script>window._itables_2 = f();</script>\\n<script>await window._itables_2;</script>'
    """
    from .viz.interactive import without_script_notes

    ordered = sorted(parts, key=lambda part: not _DEFINES.search(part))
    return without_script_notes("\n".join(part.strip() for part in ordered))


def _table_html(frame: pd.DataFrame | pd.Series) -> str:
    """A DataFrame's or Series' notebook HTML after :func:`setup`: itables' table, without the notes for readers
    whose browser runs no script."""
    from .viz.interactive import without_script_notes

    itables = require("itables", "viz", what="cdckit.notebook.setup")
    return without_script_notes(itables.to_html_datatable(frame, connected=False, showIndex=shows_index(frame)))


def shows_index(frame: pd.DataFrame | pd.Series) -> bool:
    """Whether a table shows the index of ``frame``: unless it is unnamed and its labels are 0, 1, ... n-1.

    The labels decide, not the index's type: pandas 3 keeps a ``RangeIndex`` where pandas 2 makes an
    ``Index`` of the same labels (rows 3 to 5 of a filter, say), and the table must not depend on it.

    >>> df = pd.DataFrame({"a": range(6)})
    >>> shows_index(df), shows_index(df[df["a"] >= 3]), shows_index(df[df["a"] < 3]), shows_index(df.set_index("a"))
    (False, True, False, True)
    """
    index = frame.index
    return index.nlevels > 1 or index.name is not None or not index.equals(pd.RangeIndex(len(index)))


def _quiet_spark() -> None:
    try:
        from pyspark.sql import SparkSession
    except ImportError:  # pragma: no cover - pyspark is the cdckit[spark] extra
        return
    session = SparkSession.getActiveSession()
    if session is not None:
        session.sparkContext.setLogLevel("ERROR")


def slim_widget_state(notebook: dict[str, Any]) -> dict[str, Any]:
    """A notebook (its nbformat JSON as a dict) whose saved widget state leaves out widget code too big to keep.

    ``jupyter nbconvert --execute --ExecutePreprocessor.store_widget_state=True``
    saves every widget's state in the notebook's metadata, so a front end
    shows the explorer as it was, without a kernel. An explorer's timeline is
    a plotly ``FigureWidget`` (an anywidget), whose state holds its own
    JavaScript: 5 MB of plotly.js. Code longer than
    :data:`SAVED_CODE_LIMIT` is replaced by a module that says the timeline
    is drawn when the notebook runs (and the figure's data, which only that
    code draws, is dropped); every other widget keeps its saved state.

    >>> big = {"model_module": "anywidget", "state": {"_esm": "x" * SAVED_CODE_LIMIT * 2, "_widget_data": [1]}}
    >>> nb = {"metadata": {"widgets": {"application/vnd.jupyter.widget-state+json": {"state": {"m": big}}}}}
    >>> slim = slim_widget_state(nb)["metadata"]["widgets"]["application/vnd.jupyter.widget-state+json"]
    >>> "notebook runs" in slim["state"]["m"]["state"]["_esm"], slim["state"]["m"]["state"]["_widget_data"]
    (True, [])
    """
    saved = notebook.get("metadata", {}).get("widgets", {}).get("application/vnd.jupyter.widget-state+json", {})
    for model in saved.get("state", {}).values():
        state = model.get("state", {})
        code = state.get("_esm")
        if isinstance(code, str) and len(code) > SAVED_CODE_LIMIT:
            state["_esm"] = _UNSAVED_CODE
            if "_widget_data" in state:
                state["_widget_data"] = []
    return notebook
