"""Decode benchmark: cdckit against the floor of any Python decoder and against hand-written Spark.

Generates N Debezium JSON lines (~740 bytes each) and N Canal flat-message
lines (:mod:`cdckit.samples.lines`), then measures, every figure in the
same run:

pandas path
  - ``orjson.loads`` over every line: the floor of any Python decoder (baseline);
  - ``cdckit.read`` into the canonical frame, whole and with ``chunksize``;
    events/s and the ratio to the orjson rate (goal: at least 0.5x);
  - peak memory of a chunked read (in a fresh process), against the size of
    the frame it produces (goal: under 3x).
Spark path (``local[2]``)
  - the pipeline a data engineer would write: ``spark.read.text`` +
    ``from_json`` with an explicit schema + select/explode (baseline);
  - ``cdckit.spark.read``; both written to the ``noop`` sink and to Parquet,
    events/s and the ratio to the hand-written pipeline (goal: at least 1x).
Scaling
  - both engines at 1x, 4x and 16x input (16x is N) to show the cost is linear.
Every dialect and layout (pandas, one process; ``--every-n`` messages each)
  - each dialect's messages as its own encoder writes them (the synthetic
    Debezium changes converted), and Debezium in three more layouts: kcat
    ``-J`` records with the schema, Kafka Connect's ``{"schema", "payload"}``
    and the bare payload; ``orjson.loads`` of the same lines and DuckDB's
    ``read_json`` of the same file (2 threads, nested values kept as JSON
    text) measured in the same run, and the ratio of ``cdckit.read`` to each.

    .venv/bin/python benchmarks/decode.py                 # N = 1,000,000 (several minutes)
    .venv/bin/python benchmarks/decode.py -n 100000 --repeat 1
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

import orjson
import pandas as pd

import cdckit
from cdckit.samples.lines import debezium_line
from cdckit.samples.synthetic import LINE_MAKERS

DIALECTS = ("debezium", "canal")


# ---------------------------------------------------------------- the data

MAKERS = LINE_MAKERS


def write(path: Path, make: Callable[[int], bytes], n: int) -> None:
    with open(path, "wb") as out:
        for i in range(n):
            out.write(make(i) + b"\n")


# ---------------------------------------------------------------- measuring


def median_of(repeat: int, run: Callable[[], int]) -> tuple[float, int]:
    """Median seconds of ``repeat`` runs, and what the last run returned (a count)."""
    times, count = [], 0
    for _ in range(repeat):
        started = time.perf_counter()
        count = run()
        times.append(time.perf_counter() - started)
    return statistics.median(times), count


def paired(repeat: int, baseline: Callable[[], int], candidate: Callable[[], int]) -> tuple[float, float, float]:
    """Baseline and candidate run in turns (so that drift of the machine hits both alike).

    Returns the median seconds of each and the median of the per-turn ratios
    (baseline seconds / candidate seconds: above 1 means the candidate is faster).
    """
    base, cand, ratios = [], [], []
    for _ in range(repeat):
        base.append(median_of(1, baseline)[0])
        cand.append(median_of(1, candidate)[0])
        ratios.append(base[-1] / cand[-1])
    return statistics.median(base), statistics.median(cand), statistics.median(ratios)


def orjson_floor(path: Path) -> int:
    """``orjson.loads`` of every message: of each line, or of the whole file when it is one JSON array.
    Pretty JSON values one after another cannot be split without a scan: their one-per-line twin is parsed."""
    if path.name.endswith("-array.json"):
        return len(orjson.loads(path.read_bytes()))
    if path.name.endswith("-pretty.json"):
        path = path.with_name(path.name.replace("-pretty.json", ".jsonl"))
    n = 0
    with open(path, "rb") as lines:
        for line in lines:
            orjson.loads(line)
            n += 1
    return n


def say(label: str, rate: float, unit: str, note: str = "") -> None:
    print(f"  {label:44s} {rate:>12,.0f} {unit:9s} {note}", flush=True)


_MEMORY_JOB = """
import json, sys
import pandas as pd
import cdckit
path, dialect, chunksize, keep = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4] == "keep"

def status(field):
    for line in open("/proc/self/status"):
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024

with open("/proc/self/clear_refs", "w") as reset:  # Linux: the peak (VmHWM) starts again from now
    reset.write("5")
base = status("VmRSS")
kept, rows, chunk_bytes = [], 0, 0
for chunk in cdckit.read(path, dialect=dialect, chunksize=chunksize):
    rows += len(chunk)
    chunk_bytes = max(chunk_bytes, int(chunk.memory_usage(deep=True).sum()))
    if keep:
        kept.append(chunk)
frame_bytes = 0
if keep:
    frame = pd.concat(kept, ignore_index=True)
    del kept
    frame_bytes = int(frame.memory_usage(deep=True).sum())
peak = status("VmHWM") - base
print(json.dumps({"rows": rows, "peak": peak, "frame": frame_bytes, "chunk": chunk_bytes}))
"""


def memory_of_chunked_read(path: Path, dialect: str, chunksize: int, keep: bool) -> dict:
    """Peak memory growth of a chunked read in a fresh process (Linux VmHWM), kept or streamed."""
    done = subprocess.run([sys.executable, "-c", _MEMORY_JOB, str(path), dialect, str(chunksize),
                           "keep" if keep else "stream"], capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


# ---------------------------------------------------------------- the two engines


def pandas_section(path: Path, dialect: str, n: int, repeat: int, chunksize: int) -> dict:
    floor_s, whole_s, whole_ratio = paired(repeat, lambda: orjson_floor(path),
                                           lambda: len(cdckit.read(path, dialect=dialect)))
    _, chunk_s, chunk_ratio = paired(repeat, lambda: orjson_floor(path), lambda: sum(
        len(c) for c in cdckit.read(path, dialect=dialect, chunksize=chunksize)))
    floor = n / floor_s
    say("orjson.loads alone", floor, "lines/s", "(baseline)")
    say("cdckit.read", n / whole_s, "events/s", f"{whole_ratio:.2f}x orjson")
    say(f"cdckit.read(chunksize={chunksize:,})", n / chunk_s, "events/s", f"{chunk_ratio:.2f}x orjson")
    events = n
    kept = memory_of_chunked_read(path, dialect, chunksize, keep=True)
    streamed = memory_of_chunked_read(path, dialect, chunksize, keep=False)
    mib = 2**20
    print(f"  {'memory, chunks kept and concatenated':44s} peak +{kept['peak'] / mib:,.0f} MiB for a "
          f"{kept['frame'] / mib:,.0f} MiB frame: {kept['peak'] / kept['frame']:.2f}x the frame")
    print(f"  {'memory, chunks streamed (not kept)':44s} peak +{streamed['peak'] / mib:,.0f} MiB: "
          f"{streamed['peak'] / kept['frame']:.2f}x the whole frame, {streamed['peak'] / streamed['chunk']:.1f}x "
          f"one chunk")
    return {"orjson": floor, "read": events / whole_s}


def hand_written(spark, path: Path, dialect: str, wrapped: bool = False):
    """The Spark pipeline a data engineer would write for this capture, with explicit schemas
    (``wrapped``: Debezium in Kafka Connect's ``{schema, payload}``, the payload read)."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    text = spark.read.text(str(path))
    if dialect == "debezium":
        source = T.StructType([T.StructField(name, kind) for name, kind in [
            ("db", T.StringType()), ("table", T.StringType()), ("ts_ms", T.LongType()), ("file", T.StringType()),
            ("pos", T.LongType()), ("row", T.LongType())]])
        schema = T.StructType([T.StructField("before", T.StringType()), T.StructField("after", T.StringType()),
                               T.StructField("source", source), T.StructField("op", T.StringType()),
                               T.StructField("ts_ms", T.LongType())])
        if wrapped:
            outer = T.StructType([T.StructField("payload", schema)])
            m = text.select(F.from_json("value", outer).alias("m")).select("m.payload.*")
        else:
            m = text.select(F.from_json("value", schema).alias("m")).select("m.*")
        return m.select(
            F.col("op"), F.col("source.db").alias("database"), F.col("source.table").alias("table"),
            F.timestamp_millis("source.ts_ms").alias("event_time"), F.timestamp_millis("ts_ms").alias("emit_time"),
            F.concat_ws(":", "source.file", F.lpad(F.col("source.pos").cast("string"), 20, "0"),
                        F.lpad(F.col("source.row").cast("string"), 20, "0")).alias("seq"),
            "before", "after")
    row = T.MapType(T.StringType(), T.StringType())
    schema = T.StructType([T.StructField("id", T.LongType()), T.StructField("database", T.StringType()),
                           T.StructField("table", T.StringType()), T.StructField("type", T.StringType()),
                           T.StructField("es", T.LongType()), T.StructField("ts", T.LongType()),
                           T.StructField("pkNames", T.ArrayType(T.StringType())),
                           T.StructField("data", T.ArrayType(row)), T.StructField("old", T.ArrayType(row))])
    m = text.select(F.from_json("value", schema).alias("m")).select("m.*")
    rows = m.select("*", F.posexplode("data").alias("index", "row"))
    return rows.select(
        F.lower("type").alias("op"), "database", "table", F.timestamp_millis("es").alias("event_time"),
        F.timestamp_millis("ts").alias("emit_time"),
        F.concat_ws(":", F.lpad(F.col("es").cast("string"), 20, "0"), F.lpad(F.col("id").cast("string"), 20, "0"),
                    F.lpad(F.col("index").cast("string"), 20, "0")).alias("seq"),
        "pkNames", F.to_json("row").alias("after"))


def spark_section(spark, path: Path, dialect: str, n: int, repeat: int, scratch: Path, wrapped: bool = False) -> dict:
    from cdckit import spark as cdcspark

    def noop(frame) -> int:
        frame.write.format("noop").mode("overwrite").save()
        return n

    def parquet(frame) -> int:
        frame.write.mode("overwrite").parquet(str(scratch / "out.parquet"))
        return n

    rates = {}
    for sink, write in (("noop", noop), ("Parquet", parquet)):
        base_s, ours_s, ratio = paired(repeat, lambda: write(hand_written(spark, path, dialect, wrapped)),
                                       lambda: write(cdcspark.read(spark, path, dialect=dialect)))
        say(f"hand-written from_json -> {sink}", n / base_s, "events/s", "(baseline)")
        say(f"cdckit.spark.read -> {sink}", n / ours_s, "events/s", f"{ratio:.2f}x hand-written")
        rates[sink] = (n / base_s, n / ours_s)
    return rates


def wrapped_spark_section(spark, folder: Path, n: int, repeat: int) -> None:
    """Spark on Debezium as Kafka Connect's JsonConverter writes it by default: ``{schema, payload}``."""
    from cdckit.io import write_messages

    source = folder / "debezium-for-wrapping.jsonl"
    write(source, debezium_line, n)
    wrapped = folder / "debezium-wrapped.jsonl"
    write_messages(cdckit.convert(cdckit.read(source, dialect="debezium"), "debezium").records, wrapped, "jsonl")
    size = wrapped.stat().st_size
    print(f"\ndebezium {{schema, payload}}: {n:,} lines, {size / n:.0f} bytes/line, {size / 2**20:,.0f} MiB")
    spark_section(spark, wrapped, "debezium", n, repeat, folder, wrapped=True)
    source.unlink()
    wrapped.unlink()


def scaling_section(spark, folder: Path, dialect: str, n: int, repeat: int) -> None:
    from cdckit import spark as cdcspark

    print(f"\nscaling, {dialect} (1x = {max(1, n // 16):,} lines): time per event should stay flat")
    for factor in (1, 4, 16):
        count = max(1, n * factor // 16)
        path = folder / f"{dialect}-{factor}x.jsonl"
        write(path, MAKERS[dialect], count)
        pandas_s, _ = median_of(repeat, lambda: len(cdckit.read(path, dialect=dialect)))
        line = f"  {factor:>2}x {count:>10,} lines  pandas {count / pandas_s:>10,.0f} ev/s " \
               f"({pandas_s / count * 1e6:5.2f} us/event)"
        if spark is not None:
            def spark_run() -> int:
                cdcspark.read(spark, path, dialect=dialect).write.format("noop").mode("overwrite").save()
                return count

            spark_s, _ = median_of(repeat, spark_run)
            line += f"   spark {count / spark_s:>10,.0f} ev/s ({spark_s / count * 1e6:5.2f} us/event)"
        print(line, flush=True)
        path.unlink()


# ---------------------------------------------------------------- every dialect and layout


def every_capture(folder: Path, n: int, only: set[str] | None = None) -> list[tuple[str, str, Path]]:
    """``(dialect, layout, file)``: every dialect's messages for ``n`` synthetic changes, and Debezium's layouts."""
    from cdckit.io import write_messages
    from cdckit.dialects import registry

    source = folder / "debezium-bare.jsonl"
    write(source, debezium_line, n)
    events = cdckit.read(source, dialect="debezium")
    # the table's primary key, as a keyed capture has it (kcat lines then carry Kafka keys)
    ids = [orjson.loads(after if isinstance(after, str) else before)["id"]
           for after, before in zip(events["after"], events["before"])]
    events["key_columns"] = pd.Series([["id"]] * len(events), index=events.index, dtype=object)
    events["key"] = pd.array([f"[{i}]" for i in ids], dtype="string[pyarrow]")
    captures = []
    for name in cdckit.dialects.names():
        if only and name not in only:
            continue
        records = cdckit.convert(events, name).records
        text = registry.get(name).layout == "text"
        path = folder / f"{name}.{'txt' if text else 'jsonl'}"
        write_messages(records, path, "text" if text else "jsonl")
        if name != "debezium":
            captures.append((name, "as written by its tool", path))
        else:
            kcat = folder / "debezium-kcat.jsonl"
            write_messages(records, kcat, "kcat", topic="shop.customers")
            captures.append((name, "kcat -J, schema included", kcat))
            captures.append((name, "{schema, payload}", path))
            payload = folder / "debezium-payload.jsonl"
            write_messages([record.value["payload"] for record in records], payload, "jsonl")
            captures.append((name, "payload only (no schema)", payload))
            lines = payload.read_bytes().splitlines()
            array = folder / "debezium-payload-array.json"
            array.write_bytes(b"[" + b",\n".join(lines) + b"]\n")
            captures.append((name, "payload only, one JSON array", array))
            pretty = folder / "debezium-payload-pretty.json"
            pretty.write_bytes(b"\n".join(orjson.dumps(orjson.loads(line), option=orjson.OPT_INDENT_2)
                                          for line in lines) + b"\n")
            captures.append((name, "payload only, pretty JSON one after another", pretty))
            captures.append((name, "bare payload (this benchmark's own lines)", source))
    return captures


def duckdb_read_json(path: Path) -> Callable[[], int]:
    """DuckDB's ``read_json`` of a JSON Lines file into Arrow, the top-level fields as columns, nested ones JSON."""
    import duckdb

    columns: dict[str, str] = {}
    keys_from = path  # a .json file's keys are read from its one-per-line twin
    if path.suffix == ".json":
        keys_from = path.with_name(path.name.replace("-array.json", ".jsonl").replace("-pretty.json", ".jsonl"))
    with open(keys_from, "rb") as lines:
        for _, line in zip(range(200), lines):
            for key, value in orjson.loads(line).items():
                columns.setdefault(key, "JSON" if isinstance(value, (dict, list)) else "VARCHAR")
    connection = duckdb.connect()
    connection.execute("SET threads = 2")
    spec = "{" + ", ".join(f"'{key}': '{kind}'" for key, kind in columns.items()) + "}"
    form = "array" if path.name.endswith("-array.json") else "unstructured" if path.suffix == ".json" \
        else "newline_delimited"
    query = f"SELECT * FROM read_json('{path}', format = '{form}', columns = {spec})"
    return lambda: connection.sql(query).to_arrow_table().num_rows


def every_dialect_section(folder: Path, n: int, repeat: int, only: set[str] | None = None) -> None:
    print(f"\nevery dialect and layout: {n:,} changes each (one process; DuckDB on 2 threads)")
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(f"  {'dialect':18s} {'layout':44s} {'B/msg':>6s} {'1 worker ev/s':>13s} {'x orjson':>9s} {'x DuckDB':>9s}"
          f" {f'{cores} workers ev/s':>15s} {'x DuckDB':>9s}")
    for name, layout, path in every_capture(folder, n, only):
        messages = orjson_floor(path) if path.suffix == ".json" else sum(1 for line in open(path, "rb") if line.strip())
        size = path.stat().st_size
        read_s, events = median_of(repeat, lambda: len(cdckit.read(path, dialect=name, workers=1)))
        all_s, _ = median_of(repeat, lambda: len(cdckit.read(path, dialect=name, workers=cores)))
        if path.suffix == ".txt":
            versus_orjson = versus_duckdb = all_versus_duckdb = "-"
        else:
            floor_s, _ = median_of(repeat, lambda: orjson_floor(path))
            duck_s, _ = median_of(repeat, duckdb_read_json(path))
            versus_orjson, versus_duckdb = f"{floor_s / read_s:.2f}", f"{duck_s / read_s:.2f}"
            all_versus_duckdb = f"{duck_s / all_s:.2f}"
        print(f"  {name:18s} {layout:44s} {size / messages:6.0f} {events / read_s:13,.0f} {versus_orjson:>9s} "
              f"{versus_duckdb:>9s} {events / all_s:15,.0f} {all_versus_duckdb:>9s}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", type=int, default=1_000_000, help="lines per dialect (default 1,000,000)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per measurement; the median is shown")
    parser.add_argument("--chunksize", type=int, default=100_000)
    parser.add_argument("--engines", default="pandas,spark", help="pandas, spark or both (default)")
    parser.add_argument("--dialects", default=",".join(DIALECTS))
    parser.add_argument("--no-scaling", action="store_true")
    parser.add_argument("--every-n", type=int, default=96_000,
                        help="changes per dialect and layout in the every-dialect section (0: skip it)")
    parser.add_argument("--every-dialects", default="",
                        help="comma-separated dialects for the every-dialect section (default: all)")
    args = parser.parse_args()
    engines = set(args.engines.split(","))

    print(f"cdckit decode benchmark: {args.n:,} lines per dialect, median of {args.repeat}; "
          f"Python {platform.python_version()}, {os.cpu_count()} cores")
    folder = Path(tempfile.mkdtemp(prefix="cdckit-bench-"))
    spark = None
    try:
        if "spark" in engines:
            from cdckit import spark as cdcspark

            spark = cdcspark.get_spark("local[2]")
            warm = folder / "warm-up.jsonl"
            write(warm, debezium_line, 20_000)
            for _ in range(2):  # the first jobs of a JVM are slow; warm it up for both pipelines
                hand_written(spark, warm, "debezium").write.format("noop").mode("overwrite").save()
                cdcspark.read(spark, warm, dialect="debezium").write.format("noop").mode("overwrite").save()
        for dialect in args.dialects.split(","):
            path = folder / f"{dialect}.jsonl"
            write(path, MAKERS[dialect], args.n)
            size = path.stat().st_size
            print(f"\n{dialect}: {args.n:,} lines, {size / args.n:.0f} bytes/line, {size / 2**20:,.0f} MiB")
            if "pandas" in engines:
                pandas_section(path, dialect, args.n, args.repeat, args.chunksize)
            if spark is not None:
                spark_section(spark, path, dialect, args.n, args.repeat, folder)
            path.unlink()
        if spark is not None and "debezium" in args.dialects.split(","):
            wrapped_spark_section(spark, folder, args.n, args.repeat)
        if not args.no_scaling:
            for dialect in args.dialects.split(","):
                scaling_section(spark, folder, dialect, args.n, args.repeat)
        if args.every_n and "pandas" in engines:
            every_dialect_section(folder, args.every_n, args.repeat,
                                  set(filter(None, args.every_dialects.split(","))))
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
