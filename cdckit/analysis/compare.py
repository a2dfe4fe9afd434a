"""Compare two captures of the same source, event by event and final state by final state.

Two connectors on one database (Canal and Debezium on the same MySQL), or
one connector before and after an upgrade, should tell the same story.
:func:`compare` says where they do not:

- the row changes (``insert``, ``update``, ``delete``, ``read``) are grouped
  by table (``database.table``, as :func:`cdckit.frame.table_names` names
  it in every dialect) and key (its values, compared as values: ``[3]`` and
  ``["3"]`` are one key), each group in seq order (:func:`cdckit.sort_events`);
- the two histories of a key are aligned as a text diff aligns lines, on the
  op and both images (parsed, values compared under
  :func:`cdckit.analysis.reconcile.normal`: numbers by value, times by instant):
  a change on both sides is **matched**; a change where the other side has
  another change in its place is **different** (the n-th against the n-th
  of that stretch, with the columns that differ); a change with nothing in
  its place is **only in** its side. So a lost event, a duplicate, a changed
  value and two changes in another order each show where they are, and the
  ``note`` of an unmatched change says when it is a repeat of another change
  of its key or present on the other side at another place. A delete's
  before image counts by what it tells of the row
  (:func:`cdckit.analysis.connector_defaults.known_values`): the key and type defaults Debezium
  writes under PostgreSQL's ``REPLICA IDENTITY DEFAULT`` tell its key only,
  as wal2json's key-only image does;
- transaction markers, heartbeats, DDL and the other ops are set aside and
  counted (``set_aside``), not compared;
- both captures are replayed (:func:`cdckit.materialize`) and the final
  tables compared row by row by key (``states``).

>>> import cdckit
>>> canal = cdckit.read(cdckit.samples.path("canal/shop"))
>>> debezium = cdckit.read(cdckit.samples.path("debezium/shop"))
>>> result = compare(canal, debezium.drop(index=5), names=("canal", "debezium"))
>>> result.ok, len(result.only_a), result.only_a[["table", "key", "op"]].values.tolist()
(False, 1, [['customers', '[6]', 'insert']])
"""

from __future__ import annotations

import difflib
import html
from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from .. import values
from ..capture import events_of
from ..engines import is_spark, pandas_events
from ..frame import CHANGE_OPS, table_names
from ..python_columns import object_columns
from ..row_images import key_of, parse_image
from .connector_defaults import known_values
from .ordering import sort_events
from .reconcile import ReconcileError, diff_tables, html_table, json_text, key_text, normal, plain
from .replay import key_columns_of, materialize

__all__ = ["compare", "Comparison"]

_SHOWN = 8


class _Change:
    """One row change of one side: where it is in the frame, and what identifies it.

    ``text``: the op and the image texts as they are; two changes with the
    same text are the same change, so the images are parsed and normalised
    (``signature``) only where the texts of a key's histories differ. A
    delete's ``before`` is the part of its image that tells the row's values
    (:func:`~cdckit.analysis.connector_defaults.known_values`, by ``key_columns``).
    """

    __slots__ = ("row", "op", "key", "text", "n", "key_columns", "_parsed")

    def __init__(self, row: int, op: str, key: Any, before: Any, after: Any, n: int, key_columns: Any = None) -> None:
        self.row, self.op, self.key, self.n, self.key_columns = row, op, key, n, key_columns
        self.text = (op, before, after)
        self._parsed: tuple[Any, Any, Hashable] | None = None

    def _parse(self) -> tuple[Any, Any, Hashable]:
        if self._parsed is None:
            before, after = parse_image(self.text[1], keep_other=True), parse_image(self.text[2], keep_other=True)
            if self.op == "delete":
                before = known_values(before, self.key_columns)
            self._parsed = (before, after, (self.op, normal(before), normal(after)))
        return self._parsed

    @property
    def before(self) -> Any:
        return self._parse()[0]

    @property
    def after(self) -> Any:
        return self._parse()[1]

    @property
    def signature(self) -> Hashable:
        return self._parse()[2]


class Comparison:
    """Two captures compared (see :func:`compare`). Every frame names the sides by ``names``.

    ``summary``: one row per table: the change events of each side, how many
    matched, were only on one side or differ, and the final rows that
    differ. ``only_a`` / ``only_b``: the unmatched events (event rows, with
    ``change``, the n-th change of its key on its side, and a ``note``).
    ``different``: one row per paired event that differs. ``states``: the
    final states' differences, one row per row (or column) that differs.
    ``set_aside``: per op, the events not compared. ``ok``: nothing differs.
    """

    def __init__(
        self,
        names: tuple[str, str],
        summary: pd.DataFrame,
        only_a: pd.DataFrame,
        only_b: pd.DataFrame,
        different: pd.DataFrame,
        states: pd.DataFrame,
        set_aside: pd.DataFrame,
    ) -> None:
        self.names = names
        self.summary, self.only_a, self.only_b, self.different = summary, only_a, only_b, different
        self.states, self.set_aside = states, set_aside

    @property
    def ok(self) -> bool:
        """True when no event and no final row differs."""
        return not (len(self.only_a) or len(self.only_b) or len(self.different) or len(self.states))

    def frames(self) -> dict[str, pd.DataFrame]:
        """The result's tables by name (for writing out): summary, only_a, only_b, different, states, set_aside."""
        return {
            "summary": self.summary,
            "only_a": self.only_a,
            "only_b": self.only_b,
            "different": self.different,
            "states": self.states,
            "set_aside": self.set_aside,
        }

    def _headline(self) -> str:
        a, b = self.names
        total = self.summary.sum(numeric_only=True)
        count = lambda column: int(total.get(column, 0))  # noqa: E731
        return (
            f"{a} vs {b}: {count(a)} and {count(b)} row changes; {count('matched')} matched, "
            f"{count('only_' + a)} only in {a}, {count('only_' + b)} only in {b}, {count('different')} different; "
            f"final states: {len(self.states)} difference(s)" + (" (same)" if self.ok else "")
        )

    def __str__(self) -> str:
        a, b = self.names
        lines = [self._headline()]
        for name, frame in ((a, self.only_a), (b, self.only_b)):
            for row in frame.head(_SHOWN).itertuples(index=False):
                note = f" ({row.note})" if row.note else ""
                lines.append(
                    f"  only in {name}: {_table_of(row)} {row.key} change #{row.change} {row.op} seq {row.seq}{note}"
                )
            if len(frame) > _SHOWN:
                lines.append(f"  ... {len(frame) - _SHOWN} more only in {name}")
        for row in self.different.head(_SHOWN).to_dict("records"):
            changes = {row[f"change_{a}"], row[f"change_{b}"]}
            change = (
                "/".join(f"#{n}" for n in (row[f"change_{a}"], row[f"change_{b}"]))
                if len(changes) > 1
                else f"#{row[f'change_{a}']}"
            )
            lines.append(f"  different: {row['table']} {row['key']} change {change}: {row['detail']}")
        if len(self.different) > _SHOWN:
            lines.append(f"  ... {len(self.different) - _SHOWN} more different")
        for row in self.states.head(_SHOWN).itertuples(index=False):
            what = f": {', '.join(row.columns)}" if len(row.columns) else ""
            lines.append(f"  final state: {row.table} {row.key if row.key is not None else ''} {row.found}{what}")
        if len(self.states) > _SHOWN:
            lines.append(f"  ... {len(self.states) - _SHOWN} more final-state differences")
        return "\n".join(lines)

    __repr__ = __str__

    def _repr_html_(self) -> str:
        a, b = self.names
        shown = ["table", "key", "op", "seq", "change", "note", "before", "after"]
        parts = [f"<p><b>{html.escape(self._headline())}</b></p>", html_table(self.summary)]
        for label, frame in (
            (f"only in {a}", self.only_a[[c for c in shown if c in self.only_a]]),
            (f"only in {b}", self.only_b[[c for c in shown if c in self.only_b]]),
            ("different", self.different),
            ("final states", self.states),
        ):
            if len(frame):
                parts.append(f"<p>{html.escape(label)} ({len(frame)})</p>{html_table(frame)}")
        return "".join(parts)


def _table_of(row: Any) -> str:
    """An event row's ``database.table`` name."""
    prefix = row.database if isinstance(row.database, str) else row.schema if isinstance(row.schema, str) else None
    return f"{prefix}.{row.table}" if prefix else str(row.table)


def compare(a: Any, b: Any, *, names: Sequence[str] = ("a", "b")) -> Comparison:
    """Two captures of the same source, compared event by event and by final state (see the module notes).

    ``a``, ``b``: event frames as :func:`cdckit.read` returns them (a Spark
    frame is collected first). ``names``: what to call the two sides in the
    result (``("canal", "debezium")``); the frames' columns carry them
    (``only_canal``, ``seq_debezium``...).

    >>> import cdckit
    >>> events = cdckit.read(cdckit.samples.path("canal/shop"))
    >>> compare(events, events).ok
    True
    """
    names = _checked_names(names)
    frames = [_events(frame, name) for frame, name in zip((a, b), names)]
    key_columns = {**key_columns_of(frames[1]), **key_columns_of(frames[0])}
    sides = [_Side(frame, name, key_columns) for frame, name in zip(frames, names)]
    na, nb = names
    keys = sorted(set(sides[0].groups) | set(sides[1].groups), key=lambda k: (str(k[0]), repr(k[1])))
    counts: dict[str, dict[str, int]] = {}
    only: tuple[list[tuple[int, int, str]], list[tuple[int, int, str]]] = ([], [])
    different: list[dict[str, Any]] = []
    for group in keys:
        tally = counts.setdefault(group[0] or "", dict.fromkeys(("matched", "only_a", "only_b", "different"), 0))
        _compare_key(group, sides, tally, only, different)
    states, state_counts = _state_differences(sides, names)
    summary = _summary(sides, counts, state_counts, names)
    diff_columns = [
        "table",
        "key",
        f"change_{na}",
        f"change_{nb}",
        f"op_{na}",
        f"op_{nb}",
        f"seq_{na}",
        f"seq_{nb}",
        "columns",
        "detail",
        f"before_{na}",
        f"before_{nb}",
        f"after_{na}",
        f"after_{nb}",
    ]
    set_aside = pd.DataFrame(
        [
            (op, sides[0].set_aside.get(op, 0), sides[1].set_aside.get(op, 0))
            for op in sorted(set(sides[0].set_aside) | set(sides[1].set_aside))
        ],
        columns=["op", na, nb],
    )
    return Comparison(
        (na, nb),
        summary,
        _event_rows(sides[0], only[0]),
        _event_rows(sides[1], only[1]),
        object_columns(pd.DataFrame(different, columns=diff_columns)),
        states,
        set_aside,
    )


def _compare_key(
    group: tuple[Any, Hashable],
    sides: list[_Side],
    tally: dict[str, int],
    only: tuple[list[tuple[int, int, str]], list[tuple[int, int, str]]],
    different: list[dict[str, Any]],
) -> None:
    """Align the two histories of one (table, key): count them in ``tally``, add to ``only`` and ``different``."""
    left, right = sides[0].groups.get(group, []), sides[1].groups.get(group, [])
    unmatched: tuple[list[_Change], list[_Change]] = ([], [])
    for tag, i1, i2, j1, j2 in _aligned(left, right):
        if tag == "equal":
            tally["matched"] += i2 - i1
            continue
        pairs = min(i2 - i1, j2 - j1) if tag == "replace" else 0
        for x, y in zip(left[i1 : i1 + pairs], right[j1 : j1 + pairs]):
            different.append(_different_row(group[0], x, y, sides))
        tally["different"] += pairs
        unmatched[0].extend(left[i1 + pairs : i2])
        unmatched[1].extend(right[j1 + pairs : j2])
    unmatched = (_later_copies(unmatched[0], left), _later_copies(unmatched[1], right))
    tally["only_a"] += len(unmatched[0])
    tally["only_b"] += len(unmatched[1])
    for side, (mine, other, history) in enumerate(
        ((unmatched[0], unmatched[1], left), (unmatched[1], unmatched[0], right))
    ):
        for change in mine:
            only[side].append((change.row, change.n, _note(change, other, history, sides[1 - side].name)))


#: Column names of the summary that a side's name must not take.
_TAKEN = {"table", "matched", "different", "state_differences", "op"}


def _checked_names(names: Sequence[str]) -> tuple[str, str]:
    if isinstance(names, str) or len(names) != 2 or len({str(n) for n in names}) != 2:
        raise ReconcileError(f"names must be two different names, one per side, not {names!r}")
    taken = sorted(_TAKEN & {str(n) for n in names})
    if taken:
        raise ReconcileError(f"names cannot be {', '.join(taken)}: the result's tables have such columns")
    return str(names[0]), str(names[1])


class _Side:
    """One capture, ready to compare: its sorted events, row changes grouped by (table, key), ops set aside.

    A change without a key (Debezium saved without its Kafka keys, say) takes
    its key from its image, by the key columns either capture names for its
    table (``key_columns``).
    """

    def __init__(self, events: pd.DataFrame, name: str, key_columns: dict[str, list[str]]) -> None:
        self.name = name
        self.events = sort_events(events.reset_index(drop=True)).reset_index(drop=True)
        ops = self.events["op"].astype(object)
        changing = ops.isin(CHANGE_OPS).to_numpy()
        self.set_aside = {str(op): int(n) for op, n in ops[~changing].value_counts(dropna=False).items()}
        self.tables = table_names(self.events)
        self.groups: dict[tuple[Any, Hashable], list[_Change]] = {}
        frame = self.events
        rows = np.flatnonzero(changing)
        key_values: dict[Any, Hashable] = {}
        for row, table, op, key, before, after, named in zip(
            rows.tolist(),
            self.tables.iloc[rows].tolist(),
            ops.iloc[rows].tolist(),
            frame["key"].iloc[rows].tolist(),
            frame["before"].iloc[rows].tolist(),
            frame["after"].iloc[rows].tolist(),
            frame["key_columns"].iloc[rows].tolist(),
        ):
            before, after = _text(before), _text(after)
            if values.is_missing(key):
                image = parse_image(after if after is not None else before, keep_other=True)
                key = key_of(image, key_columns.get(table))
            if key not in key_values:
                key_values[key] = _key_value(key)
            group = self.groups.setdefault((table, key_values[key]), [])
            columns = key_columns.get(table) or (None if named is None or values.is_missing(named) else named)
            group.append(_Change(row, op, key, before, after, len(group) + 1, columns))
        self.counts: dict[str, int] = {}
        for (table, _), changes in self.groups.items():
            self.counts[table or ""] = self.counts.get(table or "", 0) + len(changes)


def _events(frame: Any, name: str) -> pd.DataFrame:
    frame = events_of(frame)
    if not (isinstance(frame, pd.DataFrame) or is_spark(frame)):
        raise TypeError(
            f"compare takes two event frames as cdckit.read returns them; {name} is a {type(frame).__name__}"
        )
    return pandas_events(frame)


def _key_value(key: Any) -> Hashable:
    """A key text as its values under :func:`normal` (``[3]`` and ``["3"]`` alike); None without a key."""
    if values.is_missing(key):
        return None
    try:
        return normal(values.loads(key))
    except ValueError:
        return key


def _aligned(left: list[_Change], right: list[_Change]) -> Sequence[tuple[str, int, int, int, int]]:
    """The alignment of two histories of one key (difflib's opcodes over the changes' signatures)."""
    if len(left) == len(right) and all(x.text == y.text for x, y in zip(left, right)):
        return [("equal", 0, len(left), 0, len(right))]
    a, b = [c.signature for c in left], [c.signature for c in right]
    if a == b:
        return [("equal", 0, len(a), 0, len(b))]
    return difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()


def _later_copies(unmatched: list[_Change], history: list[_Change]) -> list[_Change]:
    """The unmatched changes, each moved to the last of the identical changes that follow it in a row.

    An alignment may pair the second copy of a repeated change and leave the
    first; the copies are interchangeable, and the one delivered later is
    the repeat.
    """
    marked = {change.n for change in unmatched}
    for change in sorted(unmatched, key=lambda c: c.n, reverse=True):
        n = change.n
        while n < len(history) and history[n].signature == change.signature and n + 1 not in marked:
            n += 1  # history[n] is change n + 1
        marked.discard(change.n)
        marked.add(n)
    return [history[n - 1] for n in sorted(marked)]


def _note(change: _Change, other: list[_Change], history: list[_Change], other_name: str) -> str:
    """Why an unmatched change may be unmatched: present elsewhere on the other side, or a repeat on its own."""
    for theirs in other:
        if theirs.signature == change.signature:
            return f"in {other_name} as change #{theirs.n} of this key: order differs"
    for mine in history:
        if mine is not change and mine.signature == change.signature:
            return f"the same change as #{mine.n} of this key: a repeat"
    return ""


def _different_row(table: Any, x: _Change, y: _Change, sides: list[_Side]) -> dict[str, Any]:
    """One row of ``Comparison.different``: what differs between change ``x`` of side a and ``y`` of side b."""
    (na, nb), (ea, eb) = (sides[0].name, sides[1].name), (sides[0].events, sides[1].events)
    columns, details = [], []
    if x.op != y.op:
        columns.append("op")
        details.append(f"op: {x.op} vs {y.op}")
    for image in ("before", "after"):
        for column, detail in _image_differences(getattr(x, image), getattr(y, image), na, nb):
            columns.append(f"{image}.{column}" if column else image)
            details.append(f"{image}.{column}: {detail}" if column else f"{image}: {detail}")
    return {
        "table": table,
        "key": x.key,
        f"change_{na}": x.n,
        f"change_{nb}": y.n,
        f"op_{na}": x.op,
        f"op_{nb}": y.op,
        f"seq_{na}": _text(ea["seq"].iloc[x.row]),
        f"seq_{nb}": _text(eb["seq"].iloc[y.row]),
        "columns": columns,
        "detail": "; ".join(details),
        f"before_{na}": _before_text(x, ea),
        f"before_{nb}": _before_text(y, eb),
        f"after_{na}": _text(ea["after"].iloc[x.row]),
        f"after_{nb}": _text(eb["after"].iloc[y.row]),
    }


def _before_text(change: _Change, events: pd.DataFrame) -> str | None:
    """The before image of a change as ``different`` shows it: a delete's, only what it tells of the row."""
    text = _text(events["before"].iloc[change.row])
    if change.op != "delete" or text is None or change.before == parse_image(text, keep_other=True):
        return text
    return json_text(change.before)


def _image_differences(left: Any, right: Any, na: str, nb: str) -> list[tuple[str, str]]:
    """``(column, what)`` for each column that differs between two parsed images ("" for the whole image)."""
    if normal(left) == normal(right):
        return []
    if not isinstance(left, dict) or not isinstance(right, dict):
        if left is None or right is None:
            return [("", f"only in {na if right is None else nb}")]
        return [("", f"{_shown(left)} vs {_shown(right)}")]
    found = []
    for column in [*left, *(c for c in right if c not in left)]:
        if column not in right:
            found.append((column, f"only in {na}"))
        elif column not in left:
            found.append((column, f"only in {nb}"))
        elif normal(left[column]) != normal(right[column]):
            found.append((column, f"{_shown(left[column])} vs {_shown(right[column])}"))
    return found


def _shown(value: Any) -> str:
    return repr(plain(value))


def _text(value: Any) -> str | None:
    return None if values.is_missing(value) else str(value)


def _event_rows(side: _Side, found: list[tuple[int, int, str]]) -> pd.DataFrame:
    """The unmatched events of one side as event rows (in its seq order), with ``change`` and ``note``."""
    found = sorted(found)
    rows = side.events.iloc[[row for row, _, _ in found]].reset_index(drop=True)
    rows["change"] = pd.array([n for _, n, _ in found], dtype="Int64")
    rows["note"] = [note for _, _, note in found]
    return rows


def _state_differences(sides: list[_Side], names: tuple[str, str]) -> tuple[pd.DataFrame, dict[str, int]]:
    """The final states compared table by table, by key: one row per row (or column) that differs.

    A table replayed on one side only is compared with an empty table; a
    table without key columns is compared as whole rows.
    """
    na, nb = names
    states = [materialize(side.events) for side in sides]
    rows: list[tuple[Any, ...]] = []
    counts: dict[str, int] = {}
    for table in sorted(set(states[0]) | set(states[1])):
        given: list[pd.DataFrame] = [state.get(table) for state in states]  # one at least: the table is in one
        frames = [
            frame if frame is not None else pd.DataFrame(columns=given[1 - i].columns) for i, frame in enumerate(given)
        ]
        left, right = frames
        both = [c for c in left.columns if c in set(right.columns)]
        declared = states[0].key_columns.get(table) or states[1].key_columns.get(table) or []
        key = [c for c in declared if c in both] or both
        diff = diff_tables(left, right, key)
        shown = (lambda record, key=key: key_text(record[c] for c in key)) if declared else (lambda record: None)
        found: list[tuple[str, str | None, str, list[str], str | None, str | None]]
        found = [(table, None, f"column only in {na}", [c], None, None) for c in diff.columns_only_a]
        found += [(table, None, f"column only in {nb}", [c], None, None) for c in diff.columns_only_b]
        for record in diff.only_a.to_dict("records"):
            found.append((table, shown(record), f"only in {na}", [], json_text(record), None))
        for record in diff.only_b.to_dict("records"):
            found.append((table, shown(record), f"only in {nb}", [], None, json_text(record)))
        columns = diff.cells.groupby("key", sort=False)["column"].agg(list).to_dict() if len(diff.cells) else {}
        for i, j in diff.different:
            record, other = left.iloc[i].to_dict(), right.iloc[j].to_dict()
            text = key_text(record[c] for c in key)
            found.append(
                (
                    table,
                    text if declared else None,
                    "different",
                    columns.get(text, []),
                    json_text(record),
                    json_text(other),
                )
            )
        rows += found
        counts[table] = len(found)
    return object_columns(
        pd.DataFrame(rows, columns=["table", "key", "found", "columns", f"row_{na}", f"row_{nb}"])
    ), counts


def _summary(
    sides: list[_Side], counts: dict[str, dict[str, int]], state_counts: dict[str, int], names: tuple[str, str]
) -> pd.DataFrame:
    na, nb = names
    tables = sorted(set(counts) | set(state_counts))
    rows = [
        (
            t,
            sides[0].counts.get(t, 0),
            sides[1].counts.get(t, 0),
            counts.get(t, {}).get("matched", 0),
            counts.get(t, {}).get("only_a", 0),
            counts.get(t, {}).get("only_b", 0),
            counts.get(t, {}).get("different", 0),
            state_counts.get(t, 0),
        )
        for t in tables
    ]
    return pd.DataFrame(
        rows, columns=["table", na, nb, "matched", f"only_{na}", f"only_{nb}", "different", "state_differences"]
    )
