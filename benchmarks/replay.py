"""Benchmark: materialize N events over K keys, beside the time to merely sort the same frame.

    .venv/bin/python benchmarks/replay.py                 # 1,000,000 events, 100,000 keys, pandas and Spark
    .venv/bin/python benchmarks/replay.py --events 200000 --keys 20000 --no-spark

The baseline is measured in the same run: ``sort_events`` of the same frame
(pandas) and ``sort_events(...).write.format("noop")`` (Spark). The events
are canonical rows of one table: each key is inserted, then updated; they
arrive shuffled.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import orjson
import pandas as pd

import cdckit
from cdckit.frame import COLUMN_NAMES


def make_events(count: int, keys: int, seed: int = 1) -> pd.DataFrame:
    """``count`` canonical events over ``keys`` keys (inserts first, then updates), in shuffled arrival order."""
    rng = np.random.default_rng(seed)
    ids = np.concatenate([np.arange(keys), rng.integers(0, keys, count - keys)])
    rows, version = [], {}
    for position, ident in enumerate(ids.tolist()):
        v = version.get(ident, -1) + 1
        version[ident] = v
        after = orjson.dumps({"id": ident, "name": f"name{ident}", "qty": v, "note": f"v{v}"}).decode()
        before = None if v == 0 else orjson.dumps({"id": ident, "name": f"name{ident}", "qty": v - 1,
                                                    "note": f"v{v - 1}"}).decode()
        rows.append(("canal", "bench", position, None, "insert" if v == 0 else "update", "INSERT" if v == 0 else
                     "UPDATE", "shop", None, "items", pd.Timestamp(1_700_000_000 + position, unit="s", tz="UTC"),
                     None, f"{position:020d}", None, ["id"], f"[{ident}]", before, after, None))
    frame = pd.DataFrame(rows, columns=COLUMN_NAMES)
    order = rng.permutation(len(frame))
    frame = frame.iloc[order].reset_index(drop=True)
    frame["offset"] = np.arange(len(frame))
    return frame


def timed(label: str, work) -> float:
    start = time.perf_counter()
    work()
    seconds = time.perf_counter() - start
    print(f"  {label:<44} {seconds:8.2f} s")
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--keys", type=int, default=100_000)
    parser.add_argument("--no-spark", action="store_true")
    args = parser.parse_args()
    events = make_events(args.events, args.keys)
    print(f"{len(events):,} events over {args.keys:,} keys")
    print("pandas")
    sort = timed("sort_events (baseline)", lambda: cdckit.sort_events(events))
    state = {}
    replay = timed("materialize", lambda: state.update(cdckit.materialize(events)))
    assert len(state["shop.items"]) == args.keys
    print(f"  materialize: {len(events) / replay:,.0f} events/s; {replay / sort:.1f}x the time of the sort")
    if args.no_spark:
        return
    from cdckit import spark as cdcspark
    spark = cdcspark.get_spark("local[2]")
    frame = spark.createDataFrame(events).cache()
    frame.count()
    print("Spark local[2]")
    sort = timed("sort_events -> noop (baseline)",
                 lambda: cdcspark.sort_events(frame).write.format("noop").mode("overwrite").save())
    counted = {}
    replay = timed("materialize -> count rows",
                   lambda: counted.update({t: f.count() for t, f in cdcspark.materialize(frame).items()}))
    assert counted["shop.items"] == args.keys
    print(f"  materialize: {len(events) / replay:,.0f} events/s; {replay / sort:.1f}x the time of the sort")


if __name__ == "__main__":
    main()
