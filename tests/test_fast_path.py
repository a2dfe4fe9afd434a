"""The batch decoders (``decode_lines``) give exactly what the per-message decoders give."""

from __future__ import annotations

import json

import pytest

import cdckit
from cdckit.containers import iter_sources
from cdckit.frame import EVENT_FIELDS
from cdckit.dialects import registry

FAST = [name for name in cdckit.dialects.names() if registry.get(name).has_line_decoder]
IMAGES = {EVENT_FIELDS.index(f) for f in ("key", "before", "after")}


def comparable(row: tuple) -> tuple:
    return tuple(json.loads(v) if i in IMAGES and v is not None else v for i, v in enumerate(row))


def sample_messages(name: str) -> list[bytes]:
    """Every message of the dialect's samples as one line of JSON, Kafka keys dropped."""
    lines = []
    for sample in cdckit.samples.list():
        if sample.startswith(f"{name}/"):
            for _, messages in iter_sources(cdckit.samples.path(sample)):
                lines += [json.dumps(m.value).encode() for m in messages if m.error is None and m.key is None]
    return lines


def test_the_dialects_the_benchmarks_use_have_batch_decoders():
    assert {"debezium", "canal"} <= set(FAST)


@pytest.mark.parametrize("name", FAST)
def test_batch_decoder_equals_the_message_decoder_on_every_sample_message(name):
    dialect = registry.create(name)
    lines = sample_messages(name)
    results = dialect.decode_lines(lines)
    assert len(results) == len(lines)
    handled = 0
    for line, result in zip(lines, results):
        if result is None:
            continue
        handled += 1
        rows = [result] if isinstance(result, tuple) else result
        message = cdckit.containers.parse_line(line, "<test>", 0, 1)
        expected = [tuple(getattr(e, f) for f in EVENT_FIELDS) for e in dialect.decode(message)]
        assert [comparable(r) for r in rows] == [comparable(r) for r in expected], line[:200]
    assert handled >= len(lines) * 0.5, f"the batch decoder handed back {len(lines) - handled} of {len(lines)}"


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
