"""The columnar pandas engine and the Spark engine give the oracle's answers (tests/oracle.py).

The captures are random and dirty (see tests/event_frames.py): shuffled,
redelivered, with key changes, partial images, column deletes, keyless
tables, missing seq values and unknown keys. Every state, problem, finding
and SCD2 row must be the same, and so must the columns and their order.
"""

from __future__ import annotations

import json
import warnings

import oracle
import pandas as pd
import pytest
from comparable import row_texts
from comparable import rows as plain
from event_frames import captures
from hypothesis import HealthCheck, Phase, find, given, settings
from hypothesis import strategies as st

import cdckit
from cdckit import values
from cdckit.frame import Event
from cdckit.frame_builders import FrameBuilder

ORDERS = ("seq", "event_time", "arrival")
BYS = ("capture", "source", "partition")


def assert_same_states(got, want, label) -> None:
    assert list(got) == list(want), label
    for table in want:
        assert list(got[table].columns) == list(want[table].columns), (label, table)
        assert plain(got[table]) == plain(want[table]), (label, table)
        assert got[table].dtypes.tolist() == want[table].dtypes.tolist(), (label, table)
    assert plain(got.problems) == plain(want.problems), label
    assert got.keyless == want.keyless, label


def assert_same_tables(got, want, label) -> None:
    assert list(got) == list(want), label
    for table in want:
        assert list(got[table].columns) == list(want[table].columns), (label, table)
        assert plain(got[table]) == plain(want[table]), (label, table)


def assert_same_reports(got, want, label) -> None:
    assert got.by == want.by
    for name in want:
        assert plain(got[name]) == plain(want[name]), (label, name)


def scd2_or_none(scd2, events, **options):
    """scd2's tables; none where no table has key columns (scd2 says so: the oracle answers none)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the keyless tables left out
        try:
            return scd2(events, **options)
        except cdckit.KeylessTableError as err:
            assert err.tables and "with_keys" in str(err)
            return {}


def _cut(events: pd.DataFrame):
    times = events["event_time"].dropna().sort_values()
    return times.iloc[len(times) // 2] if len(times) else None


SETTINGS = settings(max_examples=25, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@pytest.mark.filterwarnings("ignore:materialize.*found no row to change:UserWarning")  # keyless rows on purpose (the warning: test_value_only_capture)
@SETTINGS
@given(events=captures(streams=2))
def test_pandas_replay_agrees_with_the_oracle(events):
    # The oracle replays; it does not type (tests/test_tables.py checks the typing): untyped states compared.
    for order in ORDERS:
        assert_same_states(cdckit.materialize(events, order=order, typed=False), oracle.materialize(events, order=order),
                           order)
    cut = _cut(events)
    if cut is not None:
        assert_same_states(cdckit.materialize(events, as_of=cut, typed=False), oracle.materialize(events, as_of=cut),
                           "as_of")
    assert_same_tables(scd2_or_none(cdckit.scd2, events, typed=False), oracle.scd2(events), "scd2")
    keyed = events[events["key"].notna() & events["table"].notna()].drop_duplicates(["table", "key"])
    for table, key in keyed[["table", "key"]].head(4).itertuples(index=False):
        assert plain(cdckit.history(events, table, key)) == plain(oracle.history(events, table, key)), (table, key)


def test_a_truncate_changes_only_the_rows_live_at_it():
    """An insert without an after image points at the truncate that removed its key, not at a later truncate
    (which found the key gone already), as the oracle's walk says (found by the property test below)."""
    builder = FrameBuilder()
    image = values.image({"id": 4, "name": "n"})
    for offset, op in enumerate(["insert", "truncate", "truncate"]):
        builder.add(Event(op=op, op_raw=op.upper(), database="shop", table="orders", event_time=None, seq=None,
                          key_columns=["id"] if op == "insert" else None, key="[4]" if op == "insert" else None,
                          before=None, after=image if op == "insert" else None), "canal", "a.jsonl", offset)
    builder.add(Event(op="insert", op_raw="INSERT", database="shop", table="orders", event_time=None, seq="000006",
                      key_columns=["id"], key="[4]", before=None, after=None), "canal", "b.jsonl", 0)
    events = builder.to_pandas()
    report = cdckit.order_report(events, by="capture")  # one stream: b.jsonl's insert follows a.jsonl's changes
    found = report["impossible_transitions"]
    assert found[["source", "other_source", "other_offset"]].values.tolist() == [["b.jsonl", "a.jsonl", 1]]
    assert_same_reports(report, oracle.order_report(events, by="capture"), "capture")


@SETTINGS
@given(events=captures(streams=2), by=st.sampled_from(BYS))
def test_pandas_order_report_agrees_with_the_oracle(events, by):
    assert_same_reports(cdckit.order_report(events, by=by), oracle.order_report(events, by=by), by)


def _moves_a_key(events: pd.DataFrame) -> bool:
    return bool(events["after"].fillna("").str.contains("moved").any())


#: What the random captures must be able to hold, or the agreement above would prove little.
FEATURES = {
    "inversions": lambda e: len(oracle.order_report(e)["inversions"]) > 0,
    "redeliveries": lambda e: len(oracle.order_report(e)["redeliveries"]) > 0,
    "impossible transitions": lambda e: len(oracle.order_report(e)["impossible_transitions"]) > 0,
    "time inversions": lambda e: len(oracle.order_report(e)["time_inversions"]) > 0,
    "open transactions": lambda e: len(oracle.order_report(e)["open_transactions"]) > 0,
    "sequence gaps": lambda e: len(oracle.order_report(e)["sequence_gaps"]) > 0,
    "replay problems": lambda e: len(oracle.materialize(e).problems) > 0,
    "keyless tables": lambda e: len(oracle.materialize(e).keyless) > 0,
    "key changes": lambda e: _moves_a_key(e) and len(oracle.materialize(e)) > 0,
    "partial images": lambda e: bool((e["dialect"].isin(["shareplex", "universe"]) & (e["op"] == "update")).any()),
    "truncates of live rows": lambda e: bool((e["op"] == "truncate").any()) and any(
        len(rows) for rows in oracle.materialize(e[e.index < e.index[e["op"] == "truncate"][-1]]).values()),
}


@pytest.mark.parametrize("feature", sorted(FEATURES))
def test_random_captures_reach(feature):
    find(captures(streams=2), FEATURES[feature],
         settings=settings(max_examples=500, database=None, deadline=None, phases=[Phase.generate],
                           suppress_health_check=list(HealthCheck)))


# --------------------------------------------------------------------------- Spark


def _to_spark(spark, events: pd.DataFrame):
    import pyarrow as pa
    from pyspark.sql.pandas.types import from_arrow_schema

    from cdckit.frame import COLUMN_NAMES
    from cdckit.spark.engine import COMBINED_ARROW

    schema = pa.schema([COMBINED_ARROW.field(n) for n in COLUMN_NAMES])
    return spark.createDataFrame(events[COLUMN_NAMES], schema=from_arrow_schema(schema))


# Spark jobs are slow to shrink: a failure is reported as found.
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
          phases=[Phase.explicit, Phase.reuse, Phase.generate])
@given(events=captures(streams=4, max_steps=30), by=st.sampled_from(BYS))
def test_spark_agrees_with_the_oracle(spark, events, by):
    from cdckit import spark as cdcspark

    frame = _to_spark(spark, events).cache()
    quarantine = spark.createDataFrame(cdckit.quarantine(events)) if len(cdckit.quarantine(events)) else None
    assert_same_reports(cdcspark.order_report(frame, quarantine, by=by), oracle.order_report(events, by=by), by)
    want = oracle.materialize(events)
    got = cdcspark.materialize(frame)
    assert list(got) == list(want)
    for table in want:
        assert list(got[table].columns) == list(want[table].columns), table
        assert row_texts(got[table]) == row_texts(want[table]), table
    assert plain(got.problems) == plain(want.problems)
    assert got.keyless == want.keyless
    spark_scd2 = scd2_or_none(cdcspark.scd2, frame)
    want_scd2 = oracle.scd2(events)
    assert sorted(spark_scd2) == sorted(want_scd2)
    for table in want_scd2:
        assert spark_scd2[table].count() == len(want_scd2[table]), table
    frame.unpersist()


IMAGE_SETS = {
    "ints with nulls and absences": ['{"id":1,"q":5}', '{"id":2,"q":null}', '{"id":3}'],
    "ints and floats": ['{"id":1,"q":5}', '{"id":2,"q":2.5}', '{"id":3,"q":-0.0}'],
    "bools with nulls": ['{"id":1,"b":true}', '{"id":2,"b":null}'],
    "texts": ['{"id":1,"s":"é\\n\\u0000x"}', '{"id":2,"s":""}', '{"id":3}'],
    "all null": ['{"id":1,"n":null}', '{"id":2}'],
    "time-like text": ['{"id":1,"t":"2024-05-01T10:00:00"}'],
    "nested": ['{"id":1,"o":{"a":1}}', '{"id":2,"o":[1,2]}'],
    "long number": ['{"id":1,"d":1.0000000000000000000001}'],
    "kind changes": ['{"id":1,"k":1}', '{"id":2,"k":"one"}'],
}


def test_spark_problems_at_one_place_keep_the_replay_order(spark):
    """Two problems at one source and offset (two partitions) come in replay (seq) order, as pandas gives them
    (updates without an after image: refused whatever the row's state)."""
    from cdckit import spark as cdcspark
    from cdckit.frame import Event
    from cdckit.frame_builders import FrameBuilder

    builder = FrameBuilder()
    for partition, seq, key in ((0, "000003", 5), (1, "000001", 6)):  # the later seq first in the frame
        builder.add(Event(op="update", op_raw="UPDATE", database="shop", table="t", seq=seq, key_columns=["id"],
                          key=f"[{key}]", before=f'{{"id":{key}}}'), "canal", "b.jsonl", 1, partition)
    events = builder.to_pandas()
    events.attrs["quarantine"] = cdckit.capture.Attached(cdckit.frame.empty_quarantine(), "none")
    want = cdckit.materialize(events).problems
    assert list(want["key"]) == ["[6]", "[5]"]
    assert plain(cdcspark.materialize(_to_spark(spark, events)).problems) == plain(want)


def test_a_stream_fills_a_missing_seq_from_its_own_changes(spark):
    """The report replays each stream as a capture of its own: a change without a seq takes its place from the
    change before it in its stream, not from another dialect's change between them in the file (the first
    insert again is the second of the two, in pandas, in Spark and in the oracle)."""
    from cdckit import spark as cdcspark
    from cdckit.frame import Event
    from cdckit.frame_builders import FrameBuilder

    builder = FrameBuilder()
    for offset, dialect, seq, key in ((0, "maxwell", "000010", 2), (1, "canal", "000005", 9), (2, "maxwell", None, 2)):
        builder.add(Event(op="insert", op_raw="insert", database="shop", table="t", seq=seq, key_columns=["id"],
                          key=f"[{key}]", after=f'{{"id":{key}}}'), dialect, "a.jsonl", offset, None)
    events = builder.to_pandas()
    events.attrs["quarantine"] = cdckit.capture.Attached(cdckit.frame.empty_quarantine(), "none")
    for by in BYS:
        want = oracle.order_report(events, by=by)["impossible_transitions"]
        assert list(want["offset"]) == [2] and list(want["other_offset"]) == [0], by
        assert plain(cdckit.order_report(events, by=by)["impossible_transitions"]) == plain(want), by
        got = cdcspark.order_report(_to_spark(spark, events), None, by=by)["impossible_transitions"]
        assert plain(got) == plain(want), by


def test_spark_takes_equal_snapshot_rows_at_one_position_for_distinct_rows(spark):
    """A snapshot gives every row one seq: equal rows of a keyless table are distinct by their offsets, while a
    change sent again and a snapshot row read twice at one place are redeliveries, in Spark as in pandas."""
    from cdckit import spark as cdcspark
    from cdckit.frame import Event
    from cdckit.frame_builders import FrameBuilder

    builder = FrameBuilder()
    rows = [("read", "s:4", '{"v":1}', 0), ("read", "s:4", '{"v":1}', 1), ("read", "s:4", '{"v":1}', 2),
            ("insert", "s:9", '{"v":2}', 3), ("insert", "s:9", '{"v":2}', 4), ("read", "s:4", '{"v":1}', 1)]
    for op, seq, after, offset in rows:
        builder.add(Event(op=op, op_raw=op[0], database="shop", table="log", seq=seq, after=after),
                    "debezium", "c.jsonl", offset, 0)
    events = builder.to_pandas()
    events.attrs["quarantine"] = cdckit.capture.Attached(cdckit.frame.empty_quarantine(), "none")
    want = cdckit.materialize(events)["shop.log"]
    assert sorted(want["v"].tolist()) == [1, 1, 1, 2]
    frame = _to_spark(spark, events)
    assert row_texts(cdcspark.materialize(frame)["shop.log"]) == row_texts(want)
    found = cdcspark.order_report(frame, None, by="capture")["redeliveries"]
    assert sorted(found["offset"].tolist()) == [1, 4]
    assert plain(found) == plain(cdckit.order_report(events, by="capture")["redeliveries"])


@pytest.mark.parametrize("name", sorted(IMAGE_SETS))
def test_images_frame_types_like_parsed_rows(name):
    """The one-pass Arrow reading of images gives what parsing them one by one gives, or declines."""
    from cdckit import values
    from cdckit.python_columns import object_columns

    texts = IMAGE_SETS[name]
    columns = ["id", "q", "b", "s", "n", "t", "o", "d", "k"]
    fast = values.images_frame(texts, columns)
    # parsed one by one, texts as Python objects (as the replay's row-by-row frame holds them on any pandas)
    slow = object_columns(pd.DataFrame([{c: values.loads(t).get(c) for c in columns} for t in texts], columns=columns))
    if name in ("time-like text", "nested", "long number", "kind changes"):
        assert fast is None
        return
    assert fast is not None
    assert fast.dtypes.tolist() == slow.dtypes.tolist()
    assert plain(fast) == plain(slow)
    assert fast.map(type).equals(slow.map(type))


def _replayed_report_events() -> pd.DataFrame:
    """A capture with what the report now takes from replay (issue 38): a snapshot, then an insert of its live key
    twice (refused: a semantic duplicate whose cause is the row's history), an update of a key the snapshot did not
    have, a keyless delete that finds no row, equal keyless inserts (a duplicate replay takes), and Debezium
    transaction ids ``txId:LSN`` whose begin and commit meet only once cut, one commit placed before its begin."""
    from cdckit.frame import Event
    from cdckit.frame_builders import FrameBuilder

    def change(op, seq, table="t", key=None, before=None, after=None, txn=None):
        return Event(op=op, op_raw=op, database="shop", table=table, seq=seq, txn_id=txn,
                     key_columns=["id"] if key else None, key=key, before=before, after=after)

    rows = [
        change("begin", "01", table=None, txn="729:10"),
        change("read", "02", key="[1]", after='{"id":1,"v":1}'),
        change("insert", "03", key="[1]", after='{"id":1,"v":1}'),
        change("insert", "04", key="[1]", after='{"id":1,"v":1}', txn="729:11"),
        change("update", "05", key="[2]", before='{"id":2}', after='{"id":2,"v":3}'),
        change("delete", "06", table="k", before='{"v":9}'),
        change("insert", "07", table="k", after='{"v":1}'),
        change("insert", "08", table="k", after='{"v":1}'),
        change("commit", "09", table=None, txn="729:20"),
        change("begin", "10", table=None, txn="800:1"),
        change("commit", "005", table=None, txn="800:3"),
    ]
    builder = FrameBuilder()
    for offset, event in enumerate(rows):
        builder.add(event, "debezium", "a.jsonl", offset)
    events = builder.to_pandas()
    events.attrs["quarantine"] = cdckit.capture.Attached(cdckit.frame.empty_quarantine(), "none")
    return events


def test_spark_report_takes_replays_refusals_as_pandas_does(spark):
    """The Spark report's impossible transitions, unmatched rows, duplicate causes and open transactions are those
    of pandas and the oracle on a capture made to have each."""
    from cdckit import spark as cdcspark

    events = _replayed_report_events()
    want = cdckit.order_report(events)
    assert set(want["impossible_transitions"]["detail"]) == {
        "insert of a live key (row replaced)", "update of a key the snapshot did not have"}
    assert len(want["unmatched_rows"]) == 1 and len(want["semantic_duplicates"]) == 2
    assert len(want["open_transactions"]) == 0
    assert_same_reports(want, oracle.order_report(events), "pandas")
    assert_same_reports(cdcspark.order_report(_to_spark(spark, events)), want, "spark")


def test_a_quarantined_record_holds_its_offset_in_both_engines(spark, tmp_path):
    """A damaged Kafka record is quarantined at its partition and offset (kcat -J writes bytes that are not UTF-8
    as they are): it arrived, so it is no hole in the offsets; a record that is missing is one, in both engines."""
    from cdckit import spark as cdcspark

    def line(offset: int, payload: bytes) -> bytes:
        head = b'{"topic":"t","partition":1,"offset":%d,"tstype":"create","ts":1700000000000,"key":"{\\"id\\":%d}",'
        return head % (offset, offset) + b'"payload":' + payload + b"}"

    def value(offset: int) -> bytes:
        body = {"op": "c", "before": None, "after": {"id": offset}, "ts_ms": 1700000000000,
                "source": {"connector": "postgresql", "db": "d", "schema": "s", "table": "t", "lsn": 100 + offset}}
        return json.dumps(json.dumps(body)).encode()

    lines = [line(o, value(o)) for o in range(6)]
    lines[2] = line(2, b'"' + bytes([255, 254]) + b'"')  # not UTF-8
    lines[4] = line(4, b'"{\\"op\\": \\"c\\""')  # cut JSON
    path = tmp_path / "topic.jsonl"
    path.write_bytes(b"\n".join(lines[:5] + lines[6:]) + b"\n" + line(7, value(7)) + b"\n")  # offset 5, 6: lost
    events = cdckit.read(path)
    assert sorted(cdckit.quarantine(events)[["partition", "offset"]].values.tolist()) == [[1, 2], [1, 4]]
    want = cdckit.order_report(events)
    assert want["offset_gaps"][["offset", "other_offset", "count"]].values.tolist() == [[7, 3, 2]]
    spark_events = cdcspark.read(spark, str(path))
    got = cdcspark.order_report(spark_events, cdcspark.quarantine(spark_events))
    assert_same_reports(got, want, "spark")
