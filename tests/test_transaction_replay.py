"""Replay to a transaction boundary (materialize after_transaction= and whole_transactions=) and the command
line's ``cdckit transactions`` / ``cdckit state --after-transaction`` on real PostgreSQL captures.

The truth for "right after transaction T committed" on a capture in commit order (test_decoding, wal2json:
one source, a transaction's changes between its BEGIN and COMMIT) is the replay of the capture cut right after
T's COMMIT line: no cdckit transaction code is in it.
"""

from __future__ import annotations

import io
import json
import warnings

import pandas as pd
import pytest

import cdckit
from cdckit.analysis.transaction_cut import TransactionNotFoundError
from cdckit.cli import main

REAL = ["pg_test_decoding/postgres", "wal2json/postgres_v2", "wal2json/postgres_v1"]


def _same_states(got: dict, want: dict) -> None:
    assert sorted(got) == sorted(want)
    for table in want:
        pd.testing.assert_frame_equal(got[table].reset_index(drop=True), want[table].reset_index(drop=True))


def _commit_rows(events: pd.DataFrame) -> dict[str, int]:
    """Each transaction's COMMIT row (its place in the capture), read from the markers alone."""
    commits = events[events["op"] == "commit"]
    return {str(t): int(i) for i, t in zip(commits.index, commits["txn_id"])}


@pytest.mark.parametrize("sample", REAL)
def test_the_state_right_after_a_transaction_is_the_capture_cut_after_its_commit(sample):
    events = cdckit.read(cdckit.samples.path(sample))
    commits = _commit_rows(events)
    ids = list(commits)
    for txn in (ids[0], ids[len(ids) // 3], ids[len(ids) // 2], ids[-2], ids[-1]):
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # a whole transaction: nothing to say
            got = cdckit.materialize(events, after_transaction=txn)
        want = cdckit.materialize(events.iloc[: commits[txn] + 1])
        _same_states(got, want)
        later = ids[ids.index(txn) + 1 :]
        assert got.left_out["txn_id"].tolist() == later, txn


def test_snapshot_rows_before_a_transaction_are_kept_and_later_transactions_left_out():
    def change(op, row, txn, lsn):
        block = None if txn is None else {"id": f"{txn}:{lsn}", "total_order": 1, "data_collection_order": 1}
        source = {"connector": "postgresql", "db": "db", "schema": "public", "table": "t", "lsn": lsn,
                  "ts_ms": 1000 + lsn, "snapshot": "true" if op == "r" else "false"}
        return {"op": op, "before": None, "after": row, "source": source, "ts_ms": 2000 + lsn, "transaction": block}

    def marker(status, txn, lsn, count=None):
        return {"status": status, "id": f"{txn}:{lsn}", "ts_ms": 3000 + lsn, "event_count": count,
                "data_collections": None if count is None else [{"data_collection": "public.t", "event_count": count}]}

    lines = [change("r", {"id": 1, "v": "snap"}, None, 10),
             marker("BEGIN", 700, 20), change("c", {"id": 2, "v": "a"}, 700, 20), marker("END", 700, 21, 1),
             marker("BEGIN", 701, 30), change("c", {"id": 3, "v": "b"}, 701, 30), marker("END", 701, 31, 1)]
    events = cdckit.read([json.dumps(line) for line in lines], dialect="debezium")
    state = cdckit.materialize(events, after_transaction="700")["public.t"]
    assert state["id"].tolist() == [1, 2]  # the snapshot row and transaction 700, not 701
    whole = cdckit.materialize(events)["public.t"]
    assert whole["id"].tolist() == [1, 2, 3]
    assert cdckit.materialize(events, after_transaction="701")["public.t"]["id"].tolist() == [1, 2, 3]


@pytest.mark.parametrize("sample", REAL[:2])
def test_whole_transactions_leaves_out_a_cut_transaction_and_says_so(sample):
    events = cdckit.read(cdckit.samples.path(sample))
    commits = _commit_rows(events)
    last = list(commits)[-1]
    cut = events.drop(index=commits[last])  # the capture lost the last COMMIT: the transaction never ends
    with pytest.warns(UserWarning, match=r"left out 1 transaction\(s\) that the capture holds only in part"):
        got = cdckit.materialize(cut, whole_transactions=True)
    assert got.left_out[["txn_id", "status"]].values.tolist() == [[last, "no_commit"]]
    before = max(i for t, i in commits.items() if t != last)
    _same_states(got, cdckit.materialize(events.iloc[: before + 1]))
    # without the option the partial transaction's changes are replayed, as before
    assert cdckit.materialize(cut).left_out is None


def test_a_transaction_the_capture_does_not_hold_is_an_error_naming_some_it_holds():
    events = cdckit.read(cdckit.samples.path("pg_test_decoding/postgres"))
    with pytest.raises(TransactionNotFoundError, match="transaction 9999 is not in the capture; it holds 60"):
        cdckit.materialize(events, after_transaction=9999)
    keyless = cdckit.read(cdckit.samples.path("universe/examples"))
    with pytest.raises(TransactionNotFoundError, match="names no transaction"):
        cdckit.materialize(keyless, after_transaction="1")


def test_replaying_to_a_partial_transaction_warns_that_it_is_not_whole():
    events = cdckit.read(cdckit.samples.path("pg_test_decoding/postgres"))
    commits = _commit_rows(events)
    txn = list(commits)[5]
    changes = events.index[(events["txn_id"] == txn) & ~events["op"].isin(["begin", "commit"])]
    cut = events.drop(index=[commits[txn]])
    with pytest.warns(UserWarning, match=f"transaction {txn} is not whole in this capture \\(no_commit"):
        got = cdckit.materialize(cut, after_transaction=txn)
    # it never commits: its place is its last change, so the transactions after it are left out
    assert len(changes) and len(got.left_out) == len(commits) - 6
    _same_states(got, cdckit.materialize(events.iloc[: changes[-1] + 1]))


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_the_transactions_command_lists_them_and_exits_1_on_a_partial_one(capsys, tmp_path):
    path = cdckit.samples.path("pg_test_decoding/postgres")
    code, out, _ = run(capsys, "transactions", path)
    assert code == 0 and out.startswith("60 transaction(s): 60 complete")
    code, out, _ = run(capsys, "transactions", path, "--format", "csv")
    table = pd.read_csv(io.StringIO(out))
    assert code == 0 and len(table) == 60 and set(table["status"]) == {"complete"}
    lines = path.read_text().splitlines()
    cut = tmp_path / "cut.txt"
    cut.write_text("\n".join(lines[:-1]) + "\n")  # its last COMMIT lost
    code, out, _ = run(capsys, "transactions", cut, "--status", "incomplete")
    assert code == 1 and "1 no_commit" in out and "no commit in the capture" in out.split("\n", 2)[-1]
    code, out, _ = run(capsys, "transactions", cut, "--format", "json", "--status", "incomplete")
    assert [json.loads(line)["status"] for line in out.splitlines()] == ["no_commit"]


def test_the_state_command_replays_to_a_transaction_or_whole_transactions_only(capsys, tmp_path):
    path = cdckit.samples.path("pg_test_decoding/postgres")
    events = cdckit.read(path)
    txn = list(_commit_rows(events))[3]
    code, out, err = run(capsys, "state", path, "--after-transaction", txn, "--to", "csv", "-o", tmp_path / "s")
    assert code == 0, err
    want = cdckit.materialize(events, after_transaction=txn)
    written = {p.stem: pd.read_csv(p) for p in (tmp_path / "s").rglob("*.csv")}
    assert sum(len(t) for t in written.values()) == sum(len(t) for t in want.values())
    code, _, err = run(capsys, "state", path, "--after-transaction", "9999")
    assert code == 3 and "transaction 9999 is not in the capture" in err
    lines = path.read_text().splitlines()
    cut = tmp_path / "cut.txt"
    cut.write_text("\n".join(lines[:-1]) + "\n")
    code, _, err = run(capsys, "state", cut, "--whole-transactions")
    assert code == 0 and "left out 1 transaction(s)" in err
