"""Shared fixtures: one local Spark session for the whole run."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def spark():
    """A local[2] Spark session (cdckit's own: UI off, logs quiet, UTC), stopped at the end of the run."""
    from cdckit.spark import get_spark

    session = get_spark("local[2]", app_name="cdckit-tests", config={"spark.sql.shuffle.partitions": "4"})
    yield session
    session.stop()
