"""The locked packages (requirements.lock) work together: the canonical frame goes to Spark and back cleanly."""

from __future__ import annotations

import warnings

import pandas as pd

import cdckit


def test_canonical_frame_round_trips_through_spark_without_warnings(spark):
    events = cdckit.read(cdckit.samples.path("debezium/shop"))
    events.attrs = {}  # Arrow cannot store a DataFrame in its metadata; that warning is not what is tested
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # pyspark 4.x with pandas 3 warns here; the pins must not
        frame = spark.createDataFrame(events)
        back = frame.toPandas()
    assert len(back) == len(events) == 320
    assert back["op"].tolist() == events["op"].astype(str).tolist()
    assert pd.api.types.is_datetime64_any_dtype(back["event_time"])
