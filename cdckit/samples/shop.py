"""The "shop" scenario: a deterministic history of a small shop database.

Two tables in database ``shop``: ``customers`` (key ``id``) and
``order_items`` (composite key ``order_id``, ``line_no``). A few hundred
inserts, updates and deletes in small transactions, whole-second event times
(so every dialect, even those with second-level times, can carry them), an
emit time one or two seconds later, non-ASCII names and SQL NULLs.

>>> events = shop_events()
>>> len(events), sorted(set(events["table"]))
(320, ['customers', 'order_items'])
>>> events["op"].value_counts().to_dict()
{'update': 149, 'insert': 141, 'delete': 30}
"""

from __future__ import annotations

import random
from typing import Any

import pandas as pd

from .. import values
from ..frame import Event
from ..frame_builders import FrameBuilder
from ..row_images import key_of

__all__ = ["shop_events", "TABLES"]

#: table -> key columns
TABLES = {"customers": ["id"], "order_items": ["order_id", "line_no"]}

_START_NS = 1_714_554_000 * 1_000_000_000  # 2024-05-01T09:00:00Z
_NAMES = [
    "Ada",
    "Bruno",
    "Chloé",
    "Dmitri",
    "Eitan",
    "Fatima",
    "Grace",
    "Håkon",
    "Inès",
    "Jürgen",
    "Kofi",
    "Lucía",
    "Mei",
    "Nikolai",
    "Olúwa",
    "Pia",
    "Quentin",
    "Renée",
    "Søren",
    "Zoë",
]
_TIERS = ["bronze", "silver", "gold"]
_SKUS = ["SKU-100", "SKU-200", "SKU-300", "SKU-400", "SKU-500"]
_TARGET = 320


def shop_events(seed: int = 7) -> pd.DataFrame:
    """The scenario as canonical events (no dialect: ``dialect`` is ``"shop"``)."""
    rng = random.Random(seed)
    builder = FrameBuilder()
    customers: dict[int, dict[str, Any]] = {}
    items: dict[tuple[int, int], dict[str, Any]] = {}
    clock = _START_NS
    txn = 1000

    def emit(op: str, table: str, before: dict | None, after: dict | None) -> None:
        columns = TABLES[table]
        row = before if op == "delete" else after
        builder.add(
            Event(
                op=op,
                op_raw=op,
                database="shop",
                table=table,
                event_time=clock,
                emit_time=clock + rng.choice((1, 2)) * 1_000_000_000,
                txn_id=str(txn),
                key_columns=list(columns),
                key=key_of(row, columns),
                before=values.image(before),
                after=values.image(after),
            ),
            dialect="shop",
            source="shop",
            offset=len(builder),
        )

    def new_customer() -> None:
        cid = 1 + max(customers, default=0)
        name = _NAMES[(cid - 1) % len(_NAMES)]
        row = {
            "id": cid,
            "name": name,
            "email": f"customer{cid}@example.com",
            "tier": "bronze",
            "balance": round(rng.uniform(0, 500), 2),
            "note": None if cid % 3 else "first order pending",
        }
        customers[cid] = row
        emit("insert", "customers", None, dict(row))

    def new_item() -> None:
        order_id = rng.choice([101, 102, 103, 104, 105, 106])
        line_no = 1 + max((ln for (o, ln) in items if o == order_id), default=0)
        row = {
            "order_id": order_id,
            "line_no": line_no,
            "sku": rng.choice(_SKUS),
            "qty": rng.randint(1, 5),
            "price": round(rng.uniform(1, 99), 2),
            "customer_id": rng.choice(sorted(customers)),
        }
        items[(order_id, line_no)] = row
        emit("insert", "order_items", None, dict(row))

    for _ in range(12):
        new_customer()
    for _ in range(24):
        new_item()
    while len(builder) < _TARGET:
        txn += 1
        for _ in range(rng.randint(1, 3)):
            clock += rng.randint(1, 4) * 1_000_000_000
            roll = rng.random()
            if roll < 0.30:
                cid = rng.choice(sorted(customers))
                before = dict(customers[cid])
                after = dict(before)
                field = rng.choice(("tier", "balance", "email", "note"))
                if field == "tier":
                    after["tier"] = rng.choice([t for t in _TIERS if t != before["tier"]])
                elif field == "balance":
                    after["balance"] = round(before["balance"] + rng.uniform(-50, 80), 2)
                elif field == "email":
                    after["email"] = f"customer{cid}.{rng.randint(1, 99)}@example.org"
                else:
                    after["note"] = None if before["note"] else "called <support> & left a note"
                customers[cid] = after
                emit("update", "customers", before, dict(after))
            elif roll < 0.55 and items:
                ident = rng.choice(sorted(items))
                before = dict(items[ident])
                after = dict(before, qty=before["qty"] + rng.randint(1, 3))
                items[ident] = after
                emit("update", "order_items", before, dict(after))
            elif roll < 0.62 and len(items) > 10:
                ident = rng.choice(sorted(items))
                emit("delete", "order_items", items.pop(ident), None)
            elif roll < 0.64 and len(customers) > 8:
                cid = rng.choice(sorted(customers))
                emit("delete", "customers", customers.pop(cid), None)
            elif roll < 0.80:
                new_customer()
            else:
                new_item()
            if len(builder) >= _TARGET:
                break
    return builder.to_pandas()
