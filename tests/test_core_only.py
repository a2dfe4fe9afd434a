"""cdckit with only its core installed: no Spark, no views, as ``pip install cdckit`` gives.

The check runs in a real separate virtual environment built in a temporary
folder from the same base interpreter (``python -m venv --without-pip``, no
network): its ``.pth`` file lists a folder of links to the core distributions
only (pyproject.toml's core requirements and theirs, recursively, found with
importlib.metadata where this test runs) and the repository root for cdckit.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from importlib.metadata import Distribution, distribution
from pathlib import Path

import pytest
import tomllib
from packaging.requirements import Requirement

from cdckit.optional import EXTRAS

ROOT = Path(__file__).resolve().parent.parent
#: The modules that may need an extra: Spark and the views (the viz engineer makes these lazy).
OPTIONAL_PARTS = ("cdckit.spark", "cdckit.viz")


def core_distributions() -> list[Distribution]:
    """The installed distributions of the core requirements and of their own requirements, recursively."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    todo = [Requirement(spec) for spec in project["dependencies"]]
    found: dict[str, Distribution] = {}
    while todo:
        requirement = todo.pop()
        if requirement.marker is not None and not requirement.marker.evaluate({"extra": ""}):
            continue
        dist = distribution(requirement.name)
        name = dist.metadata["Name"].lower().replace("_", "-")
        if name not in found:
            found[name] = dist
            todo += [Requirement(spec) for spec in dist.requires or []]
    return list(found.values())


def link_top_level(dist: Distribution, folder: Path) -> None:
    """Link each top-level package, module and folder of ``dist`` (its .dist-info too) into ``folder``."""
    for top in {file.parts[0] for file in dist.files or []} - {"..", "__pycache__"}:
        link = folder / top
        if not link.exists():
            link.symlink_to(Path(dist.locate_file(top)).resolve())


@pytest.fixture(scope="module")
def core_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The python of a new virtual environment that sees only the core distributions and cdckit."""
    base = tmp_path_factory.mktemp("core_only")
    venv, core = base / "venv", base / "core"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    core.mkdir()
    for dist in core_distributions():
        link_top_level(dist, core)
    site = subprocess.run([str(python), "-I", "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                          check=True, capture_output=True, text=True).stdout.strip()
    (Path(site) / "cdckit_core_only.pth").write_text(f"{core}\n{ROOT}\n")
    return python


PREAMBLE = f"""
import importlib
import sys
from pathlib import Path

from cdckit.optional import MissingExtraError

ROOT = Path({str(ROOT)!r})
OPTIONAL_PARTS = {OPTIONAL_PARTS!r}


def module_names():
    for path in sorted((ROOT / "cdckit").rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        yield ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def fails_naming(extra, call):
    try:
        call()
    except MissingExtraError as error:
        assert error.extra == extra and f"pip install 'cdckit[{{extra}}]'" in str(error), error
    else:
        raise AssertionError(f"no MissingExtraError naming cdckit[{{extra}}]")


print("core-only environment:", sys.prefix)  # top level: the script below cannot continue a function
"""


def run(python: Path, script: str, cwd: Path) -> None:
    """Run :data:`PREAMBLE` and ``script`` in ``python``, isolated from this process's environment."""
    env = {name: value for name, value in os.environ.items() if not name.startswith("PYTHON")}
    source = PREAMBLE + textwrap.dedent(script) + "\nprint('done')\n"  # "done": it ran to the end
    done = subprocess.run([str(python), "-I", "-c", source], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and done.stdout.splitlines()[-1:] == ["done"], done.stdout + done.stderr


def test_the_core_reads_replays_and_writes_without_spark_and_views(core_python: Path, tmp_path: Path) -> None:
    optional_modules = sorted(module for modules in EXTRAS.values() for module in modules)
    run(core_python, f"""
    for module in {optional_modules!r}:  # the environment really lacks the extras
        try:
            importlib.import_module(module)
        except ImportError:
            pass
        else:
            raise AssertionError(module + " is importable in the core-only environment")

    import cdckit
    assert cdckit.__file__ == str(ROOT / "cdckit" / "__init__.py"), cdckit.__file__

    # every core module imports: none needs pyspark or plotly at import time
    for name in module_names():
        if name != "cdckit.__main__" and not name.startswith(OPTIONAL_PARTS):
            importlib.import_module(name)

    path = cdckit.samples.path("debezium/shop")
    assert cdckit.detect(path).dialect == "debezium"
    events = cdckit.read(path)
    assert len(events) == 320
    states = cdckit.materialize(events)
    customers = states["shop.customers"]
    assert len(customers) > 0
    assert cdckit.sort_events(events).shape == events.shape
    cdckit.order_report(events)
    assert len(cdckit.history(events, "shop.customers", int(customers["id"].iloc[0]))) > 0
    assert set(cdckit.scd2(events)) == set(states)
    assert len(cdckit.table(events, "shop.customers")) > 0
    assert cdckit.compare(events, events).ok
    assert cdckit.reconcile(customers, customers, key="id").ok

    from cdckit import export
    for fmt in ("parquet", "csv", "jsonl"):
        written = export.write_events(events, Path("out") / ("events." + fmt), fmt)
        assert written.rows == len(events), (fmt, written)
    assert len(cdckit.read("out/events.parquet")) == len(events)
    cdckit.convert(events, "maxwell", "out/maxwell.jsonl")
    assert len(cdckit.read("out/maxwell.jsonl", dialect="maxwell")) > 0

    def spark_read():
        from cdckit import spark as cdcspark
        return cdcspark.read

    fails_naming("spark", lambda: importlib.import_module("cdckit.spark"))
    fails_naming("spark", spark_read)
    assert "cdckit.spark" not in sys.modules

    import contextlib, io  # the command line says which extra to install, in one line
    from cdckit.cli import main
    from cdckit.cli.exit_codes import EXIT_INPUT
    stderr = io.StringIO()
    with contextlib.redirect_stderr(stderr):
        code = main(["convert", str(path), "-o", "out/spark.parquet", "--engine", "spark"])
    assert code == EXIT_INPUT and "pip install 'cdckit[spark]'" in stderr.getvalue(), (code, stderr.getvalue())
    """, tmp_path)


def test_the_views_name_the_viz_extra_when_it_is_missing(core_python: Path, tmp_path: Path) -> None:
    run(core_python, """
    import cdckit
    import cdckit.viz  # imports without plotly; drawing needs the extra

    events = cdckit.read(cdckit.samples.path("debezium/shop"))
    fails_naming("viz", lambda: cdckit.viz.timeline(events))
    """, tmp_path)
