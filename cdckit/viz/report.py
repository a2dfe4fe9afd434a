"""A capture's standalone HTML report: one file that opens offline in any browser.

``cdckit report CAPTURE -o report.html`` (or :func:`write_report`) reads a
capture and writes one self-contained page: the detection result per source,
the read accounting and quarantine, op counts per table, the timeline, the
ordering findings (per stream, and every finding row), capture lag, the
schema history, a preview of the final state of each table, and the diffs of
the updates (all changed columns in one table, and a sample side by side).

Every table is interactive (a search box, sortable columns, pages: itables,
see :mod:`cdckit.viz.interactive`). Nothing is fetched: DataTables and plotly.js
(its "basic" bundle, which draws the scatter plots, in ``cdckit/assets/``)
are embedded once each, gzip-compressed, and unpacked by the browser, so a
report of a few hundred events is well under 2 MB. Figures are drawn as
SVG (the basic bundle has no WebGL traces), at most :data:`REPORT_POINTS`
points each. Numbers are written for reading: counts with thousands
separators, measures to three significant digits. Every value taken from the
capture is escaped (the tables' cells by itables, the figures' texts by
:mod:`cdckit.viz`, whose JSON is written with ``<`` as ``\\u003c``), so a
column value such as ``<script>alert(1)</script>`` shows as text and never
runs. The page fits a 1,400 px window: wide tables scroll inside their box,
long cells are cut with the whole value as their tooltip.

>>> import cdckit
>>> page = build_report(cdckit.read(cdckit.samples.path("canal/shop")), title="shop")
>>> page.startswith("<!DOCTYPE html>"), "Op counts per table" in page
(True, True)
"""

from __future__ import annotations

import datetime as dt
import os
import warnings
from pathlib import Path
from typing import Any

import pandas as pd

from ..analysis.ordering import order_report
from ..analysis.ordering.identity import stream_columns
from ..analysis.schemas import schema_history
from ..analysis.tables import profile
from ..capture import Capture
from ..errors import CdcError
from ..frame import table_names
from ..keys import Keys, given_keys
from ..optional import require
from ..reading.detect import detect
from ..version import __version__
from .arrival_order import ordering
from .diffs import diff
from .interactive import TABLE_CSS, init_html
from .lags import lag
from .report_html import (
    CELL_CHARS,
    PLOTLY_BUNDLE,
    count_text,
    escaped,
    figure_html,
    guarded,
    plotly_script,
    readable,
    report_table,
)
from .timelines import timeline
from .transaction_spans import transaction_timeline, transactions_of

__all__ = [
    "build_report",
    "write_report",
    "readable",
    "SAMPLE_DIFFS",
    "DIFF_ROWS",
    "QUARANTINE_ROWS",
    "FINDING_ROWS",
    "TRANSACTION_ROWS",
    "STATE_ROWS",
    "SCHEMA_ROWS",
    "CELL_CHARS",
    "REPORT_POINTS",
    "PLOTLY_BUNDLE",
]

#: How many updates the report shows side by side (before and after images).
SAMPLE_DIFFS = 12
#: The most changed-column rows the searchable diff table holds (the page says when updates were left out).
DIFF_ROWS = 20_000
#: How many quarantined messages the report lists (the count is always complete).
QUARANTINE_ROWS = 1_000
#: How many rows of each ordering finding the report lists (the count is always complete).
FINDING_ROWS = 1_000
#: How many incomplete transactions the report lists (the counts are always complete).
TRANSACTION_ROWS = 1_000
#: How many rows of each table's final state the report shows.
STATE_ROWS = 100
#: How many schema history rows the report lists.
SCHEMA_ROWS = 5_000
#: Points per figure in the report (fewer than :data:`cdckit.viz.MAX_POINTS`: a page holds three figures,
#: drawn as SVG, and each point carries its hover text).
REPORT_POINTS = 5_000

_STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2rem auto; max-width: 1240px;
       color: #1b1f23; padding: 0 1rem; overflow-wrap: anywhere; }
h1 { font-size: 1.6rem; margin-bottom: .2rem; } h2 { font-size: 1.25rem; margin-top: 2.2rem;
     border-bottom: 1px solid #d0d7de; padding-bottom: .3rem; } h3 { font-size: 1.05rem; }
.meta { color: #57606a; font-size: .9rem; }
table { border-collapse: collapse; font-size: .85rem; margin: .6rem 0; }
th, td { border: 1px solid #d0d7de; padding: .25rem .5rem; text-align: left; vertical-align: top; }
th { background: #f6f8fa; }
.dt-container { font-size: .85rem; max-width: 100%; margin: .6rem 0 1.2rem; }
.dt-container table.dataTable { margin: 0; }
.box { max-width: 100%; overflow-x: auto; }
.cdckit-figure { width: 100%; }
.cdckit-diff { display: flex; flex-wrap: wrap; gap: 0 2rem; align-items: flex-start; }
.cdckit-diff-table td { max-width: 28em; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.ok { color: #1e8449; } .warning { color: #b9770e; } .error { color: #c0392b; } .info { color: #2e86c1; }
nav a { margin-right: .8rem; }
code { font-size: .85em; }
"""

_SECTIONS = [
    ("detection", "Detection"),
    ("accounting", "Read accounting"),
    ("ops", "Op counts per table"),
    ("timeline", "Timeline"),
    ("ordering", "Ordering findings"),
    ("transactions", "Transactions"),
    ("lag", "Capture lag"),
    ("schema", "Schema history"),
    ("profile", "Column profile"),
    ("state", "Final state"),
    ("diffs", "Diffs"),
]


def _require_viz() -> None:
    """Before any work: the report draws with plotly and itables (the ``cdckit[viz]`` extra)."""
    for module in ("plotly", "itables"):
        require(module, "viz", what="the report")


def _detection_section(events: pd.DataFrame, sources: list[str]) -> str:
    from ..export import is_events_file

    rows = []
    for source in sources:
        if is_events_file(source):
            rows.append(
                {
                    "source": source,
                    "dialect": ", ".join(sorted(set(events["dialect"].dropna()))),
                    "confidence": "",
                    "evidence": "canonical events written by cdckit (no detection needed)",
                }
            )
            continue
        decoded = sorted(set(events.loc[events["source"] == source, "dialect"].dropna()))
        mixed = f"; messages decoded as {', '.join(decoded)}" if len(decoded) > 1 else ""
        try:
            found = detect(source) if os.path.exists(source) else None
        except CdcError as error:
            rows.append({"source": source, "dialect": "unknown", "confidence": "", "evidence": str(error) + mixed})
            continue
        if found is None:
            rows.append(
                {
                    "source": source,
                    "dialect": ", ".join(decoded),
                    "confidence": "",
                    "evidence": "not a file: dialect as decoded",
                }
            )
        else:
            low = "LOW CONFIDENCE, check the evidence: " if found.low_confidence else ""
            rows.append(
                {
                    "source": source,
                    "dialect": found.dialect,
                    "confidence": f"{found.confidence:.2f}" + (" (low)" if found.low_confidence else ""),
                    "evidence": low
                    + ", ".join(found.evidence)
                    + (f"; runner-up {found.runner_up} ({found.runner_up_confidence:.2f})" if found.runner_up else "")
                    + mixed,
                }
            )
    if not rows:
        return "<p>No sources.</p>"
    return report_table(pd.DataFrame(rows), "detection")


def _accounting_section(capture: Capture) -> str:
    events, report, quarantine = capture.events, capture.report, capture.quarantine
    messages = report.get("messages")
    quarantined = report.get("quarantined", len(quarantine))
    share = f"{readable(100 * quarantined / messages)} %" if messages else ""
    counts = pd.DataFrame(
        [
            {
                "messages": messages,
                "events": len(events),
                "quarantined": quarantined,
                "quarantined share": share,
                "skipped": sum((report.get("skipped") or {}).values()),
            }
        ]
    )
    parts = [report_table(counts, "accounting")]
    losses = report.get("producer_losses") or []
    if losses:
        parts.append("<p>What the capture cannot know (its producer wrote less than the database held):</p>")
        parts.append(report_table(pd.DataFrame(losses, columns=["table", "column", "what", "why"]), "producer losses"))
    skipped = report.get("skipped") or {}
    if skipped:
        parts.append("<p>Skipped messages (they rightly produce no row):</p>")
        parts.append(report_table(pd.DataFrame(sorted(skipped.items()), columns=["reason", "messages"]), "skipped"))
    if len(quarantine):
        shown = quarantine.head(QUARANTINE_ROWS)
        columns = [c for c in ("source", "offset", "dialect", "reason_code", "reason", "raw") if c in shown.columns]
        parts.append(
            f"<p class='error'>{readable(len(quarantine))} message(s) quarantined"
            f"{f'; the first {readable(len(shown))} are listed' if len(shown) < len(quarantine) else ''}"
            ":</p>"
        )
        if "reason_code" in quarantine.columns:
            codes = quarantine["reason_code"].value_counts().rename_axis("reason_code").reset_index(name="messages")
            parts.append(report_table(codes, "quarantine-codes"))
        parts.append(report_table(shown[columns], "quarantine", measures=False))
    else:
        parts.append("<p class='ok'>No message was quarantined.</p>")
    return "".join(parts)


def _ops_section(events: pd.DataFrame) -> str:
    if events.empty:
        return "<p>No events.</p>"
    counts = pd.crosstab(table_names(events).fillna("(no table)").rename("table"), events["op"])
    counts["total"] = counts.sum(axis=1)
    return report_table(counts.reset_index(), "ops")


def _streams_table(report: Any) -> pd.DataFrame:
    """Finding rows per stream (a source, or a source partition with ``by="partition"``) and finding."""
    by = [c for c in stream_columns(report.by) if c in ("source", "partition")]
    counts = []
    for name in report:
        frame = report[name]
        if name == "lag" or not len(frame):
            continue
        keys = frame.reindex(columns=by).astype(object)
        keys = keys.where(keys.notna(), "").astype(str)
        if "source" in keys.columns:
            keys["source"] = keys["source"].replace("", "(whole capture)")
        counts.append(keys.assign(finding=name).value_counts().rename("rows").reset_index())
    if not counts:
        return pd.DataFrame(columns=[*by, "finding", "rows"])
    table = pd.concat(counts).pivot_table(index=by, columns="finding", values="rows", aggfunc="sum", fill_value=0)
    table = table[[name for name in report if name in table.columns]]
    table.insert(0, "all findings", table.sum(axis=1))
    return table.reset_index().rename_axis(columns=None)


def _ordering_section(events: pd.DataFrame) -> tuple[str, Any]:
    report = order_report(events)
    summary = report.summary()
    summary = summary[summary["finding"] != "lag"]
    parts = [
        f"<p>{readable(report.problems())} finding row(s); events compared {escaped(report.grouping())} "
        f"(<code>by={escaped(repr(report.by))}</code>).</p>",
        report_table(summary, "findings"),
    ]
    streams = _streams_table(report)
    if len(streams):
        parts.append(
            "<h3>Findings per stream</h3><p>Finding rows in each stream (the events that were compared "
            "with each other); a finding about a whole table, such as a table without a key, counts "
            "under <i>(whole capture)</i>.</p>"
        )
        parts.append(report_table(streams, "streams"))
    for name in summary.loc[summary["rows"] > 0, "finding"]:
        frame = report[name]
        shown = frame.head(FINDING_ROWS)
        parts.append(f"<h3><code>{escaped(name)}</code>: {count_text(len(frame), len(shown), 'row(s)')}</h3>")
        parts.append(report_table(shown, f"finding-{name}"))
    return "".join(parts), report


# --------------------------------------------------------------------------- transactions

#: The columns of the incomplete transactions' list.
_TRANSACTION_COLUMNS = (
    "txn_id dialect status changes declared_changes tables declared_tables begin_source begin_offset "
    "commit_source commit_offset begin_time commit_time detail"
).split()


def _transactions_section(events: pd.DataFrame, max_points: int) -> str:
    """Counts of the transactions by status, the incomplete ones with their detail, and their timeline."""
    table = transactions_of(events)
    if not len(table):
        return "<p>No transactions in this capture (no transaction ids, no begin or commit markers).</p>"
    status = table["status"].astype(str)
    counts = (
        table.assign(status=status)
        .groupby("status", sort=False)
        .agg(transactions=("status", "size"), changes=("changes", "sum"))
    )
    incomplete = table[table["complete"].eq(False).fillna(False).to_numpy(dtype=bool)]
    undeclared = int((status == "undeclared").sum())
    said = (
        f"<p>{readable(len(table))} transaction(s) (<code>cdckit.transactions</code>): "
        f"{readable(int(table['complete'].eq(True).sum()))} complete, "
        f"<span class='{'error' if len(incomplete) else 'ok'}'>{readable(len(incomplete))} incomplete</span>, "
        f"{readable(undeclared)} undeclared (their producer does not say where they end).</p>"
    )
    parts = [said, report_table(counts.reset_index(), "transaction-counts")]
    if len(incomplete):
        shown = incomplete.head(TRANSACTION_ROWS)
        parts.append(f"<h3>Incomplete transactions: {count_text(len(incomplete), len(shown), 'row(s)')}</h3>")
        columns = [c for c in _TRANSACTION_COLUMNS if c in shown.columns]
        parts.append(report_table(shown[columns], "transactions-incomplete", measures=False))
    figure = transaction_timeline(events, transactions=table, max_points=max_points)
    return "".join(parts) + figure_html(figure, 3)


def _lag_table(report: Any) -> str:
    lags = report["lag"]
    if not len(lags):
        return "<p>No event carries both times.</p>"
    return "<p>Lag in seconds (emit_time − event_time) per table:</p>" + report_table(lags, "lag")


# --------------------------------------------------------------------------- schema history


def _schema_section(events: pd.DataFrame) -> str:
    history = schema_history(events)
    if not len(history):
        return "<p>No table images or DDL in this capture.</p>"
    shown = history.head(SCHEMA_ROWS)
    return (
        f"<p>{count_text(len(history), len(shown), 'change(s)')}: when each table was first seen with its "
        "columns, every later change of its columns or their types, and the DDL events.</p>"
        + report_table(shown, "schema", measures=False)
    )


# --------------------------------------------------------------------------- column profile


def _profile_section(events: pd.DataFrame) -> str:
    found = profile(events)
    if not len(found):
        return "<p>No table images to profile.</p>"
    return (
        "<p>Per table and column (<code>cdckit.profile</code>): its kind (declared by the capture, or "
        "inferred), how many values the images hold, the share of nulls, distinct values, the smallest "
        "and largest, and the share of updates that changed it.</p>" + report_table(found, "profile")
    )


# --------------------------------------------------------------------------- final state


def _state_section(events: pd.DataFrame) -> str:
    from ..analysis.replay import materialize

    with warnings.catch_warnings(record=True) as said:  # what materialize warns of is said on the page
        warnings.simplefilter("always")
        state = materialize(events)
    notes = []
    for warning in said:
        if issubclass(warning.category, UserWarning):
            notes.append(f"<p><strong>Note:</strong> {escaped(str(warning.message))}</p>")
        else:  # not materialize's own: passed on as raised
            warnings.warn_explicit(warning.message, warning.category, warning.filename, warning.lineno)
    if not len(state):
        return "<p>No table has row changes to replay.</p>" + "".join(notes)
    parts = [
        f"<p>The rows of each table after replaying the changes in seq order "
        f"(<code>cdckit.materialize</code>); the first {readable(STATE_ROWS)} of each.</p>",
        *notes,
    ]
    for number, (table, frame) in enumerate(state.items()):
        shown = frame.head(STATE_ROWS)
        parts.append(f"<h3><code>{escaped(table)}</code>: {count_text(len(frame), len(shown), 'live row(s)')}</h3>")
        parts.append(report_table(shown, f"state-{number}", measures=False))
    return "".join(parts)


# --------------------------------------------------------------------------- diffs


def _changed_columns(events: pd.DataFrame) -> tuple[pd.DataFrame, int, int]:
    """(changed-column rows of the first updates, updates covered, all updates); at most :data:`DIFF_ROWS` rows."""
    updates = events[events["op"] == "update"].reset_index(drop=True)
    parts, rows, covered = [], 0, 0
    for start in range(0, len(updates), 1_000):
        chunk = updates.iloc[start : start + 1_000]
        found = diff(chunk, limit=len(chunk))
        changed = found.rows[~found.rows["status"].isin(("unchanged", "not sent"))]
        room = DIFF_ROWS - rows
        if len(changed) > room:  # keep whole updates only: those before the first that does not fit
            per_update = changed.groupby("event", sort=False).size()
            first_out = int(per_update.index[int((per_update.cumsum() <= room).sum())])
            parts.append(_diff_rows(found, changed[changed["event"] < first_out], updates))
            covered = first_out
            break
        covered += len(chunk)
        rows += len(changed)
        parts.append(_diff_rows(found, changed, updates))
    frame = pd.concat(parts) if parts else _diff_rows(None, None, updates)
    return frame, covered, len(updates)


def _diff_rows(found: Any, changed: Any, updates: pd.DataFrame) -> pd.DataFrame:
    columns = ["table", "key", "seq", "column", "before", "after", "status", "source", "offset"]
    if changed is None or not len(changed):
        return pd.DataFrame(columns=columns)
    return pd.DataFrame(
        {
            "table": changed["table"].tolist(),
            "key": changed["key"].tolist(),
            "seq": updates["seq"].to_numpy()[changed["event"].to_numpy(dtype=int)].tolist(),
            "column": changed["column"].tolist(),
            "before": [found._cells(v, s, "before")[0] for v, s in zip(changed["before"], changed["status"])],
            "after": [found._cells(v, s, "after")[0] for v, s in zip(changed["after"], changed["status"])],
            "status": changed["status"].tolist(),
            "source": changed["source"].tolist(),
            "offset": changed["offset"].tolist(),
        },
        columns=columns,
    )


def _diffs_section(events: pd.DataFrame, sample_diffs: int) -> str:
    frame, covered, updates = _changed_columns(events)
    if not updates:
        return f"<p>No updates among {readable(len(events))} event(s).</p>"
    left = (
        f" They cover the first {readable(covered)} of {readable(updates)} updates (the table holds at most "
        f"{readable(DIFF_ROWS)} rows)."
        if covered < updates
        else ""
    )
    parts = [
        f"<p>Every column that an update changed, one row each: {readable(len(frame))} row(s) from "
        f"{readable(updates)} update(s).{left} Search by table, key, column or value.</p>",
        report_table(frame, "diffs", measures=False),
        f"<h3>The first {readable(min(sample_diffs, updates))} update(s) side by side</h3>",
        f"<div class='box'>{diff(events, limit=sample_diffs)._repr_html_()}</div>",
    ]
    return "".join(parts)


# --------------------------------------------------------------------------- the page


def build_report(
    events: Capture | pd.DataFrame,
    *,
    title: str | None = None,
    sources: list[str] | None = None,
    sample_diffs: int = SAMPLE_DIFFS,
    max_points: int = REPORT_POINTS,
    keys: Keys | None = None,
) -> str:
    """The report page of a capture (or decoded ``events``) as one HTML string (DataTables and plotly.js
    inline, compressed).

    ``sources``: the files to show detection for (default: the sources of the
    events and the quarantine that exist as files). ``keys``: key columns of
    tables whose capture names none, as for :func:`cdckit.read` (the state,
    diffs and ordering sections then follow rows by them).

    >>> import cdckit
    >>> page = build_report(cdckit.read(cdckit.samples.path("lindorm")))
    >>> "<h2>Diffs</h2>" in page, "<script src=" in page
    (True, False)
    """
    _require_viz()
    capture = given_keys(Capture.of(events), keys)
    events, quarantine = capture.with_attrs(), capture.quarantine
    if sources is None:
        names = list(events["source"].dropna().unique())
        if len(quarantine):
            names += [s for s in quarantine["source"].dropna().unique() if s not in names]
        sources = [str(s) for s in names]
    ordering_html, report = _ordering_section(events)
    figures = [
        timeline(events, max_points=max_points),
        ordering(events, report, max_points=max_points),
        lag(events, max_points=max_points),
    ]
    if len(events):
        timeline_html, ordering_fig_html, lag_html = (figure_html(f, number) for number, f in enumerate(figures))
    else:  # plotly draws an empty figure's axis from 2000 to 2001: say there is nothing instead
        timeline_html = ordering_fig_html = lag_html = "<p>No event to draw: the capture holds none.</p>"
    body = {
        "detection": _detection_section(events, sources),
        "accounting": _accounting_section(capture),
        "ops": _ops_section(events),
        "timeline": timeline_html,
        "ordering": ordering_html + ordering_fig_html,
        "transactions": guarded(lambda: _transactions_section(events, max_points), "transactions"),
        "lag": lag_html + _lag_table(report),
        "schema": guarded(lambda: _schema_section(events), "schema history"),
        "profile": guarded(lambda: _profile_section(events), "column profile"),
        "state": guarded(lambda: _state_section(events), "final state"),
        "diffs": guarded(lambda: _diffs_section(events, sample_diffs), "diffs"),
    }
    title = title or (sources[0] if len(sources) == 1 else f"{len(sources)} sources")
    nav = "".join(f"<a href='#{key}'>{escaped(label)}</a>" for key, label in _SECTIONS)
    sections = "".join(
        f"<section id='{key}'><h2>{escaped(label)}</h2>{body[key]}</section>" for key, label in _SECTIONS
    )
    made = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return (
        "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>cdckit report: {escaped(title)}</title><style>{_STYLE}{TABLE_CSS}</style></head><body>"
        f"<h1>cdckit report: {escaped(title)}</h1>"
        f"<p class='meta'>{readable(len(events))} events from {readable(len(sources))} source(s); made {made} "
        f"by cdckit {escaped(__version__)}</p><nav>{nav}</nav>{sections}"
        f"{init_html()}{plotly_script()}</body></html>\n"
    )


def write_report(
    source: Any,
    path: str | os.PathLike[str],
    *,
    dialect: str | None = None,
    overwrite: bool = False,
    title: str | None = None,
    events: Capture | pd.DataFrame | None = None,
    keys: Keys | None = None,
) -> Any:
    """Read ``source`` (anything :func:`cdckit.read` takes) and write its report to ``path``.

    The page is written to a temporary file and renamed into place; an
    existing ``path`` raises ``FileExistsError`` unless ``overwrite``.
    ``events``: the already decoded capture (or events) of ``source`` (skips the read). ``keys``: key columns
    of tables whose capture names none (see :func:`build_report`).
    Returns :class:`cdckit.export.Written`.

    >>> import cdckit, tempfile, pathlib
    >>> out = pathlib.Path(tempfile.mkdtemp()) / "report.html"
    >>> written = write_report(cdckit.samples.path("maxwell"), out)
    >>> written.rows == len(cdckit.read(cdckit.samples.path("maxwell"))), out.exists()
    (True, True)
    """
    from ..export import Written, atomic_path
    from ..reading.read import read

    _require_viz()
    target = Path(path)
    if events is None:
        events = read(source, dialect=dialect, capture=True, keys=keys)
    elif keys:
        events = given_keys(Capture.of(events), keys)
    sources = None
    if isinstance(source, (str, os.PathLike)) and os.path.isfile(source):
        sources = [str(source)]
    page = build_report(events, title=title or (Path(source).name if sources else None), sources=sources)
    with atomic_path(target, overwrite=overwrite) as tmp:
        Path(tmp).write_text(page, encoding="utf-8")
    size = target.stat().st_size
    count = len(Capture.of(events).events)
    return Written(
        path=target,
        format="html",
        rows=count,
        files=[target],
        bytes=size,
        notes=[],
        what=f"the report of {count:,} event" + ("" if count == 1 else "s"),
    )
