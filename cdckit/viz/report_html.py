"""The HTML pieces of the report (:mod:`cdckit.viz.report`): numbers written for reading, cells as text,
interactive tables (itables escapes every header and cell), figures drawn as SVG with their JSON escaped, and
the script that unpacks plotly.js once per page.

>>> readable(1234567), count_text(3, 2, "rows")
('1,234,567', 'the first 2 of 3 rows')
"""

from __future__ import annotations

import base64
import functools
import html
import math
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ..optional import require
from ..values import is_missing
from .interactive import UNPACK_JS, table_html

if TYPE_CHECKING:
    import plotly.graph_objects as go

__all__ = [
    "CELL_CHARS",
    "PLOTLY_BUNDLE",
    "escaped",
    "readable",
    "as_text",
    "report_table",
    "count_text",
    "guarded",
    "figure_html",
    "plotly_script",
]

#: Cell texts are cut to this many characters (a raw quarantined message may be megabytes long).
CELL_CHARS = 1_000
#: plotly.js's "basic" bundle (scatter, bar, pie), the version the plotly package draws with, gzip-compressed.
PLOTLY_BUNDLE = Path(__file__).parent.parent / "assets" / "plotly-basic.min.js.gz"

#: Columns that name a position (offsets, partitions): shown as they are, without thousands separators.
_POSITIONS = {"offset", "other_offset", "partition"}

# Draws every figure once plotly.js is unpacked (the figures' JSON sits beside their div).
_FIGURES_SCRIPT = """<script>
(async () => {
  %s
  const plotly = document.createElement("script");
  plotly.textContent = await unpack("%s");
  document.head.appendChild(plotly);
  for (const div of document.querySelectorAll("div.cdckit-figure")) {
    const figure = JSON.parse(document.getElementById(div.id + "-data").textContent);
    await Plotly.newPlot(div, figure.data, figure.layout, {displaylogo: false, responsive: true});
  }
})();
</script>"""


def escaped(value: Any) -> str:
    return html.escape("" if value is None else str(value))


def readable(value: Any) -> str:
    """A number written for reading: whole numbers with thousands separators, others to 3 significant digits.

    >>> readable(1234567), readable(0.000123456), readable(12.3456), readable(2.0), readable(98765.4)
    ('1,234,567', '0.000123', '12.3', '2', '98,765')
    >>> readable(None), readable(float("nan")), readable(-0.5), readable("text")
    ('', '', '-0.5', 'text')
    """
    if is_missing(value):
        return ""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        return str(value)
    if isinstance(value, (int, np.integer)):
        return f"{int(value):,}"
    number = float(value)
    if not math.isfinite(number):
        return str(number)
    if number == 0 or (number.is_integer() and abs(number) < 1e15):
        return f"{int(number):,}"
    digits = max(0, 2 - math.floor(math.log10(abs(number))))
    if digits > 9:
        return f"{number:.3g}"
    text = f"{number:,.{digits}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def as_text(value: Any) -> str:
    """A cell as text: missing is empty, lists joined, cut to :data:`CELL_CHARS`."""
    if isinstance(value, (list, tuple, np.ndarray)):
        value = ", ".join(str(v) for v in value)
    text = "" if is_missing(value) else str(value)
    return text if len(text) <= CELL_CHARS else text[: CELL_CHARS - 1] + "…"


def _cells(frame: pd.DataFrame, measures: bool = True) -> pd.DataFrame:
    """Every cell as display text.

    ``measures``: the numbers are the report's own counts and measures, written
    :func:`readable` (positions such as offsets as they are); otherwise they
    are capture values, written exactly as they are.
    """
    out = {}
    for column in frame.columns:
        series = frame[column]
        numeric = pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series)
        if numeric and measures and str(column) not in _POSITIONS:
            out[str(column)] = [readable(v) for v in series.tolist()]
        elif numeric and str(column) in _POSITIONS:
            out[str(column)] = ["" if is_missing(v) else str(int(v)) for v in series.tolist()]
        else:
            out[str(column)] = [as_text(v) for v in series.tolist()]
    return pd.DataFrame(out, columns=[str(c) for c in frame.columns])


def report_table(frame: pd.DataFrame, name: str, measures: bool = True, **options: Any) -> str:
    """A DataFrame as an interactive table (itables escapes every header and cell); see :func:`_cells`."""
    return table_html(_cells(frame, measures), name, **options)


def count_text(rows: int, shown: int, what: str) -> str:
    """``"12 rows"`` or ``"the first 1,000 of 2,345 rows"`` (escaped text)."""
    return f"{readable(rows)} {what}" if shown >= rows else f"the first {readable(shown)} of {readable(rows)} {what}"


def guarded(build: Callable[[], str], what: str) -> str:
    """A section's HTML, or a note naming the error: a surprise in one section never stops the report."""
    try:
        return build()
    except Exception as error:  # noqa: BLE001 - bad input is never fatal to the report
        said = f"{escaped(type(error).__name__)}: {escaped(error)}"
        return f"<p class='error'>The {escaped(what)} could not be shown: {said}</p>"


# --------------------------------------------------------------------------- figures


def _svg(fig: go.Figure) -> go.Figure:
    """The figure with WebGL traces redrawn as SVG ones (the embedded plotly.js bundle has no WebGL)."""
    if not any(trace.type == "scattergl" for trace in fig.data):
        return fig
    go = require("plotly.graph_objects", "viz", what="the report")
    data = []
    for trace in fig.data:
        if trace.type == "scattergl":
            spec = trace.to_plotly_json()
            spec.pop("type", None)
            trace = go.Scatter(spec)
        data.append(trace)
    return go.Figure(data=data, layout=fig.layout)


def figure_html(fig: go.Figure, number: int) -> str:
    """A figure as a div and its JSON (every ``<`` written ``\\u003c``, so no value can close the script)."""
    pio = require("plotly.io", "viz", what="the report")
    fig = _svg(fig)
    fig.update_traces(customdata=None)
    spec = pio.to_json(fig, validate=False).replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return (
        f"<div class='cdckit-figure' id='figure-{number}'></div>"
        f"<script type='application/json' id='figure-{number}-data'>{spec}</script>"
    )


@functools.lru_cache(maxsize=1)
def plotly_script() -> str:
    """The script that unpacks plotly.js and draws the figures (plotly.js once per page)."""
    return _FIGURES_SCRIPT % (UNPACK_JS, base64.b64encode(PLOTLY_BUNDLE.read_bytes()).decode("ascii"))
