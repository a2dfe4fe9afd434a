"""nbval settings for the curated notebooks (run by ``make test``).

A plotly figure's JSON carries plotly's whole template, so a plotly upgrade
would break a comparison on it: that MIME type is skipped, and each notebook
prints a short text summary of its figures that is compared instead.
Widget views carry run-dependent model ids and are skipped too.
"""

from __future__ import annotations

import os
from pathlib import Path

# The kernels nbval starts use the test profile (capture_fd_output = False), so
# that Spark's JVM output stays out of the cells however pytest was started.
os.environ.setdefault("IPYTHONDIR", str(Path(__file__).resolve().parent.parent / "tests" / "ipython"))

SKIPPED_MIME_TYPES = (
    "application/vnd.plotly.v1+json",
    "application/vnd.jupyter.widget-view+json",
)


def pytest_collectstart(collector):
    if collector.fspath and collector.fspath.ext == ".ipynb":
        collector.skip_compare = tuple(collector.skip_compare) + SKIPPED_MIME_TYPES
