"""Random row histories written in a dialect, then shuffled and partly redelivered (for replay tests).

A history is a list of changes to one table ``shop.items`` (key ``id``)
that is valid in order: inserts of new ids, updates and deletes of live ids.
Every update writes values no earlier change wrote, so no two changes are
alike (any semantic duplicate the report finds is a mistake).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd

import cdckit
from cdckit import values
from cdckit.dialects import registry
from cdckit.frame import Event
from cdckit.frame_builders import FrameBuilder
from cdckit.row_images import key_of

#: Dialects with an encoder and a seq of their own (Lindorm has no ordering key: replay follows arrival there;
#: debezium_flat keys its rows only by the Kafka key, which these captures drop, and its updates carry no
#: before image, so a keyless flattened capture cannot say which row an update changed). Left out too: the
#: ``whole_files`` dialects (wal2json, test_decoding): their position is the LSNs the server writes and the
#: transaction's BEGIN before a change, which these made-up histories lack; PostgreSQL delivers a slot's
#: changes once and in commit order, so a shuffled capture is not one it can write.
SEQ_DIALECTS = [n for n in registry.names() if registry.get(n).can_encode() and n not in ("lindorm", "debezium_flat")
                and not registry.get(n).whole_files]

_T0 = 1_714_554_000 * 1_000_000_000


@dataclass
class Capture:
    history: pd.DataFrame          # the true changes, in order (canonical events)
    final: dict[int, dict]         # the true final rows by id
    messages: list[Any]            # the clean capture in the dialect, in order
    units: list[list[int]]         # message indices of each change (two for a split update)
    unit_change: list[int]         # the history position of each unit


def make_history(steps: list[tuple[str, int]]) -> tuple[pd.DataFrame, dict[int, dict]]:
    """Canonical events from ``steps`` of (``"insert"|"update"|"delete"``, choice); invalid steps become inserts."""
    rows: dict[int, dict] = {}
    builder = FrameBuilder()
    next_id = 1
    for number, (op, choice) in enumerate(steps):
        live = sorted(rows)
        if op != "insert" and not live:
            op = "insert"
        before = after = None
        if op == "insert":
            after = {"id": next_id, "name": f"n{number}", "qty": number}
            rows[next_id] = after
            next_id += 1
        elif op == "update":
            ident = live[choice % len(live)]
            before = rows[ident]
            after = dict(before, name=f"n{number}", qty=number)
            rows[ident] = after
        else:
            ident = live[choice % len(live)]
            before = rows.pop(ident)
        row = after if after is not None else before
        builder.add(Event(op=op, op_raw=op, database="shop", table="items", event_time=_T0 + number * 10**9,
                          emit_time=_T0 + (number + 1) * 10**9, txn_id=str(1000 + number), key_columns=["id"],
                          key=key_of(row, ["id"]), before=values.image(before), after=values.image(after)),
                    dialect="truth", source="truth", offset=number)
    return builder.to_pandas(), {k: dict(v) for k, v in rows.items()}


def capture(dialect: str, steps: list[tuple[str, int]]) -> Capture:
    """The history written in ``dialect``, with each change's messages."""
    history, final = make_history(steps)
    messages = [record.value for record in registry.create(dialect).encode(history)]
    clean = cdckit.read(messages, dialect=dialect, errors="raise")
    assert len(clean) == len(history), (dialect, len(clean), len(history))
    referenced = sorted(int(o) for o in clean["offset"])
    units, unit_change = [], []
    pending: list[int] = []
    change_of = {int(o): i for i, o in enumerate(clean["offset"])}
    for index in range(len(messages)):
        pending.append(index)
        if index in change_of:
            units.append(pending)
            unit_change.append(change_of[index])
            pending = []
    assert not pending and len(units) == len(referenced)
    return Capture(history, final, messages, units, unit_change)


def deliver(cap: Capture, order: list[int], repeats: list[tuple[int, int]]) -> tuple[list[Any], list[int]]:
    """Messages in the arrival ``order`` of units, with ``(unit, position)`` repeats inserted after the original.

    Returns the messages and the arrival list of units (originals and copies).
    """
    arrival = list(order)
    for unit, where in repeats:
        first = arrival.index(unit)
        arrival.insert(first + 1 + where % (len(arrival) - first), unit)
    return [cap.messages[i] for unit in arrival for i in cap.units[unit]], arrival


def expected_inversions(cap: Capture, arrival: list[int], clean: pd.DataFrame | None = None) -> int:
    """Changes that arrive after a later change of the same row; copies skipped. ``clean``: the capture read in
    its true order, one event per change, when its rows name no key: a row is then its image (the before image,
    else the after image, as the capture writes them), and changes of different rows may come in any order."""
    if clean is not None:
        assert len(clean) == len(cap.history), "one event per change"
        images = [b if isinstance(b, str) else a for b, a in zip(clean["before"], clean["after"])]
    seen: set[int] = set()
    top: dict[Any, int] = {}
    count = 0
    for unit in arrival:
        if unit in seen:
            continue
        seen.add(unit)
        change = cap.unit_change[unit]
        group = cap.history["key"].iloc[change] if clean is None else images[change]
        if group in top and change < top[group]:
            count += 1
        top[group] = max(top.get(group, -1), change)
    return count
