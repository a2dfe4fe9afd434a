"""Before and after images side by side, column by column: :func:`diff` and the :class:`Diff` it returns.

Needs no plotly: a diff shows as HTML in Jupyter and as plain text with
``print``. Every value from the capture is escaped in the HTML; the plain
text writes control characters (terminal escapes, new lines) as ``\\x1b``,
``\\n``.

>>> import cdckit
>>> print(diff(cdckit.read(cdckit.samples.path("lindorm")), limit=1))  # doctest: +ELLIPSIS
update ...
"""

from __future__ import annotations

import html
from typing import Any

import pandas as pd

from ..analysis.connector_defaults import known_values
from ..analysis.replayer import is_partial
from ..frame import table_names
from ..python_columns import object_columns
from ..row_images import parse_image
from ..values import is_missing
from .images import compare_images
from .text import as_text, cut_text, escaped_text, printable_text, records_of, shown_text, time_text, where_text

__all__ = ["STATUSES", "Diff", "diff"]

#: The status of a column in a diff row.
STATUSES = ("changed", "unchanged", "added", "removed", "not sent")

_STATUS_STYLE = {
    "changed": "background-color:#fff3bf",
    "added": "background-color:#d3f9d8",
    "removed": "background-color:#ffe3e3;text-decoration:line-through",
    "not sent": "color:#868e96;font-style:italic",
    "unchanged": "",
}


def _aligned(rows: list[dict[str, str]]) -> list[str]:
    """Plain-text table lines: a header and one line per row, columns left-aligned."""
    names = list(rows[0])
    widths = {n: max(len(n), *(len(r[n]) for r in rows)) for n in names}
    lines = [[n.ljust(widths[n]) for n in names]] + [[r[n].ljust(widths[n]) for n in names] for r in rows]
    return ["  ".join(line).rstrip() for line in lines]


_ROW_COLUMNS = ["event", "source", "offset", "table", "key", "op", "column", "before", "after", "status"]


class Diff:
    """Before and after images of changes, column by column.

    ``rows``: one row per (event, column) with :data:`_ROW_COLUMNS`
    (``event`` is the event's index label; ``before``/``after`` hold the
    image values, ``pd.NA`` where the image has no such column and ``None``
    for a SQL NULL; ``status`` is one of :data:`STATUSES`). ``events``: the
    events shown, one row each. ``left_out``: changes not shown (past the
    limit). In Jupyter a diff shows as HTML tables side by side (changed
    cells highlighted, long values cut to ``width`` with the full value on
    hover); ``str()`` gives the same as plain text.
    """

    def __init__(
        self,
        rows: pd.DataFrame,
        events: pd.DataFrame,
        left_out: int = 0,
        width: int = 40,
        considered: int | None = None,
    ) -> None:
        self.rows = rows
        self.events = events
        self.left_out = left_out
        self.width = width
        self.considered = len(events) if considered is None else considered

    def _cells(self, value: Any, status: str, side: str) -> tuple[str, str]:
        """(full text, shown text) of one image cell."""
        if value is pd.NA:
            text = "(not sent)" if (status, side) in (("not sent", "after"), ("changed", "before")) else "—"
            return text, text
        full = shown_text(value)
        return full, cut_text(full, self.width)

    def _header(self, event: dict[str, Any]) -> tuple[str, list[str]]:
        """(op, [table, key, where]) of one event, as plain text."""
        parts = [
            as_text(event["table"]),
            f"key {as_text(event['key'])}" if not is_missing(event["key"]) else "",
            where_text(event["source"], event["offset"]),
            time_text(event["event_time"]),
        ]
        return event["op"], [p for p in parts if p]

    def _footer(self) -> str:
        if not len(self.events):
            return f"no updates among {self.considered:,} event(s)"
        if self.left_out:
            return f"{self.left_out:,} more update(s) not shown (limit {len(self.events):,})"
        return ""

    def _repr_html_(self) -> str:
        blocks = []
        for event in self.events.to_dict("records"):
            op, parts = self._header(event)
            head = (
                f"<div class='cdckit-diff-head'><b>{escaped_text(op)}</b> "
                + " · ".join(f"<code>{escaped_text(p)}</code>" for p in parts)
                + "</div>"
            )
            body = []
            for row in self.rows[self.rows["event"] == event["event"]].itertuples(index=False):
                cells = []
                for side, value in (("before", row.before), ("after", row.after)):
                    full, shown = self._cells(value, row.status, side)
                    style = _STATUS_STYLE[row.status]
                    if row.status == "removed" and side == "after" or row.status == "added" and side == "before":
                        style = ""
                    if row.status == "not sent" and side == "before":
                        style = ""
                    title = f' title="{html.escape(full, quote=True)}"' if shown != full else ""
                    cls = f"cdckit-{row.status.replace(' ', '-')}" if style else "cdckit-same"
                    cells.append(f"<td class='{cls}' style='{style}'{title}>{escaped_text(shown)}</td>")
                marker = "" if row.status == "unchanged" else escaped_text(row.status)
                body.append(
                    f"<tr><td><code>{escaped_text(str(row.column))}</code></td>{''.join(cells)}"
                    f"<td class='cdckit-status'>{marker}</td></tr>"
                )
            blocks.append(
                f"<div class='cdckit-diff-event' style='margin-bottom:1em'>{head}"
                "<table class='cdckit-diff-table'><thead><tr><th>column</th><th>before</th>"
                f"<th>after</th><th>status</th></tr></thead><tbody>{''.join(body)}</tbody></table></div>"
            )
        footer = self._footer()
        if footer:
            blocks.append(f"<p class='cdckit-diff-footer'><i>{escaped_text(footer)}</i></p>")
        return f"<div class='cdckit-diff'>{''.join(blocks)}</div>"

    def __str__(self) -> str:
        blocks = []
        for event in self.events.to_dict("records"):
            op, parts = self._header(event)
            lines = [printable_text(" ".join([op, *parts]))]
            table = [
                {
                    "column": printable_text(cut_text(str(row.column), self.width)),
                    "before": printable_text(self._cells(row.before, row.status, "before")[1]),
                    "after": printable_text(self._cells(row.after, row.status, "after")[1]),
                    "status": "" if row.status == "unchanged" else row.status,
                }
                for row in self.rows[self.rows["event"] == event["event"]].itertuples(index=False)
            ]
            if table:
                lines += ["  " + line for line in _aligned(table)]
            blocks.append("\n".join(lines))
        footer = self._footer()
        if footer:
            blocks.append(footer)
        return "\n\n".join(blocks)

    __repr__ = __str__


def diff(events_or_row: pd.DataFrame | pd.Series, *, limit: int = 20, width: int = 40) -> Diff:
    """Before and after images side by side: the updates among the events, or one event row.

    A DataFrame shows its first ``limit`` updates (and says how many more
    there are); a Series (one row of the frame) shows that event whatever its
    op. Column statuses follow :func:`compare_images`: for dialects that send
    partial after images (the registry's ``partial_updates``) a column the
    after image leaves out is ``not sent``, not removed. Values longer than
    ``width`` characters are cut, with the full value on hover.

    >>> import cdckit
    >>> events = cdckit.read(cdckit.samples.path("lindorm"))
    >>> d = diff(events.loc[4])  # a column delete
    >>> d.rows[["column", "status"]].values.tolist()
    [['id', 'unchanged'], ['first_name', 'unchanged'], ['last_name', 'removed']]
    >>> len(diff(events).events), diff(events, limit=1).left_out
    (3, 2)
    """
    if isinstance(events_or_row, pd.Series):
        shown = events_or_row.to_frame().T
        considered, left_out = 1, 0
    else:
        updates = events_or_row[events_or_row["op"] == "update"]
        shown = updates.iloc[:limit]
        considered, left_out = len(events_or_row), len(updates) - len(shown)
    table = table_names(shown) if len(shown) else pd.Series([], dtype=object)
    meta = pd.DataFrame(
        {
            "event": shown.index.tolist(),
            "op": shown["op"].astype(str).tolist(),
            "table": table.tolist(),
            "key": shown["key"].tolist(),
            "source": shown["source"].tolist(),
            "offset": shown["offset"].tolist(),
            "event_time": shown["event_time"].tolist(),
        }
    )
    rows = []
    for where, event in zip(meta.to_dict("records"), records_of(shown, ["before", "after", "dialect", "key_columns"])):
        before = parse_image(event["before"])
        if where["op"] == "delete":  # a key-only delete image's defaults are not the row's values
            before = known_values(before, event["key_columns"])
        cells = compare_images(before, parse_image(event["after"]), where["op"], is_partial(event["dialect"]))
        rows += [
            {
                "event": where["event"],
                "source": where["source"],
                "offset": where["offset"],
                "table": where["table"],
                "key": where["key"],
                "op": where["op"],
                "column": c,
                "before": b,
                "after": a,
                "status": s,
            }
            for c, b, a, s in cells
        ]
    frame = object_columns(pd.DataFrame(rows, columns=_ROW_COLUMNS))
    for side in ("before", "after"):  # the image values as they are: pd.NA (no such column) apart from None (NULL)
        frame[side] = pd.Series([row[side] for row in rows], index=frame.index, dtype=object)
    return Diff(frame, meta, left_out=left_out, width=width, considered=considered)
