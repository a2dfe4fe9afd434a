"""A capture's standalone HTML report: one file that opens offline in any browser.

``cdckit report CAPTURE -o report.html`` (or :func:`write_report`) reads a
capture and writes one self-contained page: the detection result per source,
the read accounting and quarantine, op counts per table, the timeline, the
ordering findings, capture lag, and before/after diffs of a sample of updates.
plotly.js is embedded in the page (nothing is fetched from a CDN), and every
value taken from the capture is escaped, so a column value such as
``<script>alert(1)</script>`` shows as text and never runs.

>>> import cdckit
>>> page = build_report(cdckit.read(cdckit.samples.path("canal/shop")), title="shop")
>>> page.startswith("<!DOCTYPE html>"), "Op counts per table" in page
(True, True)
"""

from __future__ import annotations

import datetime as dt
import html
import os
from pathlib import Path
from typing import Any

import pandas as pd
import plotly.graph_objects as go
import plotly.io as pio

from . import __version__, viz
from .detect import detect
from .errors import CdcError
from .ordering import order_report, table_names

__all__ = ["build_report", "write_report", "SAMPLE_DIFFS", "QUARANTINE_ROWS", "FINDING_ROWS", "REPORT_POINTS"]

#: How many updates the report shows as before/after diffs.
SAMPLE_DIFFS = 12
#: How many quarantined messages the report lists (the count is always complete).
QUARANTINE_ROWS = 50
#: How many rows of each ordering finding the report lists.
FINDING_ROWS = 20
#: Points per figure in the report (fewer than :data:`cdckit.viz.MAX_POINTS`: a page holds three figures,
#: and each point carries its hover text; 20,000 keeps a page of a million events near 15 MB).
REPORT_POINTS = 20_000

_STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2rem auto; max-width: 1200px;
       color: #1b1f23; padding: 0 1rem; }
h1 { font-size: 1.6rem; margin-bottom: .2rem; } h2 { font-size: 1.25rem; margin-top: 2.2rem;
     border-bottom: 1px solid #d0d7de; padding-bottom: .3rem; }
.meta { color: #57606a; font-size: .9rem; }
table { border-collapse: collapse; font-size: .85rem; margin: .6rem 0; }
th, td { border: 1px solid #d0d7de; padding: .25rem .5rem; text-align: left; vertical-align: top; }
th { background: #f6f8fa; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.ok { color: #1e8449; } .warning { color: #b9770e; } .error { color: #c0392b; } .info { color: #2e86c1; }
nav a { margin-right: .8rem; }
code { font-size: .85em; }
"""

_SECTIONS = [("detection", "Detection"), ("accounting", "Read accounting"), ("ops", "Op counts per table"),
             ("timeline", "Timeline"), ("ordering", "Ordering findings"), ("lag", "Capture lag"),
             ("diffs", "Sample diffs")]


def _e(value: Any) -> str:
    return html.escape("" if value is None else str(value))


def _table(frame: pd.DataFrame, numeric: tuple[str, ...] = ()) -> str:
    """A DataFrame as an HTML table with every header and cell escaped."""
    head = "".join(f"<th>{_e(c)}</th>" for c in frame.columns)
    body = []
    for row in frame.itertuples(index=False, name=None):
        cells = "".join(f"<td class='num'>{_e(v)}</td>" if c in numeric else f"<td>{_e(_short(v))}</td>"
                        for c, v in zip(frame.columns, row))
        body.append(f"<tr>{cells}</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _short(value: Any, width: int = 160) -> Any:
    text = "" if value is None or value is pd.NaT or (isinstance(value, float) and pd.isna(value)) else str(value)
    return text if len(text) <= width else text[: width - 1] + "…"


def _figure(fig: go.Figure, first: bool) -> str:
    """A figure as a div; the first one carries plotly.js inline (about 4.5 MB), the others reuse it."""
    return pio.to_html(fig, include_plotlyjs=True if first else False, full_html=False,
                       config={"displaylogo": False, "responsive": True})


def _detection_section(events: pd.DataFrame, sources: list[str]) -> str:
    from .export import is_events_file

    rows = []
    for source in sources:
        if is_events_file(source):
            rows.append({"source": source, "dialect": ", ".join(sorted(set(events["dialect"].dropna()))),
                         "confidence": "", "evidence": "canonical events written by cdckit (no detection needed)"})
            continue
        decoded = sorted(set(events.loc[events["source"] == source, "dialect"].dropna()))
        mixed = f"; messages decoded as {', '.join(decoded)}" if len(decoded) > 1 else ""
        try:
            found = detect(source) if os.path.exists(source) else None
        except CdcError as error:
            rows.append({"source": source, "dialect": "unknown", "confidence": "", "evidence": str(error) + mixed})
            continue
        if found is None:
            rows.append({"source": source, "dialect": ", ".join(decoded), "confidence": "",
                         "evidence": "not a file: dialect as decoded"})
        else:
            low = "LOW CONFIDENCE, check the evidence: " if found.low_confidence else ""
            rows.append({"source": source, "dialect": found.dialect,
                         "confidence": f"{found.confidence:.2f}" + (" (low)" if found.low_confidence else ""),
                         "evidence": low + ", ".join(found.evidence)
                         + (f"; runner-up {found.runner_up} ({found.runner_up_confidence:.2f})"
                            if found.runner_up else "") + mixed})
    if not rows:
        return "<p>No sources.</p>"
    return _table(pd.DataFrame(rows))


def _accounting_section(events: pd.DataFrame) -> str:
    report = events.attrs.get("report") or {}
    quarantine = events.attrs.get("quarantine")
    counts = pd.DataFrame([{"messages": report.get("messages", ""), "events": len(events),
                            "quarantined": report.get("quarantined", 0 if quarantine is None else len(quarantine)),
                            "skipped": sum((report.get("skipped") or {}).values())}])
    parts = [_table(counts, numeric=tuple(counts.columns))]
    skipped = report.get("skipped") or {}
    if skipped:
        parts.append("<p>Skipped messages (they rightly produce no row):</p>")
        parts.append(_table(pd.DataFrame(sorted(skipped.items()), columns=["reason", "messages"]),
                            numeric=("messages",)))
    if quarantine is not None and len(quarantine):
        shown = quarantine.head(QUARANTINE_ROWS)
        columns = [c for c in ("source", "offset", "dialect", "reason_code", "reason", "raw") if c in shown.columns]
        parts.append(f"<p class='error'>{len(quarantine):,} message(s) quarantined"
                     f"{f'; the first {len(shown)} are listed' if len(shown) < len(quarantine) else ''}:</p>")
        if "reason_code" in quarantine.columns:
            codes = quarantine["reason_code"].value_counts().rename_axis("reason_code").reset_index(name="messages")
            parts.append(_table(codes, numeric=("messages",)))
        parts.append(_table(shown[columns], numeric=("offset",)))
    else:
        parts.append("<p class='ok'>No message was quarantined.</p>")
    return "".join(parts)


def _ops_section(events: pd.DataFrame) -> str:
    if events.empty:
        return "<p>No events.</p>"
    counts = pd.crosstab(table_names(events).fillna("(no table)").rename("table"), events["op"])
    counts["total"] = counts.sum(axis=1)
    counts = counts.reset_index()
    return _table(counts, numeric=tuple(c for c in counts.columns if c != "table"))


def _ordering_section(events: pd.DataFrame) -> tuple[str, Any]:
    report = order_report(events)
    summary = report.summary()
    summary = summary[summary["finding"] != "lag"]
    rows = "".join(f"<tr><td><code>{_e(r.finding)}</code></td><td class='{_e(r.severity)}'>{_e(r.severity)}</td>"
                   f"<td class='num'>{r.rows}</td><td>{_e(r.meaning)}</td></tr>" for r in summary.itertuples())
    parts = [f"<p>{report.problems():,} finding row(s); events compared {_e(report.grouping())} "
             f"(<code>by={_e(repr(report.by))}</code>).</p><table><thead><tr><th>finding</th><th>severity</th>"
             f"<th>rows</th><th>meaning</th></tr></thead><tbody>{rows}</tbody></table>"]
    for name in summary.loc[summary["rows"] > 0, "finding"]:
        frame = report[name]
        parts.append(f"<h3><code>{_e(name)}</code> ({len(frame):,} row(s)"
                     f"{f', first {FINDING_ROWS} shown' if len(frame) > FINDING_ROWS else ''})</h3>")
        parts.append(_table(frame.head(FINDING_ROWS), numeric=("offset", "other_offset", "partition")))
    return "".join(parts), report


def build_report(events: pd.DataFrame, *, title: str | None = None, sources: list[str] | None = None,
                 sample_diffs: int = SAMPLE_DIFFS, max_points: int = REPORT_POINTS) -> str:
    """The report page of decoded ``events`` as one HTML string (plotly.js inline).

    ``sources``: the files to show detection for (default: the sources of the
    events and the quarantine that exist as files).

    >>> import cdckit
    >>> page = build_report(cdckit.read(cdckit.samples.path("lindorm")))
    >>> "Sample diffs" in page, "<script src=" in page
    (True, False)
    """
    quarantine = events.attrs.get("quarantine")
    if sources is None:
        names = list(events["source"].dropna().unique())
        if quarantine is not None and len(quarantine):
            names += [s for s in quarantine["source"].dropna().unique() if s not in names]
        sources = [str(s) for s in names]
    ordering_html, report = _ordering_section(events)
    figures = [viz.timeline(events, max_points=max_points), viz.ordering(events, report, max_points=max_points),
               viz.lag(events, max_points=max_points)]
    timeline_html, ordering_fig_html, lag_html = (_figure(f, first=i == 0) for i, f in enumerate(figures))
    lag_table = report["lag"]
    diffs = viz.diff(events, limit=sample_diffs)
    body = {
        "detection": _detection_section(events, sources),
        "accounting": _accounting_section(events),
        "ops": _ops_section(events),
        "timeline": timeline_html,
        "ordering": ordering_html + ordering_fig_html,
        "lag": lag_html + (_table(lag_table) if len(lag_table) else "<p>No event carries both times.</p>"),
        "diffs": diffs._repr_html_(),
    }
    title = title or (sources[0] if len(sources) == 1 else f"{len(sources)} sources")
    nav = "".join(f"<a href='#{key}'>{_e(label)}</a>" for key, label in _SECTIONS)
    sections = "".join(f"<section id='{key}'><h2>{_e(label)}</h2>{body[key]}</section>" for key, label in _SECTIONS)
    made = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return ("<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
            "<meta name='viewport' content='width=device-width, initial-scale=1'>"
            f"<title>cdckit report: {_e(title)}</title><style>{_STYLE}</style></head><body>"
            f"<h1>cdckit report: {_e(title)}</h1>"
            f"<p class='meta'>{len(events):,} events from {len(sources)} source(s); made {made} by cdckit "
            f"{_e(__version__)}</p><nav>{nav}</nav>{sections}</body></html>\n")


def write_report(source: Any, path: str | os.PathLike[str], *, dialect: str | None = None,
                 overwrite: bool = False, title: str | None = None, events: pd.DataFrame | None = None) -> Any:
    """Read ``source`` (anything :func:`cdckit.read` takes) and write its report to ``path``.

    The page is written to a temporary file and renamed into place; an
    existing ``path`` raises ``FileExistsError`` unless ``overwrite``.
    ``events``: already decoded events of ``source`` (skips the read).
    Returns :class:`cdckit.export.Written`.

    >>> import cdckit, tempfile, pathlib
    >>> out = pathlib.Path(tempfile.mkdtemp()) / "report.html"
    >>> written = write_report(cdckit.samples.path("maxwell"), out)
    >>> written.rows == len(cdckit.read(cdckit.samples.path("maxwell"))), out.exists()
    (True, True)
    """
    from .export import Written, atomic_path
    from .read import read

    target = Path(path)
    if events is None:
        events = read(source, dialect=dialect)
    sources = None
    if isinstance(source, (str, os.PathLike)) and os.path.isfile(source):
        sources = [str(source)]
    page = build_report(events, title=title or (Path(source).name if sources else None), sources=sources)
    with atomic_path(target, overwrite=overwrite) as tmp:
        Path(tmp).write_text(page, encoding="utf-8")
    size = target.stat().st_size
    return Written(path=target, format="html", rows=len(events), files=[target], bytes=size, notes=[])
