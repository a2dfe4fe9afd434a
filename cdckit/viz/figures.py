"""Building blocks of the plotly figures: trace types, notes, time axes, hover texts as arrays.

Internal to :mod:`cdckit.viz`. Nothing here imports plotly: the figure
functions pass in ``plotly.graph_objects``, which they get with
:func:`cdckit.optional.require` (the views are the ``cdckit[viz]`` extra).

>>> import plotly.graph_objects as go
>>> scatter_class(go, 10, None).__name__, scatter_class(go, 10, True).__name__, as_strings(["a"]).dtype
('Scatter', 'Scattergl', dtype('O'))
"""

from __future__ import annotations

from types import ModuleType
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from .style import WEBGL_ABOVE

if TYPE_CHECKING:
    import plotly.graph_objects as go

__all__: list[str] = []


def naive_utc(times: pd.Series) -> pd.Series:
    """UTC timestamps without their zone (plotly draws zone-less times as given)."""
    times = pd.to_datetime(times, utc=True)
    return times.dt.tz_convert("UTC").dt.tz_localize(None)


def date_strings(times: pd.Series) -> np.ndarray:
    """Zone-less UTC times as ISO texts (µs): what plotly reads as dates, also in a FigureWidget,
    whose serializer would send a datetime64 array as integer nanoseconds."""
    return np.datetime_as_string(times.to_numpy(dtype="datetime64[us]"), unit="us")


def unique_index(events: pd.DataFrame) -> pd.DataFrame:
    """The events with a unique index (a fresh RangeIndex when the given one repeats)."""
    return events if events.index.is_unique else events.reset_index(drop=True)


def as_strings(texts: Any) -> np.ndarray:
    """Texts as a numpy object array (plotly checks arrays far faster than lists)."""
    return np.array(list(texts), dtype=object)


def scatter_class(go: ModuleType, count: int, webgl: bool | None) -> type:
    """``go.Scattergl`` above :data:`WEBGL_ABOVE` points (or when ``webgl``), else ``go.Scatter``."""
    use_gl = count > WEBGL_ABOVE if webgl is None else webgl
    return go.Scattergl if use_gl else go.Scatter


def add_notes(fig: go.Figure, notes: list[str]) -> None:
    """Add the notes (sampling, left-out events) as one annotation named ``note`` above the plot."""
    if notes:
        fig.add_annotation(
            name="note",
            text="; ".join(notes),
            xref="paper",
            yref="paper",
            x=0,
            y=1.0,
            xanchor="left",
            yanchor="bottom",
            showarrow=False,
            font={"size": 11, "color": "#555"},
        )
