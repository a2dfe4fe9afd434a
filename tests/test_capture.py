"""The explicit result of a read: ``Capture`` (pandas) and ``SparkCapture`` (Spark)."""

from __future__ import annotations

import gc
import weakref

import pandas as pd
import pytest

import cdckit
from cdckit.capture import Capture, added_reports, new_report

DAMAGED = b'{"database":"shop","table":"t","type":"insert","ts":1,"data":{"id":1}}\nnot json\n'


def test_a_capture_holds_what_the_attrs_hold_as_plain_fields():
    capture = cdckit.read(DAMAGED, capture=True)
    events = cdckit.read(DAMAGED)
    assert isinstance(capture, Capture)
    assert capture.events.attrs == {}
    pd.testing.assert_frame_equal(capture.events, events)
    pd.testing.assert_frame_equal(capture.quarantine, pd.DataFrame(cdckit.quarantine(events)))
    assert capture.report == events.attrs["report"]
    assert capture.report["quarantined"] == len(capture.quarantine) == 1
    assert type(capture.quarantine) is pd.DataFrame and type(capture.column_types) is pd.DataFrame


def test_a_derived_frame_loses_the_attrs_but_a_capture_keeps_its_parts():
    capture = cdckit.read(DAMAGED, capture=True)
    chosen = capture.replace(capture.events[capture.events["op"] == "insert"])
    assert len(chosen.quarantine) == 1 and chosen.report is capture.report
    merged = pd.concat([cdckit.read(DAMAGED), cdckit.read(DAMAGED)])  # attrs of two reads: no error
    assert len(merged) == 2


def test_the_functions_that_take_events_take_a_capture():
    capture = cdckit.read(cdckit.samples.path("canal"), capture=True)
    events = capture.with_attrs()
    state, from_capture = cdckit.materialize(events), cdckit.materialize(capture)
    assert set(state) == set(from_capture)
    for name in state:
        pd.testing.assert_frame_equal(state[name], from_capture[name])
    pd.testing.assert_frame_equal(cdckit.table(capture, "products"), cdckit.table(events, "products"))
    pd.testing.assert_frame_equal(cdckit.table_schema(capture), cdckit.table_schema(events))
    assert cdckit.compare(capture, events).ok
    pd.testing.assert_frame_equal(cdckit.order_report(capture).summary(), cdckit.order_report(events).summary())


def test_captures_combined_add_up_their_reports():
    one = cdckit.read(DAMAGED, capture=True)
    two = cdckit.read(cdckit.samples.path("maxwell"), capture=True)
    both = Capture.combined([one, two])
    assert len(both.events) == len(one.events) + len(two.events)
    assert len(both.quarantine) == 1
    for name in ("messages", "decoded", "events", "quarantined"):
        assert both.report[name] == one.report[name] + two.report[name]
    assert both.report["dialects"] == {"maxwell": one.report["dialects"]["maxwell"]
                                       + two.report["dialects"]["maxwell"]}


def test_reports_add_up_tallies_and_keep_pending_only_when_some_is():
    total = added_reports([new_report(1, 1, 1, 0, {"empty": 1}, {"canal": 1}, {"a": "canal"}),
                           new_report(2, 1, 0, 1, {"empty": 2, "ddl": 1}, {"canal": 2}, {"b": "canal"}, pending=2)])
    assert total == {"messages": 3, "decoded": 2, "events": 1, "quarantined": 1,
                     "skipped": {"empty": 3, "ddl": 1}, "dialects": {"canal": 3},
                     "sources": {"a": "canal", "b": "canal"}, "detection": {}, "pending": 2}
    assert "pending" not in added_reports([new_report(1)])


def test_a_chunked_read_has_no_single_capture():
    with pytest.raises(ValueError, match="chunked"):
        cdckit.read(DAMAGED, capture=True, chunksize=1)


def test_events_cdckit_wrote_read_back_as_a_capture(tmp_path):
    from cdckit import export

    path = tmp_path / "events.parquet"
    export.write_events(cdckit.read(cdckit.samples.path("maxwell")), path)
    capture = cdckit.read(path, capture=True)
    assert capture.report["messages"] == len(capture.events) and len(capture.quarantine) == 0


def test_a_spark_capture_keeps_quarantine_and_report_where_a_derived_frame_cannot(spark, tmp_path):
    from cdckit import spark as cdcspark
    from cdckit.errors import CdcError

    path = tmp_path / "damaged.jsonl"
    path.write_bytes(DAMAGED)
    capture = cdcspark.read(spark, str(path), capture=True)
    pandas = cdckit.read(path, capture=True)
    assert isinstance(capture, cdcspark.SparkCapture)
    assert capture.report == {k: v for k, v in pandas.report.items() if k not in ("sources", "detection")}
    assert capture.quarantine.count() == 1
    assert cdcspark.report(capture) == capture.report
    events = cdcspark.read(spark, str(path))
    assert cdcspark.quarantine(events).count() == 1  # the very frame read returned still finds its decode
    with pytest.raises(CdcError, match="capture=True"):
        cdcspark.quarantine(events.filter("op = 'insert'"))
    gone = weakref.ref(events)
    del events
    gc.collect()
    assert gone() is None  # remembering a frame's decode does not keep the frame alive


def _read_frames() -> dict[str, pd.DataFrame]:
    """What ``read`` returns (a quarantine and column types, both not empty) and frames derived from it."""
    events = cdckit.read([*cdckit.samples.raw("canal").splitlines(), "not json"])
    assert len(cdckit.quarantine(events)) == 1 and len(cdckit.column_types_of(events))
    return {"read": events, "head": events.head(3), "columns": events[["op", "table", "after"]],
            "filter": events[events["op"] == "insert"], "copy": events.copy()}


@pytest.mark.parametrize("writer", ["parquet", "feather", "csv", "json", "pickle", "arrow"])
def test_every_pandas_writer_takes_what_read_returns_without_a_warning(tmp_path, writer):
    import warnings

    import pyarrow as pa

    for name, frame in _read_frames().items():
        path = tmp_path / f"{name}.{writer}"
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            if writer == "arrow":
                pa.Table.from_pandas(frame)
            elif writer == "feather":
                frame.reset_index(drop=True).to_feather(path)  # feather refuses a non-default index itself
            elif writer == "json":  # pandas 3 warns that its default date format changes, whatever the frame
                frame.to_json(path, date_format="iso")
            else:
                getattr(frame, f"to_{writer}")(path)
        if writer == "parquet":  # the attrs come back as their JSON-safe summary
            back = pd.read_parquet(path)
            assert back.attrs["report"] == frame.attrs["report"]
            with pytest.raises(ValueError, match="no longer hold"):
                cdckit.quarantine(back)
            assert cdckit.column_types_of(back).empty
            assert Capture.of(back).quarantine.empty


def test_the_quarantine_and_column_types_stay_reachable_from_derived_frames_and_pickles(tmp_path):
    import copy
    import json

    frames = _read_frames()
    want, types = cdckit.quarantine(frames["read"]), cdckit.column_types_of(frames["read"])
    path = tmp_path / "events.pkl"
    frames["read"].to_pickle(path)
    frames["pickled"] = pd.read_pickle(path)
    frames["deepcopy"] = copy.deepcopy(frames["filter"])
    for name, frame in frames.items():
        json.dumps(frame.attrs)
        pd.testing.assert_frame_equal(cdckit.quarantine(frame), want, obj=name)
        pd.testing.assert_frame_equal(cdckit.column_types_of(frame), types, obj=name)
        assert frame.attrs["report"] == frames["read"].attrs["report"]
    # derived frames share the attached frames rather than copy them
    assert frames["head"].attrs["quarantine"] is frames["read"].attrs["quarantine"]
    assert cdckit.quarantine(pd.DataFrame({"a": [1]})).empty  # a frame no read made: nothing quarantined
    merged = pd.concat([cdckit.read(DAMAGED), cdckit.read(DAMAGED)])  # two reads: neither's quarantine kept alone
    assert cdckit.quarantine(merged).empty or len(cdckit.quarantine(merged)) == 2


def test_the_attrs_report_is_plain_json():
    import json

    for name in ("debezium", "pg_test_decoding", "canal"):
        events = cdckit.read(cdckit.samples.path(name))
        assert json.loads(json.dumps(events.attrs["report"])) == events.attrs["report"]


def test_an_empty_quarantine_prints_as_a_dataframe_without_internal_names():
    events = cdckit.read(cdckit.samples.path("maxwell"))
    quarantine = cdckit.quarantine(events)
    assert quarantine.empty and type(quarantine) is pd.DataFrame
    for shown in (repr(quarantine), str(quarantine), repr(events.attrs), repr(events.head(0).attrs),
                  repr(cdckit.read(cdckit.samples.path("maxwell"), capture=True).quarantine)):
        assert "SharedFrame" not in shown and "Attached" not in shown, shown
    assert repr(quarantine).startswith("Empty DataFrame")
