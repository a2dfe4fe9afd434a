"""The locked packages (requirements.lock) work together: the canonical frame goes to Spark and back cleanly."""

from __future__ import annotations

import warnings

import pandas as pd

import cdckit


def test_canonical_frame_round_trips_through_spark_without_warnings(spark):
    events = cdckit.read(cdckit.samples.path("debezium/shop"))
    events.attrs = {}  # Arrow cannot store a DataFrame in its metadata; that warning is not what is tested
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        frame = spark.createDataFrame(events)
        back = frame.toPandas()
    # PySpark's own notice under pandas 3 (it does not fully support it yet; pandas' deprecation of a keyword
    # PySpark passes) is PySpark's; any other warning, cdckit's or a conversion's, fails the test
    others = [f"{w.category.__name__}: {w.message}" for w in said
              if not str(w.message).startswith("PySpark does not yet fully support pandas")
              and not (str(w.message).startswith("The copy keyword is deprecated") and "pyspark" in w.filename)]
    assert others == []
    assert len(back) == len(events) == 320
    assert back["op"].tolist() == events["op"].astype(str).tolist()
    assert pd.api.types.is_datetime64_any_dtype(back["event_time"])
