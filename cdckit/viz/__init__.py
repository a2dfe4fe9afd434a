"""Views of a capture: a timeline of events, before/after diffs, capture lag and arrival order.

>>> import cdckit
>>> from cdckit import viz
>>> events = cdckit.samples.load("canal/shop")
>>> print(viz.describe(viz.timeline(events)))
title: Events over time per table
x: event_time (UTC)
y: table
insert: 141 points
update: 149 points
delete: 30 points

The figures are plain ``plotly.graph_objects`` figures built with
``go.Scatter`` (``go.Scattergl`` above :data:`WEBGL_ABOVE` points, as plotly
express does); every trace keeps the index label of each event in
``customdata`` (its position instead when the frame's index repeats), which
the explorer (:mod:`cdckit.viz.explorer`) uses to find the event a click points at.

Escaping: every value that comes from a capture (table names, keys, column
names and values, DDL text, source paths) is passed through
:func:`html.escape` before it reaches hover text, trace names, titles or tick
labels, and the diff's HTML (quotes are left alone outside attributes: plotly
shows ``&quot;`` as written). Plotly shows ``&lt;`` as ``<``, so a value
``<script>alert(1)</script>`` reads as itself and never runs. The diff's plain
text form shows values as they are, with control characters (terminal escape
sequences, new lines) written as ``\\x1b``, ``\\n``.

Big captures (:mod:`cdckit.viz.sampling`): above ``max_points`` (default :data:`MAX_POINTS`) the figures
show a deterministic sample. Each group of points (a table and op for the
timeline, a table for the lag and ordering views) gets a fair share of the
budget: groups smaller than their share are kept whole, so rare ops (DDL,
heartbeats, transaction markers) and small tables are never thinned, and the
larger groups are sampled evenly in time (or arrival) order. The figure then
says so in an annotation, e.g. ``showing 50,000 of 1,200,000 events (sampled
evenly per table and op; small groups kept whole)``, which :func:`describe`
repeats.

The views are the ``cdckit[viz]`` extra (plotly, ipywidgets, anywidget,
itables). This package imports none of them: without the extra ``from cdckit
import viz`` works, :func:`diff` too, and a figure function raises
:class:`cdckit.optional.MissingExtraError` naming ``cdckit[viz]``.

Modules: :mod:`~cdckit.viz.timelines`, :mod:`~cdckit.viz.transaction_spans` (transactions from begin to
commit), :mod:`~cdckit.viz.diffs` (with
:mod:`~cdckit.viz.images`, the column statuses), :mod:`~cdckit.viz.lags`,
:mod:`~cdckit.viz.arrival_order`, :mod:`~cdckit.viz.descriptions`,
:mod:`~cdckit.viz.sampling`, :mod:`~cdckit.viz.style`; and, imported on
use, :mod:`~cdckit.viz.explorer` (``cdckit.explore``),
:mod:`~cdckit.viz.interactive` (itables tables) and :mod:`~cdckit.viz.report`
(the HTML report).
"""

from __future__ import annotations

from .arrival_order import ordering
from .descriptions import describe
from .diffs import STATUSES, Diff, diff
from .images import compare_images
from .lags import lag
from .sampling import MAX_POINTS, sample_groups
from .style import HOVER_WIDTH, NO_KEY, NO_TABLE, OP_COLOURS, OP_SYMBOLS, WEBGL_ABOVE
from .timelines import timeline
from .transaction_spans import transaction_timeline

__all__ = [
    "MAX_POINTS",
    "WEBGL_ABOVE",
    "HOVER_WIDTH",
    "OP_COLOURS",
    "OP_SYMBOLS",
    "NO_TABLE",
    "NO_KEY",
    "STATUSES",
    "timeline",
    "transaction_timeline",
    "diff",
    "Diff",
    "lag",
    "ordering",
    "describe",
    "compare_images",
    "sample_groups",
]
