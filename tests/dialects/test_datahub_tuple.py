"""DataHub Tuple: the spec's rows decoded exactly from JSON Lines, CSV and Parquet, halves paired,
round trips, shop, bad input."""

from __future__ import annotations

import json

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from validator import assert_round_trip, assert_rows, assert_shop, read_clean, row

import cdckit
from cdckit.dialects import registry

PAIRED = "update half: merged with its partner into one row"
JOE = {"id": 1, "name": "joe", "comment": "comment"}
JOE_1 = {"id": 1, "name": "joe", "comment": "com1"}
#: the shop's tables: a Tuple file has ONE fixed set of columns, so every row carries both tables' columns
CUSTOMER_COLUMNS = ["id", "name", "email", "tier", "balance", "note"]
ITEM_COLUMNS = ["order_id", "line_no", "sku", "qty", "price", "customer_id"]


def spec_rows(image):
    """The spec's I / U / U / D rows (yunshi_db.t_shiyu_pk), images passed through ``image``."""
    where = dict(database="yunshi_db", table="t_shiyu_pk")
    return [
        row(0, "insert", "I", event_time="2022-04-15T03:02:06Z", seq="01649991610688000000", after=image(JOE),
            **where),
        # the before row (offset 1) and the after row (offset 2) with the same _sequence_id_: one update
        row(2, "update", "U", event_time="2022-04-15T03:02:36Z", seq="01649991610688000001", before=image(JOE),
            after=image(JOE_1), **where),
        row(3, "delete", "D", event_time="2022-04-15T03:02:54Z", seq="01649991610688000002", before=image(JOE_1),
            **where),
    ]


def tuple_row(op, seq, before_flag, after_flag, table="yunshi_db.t_shiyu_pk", time=1649991756000, **columns):
    return dict(columns, _sequence_id_=seq, _operation_type_=op, _excute_time_=time, _source_table_=table,
                _before_image_=before_flag, _after_image_=after_flag)


def jsonl(*rows) -> str:
    return "\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows) + "\n"


# ---------------------------------------------------------------- the spec's example, three containers


def test_spec_rows_from_json_lines_keep_their_types():
    events = read_clean(cdckit.samples.path("datahub_tuple/examples.jsonl"))
    assert_rows(events, spec_rows(lambda image: image))
    report = events.attrs["report"]
    assert (report["messages"], report["decoded"], report["events"]) == (4, 4, 3)
    assert report["skipped"] == {PAIRED: 1}


def test_spec_rows_from_csv_are_text():
    events = read_clean(cdckit.samples.path("datahub_tuple/examples.csv"))
    assert_rows(events, spec_rows(lambda image: dict(image, id="1")))


def test_spec_rows_from_parquet_keep_their_types():
    events = read_clean(cdckit.samples.path("datahub_tuple/examples.parquet"))
    assert_rows(events, spec_rows(lambda image: image))


def test_halves_apart_reversed_table_without_database_and_numeric_sequence_ids():
    events = read_clean(cdckit.samples.path("datahub_tuple/examples_split.jsonl"))
    where = dict(table="t_shiyu_pk")
    assert_rows(events, [
        row(1, "insert", "I", event_time="2022-04-15T03:03:21Z", seq="01649991610688000011",
            after={"id": 3, "name": "bob", "comment": None}, **where),
        # the after row came first (offset 0), its before row three rows later
        row(0, "update", "U", event_time="2022-04-15T03:03:20Z", seq="01649991610688000010",
            before={"id": 2, "name": "ann", "comment": "c1"}, after={"id": 2, "name": "ann", "comment": "c2"},
            **where),
        row(4, "update", "U", event_time="2022-04-15T03:03:22Z", seq="01649991610688000012",
            before={"id": 3, "name": "bob", "comment": None}, after={"id": 3, "name": "bob", "comment": "c3"},
            **where),
    ])
    assert events.attrs["report"]["skipped"] == {PAIRED: 2}


# ---------------------------------------------------------------- quirks, one by one


def test_update_rows_pair_whichever_comes_first_with_rows_between():
    before = tuple_row("U", "7", "Y", "N", **JOE)
    after = tuple_row("U", "7", "N", "Y", **JOE_1)
    other = tuple_row("I", "8", "N", "Y", id=2, name="ann", comment="x")
    for order in ([before, other, after], [after, other, before]):
        events = read_clean(order, dialect="datahub_tuple")
        assert events["op"].tolist() == ["insert", "update"]
        assert json.loads(events.iloc[1]["before"]) == JOE and json.loads(events.iloc[1]["after"]) == JOE_1
        assert events.iloc[1]["offset"] == order.index(after)


def test_unpaired_update_row_is_quarantined_and_accounted_for():
    rows = [tuple_row("I", "1", "N", "Y", **JOE), tuple_row("U", "2", "Y", "N", **JOE),
            tuple_row("D", "3", "Y", "N", **JOE)]
    events = cdckit.read(rows, dialect="datahub_tuple")
    assert events["offset"].tolist() == [0, 2]
    quarantine = cdckit.quarantine(events)
    assert quarantine["offset"].tolist() == [1]
    assert quarantine.loc[0, "reason"] == "U with no partner half (table t_shiyu_pk, seq 00000000000000000002)"
    assert json.loads(quarantine.loc[0, "raw"])["_before_image_"] == "Y"
    report = events.attrs["report"]
    assert (report["messages"], report["decoded"], report["quarantined"]) == (3, 2, 1)


def test_meta_columns_never_stay_in_an_image():
    meta = {"_sequence_id_", "_operation_type_", "_excute_time_", "_source_table_", "_before_image_",
            "_after_image_"}
    for name in ("datahub_tuple/examples.jsonl", "datahub_tuple/shop.csv", "datahub_tuple/shop.parquet"):
        events = read_clean(cdckit.samples.path(name))
        for image in [*events["before"].dropna(), *events["after"].dropna()]:
            assert not meta & set(json.loads(image)), name


def test_excute_time_is_spelled_so_and_is_milliseconds():
    good = tuple_row("I", "1", "N", "Y", time=1649991726000, **JOE)
    assert read_clean([good], dialect="datahub_tuple").loc[0, "event_time"].isoformat() == "2022-04-15T03:02:06+00:00"
    as_text = dict(good, _excute_time_="1649991726000")
    assert read_clean([as_text], dialect="datahub_tuple").loc[0, "event_time"].isoformat() == (
        "2022-04-15T03:02:06+00:00")
    spelled_right = {("_execute_time_" if k == "_excute_time_" else k): v for k, v in good.items()}
    quarantine = cdckit.quarantine(cdckit.read([spelled_right], dialect="datahub_tuple"))
    assert quarantine.loc[0, "reason"] == "missing required field _excute_time_"


def test_rows_carry_no_primary_key():
    events = read_clean(cdckit.samples.path("datahub_tuple/examples.jsonl"))
    assert events["key_columns"].tolist() == [None, None, None]
    assert events["key"].isna().all()
    assert events["emit_time"].isna().all() and events["txn_id"].isna().all()


def test_sequence_id_as_text_or_number_is_the_same_seq():
    as_text = tuple_row("I", "1649991610688000000", "N", "Y", **JOE)
    as_number = dict(as_text, _sequence_id_=1649991610688000000)
    seqs = read_clean([as_text, as_number], dialect="datahub_tuple")["seq"].tolist()
    assert seqs == ["01649991610688000000", "01649991610688000000"]
    small = read_clean([dict(as_text, _sequence_id_=9), dict(as_text, _sequence_id_="10")],
                       dialect="datahub_tuple")["seq"].tolist()
    assert small == sorted(small)


@pytest.mark.parametrize("name, database, schema, table", [
    ("yunshi_db.t_shiyu_pk", "yunshi_db", None, "t_shiyu_pk"),
    ("t_shiyu_pk", None, None, "t_shiyu_pk"),
    ("pg_db.public.orders", "pg_db", "public", "orders"),
    (None, None, None, None),
])
def test_source_table_is_db_dot_table_or_table(name, database, schema, table):
    events = read_clean([tuple_row("I", "1", "N", "Y", table=name, **JOE)], dialect="datahub_tuple")
    got = [None if v is pd.NA else v for v in events.loc[0, ["database", "schema", "table"]]]
    assert got == [database, schema, table]


def test_csv_values_stay_text_and_an_empty_field_is_null(tmp_path):
    path = tmp_path / "topic.csv"
    path.write_text("id,price,note,_sequence_id_,_operation_type_,_excute_time_,_source_table_,"
                    "_before_image_,_after_image_\n"
                    "7,2.50,,1649991610688000000,I,1649991726000,db.t,N,Y\n")
    events = read_clean(path)
    assert json.loads(events.loc[0, "after"]) == {"id": "7", "price": "2.50", "note": None}
    assert events.loc[0, "seq"] == "01649991610688000000"


def test_parquet_values_stay_typed(tmp_path):
    path = tmp_path / "topic.parquet"
    pq.write_table(pa.Table.from_pylist([tuple_row("I", "5", "N", "Y", id=7, price=2.5, active=True, note=None)]),
                   path)
    events = read_clean(path)
    assert json.loads(events.loc[0, "after"]) == {"id": 7, "price": 2.5, "active": True, "note": None}


def test_parquet_decimals_binary_and_timestamps_become_json(tmp_path):
    from datetime import datetime, timezone
    from decimal import Decimal

    path = tmp_path / "topic.parquet"
    table = pa.table({
        "amount": pa.array([Decimal("12.50")], pa.decimal128(10, 2)),
        "big": pa.array([Decimal("12345678901234567890.12")], pa.decimal128(22, 2)),
        "raw": pa.array([b"\x00\x01\xff"], pa.binary()),
        "at": pa.array([datetime(2022, 4, 15, 3, 2, 6, tzinfo=timezone.utc)], pa.timestamp("ms", tz="UTC")),
        "_sequence_id_": ["1"], "_operation_type_": ["I"], "_excute_time_": [1649991726000],
        "_source_table_": ["db.t"], "_before_image_": ["N"], "_after_image_": ["Y"],
    })
    pq.write_table(table, path)
    events = read_clean(path)
    assert json.loads(events.loc[0, "after"]) == {"amount": 12.5, "big": "12345678901234567890.12", "raw": "AAH/",
                                                  "at": "2022-04-15T03:02:06+00:00"}


# ---------------------------------------------------------------- encoding


def test_encoder_writes_rows_with_meta_columns_and_an_update_as_two_rows():
    events = read_clean(cdckit.samples.path("datahub_tuple/examples.jsonl"))
    records = [r.value for r in registry.create("datahub_tuple").encode(events)]
    assert records == [json.loads(line) for line in cdckit.samples.raw("datahub_tuple/examples.jsonl").splitlines()]


def test_encoder_synthesizes_sequence_ids_and_uses_one_set_of_columns():
    records = [r.value for r in registry.create("datahub_tuple").encode(cdckit.samples.shop.shop_events())]
    meta = ["_sequence_id_", "_operation_type_", "_excute_time_", "_source_table_", "_before_image_",
            "_after_image_"]
    assert all(list(r) == CUSTOMER_COLUMNS + ITEM_COLUMNS + meta for r in records)
    ids = [r["_sequence_id_"] for r in records]
    assert ids[:2] == ["1714554000000000000", "1714554000000000001"]
    updates = [r for r in records if r["_operation_type_"] == "U"]
    assert [(r["_before_image_"], r["_after_image_"]) for r in updates[:2]] == [("Y", "N"), ("N", "Y")]
    assert all(a["_sequence_id_"] == b["_sequence_id_"] for a, b in zip(updates[::2], updates[1::2]))
    assert records[0]["_source_table_"] == "shop.customers"


def test_encoder_skips_what_tuple_cannot_say():
    events = read_clean(cdckit.samples.path("datahub_blob/examples.json"))  # has a heartbeat and a DDL
    records = [r.value for r in registry.create("datahub_tuple").encode(events)]
    assert [r["_operation_type_"] for r in records] == ["I", "U", "U", "D"]


def test_round_trip_examples(tmp_path):
    for name in ("datahub_tuple/examples.csv", "datahub_tuple/examples.parquet", "datahub_tuple/examples_split.jsonl"):
        events = read_clean(cdckit.samples.path(name))
        assert_round_trip("datahub_tuple", events, tmp_path)


def padded(truth):
    """What a Tuple row can say of a shop event: no key, no emit time, no transaction id, and every
    column of both tables (one fixed schema per file; the other table's columns are null)."""
    out = dict(truth, key_columns=None, key=None, emit_time=None, txn_id=None)
    for side in ("before", "after"):
        if truth[side] is not None:
            out[side] = {c: truth[side].get(c) for c in CUSTOMER_COLUMNS + ITEM_COLUMNS}
    return out


def as_text(value):
    """A value as Python's csv module writes it (None is an empty field, read back as null)."""
    return None if value is None else str(value)


def test_shop_json_lines():
    assert_shop("datahub_tuple", padded, sample="datahub_tuple/shop.jsonl")


def test_shop_parquet():
    assert_shop("datahub_tuple", padded, sample="datahub_tuple/shop.parquet")


def test_shop_csv():
    def text(truth):
        # a CSV carries no types: every value is read back as text
        out = padded(truth)
        for side in ("before", "after"):
            if out[side] is not None:
                out[side] = {c: as_text(v) for c, v in out[side].items()}
        return out

    assert_shop("datahub_tuple", text, sample="datahub_tuple/shop.csv")


# ---------------------------------------------------------------- detection


def test_detects_its_samples_with_evidence():
    for name in ("examples.jsonl", "examples.csv", "examples.parquet", "examples_split.jsonl", "shop.jsonl",
                 "shop.csv", "shop.parquet"):
        detection = cdckit.detect(cdckit.samples.path(f"datahub_tuple/{name}"))
        assert detection.dialect == "datahub_tuple", name
        assert {"_sequence_id_", "_before_image_", "_after_image_"} <= set(detection.evidence), name
    tuple_ = registry.create("datahub_tuple")
    match = tuple_.detect(tuple_row("U", "1", "Y", "N", **JOE))
    assert match.score >= 0.9 and "_operation_type_=U" in match.evidence


def test_blob_messages_and_tuple_rows_are_told_apart():
    tuple_, blob = registry.create("datahub_tuple"), registry.create("datahub_blob")
    blob_message = json.loads(cdckit.samples.raw("datahub_blob/examples_split.jsonl").splitlines()[0])
    assert tuple_.detect(blob_message) is None
    assert blob.detect(tuple_row("I", "1", "N", "Y", **JOE)) is None
    for value in (None, "I,1", [], {}, {"id": 1, "name": "joe"}):
        assert tuple_.detect(value) is None


# ---------------------------------------------------------------- bad input


def test_bad_rows_are_quarantined_with_reason():
    good = tuple_row("I", "1", "N", "Y", **JOE)
    lines = [
        json.dumps(good),
        '{"id": 1, "_sequence_id_": "2", "_operation_type_": "I", "_exc',                        # 1 truncated
        json.dumps({k: v for k, v in good.items() if k != "_operation_type_"}),                 # 2
        json.dumps(dict(good, _operation_type_="X")),                                           # 3
        json.dumps(dict(good, _sequence_id_=None)),                                             # 4
        json.dumps(dict(good, _excute_time_="yesterday")),                                      # 5
        json.dumps(dict(good, _operation_type_="U", _before_image_="N", _after_image_="N")),     # 6
        json.dumps(dict(good, _source_table_=["db", "t"])),                                     # 7
        json.dumps(json.loads(cdckit.samples.raw("datahub_blob/examples_split.jsonl").splitlines()[1])),  # 8 blob
        json.dumps(good),
    ]
    events = cdckit.read("\n".join(lines) + "\n", dialect="datahub_tuple")
    assert events["offset"].tolist() == [0, 9]
    quarantine = cdckit.quarantine(events)
    assert quarantine["offset"].tolist() == list(range(1, 9))
    assert set(quarantine["source"]) == {"<string>"} and set(quarantine["dialect"]) == {"datahub_tuple"}
    reasons = dict(zip(quarantine["offset"], quarantine["reason"]))
    assert reasons[1].startswith("truncated JSON")
    assert reasons[2] == "missing required field _operation_type_"
    assert reasons[3] == "unknown _operation_type_ 'X'"
    assert reasons[4] == "_sequence_id_ is null"
    assert reasons[5] == "_excute_time_ is not epoch milliseconds: 'yesterday'"
    assert reasons[6] == "a U row needs exactly one of _before_image_, _after_image_ = 'Y', got 'N', 'N'"
    assert reasons[7] == "_source_table_ is not text: ['db', 't']"
    assert reasons[8] == "missing required field _operation_type_ (it looks like a datahub_blob message)"
    assert quarantine["raw"].tolist()[0] == lines[1]
    report = events.attrs["report"]
    assert (report["messages"], report["decoded"], report["quarantined"]) == (10, 2, 8)


def test_a_text_line_is_not_a_row():
    events = cdckit.read(["just some text"], dialect="datahub_tuple")
    assert cdckit.quarantine(events).loc[0, "reason"] == (
        "expected a DataHub Tuple row (an object of columns), got text")


def test_errors_raise_names_source_offset_reason_and_keeps_what_was_decoded(tmp_path):
    path = tmp_path / "topic.csv"
    path.write_text("id,_sequence_id_,_operation_type_,_excute_time_,_source_table_,_before_image_,_after_image_\n"
                    "1,1,I,1649991726000,db.t,N,Y\n"
                    "2,2,I,1649991726000,db.t,N,Y\n"
                    "3,3,Q,1649991726000,db.t,N,Y\n")
    with pytest.raises(cdckit.DecodeError) as caught:
        cdckit.read(path, dialect="datahub_tuple", errors="raise")
    err = caught.value
    assert (err.source, err.offset) == (str(path), 2)
    assert str(err) == f"{path}, message 2: unknown _operation_type_ 'Q'"
    assert err.partial["after"].tolist() == ['{"id":"1"}', '{"id":"2"}']
