"""The columnar order report (cdckit.analysis.ordering.kernels) gives exactly the per-event oracle's (tests/oracle.py).

Every finding frame is compared row by row (after the report's own stable
sort), for every grouping (``by``): on every bundled sample, on a directory
of several dialects, on shuffled and redelivered histories, and on random
hand-built frames that mix keyless rows, seq ties, missing partitions,
transaction markers with and without ids, heartbeats and contiguous seqs.
"""

from __future__ import annotations

import shutil

import numpy as np
import oracle
import pandas as pd
import pytest
from histories import SEQ_DIALECTS, capture, deliver
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import cdckit
from cdckit.analysis.ordering import OrderReport, codes
from cdckit.analysis.ordering.catalogue import FINDINGS
from cdckit.analysis.ordering.identity import STREAMS
from cdckit.analysis.ordering.report import _sorted
from cdckit.frame import CHANGE_OPS, COLUMN_NAMES

BYS = list(STREAMS)


def records(frame: pd.DataFrame) -> list[dict]:
    return frame.astype(object).where(frame.notna(), None).to_dict("records")


def assert_same_report(events: pd.DataFrame, by: str, **options) -> OrderReport:
    """cdckit's report equals the oracle's, finding by finding; returns cdckit's."""
    got = cdckit.order_report(events, by=by, **options)
    want = oracle.order_report(events, by=by, **options)
    assert got.by == want.by == by
    for name in FINDINGS:
        assert list(got[name].columns) == list(want[name].columns), name
        assert records(got[name]) == records(want[name]), (name, by)
    return got


def events_of(rows: list[dict]) -> pd.DataFrame:
    """A canonical frame from partial rows (offsets in list order unless given; times in seconds)."""
    defaults = {c: None for c in COLUMN_NAMES}
    defaults.update(dialect="canal", source="s.jsonl", database="shop", table="items")
    frame = pd.DataFrame([{**defaults, "offset": i, **row} for i, row in enumerate(rows)], columns=COLUMN_NAMES)
    frame["offset"] = frame["offset"].astype("int64")
    frame["partition"] = frame["partition"].astype("Int64")
    for column in ("event_time", "emit_time"):
        frame[column] = pd.to_datetime(frame[column].astype("float64"), unit="s", utc=True)
    return frame


# --------------------------------------------------------------------------- bundled samples and files


@pytest.mark.parametrize("name", cdckit.samples.list())
def test_every_sample_matches_the_oracle(name):
    events = cdckit.read(cdckit.samples.path(name))
    for by in BYS:
        assert_same_report(events, by)


def test_directory_of_dialects_sharing_table_names(tmp_path):
    """Two canal files cut from one history: by source nothing is wrong; by capture the later file came first."""
    lines = cdckit.samples.raw("canal/shop").splitlines()
    half = len(lines) // 2
    (tmp_path / "1_late.jsonl").write_text("\n".join(lines[half:]) + "\n")
    (tmp_path / "2_early.jsonl").write_text("\n".join(lines[:half]) + "\n")
    shutil.copy(cdckit.samples.path("debezium/shop"), tmp_path / "debezium.jsonl")
    shutil.copy(cdckit.samples.path("maxwell/shop"), tmp_path / "maxwell.jsonl.gz")
    events = cdckit.read(tmp_path)
    assert set(events["dialect"]) == {"canal", "debezium", "maxwell"}

    by_source = assert_same_report(events, "source")
    assert by_source["inversions"].empty and by_source["impossible_transitions"].empty
    by_capture = assert_same_report(events, "capture")
    assert len(by_capture["inversions"]) > 0
    crossing = by_capture["inversions"]
    assert set(crossing["source"].str.endswith("2_early.jsonl")) == {True}
    assert set(crossing["other_source"].str.endswith("1_late.jsonl")) == {True}
    assert_same_report(events, "partition")


def test_a_file_delivered_twice_is_redelivered_only_across_the_capture(tmp_path):
    shutil.copy(cdckit.samples.path("canal/shop"), tmp_path / "a.jsonl")
    shutil.copy(cdckit.samples.path("canal/shop"), tmp_path / "b.jsonl")
    events = cdckit.read(tmp_path)
    assert assert_same_report(events, "source")["redeliveries"].empty
    changes = events["op"].isin(CHANGE_OPS) & events["seq"].notna()
    found = assert_same_report(events, "capture")["redeliveries"]
    assert len(found) == changes.sum() // 2
    assert set(found["source"].str.endswith("b.jsonl")) == {True}


# --------------------------------------------------------------------------- histories

STEPS = st.lists(st.tuples(st.sampled_from(["insert", "insert", "update", "update", "delete"]),
                           st.integers(0, 50)), min_size=2, max_size=14)


@pytest.mark.parametrize("dialect", SEQ_DIALECTS)
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), steps=STEPS)
def test_shuffled_redelivered_histories_match_the_oracle(dialect, data, steps):
    cap = capture(dialect, steps)
    order = data.draw(st.permutations(range(len(cap.units))), label="arrival")
    repeats = data.draw(st.lists(st.tuples(st.integers(0, len(cap.units) - 1), st.integers(0, 100)),
                                 max_size=3, unique_by=lambda r: r[0]), label="redelivered")
    messages, _ = deliver(cap, order, repeats)
    events = cdckit.read(messages, dialect=dialect, errors="raise")
    for by in BYS:
        assert_same_report(events, by)


# --------------------------------------------------------------------------- hand-built frames

IMAGES = [None, '{"id":1,"v":1}', '{"id":1,"v":2}', '{"id":2,"v":1}']

ROW = st.fixed_dictionaries({
    "dialect": st.sampled_from(["canal", "universe", "datahub_blob", "shop_scenario"]),
    "source": st.sampled_from(["a", "b"]),
    "partition": st.one_of(st.none(), st.sampled_from([0, 1])),
    "offset": st.integers(0, 9),
    "op": st.sampled_from(["insert", "update", "delete", "read", "begin", "commit", "heartbeat", "ddl"]),
    "database": st.sampled_from(["shop", None]),
    "table": st.sampled_from(["items", "orders", None]),
    "key": st.sampled_from([None, "[1]", "[2]"]),
    "seq": st.sampled_from([None, "1", "2", "3", "9", "10", "12", "x"]),
    "event_time": st.one_of(st.none(), st.integers(0, 30)),
    "emit_time": st.one_of(st.none(), st.integers(0, 30)),
    "txn_id": st.sampled_from([None, "t1", "t2", ""]),
    "before": st.sampled_from(IMAGES),
    "after": st.sampled_from(IMAGES),
})


#: Rows of one dialect, source and table, many of them transaction markers: many events meet in the same groups.
DENSE_ROW = st.tuples(ROW, st.sampled_from(["begin", "commit", None]), st.sampled_from([None, None, "t1"])).map(
    lambda drawn: dict(drawn[0], dialect="universe", source="a", table="items", partition=drawn[0]["partition"] and 1,
                       op=drawn[1] or drawn[0]["op"], txn_id=drawn[2] if drawn[1] else drawn[0]["txn_id"]))


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rows=st.lists(ROW, max_size=40), max_gap=st.integers(1, 12), factor=st.sampled_from([1.5, 3.0]))
def test_random_frames_match_the_oracle(rows, max_gap, factor):
    events = events_of(rows)
    for by in BYS:
        assert_same_report(events, by, max_gap=max_gap, heartbeat_factor=factor)


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rows=st.lists(DENSE_ROW, max_size=30), max_gap=st.integers(1, 12))
def test_random_dense_frames_match_the_oracle(rows, max_gap):
    events = events_of(rows)
    for by in ("capture", "partition"):
        assert_same_report(events, by, max_gap=max_gap)


def test_keyless_rows_are_judged_per_row_and_ties_keep_arrival_order():
    events = events_of([
        {"op": "insert", "seq": "2", "after": '{"v":1}'},
        {"op": "delete", "seq": "1", "before": '{"v":1}'},         # inversion: the same row, a later change before
        {"op": "insert", "seq": "2", "after": '{"v":3}'},
        {"op": "insert", "seq": "1", "after": '{"v":4}'},          # another row: changes of two rows in any order
        {"op": "insert", "seq": "3", "after": '{"v":1}'},
        {"op": "insert", "seq": "3", "after": '{"v":1}'},          # redelivery of offset 4
        {"op": "insert", "seq": "4", "after": '{"v":1}'},          # the same change just after offset 4's
    ])
    report = assert_same_report(events, "source")
    assert report["inversions"][["offset", "other_offset"]].values.tolist() == [[1, 0]]
    assert report["semantic_duplicates"][["offset", "other_offset"]].values.tolist() == [[6, 4]]
    assert report["semantic_duplicates"]["detail"].str.contains("cannot tell").all()
    assert report["redeliveries"][["offset", "other_offset"]].values.tolist() == [[5, 4]]
    assert report["impossible_transitions"].empty
    assert report["unmatched_rows"][["offset", "detail"]].values.tolist() == [[1, "delete of a row not in the table"]]
    assert report["keyless_tables"]["count"].tolist() == [7]


@pytest.mark.xfail(strict=True, reason="rows without a key are grouped by the image a change starts from (its "
                   "before image, else its after image): an update chain X->Y, Y->Z delivered in reverse is not linked")
def test_a_reversed_update_chain_of_a_row_without_a_key_is_an_inversion():
    events = events_of([
        {"op": "insert", "seq": "1", "after": '{"v":1}'},
        {"op": "update", "seq": "3", "before": '{"v":2}', "after": '{"v":3}'},
        {"op": "update", "seq": "2", "before": '{"v":1}', "after": '{"v":2}'},  # after a later change of its row
    ])
    assert len(cdckit.order_report(events)["inversions"]) == 1


def test_equal_snapshot_rows_at_one_position_are_distinct_rows_and_a_change_delivered_again_is_a_redelivery():
    # a MySQL or PostgreSQL snapshot gives every row one source position: equal rows of a table without a key
    # differ only by their place in the capture; a change (not a snapshot row) sent again is a redelivery
    same = {"op": "read", "seq": "binlog.1:4:0", "after": '{"v":1}', "key": None}
    events = events_of([same, same, same, {"op": "insert", "seq": "binlog.1:9:0", "after": '{"v":2}'},
                        {"op": "insert", "seq": "binlog.1:9:0", "after": '{"v":2}'},
                        {**same, "offset": 1}])  # the second snapshot row read twice: the same place again
    report = assert_same_report(events, "capture")
    assert report["redeliveries"][["offset", "other_offset"]].values.tolist() == [[1, 1], [4, 3]]
    state = cdckit.materialize(events)["shop.items"]
    assert sorted(state["v"].tolist()) == [1, 1, 1, 2]


def test_transitions_follow_seq_order_and_key_changes():
    events = events_of([
        {"op": "read", "key": "[1]", "seq": "1", "table": "t", "after": '{"v":1}'},
        {"op": "update", "key": "[2]", "seq": "2", "table": "t", "after": '{"v":2}'},  # the snapshot did not have it
        {"op": "delete", "key": "[1]", "seq": "4", "table": "t"},
        {"op": "update", "key": "[1]", "seq": "5", "table": "t", "after": '{"v":3}'},  # after the delete
        {"op": "insert", "key": "[1]", "seq": "3", "table": "t", "after": '{"v":4}'},  # in seq order: a live key
    ])
    report = assert_same_report(events, "capture")
    found = report["impossible_transitions"]
    assert [list(r.values()) for r in records(found[["offset", "other_offset", "detail"]])] == [
        [1, None, "update of a key the snapshot did not have"], [3, 2, "update after the key was deleted"],
        [4, 0, "insert of a live key (row replaced)"]]
    assert report["inversions"]["offset"].tolist() == [4]
    assert_refusals_are_the_errors(events, report)


def test_a_truncate_empties_the_table_and_a_key_change_moves_the_row():
    move = {"key_columns": ["id"], "table": "t"}
    events = events_of([
        {"op": "insert", "key": "[1]", "seq": "1", "after": '{"id":1}', **move},
        {"op": "insert", "key": "[2]", "seq": "2", "after": '{"id":2}', **move},
        {"op": "truncate", "key": None, "seq": "3", "table": "t"},
        {"op": "insert", "key": "[1]", "seq": "4", "after": '{"id":1}', **move},   # not live: truncated
        {"op": "delete", "key": "[2]", "seq": "5", "before": '{"id":2}', **move},  # gone with the truncate
        {"op": "update", "key": "[3]", "seq": "6", "before": '{"id":1}', "after": '{"id":3}', **move},  # 1 -> 3
        {"op": "insert", "key": "[1]", "seq": "7", "after": '{"id":1}', **move},   # 1 moved away: free again
        {"op": "update", "key": "[3]", "seq": "8", "before": '{"id":3}', "after": '{"id":3,"v":1}', **move},
    ])
    for by in ("capture", "source", "partition"):
        report = assert_same_report(events, by)
        found = report["impossible_transitions"]
        assert found[["offset", "other_offset", "detail"]].values.tolist() == [
            [4, 2, "delete after the key was deleted"]], by
        assert_refusals_are_the_errors(events, report)


def assert_refusals_are_the_errors(events, report):
    """Every change replay refuses is a finding of the report, and every error finding is one replay refuses."""
    problems = cdckit.materialize(events, typed=False).problems
    refused = {(r["source"], r["offset"], r["problem"]) for r in records(problems)}
    errors = report["impossible_transitions"]
    keyless = report["unmatched_rows"]
    found = {(r["source"], r["offset"], r["detail"]) for frame in (errors, keyless) for r in records(frame)}
    assert refused == found


def test_transactions_with_and_without_ids():
    events = events_of([
        {"op": "begin", "txn_id": "t1", "seq": "1"},
        {"op": "begin", "seq": "2"},
        {"op": "begin", "seq": "3"},
        {"op": "commit", "txn_id": "t1", "seq": "4"},   # closes t1
        {"op": "commit", "txn_id": "t1", "seq": "5"},   # t1 again (an END repeated): no anonymous begin closes
        {"op": "begin", "txn_id": "t2", "seq": "6"},
        {"op": "begin", "txn_id": "t2", "seq": "7"},    # the last begin of t2, never committed
        {"op": "begin", "txn_id": "", "seq": "8", "partition": 3},  # an empty id is an id, shown as none
    ])
    found = assert_same_report(events, "source")["open_transactions"]
    assert found[["offset", "detail"]].values.tolist() == [
        [1, "a transaction without an id begins here; no commit follows"],
        [2, "a transaction without an id begins here; no commit follows"],
        [6, "transaction t2 begins here; no commit follows"],
        [7, "a transaction without an id begins here; no commit follows"]]


def test_heartbeat_gaps_sequence_gaps_and_offset_gaps():
    beats = [{"op": "heartbeat", "event_time": t, "dialect": "oceanbase_extend"} for t in (0, 1, 2, 3, 10, 11)]
    between = [{"op": "insert", "event_time": t, "dialect": "oceanbase_extend", "key": "[1]"} for t in (3, 5, 10)]
    report = assert_same_report(events_of(beats + between), "source")
    assert report["heartbeat_gaps"][["value", "count", "detail"]].values.tolist() == [
        [7.0, 1, "7 s without a heartbeat (usual 1 s); 1 other event(s) in between"]]

    # seq order is text order: 1, 1500, 2, 5 (a jump over max_gap starts a new run) and 2, 6
    numbered = events_of([{"dialect": "universe", "op": "insert", "key": f"[{i}]", "seq": s, "partition": p,
                           "offset": o} for i, (s, p, o) in enumerate([("1", None, 0), ("2", None, 1), ("5", None, 5),
                                                                       ("1500", None, 6), ("2", 1, 0), ("6", 1, 3),
                                                                       (f"{10**20}", 2, 0), (f"{10**20 + 3}", 2, 1)])])
    report = assert_same_report(numbered, "partition")
    assert report["sequence_gaps"][["seq", "other_seq", "count", "detail"]].values.tolist() == [
        ["5", "2", 2, "universe: 2 number(s) missing after 2"], ["6", "2", 3, "universe: 3 number(s) missing after 2"],
        [f"{10**20 + 3}", f"{10**20}", 2, f"universe: 2 number(s) missing after {10**20}"]]
    assert report["offset_gaps"][["offset", "other_offset", "count"]].values.tolist() == [[3, 0, 2]]


def test_a_hash_collision_falls_back_to_the_texts(monkeypatch):
    """Every image hashes alike: the pairs found are checked on the texts, and exact codes give the answer."""
    monkeypatch.setattr(codes, "image_hashes", lambda images: np.zeros(len(images), np.uint64))
    events = events_of([{"op": "insert", "key": "[1]", "seq": "1", "after": '{"v":1}'},
                        {"op": "insert", "key": "[1]", "seq": "1", "after": '{"v":2}'},   # no copy of offset 0
                        {"op": "insert", "key": "[1]", "seq": "2", "after": '{"v":2}'}])  # offset 1's again
    report = assert_same_report(events, "source")
    assert report["redeliveries"].empty and report["semantic_duplicates"]["offset"].tolist() == [2]


def test_the_report_sort_is_pandas_stable_sort():
    rng = np.random.default_rng(3)
    frame = pd.DataFrame({
        "table": pd.array(rng.choice(["b", "a", "é", "Z", None], 300), dtype="string"),
        "source": pd.array(rng.choice(["s", "t"], 300), dtype="string"),
        "partition": pd.array(rng.choice([1, 0, None], 300), dtype="Int64"),
        "offset": pd.array(rng.integers(0, 5, 300), dtype="Int64"),
        "detail": pd.array([str(i) for i in range(300)], dtype="string"),
    })
    want = frame.sort_values(["table", "source", "partition", "offset"], kind="stable", na_position="first")
    assert _sorted(frame)["detail"].tolist() == want["detail"].tolist()


def test_by_is_checked():
    with pytest.raises(ValueError, match="by must be one of"):
        cdckit.order_report(events_of([]), by="table")
    for by in BYS:
        assert assert_same_report(events_of([]), by).problems() == 0
