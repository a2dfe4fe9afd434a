"""cdckit on Spark: the same canonical frame from PySpark, locally or on a cluster.

Needs the spark extra (``pip install 'cdckit[spark]'``): without pyspark,
importing this module raises :class:`cdckit.optional.MissingExtraError` naming it.

>>> from cdckit import spark as cdcspark
>>> [name in cdcspark.__all__ for name in ("get_spark", "read", "decode", "quarantine")]
[True, True, True, True]

Typical use::

    spark = cdcspark.get_spark()                    # local[*], quiet, UTC; checks Java 17+
    events = cdcspark.read(spark, "captures/")      # files: every container cdckit.read knows
    events = cdcspark.decode(kafka_df)              # a Kafka-shaped DataFrame (key, value, topic, partition, offset)
    capture = cdcspark.read(spark, "captures/", capture=True)  # events, quarantine and report together
    bad = cdcspark.quarantine(events)               # what could not be decoded, with the reason (= capture.quarantine)
    cdcspark.report(events)                         # messages, events, quarantined, skipped (= capture.report)
    cdcspark.order_report(events, bad)              # what is wrong with the order (Spark SQL, findings collected)
    cdcspark.materialize(events)                    # {"db.table": Spark DataFrame of the live rows}
    cdcspark.table(events, "shop.customers")        # one table's changes as typed columns
    cdcspark.transactions(events)                   # one row per transaction: complete or not, and why
"""

from __future__ import annotations

from ..errors import SparkSetupError
from ..optional import require

require("pyspark", "spark", what="cdckit.spark")  # without it: MissingExtraError naming cdckit[spark]

from .capture import SparkCapture
from .engine import COMBINED_COLUMNS, combined, decode, quarantine, read, report
from .ordering import order_report, sort_events
from .replay import history, materialize, scd2
from .session import check_java, check_workers, chosen_driver_memory, get_spark, ship_cdckit
from .tables import table
from .transactions import transactions

__all__ = [
    "get_spark",
    "read",
    "decode",
    "quarantine",
    "report",
    "combined",
    "SparkCapture",
    "sort_events",
    "order_report",
    "materialize",
    "scd2",
    "history",
    "table",
    "transactions",
    "check_java",
    "chosen_driver_memory",
    "ship_cdckit",
    "check_workers",
    "SparkSetupError",
    "COMBINED_COLUMNS",
]
