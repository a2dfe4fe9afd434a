"""A real PostgreSQL, end to end: a seeded workload captured by wal2json (both formats) and test_decoding,
decoded by cdckit, and replayed state reconciled with the live tables, exactly.

Needs Debian's ``postgresql-15`` and ``postgresql-15-wal2json`` (``.ci/run``
installs them); without them the tests are skipped locally with that
message, and fail in CI (``CDCKIT_REQUIRE_POSTGRES=1``).
"""

from __future__ import annotations

import pandas as pd
import pytest
from postgres_tables import assert_reconciled
from real_parts import require
from report_truth import assert_a_lost_message_shows, assert_only_true_findings

import cdckit
from cdckit.samples.postgres import capture as pg_capture
from cdckit.samples.postgres.server import Server, missing
from cdckit.samples.postgres.workload import KEYS, UNDONE, Workload

#: Capture slot -> the dialect that reads it.
DIALECTS = {"w2j1": "wal2json", "w2j2": "wal2json", "tdtext": "pg_test_decoding", "tdcopy": "pg_test_decoding"}


@pytest.fixture(scope="module")
def captured(tmp_path_factory):
    problem = missing()
    require(problem, "CDCKIT_REQUIRE_POSTGRES")
    with Server() as server:
        yield pg_capture.capture(server, tmp_path_factory.mktemp("pg"), Workload(seed=7, transactions=900))


@pytest.fixture(scope="module")
def decoded(captured):
    return {slot: cdckit.read(path) for slot, path in captured.files.items()}


def keyed(slot: str, events: pd.DataFrame) -> pd.DataFrame:
    """The events as read: test_decoding names no key, but its delete and ``old-key:`` images show the replica
    identity, and the read takes the key columns from them (the tables stay keyed without ``with_keys``)."""
    return events


def test_the_workload_is_big_and_varied(captured, decoded):
    assert captured.info["statements"] > 3000
    ops = decoded["w2j2"]["op"].value_counts()
    assert ops["insert"] > 1000 and ops["update"] > 500 and ops["delete"] > 100 and ops["truncate"] > 0
    assert ops["begin"] == ops["commit"] > 700


@pytest.mark.parametrize("slot", sorted(DIALECTS))
def test_every_message_decodes_in_its_dialect(slot, decoded):
    events = decoded[slot]
    assert cdckit.quarantine(events).empty, cdckit.quarantine(events)[["offset", "reason"]].head().to_string()
    assert set(events["dialect"]) == {DIALECTS[slot]}
    assert events.attrs["report"]["quarantined"] == 0


@pytest.mark.parametrize("slot", sorted(DIALECTS))
def test_replayed_state_equals_the_tables(slot, captured, decoded):
    state = cdckit.materialize(keyed(slot, decoded[slot]))
    assert state.type_problems.empty, state.type_problems.head().to_string()
    # format-version 1 has no way to say TRUNCATE (wal2json writes an empty change list): its sessions differ
    skip = frozenset({"public.sessions"}) if slot == "w2j1" else frozenset()
    assert_reconciled(state, captured.final, skip)


@pytest.mark.parametrize("slot", ["tdtext", "tdcopy"])
def test_test_decoding_keys_come_from_the_replica_identity(slot, decoded):
    # every table with a primary key that saw a delete or a key update is keyed, as the catalog says;
    # the REPLICA IDENTITY FULL tables (whole old rows) and the table without a key stay keyless
    inferred = decoded[slot].attrs["report"]["inferred_keys"]
    assert {name: found["columns"] for name, found in inferred.items()} == {
        name: KEYS[name] for name in ("public.customers", "sales.order_lines", "public.measures")}
    events = decoded[slot]
    named = cdckit.frame.table_names(events)
    for name in ("public.inventory", "public.documents", "public.audit"):
        assert events.loc[named == name, "key_columns"].isna().all(), name


def test_format_version_1_cannot_carry_a_truncate(captured, decoded):
    state = cdckit.materialize(decoded["w2j1"])
    result = cdckit.reconcile(state, captured.final["public.sessions"], table="public.sessions", key="id")
    assert not result.ok and result.missing.empty and result.different.empty and len(result.extra) > 0


@pytest.mark.parametrize("slot", ["w2j1", "w2j2"])
def test_as_of_the_middle_equals_the_tables_then(slot, captured, decoded):
    events = decoded[slot]
    state = cdckit.materialize(events, as_of=captured.info["mid_time"])
    skip = frozenset({"public.sessions"}) if slot == "w2j1" else frozenset()
    assert_reconciled(state, captured.mid, skip)
    # the same cut by LSN: every event whose transaction committed before the middle
    from cdckit.dialects.postgres import lsn_seq

    middle = lsn_seq(captured.mid_lsn)
    before = events[events["seq"].str[: len(middle)] <= middle]
    assert_reconciled(cdckit.materialize(before), captured.mid, skip)


@pytest.mark.parametrize("slot", ["tdtext", "tdcopy"])
def test_test_decoding_up_to_the_transactions_of_the_first_half_equals_the_tables_then(slot, captured, decoded):
    v2 = decoded["w2j2"]
    committed = set(v2.loc[(v2["op"] == "commit") & (v2["event_time"] <= pd.Timestamp(captured.info["mid_time"])),
                           "txn_id"])
    events = keyed(slot, decoded[slot])
    assert_reconciled(cdckit.materialize(events[events["txn_id"].isin(committed)]), captured.mid)


@pytest.mark.parametrize("slot", sorted(DIALECTS))
def test_the_ordering_report_says_nothing_false_and_shows_a_lost_message(slot, decoded):
    # truncates, key changes and keys deleted and inserted again with the same values are the workload's own:
    # no error, no retry; the only warning is true (tables without a replica identity key name no key)
    assert_only_true_findings(decoded[slot], {"keyless_tables": "public.audit and friends have no key"})
    assert_a_lost_message_shows(decoded[slot])


def test_seq_sorts_in_commit_order_although_transactions_interleave(decoded):
    for slot in ("w2j1", "w2j2", "tdcopy"):
        seq = decoded[slot]["seq"]
        assert seq.notna().all() and seq.is_monotonic_increasing, slot
    # the workload's second session commits after transactions that began later: change LSNs alone would not sort
    changes = decoded["w2j2"]
    assert changes["txn_id"].astype(int).diff().lt(0).any()


def test_rolled_back_work_never_reaches_a_capture(captured, decoded):
    # every rolled-back transaction, savepoint and prepared transaction of the workload inserts an audit row
    # saying so; test_decoding's two-phase slots write a prepared transaction's changes at its PREPARE, before
    # the ROLLBACK PREPARED that undoes them: no replayed state may hold them
    for slot, path in captured.files.items():
        text = path.read_text(encoding="utf-8")
        if DIALECTS[slot] == "pg_test_decoding":
            assert "PREPARE TRANSACTION '" in text and "ROLLBACK PREPARED '" in text, slot
        else:
            assert UNDONE not in text, slot
    for slot, events in decoded.items():
        assert UNDONE not in set(cdckit.materialize(keyed(slot, events))["public.audit"]["detail"]), slot
    assert UNDONE not in set(captured.final["public.audit"]["detail"])


def test_spark_reads_the_same_events(spark, captured, decoded):
    from test_spark import normal_rows

    from cdckit import spark as cdcspark

    for slot in sorted(DIALECTS):  # files of 1-2 MB asked to be cut at 64 KB: whole_files keeps each whole
        got = cdcspark.read(spark, str(captured.files[slot]), split_bytes=64 * 1024).toPandas()
        assert normal_rows(got) == normal_rows(decoded[slot]), slot


class _LineBreaks:
    """A workload of text values holding CR LF, lone CRs and lines of spaces (test_decoding runs them over
    several lines of its output)."""

    seed, transactions = 0, 2
    VALUES = ["a\r\nb", "line one\r\n\r\n  \r\nlast\r", "\rlone\rcarriage returns\r", "\r\n", " \n\t\r\n "]

    def run(self, first, second, *, on_half=None) -> int:
        for number, value in enumerate(self.VALUES, 1):
            first.execute("INSERT INTO public.documents (id, title, version, body) VALUES (%s, %s, 1, %s)",
                          (number, value, value + value))
        first.commit()
        if on_half is not None:
            on_half()
        first.execute("UPDATE public.documents SET title = title || %s, version = 2 WHERE id %% 2 = 1", ("\r\n.",))
        first.commit()
        return len(self.VALUES) + 1


@pytest.mark.filterwarnings("ignore:.*pg_test_decoding \\(confidence:UserWarning")  # a few lines of one table: the dialect is right, its confidence low
def test_test_decoding_values_with_carriage_returns_are_byte_exact(tmp_path):
    problem = missing()
    require(problem, "CDCKIT_REQUIRE_POSTGRES")
    with Server() as server:
        captured = pg_capture.capture(server, tmp_path, _LineBreaks())
    titles = dict(zip(captured.final["public.documents"]["id"], captured.final["public.documents"]["title"]))
    assert "\r\n" in titles[1] and titles[3].startswith("\rlone")  # the live table holds them
    for slot in ("tdtext", "tdcopy"):
        events = cdckit.read(captured.files[slot])
        assert events.attrs["report"]["quarantined"] == 0
        assert_reconciled(cdckit.materialize(events), captured.final)
