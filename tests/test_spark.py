"""Spark gives the same canonical frame as pandas, on every sample, with pairing across tasks."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import pandas as pd
import pytest
from comparable import event_rows

import cdckit
from cdckit import spark as cdcspark
from cdckit.frame import COLUMN_NAMES
from cdckit.io import iter_sources
from cdckit.reading.pairing import PAIRED


def normal_rows(frame: pd.DataFrame) -> list[tuple]:
    """Canonical event rows in the one form both engines share (tests/comparable.py), sorted."""
    return event_rows(frame, COLUMN_NAMES)


def test_read_gives_the_pandas_frame_for_every_sample(spark):
    # the shop files in eight tasks or more; the capture's combined frame cached, so that the events, the report
    # and the quarantine below come from one decode
    capture = cdcspark.read(spark, cdckit.samples.DATA, split_messages=40, capture=True)
    capture.combined.cache()
    expected = cdckit.read(cdckit.samples.DATA)
    got = capture.events.toPandas()
    assert list(got.columns) == COLUMN_NAMES
    assert normal_rows(got) == normal_rows(expected)
    want = {k: v for k, v in expected.attrs["report"].items() if k not in ("sources", "detection", "inferred_keys")}
    assert capture.report == want
    assert capture.quarantine.count() == 0
    capture.combined.unpersist()


@pytest.mark.parametrize("sample", ["datahub_blob/examples_split.jsonl", "datahub_tuple/examples_split.jsonl",
                                    "datahub_tuple/shop.jsonl"])
def test_update_halves_are_paired_across_tasks_of_three_messages(spark, sample):
    path = cdckit.samples.path(sample)
    events = cdcspark.read(spark, path, split_messages=3)
    expected = cdckit.read(path)
    assert normal_rows(events.toPandas()) == normal_rows(expected)
    assert cdcspark.report(events) == {k: v for k, v in expected.attrs["report"].items() if k not in ("sources", "detection")}


def test_decode_of_a_kafka_shaped_frame_matches_pandas_for_every_dialect(spark):
    by_dialect: dict[str, list] = defaultdict(list)
    paths: dict[str, list] = defaultdict(list)
    topics: dict[str, list] = defaultdict(list)  # file -> the Kafka topic each saved record names (its source)
    for sample in cdckit.samples.list():
        if cdckit.samples.is_framed(sample):  # framed records on Spark: tests/test_binary_records.py
            continue
        dialect = sample.split("/")[0]
        if dialect == "pg_test_decoding" and "_copy" not in sample:
            # pg_recvlogical files: a blank line inside a value is known only from the file's line numbers,
            # which messages taken out of the file as records have not (the COPY form has no such lines)
            continue
        path = str(cdckit.samples.path(sample))
        paths[dialect].append(path)
        for _, messages in iter_sources(path):
            for m in messages:
                value = m.value if isinstance(m.value, str) and dialect == "universe" else json.dumps(m.value)
                key = None if m.key is None else json.dumps(m.key)
                topics[path].append(m.topic)
                by_dialect[dialect].append((value, key, m.topic or path, m.partition, m.offset))
    for dialect, records in sorted(by_dialect.items()):
        frame = spark.createDataFrame(records, "value string, key string, topic string, partition long, offset long")
        # Round-robin into a few tasks: consecutive records (the halves of an update) land in different tasks;
        # tasks of three messages each are test_update_halves_are_paired_across_tasks_of_three_messages's.
        frame = frame.repartition(max(1, min(len(records) // 3, 8)))
        events = cdcspark.decode(frame)
        expected = pd.concat([with_topics(cdckit.read(p), topics[p]) for p in paths[dialect]], ignore_index=True)
        assert normal_rows(events.toPandas()) == normal_rows(expected), dialect


def with_topics(events: pd.DataFrame, topics: list) -> pd.DataFrame:
    """A file's events with the Kafka topic each saved record names as their source, as a Kafka-shaped frame
    of the records gives it (records with topics make one event each)."""
    if all(topic is None for topic in topics):
        return events
    assert len(events) == len(topics)
    return events.assign(source=[topic or source for topic, source in zip(topics, events["source"])])


def test_update_halves_in_different_files_become_one_row(spark, tmp_path):
    messages = [m.value for _, ms in iter_sources(cdckit.samples.path("datahub_blob")) for m in ms]
    befor = next(m for m in messages if m["payload"]["op"] == "UPDATE_BEFOR")
    after = next(m for m in messages if m["payload"]["op"] == "UPDATE_AFTER")
    (tmp_path / "a.jsonl").write_text(json.dumps(after) + "\n")
    (tmp_path / "b.jsonl").write_text(json.dumps(befor) + "\n" + json.dumps(befor) + "\n")
    events = cdcspark.read(spark, tmp_path)
    rows = events.toPandas()
    assert rows["op"].tolist() == ["update"] and rows["source"].tolist() == [str(tmp_path / "a.jsonl")]
    assert json.loads(rows.loc[0, "before"]) == befor["payload"]["before"]["dataColumn"]
    bad = cdcspark.quarantine(events).toPandas()
    assert bad["reason"].tolist() == ["UPDATE_BEFOR with no partner half (table t_shiyu_pk, seq "
                                      "01605339516000000005)"]
    assert cdcspark.report(events)["skipped"] == {PAIRED: 1}


def test_bad_messages_are_quarantined_not_dropped(spark, tmp_path):
    good = json.loads(cdckit.samples.raw("debezium/shop").splitlines()[0])["payload"]
    path = tmp_path / "capture.jsonl"
    path.write_text(good + "\n" + good[:40] + "\n" + "\n" + good + "\n")
    events = cdcspark.read(spark, path)
    assert events.count() == 2
    bad = cdcspark.quarantine(events).toPandas()
    assert bad[["offset", "line"]].values.tolist() == [[1, 2]]
    assert bad.loc[0, "reason"].startswith("truncated JSON") and bad.loc[0, "raw"] == good[:40]
    report = cdcspark.report(events)
    assert (report["messages"], report["decoded"], report["quarantined"], report["events"]) == (3, 2, 1, 2)


def test_quarantine_needs_the_frame_read_returned(spark):
    events = cdcspark.read(spark, cdckit.samples.path("canal"))
    with pytest.raises(cdckit.CdcError, match="pass the DataFrame"):
        cdcspark.quarantine(events.filter("op = 'insert'"))


def test_get_spark_reuses_the_active_session(spark):
    assert cdcspark.get_spark() is spark


def test_missing_java_says_what_to_install(monkeypatch, tmp_path):
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "no-java"))
    with pytest.raises(cdcspark.SparkSetupError, match="openjdk-17-jre-headless") as caught:
        cdcspark.check_java()
    assert "conda install -c conda-forge openjdk=17" in str(caught.value)


def test_driver_memory_is_a_quarter_of_the_machine_within_bounds():
    from cdckit.spark.session import driver_memory

    assert driver_memory(32 * 2**30) == "8192m"
    assert driver_memory(3 * 2**30) == "1024m"  # never below Spark's own default
    assert driver_memory(1024 * 2**30) == "16384m"
    assert driver_memory(None) == "1024m"
    assert driver_memory(10 * 2**30 + 12345) == "2560m"


def test_a_record_delivered_twice_at_one_offset_counts_twice(spark, tmp_path):
    lines = cdckit.samples.path("debezium/shop").read_text().splitlines()
    path = tmp_path / "redelivered.jsonl"
    path.write_text("\n".join(lines[:5] + lines[4:5] + lines[5:40]) + "\n")  # record 4 twice, one Kafka offset
    expected = cdckit.read(path).attrs["report"]
    assert expected["messages"] == 41
    report = cdcspark.report(cdcspark.read(spark, path))
    assert {k: report[k] for k in ("messages", "decoded", "events")} == \
        {k: expected[k] for k in ("messages", "decoded", "events")}


def test_a_test_decoding_value_left_open_is_quarantined_line_by_line_as_in_pandas(spark, tmp_path):
    path = tmp_path / "cut.txt"
    path.write_text("BEGIN 5\ntable public.t: INSERT: v[text]:'two\nlines'\nCOMMIT 5\n"
                    "table public.t: INSERT: v[text]:'cut\nat the end\n")
    expected = cdckit.read(path, dialect="pg_test_decoding")
    assert expected.attrs["report"]["quarantined"] == 2 and expected.attrs["report"]["skipped"] == {
        "pg_test_decoding: a quoted value continues on the next line": 1}
    events = cdcspark.read(spark, path, dialect="pg_test_decoding")
    assert cdcspark.report(events) == {k: v for k, v in expected.attrs["report"].items()
                                       if k not in ("sources", "detection")}
    got = sorted((r["offset"], r["raw"]) for r in cdcspark.quarantine(events).collect())
    assert got == sorted(zip(cdckit.quarantine(expected)["offset"], cdckit.quarantine(expected)["raw"]))


@pytest.mark.parametrize("name", ["two_phase.txt", "two_phase_ts_copy.txt"])
def test_test_decoding_prepared_transactions_and_inferred_keys_as_in_pandas(spark, name):
    path = Path(__file__).parent / "dialects" / "data" / "pg_test_decoding" / name
    expected = cdckit.read(path, dialect="pg_test_decoding")
    assert expected["key_columns"].notna().any()
    events = cdcspark.read(spark, path, dialect="pg_test_decoding")
    assert normal_rows(events.toPandas()) == normal_rows(expected)
    # the Spark report does not carry inferred_keys (the events do)
    assert cdcspark.report(events) == {k: v for k, v in expected.attrs["report"].items()
                                       if k not in ("sources", "detection", "inferred_keys")}


def _physical_plan(frame) -> str:
    return frame._jdf.queryExecution().executedPlan().toString()


def test_read_tasks_come_from_a_range_without_a_python_stage(spark):
    # the task descriptions are a JVM range: no Python RDD (and its own Python workers) feeds the decode
    plan = _physical_plan(cdcspark.read(spark, cdckit.samples.DATA, split_messages=40))
    assert "Range" in plan and "ExistingRDD" not in plan and "PythonRDD" not in plan


def test_halves_in_one_task_are_paired_there_without_a_shuffle(spark):
    path = cdckit.samples.path("datahub_tuple/examples_split.jsonl")
    expected = cdckit.read(path)
    whole = cdcspark.read(spark, path, capture=True)  # one task: no Exchange, the task pairs its halves
    assert "Exchange" not in _physical_plan(whole.combined)
    assert normal_rows(whole.events.toPandas()) == normal_rows(expected)
    assert whole.report["skipped"].get(PAIRED) == expected.attrs["report"]["skipped"].get(PAIRED) > 0
    cut = cdcspark.read(spark, path, split_messages=3, capture=True)  # several tasks: halves meet after a shuffle
    assert "Exchange" in _physical_plan(cut.combined)
    assert normal_rows(cut.events.toPandas()) == normal_rows(expected)


def test_the_combined_sink_builds_event_runs_as_arrow_columns():
    import pyarrow as pa

    from cdckit.frame import event_table
    from cdckit.spark.engine import _CombinedSink

    sink = _CombinedSink()
    row = (None,) * 14
    sink.rows(event_table([row, row, row]), "debezium", "f", [7, 7, 8], 2, None)
    assert sink.extras == []  # no tuple per row: the run's extra columns are Arrow already
    batch = sink.take()
    assert batch.column("_status").to_pylist() == ["event"] * 3
    assert batch.column("_count").to_pylist() == [1, 0, 1]
    assert batch.column("_raw").null_count == 3 and isinstance(batch, pa.RecordBatch)


def _cut_capture(tmp_path) -> Path:
    """The Debezium shop capture with blank lines (lines are not messages) and a bad line near its end."""
    lines = cdckit.samples.path("debezium/shop.jsonl").read_bytes().splitlines()
    lines[3:3] = [b"", b"   "]
    lines.insert(len(lines) - 5, b'{"not": "closed"')
    path = tmp_path / "cut.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


def test_a_file_cut_by_bytes_is_not_read_on_the_driver(spark, monkeypatch, tmp_path):
    # the driver cuts at line ends without reading; the tasks count their ranges (in Spark's Python workers)
    import cdckit.io.ranges as ranges

    def driver_count(*args, **kwargs):
        raise AssertionError("the driver read the file to count its lines")

    path = _cut_capture(tmp_path)
    monkeypatch.setattr(ranges, "_count_lines", driver_count)
    events = cdcspark.read(spark, str(path), split_bytes=path.stat().st_size // 5)
    assert events.count() > 0


def test_offsets_and_lines_across_byte_ranges_equal_the_pandas_read(spark, tmp_path):
    path = _cut_capture(tmp_path)
    expected = cdckit.read(path, capture=True)
    found = cdcspark.read(spark, str(path), split_bytes=path.stat().st_size // 5, capture=True)
    assert found.events.rdd.getNumPartitions() >= 5
    got = found.events.toPandas()
    assert normal_rows(got) == normal_rows(expected.events)
    assert got["offset"].tolist() == expected.events["offset"].tolist()
    quarantined = found.quarantine.toPandas()
    assert quarantined[["offset", "line"]].values.tolist() == expected.quarantine[["offset", "line"]].values.tolist()
    assert quarantined["line"].tolist() == [len(path.read_bytes().splitlines()) - 5]
    assert found.report == {k: v for k, v in expected.report.items() if k not in ("sources", "detection", "inferred_keys")}


@pytest.mark.parametrize("shape", ["jsonl", "pretty", "kcat", "console"])
def test_a_peer_capture_with_a_licence_header_and_cut_records_reads_as_in_pandas(spark, tmp_path, shape):
    from peer_captures import peer_capture

    path, bad = peer_capture(tmp_path / "capture.txt", shape, "block", count=40)
    if shape == "jsonl":  # and a change at time 0: no time in either engine
        lines = path.read_text().split("\n")
        lines.insert(len(lines) // 2, json.dumps({"op": "c", "ts_ms": 0, "after": {"id": 99},
                                                  "source": {"db": "shop", "table": "items", "ts_ms": 0}}))
        path.write_text("\n".join(lines))
    expected = cdckit.read(path)
    events = cdcspark.read(spark, path, split_messages=7)
    assert normal_rows(events.toPandas()) == normal_rows(expected)
    want = {k: v for k, v in expected.attrs["report"].items() if k not in ("sources", "detection", "inferred_keys")}
    assert cdcspark.report(events) == want and want["quarantined"] == bad
    assert sorted(cdcspark.quarantine(events).toPandas()["line"]) == sorted(cdckit.quarantine(expected)["line"])
    if shape == "jsonl":
        assert events.filter("after LIKE '%99%'").toPandas()["event_time"].isna().tolist() == [True]
