"""Convert a capture on Spark: decode it, hand the events to a writer, and count what was read (the engine
behind ``cdckit convert --engine spark``; the command line imports this module only then).

Example (starts Spark, so not run as a doctest)::

    >>> from cdckit import export, samples
    >>> written, report, first = convert_capture(
    ...     str(samples.path("canal/shop")), lambda events: export.write_events(events, "out/", "parquet"))
    ... # doctest: +SKIP
    >>> report["quarantined"], first  # doctest: +SKIP
    (0, None)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import pandas as pd

from .engine import quarantine, read, report
from .session import get_spark

__all__ = ["convert_capture"]

Written = TypeVar("Written")


def convert_capture(
    path: str,
    write: Callable[[Any], Written],
    dialect: str | None = None,
    shown: int = 3,
    unavailable_value: tuple[str, ...] = (),
    keys: Any = None,
    key_separator: str | None = None,
) -> tuple[Written, dict[str, Any], pd.DataFrame | None]:
    """Decode the capture at ``path`` (a file, folder or glob) with Spark and hand its events to ``write``.

    Returns what ``write`` returned, the read's report (as ``cdckit.spark.report``) and the first ``shown``
    quarantined messages as a pandas frame (None when nothing was quarantined). Uses the active Spark
    session, or starts one (``cdckit.spark.get_spark``: Java 17+ is checked first) and then stops it.
    ``unavailable_value``, ``keys`` and ``key_separator`` are those of :func:`cdckit.read`.
    """
    from pyspark.sql import SparkSession

    started = SparkSession.getActiveSession() is None
    session = get_spark()
    try:
        events = read(
            session, path, dialect=dialect, unavailable_value=unavailable_value, keys=keys, key_separator=key_separator
        )
        written = write(events)
        counts = report(events)
        first = quarantine(events).limit(shown).toPandas() if counts["quarantined"] else None
    finally:
        if started:
            session.stop()
    return written, counts, first
