"""The batch decoders' own cases (the per-dialect checks are in tests/test_conformance.py).

tests/test_conformance.py checks, for every dialect, that ``decode_lines``
gives what ``decode`` gives on its samples, conversions and mutations, and
that a file reads the same with or without it in every layout. Here: chunks,
and numbers a double cannot hold.
"""

from __future__ import annotations

import json

import pytest
from dialect_messages import sample_messages

import cdckit
from cdckit.dialects import registry
from cdckit.frame import EVENT_FIELDS, TABLE_ROW


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


@pytest.mark.parametrize("name", [n for n in registry.names() if hasattr(registry.get(n), "decode_columns")])
def test_the_columnar_batch_decoder_takes_the_messages_the_row_batch_decoder_takes(name):
    """The reader prefers ``decode_columns`` where a dialect has one (a subclass may inherit it while it
    decodes its lines its own way): it must take every message ``decode_lines`` takes, with the same rows."""
    dialect = registry.create(name)
    records = [json.loads(line) for line in cdckit.samples.path(f"{name}/shop.jsonl").read_bytes().splitlines()]
    wrapped = all("payload" in record for record in records)  # Kafka records: the value, its key and topic
    values = [record["payload"] if wrapped else record for record in records]
    lines = [(value if isinstance(value, str) else json.dumps(value)).encode() for value in values]
    keys, topics = ([record.get(f) for record in records] if wrapped else None for f in ("key", "topic"))
    rows = dialect.decode_lines(lines, keys, topics)
    results, table = dialect.decode_columns(lines, keys, topics)
    assert any(row is not None for row in rows), "the row batch decoder takes none of the samples"
    assert [result is None for result in results] == [row is None for row in rows]
    assert all(result is TABLE_ROW or result == row for row, result in zip(rows, results))
    assert (0 if table is None else table.num_rows) == results.count(TABLE_ROW)
