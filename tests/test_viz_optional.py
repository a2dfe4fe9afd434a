"""Without the cdckit[viz] extra: reading works, and every view names the extra instead of failing obscurely.

A fresh Python process hides plotly, ipywidgets, anywidget and itables with a
meta-path finder (as if they were not installed), then reads a capture and
calls each view. The real install without the extra is tested in a venv by
the packaging tests; this one runs in the test environment, where they are
installed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from cdckit.optional import EXTRAS

ROOT = Path(__file__).resolve().parents[1]

# Runs in the child: hide the extra, then record what each call does ("ok", or the error's type and text).
SCRIPT = textwrap.dedent("""
    import importlib.abc, json, sys

    HIDDEN = set(sys.argv[1].split(","))

    class Hide(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in HIDDEN:
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)
            return None

    for loaded in [m for m in sys.modules if m.split(".")[0] in HIDDEN]:
        del sys.modules[loaded]
    sys.meta_path.insert(0, Hide())

    import cdckit

    events = cdckit.read(cdckit.samples.path("canal"))
    outcomes = {"events": len(events)}

    def attempt(name, call):
        try:
            call()
            outcomes[name] = {"ok": True}
        except Exception as error:
            outcomes[name] = {"ok": False, "type": type(error).__name__, "text": str(error),
                              "extra": getattr(error, "extra", None)}

    from cdckit import viz, notebook

    attempt("viz.diff", lambda: str(viz.diff(events)))
    attempt("viz.timeline", lambda: viz.timeline(events))
    attempt("viz.lag", lambda: viz.lag(events))
    attempt("viz.ordering", lambda: viz.ordering(events))
    attempt("cdckit.explore", lambda: cdckit.explore(events))
    attempt("report.build_report", lambda: importlib.import_module("cdckit.viz.report").build_report(events))
    attempt("interactive.table_html", lambda: importlib.import_module("cdckit.viz.interactive").table_html(events, "t"))
    attempt("notebook.setup", lambda: notebook.setup())
    outcomes["loaded"] = sorted(m for m in sys.modules if m.split(".")[0] in HIDDEN)
    print(json.dumps(outcomes))
""")

VIEWS = ["viz.timeline", "viz.lag", "viz.ordering", "cdckit.explore", "report.build_report",
         "interactive.table_html", "notebook.setup"]


@pytest.fixture(scope="module")
def outcomes() -> dict:
    hidden = ",".join(EXTRAS["viz"])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", SCRIPT, hidden], capture_output=True, text=True, cwd=ROOT, env=env,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_extra_is_the_four_view_packages():
    assert set(EXTRAS["viz"]) == {"plotly", "ipywidgets", "anywidget", "itables"}


def test_reading_works_and_loads_none_of_the_extra(outcomes):
    assert outcomes["events"] > 0
    assert outcomes["loaded"] == []


def test_the_diff_needs_no_extra(outcomes):
    assert outcomes["viz.diff"] == {"ok": True}


@pytest.mark.parametrize("view", VIEWS)
def test_each_view_raises_missing_extra_error_naming_cdckit_viz(outcomes, view):
    outcome = outcomes[view]
    assert not outcome["ok"]
    assert outcome["type"] == "MissingExtraError" and outcome["extra"] == "viz"
    assert "cdckit[viz]" in outcome["text"], outcome["text"]


def test_with_the_extra_import_cdckit_still_loads_none_of_it():
    """Import-time cost stays as it was: the views load their packages when they are used."""
    code = ("import sys, cdckit; from cdckit import viz, notebook; "
            f"print(sorted(m for m in sys.modules if m.split('.')[0] in {sorted(EXTRAS['viz'])!r}))")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
