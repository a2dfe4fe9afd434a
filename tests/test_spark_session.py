"""The JVM's launcher noise stays off the terminal, and everything else it prints still reaches it."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from cdckit.spark.session import check_java


def _stderr_of(script: str) -> str:
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(script)], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stderr


def test_filtered_stderr_drops_only_the_noise_lines_of_child_processes():
    shown = _stderr_of("""
        import subprocess, sys
        from cdckit.spark.session import filtered_stderr, JVM_NOISE
        child = "import sys; sys.stderr.write('WARNING: Using incubator modules: jdk.incubator.vector\\\\nreal problem\\\\n')"
        with filtered_stderr():
            subprocess.run([sys.executable, "-c", child])
        print("after the block", file=sys.stderr)
    """)
    assert "incubator" not in shown
    assert "real problem" in shown and "after the block" in shown


def test_starting_spark_does_not_print_the_incubator_modules_warning():
    try:
        check_java()
    except Exception as err:  # noqa: BLE001 - the message says what to install
        pytest.skip(str(err))
    shown = _stderr_of("""
        from cdckit.spark.session import get_spark
        spark = get_spark("local[1]")
        assert spark.range(3).count() == 3
        spark.stop()
    """)
    assert "jdk.incubator.vector" not in shown, shown
