"""Decode benchmark: cdckit.read against the floor of any Python decoder.

Generates N Debezium JSON lines (~750 bytes each) and N Canal flat-message
lines in a temporary folder, then measures in the same run:

- ``orjson.loads`` over every line (the floor: parsing alone, no frame);
- ``cdckit.read`` into the canonical pandas frame, whole and with ``chunksize``;

and prints events/s and the ratio of each to the orjson rate.

    .venv/bin/python benchmarks/decode.py            # N = 1,000,000
    .venv/bin/python benchmarks/decode.py -n 200000
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Callable

import orjson

import cdckit


def debezium_line(i: int) -> bytes:
    row = {"id": i, "first_name": f"first{i % 977}", "last_name": f"last{i % 541}", "email": f"user{i}@example.com",
           "balance": round(i * 0.37 % 10_000, 2), "tier": ("bronze", "silver", "gold")[i % 3],
           "street": f"{i % 9000 + 1} Long Street", "city": ("Lisbon", "Osaka", "Quito", "Tromsø")[i % 4],
           "phone": f"+351 21 {i % 1_000_000:06d}", "company": f"Company {i % 3000} Ltd",
           "website": f"https://company{i % 3000}.example.com/people/{i}", "country_code": "PT",
           "created_at": 1_700_000_000_000 + i, "active": i % 7 != 0, "note": None if i % 5 else "called support"}
    before = dict(row, balance=round(row["balance"] - 1.5, 2)) if i % 4 == 1 else None
    op = "u" if before else "c"
    return orjson.dumps({
        "before": before, "after": row,
        "source": {"version": "2.7.0.Final", "connector": "mysql", "name": "bench", "ts_ms": 1_700_000_000_000 + i,
                   "snapshot": "false", "db": "shop", "table": "customers", "server_id": 1, "gtid": None,
                   "file": "mysql-bin.000001", "pos": 4 + 200 * i, "row": 0, "thread": 7, "query": None},
        "op": op, "ts_ms": 1_700_000_000_100 + i, "transaction": None,
    })


def canal_line(i: int) -> bytes:
    row = {"id": str(i), "sku": f"SKU-{i % 500}", "qty": str(i % 9 + 1), "price": f"{i % 1000}.25",
           "note": None if i % 3 else "gift"}
    return orjson.dumps({
        "id": i, "database": "shop", "table": "order_items", "pkNames": ["id"], "isDdl": False, "type": "INSERT",
        "es": 1_700_000_000_000 + i, "ts": 1_700_000_000_050 + i, "sql": "",
        "sqlType": {"id": -5, "sku": 12, "qty": 4, "price": 3, "note": 12},
        "mysqlType": {"id": "bigint(20)", "sku": "varchar(32)", "qty": "int(11)", "price": "decimal(10,2)",
                      "note": "varchar(64)"},
        "data": [row], "old": None,
    })


def write(path: Path, make: Callable[[int], bytes], n: int) -> None:
    with open(path, "wb") as out:
        for i in range(n):
            out.write(make(i) + b"\n")


def best_of(repeat: int, run: Callable[[], int]) -> tuple[float, int]:
    times, count = [], 0
    for _ in range(repeat):
        started = time.perf_counter()
        count = run()
        times.append(time.perf_counter() - started)
    return statistics.median(times), count


def orjson_floor(path: Path) -> int:
    n = 0
    with open(path, "rb") as lines:
        for line in lines:
            orjson.loads(line)
            n += 1
    return n


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", type=int, default=1_000_000, help="lines per dialect (default 1,000,000)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per measurement; the median is shown")
    parser.add_argument("--chunksize", type=int, default=100_000)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        for dialect, make in (("debezium", debezium_line), ("canal", canal_line)):
            path = Path(tmp) / f"{dialect}.jsonl"
            write(path, make, args.n)
            size = os.path.getsize(path)
            print(f"\n{dialect}: {args.n:,} lines, {size / args.n:.0f} bytes/line, {size / 2**20:.0f} MiB")
            floor_s, _ = best_of(args.repeat, lambda: orjson_floor(path))
            floor = args.n / floor_s
            print(f"  orjson.loads alone      {floor:>12,.0f} lines/s   (baseline)")
            whole_s, events = best_of(args.repeat, lambda: len(cdckit.read(path, dialect=dialect)))
            print(f"  cdckit.read             {events / whole_s:>12,.0f} events/s   {events / whole_s / floor:.2f}x orjson")
            chunk_s, events = best_of(args.repeat, lambda: sum(
                len(c) for c in cdckit.read(path, dialect=dialect, chunksize=args.chunksize)))
            print(f"  cdckit.read (chunks)    {events / chunk_s:>12,.0f} events/s   {events / chunk_s / floor:.2f}x orjson")
            detect_s, events = best_of(1, lambda: len(cdckit.read(path)))
            print(f"  cdckit.read (detected)  {events / detect_s:>12,.0f} events/s   {events / detect_s / floor:.2f}x orjson")


if __name__ == "__main__":
    main()
