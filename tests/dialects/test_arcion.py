"""Arcion: the spec's key and value structures decoded exactly, its quirks, round trips, shop, bad input."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from validator import assert_round_trip, assert_rows, assert_shop, read_clean, row

import cdckit
from cdckit.dialects import registry

AFRICA_COMMENT = ("lar deposits. blithely final packages cajole. regular waters are final requests. "
                  "regular accounts are according to ")
AFRICA = {"r_regionkey": 0, "r_comment": AFRICA_COMMENT, "r_name": "AFRICA"}
AFRICA_REPLICATED = {"r_regionkey": 0, "r_comment": "Test_Replication", "r_name": "AFRICA"}
TEST_REGION = {"r_regionkey": 6, "r_comment": "Test_Comment", "r_name": "Test_Region"}
EXAMPLE_FILES = ("arcion/examples.json", "arcion/examples_kcat.jsonl", "arcion/examples_pk_update_kcat.jsonl",
                 "arcion/examples_no_key_kcat.jsonl")


def pos(n: int) -> str:
    return f"log-bin.000001:{n:020d}:{1:020d}"


def region(offset, op, op_raw, **fields):
    return row(offset, op, op_raw, database="tpch", table="region", **fields)


def first_value(name: str) -> dict:
    """The first kcat record of a sample, its key and value parsed."""
    record = json.loads(cdckit.samples.raw(name).splitlines()[0])
    return {"key": json.loads(record["key"]), "value": json.loads(record["payload"])}


# ---------------------------------------------------------------- the spec's examples


def test_values_file_decodes_exactly():
    # values alone, pretty-printed and concatenated as the spec prints them: no Kafka key, so no key columns
    events = read_clean(cdckit.samples.path("arcion/examples.json"))
    assert_rows(events, [
        region(0, "read", "r", after=AFRICA),
        region(1, "insert", "c", event_time="2023-02-23T13:39:28Z", emit_time="2023-02-23T08:09:29.357Z",
               seq=pos(2690), after=TEST_REGION),
        region(2, "update", "u", event_time="2023-02-23T13:14:48Z", emit_time="2023-02-23T07:44:49.062Z",
               seq=pos(1248), before=AFRICA, after=AFRICA_REPLICATED),
        region(3, "delete", "d", event_time="2023-02-23T13:35:19Z", emit_time="2023-02-23T08:05:20.242Z",
               seq=pos(2077), before=AFRICA_REPLICATED),
        # a tombstone without its Kafka key says nothing more than "a delete happened"
        row(4, "tombstone", "default"),
    ])
    assert events["partition"].isna().all()


def test_kcat_records_give_keys_partition_and_offset():
    events = read_clean(cdckit.samples.path("arcion/examples_kcat.jsonl"))
    keyed = dict(key_columns=["r_regionkey"])
    assert_rows(events, [
        region(120, "read", "r", after=AFRICA, key=[0], **keyed),
        region(121, "insert", "c", event_time="2023-02-23T13:39:28Z", emit_time="2023-02-23T08:09:29.357Z",
               seq=pos(2690), after=TEST_REGION, key=[6], **keyed),
        region(122, "update", "u", event_time="2023-02-23T13:14:48Z", emit_time="2023-02-23T07:44:49.062Z",
               seq=pos(1248), before=AFRICA, after=AFRICA_REPLICATED, key=[0], **keyed),
        region(123, "delete", "d", event_time="2023-02-23T13:35:19Z", emit_time="2023-02-23T08:05:20.242Z",
               seq=pos(2077), before=AFRICA_REPLICATED, key=[0], **keyed),
        region(124, "tombstone", "default", key=[0], **keyed),
    ])
    assert events["partition"].tolist() == [0, 0, 0, 0, 0]


# ---------------------------------------------------------------- quirks, one test each


def test_snapshot_read_has_no_times_and_no_position():
    raw = first_value("arcion/examples_kcat.jsonl")["value"]["payload"]
    assert (raw["op"], raw["ts_ms"], raw["source"]["ts_ms"], raw["source"]["pos"]) == ("r", None, None, None)
    events = read_clean(cdckit.samples.path("arcion/examples_kcat.jsonl"))
    snapshot = events.iloc[0]
    assert snapshot["op"] == "read" and snapshot["op_raw"] == "r"
    assert pd.isna(snapshot["event_time"]) and pd.isna(snapshot["emit_time"]) and pd.isna(snapshot["seq"])


def test_string_values_are_typed_by_the_embedded_schema():
    value = first_value("arcion/examples_kcat.jsonl")["value"]
    assert value["payload"]["after"]["r_regionkey"] == "0"  # as Arcion writes it
    typed = read_clean([value], dialect="arcion")
    assert json.loads(typed.loc[0, "after"])["r_regionkey"] == 0
    # without the schema nothing says it is a number: the text is kept as it arrived
    bare = read_clean([value["payload"]], dialect="arcion")
    assert json.loads(bare.loc[0, "after"])["r_regionkey"] == "0"


def test_key_columns_and_typed_key_values_come_from_the_kafka_key():
    first = first_value("arcion/examples_kcat.jsonl")
    assert first["key"]["payload"] == {"r_regionkey": "0"}
    events = read_clean(cdckit.samples.path("arcion/examples_kcat.jsonl"))
    assert events.loc[0, "key_columns"] == ["r_regionkey"]
    assert events.loc[0, "key"] == "[0]"


def test_default_tombstone_carries_the_kafka_key_and_its_table():
    record = json.loads(cdckit.samples.raw("arcion/examples_kcat.jsonl").splitlines()[4])
    assert record["payload"] == '"default"'
    assert json.loads(record["key"])["schema"]["name"] == "KAFKA_Connector.tpch.region.Key"
    events = read_clean(cdckit.samples.path("arcion/examples_kcat.jsonl"))
    tomb = events.iloc[4]
    assert (tomb["op"], tomb["op_raw"], tomb["database"], tomb["table"]) == ("tombstone", "default", "tpch", "region")
    assert (tomb["key_columns"], tomb["key"]) == (["r_regionkey"], "[0]")
    assert pd.isna(tomb["before"]) and pd.isna(tomb["after"])


def test_default_key_means_a_table_without_key_columns():
    events = read_clean(cdckit.samples.path("arcion/examples_no_key_kcat.jsonl"))
    log_row = {"r_regionkey": 6, "r_comment": "created", "r_name": "Test_Region"}
    assert_rows(events, [
        row(7, "insert", "c", database="tpch", table="region_log", event_time="2023-02-23T13:39:30Z",
            emit_time="2023-02-23T08:09:31.002Z", seq=pos(2890), after=log_row),
        row(8, "delete", "d", database="tpch", table="region_log", event_time="2023-02-23T13:45:00Z",
            emit_time="2023-02-23T08:15:01.877Z", seq=pos(3402), before=log_row),
        # the tombstone of a keyless row: key "default", value "default", nothing else to say
        row(9, "tombstone", "default"),
    ])
    # the unquoted form of the key (a raw "default" key, not JSON text) means the same
    value = json.loads(json.loads(cdckit.samples.raw("arcion/examples_no_key_kcat.jsonl").splitlines()[0])["payload"])
    raw_key = [{"topic": "t", "partition": 0, "offset": 1, "key": "default", "payload": json.dumps(value)}]
    assert cdckit.read(raw_key, dialect="arcion").loc[0, "key_columns"] is None


def test_primary_key_update_is_a_delete_and_an_insert():
    events = read_clean(cdckit.samples.path("arcion/examples_pk_update_kcat.jsonl"))
    keyed = dict(key_columns=["r_regionkey"])
    assert_rows(events, [
        region(130, "delete", "d", event_time="2023-02-23T13:43:20Z", emit_time="2023-02-23T08:13:21.234Z",
               seq=pos(3120), before=TEST_REGION, key=[6], **keyed),
        region(131, "tombstone", "default", key=[6], **keyed),
        region(132, "insert", "c", event_time="2023-02-23T13:43:20Z", emit_time="2023-02-23T08:13:21.240Z",
               seq=pos(3120), after=dict(TEST_REGION, r_regionkey=7), key=[7], **keyed),
    ])
    assert "update" not in set(events["op"])  # nothing is merged


def test_empty_transaction_id_means_no_transaction_id():
    value = first_value("arcion/examples_kcat.jsonl")["value"]
    assert value["payload"]["transaction"]["id"] == ""
    assert pd.isna(read_clean([value], dialect="arcion").loc[0, "txn_id"])
    value["payload"]["transaction"]["id"] = "1677139769357-7"
    assert read_clean([value], dialect="arcion").loc[0, "txn_id"] == "1677139769357-7"


def test_source_ts_ms_is_ahead_of_the_envelope_ts_ms_in_the_spec_examples():
    # Arcion's own examples: source.ts_ms (the change) is 5.5 hours after ts_ms (the write); taken as given
    events = read_clean(cdckit.samples.path("arcion/examples.json")).iloc[1:4]
    gaps = (events["event_time"] - events["emit_time"]).dt.total_seconds().tolist()
    assert gaps == [19798.643, 19798.938, 19798.758]


def test_image_columns_keep_the_message_order_not_the_schema_order():
    events = read_clean(cdckit.samples.path("arcion/examples.json"))
    assert list(json.loads(events.loc[1, "after"])) == ["r_regionkey", "r_comment", "r_name"]


# ---------------------------------------------------------------- encoding and round trips


def test_encoder_writes_strings_capitals_default_tombstones_and_keys():
    events = read_clean(cdckit.samples.path("arcion/examples_kcat.jsonl"))
    records = list(registry.create("arcion").encode(events))
    assert len(records) == 5
    insert = records[1]
    assert insert.value["payload"]["after"] == {"r_regionkey": "6", "r_comment": "Test_Comment",
                                                "r_name": "Test_Region"}
    assert insert.value["payload"]["source"]["connector"] == "MYSQL"
    assert (insert.value["payload"]["source"]["file"], insert.value["payload"]["source"]["pos"]) == (
        "log-bin.000001", 2690)
    assert insert.value["payload"]["transaction"] == {"id": "", "total_order": 1}
    after_schema = [f for f in insert.value["schema"]["fields"] if f["field"] == "after"][0]
    assert [(f["field"], f["type"]) for f in after_schema["fields"]] == [
        ("r_regionkey", "int64"), ("r_comment", "string"), ("r_name", "string")]
    assert insert.key["payload"] == {"r_regionkey": "6"}
    assert insert.key["schema"]["name"] == "KAFKA_Connector.tpch.region.Key"
    assert insert.key["schema"]["fields"] == [{"type": "int64", "optional": False, "field": "r_regionkey"}]
    assert records[0].value["payload"]["source"]["pos"] is None  # a snapshot row has no position
    assert records[4].value == "default" and records[4].key["payload"] == {"r_regionkey": "0"}
    keyless = list(registry.create("arcion").encode(read_clean(cdckit.samples.path("arcion/examples.json"))))
    assert {r.key for r in keyless} == {"default"}


def test_encoder_skips_what_arcion_cannot_say_and_synthesizes_positions():
    events = cdckit.read(cdckit.samples.path("debezium/examples.json"))
    records = list(registry.create("arcion").encode(events))
    # begin, commit and ddl have no Arcion form; insert, update, delete, tombstone and the PostgreSQL insert do
    assert [r.value["payload"]["op"] if isinstance(r.value, dict) else r.value for r in records] == [
        "c", "u", "d", "default", "c"]
    pg_source = records[4].value["payload"]["source"]
    assert (pg_source["file"], pg_source["pos"], pg_source["row"]) == ("log-bin.000001", 604, 1)


@pytest.mark.parametrize("name", EXAMPLE_FILES)
def test_round_trip_examples(tmp_path, name):
    assert_round_trip("arcion", read_clean(cdckit.samples.path(name)), tmp_path)


def test_shop():
    # everything the scenario holds survives: values come back typed from the schema, keys from the Kafka key
    events = assert_shop("arcion")
    assert events["seq"].is_monotonic_increasing


# ---------------------------------------------------------------- detection


def test_detects_its_samples_with_evidence():
    for name in EXAMPLE_FILES + ("arcion/shop.jsonl",):
        detection = cdckit.detect(cdckit.samples.path(name))
        assert detection.dialect == "arcion", name
        assert "source.connector=MYSQL" in detection.evidence, name
        assert (detection.messages["dialect"] == "arcion").all(), name
    evidence = cdckit.detect(cdckit.samples.path("arcion/examples.json")).evidence
    assert "string values under numeric schema types" in evidence
    assert "transaction without data_collection_order" in evidence


def test_default_value_alone_is_an_arcion_tombstone():
    detection = cdckit.detect('"default"')
    assert detection.dialect == "arcion"
    assert detection.evidence == ('value "default" (Arcion tombstone)',)


def test_arcion_beats_debezium_on_its_samples_and_loses_on_theirs():
    arcion = registry.create("arcion")
    debezium = registry.create("debezium")
    for name in ("arcion/examples.json", "arcion/examples_kcat.jsonl"):
        detection = cdckit.detect(cdckit.samples.path(name))
        assert detection.scores["arcion"] > detection.scores.get("debezium", 0.0)
        assert detection.scores["arcion"] > detection.scores.get("lindorm", 0.0)
    for name in ("debezium/examples.json", "debezium/examples_kcat.jsonl", "debezium/shop.jsonl"):
        detection = cdckit.detect(cdckit.samples.path(name))
        assert detection.dialect == "debezium", name
        assert detection.scores["debezium"] > detection.scores.get("arcion", 0.0)
        assert (detection.messages["dialect"] != "arcion").all(), name
    # message by message: lowercase connector is Debezium's, capitals are Arcion's
    value = first_value("arcion/examples_kcat.jsonl")["value"]
    assert arcion.detect(value).score > debezium.detect(value).score
    value["payload"]["source"]["connector"] = "mysql"
    assert arcion.detect(value).score < debezium.detect(value).score
    # even without the connector, strings under numeric types still point to Arcion
    del value["payload"]["source"]["connector"]
    assert arcion.detect(value).score > debezium.detect(value).score


def test_arcion_does_not_claim_lindorm_messages():
    lindorm_record = cdckit.samples.raw("lindorm/examples_hbase.jsonl").splitlines()[0]
    assert registry.create("arcion").detect(json.loads(lindorm_record)) is None
    assert registry.create("arcion").detect({"database": "d", "table": "t", "type": "insert", "data": {}}) is None
    assert registry.create("arcion").detect(None) is None


# ---------------------------------------------------------------- bad input


GOOD = json.dumps({"schema": {"type": "struct", "fields": []},
                   "payload": {"before": None, "after": {"r_regionkey": "1"}, "op": "c", "ts_ms": 1,
                               "source": {"connector": "MYSQL", "db": "tpch", "table": "region"},
                               "transaction": {"id": "", "total_order": 1}}})


def test_bad_messages_are_quarantined_with_reason():
    lines = [
        GOOD,
        GOOD[:60],  # truncated JSON
        '{"database": "d", "table": "t", "type": "insert", "ts": 1, "data": {"id": 1}}',  # a Maxwell message
        GOOD.replace('"op": "c", ', ""),  # missing required field
        GOOD.replace('"op": "c"', '"op": "x"'),  # unknown op
        '"defualt"',  # a misspelt tombstone value
        GOOD.replace('"after": {"r_regionkey": "1"}', '"after": null'),  # insert without its row
        GOOD.replace('"after": {"r_regionkey": "1"}', '"after": "r_regionkey=1"'),  # an image that is not an object
        GOOD,
    ]
    events = cdckit.read("\n".join(lines), dialect="arcion")
    assert events["offset"].tolist() == [0, 8]
    quarantine = cdckit.quarantine(events)
    assert quarantine["offset"].tolist() == [1, 2, 3, 4, 5, 6, 7]
    assert set(quarantine["source"]) == {"<string>"}
    assert set(quarantine["dialect"]) == {"arcion"}
    reasons = quarantine["reason"].tolist()
    assert reasons[0].startswith("truncated JSON")
    assert reasons[1].startswith("missing required field op")
    assert reasons[2].startswith("missing required field op")
    assert reasons[3].startswith("unknown op 'x'")
    assert reasons[4].startswith("expected a Debezium change event as a JSON object, got str")
    assert reasons[5].startswith("op 'c' without an after image")
    assert reasons[6].startswith("expected after as a JSON object, got text")
    assert quarantine["raw"].tolist() == lines[1:8]
    report = events.attrs["report"]
    assert (report["messages"], report["decoded"], report["events"], report["quarantined"]) == (9, 2, 2, 7)


def test_a_maxwell_message_is_named_in_the_reason():
    # needs the maxwell dialect to be written: until then no hint can name it
    events = cdckit.read('{"database": "d", "table": "t", "type": "insert", "ts": 1, "data": {"id": 1}}',
                         dialect="arcion")
    assert "looks like a maxwell message" in cdckit.quarantine(events).loc[0, "reason"]


def test_bad_kcat_record_is_quarantined_with_its_kafka_offset():
    good = cdckit.samples.raw("arcion/examples_kcat.jsonl").splitlines()[1]
    record = json.loads(good)
    record.update(offset=125, payload=record["payload"][:300])
    events = cdckit.read(good + "\n" + json.dumps(record) + "\n", dialect="arcion")
    quarantine = cdckit.quarantine(events)
    assert quarantine["offset"].tolist() == [125] and quarantine["partition"].tolist() == [0]
    assert quarantine.loc[0, "reason"].startswith("truncated JSON")
    assert events.attrs["report"]["messages"] == 2


def test_errors_raise_names_source_offset_reason_and_keeps_what_was_decoded(tmp_path):
    path = tmp_path / "capture.jsonl"
    path.write_text(GOOD + "\n" + GOOD + "\n" + GOOD.replace('"op": "c"', '"op": "x"') + "\n" + GOOD + "\n")
    with pytest.raises(cdckit.DecodeError) as caught:
        cdckit.read(path, dialect="arcion", errors="raise")
    err = caught.value
    assert (err.source, err.offset) == (str(path), 2)
    assert str(err).startswith(f"{path}, message 2: unknown op 'x'")
    assert len(err.partial) == 2 and err.partial["op"].tolist() == ["insert", "insert"]
