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


def _third_party_imports() -> set[str]:
    """The top-level names of the modules outside the standard library and cdckit that cdckit imports."""
    import ast

    found: set[str] = set()
    for path in (ROOT / "cdckit").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                found |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                found.add(node.module.split(".")[0])
    return {name for name in found if name not in sys.stdlib_module_names and name not in ("cdckit", "__future__")}


def test_mypy_passes_without_any_extra():
    """mypy checks cdckit in a venv holding the core dependencies only: every module cdckit imports from an extra
    (or from the test-only producers) is one whose absence ``[tool.mypy]`` allows (``ignore_missing_imports``)."""
    import re
    from importlib.metadata import packages_distributions

    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    core = {re.split(r"[\[<>=!~ ;]", spec)[0].lower().replace("_", "-") for spec in project["project"]["dependencies"]}
    allowed: set[str] = set()
    for override in project["tool"]["mypy"].get("overrides", []):
        if override.get("ignore_missing_imports"):
            modules = override["module"]
            allowed |= {name.removesuffix(".*") for name in ([modules] if isinstance(modules, str) else modules)}
    distributions = packages_distributions()
    optional = sorted(
        name
        for name in _third_party_imports()
        if not {d.lower().replace("_", "-") for d in distributions.get(name, [name])} & core
    )
    assert "pydbzengine" in optional and "pandas" not in optional  # the rule sees both kinds
    missing = [name for name in optional if name not in allowed]
    assert not missing, f"imported from an extra, and mypy fails where it is not installed: {missing}"
