"""Finding rows: the frame every finding is written as, pointing at events of the narrow frame.

Every finding function of both engines fills :data:`cdckit.analysis.ordering.catalogue.FINDING_COLUMNS`;
here are the two ways the pandas code writes them: from dicts (:func:`finding_frame`) and from positions
of events in the narrow frame (:func:`finding_rows`).

>>> finding_frame([{"finding": "lag", "count": 2}])[["finding", "count"]].values.tolist()
[['lag', 2]]
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
import pandas as pd

from .catalogue import FINDING_COLUMNS

__all__ = ["finding_frame", "finding_rows", "take"]


def finding_frame(rows: Iterable[dict[str, Any]]) -> pd.DataFrame:
    """Finding rows as a frame with exactly :data:`FINDING_COLUMNS`.

    >>> finding_frame([{"finding": "lag", "count": 2}])[["finding", "count", "table"]].values.tolist()
    [['lag', 2, <NA>]]
    """
    rows = list(rows)
    return pd.DataFrame(
        {name: pd.array([row.get(name) for row in rows], dtype=dtype) for name, dtype in FINDING_COLUMNS.items()}
    )


_AT_FIELDS = {
    "table": "_table",
    "key": "key",
    "source": "source",
    "offset": "offset",
    "partition": "partition",
    "seq": "seq",
    "op": "op",
}
_OTHER_FIELDS = {"other_source": "source", "other_offset": "offset", "other_seq": "seq"}


def take(frame: pd.DataFrame, column: str, rows: np.ndarray) -> Any:
    """Values of ``column`` at ``rows`` (missing where a row is -1 or the frame has no such column)."""
    if column not in frame:
        return np.full(len(rows), None, dtype=object)
    return frame[column].array.take(rows, allow_fill=True)


def finding_rows(
    name: str, frame: pd.DataFrame, at: np.ndarray, other: np.ndarray | None = None, **extra: Any
) -> pd.DataFrame:
    """Finding rows pointing at events ``at`` and ``other`` (positions in ``frame``; -1 for none).

    ``extra`` sets or overrides columns: a sequence per row, or None for no value.
    """
    if len(at) == 0:
        return finding_frame([])
    data: dict[str, Any] = {"finding": np.full(len(at), name, dtype=object)}
    for column, field in _AT_FIELDS.items():
        data[column] = take(frame, field, at)
    if other is not None:
        for column, field in _OTHER_FIELDS.items():
            data[column] = take(frame, field, other)
    for column, values in extra.items():
        data[column] = np.full(len(at), None, dtype=object) if values is None else values
    return pd.DataFrame(
        {
            column: pd.array(data.get(column, np.full(len(at), None, dtype=object)), dtype=dtype)
            for column, dtype in FINDING_COLUMNS.items()
        }
    )
