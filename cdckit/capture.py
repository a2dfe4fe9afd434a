"""What a read gives, as one explicit value: the events, the quarantine and the report.

``cdckit.read(source, capture=True)`` returns a :class:`Capture`. The plain
``cdckit.read(source)`` returns only the events, carrying the same three in
``events.attrs`` for convenience (the contract names them there); anything
derived from those events (a filter, a concat) may lose them, a ``Capture``
cannot. The report's counts are built and added up here, the one place that
knows its keys.

``attrs`` stay JSON-serializable, as every pandas writer needs (Parquet and
Feather write them as JSON): the report is a dict of plain values, and the
quarantine and column types are each an :class:`Attached` text, a short summary
that carries the frame along. :func:`quarantine` and :func:`column_types_of`
give the frames back, also from frames derived from the events (a slice, a
copy, a pickle); a file written by another writer keeps only the summary.

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
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pandas as pd

from .column_types import column_types_frame
from .frame import empty_events, empty_quarantine

__all__ = [
    "Capture",
    "Attached",
    "quarantine",
    "column_types_of",
    "new_report",
    "added_reports",
    "merged_keys",
    "events_of",
    "plain",
]

#: The report's counts (integers) and tallies (name -> count); ``sources`` and ``detection`` map a
#: source to what was found in it, and ``pending`` (update halves still waiting) appears only when not 0.
COUNTS = ("messages", "decoded", "events", "quarantined")
TALLIES = ("skipped", "dialects")
BY_SOURCE = ("sources", "detection")


def new_report(
    messages: int = 0,
    decoded: int = 0,
    events: int = 0,
    quarantined: int = 0,
    skipped: Mapping[str, int] | None = None,
    dialects: Mapping[str, int] | None = None,
    sources: Mapping[str, Any] | None = None,
    detection: Mapping[str, Any] | None = None,
    pending: int = 0,
    inferred_keys: Mapping[str, Any] | None = None,
    producer_losses: Sequence[Mapping[str, Any]] | None = None,
) -> dict[str, Any]:
    """A read's report: every message is decoded or quarantined, and ``skipped`` says why a decoded
    message gave no row. ``inferred_keys`` (only when a dialect inferred any: test_decoding) says which
    tables got key columns from the capture's own evidence, ``{table: {"columns", "evidence",
    "sources"}}`` (see :func:`merged_keys`). ``producer_losses`` (only when a dialect found any) says what
    the capture cannot know because its producer wrote less than the database held, from the schema the
    messages carry: a list of ``{"table", "column", "what", "why"}`` (Debezium's: an unsigned BIGINT written
    as a signed int64, a TIME or DATETIME written in milliseconds; see
    :meth:`cdckit.dialects.base.Dialect.producer_losses`).

    >>> new_report(messages=3, decoded=2, events=2, quarantined=1)["skipped"]
    {}
    """
    report: dict[str, Any] = {
        "messages": messages,
        "decoded": decoded,
        "events": events,
        "quarantined": quarantined,
        "skipped": dict(skipped or {}),
        "dialects": dict(dialects or {}),
        "sources": dict(sources or {}),
        "detection": dict(detection or {}),
    }
    if pending:
        report["pending"] = pending
    if inferred_keys:
        report["inferred_keys"] = {table: dict(found) for table, found in inferred_keys.items()}
    if producer_losses:
        report["producer_losses"] = [dict(loss) for loss in producer_losses]
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
    losses: list[dict[str, Any]] = []
    for report in reports:
        for name in COUNTS + ("pending",):
            total[name] = total.get(name, 0) + report.get(name, 0)
        for name in TALLIES:
            tallies[name].update(report.get(name) or {})
        for name in BY_SOURCE:
            total[name].update(report.get(name) or {})
        keys.append(report.get("inferred_keys") or {})
        for loss in report.get("producer_losses") or ():
            if loss not in losses:
                losses.append(dict(loss))
    for name in TALLIES:
        total[name] = dict(tallies[name])
    if not total["pending"]:
        del total["pending"]
    found = merged_keys(keys)
    if found:
        total["inferred_keys"] = found
    if losses:
        total["producer_losses"] = losses
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
                known["sources"] = known["sources"] + [
                    s for s in item.get("sources") or [] if s not in known["sources"]
                ]
            else:
                known.setdefault("conflicts", []).append(
                    {"columns": list(item["columns"]), "sources": list(item.get("sources") or [])}
                )
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
    def of(cls, events: pd.DataFrame | Capture) -> Capture:
        """The capture a frame from ``cdckit.read`` carries in its ``attrs`` (empty parts where it has none);
        a capture itself as it is.

        >>> import cdckit
        >>> Capture.of(cdckit.read(cdckit.samples.path("maxwell"))).report["quarantined"]
        0
        """
        if isinstance(events, Capture):
            return events
        attrs = events.attrs
        quarantined = _attached(attrs.get("quarantine"))
        types = _attached(attrs.get("column_types"))
        report = attrs.get("report")
        return cls(
            plain(events),
            quarantined if quarantined is not None else empty_quarantine(),
            dict(report) if isinstance(report, Mapping) else new_report(events=len(events)),
            types if types is not None else column_types_frame([]),
        )

    @classmethod
    def combined(cls, captures: list[Capture]) -> Capture:
        """Several captures read as one: events and quarantines one after the other, reports added up."""
        if not captures:
            return cls.of(empty_events())
        frames = [c.events for c in captures if len(c.events)]
        return cls(
            pd.concat(frames, ignore_index=True) if frames else empty_events(),
            pd.concat([c.quarantine for c in captures], ignore_index=True),
            added_reports(c.report for c in captures),
            pd.concat([c.column_types for c in captures], ignore_index=True),
        )

    def replace(self, events: pd.DataFrame) -> Capture:
        """The same capture with other events (a selection of them): quarantine and report kept."""
        return dataclasses.replace(self, events=plain(events))

    def with_attrs(self) -> pd.DataFrame:
        """The events carrying quarantine, report and column types in ``attrs``, as ``cdckit.read`` returns them:
        JSON-serializable values (see :class:`Attached`)."""
        events = plain(self.events)
        count = len(self.quarantine)
        events.attrs = {
            "quarantine": Attached(
                self.quarantine,
                f"{count:,} message{'' if count == 1 else 's'} quarantined: cdckit.quarantine(events) gives them",
            ),
            "report": json_safe(self.report),
            "column_types": Attached(
                self.column_types,
                f"{len(self.column_types):,} column declarations: cdckit.column_types_of(events) gives them",
            ),
        }
        return events

    def __repr__(self) -> str:
        r = self.report
        return (
            f"Capture({r['messages']:,} messages -> {len(self.events):,} events, {len(self.quarantine):,} quarantined)"
        )


class Attached(str):
    """A frame kept in another frame's ``attrs`` (the quarantine and column types ``cdckit.read`` attaches to its
    events): to JSON and to every writer a short text (a summary), to :func:`quarantine` and
    :func:`column_types_of` the frame itself, as :attr:`frame`.

    pandas deep-copies ``attrs`` into every derived frame and compares them with ``==`` when concatenating; an
    ``Attached`` is shared, not copied (a slice of a large capture stays cheap), and two compare equal only when
    they are the same (frames of two reads joined keep neither's). A pickle keeps the frame.

    >>> import json
    >>> a = Attached(pd.DataFrame({"x": [1]}), "1 row")
    >>> json.dumps({"q": a}), len(a.frame), a == Attached(a.frame, "1 row"), a == a
    ('{"q": "1 row"}', 1, False, True)
    """

    frame: pd.DataFrame

    def __new__(cls, frame: pd.DataFrame, text: str) -> Attached:
        attached = super().__new__(cls, text)
        attached.frame = frame
        return attached

    def __deepcopy__(self, memo: Any = None) -> Attached:
        return self

    def __copy__(self) -> Attached:
        return self

    def __reduce__(self) -> tuple[Any, ...]:
        return (Attached, (self.frame, str(self)))

    def __eq__(self, other: Any) -> bool:
        if isinstance(getattr(other, "frame", None), pd.DataFrame):  # another Attached (duck-typed: see _attached)
            return self is other
        return str.__eq__(self, other)

    def __ne__(self, other: Any) -> bool:
        return not self == other

    __hash__ = str.__hash__


def quarantine(events: pd.DataFrame | Capture) -> pd.DataFrame:
    """The quarantined messages of the read behind ``events`` (the frame ``cdckit.read`` returned, or one derived
    from it: a slice, a selection, a copy, a pickle), or of a :class:`Capture`: one row per message, with its
    source, offset, line, dialect, reason, ``reason_code`` and raw text. Empty for a frame no read made.

    Raises ValueError where the frame names a quarantine it no longer holds (it was written to a file that keeps
    ``attrs`` as JSON, such as Parquet): the quarantine must be written beside the events.

    >>> import cdckit
    >>> events = cdckit.read(["not json"], dialect="maxwell")
    >>> cdckit.quarantine(events.head(0))["reason_code"].tolist()
    ['invalid_message']
    """
    if not isinstance(events, Capture):
        _require_held(events, "quarantine")
    return Capture.of(events).quarantine.copy(deep=False)


def column_types_of(events: pd.DataFrame | Capture) -> pd.DataFrame:
    """The column types the dialects declared in the read behind ``events`` (found as :func:`quarantine` finds the
    quarantine): one row per declared column, :data:`cdckit.column_types.TYPE_COLUMNS`. Empty where the events
    hold none (a frame no read made, or read back from a Parquet file): the kinds are then inferred from values.

    >>> import cdckit
    >>> types = cdckit.column_types_of(cdckit.read(cdckit.samples.path("maxwell"))[["op"]])
    >>> list(types.columns)[:3]
    ['table', 'column', 'type']
    """

    if isinstance(events, Capture):
        return events.column_types.copy(deep=False)
    types = _attached(getattr(events, "attrs", {}).get("column_types"))
    return types.copy(deep=False) if types is not None else column_types_frame([])


def _attached(value: Any) -> pd.DataFrame | None:
    """The frame an ``attrs`` value holds: an :class:`Attached`'s, a frame itself (set by hand), else None."""
    # Duck-typed, not isinstance: a module imported twice (pytest's importlib mode) makes two Attached classes.
    frame = getattr(value, "frame", None)
    if isinstance(value, str) and isinstance(frame, pd.DataFrame):
        return frame
    if isinstance(value, pd.DataFrame):
        return pd.DataFrame(value)
    return None


def _require_held(events: pd.DataFrame, name: str) -> None:
    """Raise where ``events`` name their ``name`` in ``attrs`` but hold only its summary."""
    value = getattr(events, "attrs", {}).get(name)
    if value is not None and _attached(value) is None:
        raise ValueError(
            f"these events name their {name} ({value!r}) but no longer hold it: they were read back from a file "
            f"that keeps attrs as text (Parquet, Feather). Read the capture again, or write the {name} beside the "
            f"events (cdckit.read(..., capture=True) gives it as a frame)."
        )


def json_safe(value: Any) -> Any:
    """``value`` (a report) with plain Python values only: numpy numbers as int/float/bool, tuples and sets as
    lists, keys as text; what JSON (and so Parquet's ``attrs``) can hold.

    >>> import numpy as np
    >>> json_safe({"n": np.int64(2), "k": (1, np.float64(0.5)), 3: {np.bool_(True)}})
    {'n': 2, 'k': [1, 0.5], '3': [True]}
    """
    if isinstance(value, Mapping):
        return {k if isinstance(k, str) else str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [json_safe(v) for v in value]
    if value is None or type(value) in (str, bool, int, float):
        return value
    if hasattr(value, "item") and callable(value.item):  # numpy scalars
        return json_safe(value.item())
    for kind in (bool, int, float, str):  # subclasses (IntEnum, Attached...) as the plain value
        if isinstance(value, kind):
            return kind(value)
    return str(value)


def events_of(data: Capture | pd.DataFrame) -> pd.DataFrame:
    """The events of ``data``: a :class:`Capture`'s (carrying its parts in ``attrs``, as the functions
    that take events read them), or ``data`` itself. Every public function that takes events takes a
    capture through this.

    >>> import cdckit
    >>> capture = Capture.of(cdckit.read(cdckit.samples.path("maxwell")))
    >>> events_of(capture).attrs["report"] == capture.report
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
