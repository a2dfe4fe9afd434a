"""Shared fixtures: one local Spark session for the whole run, with the test run's Spark settings."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

# Every Spark the tests start (this session, the notebooks' kernels, the CLI and cluster subprocesses) reads
# tests/spark/spark-defaults.conf: plans interpreted, not compiled, for data this small (the file says why).
# Set, not defaulted: a developer's own SPARK_CONF_DIR would give the tests other settings than CI's.
os.environ["SPARK_CONF_DIR"] = str(Path(__file__).parent / "spark")


def pytest_configure(config: pytest.Config) -> None:
    """PySpark's pandas-3 notices filtered in every test as ``get_spark`` filters them for users (pytest's own
    filters come first in a test, so the same rule goes in as ini lines; cdckit.spark.session.PANDAS3_NOTICES
    says why each is harmless). Without Spark (``make test-oldest``) there is nothing of PySpark's to filter."""
    from cdckit.optional import MissingExtraError

    try:
        from cdckit.spark.session import PANDAS3_NOTICES
    except MissingExtraError:
        return
    for start, _why in PANDAS3_NOTICES:
        config.addinivalue_line("filterwarnings", rf"ignore:{re.escape(start)}:Warning:pyspark\.")


@pytest.fixture(scope="session")
def spark():
    """A local[2] Spark session (cdckit's own: UI off, logs quiet, UTC), stopped at the end of the run."""
    from cdckit.spark import get_spark

    session = get_spark("local[2]", app_name="cdckit-tests", config={"spark.sql.shuffle.partitions": "4"})
    yield session
    session.stop()


#: The slowest test files (worker-seconds on 2 cores), slowest first. `make test` hands whole files to its workers in
#: collection order (--dist loadfile --no-loadscope-reorder): these go first, so that none of them starts when
#: the other workers are nearly done. A file missing here only runs in its usual place.
SLOWEST_FIRST = [
    "tests/test_spark_replay.py",
    "tests/test_spark_transactions.py",
    "tests/test_transactions_real.py",
    "tests/test_engines_agree.py",
    "tests/test_findings_oracle.py",
    "tests/test_export.py",
    "tests/test_workers.py",
    "notebooks/07_spark.ipynb",
    "tests/test_spark.py",
    "tests/test_spark_cluster.py",
    "tests/test_debezium_postgres.py",
    "tests/test_debezium_mysql.py",
    "tests/test_debezium_avro.py",
    "tests/test_spark_session.py",
    "tests/test_fuzz.py",
    "tests/test_conformance.py",
    "tests/test_replay_properties.py",
]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The slowest files first (:data:`SLOWEST_FIRST`); the rest, and the tests within each file, in their order."""
    rank = {path: number for number, path in enumerate(SLOWEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::")[0], len(rank)))
