"""One call to set up a notebook for cdckit: ``cdckit.notebook.setup()``.

It pins the plotly renderer to ``plotly_mimetype`` (JupyterLab and Binder draw
it with plotly's bundled extension; nothing is fetched from a CDN and the
saved notebook stays small), sets pandas display options that suit event
frames, makes every DataFrame an interactive table (search box, sortable
columns: itables, offline, see :mod:`cdckit.interactive`), and quiets Spark's
logging when a session is running.

>>> import plotly.io as pio
>>> from cdckit import notebook
>>> notebook.setup()
>>> pio.renderers.default
'plotly_mimetype'
"""

from __future__ import annotations

from typing import Any

import pandas as pd

__all__ = ["setup", "show", "SHOW_ROWS"]

RENDERER = "plotly_mimetype"

#: The most rows :func:`show` puts in a table (the rest are left out, and the caption says how many).
SHOW_ROWS = 10_000

_shown = 0


def setup(max_colwidth: int = 60, max_rows: int = 30, interactive: bool = True) -> None:
    """Set plotly's renderer, pandas display options and interactive tables.

    ``interactive``: in a notebook (an IPython kernel), every DataFrame and
    Series shows as an interactive table; the cell that calls ``setup()``
    then holds DataTables (about 350 KB, compressed), so the saved notebook
    shows its tables offline. Outside IPython it changes nothing. Returns
    nothing, so the cell shows only what itables displays.
    """
    import plotly.io as pio

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
    from IPython.display import HTML

    from .interactive import table_html

    global _shown
    _shown += 1
    if isinstance(frame, pd.Series):
        frame = frame.to_frame()
    if len(frame) > max_rows:
        options.setdefault("caption", f"first {max_rows:,} of {len(frame):,} rows")
        frame = frame.head(max_rows)
    return HTML(table_html(frame, f"show-{_shown}", **options))


def _in_ipython() -> bool:
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython comes with ipywidgets
        return False
    return get_ipython() is not None


def _interactive_tables() -> None:
    import itables
    import itables.options as opt

    from .interactive import TABLE_CSS, bundle_file, table_options

    for name, value in table_options(scroll=True).items():
        if name not in ("connected", "display_logo_when_loading"):
            setattr(opt, name, value)
    opt.display_logo_when_loading = False
    opt.css = TABLE_CSS
    with bundle_file() as path:
        itables.init_notebook_mode(all_interactive=True, connected=False, dt_bundle=path)


def _quiet_spark() -> None:
    try:
        from pyspark.sql import SparkSession
    except ImportError:  # pragma: no cover - pyspark is a dependency
        return
    session = SparkSession.getActiveSession()
    if session is not None:
        session.sparkContext.setLogLevel("ERROR")
