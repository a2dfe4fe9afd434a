"""The bundled samples' loaders (that each dialect's shop files match its encoder: tests/test_conformance.py)."""

from __future__ import annotations

import pytest

import cdckit


def test_list_path_load_raw():
    names = cdckit.samples.list()
    assert "debezium/examples.json" in names
    assert cdckit.samples.path("debezium") == cdckit.samples.DATA / "debezium" / "examples.json"
    assert cdckit.samples.path("debezium/shop").name == "shop.jsonl"
    assert cdckit.samples.raw("debezium").lstrip().startswith("{")
    assert len(cdckit.samples.load("debezium/shop")) == 320
    with pytest.raises(KeyError, match="no sample named"):
        cdckit.samples.path("nope")
