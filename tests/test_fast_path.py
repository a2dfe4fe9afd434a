"""The batch decoders (``decode_lines``) give exactly what the per-message decoders give.

Every dialect whose messages are JSON has a batch decoder. For every message
it does not hand back (None), it must give what ``decode`` gives; a message
``decode`` refuses, skips or splits into update halves it must hand back.
The messages are the dialect's samples, every sample re-encoded in the
dialect, and mutations of each (a field dropped, nulled or given another
kind of value), so that the shapes a fast path declines are tried too.
"""

from __future__ import annotations

import functools
import json
import random

import orjson
import pandas as pd
import pytest

import cdckit
from cdckit.containers import iter_sources, parse_line
from cdckit.dialects import registry
from cdckit.dialects.base import BadMessage, SkipMessage
from cdckit.frame import EVENT_FIELDS, Event, event_row
from json_styles import STYLES, written

FAST = [name for name in cdckit.dialects.names() if registry.get(name).has_line_decoder]
#: Every dialect whose messages are JSON (UniVerse and test_decoding write text lines) and stand alone:
#: a ``whole_files`` dialect's message depends on the ones before it (wal2json's changes take their commit
#: LSN from the transaction's BEGIN), so a batch decoder could not be checked message by message as here.
JSON_DIALECTS = [name for name in cdckit.dialects.names()
                 if registry.get(name).layout != "text" and not registry.get(name).whole_files]
#: Sample events re-encoded in each dialect, messages mutated, and messages written in other styles, per test.
CONVERTED, MUTATED, RESTYLED = 800, 200, 400
def sample_messages(name: str) -> list[bytes]:
    """Every message of the dialect's samples as one line of JSON, Kafka keys dropped."""
    lines = []
    for sample in cdckit.samples.list():
        if sample.startswith(f"{name}/"):
            for _, messages in iter_sources(cdckit.samples.path(sample)):
                lines += [json.dumps(m.value).encode() for m in messages if m.error is None and m.key is None]
    return lines


@functools.lru_cache(maxsize=None)
def every_sample_event() -> pd.DataFrame:
    """The events of every bundled sample, of every dialect."""
    frames = [cdckit.read(cdckit.samples.path(sample)) for sample in cdckit.samples.list()]
    return pd.concat(frames, ignore_index=True)


@functools.lru_cache(maxsize=None)
def converted_values(name: str) -> tuple:
    """Sample events (up to :data:`CONVERTED`, every op and dialect) re-encoded in dialect ``name``."""
    events = every_sample_event()
    picked = events.groupby(["dialect", "op"], group_keys=False).head(CONVERTED // 40)
    return tuple(record.value for record in cdckit.convert(picked, name).records if isinstance(record.value, dict))


BEYOND_DOUBLE = orjson.Fragment(b"1e400")  # orjson refuses it; values.loads keeps it as text


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


def test_every_dialect_whose_messages_are_json_has_a_batch_decoder():
    assert set(JSON_DIALECTS) <= set(FAST), f"no batch decoder: {sorted(set(JSON_DIALECTS) - set(FAST))}"


@pytest.mark.parametrize("name", JSON_DIALECTS)
def test_batch_decoder_equals_the_message_decoder_on_samples_conversions_and_mutations(name):
    dialect = registry.create(name)
    lines = messages_for(name)
    results = dialect.decode_lines(lines)
    assert len(results) == len(lines)
    usual = len(sample_messages(name)) + len(converted_values(name))
    handled = 0
    for number, (line, result) in enumerate(zip(lines, results)):
        if result is None or result == []:
            continue
        handled += number < usual
        rows = given_rows(result)
        expected = expected_rows(dialect, line)
        assert expected is not None, f"the batch decoder took a message decode() refuses: {line[:300]!r}"
        assert rows == expected, line[:300]  # images too, character for character
    assert handled >= usual * 0.5, f"the batch decoder handed back {usual - handled} of {usual} usual messages"


@pytest.mark.parametrize("name", FAST)
def test_reading_a_file_gives_the_same_frame_with_or_without_the_batch_decoder(name, tmp_path, monkeypatch):
    path = tmp_path / "capture.jsonl"
    lines = sample_messages(name)
    path.write_bytes(b"\n".join(lines[:3] + [b"", b'{"broken": '] + lines[3:]) + b"\n")
    fast = cdckit.read(path, dialect=name)
    monkeypatch.setattr(registry.get(name), "has_line_decoder", False)
    slow = cdckit.read(path, dialect=name)
    assert fast.attrs["report"] == slow.attrs["report"]
    assert fast.attrs["quarantine"].drop(columns="raw").equals(slow.attrs["quarantine"].drop(columns="raw"))
    columns = [c for c in fast.columns if c not in ("key", "before", "after")]
    assert fast[columns].equals(slow[columns])
    for column in ("key", "before", "after"):
        assert [None if v is None or v is cdckit.frame.pd.NA else json.loads(v) for v in fast[column]] == \
               [None if v is None or v is cdckit.frame.pd.NA else json.loads(v) for v in slow[column]]


def test_chunks_through_the_batch_decoder_add_up_to_the_whole(tmp_path):
    path = tmp_path / "capture.jsonl"
    path.write_bytes(b"\n".join(sample_messages("debezium")) + b"\n")
    whole = cdckit.read(path, dialect="debezium")
    chunks = list(cdckit.read(path, dialect="debezium", chunksize=7))
    assert all(len(c) <= 7 for c in chunks)
    assert sum(len(c) for c in chunks) == len(whole)
    assert [o for c in chunks for o in c["offset"]] == whole["offset"].tolist()


def test_raw_images_with_numbers_a_double_cannot_hold_are_typed_like_the_message_decoder():
    line = (b'{"op": "c", "after": {"id": 1, "amount": 12345678901234567890.12, "big": 123456789012345678901234}, '
            b'"source": {"connector": "mysql", "table": "t", "file": "f.000001", "pos": 4, "row": 0}}')
    dialect = registry.create("debezium")
    (row,) = dialect.decode_lines([line])
    assert json.loads(row[EVENT_FIELDS.index("after")]) == {
        "id": 1, "amount": "12345678901234567890.12", "big": "123456789012345678901234"}


def kafka_frames(records, path) -> None:
    """Kafka-shaped frames (``key``/``value`` as JSON text, with topic, partition and offset), one per line."""
    with open(path, "w") as out:
        for number, record in enumerate(records):
            out.write(json.dumps({"topic": "t", "partition": number % 2, "offset": 1000 + number,
                                  "key": None if record.key is None else json.dumps(record.key),
                                  "value": None if record.value is None else json.dumps(record.value)}) + "\n")


LAYOUTS = ["jsonl", "kcat", "kafka frames", "json array", "pretty json"]


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("name", JSON_DIALECTS)
def test_every_layout_reads_the_same_with_or_without_the_batch_decoder(name, layout, tmp_path, monkeypatch):
    records = cdckit.convert(every_sample_event().head(400), name).records
    path = tmp_path / "capture.jsonl"
    if layout == "kafka frames":
        kafka_frames(records, path)
    elif layout == "json array":
        path.write_text(json.dumps([record.value for record in records], indent=1))
    elif layout == "pretty json":  # one indented value after another, as jq or a log pretty-printer writes them
        path.write_text("\n".join(json.dumps(record.value, indent=2) for record in records))
    else:
        cdckit.containers.write_messages(records, path, layout)
    with open(path, "a") as out:  # damage after good messages: quarantined, the rest kept
        out.write('{"topic": "t", "partition": 0, "offset": 9, "payload": "{\\"broken\\": "}\n{"broken": \n')
    fast = cdckit.read(path, dialect=name)
    monkeypatch.setattr(registry.get(name), "has_line_decoder", False)
    slow = cdckit.read(path, dialect=name)
    assert len(fast) >= len(records) // 2
    assert fast.attrs["report"] == slow.attrs["report"]
    assert fast.attrs["quarantine"].drop(columns="raw").equals(slow.attrs["quarantine"].drop(columns="raw"))
    pd.testing.assert_frame_equal(fast, slow)  # images and keys text for text
    if registry.get(name).uses_kafka_key and layout in ("kcat", "kafka frames"):
        assert fast["key_columns"].notna().any(), "the Kafka keys' columns were lost"
