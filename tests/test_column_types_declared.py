"""What the dialects declare about their columns' types, kept by ``cdckit.read`` in ``cdckit.column_types_of(events)``.

Each typed dialect's declarations are checked on a small message or a
bundled sample; a type change mid-stream gives a second set of rows at the
message that changed it; the batch decoders declare what the one-by-one
decoders declare; worker processes give the one-process frame; an untyped
dialect gives an empty frame with the right columns.
"""

from __future__ import annotations

import json

import pandas as pd
import pytest

import cdckit
from cdckit.column_types import TYPE_COLUMNS, parse_kind
from cdckit.export import write_events
from cdckit.frame import table_names
from cdckit.io import iter_sources
from cdckit.reading import workers

TYPED = ("canal", "oceanbase_extend", "dataworks", "datahub_blob", "debezium", "arcion", "lindorm", "aws_dms")


def rows(frame: pd.DataFrame) -> list[tuple]:
    """The declarations as ``(table, column, type, kind, offset)`` tuples, in order (the source left out)."""
    return [(t, c, ty, k, int(o)) for t, c, ty, k, o in
            frame[["table", "column", "type", "kind", "offset"]].itertuples(index=False, name=None)]


def through_both_paths(lines: list[str], dialect: str, tmp_path) -> tuple[list[tuple], list[tuple]]:
    """The declarations of ``lines`` read from a JSON Lines file (the batch decoder) and as parsed messages
    (``decode``, one at a time)."""
    path = tmp_path / "capture.jsonl"
    path.write_text("".join(line + "\n" for line in lines))
    batch = cdckit.read(path, dialect=dialect, workers=1)
    alone = cdckit.read([json.loads(line) for line in lines], dialect=dialect)
    assert batch.attrs["report"]["quarantined"] == alone.attrs["report"]["quarantined"] == 0
    return rows(cdckit.column_types_of(batch)), rows(cdckit.column_types_of(alone))


# ---------------------------------------------------------------- Canal


def canal(row_id: int, mysql: dict, sql: dict | None = None, table: str = "items") -> str:
    data = {name: str(row_id) for name in mysql}
    return json.dumps({"id": row_id, "database": "shop", "table": table, "type": "INSERT", "isDdl": False,
                       "es": 1000 + row_id, "ts": 1005 + row_id, "pkNames": ["id"], "mysqlType": mysql,
                       "sqlType": sql or {}, "sql": "", "old": None, "data": [data]})


BEFORE_ALTER = {"id": "bigint(20)", "price": "decimal(10,2)", "made": "datetime(3)", "tag": "enum('a','b')"}
AFTER_ALTER = {**BEFORE_ALTER, "price": "decimal(12,4)", "note": "varchar(20)"}


def test_canal_declares_mysql_types_and_sql_type_codes(tmp_path):
    batch, alone = through_both_paths([canal(1, BEFORE_ALTER, {"id": -5, "price": 3, "blob": 2004})], "canal",
                                      tmp_path)
    assert batch == alone == [
        ("shop.items", "id", "bigint(20)", "int", 0),
        ("shop.items", "price", "decimal(10,2)", "decimal(10,2)", 0),
        ("shop.items", "made", "datetime(3)", "timestamp", 0),
        ("shop.items", "tag", "enum('a','b')", "enum", 0),
        ("shop.items", "blob", "2004", "binary", 0),  # sqlType only: its code
    ]


def test_a_type_change_mid_stream_declares_the_table_again_where_it_changed(tmp_path):
    lines = [canal(1, BEFORE_ALTER), canal(2, BEFORE_ALTER), canal(3, AFTER_ALTER), canal(4, AFTER_ALTER),
             canal(5, BEFORE_ALTER, table="other"), canal(6, AFTER_ALTER), canal(7, BEFORE_ALTER)]
    batch, alone = through_both_paths(lines, "canal", tmp_path)
    assert batch == alone
    by_offset = {}
    for table, column, _, kind, offset in batch:
        by_offset.setdefault(offset, {})[(table, column)] = kind
    assert sorted(by_offset) == [0, 2, 4, 6]  # first sighting, ALTER, another table, back to the old types
    assert by_offset[2][("shop.items", "price")] == "decimal(12,4)"
    assert by_offset[2][("shop.items", "note")] == "string"
    assert by_offset[6][("shop.items", "price")] == "decimal(10,2)"


# ---------------------------------------------------------------- Debezium


def connect_field(name: str, kind: str, logical: str | None = None, **parameters: str) -> dict:
    field = {"type": kind, "optional": True, "field": name}
    if logical:
        field["name"] = logical
    if parameters:
        field["parameters"] = parameters
    return field


DEBEZIUM_FIELDS = [
    connect_field("id", "int32"),
    connect_field("born", "int32", "io.debezium.time.Date"),
    connect_field("seen", "int64", "io.debezium.time.MicroTimestamp"),
    connect_field("made", "int64", "io.debezium.time.Timestamp"),
    connect_field("nano", "int64", "io.debezium.time.NanoTimestamp"),
    connect_field("zoned", "string", "io.debezium.time.ZonedTimestamp"),
    connect_field("at", "int64", "io.debezium.time.MicroTime"),
    connect_field("price", "bytes", "org.apache.kafka.connect.data.Decimal", scale="2",
                  **{"connect.decimal.precision": "10"}),
    connect_field("ratio", "bytes", "org.apache.kafka.connect.data.Decimal", scale="3"),
    connect_field("any", "struct", "io.debezium.data.VariableScaleDecimal"),
    connect_field("doc", "string", "io.debezium.data.Json"),
    connect_field("mood", "string", "io.debezium.data.Enum", allowed="ok,bad"),
    connect_field("ok", "boolean"),
    connect_field("weight", "float64"),
    connect_field("raw", "bytes"),
]
DEBEZIUM_KINDS = {"id": "int", "born": "date", "seen": "timestamp(us)", "made": "timestamp(ms)",
                  "nano": "timestamp(ns)", "zoned": "timestamp", "at": "time(us)", "price": "decimal(10,2)",
                  "ratio": "decimal(,3)", "any": "decimal", "doc": "json", "mood": "enum", "ok": "bool",
                  "weight": "float", "raw": "binary"}


def debezium(row_id: int, fields: list[dict], transaction: bool = False) -> str:
    row = {"id": row_id}
    payload = {"before": None, "after": row, "op": "c", "ts_ms": 2000 + row_id,
               "source": {"connector": "mysql", "db": "shop", "table": "items", "ts_ms": 1000 + row_id,
                          "file": "binlog.000001", "pos": 100 + row_id, "row": 0}}
    if transaction:  # a shape the batch decoder's first pass hands to its second
        payload["transaction"] = {"id": f"tx{row_id}", "total_order": 1, "data_collection_order": 1}
    schema = {"type": "struct", "name": "shop.items.Envelope", "fields": [
        {"type": "struct", "optional": True, "field": "before", "fields": fields},
        {"type": "struct", "optional": True, "field": "after", "fields": fields},
        {"type": "string", "optional": False, "field": "op"}]}
    return json.dumps({"schema": schema, "payload": payload})


def test_debezium_declares_the_connect_schema_with_its_logical_types(tmp_path):
    batch, alone = through_both_paths([debezium(1, DEBEZIUM_FIELDS)], "debezium", tmp_path)
    assert batch == alone
    assert {column: kind for _, column, _, kind, _ in batch} == DEBEZIUM_KINDS
    raw = {column: raw for _, column, raw, _, _ in batch}
    assert raw["born"] == "int32 io.debezium.time.Date"
    assert raw["ratio"] == "bytes org.apache.kafka.connect.data.Decimal(scale=3)"
    assert {table for table, *_ in batch} == {"shop.items"}
    for kind in DEBEZIUM_KINDS.values():
        parse_kind(kind)  # every kind is in the vocabulary


def test_debezium_batch_passes_declare_in_input_order(tmp_path):
    """Lines taken by the batch decoder's first pass and lines left to its second, with types going back and
    forth: the same declarations, at the same offsets, as one message at a time."""
    wider = DEBEZIUM_FIELDS + [connect_field("extra", "string")]
    plan = [(DEBEZIUM_FIELDS, False), (wider, True), (DEBEZIUM_FIELDS, False), (DEBEZIUM_FIELDS, True),
            (wider, False), (wider, False), (DEBEZIUM_FIELDS, True), (wider, True), (DEBEZIUM_FIELDS, False)]
    lines = [debezium(i, fields, transaction) for i, (fields, transaction) in enumerate(plan)]
    batch, alone = through_both_paths(lines, "debezium", tmp_path)
    assert batch == alone
    assert sorted({offset for *_, offset in batch}) == [0, 1, 2, 4, 6, 7, 8]


def test_debezium_flattened_rows_declare_their_schema_less_the_added_fields(tmp_path):
    fields = [connect_field("id", "int32"), connect_field("seen", "int64", "io.debezium.time.NanoTimestamp"),
              connect_field("__op", "string"), connect_field("__table", "string")]
    line = json.dumps({"schema": {"type": "struct", "fields": fields},
                       "payload": {"id": 1, "seen": 5, "__op": "c", "__table": "items", "__db": "shop"}})
    batch, alone = through_both_paths([line], "debezium_flat", tmp_path)
    assert batch == alone == [("shop.items", "id", "int32", "int", 0),
                              ("shop.items", "seen", "int64 io.debezium.time.NanoTimestamp", "timestamp(ns)", 0)]


# ---------------------------------------------------------------- the other typed dialects, on their samples


def sample_rows(sample: str) -> list[tuple]:
    return rows(cdckit.column_types_of(cdckit.read(cdckit.samples.path(sample))))


def test_oceanbase_extend_declares_light_types():
    found = sample_rows("oceanbase_extend/examples.json")
    assert ("finance.account", "balance", "DECIMAL(12,2)", "decimal(12,2)", 0) in found
    assert ("finance.account", "opened_at", "DATETIME", "timestamp", 0) in found


def test_dataworks_declares_schema_column_types():
    assert sample_rows("dataworks/examples.json") == [
        ("myDatabase.tableName", "id", "bigint", "int", 0),
        ("myDatabase.tableName", "name", "varchar(20)", "string", 0),
        ("myDatabase.tableName", "mydata", "binary", "binary", 0),
        ("myDatabase.tableName", "ts", "datetime", "timestamp", 0),
    ]


def test_datahub_blob_declares_data_column_types():
    found = sample_rows("datahub_blob/examples_types.json")
    assert ("pg_db.t_types", "created", "DATE", "timestamp(ms)", 2) in found
    assert ("pg_db.t_types", "blob", "BYTES", "binary", 2) in found


def test_aws_dms_declares_a_control_records_table_def():
    assert sample_rows("aws_dms/examples.json")[:2] == [("public.foo", "age", "INT32", "int", 1),
                                                        ("public.foo", "attributes", "STRING", "string", 1)]


def test_untyped_dialect_gives_an_empty_frame_with_the_columns():
    frame = cdckit.column_types_of(cdckit.read(cdckit.samples.path("maxwell")))
    assert frame.empty and tuple(frame.columns) == TYPE_COLUMNS


def test_events_cdckit_wrote_read_back_with_an_empty_frame(tmp_path):
    path = tmp_path / "events.parquet"
    write_events(cdckit.read(cdckit.samples.path("canal")), path)
    frame = cdckit.column_types_of(cdckit.read(path))
    assert frame.empty and tuple(frame.columns) == TYPE_COLUMNS


# ---------------------------------------------------------------- every sample: names, both paths


def typed_samples() -> list[str]:
    return [  # a capture of framed records declares its types once read with its schemas (the message decoder)
        sample
        for sample in cdckit.samples.list()
        if sample.split("/")[0] in TYPED and not cdckit.samples.is_framed(sample)
    ]


@pytest.mark.parametrize("sample", typed_samples())
def test_declared_tables_are_named_as_the_events_are(sample):
    events = cdckit.read(cdckit.samples.path(sample))
    declared = set(cdckit.column_types_of(events)["table"])
    assert declared <= set(table_names(events).dropna())


@pytest.mark.parametrize("sample", typed_samples())
def test_the_batch_decoders_declare_what_decode_declares(sample):
    path = cdckit.samples.path(sample)
    batch = cdckit.read(path, workers=1)
    dialect = batch.attrs["report"]["sources"][str(path)]
    messages = [m for _, found in iter_sources(path) for m in found if m.error is None]
    alone = cdckit.read([m.value for m in messages], dialect=dialect)
    offsets = [m.offset for m in messages]  # a saved Kafka record keeps its offset; the value alone does not
    assert rows(cdckit.column_types_of(batch)) == [row[:4] + (offsets[row[4]],)
                                                 for row in rows(cdckit.column_types_of(alone))]


# ---------------------------------------------------------------- workers and chunks


def changing_capture(tmp_path) -> str:
    """A capture whose tables change their types now and then, interleaved."""
    lines = []
    for i in range(120):
        lines.append(canal(i, AFTER_ALTER if (i // 17) % 2 else BEFORE_ALTER, table=f"t{i % 3}"))
    path = tmp_path / "changing.jsonl"
    path.write_text("".join(line + "\n" for line in lines))
    return str(path)


def test_workers_give_the_one_process_declarations(tmp_path, monkeypatch):
    path = changing_capture(tmp_path)
    monkeypatch.setattr(workers, "RANGE_BYTES", 2_000)  # many ranges: each worker sees every table first
    one = cdckit.column_types_of(cdckit.read(path, workers=1))
    many = cdckit.column_types_of(cdckit.read(path, workers=2))
    assert len(one) > 3 * len(AFTER_ALTER)
    pd.testing.assert_frame_equal(one, many)


def test_chunks_carry_the_declarations_met_so_far(tmp_path):
    path = changing_capture(tmp_path)
    whole = cdckit.read(path, capture=True).column_types
    chunks = cdckit.read(path, chunksize=10)
    seen = 0
    for chunk in chunks:
        declared = cdckit.column_types_of(chunk)
        assert len(declared) >= seen and set(chunk["offset"]) <= set(range(int(declared["offset"].max()) + 1))
        seen = len(declared)
    pd.testing.assert_frame_equal(chunks.column_types, whole)


def test_frames_from_two_reads_concatenate():
    """pandas compares attrs when concatenating: the declarations frame must allow it."""
    one = cdckit.read(cdckit.samples.path("canal/examples.jsonl"))
    two = cdckit.read(cdckit.samples.path("canal/examples.jsonl"))
    assert len(pd.concat([one, two])) == 2 * len(one)
