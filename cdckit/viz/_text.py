"""Capture values as text for the views: missing values, escaping, cutting, where an event came from, times.

Internal to :mod:`cdckit.viz` (the figures, the diff, the explorer and the report share these rules).

>>> _esc("<b>x</b>"), _cut("abcdef", 4), _text(None)
('&lt;b&gt;x&lt;/b&gt;', 'abc…', '')
"""

from __future__ import annotations

import html
import os
from typing import Any

import pandas as pd

from .. import values

__all__: list[str] = []


def _missing(value: Any) -> bool:
    """pandas' rule for one value (:func:`pandas.isna`); a list, array or dict is a value, never missing.

    >>> _missing(None), _missing(float("nan")), _missing(pd.NaT), _missing(pd.NA), _missing([None]), _missing("")
    (True, True, True, True, False, False)
    """
    return pd.api.types.is_scalar(value) and bool(pd.isna(value))


def _text(value: Any) -> str:
    """A frame value as text ('' for missing)."""
    return "" if _missing(value) else str(value)


def _show(value: Any) -> str:
    """An image value as people read it: strings as they are, everything else as JSON (``null``, ``3``)."""
    if isinstance(value, str):
        return value
    return values.dumps(value)


def _cut(text: str, width: int) -> str:
    """``text`` cut to ``width`` characters, the last one an ellipsis when something was cut."""
    return text if len(text) <= width else text[: max(width - 1, 0)] + "…"


def _esc(value: Any) -> str:
    """A value as HTML-safe text ('' for missing).

    Quotes stay as they are: plotly's labels decode only a few named
    entities (``&quot;`` would show as written), and text outside a tag needs
    no quote escaping; attribute values are escaped with quotes where they
    are written.
    """
    return html.escape(_text(value), quote=False)


def _where(source: Any, offset: Any) -> str:
    """Where an event came from, as people read it: the file name (not its folders) and the offset.

    The full source stays in the frame (and in :attr:`Diff.rows`).

    >>> _where("/data/captures/orders.jsonl", 7), _where("topic.shop", 0)
    ('orders.jsonl:7', 'topic.shop:0')
    """
    text = _text(source)
    return f"{os.path.basename(text.rstrip('/')) or text}:{offset}"


def _printable(text: str) -> str:
    """Control characters (new lines, terminal escapes) written as escapes, for plain-text output."""
    return "".join(ch if ch.isprintable() else ch.encode("unicode_escape").decode("ascii") for ch in text)


def _time_text(value: Any) -> str:
    return "" if _missing(value) else pd.Timestamp(value).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3] + " UTC"


def _time_texts(times: pd.Series) -> pd.Series:
    """:func:`_time_text` of every value, vectorised."""
    text = pd.to_datetime(times, utc=True).dt.strftime("%Y-%m-%d %H:%M:%S.%f").str[:-3] + " UTC"
    return text.astype(object).where(times.notna(), "")


def _records(frame: pd.DataFrame, columns: list[str]) -> list[dict[str, Any]]:
    """The rows of ``frame`` as dicts of ``columns`` (far faster than ``to_dict("records")`` on a few columns)."""
    return [dict(zip(columns, row)) for row in zip(*(frame[c].tolist() for c in columns))]
