"""OceanBase OMS DefaultExtendColumnType: typed decoding, __light_type placement, detection, round trips, shop."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from validator import assert_round_trip, assert_rows, assert_shop, read_clean, row

import cdckit
from cdckit.dialects import registry
from cdckit.dialects.oceanbase_default import OceanBaseDefault
from cdckit.dialects.oceanbase_extend import OceanBaseExtend
from cdckit.samples.shop import shop_events

U1 = "\u0001"
ACCOUNT = {"id": 42, "owner": "Zoë", "balance": 1024.5, "reserve": "12345678901234567890.1234567890", "rate": 0.035,
           "flags": 3, "avatar": "iVBORw0KGgo=", "opened_at": "2024-05-01 09:00:00", "note": None}
ACCOUNT_WITHDRAWN = {"id": 42, "owner": "Zoë", "balance": 980.0, "reserve": "12345678901234567890.1234567890",
                     "rate": 0.035, "flags": 3, "avatar": "iVBORw0KGgo=", "opened_at": "2024-05-01 09:00:00",
                     "note": "withdrawal"}
ACCOUNT_REPRICED = {"id": 42, "owner": "Zoë", "balance": 980.0, "reserve": "12345678901234567890.1234567890",
                    "rate": 0.04, "flags": 7, "avatar": "iVBORw0KGgo=", "opened_at": "2024-05-01 09:00:00",
                    "note": "withdrawal"}
ENTRY = {"account_id": 42, "entry_no": 1, "amount": -44.5, "memo": "ATM"}


def light(**types):
    return {column: {"schemaType": schema_type} for column, schema_type in types.items()}


def record(record_type, prev=None, post=None, **meta):
    all_meta = {"checkpoint": "1714554000", "record_primary_key": "id", "record_primary_value": "1",
                "source_identity": "subtopic_1", "dbType": "OCEANBASE", "storeDataSequence": 171455400000001,
                "table_name": "t", "db": "tenant_a.shop", "timestamp": "1714554000", "uniqueId": "u1"}
    all_meta.update(meta)
    return {"prevStruct": prev, "postStruct": post, "allMetaData": all_meta, "recordType": record_type}


def decode(*records):
    return read_clean([json.dumps(r) for r in records], dialect="oceanbase_extend")


def test_examples_decode_exactly():
    events = read_clean(cdckit.samples.path("oceanbase_extend/examples.json"))
    common = dict(database="finance", table="account", key_columns=["id"], key=[42])
    entry = dict(database="finance", table="ledger_entry", key_columns=["account_id", "entry_no"], key=[42, 1])
    assert_rows(events, [
        row(0, "insert", "INSERT", **common, event_time="2024-05-01T09:00:00Z", seq="00000171455400000001",
            txn_id="1714554000_301_1", after=ACCOUNT),
        row(1, "update", "UPDATE", **common, event_time="2024-05-01T09:00:03Z", seq="00000171455400300001",
            txn_id="1714554003_302_1", before=ACCOUNT, after=ACCOUNT_WITHDRAWN),
        row(2, "update", "UPDATE", **common, event_time="2024-05-01T09:00:04Z", seq="00000171455400400001",
            txn_id="1714554004_303_1", before=ACCOUNT_WITHDRAWN, after=ACCOUNT_REPRICED),
        row(3, "insert", "INSERT", **entry, event_time="2024-05-01T09:00:04Z", seq="00000171455400400002",
            txn_id="1714554004_303_1", after=ENTRY),
        row(4, "delete", "DELETE", **entry, event_time="2024-05-01T09:00:09Z", seq="00000171455400900001",
            txn_id="1714554009_305_1", before=ENTRY),
        row(5, "ddl", "DDL", database="finance", table="account", event_time="2024-05-01T09:00:20Z",
            seq="00000171455402000001", txn_id="1714554020_310_1",
            ddl="ALTER TABLE account ADD COLUMN tier VARCHAR(16)"),
        row(6, "heartbeat", "HEARTBEAT", event_time="2024-05-01T09:00:30Z", seq="00000171455403000001"),
        row(7, "delete", "DELETE", **common, event_time="2024-05-01T09:00:40Z", seq="00000171455404000001",
            txn_id="1714554040_320_1", before=ACCOUNT_REPRICED),
    ])


def test_light_type_types_the_values():
    post = {"i": "-7", "big": "18446744073709551615", "f": "2.5", "d": "10.50", "exact": "0.1000000000000000055511",
            "n": "42", "b": "1", "blob": "AAEC", "bits": "Aw==", "at": "2024-05-01 09:00:00", "name": "0042",
            "already": 5, "null": None, "untyped": "9"}
    types = light(i="INT", big="BIGINT UNSIGNED", f="DOUBLE", d="DECIMAL(10,2)", exact="decimal(30,22)",
                  n="NUMBER", b="BOOL", blob="BLOB", bits="BIT(3)", at="DATETIME", name="VARCHAR(8)",
                  already="SMALLINT", null="INT")
    events = decode(record("INSERT", post=dict(post, __light_type=types)))
    assert json.loads(events.loc[0, "after"]) == {
        "i": -7, "big": "18446744073709551615", "f": 2.5, "d": 10.5, "exact": "0.1000000000000000055511",
        "n": 42, "b": True, "blob": "AAEC", "bits": "Aw==", "at": "2024-05-01 09:00:00", "name": "0042",
        "already": 5, "null": None, "untyped": "9"}


def test_light_type_is_never_left_in_an_image():
    for name in ("examples.json", "examples_idle.jsonl", "shop.jsonl"):
        events = read_clean(cdckit.samples.path(f"oceanbase_extend/{name}"))
        images = pd.concat([events["before"], events["after"]]).dropna()
        assert len(images) and not images.str.contains("__light_type").any(), name


def test_light_type_may_sit_in_prev_struct_post_struct_or_both():
    types = light(id="BIGINT", qty="INT", price="DOUBLE")
    only_post = record("UPDATE", prev={"id": "1", "qty": "1"}, post={"id": "1", "qty": "2", "__light_type": types})
    only_prev = record("UPDATE", prev={"id": "1", "qty": "2", "__light_type": types}, post={"id": "1", "qty": "3"})
    deleted = record("DELETE", prev={"id": "1", "qty": "3", "__light_type": types})
    both = record("UPDATE", prev={"id": "1", "qty": "3", "__light_type": light(id="BIGINT")},
                  post={"id": "1", "qty": "4", "price": "9.5", "__light_type": light(qty="INT", price="DOUBLE")})
    events = decode(only_post, only_prev, deleted, both)
    assert events["before"].tolist() == ['{"id":1,"qty":1}', '{"id":1,"qty":2}', '{"id":1,"qty":3}',
                                         '{"id":1,"qty":3}']
    assert events["after"].tolist()[:2] == ['{"id":1,"qty":2}', '{"id":1,"qty":3}']
    assert events.loc[3, "after"] == '{"id":1,"qty":4,"price":9.5}'
    assert events["key"].tolist() == ["[1]"] * 4


def test_without_light_type_values_stay_as_they_arrive():
    events = decode(record("INSERT", post={"id": "1", "n": 2}))
    assert events.loc[0, "after"] == '{"id":"1","n":2}'


def test_idle_stream_of_heartbeats_is_still_extend():
    # 48 heartbeats and a DDL (no __light_type) before one typed INSERT: each of those scores Default a hair
    # higher, the typed record outweighs them all
    detection = cdckit.detect(cdckit.samples.path("oceanbase_extend/examples_idle.jsonl"))
    assert (detection.dialect, detection.runner_up) == ("oceanbase_extend", "oceanbase_default")
    assert "postStruct.__light_type" in detection.evidence
    per_message = detection.messages["dialect"].tolist()
    assert per_message == ["oceanbase_default"] * 49 + ["oceanbase_extend"]
    events = read_clean(cdckit.samples.path("oceanbase_extend/examples_idle.jsonl"))
    assert events["op"].value_counts().to_dict() == {"heartbeat": 48, "ddl": 1, "insert": 1}
    assert events["after"].dropna().tolist() == ['{"id":1,"what":"created"}']


def test_detection_scores_tell_default_and_extend_apart_both_ways():
    default, extend = registry.create("oceanbase_default"), registry.create("oceanbase_extend")
    typed_post = record("INSERT", post={"id": "1", "__light_type": light(id="BIGINT")})
    typed_prev = record("DELETE", prev={"id": "1", "__light_type": light(id="BIGINT")})
    heartbeat = record("HEARTBEAT")
    assert (extend.detect(typed_post).score, default.detect(typed_post).score) == (0.98, 0.4)
    assert extend.detect(typed_post).evidence == ("allMetaData", "recordType=INSERT", "postStruct.__light_type")
    assert extend.detect(typed_prev).evidence == ("allMetaData", "recordType=DELETE", "prevStruct.__light_type")
    assert default.detect(heartbeat).score == 0.9
    assert 0.88 <= extend.detect(heartbeat).score < 0.9
    assert extend.detect({"op": "c", "after": {}, "source": {"connector": "mysql"}}) is None
    extend_samples = cdckit.detect(cdckit.samples.path("oceanbase_extend"))
    assert (extend_samples.dialect, extend_samples.runner_up) == ("oceanbase_extend", "oceanbase_default")
    assert {"postStruct.__light_type", "prevStruct.__light_type"} <= set(extend_samples.evidence)
    default_samples = cdckit.detect(cdckit.samples.path("oceanbase_default"))
    assert (default_samples.dialect, default_samples.runner_up) == ("oceanbase_default", "oceanbase_extend")


def test_extend_is_default_with_only_the_differences_overridden():
    assert issubclass(OceanBaseExtend, OceanBaseDefault)
    assert set(OceanBaseExtend.__dict__) & {"decode", "encode"} == set()
    assert OceanBaseExtend.name == "oceanbase_extend" and OceanBaseExtend.spec == OceanBaseDefault.spec


def test_round_trip_idle(tmp_path):
    assert_round_trip("oceanbase_extend", read_clean(cdckit.samples.path("oceanbase_extend/examples_idle.jsonl")),
                      tmp_path)


def test_shop():
    def transform(truth):
        # the format has no emit time (only the second-level change timestamp)
        return dict(truth, emit_time=None)

    assert_shop("oceanbase_extend", transform=transform)


def test_encoder_writes_light_type_and_values_as_text():
    records = [r.value for r in registry.create("oceanbase_extend").encode(shop_events())]
    first = records[0]
    assert first["allMetaData"]["db"] == "ob_tenant.shop" and first["allMetaData"]["dbType"] == "OCEANBASE"
    assert first["postStruct"]["__light_type"] == light(id="BIGINT", name="VARCHAR", email="VARCHAR",
                                                        tier="VARCHAR", balance="DOUBLE", note="VARCHAR")
    assert first["postStruct"]["id"] == "1" and first["postStruct"]["balance"] == "161.92"
    assert first["postStruct"]["note"] is None
    deletes = [r for r in records if r["recordType"] == "DELETE"]
    assert deletes and all("__light_type" in r["prevStruct"] and r["postStruct"] is None for r in deletes)


def test_encoder_types_exact_decimal_text_as_decimal_and_keeps_mixed_columns_readable(tmp_path):
    examples = read_clean(cdckit.samples.path("oceanbase_extend/examples.json"))
    first = next(iter(registry.create("oceanbase_extend").encode(examples))).value
    assert first["postStruct"]["__light_type"]["reserve"] == {"schemaType": "DECIMAL"}
    assert first["postStruct"]["reserve"] == "12345678901234567890.1234567890"
    assert first["postStruct"]["__light_type"]["avatar"] == {"schemaType": "VARCHAR"}
    # a column that holds a number in one image and digit text in another must read back as it was
    mixed = decode(record("INSERT", post={"id": "1", "code": "7", "__light_type": light(id="BIGINT")}),
                   record("INSERT", post={"id": "2", "code": "8", "__light_type": light(id="BIGINT", code="INT")}))
    assert mixed["after"].tolist() == ['{"id":1,"code":"7"}', '{"id":2,"code":8}']
    assert_round_trip("oceanbase_extend", mixed, tmp_path)


def test_bad_messages_are_quarantined_with_reason():
    good = json.dumps(record("INSERT", post={"id": "1", "__light_type": light(id="BIGINT")}))
    lines = [
        good,
        good[:80],
        '{"database": "d", "table": "t", "type": "insert", "ts": 1, "xid": 5, "data": {"id": 1}}',
        json.dumps({k: v for k, v in record("INSERT").items() if k != "recordType"}),
        json.dumps(record("INSERT", post={"id": "1", "__light_type": ["BIGINT"]})),
        json.dumps(record("DELETE", prev={"id": "1", "__light_type": "BIGINT"})),
        json.dumps(record("UPDATE", prev={"id": "1", "__light_type": light(id="BIGINT")}, post=None)),
        good,
    ]
    events = cdckit.read("\n".join(lines), dialect="oceanbase_extend")
    assert events["offset"].tolist() == [0, 7]
    quarantine = cdckit.quarantine(events)
    assert quarantine["offset"].tolist() == [1, 2, 3, 4, 5, 6]
    reasons = quarantine["reason"].tolist()
    assert reasons[0].startswith("truncated JSON")
    assert reasons[1].startswith("missing required field recordType")  # a Maxwell message
    assert reasons[2] == "missing required field recordType"
    assert reasons[3] == "expected postStruct.__light_type as a JSON object, got list"
    assert reasons[4] == "expected prevStruct.__light_type as a JSON object, got str"
    assert reasons[5] == "UPDATE record with a null postStruct"
    assert quarantine["raw"].tolist()[3] == lines[4]
    assert set(quarantine["dialect"]) == {"oceanbase_extend"}
    report = events.attrs["report"]
    assert (report["messages"], report["decoded"], report["events"], report["quarantined"]) == (8, 2, 2, 6)


def test_errors_raise_names_source_offset_reason_and_keeps_what_was_decoded(tmp_path):
    path = tmp_path / "capture.json"
    good = record("INSERT", post={"id": "7", "__light_type": light(id="BIGINT")})
    bad = record("INSERT", post={"id": "8", "__light_type": 5})
    path.write_text(json.dumps([good, good, good, bad], indent=2))
    with pytest.raises(cdckit.DecodeError) as caught:
        cdckit.read(path, dialect="oceanbase_extend", errors="raise")
    err = caught.value
    assert (err.source, err.offset) == (str(path), 3)
    assert str(err) == f"{path}, message 3: expected postStruct.__light_type as a JSON object, got int"
    assert err.partial["key"].tolist() == ["[7]"] * 3
