"""Benchmark: ``cdckit.transactions`` against ``cdckit.order_report`` on the same frame, in the same run.

    .venv/bin/python benchmarks/transactions.py                 # 1,000,000 changes
    .venv/bin/python benchmarks/transactions.py -n 200000       # a quicker check
    .venv/bin/python benchmarks/transactions.py --repeat 3      # best of 3 for every timing

The capture (built column by column, with the dtypes ``cdckit.read`` gives): ``-n`` Debezium changes of
PostgreSQL transactions (1 to 9 changes each, over four tables, ids ``txId:LSN`` with the LSN differing per
change), with the connector's transaction topic: a BEGIN and an END (declaring ``event_count`` and
``data_collections``) per transaction on ``shop.transaction``, the changes on ``shop.public.<table>`` in
three partitions (a transaction's changes of one table spread over them). Damage, so that every finding has
rows: 1% of the changes redelivered, 1% swapped with the next one, 0.5% lost (their END declares them), the
BEGIN of the first transactions missing (the capture starts there), the last transactions cut (no END).

Timed, each the best of ``--repeat`` after one untimed run on the first 1,000 rows:

- ``order_report(events)``: every finding, the new transaction findings included;
- ``order_report`` without the transaction findings (the report before them: the kernel that adds them is
  replaced by one that adds nothing), to show what they cost;
- ``transactions(events)``.

Goals: ``transactions`` within 2x ``order_report``; the transaction findings add at most 25% to
``order_report``. Timings depend on the machine and what else runs on it: compare only ratios of one run.
"""

from __future__ import annotations

import argparse
import gc
import math
import time
from collections.abc import Callable
from typing import Any
from unittest import mock

import numpy as np
import pandas as pd
import pyarrow as pa

import cdckit
from cdckit.analysis.ordering import kernels
from cdckit.frame import ARROW_SCHEMA, COLUMN_NAMES, arrow_to_pandas

#: Goals.
TRANSACTIONS_FACTOR = 2.0  # transactions / order_report: at most this
FINDINGS_COST = 1.25  # order_report / order_report without the transaction findings: at most this
TABLES = ("orders", "order_items", "payments", "customers")


def make_events(count: int, seed: int = 1) -> pd.DataFrame:
    """``count`` Debezium changes in transactions with their BEGIN/END records (module notes)."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 10, count)
    sizes = sizes[: int(np.searchsorted(np.cumsum(sizes), count)) + 1]
    sizes[-1] -= int(sizes.sum()) - count
    sizes = sizes[sizes > 0]
    txns = len(sizes)
    txn = np.repeat(np.arange(txns), sizes)  # each change's transaction
    table = rng.integers(0, len(TABLES), count)
    lsn = 1_000_000 + np.arange(count) * 40 + txn * 40  # the changes' LSNs; a transaction's BEGIN at its first
    txid = 5_000 + txn
    # what each END declares: the changes before any are lost
    declared = np.bincount(txn, minlength=txns)
    per_table = np.zeros((txns, len(TABLES)), np.int64)
    np.add.at(per_table, (txn, table), 1)
    kept = rng.random(count) >= 0.005
    change = np.flatnonzero(kept)
    order = change.copy()  # arrival order of the changes kept: 1% swapped with the next, 1% redelivered
    swap = np.flatnonzero(rng.random(len(order) - 1) < 0.01)
    order[swap], order[swap + 1] = order[swap + 1], order[swap]
    again = rng.random(len(order)) < 0.01
    order = np.repeat(order, np.where(again, 2, 1))
    n = len(order)
    partition = (txn[order] + table[order] + (order % 3)) % 3
    offset = np.zeros(n, np.int64)  # per (table topic, partition): their order of arrival
    topic_part = table[order] * 3 + partition
    for place in range(len(TABLES) * 3):
        at = np.flatnonzero(topic_part == place)
        offset[at] = np.arange(len(at))
    first_lsn = lsn[np.r_[0, np.cumsum(sizes)[:-1]]]  # each transaction's first LSN (its BEGIN's)
    seq = [f"{b:020d}:{c:020d}" for b, c in zip(first_lsn[txn[order]].tolist(), lsn[order].tolist())]
    ident = order.tolist()
    tables = [TABLES[t] for t in table[order].tolist()]
    changes = pd.DataFrame(
        {
            "dialect": "debezium",
            "source": [f"shop.public.{t}" for t in tables],
            "offset": offset,
            "partition": partition,
            "op": "insert",
            "op_raw": "c",
            "database": "public",
            "schema": "public",
            "table": tables,
            "event_time": pd.to_datetime(1_700_000_000_000 + txn[order] * 10, unit="ms", utc=True),
            "emit_time": None,
            "seq": seq,
            "txn_id": [f"{x}:{y}" for x, y in zip(txid[order].tolist(), lsn[order].tolist())],
            "key_columns": [["id"]] * n,
            "key": [f"[{i}]" for i in ident],
            "before": None,
            "after": [f'{{"id":{i},"v":{i % 97}}}' for i in ident],
            "ddl": None,
        }
    )
    # the transaction topic: BEGIN and END per transaction; the first 20 without BEGIN, the last 20 without END
    began = np.arange(20, txns)
    ended = np.arange(txns - 20)
    names = [f"shop.public.{t}" for t in TABLES]

    def declaration(t: int) -> str:
        collections = ",".join(
            f'"{names[k].removeprefix("shop.")}":{int(per_table[t, k])}'
            for k in np.argsort(names)
            if per_table[t, k]
        )
        return f'{{"event_count":{int(declared[t])},"data_collections":{{{collections}}}}}'

    markers = pd.DataFrame(
        {
            "txn": np.r_[began, ended],
            "op": ["begin"] * len(began) + ["commit"] * len(ended),
            "when": np.r_[began * 2, ended * 2 + 1],
        }
    ).sort_values("when", kind="stable")
    mt = markers["txn"].to_numpy()
    marker_rows = pd.DataFrame(
        {
            "dialect": "debezium",
            "source": "shop.transaction",
            "offset": np.arange(len(markers)),
            "partition": 0,
            "op": markers["op"].to_numpy(),
            "op_raw": np.where(markers["op"].to_numpy() == "begin", "BEGIN", "END"),
            "database": None,
            "schema": None,
            "table": None,
            "event_time": pd.to_datetime(1_700_000_000_000 + mt * 10, unit="ms", utc=True),
            "emit_time": None,
            "seq": None,
            "txn_id": [f"{x}:{y}" for x, y in zip(txid_of(mt), first_lsn[mt].tolist())],
            "key_columns": None,
            "key": None,
            "before": None,
            "after": [None if op == "begin" else declaration(t) for op, t in zip(markers["op"], mt.tolist())],
            "ddl": None,
        }
    )
    plain = pd.concat([marker_rows, changes], ignore_index=True)[list(COLUMN_NAMES)]
    return arrow_to_pandas(pa.Table.from_pandas(plain, schema=ARROW_SCHEMA, preserve_index=False))


def txid_of(txns: np.ndarray) -> list[int]:
    """The PostgreSQL txId of each transaction number."""
    return (5_000 + txns).tolist()


def best_of(repeat: int, work: Callable[[], Any]) -> float:
    """The shortest of ``repeat`` runs of ``work`` in seconds."""
    best = math.inf
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        work()
        best = min(best, time.perf_counter() - start)
    return best


def without_transaction_findings(events: pd.DataFrame) -> Any:
    """``order_report`` with the transaction findings' kernel adding nothing (the report before them)."""
    with mock.patch.object(kernels, "transaction_kernel_rows", lambda *args, **kwargs: []):
        return cdckit.order_report(events)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", "--changes", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    start = time.perf_counter()
    events = make_events(args.changes)
    print(f"{len(events):,} events ({args.changes:,} changes before damage), built in "
          f"{time.perf_counter() - start:.1f} s; frame {events.memory_usage(deep=True).sum() / 1e6:,.0f} MB")
    warm = events.iloc[:1000]
    cdckit.order_report(warm), cdckit.transactions(warm), without_transaction_findings(warm)
    table = cdckit.transactions(events)
    print("  statuses:", table["status"].value_counts().to_dict())
    report = cdckit.order_report(events)
    print("  transaction findings:", {name: len(report[name]) for name in report if "transactions" in name
                                      or name == "repeated_begins"})
    del table, report
    times = {
        "order_report": best_of(args.repeat, lambda: cdckit.order_report(events)),
        "order_report without the transaction findings": best_of(args.repeat, lambda: without_transaction_findings(
            events)),
        "transactions": best_of(args.repeat, lambda: cdckit.transactions(events)),
    }
    for name, seconds in times.items():
        print(f"  {name:<48} {seconds:8.2f} s  {len(events) / seconds:12,.0f} events/s")
    ratio = times["transactions"] / times["order_report"]
    cost = times["order_report"] / times["order_report without the transaction findings"]
    goals = [
        (f"transactions <= {TRANSACTIONS_FACTOR:g}x order_report", ratio <= TRANSACTIONS_FACTOR, f"{ratio:.2f}x"),
        (f"order_report with the transaction findings <= {FINDINGS_COST:g}x without", cost <= FINDINGS_COST,
         f"{cost:.2f}x"),
    ]
    for text, met, figure in goals:
        print(f"GOAL {'met   ' if met else 'MISSED'} {text}: {figure} at {len(events):,} events")


if __name__ == "__main__":
    main()
