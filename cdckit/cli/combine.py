"""Where the command line joins the frames of one read and sets their ``DataFrame.attrs`` (the read's
report, quarantine and column types): the one place to change when a read returns a result object instead.

>>> part = pd.DataFrame({"op": ["insert"]})
>>> part.attrs = {"report": {"events": 1}}
>>> events = combined([bare(part), bare(part.copy())], {"report": {"events": 2}})
>>> len(events), events.attrs
(2, {'report': {'events': 2}})
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from ..frame import empty_events

__all__ = ["bare", "combined", "added_reports"]


def bare(part: pd.DataFrame) -> pd.DataFrame:
    """``part`` without its attrs: concat would compare them, and a chunk's copy of its quarantine is freed
    as soon as the chunk is kept (pandas copies attrs into every filtered frame).

    >>> frame = pd.DataFrame({"op": ["insert"]})
    >>> frame.attrs = {"report": {}}
    >>> bare(frame).attrs
    {}
    """
    part.attrs = {}
    return part


def combined(parts: list[pd.DataFrame], attrs: dict[str, Any]) -> pd.DataFrame:
    """The ``parts`` (made :func:`bare`) as one frame carrying ``attrs``; no parts: the empty canonical frame."""
    events = pd.concat(parts, ignore_index=True) if parts else empty_events()
    events.attrs = attrs
    return events


def added_reports(reports: list[dict[str, Any]]) -> dict[str, Any]:
    """Several read reports as one: counts added up, the counts of ``dialects`` and ``skipped`` added by
    name, the other mappings (sources, detection) merged.

    >>> added_reports([{"events": 2, "dialects": {"canal": 2}}, {"events": 3, "dialects": {"canal": 3}}])
    ... # doctest: +NORMALIZE_WHITESPACE
    {'messages': 0, 'decoded': 0, 'events': 5, 'quarantined': 0, 'skipped': {}, 'dialects': {'canal': 5},
     'sources': {}, 'detection': {}}
    """
    report: dict[str, Any] = {"messages": 0, "decoded": 0, "events": 0, "quarantined": 0, "skipped": {},
                              "dialects": {}, "sources": {}, "detection": {}}
    for part in reports:
        for name, value in part.items():
            if isinstance(value, int):
                report[name] = report.get(name, 0) + value
            elif name in ("dialects", "skipped"):
                for key, count in value.items():
                    report[name][key] = report[name].get(key, 0) + count
            elif isinstance(value, dict):
                report[name].update(value)
    return report
