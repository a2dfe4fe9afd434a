"""The batch decoders' own cases (the per-dialect checks are in tests/test_conformance.py).

tests/test_conformance.py checks, for every dialect, that ``decode_lines``
gives what ``decode`` gives on its samples, conversions and mutations, and
that a file reads the same with or without it in every layout. Here: chunks,
and numbers a double cannot hold.
"""

from __future__ import annotations

import json

import cdckit
from cdckit.dialects import registry
from cdckit.frame import EVENT_FIELDS
from dialect_messages import sample_messages


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
