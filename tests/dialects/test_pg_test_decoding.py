"""PostgreSQL test_decoding: the real captures decoded exactly (COPY and pg_recvlogical forms), values over
several lines, COPY escapes, seq in stream order, round trips, shop, bad input, detection, partial updates."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from validator import assert_quarantined, assert_round_trip, assert_rows, read_clean, row, rows

import cdckit
from cdckit.dialects import pg_test_decoding, registry
from cdckit.samples.shop import shop_events

NAME = "pg_test_decoding"
P = dict(database="public", schema="public", table="p")
FULL_T = dict(database="public", schema="public", table="full_t")
NOPK = dict(database="public", schema="public", table="nopk")
ODD = dict(database="My Schema", schema="My Schema", table="t.1")

#: The row the examples insert as id 1 (every kind of value test_decoding writes).
ROW_1 = {
    "id": 1, "name": "a'b \"q\" \\ x\nline2", "n": "12345678901234567890.1234567890", "r": 1.5, "d": "NaN",
    "ts": "2024-01-02 01:04:05.123456+00", "tsn": "2024-01-02 03:04:05", "dt": "2024-01-02", "b": "AP8=",
    "j": '{"k": [1, "two"], "s": "it\'s"}', "js": '{"a":1}', "a": [1, None, 3], "ta": ["a b", "c", None],
    "big": "y" * 2500, "f": True, "Odd Col": "héllo ✓ 日本", "bits": "0101",
    "u": "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", "iv": "1 day 02:00:00",
}
#: id 2: every column null but the special numbers.
ROW_2 = dict(dict.fromkeys(ROW_1), id=2, n="NaN", r="-Infinity", d="Infinity")


def seq(base: str, n: int) -> str:
    return f"00000000/{base}:{n:020d}"


def at(clock: str) -> str:
    return f"2026-11-26T23:53:{clock}Z"


class Txn:
    """Expected rows of one COPY transaction: BEGIN, its changes, COMMIT, seqs counted from ``base``."""

    def __init__(self, offset: int, xid: str, base: str) -> None:
        self.offset, self.xid, self.base, self.rows = offset, xid, base, []
        self.add(offset, "begin", "BEGIN")

    def add(self, offset: int, op: str, op_raw: str, **fields) -> Txn:
        fields.setdefault("txn_id", self.xid)
        self.rows.append(row(offset, op, op_raw, seq=seq(self.base, len(self.rows) + 1), **fields))
        return self

    def commit(self, offset: int, clock: str) -> list[dict]:
        self.add(offset, "commit", "COMMIT", event_time=at(clock))
        return self.rows


COPY_ROWS = [
    *Txn(0, "734", "0193BAB0").add(1, "insert", "INSERT", **P, after=ROW_1).commit(2, "13.844793"),
    *Txn(3, "735", "0193C828").add(4, "update", "UPDATE", **P, after={
        k: v for k, v in dict(ROW_1, name="changed").items() if k != "big"}).commit(5, "13.846373"),
    *Txn(6, "736", "0193C9F8").add(7, "insert", "INSERT", **P, after=ROW_2).commit(8, "13.847085"),
    *Txn(9, "737", "0193CAC0").add(10, "update", "UPDATE", **P, before={"id": 2}, after=dict(ROW_2, id=3))
                              .commit(11, "13.847707"),
    *Txn(12, "738", "0193CBA8").add(13, "delete", "DELETE", **P, before={"id": 3}).commit(14, "13.848300"),
    *Txn(15, "739", "0193CC20").add(16, "insert", "INSERT", **P, after=dict(
        dict.fromkeys(ROW_1), id=4, name="para1\n\npara2\n", n=0.1)).commit(17, "13.848745"),
    *Txn(18, "740", "0193CCE8").add(19, "insert", "INSERT", **ODD, after={"Key": 1, "it's": "O'Brien"})
                               .commit(20, "13.849397"),
    *Txn(21, "741", "0193CE00").add(22, "update", "UPDATE", **ODD, after={"Key": 1, "it's": ""})
                               .commit(23, "13.850075"),
    *Txn(24, "742", "0193CE78").add(25, "insert", "INSERT", **NOPK, after={"x": 1, "y": None}).commit(26, "13.850728"),
    *Txn(27, "743", "0193CEE8").add(28, "update", "UPDATE", **NOPK, after={"x": 1, "y": "a"}).commit(29, "13.851403"),
    *Txn(30, "744", "0193CF60").add(31, "delete", "DELETE", **NOPK).commit(32, "13.851826"),  # (no-tuple-data)
    *Txn(33, "745", "0193CFC8").add(34, "insert", "INSERT", **FULL_T, after={"id": 1, "v": "v1", "w": 10})
                               .commit(35, "13.852442"),
    *Txn(36, "746", "0193D0E0").add(37, "update", "UPDATE", **FULL_T, before={"id": 1, "v": "v1", "w": 10},
                                    after={"id": 1, "v": "v2", "w": 10}).commit(38, "13.852993"),
    *Txn(39, "747", "0193D170").add(40, "delete", "DELETE", **FULL_T, before={"id": 1, "v": "v2", "w": 10})
                               .commit(41, "13.853451"),
    *Txn(42, "748", "0193D1E8").commit(43, "13.855063"),  # CREATE TABLE: an empty transaction
    *Txn(44, "749", "0193E7B8").add(45, "insert", "INSERT", **FULL_T, after={"id": 10, "v": "kept", "w": 1})
                               .add(46, "insert", "INSERT", **FULL_T, after={"id": 12, "v": "kept too", "w": 3})
                               .commit(47, "13.856626"),  # id 11 was rolled back to a savepoint
    *Txn(48, "752", "0193E9C0").add(49, "other", "message",
                                    after={"transactional": True, "prefix": "pfx", "content": "hello"})
                               .commit(50, "13.857220"),
    row(51, "other", "message", seq=seq("0193EA30", 1),
        after={"transactional": False, "prefix": "audit", "content": "two\nlines"}),
    *[dict(r, seq=seq("0193EA30", n)) for n, r in enumerate(
        Txn(52, "753", "0193EA30").add(53, "insert", "INSERT", database="public", schema="public", table="parent",
                                       after={"id": 1}).commit(54, "13.858376"), start=2)],
    *Txn(55, "754", "0193EB88").add(56, "insert", "INSERT", database="public", schema="public", table="child",
                                    after={"id": 1, "pid": 1}).commit(57, "13.859860"),
    *Txn(58, "755", "0193ED38").add(59, "truncate", "TRUNCATE", **P).commit(60, "13.863313"),
    *Txn(61, "756", "0193FA28").add(62, "truncate", "TRUNCATE", database="public", schema="public", table="parent")
                               .add(62, "truncate", "TRUNCATE", database="public", schema="public", table="child")
                               .commit(63, "13.867763"),
    # two interleaved transactions: 757 began first, 758 committed first and comes first
    *Txn(64, "758", "01940A10").add(65, "insert", "INSERT", **FULL_T, after={"id": 30, "v": "T2 only", "w": 3})
                               .commit(66, "14.586874"),
    *Txn(67, "757", "01940B58").add(68, "insert", "INSERT", **FULL_T, after={"id": 20, "v": "T1 first", "w": 1})
                               .add(69, "insert", "INSERT", **FULL_T, after={"id": 21, "v": "T1 second", "w": 2})
                               .commit(70, "15.889638"),
]


def _keyed(rows: list[dict]) -> list[dict]:
    """Table p's rows with the key its old tuples prove (an old-key tuple and a delete of ``id`` alone, fewer
    columns than its rows): test_decoding names no key, the capture shows the replica identity."""
    out = []
    for r in rows:
        if r.get("table") == "p":
            image = r.get("before") if r["op"] == "delete" else r.get("after")
            r = dict(r, key_columns=["id"], key=[image["id"]] if image else None)
        out.append(r)
    return out


COPY_ROWS = _keyed(COPY_ROWS)


def plain_offset(copy_offset: int) -> int:
    """The pg_recvlogical file's message offset of a COPY row: the value of id 1 takes two lines, that of
    id 4 three (its blank line is not a message) and the audit message two."""
    return copy_offset + (0 if copy_offset == 0 else 1 if copy_offset < 16 else 3 if copy_offset < 51 else 4)


def decoded(text: str) -> pd.DataFrame:
    return cdckit.read(text, dialect=NAME)


# ---------------------------------------------------------------- the examples


def test_copy_examples_decode_exactly():
    assert_rows(read_clean(cdckit.samples.path(f"{NAME}/examples_copy.txt")), COPY_ROWS)


def test_pg_recvlogical_examples_decode_to_the_same_events_without_seq():
    events = read_clean(cdckit.samples.path(f"{NAME}/examples.txt"))
    assert_rows(events, [dict(r, offset=plain_offset(r["offset"]), seq=None) for r in COPY_ROWS])
    report = events.attrs["report"]
    assert report["messages"] == 75 and report["skipped"] == {
        "pg_test_decoding: a quoted value continues on the next line": 4}


def test_column_types_are_declared_from_the_type_annotations():
    types = cdckit.column_types_of(read_clean(cdckit.samples.path(f"{NAME}/examples.txt")))
    p = types[types["table"] == "public.p"].drop_duplicates("column").set_index("column")
    assert p.loc["n", ["type", "kind"]].tolist() == ["numeric", "decimal"]
    assert p.loc["a", ["type", "kind"]].tolist() == ["integer[]", "json"]
    assert p.loc["ts", ["type", "kind"]].tolist() == ["timestamp with time zone", "timestamp"]
    assert p.loc["Odd Col", "type"] == "character varying"
    assert len(types[types["table"] == "public.p"]) == 19  # declared once: the update repeats the same types
    odd = types[types["table"] == "My Schema.t.1"]
    assert odd["column"].tolist() == ["Key", "it's"]


def test_include_xids_off_and_no_timestamp():
    events = decoded("BEGIN\ntable public.t: INSERT: id[integer]:1\nCOMMIT\n")
    assert_rows(events, [row(0, "begin", "BEGIN"),
                         row(1, "insert", "INSERT", database="public", schema="public", table="t", after={"id": 1}),
                         row(2, "commit", "COMMIT")])


def test_a_truncate_of_several_tables_and_quoted_names():
    got = rows(decoded('table "My Schema"."a.b""c", public.x: TRUNCATE: restart_seqs cascade\n'))
    assert [(r["op"], r["schema"], r["table"]) for r in got] == [
        ("truncate", "My Schema", 'a.b"c'), ("truncate", "public", "x")]


# ---------------------------------------------------------------- values over several lines, COPY escapes


def test_values_over_several_lines_are_joined_and_blank_lines_put_back(tmp_path):
    path = tmp_path / "recv.txt"
    path.write_text("BEGIN 7\ntable public.t: INSERT: id[integer]:1 v[text]:'one\n\n\ntwo' w[text]:'x\n'\n"
                    "table public.t: INSERT: id[integer]:2 v[text]:'l1\nl2\nl3'\nCOMMIT 7\n")
    events = read_clean(path, dialect=NAME)
    assert [json.loads(a) for a in events["after"].dropna()] == [
        {"id": 1, "v": "one\n\n\ntwo", "w": "x\n"}, {"id": 2, "v": "l1\nl2\nl3"}]
    assert events["offset"].tolist() == [0, 3, 6, 7] and events["txn_id"].tolist() == ["7"] * 4
    # messages handed over one by one (no line numbers): a line each
    again = cdckit.read(["table public.t: INSERT: v[text]:'a", "b'"], dialect=NAME)
    assert json.loads(again.loc[0, "after"]) == {"v": "a\nb"}


def test_message_content_over_several_lines_is_joined_by_its_size():
    got = rows(decoded("message: transactional: 0 prefix: p, sz: 7 content:a\nb\nc d\n"))
    assert got[0]["after"] == {"transactional": False, "prefix": "p", "content": "a\nb\nc d"}


def test_copy_escapes_are_undone():
    line = "0/10\t5\ttable public.t: INSERT: v[text]:'a\\tb\\\\c\\r\\nd\\101' b[bytea]:'\\\\x00ff'\n"
    [got] = rows(decoded(line))
    assert got["after"] == {"v": "a\tb\\c\r\ndA", "b": "AP8="}
    assert (got["txn_id"], got["seq"]) == ("5", seq("00000010", 1))


def test_seq_follows_the_stream_though_the_lsns_do_not():
    path = cdckit.samples.path(f"{NAME}/examples_copy.txt")
    lsns = [int(a, 16) << 32 | int(b, 16) for a, b in
            (line.split("\t")[0].split("/") for line in path.read_text().splitlines())]
    assert lsns != sorted(lsns)  # BEGIN 757 has its first LSN, lower than COMMIT 758 before it
    events = read_clean(path)
    assert events["seq"].tolist() == sorted(events["seq"]) and events["seq"].is_unique
    # the interleaved transactions in commit order, by seq
    inserted = events[events["table"].eq("full_t") & events["txn_id"].isin(["757", "758"])].sort_values("seq")
    assert [json.loads(a)["v"] for a in inserted["after"]] == ["T2 only", "T1 first", "T1 second"]


# ---------------------------------------------------------------- round trips and shop


def test_round_trip_copy(tmp_path):
    # the COPY form is written back as pg_recvlogical lines: no LSNs, so no seq
    again = assert_round_trip(NAME, read_clean(cdckit.samples.path(f"{NAME}/examples_copy.txt")), tmp_path,
                              ignore=("seq",))
    assert again["seq"].isna().all()


def test_encoder_writes_lines_as_pg_recvlogical_does():
    events = decoded("BEGIN 9\ntable public.t: UPDATE: old-key: id[integer]:1 new-tuple: id[integer]:2 "
                     "v[text]:'it''s\nso' n[numeric]:1.50 f[boolean]:false z[text]:null\nCOMMIT 9\n")
    lines = [r.value for r in registry.create(NAME).encode(events)]
    assert lines == ["BEGIN 9", "table public.t: UPDATE: old-key: id[integer]:1 new-tuple: id[integer]:2 "
                     "v[text]:'it''s\nso' n[numeric]:1.5 f[boolean]:false z[text]:null", "COMMIT 9"]


def test_encoder_wraps_each_run_of_a_transaction_and_leaves_changes_without_one_alone():
    events = shop_events().head(3).copy()
    events.loc[2, "txn_id"] = None
    lines = [r.value for r in registry.create(NAME).encode(events)]
    assert lines[0] == "BEGIN 1000" and lines[3].startswith("COMMIT 1000 (at 2024-05-01 09:00:00")
    assert lines[4].startswith("table shop.customers: INSERT: id[bigint]:3 ") and len(lines) == 5


def test_shop():
    # test_decoding names no key columns, and only a COMMIT line carries a time: the changes have none and the
    # made-up COMMIT of each transaction has its last change's. shop (the scenario's database) is the schema.
    events = read_clean(cdckit.samples.path(f"{NAME}/shop"))
    assert cdckit.detect(cdckit.samples.path(f"{NAME}/shop")).dialect == NAME
    truth = [dict(r, schema="shop", key_columns=None, key=None, event_time=None)
             for r in rows(shop_events(), ["op", "database", "table", "event_time", "txn_id", "key_columns", "key",
                                           "before", "after"])]
    changes = events[~events["op"].isin(["begin", "commit"])]
    assert rows(changes, ["op", "database", "table", "event_time", "txn_id", "key_columns", "key", "before",
                          "after", "schema"]) == truth
    commit_times: list = []
    times = iter(shop_events()["event_time"])
    last = None
    for op in events["op"]:
        if op == "commit":
            commit_times.append(last)
        elif op != "begin":
            last = next(times)
    assert events.loc[events["op"] == "commit", "event_time"].tolist() == commit_times


def test_partial_update_merges_onto_the_row_with_keys_given():
    events = read_clean(cdckit.samples.path(f"{NAME}/examples.txt"))
    events = events[events["table"].eq("p") & events["op"].isin(["insert", "update"])].head(2).copy()
    events["key_columns"] = [["id"]] * len(events)
    events["key"] = "[1]"
    state = cdckit.materialize(events, order="arrival")["public.p"]
    assert state["name"].tolist() == ["changed"]
    assert state["big"].tolist() == ["y" * 2500]  # unchanged-toast-datum: kept from the insert


# ---------------------------------------------------------------- bad input


def test_bad_lines_are_quarantined(tmp_path):
    good = "table public.t: INSERT: id[integer]:1"
    assert_quarantined(NAME, good, [
        ("table public.t: UPSERT: id[integer]:1", "unknown operation 'UPSERT'"),
        ("table public.t: INSERT: id[integer]1", "column 'id': its [type] does not end"),
        ("table public.t INSERT: id[integer]:1", "a table name not followed by ': '"),
        ("table public.t: TRUNCATE: everything", "unknown TRUNCATE flags"),
        ("table public.t: DELETE: id[integer]:1 x", "column 'x' without [type]"),
        ("message: transactional: 1 prefix: p, sz: 2 content:abc", "message content of 3 bytes, sz says 2"),
        ("0/10\t5\ttable public.t: INSERT: v[text]:'open", "a quoted value does not end on its line"),
    ], tmp_path)


def test_an_unfinished_value_is_quarantined_when_a_whole_line_follows_or_the_input_ends(tmp_path):
    path = tmp_path / "cut.txt"
    path.write_text("table public.t: INSERT: v[text]:'never closed\nCOMMIT 5\n"
                    "table public.t: INSERT: v[text]:'cut\nat the end\n")
    events = cdckit.read(path, dialect=NAME)
    assert events["op"].tolist() == ["commit"]
    quarantine = cdckit.quarantine(events)
    # each line of a value given up is quarantined as itself, not counted as skipped any more
    assert quarantine["raw"].tolist() == ["table public.t: INSERT: v[text]:'never closed",
                                          "table public.t: INSERT: v[text]:'cut", "at the end"]
    assert quarantine["reason"].tolist() == [
        "a quoted value never ended: the next line is a test_decoding line of its own",
        "the input ended inside a quoted value", "the input ended inside a quoted value"]
    assert quarantine["offset"].tolist() == [0, 2, 3] and quarantine["line"].tolist() == [1, 3, 4]
    report = events.attrs["report"]
    assert report["messages"] == report["decoded"] + report["quarantined"] == 4
    assert report["quarantined"] == 3 and report["skipped"] == {}


# ---------------------------------------------------------------- detection


def test_detect_scores_and_claims_no_other_dialects_messages():
    dialect = registry.create(NAME)
    change = dialect.detect("table public.t: INSERT: id[integer]:1")
    assert change.score > dialect.detect("BEGIN 5").score > dialect.detect("BEGIN").score
    assert dialect.detect("0/16B2F48\t5\tBEGIN 5").score > dialect.detect("BEGIN 5").score
    for other in ("src=cssþns=CONTRACTSþop=uþdata=ý_id=1ýþ", {"table": "t", "type": "INSERT"}, "BEGINNING",
                  "table of contents: chapter 1", "COMMIT;"):
        assert dialect.detect(other) is None, other
    assert registry.create("universe").detect("table public.t: INSERT: id[integer]:1") is None


# ---------------------------------------------------------------- two-phase slots, stream-changes, inferred keys

DATA = Path(__file__).parent / "data" / NAME  # real output, see its README.md
#: The live tables when the two_phase captures were taken (g1 committed, g2 rolled back, g3 still prepared).
LIVE = {"public.customers": [[1, "ann2", None], [2, "bob", "x"], [4, "dan", "it's"], [5, "eve", None],
                             [10, "prep", None]],
        "public.lines": [[1, 1, 7]], "public.fulls": [[2, "z", 2]]}


def _state(events: pd.DataFrame) -> dict[str, list]:
    found = cdckit.materialize(events)
    return {table: sorted(found[table].astype(object).where(found[table].notna(), None).values.tolist())
            for table in LIVE}


@pytest.mark.filterwarnings("ignore:materialize.*found no row to change:UserWarning")  # keyless rows on purpose (the warning: test_value_only_capture)
@pytest.mark.parametrize("name", ["two_phase.txt", "two_phase_noxids.txt", "two_phase_ts_copy.txt"])
def test_a_two_phase_capture_replays_to_the_live_tables_without_keys_given(name):
    capture = cdckit.read(DATA / name, dialect=NAME, capture=True)
    assert capture.report["quarantined"] == 0
    assert _state(capture.events) == LIVE  # rolled back g2 and pending g3 never reach state; keys inferred
    skipped = capture.report["skipped"]
    assert skipped[pg_test_decoding.ROLLED_BACK] == 3 and skipped[pg_test_decoding.UNRESOLVED] == 2
    assert skipped[pg_test_decoding.MOVED] == 3 and skipped[pg_test_decoding.PREPARED] == 3


@pytest.mark.parametrize("name", ["two_phase.txt", "two_phase_ts_copy.txt"])
def test_a_committed_prepared_transaction_counts_at_its_commit_prepared(name):
    events = cdckit.read(DATA / name, dialect=NAME)
    commit = events[events["op_raw"] == "COMMIT PREPARED"]
    assert len(commit) == 1 and commit["txn_id"].tolist() == ["732"]
    g1 = events[events["txn_id"] == "732"]
    assert g1["op"].tolist() == ["begin", "insert", "update", "commit"]
    assert set(g1["offset"]) == set(commit["offset"])  # the COMMIT PREPARED line's place, after txn 733
    ordered = cdckit.analysis.ordering.sort_events(events)
    txns = ordered.loc[ordered["op"] == "begin", "txn_id"].tolist()
    assert txns.index("733") < txns.index("732") and "734" not in txns and "742" not in txns
    if name.endswith("copy.txt"):
        assert ordered["seq"].is_monotonic_increasing and ordered["seq"].is_unique
        assert commit["event_time"].notna().all()


def test_a_commit_prepared_whose_prepare_is_in_an_earlier_source_is_quarantined():
    capture = cdckit.read(DATA / "two_phase_part2.txt", dialect=NAME, capture=True)
    assert capture.report["quarantined"] == 1
    assert "not prepared in this source" in capture.quarantine["reason"].iloc[0]
    assert cdckit.materialize(capture.events)["public.customers"].values.tolist() == [[6, "fay", None]]


def test_gids_are_read_as_quote_literal_writes_them():
    lines = ("BEGIN 9\ntable public.t: INSERT: id[integer]:1\nPREPARE TRANSACTION E'a\\\\b''c', txid 9\n"
             "BEGIN 10\ntable public.t: INSERT: id[integer]:2\nPREPARE TRANSACTION 'x', txid 10\n"
             "ROLLBACK PREPARED 'x', txid 10\nCOMMIT PREPARED E'a\\\\b''c', txid 9\n")
    events = read_clean(lines, dialect=NAME)
    assert events.loc[events["op"] == "insert", "after"].tolist() == ['{"id":1}']


def test_stream_changes_lines_are_accounted_for():
    capture = cdckit.read(DATA / "stream_changes.txt", dialect=NAME, capture=True)
    quarantine = capture.quarantine
    assert len(quarantine) == 11 and set(quarantine["reason"]) == {pg_test_decoding.STREAMED_CHANGE}
    assert quarantine["raw"].str.startswith("streaming change for TXN").all()
    events = capture.events
    assert events["op_raw"].tolist() == ["committing streamed transaction", "COMMIT PREPARED",
                                         "committing streamed transaction"]
    assert events["txn_id"].tolist() == ["746", "747", "748"] and events["event_time"].notna().all()
    assert capture.report["skipped"][pg_test_decoding.STREAM_ABORT] == 1


def test_keys_are_inferred_from_the_old_tuples_and_reported():
    capture = cdckit.read(DATA / "two_phase.txt", dialect=NAME, capture=True)
    found = capture.report["inferred_keys"]
    assert {t: v["columns"] for t, v in found.items()} == {"public.customers": ["id"],
                                                         "public.lines": ["order_id", "line_no"]}
    assert found["public.customers"]["sources"] == [str(DATA / "two_phase.txt")]
    events = capture.events
    customers = events[events["table"] == "customers"]
    assert customers["key_columns"].map(list).tolist() == [["id"]] * len(customers)
    assert customers.loc[customers["op"] == "delete", "key"].tolist() == ["[20]"]
    # FULL (its old tuple equals the new row on an update) and no identity at all stay keyless
    assert events.loc[events["table"].isin(["fulls", "nokey"]), "key_columns"].isna().all()
    # what the analyst says wins
    keyed = cdckit.with_keys(events, {"customers": ["name"]})
    assert keyed.loc[keyed["table"] == "customers", "key_columns"].map(list).tolist() == [["name"]] * len(customers)


def test_a_full_table_whose_columns_are_never_null_is_not_taken_for_keyed():
    lines = ("BEGIN 1\ntable public.f: INSERT: id[integer]:1 v[text]:'a'\ntable public.f: INSERT: id[integer]:2 "
             "v[text]:'b'\ntable public.f: DELETE: id[integer]:1 v[text]:'a'\nCOMMIT 1\n"
             "BEGIN 2\ntable public.g: INSERT: id[integer]:1 v[text]:'a' w[text]:null\n"
             "table public.g: UPDATE: old-key: id[integer]:1 v[text]:'a' new-tuple: id[integer]:1 v[text]:'a' "
             "w[text]:'z'\ntable public.g: DELETE: id[integer]:1 v[text]:'a' w[text]:'z'\nCOMMIT 2\n")
    capture = cdckit.read(lines, dialect=NAME, capture=True)
    assert "inferred_keys" not in capture.report
    assert capture.events["key_columns"].isna().all()


@pytest.mark.parametrize("value", ["a\r\nb", "a\r\n\r\n  \r\nb\rc\r", "\r\n", "x\r\r\n\ty", " \n \n"])
def test_a_value_over_several_lines_is_byte_exact(tmp_path, value):
    quoted = value.replace("'", "''")
    path = tmp_path / "capture.txt"
    path.write_bytes(f"BEGIN 5\ntable public.t: INSERT: id[integer]:1 v[text]:'{quoted}'\nCOMMIT 5\n".encode())
    events = cdckit.read(path, dialect="pg_test_decoding")
    assert events.attrs["report"]["quarantined"] == 0
    assert [json.loads(a)["v"] for a in events["after"].dropna()] == [value]
