"""The driver that tests/test_spark_cluster.py runs against a standalone Spark cluster.

Usage: python tests/spark_cluster_job.py spark://127.0.0.1:PORT SAMPLE

Prints one JSON object: whether an executor could import cdckit before cdckit
shipped itself, and the events and report of SAMPLE decoded on the cluster
next to those of cdckit.read.
"""

from __future__ import annotations

import json
import sys


def can_import_cdckit(_: object) -> bool:
    import importlib.util

    return importlib.util.find_spec("cdckit") is not None


def main(master: str, sample: str) -> None:
    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master(master)
        .appName("cdckit-cluster-test")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.executor.cores", "1")
        .config("spark.cores.max", "1")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    before = spark.sparkContext.parallelize([0], 1).map(can_import_cdckit).collect()[0]

    import cdckit
    from cdckit import spark as cdcspark

    path = str(cdckit.samples.path(sample))
    events = cdcspark.read(spark, path, split_messages=100)
    rows = events.orderBy("source", "offset").select("offset", "op", "key", "after").collect()
    expected = cdckit.read(path)
    result = {
        "importable_before_shipping": before,
        "shipped": spark.sparkContext._cdckit_zip is not None,
        "executor_no_site": spark.sparkContext.parallelize([0], 1).map(lambda _: sys.flags.no_site).collect()[0],
        "spark": [[r["offset"], r["op"], r["key"], r["after"]] for r in rows],
        "pandas": [[int(o), op, k, a] for o, op, k, a in
                   expected[["offset", "op", "key", "after"]].astype(object).where(expected.notna(), None)
                   .itertuples(index=False, name=None)],
        "report": cdcspark.report(events),
    }
    print("RESULT " + json.dumps(result))
    spark.stop()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
