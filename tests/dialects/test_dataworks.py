"""DataWorks v2.0: the spec's examples decoded exactly, typing, ops, round trips, shop, bad input."""

from __future__ import annotations

import json

import pytest
from validator import assert_round_trip, assert_rows, assert_shop, read_clean, row

import cdckit
from cdckit import values
from cdckit.dialects import registry
from cdckit.io import iter_sources
from cdckit.reading.detect import score_message

SPEC_BEFORE = {"id": 111, "name": "scooter", "mydata": "3q2+7w==", "ts": "1590315269000.123456789"}
SPEC_AFTER = {"id": 222, "name": "donald", "mydata": "AAEC/w==", "ts": 1590315269000}
PAYMENT = {
    "id": 9001,
    "ext_id": "18446744073709551615",  # bigint unsigned beyond int64: exact text
    "order_no": "A-1001",
    "amount": 19.9,  # decimal(10,2) sent as "19.90"
    "ledger_total": "12345678901234567890.1234567890",  # decimal(38,10) a double cannot hold
    "qty": 3,  # int(11) sent as "3"
    "rate": 0.075,
    "paid": 0,
    "receipt": "iVBORw0KGgo=",  # blob: Base64 text
    "created_at": "1714554000123.456789012",  # datetime(6), nanosecond form
    "updated_at": None,
}
PAYMENT_PAID = dict(PAYMENT, amount=21.5, paid=1, updated_at=1714554001000)
PAYMENTS = dict(database="shop", table="payments", key_columns=["id"], key=[9001])

BLOB_INSERT = {
    "schema": {
        "dataColumn": [{"name": "id", "type": "LONG"}, {"name": "name", "type": "STRING"},
                       {"name": "comment", "type": "STRING"}],
        "source": {"dbName": "yunshi_db", "dbType": "MySQL", "tableName": "t_shiyu_pk"},
        "primaryKey": ["id", "name"],
    },
    "payload": {
        "op": "INSERT",
        "after": {"dataColumn": {"id": 1, "name": "joe", "comment": "comment"}},
        "sequenceId": "1605339516000000004",
        "timestamp": {"eventTime": 1605339932000, "systemTime": 1605339932736, "checkpointTime": 1605339932000},
    },
    "version": "0.0.1",
}
BLOB_HEARTBEAT = {"schema": {}, "payload": {"op": "MHEARTBEAT", "timestamp": {"eventTime": 1605339953629,
                                                                            "checkpointTime": 1605339953629}},
                  "version": "0.0.1"}
MAXWELL = {"database": "shop", "table": "t", "type": "insert", "ts": 1, "xid": 7, "commit": True, "data": {"id": 1}}


def message(op, after=None, before=None, columns=None, scn=None, **extra):
    """A DataWorks message literal for table shop.t (pk id)."""
    payload = {}
    if before is not None:
        payload["before"] = {"data": before}
    if after is not None:
        payload["after"] = {"data": after}
    payload["op"] = op
    payload["timestamp"] = {"eventTime": 1620457659000}
    if scn is not None:
        payload["scn"] = scn
    payload.update(extra)
    schema = {"source": {"dbType": "mysql", "dbName": "shop", "table": "t"},
              "column": [{"name": n, "type": t} for n, t in (columns or {"id": "bigint"}).items()], "pk": ["id"]}
    return {"version": "2.0", "schema": schema, "payload": payload}


def test_spec_examples_decode_exactly():
    events = read_clean(cdckit.samples.path("dataworks/examples.json"))
    assert_rows(events, [
        row(0, "update", "UPDATE", database="myDatabase", schema="mySchema", table="tableName",
            event_time="2021-05-08T07:07:39Z", seq="00001620457659000001", key_columns=["id"], key=[222],
            before=SPEC_BEFORE, after=SPEC_AFTER),
        row(1, "heartbeat", "HEARTBEAT", event_time="2021-05-08T07:07:39Z"),
    ])


def test_transaction_ddl_and_other_ops_decode_exactly():
    events = read_clean(cdckit.samples.path("dataworks/examples_payments.jsonl"))
    assert_rows(events, [
        row(0, "begin", "TRANSACTION_BEGIN", database="shop", event_time="2024-05-01T09:00:00Z",
            seq="00001714554000000001"),
        row(1, "insert", "INSERT", **PAYMENTS, event_time="2024-05-01T09:00:00Z", seq="00001714554000000002",
            after=PAYMENT),
        row(2, "update", "UPDATE", **PAYMENTS, event_time="2024-05-01T09:00:01Z", seq="00001714554001000001",
            before=PAYMENT, after=PAYMENT_PAID),
        row(3, "commit", "TRANSACTION_END", database="shop", event_time="2024-05-01T09:00:01Z",
            seq="00001714554001000002"),
        row(4, "delete", "DELETE", **PAYMENTS, event_time="2024-05-01T09:00:02Z", seq="00001714554002000001",
            before=PAYMENT_PAID),
        row(5, "ddl", "ALTER", database="shop", table="payments", event_time="2024-05-01T09:00:03Z",
            seq="00001714554003000001", ddl="ALTER TABLE payments ADD COLUMN note varchar(64) NULL"),
        row(6, "other", "GTID", event_time="2024-05-01T09:00:04Z", seq="00001714554004000001"),
        row(7, "other", "XACOMMIT", database="shop", event_time="2024-05-01T09:00:05Z", seq="00001714554005000001"),
    ])


# ---------------------------------------------------------------- quirks


def test_images_are_nested_under_data():
    events = read_clean([message("UPDATE", before={"id": 1, "v": "a"}, after={"id": 1, "v": "b"})],
                        dialect="dataworks")
    assert json.loads(events.loc[0, "before"]) == {"id": 1, "v": "a"}
    assert json.loads(events.loc[0, "after"]) == {"id": 1, "v": "b"}


def test_column_types_type_text_values():
    columns = {"id": "bigint", "n": "INT(11) UNSIGNED", "f": "double", "d": "decimal(10,2)", "big": "decimal(38,10)",
               "ok": "boolean", "code": "varchar(20)", "bin": "binary", "at": "datetime"}
    after = {"id": "7", "n": "12", "f": "2.5", "d": "12.50", "big": "0.1000000000000000055511", "ok": "true",
             "code": "007", "bin": "AAEC/w==", "at": "2024-05-01 09:00:00"}
    events = read_clean([message("INSERT", after=after, columns=columns)], dialect="dataworks")
    assert json.loads(events.loc[0, "after"]) == {
        "id": 7, "n": 12, "f": 2.5, "d": 12.5, "big": "0.1000000000000000055511", "ok": True,
        "code": "007", "bin": "AAEC/w==", "at": "2024-05-01 09:00:00"}
    assert events.loc[0, "key"] == "[7]"


def test_values_without_a_column_type_are_kept_as_they_arrive():
    after = {"id": 1, "untyped": "42", "n": 42}
    events = read_clean([message("INSERT", after=after, columns={"id": "bigint"})], dialect="dataworks")
    assert events.loc[0, "after"] == '{"id":1,"untyped":"42","n":42}'


def test_nanosecond_timestamp_form_is_kept_as_exact_text():
    raw = cdckit.samples.raw("dataworks/examples.json")
    assert '"ts": 1590315269000.123456789' in raw  # a JSON number in the message...
    events = read_clean(cdckit.samples.path("dataworks/examples.json"))
    # ...kept digit for digit as text; the plain millisecond value stays a number
    assert '"ts":"1590315269000.123456789"' in events.loc[0, "before"]
    assert '"ts":1590315269000}' in events.loc[0, "after"]
    # and written back as the same raw number
    records = list(registry.create("dataworks").encode(events))
    assert '"ts":1590315269000.123456789}' in values.dumps(records[0].value)


def test_ops_are_case_sensitive_and_mapped():
    expected = {
        "INSERT": "insert", "UPDATE": "update", "DELETE": "delete", "HEARTBEAT": "heartbeat",
        "TRANSACTION_BEGIN": "begin", "TRANSACTION_END": "commit", "CREATE": "ddl", "ALTER": "ddl",
        "ERASE": "ddl", "QUERY": "ddl", "TRUNCATE": "ddl", "RENAME": "ddl", "CINDEX": "ddl", "DINDEX": "ddl",
        "GTID": "other", "XACOMMIT": "other", "XAROLLBACK": "other", "SOME_FUTURE_OP": "other",
    }
    msgs = []
    for op in expected:
        image = {"id": 1}
        msgs.append(message(op, after=image, before=image, ddl={"text": f"-- {op}"}))
    events = read_clean(msgs, dialect="dataworks")
    assert dict(zip(events["op_raw"], events["op"])) == expected
    ddl = events[events["op"] == "ddl"]
    assert ddl["ddl"].tolist() == [f"-- {op}" for op, kind in expected.items() if kind == "ddl"]
    lower = cdckit.read([message("insert", after={"id": 1})], dialect="dataworks")
    assert cdckit.quarantine(lower)["reason"].tolist() == ["unknown op 'insert'"]


def test_heartbeat_has_no_schema():
    events = read_clean(['{"version": "2.0", "payload": {"timestamp": {"eventTime": 1620457659000}, '
                         '"op": "HEARTBEAT"}}'])
    assert events.loc[0, "dialect"] == "dataworks"
    assert_rows(events, [row(0, "heartbeat", "HEARTBEAT", event_time="2021-05-08T07:07:39Z")])


def test_scn_is_a_sortable_seq_and_event_time_is_milliseconds():
    msgs = [message("INSERT", after={"id": n}, scn=scn) for n, scn in ((1, "10"), (2, "9"), (3, 11))]
    events = read_clean(msgs, dialect="dataworks")
    assert events["seq"].tolist() == ["00000000000000000010", "00000000000000000009", "00000000000000000011"]
    assert sorted(events["seq"]) == ["00000000000000000009", "00000000000000000010", "00000000000000000011"]
    assert str(events.loc[0, "event_time"]) == "2021-05-08 07:07:39+00:00"
    assert events["emit_time"].isna().all() and events["txn_id"].isna().all()


def test_extend_is_kept_out_of_the_frame():
    plain = message("INSERT", after={"id": 1}, scn="5")
    extended = dict(plain, extend={"load_fm": "CIBS", "id": 99})
    a = read_clean([plain], dialect="dataworks")
    b = read_clean([extended], dialect="dataworks")
    assert a.equals(b)
    assert "CIBS" not in "".join(str(v) for v in b.iloc[0].tolist())


def test_primary_key_and_source_names():
    msg = message("DELETE", before={"a": 1, "b": "x", "c": None})
    msg["schema"]["pk"] = ["b", "a"]
    msg["schema"]["source"] = {"dbType": "oracle", "dbVersion": "19c", "dbName": "ORCL", "schema": "HR",
                               "table": "EMP"}
    events = read_clean([msg], dialect="dataworks")
    assert events.loc[0, ["database", "schema", "table", "key"]].tolist() == ["ORCL", "HR", "EMP", '["x",1]']
    assert events.loc[0, "key_columns"] == ["b", "a"]


# ---------------------------------------------------------------- round trips and shop


def test_round_trip_examples(tmp_path):
    assert_round_trip("dataworks", read_clean(cdckit.samples.path("dataworks/examples_payments.jsonl")), tmp_path)


def test_encode_skips_what_dataworks_cannot_say():
    events = read_clean(cdckit.samples.path("debezium/examples.json"))
    assert "tombstone" in set(events["op"])
    records = list(registry.create("dataworks").encode(events))
    again = read_clean([r.value for r in records], dialect="dataworks")
    assert again["op"].tolist() == ["begin", "insert", "update", "commit", "delete", "insert", "ddl"]
    assert again["op_raw"].tolist()[-1] == "ALTER"  # the schema change's own type, a DataWorks op too


def test_shop():
    def dataworks_view(truth):
        # DataWorks has no field for the emit time or the transaction id
        return dict(truth, emit_time=None, txn_id=None)

    assert_shop("dataworks", transform=dataworks_view)


# ---------------------------------------------------------------- detection


def test_detects_its_samples_with_evidence():
    detection = cdckit.detect(cdckit.samples.path("dataworks"))
    assert detection.dialect == "dataworks"
    assert {"version=2.0", "schema.column", "payload.before.data", "payload.after.data"} <= set(detection.evidence)
    dataworks = registry.create("dataworks")
    heartbeat = dataworks.detect({"version": "2.0", "payload": {"op": "HEARTBEAT", "timestamp": {}}})
    assert heartbeat is not None and heartbeat.evidence == ("version=2.0", "payload.op=HEARTBEAT")


def test_every_sample_message_is_best_explained_as_dataworks():
    dialects = registry.all_dialects()
    for name in ("dataworks/examples.json", "dataworks/examples_payments.jsonl", "dataworks/shop"):
        for _, msgs in iter_sources(cdckit.samples.path(name)):
            for msg in msgs:
                assert score_message(msg.value, dialects)[0][0] == "dataworks", (name, msg.offset)


@pytest.mark.parametrize("blob", [BLOB_INSERT, BLOB_HEARTBEAT], ids=["insert", "heartbeat"])
def test_datahub_blob_is_never_claimed(blob):
    dataworks = registry.create("dataworks")
    assert dataworks.detect(blob) is None


def test_datahub_blob_shapes_are_not_claimed_even_with_version_2():
    dataworks = registry.create("dataworks")
    assert dataworks.detect(dict(BLOB_INSERT, version="2.0")) is None  # schema.dataColumn
    no_schema = {"version": "2.0", "payload": BLOB_INSERT["payload"]}
    assert dataworks.detect(no_schema) is None  # payload.sequenceId
    image_only = {"version": "2.0", "payload": {"op": "INSERT", "after": {"dataColumn": {"id": 1}}}}
    assert dataworks.detect(image_only) is None  # payload.after.dataColumn


def test_other_shapes_are_not_claimed():
    dataworks = registry.create("dataworks")
    debezium_wrapped = {"schema": {}, "payload": {"op": "c", "before": None, "after": {"data": 1},
                                                  "source": {"connector": "mysql"}}}
    for value in (MAXWELL, debezium_wrapped, None, "text line", [1], {"payload": "x"}):
        assert dataworks.detect(value) is None


# ---------------------------------------------------------------- bad input


def test_bad_messages_are_quarantined_with_reason():
    good = json.dumps(message("INSERT", after={"id": 1}, scn="1"))
    text = "\n".join([
        good,
        '{"version": "2.0", "payload": {"op": "INSERT", "after": {"data": {"id": 2}',
        json.dumps(MAXWELL),
        '{"version": "2.0", "payload": {"after": {"data": {"id": 3}}}}',
        '{"version": "2.0", "payload": {"op": "INSERT", "after": {"dataColumn": {"id": 4}}}}',
        '{"version": "2.0", "payload": {"op": "DELETE", "timestamp": {"eventTime": 1620457659000}}}',
        '{"version": "2.0", "payload": {"op": "HEARTBEAT", "timestamp": {"eventTime": "yesterday"}}}',
        '{"version": "2.0", "payload": {"op": 7}}',
        '{"version": "2.0", "payload": {"op": "INSERT", "after": {"data": [1, 2]}}}',
        good,
    ])
    events = cdckit.read(text, dialect="dataworks")
    assert events["offset"].tolist() == [0, 9]
    quarantine = cdckit.quarantine(events)
    assert quarantine["offset"].tolist() == [1, 2, 3, 4, 5, 6, 7, 8]
    assert set(quarantine["source"]) == {"<string>"} and set(quarantine["dialect"]) == {"dataworks"}
    reasons = quarantine["reason"].tolist()
    assert reasons[0].startswith("truncated JSON")
    assert reasons[1].startswith("missing required field payload")
    assert reasons[2].startswith("missing required field payload.op")
    assert reasons[3].startswith("missing required field payload.after.data")
    assert reasons[4].startswith("missing required field payload.before (op DELETE)")
    assert reasons[5].startswith("payload.timestamp.eventTime is not epoch milliseconds: 'yesterday'")
    assert reasons[6].startswith("unknown op 7")
    assert reasons[7].startswith("expected payload.after.data as a JSON object, got list")
    assert quarantine["raw"].tolist()[0] == '{"version": "2.0", "payload": {"op": "INSERT", "after": {"data": {"id": 2}'
    report = events.attrs["report"]
    assert (report["messages"], report["decoded"], report["quarantined"], report["events"]) == (10, 2, 8, 2)


def test_a_blob_message_read_as_dataworks_is_named_as_blob():
    # needs the datahub_blob dialect (written separately) to recognise its own message
    events = cdckit.read([BLOB_INSERT], dialect="dataworks")
    reason = cdckit.quarantine(events)["reason"].tolist()[0]
    assert reason.startswith("missing required field payload.after.data")
    assert "looks like a datahub_blob message" in reason


def test_errors_raise_names_source_offset_reason_and_keeps_what_was_decoded(tmp_path):
    path = tmp_path / "capture.jsonl"
    good = json.dumps(message("INSERT", after={"id": 1}, scn="1"))
    path.write_text(good + "\n" + good + "\n" + '{"version": "2.0", "payload": {"op": "DELETE"}}' + "\n")
    with pytest.raises(cdckit.DecodeError) as caught:
        cdckit.read(path, dialect="dataworks", errors="raise")
    err = caught.value
    assert (err.source, err.offset) == (str(path), 2)
    assert str(err).startswith(f"{path}, message 2: missing required field payload.before")
    assert err.raw == '{"version": "2.0", "payload": {"op": "DELETE"}}'
    assert len(err.partial) == 2 and err.partial["op"].tolist() == ["insert", "insert"]


def test_nanosecond_form_with_a_fraction_a_double_holds_is_that_number():
    # the documented edge of the nanosecond form: nothing is lost, but the value is a number
    text = ('{"version": "2.0", "schema": {"column": [{"name": "ts", "type": "datetime"}]}, '
            '"payload": {"op": "INSERT", "after": {"data": {"ts": 1590315269000.500000000}}}}')
    events = read_clean(text, dialect="dataworks")
    assert events.loc[0, "after"] == '{"ts":1590315269000.5}'
