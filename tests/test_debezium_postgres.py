"""The real Debezium PostgreSQL connector, end to end: Debezium 3.6's embedded engine (pgoutput) streams a
throwaway server's seeded workload, saved the four ways users save it (cdckit.samples.postgres.debezium);
cdckit reads each capture and its replayed state equals the live tables, value for value, mid-run and at
the end.

Needs Debian's ``postgresql-15`` and ``postgresql-15-wal2json``, Java 17 and the ``producers`` extra
(``make test`` and ``.ci/run`` install them); without them the tests are skipped locally with the command
that installs what is missing, and fail in CI (``CDCKIT_REQUIRE_POSTGRES=1``).
"""

from __future__ import annotations

import pandas as pd
import pytest
from comparable import row_texts
from postgres_tables import AUDIT_KEY, assert_reconciled
from real_parts import require
from report_truth import assert_a_lost_message_shows, assert_only_true_findings

import cdckit
from cdckit.analysis.ordering.identity import transaction_keys
from cdckit.frame import table_names
from cdckit.samples.partitioning import spread_by_key
from cdckit.samples.postgres import capture as pg_capture
from cdckit.samples.postgres import debezium
from cdckit.samples.postgres import server as pg_server
from cdckit.samples.postgres.workload import END, KEYS, TABLES, UNDONE, Workload

#: Capture style -> the dialect cdckit must find in it.
DIALECTS = {"values": "debezium", "kcat": "debezium", "string": "debezium", "flat": "debezium_flat"}
#: What a style cannot carry, so its state differs there: ExtractNewRecordState drops TRUNCATE records, and
#: keeps no before image of an update, so an update of a table without a key cannot find its row.
LIMITS = {"flat": frozenset({"public.sessions", "public.audit"})}


@pytest.fixture(scope="module")
def captured(tmp_path_factory):
    problem = pg_server.missing() or debezium.missing()
    require(problem, "CDCKIT_REQUIRE_POSTGRES")
    with pg_server.Server() as server:
        yield pg_capture.capture(server, tmp_path_factory.mktemp("dbz"), Workload(seed=11, transactions=900),
                                 debezium=sorted(DIALECTS))


@pytest.fixture(scope="module")
def decoded(captured):
    return {style: cdckit.read(captured.files[style]) for style in DIALECTS}


def keyed(events: pd.DataFrame) -> pd.DataFrame:
    """Values saved without their Kafka keys name no key columns: the analyst gives them (cdckit.with_keys)."""
    if events["key_columns"].notna().any():
        return events
    return cdckit.with_keys(events, KEYS)


def test_every_engine_saw_the_whole_workload(captured):
    for style in DIALECTS:
        text = captured.files[style].read_text(encoding="utf-8")
        assert END in text, style
        assert UNDONE not in text, style  # pgoutput sends only committed work: no rollback reaches Debezium
    values = captured.files["values"].read_text(encoding="utf-8")
    assert "__debezium_unavailable_value" in values  # the workload does leave TOASTed values unchanged
    assert '"op":"t"' in values and "\nnull\n" in values  # truncates (skipped.operations=none) and tombstones


@pytest.mark.parametrize("style", sorted(DIALECTS))
def test_every_record_decodes_in_its_dialect(style, decoded):
    events = decoded[style]
    quarantine = cdckit.quarantine(events)
    assert quarantine.empty, quarantine[["offset", "reason"]].head().to_string()
    assert set(events["dialect"]) == {DIALECTS[style]}
    assert events.attrs["report"]["quarantined"] == 0


def test_kcat_captures_name_their_keys_and_tables_as_postgresql_does(decoded):
    for style in ("kcat", "flat"):  # schema.table, as wal2json and test_decoding name them
        events = decoded[style]
        assert set(KEYS) <= set(table_names(events[events["key_columns"].notna()])), style
    for style in DIALECTS:
        changed = decoded[style][decoded[style]["op"].isin(["insert", "update", "delete"])]
        assert set(table_names(changed)) <= set(TABLES), style


@pytest.mark.filterwarnings("ignore:materialize.*found no row to change:UserWarning")  # public.audit has no key: flattened, its updates find no row (asserted in test_flattened_rows_cannot_carry...)
@pytest.mark.parametrize("style", sorted(DIALECTS))
def test_replayed_state_equals_the_tables(style, captured, decoded):
    state = cdckit.materialize(keyed(decoded[style]))
    assert state.type_problems.empty, state.type_problems.head().to_string()
    assert_reconciled(state, captured.final, LIMITS.get(style, frozenset()))
    assert UNDONE not in set(state["public.audit"]["detail"])


def test_flattened_rows_cannot_carry_a_truncate_or_a_keyless_update(captured, decoded):
    with pytest.warns(UserWarning, match=r"change\(s\) of public\.audit found no row to change"):
        state = cdckit.materialize(decoded["flat"])
    for name in LIMITS["flat"]:  # rows that should be gone are left; none is missing or changed
        result = cdckit.reconcile(state, captured.final[name], table=name, key=KEYS.get(name, AUDIT_KEY))
        assert not result.ok and result.missing.empty and result.different.empty and len(result.extra) > 0, name


@pytest.mark.filterwarnings("ignore:materialize.*found no row to change:UserWarning")  # public.audit has no key: flattened, its updates find no row (asserted in test_flattened_rows_cannot_carry...)
@pytest.mark.parametrize("style", sorted(DIALECTS))
def test_as_of_the_middle_equals_the_tables_then(style, captured, decoded):
    state = cdckit.materialize(keyed(decoded[style]), as_of=captured.info["mid_time"])
    assert_reconciled(state, captured.mid, LIMITS.get(style, frozenset()))


@pytest.mark.parametrize("style", sorted(set(DIALECTS) - {"flat"}))  # add.fields names no transaction id
def test_the_transactions_of_the_first_half_equal_the_tables_then(style, captured, decoded):
    v2 = cdckit.read(captured.files["w2j2"])  # wal2json's commit records say which transactions ended first
    committed = set(v2.loc[(v2["op"] == "commit") & (v2["event_time"] <= pd.Timestamp(captured.info["mid_time"])),
                           "txn_id"].astype(str))
    events = keyed(decoded[style])
    assert events.loc[events["op"].isin(["insert", "update", "delete"]), "txn_id"].notna().all()
    # kcat carries the transaction block (provide.transaction.metadata): its id is txId:LSN, named by txId
    named = transaction_keys(events).astype(str)
    assert_reconciled(cdckit.materialize(events[named.isin(committed).to_numpy()]), captured.mid)


@pytest.mark.parametrize("style", sorted(set(DIALECTS) - {"flat"}))  # add.fields names no source.sequence
def test_the_ordering_report_finds_no_inversions_although_transactions_interleave(style, decoded):
    # seq is source.sequence (the last commit's LSN, then the change's): in the order the connector sent them
    events = decoded[style]
    summary = cdckit.order_report(events).summary().set_index("finding")["rows"]
    assert summary["inversions"] == 0
    changes = events[events["op"].isin(["insert", "update", "delete"])]
    lsn = changes["seq"].str.split(":").str[-1]
    assert not lsn.is_monotonic_increasing  # the change LSNs alone are out of commit order here


#: The warnings true of each style's capture, and why.
TRUE_WARNINGS = {
    "kcat": {"keyless_tables": "public.audit has no key"},
    "values": {"keyless_tables": "values saved without their Kafka keys name no key",
               "unmatched_rows": "so an update without a before image (REPLICA IDENTITY DEFAULT) finds no row"},
    "flat": {"keyless_tables": "public.audit has no key",
             "unmatched_rows": "ExtractNewRecordState keeps no before image: public.audit's updates find no row"},
}
TRUE_WARNINGS["string"] = TRUE_WARNINGS["values"]


@pytest.mark.parametrize("style", sorted(DIALECTS))
def test_the_ordering_report_says_nothing_false_and_shows_a_lost_message(style, decoded):
    # truncates, key changes sent as a delete and a create, keys deleted and inserted again with the same values,
    # and (kcat) the transaction topic's BEGIN and END ids (txId:LSN, the LSN differing) are the workload's own
    events = decoded[style]
    assert_only_true_findings(events, TRUE_WARNINGS[style])
    if style in ("values", "string"):  # given the keys, only the table without one is left
        assert_only_true_findings(keyed(events), {"keyless_tables": "public.audit has no key"})
    assert_a_lost_message_shows(keyed(events))
    if style == "kcat":
        assert {"begin", "commit"} <= set(events["op"])  # provide.transaction.metadata=true


def test_spark_reads_the_same_events(spark, captured, decoded):
    from test_spark import normal_rows

    from cdckit import spark as cdcspark

    for style in sorted(DIALECTS):
        got = cdcspark.read(spark, str(captured.files[style]), split_bytes=1024 * 1024).toPandas()
        assert normal_rows(got) == normal_rows(decoded[style]), style


#: How a consumer may have written the partitions of a topic after one another (spread_by_key's interleave).
INTERLEAVES = ("whole", "reversed", "random")


@pytest.fixture(scope="module")
def spread(captured):
    """The kcat captures (Kafka keys) as a topic of three partitions by key, each way of interleaving them."""
    return {(style, mode): cdckit.read(spread_by_key(captured.files[style].read_text(encoding="utf-8").splitlines(),
                                                     3, interleave=mode, seed=7))
            for style in ("kcat", "flat") for mode in INTERLEAVES}


def errors(events: pd.DataFrame) -> dict[str, int]:
    summary = cdckit.order_report(events).summary()
    return summary.loc[summary["severity"] == "error"].set_index("finding")["rows"].to_dict()


@pytest.mark.filterwarnings("ignore:materialize.*found no row to change:UserWarning")  # public.audit has no key: flattened, its updates find no row (asserted in test_flattened_rows_cannot_carry...)
@pytest.mark.parametrize("mode", INTERLEAVES)
@pytest.mark.parametrize("style", ["kcat", "flat"])
def test_a_topic_partitioned_by_key_replays_as_one_partition_does(style, mode, captured, decoded, spread):
    # a key change's delete and create land in different partitions at one LSN; the partitions' interleaving
    # says nothing: the order is the source's (the LSN), the delete of the old key first at a shared position
    events = spread[(style, mode)]
    assert events["partition"].nunique() == 3
    want, got = cdckit.materialize(decoded[style]), cdckit.materialize(events)
    assert sorted(got) == sorted(want)
    for name in want:
        assert row_texts(got[name]) == row_texts(want[name]), name
    assert got.type_problems.empty
    assert_reconciled(got, captured.final, LIMITS.get(style, frozenset()))
    assert set(errors(events)) <= set(errors(decoded[style]))


def test_spark_replays_a_topic_partitioned_by_key_as_one_partition(spark, captured, tmp_path):
    from cdckit import spark as cdcspark

    lines = captured.files["kcat"].read_text(encoding="utf-8").splitlines()
    path = tmp_path / "spread.jsonl"
    path.write_text("\n".join(spread_by_key(lines, 3, interleave="random", seed=7)) + "\n", encoding="utf-8")
    got = cdcspark.materialize(cdcspark.read(spark, str(path)))
    want = cdcspark.materialize(cdcspark.read(spark, str(captured.files["kcat"])))
    assert sorted(got) == sorted(want)
    for name in want:
        assert row_texts(got[name]) == row_texts(want[name]), name


def test_spark_reports_what_pandas_reports(spark, captured, decoded):
    # the kcat capture: key changes sent as a delete and a create, truncates, keys deleted and inserted again,
    # the transaction topic's BEGIN and END (txId:LSN) and a table without a key
    from comparable import rows as plain

    from cdckit import spark as cdcspark

    events = cdcspark.read(spark, str(captured.files["kcat"])).cache()
    got, want = cdcspark.order_report(events, cdcspark.quarantine(events)), cdckit.order_report(decoded["kcat"])
    for name in want:
        if name != "lag":
            assert plain(got[name]) == plain(want[name]), name
    assert got.problems() == want.problems() == len(want["keyless_tables"])
