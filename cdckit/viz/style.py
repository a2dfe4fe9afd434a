"""How the views look, the same in every figure: op colours and marker symbols, hover text width, lane labels.

>>> from cdckit.viz import style
>>> style.OP_COLOURS["delete"], style.OP_SYMBOLS["ddl"]
('#d62728', 'diamond')
"""

from __future__ import annotations

__all__ = [
    "WEBGL_ABOVE",
    "HOVER_WIDTH",
    "OP_COLOURS",
    "OP_SYMBOLS",
    "NO_TABLE",
    "NO_KEY",
    "TXN_STATUS_COLOURS",
    "TXN_COLOURS",
]

#: Traces with more points than this are drawn with WebGL (``go.Scattergl``).
WEBGL_ABOVE: int = 1_000

#: Values in hover text are cut to this many characters.
HOVER_WIDTH: int = 40

#: One colour per canonical op, the same in every view.
OP_COLOURS: dict[str, str] = {
    "insert": "#2ca02c",
    "update": "#1f77b4",
    "delete": "#d62728",
    "read": "#9467bd",
    "truncate": "#000000",
    "ddl": "#ff7f0e",
    "heartbeat": "#7f7f7f",
    "begin": "#17becf",
    "commit": "#bcbd22",
    "tombstone": "#8c564b",
    "other": "#e377c2",
}

#: Marker symbols: row changes are dots, everything else has a shape of its own.
OP_SYMBOLS: dict[str, str] = {
    "insert": "circle",
    "update": "circle",
    "delete": "circle",
    "read": "circle-open",
    "truncate": "star",
    "ddl": "diamond",
    "heartbeat": "triangle-up",
    "begin": "triangle-right",
    "commit": "triangle-left",
    "tombstone": "x",
    "other": "square",
}

#: Lane label of events without a table (timeline by table) or a key (timeline by key).
NO_TABLE = "(no table)"
NO_KEY = "(no key)"

#: One colour per transaction status (:func:`cdckit.transactions`): complete green, undeclared grey, the
#: incomplete ones warm.
TXN_STATUS_COLOURS: dict[str, str] = {
    "complete": "#2ca02c",
    "undeclared": "#7f7f7f",
    "no_begin": "#ff7f0e",
    "extra_changes": "#9467bd",
    "missing_changes": "#a61e4d",
    "no_commit": "#d62728",
}

#: Light backgrounds that tell the transactions of a row's history apart (used in turn, in history order).
TXN_COLOURS: tuple[str, ...] = ("#e7f0fa", "#fdf1dc", "#e6f4ea", "#f3e8f7", "#fbe6e6", "#e8f6f6")
