"""The project's set-up promises: one place for pins, the README commands, CI, layout."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PIN = re.compile(r"^\s*-\s*([A-Za-z0-9_.\-]+)==([^\s#]+)\s*$")


def pyproject_pins() -> dict[str, str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    specs = project["dependencies"] + [d for group in project["optional-dependencies"].values() for d in group]
    pins = {}
    for spec in specs:
        name, _, version = spec.partition("==")
        assert version, f"{spec!r} in pyproject.toml is not pinned with =="
        pins[name.lower()] = version
    return pins


def conda_pins(path: Path) -> dict[str, str]:
    return {m[1].lower(): m[2] for line in path.read_text().splitlines() if (m := PIN.match(line))}


def test_environment_files_pin_exactly_what_pyproject_pins():
    pins = pyproject_pins()
    assert {"pyspark", "pandas", "pyarrow", "orjson", "plotly", "ipywidgets", "jupyterlab", "nbval",
            "pytest"} <= set(pins)
    for env in ("environment.yml", "binder/environment.yml"):
        assert conda_pins(ROOT / env) == pins, env
        text = (ROOT / env).read_text()
        assert "conda-forge" in text and re.search(r"openjdk=17\b", text), env


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
