"""The findings of the ordering report that replay gives: the changes a stream's replay refuses.

The report does not judge a row's history by rules of its own: it replays
each stream (``by=``) with the plan :func:`cdckit.materialize` uses
(:func:`cdckit.analysis.replay_plan.plan_replay`, a stream's changes apart from
the others), so the two cannot disagree. Replay's state machine
(:mod:`cdckit.analysis.transitions`) knows truncates, key changes, partial
images and redeliveries. What it refuses becomes:

- ``impossible_transitions``: a change of a keyed row that its state cannot
  take (an insert of a live key, a change after a delete, a change of a key
  the snapshot did not have), pointing at the change before it;
- ``unmatched_rows``: a change of a table without a key whose before image
  is no live row (or that has none).

>>> import cdckit
>>> from cdckit.analysis.ordering.narrow import narrow
>>> events = cdckit.read(cdckit.samples.path("canal/examples"))
>>> found, refused = replayed_findings(events, narrow(events), ["dialect", "source"])
>>> sorted(found), len(refused)
(['impossible_transitions', 'unmatched_rows'], 0)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..replay_plan import plan_replay
from ..replayer import problem_rows
from .rows import finding_rows

__all__ = ["replayed_findings", "replay_problems"]


def replay_problems(events: pd.DataFrame, stream: Sequence[str]) -> list[dict[str, Any]]:
    """Every change replay refuses, each stream (the values of the ``stream`` columns) replayed on its own:
    problem rows (``cdckit.analysis.replay.PROBLEM_COLUMNS``) with ``_row`` (the change's position in
    ``events``) and ``_previous_row`` (the change of the row before it, or None)."""
    with plan_replay(events, stream=stream) as plan:
        problems = plan.problems()
        for table, _, steps, _ in plan.walk():
            problems.extend(problem_rows(table, steps))
        _, keyless = plan.keyless_rows()
    return problems + keyless


def replayed_findings(
    events: pd.DataFrame, frame: pd.DataFrame, stream: Sequence[str]
) -> tuple[dict[str, pd.DataFrame], np.ndarray]:
    """The ``impossible_transitions`` and ``unmatched_rows`` of ``events`` (``frame``: their narrow frame, row
    for row), and the positions of the changes replay refuses."""
    problems = replay_problems(events, stream)
    problems.sort(key=lambda p: p["_row"])
    keyed = [p for p in problems if p["key"] is not None]
    keyless = [p for p in problems if p["key"] is None]
    found = {
        "impossible_transitions": finding_rows(
            "impossible_transitions",
            frame,
            np.array([p["_row"] for p in keyed], np.int64),
            np.array([-1 if p["_previous_row"] is None else p["_previous_row"] for p in keyed], np.int64),
            detail=[p["problem"] for p in keyed],
        ),
        "unmatched_rows": finding_rows(
            "unmatched_rows",
            frame,
            np.array([p["_row"] for p in keyless], np.int64),
            detail=[p["problem"] for p in keyless],
        ),
    }
    return found, np.array([p["_row"] for p in problems], np.int64)
