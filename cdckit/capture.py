"""What a read gives, as one explicit value: the events, the quarantine and the report.

``cdckit.read(source, capture=True)`` returns a :class:`Capture`. The plain
``cdckit.read(source)`` returns only the events, carrying the same three in
``events.attrs`` for convenience (the contract names them there); anything
derived from those events (a filter, a concat) may lose them, a ``Capture``
cannot. The report's counts are built and added up here, the one place that
knows its keys.

>>> import cdckit
>>> capture = cdckit.read(cdckit.samples.path("canal"), capture=True)
>>> r = capture.report
>>> r["messages"] == r["decoded"] + r["quarantined"], len(capture.events) == r["events"]
(True, True)
>>> both = Capture.combined([capture, capture])
>>> both.report["messages"] == 2 * r["messages"], len(both.events) == 2 * len(capture.events)
(True, True)
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from typing import Any, Iterable, Mapping

import pandas as pd

__all__ = ["Capture", "new_report", "added_reports", "merged_keys", "events_of", "plain"]

#: The report's counts (integers) and tallies (name -> count); ``sources`` and ``detection`` map a
#: source to what was found in it, and ``pending`` (update halves still waiting) appears only when not 0.
COUNTS = ("messages", "decoded", "events", "quarantined")
TALLIES = ("skipped", "dialects")
BY_SOURCE = ("sources", "detection")


def new_report(messages: int = 0, decoded: int = 0, events: int = 0, quarantined: int = 0,
               skipped: Mapping[str, int] | None = None, dialects: Mapping[str, int] | None = None,
               sources: Mapping[str, Any] | None = None, detection: Mapping[str, Any] | None = None,
               pending: int = 0, inferred_keys: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """A read's report: every message is decoded or quarantined, and ``skipped`` says why a decoded
    message gave no row. ``inferred_keys`` (only when a dialect inferred any: test_decoding) says which
    tables got key columns from the capture's own evidence, ``{table: {"columns", "evidence",
    "sources"}}`` (see :func:`merged_keys`).

    >>> new_report(messages=3, decoded=2, events=2, quarantined=1)["skipped"]
    {}
    """
    report: dict[str, Any] = {"messages": messages, "decoded": decoded, "events": events,
                              "quarantined": quarantined, "skipped": dict(skipped or {}),
                              "dialects": dict(dialects or {}), "sources": dict(sources or {}),
                              "detection": dict(detection or {})}
    if pending:
        report["pending"] = pending
    if inferred_keys:
        report["inferred_keys"] = {table: dict(found) for table, found in inferred_keys.items()}
    return report


def added_reports(reports: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """The report of several reads taken as one: counts and tallies added, sources gathered.

    >>> added_reports([new_report(messages=2, skipped={"empty": 1}),
    ...                new_report(messages=3, skipped={"empty": 2})])["skipped"]
    {'empty': 3}
    """
    total = new_report()
    tallies: dict[str, Counter[str]] = {name: Counter() for name in TALLIES}
    keys: list[Mapping[str, Any]] = []
    for report in reports:
        for name in COUNTS + ("pending",):
            total[name] = total.get(name, 0) + report.get(name, 0)
        for name in TALLIES:
            tallies[name].update(report.get(name) or {})
        for name in BY_SOURCE:
            total[name].update(report.get(name) or {})
        keys.append(report.get("inferred_keys") or {})
    for name in TALLIES:
        total[name] = dict(tallies[name])
    if not total["pending"]:
        del total["pending"]
    found = merged_keys(keys)
    if found:
        total["inferred_keys"] = found
    return total


def merged_keys(reports: Iterable[Mapping[str, Mapping[str, Any]]]) -> dict[str, dict[str, Any]]:
    """Inferred keys of several sources as one: a table's sources gathered; where sources inferred
    different columns for one table, the first source's are kept and ``conflicts`` lists the others.

    >>> merged_keys([{"public.t": {"columns": ["id"], "evidence": "e", "sources": ["a"]}},
    ...              {"public.t": {"columns": ["id"], "evidence": "e", "sources": ["b"]}}])["public.t"]["sources"]
    ['a', 'b']
    """
    total: dict[str, dict[str, Any]] = {}
    for found in reports:
        for table, item in found.items():
            known = total.get(table)
            if known is None:
                total[table] = {**item, "sources": list(item.get("sources") or [])}
            elif list(known["columns"]) == list(item["columns"]):
                known["sources"] = known["sources"] + [s for s in item.get("sources") or []
                                                       if s not in known["sources"]]
            else:
                known.setdefault("conflicts", []).append({"columns": list(item["columns"]),
                                                          "sources": list(item.get("sources") or [])})
    return total


@dataclasses.dataclass(frozen=True)
class Capture:
    """A decoded capture: ``events`` (the canonical frame), ``quarantine`` (one row per message that
    could not be decoded, with its source, offset, reason and raw text), ``report`` (the counts that
    account for every message) and ``column_types`` (what the dialects declared of each column)."""

    events: pd.DataFrame
    quarantine: pd.DataFrame
    report: dict[str, Any]
    column_types: pd.DataFrame

    @classmethod
    def of(cls, events: "pd.DataFrame | Capture") -> "Capture":
        """The capture a frame from ``cdckit.read`` carries in its ``attrs`` (empty parts where it has none);
        a capture itself as it is.

        >>> import cdckit
        >>> Capture.of(cdckit.read(cdckit.samples.path("maxwell"))).report["quarantined"]
        0
        """
        from .decoding import column_types_frame
        from .frame import empty_quarantine

        if isinstance(events, Capture):
            return events
        attrs = events.attrs
        quarantine = attrs.get("quarantine")
        types = attrs.get("column_types")
        report = attrs.get("report")
        return cls(plain(events),
                   pd.DataFrame(quarantine) if quarantine is not None else empty_quarantine(),
                   dict(report) if report is not None else new_report(events=len(events)),
                   pd.DataFrame(types) if types is not None else column_types_frame([]))

    @classmethod
    def combined(cls, captures: list["Capture"]) -> "Capture":
        """Several captures read as one: events and quarantines one after the other, reports added up."""
        from .frame import empty_events

        if not captures:
            return cls.of(empty_events())
        frames = [c.events for c in captures if len(c.events)]
        return cls(pd.concat(frames, ignore_index=True) if frames else empty_events(),
                   pd.concat([c.quarantine for c in captures], ignore_index=True),
                   added_reports(c.report for c in captures),
                   pd.concat([c.column_types for c in captures], ignore_index=True))

    def replace(self, events: pd.DataFrame) -> "Capture":
        """The same capture with other events (a selection of them): quarantine and report kept."""
        return dataclasses.replace(self, events=plain(events))

    def with_attrs(self) -> pd.DataFrame:
        """The events carrying quarantine, report and column types in ``attrs``, as ``cdckit.read`` returns them."""
        from .frame import SharedFrame

        events = plain(self.events)
        events.attrs = {"quarantine": SharedFrame(self.quarantine), "report": self.report,
                        "column_types": SharedFrame(self.column_types)}
        return events

    def __repr__(self) -> str:
        r = self.report
        return (f"Capture({r['messages']:,} messages -> {len(self.events):,} events, "
                f"{len(self.quarantine):,} quarantined)")


def events_of(data: "Capture | pd.DataFrame") -> pd.DataFrame:
    """The events of ``data``: a :class:`Capture`'s (carrying its parts in ``attrs``, as the functions
    that take events read them), or ``data`` itself. Every public function that takes events takes a
    capture through this.

    >>> import cdckit
    >>> capture = Capture.of(cdckit.read(cdckit.samples.path("maxwell")))
    >>> events_of(capture).attrs["report"] is capture.report
    True
    """
    return data.with_attrs() if isinstance(data, Capture) else data


def plain(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` without ``attrs`` (a shallow copy): what is written to files or concatenated.

    >>> f = pd.DataFrame({"a": [1]}); f.attrs["report"] = {}
    >>> plain(f).attrs, f.attrs
    ({}, {'report': {}})
    """
    result = frame.copy(deep=False)
    result.attrs = {}
    return result
