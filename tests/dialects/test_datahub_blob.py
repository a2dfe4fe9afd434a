"""DataHub Blob: the spec's examples decoded exactly, split updates paired, round trips, shop, bad input."""

from __future__ import annotations

import json

import pytest
from validator import assert_round_trip, assert_rows, assert_shop, read_clean, row

import cdckit
from cdckit.dialects import registry

PAIRED = "update half: merged with its partner into one row"
KEY = ["id", "name"]
JOE = {"id": 1, "name": "joe", "comment": "comment"}
JOE_1 = {"id": 1, "name": "joe", "comment": "com1"}
PK_SCHEMA = {
    "dataColumn": [{"name": "id", "type": "LONG"}, {"name": "name", "type": "STRING"},
                   {"name": "comment", "type": "STRING"}],
    "source": {"dbName": "yunshi_db", "dbType": "MySQL", "tableName": "t_shiyu_pk"},
    "primaryKey": ["id", "name"],
}


def pk_row(offset, op, op_raw, **fields):
    return row(offset, op, op_raw, database="yunshi_db", table="t_shiyu_pk", key_columns=KEY, **fields)


def message(op, seq="1605339516000000005", before=None, after=None, schema=PK_SCHEMA, event=1605339934000,
            system=1605339934951):
    payload = {"op": op}
    if before is not None:
        payload["before"] = {"dataColumn": before}
    if after is not None:
        payload["after"] = {"dataColumn": after}
    if seq is not None:
        payload["sequenceId"] = seq
    payload["timestamp"] = {"eventTime": event, "systemTime": system, "checkpointTime": event}
    return {"schema": schema, "payload": payload, "version": "0.0.1"}


def jsonl(*messages) -> str:
    return "\n".join(m if isinstance(m, str) else json.dumps(m) for m in messages) + "\n"


# ---------------------------------------------------------------- the spec's examples


def test_spec_examples_decode_exactly():
    events = read_clean(cdckit.samples.path("datahub_blob/examples.json"))
    assert_rows(events, [
        pk_row(0, "insert", "INSERT", event_time="2020-11-14T07:45:32Z", emit_time="2020-11-14T07:45:32.736000Z",
               seq="01605339516000000004", key=[1, "joe"], after=JOE),
        # UPDATE_BEFOR (offset 1) + UPDATE_AFTER (offset 2): one row, at the after half's offset
        pk_row(2, "update", "UPDATE_AFTER", event_time="2020-11-14T07:45:34Z",
               emit_time="2020-11-14T07:45:34.951000Z", seq="01605339516000000005", key=[1, "joe"],
               before=JOE, after=JOE_1),
        pk_row(3, "delete", "DELETE", event_time="2020-11-14T07:45:37Z", emit_time="2020-11-14T07:45:37.671000Z",
               seq="01605339516000000006", key=[1, "joe"], before=JOE_1),
        row(4, "heartbeat", "MHEARTBEAT", event_time="2020-11-14T07:45:53.629000Z"),
        # the ALTER example has neither dataColumn nor primaryKey
        row(5, "ddl", "ALTER", database="test_db", table="t_test_nopk", event_time="2020-11-14T08:21:49Z",
            emit_time="2020-11-14T08:21:49.259000Z", seq="01605339516000000035",
            ddl="alter table t_test_nopk add column holo text"),
    ])
    report = events.attrs["report"]
    assert (report["messages"], report["decoded"], report["events"], report["quarantined"]) == (6, 6, 5, 0)
    assert report["skipped"] == {PAIRED: 1}
    assert "pending" not in report


def test_examples_file_is_the_spec_printed_as_is():
    text = cdckit.samples.raw("datahub_blob/examples.json")
    assert text.count('"version": "0.0.1"') == 6
    assert '"op": "UPDATE_BEFOR"' in text and '"ddlMeta": "rO0ABXNyAClj' in text


def test_halves_apart_and_in_reverse_order_pair_into_one_update():
    events = read_clean(cdckit.samples.path("datahub_blob/examples_split.jsonl"))
    orders = dict(database="yunshi_db", table="t_orders", key_columns=["order_id"], key=[7])
    order = {"order_id": 7, "amount": 12.5, "placed_at": 1605339941000}
    assert_rows(events, [
        row(1, "insert", "INSERT", event_time="2020-11-14T07:45:41Z", emit_time="2020-11-14T07:45:41.088000Z",
            seq="01605339516000000011", after=order, **orders),
        # UPDATE_AFTER came first (offset 0), its UPDATE_BEFOR three messages later (offset 3)
        pk_row(0, "update", "UPDATE_AFTER", event_time="2020-11-14T07:45:40Z",
               emit_time="2020-11-14T07:45:40.120000Z", seq="01605339516000000010", key=[2, "ann"],
               before={"id": 2, "name": "ann", "comment": "c1"}, after={"id": 2, "name": "ann", "comment": "c2"}),
        row(4, "delete", "DELETE", event_time="2020-11-14T07:45:43Z", emit_time="2020-11-14T07:45:43.410000Z",
            seq="01605339516000000013", before=order, **orders),
        # UPDATE_BEFOR at offset 2, UPDATE_AFTER at offset 5, another table's messages between
        pk_row(5, "update", "UPDATE_AFTER", event_time="2020-11-14T07:45:42Z",
               emit_time="2020-11-14T07:45:42.230000Z", seq="01605339516000000012", key=[3, "bob"],
               before={"id": 3, "name": "bob", "comment": "c3"}, after={"id": 3, "name": "bob", "comment": "c4"}),
        # an UPDATE_AFTER that carries its before image is a whole update by itself
        pk_row(6, "update", "UPDATE_AFTER", event_time="2020-11-14T07:45:44Z",
               emit_time="2020-11-14T07:45:44.500000Z", seq="01605339516000000014", key=[3, "bob"],
               before={"id": 3, "name": "bob", "comment": "c4"}, after={"id": 3, "name": "bob", "comment": "c5"}),
    ])
    report = events.attrs["report"]
    assert (report["messages"], report["decoded"], report["events"]) == (7, 7, 5)
    assert report["skipped"] == {PAIRED: 2}


def test_streamx_types_transactions_and_ddl_ops():
    events = read_clean(cdckit.samples.path("datahub_blob/examples_types.json"))
    pg = dict(database="pg_db", schema="public", table="t_types", key_columns=["id"])
    inserted = {"id": 42, "price": 19.5, "active": True, "label": "007", "created": 1605339932000,
                "updated": 1605339999000, "blob": "dGVzdF90ZXh0MTIz"}
    updated = {"id": 42, "price": 20, "active": False, "label": None, "created": 1605339932000,
               "updated": 1605340002000, "blob": "AAEC/w=="}
    assert_rows(events, [
        row(0, "begin", "TRANSACTION_BEGIN", event_time="2020-11-14T07:46:40Z",
            emit_time="2020-11-14T07:46:40.105000Z"),
        row(1, "ddl", "CREATE", event_time="2020-11-14T07:46:40Z", emit_time="2020-11-14T07:46:40.110000Z",
            seq="01605339516000000040",
            ddl="create table public.t_types (id bigint primary key, price double precision, active boolean, "
                "label text, created timestamp, updated timestamp, blob bytea)", **pg),
        row(2, "insert", "INSERT", event_time="2020-11-14T07:46:41Z", emit_time="2020-11-14T07:46:41.230000Z",
            seq="01605339516000000041", key=[42], after=inserted, **pg),
        row(4, "update", "UPDATE_AFTER", event_time="2020-11-14T07:46:42Z", emit_time="2020-11-14T07:46:42.340000Z",
            seq="01605339516000000042", key=[42], before=inserted, after=updated, **pg),
        row(5, "other", "GTID", event_time="2020-11-14T07:46:43Z"),
        row(6, "commit", "XACOMMIT", event_time="2020-11-14T07:46:43Z"),
        row(7, "other", "XAROLLBACK", event_time="2020-11-14T07:46:44Z"),
        row(8, "commit", "TRANSACTION_END", event_time="2020-11-14T07:46:45Z",
            emit_time="2020-11-14T07:46:45.100000Z"),
        # primaryKey [] (a table without a key): no key columns
        row(9, "delete", "DELETE", database="test_db", table="t_test_nopk", event_time="2020-11-14T07:46:46Z",
            emit_time="2020-11-14T07:46:46.300000Z", seq="01605339516000000043", before={"id": 5, "holo": "x"}),
        row(10, "ddl", "TRUNCATE", database="test_db", table="t_test_nopk", event_time="2020-11-14T07:46:47Z",
            emit_time="2020-11-14T07:46:47.200000Z", seq="01605339516000000044", ddl="truncate table t_test_nopk"),
    ])


# ---------------------------------------------------------------- quirks, one by one


def test_update_befor_and_update_after_become_one_row_whichever_comes_first():
    befor = message("UPDATE_BEFOR", before=JOE)
    after = message("UPDATE_AFTER", after=JOE_1)
    other = message("INSERT", seq="1605339516000000099", after={"id": 9, "name": "zed", "comment": "z"})
    for order in ([befor, other, after], [after, other, befor]):
        events = read_clean(jsonl(*order), dialect="datahub_blob")
        assert events["op"].tolist() == ["insert", "update"]
        update = events.iloc[1]
        assert (json.loads(update["before"]), json.loads(update["after"])) == (JOE, JOE_1)
        assert update["op_raw"] == "UPDATE_AFTER"
        assert update["offset"] == order.index(after)  # the merged row sits at the after half's offset
        assert events.attrs["report"]["skipped"] == {PAIRED: 1}


def test_update_halves_of_different_tables_or_sequence_ids_do_not_pair():
    other_table = json.loads(json.dumps(PK_SCHEMA))
    other_table["source"]["tableName"] = "t_other"
    text = jsonl(message("UPDATE_BEFOR", before=JOE), message("UPDATE_AFTER", after=JOE_1, schema=other_table),
                 message("UPDATE_AFTER", seq="1605339516000000006", after=JOE_1))
    events = cdckit.read(text, dialect="datahub_blob")
    assert events.empty
    quarantine = cdckit.quarantine(events)
    assert quarantine["offset"].tolist() == [0, 1, 2]
    assert all("with no partner half" in r for r in quarantine["reason"])


def test_update_after_carrying_before_is_a_whole_update():
    events = read_clean(jsonl(message("UPDATE_AFTER", before=JOE, after=JOE_1)), dialect="datahub_blob")
    assert events["op"].tolist() == ["update"]
    assert (json.loads(events.loc[0, "before"]), json.loads(events.loc[0, "after"])) == (JOE, JOE_1)
    assert events.attrs["report"]["skipped"] == {}


def test_unpaired_update_befor_is_quarantined_at_end_of_stream_and_accounted_for():
    insert = message("INSERT", seq="1605339516000000004", after=JOE)
    delete = message("DELETE", seq="1605339516000000006", before=JOE)
    events = cdckit.read(jsonl(insert, message("UPDATE_BEFOR", before=JOE), delete), dialect="datahub_blob")
    assert events["op"].tolist() == ["insert", "delete"]
    assert events["offset"].tolist() == [0, 2]
    quarantine = cdckit.quarantine(events)
    assert quarantine["offset"].tolist() == [1]
    assert quarantine.loc[0, "reason"] == ("UPDATE_BEFOR with no partner half "
                                           "(table t_shiyu_pk, seq 01605339516000000005)")
    assert quarantine.loc[0, "dialect"] == "datahub_blob"
    assert json.loads(quarantine.loc[0, "raw"])["payload"]["op"] == "UPDATE_BEFOR"
    report = events.attrs["report"]
    assert (report["messages"], report["decoded"], report["events"], report["quarantined"]) == (3, 2, 2, 1)
    assert report["messages"] == report["decoded"] + report["quarantined"]
    assert "pending" not in report


def test_unpaired_half_with_errors_raise_names_it(tmp_path):
    path = tmp_path / "blob.jsonl"
    path.write_text(jsonl(message("INSERT", seq="1605339516000000004", after=JOE), message("UPDATE_BEFOR",
                                                                                          before=JOE)))
    with pytest.raises(cdckit.DecodeError) as caught:
        cdckit.read(path, dialect="datahub_blob", errors="raise")
    assert (caught.value.source, caught.value.offset) == (str(path), 1)
    assert "UPDATE_BEFOR with no partner half" in caught.value.reason
    assert caught.value.partial["op"].tolist() == ["insert"]


def test_mheartbeat_with_empty_schema_is_a_heartbeat():
    beat = {"schema": {}, "payload": {"op": "MHEARTBEAT", "timestamp": {"eventTime": 1605339953629,
                                                                        "checkpointTime": 1605339953629}},
            "version": "0.0.1"}
    events = read_clean([beat], dialect="datahub_blob")
    assert_rows(events, [row(0, "heartbeat", "MHEARTBEAT", event_time="2020-11-14T07:45:53.629000Z")])


@pytest.mark.parametrize("op", ["CREATE", "ALTER", "QUERY", "TRUNCATE", "RENAME", "CINDEX", "DINDEX", "ERASE"])
def test_ddl_ops_keep_the_text_and_drop_ddl_meta(op):
    ddl = {"schema": {"source": {"dbName": "test_db", "tableName": "t"}},
           "payload": {"op": op, "sequenceId": "35", "ddl": {"text": f"{op.lower()} something", "ddlMeta": "rO0ABXNy"},
                       "timestamp": {"eventTime": 1605342109000}}, "version": "0.0.1"}
    events = read_clean([ddl], dialect="datahub_blob")
    assert_rows(events, [row(0, "ddl", op, database="test_db", table="t", event_time="2020-11-14T08:21:49Z",
                             seq="00000000000000000035", ddl=f"{op.lower()} something")])
    assert not any("rO0AB" in str(v) for v in events.iloc[0].tolist())


@pytest.mark.parametrize("op, canonical", [("TRANSACTION_BEGIN", "begin"), ("TRANSACTION_END", "commit"),
                                           ("XACOMMIT", "commit"), ("GTID", "other"), ("XAROLLBACK", "other")])
def test_transaction_ops(op, canonical):
    msg = {"schema": {}, "payload": {"op": op, "timestamp": {"eventTime": 1000}}, "version": "1.0.0"}
    events = read_clean([msg], dialect="datahub_blob")
    assert_rows(events, [row(0, canonical, op, event_time="1970-01-01T00:00:01Z")])


def test_the_six_streamx_types_type_the_values():
    schema = {"dataColumn": [{"name": n, "type": t} for n, t in (
        ("l", "LONG"), ("d", "DOUBLE"), ("b", "BOOLEAN"), ("s", "STRING"), ("t", "DATE"), ("y", "BYTES"))],
        "source": {"dbName": "db", "tableName": "t"}}
    as_text = {"l": "9007199254740993", "d": "0.25", "b": "false", "s": "12", "t": "1605339932000",
               "y": "dGVzdF90ZXh0MTIz"}
    as_json = {"l": 7, "d": 1.5, "b": True, "s": "x", "t": 1605339932000, "y": "AAEC"}
    nulls = dict.fromkeys(as_text)
    events = read_clean(jsonl(*(message("INSERT", seq=str(n), after=image, schema=schema)
                                for n, image in enumerate((as_text, as_json, nulls)))), dialect="datahub_blob")
    got = [json.loads(a) for a in events["after"]]
    assert got[0] == {"l": 9007199254740993, "d": 0.25, "b": False, "s": "12", "t": 1605339932000,
                      "y": "dGVzdF90ZXh0MTIz"}
    assert got[1] == as_json
    assert got[2] == nulls
    assert type(got[0]["d"]) is float and type(got[0]["t"]) is int and type(got[0]["s"]) is str
    # without dataColumn, values are kept exactly as they arrive
    bare = {"source": {"dbName": "db", "tableName": "t"}}
    events = read_clean(jsonl(message("INSERT", seq="1", after=as_text, schema=bare)), dialect="datahub_blob")
    assert json.loads(events.loc[0, "after"]) == as_text


def test_text_that_is_not_its_type_is_kept():
    schema = {"dataColumn": [{"name": "l", "type": "LONG"}, {"name": "b", "type": "BOOLEAN"}],
              "source": {"tableName": "t"}}
    events = read_clean(jsonl(message("INSERT", seq="1", after={"l": "n/a", "b": "maybe"}, schema=schema)),
                        dialect="datahub_blob")
    assert json.loads(events.loc[0, "after"]) == {"l": "n/a", "b": "maybe"}


def test_schema_and_payload_fields_map_to_the_frame():
    schema = {"dataColumn": [{"name": "id", "type": "LONG"}],
              "source": {"dbType": "PostgreSQL", "dbVersion": "14", "dbName": "pg", "schemaName": "sales",
                         "tableName": "orders"},
              "primaryKey": ["id"]}
    msg = message("INSERT", seq="9", after={"id": 5}, schema=schema, event=1605339932000, system=1605339932736)
    expected = [row(0, "insert", "INSERT", database="pg", schema="sales", table="orders",
                    event_time="2020-11-14T07:45:32Z", emit_time="2020-11-14T07:45:32.736000Z",
                    seq="00000000000000000009", key_columns=["id"], key=[5], after={"id": 5})]
    assert_rows(read_clean([msg], dialect="datahub_blob"), expected)
    # checkpointTime is not in the frame: a different one changes nothing
    msg["payload"]["timestamp"]["checkpointTime"] = 1
    assert_rows(read_clean([msg], dialect="datahub_blob"), expected)


def test_sequence_ids_sort_as_numbers():
    msgs = [message("INSERT", seq=s, after=JOE) for s in ("9", "10", "1605339516000000004")]
    seqs = read_clean(jsonl(*msgs), dialect="datahub_blob")["seq"].tolist()
    assert seqs == ["00000000000000000009", "00000000000000000010", "01605339516000000004"]
    assert sorted(seqs) == seqs


# ---------------------------------------------------------------- encoding


def test_encoder_writes_an_update_as_update_befor_and_update_after():
    events = read_clean(cdckit.samples.path("datahub_blob/examples.json"))
    records = [r.value for r in registry.create("datahub_blob").encode(events)]
    assert [r["payload"]["op"] for r in records] == ["INSERT", "UPDATE_BEFOR", "UPDATE_AFTER", "DELETE",
                                                     "MHEARTBEAT", "ALTER"]
    befor, after = records[1]["payload"], records[2]["payload"]
    assert befor["sequenceId"] == after["sequenceId"] == "1605339516000000005"
    assert befor["before"] == {"dataColumn": JOE} and "after" not in befor
    assert after["after"] == {"dataColumn": JOE_1} and "before" not in after
    assert records[0]["schema"]["dataColumn"] == [{"name": "id", "type": "LONG"}, {"name": "name", "type": "STRING"},
                                                  {"name": "comment", "type": "STRING"}]
    assert records[0]["schema"]["primaryKey"] == ["id", "name"]
    assert records[4] == {"schema": {}, "payload": {"op": "MHEARTBEAT", "timestamp": {"eventTime": 1605339953629}},
                          "version": "1.0.0"}
    assert records[5]["payload"]["ddl"] == {"text": "alter table t_test_nopk add column holo text"}


def test_encoder_synthesizes_sequence_ids_and_types_from_values():
    records = [r.value for r in registry.create("datahub_blob").encode(cdckit.samples.shop.shop_events())]
    ids = [r["payload"]["sequenceId"] for r in records]
    assert ids[:3] == ["1714554000000000000", "1714554000000000001", "1714554000000000002"]
    assert all(len(i) == 19 for i in ids)
    assert [int(i) for i in ids] == sorted(int(i) for i in ids)
    updates = [r for r in records if r["payload"]["op"].startswith("UPDATE")]
    assert all(a["payload"]["sequenceId"] == b["payload"]["sequenceId"] for a, b in zip(updates[::2], updates[1::2]))
    assert records[0]["schema"]["dataColumn"] == [
        {"name": "id", "type": "LONG"}, {"name": "name", "type": "STRING"}, {"name": "email", "type": "STRING"},
        {"name": "tier", "type": "STRING"}, {"name": "balance", "type": "DOUBLE"}, {"name": "note", "type": "STRING"}]


def test_round_trip_examples(tmp_path):
    for name in ("datahub_blob/examples_split.jsonl", "datahub_blob/examples_types.json"):
        events = read_clean(cdckit.samples.path(name))
        assert_round_trip("datahub_blob", events, tmp_path)


def test_round_trip_shop(tmp_path):
    events = read_clean(cdckit.samples.path("datahub_blob/shop"))
    again = assert_round_trip("datahub_blob", events, tmp_path)
    assert again.attrs["report"]["skipped"] == {PAIRED: 149}


def test_shop():
    def transform(truth):
        # a Blob message has no transaction id
        return dict(truth, txn_id=None)

    assert_shop("datahub_blob", transform)


# ---------------------------------------------------------------- detection

DATAWORKS = {
    "version": "2.0",
    "schema": {"source": {"dbType": "mysql", "dbVersion": "5.7.35", "dbName": "myDatabase", "table": "tableName"},
               "column": [{"name": "id", "type": "bigint"}, {"name": "name", "type": "varchar(20)"}],
               "pk": ["id"]},
    "payload": {"before": {"data": {"id": 111, "name": "scooter"}}, "after": {"data": {"id": 222, "name": "donald"}},
                "op": "UPDATE", "timestamp": {"eventTime": 1620457659000}, "scn": "1001"},
    "extend": {"load_fm": "CIBS"},
}
DATAWORKS_INSERT = dict(DATAWORKS, payload=dict(DATAWORKS["payload"], op="INSERT", before=None))
DATAWORKS_HEARTBEAT = {"version": "2.0", "payload": {"timestamp": {"eventTime": 1620457659000}, "op": "HEARTBEAT"}}


def test_detects_its_samples_with_evidence():
    detection = cdckit.detect(cdckit.samples.path("datahub_blob/examples.json"))
    assert {"payload.op=UPDATE_BEFOR", "schema.dataColumn", "payload.sequenceId", "version=0.0.1"} <= set(
        detection.evidence)
    blob = registry.create("datahub_blob")
    heartbeat = {"schema": {}, "payload": {"op": "MHEARTBEAT", "timestamp": {"eventTime": 1}}, "version": "0.0.1"}
    assert blob.detect(heartbeat).evidence == ("payload.op=MHEARTBEAT", "version=0.0.1")
    assert blob.detect(heartbeat).score >= 0.9


def test_never_claims_dataworks_messages():
    blob = registry.create("datahub_blob")
    for msg in (DATAWORKS, DATAWORKS_INSERT, DATAWORKS_HEARTBEAT):
        assert blob.detect(msg) is None
    # even without its version, a DataWorks body (data images, scn) is not Blob
    assert blob.detect({k: v for k, v in DATAWORKS_INSERT.items() if k != "version"}) is None


def test_dataworks_does_not_claim_blob_messages():
    # needs the dataworks dialect (written by another helper)
    dataworks = registry.create("dataworks")
    blob = registry.create("datahub_blob")
    for msg in json.loads("[" + cdckit.samples.raw("datahub_blob/examples_split.jsonl").strip().replace("\n", ",")
                          + "]"):
        theirs = dataworks.detect(msg)
        assert theirs is None or theirs.score < blob.detect(msg).score
    assert cdckit.detect(cdckit.samples.path("datahub_blob")).dialect == "datahub_blob"
    assert cdckit.detect([DATAWORKS, DATAWORKS_INSERT]).dialect == "dataworks"


def test_tuple_rows_and_blob_messages_are_told_apart():
    blob, tuple_ = registry.create("datahub_blob"), registry.create("datahub_tuple")
    tuple_row = {"id": 1, "_sequence_id_": "1649991610688000000", "_operation_type_": "I",
                 "_excute_time_": 1649991726000, "_source_table_": "db.t", "_before_image_": "N", "_after_image_": "Y"}
    assert blob.detect(tuple_row) is None
    assert tuple_.detect(message("INSERT", after=JOE)) is None
    assert blob.detect(message("INSERT", after=JOE)).score >= 0.9


def test_detect_never_raises_on_odd_values():
    blob = registry.create("datahub_blob")
    for value in (None, "text", 3, [], {}, {"payload": None}, {"payload": {"op": ["INSERT"]}},
                  {"payload": {"op": "INSERT"}, "schema": "x", "version": ["1.0.0"]}):
        match = blob.detect(value)
        assert match is None or 0 < match.score <= 1


# ---------------------------------------------------------------- bad input


def test_bad_messages_are_quarantined_with_reason():
    good = message("INSERT", seq="1", after=JOE)
    no_time = message("INSERT", seq="2", after=JOE)
    del no_time["payload"]["timestamp"]["eventTime"]
    no_seq = message("DELETE", seq=None, before=JOE)
    no_table = message("INSERT", seq="3", after=JOE, schema={"dataColumn": PK_SCHEMA["dataColumn"]})
    lines = [
        json.dumps(good),
        '{"schema": {}, "payload": {"op": "INSERT", "after": {"dataColumn": {"id": 2',          # 1 truncated
        json.dumps({"schema": {}, "payload": {"op": "UPDATE"}, "version": "0.0.1"}),          # 2 unknown op
        json.dumps({"schema": {}, "payload": {"timestamp": {"eventTime": 1}}}),                # 3 no op
        json.dumps(no_time),                                                                   # 4
        json.dumps(message("UPDATE_BEFOR", after=JOE)),                                        # 5 no before
        json.dumps(no_seq),                                                                    # 6
        json.dumps(no_table),                                                                  # 7
        json.dumps({"op": "c", "after": {"id": 1}, "source": {"connector": "mysql", "table": "t"}}),  # 8 debezium
        json.dumps({"schema": {}, "payload": "INSERT", "version": "0.0.1"}),                   # 9
        json.dumps(dict(good, payload=dict(good["payload"], timestamp={"eventTime": "noon"}))),  # 10
        json.dumps({"schema": {}, "payload": {"op": "ALTER", "timestamp": {"eventTime": 1}}}),  # 11 ddl without ddl
        json.dumps(good),
    ]
    events = cdckit.read("\n".join(lines) + "\n", dialect="datahub_blob")
    assert events["offset"].tolist() == [0, 12]
    quarantine = cdckit.quarantine(events)
    assert quarantine["offset"].tolist() == list(range(1, 12))
    assert set(quarantine["source"]) == {"<string>"}
    reasons = dict(zip(quarantine["offset"], quarantine["reason"]))
    assert reasons[1].startswith("truncated JSON")
    assert reasons[2].startswith("unknown op 'UPDATE'")
    assert reasons[3].startswith("missing required field payload.op")
    assert reasons[4].startswith("missing required field payload.timestamp.eventTime")
    assert reasons[5].startswith("missing required field payload.before (op UPDATE_BEFOR)")
    assert reasons[6].startswith("missing required field payload.sequenceId")
    assert reasons[7].startswith("missing required field schema.source.tableName")
    assert reasons[8] == "missing required field payload (it looks like a debezium message)"
    assert reasons[9].startswith("expected payload as a JSON object, got text")
    assert reasons[10].startswith("payload.timestamp.eventTime is not epoch milliseconds: 'noon'")
    assert reasons[11].startswith("missing required field payload.ddl")
    assert quarantine["raw"].tolist()[0] == lines[1]
    assert json.loads(quarantine["raw"].tolist()[1]) == json.loads(lines[2])
    report = events.attrs["report"]
    assert (report["messages"], report["decoded"], report["quarantined"]) == (13, 2, 11)


def test_errors_raise_names_source_offset_reason_and_keeps_what_was_decoded(tmp_path):
    path = tmp_path / "blob.jsonl"
    good = message("INSERT", seq="1", after=JOE)
    path.write_text(jsonl(good, good, {"schema": {}, "payload": {"op": "NOPE", "timestamp": {"eventTime": 1}}}))
    with pytest.raises(cdckit.DecodeError) as caught:
        cdckit.read(path, dialect="datahub_blob", errors="raise")
    err = caught.value
    assert (err.source, err.offset) == (str(path), 2)
    assert str(err) == f"{path}, message 2: unknown op 'NOPE'"
    assert len(err.partial) == 2 and err.partial["op"].tolist() == ["insert", "insert"]
