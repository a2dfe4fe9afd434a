"""Canal flat JSON: the spec's template and Canal's own messages decoded exactly, quirks, round trips, bad input."""

from __future__ import annotations

import json

import pytest
from validator import assert_quarantined, assert_round_trip, assert_rows, assert_shop, read_clean, row, rows

import cdckit
from cdckit.dialects import registry
from cdckit.frame import event_row
from cdckit.io import Message

GTID = "a7c3e1f2-07d4-11ef-9a3b-0242ac120002:"
KETTLE = {"id": 1, "name": "Kettle", "price": 24.9, "weight": 1.25, "active": 1, "views": "18446744073709551615",
          "created_at": "2024-05-01 10:16:40"}
TEAPOT = {"id": 2, "name": "Teapot «Ming»", "price": 39.0, "weight": 0.8, "active": 1, "views": 0,
          "created_at": "2024-05-01 10:16:40"}
MUG = {"id": 4294967295, "name": "Mug", "price": None, "weight": None, "active": 0, "views": 9223372036854775807,
       "created_at": "2024-05-01 10:16:40"}
CREATE_SQL = ("CREATE TABLE `products` (`id` int(10) unsigned NOT NULL AUTO_INCREMENT, `name` varchar(64) NOT NULL, "
              "`price` decimal(10,2) DEFAULT NULL, `weight` double DEFAULT NULL, `active` tinyint(1) NOT NULL "
              "DEFAULT '1', `views` bigint(20) unsigned NOT NULL DEFAULT '0', `created_at` datetime NOT NULL, "
              "PRIMARY KEY (`id`))")


def seq(es: int, batch: int | None, index: int) -> str:
    return f"{es:020d}:{'' if batch is None else f'{batch:020d}'}:{index:020d}"


def product(offset, op, op_raw, time, emit, es, batch, index, txn, **fields):
    return row(offset, op, op_raw, database="shop", table="products", event_time=time, emit_time=emit,
               seq=seq(es, batch, index), txn_id=GTID + txn, key_columns=["id"], **fields)


def message(**fields) -> dict:
    """A Canal INSERT message on shop.t, changed by ``fields``."""
    base = {"data": [{"id": "1"}], "database": "shop", "es": 1714558600000, "id": 1, "isDdl": False,
            "mysqlType": {"id": "bigint(20)"}, "old": None, "pkNames": ["id"], "sql": "", "sqlType": {"id": -5},
            "table": "t", "ts": 1714558600100, "type": "INSERT"}
    base.update(fields)
    return base


def decoded(*messages: dict) -> list[dict]:
    return rows(read_clean([json.dumps(m) for m in messages], dialect="canal"))


# ---------------------------------------------------------------- the examples


def test_examples_decode_exactly():
    events = read_clean(cdckit.samples.path("canal/examples.jsonl"))
    assert_rows(events, [
        # the spec's template made concrete: OceanBase writes neither id nor gtid
        row(0, "update", "UPDATE", database="test", table="orders", event_time="2024-05-01T10:15:30Z",
            emit_time="2024-05-01T10:15:30.512000Z", seq=seq(1714558530000, None, 0), key_columns=["id"], key=[1001],
            before={"id": 1001, "customer": "alice", "amount": 199.9, "status": "NEW",
                    "updated_at": "2024-05-01 10:00:00"},
            after={"id": 1001, "customer": "alice", "amount": 199.9, "status": "PAID",
                   "updated_at": "2024-05-01 10:15:30"}),
        row(1, "ddl", "CREATE", database="shop", table="products", event_time="2024-05-01T10:16:40Z",
            emit_time="2024-05-01T10:16:40.143000Z", seq=seq(1714558600000, 41, 0), ddl=CREATE_SQL),
        product(2, "insert", "INSERT", "2024-05-01T10:16:40.500000Z", "2024-05-01T10:16:40.612000Z", 1714558600500,
                42, 0, "1201", key=[1], after=KETTLE),
        product(2, "insert", "INSERT", "2024-05-01T10:16:40.500000Z", "2024-05-01T10:16:40.612000Z", 1714558600500,
                42, 1, "1201", key=[2], after=TEAPOT),
        product(2, "insert", "INSERT", "2024-05-01T10:16:40.500000Z", "2024-05-01T10:16:40.612000Z", 1714558600500,
                42, 2, "1201", key=[4294967295], after=MUG),
        product(3, "update", "UPDATE", "2024-05-01T10:17:40Z", "2024-05-01T10:17:40.088000Z", 1714558660000, 43, 0,
                "1202", key=[3], before=MUG, after=dict(MUG, id=3, price=12.5)),
        product(4, "update", "UPDATE", "2024-05-01T10:18:40Z", "2024-05-01T10:18:40.031000Z", 1714558720000, 44, 0,
                "1203", key=[1], before=KETTLE, after=dict(KETTLE, active=0)),
        product(4, "update", "UPDATE", "2024-05-01T10:18:40Z", "2024-05-01T10:18:40.031000Z", 1714558720000, 44, 1,
                "1203", key=[2], before=TEAPOT, after=dict(TEAPOT, active=0)),
        product(5, "delete", "DELETE", "2024-05-01T10:19:40Z", "2024-05-01T10:19:40.250000Z", 1714558780000, 45, 0,
                "1204", key=[2], before=dict(TEAPOT, active=0)),
        row(6, "ddl", "ALTER", database="shop", table="products", event_time="2024-05-01T10:19:50Z",
            emit_time="2024-05-01T10:19:50.077000Z", seq=seq(1714558790000, 46, 0),
            ddl="ALTER TABLE `products` ADD COLUMN `sku` varchar(32) NULL AFTER `name`"),
        row(7, "insert", "INSERT", database="shop", table="attachments", event_time="2024-05-01T10:20:00Z",
            emit_time="2024-05-01T10:20:00.904000Z", seq=seq(1714558800000, 47, 0), txn_id=GTID + "1205",
            key_columns=["id"], key=[7],
            after={"id": 7, "file_name": "logo.png", "content": "iVBORw0KGgoAAAANSUhEUg==", "checksum": "3q2+7w==",
                   "size": 16, "total": "12345678901234567890.0123456789", "uploaded": "2024-05-01 10:20:00",
                   "note": "42"}),
        row(8, "ddl", "ERASE", database="shop", table="attachments", event_time="2024-05-01T10:21:40Z",
            emit_time="2024-05-01T10:21:40.012000Z", seq=seq(1714558900000, 48, 0), ddl="DROP TABLE `attachments`"),
    ])


def test_round_trip_of_empty_data(tmp_path):
    assert_round_trip("canal", read_clean(cdckit.samples.path("canal/examples_empty_data.jsonl")), tmp_path)


def test_shop():
    # Canal carries everything the scenario has: full images (data + old), key columns (pkNames),
    # both times (es, ts) and the transaction id (gtid); the values come back typed from mysqlType.
    assert_shop("canal")


def test_detects_its_samples_and_tells_maxwell_apart():
    for name in ("canal/examples.jsonl", "canal/examples_empty_data.jsonl", "canal/shop.jsonl"):
        detection = cdckit.detect(cdckit.samples.path(name))
        assert detection.dialect == "canal", name
        assert {"data is a list", "isDdl", "es", "pkNames"} <= set(detection.evidence), detection.evidence
    canal = registry.create("canal")
    maxwell = registry.create("maxwell")
    insert = message()
    assert canal.detect(insert) == cdckit.dialects.Match(
        0.95, ("data is a list", "isDdl", "es", "pkNames", "mysqlType", "sqlType", "type=INSERT"))
    assert maxwell.detect(insert) is None
    ddl = message(data=None, type="ALTER", isDdl=True, mysqlType=None, sqlType=None, pkNames=None, sql="ALTER ...")
    assert canal.detect(ddl).evidence == ("isDdl", "es", "pkNames", "mysqlType", "sqlType", "type=ALTER")
    assert maxwell.detect(ddl) is None
    maxwell_insert = {"database": "shop", "table": "t", "type": "insert", "ts": 1, "xid": 9, "data": {"id": 1}}
    assert canal.detect(maxwell_insert) is None
    assert canal.detect({"data": {"id": 1}, "meta": {"op": "ins", "table": "shop.t"}}) is None  # SharePlex
    assert cdckit.detect(cdckit.samples.path("maxwell")).dialect == "maxwell"


# ---------------------------------------------------------------- quirks


def test_one_event_per_element_of_data_in_order():
    got = decoded(message(data=[{"id": "3"}, {"id": "1"}, {"id": "2"}]))
    assert [r["after"] for r in got] == [{"id": 3}, {"id": 1}, {"id": 2}]
    assert [r["seq"][-2:] for r in got] == ["00", "01", "02"]


def test_before_is_data_overlaid_with_old_keeping_column_order():
    got = decoded(message(type="UPDATE", mysqlType={"id": "int", "a": "varchar(8)", "b": "int", "c": "int"},
                          data=[{"id": "1", "a": "x", "b": "2", "c": None}],
                          old=[{"c": "9", "a": "w"}]))
    assert list(got[0]["before"].items()) == [("id", 1), ("a", "w"), ("b", 2), ("c", 9)]
    assert got[0]["after"] == {"id": 1, "a": "x", "b": 2, "c": None}


def test_update_rows_pair_with_their_own_old_entry():
    got = decoded(message(type="UPDATE", mysqlType={"id": "int", "n": "int"},
                          data=[{"id": "1", "n": "10"}, {"id": "2", "n": "20"}, {"id": "3", "n": "30"}],
                          old=[{"n": "1"}, None]))  # old shorter than data: the third row has no known change
    assert [r["before"] for r in got] == [{"id": 1, "n": 1}, {"id": 2, "n": 20}, {"id": 3, "n": 30}]


def test_primary_key_change_has_old_key_in_before_and_new_key_in_after():
    got = decoded(message(type="UPDATE", mysqlType={"id": "bigint(20)", "name": "varchar(8)"},
                          data=[{"id": "12", "name": "a"}], old=[{"id": "11"}]))
    assert (got[0]["before"], got[0]["after"], got[0]["key"]) == ({"id": 11, "name": "a"}, {"id": 12, "name": "a"},
                                                                  [12])


def test_values_are_typed_from_mysql_type():
    mysql_type = {"i": "int(11)", "u": "int unsigned", "big": "bigint(20) unsigned", "neg": "bigint(20)",
                  "f": "float", "d": "double", "dec": "decimal(10,2)", "wide": "decimal(30,10)", "flag": "tinyint(1)",
                  "bit": "bit(1)", "vc": "varchar(255)", "ch": "char(3)", "dt": "datetime", "ts": "timestamp(3)",
                  "day": "date", "js": "json", "num_text": "varchar(10)"}
    data = {"i": "-7", "u": "4294967295", "big": "18446744073709551615", "neg": "-9223372036854775808",
            "f": "3.5", "d": "0.1", "dec": "10.50", "wide": "12345678901234567890.0123456789", "flag": "1",
            "bit": "0", "vc": "hello", "ch": "007", "dt": "2024-05-01 10:00:00", "ts": "2024-05-01 10:00:00.123",
            "day": "2024-05-01", "js": '{"a": 1}', "num_text": "42"}
    after = decoded(message(mysqlType=mysql_type, sqlType={}, data=[data]))[0]["after"]
    assert after == {"i": -7, "u": 4294967295, "big": "18446744073709551615", "neg": -9223372036854775808,
                     "f": 3.5, "d": 0.1, "dec": 10.5, "wide": "12345678901234567890.0123456789", "flag": 1,
                     "bit": 0, "vc": "hello", "ch": "007", "dt": "2024-05-01 10:00:00",
                     "ts": "2024-05-01 10:00:00.123", "day": "2024-05-01", "js": '{"a": 1}', "num_text": "42"}


def test_sql_type_types_columns_mysql_type_does_not_name_and_no_type_keeps_the_string():
    sql_type = {"a": -7, "b": -6, "c": 5, "d": 4, "e": -5, "f": 6, "g": 7, "h": 8, "i": 2, "j": 3, "k": 16,
                "l": 1, "m": 12, "n": -1, "o": 91, "p": 92, "q": 93, "r": -2, "s": -3, "t": -4, "u": 2004,
                "geo": 4, "over": 12}
    data = {"a": "1", "b": "-3", "c": "300", "d": "70000", "e": "9007199254740993", "f": "1.5", "g": "2.25",
            "h": "1e-07", "i": "3.10", "j": "99999999999999999999.99", "k": "true", "l": "001", "m": "x",
            "n": "long", "o": "2024-05-01", "p": "10:00:00", "q": "2024-05-01 10:00:00", "r": "\x00\x01",
            "s": "ÿ", "t": "AB", "u": "", "geo": "7", "over": "5", "untyped": "5"}
    # mysqlType names only "geo" (a type this module does not know: sqlType decides) and "over" (varchar: text)
    after = decoded(message(mysqlType={"geo": "geometry", "over": "varchar(8)"}, sqlType=sql_type,
                            data=[data]))[0]["after"]
    assert after == {"a": 1, "b": -3, "c": 300, "d": 70000, "e": 9007199254740993, "f": 1.5, "g": 2.25, "h": 1e-07,
                     "i": 3.1, "j": "99999999999999999999.99", "k": True, "l": "001", "m": "x", "n": "long",
                     "o": "2024-05-01", "p": "10:00:00", "q": "2024-05-01 10:00:00", "r": "AAE=", "s": "/w==",
                     "t": "QUI=", "u": "", "geo": 7, "over": "5", "untyped": "5"}


def test_enum_and_set_sent_as_numbers_become_their_labels():
    # Canal without the table's metadata sends an ENUM as its index and a SET as its bit mask (sqlType a number
    # code); with a text sqlType the values are the labels already, and a number outside the labels is kept
    mysql_type = {"id": "int(11)", "size": "enum('small','it''s big')", "tags": "set('red','green','blue')",
                  "named": "enum('1','2')", "odd": "enum('x')"}
    sql_type = {"id": 4, "size": 4, "tags": -7, "named": 12, "odd": 4}
    rows = [{"id": "1", "size": "2", "tags": "5", "named": "2", "odd": "3"},
            {"id": "2", "size": "0", "tags": "0", "named": "1", "odd": None}]
    line = json.dumps(message(mysqlType=mysql_type, sqlType=sql_type, data=rows))
    want = [{"id": 1, "size": "it's big", "tags": "red,blue", "named": "2", "odd": "3"},
            {"id": 2, "size": "", "tags": "", "named": "1", "odd": None}]
    assert [e["after"] for e in decoded(json.loads(line))] == want
    [batch] = registry.create("canal").decode_lines([line.encode()])  # the batch decoder's path
    assert [json.loads(row.after) for row in batch] == want


def test_binary_arrives_as_latin1_text_becomes_base64_and_the_encoder_writes_it_back():
    raw = bytes(range(256))
    events = read_clean([json.dumps(message(mysqlType={"id": "bigint(20)", "blob": "longblob"},
                                            data=[{"id": "1", "blob": raw.decode("latin-1")}]))], dialect="canal")
    assert json.loads(events.loc[0, "after"])["blob"] == __import__("base64").b64encode(raw).decode()
    [record] = registry.create("canal").encode(events)
    assert record.value["data"] == [{"id": "1", "blob": raw.decode("latin-1")}]
    assert (record.value["mysqlType"]["blob"], record.value["sqlType"]["blob"]) == ("blob", 2004)


def test_es_is_event_time_and_ts_emit_time_in_milliseconds():
    [got] = decoded(message(es=1714558600007, ts=1714558601250))
    assert (got["event_time"], got["emit_time"]) == ("2024-05-01T10:16:40.007000Z", "2024-05-01T10:16:41.250000Z")


def test_seq_is_es_id_row_padded_so_text_order_is_numeric_order():
    got = decoded(message(es=9, id=10, data=[{"id": "1"}, {"id": "2"}]), message(es=10, id=2),
                  message(es=10, id=11, data=[{"id": str(n)} for n in range(11)]))
    seqs = [r["seq"] for r in got]
    assert seqs[:3] == [seq(9, 10, 0), seq(9, 10, 1), seq(10, 2, 0)]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
    # without Canal's batch id (OceanBase) only es and the row index remain
    no_id = message(es=10)
    del no_id["id"]
    assert decoded(no_id)[0]["seq"] == "00000000000000000010::00000000000000000000"


def test_ddl_is_one_ddl_event_with_its_statement():
    ddl = message(data=None, isDdl=True, type="TRUNCATE", sql="TRUNCATE TABLE `t`", pkNames=None, mysqlType=None,
                  sqlType=None)
    [got] = decoded(ddl)
    assert got == row(0, "ddl", "TRUNCATE", database="shop", table="t", event_time="2024-05-01T10:16:40Z",
                      emit_time="2024-05-01T10:16:40.100000Z", seq=seq(1714558600000, 1, 0),
                      ddl="TRUNCATE TABLE `t`")
    # a DDL type is a DDL even where isDdl is missing
    assert decoded(dict(ddl, isDdl=False, type="RENAME", sql="RENAME TABLE t TO u"))[0]["op"] == "ddl"


def test_gtid_is_the_transaction_id():
    assert decoded(message(gtid=GTID + "77"))[0]["txn_id"] == GTID + "77"
    assert decoded(message())[0]["txn_id"] is None


def test_dml_with_null_or_empty_data_is_skipped_with_a_reason():
    events = read_clean(cdckit.samples.path("canal/examples_empty_data.jsonl"))
    assert events["offset"].tolist() == [2]
    assert json.loads(events.loc[0, "after"])["name"] == "Saucer"
    report = events.attrs["report"]
    assert (report["messages"], report["decoded"], report["events"], report["quarantined"]) == (3, 3, 1, 0)
    assert report["skipped"] == {"canal DELETE message with no rows in data": 1,
                                 "canal UPDATE message with no rows in data": 1}


def test_encoder_groups_rows_of_one_message_and_synthesizes_ids_for_foreign_events():
    records = list(registry.create("canal").encode(read_clean(cdckit.samples.path("canal"))))
    assert [len(r.value["data"] or []) for r in records] == [1, 0, 3, 1, 2, 1, 0, 1, 0]
    assert records[3].value["old"] == [{"id": "4294967295", "price": None}]
    shop = list(registry.create("canal").encode(cdckit.samples.shop.shop_events()))
    assert [r.value["id"] for r in shop[:3]] == [1, 2, 3] and len(shop) == 320


# ---------------------------------------------------------------- data and type only (leniency)

NO_ES_NO_ID = "::" + "0" * 20  # seq: no es, no batch id, row 0
BARE = [  # a Canal message reduced to data and type: no database, table, type maps, pkNames, es, ts, isDdl
    {"data": [{"id": "1", "name": "Kettle", "price": "24.90"}], "type": "INSERT"},
    {"data": [{"id": "1", "name": "Kettle", "price": "19.90"}], "old": [{"price": "24.90"}], "type": "UPDATE"},
    {"data": [{"id": "1", "name": "Kettle", "price": "19.90"}], "type": "DELETE"},
]


def test_data_and_type_only_messages_decode_when_canal_is_named():
    # no type maps: values stay the strings they are; no table, no key, no times
    events = read_clean([json.dumps(m) for m in BARE], dialect="canal")
    assert_rows(events, [
        row(0, "insert", "INSERT", seq=NO_ES_NO_ID, after={"id": "1", "name": "Kettle", "price": "24.90"}),
        row(1, "update", "UPDATE", seq=NO_ES_NO_ID, before={"id": "1", "name": "Kettle", "price": "24.90"},
            after={"id": "1", "name": "Kettle", "price": "19.90"}),
        row(2, "delete", "DELETE", seq=NO_ES_NO_ID, before={"id": "1", "name": "Kettle", "price": "19.90"}),
    ])


def test_data_and_type_only_is_proposed_as_canal_with_a_low_confidence_naming_what_is_missing(tmp_path):
    canal = registry.create("canal")
    missing = "no database, table, pkNames, isDdl, es, ts, mysqlType, sqlType"
    assert canal.detect(BARE[0]) == cdckit.dialects.Match(0.4, ("data is a list", "type=INSERT", missing))
    assert canal.detect(BARE[1]) == cdckit.dialects.Match(0.4, ("data is a list", "type=UPDATE", missing))
    detection = cdckit.detect([json.dumps(m) for m in BARE])
    assert (detection.dialect, detection.confidence, detection.low_confidence) == ("canal", 0.4, True)
    assert detection.evidence == ("data is a list", missing, "type=DELETE", "type=INSERT", "type=UPDATE")
    # a read without dialect= takes the verdict, warns that it is a guess and says so in the report
    path = tmp_path / "bare.jsonl"
    path.write_text("".join(json.dumps(m) + "\n" for m in BARE))
    with pytest.warns(UserWarning, match="low-confidence verdict"):
        events = cdckit.read(path)
    assert events["dialect"].tolist() == ["canal"] * 3 and events["op"].tolist() == ["insert", "update", "delete"]
    assert events.attrs["report"]["detection"][str(path)]["low_confidence"] is True
    assert cdckit.quarantine(events).empty


def test_data_and_type_only_claims_nothing_else():
    canal = registry.create("canal")
    for value in (
        {"data": [{"id": "1"}], "type": "UPSERT"},  # not a Canal DML type
        {"data": [{"id": "1"}], "type": "insert"},  # Maxwell's lower case
        {"data": [], "type": "INSERT"},  # no row to show it
        {"data": ["1"], "type": "INSERT"},  # rows must be objects
        {"data": [{"id": "1"}], "type": "INSERT", "meta": {"op": "ins"}},  # a field Canal never writes
        {"data": [{"id": "1"}], "type": "ALTER"},  # a DDL without sql or isDdl
        # DataHub Tuple / flattened rows carry no type
        {"id": 1, "data": "[1]", "_operation_type_": "I", "_sequence_id_": 5, "_source_table_": "shop.t"},
        {"data": [{"id": "1"}], "__op": "c", "__table": "t"},
    ):
        assert canal.detect(value) is None, value


# ---------------------------------------------------------------- TiCDC canal-json

TICDC_ST = {"c_int": 4, "c_enum": 4, "c_set": -7, "c_dec": 3, "c_text": 2005, "id": 4}
TICDC_MT = {"c_int": "int", "c_enum": "enum", "c_set": "set", "c_dec": "decimal", "c_text": "text", "id": "int"}
TICDC_ROW = {"c_int": "7", "c_enum": "a", "c_set": "a,b", "c_dec": "123.4560", "c_text": "x", "id": "2"}
TICDC_AFTER = {"c_int": 7, "c_enum": "a", "c_set": "a,b", "c_dec": 123.456, "c_text": "x", "id": 2}


def ticdc(**fields) -> dict:
    """A TiCDC canal-json DML message (id 0, mysqlType without parameters, enable-tidb-extension=true)."""
    base = {"id": 0, "database": "test", "table": "t", "pkNames": ["id"], "isDdl": False, "type": "INSERT",
            "es": 1639633141221, "ts": 1639633142960, "sql": "", "sqlType": TICDC_ST, "mysqlType": TICDC_MT,
            "data": [TICDC_ROW], "old": None, "_tidb": {"commitTs": 429918007904436226}}
    base.update(fields)
    return base


def tidb_row(offset, op, op_raw, commit_ts, **fields):
    return row(offset, op, op_raw, database="test", table="t", event_time="2021-12-16T05:39:01.221000Z",
               emit_time="2021-12-16T05:39:02.960000Z", seq=f"{commit_ts:020d}", txn_id=str(commit_ts),
               key_columns=["id"], key=[2], **fields)


TICDC_MESSAGES = [
    ticdc(),
    # TiCDC's old holds every column by default (Canal's only the changed ones)
    ticdc(type="UPDATE", data=[dict(TICDC_ROW, c_int="8")], old=[TICDC_ROW],
          _tidb={"commitTs": 429918007904436227}),
    # content-compatible=true: old holds only the changed columns, as Canal's
    ticdc(type="UPDATE", data=[dict(TICDC_ROW, c_int="9")], old=[{"c_int": "8"}],
          _tidb={"commitTs": 429918007904436228}),
    # before v5.4 a DELETE's old repeats data: it is ignored
    ticdc(type="DELETE", data=[dict(TICDC_ROW, c_int="9")], old=[dict(TICDC_ROW, c_int="9")],
          _tidb={"commitTs": 429918011000000000}),
]


def test_ticdc_dml_takes_the_commit_ts_as_seq_and_txn_id_and_its_type_quirks():
    # sqlType says INTEGER for ENUM and BIT for SET: mysqlType (preferred) keeps them text
    assert_rows(read_clean([json.dumps(m) for m in TICDC_MESSAGES], dialect="canal"), [
        tidb_row(0, "insert", "INSERT", 429918007904436226, after=TICDC_AFTER),
        tidb_row(1, "update", "UPDATE", 429918007904436227, before=TICDC_AFTER, after=dict(TICDC_AFTER, c_int=8)),
        tidb_row(2, "update", "UPDATE", 429918007904436228, before=dict(TICDC_AFTER, c_int=8),
                 after=dict(TICDC_AFTER, c_int=9)),
        tidb_row(3, "delete", "DELETE", 429918011000000000, before=dict(TICDC_AFTER, c_int=9)),
    ])


def test_ticdc_ddl_and_watermark():
    ddl = {"id": 0, "database": "test", "table": "", "pkNames": None, "isDdl": True, "type": "QUERY",
           "es": 1639633094670, "ts": 1639633095489, "sql": "drop database if exists test", "sqlType": None,
           "mysqlType": None, "data": None, "old": None, "_tidb": {"commitTs": 429918007904436226}}
    watermark = {"id": 0, "database": "", "table": "", "pkNames": None, "isDdl": False, "type": "TIDB_WATERMARK",
                 "es": 1640007049196, "ts": 1640007050284, "sql": "", "sqlType": None, "mysqlType": None,
                 "data": None, "old": None, "_tidb": {"watermarkTs": 429918007904436226}}
    assert decoded(ddl, watermark) == [
        row(0, "ddl", "QUERY", database="test", event_time="2021-12-16T05:38:14.670000Z",
            emit_time="2021-12-16T05:38:15.489000Z", seq="00429918007904436226", txn_id="429918007904436226",
            ddl="drop database if exists test"),
        row(1, "heartbeat", "TIDB_WATERMARK", event_time="2021-12-20T13:30:49.196000Z",
            emit_time="2021-12-20T13:30:50.284000Z", seq="00429918007904436226"),
    ]
    assert registry.create("canal").detect(watermark).score == 0.95
    # without enable-tidb-extension: no _tidb, id 0, so seq is es:0:row as for Canal
    plain = ticdc()
    del plain["_tidb"]
    assert decoded(plain)[0]["seq"] == seq(1639633141221, 0, 0) and decoded(plain)[0]["txn_id"] is None


def test_ticdc_examples_decode_exactly():
    tp_int = {"c_bigint": 9223372036854775807, "c_int": 2147483647, "c_mediumint": 8388607, "c_smallint": 32767,
              "c_tinyint": 127, "id": 2}
    updated = dict(tp_int, c_int=0, c_tinyint=0)

    def tp(offset, op, op_raw, time, emit, commit_ts, **fields):
        return row(offset, op, op_raw, database="test", table="tp_int", event_time=time, emit_time=emit,
                   seq=commit_ts.zfill(20), txn_id=commit_ts, key_columns=["id"], key=[2], **fields)

    events = read_clean(cdckit.samples.path("canal/examples_ticdc.jsonl"))
    assert set(events["dialect"]) == {"canal"}
    assert_rows(events, [
        row(0, "ddl", "QUERY", database="test", event_time="2021-12-16T05:38:14.670000Z",
            emit_time="2021-12-16T05:38:15.489000Z", seq="00429918007904436226", txn_id="429918007904436226",
            ddl="drop database if exists test"),
        tp(1, "insert", "INSERT", "2021-12-16T05:39:01.221000Z", "2021-12-16T05:39:02.960000Z",
           "429918007904436226", after=tp_int),
        row(2, "heartbeat", "TIDB_WATERMARK", event_time="2021-12-20T13:30:49.196000Z",
            emit_time="2021-12-20T13:30:50.284000Z", seq="00429918007904436226"),
        tp(3, "update", "UPDATE", "2021-12-20T13:31:49.196000Z", "2021-12-20T13:31:50.284000Z",
           "429918023633076225", before=tp_int, after=updated),
        tp(4, "delete", "DELETE", "2021-12-20T13:32:49.196000Z", "2021-12-20T13:32:50.284000Z",
           "429918039361716227", before=updated),
    ])
    assert cdckit.detect(cdckit.samples.path("canal/examples_ticdc.jsonl")).dialect == "canal"


def test_batch_decoder_gives_what_decode_gives_for_bare_and_ticdc_messages():
    canal = registry.create("canal")
    values = BARE + TICDC_MESSAGES + [ticdc(_tidb={"commitTs": 1, "onlyHandleKey": False, "claimCheckLocation": ""}),
                                      ticdc(_tidb={}), ticdc(_tidb=None), ticdc(_tidb={"commitTs": 0}),
                                      ticdc(_tidb={"commitTs": 18446744073709551615})]
    lines = [json.dumps(v).encode() for v in values]
    results = canal.decode_lines(lines)
    assert all(result is not None for result in results)  # all of these take the fast path
    for line, result in zip(lines, results):
        expected = [event_row(e) for e in canal.decode(Message(cdckit.values.loads(line), "<test>", 0))]
        assert ([result] if isinstance(result, tuple) else result) == expected, line
    assert results[-1][7] == "18446744073709551615" and results[-2][7] == "0" * 20
    # large messages and watermarks go to decode(), which quarantines or makes a heartbeat of them
    others = [ticdc(_tidb={"commitTs": 1, "onlyHandleKey": True}), ticdc(_tidb={"claimCheckLocation": "x"}),
              ticdc(type="TIDB_WATERMARK", data=None, _tidb={"watermarkTs": 1})]
    assert canal.decode_lines([json.dumps(v).encode() for v in others]) == [None, None, None]


#: Messages at the edges of the batch decoder's shortcuts (the usual DML message made into rows in its loop):
#: seq's id text remembered while a batch's messages share their id, the inline first case of to_int, typing
#: plans remembered by the raw type texts, and what goes to dml_rows (_tidb, es or id absent or negative).
SHORTCUT_EDGES = [
    message(id=5), message(id=5, es=0), message(id=None), message(id=0), message(id=5), message(id=6),
    message(id=None, es=9223372036854), message(id=18446744073709551615),
    message(id=-1), message(es=-1), message(es=None), message(id=None, es=None), message(ts=None), message(ts=-5),
    message(_tidb={"commitTs": 9}), message(_tidb={"commitTs": 9}, gtid=""), message(gtid=""), message(gtid="g:1"),
    # to_int's inline case and its neighbours: leading zeros, 18 and 19 digits, signs, non-ASCII digits, empty
    *[message(data=[{"id": text}]) for text in ("007", "0", "9" * 18, "9" * 19, "-5", "+5", " 5", "\u0663", "",
                                                "1.0", "1e3")],
    # the same table with other type texts (spacing, order, sqlType only, none): each its own plan
    message(data=[{"id": "1", "p": "2.50"}], mysqlType={"id": "bigint(20)", "p": "decimal(10,2)"}),
    message(data=[{"id": "1", "p": "2.50"}], mysqlType={"p": "decimal(10,2)", "id": "bigint(20)"}),
    message(data=[{"id": "1", "p": "2.50"}], mysqlType={"id": "varchar(9)", "p": "varchar(9)"}),
    message(data=[{"id": "1", "p": "2.50"}], mysqlType=None, sqlType={"id": "4", "p": 8}),
    message(data=[{"id": "1", "p": "2.50"}], mysqlType=None, sqlType=None),
    message(data=[{"id": "1", "p": "2.50"}], mysqlType={"id": "bigint(20)", "p": "decimal(10,2)"}),
    # rows: several, nulls, a missing or empty key, updates with short or null old, deletes
    message(data=[{"id": "1", "v": None}, {"id": "2", "v": "b"}, {"v": "c"}]),
    message(pkNames=[]), message(pkNames=None), message(pkNames=["id", "v"]),
    message(type="UPDATE", data=[{"id": "1", "v": "a"}, {"id": "2", "v": "b"}], old=[{"v": "z"}]),
    message(type="UPDATE", data=[{"id": "1", "v": "a"}, {"id": "2", "v": "b"}], old=[None, {"id": "7"}]),
    message(type="UPDATE", data=[{"id": "1"}], old=None), message(type="UPDATE", data=[{"id": "1"}], old=[{}]),
    message(type="DELETE", data=[{"id": "1", "v": "a"}], old=[{"v": "z"}]),
    message(type="INSERT", isDdl=True), message(type="DELETE", sql=7),
]


def test_batch_decoder_shortcuts_give_what_decode_gives():
    canal = registry.create("canal")
    lines = [json.dumps(v).encode() for v in SHORTCUT_EDGES]
    results = canal.decode_lines(lines)
    for line, result in zip(lines, results):
        assert result is not None, line  # every one is a DML message with rows
        expected = [event_row(e) for e in registry.create("canal").decode(Message(cdckit.values.loads(line),
                                                                                     "<test>", 0))]
        assert ([result] if isinstance(result, tuple) else result) == expected, line
    assert results[2][7] == seq(1714558600000, None, 0) and results[4][7] == seq(1714558600000, 5, 0)


def test_batch_decoder_declares_what_decode_declares(tmp_path, monkeypatch):
    """Types changing back and forth, and messages handed back to decode() between them: one declared before
    a large message (which declares nothing), one in bad JSON, one with a value of another kind."""
    path = tmp_path / "canal.jsonl"
    edges = [json.dumps(v) for v in SHORTCUT_EDGES]
    handed_back = [json.dumps(message(_tidb={"commitTs": 1, "onlyHandleKey": True},
                                      mysqlType={"id": "int(1)"})),
                   '{"type": "INSERT", "data": [', json.dumps(message(data=[{"id": 1}], mysqlType={"id": "int"}))]
    path.write_text("\n".join(edges[:20] + handed_back + edges[20:] + handed_back[::-1] + edges[:5]) + "\n")
    fast = cdckit.read(path, dialect="canal")
    monkeypatch.setattr(registry.get("canal"), "has_line_decoder", False)
    slow = cdckit.read(path, dialect="canal")
    assert fast.equals(slow) and fast.attrs["report"] == slow.attrs["report"]
    assert cdckit.column_types_of(fast).equals(cdckit.column_types_of(slow))
    assert cdckit.quarantine(fast).drop(columns="raw").equals(cdckit.quarantine(slow).drop(columns="raw"))
    assert len(cdckit.quarantine(fast)) == 4 and len(cdckit.column_types_of(fast)) > 10  # two large, two broken


# ---------------------------------------------------------------- bad input


BAD = [
    ('{"data": [{"id": "2"}], "type": "INS', "truncated JSON"),
    ('{"database": "shop", "table": "t", "type": "insert", "ts": 1, "data": {"id": 1}}',
     "unknown type 'insert' (it looks like a maxwell message)"),
    ('{"data": [{"id": "1"}], "database": "shop", "table": "t", "es": 1}', "missing required field type"),
    ('{"data": {"id": "1"}, "type": "INSERT", "es": 1}', "expected data as a JSON array, got object"),
    ('{"data": [{"id": "1"}], "type": "UPSERT", "es": 1}', "unknown type 'UPSERT'"),
    ('{"data": [{"id": "1"}], "type": ["INSERT"], "es": 1}', "unknown type ['INSERT']"),
    ('{"data": [{"id": "1"}, "2"], "type": "INSERT", "es": 1}', "expected data[1] as a JSON object, got text"),
    ('{"data": [{"id": "1"}], "old": {"id": "0"}, "type": "UPDATE", "es": 1}',
     "expected old as a JSON array, got object"),
    ('{"data": [{"id": "1"}], "type": "INSERT", "_tidb": "429918007904436226"}',
     "expected _tidb as a JSON object, got text"),
    ('{"data": [{"id": "1"}], "type": "INSERT", "_tidb": {"commitTs": -1}}',
     "_tidb.commitTs is not a TiDB timestamp (a non-negative integer): -1"),
    ('{"data": null, "type": "TIDB_WATERMARK", "_tidb": {"watermarkTs": 1.5}}',
     "_tidb.watermarkTs is not a TiDB timestamp (a non-negative integer): 1.5"),
    # TiCDC's large messages: data is not the whole row, so no row is made of it
    ('{"data": [{"id": "2"}], "type": "INSERT", "pkNames": ["id"], "_tidb": {"commitTs": 7, "onlyHandleKey": true}}',
     "TiCDC large message: only the handle key columns were sent (_tidb.onlyHandleKey); the row must be read "
     "from TiDB as of commitTs 7"),
    ('{"data": [{"id": "2"}], "type": "UPDATE", "_tidb": {"commitTs": 7, "claimCheckLocation": "s3://b/k.json"}}',
     "TiCDC large message: the row was stored at 's3://b/k.json' (_tidb.claimCheckLocation)"),
]


def test_bad_messages_are_quarantined_with_source_offset_reason_and_raw(tmp_path):
    assert_quarantined("canal", json.dumps(message()), BAD, tmp_path)


def test_errors_raise_names_source_offset_reason_and_keeps_what_was_decoded(tmp_path):
    path = tmp_path / "capture.jsonl"
    path.write_text("\n".join([json.dumps(message()), json.dumps(message(data=[{"id": "2"}, {"id": "3"}])),
                               '{"data": [{"id": "1"}], "type": "UPSERT"}']) + "\n")
    with pytest.raises(cdckit.DecodeError) as caught:
        cdckit.read(path, dialect="canal", errors="raise")
    err = caught.value
    assert (err.source, err.offset, err.reason) == (str(path), 2, "unknown type 'UPSERT'")
    assert str(err) == f"{path}, message 2: unknown type 'UPSERT'"
    assert err.partial["key"].tolist() == ["[1]", "[2]", "[3]"]
