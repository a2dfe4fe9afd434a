"""Large synthetic captures, written fast: for benchmarks and the Spark notebook.

Lines are produced directly in the dialect's format (no canonical events in
between), deterministic for a seed, about 740 bytes per Debezium line and
400 per Canal line. ``disorder`` swaps neighbouring messages and
``redeliver`` repeats some, so ordering checks have something to find.

>>> import json
>>> first = json.loads(debezium_line(7))
>>> first["op"], first["source"]["pos"], len(debezium_line(7)) > 600
('c', 1404, True)
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Callable

import orjson

__all__ = ["debezium_line", "canal_line", "LINE_MAKERS", "write_capture"]

_START_MS = 1_700_000_000_000


def debezium_line(i: int) -> bytes:
    """The ``i``-th change of a customers table (MySQL connector, unwrapped); every fourth an update."""
    row = {"id": i, "first_name": f"first{i % 977}", "last_name": f"last{i % 541}", "email": f"user{i}@example.com",
           "balance": round(i * 0.37 % 10_000, 2), "tier": ("bronze", "silver", "gold")[i % 3],
           "street": f"{i % 9000 + 1} Long Street", "city": ("Lisbon", "Osaka", "Quito", "Tromsø")[i % 4],
           "phone": f"+351 21 {i % 1_000_000:06d}", "company": f"Company {i % 3000} Ltd",
           "website": f"https://company{i % 3000}.example.com/people/{i}", "country_code": "PT",
           "created_at": _START_MS + i, "active": i % 7 != 0, "note": None if i % 5 else "called support"}
    before = dict(row, balance=round(row["balance"] - 1.5, 2)) if i % 4 == 1 else None
    return orjson.dumps({
        "before": before, "after": row,
        "source": {"version": "2.7.0.Final", "connector": "mysql", "name": "bench", "ts_ms": _START_MS + i,
                   "snapshot": "false", "db": "shop", "table": "customers" if i % 10 else "vip_customers",
                   "server_id": 1, "gtid": None, "file": "mysql-bin.000001", "pos": 4 + 200 * i, "row": 0,
                   "thread": 7, "query": None},
        "op": "u" if before else "c", "ts_ms": _START_MS + 100 + i, "transaction": None,
    })


def canal_line(i: int) -> bytes:
    """The ``i``-th insert into an order_items table, as a Canal flat message with one row."""
    row = {"id": str(i), "sku": f"SKU-{i % 500}", "qty": str(i % 9 + 1), "price": f"{i % 1000}.25",
           "note": None if i % 3 else "gift"}
    return orjson.dumps({
        "id": i, "database": "shop", "table": "order_items", "pkNames": ["id"], "isDdl": False, "type": "INSERT",
        "es": _START_MS + i, "ts": _START_MS + 50 + i, "sql": "",
        "sqlType": {"id": -5, "sku": 12, "qty": 4, "price": 3, "note": 12},
        "mysqlType": {"id": "bigint(20)", "sku": "varchar(32)", "qty": "int(11)", "price": "decimal(10,2)",
                      "note": "varchar(64)"},
        "data": [row], "old": None,
    })


LINE_MAKERS: dict[str, Callable[[int], bytes]] = {"debezium": debezium_line, "canal": canal_line}


def write_capture(path: str | Path, count: int, dialect: str = "debezium", disorder: float = 0.0,
                  redeliver: float = 0.0, seed: int = 0) -> Path:
    """Write ``count`` changes as JSON Lines; returns the path.

    ``disorder``: the share of messages swapped with the next one (an
    inversion each); ``redeliver``: the share written twice in a row.
    """
    make = LINE_MAKERS[dialect]
    rng = random.Random(seed)
    path = Path(path)
    with open(path, "wb") as out:
        held = None
        for i in range(count):
            line = make(i)
            if held is not None:
                out.write(line + b"\n" + held + b"\n")
                held = None
                continue
            if disorder and rng.random() < disorder and i + 1 < count:
                held = line
                continue
            out.write(line + b"\n")
            if redeliver and rng.random() < redeliver:
                out.write(line + b"\n")
        if held is not None:
            out.write(held + b"\n")
    return path
