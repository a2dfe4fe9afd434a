"""A capture spread over partitions as Kafka's default partitioner spreads a topic: by the hash of the key.

A connector writes each change to ``hash(key) % partitions``; a table's changes
then live in several partitions, each in order, and a consumer (kcat, a
console consumer, ``cdckit capture``) writes the partitions interleaved in
whatever order it fetched them. :func:`spread_by_key` makes such a capture
from ``kcat -J`` lines that sit in one partition, so a test can check that a
capture's meaning does not depend on its partitioning.

The hash is Kafka's own ``murmur2`` (``Utils.murmur2``, seed ``0x9747b28c``)
of the key's bytes, made positive (``& 0x7fffffff``), modulo the number of
partitions: the partition the Java producer, librdkafka's ``murmur2_random``
and Debezium's Kafka Connect pick. Records without a key are spread round
robin. It is written out here (twenty lines) because no dependency of cdckit
exposes it to Python.

>>> murmur2(b"21"), murmur2(b"foobar"), murmur2(b"abc")
(-973932308, -790332482, 479470107)
>>> kafka_partition(b'{"id":1}', 3)
0
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterable

__all__ = ["murmur2", "kafka_partition", "spread_by_key"]

_MASK = 0xFFFFFFFF


def _signed(value: int) -> int:
    value &= _MASK
    return value - (1 << 32) if value & 0x80000000 else value


def murmur2(data: bytes) -> int:
    """Kafka's 32-bit murmur2 of ``data``, as the signed int Java's ``Utils.murmur2`` returns."""
    m, length = 0x5BD1E995, len(data)
    h = (0x9747B28C ^ length) & _MASK
    whole = length - length % 4
    for i in range(0, whole, 4):
        k = int.from_bytes(data[i : i + 4], "little")
        k = (k * m) & _MASK
        k ^= k >> 24
        k = (k * m) & _MASK
        h = ((h * m) & _MASK) ^ k
    tail = length % 4
    if tail >= 3:
        h ^= data[whole + 2] << 16
    if tail >= 2:
        h ^= data[whole + 1] << 8
    if tail >= 1:
        h ^= data[whole]
        h = (h * m) & _MASK
    h ^= h >> 13
    h = (h * m) & _MASK
    h ^= h >> 15
    return _signed(h)


def kafka_partition(key: bytes, partitions: int) -> int:
    """The partition Kafka's default partitioner gives a record with this key."""
    return (murmur2(key) & 0x7FFFFFFF) % partitions


def spread_by_key(lines: Iterable[str], partitions: int, interleave: str = "random", seed: int = 0) -> list[str]:
    """``kcat -J`` lines re-partitioned by their key, offsets renumbered per topic and partition.

    Each partition keeps its records in their original order. ``interleave``
    says how the partitions are written after one another, as a consumer
    might have written them: ``"random"`` (runs of random length from random
    partitions, reproducible by ``seed``), ``"whole"`` (each partition whole,
    partition 0 first) or ``"reversed"`` (each whole, the last partition first).

    >>> lines = [json.dumps({"topic": "t", "partition": 0, "offset": n, "key": json.dumps({"id": n}),
    ...                      "payload": "{}"}) for n in range(6)]
    >>> spread = spread_by_key(lines, 3, interleave="whole")
    >>> [(json.loads(x)["partition"], json.loads(x)["offset"], json.loads(json.loads(x)["key"])["id"]) for x in spread]
    [(0, 0, 2), (1, 0, 0), (1, 1, 1), (1, 2, 3), (1, 3, 5), (2, 0, 4)]
    """
    if interleave not in ("random", "whole", "reversed"):
        raise ValueError(f"interleave must be 'random', 'whole' or 'reversed', not {interleave!r}")
    queues: dict[int, list[str]] = {p: [] for p in range(partitions)}
    offsets: dict[tuple[str, int], int] = {}
    unkeyed = 0
    for line in lines:
        record = json.loads(line)
        key = record.get("key")
        if key is None:
            partition, unkeyed = unkeyed % partitions, unkeyed + 1
        else:
            partition = kafka_partition(key.encode("utf-8") if isinstance(key, str) else bytes(key), partitions)
        slot = (str(record.get("topic")), partition)
        record["partition"], record["offset"] = partition, offsets.get(slot, 0)
        offsets[slot] = record["offset"] + 1
        queues[partition].append(json.dumps(record, ensure_ascii=False))
    if interleave == "whole":
        return [line for p in range(partitions) for line in queues[p]]
    if interleave == "reversed":
        return [line for p in reversed(range(partitions)) for line in queues[p]]
    rng, out = random.Random(seed), []
    heads = {p: 0 for p in range(partitions)}
    while any(heads[p] < len(queues[p]) for p in queues):
        p = rng.choice([p for p in queues if heads[p] < len(queues[p])])
        run = rng.randint(1, 50)
        out.extend(queues[p][heads[p] : heads[p] + run])
        heads[p] += run
    return out
