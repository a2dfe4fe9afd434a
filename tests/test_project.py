"""The project's set-up promises: ranges in pyproject, exact versions in one lock, the README commands, CI, layout."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from importlib.metadata import distribution, packages_distributions
from pathlib import Path
from types import ModuleType

import pytest
import tomllib
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from cdckit.optional import EXTRAS

ROOT = Path(__file__).resolve().parent.parent
PIN = re.compile(r"^\s*-\s*([A-Za-z0-9_.\-]+)==([^\s#]+)\s*$")  # "      - pandas==3.1.1" in an environment file
SELF = re.compile(r"^cdckit\[([a-z,]+)\]$")  # an extra that includes others: "cdckit[spark,viz]"
#: The extras that are sets of tools rather than parts of cdckit (no module asks for them).
TOOL_EXTRAS = {"notebooks", "dev", "bench", "producers", "docs"}
#: Extras only the tests need (large): `make test` installs them, `make demo` and Binder do not.
TEST_ONLY = {"producers"}
LOCK = ROOT / "requirements.lock"


def envfiles() -> ModuleType:
    """tools/envfiles.py, which `make lock` runs to write the environment files from the lock."""
    spec = importlib.util.spec_from_file_location("envfiles", ROOT / "tools" / "envfiles.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def pyproject_groups() -> dict[str, list[str]]:
    """The requirement strings of the core ("core") and of each extra."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return {"core": project["dependencies"], **project["optional-dependencies"]}


def required(specs: list[str]) -> dict[str, Requirement]:
    """Each package ``specs`` require, by its normalized name; cdckit[...] (other extras) left out."""
    return {canonicalize_name(r.name): r for spec in specs if not SELF.match(spec) for r in [Requirement(spec)]}


def pyproject_requirements() -> dict[str, dict[str, Requirement]]:
    """The requirements of the core and of each extra that requires something itself."""
    return {group: reqs for group, specs in pyproject_groups().items() if (reqs := required(specs))}


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


def locked() -> dict[str, str]:
    """Each package of requirements.lock and its exact version."""
    return {name: version for name, (version, _) in envfiles().parse_lock(LOCK.read_text()).items()}


def conda_pins(path: Path) -> dict[str, str]:
    """The pins of an environment file's pip list."""
    return {canonicalize_name(m[1]): m[2] for line in path.read_text().splitlines() if (m := PIN.match(line))}


def distributions(module: str) -> list[str]:
    """The distributions that install ``module`` (its own name when it is not installed here)."""
    return [name.lower() for name in packages_distributions().get(module, [module])]


def test_pyproject_states_ranges_not_pins():
    """cdckit installs beside what the analyst has: a lower bound for each package, never an exact version."""
    text = (ROOT / "pyproject.toml").read_text()
    dependencies = text[text.index("dependencies = ["): text.index("[project.scripts]")]
    assert not re.search(r"""["'][^"']*(===?|~=)[^"']*["']""", dependencies), "pin in pyproject.toml"
    for group, reqs in pyproject_requirements().items():
        for req in reqs.values():
            operators = {spec.operator for spec in req.specifier}
            assert ">=" in operators and operators <= {">=", "<", "!="}, (group, str(req))


def test_each_package_is_required_in_one_place_in_pyproject():
    names = [name for reqs in pyproject_requirements().values() for name in reqs]
    assert len(names) == len(set(names)), sorted(n for n in names if names.count(n) > 1)
    groups = pyproject_groups()
    for group, specs in groups.items():
        for spec in specs:
            if m := SELF.match(spec):  # an extra that includes others names extras that exist
                assert group != "core" and set(m[1].split(",")) <= set(groups) - {"core"}, spec


def test_the_core_installs_no_spark_and_no_views():
    core = set(pyproject_requirements()["core"])
    assert {"pandas", "numpy", "pyarrow", "orjson", "msgspec", "duckdb", "tqdm"} <= core
    optional = {name for modules in EXTRAS.values() for module in modules for name in distributions(module)}
    assert {"pyspark", "plotly", "ipywidgets"} <= optional
    assert not core & optional


def test_cdckit_optional_names_the_extras_of_pyproject():
    reqs = pyproject_requirements()
    assert set(pyproject_groups()) - {"core"} == set(EXTRAS) | TOOL_EXTRAS
    assert not set(EXTRAS) & TOOL_EXTRAS
    for extra, modules in EXTRAS.items():
        assert {name for module in modules for name in distributions(module)} == set(reqs[extra]), extra
    assert included({"notebooks"}) >= {"spark", "viz"}  # the notebooks use Spark and the views
    assert included({"dev"}) >= set(EXTRAS)  # the tests test every part


def test_the_lock_holds_every_requirement_at_a_version_its_range_allows():
    lock = locked()
    for group, reqs in pyproject_requirements().items():
        for name, req in reqs.items():
            assert name in lock, (group, name)
            assert req.specifier.contains(lock[name], prereleases=True), (group, str(req), lock[name])
            for extra in req.extras:  # psycopg[binary] brings psycopg-binary: what an extra brings is locked too
                for needed in distribution(name).requires or []:
                    brought = Requirement(needed)
                    if brought.marker is not None and brought.marker.evaluate({"extra": extra}):
                        assert canonicalize_name(brought.name) in lock, (str(req), brought.name)
    assert "make lock" in LOCK.read_text().split("\n\n")[0]  # the header says how to refresh it


def test_environment_files_pin_exactly_what_the_lock_pins():
    lock = locked()
    assert conda_pins(ROOT / "environment.yml") == lock
    binder = conda_pins(ROOT / "binder" / "environment.yml")
    assert binder.items() <= lock.items()
    test_only = {name for extra in TEST_ONLY for name in pyproject_requirements()[extra]}
    assert not test_only & set(binder) and set(lock) - set(binder) >= test_only
    assert set(pyproject_requirements()["spark"]) | set(pyproject_requirements()["core"]) <= set(binder)
    tools = envfiles()
    for env, binder_file in (("environment.yml", False), ("binder/environment.yml", True)):
        text = (ROOT / env).read_text()
        assert text == tools.render(binder_file), f"{env} is not what `make lock` writes from the lock"
        assert "conda-forge" in text and re.search(r"openjdk=17\b", text), env


def test_make_installs_every_extra_from_the_lock():
    makefile = (ROOT / "Makefile").read_text()
    installs = re.findall(r"pip install .*-e '\.\[([a-z,]+)\]'", makefile)
    assert len(installs) == 2, installs  # everything the demo needs; then what only the tests need
    assert included(set(installs[0].split(","))) == set(pyproject_groups()) - {"core"} - TEST_ONLY
    assert set(installs[1].split(",")) == TEST_ONLY
    assert len(re.findall(r"pip install .*-c \$\(LOCK\) -e '\.\[", makefile)) == 2  # the lock's versions
    assert re.search(r"^LOCK\s*:= requirements\.lock$", makefile, re.M)
    assert re.search(r"^test: \$\(TEST_STAMP\)", makefile, re.M) and re.search(r"^demo: \$\(STAMP\)", makefile, re.M)


def test_make_lock_refreshes_the_lock_and_the_environment_files():
    makefile = (ROOT / "Makefile").read_text()
    recipe = makefile[makefile.index("\nlock:"):].split("\n\n")[0]
    assert re.search(r"pip compile pyproject\.toml --all-extras --upgrade", recipe)  # newest the ranges allow
    assert "-o $(LOCK)" in recipe and "tools/envfiles.py" in recipe


def test_ci_runs_the_core_tests_on_the_oldest_versions():
    assert "make test-oldest" in (ROOT / ".ci" / "run").read_text()
    makefile = (ROOT / "Makefile").read_text()
    assert "--resolution lowest-direct -e ." in makefile and re.search(r"^test-oldest:", makefile, re.M)
    core_tests = re.search(r"^CORE_TESTS := ((?:.*\\\n)*.*)$", makefile, re.M)[1].replace("\\\n", " ").split()
    assert "tests/test_core_only.py" in core_tests
    for path in core_tests:  # none needs Spark, the views, a browser or a database
        text = (ROOT / path).read_text()
        assert not re.search(r"^(from|import) (pyspark|plotly|playwright|psycopg|cdckit\.spark)\b"
                             r"|^def test_\w+\([^)]*\bspark\b", text, re.M), path
    assert ".venv-oldest/" in (ROOT / ".gitignore").read_text().split()


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


def test_make_test_runs_the_suite_in_parallel_workers_file_by_file():
    """`make test` runs pytest-xdist (from the dev extra) with a worker per core and one more (at most four), and
    keeps each file in one worker, in order: a notebook's cells run one after another in one kernel, and a
    module's server stays one. The files go out in collection order, the slowest first (tests/conftest.py)."""
    assert "pytest-xdist" in required(pyproject_groups()["dev"])
    makefile = (ROOT / "Makefile").read_text()
    recipe = makefile[makefile.index("\ntest:"):].split("\n\n")[0]
    assert "$(BIN)/python -m pytest $(PYTEST_PARALLEL)" in recipe
    parallel = re.search(r"^PYTEST_PARALLEL := (.*)$", makefile, re.M)[1].split()
    assert parallel[:2] == ["-n", "$(TEST_WORKERS)"] and "--dist loadfile" in " ".join(parallel)
    assert "--no-loadscope-reorder" in parallel
    workers = subprocess.run(["make", "--no-print-directory", "-s", "-C", str(ROOT), "-f", "-", "show"],
                             input=makefile + "\nshow:\n\t@echo $(TEST_WORKERS)\n", capture_output=True,
                             text=True, check=True).stdout.strip()
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1  # as nproc
    assert int(workers) == min(4, cores + 1), workers


def test_the_slowest_files_first_are_files_of_the_suite():
    """The files conftest.py starts with exist (a renamed one would silently go back to its usual place)."""
    from conftest import SLOWEST_FIRST

    assert SLOWEST_FIRST and all((ROOT / path).is_file() for path in SLOWEST_FIRST), SLOWEST_FIRST


def test_binder_writes_the_kernel_profile():
    post_build = (ROOT / "binder" / "postBuild").read_text()
    assert "c.IPKernelApp.capture_fd_output = False" in post_build
    assert "pip install" in post_build


def test_jupyterlab_from_the_venv_and_on_binder_asks_nothing_about_news():
    overrides = json.loads((ROOT / "binder" / "jupyterlab-overrides.json").read_text())
    notification = overrides["@jupyterlab/apputils-extension:notification"]
    assert notification["fetchNews"] == "false" and notification["checkForUpdates"] is False
    schema = Path(sys.prefix, "share", "jupyter", "lab", "schemas", "@jupyterlab", "apputils-extension",
                  "notification.json")
    assert set(notification) <= set(json.loads(schema.read_text())["properties"])  # names JupyterLab knows
    installed = Path(sys.prefix, "share", "jupyter", "lab", "settings", "overrides.json")
    assert json.loads(installed.read_text()) == overrides, "make installs the overrides into the venv"
    assert "jupyterlab-overrides.json" in (ROOT / "binder" / "postBuild").read_text()


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
    # the schema registry's REST API names a schema's kind schemaType too (OceanBase's is a column's type)
    registry_api = {ROOT / "cdckit" / "io" / "registered_schema.py", ROOT / "cdckit" / "samples" / "schema_registry.py"}
    for path in (ROOT / "cdckit").rglob("*.py"):
        if folder in path.parents or path == synthetic_lines:
            continue
        text = path.read_text()
        leaked = [f for f in field_names if f in text and not (f == "schemaType" and path in registry_api)]
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


def test_every_notebook_removes_the_folders_it_makes():
    for notebook in sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")):
        cells = json.loads(notebook.read_text())["cells"]
        code = "\n".join("".join(cell["source"]) for cell in cells if cell["cell_type"] == "code")
        for name in re.findall(r"^(\w+) = Path\(tempfile\.mkdtemp\(", code, flags=re.M):
            assert re.search(rf"(shutil\.rmtree\({name}\)|{name}\.rmdir\(\))", code), (notebook.name, name)
