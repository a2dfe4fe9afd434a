"""One call to set up a notebook for cdckit: ``cdckit.notebook.setup()``.

It pins the plotly renderer to ``plotly_mimetype`` (JupyterLab and Binder draw
it with plotly's bundled extension; nothing is fetched from a CDN and the
saved notebook stays small), sets pandas display options that suit event
frames, and quiets Spark's logging when a session is running.

>>> import plotly.io as pio
>>> from cdckit import notebook
>>> notebook.setup()
>>> pio.renderers.default
'plotly_mimetype'
"""

from __future__ import annotations

import pandas as pd

__all__ = ["setup"]

RENDERER = "plotly_mimetype"


def setup(max_colwidth: int = 60, max_rows: int = 30) -> None:
    """Set plotly's renderer and pandas display options (returns nothing, so a cell shows nothing)."""
    import plotly.io as pio

    pio.renderers.default = RENDERER
    pd.set_option("display.max_colwidth", max_colwidth)
    pd.set_option("display.max_rows", max_rows)
    pd.set_option("display.max_columns", 40)
    pd.set_option("display.width", 160)
    _quiet_spark()


def _quiet_spark() -> None:
    try:
        from pyspark.sql import SparkSession
    except ImportError:  # pragma: no cover - pyspark is a dependency
        return
    session = SparkSession.getActiveSession()
    if session is not None:
        session.sparkContext.setLogLevel("ERROR")
