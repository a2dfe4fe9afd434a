"""The JVM's launcher noise stays off the terminal, and everything else it prints still reaches it; a session
whose Python workers cannot run cdckit is named, with the fixes, before any job."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import cdckit
from cdckit.errors import SparkSetupError
from cdckit.spark.session import check_java, check_workers


def _stderr_of(script: str) -> str:
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(script)], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stderr


def test_filtered_stderr_drops_only_the_noise_lines_of_child_processes():
    shown = _stderr_of("""
        import subprocess, sys
        from cdckit.spark.session import filtered_stderr, JVM_NOISE
        child = ("import sys; "
                 "sys.stderr.write('WARNING: Using incubator modules: jdk.incubator.vector\\\\nreal problem\\\\n')")
        with filtered_stderr():
            subprocess.run([sys.executable, "-c", child])
        print("after the block", file=sys.stderr)
    """)
    assert "incubator" not in shown
    assert "real problem" in shown and "after the block" in shown


def test_starting_spark_and_converting_to_pandas_print_no_notice():
    """Neither the JVM's incubator modules line nor PySpark's pandas-3 warnings (every warning shown, as in a
    notebook that turns them on); another warning raised from pyspark's modules still shows."""
    try:
        check_java()
    except Exception as err:  # noqa: BLE001 - the message says what to install
        pytest.skip(str(err))
    shown = _stderr_of("""
        import warnings
        warnings.simplefilter("default")
        import pandas as pd
        from cdckit.spark.session import get_spark
        spark = get_spark("local[1]")
        assert spark.range(3).count() == 3
        assert spark.createDataFrame(pd.DataFrame({"a": [1, 2]})).toPandas()["a"].tolist() == [1, 2]
        warnings.warn_explicit("another notice", FutureWarning, "utils.py", 1, module="pyspark.sql.utils")
        spark.stop()
    """)
    assert "jdk.incubator.vector" not in shown, shown
    assert "PySpark does not yet fully support pandas" not in shown and "copy keyword" not in shown, shown
    assert "another notice" in shown, shown


_OWN_SESSION = """
    import os, sys, time
    from pyspark.sql import SparkSession
    import cdckit
    from cdckit import spark as cdcspark

    def session():
        spark = (SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")
                 .config("spark.ui.showConsoleProgress", "false").getOrCreate())
        spark.sparkContext.setLogLevel("OFF")
        return spark

    # the analyst's own session, from a kernel whose venv is not activated: workers run python3 on PATH
    spark = session()
    try:
        cdcspark.read(spark, cdckit.samples.path("canal")).count()
        print("NO ERROR")
    except cdckit.CdcError as err:
        print("ERROR", type(err).__name__, err, sep="\\n")
    spark.stop()
    # the first fix the message gives
    os.environ["PYSPARK_PYTHON"] = sys.executable
    spark = session()
    print("FIXED", cdcspark.read(spark, cdckit.samples.path("canal")).count() > 0)
"""


def test_workers_on_a_python_without_pandas_are_named_with_the_fixes_before_any_job(tmp_path):
    try:
        check_java()
    except Exception as err:  # noqa: BLE001 - the message says what to install
        pytest.skip(str(err))
    bare = tmp_path / "bare"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(bare)], check=True, timeout=60)
    env = {name: value for name, value in os.environ.items() if name != "PYSPARK_PYTHON"}
    env["PATH"] = f"{bare / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(_OWN_SESSION)], capture_output=True, text=True,
                          timeout=120, env=env, cwd=Path(cdckit.__file__).resolve().parents[1])
    assert done.returncode == 0, done.stderr[-3000:]
    said = done.stdout.split("ERROR\n", 1)[-1].split("FIXED")[0]
    assert done.stdout.startswith("ERROR\nSparkSetupError"), done.stdout + done.stderr[-3000:]
    assert f"Spark's Python workers run {bare / 'bin' / 'python3'}, which cannot import pandas" in said, said
    for fix in ("PYSPARK_PYTHON=", "spark.pyspark.python", "cdckit.spark.get_spark()"):
        assert fix in said, said
    for trace in ("Traceback", "org.apache", "py4j", "PythonException"):
        assert trace not in said, said
    assert "FIXED True" in done.stdout, done.stdout + done.stderr[-3000:]


def test_the_workers_check_costs_one_tiny_job_once_per_session(spark):
    started = time.perf_counter()
    check_workers(spark, ("json",))  # a new set of modules: one job
    first = time.perf_counter() - started
    started = time.perf_counter()
    for _ in range(100):
        check_workers(spark, ("json",))
    again = (time.perf_counter() - started) / 100
    assert first < 10 and again < 0.005, (first, again)
    with pytest.raises(SparkSetupError, match=r"cannot import no_such_module_here\b"):
        check_workers(spark, ("json", "no_such_module_here"))
