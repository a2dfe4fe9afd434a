"""The check both live-PostgreSQL tests make: a replayed state equals the tables, table by table, exactly."""

from __future__ import annotations

import pandas as pd

import cdckit
from cdckit.samples.postgres.workload import KEYS, TABLES

#: The audit log has no primary key: its rows are compared whole.
AUDIT_KEY = ["at", "actor", "detail"]


def assert_reconciled(state, tables: dict[str, pd.DataFrame], skip: frozenset = frozenset()) -> None:
    """Every workload table but ``skip`` in ``state`` equals its snapshot in ``tables`` (an empty table may be
    absent from the state)."""
    for name in TABLES:
        if name in skip:
            continue
        snapshot = tables[name]
        if name not in state:
            assert snapshot.empty, f"{name}: nothing replayed, {len(snapshot)} rows in the table"
            continue
        result = cdckit.reconcile(state, snapshot, table=name, key=KEYS.get(name, AUDIT_KEY))
        assert result.ok, f"{name}: {result}"
