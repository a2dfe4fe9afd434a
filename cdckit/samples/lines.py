"""Synthetic lines for benchmarks and tests: the ``i``-th change of a table, written directly in a dialect's format.

Deterministic for ``i``, no canonical events in between, so millions of
lines are cheap (:func:`cdckit.samples.synthetic.write_capture` writes them
to a file). About 740 bytes per Debezium line and 400 per Canal line.

>>> import json
>>> json.loads(debezium_line(7))["source"]["pos"], json.loads(canal_line(7))["type"]
(1404, 'INSERT')
"""

from __future__ import annotations

from typing import Any

import orjson

__all__ = ["SYNTHETIC_START_MS", "debezium_line", "canal_line"]

#: Synthetic lines start at this epoch millisecond.
SYNTHETIC_START_MS = 1_700_000_000_000


def debezium_line(i: int) -> bytes:
    """The ``i``-th change of a customers table (MySQL connector, unwrapped); every fourth an update."""
    row: dict[str, Any] = {
        "id": i,
        "first_name": f"first{i % 977}",
        "last_name": f"last{i % 541}",
        "email": f"user{i}@example.com",
        "balance": round(i * 0.37 % 10_000, 2),
        "tier": ("bronze", "silver", "gold")[i % 3],
        "street": f"{i % 9000 + 1} Long Street",
        "city": ("Lisbon", "Osaka", "Quito", "Tromsø")[i % 4],
        "phone": f"+351 21 {i % 1_000_000:06d}",
        "company": f"Company {i % 3000} Ltd",
        "website": f"https://company{i % 3000}.example.com/people/{i}",
        "country_code": "PT",
        "created_at": SYNTHETIC_START_MS + i,
        "active": i % 7 != 0,
        "note": None if i % 5 else "called support",
    }
    before = dict(row, balance=round(row["balance"] - 1.5, 2)) if i % 4 == 1 else None
    return orjson.dumps(
        {
            "before": before,
            "after": row,
            "source": {
                "version": "2.7.0.Final",
                "connector": "mysql",
                "name": "bench",
                "ts_ms": SYNTHETIC_START_MS + i,
                "snapshot": "false",
                "db": "shop",
                "table": "customers" if i % 10 else "vip_customers",
                "server_id": 1,
                "gtid": None,
                "file": "mysql-bin.000001",
                "pos": 4 + 200 * i,
                "row": 0,
                "thread": 7,
                "query": None,
            },
            "op": "u" if before else "c",
            "ts_ms": SYNTHETIC_START_MS + 100 + i,
            "transaction": None,
        }
    )


def canal_line(i: int) -> bytes:
    """The ``i``-th insert into an order_items table, as a Canal flat message with one row."""
    row = {
        "id": str(i),
        "sku": f"SKU-{i % 500}",
        "qty": str(i % 9 + 1),
        "price": f"{i % 1000}.25",
        "note": None if i % 3 else "gift",
    }
    return orjson.dumps(
        {
            "id": i,
            "database": "shop",
            "table": "order_items",
            "pkNames": ["id"],
            "isDdl": False,
            "type": "INSERT",
            "es": SYNTHETIC_START_MS + i,
            "ts": SYNTHETIC_START_MS + 50 + i,
            "sql": "",
            "sqlType": {"id": -5, "sku": 12, "qty": 4, "price": 3, "note": 12},
            "mysqlType": {
                "id": "bigint(20)",
                "sku": "varchar(32)",
                "qty": "int(11)",
                "price": "decimal(10,2)",
                "note": "varchar(64)",
            },
            "data": [row],
            "old": None,
        }
    )
