"""Comparing a change's before and after images column by column (the diff's and the timeline's hover rules).

>>> from cdckit.row_images import parse_image
>>> compare_images(parse_image('{"id": 1, "a": "x"}'), parse_image('{"id": 1, "a": "y"}'))
[('id', 1, 1, 'unchanged'), ('a', 'x', 'y', 'changed')]
"""

from __future__ import annotations

from typing import Any

import pandas as pd

__all__ = ["compare_images"]


def compare_images(
    before: dict[str, Any] | None, after: dict[str, Any] | None, op: str = "update", partial: bool = False
) -> list[tuple[str, Any, Any, str]]:
    """``(column, before, after, status)`` for every column of a change; a value absent from its image is ``pd.NA``.

    Status rules: an insert or snapshot read (no before image) has every
    column ``added``, a delete (no after image) every column ``removed``.
    For an update: a column in both images is ``changed`` or ``unchanged``; a
    column only in the before image is ``removed`` (a Lindorm column delete),
    or ``not sent`` when the dialect sends partial after images (SharePlex,
    UniVerse) or the update has no after image; a column only in the after
    image is ``added``, or ``changed`` (its old value not sent) for partial
    dialects and updates without a before image.

    >>> compare_images({"id": 1, "a": "x", "b": 2}, {"id": 1, "a": "y"})
    [('id', 1, 1, 'unchanged'), ('a', 'x', 'y', 'changed'), ('b', 2, <NA>, 'removed')]
    >>> compare_images({"id": 1}, {"qty": 3}, partial=True)
    [('id', 1, <NA>, 'not sent'), ('qty', <NA>, 3, 'changed')]
    """
    old, new = before or {}, after or {}
    is_update = op == "update"
    partial = is_update and (partial or before is None or after is None)
    rows = []
    for column in dict.fromkeys([*old, *new]):
        if column in old and column in new:
            status = "unchanged" if old[column] == new[column] else "changed"
        elif column in old:
            status = "not sent" if partial else "removed"
        else:
            status = "changed" if partial else "added"
        rows.append((column, old.get(column, pd.NA), new.get(column, pd.NA), status))
    return rows
