"""The ordering report: every finding of a capture as a frame, with a summary and its notebook view.

The finding rows come from :mod:`cdckit.analysis.ordering.kernels` (pandas) or
:mod:`cdckit.spark.ordering` (Spark); what each finding means is in
:mod:`cdckit.analysis.ordering.catalogue`.

>>> import cdckit
>>> events = cdckit.read(cdckit.samples.path("canal/examples"))
>>> report = order_report(events)
>>> int(report.summary().set_index("finding").loc["inversions", "rows"])
0
"""

from __future__ import annotations

import html
from collections.abc import Iterator
from dataclasses import dataclass

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ...capture import Capture
from . import kernels
from .catalogue import FINDINGS
from .identity import stream_columns
from .kernels import HEARTBEAT_FACTOR
from .narrow import narrow
from .replayed import replayed_findings

__all__ = ["order_report", "OrderReport", "Finding", "report_from_rows"]

#: The colour of each severity in the notebook view (``ok``: none of the others).
_COLOURS = {"error": "#c0392b", "warning": "#b9770e", "info": "#2e86c1"}
_OK_COLOUR = "#1e8449"


@dataclass
class Finding:
    """One kind of finding: its rows and what they mean."""

    name: str
    severity: str
    meaning: str
    frame: pd.DataFrame

    def __len__(self) -> int:
        return len(self.frame)


class OrderReport:
    """The ordering findings of a capture, one DataFrame each.

    ``report["inversions"]`` is a finding's frame (each row points at the
    event by ``source``/``offset``, and at the event it conflicts with by
    ``other_source``/``other_offset``); ``report.summary()`` counts them; in
    a notebook the report shows itself as a table.

    >>> report = OrderReport({}, by="partition")
    >>> report.problems(), report.grouping()
    (0, 'within each source partition and dialect')
    """

    def __init__(self, frames: dict[str, pd.DataFrame], by: str = "source") -> None:
        self.by = by
        self.findings: dict[str, Finding] = {}
        for name, spec in FINDINGS.items():
            frame = frames.get(name)
            if frame is None:
                frame = pd.DataFrame(columns=list(spec.columns))
            frame = frame[list(spec.columns)] if name != "lag" else frame
            self.findings[name] = Finding(name, spec.severity, spec.meaning, _sorted(frame.reset_index(drop=True)))

    def __getitem__(self, name: str) -> pd.DataFrame:
        return self.findings[name].frame

    def __iter__(self) -> Iterator[str]:
        return iter(self.findings)

    def grouping(self) -> str:
        """Which events were compared with each other (the ``by=`` of :func:`order_report`), in words."""
        return {
            "capture": "within each dialect across the whole capture",
            "source": "within each source (file or topic) and dialect",
            "partition": "within each source partition and dialect",
        }[self.by]

    def problems(self) -> int:
        """Rows in all findings except the lag summary."""
        return sum(len(f) for name, f in self.findings.items() if name != "lag")

    def summary(self) -> pd.DataFrame:
        """One row per finding: severity (``ok`` when there are no rows), rows, meaning."""
        return pd.DataFrame(
            [
                {
                    "finding": f.name,
                    "severity": f.severity if len(f) and f.name != "lag" else "ok",
                    "rows": len(f),
                    "meaning": f.meaning,
                }
                for f in self.findings.values()
            ]
        )

    def __repr__(self) -> str:
        lines = [f"OrderReport: {self.problems()} finding row(s); events compared {self.grouping()}"]
        for f in self.findings.values():
            if f.name != "lag":
                state = f"{len(f)} {f.severity}" if len(f) else "none"
                lines.append(f"  {f.name:<24} {state}")
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        """The summary as an HTML table; every value is escaped."""
        cells = []
        for row in self.summary().itertuples():
            colour = _COLOURS.get(row.severity, _OK_COLOUR)
            cells.append(
                f"<tr><td><code>{_text(row.finding)}</code></td>"
                f"<td style='color:{colour}'>{_text(row.severity)}</td><td>{_text(row.rows)}</td>"
                f"<td style='text-align:left'>{_text(row.meaning)}</td></tr>"
            )
        return (
            f"<p>Events compared {_text(self.grouping())} (<code>by={_text(repr(self.by))}</code>)"
            "</p><table><thead><tr><th>finding</th><th>severity</th><th>rows</th><th>meaning</th></tr></thead>"
            f"<tbody>{''.join(cells)}</tbody></table>"
        )


def _text(value: object) -> str:
    """A value as HTML text, escaped (quotes too)."""
    return html.escape(str(value))


def _sorted(frame: pd.DataFrame) -> pd.DataFrame:
    """A finding frame in a stable order (both engines give the same rows, not always in the same order)."""
    by = [c for c in ("table", "source", "partition", "offset", "other_offset", "key", "seq") if c in frame.columns]
    if frame.empty or not by:
        return frame
    # Arrow's sort is stable and orders texts by code point, as pandas' stable sort_values does (only faster)
    table = pa.table({c: pa.array(frame[c], from_pandas=True) for c in by})
    order = pc.sort_indices(table, sort_keys=[(c, "ascending", "at_start") for c in by])
    return frame.iloc[order.to_numpy()].reset_index(drop=True)


def order_report(
    events: Capture | pd.DataFrame, by: str = "source", max_gap: int = 1000, heartbeat_factor: float = HEARTBEAT_FACTOR
) -> OrderReport:
    """Everything wrong with the order of a capture; the list is
    :data:`cdckit.analysis.ordering.catalogue.FINDINGS`.

    ``by``: which events are compared with each other
    (``cdckit.analysis.ordering.identity.STREAMS``): ``"source"`` (default: within each
    file or topic), ``"partition"`` or ``"capture"`` (within each dialect
    across all sources). Unpaired update halves come from the capture's
    quarantine (``cdckit.quarantine(events)`` when given events).

    >>> import cdckit
    >>> events = cdckit.read(cdckit.samples.path("oceanbase_extend/examples_idle"))
    >>> report = order_report(events)
    >>> len(report["heartbeat_gaps"]), report.by, "inversions" in report.summary()["finding"].tolist()
    (0, 'source', True)
    """
    capture = Capture.of(events)
    stream = stream_columns(by)
    frame = narrow(capture.events)
    replayed, refused = replayed_findings(capture.events, frame, stream)
    frames = kernels.finding_frames(frame, stream, max_gap, heartbeat_factor, refused, capture.quarantine)
    frames.update(replayed)
    frames["unpaired_halves"] = kernels.unpaired_findings(capture.quarantine)
    frames["lag"] = kernels.lag_summary(frame)
    return OrderReport(frames, by)


def report_from_rows(rows: pd.DataFrame, lag: pd.DataFrame, by: str = "source") -> OrderReport:
    """The report from all finding rows (any engine), the lag summary and the grouping used."""
    frames = {name: group.drop(columns="finding") for name, group in rows.groupby("finding", sort=False)}
    frames["lag"] = lag
    return OrderReport(frames, by)
