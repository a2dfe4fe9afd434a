"""The findings about the changes of one row: redeliveries, semantic duplicates and inversions.

A row is a stream's table and key; changes without a key form one group per
table, their inversions judged per row image. Written with the integer codes
of :mod:`cdckit.analysis.ordering.codes`; images are compared by one hash of
``(op, before, after)`` per event, and every pair found equal is checked on
the texts (a hash collision, were there one, falls back to exact codes).

>>> frame = pd.DataFrame({"dialect": "d", "_table": "t", "key": "[1]", "source": "s", "offset": [0, 1],
...     "partition": pd.array([None] * 2, "Int64"), "op": "insert", "seq": ["1", "1"], "_seq": ["1", "1"],
...     "before": None, "after": ["x", "x"], "txn_id": None})
>>> key_findings(frame)["finding"].tolist()
['redeliveries']
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ...frame import CHANGE_OPS
from .catalogue import REPEAT_CAUSES
from .codes import (
    MISSING,
    Codes,
    first_alike,
    previous_in_group,
    ranks,
    run_starts,
    running_top,
    sorted_groups,
    stable_order,
)
from .identity import CHANGE_IDENTITY, REDELIVERY_IDENTITY, ROW_KEY
from .narrow import ARRIVAL
from .rows import finding_rows, take

__all__ = ["key_findings", "key_rows"]


def _same_images(frame: pd.DataFrame, at: np.ndarray, other: np.ndarray) -> bool:
    """Whether the events ``at`` have the same op and images as the events ``other`` (checked on the texts)."""
    for column in CHANGE_IDENTITY:
        a, b = (pd.Series(np.asarray(take(frame, column, rows), dtype=object)) for rows in (at, other))
        if not ((a.isna() & b.isna()) | (a == b)).all():
            return False
    return True


def key_findings(
    frame: pd.DataFrame, refused: np.ndarray | None = None, stream: Sequence[str] = ("dialect",)
) -> pd.DataFrame:
    """Redeliveries, semantic duplicates and inversions, per row key of a stream.

    Events without a key form one group per table; their inversions are
    judged per row (the before image, else the after image). ``refused``:
    the positions of the changes replay refuses (the impossible transitions
    of :mod:`cdckit.analysis.ordering.replayed`), which tell a retry from the
    source's own repeat.

    >>> frame = pd.DataFrame({"dialect": "d", "_table": "t", "key": "[1]", "source": "s", "offset": [0, 1, 2],
    ...     "partition": pd.array([None] * 3, "Int64"), "op": "insert", "seq": ["2", "1", "2"],
    ...     "_seq": ["2", "1", "2"], "before": None, "after": ["x", "y", "x"], "txn_id": None})
    >>> key_findings(frame)[["finding", "offset", "other_offset"]].values.tolist()
    [['redeliveries', 2, 0], ['inversions', 1, 0]]
    """
    return pd.concat(key_rows(Codes(frame), stream, refused), ignore_index=True)


def key_rows(codes: Codes, stream: Sequence[str], refused: np.ndarray | None = None) -> list[pd.DataFrame]:
    frame = codes.frame
    group = [*stream, *ROW_KEY]
    rows, start = sorted_groups(codes, np.flatnonzero(codes.op_is(CHANGE_OPS)), group, ARRIVAL)
    number = np.cumsum(start)
    with_seq = np.flatnonzero(codes.known("seq", rows))
    # an event with the REDELIVERY_IDENTITY of an earlier arrival is a redelivery of it: the same columns beyond
    # the change's own (seq as the capture gives it: _seq may carry the tie mark, ordering.sort) and the same
    # image code (CHANGE_IDENTITY)
    position = [codes(c, rows[with_seq]) for c in REDELIVERY_IDENTITY if c not in CHANGE_IDENTITY]
    for exact in (False, True):
        image = codes.images(exact)[rows]
        first = with_seq[first_alike([number[with_seq], *position, image[with_seq]])]
        again = first != with_seq
        redelivered, original = with_seq[again], first[again]
        kept = np.ones(len(rows), bool)
        kept[redelivered] = False
        firsts = np.flatnonzero(kept)
        duplicate, alike = _repeats(codes, rows, number, firsts, image)
        at, other = np.concatenate([redelivered, duplicate]), np.concatenate([original, alike])
        if exact or _same_images(frame, rows[at], rows[other]):
            break
    is_refused = np.zeros(len(frame), bool)
    if refused is not None:
        is_refused[refused] = True
    out = [
        finding_rows("redeliveries", frame, rows[redelivered], rows[original]),
        finding_rows(
            "semantic_duplicates",
            frame,
            rows[duplicate],
            rows[alike],
            detail=[REPEAT_CAUSES[bool(r)] for r in is_refused[rows[duplicate]]],
        ),
    ]

    # inversions: arrival order against the highest seq so far (seq == _seq where seq is set), among the events
    # of one partition (or of none): the partitions of a topic have no arrival order between them; a table
    # without a key per row (its image): changes of different rows may come in any order
    ranked = firsts[codes.known("seq", rows[firsts])]
    partition = codes("partition", rows[ranked])
    row = _row_codes(codes, rows[ranked])
    by_partition = stable_order([number[ranked], row, partition])
    ranked, partition, row = ranked[by_partition], partition[by_partition], row[by_partition]
    below, top = running_top(run_starts([number[ranked], row, partition]), codes("_seq", rows[ranked]))
    out.append(finding_rows("inversions", frame, rows[ranked[below]], rows[ranked[top[below]]]))
    return out


def _row_codes(codes: Codes, rows: np.ndarray) -> np.ndarray:
    """Per event, 0 where it names a key; else a code of the row it changes (its before image, else its after)."""
    keyless = ~codes.known("key", rows)
    out = np.zeros(len(rows), np.int64)
    if keyless.any():
        at = rows[keyless]
        before, after = codes.frame["before"].iloc[at], codes.frame["after"].iloc[at]
        image = pd.Series(np.where(before.notna().to_numpy(), before.to_numpy(object), after.to_numpy(object)))
        out[keyless] = ranks(image)  # one ranking: a row's before image and its after image meet
    return out


def _repeats(
    codes: Codes, rows: np.ndarray, number: np.ndarray, firsts: np.ndarray, image: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Semantic duplicates among ``firsts`` (positions in ``rows``, grouped by ``number``): each change equal (op
    and images) to the change of its row just before it in seq order, at another position (a seq of its own),
    unless the two are in different transactions (the source wrote it again). Returns them and those before."""
    partition = codes("partition", rows[firsts])
    partition = np.where((partition == MISSING) | (partition == 0), -1, partition)  # `partition or -1`
    keys = [number[firsts], *(codes(c, rows[firsts]) for c in ("_seq", "source")), partition]
    order = firsts[stable_order([*keys, codes("offset", rows[firsts])])]
    previous = previous_in_group(run_starts([number[order]]))
    has = previous >= 0
    at, before = order[has], order[previous[has]]
    seq_at, seq_before = codes("seq", rows[at]), codes("seq", rows[before])
    txn_at, txn_before = codes("txn_id", rows[at]), codes("txn_id", rows[before])
    same = (image[at] == image[before]) & ~((seq_at == seq_before) & (seq_at > 0))
    same &= ~((txn_at > 0) & (txn_before > 0) & (txn_at != txn_before))
    return at[same], before[same]
