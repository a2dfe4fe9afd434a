"""Oracle GoldenGate JSON: the documentation's messages decoded exactly, partial images, PK updates,
truncates, round trips, shop, bad input and detection."""

from __future__ import annotations

import json

import pytest
from validator import assert_quarantined, assert_round_trip, assert_rows, assert_shop, read_clean, row, rows

import cdckit
from cdckit.dialects import registry

ORDER = dict(database="QASOURCE", table="TCUSTORD")
WILL = {"CUST_CODE": "WILL", "ORDER_DATE": "1994-09-30:15:33:00", "PRODUCT_CODE": "CAR", "ORDER_ID": 144,
        "PRODUCT_PRICE": 17520.0, "PRODUCT_AMOUNT": 3, "TRANSACTION_ID": 100}
BILL = {"CUST_CODE": "BILL", "ORDER_DATE": "1995-12-31:15:00:00", "PRODUCT_CODE": "CAR", "ORDER_ID": 765,
        "PRODUCT_PRICE": 15000.0, "PRODUCT_AMOUNT": 3, "TRANSACTION_ID": 100}
BILL_AFTER = {"CUST_CODE": "BILL", "ORDER_DATE": "1995-12-31:15:00:00", "PRODUCT_CODE": "CAR", "ORDER_ID": 765,
              "PRODUCT_PRICE": 14000.0}
DAVE = {"CUST_CODE": "DAVE", "ORDER_DATE": "1993-11-03:07:51:35", "PRODUCT_CODE": "PLANE", "ORDER_ID": 600,
        "PRODUCT_PRICE": 33000.0, "PRODUCT_AMOUNT": 268, "TRANSACTION_ID": 100}

INSERT = {"table": "SHOP.CUSTOMERS", "op_type": "I", "op_ts": "2024-05-01 09:00:00.000000",
          "current_ts": "2024-05-01T09:00:01.250000", "pos": "00000000010000001234", "primary_keys": ["ID"],
          "after": {"ID": 1, "NAME": "Ada", "TIER": "gold"}}


def decoded(*messages: dict, **options) -> list[dict]:
    return rows(read_clean([json.dumps(m) for m in messages], dialect="ogg", **options))


# ---------------------------------------------------------------- the examples


def test_examples_decode_exactly():
    events = read_clean(cdckit.samples.path("ogg/examples.json"))
    assert_rows(events, [
        row(0, "insert", "I", **ORDER, event_time="2015-11-05T18:45:36Z", emit_time="2016-10-05T10:15:51.267000Z",
            seq="00000000000000002928", after=WILL),
        # the source logged the key and the changed column only: the after image is partial
        row(1, "update", "U", **ORDER, event_time="2015-11-05T18:45:39Z", emit_time="2016-10-05T10:15:51.310002Z",
            seq="00000000000000004300", before=BILL, after=BILL_AFTER),
        row(2, "delete", "D", **ORDER, event_time="2015-11-05T18:45:39Z", emit_time="2016-10-05T10:15:51.312000Z",
            seq="00000000000000005272", before=DAVE),
        row(3, "truncate", "T", **ORDER, event_time="2015-11-05T18:45:39Z",
            emit_time="2016-10-05T10:15:51.312001Z", seq="00000000000000005480"),
        row(4, "insert", "I", database="DDL_OGGSRC", table="TCUSTMER", event_time="2015-10-26T03:00:06Z",
            emit_time="2016-04-05T08:59:23.001000Z", seq="00000000000000006605", key_columns=["CUST_CODE"],
            key=["WILL"], after={"CUST_CODE": "WILL", "NAME": "BG SOFTWARE CO.", "CITY": "SEATTLE", "STATE": "WA"}),
        # tokens are not kept; columns flagged _isMissing are absent from the image
        row(5, "delete", "D", database="GG", table="TCUSTORD", event_time="2013-06-02T22:14:41Z",
            emit_time="2015-09-18T10:17:49.899000Z", seq="00000000000000004338",
            key_columns=["CUST_CODE", "ORDER_DATE", "PRODUCT_CODE", "ORDER_ID"],
            key=["DAVE", "1993-11-03:07:51:35", "PLANE", "600"],
            before={"CUST_CODE": "DAVE", "ORDER_DATE": "1993-11-03:07:51:35", "PRODUCT_CODE": "PLANE",
                    "ORDER_ID": "600"}),
    ])


def test_row_modeled_and_flattened_examples_decode_exactly():
    events = read_clean(cdckit.samples.path("ogg/examples_variants.jsonl"))
    assert_rows(events, [
        row(0, "insert", "I", **ORDER, event_time="2015-11-05T18:45:36Z", emit_time="2016-10-05T11:10:42.294000Z",
            seq="00000000000000002928", after=WILL),
        row(1, "delete", "D", **ORDER, event_time="2015-11-05T18:45:39Z", emit_time="2016-10-05T11:10:43.368000Z",
            seq="00000000000000005272", before=DAVE),
        row(2, "update", "U", **ORDER, event_time="2015-11-05T18:45:39Z", emit_time="2016-10-05T10:34:48.192000Z",
            seq="00000000000000004300", before=BILL, after=BILL_AFTER),
    ])


def test_round_trip_variants(tmp_path):
    assert_round_trip("ogg", read_clean(cdckit.samples.path("ogg/examples_variants.jsonl")), tmp_path)


def test_shop():
    # The formatter has no transaction id; shop.customers is written as the table name "shop.customers".
    events = assert_shop("ogg", transform=lambda truth: dict(truth, txn_id=None),
                         fields=("op", "database", "schema", "table", "key_columns", "key", "before", "after",
                                 "event_time", "emit_time", "txn_id"))
    assert events["seq"].is_monotonic_increasing


# ---------------------------------------------------------------- quirks


def test_table_names_split_into_database_schema_and_table():
    got = decoded(INSERT, dict(INSERT, table="PDB1.SHOP.CUSTOMERS"), dict(INSERT, table="CUSTOMERS"))
    assert [(r["database"], r["schema"], r["table"]) for r in got] == [
        ("SHOP", None, "CUSTOMERS"), ("PDB1", "SHOP", "CUSTOMERS"), (None, None, "CUSTOMERS")]


def test_partial_update_images_stay_partial():
    update = dict(INSERT, op_type="U", before={"ID": 1, "TIER": "gold"}, after={"ID": 1, "TIER": "platinum"})
    no_before = {k: v for k, v in update.items() if k != "before"}
    got = decoded(update, no_before, dict(update, after={"TIER": "platinum"}))
    assert [(r["before"], r["after"], r["key"]) for r in got] == [
        ({"ID": 1, "TIER": "gold"}, {"ID": 1, "TIER": "platinum"}, [1]),
        (None, {"ID": 1, "TIER": "platinum"}, [1]),
        ({"ID": 1, "TIER": "gold"}, {"TIER": "platinum"}, [1]),  # the key, unchanged, comes from before
    ]


def test_primary_key_update_is_one_update_with_both_keys():
    pk = dict(INSERT, op_type="U", before={"ID": 1, "NAME": "Ada"}, after={"ID": 7, "NAME": "Ada"})
    got = decoded(pk, dict(pk, op_type="PK"))
    assert got[0] == row(0, "update", "U", database="SHOP", table="CUSTOMERS", event_time="2024-05-01T09:00:00Z",
                         emit_time="2024-05-01T09:00:01.250000Z", seq="00000000010000001234", key_columns=["ID"],
                         key=[7], before={"ID": 1, "NAME": "Ada"}, after={"ID": 7, "NAME": "Ada"})
    assert (got[1]["op"], got[1]["op_raw"], got[1]["key"]) == ("update", "PK", [7])


def test_truncate_is_the_table_without_images():
    [got] = decoded({"table": "SHOP.ORDERS", "op_type": "T", "op_ts": "2024-05-01 09:00:00.000000",
                     "pos": "00000000000000000099"})
    assert got == row(0, "truncate", "T", database="SHOP", table="ORDERS", event_time="2024-05-01T09:00:00Z",
                      seq="00000000000000000099")


def test_long_op_names_are_read():
    got = decoded(dict(INSERT, op_type="INSERT"), dict(INSERT, op_type="DELETE", before=INSERT["after"], after=None),
                  {"table": "SHOP.T", "op_type": "TRUNCATE"})
    assert [(r["op"], r["op_raw"]) for r in got] == [("insert", "INSERT"), ("delete", "DELETE"),
                                                     ("truncate", "TRUNCATE")]


def test_zone_less_times_are_utc_unless_a_zone_is_given():
    got = decoded(INSERT, tz="Asia/Tokyo")
    assert (got[0]["event_time"], got[0]["emit_time"]) == ("2024-05-01T00:00:00Z", "2024-05-01T00:00:01.250000Z")
    records = list(registry.create("ogg", tz="Asia/Tokyo").encode(read_clean([json.dumps(INSERT)], dialect="ogg")))
    assert (records[0].value["op_ts"], records[0].value["current_ts"]) == ("2024-05-01 18:00:00.000000",
                                                                          "2024-05-01T18:00:01.250000")


def test_tokens_are_not_kept_and_not_in_the_images():
    [got] = decoded(dict(INSERT, tokens={"R": "AADPkvAAEAAEqL2AAA", "TK-XID": "5.12.3077"}))
    assert got["after"] == INSERT["after"] and got["txn_id"] is None


def test_pos_is_sortable_and_numbers_stay_exact():
    got = decoded(dict(INSERT, pos="1234", after={"ID": 12345678901234567890123, "AMOUNT": 0.1}))
    assert got[0]["seq"] == "00000000000000001234"
    assert got[0]["after"] == {"ID": "12345678901234567890123", "AMOUNT": 0.1}


# ---------------------------------------------------------------- detection


def test_detection_with_evidence_and_not_confused():
    detection = cdckit.detect(json.dumps(INSERT))
    assert detection.dialect == "ogg"
    assert set(detection.evidence) == {"table", "op_type=I", "op_ts", "current_ts", "pos", "primary_keys", "after"}
    ogg = registry.create("ogg")
    assert ogg.detect(INSERT) == cdckit.dialects.Match(0.95, ("table", "op_type=I", "op_ts", "current_ts", "pos",
                                                               "primary_keys", "after"))
    assert ogg.detect({"table": "SHOP.T", "op_type": "I"}).score == 0.7  # no time, no position: less sure
    maxwell = {"database": "shop", "table": "t", "type": "insert", "ts": 1, "data": {"id": 1}}
    debezium = {"before": None, "after": {"id": 1}, "op": "c", "ts_ms": 1, "source": {"table": "t"}}
    assert ogg.detect(maxwell) is None and ogg.detect(debezium) is None
    for name in cdckit.dialects.names():
        if name != "ogg":
            assert registry.create(name).detect(INSERT) is None or \
                registry.create(name).detect(INSERT).score < 0.95, name


# ---------------------------------------------------------------- bad input


BAD = [
    ('{"table": "SHOP.T", "op_type": "I", "after": {"ID": 2', "truncated JSON"),
    ('{"table": "SHOP.T", "after": {"ID": 1}}', "missing required field op_type"),
    ('{"op_type": "I", "after": {"ID": 1}}', "missing required field table"),
    ('{"table": "SHOP.T", "op_type": "X", "after": {"ID": 1}}', "unknown op_type 'X'"),
    ('{"table": "SHOP.T", "op_type": 1, "after": {"ID": 1}}', "unknown op_type 1"),
    ('{"table": ["SHOP", "T"], "op_type": "I", "after": {"ID": 1}}', "table is not a table name"),
    ('{"table": "SHOP.T", "op_type": "I", "after": "3q2+7w=="}', "expected after as a JSON object, got text"),
    ('{"table": "SHOP.T", "op_type": "I"}', "insert without an after image"),
    ('{"table": "SHOP.T", "op_type": "D", "after": null}', "delete without a before image"),
    ('{"table": "SHOP.T", "op_type": "U", "before": {"ID": 1}}', "update without an after image"),
    ('{"table": "SHOP.T", "op_type": "I", "op_ts": "yesterday", "after": {"ID": 1}}', "op_ts: 'yesterday' is not"),
    ('{"table": "SHOP.T", "op_type": "I", "current_ts": 5, "after": {"ID": 1}}', "current_ts is not a text time"),
    ('{"table": "SHOP.T", "op_type": "I", "primary_keys": "ID", "after": {"ID": 1}}',
     "primary_keys is not a list of column names"),
    ('{"table": "SHOP.T", "op_type": "I", "pos": 1.5, "after": {"ID": 1}}', "pos is not a trail position"),
]


def test_bad_messages_are_quarantined_with_a_clear_reason(tmp_path):
    assert_quarantined("ogg", json.dumps(INSERT), BAD, tmp_path)


def test_errors_raise_names_the_reason(tmp_path):
    path = tmp_path / "capture.jsonl"
    path.write_text(json.dumps(INSERT) + "\n" + '{"table": "SHOP.T", "op_type": "X"}\n')
    with pytest.raises(cdckit.DecodeError) as caught:
        cdckit.read(path, dialect="ogg", errors="raise")
    assert (caught.value.offset, caught.value.reason) == (1, "unknown op_type 'X'")
