"""OceanBase OMS Default JSON: the spec's records decoded exactly, each quirk, round trips, shop, bad input."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from validator import assert_round_trip, assert_rows, assert_shop, read_clean, row

import cdckit
from cdckit.dialects import registry
from cdckit.frame import COLUMN_NAMES
from cdckit.samples.shop import shop_events

U1 = "\u0001"
CUSTOMER = {"id": "1001", "name": "Chloé", "email": "chloe@example.com", "balance": "150.25", "note": None}
CUSTOMER_PAID = {"id": "1001", "name": "Chloé", "email": "chloe@example.com", "balance": "99.90",
                 "note": "paid by card"}
LINE = {"order_id": "5001", "line_no": "1", "sku": "SKU-100", "qty": "2", "price": "19.99"}
LINE_QTY3 = {"order_id": "5001", "line_no": "1", "sku": "SKU-100", "qty": "3", "price": "19.99"}
SCOOTER = {"id": "101", "name": "scooter", "weight": "3.14", "description": "Small 2-wheel scooter"}
SCOOTER_HEAVY = {"id": "101", "name": "scooter", "weight": "5.18", "description": "Small 2-wheel scooter"}
GTID = "3e11fa47-71ca-11e1-9e33-c80aa9429562"


def record(record_type, prev=None, post=None, **meta):
    """A Default record; ``meta`` overrides the allMetaData of a plain OceanBase INSERT of t.id = 1."""
    all_meta = {"checkpoint": "1714554000", "record_primary_key": "id", "record_primary_value": "1",
                "source_identity": "subtopic_1", "dbType": "OCEANBASE", "storeDataSequence": 171455400000001,
                "table_name": "t", "db": "tenant_a.shop", "timestamp": "1714554000", "uniqueId": "u1"}
    all_meta.update(meta)
    return {"prevStruct": prev, "postStruct": post, "allMetaData": all_meta, "recordType": record_type}


def decode(*records, **options):
    return read_clean([json.dumps(r) for r in records], dialect="oceanbase_default", **options)


def test_examples_decode_exactly():
    events = read_clean(cdckit.samples.path("oceanbase_default/examples.json"))
    common = dict(database="mall")
    assert_rows(events, [
        row(0, "insert", "INSERT", **common, table="customer", event_time="2024-05-01T09:00:00Z",
            seq="00000171455400000001", txn_id="1714554000_7781_1", key_columns=["id"], key=["1001"], after=CUSTOMER),
        row(1, "update", "UPDATE", **common, table="customer", event_time="2024-05-01T09:00:05Z",
            seq="00000171455400500001", txn_id="1714554005_7785_1", key_columns=["id"], key=["1001"],
            before=CUSTOMER, after=CUSTOMER_PAID),
        row(2, "insert", "INSERT", **common, table="order_line", event_time="2024-05-01T09:00:10Z",
            seq="00000171455401000001", txn_id="1714554010_7790_3", key_columns=["order_id", "line_no"],
            key=["5001", "1"], after=LINE),
        row(3, "update", "UPDATE", **common, table="order_line", event_time="2024-05-01T09:00:10Z",
            seq="00000171455401000002", txn_id="1714554010_7790_3", key_columns=["order_id", "line_no"],
            key=["5001", "1"], before=LINE, after=LINE_QTY3),
        row(4, "delete", "DELETE", **common, table="order_line", event_time="2024-05-01T09:00:12Z",
            seq="00000171455401200001", txn_id="1714554012_7794_1", key_columns=["order_id", "line_no"],
            key=["5001", "1"], before=LINE_QTY3),
        row(5, "ddl", "DDL", **common, table="customer", event_time="2024-05-01T09:00:20Z",
            seq="00000171455402000001", txn_id="1714554020_7801_1",
            ddl="ALTER TABLE customer ADD COLUMN tier VARCHAR(16) DEFAULT 'bronze'"),
        row(6, "heartbeat", "HEARTBEAT", event_time="2024-05-01T09:00:30Z", seq="00000171455403000001"),
        row(7, "delete", "DELETE", **common, table="customer", event_time="2024-05-01T09:00:40Z",
            seq="00000171455404000001", txn_id="1714554040_7815_1", key_columns=["id"], key=["1001"],
            before=CUSTOMER_PAID),
    ])


def test_mysql_source_writes_a_plain_database_name():
    events = read_clean(cdckit.samples.path("oceanbase_default/examples_mysql.jsonl"))
    common = dict(database="inventory", table="products", key_columns=["id"], key=["101"])
    assert_rows(events, [
        row(0, "insert", "INSERT", **common, event_time="2024-05-01T09:01:40Z", seq="00000171455410000001",
            txn_id=f"{GTID}:23", after=SCOOTER),
        row(1, "update", "UPDATE", **common, event_time="2024-05-01T09:01:41Z", seq="00000171455410100001",
            txn_id=f"{GTID}:24", before=SCOOTER, after=SCOOTER_HEAVY),
        row(2, "delete", "DELETE", **common, event_time="2024-05-01T09:01:42Z", seq="00000171455410200001",
            txn_id=f"{GTID}:25", before=SCOOTER_HEAVY),
    ])


def test_full_synchronization_rows_are_snapshot_reads_without_time_or_sequence():
    events = read_clean(cdckit.samples.path("oceanbase_default/examples_full_sync.jsonl"))
    hakon = {"id": "1002", "name": "Håkon", "email": "hakon@example.com", "balance": "0.00", "note": "new"}
    assert_rows(events, [
        row(0, "read", "ROW", database="mall", table="customer", key_columns=["id"], key=["1001"], after=CUSTOMER),
        row(1, "read", "ROW", database="mall", table="customer", key_columns=["id"], key=["1002"], after=hakon),
        row(2, "read", "ROW", database="mall", table="order_line", key_columns=["order_id", "line_no"],
            key=["5001", "1"], after=LINE),
    ])


def test_record_types_map_to_canonical_ops():
    events = decode(
        record("INSERT", post={"id": "1"}),
        record("UPDATE", prev={"id": "1"}, post={"id": "1"}),
        record("DELETE", prev={"id": "1"}),
        record("HEARTBEAT"),
        record("DDL", post={"ddl": "DROP TABLE t"}),
    )
    assert events["op"].tolist() == ["insert", "update", "delete", "heartbeat", "ddl"]
    assert events["op_raw"].tolist() == ["INSERT", "UPDATE", "DELETE", "HEARTBEAT", "DDL"]


def test_composite_key_is_split_on_the_u0001_control_character_in_its_own_order():
    post = {"region": "eu", "line_no": "2", "order_id": "5001", "qty": "1"}
    events = decode(record("INSERT", post=post, record_primary_key=f"order_id{U1}line_no{U1}region",
                           record_primary_value=f"5001{U1}2{U1}eu"))
    assert events.loc[0, "key_columns"] == ["order_id", "line_no", "region"]
    assert events.loc[0, "key"] == '["5001","2","eu"]'


def test_key_values_come_from_the_image_typed_and_fall_back_to_primary_value_parts():
    typed_in_image = record("INSERT", post={"id": 7, "name": "x"}, record_primary_value="7")
    missing_column = record("UPDATE", prev={"order_id": 5001, "qty": 1}, post={"order_id": 5001, "qty": 2},
                            record_primary_key=f"order_id{U1}line_no", record_primary_value=f"5001{U1}2")
    deleted = record("DELETE", prev={"sku": "A"}, record_primary_key="sku", record_primary_value="B")
    parts_do_not_fit = record("INSERT", post={"qty": 1}, record_primary_key=f"order_id{U1}line_no",
                              record_primary_value="5001")
    events = decode(typed_in_image, missing_column, deleted, parts_do_not_fit)
    assert events["key"].tolist()[:3] == ["[7]", '[5001,"2"]', '["A"]']
    assert events["key"].isna().tolist() == [False, False, False, True]
    assert events.loc[3, "key_columns"] == ["order_id", "line_no"]


def test_store_data_sequence_is_seq_and_sorts_as_numbers():
    events = decode(
        record("INSERT", post={"id": "1"}, storeDataSequence=171455400000010),
        record("INSERT", post={"id": "1"}, storeDataSequence=171455400000009),
        record("INSERT", post={"id": "1"}, storeDataSequence=999),
        record("INSERT", post={"id": "1"}, storeDataSequence="1000"),
        record("INSERT", post={"id": "1"}, storeDataSequence=None),
    )
    seqs = events["seq"].tolist()
    assert seqs[:4] == ["00000171455400000010", "00000171455400000009", "00000000000000000999",
                        "00000000000000001000"]
    assert seqs[4] is pd.NA
    assert sorted(seqs[:4]) == [seqs[2], seqs[3], seqs[1], seqs[0]]


@pytest.mark.parametrize(("db_type", "db", "database"), [
    ("OCEANBASE", "tenant_a.shop", "shop"),
    ("OB_IN_ORACLE_MODE", "tenant_o.SALES", "SALES"),
    ("OB_MYSQL", "tenant_a.my.db", "my.db"),
    ("OCEANBASE", "shop", "shop"),
    ("MYSQL", "shop.archive", "shop.archive"),
    ("ORACLE", "SALES", "SALES"),
    (None, "a.b", "a.b"),
])
def test_tenant_prefix_is_dropped_only_for_oceanbase_sources(db_type, db, database):
    events = decode(record("INSERT", post={"id": "1"}, dbType=db_type, db=db))
    assert events.loc[0, "database"] == database
    assert events.loc[0, "schema"] is pd.NA


def test_second_level_timestamp_text_is_the_event_time_and_there_is_no_emit_time():
    events = decode(record("HEARTBEAT", timestamp="1714554001"), record("HEARTBEAT", timestamp=1714554002),
                    record("HEARTBEAT", timestamp="2024-05-01 17:00:03"), tz="Asia/Shanghai")
    assert [t.isoformat() for t in events["event_time"]] == [
        "2024-05-01T09:00:01+00:00", "2024-05-01T09:00:02+00:00", "2024-05-01T09:00:03+00:00"]
    assert events["emit_time"].isna().all()


def test_unique_id_is_the_transaction_and_checkpoint_and_source_identity_are_not_kept():
    events = decode(record("INSERT", post={"id": "1"}, uniqueId="1714554000_7781_1", checkpoint="CHECK-9",
                           source_identity="SOURCE-9"))
    assert events.loc[0, "txn_id"] == "1714554000_7781_1"
    assert list(events.columns) == COLUMN_NAMES
    cells = " ".join(str(v) for v in events.drop(columns=["source"]).iloc[0].tolist())
    assert "CHECK-9" not in cells and "SOURCE-9" not in cells


def test_default_values_stay_exactly_as_they_arrive():
    post = {"id": "1", "n": 2, "price": 2.5, "flag": True, "blob": "AAEC", "at": "2024-05-01 09:00:00", "none": None}
    events = decode(record("INSERT", post=post))
    assert json.loads(events.loc[0, "after"]) == post
    assert list(json.loads(events.loc[0, "after"])) == list(post)  # column order kept


def test_images_follow_the_record_type():
    events = decode(
        record("INSERT", prev=None, post={"id": "1"}),
        record("UPDATE", prev={"id": "1", "a": "x"}, post={"id": "1", "a": "y"}),
        record("UPDATE", prev=None, post={"id": "1", "a": "z"}),  # a missing before image is tolerated
        record("DELETE", prev={"id": "1", "a": "z"}, post=None),
    )
    assert events["before"].isna().tolist() == [True, False, True, False]
    assert events["after"].isna().tolist() == [False, False, False, True]
    assert events.loc[1, "before"] == '{"id":"1","a":"x"}' and events.loc[3, "before"] == '{"id":"1","a":"z"}'


def test_ddl_statement_is_read_from_post_struct():
    events = decode(
        record("DDL", post={"ddl": "CREATE TABLE t (id INT PRIMARY KEY)"}, record_primary_key="",
               record_primary_value=""),
        record("DDL", post={"sql": "DROP TABLE t"}),
    )
    assert events["ddl"].tolist() == ["CREATE TABLE t (id INT PRIMARY KEY)", "DROP TABLE t"]
    assert events[["before", "after", "key_columns", "key"]].isna().all().all()
    bad = cdckit.read([json.dumps(record("DDL", post=None))], dialect="oceanbase_default")
    assert cdckit.quarantine(bad)["reason"].tolist() == ["DDL record without its statement in postStruct.ddl"]


def test_heartbeat_has_only_a_time():
    events = decode({"prevStruct": None, "postStruct": None, "recordType": "HEARTBEAT",
                     "allMetaData": {"checkpoint": "1714554030", "timestamp": "1714554030", "dbType": "OCEANBASE"}})
    assert_rows(events, [row(0, "heartbeat", "HEARTBEAT", event_time="2024-05-01T09:00:30Z")])


def test_round_trip_mysql_and_full_sync(tmp_path):
    for name in ("examples_mysql.jsonl", "examples_full_sync.jsonl"):
        events = read_clean(cdckit.samples.path(f"oceanbase_default/{name}"))
        assert_round_trip("oceanbase_default", events, tmp_path)


def test_shop():
    def transform(truth):
        # Default has no emit time (only the second-level change timestamp)
        return dict(truth, emit_time=None)

    assert_shop("oceanbase_default", transform=transform)


def test_encoder_writes_tenant_prefix_values_as_they_are_and_synthesizes_store_data_sequence():
    records = [r.value for r in registry.create("oceanbase_default").encode(shop_events())]
    first, second = records[0], records[1]
    assert first["recordType"] == "INSERT" and first["prevStruct"] is None
    assert first["allMetaData"]["dbType"] == "OCEANBASE"
    assert first["allMetaData"]["db"] == "ob_tenant.shop"
    assert first["allMetaData"]["timestamp"] == "1714554000"
    # 2024-05-01T09:00:00Z in seconds * 100000 + the count of events in that second
    assert (first["allMetaData"]["storeDataSequence"], second["allMetaData"]["storeDataSequence"]) == (
        171455400000000, 171455400000001)
    sequences = [r["allMetaData"]["storeDataSequence"] for r in records]
    assert all(a < b for a, b in zip(sequences, sequences[1:]))
    assert isinstance(first["postStruct"]["id"], int) and isinstance(first["postStruct"]["balance"], float)
    items = next(r for r in records if r["allMetaData"]["table_name"] == "order_items")
    assert items["allMetaData"]["record_primary_key"] == f"order_id{U1}line_no"
    assert items["allMetaData"]["record_primary_value"] == (
        f"{items['postStruct']['order_id']}{U1}{items['postStruct']['line_no']}")


def test_encoder_writes_seq_back_and_skips_what_default_cannot_carry():
    events = read_clean(cdckit.samples.path("oceanbase_default/examples.json"))
    extra = events.iloc[:1].copy()
    extra["op"] = "begin"
    records = [r.value for r in registry.create("oceanbase_default").encode(pd.concat([events, extra]))]
    assert len(records) == len(events)  # the begin event is skipped
    assert [r["allMetaData"]["storeDataSequence"] for r in records][:2] == [171455400000001, 171455400500001]
    assert records[5]["postStruct"] == {"ddl": "ALTER TABLE customer ADD COLUMN tier VARCHAR(16) DEFAULT 'bronze'"}


def test_detects_its_samples_and_tells_extend_apart():
    detection = cdckit.detect(cdckit.samples.path("oceanbase_default"))
    assert detection.dialect == "oceanbase_default"
    assert {"allMetaData", "recordType=INSERT", "recordType=HEARTBEAT"} <= set(detection.evidence)
    assert detection.runner_up == "oceanbase_extend"
    assert cdckit.detect(cdckit.samples.path("oceanbase_extend")).dialect == "oceanbase_extend"
    default, extend = registry.create("oceanbase_default"), registry.create("oceanbase_extend")
    plain = record("INSERT", post={"id": "1"})
    typed = record("INSERT", post={"id": "1", "__light_type": {"id": {"schemaType": "BIGINT"}}})
    assert default.detect(plain).score > extend.detect(plain).score
    assert extend.detect(typed).score > default.detect(typed).score
    assert default.detect(plain).evidence == ("allMetaData", "recordType=INSERT")


def test_detect_does_not_claim_other_messages():
    default = registry.create("oceanbase_default")
    for value in (None, "text line", [1], {"op": "c", "after": {"id": 1}, "source": {"connector": "mysql"}},
                  {"database": "d", "table": "t", "type": "INSERT", "data": [{"id": "1"}], "pkNames": ["id"]},
                  {"recordType": "INSERT"}, {"allMetaData": {}}):
        assert default.detect(value) is None, value


def test_bad_messages_are_quarantined_with_reason():
    good = json.dumps(record("INSERT", post={"id": "1"}))
    lines = [
        good,
        good[:60],
        '{"op": "c", "after": {"id": 1}, "source": {"connector": "mysql", "table": "t"}}',
        json.dumps({"prevStruct": None, "postStruct": {"id": "1"}, "recordType": "INSERT"}),
        json.dumps(record("UPSERT", post={"id": "1"})),
        json.dumps({k: v for k, v in record("INSERT").items() if k != "postStruct"}),
        json.dumps(record("DELETE", prev=None)),
        json.dumps(record("INSERT", post=["1"])),
        json.dumps(record("INSERT", post={"id": "1"}, storeDataSequence="seq-1")),
        json.dumps(record("INSERT", post={"id": "1"}, timestamp="yesterday")),
        json.dumps(record("INSERT", post={"id": "1"}, record_primary_key=["id"])),
        json.dumps(record("INSERT", post={"id": "1"}, table_name=7)),
        '"a JSON string"',
        good,
    ]
    events = cdckit.read("\n".join(lines), dialect="oceanbase_default")
    assert events["offset"].tolist() == [0, 13]
    quarantine = cdckit.quarantine(events)
    assert quarantine["offset"].tolist() == list(range(1, 13))
    reasons = quarantine["reason"].tolist()
    assert reasons[0].startswith("truncated JSON")
    assert reasons[1] == "missing required field recordType (it looks like a debezium message)"
    assert reasons[2] == "missing required field allMetaData"
    assert reasons[3] == "unknown recordType 'UPSERT'"
    assert reasons[4] == "missing required field postStruct"
    assert reasons[5] == "DELETE record with a null prevStruct"
    assert reasons[6] == "expected postStruct as a JSON object, got list"
    assert reasons[7] == "allMetaData.storeDataSequence is not a non-negative integer: 'seq-1'"
    assert reasons[8] == "allMetaData.timestamp is not a time: 'yesterday'"
    assert reasons[9] == "allMetaData.record_primary_key is not text: ['id']"
    assert reasons[10] == "allMetaData.table_name is not text: 7"
    assert reasons[11] == "expected an OceanBase record as a JSON object, got text"
    assert quarantine["raw"].tolist()[0] == good[:60]
    assert set(quarantine["source"]) == {"<string>"} and set(quarantine["dialect"]) == {"oceanbase_default"}
    report = events.attrs["report"]
    assert (report["messages"], report["decoded"], report["events"], report["quarantined"]) == (14, 2, 2, 12)


def test_errors_raise_names_source_offset_reason_and_keeps_what_was_decoded(tmp_path):
    path = tmp_path / "capture.jsonl"
    good = json.dumps(record("INSERT", post={"id": "1"}))
    path.write_text("\n".join([good, good, json.dumps(record("UPSERT", post={"id": "1"}))]) + "\n")
    with pytest.raises(cdckit.DecodeError) as caught:
        cdckit.read(path, dialect="oceanbase_default", errors="raise")
    err = caught.value
    assert (err.source, err.offset) == (str(path), 2)
    assert str(err) == f"{path}, message 2: unknown recordType 'UPSERT'"
    assert len(err.partial) == 2 and err.partial["op"].tolist() == ["insert", "insert"]
