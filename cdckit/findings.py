"""Old home of the finding kernels, now :mod:`cdckit.ordering.kernels` (a re-export kept for old imports)."""

from __future__ import annotations

from .ordering.kernels import (finding_frame, finding_frames, heartbeat_findings, key_findings, keyless_findings,
                               keyless_rows, lag_summary, offset_gap_findings, sequence_gap_findings,
                               snapshot_tables, time_findings, transaction_findings, unpaired_findings)

__all__ = [
    "finding_frames",
    "finding_frame",
    "snapshot_tables",
    "key_findings",
    "time_findings",
    "sequence_gap_findings",
    "offset_gap_findings",
    "transaction_findings",
    "heartbeat_findings",
    "keyless_findings",
    "keyless_rows",
    "unpaired_findings",
    "lag_summary",
]
