"""Detection: look-alikes told apart, the per-message table, ties (each sample detected as its own dialect:
tests/test_conformance.py)."""

from __future__ import annotations

import pytest

import cdckit
from cdckit.detect import choose
from cdckit.containers import Message
from cdckit.dialects.base import Dialect, Match

CONTRACT_DIALECTS = [
    "oceanbase_default", "oceanbase_extend", "canal", "dataworks", "shareplex", "datahub_blob",
    "datahub_tuple", "arcion", "lindorm", "universe", "debezium", "maxwell", "ogg", "aws_dms",
    "debezium_mongodb", "debezium_flat", "wal2json", "pg_test_decoding",
]
SAMPLES = cdckit.samples.list()


def test_every_contract_dialect_is_registered_and_can_be_written():
    assert set(CONTRACT_DIALECTS) <= set(cdckit.dialects.names())
    for name in CONTRACT_DIALECTS:
        cls = cdckit.dialects.get(name)
        assert cls.name == name and cls.can_encode(), name
        assert cls.quirks, f"{name} lists no quirks for the analyst"


def test_every_dialect_has_examples_and_a_shop_sample():
    for name in CONTRACT_DIALECTS:
        assert any(s.startswith(f"{name}/examples") for s in SAMPLES), name
        assert any(s.startswith(f"{name}/shop") for s in SAMPLES), name


@pytest.mark.parametrize("a, b", [("debezium", "arcion"), ("debezium", "lindorm"), ("arcion", "lindorm"),
                                  ("debezium", "debezium_mongodb"),
                                  ("oceanbase_default", "oceanbase_extend"), ("dataworks", "datahub_blob"),
                                  ("canal", "maxwell"), ("shareplex", "aws_dms")])
def test_look_alike_dialects_are_told_apart_message_by_message(a, b):
    for own, other in ((a, b), (b, a)):
        detection = cdckit.detect(cdckit.samples.path(own))
        per_message = detection.messages
        assert (per_message["dialect"] == own).mean() >= 0.5, per_message
        assert detection.scores[own] > detection.scores.get(other, 0.0)


def test_per_message_table_names_the_decision():
    detection = cdckit.detect(cdckit.samples.path("canal"))
    table = detection.messages
    assert list(table.columns) == ["source", "offset", "dialect", "confidence", "evidence", "runner_up"]
    assert len(table) >= 1 and (table["evidence"] != "").all()
    assert "canal" in str(detection) and "<table>" in detection._repr_html_()


class _Fixed(Dialect):
    def __init__(self, name, score):
        super().__init__()
        self.name, self.score = name, score

    def detect(self, value):
        return Match(self.score, ("x",))


def test_a_tie_is_reported_as_ambiguous():
    msgs = [Message({"x": 1}, "s", 0)]
    with pytest.raises(cdckit.AmbiguousDialectError) as caught:
        choose(msgs, [_Fixed("one", 0.5), _Fixed("two", 0.5)])
    assert caught.value.candidates == ("one", "two")
    assert choose(msgs, [_Fixed("one", 0.5), _Fixed("two", 0.6)]).dialect == "two"
