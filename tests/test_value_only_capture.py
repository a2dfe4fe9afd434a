"""A capture of Kafka values only (no key anywhere), from the real Debezium writing PostgreSQL: materialize warns
where changes find no row, infer_keys proposes the keys, and with them the state is the keyed capture's."""

from __future__ import annotations

import warnings

import pytest

import cdckit

VALUES = cdckit.samples.path("debezium/postgres_values")  # kafka-console-consumer values: no key
KEYED = cdckit.samples.path("debezium/postgres_kcat")  # the same records with their Kafka keys (kcat -J)


def test_materialize_warns_where_changes_of_keyless_tables_find_no_row():
    events = cdckit.read(VALUES)
    with pytest.warns(UserWarning, match=r"public\.customers.* found no row to change") as said:
        state = cdckit.materialize(events)
    text = str(said[0].message)
    assert "cdckit.infer_keys(events)" in text and "keys={" in text and "--keys public.customers=" in text
    assert "public.inventory" not in text  # REPLICA IDENTITY FULL: every before image is a whole row
    assert len(state["public.customers"]) > len(cdckit.materialize(cdckit.read(KEYED))["public.customers"])


def test_the_proposed_keys_replay_the_values_as_the_keyed_capture():
    events = cdckit.read(VALUES)
    proposal = cdckit.infer_keys(events)
    keyed = cdckit.materialize(cdckit.read(KEYED))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no table is left without a key that matters
        state = cdckit.materialize(events, keys=proposal)
        read_with_keys = cdckit.materialize(cdckit.read(VALUES, keys=proposal))
    for table, frame in keyed.items():
        columns = frame.attrs.get("key_columns")
        if columns is None:  # public.audit has no key in PostgreSQL either
            continue
        assert proposal[table] == columns
        assert state[table].equals(frame), table
        assert read_with_keys[table].equals(frame), table


def test_history_and_scd2_work_once_keys_are_given():
    events = cdckit.read(VALUES)
    with pytest.raises(cdckit.KeylessTableError, match="infer_keys"):
        cdckit.history(events, "customers", 11)
    keys = {"customers": "id"}
    keyed = cdckit.read(KEYED)
    place = ["source", "offset"]  # the two files number their records differently
    assert cdckit.history(events, "customers", 11, keys=keys).drop(columns=place).equals(
        cdckit.history(keyed, "customers", 11).drop(columns=place))
    with pytest.warns(UserWarning, match=r"scd2 leaves out public\.audit, .*no key columns"):  # only customers keyed
        versions = cdckit.scd2(events, keys=keys)["public.customers"]
    with pytest.warns(UserWarning, match=r"scd2 leaves out public\.audit: public\.audit has no key columns"):
        assert versions.equals(cdckit.scd2(keyed)["public.customers"])
