"""The main job on the bundled samples: detect, decode, summarise, write Parquet.

``make demo`` runs ``python -m cdckit.demo --out out/events.parquet``: every
sample file is read with auto-detection, a table per dialect is printed
(messages, events per op, quarantined) and the canonical events are written
to Parquet.

>>> table = summary(cdckit.read(cdckit.samples.DATA))
>>> int(table.loc["canal", "messages"]) > 0
True
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

import cdckit
from cdckit.capture import Capture, plain
from cdckit.frame import OPS

__all__ = ["summary", "write_parquet", "main"]


def summary(capture: Capture | pd.DataFrame) -> pd.DataFrame:
    """One row per dialect: messages read, events per op, events, quarantined (of a capture, or of
    events from ``cdckit.read``)."""
    capture = Capture.of(capture)
    events, report, quarantine = capture.events, capture.report, capture.quarantine
    dialects = sorted(report["dialects"])
    per_op = pd.crosstab(events["dialect"], events["op"]) if len(events) else pd.DataFrame()
    columns = [op for op in OPS if op in per_op.columns]
    table = pd.DataFrame(index=pd.Index(dialects, name="dialect"))
    table["messages"] = [report["dialects"][d] for d in dialects]
    for op in columns:
        table[op] = per_op[op].reindex(dialects, fill_value=0)
    table["events"] = events["dialect"].value_counts().reindex(dialects, fill_value=0)
    table["quarantined"] = quarantine["dialect"].value_counts().reindex(dialects, fill_value=0)
    table = table.fillna(0).astype("int64")
    table.loc["total"] = table.sum()
    return table


def write_parquet(events: pd.DataFrame, path: str | Path) -> Path:
    """Write the canonical events to one Parquet file (atomically); returns its path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    table = pa.Table.from_pandas(plain(events), preserve_index=False)  # the quarantine and report are not written
    tmp = path.with_name(path.name + ".tmp")
    pq.write_table(table, tmp)
    tmp.replace(path)
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m cdckit.demo", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "source", nargs="?", default=str(cdckit.samples.DATA), help="capture to read (default: every bundled sample)"
    )
    parser.add_argument("--out", default="out/events.parquet", help="Parquet file for the canonical events")
    args = parser.parse_args(argv)

    started = time.perf_counter()
    capture = cdckit.read(args.source, capture=True)
    elapsed = time.perf_counter() - started
    report: dict[str, Any] = capture.report
    print(
        f"Read {len(report['sources'])} files: {report['messages']} messages -> {report['events']} events, "
        f"{report['quarantined']} quarantined ({elapsed:.2f} s elapsed)\n"
    )
    with pd.option_context("display.width", 200, "display.max_columns", 30):
        print(summary(capture).to_string())
    if report["skipped"]:
        print("\nMessages that rightly produce no row:")
        for reason, count in sorted(report["skipped"].items()):
            print(f"  {count:6d}  {reason}")
    quarantine = capture.quarantine
    if len(quarantine):
        print("\nQuarantined (first 10):")
        for row in quarantine.head(10).itertuples():
            print(f"  {Path(row.source).name}, message {row.offset}: {row.reason[:110]}")
    written = write_parquet(capture.events, args.out)
    print(f"\nWrote {len(capture.events)} canonical events to {written}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
