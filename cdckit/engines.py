"""Which engine holds a frame, asked without importing pyspark (a pandas user never needs it).

pandas frames are written by :mod:`cdckit.export`; a Spark DataFrame goes to
:mod:`cdckit.spark.export`, imported only then. :mod:`cdckit.analysis.compare` and
:mod:`cdckit.analysis.reconcile` ask the same question here.

>>> import pandas as pd
>>> is_spark(pd.DataFrame())
False
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

import pandas as pd

from .frame import check_columns

__all__ = ["is_spark", "spark_export", "pandas_events"]


def is_spark(frame: Any) -> bool:
    """True for a PySpark DataFrame (classic or Connect), without importing pyspark."""
    return type(frame).__module__.startswith("pyspark.")


def spark_export() -> ModuleType:
    """:mod:`cdckit.spark.export`, the Spark writers (importing it imports pyspark)."""
    from .spark import export

    return export


def pandas_events(events: Any) -> pd.DataFrame:
    """A canonical pandas frame from a pandas frame (as it is) or a Spark frame (collected to the driver)."""
    check_columns(events.columns)
    if is_spark(events):
        return spark_export().to_pandas_events(events)
    return events
