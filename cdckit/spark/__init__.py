"""cdckit on Spark: the same canonical frame from PySpark, locally or on a cluster.

>>> from cdckit import spark as cdcspark
>>> [name in cdcspark.__all__ for name in ("get_spark", "read", "decode", "quarantine")]
[True, True, True, True]

Typical use::

    spark = cdcspark.get_spark()                    # local[*], quiet, UTC; checks Java 17+
    events = cdcspark.read(spark, "captures/")      # files: every container cdckit.read knows
    events = cdcspark.decode(kafka_df)              # a Kafka-shaped DataFrame (key, value, topic, partition, offset)
    bad = cdcspark.quarantine(events)               # what could not be decoded, with the reason
    cdcspark.report(events)                         # messages, events, quarantined, skipped
"""

from __future__ import annotations

from ..errors import SparkSetupError
from .engine import COMBINED_COLUMNS, combined, decode, quarantine, read, report
from .replay import materialize, order_report, sort_events
from .session import check_java, get_spark, ship_cdckit

__all__ = [
    "get_spark",
    "read",
    "decode",
    "quarantine",
    "report",
    "combined",
    "sort_events",
    "order_report",
    "materialize",
    "check_java",
    "ship_cdckit",
    "SparkSetupError",
    "COMBINED_COLUMNS",
]
