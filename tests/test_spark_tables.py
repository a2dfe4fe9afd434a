"""cdcspark.table gives the typed columns of cdckit.table, on the same events (declared and inferred kinds)."""

from __future__ import annotations

from decimal import Decimal

import pandas as pd
import pyarrow as pa
from comparable import rows
from pyspark.sql.pandas.types import from_arrow_schema
from test_tables import DEBEZIUM_TYPES, ROW, _events

import cdckit
from cdckit import spark as cdcspark
from cdckit.frame import COLUMN_NAMES
from cdckit.spark.engine import COMBINED_ARROW


def _to_spark(spark, events: pd.DataFrame):
    schema = pa.schema([COMBINED_ARROW.field(n) for n in COLUMN_NAMES])
    return spark.createDataFrame(events[COLUMN_NAMES], schema=from_arrow_schema(schema))


def test_spark_table_equals_the_pandas_table(spark):
    events = _events([("insert", None, ROW),
                      ("update", ROW, ROW.replace('"12345678901234567.89"', '"0.10"').replace("19844", "19845")),
                      ("insert", None, ROW.replace('"id":1', '"id":2').replace('"2024-05-01 09:00:00"', '"nope"')),
                      ("delete", ROW, None)], DEBEZIUM_TYPES)
    frame = _to_spark(spark, events)
    want = cdckit.table(events, "items", before=True)
    got = cdcspark.table(frame, "items", types=cdckit.column_types_of(events), before=True)
    assert got.columns == list(want.columns)
    types = dict(got.dtypes)
    assert types["price"] == "decimal(20,2)" and types["born"] == "date" and types["seen"] == "timestamp"
    got_rows = rows(got.toPandas())
    # "nope" fits no timestamp: pandas keeps it in an object column, Spark makes the column text (one type a
    # column); neither makes it null. The other columns are the same.
    assert types["local"] == "string" and got_rows[2]["local"] == "nope" and want["local"].tolist()[2] == "nope"
    text = ("local", "before_local")  # on Spark the before column is the after column's type: text too
    assert [{k: v for k, v in r.items() if k not in text} for r in got_rows] == \
        [{k: v for k, v in r.items() if k not in text} for r in rows(want)]
    assert got_rows[0]["price"] == Decimal("12345678901234567.89")


def test_spark_table_infers_kinds_from_the_images(spark):
    events = _events([("insert", None, '{"id":1,"big":12345678901234567890,"x":1.5,"d":"2024-05-01"}'),
                      ("insert", None, '{"id":2,"big":3,"x":2,"d":null}')])
    got = cdcspark.table(_to_spark(spark, events), "shop.items")
    assert dict(got.dtypes)["big"] == "decimal(38,0)" and dict(got.dtypes)["d"] == "date"
    assert rows(got.toPandas()) == rows(cdckit.table(events, "shop.items"))


def _sample_on_spark(spark, name: str):
    path = cdckit.samples.path(name)
    return cdckit.read(path), cdcspark.read(spark, str(path))


def _typed_rows(frame: pd.DataFrame, columns: list[str]) -> list[dict]:
    return sorted(rows(frame[columns]), key=repr)


def test_spark_states_take_the_declared_types_of_the_pandas_states(spark):
    events, on_spark = _sample_on_spark(spark, "canal/examples")
    types = cdckit.column_types_of(events)
    want = cdckit.materialize(events)
    got = cdcspark.materialize(on_spark, types=types)
    assert sorted(got) == list(want)
    for name in want:
        assert got[name].columns == list(want[name].columns), name
        assert _typed_rows(got[name].toPandas(), got[name].columns) == _typed_rows(want[name], got[name].columns)
    spark_types = dict(got["shop.products"].dtypes)
    assert spark_types["price"] == "decimal(10,2)" and spark_types["created_at"] == "timestamp"
    assert spark_types["views"] == "decimal(38,0)" and spark_types["id"] == "bigint"  # an unsigned bigint past 64 bits
    assert dict(got["shop.attachments"].dtypes)["total"] == "decimal(30,10)"
    assert isinstance(got["test.orders"].toPandas()["amount"].iloc[0], Decimal)
    untyped = cdcspark.materialize(on_spark, types={"test.orders": {"amount": "decimal(10,2)"}})
    assert dict(untyped["test.orders"].dtypes)["amount"] == "decimal(10,2)"
    assert dict(untyped["test.orders"].dtypes)["updated_at"] == "string"  # no kind given: the JSON typing


def test_spark_scd2_takes_the_declared_types(spark):
    events, on_spark = _sample_on_spark(spark, "dataworks/examples_payments")
    want = cdckit.scd2(events)
    got = cdcspark.scd2(on_spark, types=cdckit.column_types_of(events))
    assert sorted(got) == sorted(want)
    for name in want:
        columns = [c for c in want[name].columns if c not in ("valid_from", "valid_to")]
        assert got[name].columns == list(want[name].columns), name
        assert _typed_rows(got[name].toPandas(), columns) == _typed_rows(want[name], columns)
    spark_types = dict(got["shop.payments"].dtypes)
    assert spark_types["amount"] == "decimal(10,2)" and spark_types["ledger_total"] == "decimal(38,10)"
    # created_at holds "1714554000123.456789012" ms, finer than a nanosecond: no timestamp holds it, so the
    # column is text on Spark (pandas: an object column), never null
    assert spark_types["created_at"] == "string" and spark_types["updated_at"] == "timestamp"
    assert "1714554000123.456789012" in set(got["shop.payments"].toPandas()["created_at"])


def test_written_spark_states_are_typed_parquet(spark, tmp_path):
    import pyarrow.parquet as pq

    from cdckit import export

    events, on_spark = _sample_on_spark(spark, "canal/examples")
    export.write_state(cdcspark.materialize(on_spark, types=cdckit.column_types_of(events)), tmp_path / "state")
    table = pq.read_table(tmp_path / "state" / "shop.products.parquet")
    want = cdckit.materialize(events)["shop.products"]
    assert sorted(table.column("price").to_pylist()) == sorted(want["price"].tolist())
    written = table.schema
    assert written.field("price").type == pa.decimal128(10, 2)
    assert written.field("views").type == pa.decimal128(38, 0)
    created = written.field("created_at").type
    assert pa.types.is_timestamp(created) and created.tz in ("UTC", "+00:00"), created


def test_spark_typed_views_keep_every_value(spark):
    """Values that fit no kind, and decimals wider than Spark's 38 digits, are never null on Spark."""
    wide, huge = "1" * 45 + ".25", "9" * 990 + ".1234567890"
    images = [f'{{"id":1,"t":"infinity","d":"{wide}","w":"{huge}","n":1.5}}',
              '{"id":2,"t":"2024-05-01 09:00:00-03:30:52","d":"2.5","w":"1","n":"nope"}']
    events = _events([("insert", None, image) for image in images],
                     [(0, "id", "int"), (0, "t", "timestamp"), (0, "d", "decimal(50,2)"), (0, "w", "decimal(1000,10)"),
                      (0, "n", "float")])
    frame = _to_spark(spark, events)
    types = cdckit.column_types_of(events)
    typed = cdcspark.table(frame, "items", types=types)
    states = cdcspark.materialize(frame, types=types)
    for got in (typed, states["shop.items"]):
        cells = {r["id"]: r for r in rows(got.toPandas())}
        assert cells[1]["t"] == "infinity" and cells[2]["n"] == "nope" and cells[1]["n"] == "1.5"
        assert Decimal(cells[1]["d"]) == Decimal(wide) and Decimal(cells[1]["w"]) == Decimal(huge)
        assert Decimal(cells[2]["d"]) == Decimal("2.5")
        assert all(row[c] is not None for row in cells.values() for c in ("id", "t", "d", "w", "n"))
