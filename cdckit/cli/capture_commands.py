"""``cdckit capture``: a bounded sample of a live Kafka topic saved as kcat ``-J`` lines (extra ``kafka``).

The lines are those the read path reads from the topic itself (:mod:`cdckit.io.kafka`), so reading the
saved file gives the topic's frame, keys, partitions, offsets, timestamps and headers kept.

>>> from cdckit.cli.parser import build_parser
>>> run_capture(build_parser().parse_args(["capture", "kafka://b:9092/t?colour=red", "-o", "x.jsonl"]))
Traceback (most recent call last):
cdckit.cli.exit_codes.UsageError: kafka://b:9092/t?colour=red: unknown option 'colour'; expected partitions, \
start, offsets, max, count, timeout
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..export.atomic import atomic_path
from ..io.kafka import PartitionCounts, topic_lines
from .exit_codes import EXIT_OK
from .options import kafka_settings, kafka_topic, refuse_existing
from .progress import bar
from .text import printable

__all__ = ["run_capture"]


def run_capture(args: argparse.Namespace) -> int:
    """``cdckit capture URL -o OUT``: the topic's sample as kcat ``-J`` lines; a line on stderr says how many
    records of which partitions were saved."""
    spec = kafka_topic(args.url, kafka_settings(args))
    refuse_existing(args.output, args.force)
    counts = PartitionCounts()
    with bar(f"capture {spec.topic}", " records") as shown:
        with atomic_path(Path(args.output), overwrite=args.force) as staged, open(staged, "wb") as out:
            for lines in topic_lines(spec, counts):
                out.write(b"\n".join(lines) + b"\n")
                shown.total = counts.total
                shown.update(len(lines))
                shown.set_postfix_str(counts.text(), refresh=False)
    print(
        f"cdckit: saved {counts.read():,} records of {printable(spec.name)} to {printable(args.output)} "
        f"(records per partition: {counts.text() or 'none'})",
        file=sys.stderr,
    )
    return EXIT_OK
