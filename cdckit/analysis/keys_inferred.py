"""Key columns proposed for the tables a capture names no key for, with the evidence for each.

:func:`infer_keys` looks, table by table, first at what the capture itself
shows, then at the data:

- **named by the capture**: a table whose changes carry key columns is listed,
  never re-proposed (``replica identity (at read)`` where the reader proved
  them from a PostgreSQL capture's old tuples: ``report["inferred_keys"]``);
- **replica identity**: the old tuples of a PostgreSQL capture (a delete's, or
  an update's old key) hold exactly the identity columns under ``REPLICA
  IDENTITY DEFAULT``: when every one holds the same columns, fewer than the
  rows', those are the key (the rule of
  :class:`cdckit.dialects.postgres.IdentityEvidence`, applied to the frame's
  images; a connector's nulls and type defaults filled into a delete's
  image, :func:`cdckit.analysis.connector_defaults.known_values`, are not held values);
- **pk-update pair**: a delete followed by a create of the same table at the
  same ``seq`` (a key change sent as two records, as Debezium sends it) must
  change a column of the key: a candidate both leave alike loses;
- **data**: the smallest set of columns (1, then 2, then 3), never null, that
  no update changes (an update's before and after images agree on it, where
  the before image is there) and that identifies the live rows at every point
  of the replay: replaying the table in canonical order as a multiset, no two
  live rows share its values and every delete or update finds exactly one live
  row with them. A value first met in a delete or update is a row live
  before the capture began (counted in the evidence). At equal size a column
  named ``id`` (then ``*_id``, ``*id``), an integer or text column, an earlier
  column in the image is preferred.

The check is columnar: the images are parsed once, each column's values
factorized, and a candidate's running count per value (+1 per row it adds,
-1 per row it removes, in replay order) must stay 0 or 1.

>>> import cdckit
>>> lines = ("BEGIN 7\\ntable public.t: INSERT: id[integer]:1 name[text]:'a'\\n"
...          "table public.t: INSERT: id[integer]:2 name[text]:'a'\\n"
...          "table public.t: UPDATE: id[integer]:1 name[text]:'b'\\nCOMMIT 7")
>>> proposal = infer_keys(cdckit.read(lines, dialect="pg_test_decoding"))
>>> dict(proposal)
{'public.t': ['id']}
>>> proposal.evidence.loc[0, ["how", "runner_up", "runner_up_lost"]].tolist()
['data', 'name', 'two live rows share name = ["a"] (change 2 of 3: insert)']
"""

from __future__ import annotations

import html
from collections.abc import Iterable
from itertools import combinations
from typing import Any

import numpy as np
import pandas as pd

from ..dialects.postgres import IdentityEvidence
from ..frame import CHANGE_OPS, table_names
from ..python_columns import object_columns
from .connector_defaults import known_values
from .image_codes import ImageCodes
from .ordering import sort_events
from .ordering.identity import REDELIVERY_IDENTITY, SNAPSHOT_PLACE, snapshot_place

__all__ = ["infer_keys", "InferredKeys", "EVIDENCE_COLUMNS", "MAX_WIDTH", "MAX_COLUMNS"]

#: The columns of :attr:`InferredKeys.evidence`.
EVIDENCE_COLUMNS = ["table", "columns", "how", "changes", "detail", "runner_up", "runner_up_lost"]
#: The most columns a proposed key has.
MAX_WIDTH = 3
#: Combinations of 2 and 3 columns are drawn from this many preferred columns (every single column is tried).
MAX_COLUMNS = {2: 8, 3: 6}


class InferredKeys(dict):
    """The proposal: table name -> key columns for each keyless table a key was found for, usable as
    ``keys=`` or in :func:`cdckit.with_keys`; :attr:`evidence` says how each table was decided."""

    def __init__(self, keys: dict[str, list[str]], evidence: pd.DataFrame) -> None:
        super().__init__(keys)
        #: One row per table with row changes: ``table``, ``columns`` (proposed or named), ``how``
        #: (``named by the capture``, ``replica identity (at read)``, ``replica identity``, ``pk-update pair``,
        #: ``data``, ``none``), ``changes`` (row changes checked), ``detail``, ``runner_up``, ``runner_up_lost``.
        self.evidence = evidence

    def _lines(self) -> list[tuple[str, str, str]]:
        out = []
        for row in self.evidence.itertuples(index=False):
            columns = ", ".join(row.columns) if row.columns else "no key"
            text = f"{row.how}; {row.changes} changes; {row.detail}"
            if row.runner_up:
                text += f"; runner-up {row.runner_up}: {row.runner_up_lost}"
            out.append((row.table, columns, text))
        return out

    def __repr__(self) -> str:
        head = f"InferredKeys({dict.__repr__(self)})"
        return "\n".join([head] + [f"  {table}: {columns} ({text})" for table, columns, text in self._lines()])

    def _repr_html_(self) -> str:
        rows = "".join(
            f"<tr><th style='text-align:left'>{html.escape(table)}</th>"
            f"<td style='text-align:left'>{html.escape(columns)}</td>"
            f"<td style='text-align:left'>{html.escape(text)}</td></tr>"
            for table, columns, text in self._lines()
        )
        return (
            "<table><tr><th style='text-align:left'>table</th><th style='text-align:left'>key</th>"
            f"<th style='text-align:left'>evidence</th></tr>{rows}</table>"
        )


def infer_keys(events: pd.DataFrame, by: str = "seq") -> InferredKeys:
    """Propose key columns for each table of ``events`` whose changes name none, with the evidence.

    ``by`` is the replay order (as :func:`cdckit.sort_events`). The result maps
    ``"schema.table"`` to its key columns (feed it to :func:`cdckit.with_keys`
    or ``keys=``) and has ``.evidence`` (see :class:`InferredKeys`).

    >>> import cdckit
    >>> events = cdckit.read(cdckit.samples.path("debezium/shop"))
    >>> proposal = infer_keys(events.assign(key=None, key_columns=None))
    >>> dict(proposal)
    {'shop.customers': ['id'], 'shop.order_items': ['order_id', 'line_no']}
    >>> infer_keys(events).evidence["how"].tolist()
    ['named by the capture', 'named by the capture']
    """
    names = table_names(events)
    changes = events["op"].isin(CHANGE_OPS + ("truncate",)).to_numpy() & names.notna().to_numpy()
    frame = events.loc[changes].assign(_table=names[changes])
    frame[SNAPSHOT_PLACE] = snapshot_place(frame)
    frame = sort_events(frame, by=by)
    frame = frame.loc[~_redelivered(frame)]
    read_keys = (events.attrs.get("report") or {}).get("inferred_keys") or {}
    keys: dict[str, list[str]] = {}
    rows: list[dict[str, Any]] = []
    for name, table in frame.groupby("_table", sort=True):
        named = table["key_columns"].dropna()
        rows_ = table[table["op"] != "truncate"]
        if len(named):
            found = read_keys.get(name)
            rows.append(
                _row(
                    name,
                    list(named.iloc[0]),
                    "replica identity (at read)" if found else "named by the capture",
                    len(rows_),
                    found["evidence"] if found else "the capture names the key columns",
                )
            )
            continue
        row = _infer_table(name, table)
        rows.append(row)
        if row["columns"]:
            keys[name] = row["columns"]
    return InferredKeys(keys, object_columns(pd.DataFrame(rows, columns=EVIDENCE_COLUMNS)))


def _redelivered(frame: pd.DataFrame) -> np.ndarray:
    """Per change (in replay order), whether it repeats an earlier one exactly (seq set): the images are compared
    only where the narrow identity repeats."""
    identity = ["dialect", "_table", *REDELIVERY_IDENTITY]
    narrow = [c for c in identity if c not in ("before", "after")]
    again = frame.duplicated(narrow, keep=False).to_numpy() & frame["seq"].notna().to_numpy()
    redelivered = np.zeros(len(frame), dtype=bool)
    redelivered[again] = frame.loc[again, identity].duplicated().to_numpy()
    return redelivered


def _row(
    table: str,
    columns: list[str] | None,
    how: str,
    changes: int,
    detail: str,
    runner_up: str | None = None,
    lost: str | None = None,
) -> dict[str, Any]:
    return {
        "table": table,
        "columns": columns,
        "how": how,
        "changes": changes,
        "detail": detail,
        "runner_up": runner_up,
        "runner_up_lost": lost,
    }


def _never_null(images: ImageCodes, column: str) -> str | None:
    """Why ``column`` cannot be a key column (null or missing where a change needs it), or None."""
    present = images.present(column)
    b, a = present[: images.n], present[images.n :]
    inserts = images.adds & ~images.is_update
    deletes = images.removes & ~images.is_update
    if not a[inserts].all():
        return "null or missing in an inserted row"
    if not b[deletes].all():
        return "null or missing in a deleted row's before image"
    if (~b[images.is_update] & ~a[images.is_update]).any():
        return "null or missing in an update"
    return None


def _check(images: ImageCodes, columns: tuple[str, ...], moves: bool = False) -> tuple[str | None, int]:
    """Why ``columns`` do not identify the live rows (None when they do), and how many of their values a
    change first removes (rows live before the capture). ``moves``: an update may change them (a replica
    identity's key), else an update that changes them disqualifies them."""
    n = images.n
    codes = images.combined(columns)
    b, a = codes[:n], codes[n:]
    name = ", ".join(columns)
    changed = images.is_update & (b >= 0) & (a >= 0) & (b != a)
    if changed.any() and not moves:
        return (
            f"an update changes it ({int(changed.sum())} of {int((images.is_update & images.has_before).sum())}"
            f" updates with a before image)"
        ), 0
    pairs = images.pairs
    if len(pairs) and not moves:
        kept = b[pairs] == a[pairs + 1]
        if kept.any():
            at = int(pairs[kept][0])
            return (
                f"a key change sent as a delete and a create at one seq keeps it ({name} = "
                f"{images.value(columns, at, False)})"
            ), 0
    old = np.where(images.removes, np.where(b >= 0, b, a), -1)
    new = np.where(images.adds, np.where(a >= 0, a, old), -1)
    position = np.arange(n, dtype=np.int64)
    taken, given = old >= 0, new >= 0
    value = np.concatenate([old[taken], new[given]])
    segment = np.concatenate([images.segment[taken], images.segment[given]]).astype(np.int64)
    step = np.concatenate([2 * position[taken], 2 * position[given] + 1])  # a change removes, then adds
    delta = np.concatenate([np.full(taken.sum(), -1), np.full(given.sum(), 1)]).astype(np.int64)
    span = int(codes.max()) + 2 if len(codes) else 1
    order = np.argsort((segment * span + value) * (2 * n + 2) + step, kind="stable")
    value, segment, step, delta = value[order], segment[order], step[order], delta[order]
    group = np.r_[True, (value[1:] != value[:-1]) | (segment[1:] != segment[:-1])] if len(value) else value
    starts = np.flatnonzero(group)
    running = np.cumsum(delta)
    base = np.repeat(running[starts] - delta[starts], np.diff(np.r_[starts, len(value)]))
    prior = np.repeat((delta[starts] < 0) & (segment[starts] == 0), np.diff(np.r_[starts, len(value)]))
    count = running - base + prior
    bad = (count < 0) | (count > 1)
    prior_rows = int(((delta[starts] < 0) & (segment[starts] == 0)).sum())
    if not bad.any():
        return None, prior_rows
    first = int(np.argmin(np.where(bad, step, np.iinfo(np.int64).max)))
    at = int(step[first] // 2)
    shown = images.value(columns, at, after=delta[first] > 0 or images.image(at, after=False) is None)
    if count[first] > 1:
        return f"two live rows share {name} = {shown} (change {at + 1} of {n}: {images.ops[at]})", 0
    return f"a {images.ops[at]} finds no live row with {name} = {shown} (change {at + 1} of {n})", 0


def _before_capture(rows: int) -> str:
    return f" ({rows} first met in a delete or update: live before the capture began)" if rows else ""


def _preference(images: ImageCodes, columns: tuple[str, ...]) -> tuple:
    """Sort key of a candidate: id-named columns first, then integer or text, then earlier in the image."""

    def named(column: str) -> int:
        low = column.lower()
        return 0 if low == "id" else 1 if low.endswith("_id") else 2 if low.endswith("id") else 3

    return (
        sum(named(c) for c in columns),
        sum(images.kind[c] for c in columns),
        sorted(images.columns.index(c) for c in columns),
    )


def _identity(images: ImageCodes) -> tuple[list[str] | None, str, bool]:
    """What the table's old tuples prove of its replica identity (:class:`IdentityEvidence`), why, and whether
    any old tuple holds fewer columns than the rows (whether the evidence is worth telling)."""
    evidence = IdentityEvidence()
    if images.row_columns:  # the columns rows hold: a FULL identity's old tuples leave its NULLs out
        evidence.row(tuple(images.row_columns))
    deletes = np.flatnonzero(images.ops == "delete")
    for before in images.images(deletes, after=False):
        held = known_values(before, None) if before is not None else None
        evidence.old(tuple(held) if held is not None else None)
    updates = np.flatnonzero(images.is_update & images.has_before & images.has_after)
    shapes = images.old_tuple_shapes(updates) if len(updates) else {}
    if shapes is not None and not evidence.needs_values(shapes):  # their columns decide: no image parsed
        for columns, count in shapes.items():
            evidence.old_columns(columns, count)
        updates = updates[:0]
    for before, after in zip(images.images(updates, after=False), images.images(updates, after=True)):
        if before is None or after is None:
            continue
        # an old tuple equal to the row on its columns is the identity the plugin repeats on every update
        # (wal2json) unless it is the whole (non-null) row: only then does it look like REPLICA IDENTITY FULL
        if len(before) < len(after):
            whole = sum(v is not None for v in after.values())
            changed = len(before) < whole or any(after.get(c) != v for c, v in before.items())
        else:
            changed = before != after
        evidence.old(tuple(before), changed=changed)
    width = len(images.row_columns)
    return (*evidence.key(), any(len(old) < width for old in evidence.olds))


def _candidates(images: ImageCodes, usable: list[str]) -> Iterable[tuple[str, ...]]:
    """The column sets tried, smallest first, each size in order of preference, pairs and triples from the
    preferred columns only (:data:`MAX_COLUMNS`). Sets with a floating-point column come after every other:
    a measure whose values happen to differ is no key (a price beside an order's id and line number)."""
    ranked = sorted(usable, key=lambda c: _preference(images, (c,)))
    exact = [c for c in ranked if images.kind[c] != 2]
    for pool, floats in ((exact, False), (ranked, True)):
        for width in range(1, MAX_WIDTH + 1):
            chosen = pool if width == 1 else pool[: MAX_COLUMNS[width]]
            for columns in sorted(combinations(chosen, width), key=lambda cs: _preference(images, cs)):
                if floats == any(images.kind[c] == 2 for c in columns):
                    yield columns


def _infer_table(name: str, table: pd.DataFrame) -> dict[str, Any]:
    """The evidence row of one table without key columns."""
    images = ImageCodes(table)
    n = images.n
    if not n:
        return _row(name, None, "none", 0, "no row changes (only truncates)")
    proved, why, shows_identity = _identity(images)
    if proved is not None and all(images.usable(c) for c in proved):
        lost, prior = _check(images, tuple(proved), moves=True)
        if lost is None:
            return _row(
                name, proved, "replica identity", n, f"{why}; they identify the live rows{_before_capture(prior)}"
            )
        why = f"old tuples hold {', '.join(proved)}, but: {lost}"
    usable: list[str] = []
    skipped: list[tuple[str, str]] = []
    for column in images.columns:
        reason = images.unusable.get(column) or _never_null(images, column)
        if reason:
            skipped.append((column, reason))
        else:
            usable.append(column)
    tried: list[tuple[tuple[str, ...], str | None]] = []
    winner = None
    for columns in _candidates(images, usable):
        if winner is not None and (len(columns) != len(winner) or len(tried) > 1):
            break  # the runner-up is the best that lost before the winner, else the next of its size
        reason, rows_before = _check(images, columns)
        tried.append((columns, reason))
        if reason is None and winner is None:
            winner, prior = columns, rows_before
    cap = f"{len(tried)} candidate(s) tried of {len(usable)} usable column(s)"
    if max((len(c) for c, _ in tried), default=0) > 1:
        cap += f"; pairs from the {MAX_COLUMNS[2]} and triples from the {MAX_COLUMNS[3]} preferred columns"
    if skipped:
        cap += "; never null: not " + ", ".join(f"{c} ({r})" for c, r in skipped[:4])
    old_tuples = f"; old tuples: {why}" if proved is not None or shows_identity else ""
    if winner is None:
        if not usable:
            reasons = "; ".join(f"{c}: {r}" for c, r in skipped[:4]) or "no columns"
            return _row(
                name,
                None,
                "none",
                n,
                f"no column set identifies the live rows: no column is never null ({reasons}); {why}",
            )
        first, reason = tried[0] if tried else ((), "nothing tried")
        return _row(
            name,
            None,
            "none",
            n,
            f"no column set identifies the live rows: {cap}{old_tuples}",
            ", ".join(first),
            reason,
        )
    others = [(c, r) for c, r in tried if c != winner]
    runner, lost = others[0] if others else (None, None)
    if runner is not None and lost is None:
        lost = (
            f"identifies the rows too, ranked lower (named, typed or placed less like a key than {', '.join(winner)})"
        )
    how = "pk-update pair" if len(images.pairs) else "data"
    detail = (
        f"no update changes it ({int((images.is_update & images.has_before).sum())} updates with a before "
        f"image) and it identifies the live rows{_before_capture(prior)}"
    )
    if len(images.pairs):
        detail = f"each of {len(images.pairs)} key change(s) sent as a delete and a create changes it; " + detail
    if not (images.is_update & images.has_before).any() and images.is_update.any():
        detail += "; no update has a before image, so whether updates change it is not shown"
    return _row(name, list(winner), how, n, f"{detail}; {cap}{old_tuples}", ", ".join(runner) if runner else None, lost)
