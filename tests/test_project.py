"""The project's set-up promises: one place for pins, the README commands, CI, layout."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

import pytest

from cdckit.optional import EXTRAS

ROOT = Path(__file__).resolve().parent.parent
PIN = re.compile(r"^\s*-\s*([A-Za-z0-9_.\-]+)==([^\s#]+)\s*$")
GROUP = re.compile(r"^\s+#\s*([a-z]+)\s*$")  # "      # viz" in an environment file's pip list
SELF = re.compile(r"^cdckit\[([a-z,]+)\]$")  # an extra that includes others: "cdckit[spark,viz]"
#: The extras that are sets of tools rather than parts of cdckit (no module asks for them).
TOOL_EXTRAS = {"notebooks", "dev", "bench", "producers"}
#: Extras only the tests need (large): `make test` installs them, `make demo` and Binder do not.
TEST_ONLY = {"producers"}


def pyproject_groups() -> dict[str, list[str]]:
    """The requirement strings of the core ("core") and of each extra."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return {"core": project["dependencies"], **project["optional-dependencies"]}


def pinned(specs: list[str]) -> dict[str, str]:
    """Each package pinned in ``specs`` and its version; cdckit[...] (other extras) left out."""
    pins = {}
    for spec in specs:
        if SELF.match(spec):
            continue
        name, _, version = spec.partition("==")
        assert version, f"{spec!r} in pyproject.toml is not pinned with =="
        pins[name.lower()] = version
    return pins


def pyproject_pins() -> dict[str, dict[str, str]]:
    """The pins of the core and of each extra that pins something itself."""
    return {group: pins for group, specs in pyproject_groups().items() if (pins := pinned(specs))}


def included(extras: set[str]) -> set[str]:
    """``extras`` and every extra they include through cdckit[...], transitively."""
    groups = pyproject_groups()
    found, todo = set(), list(extras)
    while todo:
        extra = todo.pop()
        if extra not in found:
            found.add(extra)
            todo += [name for spec in groups[extra] if (m := SELF.match(spec)) for name in m[1].split(",")]
    return found


def conda_pins(path: Path) -> dict[str, dict[str, str]]:
    """The pins of an environment file under each "# group" comment of its pip list."""
    groups: dict[str, dict[str, str]] = {}
    group = None
    for line in path.read_text().splitlines():
        if m := GROUP.match(line):
            group = m[1]
        elif m := PIN.match(line):
            groups.setdefault(group, {})[m[1].lower()] = m[2]
    return groups


def distributions(module: str) -> list[str]:
    """The distributions that install ``module`` (its own name when it is not installed here)."""
    return [name.lower() for name in packages_distributions().get(module, [module])]


def test_each_package_is_pinned_in_one_place_in_pyproject():
    names = [name for pins in pyproject_pins().values() for name in pins]
    assert len(names) == len(set(names)), sorted(n for n in names if names.count(n) > 1)
    groups = pyproject_groups()
    for group, specs in groups.items():
        for spec in specs:
            if m := SELF.match(spec):  # an extra that includes others names extras that exist
                assert group != "core" and set(m[1].split(",")) <= set(groups) - {"core"}, spec


def test_the_core_installs_no_spark_and_no_views():
    core = set(pyproject_pins()["core"])
    assert {"pandas", "pyarrow", "orjson", "msgspec", "duckdb"} <= core
    optional = {name for modules in EXTRAS.values() for module in modules for name in distributions(module)}
    assert {"pyspark", "plotly", "ipywidgets"} <= optional
    assert not core & optional


def test_cdckit_optional_names_the_extras_of_pyproject():
    pins = pyproject_pins()
    assert set(pyproject_groups()) - {"core"} == set(EXTRAS) | TOOL_EXTRAS
    assert not set(EXTRAS) & TOOL_EXTRAS
    for extra, modules in EXTRAS.items():
        assert {name for module in modules for name in distributions(module)} == set(pins[extra]), extra
    assert included({"notebooks"}) >= {"spark", "viz"}  # the notebooks use Spark and the views
    assert included({"dev"}) >= set(EXTRAS)  # the tests test every part


def test_environment_files_pin_exactly_what_pyproject_pins():
    pins = pyproject_pins()
    assert {"spark", "viz", "notebooks", "dev"} <= set(pins)
    for env in ("environment.yml", "binder/environment.yml"):
        expected = {group: p for group, p in pins.items() if env == "environment.yml" or group not in TEST_ONLY}
        assert conda_pins(ROOT / env) == expected, env
        text = (ROOT / env).read_text()
        assert "conda-forge" in text and re.search(r"openjdk=17\b", text), env


def test_make_installs_every_extra():
    makefile = (ROOT / "Makefile").read_text()
    installs = re.findall(r"pip install .*-e '\.\[([a-z,]+)\]'", makefile)
    assert len(installs) == 2, installs  # everything the demo needs; then what only the tests need
    assert included(set(installs[0].split(","))) == set(pyproject_groups()) - {"core"} - TEST_ONLY
    assert set(installs[1].split(",")) == TEST_ONLY
    assert re.search(r"^test: \$\(TEST_STAMP\)", makefile, re.M) and re.search(r"^demo: \$\(STAMP\)", makefile, re.M)


def test_readme_leads_with_the_two_commands_and_says_how_to_open_binder():
    readme = (ROOT / "README.md").read_text()
    head = readme[: readme.index("\n## ", readme.index("make test"))]
    assert "make demo" in head and "make test" in head
    assert "Binder" in head and "notebooks/01_quickstart.ipynb" in head and "`binder/`" in head
    assert "make lab" in readme


def test_ci_runs_make_test_and_make_knows_the_targets():
    assert "make test" in (ROOT / ".ci" / "run").read_text()
    makefile = (ROOT / "Makefile").read_text()
    for target in ("demo:", "test:", "lab:", "check-java:"):
        assert target in makefile
    assert "openjdk" in makefile


def test_binder_writes_the_kernel_profile():
    post_build = (ROOT / "binder" / "postBuild").read_text()
    assert "c.IPKernelApp.capture_fd_output = False" in post_build
    assert "pip install" in post_build


def test_one_module_per_dialect_and_no_dialect_field_names_outside_them():
    import cdckit

    folder = ROOT / "cdckit" / "dialects"
    for name in cdckit.dialects.names():  # a module, or a package for a big dialect
        assert (folder / f"{name}.py").exists() or (folder / name / "__init__.py").exists(), name
    field_names = ["prevStruct", "postStruct", "allMetaData", "recordType", "storeDataSequence",
                   "record_primary_key", "__light_type", "pkNames", "mysqlType", "sqlType", "isDdl",
                   "UPDATE_BEFOR", "MHEARTBEAT", "dataColumn", "sequenceId", "_sequence_id_",
                   "_operation_type_", "_excute_time_", "_before_image_", "rowid", "posttime",
                   "xoffset", "primary_key_columns", "tableChanges", "data_collection_order", "schemaType"]
    synthetic_lines = ROOT / "cdckit" / "samples" / "lines.py"  # benchmark lines, written in each dialect's format
    for path in (ROOT / "cdckit").rglob("*.py"):
        if folder in path.parents or path == synthetic_lines:
            continue
        text = path.read_text()
        leaked = [f for f in field_names if f in text]
        assert not leaked, f"{path.relative_to(ROOT)} names dialect fields {leaked}"


@pytest.mark.parametrize("uid, allowed", [("0", True), ("1000", False)])
def test_make_lab_allows_root_only_as_root(tmp_path, uid, allowed):
    """Binder and containers run as root, where `jupyter lab` refuses to start without --allow-root."""
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    for name, body in (("jupyter", 'echo "jupyter $*"'), ("id", f'echo {uid}')):
        tool = tmp_path / name
        tool.write_text(f"#!/bin/sh\n{body}\n")
        tool.chmod(0o755)
    stamp = tmp_path / "stamp"
    stamp.touch()
    env = {**os.environ, "PATH": f"{tmp_path}:{os.environ['PATH']}"}
    run = subprocess.run(["make", "--no-print-directory", "-s", "lab", f"BIN={tmp_path}", f"STAMP={stamp}"],
                         cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    assert "jupyter lab" in run.stdout and "notebooks/" in run.stdout
    assert ("--allow-root" in run.stdout) == allowed, run.stdout
