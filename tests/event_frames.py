"""Random canonical captures for the engine agreement tests (hypothesis strategies).

A capture is a canonical event frame as ``cdckit.read`` gives it, written
straight from a random row history rather than through a dialect's encoder,
so that it can hold what real captures hold and encoders never write:
primary-key changes, partial update images (SharePlex, UniVerse), column
deletes, tables without a key, dirty changes (an update of an unknown key, an
insert of a live one, a change without an after image), missing ``seq``
values, backwards event times, transaction markers without ids, heartbeats,
several sources and partitions, shuffled arrival and exact redeliveries.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
from hypothesis import strategies as st

from cdckit import values
from cdckit.capture import Attached
from cdckit.frame import Event
from cdckit.frame_builders import FrameBuilder, QuarantineBuilder
from cdckit.row_images import key_of

#: Dialects whose flags change the rules: full images, partial images, contiguous seq, split updates.
DIALECTS = ["canal", "maxwell", "shareplex", "universe", "datahub_blob"]

_T0 = 1_714_554_000 * 1_000_000_000
_OPS = ["insert", "insert", "update", "update", "update", "delete", "read", "key_change", "dirty_update",
        "dirty_delete", "live_insert", "no_after", "begin", "commit", "heartbeat", "keyless", "truncate"]


@st.composite
def histories(draw: Any, dialect: str | None = None, table: str = "items", max_steps: int = 24
              ) -> list[tuple[Event, dict[str, Any]]]:
    """Events of one table's random history, in true order, each with its arrival facts (source, partition)."""
    dialect = dialect or draw(st.sampled_from(DIALECTS))
    partial = dialect in ("shareplex", "universe")
    steps = draw(st.lists(st.tuples(st.sampled_from(_OPS), st.integers(0, 99)), min_size=1, max_size=max_steps))
    sources = draw(st.lists(st.sampled_from(["a.jsonl", "b.jsonl"]), min_size=1, max_size=2, unique=True))
    partitioned = draw(st.booleans())
    rows: dict[int, dict[str, Any]] = {}
    bag: list[dict[str, Any]] = []
    next_id = 1
    out: list[tuple[Event, dict[str, Any]]] = []
    for number, (kind, choice) in enumerate(steps):
        live = sorted(rows)
        op, before, after, key_row = kind, None, None, None
        columns: list[str] | None = ["id"]
        if kind in ("update", "delete", "key_change") and not live:
            kind = op = "insert"
        if kind in ("insert", "read"):
            after = {"id": next_id, "name": f"n{number}", "qty": choice}
            if choice % 5 == 0:
                after["note"] = None  # a column that appears later, present with null
            rows[next_id] = after
            next_id += 1
        elif kind == "update":
            ident = live[choice % len(live)]
            before = rows[ident]
            new = dict(before, name=f"n{number}", qty=number)
            if not partial and choice % 4 == 0:
                new.pop("qty")  # a column delete (Lindorm style)
            rows[ident] = new
            after = {k: v for k, v in new.items() if k in ("name", "id") or choice % 3 == 0} if partial else new
            if partial and choice % 6 == 1:
                after = {k: v for k, v in after.items() if k != "id"}  # the key only in the message's key
            key_row = new
        elif kind == "key_change":
            ident = live[choice % len(live)]
            before = rows.pop(ident)
            after = dict(before, id=next_id, name=f"moved{number}")
            rows[next_id] = after
            next_id += 1
            op = "update"
        elif kind == "delete":
            ident = live[choice % len(live)]
            before = rows.pop(ident)
        elif kind == "dirty_update":
            op, before, after = "update", None, {"id": 500 + choice, "name": f"ghost{number}", "qty": 0}
        elif kind == "dirty_delete":
            op, before = "delete", {"id": 700 + choice, "name": "gone", "qty": 1}
        elif kind == "live_insert":
            ident = live[choice % len(live)] if live else 1
            op, after = "insert", {"id": ident, "name": f"again{number}", "qty": choice}
            rows[ident] = after
        elif kind == "no_after":
            op, after = ("insert", None) if choice % 2 else ("update", None)
            key_row = {"id": live[choice % len(live)] if live else 900}
        elif kind == "keyless":
            columns = None
            if bag and choice % 3 == 0:
                op, before = "delete", bag.pop(choice % len(bag))
            elif bag and choice % 3 == 1:
                op, before = "update", bag.pop(choice % len(bag))
                after = dict(before, n=number)
                bag.append(after)
            else:
                op, after = "insert", {"line": f"l{choice % 4}", "n": choice % 2}
                bag.append(after)
        elif kind == "truncate":  # every row goes, keyed or not
            columns = None
            rows.clear()
            bag.clear()
        elif kind in ("begin", "commit", "heartbeat"):
            columns = None
        row = key_row or after or before
        change = kind not in ("begin", "commit", "heartbeat")
        seq = None if choice % 11 == 0 else f"{number:06d}"
        time = None if choice % 13 == 0 else _T0 + (number - (3 if choice % 7 == 0 else 0)) * 10**9
        txn = None if choice % 4 == 0 else str(1000 + number // 3)
        event = Event(op=op, op_raw=op.upper(), database="shop", table=table if change else None,
                      event_time=time, emit_time=None if time is None else time + (choice % 5) * 10**9, seq=seq,
                      txn_id=txn, key_columns=columns if change else None,
                      key=key_of(row, columns) if change and columns else None,
                      before=values.image(before), after=values.image(after))
        where = {"dialect": dialect, "source": sources[choice % len(sources)],
                 "partition": (choice % 2) if partitioned else None}
        out.append((event, where))
    return out


@st.composite
def captures(draw: Any, streams: int = 1, max_steps: int = 24) -> pd.DataFrame:
    """A canonical frame of ``streams`` random histories (each its own dialect and sources), shuffled,
    with exact redeliveries and a quarantine holding unpaired halves."""
    events: list[tuple[Event, dict[str, Any]]] = []
    for number in range(streams):
        history = draw(histories(max_steps=max_steps, table="items" if number % 2 == 0 else "orders"))
        prefix = f"s{number}/" if streams > 1 and draw(st.booleans()) else ""
        events += [(e, dict(w, source=prefix + w["source"])) for e, w in history]
    order = draw(st.permutations(range(len(events))))
    arrival = [events[i] for i in order]
    for position, copy in draw(st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 10**6)), max_size=3)):
        arrival.insert(copy % (len(arrival) + 1), arrival[position % len(arrival)])
    builder = FrameBuilder()
    offsets: dict[tuple[str, Any], int] = {}
    for event, where in arrival:
        place = (where["source"], where["partition"])
        offsets[place] = offsets.get(place, -1) + 1
        builder.add(event, where["dialect"], where["source"], offsets[place], where["partition"])
    frame = builder.to_pandas()
    quarantine = QuarantineBuilder()
    if draw(st.booleans()):
        quarantine.add("a.jsonl", 10**6, None, None, "datahub_blob", "UPDATE_BEFOR with no partner half", "{}",
                       "unpaired_half")
        quarantine.add("a.jsonl", 10**6 + 1, None, None, "datahub_blob", "not JSON", "{", "damaged_input")
    frame.attrs["quarantine"] = Attached(quarantine.to_pandas(), "quarantine")  # as a read attaches it (cdckit.capture)
    return frame
