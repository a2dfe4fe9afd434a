"""SharePlex: the spec's message decoded exactly, partial updates, rowid keys, times, round trips, bad input."""

from __future__ import annotations

import json

import pytest
from validator import assert_round_trip, assert_rows, assert_shop, read_clean, row

import cdckit
from cdckit.dialects import registry
from cdckit.io import iter_sources, write_messages
from cdckit.reading.detect import score_message

LINE_1 = {"order_id": "1001", "line_no": "1", "product": "Widget", "qty": "2", "price": "9.99", "note": None}
LINE_2 = {"order_id": "1001", "line_no": "2", "product": "Gadget", "qty": "1", "price": "24.50", "note": "gift wrap"}
ORDER_LINES = dict(database="sales", table="order_lines", key_columns=["order_id", "line_no"])
MAXWELL = {"database": "shop", "table": "t", "type": "insert", "ts": 1, "xid": 7, "commit": True, "data": {"id": 1}}


def message(op, data, key=None, **meta):
    """A SharePlex message literal for table shop.t."""
    full = {"time": "2024-05-01T09:00:00", "op": op, "posttime": "2024-05-01T09:00:01", "table": "shop.t",
            "trans": "1.2.3", "scn": "171455400000001"}
    full.update(meta)
    msg = {"data": data, "meta": {k: v for k, v in full.items() if v is not None}}
    if key is not None:
        msg["key"] = key
    return msg


def test_examples_decode_exactly():
    events = read_clean(cdckit.samples.path("shareplex/examples.json"))
    assert_rows(events, [
        row(0, "insert", "ins", **ORDER_LINES, event_time="2024-05-01T17:00:00Z", emit_time="2024-05-01T17:00:01Z",
            seq="00000171455400000001", txn_id="7.12.3451", key=["1001", "1"], after=LINE_1),
        row(1, "insert", "ins", **ORDER_LINES, event_time="2024-05-01T17:00:00Z", emit_time="2024-05-01T17:00:01Z",
            seq="00000171455400000002", txn_id="7.12.3451", key=["1001", "2"], after=LINE_2),
        # an update that changes only qty: the after image is just that column
        row(2, "update", "upd", **ORDER_LINES, event_time="2024-05-01T17:00:05Z", emit_time="2024-05-01T17:00:06Z",
            seq="00000171455400500001", txn_id="7.13.3452", key=["1001", "1"],
            before={"order_id": "1001", "line_no": "1"}, after={"qty": "3"}),
        # an update that changes a key column: the key is the one after the change
        row(3, "update", "upd", **ORDER_LINES, event_time="2024-05-01T17:00:05Z", emit_time="2024-05-01T17:00:06Z",
            seq="00000171455400500002", txn_id="7.13.3452", key=["1001", "3"],
            before={"order_id": "1001", "line_no": "2"}, after={"line_no": "3", "product": "Gadget XL"}),
        row(4, "delete", "del", **ORDER_LINES, event_time="2024-05-01T17:00:09Z", emit_time="2024-05-01T17:00:10Z",
            seq="00000171455400900001", txn_id="7.14.3460", key=["1001", "1"], before=dict(LINE_1, qty="3")),
    ])


def test_rowid_quirks_decode_exactly():
    events = read_clean(cdckit.samples.path("shareplex/examples_rowid.jsonl"))
    assert_rows(events, [
        # JSON numbers match the rowid text; tenant.database.table splits at the last dot
        row(0, "insert", "ins", database="tenant1.inventory", table="stock", event_time="2024-05-02T08:30:00Z",
            emit_time="2024-05-02T08:30:02Z", seq="00000171463860000001", txn_id="9.2.118",
            key_columns=["warehouse", "sku"], key=[3, "SKU-100"],
            after={"warehouse": 3, "sku": "SKU-100", "on_hand": 3, "reserved": False}),
        # a rowid that matches no column: no key columns, the rowid values as the key; meta.seq as seq
        row(1, "delete", "del", database="inventory", table="stock", event_time="2024-05-02T08:31:00Z",
            emit_time="2024-05-02T08:31:02Z", seq="00000000000000000009", txn_id="9.3.120",
            key=["AAAR3sAAEAAAACXAAA"], before={"warehouse": 4, "sku": "SKU-200", "on_hand": 0, "reserved": True}),
        row(2, "update", "upd", database="inventory", table="stock", event_time="2024-05-02T08:32:00Z",
            emit_time="2024-05-02T08:32:02Z", seq="00000000000000000010", txn_id="9.4.121",
            key_columns=["warehouse", "sku"], key=[3, "SKU-100"], before={"warehouse": 3, "sku": "SKU-100"},
            after={"on_hand": 12}),
    ])


# ---------------------------------------------------------------- quirks


def test_update_after_image_is_partial_and_before_is_the_key():
    events = read_clean([message("upd", {"name": "Zoë"}, key={"id": 7})], dialect="shareplex")
    assert json.loads(events.loc[0, "after"]) == {"name": "Zoë"}  # no other column made up
    assert json.loads(events.loc[0, "before"]) == {"id": 7}
    assert events.loc[0, "key_columns"] == ["id"] and events.loc[0, "key"] == "[7]"


def test_update_key_is_the_key_after_the_change():
    events = read_clean([message("upd", {"b": "y", "note": "moved"}, key={"a": 1, "b": "x"})], dialect="shareplex")
    assert events.loc[0, "key_columns"] == ["a", "b"]
    assert events.loc[0, "key"] == '[1,"y"]'
    assert json.loads(events.loc[0, "before"]) == {"a": 1, "b": "x"}


def test_insert_and_delete_key_columns_come_from_the_rowid():
    rowid = "shop.t-2\x01B"
    msgs = [message("ins", {"a": "1", "b": "B", "c": "2"}, rowid=rowid),  # rowid order, not image order
            message("del", {"a": 2, "b": "B", "c": 2}, rowid=rowid)]  # numbers compared as JSON text
    events = read_clean(msgs, dialect="shareplex")
    assert events["key_columns"].tolist() == [["c", "b"], ["a", "b"]]
    assert events["key"].tolist() == ['["2","B"]', '[2,"B"]']


def test_rowid_match_takes_the_first_column_with_the_same_text():
    # the documented guess: qty comes before id and has the same text, so it is taken
    events = read_clean([message("ins", {"qty": "5", "id": "5"}, rowid="shop.t-5")], dialect="shareplex")
    assert events.loc[0, "key_columns"] == ["qty"]


def test_rowid_without_a_match_gives_no_key_columns_and_the_rowid_values_as_key():
    msgs = [message("ins", {"id": 1, "v": "x"}, rowid="shop.t-77\x01zz"), message("ins", {"id": 1}, rowid=None)]
    events = read_clean(msgs, dialect="shareplex")
    assert events.loc[0, "key_columns"] is None and events.loc[0, "key"] == '["77","zz"]'
    assert events.loc[1, "key_columns"] is None and events["key"].isna().tolist() == [False, True]


def test_table_is_database_dot_table():
    msgs = [message("ins", {"id": 1}, table="shop.customers"), message("ins", {"id": 1}, table="t1.shop.customers"),
            message("ins", {"id": 1}, table="customers")]
    events = read_clean(msgs, dialect="shareplex")
    assert events["database"].fillna("<none>").tolist() == ["shop", "t1.shop", "<none>"]
    assert events["table"].tolist() == ["customers"] * 3


def test_zone_less_times_are_utc_unless_a_zone_is_given():
    msg = message("ins", {"id": 1}, time="2024-05-01T17:00:00", posttime="2024-05-01T17:00:02")
    utc = read_clean([msg], dialect="shareplex")
    shanghai = read_clean([msg], dialect="shareplex", tz="Asia/Shanghai")
    assert str(utc.loc[0, "event_time"]) == "2024-05-01 17:00:00+00:00"
    assert str(shanghai.loc[0, "event_time"]) == "2024-05-01 09:00:00+00:00"
    assert str(shanghai.loc[0, "emit_time"]) == "2024-05-01 09:00:02+00:00"
    auto = read_clean(cdckit.samples.path("shareplex/examples.json"), tz="Asia/Shanghai")
    assert str(auto.loc[0, "event_time"]) == "2024-05-01 09:00:00+00:00"


def test_seq_is_scn_else_meta_seq_sorted_as_numbers():
    msgs = [message("ins", {"id": 1}, scn="10", seq="3"), message("ins", {"id": 2}, scn=None, seq="9"),
            message("ins", {"id": 3}, scn=None, seq=None)]
    events = read_clean(msgs, dialect="shareplex")
    assert events["seq"].tolist()[:2] == ["00000000000000000010", "00000000000000000009"]
    assert events["seq"].tolist()[1] < events["seq"].tolist()[0]
    assert events["seq"].isna().tolist() == [False, False, True]
    assert events["txn_id"].tolist() == ["1.2.3"] * 3


def test_values_stay_as_they_arrive():
    data = {"id": "0042", "price": "9.90", "n": 12.50, "flag": True, "none": None}
    events = read_clean([message("ins", data, rowid="shop.t-0042")], dialect="shareplex")
    assert events.loc[0, "after"] == '{"id":"0042","price":"9.90","n":12.5,"flag":true,"none":null}'
    assert events.loc[0, "key"] == '["0042"]'


# ---------------------------------------------------------------- round trips and shop


def test_round_trip_rowid(tmp_path):
    assert_round_trip("shareplex", read_clean(cdckit.samples.path("shareplex/examples_rowid.jsonl")), tmp_path)


def test_round_trip_in_a_zone(tmp_path):
    events = read_clean(cdckit.samples.path("shareplex/examples.json"), tz="Asia/Shanghai")
    records = list(registry.create("shareplex", tz="Asia/Shanghai").encode(events))
    assert records[0].value["meta"]["time"] == "2024-05-01T17:00:00"
    path = tmp_path / "zoned.jsonl"
    write_messages(records, path)
    again = read_clean(path, tz="Asia/Shanghai")
    assert again.drop(columns=["source"]).equals(events.drop(columns=["source"]))


def test_encode_writes_only_changed_columns_and_skips_what_shareplex_cannot_say():
    events = read_clean(cdckit.samples.path("debezium/examples.json"))
    records = [r.value for r in registry.create("shareplex").encode(events)]
    assert [r["meta"]["op"] for r in records] == ["ins", "upd", "del", "ins"]  # no begin/commit/tombstone/ddl
    update = records[1]
    assert update["data"] == {"first_name": "Anne Marie"}
    # without key columns (a Debezium file has none) the whole before image stands for the key
    assert update["key"] == {"id": 1004, "first_name": "Anne", "last_name": "Kretchmar",
                             "email": "annek@noanswer.org", "balance": 1004.5}
    assert update["meta"]["table"] == "inventory.customers"


def test_shop():
    def shareplex_view(truth):
        # an update carries only the key before the change and the columns that changed
        if truth["op"] == "update":
            before, after = truth["before"], truth["after"]
            truth = dict(truth, before={c: before[c] for c in truth["key_columns"]},
                         after={c: v for c, v in after.items() if before[c] != v})
        return truth

    assert_shop("shareplex", transform=shareplex_view)


# ---------------------------------------------------------------- detection


def test_detects_its_samples_with_evidence():
    detection = cdckit.detect(cdckit.samples.path("shareplex"))
    assert detection.dialect == "shareplex"
    assert {"data is an object", "meta.op=ins", "meta.rowid", "meta.table"} <= set(detection.evidence)


def test_every_sample_message_is_best_explained_as_shareplex():
    dialects = registry.all_dialects()
    for name in ("shareplex/examples.json", "shareplex/examples_rowid.jsonl", "shareplex/shop"):
        for _, msgs in iter_sources(cdckit.samples.path(name)):
            for msg in msgs:
                assert score_message(msg.value, dialects)[0][0] == "shareplex", (name, msg.offset)


def test_maxwell_and_other_shapes_are_not_claimed():
    shareplex = registry.create("shareplex")
    canal = {"data": [{"id": "1"}], "type": "INSERT", "database": "d", "table": "t", "es": 1, "ts": 2}
    for value in (MAXWELL, canal, {"data": {"id": 1}}, {"meta": {"op": "ins"}}, None, "line", [1]):
        assert shareplex.detect(value) is None


# ---------------------------------------------------------------- bad input


def test_bad_messages_are_quarantined_with_reason():
    good = json.dumps(message("ins", {"id": 1}, rowid="shop.t-1"))
    text = "\n".join([
        good,
        '{"data": {"id": 2}, "meta": {"op": "ins", "table": "shop.t"',
        json.dumps(MAXWELL),
        json.dumps(message("merge", {"id": 3})),
        json.dumps(message("upd", {"v": 4})),
        json.dumps(message("del", [4])),
        json.dumps(message("ins", {"id": 5}, time="yesterday")),
        '{"data": {"id": 6}, "meta": {"table": "shop.t"}}',
        json.dumps(message("upd", {"v": 7}, key={})),
        good,
    ])
    events = cdckit.read(text, dialect="shareplex")
    assert events["offset"].tolist() == [0, 9]
    quarantine = cdckit.quarantine(events)
    assert quarantine["offset"].tolist() == [1, 2, 3, 4, 5, 6, 7, 8]
    assert set(quarantine["source"]) == {"<string>"} and set(quarantine["dialect"]) == {"shareplex"}
    reasons = quarantine["reason"].tolist()
    assert reasons[0].startswith("truncated JSON")
    assert reasons[1].startswith("missing required field meta")
    assert reasons[2].startswith("unknown op 'merge'")
    assert reasons[3].startswith("missing required field key")
    assert reasons[4].startswith("expected data as a JSON object, got list")
    assert reasons[5].startswith("meta.time is not a time: 'yesterday'")
    assert reasons[6].startswith("missing required field meta.op")
    assert reasons[7].startswith("update with an empty key object")
    assert quarantine["raw"].tolist()[0] == '{"data": {"id": 2}, "meta": {"op": "ins", "table": "shop.t"'
    report = events.attrs["report"]
    assert (report["messages"], report["decoded"], report["quarantined"], report["events"]) == (10, 2, 8, 2)


def test_a_maxwell_message_read_as_shareplex_is_named_as_maxwell():
    # needs the maxwell dialect (written separately) to recognise its own message
    events = cdckit.read([MAXWELL], dialect="shareplex")
    reason = cdckit.quarantine(events)["reason"].tolist()[0]
    assert reason.startswith("missing required field meta")
    assert "looks like a maxwell message" in reason


def test_errors_raise_names_source_offset_reason_and_keeps_what_was_decoded(tmp_path):
    path = tmp_path / "capture.jsonl"
    good = json.dumps(message("ins", {"id": 1}, rowid="shop.t-1"))
    bad = json.dumps(message("upd", {"v": 2}))
    path.write_text(good + "\n" + good + "\n" + bad + "\n")
    with pytest.raises(cdckit.DecodeError) as caught:
        cdckit.read(path, dialect="shareplex", errors="raise")
    err = caught.value
    assert (err.source, err.offset) == (str(path), 2)
    assert str(err).startswith(f"{path}, message 2: missing required field key")
    assert err.raw == bad
    assert len(err.partial) == 2 and err.partial["key"].tolist() == ["[1]", "[1]"]
