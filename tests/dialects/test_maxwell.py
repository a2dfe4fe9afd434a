"""Maxwell: the public docs' messages decoded exactly, quirks, round trips, shop, bad input."""

from __future__ import annotations

import json

import pytest
from validator import assert_quarantined, assert_round_trip, assert_rows, assert_shop, read_clean, row, rows

import cdckit
from cdckit.dialects import registry

E1 = {"id": 1, "m": 4.2341, "c": "2016-10-21 05:33:37.523000", "comment": "I am a creature of light."}
E1U = {"id": 1, "m": 5.444, "c": "2016-10-21 05:33:54.631000", "comment": "I am a creature of light."}
CREATE_E = ("create table test.e ( id int(10) not null primary key auto_increment, m double, c timestamp(6), "
            "comment varchar(255) charset 'latin1' )")


def pos(offset: int, x: str = "") -> str:
    """The seq of binlog position master.000006:offset with xoffset part x ("", "~" or digits)."""
    return f"master.000006:{offset:020d}:{int(x):020d}" if x.isdigit() else f"master.000006:{offset:020d}:{x}"


def item(offset, line, sku, qty, price, x):
    return row(offset, "insert", "insert", database="test", table="order_items", event_time="2016-10-21T12:35:15Z",
               seq=pos(804702, x), txn_id="23431", key_columns=["order_id", "line_no"], key=[7001, line],
               after={"order_id": 7001, "line_no": line, "sku": sku, "qty": qty, "price": price, "gift_wrap": None})


def decoded(*messages: dict) -> list[dict]:
    return rows(read_clean([json.dumps(m) for m in messages], dialect="maxwell"))


INSERT = {"database": "shop", "table": "t", "type": "insert", "ts": 1714554000, "xid": 5, "data": {"id": 1, "n": 2}}


# ---------------------------------------------------------------- the examples


def test_examples_decode_exactly():
    events = read_clean(cdckit.samples.path("maxwell/examples.json"))
    assert_rows(events, [
        row(0, "insert", "insert", database="test", table="maxwell", event_time="2015-12-10T22:25:10Z",
            txn_id="940752", after={"id": 1, "daemon": "Stanislaw Lem"}),
        row(1, "update", "update", database="test", table="maxwell", event_time="2015-12-10T22:25:41Z",
            txn_id="940786", before={"id": 1, "daemon": "Stanislaw Lem"},
            after={"id": 1, "daemon": "Firebus!  Firebus!"}),
        row(2, "ddl", "table-create", database="test", table="e", event_time="2016-10-21T12:32:06Z", seq=pos(800050),
            ddl=CREATE_E),
        row(3, "insert", "insert", database="test", table="e", event_time="2016-10-21T12:33:37Z",
            seq=pos(800911, "~"), txn_id="23396", after=E1),
        row(4, "update", "update", database="test", table="e", event_time="2016-10-21T12:33:54Z",
            emit_time="2016-10-21T12:33:54.870511Z", seq=pos(801170, "~"), txn_id="23400", key_columns=["id"],
            key=[1], before=E1, after=E1U),
        row(5, "delete", "delete", database="test", table="e", event_time="2016-10-21T12:34:10Z",
            emit_time="2016-10-21T12:34:11.002307Z", seq=pos(801492, "~"), txn_id="23405", key_columns=["id"],
            key=[1], before=E1U),
        row(6, "ddl", "table-alter", database="test", table="e", event_time="2016-10-21T12:35:08Z", seq=pos(804398),
            ddl="alter table test.e add column torvalds bigint unsigned after m"),
        item(7, 1, "SKU-100", 2, 9.99, "0"),
        item(8, 2, "SKU-200", 1, 24.5, "1"),
        item(9, 3, "SKU-300", 5, 3.25, "~"),
        row(10, "ddl", "table-drop", database="test", table="e", event_time="2016-10-21T12:35:21Z", seq=pos(805321),
            ddl="drop table test.e"),
        row(11, "ddl", "database-create", database="shop", event_time="2016-10-21T12:35:30Z", seq=pos(805500),
            ddl="CREATE DATABASE shop"),
        row(12, "insert", "insert", table="test_datetime", after={"dtcol": "0000-00-00 00:00:00"}),
        row(13, "insert", "insert", table="test_sets", after={"setcol": ["b_val", "c_val"]}),
    ])


def test_bootstrap_example_decodes_exactly():
    events = read_clean(cdckit.samples.path("maxwell/examples_bootstrap.jsonl"))
    foo = dict(database="fooDB", table="barTable")
    started = "2015-12-19T20:42:24Z"
    assert_rows(events, [
        row(0, "insert", "insert", **foo, event_time="2015-12-19T20:39:58Z", txn_id="13", after={"txt": "hello"}),
        row(1, "insert", "insert", **foo, event_time="2015-12-19T20:39:58Z", txn_id="13", after={"txt": "bootstrap!"}),
        row(2, "other", "bootstrap-start", **foo, event_time=started),
        row(3, "read", "bootstrap-insert", **foo, event_time=started, after={"txt": "hello"}),
        row(4, "read", "bootstrap-insert", **foo, event_time=started, after={"txt": "bootstrap!"}),
        row(5, "other", "bootstrap-complete", **foo, event_time=started),
    ])


def test_round_trip_bootstrap(tmp_path):
    # The bootstrap capture was taken without output_binlog_position, so its events have no seq; the encoder
    # synthesizes positions for a frame without any, so only seq differs after the trip.
    again = assert_round_trip("maxwell", read_clean(cdckit.samples.path("maxwell/examples_bootstrap.jsonl")), tmp_path,
                              ignore=("seq",))
    assert again["seq"].tolist() == [f"mysql-bin.000001:{4:020d}:{0:020d}", f"mysql-bin.000001:{104:020d}:~",
                                     f"mysql-bin.000001:{204:020d}:", f"mysql-bin.000001:{304:020d}:",
                                     f"mysql-bin.000001:{404:020d}:", f"mysql-bin.000001:{504:020d}:"]


def test_shop():
    # Maxwell carries everything the scenario has: data + old give both images, primary_key_columns the key,
    # ts the (whole-second) event time, push_ts the emit time and xid the transaction.
    events = assert_shop("maxwell")
    assert events["seq"].is_monotonic_increasing


def test_detects_its_samples_and_tells_canal_apart():
    detection = cdckit.detect('{"database": "shop", "table": "t", "type": "insert", "ts": 1, "data": {"id": 1}}')
    assert (detection.dialect, detection.evidence) == ("maxwell", ("data is an object", "database", "table", "ts",
                                                                   "type=insert"))
    for name in ("maxwell/examples.json", "maxwell/examples_bootstrap.jsonl", "maxwell/shop.jsonl.gz"):
        detection = cdckit.detect(cdckit.samples.path(name))
        assert detection.dialect == "maxwell", name
        assert {"data is an object", "database", "table", "ts", "xid"} <= set(detection.evidence), name
        assert (detection.messages["dialect"] == "maxwell").all(), name
    maxwell, canal = registry.create("maxwell"), registry.create("canal")
    ddl = {"type": "table-drop", "database": "test", "table": "e", "ts": 1477053321000, "sql": "drop table test.e"}
    assert maxwell.detect(ddl) == cdckit.dialects.Match(0.95, ("sql", "database", "table", "ts", "type=table-drop"))
    assert canal.detect(ddl) is None and canal.detect(INSERT) is None
    canal_insert = {"data": [{"id": "1"}], "database": "shop", "table": "t", "type": "INSERT", "es": 1, "ts": 2,
                    "isDdl": False, "pkNames": ["id"]}
    assert maxwell.detect(canal_insert) is None
    assert maxwell.detect({"data": {"id": 1}, "meta": {"op": "ins", "table": "shop.t"}}) is None  # SharePlex
    assert cdckit.detect(cdckit.samples.path("canal")).dialect == "canal"


# ---------------------------------------------------------------- quirks


def test_ts_is_seconds_on_rows_and_milliseconds_on_ddl_and_ts_ms_wins():
    ddl = {"type": "table-alter", "database": "shop", "table": "t", "ts": 1714554000123, "sql": "alter table t"}
    got = decoded(INSERT, ddl, dict(INSERT, ts_ms=1714554000456))
    assert [r["event_time"] for r in got] == ["2024-05-01T09:00:00Z", "2024-05-01T09:00:00.123000Z",
                                              "2024-05-01T09:00:00.456000Z"]


def test_before_is_data_overlaid_with_old():
    got = decoded(dict(INSERT, type="update", data={"id": 1, "a": "x", "b": None, "c": 3}, old={"b": 7, "a": "w"}))
    assert list(got[0]["before"].items()) == [("id", 1), ("a", "w"), ("b", 7), ("c", 3)]
    assert got[0]["after"] == {"id": 1, "a": "x", "b": None, "c": 3}
    # an update that changed nothing Maxwell could see has no old: before equals after
    assert decoded(dict(INSERT, type="update"))[0]["before"] == {"id": 1, "n": 2}


def test_xid_is_the_transaction_and_commit_is_not_kept():
    got = decoded(dict(INSERT, xid=77, xoffset=0), dict(INSERT, xid=77, commit=True), dict(INSERT, xid=78))
    assert [r["txn_id"] for r in got] == ["77", "77", "78"]
    assert decoded({k: v for k, v in INSERT.items() if k != "xid"})[0]["txn_id"] is None


def test_seq_is_position_and_xoffset_with_the_commit_row_last():
    base = dict(INSERT, position="mysql-bin.000009:1234")
    got = decoded(dict(base, xoffset=9), dict(base, xoffset=10), dict(base, commit=True),
                  dict(INSERT, position="mysql-bin.000010:4"), INSERT)
    seqs = [r["seq"] for r in got]
    assert seqs[:4] == [f"mysql-bin.000009:{1234:020d}:{9:020d}", f"mysql-bin.000009:{1234:020d}:{10:020d}",
                        f"mysql-bin.000009:{1234:020d}:~", f"mysql-bin.000010:{4:020d}:"]
    assert seqs[:4] == sorted(seqs[:4])
    assert seqs[4] is None  # without output_binlog_position there is no order key


def test_key_columns_only_from_primary_key_columns():
    with_columns = dict(INSERT, primary_key=[1], primary_key_columns=["id"])
    got = decoded(with_columns, dict(INSERT, primary_key=[1]), dict(with_columns, type="delete"),
                  dict(INSERT, primary_key_columns=[]))
    assert [(r["key_columns"], r["key"]) for r in got] == [(["id"], [1]), (None, None), (["id"], [1]), (None, None)]


def test_bootstrap_insert_is_a_read_and_markers_are_other_events():
    got = decoded(dict(INSERT, type="bootstrap-start", data={}), dict(INSERT, type="bootstrap-insert"),
                  dict(INSERT, type="bootstrap-complete", data={}))
    assert [(r["op"], r["op_raw"], r["after"]) for r in got] == [
        ("other", "bootstrap-start", None), ("read", "bootstrap-insert", {"id": 1, "n": 2}),
        ("other", "bootstrap-complete", None)]


def test_values_are_kept_as_typed_json():
    data = {"id": 18446744073709551615, "blob": "AAEC", "tags": ["a", "b"], "doc": {"k": [1, 2]},
            "zero": "0000-00-00 00:00:00", "f": 0.1, "ok": True, "none": None}
    assert decoded(dict(INSERT, data=data))[0]["after"] == dict(data, id="18446744073709551615")


def test_push_ts_is_the_emit_time_to_the_microsecond():
    got = decoded(dict(INSERT, push_ts=1714554001.123456), INSERT)
    assert [r["emit_time"] for r in got] == ["2024-05-01T09:00:01.123456Z", None]


def test_ddl_keeps_the_statement_and_drops_the_definitions():
    [got] = decoded({"type": "database-drop", "database": "old_shop", "ts": 1714554000000, "sql": "DROP DATABASE old_shop",
                     "position": "mysql-bin.000002:120", "def": {"database": "old_shop"}})
    assert got == row(0, "ddl", "database-drop", database="old_shop", event_time="2024-05-01T09:00:00Z",
                      seq=f"mysql-bin.000002:{120:020d}:", ddl="DROP DATABASE old_shop")


def test_encoder_writes_commit_info_positions_and_sub_second_times():
    events = read_clean([json.dumps(dict(INSERT, ts_ms=1714554000250, xid=5, xoffset=0, position="b.000001:4")),
                         json.dumps(dict(INSERT, xid=5, commit=True, position="b.000001:4"))], dialect="maxwell")
    first, second = (r.value for r in registry.create("maxwell").encode(events))
    assert (first["ts"], first["ts_ms"], first["xoffset"], first["position"]) == (1714554000, 1714554000250, 0,
                                                                                  "b.000001:4")
    assert "commit" not in first and second["commit"] is True and "xoffset" not in second


# ---------------------------------------------------------------- bad input


BAD = [
    ('{"database": "shop", "table": "t", "type": "insert", "data": {"id": 2', "truncated JSON"),
    ('{"data": [{"id": "1"}], "database": "shop", "table": "t", "type": "INSERT", "es": 1, "isDdl": false}',
     "unknown type 'INSERT' (it looks like a canal message)"),
    ('{"database": "shop", "table": "t", "ts": 1, "data": {"id": 1}}', "missing required field type"),
    ('{"database": "shop", "table": "t", "type": "insert", "ts": 1}', "missing required field data"),
    ('{"database": "shop", "table": "t", "type": "insert", "ts": 1, "data": "3q2+7w=="}',
     "expected data as a JSON object, got text"),
    ('{"database": "shop", "table": "t", "type": "upsert", "ts": 1, "data": {"id": 1}}', "unknown type 'upsert'"),
    ('{"database": "shop", "table": "t", "type": 1, "ts": 1, "data": {"id": 1}}', "unknown type 1"),
    ('{"database": "shop", "table": "t", "type": "update", "ts": 1, "data": {"id": 1}, "old": [1]}',
     "expected old as a JSON object, got list"),
    ('{"database": "shop", "table": "t", "type": "table-drop", "ts": 1000}', "missing required field sql"),
]


def test_bad_messages_are_quarantined_with_source_offset_reason_and_raw(tmp_path):
    assert_quarantined("maxwell", json.dumps(INSERT), BAD, tmp_path)


def test_errors_raise_names_source_offset_reason_and_keeps_what_was_decoded(tmp_path):
    path = tmp_path / "capture.jsonl"
    path.write_text("\n".join([json.dumps(INSERT), json.dumps(dict(INSERT, data={"id": 2})),
                               '{"type": "upsert", "data": {}}']) + "\n")
    with pytest.raises(cdckit.DecodeError) as caught:
        cdckit.read(path, dialect="maxwell", errors="raise")
    err = caught.value
    assert (err.source, err.offset, err.reason) == (str(path), 2, "unknown type 'upsert'")
    assert str(err) == f"{path}, message 2: unknown type 'upsert'"
    assert err.partial["after"].tolist() == ['{"id":1,"n":2}', '{"id":2}']
