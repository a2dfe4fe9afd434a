"""cdckit.read: detection per source, quarantine, accounting, chunks, streaming, errors."""

from __future__ import annotations

import importlib.util
import itertools
import json
import warnings

import pandas as pd
import pytest

import cdckit
from cdckit.frame import COLUMN_NAMES


def debezium(i: int, table: str = "t") -> dict:
    return {"op": "c", "after": {"id": i, "v": f"value {i}"},
            "source": {"connector": "mysql", "db": "d", "table": table, "ts_ms": 1_000 * i,
                       "file": "mysql-bin.000001", "pos": 4 + i, "row": 0}}


def test_frame_has_the_contract_columns_and_types():
    events = cdckit.read([debezium(1)])
    assert list(events.columns) == COLUMN_NAMES
    dtypes = events.dtypes.astype(str).to_dict()
    assert dtypes["offset"] == "int64" and dtypes["partition"] == "Int64"
    assert dtypes["event_time"] == dtypes["emit_time"] == "datetime64[ns, UTC]"
    assert all(dtypes[c].startswith("string") for c in ("dialect", "op", "seq", "key", "before", "after", "ddl"))
    assert events.loc[0, "event_time"] == pd.Timestamp("1970-01-01T00:00:01Z")


def test_empty_input_gives_an_empty_frame_with_the_columns():
    events = cdckit.read([], dialect="debezium")
    assert list(events.columns) == COLUMN_NAMES and events.empty
    assert events.attrs["report"]["messages"] == 0


@pytest.mark.parametrize("payload", ["", b"", "\n", b"\n", " \r\n", [], ()])
def test_an_empty_payload_is_an_empty_capture(payload):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        capture = cdckit.read(payload, capture=True)
    assert list(capture.events.columns) == COLUMN_NAMES and capture.events.empty
    assert capture.quarantine.empty
    assert {k: capture.report[k] for k in ("messages", "events", "quarantined")} == \
        {"messages": 0, "events": 0, "quarantined": 0}


def test_every_message_is_accounted_for_over_all_samples():
    events = cdckit.read(cdckit.samples.DATA)
    report = events.attrs["report"]
    assert report["messages"] == report["decoded"] + report["quarantined"]
    assert report["events"] == len(events)
    assert report["quarantined"] == len(cdckit.quarantine(events))
    without_avro = []  # the core install (make test-oldest) lacks the avro extra: framed records say how to get it
    if importlib.util.find_spec("fastavro") is None:
        framed = {str(cdckit.samples.path(s)) for s in cdckit.samples.list() if cdckit.samples.is_framed(s)}
        bad = cdckit.quarantine(events)
        without_avro = bad[bad["source"].isin(framed)]
        assert len(without_avro) and (without_avro["reason_code"] == "unsupported_format").all()
        assert without_avro["reason"].str.contains("pip install 'cdckit[avro]'", regex=False).all()
    assert sum(report["dialects"].values()) == report["messages"] - len(without_avro)
    # every source was given a dialect, and it is the folder the sample lives in
    for source, dialect in report["sources"].items():
        undecodable = len(without_avro) and source in set(without_avro["source"])
        assert source.split("/")[-2] == dialect or undecodable, source


def test_printing_and_slicing_a_frame_with_its_attrs_works():
    events = cdckit.read([debezium(i) for i in range(3)] + ['{"op": "c", "after": '])
    with pd.option_context("display.width", 80):
        assert "debezium" in repr(events)  # wide frames are concatenated internally for printing
    part = events.iloc[:1]
    assert part.attrs["quarantine"] is events.attrs["quarantine"]
    assert len(pd.concat([events, events])) == 6


def test_chunks_have_at_most_chunksize_events_and_add_up_to_the_whole(tmp_path):
    path = tmp_path / "c.jsonl"
    lines = [json.dumps(debezium(i)) for i in range(25)]
    lines[7] = lines[7][:30]  # one truncated message
    path.write_text("\n".join(lines) + "\n")
    whole = cdckit.read(path)
    chunks = list(cdckit.read(path, chunksize=10))
    assert [len(c) for c in chunks] == [10, 10, 4]
    pd.testing.assert_frame_equal(pd.concat(chunks, ignore_index=True), whole)
    assert [len(cdckit.quarantine(c)) for c in chunks] == [1, 0, 0]
    assert chunks[-1].attrs["report"] == whole.attrs["report"]


def test_chunked_read_streams_without_reading_everything_first():
    endless = (debezium(i) for i in itertools.count())
    reader = cdckit.read(endless, chunksize=1_000)
    first = next(reader)
    second = next(reader)
    assert len(first) == len(second) == 1_000
    assert second["offset"].iloc[0] == 1_000


def test_errors_raise_on_a_wrong_dialect_message_keeps_the_partial_frame():
    msgs = [debezium(0), debezium(1), {"database": "d", "table": "t", "type": "insert", "ts": 1, "data": {"id": 1}}]
    with pytest.raises(cdckit.DecodeError) as caught:
        cdckit.read(msgs, dialect="debezium", errors="raise")
    assert caught.value.offset == 2 and caught.value.source == "<iterable>"
    assert len(caught.value.partial) == 2
    assert "(it looks like a maxwell message)" in caught.value.reason


def test_errors_raise_chains_the_cause():
    msgs = [{"database": "d", "table": "t", "type": "insert", "ts": "x", "data": {"id": 1}}]
    with pytest.raises(cdckit.DecodeError) as caught:
        cdckit.read(msgs, dialect="maxwell", errors="raise")
    assert isinstance(caught.value.__cause__, cdckit.InvalidValue)


def test_errors_must_be_a_known_mode():
    with pytest.raises(ValueError, match="errors must be"):
        cdckit.read([debezium(0)], errors="ignore")


def test_misspelt_dialect_names_the_nearest():
    with pytest.raises(cdckit.UnknownDialectError, match="did you mean 'maxwell'"):
        cdckit.read([debezium(0)], dialect="maxwel")


def test_an_unrecognised_source_is_quarantined_whole_with_a_warning(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text("hello\nworld\n")
    with pytest.warns(UserWarning, match="no dialect recognises"):
        events = cdckit.read(path)
    quarantine = cdckit.quarantine(events)
    assert events.empty and quarantine["offset"].tolist() == [0, 1]
    assert quarantine["reason_code"].tolist() == ["unknown_dialect"] * 2
    # the dialects tried are named once, in the report, not on every quarantined row
    assert not quarantine["reason"].str.contains("tried: |canal|maxwell").any()
    assert quarantine["reason"].str.contains("no dialect recognises this input").all()
    tried = events.attrs["report"]["detection"][str(path)]["reason"]
    assert "tried: " in tried and all(name in tried for name in cdckit.dialects.names())
    assert events.attrs["report"]["sources"] == {str(path): None}


def test_detect_raises_listing_what_was_tried():
    with pytest.raises(cdckit.UnknownDialectError) as caught:
        cdckit.detect('{"hello": "world"}')
    assert "an object with keys hello" in str(caught.value)
    assert set(caught.value.tried) == set(cdckit.dialects.names())


def test_zone_for_text_times_is_passed_to_the_dialects():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        events = cdckit.read([debezium(1)], tz="Asia/Tokyo")
    assert events.loc[0, "event_time"] == pd.Timestamp("1970-01-01T00:00:01Z")  # epoch times ignore the zone


def test_a_bad_message_is_not_said_to_look_like_its_own_family():
    # a broken Extend record scores highest as Default (it lacks __light_type), but that is its own family
    bad = {"allMetaData": {"table_name": "t"}, "recordType": "UPSERT", "prevStruct": None, "postStruct": {"id": "1"}}
    events = cdckit.read([bad], dialect="oceanbase_extend")
    reason = cdckit.quarantine(events)["reason"].tolist()[0]
    assert "UPSERT" in reason and "looks like" not in reason
    events = cdckit.read([bad], dialect="canal")
    assert "looks like a oceanbase_default message" in cdckit.quarantine(events)["reason"].tolist()[0]


def test_demo_prints_a_table_per_dialect_and_writes_parquet(tmp_path, capsys):
    import pyarrow.parquet as pq

    from cdckit.demo import main

    out = tmp_path / "events.parquet"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # e.g. pandas failing to store attrs in the Parquet metadata
        assert main([str(cdckit.samples.path("canal/shop")), "--out", str(out)]) == 0
    printed = capsys.readouterr()
    assert "canal" in printed.out and "quarantined" in printed.out and printed.err == ""
    table = pq.read_table(out)
    assert table.num_rows == 320 and table.column_names == COLUMN_NAMES
