"""Debezium rows flattened by ExtractNewRecordState: the docs' rows decoded exactly, deletes rewritten,
tombstones, Kafka keys, bare rows quarantined, round trips, shop, detection."""

from __future__ import annotations

import json

import pytest
from validator import assert_quarantined, assert_round_trip, assert_rows, assert_shop, read_clean, row, rows

import cdckit
from cdckit.dialects import registry
from cdckit.io import Message

ANNE = {"id": 1004, "first_name": "Anne Marie", "last_name": "Kretchmar", "email": "annek@noanswer.org"}
GOOD = json.dumps({"id": 1, "__op": "c", "__table": "t"})


def decoded(*messages: dict) -> list[dict]:
    return rows(read_clean([json.dumps(m) for m in messages], dialect="debezium_flat"))


# ---------------------------------------------------------------- the examples


def test_examples_decode_exactly():
    events = read_clean(cdckit.samples.path("debezium_flat/examples.jsonl"))
    assert_rows(events, [
        # delete.tombstone.handling.mode=rewrite, no add.fields: the docs' "value" of a delete
        row(0, "delete", "__deleted=true", before={"pk": 2, "cola": None}),
        # add.fields=op,table,lsn,source.ts_ms: the docs' record, its values text as the docs print them
        row(1, "insert", "c", table="MY_TABLE", event_time="1970-01-02T10:17:36.789Z", seq="00000000000123456789",
            after={"id": 1001, "first_name": "Sally", "last_name": "Thomas", "email": "sally.thomas@acme.com"}),
        row(2, "update", "u", table="customers", event_time="2019-05-28T08:58:24.863Z", seq="00000000000033832912",
            after=ANNE),
        row(3, "delete", "d", table="customers", event_time="2019-05-28T08:58:25.863Z", seq="00000000000033833232",
            before=ANNE),
        # __ts_ms is the envelope's time (when Debezium processed it): the emit time
        # __lsn: PostgreSQL, which names the table schema.table
        row(4, "read", "r", database="inventory", schema="inventory", table="customers",
            event_time="2019-05-28T08:58:24.863Z", emit_time="2019-05-28T08:58:24.970Z", seq="00000000000024023128",
            txn_id="555",
            after={"id": 1002, "first_name": "George", "last_name": "Bailey", "email": "gbailey@foobar.com"}),
        # rewrite mode without __op: insert or update cannot be told, an update without before image
        row(5, "update", "__deleted=false",
            after={"id": 1003, "first_name": "Edward", "last_name": "Walker", "email": "ed@walker.com"}),
        row(6, "insert", "c", database="inventory", table="customers", event_time="2017-02-07T20:49:37Z",
            seq="mysql-bin.000003:00000000000000000154:00000000000000000000",
            txn_id="file=mysql-bin.000003,pos=154",
            after={"id": 1005, "first_name": "Jane", "last_name": "Doe", "email": "jane@doe.com"}),
    ])


def test_kafka_keys_wrapped_values_and_tombstones_decode_exactly():
    events = read_clean(cdckit.samples.path("debezium_flat/examples_kcat.jsonl"))
    keyed = dict(database="inventory", table="customers", key_columns=["id"], key=[1004])
    assert_rows(events, [  # the topic dbserver1.inventory.customers names the rows' database
        row(10, "insert", "c", **keyed, event_time="2019-05-28T08:58:24.863Z",
            after={"id": 1004, "first_name": "Anne"}),
        row(11, "update", "u", **keyed, event_time="2019-05-28T08:58:25.863Z",
            after={"id": 1004, "first_name": "Anne Marie"}),
        row(12, "delete", "d", **keyed, event_time="2019-05-28T08:58:26.863Z",
            before={"id": 1004, "first_name": "Anne Marie"}),
        # the tombstone names its table through the key schema name (server.database.table.Key)
        row(13, "tombstone", "null", **keyed),
    ])
    assert events["partition"].tolist() == [0, 0, 0, 0]


def test_a_plain_key_struct_gives_the_key_columns():
    flat = registry.create("debezium_flat")
    (event,) = flat.decode(Message({"a": 1, "b": 2, "v": "x", "__op": "u"}, "s", 0, key={"a": 1, "b": 2}))
    assert (event.op, event.key_columns, event.key, event.after) == ("update", ["a", "b"], "[1,2]",
                                                                     '{"a":1,"b":2,"v":"x"}')


def test_schema_types_the_row_and_struct_fields_win_over_bare_ones():
    decimal = {"type": "bytes", "optional": True, "name": "org.apache.kafka.connect.data.Decimal",
               "parameters": {"scale": "2"}, "field": "price"}  # "AJY=": unscaled 150, scale 2
    schema = {"type": "struct", "fields": [{"type": "int64", "optional": False, "field": "n"}, decimal]}
    payload = {"n": "7", "price": "AJY=", "__op": "c", "__ts_ms": 5, "__source_ts_ms": 2000, "__txId": 9,
               "__transaction_id": "t-1", "__lsn": 1, "__source_lsn": 2}  # source.lsn named as such wins
    assert decoded({"schema": schema, "payload": payload}) == [
        {"offset": 0, "op": "insert", "op_raw": "c", "database": None, "schema": None, "table": None,
         "event_time": "1970-01-01T00:00:02Z", "emit_time": "1970-01-01T00:00:00.005000Z",
         "seq": "00000000000000000002", "txn_id": "t-1", "key_columns": None, "key": None, "before": None, "after": {"n": 7, "price": 1.5},
         "ddl": None}]


def test_truncate_and_boolean_deleted():
    got = decoded({"__op": "t", "__table": "orders"}, {"id": 3, "__deleted": True, "__table": "orders"})
    assert [(r["op"], r["op_raw"], r["table"], r["before"], r["after"]) for r in got] == [
        ("truncate", "t", "orders", None, None), ("delete", "__deleted=true", "orders", {"id": 3}, None)]


def test_a_column_with_two_underscores_not_documented_stays_in_the_row():
    (got,) = decoded({"id": 1, "__note": "kept", "__op": "c"})
    assert got["after"] == {"id": 1, "__note": "kept"}


# ---------------------------------------------------------------- bad input


def test_a_bare_row_is_quarantined_with_what_is_missing(tmp_path):
    quarantine = assert_quarantined("debezium_flat", GOOD, [
        ('{"id": 1, "name": "a"}', "a bare row with no change metadata (no op, table or time: no __op, __table"),
        ('{"id": 1, "__op": "x"}', "unknown __op 'x'"),
        ('{"id": 1, "__deleted": "maybe"}', "__deleted is 'maybe', not \"true\" or \"false\""),
        ('[1, 2]', "expected a flattened Debezium row as a JSON object"),
    ], tmp_path)
    assert "add.fields=op,db,table,source.ts_ms" in quarantine["reason"].iloc[0]


@pytest.mark.filterwarnings("ignore:.*no dialect recognises")
def test_a_bare_row_read_without_a_dialect_names_the_transform():
    events = cdckit.read([{"id": 1, "name": "x", "price": 2.5}])
    (reason,) = cdckit.quarantine(events)["reason"]
    assert "ExtractNewRecordState" in reason and "add.fields" in reason


def test_a_flattened_row_is_detected_and_named_when_another_dialect_was_asked():
    flat = {"id": 1, "name": "x", "__op": "c", "__table": "t"}
    events = cdckit.read([flat])
    assert events["dialect"].tolist() == ["debezium_flat"] and events["op"].tolist() == ["insert"]
    (reason,) = cdckit.quarantine(cdckit.read([flat], dialect="maxwell"))["reason"]
    assert reason == "missing required field type (it looks like a debezium_flat message)"


# ---------------------------------------------------------------- round trips, shop, detection


def test_round_trip_of_the_keyed_examples(tmp_path):
    # events none of which has a seq are given made-up binlog positions (__file, __pos, __row)
    again = assert_round_trip("debezium_flat", read_clean(cdckit.samples.path("debezium_flat/examples_kcat.jsonl")),
                              tmp_path, ignore=("seq",))
    assert again["seq"].tolist()[:2] == ["mysql-bin.000001:00000000000000000004:00000000000000000000",
                                         "mysql-bin.000001:00000000000000000104:00000000000000000000"]
    assert again["seq"].isna().tolist() == [False, False, False, True]  # the tombstone has no value to carry one


def test_round_trip_from_another_dialect_loses_only_the_update_before_image(tmp_path):
    events = cdckit.samples.load("maxwell/examples.json")
    events = events[events["op"].isin(["insert", "delete"])].reset_index(drop=True)
    # Maxwell's seq (file:pos:xoffset, ~ for a commit row) is not always a position the transform can carry
    assert_round_trip("debezium_flat", events, tmp_path, ignore=("op_raw", "seq"))


def test_shop_sample_decodes_to_the_scenario():
    def flattened(truth: dict) -> dict:
        return dict(truth, before=truth["before"] if truth["op"] == "delete" else None)  # updates lose before

    assert_shop("debezium_flat", transform=flattened,
                fields=("op", "database", "table", "key_columns", "key", "before", "after", "event_time",
                        "emit_time", "txn_id"))


def test_detection_with_evidence_and_no_theft():
    flat = registry.create("debezium_flat")
    match = flat.detect({"id": 1, "__op": "u", "__table": "t"})
    assert match.score == 0.9 and "__op=u" in match.evidence
    assert flat.detect({"id": 1, "__deleted": "true"}).evidence == ("__deleted",)
    assert flat.detect({"id": 1, "name": "a"}) is None  # a bare row is nobody's
    assert flat.detect(None) is None  # a tombstone alone says nothing of the flattening
    assert flat.detect({"op": "c", "after": {"id": 1, "__op": "c"}, "source": {}}) is None  # a Debezium envelope
    assert flat.detect({"id": 1, "__op": "insert"}) is None
    for sample in cdckit.samples.list():
        if not sample.startswith("debezium_flat/"):
            assert cdckit.detect(cdckit.samples.path(sample)).dialect != "debezium_flat", sample
