"""The check the live-database tests make: a replayed state equals the tables, table by table, exactly."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

import cdckit
from cdckit.samples.postgres.workload import KEYS, TABLES

#: The audit log has no primary key: its rows are compared whole.
AUDIT_KEY = ["at", "actor", "detail"]


def assert_reconciled(
    state,
    tables: dict[str, pd.DataFrame],
    skip: frozenset = frozenset(),
    *,
    names: Sequence[str] = TABLES,
    keys: Mapping[str, list[str]] = KEYS,
    keyless: list[str] = AUDIT_KEY,
) -> None:
    """Every table of ``names`` (PostgreSQL's workload by default) but ``skip`` in ``state`` equals its snapshot
    in ``tables``, cell by cell, by its key in ``keys`` (the columns ``keyless`` for a table without one); an
    empty table may be absent from the state."""
    for name in names:
        if name in skip:
            continue
        snapshot = tables[name]
        if name not in state:
            assert snapshot.empty, f"{name}: nothing replayed, {len(snapshot)} rows in the table"
            continue
        result = cdckit.reconcile(state, snapshot, table=name, key=keys.get(name, keyless))
        assert result.ok, f"{name}: {result}"
