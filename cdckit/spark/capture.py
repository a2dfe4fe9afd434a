"""What a Spark decode gives, as one explicit value: the events, the quarantine and the report.

``cdcspark.read(spark, path, capture=True)`` (and ``decode(..., capture=True)``)
return a :class:`SparkCapture`. Behind it is one combined frame with a row per
event, per skipped message and per quarantined message; the events, the
quarantine and the report are views of it. The report is one Spark job, run
when first asked for.

The plain ``cdcspark.read`` returns the events alone; ``cdcspark.quarantine(events)``
and ``cdcspark.report(events)`` find the decode behind that very frame (a
frame derived from it no longer knows its decode: use a capture).

>>> from cdckit import spark as cdcspark                                   # doctest: +SKIP
>>> capture = cdcspark.read(cdcspark.get_spark(), "shop.jsonl", capture=True)  # doctest: +SKIP
>>> capture.report["quarantined"], capture.quarantine.count()               # doctest: +SKIP
(0, 0)
"""

from __future__ import annotations

import dataclasses
import weakref
from collections import Counter
from functools import cached_property
from typing import Any

from ..capture import new_report
from ..errors import CdcError
from ..frame import COLUMN_NAMES

__all__ = ["SparkCapture", "capture_of"]

# the capture behind each events frame a plain read or decode returned (see capture_of)
# (the combined frame, not the capture: a capture holds its events, and a value that holds its weak key
# would keep the entry, and the frames, alive for good)
_BEHIND: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()


@dataclasses.dataclass(frozen=True)
class SparkCapture:
    """A decode on Spark: ``combined`` (one row per event, skipped or quarantined message, with the
    ``_status``, ``_reason``, ``_code``, ``_raw``, ``_line`` and ``_count`` columns) and the views of it."""

    combined: Any

    @cached_property
    def events(self) -> Any:
        """The canonical events (exactly the frame's columns)."""
        from pyspark.sql import functions as F

        return self.combined.filter(F.col("_status") == "event").select(*COLUMN_NAMES)

    @cached_property
    def quarantine(self) -> Any:
        """The quarantined messages, with the columns of the pandas quarantine."""
        from pyspark.sql import functions as F

        return self.combined.filter(F.col("_status") == "quarantined").select(
            "source",
            "offset",
            "partition",
            F.col("_line").alias("line"),
            "dialect",
            F.col("_reason").alias("reason"),
            F.col("_code").alias("reason_code"),
            F.col("_raw").alias("raw"),
        )

    @cached_property
    def report(self) -> dict[str, Any]:
        """The same accounting as ``cdckit.read``'s report (one Spark job, run once)."""
        from pyspark.sql import functions as F

        groups = (
            self.combined.groupBy("_status", "_reason", "dialect")
            .agg(F.sum("_count").alias("messages"), F.count(F.lit(1)).alias("rows"))
            .collect()
        )
        counts: Counter[str] = Counter()
        skipped: Counter[str] = Counter()
        dialects: Counter[str] = Counter()
        for group in groups:
            status, messages = group["_status"], group["messages"]
            counts["messages"] += messages
            if group["dialect"] is not None:
                dialects[group["dialect"]] += messages
            if status == "quarantined":
                counts["quarantined"] += messages
                continue
            counts["decoded"] += messages
            if status == "event":
                counts["events"] += group["rows"]
            elif status == "skipped":
                skipped[group["_reason"]] += messages
        report = new_report(
            counts["messages"], counts["decoded"], counts["events"], counts["quarantined"], skipped, dialects
        )
        del report["sources"], report["detection"]  # the tasks detect; the driver keeps no per-file verdicts
        return report

    def remembered(self) -> Any:
        """The events, remembered as this capture's so that :func:`capture_of` finds it from them."""
        _BEHIND[self.events] = self.combined
        return self.events


def capture_of(events: Any) -> SparkCapture:
    """The capture behind ``events``: a :class:`SparkCapture` itself, or the very frame a plain
    ``cdcspark.read`` / ``decode`` returned."""
    if isinstance(events, SparkCapture):
        return events
    try:
        return SparkCapture(_BEHIND[events])
    except (KeyError, TypeError):
        raise CdcError(
            "pass the DataFrame that cdckit.spark.read or cdckit.spark.decode returned, or their "
            "capture=True result (a DataFrame derived from the events no longer knows its decode)"
        ) from None
