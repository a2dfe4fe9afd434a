"""Pairing of updates that a dialect sends as two messages.

Some dialects send one update as two messages, a before half and an after
half that share the same sequence value. Their decoders mark each half
(``Event.half``); this module joins the halves into ONE update, whatever lies
between them and whichever arrives first. Halves are matched on dialect,
database, schema, table and ``seq``; several halves with the same identity
pair first-in, first-out.

>>> from cdckit.frame import Event
>>> p = Pairer()
>>> p.offer(Event("update", "U-", table="t", seq="1", before='{"a":1}', half="before"), "m0")
>>> merged, after_where, before_where = p.offer(
...     Event("update", "U+", table="t", seq="1", after='{"a":2}', half="after"), "m1")
>>> merged.before, merged.after, merged.op_raw, merged.half, after_where, before_where
('{"a":1}', '{"a":2}', 'U+', None, 'm1', 'm0')
"""

from __future__ import annotations

from collections import deque
from collections.abc import Hashable, Iterator
from dataclasses import replace
from typing import Any

from ..frame import Event, FastRow, event_row, row_problem

__all__ = ["Pairer", "PAIRED", "UNPAIRED", "identity", "unpaired_reason", "pair_adjacent", "PAIRED_AWAY", "sound_half"]

#: The report's skip reason of the two halves that became one update (counted once per update).
PAIRED = "update half: merged with its partner into one row"
#: Words in the quarantine reason of a half whose partner never came (the ordering report looks for them).
UNPAIRED = "with no partner half"


def identity(event: Event, dialect: str = "") -> tuple[Hashable, ...]:
    """What a half is matched on: dialect, database, schema, table and ``seq``."""
    return (dialect, event.database, event.schema, event.table, event.seq)


def unpaired_reason(event: Event) -> str:
    """The quarantine reason of an update half that never met its partner."""
    return f"{event.op_raw} {UNPAIRED} (table {event.table}, seq {event.seq})"


class Pairer:
    """Holds update halves until their partner arrives.

    ``offer(event, where)`` returns None while the event waits, or
    ``(merged event, after half's where, before half's where)`` once both
    halves are in; ``where`` is any position token the caller wants back.
    """

    def __init__(self) -> None:
        self._waiting: dict[tuple[Hashable, ...], deque[tuple[Event, Any]]] = {}
        self._count = 0

    def __len__(self) -> int:
        return self._count

    def offer(self, event: Event, where: Any, dialect: str = "") -> tuple[Event, Any, Any] | None:
        if event.half not in ("before", "after"):
            raise ValueError(f"not an update half: {event.half!r}")
        ident = identity(event, dialect)
        queue = self._waiting.get(ident)
        if queue and queue[0][0].half != event.half:
            partner, partner_where = queue.popleft()
            if not queue:
                del self._waiting[ident]
            self._count -= 1
            if event.half == "after":
                return merge(partner, event), where, partner_where
            return merge(event, partner), partner_where, where
        self._waiting.setdefault(ident, deque()).append((event, where))
        self._count += 1
        return None

    def __contains__(self, ident: tuple[Hashable, ...]) -> bool:
        """True when halves of this :func:`identity` wait for a partner."""
        return ident in self._waiting

    def waiting(self) -> list[tuple[Hashable, ...]]:
        """The identities of the halves that wait for a partner."""
        return list(self._waiting)

    def drain(self) -> Iterator[tuple[Event, Any]]:
        """The halves still waiting (no partner came), in arrival order of their identity."""
        for queue in self._waiting.values():
            yield from queue
        self._waiting.clear()
        self._count = 0


def merge(before_half: Event, after_half: Event) -> Event:
    """One update from its two halves: the before image from the first, the rest from the second."""
    return replace(
        after_half,
        before=before_half.before,
        key_columns=after_half.key_columns or before_half.key_columns,
        key=after_half.key or before_half.key,
        event_time=after_half.event_time if after_half.event_time is not None else before_half.event_time,
        txn_id=after_half.txn_id or before_half.txn_id,
        half=None,
    )


class PairedAway:
    """The result of a before half the decoder paired with the after half after it (:func:`pair_adjacent`)."""

    __slots__ = ()


#: Stands, among a batch decoder's results, for a before half paired with the next message (no row of its own).
PAIRED_AWAY = PairedAway()


def pair_adjacent(results: list, sink: Any, dialect: str) -> None:
    """Each before half of ``results`` followed by its after half becomes one update in the after half's
    place (the before half's result :data:`PAIRED_AWAY`), as ``sink`` would pair them: only when no half
    of their identity waits in the sink (:meth:`cdckit.reading.sinks.Sink.waiting`) nor came earlier in the
    block unpaired, and
    until the first message decoded alone (it may be a half of any identity).

    >>> from cdckit.reading.sinks import Sink
    >>> class Waiting(Sink):
    ...     def waiting(self, dialect, event): return False
    >>> halves = [Event("update", "U", table="t", seq="1", before='{"a":1}', half="before"),
    ...           Event("update", "U", table="t", seq="1", after='{"a":2}', half="after")]
    >>> results = list(halves); pair_adjacent(results, Waiting(), "d")
    >>> results[0] is PAIRED_AWAY, results[1].before, results[1].after
    (True, '{"a":1}', '{"a":2}')
    >>> results = list(halves); pair_adjacent(results, Sink(), "d"); results == halves
    True
    """
    count = len(results)
    if count < 2 or sink.waiting(dialect, Event("update", "")) is None:
        return
    unpaired: set = set()
    index = 0
    while index < count:
        result = results[index]
        if result is None or (result.__class__ is list and not result):
            return  # decoded alone: what it makes is not known here
        if result.__class__ is not Event:
            index += 1
            continue
        if not sound_half(result):
            return
        ident = identity(result)
        after = results[index + 1] if index + 1 < count else None
        if (
            result.half == "before"
            and after.__class__ is Event
            and after.half == "after"
            and identity(after) == ident
            and ident not in unpaired
            and sound_half(after)
            and not sink.waiting(dialect, result)
        ):
            paired = merge(result, after)
            sink.paired(dialect, paired)
            results[index] = PAIRED_AWAY
            results[index + 1] = FastRow._make(event_row(paired))
            index += 2
            continue
        unpaired.add(ident)
        index += 1


def sound_half(event: Event) -> bool:
    """True when a batch decoder's :class:`Event` is an update half the frame can hold."""
    return event.half in ("before", "after") and row_problem(event_row(event)) is None
