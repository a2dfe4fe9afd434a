"""Debezium: the public examples decoded exactly, round trips, shop, bad input."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest
from validator import assert_round_trip, assert_rows, assert_shop, read_clean, row

import cdckit
from cdckit.dialects import registry
from cdckit.frame import EVENT_FIELDS
from cdckit.io.message import Message

SRC = "mysql-bin.000003"
TXN = "file=mysql-bin.000003,pos=154"
ANNE = {"id": 1004, "first_name": "Anne", "last_name": "Kretchmar", "email": "annek@noanswer.org", "balance": 1004.5}
ANNE_MARIE = dict(ANNE, first_name="Anne Marie")


def pos(n: int) -> str:
    return f"{SRC}:{n:020d}:{0:020d}"


def test_examples_decode_exactly():
    events = read_clean(cdckit.samples.path("debezium/examples.json"))
    assert_rows(events, [
        row(0, "begin", "BEGIN", event_time="2017-02-07T20:49:37.125000Z", txn_id=TXN),
        row(1, "insert", "c", database="inventory", table="customers", event_time="2017-02-07T20:49:37Z",
            emit_time="2017-02-07T20:49:37.691000Z", seq=pos(154), txn_id=TXN, after=ANNE),
        row(2, "update", "u", database="inventory", table="customers", event_time="2017-02-07T20:49:37Z",
            emit_time="2017-02-07T20:49:37.742000Z", seq=pos(484), txn_id=TXN, before=ANNE, after=ANNE_MARIE),
        row(3, "commit", "END", event_time="2017-02-07T20:49:37.800000Z", txn_id=TXN,  # what END declares
            after={"event_count": 2, "data_collections": {"inventory.customers": 2}}),
        row(4, "delete", "d", database="inventory", table="customers", event_time="2017-02-07T20:49:38Z",
            emit_time="2017-02-07T20:49:38Z", seq=pos(805), before=ANNE_MARIE),
        row(5, "tombstone", "null"),
        # PostgreSQL names the table schema.table (source.db is the database the connector reads)
        row(6, "insert", "c", database="bar", schema="bar", table="events", event_time="2020-09-27T13:37:24.074000Z",
            emit_time="2020-09-27T13:37:24.598000Z", seq="00000000000028581784", txn_id="644",
            after={"id": 1, "created_at": "2020-09-27T13:37:24.058468Z", "column_a": "a", "column_b": "b"}),
        row(7, "ddl", "ALTER", database="inventory", table="customers", event_time="2017-02-07T20:49:39Z",
            seq=pos(1010), key_columns=["id"],
            after={"defaultCharsetName": "utf8mb4", "primaryKeyColumnNames": ["id"], "columns": []},
            ddl="ALTER TABLE customers ADD COLUMN middle_name VARCHAR(255)"),
    ])


def test_kafka_records_give_keys_partition_and_offset():
    events = read_clean(cdckit.samples.path("debezium/examples_kcat.jsonl"))
    assert_rows(events, [
        row(40, "insert", "c", database="inventory", table="customers", event_time="2017-02-07T20:49:37Z",
            emit_time="2017-02-07T20:49:37.691000Z", seq=pos(154), txn_id=TXN, key_columns=["id"], key=[1004],
            after=ANNE),
        row(41, "update", "u", database="inventory", table="customers", event_time="2017-02-07T20:49:37Z",
            emit_time="2017-02-07T20:49:37.742000Z", seq=pos(484), txn_id=TXN, key_columns=["id"], key=[1004],
            before=ANNE, after=ANNE_MARIE),
        row(42, "delete", "d", database="inventory", table="customers", event_time="2017-02-07T20:49:38Z",
            emit_time="2017-02-07T20:49:38Z", seq=pos(805), key_columns=["id"], key=[1004], before=ANNE_MARIE),
        row(43, "tombstone", "null", database="inventory", table="customers", key_columns=["id"], key=[1004]),
    ])
    assert events["partition"].tolist() == [0, 0, 0, 0]


def test_unwrapped_and_wrapped_are_the_same_event():
    wrapped = json.loads(cdckit.samples.raw("debezium/examples_kcat.jsonl").splitlines()[0])["payload"]
    payload = json.loads(wrapped)["payload"]
    a = read_clean(wrapped, dialect="debezium")
    b = read_clean(json.dumps(payload), dialect="debezium")
    # without the schema the Decimal stays Base64 text: the schema is what makes it a number
    assert json.loads(a.loc[0, "after"])["balance"] == 1004.5
    assert json.loads(b.loc[0, "after"])["balance"] == payload["after"]["balance"]
    assert a.drop(columns=["after"]).equals(b.drop(columns=["after"]))


def test_decimal_that_a_double_cannot_hold_stays_exact_text():
    field = {"type": "bytes", "name": "org.apache.kafka.connect.data.Decimal", "parameters": {"scale": "4"},
             "field": "amount"}
    unscaled = 12345678901234567890123
    b64 = __import__("base64").b64encode(unscaled.to_bytes(10, "big", signed=True)).decode()
    schema = {"type": "struct", "fields": [{"type": "struct", "field": "after", "fields": [field]}]}
    msg = {"schema": schema, "payload": {"op": "c", "after": {"amount": b64}, "source": {"connector": "mysql"}}}
    events = read_clean([msg], dialect="debezium")
    assert json.loads(events.loc[0, "after"]) == {"amount": "1234567890123456789.0123"}


def test_round_trip_kcat(tmp_path):
    assert_round_trip("debezium", read_clean(cdckit.samples.path("debezium/examples_kcat.jsonl")), tmp_path)


def test_shop():
    assert_shop("debezium")


def test_detects_its_samples_and_tells_family_apart():
    detection = cdckit.detect(cdckit.samples.path("debezium"))
    assert detection.dialect == "debezium"
    assert "source.connector=mysql" in detection.evidence
    assert detection.runner_up in ("arcion", "lindorm")


def test_bad_messages_are_quarantined_with_reason():
    good = '{"op": "c", "after": {"id": 1}, "source": {"connector": "mysql", "table": "t"}}'
    text = "\n".join([good, '{"op": "c", "after": {"id": 2', '{"op": "q", "after": {}}', '{"op": "d", "before": null}',
                      '{"database": "d", "table": "t", "type": "insert", "ts": 1, "data": {"id": 1}}', good])
    events = cdckit.read(text, dialect="debezium")
    assert events["offset"].tolist() == [0, 5]
    quarantine = cdckit.quarantine(events)
    assert quarantine["offset"].tolist() == [1, 2, 3, 4]
    reasons = quarantine["reason"].tolist()
    assert reasons[0].startswith("truncated JSON")
    assert "unknown op 'q'" in reasons[1]
    assert "without a before image" in reasons[2]
    assert "missing required field op" in reasons[3] and "looks like a maxwell message" in reasons[3]
    assert quarantine["raw"].tolist()[0] == '{"op": "c", "after": {"id": 2'
    report = events.attrs["report"]
    assert (report["messages"], report["decoded"], report["quarantined"]) == (6, 2, 4)


def test_errors_raise_names_source_offset_reason_and_keeps_what_was_decoded(tmp_path):
    path = tmp_path / "capture.jsonl"
    good = '{"op": "c", "after": {"id": 1}, "source": {"connector": "mysql", "table": "t"}}'
    path.write_text(good + "\n" + good + "\n" + '{"op": "c", "after": {"id": 2' + "\n")
    with pytest.raises(cdckit.DecodeError) as caught:
        cdckit.read(path, dialect="debezium", errors="raise")
    err = caught.value
    assert (err.source, err.offset) == (str(path), 2)
    assert str(err).startswith(f"{path}, message 2: truncated JSON")
    assert len(err.partial) == 2


def test_round_trip_keeps_a_column_whose_values_change_type(tmp_path):
    # the schema of each written message types its columns from that message, so text "7" stays text
    source = {"connector": "mysql", "table": "t", "file": "mysql-bin.000001", "row": 0}
    msgs = [{"op": "c", "after": {"id": 1, "code": 7}, "source": dict(source, pos=10)},
            {"op": "c", "after": {"id": 2, "code": "7"}, "source": dict(source, pos=20)}]
    events = read_clean(msgs, dialect="debezium")
    again = assert_round_trip("debezium", events, tmp_path)
    assert [json.loads(a)["code"] for a in again["after"]] == [7, "7"]


# ---------------------------------------------------------------- truncates, logical messages, schema changes

PG_SOURCE = {"version": "2.7.0.Final", "connector": "postgresql", "name": "PostgreSQL_server",
             "ts_ms": 1559033904863, "snapshot": False, "db": "postgres", "sequence": "[\"24023119\",\"24023128\"]",
             "schema": "public", "table": "customers", "txId": 555, "lsn": 24023128, "xmin": None}


def test_interleaved_transactions_sort_in_the_order_the_connector_sent_them():
    # transaction 601 wrote first (LSN 100) but committed after 602 (LSN 200, commit at 250): the PostgreSQL
    # connector sends 602 first; its source.sequence (last commit LSN, change LSN) sorts that way, LSNs alone do not
    def change(txn, lsn, last_commit, key):
        source = dict(PG_SOURCE, txId=txn, lsn=lsn, sequence=json.dumps([last_commit, str(lsn)]))
        return json.dumps({"op": "c", "after": {"id": key}, "source": source, "ts_ms": 1})

    lines = [change(600, 50, None, 1), change(602, 200, "60", 2), change(601, 100, "250", 3),
             change(601, 300, "250", 4)]
    events = read_clean(lines, dialect="debezium")
    assert events["seq"].is_monotonic_increasing and events["seq"].is_unique
    assert int(cdckit.order_report(events).summary().set_index("finding").loc["inversions", "rows"]) == 0
    assert list(cdckit.sort_events(events)["txn_id"]) == ["600", "602", "601", "601"]
    # Oracle's connector sends changes in commit order too: commit_scn, then the change's scn
    oracle = [json.dumps({"op": "c", "after": {"id": key}, "ts_ms": 1, "source": {
        "connector": "oracle", "db": "ORCLPDB1", "schema": "INV", "table": "T", "scn": scn, "commit_scn": commit}})
        for key, scn, commit in ((1, "900", "950"), (2, "800", "1000"))]
    assert read_clean(oracle, dialect="debezium")["seq"].is_monotonic_increasing


def test_truncate_and_logical_message_events_of_the_postgresql_docs():
    # the PostgreSQL connector's documented truncate event (no images) and logical decoding message
    truncate = {"source": PG_SOURCE, "op": "t", "ts_ms": 1559033904961}
    message = {"op": "m", "ts_ms": 1559033904961, "message": {"prefix": "foo", "content": "Ymfy"},
               "source": dict(PG_SOURCE, schema="", table="", txId=556, lsn=46523128)}
    events = read_clean([json.dumps(truncate), json.dumps({"schema": {}, "payload": message})], dialect="debezium")
    assert_rows(events, [
        row(0, "truncate", "t", database="public", schema="public", table="customers",
            event_time="2019-05-28T08:58:24.863Z", emit_time="2019-05-28T08:58:24.961Z",
            seq="00000000000024023119:00000000000024023128", txn_id="555"),
        row(1, "other", "m", database="postgres", event_time="2019-05-28T08:58:24.863Z",
            emit_time="2019-05-28T08:58:24.961Z", seq="00000000000024023119:00000000000046523128", txn_id="556",
            after={"prefix": "foo", "content": "Ymfy"}),
    ])
    assert cdckit.detect([json.dumps(truncate)]).dialect == "debezium"


def test_a_truncate_round_trips_and_empties_its_table_in_replay(tmp_path):
    insert = {"op": "c", "after": {"id": 1}, "source": dict(PG_SOURCE, lsn=1)}
    later = {"op": "c", "after": {"id": 2}, "source": dict(PG_SOURCE, lsn=3)}
    truncate = {"source": dict(PG_SOURCE, lsn=2), "op": "t", "ts_ms": 1559033904961}
    events = read_clean([json.dumps(m) for m in (insert, truncate, later)], dialect="debezium")
    assert list(events["op"]) == ["insert", "truncate", "insert"]
    assert_round_trip("debezium", events, tmp_path)
    state = cdckit.materialize(events.assign(key_columns=[["id"]] * 3, key=["[1]", None, "[2]"]))
    assert state["public.customers"].to_dict("records") == [{"id": 2}]


MYSQL_SCHEMA_CHANGE = {
    "source": {"version": "2.7.0.Final", "connector": "mysql", "name": "mysql", "ts_ms": 0, "snapshot": "false",
               "db": "inventory", "table": "customers", "server_id": 0, "gtid": None, "file": "mysql-bin.000003",
               "pos": 219, "row": 0, "thread": None, "query": None},
    "ts_ms": 1588252618953, "databaseName": "inventory", "schemaName": None,
    "ddl": "ALTER TABLE customers ADD COLUMN middle_name VARCHAR(2000)",
    "tableChanges": [{"type": "ALTER", "id": "\"inventory\".\"customers\"", "table": {
        "defaultCharsetName": "utf8mb4", "primaryKeyColumnNames": ["id"], "columns": [
            {"name": "id", "jdbcType": 4, "typeName": "INT", "typeExpression": "INT", "position": 1,
             "optional": False, "autoIncremented": True, "generated": True},
            {"name": "middle_name", "jdbcType": 12, "typeName": "VARCHAR", "typeExpression": "VARCHAR",
             "charsetName": "utf8mb4", "length": 2000, "position": 2, "optional": True}]}}],
}
CUSTOMERS_TABLE = MYSQL_SCHEMA_CHANGE["tableChanges"][0]["table"]


def test_schema_change_records_give_the_statement_the_table_and_its_new_columns():
    events = read_clean([json.dumps(MYSQL_SCHEMA_CHANGE)], dialect="debezium")
    assert_rows(events, [
        row(0, "ddl", "ALTER", database="inventory", table="customers", event_time="2020-04-30T13:16:58.953Z",
            seq=pos(219), key_columns=["id"], after=CUSTOMERS_TABLE,
            ddl="ALTER TABLE customers ADD COLUMN middle_name VARCHAR(2000)"),
    ])
    # a statement that changes two tables (PostgreSQL-style three-part ids): one event per table
    two = dict(MYSQL_SCHEMA_CHANGE, databaseName="shop", ddl="DROP TABLE a, b", tableChanges=[
        {"type": "DROP", "id": "\"shop\".\"public\".\"a\"", "table": None},
        {"type": "DROP", "id": "shop.public.b", "table": None}])
    events = read_clean([json.dumps(two)], dialect="debezium")
    assert [(e.op_raw, e.database, e.schema, e.table, e.ddl) for e in events.itertuples()] == [
        ("DROP", "shop", "public", "a", "DROP TABLE a, b"), ("DROP", "shop", "public", "b", "DROP TABLE a, b")]


def test_flink_cdc_schema_change_records_carry_the_history_record_as_text():
    history = {"source": {"file": "mysql-bin.000003", "pos": 219, "server_id": 223344},
               "position": {"transaction_id": None, "ts_sec": 1588252618, "file": "mysql-bin.000003", "pos": 219,
                            "server_id": 223344},
               "databaseName": "inventory", "ddl": MYSQL_SCHEMA_CHANGE["ddl"],
               "tableChanges": MYSQL_SCHEMA_CHANGE["tableChanges"]}
    record = {"source": {"file": "mysql-bin.000003", "pos": 219, "server_id": 223344},
              "historyRecord": json.dumps(history)}
    detection = cdckit.detect([json.dumps(record)])
    assert detection.dialect == "debezium"
    events = read_clean([json.dumps(record)])
    assert_rows(events, [
        row(0, "ddl", "ALTER", database="inventory", table="customers", seq=pos(219), key_columns=["id"],
            after=CUSTOMERS_TABLE, ddl="ALTER TABLE customers ADD COLUMN middle_name VARCHAR(2000)"),
    ])
    bad = cdckit.read([json.dumps(dict(record, historyRecord="{not json"))], dialect="debezium")
    assert cdckit.quarantine(bad)["reason"].str.startswith("historyRecord is not JSON").all()


def test_schema_change_events_round_trip(tmp_path):
    events = read_clean([json.dumps(MYSQL_SCHEMA_CHANGE)], dialect="debezium")
    assert_round_trip("debezium", events, tmp_path)


def test_avro_json_encoding_unions_are_unwrapped():
    # kafka-avro-console-consumer's output: images as their record branch, nullable fields as {"type": value},
    # bytes as ISO-8859-1 text (kept as Base64, as binary is)
    events = read_clean(cdckit.samples.path("debezium/examples_avro.jsonl"))
    anne = {"id": 1004, "first_name": "Anne", "last_name": "Kretchmar", "email": "annek@noanswer.org",
            "photo": "AP8="}
    marie = dict(anne, first_name="Anne Marie", email=None)
    assert_rows(events, [
        row(0, "insert", "c", database="inventory", table="customers", event_time="2017-02-07T20:49:37Z",
            emit_time="2017-02-07T20:49:37.691Z", seq=pos(484), after=anne),
        row(1, "update", "u", database="inventory", table="customers", event_time="2017-02-07T20:49:38Z",
            emit_time="2017-02-07T20:49:38.691Z", seq=pos(805), txn_id="571:53195829", before=anne, after=marie),
        row(2, "delete", "d", database="inventory", table="customers", event_time="2017-02-07T20:49:39Z",
            seq=pos(1010), before=marie),
    ])
    # an image that merely has one dotted column holding an object is not a union branch
    plain = {"op": "c", "after": {"a.b": {"c": 1}, "id": 2}, "source": {"connector": "mysql", "table": "t"}}
    assert json.loads(read_clean([json.dumps(plain)])["after"].iloc[0]) == {"a.b": {"c": 1}, "id": 2}


def test_avro_json_is_detected_and_decoded_without_naming_the_dialect():
    message = {"before": None, "after": {"db.s.t.Value": {"id": 1, "name": {"string": "x"}}},
               "source": {"connector": "mysql", "ts_ms": {"long": 1000}, "table": {"string": "t"}}, "op": "c",
               "ts_ms": {"long": 5}}
    events = read_clean([json.dumps(message)])
    assert_rows(events, [row(0, "insert", "c", table="t", event_time="1970-01-01T00:00:01Z",
                             emit_time="1970-01-01T00:00:00.005Z", after={"id": 1, "name": "x"})])


def test_avro_json_bytes_nested_in_records_are_base64_as_top_level_bytes_are():
    # a VariableScaleDecimal (optional: a union; NOT NULL: the plain record) and a geometry hold bytes fields
    # that Avro's JSON encoding writes as plain strings of code points; a row's own columns are left alone
    message = {"before": None, "op": "c", "source": {"connector": "postgresql", "table": {"string": "t"}},
               "after": {"db.s.t.Value": {
                   "id": 1, "n": {"io.debezium.data.VariableScaleDecimal": {"scale": 2, "value": "\u0001\u00e2"}},
                   "m": {"scale": 0, "value": "\u00ff"}, "raw": {"bytes": "\u0000\u00ff"},
                   "g": {"io.debezium.data.geometry.Geometry": {"wkb": "\u0001\u0002", "srid": {"int": 4326}}},
                   "list": {"array": [{"bytes": "\u0001"}, None]}}}}
    after = json.loads(read_clean([json.dumps(message)])["after"].iloc[0])
    assert after["n"] == {"scale": 2, "value": "AeI="} and after["m"] == {"scale": 0, "value": "/w=="}
    assert after["raw"] == "AP8=" and after["g"] == {"wkb": "AQI=", "srid": 4326} and after["list"] == ["AQ==", None]
    row_like = dict(message, after={"db.s.t.Value": {"scale": 2, "value": "text"}})
    assert json.loads(read_clean([json.dumps(row_like)])["after"].iloc[0]) == {"scale": 2, "value": "text"}


def _decimal_capture(digits: int, scale: int, mode: str) -> tuple[str, Decimal]:
    """A wrapped Debezium PostgreSQL capture of one numeric value of ``digits`` digits, ``scale`` after the point,
    as ``decimal.handling.mode`` ``mode`` writes it (precise: Connect Decimal bytes, variable:
    VariableScaleDecimal, string: the digits as text), two lines (so the batch decoder reads them too)."""
    import base64
    from decimal import Decimal

    unscaled = -int(("9876543210" * (digits // 10 + 1))[:digits])
    value = Decimal((1, tuple(int(d) for d in str(-unscaled)), -scale))
    raw = base64.b64encode(unscaled.to_bytes((unscaled.bit_length() + 8) // 8, "big", signed=True)).decode()
    if mode == "precise":
        field = {"type": "bytes", "name": "org.apache.kafka.connect.data.Decimal", "optional": True, "field": "amount",
                 "parameters": {"scale": str(scale), "connect.decimal.precision": str(digits)}}
        amount = raw
    elif mode == "variable":
        field = {"type": "struct", "name": "io.debezium.data.VariableScaleDecimal", "optional": True, "field": "amount",
                 "fields": [{"type": "int32", "field": "scale"}, {"type": "bytes", "field": "value"}]}
        amount = {"scale": scale, "value": raw}
    else:
        field = {"type": "string", "optional": True, "field": "amount"}
        amount = format(value, "f")
    image = {"type": "struct", "fields": [{"type": "int32", "field": "id"}, field]}
    schema = {"type": "struct", "fields": [dict(image, field="before", optional=True),
                                           dict(image, field="after", optional=True)]}
    lines = [json.dumps({"schema": schema, "payload": {
        "op": "c", "before": None, "after": {"id": i, "amount": amount}, "ts_ms": 1,
        "source": {"connector": "postgresql", "db": "d", "schema": "public", "table": "t", "lsn": 100 + i}}})
        for i in (1, 2)]
    return "\n".join(lines), value


@pytest.mark.parametrize("mode", ["precise", "variable", "string"])
@pytest.mark.parametrize("digits, scale", [(38, 10), (1000, 10), (1000, 0), (60, 30)])
def test_connect_decimals_keep_every_digit(mode, digits, scale):
    from decimal import Decimal

    text, value = _decimal_capture(digits, scale, mode)
    events = read_clean(text, dialect="debezium")
    assert [Decimal(str(json.loads(a)["amount"])) for a in events["after"]] == [value, value]
    state = cdckit.materialize(events)["public.t"]
    cells = state["amount"].tolist()
    assert [Decimal(str(c)) for c in cells] == [value, value]  # typed state holds every digit, never null
    assert cdckit.materialize(events).type_problems.empty


#: Debezium's time types: (schema type, logical name, value, what the typed state holds; None: kept as captured).
DEBEZIUM_TIMES = [
    ("int32", "io.debezium.time.Date", -171_000, "1501-10-27"),
    ("int32", "io.debezium.time.Date", 2_932_897, None),  # 10000-01-01: no date pandas holds
    ("int32", "org.apache.kafka.connect.data.Date", 19_723, "2024-01-01"),
    ("int64", "io.debezium.time.MicroTimestamp", -14_831_769_600_000_000, "1500-01-01T00:00:00Z"),
    ("int64", "io.debezium.time.MicroTimestamp", 13_569_465_600_000_001, "2400-01-01T00:00:00.000001Z"),
    ("int64", "io.debezium.time.Timestamp", -14_831_769_600_000, "1500-01-01T00:00:00Z"),
    ("int64", "org.apache.kafka.connect.data.Timestamp", 1_704_067_200_000, "2024-01-01T00:00:00Z"),
    ("int64", "io.debezium.time.NanoTimestamp", 1_704_067_200_000_000_001, "2024-01-01T00:00:00.000000001Z"),
    ("string", "io.debezium.time.ZonedTimestamp", "1900-06-01T12:00:00Z", "1900-06-01T12:00:00Z"),
    ("string", "io.debezium.time.ZonedTimestamp", "2024-01-01T10:00:00.123456+05:30", "2024-01-01T04:30:00.123456Z"),
    ("string", "io.debezium.time.ZonedTimestamp", "infinity", None),
    ("int64", "io.debezium.time.MicroTime", 45_296_789_000, "12:34:56.789"),
    ("int32", "io.debezium.time.Time", 45_296_789, "12:34:56.789"),
    ("int32", "org.apache.kafka.connect.data.Time", 45_296_789, "12:34:56.789"),
    ("string", "io.debezium.time.ZonedTime", "07:04:56.789Z", "07:04:56.789"),
    ("int64", "io.debezium.time.MicroTime", 86_400_000_000, None),  # PostgreSQL's 24:00:00
]


def test_debezium_time_types_reach_typed_state():
    import datetime as dt

    import pandas as pd

    fields = [{"type": "int32", "field": "id"}]
    fields += [{"type": t, "name": n, "optional": True, "field": f"c{i}"} for i, (t, n, _, _) in enumerate(DEBEZIUM_TIMES)]
    image = {"type": "struct", "fields": fields}
    schema = {"type": "struct", "fields": [dict(image, field="before", optional=True),
                                           dict(image, field="after", optional=True)]}
    after = {"id": 1} | {f"c{i}": v for i, (_, _, v, _) in enumerate(DEBEZIUM_TIMES)}
    text = json.dumps({"schema": schema, "payload": {"op": "c", "before": None, "after": after, "ts_ms": 1,
                                                     "source": {"connector": "postgresql", "db": "d", "schema": "public",
                                                                "table": "t"}}})
    states = cdckit.materialize(read_clean(text, dialect="debezium"))
    state, misfits = states["public.t"], set(states.type_problems["column"])
    for i, (_, name, value, typed) in enumerate(DEBEZIUM_TIMES):
        cell = state.loc[0, f"c{i}"]
        if typed is None:
            assert cell == value and f"c{i}" in misfits, (name, value, cell)
        elif name.endswith("Date"):
            assert cell == dt.date.fromisoformat(typed), (name, value, cell)
        elif name.endswith("Time"):
            assert cell == dt.time.fromisoformat(typed), (name, value, cell)
        else:
            assert cell == pd.Timestamp(typed), (name, value, cell)


# ---------------------------------------------------------------- the unchanged-TOAST placeholder (PostgreSQL)


def test_an_unchanged_toast_placeholder_in_any_shape_leaves_its_column_out_of_the_image():
    from debezium_pg import PLACEHOLDER, Capture, unavailable

    capture = Capture().update({"id": 1, "name": "Ann", "qty": 5})
    events = read_clean(capture.records, dialect="debezium")
    assert json.loads(events.loc[0, "after"]) == {"id": 1, "name": "Ann", "qty": 5}
    raw = PLACEHOLDER.encode()
    shapes = {"hex": raw.hex(), "HEX": raw.hex().upper(), "hstore": {PLACEHOLDER: PLACEHOLDER}, "bigints": list(raw)}
    message = {"op": "u", "before": None, "after": {"id": 1, **unavailable(), **shapes},
               "source": {"connector": "postgresql", "db": "shop", "schema": "public", "table": "docs", "lsn": 7}}
    for decoded in (read_clean([json.dumps(message)], dialect="debezium"),
                    read_clean([json.dumps(message["after"] | {"__op": "u", "__table": "docs", "__lsn": 7})],
                               dialect="debezium_flat")):
        assert json.loads(decoded.loc[0, "after"]) == {"id": 1}
    kept = dict(message, after={"id": 1, "bio": PLACEHOLDER + " and more", "tags": [PLACEHOLDER, "x"]})
    assert json.loads(read_clean([json.dumps(kept)], dialect="debezium").loc[0, "after"]) == kept["after"]


# ---------------------------------------------------------------- MySQL's BIT(n) and TIME outside a day


def _mysql_capture(rows: list[dict]) -> list[bytes]:
    """Debezium MySQL records (wrapped) of a table with BIT(10), BIT(64) and TIME/TIME(6) columns."""
    fields = [{"type": "int32", "field": "id"},
              {"type": "bytes", "name": "io.debezium.data.Bits", "parameters": {"length": "10"}, "field": "bits"},
              {"type": "bytes", "name": "io.debezium.data.Bits", "parameters": {"length": "64"}, "field": "wide"},
              {"type": "int64", "name": "io.debezium.time.MicroTime", "optional": True, "field": "clock"},
              {"type": "int32", "name": "io.debezium.time.Time", "optional": True, "field": "ms"}]
    image = {"type": "struct", "fields": fields}
    schema = {"type": "struct", "fields": [dict(image, field="before", optional=True),
                                           dict(image, field="after", optional=True)]}
    return [json.dumps({"schema": schema, "payload": {
        "op": "c", "before": None, "after": after, "ts_ms": 1,
        "source": {"connector": "mysql", "db": "d", "table": "t", "file": "b.000001", "pos": 4 + i, "row": 0}}}).encode()
        for i, after in enumerate(rows)]


def test_mysql_bits_are_numbers_and_a_time_outside_a_day_is_a_duration_text():
    import datetime as dt

    rows = [{"id": 1, "bits": "qgI=", "wide": "//////////8=", "clock": -3_020_399_000_000, "ms": 90_000_000},
            {"id": 2, "bits": "AAA=", "wide": "AQAAAAAAAAA=", "clock": 45_296_000_001, "ms": -1}]
    lines = _mysql_capture(rows)
    dialect = registry.create("debezium")
    per_message = [json.loads(e.after) for i, line in enumerate(lines)
                   for e in dialect.decode(Message(json.loads(line), "t", i, raw=line))]
    batch = [json.loads(r[EVENT_FIELDS.index("after")]) for r in dialect.decode_lines(lines)]
    expected = [{"id": 1, "bits": 682, "wide": 18446744073709551615, "clock": "-838:59:59", "ms": "25:00:00"},
                {"id": 2, "bits": 0, "wide": 1, "clock": 45_296_000_001, "ms": "-00:00:00.001000"}]
    assert per_message == batch == expected
    events = read_clean(b"\n".join(lines), dialect="debezium")
    assert [json.loads(a) for a in events["after"]] == expected
    states = cdckit.materialize(events)
    state = states["d.t"].set_index("id")
    assert states.type_problems.empty
    assert state.loc[1, "wide"] == 2**64 - 1 and state.loc[1, "bits"] == 682
    assert state.loc[1, "clock"] == dt.timedelta(hours=-838, minutes=-59, seconds=-59)  # a duration column
    assert state.loc[2, "clock"] == dt.timedelta(hours=12, minutes=34, seconds=56, microseconds=1)
    assert state.loc[1, "ms"] == dt.timedelta(hours=25) and state.loc[2, "ms"] == dt.timedelta(milliseconds=-1)


def test_the_report_says_what_the_connector_settings_lost_from_the_propagated_source_types(capsys):
    from cdckit.capture import Capture
    from cdckit.cli.summary import summary
    from cdckit.viz.report import _accounting_section

    def source(kind, length=None):
        found = {"__debezium.source.column.type": kind}
        return found if length is None else {**found, "__debezium.source.column.length": length}

    fields = [{"type": "int32", "field": "id"},
              {"type": "int64", "field": "big", "parameters": source("BIGINT UNSIGNED", "20")},
              {"type": "int64", "field": "signed", "parameters": source("BIGINT", "20")},
              {"type": "int32", "name": "org.apache.kafka.connect.data.Time", "field": "fine", "parameters": source("TIME", "6")},
              {"type": "int64", "name": "org.apache.kafka.connect.data.Timestamp", "field": "at",
               "parameters": source("DATETIME", "3")},  # milliseconds hold a DATETIME(3) whole
              {"type": "int64", "name": "io.debezium.time.MicroTime", "field": "exact", "parameters": source("TIME", "6")}]
    image = {"type": "struct", "fields": fields}
    schema = {"type": "struct", "fields": [dict(image, field="before", optional=True),
                                           dict(image, field="after", optional=True)]}
    line = json.dumps({"schema": schema, "payload": {"op": "c", "before": None, "after": {"id": 1}, "ts_ms": 1,
                       "source": {"connector": "mysql", "db": "d", "table": "t", "file": "b.1", "pos": 4, "row": 0}}})
    events = read_clean(line, dialect="debezium")
    losses = events.attrs["report"]["producer_losses"]
    assert [(x["table"], x["column"]) for x in losses] == [("d.t", "big"), ("d.t", "fine"), ("d.t", "fine")]
    assert "negative" in losses[0]["what"] and "null" in losses[1]["what"] and "floored" in losses[2]["what"]
    assert "producer_losses" not in read_clean(_mysql_capture([{"id": 1}]), dialect="debezium").attrs["report"]
    summary("c.jsonl", events.attrs["report"], None)
    assert "producer loss: d.t.big: values above 9223372036854775807 arrive as negative numbers" in capsys.readouterr().err
    assert "d.t" in _accounting_section(Capture.of(events)) and "floored" in _accounting_section(Capture.of(events))
