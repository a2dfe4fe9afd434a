"""The standalone HTML report, now :mod:`cdckit.viz.report` (this path is kept for old imports).

>>> from cdckit.report import write_report
>>> write_report.__module__
'cdckit.viz.report'
"""

from .viz.report import (CELL_CHARS, DIFF_ROWS, FINDING_ROWS, PLOTLY_BUNDLE, QUARANTINE_ROWS, REPORT_POINTS,
                         SAMPLE_DIFFS, SCHEMA_ROWS, STATE_ROWS, build_report, readable, write_report)

__all__ = ["build_report", "write_report", "readable", "SAMPLE_DIFFS", "DIFF_ROWS", "QUARANTINE_ROWS",
           "FINDING_ROWS", "STATE_ROWS", "SCHEMA_ROWS", "CELL_CHARS", "REPORT_POINTS", "PLOTLY_BUNDLE"]
