"""Deterministic samples of big captures: each group of points keeps a fair share of the budget.

Above ``max_points`` (default :data:`MAX_POINTS`) the figures show a sample
(see :mod:`cdckit.viz`); the figure then says so in a note.

>>> sampling_note(5, 12, "table")
'showing 5 of 12 events (sampled evenly per table; small groups kept whole)'
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["MAX_POINTS", "sample_groups"]

#: Above this many points a figure shows a sample (see :mod:`cdckit.viz`).
MAX_POINTS: int = 50_000


def sample_groups(groups: pd.Series, max_points: int) -> np.ndarray:
    """Positions (sorted) of at most ``max_points`` rows, each group keeping a fair share, evenly spaced.

    Groups are served smallest first: each takes all its rows or an equal
    share of what is left, whichever is less, so small groups stay whole.
    Within a group the rows kept are evenly spaced in the given order.

    >>> groups = pd.Series(["ddl"] * 2 + ["update"] * 10)
    >>> sample_groups(groups, 6).tolist()
    [0, 1, 2, 4, 7, 9]
    """
    if max_points < 1:
        raise ValueError("max_points must be at least 1")
    if len(groups) <= max_points:
        return np.arange(len(groups))
    positions = groups.reset_index(drop=True).groupby(groups.to_numpy(), sort=False, dropna=False).indices
    members = sorted(positions.values(), key=len)
    left = max_points
    kept = []
    for number, rows in enumerate(members):
        share = min(len(rows), left // (len(members) - number))
        left -= share
        picks = (np.arange(share) * len(rows)) // share if share else np.array([], dtype=int)
        kept.append(rows[picks])
    return np.sort(np.concatenate(kept))


def sampling_note(shown: int, total: int, what: str) -> str:
    return f"showing {shown:,} of {total:,} events (sampled evenly per {what}; small groups kept whole)"
