"""Plain text on the terminal: control characters of a capture shown as escapes, frames as left-aligned
text tables with cells cut to a width.

>>> import pandas as pd
>>> print(text_table(pd.DataFrame({"op": ["insert"], "after": ["a long value"]}), width=6))
op     after
insert a lon…
"""

from __future__ import annotations

import re
from typing import Any

import pandas as pd

from ..frame import table_names

__all__ = ["printable", "events_table", "text_table", "print_tables", "short_seq"]

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")  # all but tab and newline
_CONTROL_IN_CELL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def printable(text: Any, pattern: re.Pattern[str] = _CONTROL) -> str:
    """``text`` with terminal control characters shown as escapes (a capture must not drive the terminal).

    >>> printable("red \\x1b[31m\\tand\\nnext")
    'red \\\\x1b[31m\\tand\\nnext'
    """
    return pattern.sub(lambda m: repr(m.group())[1:-1], str(text))


def events_table(events: pd.DataFrame, columns: list[str], width: int) -> str:
    """The events as plain text: ``table`` as database.table, cells cut to ``width`` characters.

    >>> events_table(pd.DataFrame(columns=["op"]), ["op"], 40)
    '(no events)'
    """
    if not len(events):
        return "(no events)"
    shown = {"table": lambda: table_names(events), "seq": lambda: events["seq"].map(short_seq, na_action="ignore")}
    view = pd.DataFrame({c: shown[c]() if c in shown else events[c] for c in columns}, index=events.index)
    return text_table(view, width, tail={"seq"})


def short_seq(seq: str) -> str:
    """A seq as the table shows it: each zero-padded number (twelve digits or more) without its padding, so the
    part that differs between events stays in sight; a name's digits (``mysql-bin.000003``) are kept.

    >>> short_seq("00000001714554000000:00000000000000000007:00000000000000000000")
    '1714554000000:7:0'
    >>> short_seq("mysql-bin.000003:00000000000000012345")
    'mysql-bin.000003:12345'
    """
    return re.sub(r"\d{12,}", lambda m: m.group().lstrip("0") or "0", seq)


def text_table(frame: pd.DataFrame, width: int, tail: set[str] | frozenset[str] = frozenset()) -> str:
    """Any frame as plain left-aligned text, cells cut to ``width`` characters (control characters escaped); the
    cells of the ``tail`` columns keep their end (a position's end is what tells two apart).

    >>> print(text_table(pd.DataFrame({"key": [[3, "x"]], "n": [None]}), 40))
    key n
    3,x
    """
    if not len(frame.columns):
        return "(no columns)"
    view = pd.DataFrame(
        {str(c): [_cell(v, width, str(c) in tail) for v in frame[c]] for c in frame.columns}, index=frame.index
    )
    if not len(view):
        return "  ".join(view.columns)
    widths = {c: max(len(c), max(len(v) for v in view[c])) for c in view.columns}
    left = {c: (lambda v, w=widths[c]: v.ljust(w)) for c in view.columns}  # pandas right-aligns text
    text = view.to_string(index=False, justify="left", formatters=left)
    return "\n".join(line.rstrip() for line in text.splitlines())


def _cell(value: Any, width: int, tail: bool = False) -> str:
    """One cell's text, cut to ``width`` with "…" where it was cut (its start, for a ``tail`` column).

    >>> _cell("abcdefgh", 5), _cell("abcdefgh", 5, tail=True)
    ('abcd…', '…efgh')
    """
    if value is None or (not isinstance(value, (list, tuple, dict)) and pd.isna(value)):
        return ""
    text = ",".join(map(str, value)) if isinstance(value, (list, tuple)) else str(value)
    text = printable(text, _CONTROL_IN_CELL)  # a tab or newline would break the table too
    if width and len(text) > width:
        keep = max(width - 1, 0)
        text = "…" + text[len(text) - keep :] if tail and keep else text[:keep] + "…"
    return text


def print_tables(tables: dict[str, pd.DataFrame], head: int, width: int, what: str) -> None:
    """Each table's first ``head`` rows under its name, and how many more there are.

    >>> print_tables({"shop.t": pd.DataFrame({"id": [1, 2]})}, 1, 40, "rows")
    shop.t: 2 rows
    id
    1
    ... and 1 more (--head N shows more, -o OUT writes them all)
    """
    if not tables:
        print(f"(no {what})")
    for i, (name, frame) in enumerate(tables.items()):
        print(("\n" if i else "") + printable(f"{name}: {len(frame):,} {what}"))
        if head:
            print(text_table(frame.head(head), width))
        if len(frame) > head:
            print(f"... and {len(frame) - head:,} more (--head N shows more, -o OUT writes them all)")
