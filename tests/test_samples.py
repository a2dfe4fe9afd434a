"""The bundled samples: loaders work and the shop files match their encoders."""

from __future__ import annotations

import pyarrow.parquet as pq
import pytest

import cdckit
from cdckit.samples.build import build_shop


def test_list_path_load_raw():
    names = cdckit.samples.list()
    assert "debezium/examples.json" in names
    assert cdckit.samples.path("debezium") == cdckit.samples.DATA / "debezium" / "examples.json"
    assert cdckit.samples.path("debezium/shop").name == "shop.jsonl"
    assert cdckit.samples.raw("debezium").lstrip().startswith("{")
    assert len(cdckit.samples.load("debezium/shop")) == 320
    with pytest.raises(KeyError, match="no sample named"):
        cdckit.samples.path("nope")


def test_committed_shop_files_are_what_the_encoders_write(tmp_path):
    written = build_shop(tmp_path)
    assert written, "no shop files were written"
    for path in written:
        committed = cdckit.samples.DATA / path.relative_to(tmp_path)
        assert committed.exists(), f"{committed} is not committed; run make samples"
        if path.suffix == ".parquet":
            assert pq.read_table(path).equals(pq.read_table(committed)), committed
        else:
            assert path.read_bytes() == committed.read_bytes(), f"{committed} is stale; run make samples"
