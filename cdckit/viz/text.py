"""Capture values as text for the views: missing values, escaping, cutting, where an event came from, times.

Internal to :mod:`cdckit.viz` (the figures, the diff, the explorer and the report share these rules).

>>> escaped_text("<b>x</b>"), cut_text("abcdef", 4), as_text(None)
('&lt;b&gt;x&lt;/b&gt;', 'abc…', '')
"""

from __future__ import annotations

import html
import os
from typing import Any

import pandas as pd

from .. import values
from ..values import is_missing

__all__: list[str] = []


def as_text(value: Any) -> str:
    """A frame value as text ('' for missing)."""
    return "" if is_missing(value) else str(value)


def shown_text(value: Any) -> str:
    """An image value as people read it: strings as they are, everything else as JSON (``null``, ``3``)."""
    if isinstance(value, str):
        return value
    return values.dumps(value)


def cut_text(text: str, width: int) -> str:
    """``text`` cut to ``width`` characters, the last one an ellipsis when something was cut."""
    return text if len(text) <= width else text[: max(width - 1, 0)] + "…"


def escaped_text(value: Any) -> str:
    """A value as HTML-safe text ('' for missing).

    Quotes stay as they are: plotly's labels decode only a few named
    entities (``&quot;`` would show as written), and text outside a tag needs
    no quote escaping; attribute values are escaped with quotes where they
    are written.
    """
    return html.escape(as_text(value), quote=False)


def where_text(source: Any, offset: Any) -> str:
    """Where an event came from, as people read it: the file name (not its folders) and the offset.

    The full source stays in the frame (and in :attr:`Diff.rows`).

    >>> where_text("/data/captures/orders.jsonl", 7), where_text("topic.shop", 0)
    ('orders.jsonl:7', 'topic.shop:0')
    """
    text = as_text(source)
    return f"{os.path.basename(text.rstrip('/')) or text}:{offset}"


def printable_text(text: str) -> str:
    """Control characters (new lines, terminal escapes) written as escapes, for plain-text output."""
    return "".join(ch if ch.isprintable() else ch.encode("unicode_escape").decode("ascii") for ch in text)


def time_text(value: Any) -> str:
    return "" if is_missing(value) else pd.Timestamp(value).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3] + " UTC"


def time_texts(times: pd.Series) -> pd.Series:
    """:func:`time_text` of every value, vectorised."""
    text = pd.to_datetime(times, utc=True).dt.strftime("%Y-%m-%d %H:%M:%S.%f").str[:-3] + " UTC"
    return text.astype(object).where(times.notna(), "")


def records_of(frame: pd.DataFrame, columns: list[str]) -> list[dict[str, Any]]:
    """The rows of ``frame`` as dicts of ``columns`` (far faster than ``to_dict("records")`` on a few columns)."""
    return [dict(zip(columns, row)) for row in zip(*(frame[c].tolist() for c in columns))]
