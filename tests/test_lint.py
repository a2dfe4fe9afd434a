"""The lint and type checks of a library: ruff (lint and format) and mypy, with the project's configuration.

Each runs as its own process from the repository root (``pyproject.toml``: ``[tool.ruff]``, ``[tool.mypy]``),
so ``make test`` fails on a finding, with the tool's own report as the message.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _run(*command: str) -> None:
    """Run ``python -m <command>`` from the repository root; fail with its output unless it exits 0."""
    done = subprocess.run([sys.executable, "-m", *command], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, f"{' '.join(command)} (exit {done.returncode}):\n{done.stdout}{done.stderr}"


def test_ruff_finds_nothing():
    _run("ruff", "check", "--no-cache", "cdckit", "tests")


def test_ruff_format_changes_nothing():
    # cdckit only: the tests keep their own layout.
    _run("ruff", "format", "--check", "--no-cache", "cdckit")


def test_mypy_finds_nothing():
    # No cache written (/dev/null): the run leaves the working tree as it found it, as `make test` checks.
    _run("mypy", "--cache-dir", "/dev/null")
