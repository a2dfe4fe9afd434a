"""Shared fixtures: one local Spark session for the whole run, with the test run's Spark settings."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

# Every Spark the tests start (this session, the notebooks' kernels, the CLI and cluster subprocesses) reads
# tests/spark/spark-defaults.conf: plans interpreted, not compiled, for data this small (the file says why).
os.environ.setdefault("SPARK_CONF_DIR", str(Path(__file__).parent / "spark"))


@pytest.fixture(scope="session")
def spark():
    """A local[2] Spark session (cdckit's own: UI off, logs quiet, UTC), stopped at the end of the run."""
    from cdckit.spark import get_spark

    session = get_spark("local[2]", app_name="cdckit-tests", config={"spark.sql.shuffle.partitions": "4"})
    yield session
    session.stop()
