"""Decode benchmark: cdckit against the floor of any Python decoder, DuckDB, and hand-written Spark.

Prints the machine first (cores, CPU model from ``/proc/cpuinfo``, Python,
pandas, pyarrow, DuckDB versions). Then generates N Debezium JSON lines
(~740 bytes each) and N Canal flat-message lines
(:mod:`cdckit.samples.lines`) and measures, every figure in the same run
(contenders interleaved, the median of ``--repeat`` rounds, ratios taken
per round):

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
Every layout users save (``--layouts-n`` changes each, N by default)
  - Debezium bare JSON Lines, ``{payload}``, ``{schema, payload}``, kcat
    ``-J`` and ``kafka-console-consumer`` lines with keys; ``{payload}`` as
    one JSON array, as gzip JSON Lines and as a directory of many files;
    Canal JSON Lines; DataHub Tuple Parquet and CSV. For each, one row:
  - 1 worker: ``cdckit.read(path, workers=1)`` events/s, and ``x floor``, its
    ratio to ``orjson.loads`` of the same messages (kcat: the record, then the
    value it holds as text; console lines: the value; a JSON array: one
    ``loads`` of the file; gzip: decompressed on the way; Parquet/CSV:
    pyarrow on one thread, each row to a dict). Goal: at least 0.5x;
  - None and W workers (``workers=None``, ``workers=os.cpu_count()``)
    events/s, and ``x DuckDB``, the ratio to DuckDB's ``read_json`` with
    ``SET threads`` = W (the top-level fields as columns, nested values as
    JSON text; the ``.gz`` read by DuckDB itself; a directory as a glob;
    kcat and console records, then ``from_json`` of their values;
    ``read_parquet``/``read_csv`` for Tuple files). Goal on 16 cores: 0.5x;
  - caller: ``time.process_time()`` of the calling process during the
    W-worker read (the workers' CPU not included) over the one-worker wall
    time (goal: under 5%, which predicts near-linear scaling);
  - W/1: the speed-up of W workers over one (goal: near W; 12x on 16 cores);
  - misses: the goals the row does not meet.
Every dialect (``--every-n`` changes each): the same row for each dialect's
messages as its own encoder writes them (the synthetic Debezium changes
converted; text dialects have no floor and no DuckDB).
``--scale-check`` (that section alone)
  - a ~1 GB (``--scale-bytes``) Debezium ``{payload}`` file: peak memory of a
    chunked read (``chunksize``, default workers, a fresh process, Linux
    VmHWM of the calling process and the largest worker's peak RSS) as the
    file grows 1x, 2x, 4x (the whole file; goal: flat); then two workers
    against one (goal: at least 1.8x on 2 cores) and the calling process's
    share.

    .venv/bin/python benchmarks/decode.py                 # N = 1,000,000 (long: an hour on 2 cores)
    .venv/bin/python benchmarks/decode.py -n 50000 --repeat 1
    .venv/bin/python benchmarks/decode.py --scale-check
    .venv/bin/python benchmarks/decode.py --sections layouts --layouts-n 300000   # one section
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

import orjson
import pandas as pd

import cdckit
from cdckit.samples.lines import canal_line, debezium_line
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


def say(label: str, rate: float, unit: str, note: str = "") -> None:
    print(f"  {label:44s} {rate:>12,.0f} {unit:9s} {note}", flush=True)


_MEMORY_JOB = """
import json, resource, sys
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
children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024  # the largest worker's peak, if any
print(json.dumps({"rows": rows, "peak": peak, "frame": frame_bytes, "chunk": chunk_bytes, "children": children}))
"""


def memory_of_chunked_read(path: Path, dialect: str, chunksize: int, keep: bool) -> dict:
    """Peak memory growth of a chunked read in a fresh process (Linux VmHWM), kept or streamed."""
    done = subprocess.run([sys.executable, "-c", _MEMORY_JOB, str(path), dialect, str(chunksize),
                           "keep" if keep else "stream"], capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


# ---------------------------------------------------------------- the two engines


def pandas_section(path: Path, dialect: str, n: int, repeat: int, chunksize: int) -> dict:
    floor_s, whole_s, whole_ratio = paired(repeat, lines_floor(path),
                                           lambda: len(cdckit.read(path, dialect=dialect)))
    _, chunk_s, chunk_ratio = paired(repeat, lines_floor(path), lambda: sum(
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


# ---------------------------------------------------------------- every layout: one worker, all cores


@dataclass
class Layout:
    """A capture on disk as users save it, with the cheapest Python parse of its messages (the floor) and the
    DuckDB query that reads the same bytes (``{threads}`` in ``settings`` is set before it runs)."""

    dialect: str
    name: str
    path: Path
    floor: Callable[[], int]
    duckdb: str | None


def json_columns(sample: list[dict]) -> dict[str, str]:
    """DuckDB column types for the top-level fields of these messages: nested values kept as JSON text."""
    columns: dict[str, str] = {}
    for value in sample:
        for key, field in value.items():
            columns.setdefault(key, "JSON" if isinstance(field, (dict, list)) else "VARCHAR")
    return columns


def duckdb_struct(columns: dict[str, str]) -> str:
    """A ``read_json(columns = ...)`` argument."""
    return "{" + ", ".join(f"'{key}': '{kind}'" for key, kind in columns.items()) + "}"


def duckdb_read_json(where: str, sample: list[dict], form: str = "newline_delimited") -> str:
    """DuckDB's ``read_json`` of JSON messages (a file, a ``.gz`` it decompresses itself, or a glob), the
    top-level fields as columns, nested ones JSON text."""
    return (f"SELECT * FROM read_json('{where}', format = '{form}', "
            f"columns = {duckdb_struct(json_columns(sample))})")


def duckdb_inner(sample: list[dict], outer: str, text: str) -> str:
    """DuckDB reading records whose value is JSON text (kcat ``-J``, console lines): the records read by
    ``outer``, then each value's top-level fields parsed by ``from_json`` (nested ones JSON text)."""
    structure = orjson.dumps(json_columns(sample)).decode()
    return f"SELECT * EXCLUDE ({text}), unnest(from_json({text}, '{structure}')) FROM {outer}"


def duckdb_run(query: str, threads: int) -> Callable[[], int]:
    import duckdb

    connection = duckdb.connect()
    connection.execute(f"SET threads = {threads}")
    return lambda: connection.sql(query).to_arrow_table().num_rows


def lines_floor(*paths: Path) -> Callable[[], int]:
    """``orjson.loads`` of every line of these files (``.gz`` decompressed on the way)."""
    def run() -> int:
        n = 0
        for path in paths:
            with (gzip.open(path, "rb") if path.suffix == ".gz" else open(path, "rb")) as lines:
                for line in lines:
                    orjson.loads(line)
                    n += 1
        return n
    return run


def array_floor(path: Path) -> Callable[[], int]:
    return lambda: len(orjson.loads(path.read_bytes()))


def kcat_floor(path: Path) -> Callable[[], int]:
    """kcat ``-J``: the record, then the message it holds as JSON text."""
    def run() -> int:
        n = 0
        with open(path, "rb") as lines:
            for line in lines:
                payload = orjson.loads(line)["payload"]
                if payload is not None:
                    orjson.loads(payload)
                n += 1
        return n
    return run


def console_floor(path: Path) -> Callable[[], int]:
    """Console-consumer lines: the value, the last field of each line."""
    def run() -> int:
        n = 0
        with open(path, "rb") as lines:
            for line in lines:
                orjson.loads(line.rsplit(b"\t", 1)[-1])
                n += 1
        return n
    return run


def rows_floor(path: Path) -> Callable[[], int]:
    """Parquet or CSV rows: pyarrow on one thread, each row as a Python dict (what ``orjson.loads`` is to JSON)."""
    def run() -> int:
        if path.suffix == ".parquet":
            import pyarrow.parquet as pq

            table = pq.read_table(path, use_threads=False)
        else:
            import pyarrow.csv as pcsv

            table = pcsv.read_csv(path, read_options=pcsv.ReadOptions(use_threads=False))
        return len(table.to_pylist())
    return run


def keyed_events(source: Path) -> pd.DataFrame:
    """The changes of ``source`` (Debezium lines) as a keyed capture has them (kcat and console lines then
    carry Kafka keys)."""
    events = cdckit.read(source, dialect="debezium")
    ids = [orjson.loads(after if isinstance(after, str) else before)["id"]
           for after, before in zip(events["after"], events["before"])]
    events["key_columns"] = pd.Series([["id"]] * len(events), index=events.index, dtype=object)
    events["key"] = pd.array([f"[{i}]" for i in ids], dtype="string[pyarrow]")
    return events


def sample_of(path: Path, count: int = 200) -> list[dict]:
    with open(path, "rb") as lines:
        return [orjson.loads(line) for _, line in zip(range(count), lines)]


def layouts(folder: Path, n: int, files: int) -> Iterator[Layout]:
    """Every layout users save, ``n`` changes each, made one at a time (each file is removed once measured)."""
    from cdckit.io import write_messages

    bare, payload = folder / "debezium-bare.jsonl", folder / "debezium-payload.jsonl"
    with open(bare, "wb") as plain, open(payload, "wb") as wrapped:
        for i in range(n):
            line = debezium_line(i)
            plain.write(line + b"\n")
            wrapped.write(b'{"payload":' + line + b"}\n")
    sample = sample_of(payload)
    yield Layout("debezium", "bare JSON Lines", bare, lines_floor(bare), duckdb_read_json(str(bare), sample_of(bare)))
    yield Layout("debezium", "{payload} JSON Lines", payload, lines_floor(payload),
                 duckdb_read_json(str(payload), sample))

    array = folder / "debezium-payload-array.json"
    with open(payload, "rb") as lines, open(array, "wb") as out:
        out.write(b"[" + b",\n".join(line.rstrip(b"\n") for line in lines) + b"]\n")
    yield Layout("debezium", "{payload}, one JSON array", array, array_floor(array),
                 duckdb_read_json(str(array), sample, "array"))
    array.unlink()

    packed = folder / "debezium-payload.jsonl.gz"
    with open(payload, "rb") as lines, gzip.open(packed, "wb") as out:
        shutil.copyfileobj(lines, out, 1 << 20)
    yield Layout("debezium", "{payload}, gzip JSON Lines", packed, lines_floor(packed),
                 duckdb_read_json(str(packed), sample))
    packed.unlink()

    many = folder / "debezium-payload-files"
    many.mkdir()
    outs = [open(many / f"part-{k:03d}.jsonl", "wb") for k in range(files)]
    with open(payload, "rb") as lines:
        per = math.ceil(n / files)
        for i, line in enumerate(lines):
            outs[i // per].write(line)
    for out in outs:
        out.close()
    yield Layout("debezium", f"{{payload}}, a directory of {files} files", many,
                 lines_floor(*sorted(many.iterdir())), duckdb_read_json(f"{many}/*.jsonl", sample))
    shutil.rmtree(many)
    payload.unlink()

    events = keyed_events(bare)
    bare.unlink()
    records = cdckit.convert(events, "debezium").records
    values = [record.value for record in records[:200]]
    wrapped = folder / "debezium-schema-payload.jsonl"
    write_messages(records, wrapped, "jsonl")
    yield Layout("debezium", "{schema, payload} JSON Lines", wrapped, lines_floor(wrapped),
                 duckdb_read_json(str(wrapped), values))
    wrapped.unlink()
    kcat = folder / "debezium-kcat.jsonl"
    write_messages(records, kcat, "kcat", topic="shop.customers")
    outer = ("read_json('{}', format = 'newline_delimited', columns = {{'topic': 'VARCHAR', 'partition': 'BIGINT', "
             "'offset': 'BIGINT', 'key': 'VARCHAR', 'payload': 'VARCHAR'}})").format(kcat)
    yield Layout("debezium", "kcat -J, {schema, payload}, keys", kcat, kcat_floor(kcat),
                 duckdb_inner(values, outer, "payload"))
    kcat.unlink()
    console = folder / "debezium-console.txt"
    write_messages(records, console, "console")
    outer = (f"read_csv('{console}', delim = '\t', header = false, quote = '', escape = '', auto_detect = false, "
             "columns = {'stamp': 'VARCHAR', 'part': 'VARCHAR', 'at': 'VARCHAR', 'key': 'VARCHAR', "
             "'value': 'VARCHAR'})")
    yield Layout("debezium", "console-consumer lines with keys", console, console_floor(console),
                 duckdb_inner(values, outer, "value"))
    console.unlink()
    del records

    canal = folder / "canal.jsonl"
    write(canal, canal_line, n)
    yield Layout("canal", "JSON Lines", canal, lines_floor(canal), duckdb_read_json(str(canal), sample_of(canal)))
    canal.unlink()

    rows = cdckit.convert(events, "datahub_tuple").records
    for kind in ("parquet", "csv"):
        path = folder / f"datahub-tuple.{kind}"
        write_messages(rows, path, kind)
        query = f"SELECT * FROM read_parquet('{path}')" if kind == "parquet" else \
            f"SELECT * FROM read_csv('{path}', header = true)"
        yield Layout("datahub_tuple", f"Tuple {'Parquet' if kind == 'parquet' else 'CSV'}", path, rows_floor(path),
                     query)
        path.unlink()


def dialect_layouts(folder: Path, n: int, only: set[str]) -> Iterator[Layout]:
    """Each dialect's messages as its own encoder writes them (the synthetic Debezium changes converted)."""
    from cdckit.dialects import registry
    from cdckit.io import write_messages

    source = folder / "debezium-source.jsonl"
    write(source, debezium_line, n)
    events = keyed_events(source)
    source.unlink()
    for name in cdckit.dialects.names():
        if (only and name not in only) or registry.get(name).layout == "rows":
            continue  # Tuple rows are in the layouts table
        records = cdckit.convert(events, name).records
        text = registry.get(name).layout == "text"
        path = folder / f"{name}.{'txt' if text else 'jsonl'}"
        write_messages(records, path, "text" if text else "jsonl")
        if text:
            yield Layout(name, "as written by its tool", path, lambda: 0, None)
        else:
            yield Layout(name, "as written by its tool", path, lines_floor(path),
                         duckdb_read_json(str(path), [r.value for r in records[:200]]))
        path.unlink()


def size_of(path: Path) -> int:
    return sum(p.stat().st_size for p in path.iterdir()) if path.is_dir() else path.stat().st_size


HEADER = (f"  {'dialect':17s} {'layout':38s} {'MiB':>7s} {'1 worker':>10s} {'x floor':>8s} {'None':>10s} "
          f"{'x DuckDB':>8s} {'W workers':>10s} {'x DuckDB':>8s} {'caller':>7s} {'W/1':>6s}  misses")


def layout_row(layout: Layout, repeat: int, cores: int) -> None:
    """One worker against the floor; ``workers=None`` and ``workers=cores`` against DuckDB on ``cores``
    threads; the calling process's CPU during the ``cores`` read over the one-worker wall time; W over 1."""
    path, dialect = layout.path, layout.dialect
    label = f"  {dialect:17s} {layout.name:38s} {size_of(path) / 2**20:7.1f}"
    try:
        events = len(cdckit.read(path, dialect=dialect, workers=1))  # also warms the caches for every contender
        one = lambda: len(cdckit.read(path, dialect=dialect, workers=1))  # noqa: E731
        if layout.duckdb is None:
            one_s, _ = median_of(repeat, one)
            floor_ratio = duck_none = duck_all = float("nan")
        else:
            _, one_s, floor_ratio = paired(repeat, layout.floor, one)
        caller: list[float] = []

        def all_cores() -> int:
            started = time.process_time()
            count = len(cdckit.read(path, dialect=dialect, workers=cores))
            caller.append(time.process_time() - started)
            return count

        every = lambda: len(cdckit.read(path, dialect=dialect, workers=None))  # noqa: E731
        if layout.duckdb is None:
            none_s, _ = median_of(repeat, every)
            all_s, _ = median_of(repeat, all_cores)
        else:
            duck = duckdb_run(layout.duckdb, cores)
            duck()
            _, none_s, duck_none = paired(repeat, duck, every)
            _, all_s, duck_all = paired(repeat, duck, all_cores)
    except Exception as err:  # a layout the reader or DuckDB cannot take: say so, go on with the others
        print(f"{label}  failed: {type(err).__name__}: {str(err)[:150]}", flush=True)
        return
    share = statistics.median(caller) / one_s
    misses = [what for what, missed in (("floor<0.5x", floor_ratio < 0.5), ("caller>5%", share > 0.05)) if missed]
    print(f"{label} {events / one_s:10,.0f} {times(floor_ratio):>8s} {events / none_s:10,.0f} {times(duck_none):>8s} "
          f"{events / all_s:10,.0f} {times(duck_all):>8s} {share:7.1%} {one_s / all_s:6.2f}  {', '.join(misses)}",
          flush=True)


def times(ratio: float) -> str:
    return "-" if math.isnan(ratio) else f"{ratio:.2f}"


def layouts_section(folder: Path, n: int, repeat: int, cores: int) -> None:
    print(f"\nevery layout users save: {n:,} changes each; events/s; W = {cores} workers, DuckDB on {cores} threads")
    print("  1 worker: cdckit.read(workers=1); x floor: against orjson.loads of the same messages (pyarrow rows "
          "for Parquet/CSV), interleaved, median ratio (goal >= 0.5)\n"
          "  None / W workers: workers=None / workers=W; x DuckDB: against read_json (nested values as JSON text)\n"
          "  caller: the calling process's CPU during the W-worker read over the one-worker wall time (goal < 5%); "
          "W/1: speed-up of W workers over one")
    print(HEADER)
    for layout in layouts(folder, n, files=max(16, 2 * cores)):
        layout_row(layout, repeat, cores)


def every_dialect_section(folder: Path, n: int, repeat: int, cores: int, only: set[str]) -> None:
    print(f"\nevery dialect as its tool writes it: {n:,} changes each (columns as above; text dialects: no floor, "
          f"no DuckDB)")
    print(HEADER)
    for layout in dialect_layouts(folder, n, only):
        layout_row(layout, repeat, cores)


# ---------------------------------------------------------------- --scale-check


def scale_check(folder: Path, target: int, repeat: int, chunksize: int) -> None:
    """Two workers against one on a ~``target``-byte Debezium ``{payload}`` file, and the peak memory of a
    chunked read (default workers) as the file grows 1x, 2x, 4x (4x is the whole file)."""
    path = folder / "debezium-payload.jsonl"
    mib = 2**20
    print(f"\nscale check: Debezium {{payload}} JSON Lines, ~{target / 1e9:.2f} GB; chunked reads of "
          f"chunksize={chunksize:,}, default workers, each in a fresh process (Linux VmHWM)")
    print(f"  {'size':>5s} {'lines':>11s} {'MiB':>7s} {'caller peak':>12s} {'largest worker':>15s}")
    peaks, i = [], 0
    with open(path, "wb") as out:
        for factor in (1, 2, 4):
            while out.tell() < target * factor // 4:
                out.write(b'{"payload":' + debezium_line(i) + b"}\n")
                i += 1
            out.flush()
            seen = memory_of_chunked_read(path, "debezium", chunksize, keep=False)
            peaks.append(seen["peak"])
            print(f"  {factor:>4}x {seen['rows']:>11,} {path.stat().st_size / mib:7,.0f} "
                  f"{'+' + format(seen['peak'] / mib, ',.0f'):>8s} MiB "
                  f"{format(seen['children'] / mib, ',.0f') + ' MiB' if seen['children'] else 'none':>15s}", flush=True)
    print(f"  caller's peak at 4x over 1x: {peaks[-1] / max(peaks[0], 1):.2f}x (goal: flat, about 1x)")
    cdckit.read(path, dialect="debezium", workers=2)  # the file in the page cache for both
    caller: list[float] = []

    def two() -> int:
        started = time.process_time()
        count = len(cdckit.read(path, dialect="debezium", workers=2))
        caller.append(time.process_time() - started)
        return count

    one_s, two_s, ratio = paired(repeat, lambda: len(cdckit.read(path, dialect="debezium", workers=1)), two)
    say("one worker", i / one_s, "events/s")
    say("two workers", i / two_s, "events/s", f"{ratio:.2f}x one worker (goal >= 1.8x on 2 cores); calling "
        f"process {statistics.median(caller) / one_s:.1%} of the one-worker time (goal < 5%)")
    path.unlink()


# ---------------------------------------------------------------- the machine


def machine() -> str:
    import duckdb
    import pyarrow

    model = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as info:
            model = next((line.split(":", 1)[1].strip() for line in info if line.startswith("model name")), model)
    except OSError:
        model = platform.processor() or model
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return (f"machine: {os.cpu_count()} cores ({usable} usable), {model}; {platform.system()} {platform.release()}\n"
            f"Python {platform.python_version()}, pandas {pd.__version__}, pyarrow {pyarrow.__version__}, "
            f"duckdb {duckdb.__version__}, orjson {orjson.__version__}, cdckit {cdckit.__version__}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", type=int, default=1_000_000, help="lines per dialect (default 1,000,000)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per measurement; the median is shown")
    parser.add_argument("--chunksize", type=int, default=100_000)
    parser.add_argument("--engines", default="pandas,spark", help="pandas, spark or both (default)")
    parser.add_argument("--dialects", default=",".join(DIALECTS))
    parser.add_argument("--no-scaling", action="store_true")
    parser.add_argument("--layouts-n", type=int, default=None,
                        help="changes per layout in the every-layout table (default: -n; 0: skip it)")
    parser.add_argument("--every-n", type=int, default=None,
                        help="changes per dialect in the every-dialect table (default: the smaller of -n and "
                             "96,000; 0: skip it)")
    parser.add_argument("--every-dialects", default="",
                        help="comma-separated dialects for the every-dialect section (default: all)")
    parser.add_argument("--scale-check", action="store_true",
                        help="only the scale check: one worker against two on a large file, chunked memory")
    parser.add_argument("--scale-bytes", type=float, default=1e9, help="size of the scale check's file (1e9)")
    parser.add_argument("--sections", default="engines,scaling,layouts,every",
                        help="which sections to run: engines (pandas and Spark on N lines), scaling, layouts, every")
    args = parser.parse_args()
    engines = set(args.engines.split(","))
    sections = set(args.sections.split(","))
    cores = os.cpu_count() or 1

    print(machine())
    folder = Path(tempfile.mkdtemp(prefix="cdckit-bench-"))
    if args.scale_check:
        try:
            scale_check(folder, int(args.scale_bytes), args.repeat, args.chunksize)
        finally:
            shutil.rmtree(folder, ignore_errors=True)
        return
    print(f"cdckit decode benchmark: {args.n:,} lines per dialect, median of {args.repeat}")
    spark = None
    try:
        if "spark" in engines and sections & {"engines", "scaling"}:
            from cdckit import spark as cdcspark

            spark = cdcspark.get_spark("local[2]")
            warm = folder / "warm-up.jsonl"
            write(warm, debezium_line, 20_000)
            for _ in range(2):  # the first jobs of a JVM are slow; warm it up for both pipelines
                hand_written(spark, warm, "debezium").write.format("noop").mode("overwrite").save()
                cdcspark.read(spark, warm, dialect="debezium").write.format("noop").mode("overwrite").save()
        for dialect in args.dialects.split(",") if "engines" in sections else ():
            path = folder / f"{dialect}.jsonl"
            write(path, MAKERS[dialect], args.n)
            size = path.stat().st_size
            print(f"\n{dialect}: {args.n:,} lines, {size / args.n:.0f} bytes/line, {size / 2**20:,.0f} MiB")
            if "pandas" in engines:
                pandas_section(path, dialect, args.n, args.repeat, args.chunksize)
            if spark is not None:
                spark_section(spark, path, dialect, args.n, args.repeat, folder)
            path.unlink()
        if spark is not None and "engines" in sections and "debezium" in args.dialects.split(","):
            wrapped_spark_section(spark, folder, args.n, args.repeat)
        if not args.no_scaling and "scaling" in sections:
            for dialect in args.dialects.split(","):
                scaling_section(spark, folder, dialect, args.n, args.repeat)
        if "pandas" in engines:
            layouts_n = args.n if args.layouts_n is None else args.layouts_n
            if layouts_n and "layouts" in sections:
                layouts_section(folder, layouts_n, args.repeat, cores)
            every_n = min(args.n, 96_000) if args.every_n is None else args.every_n
            if every_n and "every" in sections:
                every_dialect_section(folder, every_n, args.repeat, cores,
                                      set(filter(None, args.every_dialects.split(","))))
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
