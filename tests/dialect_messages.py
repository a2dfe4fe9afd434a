"""A dialect's messages for the fast-path checks: its samples, conversions into it, mutations and restylings.

Shared by tests/test_conformance.py (batch decoder against message decoder, per dialect) and
tests/test_fast_path.py (the batch decoder's own cases).
"""

from __future__ import annotations

import functools
import json
import random

import orjson
import pandas as pd
from json_styles import STYLES, written

import cdckit
from cdckit.dialects.base import BadMessage, SkipMessage
from cdckit.frame import Event, event_row
from cdckit.io import iter_sources, parse_line

#: Sample events re-encoded in each dialect, messages mutated, and messages written in other styles, per test.
CONVERTED, MUTATED, RESTYLED = 800, 200, 400
BEYOND_DOUBLE = orjson.Fragment(b"1e400")  # orjson refuses it; values.loads keeps it as text


def sample_messages(name: str) -> list[bytes]:
    """Every message of the dialect's samples as one line of JSON, Kafka keys dropped."""
    lines = []
    for sample in cdckit.samples.list():
        if cdckit.samples.is_framed(sample):  # its messages are bytes until read with its schemas
            continue
        if sample.startswith(f"{name}/"):
            for _, messages in iter_sources(cdckit.samples.path(sample)):
                lines += [json.dumps(m.value).encode() for m in messages if m.error is None and m.key is None]
    return lines


@functools.cache
def every_sample_event() -> pd.DataFrame:
    """The events of every bundled sample, of every dialect (a framed capture repeats a JSON one's changes)."""
    frames = [cdckit.read(cdckit.samples.path(sample)) for sample in cdckit.samples.list()
              if not cdckit.samples.is_framed(sample)]  # needs the avro extra, which the core tests lack
    return pd.concat(frames, ignore_index=True)


@functools.cache
def converted_values(name: str) -> tuple:
    """Sample events (up to :data:`CONVERTED`, every op and dialect) re-encoded in dialect ``name``."""
    events = every_sample_event()
    picked = events.groupby(["dialect", "op"], group_keys=False).head(CONVERTED // 40)
    return tuple(record.value for record in cdckit.convert(picked, name).records if isinstance(record.value, dict))


def mutations(value: dict, rng: random.Random, count: int = 6) -> list[dict]:
    """Variants of a message: a field (top level or one level down) dropped, nulled or of another kind."""
    places = [(None, k) for k in value] + [(k, inner) for k, v in value.items() if isinstance(v, dict)
                                          for inner in v]
    out = []
    for parent, field in rng.sample(places, min(count, len(places))):
        for change in ("drop", None, "x", 1, 1.5, True, [], {}, BEYOND_DOUBLE):
            copy = orjson.loads(orjson.dumps(value))
            target = copy if parent is None else copy[parent]
            if change == "drop":
                del target[field]
            else:
                target[field] = change
            out.append(copy)
    return out


def messages_for(name: str) -> list[bytes]:
    """The dialect's sample messages, conversions into it, then mutations and restylings of some of them."""
    rng = random.Random(f"{name}-fast-path")
    values = [json.loads(line) for line in sample_messages(name)] + list(converted_values(name))
    lines = [orjson.dumps(v) for v in values]  # orjson: encoders may hold orjson.Fragment values
    objects = [value for value in values if isinstance(value, dict)]
    for value in rng.sample(objects, min(MUTATED, len(objects))):
        lines += [orjson.dumps(v) for v in mutations(value, rng)]
    for value in rng.sample(objects, min(RESTYLED, len(objects))):  # spaces, escapes, Jackson's doubles
        plain_value = orjson.loads(orjson.dumps(value))
        lines.append(written(plain_value, rng.choice, rng.choice(STYLES[:1] * 2 + STYLES[1:3])).encode())
    return lines


def expected_rows(dialect, line: bytes) -> list[tuple] | None:
    """What ``decode`` gives for one line: its rows (an update half with its ``half`` last), or None
    when it refuses or skips the message."""
    message = parse_line(line, "<test>", 0, 1)
    if message.error is not None:
        return None
    try:
        events = dialect.decode(message)
    except (BadMessage, SkipMessage, ValueError, TypeError, KeyError, AttributeError):
        return None
    if not events:
        return None
    return [event_row(e) + ((e.half,) if e.half is not None else ()) for e in events]


def given_rows(result) -> list[tuple]:
    """A batch decoder's result for one message as rows, like :func:`expected_rows`."""
    if isinstance(result, Event):
        return [event_row(result) + (result.half,)]
    return [result] if isinstance(result, tuple) else result


def kafka_frames(records, path) -> None:
    """Kafka-shaped frames (``key``/``value`` as JSON text, with topic, partition and offset), one per line."""
    with open(path, "w") as out:
        for number, record in enumerate(records):
            out.write(json.dumps({"topic": "t", "partition": number % 2, "offset": 1000 + number,
                                  "key": None if record.key is None else json.dumps(record.key),
                                  "value": None if record.value is None else json.dumps(record.value)}) + "\n")
