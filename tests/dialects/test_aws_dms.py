"""AWS DMS: the example messages decoded exactly, full load, before images, control records, round trips,
shop, bad input, detection."""

from __future__ import annotations

import json

from validator import assert_quarantined, assert_rows, assert_shop, read_clean, row, rows

import cdckit
from cdckit.dialects import registry

FOO = dict(database="public", schema="public", table="foo")


def pg(position: str) -> str:
    """The seq of a stream position with transaction-record-id 1."""
    return f"{position}:{1:020d}"


def decoded(*messages: dict) -> list[dict]:
    return rows(read_clean([json.dumps(m) for m in messages], dialect="aws_dms"))


def meta(operation: str, kind: str = "data", **fields) -> dict:
    return {"timestamp": "2024-05-01T09:00:01.250000Z", "record-type": kind, "operation": operation,
            "partition-key-type": "schema-table", "schema-name": "shop", "table-name": "t", **fields}


INSERT = {"data": {"id": 1, "n": 2}, "metadata": meta("insert", **{"transaction-id": 5})}


# ---------------------------------------------------------------- the examples


def test_examples_decode_exactly():
    events = read_clean(cdckit.samples.path("aws_dms/examples.json"))
    assert_rows(events, [
        row(0, "ddl", "drop-table", **FOO, emit_time="2024-07-29T00:30:47.258815Z"),
        row(1, "ddl", "create-table", **FOO, emit_time="2024-07-29T00:30:47.266581Z", key_columns=["id"]),
        row(2, "read", "load", **FOO, emit_time="2024-07-29T00:57:35.691762Z",
            after={"age": 30, "attributes": '{"foo": "bar"}', "id": 42, "name": "John"}),
        row(3, "insert", "insert", **FOO, event_time="2024-07-29T00:58:17.974340Z",
            emit_time="2024-07-29T00:58:17.983670Z", seq=pg("00000002/7C007178.3.00000002/7C007178"), txn_id="1139",
            after={"age": 31, "attributes": '{"baz": "qux"}', "id": 46, "name": "Jane"}),
        row(4, "update", "update", **FOO, event_time="2024-07-29T00:58:44.886717Z",
            emit_time="2024-07-29T00:58:44.895275Z", seq=pg("00000002/7C007328.2.00000002/7C007328"), txn_id="1140",
            before={}, after={"age": 33, "attributes": '{"foo": "bar"}', "id": 42, "name": "John"}),
        row(5, "update", "update", **FOO, event_time="2024-07-29T00:59:07.678294Z",
            emit_time="2024-07-29T00:59:07.686557Z", seq=pg("00000002/7C0073F8.2.00000002/7C0073F8"), txn_id="1141",
            before={"id": 46}, after={"age": 31, "attributes": '{"baz": "qux"}', "id": 45, "name": "Jane"}),
        row(6, "delete", "delete", **FOO, event_time="2024-07-29T01:09:25.366257Z",
            emit_time="2024-07-29T01:09:25.375525Z", seq=pg("00000002/840001D8.2.00000002/840001D8"), txn_id="1144",
            before={"age": None, "attributes": None, "id": 45, "name": None}),
        row(7, "ddl", "create-table", table="awsdms_apply_exceptions", emit_time="2021-02-18T23:09:09.509179Z"),
        row(8, "update", "update", database="salesdb", schema="salesdb", table="SALES_ORDER_DETAIL",
            emit_time="2021-11-19T13:24:43.297344Z", txn_id="47330445004",
            after={"LINE_ID": 144611, "LINE_NUMBER": 1, "ORDER_ID": 11363, "PRODUCT_ID": 927, "QUANTITY": 142,
                   "UNIT_PRICE": 36, "DISCOUNT": 3, "SUPPLY_COST": 15, "TAX": 0, "ORDER_DATE": "2015-10-17"}),
    ])


def test_shop():
    # DMS names no key columns; its one schema-name (the scenario's database) is both database and schema.
    def what_dms_says(truth: dict) -> dict:
        return dict(truth, schema="shop", key_columns=None, key=None)

    events = assert_shop("aws_dms", what_dms_says, fields=("op", "database", "schema", "table", "key_columns", "key",
                                                          "before", "after", "event_time", "emit_time", "txn_id"))
    assert set(events["op"]) == {"insert", "update", "delete"}


def test_detects_its_samples_and_tells_shareplex_apart():
    detection = cdckit.detect(json.dumps(INSERT))
    assert detection.dialect == "aws_dms"
    assert {"data is an object", "metadata.record-type", "metadata.operation"} <= set(detection.evidence)
    for name in ("aws_dms/examples.json", "aws_dms/shop.jsonl"):
        detection = cdckit.detect(cdckit.samples.path(name))
        assert detection.dialect == "aws_dms", name
        assert (detection.messages["dialect"] == "aws_dms").all(), name
    dms = registry.create("aws_dms")
    assert dms.detect({"data": {"id": 1}, "meta": {"op": "ins", "table": "shop.t"}}) is None  # SharePlex
    assert dms.detect({"database": "shop", "table": "t", "type": "insert", "data": {"id": 1}}) is None  # Maxwell
    assert registry.create("shareplex").detect(INSERT) is None
    assert registry.create("maxwell").detect(INSERT) is None
    control = {"metadata": meta("drop-table", "control")}
    assert dms.detect(control).score == 0.9


# ---------------------------------------------------------------- quirks


def test_full_load_rows_are_reads_and_the_guides_spelling_is_read_too():
    got = decoded(dict(INSERT, metadata=meta("load")), dict(INSERT, metadata=meta("create")),
                  dict(INSERT, metadata=meta("read")))
    assert [(r["op"], r["op_raw"], r["after"]) for r in got] == [
        ("read", "load", {"id": 1, "n": 2}), ("insert", "create", {"id": 1, "n": 2}),
        ("read", "read", {"id": 1, "n": 2})]


def test_before_image_under_any_field_name_and_none_without_it():
    update = dict(INSERT, metadata=meta("update"))
    got = decoded(dict(update, BI={"id": 0}), {**update, "before-image": {"id": 1, "n": 1}}, update,
                  dict(update, control={}, note="text is no image"))
    assert [r["before"] for r in got] == [{"id": 0}, {"id": 1, "n": 1}, None, None]
    assert all(r["after"] == {"id": 1, "n": 2} for r in got)
    # a before image field on an insert is not read
    assert decoded(dict(INSERT, BI={"id": 0}))[0]["before"] is None


def test_a_delete_carries_the_deleted_row_in_data():
    [got] = decoded(dict(INSERT, metadata=meta("delete")))
    assert (got["op"], got["before"], got["after"]) == ("delete", {"id": 1, "n": 2}, None)


def test_timestamp_is_the_emit_time_and_commit_timestamp_the_event_time():
    got = decoded(INSERT, dict(INSERT, metadata=meta("insert", **{"commit-timestamp": "2024-05-01T09:00:00.000001Z"})))
    assert [(r["event_time"], r["emit_time"]) for r in got] == [
        (None, "2024-05-01T09:00:01.250000Z"), ("2024-05-01T09:00:00.000001Z", "2024-05-01T09:00:01.250000Z")]


def test_control_records_truncate_ddl_and_other():
    got = decoded({"metadata": meta("truncate-table", "control")}, {"metadata": meta("TruncateTable", "control")},
                  {"metadata": meta("add-column", "control")}, {"metadata": meta("DropTable", "control")},
                  {"control": {}, "metadata": meta("restart-task", "control", **{"schema-name": "", "table-name": ""})})
    shop_t = dict(database="shop", schema="shop", table="t", emit_time="2024-05-01T09:00:01.250000Z")
    assert got == [
        row(0, "truncate", "truncate-table", **shop_t), row(1, "truncate", "TruncateTable", **shop_t),
        row(2, "ddl", "add-column", **shop_t), row(3, "ddl", "DropTable", **shop_t),
        row(4, "other", "restart-task", emit_time="2024-05-01T09:00:01.250000Z")]


def test_no_key_columns_from_the_partition_key():
    keyed = dict(INSERT, metadata=meta("insert", **{"partition-key-type": "primary-key",
                                                     "partition-key-value": "shop.t.1"}))
    [got] = decoded(keyed)
    assert (got["key_columns"], got["key"]) == (None, None)


def test_values_are_kept_as_typed_json():
    data = {"id": 18446744073709551615, "blob": "AAEC", "f": 0.1, "ok": True, "none": None}
    assert decoded(dict(INSERT, data=data))[0]["after"] == dict(data, id="18446744073709551615")


def test_encoder_writes_dms_messages():
    events = read_clean(cdckit.samples.path("aws_dms/examples.json"))
    records = [r.value for r in registry.create("aws_dms").encode(events)]
    assert records[5] == {
        "data": {"age": 31, "attributes": '{"baz": "qux"}', "id": 45, "name": "Jane"}, "before-image": {"id": 46},
        "metadata": {"timestamp": "2024-07-29T00:59:07.686557Z", "record-type": "data", "operation": "update",
                     "partition-key-type": "schema-table", "schema-name": "public", "table-name": "foo",
                     "transaction-id": 1141, "commit-timestamp": "2024-07-29T00:59:07.678294Z",
                     "stream-position": "00000002/7C0073F8.2.00000002/7C0073F8", "transaction-record-id": 1}}
    assert records[1]["control"] == {"table-def": {"primary-key": ["id"]}}
    assert records[2]["metadata"]["operation"] == "load"


def test_encoder_skips_what_dms_cannot_say():
    maxwell = read_clean(cdckit.samples.path("maxwell/examples_bootstrap.jsonl"))
    records = [r.value for r in registry.create("aws_dms").encode(maxwell)]
    assert [r["metadata"]["operation"] for r in records] == ["insert", "insert", "load", "load"]


# ---------------------------------------------------------------- bad input


BAD = [
    ('{"data": {"id": 2}, "metadata": {"record-type": "data", "operation": "insert"', "truncated JSON"),
    ('{"data": {"id": 2}}', "missing required field metadata"),
    ('{"data": {"id": 2}, "metadata": "insert"}', "expected metadata as a JSON object, got text"),
    ('{"data": {"id": 2}, "metadata": {"operation": "insert"}}', "missing required field metadata.record-type"),
    ('{"data": {"id": 2}, "metadata": {"record-type": "data"}}', "missing required field metadata.operation"),
    ('{"data": {"id": 2}, "metadata": {"record-type": "data", "operation": "upsert"}}', "unknown operation 'upsert'"),
    ('{"data": {"id": 2}, "metadata": {"record-type": "data", "operation": 1}}', "unknown operation 1"),
    ('{"data": {"id": 2}, "metadata": {"record-type": "row", "operation": "insert"}}', "unknown record-type 'row'"),
    ('{"metadata": {"record-type": "data", "operation": "insert"}}', "missing required field data"),
    ('{"data": [1], "metadata": {"record-type": "data", "operation": "insert"}}',
     "expected data as a JSON object, got list"),
    ('{"data": {"id": 2}, "a": {}, "b": {}, "metadata": {"record-type": "data", "operation": "update"}}',
     "more than one top-level object could be the before image"),
    ('{"data": {"id": 2}, "metadata": {"record-type": "data", "operation": "insert", "schema-name": 7}}',
     "metadata.schema-name is not text"),
    ('{"data": {"id": 2}, "metadata": {"record-type": "data", "operation": "insert", "timestamp": "yesterday"}}',
     "'yesterday' is not a time"),
]


def test_bad_messages_are_quarantined_with_source_offset_reason_and_raw(tmp_path):
    assert_quarantined("aws_dms", json.dumps(INSERT), BAD, tmp_path)
