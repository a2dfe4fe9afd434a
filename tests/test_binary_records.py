"""Framed records (Confluent's wire format): Avro read as the JSON converter writes the same changes, schemas from
a folder, a capture's own folder or a registry client's settings, and every failure quarantined with its reason."""

from __future__ import annotations

import base64
import json
import sys

import pandas as pd
import pytest

import cdckit
from cdckit.io.registered_schema import folder_schemas, save_schemas
from cdckit.io.schema_book import SchemaBook
from cdckit.io.wire_format import message_indexes

pytest.importorskip("fastavro", reason="the avro extra: pip install 'cdckit[avro]'")

import avro_records as ar  # noqa: E402
from comparable import row_texts  # noqa: E402


def _same_events(got: pd.DataFrame, want: pd.DataFrame) -> None:
    columns = [c for c in want.columns if c != "source"]
    pd.testing.assert_frame_equal(got[columns].reset_index(drop=True), want[columns].reset_index(drop=True))


@pytest.fixture
def pair(tmp_path):
    """The JSON converter's capture and the Avro converter's capture of the same changes (schemas in a folder)."""
    rows = ar.changes()
    json_path = tmp_path / "json.jsonl"
    json_path.write_bytes(ar.json_lines(rows))
    avro_path = tmp_path / "avro.jsonl"
    avro_path.write_bytes(ar.avro_lines(ar.avro_records(rows)))
    folder = tmp_path / "exported"
    save_schemas(ar.registered(), folder)
    return json_path, avro_path, folder


def test_avro_records_read_as_the_json_converter_writes_the_same_changes(pair):
    json_path, avro_path, folder = pair
    want = cdckit.read(json_path, capture=True)
    got = cdckit.read(avro_path, schemas=folder, capture=True)
    assert len(got.quarantine) == 0 and len(want.quarantine) == 0
    assert list(got.events["op"]) == ["read", "insert", "update", "delete", "tombstone"]
    _same_events(got.events, want.events)
    after = json.loads(got.events.loc[0, "after"])
    assert after["price"] == 123.45 and after["pic"] == "/wAB" and after["small"] == -3 and after["tags"] == ["a", None]
    want_types = cdckit.column_types_of(want.with_attrs()).drop(columns="source")
    pd.testing.assert_frame_equal(cdckit.column_types_of(got.with_attrs()).drop(columns="source"), want_types)
    for table, state in cdckit.materialize(want.events).items():
        pd.testing.assert_frame_equal(cdckit.materialize(got.events)[table], state)


def test_a_captures_own_schemas_beside_it_are_found(pair, tmp_path):
    _, avro_path, folder = pair
    capture = tmp_path / "captures" / "avro.jsonl"
    capture.parent.mkdir()
    capture.write_bytes(avro_path.read_bytes())
    save_schemas(folder_schemas(folder), str(capture) + ".schemas")
    events = cdckit.read(capture)
    assert len(events) == 5 and len(cdckit.quarantine(events)) == 0
    # the schemas folder beside a capture is not itself read as a capture when the capture's folder is read
    whole = cdckit.read(capture.parent, capture=True)
    assert list(whole.report["sources"]) == [str(capture)] and len(whole.events) == 5


def test_detection_names_the_schema_id_subject_and_record(pair):
    _, avro_path, folder = pair
    found = cdckit.detect(avro_path, schemas=folder)
    assert found.dialect == "debezium"
    assert f"Avro schema id {ar.VALUE_ID} (subject {ar.TOPIC}-value, record {ar.TOPIC}.Envelope)" in str(found)


def test_a_new_schema_mid_topic_with_a_column_added_reads_both(tmp_path):
    rows = ar.changes()[:2]
    wider = [*ar.VALUE_FIELDS, {"type": "string", "optional": True, "field": "note"}]
    later = [({"id": 3}, {"before": None, "after": {**ar._row(3), "note": "new"}, "source": ar._source(50), "op": "c",
                          "ts_ms": 5})]
    records = ar.avro_records(rows) + ar.avro_records(later, value_id=9, value_schema=ar.avro_envelope_schema(wider))
    path = tmp_path / "evolved.jsonl"
    path.write_bytes(ar.avro_lines(records))
    folder = tmp_path / "schemas"
    save_schemas(ar.registered() + ar.registered(ar.avro_envelope_schema(wider), 9)[1:], folder)
    events = cdckit.read(path, schemas=folder)
    assert len(events) == 3 and len(cdckit.quarantine(events)) == 0
    assert json.loads(events.loc[2, "after"])["note"] == "new" and "note" not in json.loads(events.loc[1, "after"])
    json_path = tmp_path / "evolved_json.jsonl"
    json_path.write_bytes(ar.json_lines(rows))
    _same_events(events.head(2), cdckit.read(json_path))


def test_every_damaged_record_is_quarantined_with_its_reason_and_the_rest_read(pair, tmp_path):
    _, _, folder = pair
    good = ar.avro_records(ar.changes())
    key, value = good[1]
    lines = ar.avro_lines(good[:1])
    lines += ar.avro_lines([(key, b"\x00\x00\x00\x00\x63" + value[5:])], 2)  # an unknown schema id
    lines += ar.avro_lines([(key, value[:-4])], 3)  # a truncated body
    lines += ar.avro_lines([(key, value + b"\x01\x02")], 4)  # bytes left over after the record
    lines += ar.avro_lines([(b"\x00\x00\x00\x00\x63\x02", value)], 5)  # a key of an unknown schema
    lines += b'{"topic":"t","partition":0,"offset":6,"key":null,"payload_base64":"not base64!"}\n'
    lines += ar.avro_lines(good[2:3], 7)
    path = tmp_path / "damaged.jsonl"
    path.write_bytes(lines)
    found = cdckit.read(path, schemas=folder, capture=True)
    assert list(found.events["offset"]) == [0, 7]
    bad = found.quarantine.set_index("offset")
    assert list(bad.index) == [2, 3, 4, 5, 6]
    assert bad.loc[2, "reason_code"] == "unknown_schema" and "schema id 99 was not found in the folder" in bad.loc[2, "reason"]
    assert str(folder) in bad.loc[2, "reason"]
    assert bad.loc[3, "reason_code"] == "invalid_encoding" and f"Avro schema id {ar.VALUE_ID}" in bad.loc[3, "reason"]
    assert "left over" in bad.loc[4, "reason"]
    assert bad.loc[5, "reason"].startswith("the record's key: schema id 99")
    assert "not Base64" in bad.loc[6, "reason"]
    assert found.report["messages"] == 7


def test_framed_records_without_schemas_are_quarantined_saying_how_to_give_them(pair):
    _, avro_path, _ = pair
    found = cdckit.read(avro_path, dialect="debezium", capture=True)
    assert len(found.events) == 0 and len(found.quarantine) == 5
    assert set(found.quarantine["reason_code"]) == {"unknown_schema"}
    assert "--schema-registry" in found.quarantine["reason"].iloc[0]


def test_without_the_avro_extra_each_record_is_quarantined_saying_how_to_install_it(pair, monkeypatch):
    _, avro_path, folder = pair
    monkeypatch.setitem(sys.modules, "fastavro", None)  # import fastavro now fails, as in a core install
    found = cdckit.read(avro_path, schemas=folder, capture=True)
    assert len(found.events) == 0 and len(found.quarantine) == 5
    assert set(found.quarantine["reason_code"]) == {"unsupported_format"}
    assert "pip install 'cdckit[avro]'" in found.quarantine["reason"].iloc[0]
    assert list(found.quarantine["offset"]) == list(range(5))


def test_avro_from_other_producers_takes_the_connect_meaning_of_its_logical_types(tmp_path):
    """A plain Avro producer's logical types (no connect.* properties): a decimal stays exact, a date is days,
    a timestamp-millis is Connect's Timestamp, a uuid text."""
    schema = {"type": "record", "name": "Order", "namespace": "shop", "fields": [
        {"name": "id", "type": "long"},
        {"name": "amount", "type": {"type": "bytes", "logicalType": "decimal", "precision": 38, "scale": 4}},
        {"name": "day", "type": {"type": "int", "logicalType": "date"}},
        {"name": "at", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {"name": "ref", "type": {"type": "string", "logicalType": "uuid"}},
        {"name": "kind", "type": {"type": "enum", "name": "Kind", "symbols": ["A", "B"]}},
        {"name": "raw", "type": {"type": "fixed", "name": "Four", "size": 4}}]}
    from cdckit.io.avro_connect import AvroDecoder

    decoder = AvroDecoder(schema)
    fields = {f["field"]: f for f in decoder.connect_schema["fields"]}
    assert fields["amount"]["name"] == "org.apache.kafka.connect.data.Decimal"
    assert fields["amount"]["parameters"] == {"scale": "4", "connect.decimal.precision": "38"}
    assert fields["day"]["name"] == "org.apache.kafka.connect.data.Date"
    assert fields["at"]["name"] == "org.apache.kafka.connect.data.Timestamp" and fields["at"]["type"] == "int64"
    assert fields["ref"]["name"] == "io.debezium.data.Uuid" and fields["kind"]["type"] == "string"
    body = ar.frame(1, schema, {"id": 7, "amount": (10**30 + 1).to_bytes(13, "big", signed=True), "day": 19000,
                                "at": 1_700_000_000_123, "ref": "6f1c...", "kind": "B", "raw": b"\x00\x01\x02\x03"})[5:]
    value = decoder.read(body)
    assert value == {"id": 7, "amount": base64.b64encode((10**30 + 1).to_bytes(13, "big", signed=True)).decode(),
                     "day": 19000, "at": 1_700_000_000_123, "ref": "6f1c...", "kind": "B", "raw": "AAECAw=="}


def test_json_schema_framed_records_are_their_json_text(tmp_path):
    from cdckit.io.kafka import record_line
    from cdckit.io.registered_schema import RegisteredSchema

    value = b"\x00\x00\x00\x00\x05" + json.dumps({"op": "c", "after": {"id": 1}, "source": {
        "connector": "mysql", "db": "d", "table": "t", "ts_ms": 1, "file": "f", "pos": 4, "row": 0}}).encode()
    path = tmp_path / "js.jsonl"
    path.write_bytes(record_line("t", 0, 0, (1, 0), None, value, None) + b"\n")
    save_schemas([RegisteredSchema(5, "JSON", '{"type": "object"}', "t-value", 1)], tmp_path / "s")
    events = cdckit.read(path, schemas=tmp_path / "s")
    assert list(events["op"]) == ["insert"] and events.loc[0, "after"] == '{"id":1}'


def test_the_binary_capture_layout_keeps_every_byte():
    from cdckit.io.kafka import record_line
    from cdckit.io.records import parse_line

    for key, value in ((b"\x00\x00\x00\x00\x01\xff", b"\xfe\xff"), (b"k", b"\x00\x00\x00\x00\x02\x00"), (None, None)):
        line = record_line("t", 3, 9, (1, 5), key, value, None)
        msg = parse_line(line, "f", 0, 1)
        got_value = msg.value.raw if hasattr(msg.value, "raw") else msg.raw
        if value is not None and value[:1] == b"\x00":
            assert msg.value.raw == value
        elif value is not None:
            assert msg.raw == line and base64.b64decode(json.loads(line)["payload_base64"]) == value
        else:
            assert got_value is not None
        if key is not None and key[:1] == b"\x00":
            assert msg.key.raw == key and msg.key.schema_id == 1
        assert (msg.partition, msg.offset) == (3, 9)


def test_a_schema_book_travels_to_a_worker_without_its_client_and_keeps_what_it_found(pair):
    import pickle

    _, _, folder = pair
    book = SchemaBook("http://127.0.0.1:9", {"basic.auth.user.info": "u:p"}, [str(folder)])
    assert book.lookup(ar.VALUE_ID) is not None
    assert book.lookup(12345) is None and "the schema registry http://127.0.0.1:9" in book.missing_reason(12345)
    copy = pickle.loads(pickle.dumps(book))
    assert copy._client is None and copy.lookup(ar.KEY_ID).subject == f"{ar.TOPIC}-key"


def test_protobuf_message_indexes():
    assert message_indexes(b"\x00") == ([0], 1)
    assert message_indexes(b"\x02\x02") == ([1], 2)
    with pytest.raises(ValueError):
        message_indexes(b"\x7f")


def test_spark_decodes_a_kafka_frame_of_framed_records_as_pandas_reads_them(spark, pair, tmp_path):
    """Keys and values as binary columns (as spark.read.format("kafka") gives them), the schemas found once on the
    driver; damaged records quarantined as pandas quarantines them."""
    from cdckit import spark as cdcspark

    _, avro_path, folder = pair
    records = ar.avro_records(ar.changes())
    key, value = records[1]
    records += [(key, b"\x00\x00\x00\x00\x63" + value[5:]), (key, value[:-3])]
    rows = [(key, value, ar.TOPIC, 0, offset) for offset, (key, value) in enumerate(records)]
    frame = spark.createDataFrame(rows, "key binary, value binary, topic string, partition int, offset long")
    got = cdcspark.decode(frame, schemas=str(folder), capture=True)
    path = tmp_path / "same.jsonl"
    path.write_bytes(ar.avro_lines(records))
    want = cdckit.read(path, schemas=folder, capture=True)
    events = got.events.toPandas().sort_values("offset", ignore_index=True)
    columns = [c for c in want.events.columns if c != "source"]
    assert row_texts(events[columns]) == row_texts(want.events[columns])
    quarantined = got.quarantine.toPandas().sort_values("offset")
    assert list(quarantined["reason_code"]) == ["unknown_schema", "invalid_encoding"]
    assert list(quarantined["offset"]) == [5, 6]
