"""Detection: look-alikes told apart, the per-message table, ties (each sample detected as its own dialect:
tests/test_conformance.py)."""

from __future__ import annotations

import json

import pytest

import cdckit
from cdckit.dialects.base import Dialect, Match
from cdckit.io import Message
from cdckit.reading.detect import choose

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


def _marked_debezium_class():
    """A variant of Debezium that Debezium knows nothing of: sure of a message whose source has ``marker``."""
    from cdckit.dialects.debezium import Debezium
    from cdckit.dialects.debezium.envelope import unwrap

    class MarkedDebezium(Debezium):
        name = "marked_debezium"

        def detect(self, value):
            payload, _ = unwrap(value)
            source = payload.get("source") if payload is not None else None
            return Match(0.9, ("source.marker",)) if isinstance(source, dict) and "marker" in source else None

    return MarkedDebezium


def test_a_registered_variant_sure_of_a_message_wins_over_the_dialect_it_extends(monkeypatch):
    from cdckit.dialects import registry

    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))  # registered for this test only
    registry.register(_marked_debezium_class())
    source = {"connector": "mysql", "db": "shop", "table": "t", "file": "mysql-bin.000001", "pos": 4, "row": 0}
    plain = {"op": "c", "after": {"id": 1}, "source": source}
    marked = {"op": "c", "after": {"id": 1}, "source": dict(source, marker=True)}
    assert registry.create("debezium").detect(marked).score == 0.9  # Debezium is as sure as its variant
    detection = cdckit.detect([json.dumps(marked)] * 3)
    assert (detection.dialect, detection.runner_up) == ("marked_debezium", "debezium")
    assert detection.scores["debezium"] < detection.scores["marked_debezium"]
    assert cdckit.detect([json.dumps(plain)] * 3).dialect == "debezium"  # no marker: no claim


def test_a_variant_unsure_of_a_message_leaves_it_to_the_dialect_it_extends():
    from cdckit.reading.detect import CLAIM, score_message

    class Unsure(_marked_debezium_class()):
        def detect(self, value):
            found = super().detect(value)
            return None if found is None else Match(CLAIM - 0.1, found.evidence)

    marked = {"op": "c", "after": {"id": 1}, "source": {"connector": "mysql", "marker": 1}}
    ranked = score_message(marked, [cdckit.dialects.create("debezium"), Unsure()])
    assert [name for name, _ in ranked] == ["debezium", "marked_debezium"]
