"""Debezium names a table as its connector does: its data-collection id, the last parts of its topic.

``schema.table`` for PostgreSQL, Oracle, Db2 and Informix, ``db.schema.table``
for SQL Server, ``db.table`` for MySQL; a flattened row that carries only
``__table`` takes the namespace from its Kafka topic. Every path (a file read
through the batch decoder, one message at a time, records handed over as
objects, Spark) gives the same names.
"""

from __future__ import annotations

import json

import pandas as pd
import pytest

import cdckit
from cdckit.dialects import registry
from cdckit.frame import table_names
from cdckit.io import Message

#: connector -> (source block, the name the connector gives the table)
CONNECTORS = {
    "postgresql": ({"connector": "postgresql", "name": "srv", "db": "postgres", "schema": "sales",
                    "table": "order_lines", "txId": 7, "lsn": 24023128}, "sales.order_lines"),
    "sqlserver": ({"connector": "sqlserver", "name": "srv", "db": "testDB", "schema": "dbo", "table": "customers",
                   "change_lsn": "00000027:00000758:0003", "commit_lsn": "00000027:00000758:0005",
                   "event_serial_no": 1}, "testDB.dbo.customers"),
    "mysql": ({"connector": "mysql", "name": "srv", "db": "inventory", "table": "customers", "server_id": 1,
               "file": "mysql-bin.000003", "pos": 154, "row": 0}, "inventory.customers"),
    "oracle": ({"connector": "oracle", "name": "srv", "db": "ORCLPDB1", "schema": "DEBEZIUM", "table": "CUSTOMERS",
                "scn": "2868546", "commit_scn": "2868547"}, "DEBEZIUM.CUSTOMERS"),
    "db2": ({"connector": "db2", "name": "srv", "db": "TESTDB", "schema": "DB2INST1", "table": "CUSTOMERS",
             "change_lsn": "00000000:0000150f:0000000000048fca", "commit_lsn": "00000000:0000150f:000000000004"},
            "DB2INST1.CUSTOMERS"),
}


def change(source: dict, ident: int = 1, op: str = "c") -> dict:
    return {"before": None, "after": {"id": ident, "v": "x"}, "source": dict(source, ts_ms=1559033904863),
            "op": op, "ts_ms": 1559033904961}


def name_of(event) -> str:
    return table_names(pd.DataFrame([{"database": event.database, "schema": event.schema,
                                      "table": event.table}])).tolist()[0]


def kcat(topic: str, value: dict | None, key: dict | None, offset: int) -> str:
    return json.dumps({"topic": topic, "partition": 0, "offset": offset, "key": None if key is None else
                       json.dumps(key), "payload": None if value is None else json.dumps(value)})


@pytest.mark.parametrize("connector", sorted(CONNECTORS))
def test_a_change_is_named_as_its_connector_names_the_table(connector, tmp_path):
    source, name = CONNECTORS[connector]
    lines = [json.dumps(change(source, i)) for i in range(1, 4)]
    path = tmp_path / "values.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    batch = cdckit.read(path, dialect="debezium")  # the batch decoder
    assert set(table_names(batch)) == {name}
    assert batch["table"].tolist() == [source["table"]] * 3
    assert batch["schema"].astype(object).where(batch["schema"].notna(), None).tolist() == \
        [source.get("schema")] * 3  # the schema stays the schema
    dialect = registry.create("debezium")
    for line in lines:  # one message at a time: the same
        (event,) = dialect.decode(Message(json.loads(line), "s", 0))
        assert (event.database, event.schema, event.table) == (batch["database"][0], source.get("schema"),
                                                               source["table"])
    state = cdckit.materialize(cdckit.with_keys(batch, {name: "id"}))
    assert list(state) == [name] and len(state[name]) == 3


def test_tables_of_one_name_in_two_schemas_stay_apart():
    public = dict(CONNECTORS["postgresql"][0], schema="public")
    sales = CONNECTORS["postgresql"][0]
    events = cdckit.read([json.dumps(change(public, 1)), json.dumps(change(sales, 1)), json.dumps(change(sales, 2))],
                         dialect="debezium")
    state = cdckit.materialize(cdckit.with_keys(events, {"public.order_lines": "id", "sales.order_lines": "id"}))
    assert sorted(state) == ["public.order_lines", "sales.order_lines"]
    assert (len(state["public.order_lines"]), len(state["sales.order_lines"])) == (1, 2)


def test_postgresql_names_its_tables_as_the_postgresql_plugins_do():
    debezium = cdckit.read(cdckit.samples.path("debezium/postgres_values"))
    wal2json = cdckit.read(cdckit.samples.path("wal2json/postgres_v2"))
    changed = ["insert", "update", "delete"]
    assert set(table_names(debezium[debezium["op"].isin(changed)])) == \
        set(table_names(wal2json[wal2json["op"].isin(changed)]))


def test_a_schema_change_of_sql_server_names_its_table_in_its_database_and_schema():
    source, name = CONNECTORS["sqlserver"]
    record = {"source": dict(source, ts_ms=1), "databaseName": "testDB", "schemaName": "dbo",
              "ddl": "ALTER TABLE dbo.customers ADD note varchar(20)",
              "tableChanges": [{"type": "ALTER", "id": '"testDB"."dbo"."customers"', "table": None}]}
    (event,) = registry.create("debezium").decode(Message(record, "s", 0))
    assert name_of(event) == name


#: Flattened rows that name only their table (add.fields=op,table,lsn...), with the topics Debezium gives them.
FLAT = [
    ("srv.sales.order_lines", {"id": 1, "__op": "c", "__table": "order_lines", "__lsn": 10}, "sales.order_lines"),
    ("srv.public.customers", {"id": 1, "__op": "c", "__table": "customers", "__lsn": 11}, "public.customers"),
    ("srv.testDB.dbo.customers", {"id": 2, "__op": "c", "__table": "customers", "__source_connector": "sqlserver"},
     "testDB.dbo.customers"),
    ("a.b.inventory.customers", {"id": 3, "__op": "c", "__table": "customers", "__file": "mysql-bin.000003",
                                 "__pos": 4, "__row": 0, "__connector": "mysql"}, "inventory.customers"),
    ("my.prefix.DEBEZIUM.CUSTOMERS", {"id": 4, "__op": "c", "__table": "CUSTOMERS", "__scn": "2868546"},
     "DEBEZIUM.CUSTOMERS"),
    # a row with its database and schema: the topic tells which of them name the table
    ("srv.public.items", {"id": 5, "__op": "c", "__db": "shop", "__schema": "public", "__table": "items"},
     "public.items"),
    # a topic routed elsewhere (its last part is not the table) says nothing of the namespace
    ("all_changes", {"id": 6, "__op": "c", "__table": "items", "__lsn": 12}, "items"),
]


def test_flattened_rows_take_their_namespace_from_the_topic(tmp_path):
    lines = [kcat(topic, row, {"id": row["id"]}, offset) for offset, (topic, row, _) in enumerate(FLAT)]
    path = tmp_path / "flat_kcat.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    want = [name for _, _, name in FLAT]
    assert table_names(cdckit.read(path, dialect="debezium_flat")).tolist() == want  # kcat -J: the batch path
    records = [json.loads(line) for line in lines]
    assert table_names(cdckit.read(records, dialect="debezium_flat")).tolist() == want  # records as objects
    dialect = registry.create("debezium_flat")
    for topic, row, name in FLAT:  # one message at a time, its topic given
        (event,) = dialect.decode(Message(row, "s", 0, topic=topic))
        assert name_of(event) == name


def test_the_committed_flattened_capture_names_the_tables_as_the_envelopes_do():
    flat = cdckit.read(cdckit.samples.path("debezium_flat/postgres_kcat"))
    envelopes = cdckit.read(cdckit.samples.path("debezium/postgres_kcat"))
    assert set(table_names(flat).dropna()) <= set(table_names(envelopes).dropna())
    assert "sales.order_lines" in set(table_names(flat))


def test_an_envelope_without_its_namespace_takes_it_from_the_topic(tmp_path):
    source = {"connector": "postgresql", "table": "order_lines", "lsn": 5}  # db and schema left out
    path = tmp_path / "kcat.jsonl"
    path.write_text(kcat("srv.sales.order_lines", change(source), {"id": 1}, 0) + "\n", encoding="utf-8")
    assert table_names(cdckit.read(path, dialect="debezium")).tolist() == ["sales.order_lines"]
    without = cdckit.read([json.dumps(change(source))], dialect="debezium")  # no topic: the bare table
    assert table_names(without).tolist() == ["order_lines"]


def test_spark_names_the_tables_as_pandas_does(spark, tmp_path):
    from cdckit import spark as cdcspark

    lines = [kcat(topic, row, {"id": row["id"]}, offset) for offset, (topic, row, _) in enumerate(FLAT)]
    path = tmp_path / "flat_kcat.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    want = [name for _, _, name in FLAT]

    def names(frame: pd.DataFrame) -> list:
        return table_names(frame.sort_values("offset").reset_index(drop=True)).tolist()

    assert names(cdcspark.read(spark, str(path), dialect="debezium_flat").toPandas()) == want
    records = spark.createDataFrame([(t, json.dumps(r), json.dumps({"id": r["id"]}), i)
                                     for i, (t, r, _) in enumerate(FLAT)], "topic string, value string, key string, "
                                    "offset long")
    assert names(cdcspark.decode(records, dialect="debezium_flat").toPandas()) == want
