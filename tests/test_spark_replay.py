"""Spark parity of sort_events, order_report and materialize: the same answers as pandas."""

from __future__ import annotations

import json

import orjson
import pandas as pd
import pytest

import cdckit
from cdckit import spark as cdcspark
from histories import capture, deliver


def _written(tmp_path, dialect, order, repeats):
    cap = capture(dialect, [("insert", 0), ("insert", 0), ("update", 0), ("update", 1), ("insert", 0),
                            ("delete", 0), ("update", 2), ("update", 0)])
    messages, _ = deliver(cap, order, repeats)
    path = tmp_path / f"{dialect}.jsonl"
    path.write_bytes(b"".join(orjson.dumps(m) + b"\n" for m in messages))
    return path


def _plain(frame: pd.DataFrame) -> list[dict]:
    return frame.astype(object).where(frame.notna(), None).to_dict("records")


def _state_rows(frame) -> list[str]:
    rows = _plain(frame) if isinstance(frame, pd.DataFrame) else [r.asDict(recursive=True) for r in frame.collect()]
    return sorted(json.dumps({k: None if v is None else str(v) for k, v in r.items()}, sort_keys=True) for r in rows)


@pytest.fixture(scope="module")
def captures(tmp_path_factory):
    folder = tmp_path_factory.mktemp("parity")
    shuffled = [_written(folder, "canal", [0, 2, 1, 6, 3, 5, 4, 7], [(2, 1), (5, 0)]),
                _written(folder, "datahub_blob", [1, 0, 3, 2, 5, 4, 7, 6], [(3, 2)])]
    return shuffled + [cdckit.samples.path("shareplex/examples"), cdckit.samples.path("debezium/examples")]


def test_order_report_and_materialize_agree(spark, captures):
    for path in captures:
        events = cdckit.read(path)
        on_spark = cdcspark.read(spark, str(path))
        want = cdckit.order_report(events)
        got = cdcspark.order_report(on_spark, cdcspark.quarantine(on_spark))
        for name in want:
            assert _plain(got[name]) == _plain(want[name]), (path.name, name)
        assert want.problems() == got.problems()

        state = cdckit.materialize(events)
        spark_state = cdcspark.materialize(on_spark)
        assert list(spark_state) == list(state), path.name
        for table in state:
            assert list(spark_state[table].columns) == list(state[table].columns), (path.name, table)
            assert _state_rows(spark_state[table]) == _state_rows(state[table]), (path.name, table)
        assert _plain(spark_state.problems) == _plain(state.problems), path.name
        assert spark_state.keyless == state.keyless


def test_shuffled_capture_has_findings_on_both_engines(spark, captures):
    events = cdckit.read(captures[0])
    report = cdcspark.order_report(cdcspark.read(spark, str(captures[0])))
    assert len(report["inversions"]) > 0 and len(report["redeliveries"]) == 2
    assert len(report["inversions"]) == len(cdckit.order_report(events)["inversions"])


def test_sort_events_agrees(spark, captures):
    for path in captures:
        want = cdckit.sort_events(cdckit.read(path))
        got = cdcspark.sort_events(cdcspark.read(spark, str(path))).select("offset", "seq").toPandas()
        assert got["offset"].tolist() == want["offset"].tolist(), path.name


def test_as_of_agrees(spark):
    path = cdckit.samples.path("shareplex/examples")
    events = cdckit.read(path)
    cut = events["event_time"].iloc[2]
    state = cdckit.materialize(events, as_of=cut)
    spark_state = cdcspark.materialize(cdcspark.read(spark, str(path)), as_of=cut)
    for table in state:
        assert _state_rows(spark_state[table]) == _state_rows(state[table])
