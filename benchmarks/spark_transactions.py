"""Benchmark: ``cdcspark.transactions`` against a sort of the same frame, both written to the ``noop`` sink.

    .venv/bin/python benchmarks/spark_transactions.py                 # 1,000,000 changes, local[2]
    .venv/bin/python benchmarks/spark_transactions.py -n 200000       # a quicker check
    .venv/bin/python benchmarks/spark_transactions.py --without-ids   # the markers framing changes by position

The capture is the one ``benchmarks/transactions.py`` builds (Debezium for PostgreSQL: BEGIN and END on the
transaction topic, changes over three partitions, redelivered, swapped, lost and cut ones), written once to
Parquet and read back by every timed run, so that each reads the same files:

- the baseline: ``cdcspark.sort_events(events)`` (the canonical seq order: a window and a global sort);
- ``cdcspark.transactions(events)``.

``--without-ids`` blanks every transaction id, as producers that write bare BEGIN/COMMIT markers send them
(test_decoding without xids, a Debezium capture without its transaction topic): members are then framed by
the markers in arrival order, running windows over each whole partition (a frame reaching to the end of a
partition made this quadratic once: 2,000 s for the Spark notebook's 100,000 changes).

Each is the best of ``--repeat`` runs after one untimed warm-up. Timings depend on the machine and what else
runs on it: compare only the ratio of one run.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from transactions import make_events  # noqa: E402  (the pandas benchmark's capture)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", "--changes", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--without-ids", action="store_true", help="blank every transaction id")
    options = parser.parse_args()

    from cdckit import spark as cdcspark

    spark = cdcspark.get_spark(options.master)
    events = make_events(options.changes)
    if options.without_ids:
        events["txn_id"] = None
    with tempfile.TemporaryDirectory() as scratch:
        path = str(Path(scratch) / "events.parquet")
        for column in ("event_time", "emit_time"):
            events[column] = events[column].dt.floor("us")
        spark.createDataFrame(events).write.parquet(path)
        print(f"{len(events):,} events ({options.changes:,} changes) on {options.master}")

        def sort() -> None:
            cdcspark.sort_events(spark.read.parquet(path)).write.format("noop").mode("overwrite").save()

        def transactions() -> None:
            cdcspark.transactions(spark.read.parquet(path)).write.format("noop").mode("overwrite").save()

        timings = {}
        for name, work in (("sort_events -> noop", sort), ("transactions -> noop", transactions)):
            work()  # warm-up
            best = float("inf")
            for _ in range(options.repeat):
                start = time.perf_counter()
                work()
                best = min(best, time.perf_counter() - start)
            timings[name] = best
            print(f"{name:<24} {best:8.2f} s   {len(events) / best:12,.0f} events/s")
        ratio = timings["transactions -> noop"] / timings["sort_events -> noop"]
        print(f"transactions / sort: {ratio:.2f}x")


if __name__ == "__main__":
    main()
