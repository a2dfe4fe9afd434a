"""Lindorm: the spec's records decoded exactly, HBase cells, column deletes, round trips, shop, bad input."""

from __future__ import annotations

import base64
import json

import pandas as pd
import pytest
from validator import assert_round_trip, assert_rows, assert_shop, read_clean, row

import cdckit
from cdckit.dialects import registry

EVENT = "2016-06-09T16:56:51.807Z"  # source.ts_ms of the SQL samples
EMIT = "2016-06-09T16:56:51.815Z"  # payload ts_ms of the SQL samples
ANNE = {"id": "1004", "first_name": "Anne", "last_name": "Kretchmar"}
ANNE_MARIE = {"id": "1004", "first_name": "Anne Marie", "last_name": "Kretchmar"}


def customers(offset, op, op_raw, **fields):
    return row(offset, op, op_raw, database="ld-xxxx", schema="default", table="customers", **fields)


def sample_record(name: str, number: int) -> dict:
    text = cdckit.samples.raw(name)
    if name.endswith(".jsonl"):
        return json.loads(text.splitlines()[number])
    return list(_values(text))[number]


def _values(text: str):
    decoder = json.JSONDecoder()
    pos = 0
    while pos < len(text.rstrip()):
        value, end = decoder.raw_decode(text, pos)
        yield value
        pos = end
        while pos < len(text) and text[pos].isspace():
            pos += 1


# ---------------------------------------------------------------- the spec's examples


def test_examples_decode_exactly():
    events = read_clean(cdckit.samples.path("lindorm/examples.json"))
    sql = dict(event_time=EVENT, emit_time=EMIT)
    assert_rows(events, [
        # "Message structure": the schema types id as int32, the value is a number already
        customers(0, "update", "u", before={"id": 1004, "name": "Jane"}, after={"id": 1004, "name": "Anne"}, **sql),
        customers(1, "insert", "c", after=ANNE, **sql),
        customers(2, "update", "u", before=ANNE_MARIE, after=ANNE, **sql),
        customers(3, "delete", "d", before=ANNE_MARIE, **sql),
        # column delete: last_name is absent from after (not null)
        customers(4, "update", "u", before=ANNE_MARIE, after={"id": "1004", "first_name": "Anne Marie"}, **sql),
        # HBase: ROW and f_name are Base64 of "user1" and "lucky"; the row key is ROW
        customers(5, "insert", "c", event_time="2024-09-02T06:33:53.727Z", emit_time="2024-09-02T06:34:19.839Z",
                  key_columns=["ROW"], key=["user1"], after={"ROW": "user1", "f_name": "lucky"}),
    ])


def test_hbase_examples_decode_exactly():
    events = read_clean(cdckit.samples.path("lindorm/examples_hbase.jsonl"))
    hbase = dict(key_columns=["ROW"], key=["user1"])
    full = {"ROW": "user1", "f_name": "lucky", "f_age": "30", "f_avatar": "AAEC/w=="}
    without_age = {"ROW": "user1", "f_name": "lucky", "f_avatar": "AAEC/w=="}
    assert_rows(events, [
        customers(0, "update", "u", event_time="2024-09-02T06:35:00.911Z", emit_time="2024-09-02T06:35:01.022Z",
                  before={"ROW": "user1", "f_name": "lucky"}, after=full, **hbase),
        customers(1, "update", "u", event_time="2024-09-02T06:36:02.207Z", emit_time="2024-09-02T06:36:02.310Z",
                  before=full, after=without_age, **hbase),
        customers(2, "delete", "d", event_time="2024-09-02T06:37:00.433Z", emit_time="2024-09-02T06:37:00.547Z",
                  before=without_age, **hbase),
    ])


# ---------------------------------------------------------------- quirks, one test each


def test_namespace_is_the_schema_and_db_the_instance_id():
    source = sample_record("lindorm/examples.json", 1)["payload"]["source"]
    assert (source["db"], source["namespace"]) == ("ld-xxxx", "default")
    message = {"schema": {}, "payload": {"op": "c", "ts_ms": 2, "after": {"id": "1"},
                                         "source": {"version": "v2.0", "db": "ld-abc123", "namespace": "sales",
                                                    "table": "orders", "ts_ms": 1}}}
    events = read_clean([message], dialect="lindorm")
    assert events.loc[0, ["database", "schema", "table"]].tolist() == ["ld-abc123", "sales", "orders"]


def test_source_ts_ms_is_event_time_and_payload_ts_ms_is_emit_time():
    message = {"schema": {}, "payload": {"op": "c", "ts_ms": 1725258859839, "after": {"id": "1"},
                                         "source": {"version": "v2.0", "db": "ld-xxxx", "namespace": "default",
                                                    "table": "t", "ts_ms": 1725258833727}}}
    events = read_clean([message], dialect="lindorm")
    assert events.loc[0, "event_time"] == pd.Timestamp("2024-09-02T06:33:53.727Z")
    assert events.loc[0, "emit_time"] == pd.Timestamp("2024-09-02T06:34:19.839Z")


def test_column_delete_stays_absent_from_the_after_image():
    raw = sample_record("lindorm/examples.json", 4)["payload"]
    assert "last_name" in raw["before"] and "last_name" not in raw["after"]
    events = read_clean(cdckit.samples.path("lindorm/examples.json"))
    after = json.loads(events.loc[4, "after"])
    assert after == {"id": "1004", "first_name": "Anne Marie"}
    assert "last_name" not in after  # absent, not null: the column was deleted
    assert "null" not in events.loc[4, "after"]


def test_hbase_cells_are_readable_text_and_binary_cells_stay_base64():
    raw = sample_record("lindorm/examples_hbase.jsonl", 0)["payload"]["after"]
    assert raw == {"ROW": "dXNlcjE=", "f_name": "bHVja3k=", "f_age": "MzA=", "f_avatar": "AAEC/w=="}
    events = read_clean(cdckit.samples.path("lindorm/examples_hbase.jsonl"))
    after = json.loads(events.loc[0, "after"])
    assert after["ROW"] == "user1" and after["f_name"] == "lucky"
    assert after["f_age"] == "30"  # HBase has no types: text, not the number 30
    assert after["f_avatar"] == "AAEC/w==" and base64.b64decode(after["f_avatar"]) == b"\x00\x01\x02\xff"


def test_hbase_rows_are_keyed_by_row():
    events = read_clean(cdckit.samples.path("lindorm/examples_hbase.jsonl"))
    assert events["key_columns"].tolist() == [["ROW"]] * 3
    assert events["key"].tolist() == ['["user1"]'] * 3  # the delete's key comes from its before image


def test_sql_tables_have_no_key_columns_unless_a_kafka_key_comes_with_them():
    events = read_clean(cdckit.samples.path("lindorm/examples.json")).iloc[:5]
    assert events["key_columns"].tolist() == [None] * 5 and events["key"].isna().all()
    value = json.dumps(sample_record("lindorm/examples.json", 1))
    record = {"topic": "lindorm.customers", "partition": 3, "offset": 77, "key": '{"id": "1004"}', "payload": value}
    keyed = read_clean([record], dialect="lindorm")
    assert keyed.loc[0, ["key_columns", "key", "offset", "partition"]].tolist() == [["id"], '["1004"]', 77, 3]


def test_there_is_no_log_position():
    events = read_clean(cdckit.samples.path("lindorm/examples.json"))
    assert events["seq"].isna().all() and events["txn_id"].isna().all()


def test_empty_schema_keeps_values_and_a_full_schema_types_them():
    with_schema = sample_record("lindorm/examples.json", 0)
    with_schema["payload"]["after"]["id"] = "1004"  # text under the schema's int32
    typed = read_clean([with_schema], dialect="lindorm")
    assert json.loads(typed.loc[0, "after"]) == {"id": 1004, "name": "Anne"}
    with_schema["schema"] = {}
    kept = read_clean([with_schema], dialect="lindorm")
    assert json.loads(kept.loc[0, "after"]) == {"id": "1004", "name": "Anne"}


def test_op_r_is_decoded_as_a_read_should_it_appear():
    message = sample_record("lindorm/examples.json", 1)
    message["payload"]["op"] = "r"
    events = read_clean([message], dialect="lindorm")
    assert events.loc[0, ["op", "op_raw"]].tolist() == ["read", "r"]
    assert json.loads(events.loc[0, "after"]) == ANNE


# ---------------------------------------------------------------- encoding and round trips


def test_encoder_writes_base64_cells_a_schema_and_the_namespace():
    events = read_clean(cdckit.samples.path("lindorm/examples.json"))
    records = list(registry.create("lindorm").encode(events))
    hbase = records[5]
    assert hbase.value["payload"]["after"] == {"ROW": "dXNlcjE=", "f_name": "bHVja3k="}
    assert hbase.value["payload"]["source"] == {"version": "v2.0", "db": "ld-xxxx", "namespace": "default",
                                                "table": "customers", "ts_ms": 1725258833727}
    assert hbase.value["payload"]["ts_ms"] == 1725258859839
    assert hbase.key is None
    column_delete = records[4].value
    assert column_delete["payload"]["after"] == {"id": "1004", "first_name": "Anne Marie"}
    fields = {f["field"]: f for f in column_delete["schema"]["fields"]}
    # the schema is generated from the record's own images: the deleted column is still described (from before)
    assert [(f["field"], f["type"]) for f in fields["after"]["fields"]] == [
        ("id", "string"), ("first_name", "string"), ("last_name", "string")]
    first = {f["field"]: f for f in records[0].value["schema"]["fields"]}
    assert [(f["field"], f["type"]) for f in first["after"]["fields"]] == [("id", "int64"), ("name", "string")]
    assert [f["type"] for f in {f["field"]: f for f in hbase.value["schema"]["fields"]}["after"]["fields"]] == [
        "bytes", "bytes"]
    shop = list(registry.create("lindorm").encode(cdckit.samples.load("arcion/shop").iloc[:1]))
    assert shop[0].value["payload"]["source"]["namespace"] == "default"  # no schema: Lindorm's default namespace
    assert shop[0].key == {"id": 1}


def test_encoder_skips_what_lindorm_cannot_say():
    events = cdckit.read(cdckit.samples.path("debezium/examples.json"))
    ops = [r.value["payload"]["op"] for r in registry.create("lindorm").encode(events)]
    assert ops == ["c", "u", "d", "c"]  # begin, commit, tombstone and ddl have no Lindorm form


def test_round_trip_hbase(tmp_path):
    assert_round_trip("lindorm", read_clean(cdckit.samples.path("lindorm/examples_hbase.jsonl")), tmp_path)


def test_round_trip_keeps_kafka_keys_in_kcat_records(tmp_path):
    events = read_clean(cdckit.samples.path("arcion/shop"), dialect=None).iloc[:20].copy()
    events["schema"] = "default"
    events["seq"] = None  # Lindorm has no position
    again = assert_round_trip("lindorm", events, tmp_path, layout="kcat", ignore=("txn_id",))
    assert again["key_columns"].tolist() == events["key_columns"].tolist()


def test_shop():
    def lindorm_view(row):
        # Lindorm records carry no transaction id, and a SQL table names no key columns (the shop is written
        # without Kafka keys); everything else, typed values included, comes back as it was
        return dict(row, txn_id=None, key_columns=None, key=None)

    events = assert_shop("lindorm", transform=lindorm_view)
    assert set(events["schema"]) == {"default"}


# ---------------------------------------------------------------- detection


def test_detects_its_samples_with_evidence():
    for name, version in (("lindorm/examples.json", "v1.0"), ("lindorm/examples_hbase.jsonl", "v2.0"),
                          ("lindorm/shop.jsonl", "v2.0")):
        detection = cdckit.detect(cdckit.samples.path(name))
        assert detection.dialect == "lindorm", name
        assert {"source.namespace", f"source.version={version}"} <= set(detection.evidence), name
        assert (detection.messages["dialect"] == "lindorm").all(), name


def test_lindorm_beats_its_family_on_its_samples_and_loses_on_theirs():
    for name in ("lindorm/examples.json", "lindorm/examples_hbase.jsonl"):
        scores = cdckit.detect(cdckit.samples.path(name)).scores
        assert scores["lindorm"] > scores.get("debezium", 0.0) and scores["lindorm"] > scores.get("arcion", 0.0)
    for name, own in (("debezium/examples.json", "debezium"), ("debezium/shop.jsonl", "debezium"),
                      ("arcion/examples.json", "arcion"), ("arcion/examples_kcat.jsonl", "arcion")):
        detection = cdckit.detect(cdckit.samples.path(name))
        assert detection.dialect == own
        assert detection.scores[own] > detection.scores.get("lindorm", 0.0)
        assert (detection.messages["dialect"] != "lindorm").all(), name
    lindorm = registry.create("lindorm")
    message = sample_record("lindorm/examples.json", 1)
    assert lindorm.detect(message).score > registry.create("debezium").detect(message).score
    del message["payload"]["source"]["namespace"]
    assert lindorm.detect(message) is None  # no namespace: not Lindorm
    assert lindorm.detect("default") is None and lindorm.detect(None) is None


# ---------------------------------------------------------------- bad input


GOOD = json.dumps({"schema": {}, "payload": {"op": "c", "ts_ms": 2, "after": {"id": "1"},
                                             "source": {"version": "v2.0", "db": "ld-xxxx", "namespace": "default",
                                                        "table": "t", "ts_ms": 1}}})


def test_bad_messages_are_quarantined_with_reason():
    lines = [
        GOOD,
        GOOD[:46],  # truncated JSON
        '{"database": "d", "table": "t", "type": "insert", "ts": 1, "data": {"id": 1}}',  # a Maxwell message
        GOOD.replace('"op": "c", ', ""),  # missing required field
        GOOD.replace('"op": "c"', '"op": "i"'),  # unknown op
        GOOD.replace('"op": "c"', '"op": "d"'),  # a delete without its before image
        GOOD.replace('"after": {"id": "1"}', '"after": ["1"]'),  # an image that is not an object
        GOOD,
    ]
    events = cdckit.read("\n".join(lines), dialect="lindorm")
    assert events["offset"].tolist() == [0, 7]
    quarantine = cdckit.quarantine(events)
    assert quarantine["offset"].tolist() == [1, 2, 3, 4, 5, 6]
    assert set(quarantine["source"]) == {"<string>"} and set(quarantine["dialect"]) == {"lindorm"}
    reasons = quarantine["reason"].tolist()
    assert reasons[0].startswith("truncated JSON")
    assert reasons[1].startswith("missing required field op")
    assert reasons[2].startswith("missing required field op")
    assert reasons[3].startswith("unknown op 'i'")
    assert reasons[4].startswith("op 'd' without a before image")
    assert reasons[5].startswith("expected after as a JSON object, got list")
    assert quarantine["raw"].tolist() == lines[1:7]
    report = events.attrs["report"]
    assert (report["messages"], report["decoded"], report["events"], report["quarantined"]) == (8, 2, 2, 6)


def test_a_maxwell_message_is_named_in_the_reason():
    # needs the maxwell dialect to be written: until then no hint can name it
    events = cdckit.read('{"database": "d", "table": "t", "type": "insert", "ts": 1, "data": {"id": 1}}',
                         dialect="lindorm")
    assert "looks like a maxwell message" in cdckit.quarantine(events).loc[0, "reason"]


def test_errors_raise_names_source_offset_reason_and_keeps_what_was_decoded(tmp_path):
    path = tmp_path / "capture.jsonl"
    path.write_text(GOOD + "\n" + GOOD + "\n" + GOOD[:46] + "\n" + GOOD + "\n")
    with pytest.raises(cdckit.DecodeError) as caught:
        cdckit.read(path, dialect="lindorm", errors="raise")
    err = caught.value
    assert (err.source, err.offset) == (str(path), 2)
    assert str(err).startswith(f"{path}, message 2: truncated JSON")
    assert len(err.partial) == 2 and err.partial["table"].tolist() == ["t", "t"]


# ---------------------------------------------------------------- keyless replay of partial images


def _keyless(op: str, before: dict | None, after: dict | None, ts: int) -> dict:
    return {"schema": {}, "payload": {"op": op, "ts_ms": ts + 8, "before": before, "after": after,
                                      "source": {"version": "v2.0", "db": "ld-xxxx", "namespace": "default",
                                                 "table": "people", "ts_ms": ts}}}


def column_delete_then_key_changes() -> list[dict]:
    """No key anywhere: a column deleted, then the row's key changed twice, one other row deleted; later before
    images hold the deleted column as null (or leave it out)."""
    return [
        _keyless("c", None, {"id": "1", "name": "Ann", "city": "Oslo"}, 1000),
        _keyless("c", None, {"id": "2", "name": "Bob", "city": "Rome"}, 1001),
        _keyless("u", {"id": "1", "name": "Ann", "city": "Oslo"}, {"id": "1", "name": "Ann"}, 1002),  # city deleted
        _keyless("u", {"id": "1", "name": "Ann", "city": None}, {"id": "7", "name": "Ann", "city": None}, 1003),
        _keyless("u", {"id": "7", "name": "Ann"}, {"id": "8", "name": "Ann", "city": "Bergen"}, 1004),
        _keyless("u", {"id": "2", "name": "Bob", "city": "Rome"}, {"id": "2", "name": "Bob"}, 1005),
        _keyless("d", {"id": "2", "name": "Bob", "city": None}, None, 1006),
    ]


def test_keyless_rows_are_matched_by_before_images_that_hold_a_deleted_column_as_null_or_leave_columns_out():
    state = cdckit.materialize(read_clean(column_delete_then_key_changes(), dialect="lindorm"), typed=False)
    assert state.problems.empty, state.problems
    assert state.keyless == ["ld-xxxx.people"]
    assert state["ld-xxxx.people"].to_dict("records") == [{"id": "8", "name": "Ann", "city": "Bergen"}]


@pytest.mark.filterwarnings("ignore:materialize.*found no row to change:UserWarning")  # keyless rows on purpose (the warning: test_value_only_capture)
def test_a_null_in_a_keyless_before_image_does_not_match_a_row_that_holds_a_value():
    messages = column_delete_then_key_changes()[:2] + [
        _keyless("d", {"id": "1", "name": "Ann", "city": None}, None, 1002)]  # Ann still has a city
    state = cdckit.materialize(read_clean(messages, dialect="lindorm"), typed=False)
    assert state.problems["problem"].tolist() == ["delete of a row not in the table"]
    assert sorted(state["ld-xxxx.people"]["id"]) == ["1", "2"]
