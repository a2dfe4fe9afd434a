"""The sequential replay of one table: a row state machine walked change by change.

The columnar engine (:mod:`cdckit.analysis.replay`) answers almost every key with
window functions; this walk is kept for the changes whose meaning depends on
what came before in a way windows cannot express cheaply: rows whose primary
key changes (followed as chains) and tables without a key (a multiset of
rows). Both engines call it, on those rows only.

Rules (one change at a time, in replay order; which change does not fit is the state machine of
:mod:`cdckit.analysis.transitions`, the one every engine follows):

- ``insert`` and ``read`` (snapshot) rows set the row; an insert of a live key
  replaces it and is reported;
- an ``update`` replaces the row with its after image, or, for dialects that
  send only the changed columns (SharePlex, UniVerse), merges the after image
  onto the row; when the key changes, the old key disappears;
- a ``delete`` removes the row; for dialects whose images may leave
  unchanged columns out (TOAST), an ``insert`` right after a delete of another
  key at the same ``seq`` (a primary-key update sent as a delete and a create,
  as Debezium sends it) takes the columns its image leaves out from the
  deleted row (:func:`moved_row`);
- a ``truncate`` removes every row of the table (given a key, that key's row:
  the columnar engine hands a truncate to the walk once per key it clears);
- a table whose changes carry no key is kept as a multiset of whole rows: an
  update or delete removes the row equal to its before image, else the first
  row (in text order) the image describes (:func:`~cdckit.row_images.describes`: a column the
  image lacks says nothing, ``null`` and a column the row lacks are the same),
  and an update adds its after image (merged onto that row for partial images).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import pandas as pd

from .. import values
from ..dialects import registry
from ..python_columns import object_columns
from ..row_images import canonical_text, key_of, key_order, parse_image
from ..values import none_if_missing
from .transitions import GONE, LIVE, NEVER, problem

__all__ = [
    "Step",
    "Replayer",
    "replay_rows",
    "column_order",
    "old_key",
    "problem_rows",
    "is_partial",
    "history_frame",
    "moved_row",
]


@dataclass
class Step:
    """What one change did to one table: the row under its old key before, under its new key after
    (for a truncate of the whole table, ``cleared``: the keyed rows it removed); ``previous``: the change that
    last changed the row under its old key (None for a key not seen before, and for rows without a key)."""

    event: dict[str, Any]
    old_key: str | None
    new_key: str | None
    old_row: dict[str, Any] | None
    new_row: dict[str, Any] | None
    problem: str | None = None
    cleared: dict[str, dict[str, Any]] | None = None
    previous: dict[str, Any] | None = None


def old_key(op: Any, key: Any, key_columns: Any, before: Any) -> str | None:
    """The key a change starts from: the before image's key where it has one, else ``key``."""
    own = none_if_missing(key)
    if op != "update":
        return own
    return key_of(parse_image(before), key_columns) or own


class Replayer:
    """Replays one table's changes, in the order given.

    >>> r = Replayer(partial=False)
    >>> _ = r.apply({"op": "insert", "key": "[1]", "key_columns": ["id"], "before": None,
    ...              "after": '{"id":1,"name":"a"}'})
    >>> step = r.apply({"op": "update", "key": "[1]", "key_columns": ["id"], "before": '{"id":1,"name":"a"}',
    ...                 "after": '{"id":1,"name":"b"}'})
    >>> r.rows, step.old_row
    ({'[1]': {'id': 1, 'name': 'b'}}, {'id': 1, 'name': 'a'})
    """

    def __init__(self, partial: bool = False) -> None:
        self.partial = partial
        self.rows: dict[str, dict[str, Any]] = {}
        self.bag: Counter[str] = Counter()
        #: The live keyless rows' texts by their set of columns, so a before image that is not a whole row
        #: as it stands is looked up shape by shape (:meth:`_holding`), not by reading every row.
        self.shapes: dict[frozenset, set[str]] = {}
        #: For partial images: (a shape of rows, the columns a partial image holds of it) -> the rows' values of
        #: those columns (as text) -> the rows' texts; built on first use, then kept up to date.
        self._index: dict[tuple[frozenset, tuple[str, ...]], dict[str, set[str]]] = {}
        self._deleted: tuple[Any, str, dict[str, Any]] | None = None  # the last step, when a delete: seq, key, row
        #: Keys removed (deleted, truncated, moved away) and not set since: ``GONE`` rather than ``NEVER``.
        self.gone: set[str] = set()
        #: The change that last changed each key's row (the ``previous`` of the next step of the key).
        self.last: dict[str, dict[str, Any]] = {}
        #: Whether a snapshot row of the table has been walked (an event's ``_snapshot_before`` says it instead
        #: where the walk does not see the whole table).
        self.snapshot = False

    def apply(self, event: dict[str, Any]) -> Step:
        """Apply one change; returns what it did."""
        deleted, self._deleted = self._deleted, None
        step = self._apply(event, deleted)
        if step.event["op"] == "delete" and step.old_row is not None and step.old_key is not None:
            self._deleted = (none_if_missing(event.get("seq")), step.old_key, step.old_row)
        if step.event["op"] == "read":
            self.snapshot = True
        for key in (step.old_key, step.new_key, *(step.cleared or ())):
            if key is not None:
                self.last[key] = event
        return step

    def state(self, key: str) -> int | None:
        """Where ``key``'s row is now: :data:`~cdckit.analysis.transitions.LIVE`, ``GONE`` or ``NEVER``."""
        return LIVE if key in self.rows else GONE if key in self.gone else NEVER

    def _problem(self, event: dict[str, Any], key: str, has_after: bool) -> str | None:
        snapshot = event.get("_snapshot_before")
        snapshot = self.snapshot if snapshot is None else bool(snapshot)
        return problem(event["op"], self.state(key), has_after, snapshot)

    def _remove(self, key: str) -> dict[str, Any] | None:
        self.gone.add(key)
        return self.rows.pop(key, None)

    def _set(self, key: str, row: dict[str, Any]) -> None:
        self.gone.discard(key)
        self.rows[key] = row

    def _apply(self, event: dict[str, Any], deleted: tuple[Any, str, dict[str, Any]] | None) -> Step:
        op = event["op"]
        columns = event.get("key_columns")
        before, after = parse_image(event.get("before")), parse_image(event.get("after"))
        key = none_if_missing(event.get("key"))
        if op == "truncate":
            if key is not None:  # one key's part of a truncate
                old = self._remove(key)
                return Step(event, key, None, old, None) if old is not None else Step(event, None, None, None, None)
            cleared, self.rows = self.rows, {}
            self.gone.update(cleared)
            self.bag.clear()
            self.shapes.clear()
            self._index.clear()
            return Step(event, None, None, None, None, cleared=cleared)
        if key is None:
            return self._apply_keyless(event, op, before, after)
        if op in ("insert", "read"):
            old = self.rows.get(key)
            found = self._problem(event, key, after is not None)
            if after is None:
                return Step(event, key, key, old, old, found, previous=self.last.get(key))
            if self.partial and op == "insert" and deleted is not None:
                after = moved_row(after, key, event.get("seq"), deleted)
            step = Step(event, key, key, old, after, found, previous=self.last.get(key))
            self._set(key, after)
            return step
        if op == "delete":
            found = self._problem(event, key, after is not None)
            previous = self.last.get(key)
            old = self._remove(key)
            return Step(event, key, None, old, None, found, previous=previous)
        start = key_of(before, columns) or key
        current = self.rows.get(start)
        found = self._problem(event, start, after is not None)
        previous = self.last.get(start)
        if after is None:
            return Step(event, start, start, current, current, found, previous=previous)
        if self.partial:
            base = current if current is not None else (before or {})
            new_row = {**base, **after}
        else:
            new_row = after
        end = key_of(new_row, columns) or key
        if end != start:
            self._remove(start)
        self._set(end, new_row)
        return Step(event, start, end, current, new_row, found, previous=previous)

    def _apply_keyless(self, event: dict[str, Any], op: str, before: dict | None, after: dict | None) -> Step:
        """A change to a table without a key: the multiset of rows."""
        problem = None
        row = before
        if op in ("update", "delete") and before is not None:
            text: str | None
            text = canonical_text(before)
            if self.bag[text] <= 0:  # not the whole row as it stands: the first row the image describes
                text, row = self._holding(before)
            if text is not None and row is not None and self.bag[text] > 0:  # (a row where there is a text)
                self.bag[text] -= 1
                if not self.bag[text]:
                    del self.bag[text]
                    self._forget(text, row)
            else:
                problem = f"{op} of a row not in the table"
        elif op in ("update", "delete"):
            problem = f"{op} without a before image cannot be matched to a row"
        if op != "delete" and after is not None:
            if self.partial and op == "update" and row is not None:
                after = {**row, **after}
            text = canonical_text(after)
            if not self.bag[text]:
                self._remember(text, after)
            self.bag[text] += 1
        return Step(event, None, None, before, after if op != "delete" else None, problem)

    def _holding(self, image: dict[str, Any]) -> tuple[str | None, dict[str, Any] | None]:
        """The first row of the multiset (in text order) that ``image`` describes
        (:func:`~cdckit.row_images.describes`), when no row is the image itself.

        Rows with the image's own columns are described only by an equal image (already looked up); rows
        whose columns the image all holds are found by the image cut to their columns (the image's other
        columns must be null); rows with columns the image lacks (a partial image) through an index of their
        values of the columns the image holds, per shape (built on first use, kept up to date after).
        """
        columns = frozenset(image)
        found: list[tuple[str, dict[str, Any]]] = []
        for shape, texts in self.shapes.items():
            if not texts or shape == columns:
                continue
            if shape <= columns:
                if any(image[name] is not None for name in columns - shape):
                    continue
                cut = {name: image[name] for name in shape}
                text = canonical_text(cut)
                if text in texts:
                    found.append((text, cut))
                continue
            if any(image[name] is not None for name in columns - shape):
                continue  # a value where the rows have no column: describes none of them
            held = tuple(sorted(columns & shape))
            described = self._indexed(shape, held).get(_cut_text(image, held))
            if described:
                text = min(described)
                found.append((text, values.loads(text)))
        return min(found, key=lambda pair: pair[0]) if found else (None, None)

    def _indexed(self, shape: frozenset, held: tuple[str, ...]) -> dict[str, set[str]]:
        """The live rows of ``shape`` by their values of the ``held`` columns (built on first use)."""
        index = self._index.get((shape, held))
        if index is None:
            index = self._index[(shape, held)] = {}
            for text in self.shapes.get(shape, ()):
                index.setdefault(_cut_text(values.loads(text), held), set()).add(text)
        return index

    def _remember(self, text: str, row: dict[str, Any]) -> None:
        """A row text newly live: in its shape and in every index of its shape."""
        shape = frozenset(row)
        self.shapes.setdefault(shape, set()).add(text)
        for (indexed, held), index in self._index.items():
            if indexed == shape:
                index.setdefault(_cut_text(row, held), set()).add(text)

    def _forget(self, text: str, row: dict[str, Any]) -> None:
        """A row text no longer live: out of its shape and every index of its shape."""
        shape = frozenset(row)
        self.shapes[shape].discard(text)
        for (indexed, held), index in self._index.items():
            if indexed == shape:
                index.get(_cut_text(row, held), set()).discard(text)

    def state_rows(self) -> list[dict[str, Any]]:
        """The live rows: keyed rows in key order, then keyless rows in text order."""
        keyed = [row for _, row in sorted(self.rows.items(), key=lambda kv: key_order(kv[0]))]
        keyless = [values.loads(text) for text, n in sorted(self.bag.items()) for _ in range(n)]
        return keyed + keyless


def moved_row(after: dict[str, Any], key: str, seq: Any, deleted: tuple[Any, str, dict[str, Any]]) -> dict[str, Any]:
    """An insert's row when the change just before it deleted another key at the same position (``deleted``:
    that seq, key and row): a primary-key update sent as a delete and a create (Debezium); the columns the
    insert's image leaves out (unchanged TOAST values) keep the deleted row's values.

    >>> moved_row({"id": 2, "a": 1}, "[2]", "7", ("7", "[1]", {"id": 1, "a": 0, "big": "x"}))
    {'big': 'x', 'id': 2, 'a': 1}
    >>> moved_row({"id": 2}, "[2]", "8", ("7", "[1]", {"id": 1, "big": "x"}))
    {'id': 2}
    """
    where, old_key, row = deleted
    seq = none_if_missing(seq)
    if seq is None or where != seq or old_key == key or not (row.keys() - after.keys()):
        return after
    return {**{name: value for name, value in row.items() if name not in after}, **after}


def _cut_text(row: dict[str, Any], held: tuple[str, ...]) -> str:
    """The text of ``row``'s values of the ``held`` columns (equal values, equal texts)."""
    return canonical_text({name: row[name] for name in held})


def is_partial(dialect: Any) -> bool:
    """Whether ``dialect`` sends only the changed columns in an update's after image (SharePlex, UniVerse).

    >>> is_partial("shareplex"), is_partial("canal"), is_partial("no-such-dialect")
    (True, False, False)
    """
    return registry.flag(dialect, "partial_updates")


#: The columns :func:`replay_rows` reads.
REPLAY_COLUMNS = [
    "dialect",
    "_table",
    "key",
    "key_columns",
    "op",
    "before",
    "after",
    "seq",
    "_seq",
    "source",
    "partition",
    "offset",
    "event_time",
]


def _event_dicts(frame: pd.DataFrame) -> Iterator[dict[str, Any]]:
    columns = [c for c in frame.columns if c in REPLAY_COLUMNS or c.startswith("_")]
    for row in zip(*(frame[c].tolist() for c in columns)):
        event = {c: none_if_missing(v) for c, v in zip(columns, row)}
        if event.get("key_columns") is not None:  # a list, or an array in a frame read back from Parquet
            event["key_columns"] = list(event["key_columns"])
        yield event


def replay_rows(
    frame: pd.DataFrame, partial: dict[str, bool] | None = None
) -> Iterator[tuple[str, Replayer, list[Step], dict[str, str]]]:
    """Replay a frame of changes (already in replay order) table by table: ``(table, replayer, steps, ranks)``.

    ``partial``: per table, whether updates merge (default: from the dialect
    of the table's first change). Columns starting with ``_`` ride along in
    each step's event (``_pos``, ``_row``...). ``ranks`` say where each
    column first appears in seq order (a text that sorts like that position:
    ``_seq``, source, partition, offset, place in the event's names), for
    :func:`column_order`.

    >>> frame = pd.DataFrame({"dialect": ["canal"] * 2, "_table": ["s.t"] * 2, "key": [None, None],
    ...     "key_columns": [None, None], "op": ["insert", "delete"], "before": [None, '{"a":1}'],
    ...     "after": ['{"a":1}', None], "seq": ["1", "2"], "_seq": ["1", "2"], "source": ["f", "f"],
    ...     "partition": [None, None], "offset": [0, 1], "event_time": [None, None]})
    >>> [(table, dict(r.bag), [s.problem for s in steps]) for table, r, steps, _ in replay_rows(frame)]
    [('s.t', {}, [None, None])]
    """
    tables: dict[str, tuple[Replayer, list[Step], dict[str, str]]] = {}
    for event in _event_dicts(frame):
        table = event["_table"]
        if table not in tables:
            mode = partial[table] if partial is not None and table in partial else is_partial(event["dialect"])
            tables[table] = (Replayer(partial=bool(mode)), [], {})
        replayer, steps, ranks = tables[table]
        event["before"], event["after"] = parse_image(event["before"]), parse_image(event["after"])  # parsed once
        partition = "" if event["partition"] is None else f"{int(event['partition']):020d}"
        where = f"{event['_seq']}\x00{event['source']}\x00{partition}\x00{int(event['offset']):020d}\x00"
        names = [*(event.get("key_columns") or ()), *(event["before"] or ()), *(event["after"] or ())]
        for position, name in enumerate(names):
            rank = f"{where}{position:06d}"
            if ranks.get(name, "\U0010ffff") > rank:
                ranks[name] = rank
        steps.append(replayer.apply(event))
    for table, (replayer, steps, ranks) in tables.items():
        yield table, replayer, steps, ranks


def column_order(ranks: dict[str, Any]) -> list[str]:
    """Columns in the order of their ranks (where each column first appears), ties by name.

    >>> column_order({"b": (1, 0), "a": (1, 0), "id": (0, 0)})
    ['id', 'a', 'b']
    """
    return sorted(ranks, key=lambda name: (ranks[name], name))


def problem_rows(table: str, steps: Iterable[Step]) -> list[dict[str, Any]]:
    """The steps that did not apply cleanly, as rows of :data:`cdckit.analysis.replay.PROBLEM_COLUMNS`
    (plus ``_pos``)."""
    return [
        {
            "table": table,
            "key": s.new_key or s.old_key,
            "source": s.event["source"],
            "offset": s.event["offset"],
            "seq": s.event["seq"],
            "op": s.event["op"],
            "problem": s.problem,
            "_pos": s.event.get("_pos"),
            "_row": s.event.get("_row"),
            "_previous_row": None if s.previous is None else s.previous.get("_row"),
        }
        for s in steps
        if s.problem
    ]


_ABSENT = object()


#: The columns of a row's history before the row's own.
HISTORY_COLUMNS = ("version", "op", "event_time", "seq", "source", "offset", "changed", "problem")


def history_frame(steps: Iterable[Step], wanted: str, columns: list[str]) -> pd.DataFrame:
    """One row's history from walked steps: a line per change of key ``wanted``, the row after it, what changed.

    >>> r = Replayer()
    >>> steps = [r.apply({"op": "insert", "key": "[1]", "key_columns": ["id"], "after": '{"id":1,"a":2}',
    ...                   "event_time": None, "seq": "1", "source": "f", "offset": 0})]
    >>> history_frame(steps, "[1]", ["id", "a"])[["version", "op", "changed", "a"]].values.tolist()
    [[1, 'insert', ['id', 'a'], 2]]

    A row column named as one of the history's own (a table with a ``version`` or ``source`` column) comes
    with the suffix ``" (row)"``, never in their place:

    >>> steps = [Replayer().apply({"op": "insert", "key": "[1]", "key_columns": ["id"], "after": '{"id":1,"version":7}',
    ...                            "event_time": None, "seq": "1", "source": "f", "offset": 0})]
    >>> history_frame(steps, "[1]", ["id", "version"])[["version", "version (row)"]].values.tolist()
    [[1, 7]]
    """
    labels = {c: f"{c} (row)" if c in HISTORY_COLUMNS else c for c in columns}
    lines = []
    old: dict[str, Any] | None
    new: dict[str, Any] | None
    for step in steps:
        if step.cleared is not None and wanted in step.cleared:  # a truncate removed it with the rest
            old, new = step.cleared[wanted], None
        elif wanted not in (step.old_key, step.new_key):
            continue
        else:
            old = step.old_row  # the row before the change, also when it moves here from another key
            new = step.new_row if step.new_key == wanted else None
        changed = [c for c in columns if (old or {}).get(c, _ABSENT) != (new or {}).get(c, _ABSENT)]
        op = step.event["op"]
        if step.old_key != step.new_key and op == "update":
            op = "update (key moved here)" if new is not None else "update (key moved away)"
        lines.append(
            {
                "op": op,
                "event_time": step.event["event_time"],
                "seq": step.event["seq"],
                "source": step.event["source"],
                "offset": step.event["offset"],
                "changed": changed,
                "problem": step.problem,
                **{labels[c]: (new or {}).get(c) for c in columns},
            }
        )
    out = object_columns(pd.DataFrame(lines, columns=[*HISTORY_COLUMNS[1:], *labels.values()]))
    for column in labels.values():  # whole numbers stay whole where a version has none (a delete, a key moved away)
        whole = whole_numbers([line[column] for line in lines])
        if whole is not None:
            out[column] = whole
    out.insert(0, "version", range(1, len(out) + 1))
    return out


def whole_numbers(column: list[Any]) -> pd.api.extensions.ExtensionArray | None:
    """A column of JSON whole numbers and nulls as nullable ``Int64`` (the kind the typed state gives them),
    not float with NaN; None when the column holds anything else (or a number past 64 bits).

    >>> whole_numbers([5, None]).tolist(), whole_numbers([5, 2.5]), whole_numbers([True, None])
    ([5, <NA>], None, None)
    """
    found = [v for v in column if v is not None]
    if not found or not all(type(v) is int for v in found):
        return None
    try:
        return pd.array(column, dtype="Int64")
    except (OverflowError, TypeError, ValueError):
        return None
