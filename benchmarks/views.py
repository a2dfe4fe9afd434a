"""Benchmark: the views and the report on a big capture, beside the time to merely sort it.

    .venv/bin/python benchmarks/views.py                      # 1,000,000 events over 100,000 keys
    .venv/bin/python benchmarks/views.py --events 200000 --keys 20000

The baseline is measured in the same run on the same frame: ``sort_events``
(the cheapest whole-frame pass every view needs anyway). Each view is timed
and its size printed: the number of points it draws (capped by
``viz.MAX_POINTS``) and the size of its plotly JSON, which is what a
notebook or the report has to carry; both must stay flat as the capture grows.
"""

from __future__ import annotations

import argparse
import time

import cdckit
from cdckit import viz
from cdckit.viz.report import build_report

from replay import make_events


def timed(label: str, work, baseline: float | None = None):
    start = time.perf_counter()
    result = work()
    seconds = time.perf_counter() - start
    ratio = f"{seconds / baseline:6.1f}x sort" if baseline else ""
    print(f"  {label:<34} {seconds:8.2f} s  {ratio}", end="")
    return seconds, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--keys", type=int, default=100_000)
    args = parser.parse_args()
    events = make_events(args.events, args.keys)
    print(f"{len(events):,} events over {args.keys:,} keys; viz.MAX_POINTS = {viz.MAX_POINTS:,}")
    base, _ = timed("sort_events (baseline)", lambda: cdckit.sort_events(events))
    print()
    report = cdckit.order_report(events)
    for label, make in [("timeline", lambda: viz.timeline(events)),
                        ("timeline by key", lambda: viz.timeline(events, table="items", by="key")),
                        ("lag", lambda: viz.lag(events)),
                        ("ordering (report given)", lambda: viz.ordering(events, report))]:
        _, fig = timed(label, make, base)
        points = sum(len(t.x) for t in fig.data if t.x is not None)
        print(f"  {points:>7,} points, {len(fig.to_json()) / 1e6:5.1f} MB JSON")
    _, shown = timed("diff (20 updates)", lambda: viz.diff(events), base)
    print(f"  {len(shown.events)} shown, {shown.left_out:,} left out")
    _, page = timed("build_report", lambda: build_report(events), base)
    print(f"  {len(page) / 1e6:5.1f} MB page")


if __name__ == "__main__":
    main()
