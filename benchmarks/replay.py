"""Benchmark: cdckit's replay functions against baselines measured in the same run, on the same frame.

    .venv/bin/python benchmarks/replay.py                          # 200,000 events (Spark: 1,000,000): pandas, Spark
    .venv/bin/python benchmarks/replay.py --capture value-only --no-spark         # the Debezium values only
    .venv/bin/python benchmarks/replay.py --events 20000 --keys 2000 --no-spark   # a quick check
    .venv/bin/python benchmarks/replay.py --no-spark --scale 1,4,16               # time per event as it grows
    .venv/bin/python benchmarks/replay.py --events 1000000 --keys 100000 --memory --no-pandas --no-spark
    .venv/bin/python benchmarks/replay.py --no-pandas --spark-events 1000000      # Spark only
    .venv/bin/python benchmarks/replay.py --repeat 3                              # best of 3 for every timing

Two captures (``--capture``, both by default), each replayed as given:

- ``keyed``: canonical rows (``make_events``) of one table, ``shop.items``,
  with full images and key columns: each key is inserted, then updated; they
  arrive shuffled;
- ``value-only``: the Debezium values a user saves from a topic, the
  changes of ``--keys`` rows (:func:`write_history`: ~740-byte MySQL rows,
  two tables, each row inserted, then updated with before and after images
  or deleted, one change in 30, and inserted again; 1% of the messages
  swapped with the next, 1% redelivered), read with ``cdckit.read``: no
  Kafka key and no key columns anywhere. The keys are known to the analyst
  (``{"customers": "id", "vip_customers": "id"}``); the keyless replay is
  another benchmark's concern.

pandas (one process), every time the best of ``--repeat``, after one untimed
run on the first 1,000 events (first-call costs are not measured):

- baselines: ``cdckit.sort_events``; the final state an analyst would write
  by hand in pandas, the issue's baseline (``sort_values("seq")``, the last
  change per table and key by ``drop_duplicates``, deletes dropped, the
  after images parsed by ``orjson``, a frame per table); the same in polars
  (``from_pandas``, ``sort("seq").group_by(table, "key").last()``, deletes
  dropped, ``str.json_decode`` of ``after`` with the images' struct written
  out; the conversion from pandas is part of the time) and in DuckDB
  (``arg_max(after, seq)`` per table and key, ``json_transform`` of
  ``after``, unnested, fetched as an Arrow table). The struct is found
  beforehand (untimed) from a sample of the images, as an analyst writes it
  once. The baselines read the frame with its keys (on the value-only
  capture, given by ``with_keys`` untimed).
- cdckit: ``materialize``, ``order_report``, ``scd2``: events/s and the
  ratio to each baseline, and "x query": the pandas query's time over the
  function's, the issue's figure (1x: as fast as the query). On the
  value-only capture ``materialize`` and ``scd2`` get the frame as read and
  ``keys=`` (giving the keys is part of their time). Goals: materialize at
  least 1x the query, scd2 at least 0.5x; order_report within 3x
  ``sort_events``.
- on the value-only capture, ``infer_keys`` of the frame as read (no key
  given): the keys it proposes must be the ones given; goal at least 0.5x
  the query.

``--scale 1,4,16``: the cdckit functions at 1x, 4x, 16x the events and keys;
time per event (µs) at each and the ratio of the largest scale to the
smallest. Goal: flat (at most 1.5x).

``--memory``: each function in a fresh process (this script with the hidden
``--probe`` flag): it builds the frame, frees what it can, resets the peak
(``/proc/self/clear_refs``), runs the function and reads the peak resident
memory (VmHWM); the extra memory is the peak minus the resident memory before
the call, shown against the frame's ``memory_usage(deep=True)``. Goal: at
most 3x the frame (meant at 10,000,000 events over 1,000,000 keys: a frame of
about 9 GB by that count, about 6 GB resident, which each probe holds besides
what the function takes).

Spark (unless ``--no-spark``): ``cdckit.spark.get_spark()`` with its
defaults; the frame is written to a temporary Parquet file and read back.
Baseline: ``sort_events(frame)`` written to the ``noop`` format (run once
untimed first, to warm the JVM). cdckit: ``materialize``, ``order_report``,
``scd2`` (a function the installed cdckit lacks is reported "not
available"), every Spark frame they return written to ``noop``. Goal: each
within 2x the baseline.

The frames are checked against the hand-written query (rows per table) outside
the timing: a fast wrong answer is reported WRONG RESULT. The output ends with
every GOAL line: met or missed. Timings depend on the machine and on what else
runs on it: compare only ratios printed by one run.
"""

from __future__ import annotations

import argparse
import ctypes
import gc
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
import pandas as pd
import pyarrow as pa

import cdckit
from cdckit.frame import ARROW_SCHEMA, COLUMN_NAMES, arrow_to_pandas

#: The functions the goals are about, in the order they are shown.
FUNCTIONS = ("materialize", "order_report", "scd2")
#: The columns the hand-written baselines read.
NEEDED = ["database", "table", "key", "seq", "op", "after"]
#: The value-only capture's tables and the keys given to them.
VALUE_ONLY_KEYS = {"customers": "id", "vip_customers": "id"}
#: Goals.
MATERIALIZE_SPEED = 1.0      # the hand-written query's time / materialize's: at least this
SCD2_SPEED = 0.5             # the same for scd2
INFER_KEYS_SPEED = 0.5       # the same for infer_keys (on the value-only capture, no key given)
PANDAS_SORT_FACTOR = 3.0     # order_report and scd2: at most this times sort_events
FLAT = 1.5                   # time per event at the largest scale / at the smallest
MEMORY_FACTOR = 3.0          # peak extra memory / the frame's size
SPARK_SORT_FACTOR = 2.0      # each Spark function / the noop sort


# --------------------------------------------------------------------------- events


def make_events(count: int, keys: int, seed: int = 1) -> pd.DataFrame:
    """``count`` canonical events over ``keys`` keys (inserts first, then updates), in shuffled arrival order.

    Event ``position`` (its place in true order) of key ``ident`` is version
    ``v`` of that key: ``qty`` is ``v``, ``note`` is ``"v{v}"``; ``seq`` is
    the position, zero-padded. Built column by column (10,000,000 rows take
    seconds, not minutes). The frame has the dtypes ``cdckit.read`` gives.
    """
    rng = np.random.default_rng(seed)
    ids = np.concatenate([np.arange(keys), rng.integers(0, keys, count - keys)])
    # version of each event: how many events of the same key come before it
    by_key = np.argsort(ids, kind="stable")
    sorted_ids = ids[by_key]
    starts = np.flatnonzero(np.r_[True, sorted_ids[1:] != sorted_ids[:-1]])
    versions = np.empty(count, dtype=np.int64)
    versions[by_key] = np.arange(count) - np.repeat(starts, np.diff(np.r_[starts, count]))
    # arrival row i holds the event at position order[i]
    order = rng.permutation(count)
    position, ident, version = order.tolist(), ids[order].tolist(), versions[order].tolist()

    def image(i: int, v: int) -> str:
        return f'{{"id":{i},"name":"name{i}","qty":{v},"note":"v{v}"}}'

    nothing = [None] * count
    columns = {
        "dialect": ["canal"] * count,
        "source": ["bench"] * count,
        "offset": np.arange(count),
        "partition": nothing,
        "op": ["insert" if v == 0 else "update" for v in version],
        "op_raw": ["INSERT" if v == 0 else "UPDATE" for v in version],
        "database": ["shop"] * count,
        "schema": nothing,
        "table": ["items"] * count,
        "event_time": pd.to_datetime(1_700_000_000 + order, unit="s", utc=True),
        "emit_time": nothing,
        "seq": [f"{p:020d}" for p in position],
        "txn_id": nothing,
        "key_columns": [["id"] for _ in range(count)],
        "key": [f"[{i}]" for i in ident],
        "before": [None if v == 0 else image(i, v - 1) for i, v in zip(ident, version)],
        "after": [image(i, v) for i, v in zip(ident, version)],
        "ddl": nothing,
    }
    plain = pd.DataFrame({name: columns[name] for name in COLUMN_NAMES})
    # the dtypes cdckit.read gives (Arrow-backed strings, nullable ints, UTC times)
    return arrow_to_pandas(pa.Table.from_pandas(plain, schema=ARROW_SCHEMA, preserve_index=False))


def make_value_only(count: int, keys: int | None = None, seed: int = 1) -> pd.DataFrame:
    """``count`` Debezium values as a topic holds them (no Kafka key, no key columns), read by ``cdckit.read``.

    :func:`cdckit.samples.synthetic.write_capture`'s MySQL rows (two tables), 1% of the messages swapped with
    the next one, 1% redelivered; with ``keys``, the changes of that many rows (:func:`write_history`)."""
    from cdckit.samples.synthetic import write_capture

    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "values.jsonl")
        if keys is None or keys >= count:
            write_capture(path, count, "debezium", disorder=0.01, redeliver=0.01, seed=seed)
        else:
            write_history(path, count, keys, seed)
        events = cdckit.read(path)
    if events["key_columns"].notna().any() or events["key"].notna().any():
        raise AssertionError("the value-only capture names a key")
    return events


def write_history(path: str, count: int, keys: int, seed: int = 1) -> None:
    """``count`` Debezium values (MySQL connector, unwrapped) changing ``keys`` rows of two tables: each row is
    inserted, then changes picked at random update it (before and after images) or, one in 30, delete it (its
    next change inserts it again); 1% of the messages swapped with the next one, 1% redelivered."""
    from cdckit.samples.synthetic import debezium_line

    rng = np.random.default_rng(seed)
    rows = np.concatenate([np.arange(keys), rng.integers(0, keys, count - keys)])
    deletes = rng.random(count) < 1 / 30
    version: dict[int, int] = {}  # a live row's version; -1 once deleted
    lines = []
    for i, (row, delete) in enumerate(zip(rows.tolist(), deletes.tolist())):
        message = json.loads(debezium_line(row))  # row ``row``'s columns; its place in the topic is i's
        message["source"].update(json.loads(debezium_line(i))["source"], table=message["source"]["table"])
        message["ts_ms"] = message["source"]["ts_ms"] + 100
        image = message["after"]
        now = version.get(row, -1)
        if now < 0:
            message.update(op="c", before=None, after=dict(image, balance=0.0))
            version[row] = 0
        elif delete:
            message.update(op="d", before=dict(image, balance=float(now)), after=None)
            version[row] = -1
        else:
            message.update(op="u", before=dict(image, balance=float(now)), after=dict(image, balance=float(now + 1)))
            version[row] = now + 1
        lines.append(json.dumps(message, separators=(",", ":")))
    swaps = rng.random(count) < 0.01
    for i in np.flatnonzero(swaps[:-1]).tolist():
        lines[i], lines[i + 1] = lines[i + 1], lines[i]
    again = set(np.flatnonzero(rng.random(count) < 0.01).tolist())
    with open(path, "w", encoding="utf-8") as out:
        for i, line in enumerate(lines):
            out.write(line + "\n" + (line + "\n" if i in again else ""))


@dataclass
class Workload:
    """A capture to replay: its name, the frame every function gets, and what it is."""

    name: str
    events: pd.DataFrame
    description: str
    plain: pd.DataFrame | None = None  # the value-only capture as read, before its keys are given


CAPTURES = ("keyed", "value-only")


def build(capture: str, count: int, keys: int) -> Workload:
    """The ``keyed`` (``count`` events over ``keys`` keys) or ``value-only`` (``count`` messages) workload."""
    start = time.perf_counter()
    if capture == "keyed":
        events = make_events(count, keys)
        built = time.perf_counter() - start
        what = f"{len(events):,} canonical events over {keys:,} keys, built in {built:.1f} s"
    else:
        plain = make_value_only(count, keys)
        built = time.perf_counter() - start
        start = time.perf_counter()
        events = cdckit.with_keys(plain, VALUE_ONLY_KEYS)
        given = time.perf_counter() - start
        what = (f"{len(plain):,} Debezium values (no key) of {events['key'].nunique():,} rows, written and read "
                f"in {built:.1f} s; the baselines get the keys from with_keys ({given:.2f} s, untimed), cdckit's "
                f"functions as keys=")
        return Workload(capture, events, f"{what}; frame {events.memory_usage(deep=True).sum() / 1e6:,.0f} MB",
                        plain)
    return Workload(capture, events, f"{what}; frame {events.memory_usage(deep=True).sum() / 1e6:,.0f} MB")


# --------------------------------------------------------------------------- timing and goals


@dataclass
class Goal:
    """One goal: what it asks, whether it was met (None: not measured) and the measured figure."""

    text: str
    met: bool | None
    figure: str = ""

    def line(self) -> str:
        verdict = {True: "met", False: "MISSED", None: "not measured"}[self.met]
        return f"GOAL {self.text}: {verdict}" + (f" ({self.figure})" if self.figure else "")


def best_of(repeat: int, work: Callable[[], Any]) -> tuple[float, Any]:
    """The shortest of ``repeat`` runs of ``work`` in seconds, and the last result."""
    best, result = math.inf, None
    for _ in range(repeat):
        result = None  # the previous result is freed before the next run
        gc.collect()
        start = time.perf_counter()
        result = work()
        best = min(best, time.perf_counter() - start)
    return best, result


def attempt(label: str, repeat: int, work: Callable[[], Any]) -> tuple[float | None, Any]:
    """:func:`best_of`, or (None, None) with the error printed when ``work`` fails."""
    try:
        return best_of(repeat, work)
    except Exception as error:  # noqa: BLE001 - a benchmark reports a broken function and goes on
        print(f"  {label:<30} failed: {type(error).__name__}: {last_error_line(error)}")
        return None, None


def last_error_line(error: Exception) -> str:
    """The line that names the error (for Spark, the Python worker's last ``...Error: ...`` line), shortened."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()] or [""]
    named = [line for line in lines if re.match(r"^[\w.]+(Error|Exception): ", line)]
    return (named or lines)[-1][:200]


def ratio(seconds: float | None, baseline: float | None) -> str:
    """``seconds`` as a multiple of ``baseline`` ("-" when either is missing)."""
    return f"{seconds / baseline:.2f}x" if seconds is not None and baseline else "-"


def within(seconds: float | None, baseline: float | None, factor: float) -> bool | None:
    """Whether ``seconds`` is at most ``factor`` times ``baseline`` (None when either is missing)."""
    return None if seconds is None or not baseline else seconds <= factor * baseline


def ratio_goal(text: str, seconds: float | None, baseline: float | None, factor: float, where: str) -> Goal:
    """The goal that ``seconds`` be at most ``factor`` times ``baseline``; ``where``: the size it was measured at."""
    if seconds is None or not baseline:
        return Goal(text, None, "it failed" if seconds is None else "the baseline failed")
    return Goal(text, within(seconds, baseline, factor), f"{ratio(seconds, baseline)} {where}")


def check(what: str, ok: bool) -> None:
    """Say so when a result is wrong (a fast wrong answer is no answer)."""
    if not ok:
        print(f"  WRONG RESULT: {what}")


# --------------------------------------------------------------------------- pandas side


def image_types(events: pd.DataFrame) -> tuple[Any, str]:
    """The after images' polars struct and DuckDB ``json_transform`` structure, found from a sample (untimed:
    the analyst writes them once)."""
    import duckdb
    import polars as pl

    sample = events["after"].dropna().head(1000)
    decoded = pl.Series(sample.astype(object).tolist(), dtype=pl.String).str.json_decode(infer_schema_length=None)
    struct = pl.Struct({f.name: (pl.String if f.dtype == pl.Null else f.dtype) for f in decoded.dtype.fields})
    con = duckdb.connect()
    con.register("sample", pd.DataFrame({"after": sample.astype(object)}))
    structure = con.execute("SELECT json_group_structure(after::JSON) FROM sample").fetchall()[0][0]
    return struct, structure.replace('"NULL"', '"VARCHAR"')


def pandas_final_state(events: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """The final state an analyst writes by hand in pandas (the issue's baseline): sort by seq, the last change
    of each key, deletes dropped, the after images parsed, a frame per table."""
    import orjson

    frame = events[NEEDED].sort_values("seq", kind="stable")
    last = frame.drop_duplicates(["database", "table", "key"], keep="last")
    last = last[last["op"] != "delete"]
    return {f"{database}.{table}": pd.DataFrame([orjson.loads(image) for image in rows["after"]])
            for (database, table), rows in last.groupby(["database", "table"], sort=True)}


def polars_final_state(events: pd.DataFrame, struct: Any) -> Any:
    """The hand-written polars final state of every table and key (the conversion from pandas included)."""
    import polars as pl

    return (pl.from_pandas(events[NEEDED]).sort("seq").group_by("database", "table", "key").last()
            .filter(pl.col("op") != "delete")
            .select("database", "table", pl.col("after").str.json_decode(struct))
            .unnest("after"))


def duckdb_final_state(events: pd.DataFrame, structure: str) -> Any:
    """The hand-written DuckDB final state of every table and key, as an Arrow table."""
    import duckdb

    con = duckdb.connect()
    con.register("events", events[NEEDED])
    return con.sql(f"""
        SELECT database, "table", unnest(json_transform(after, '{structure}'))
        FROM (SELECT database, "table", arg_max(op, seq) AS op, arg_max(after, seq) AS after
              FROM events WHERE op IN ('insert', 'update', 'delete', 'read') GROUP BY database, "table", key)
        WHERE op <> 'delete'
    """).to_arrow_table()


def pandas_side(workload: Workload, repeat: int) -> list[Goal]:
    """Time the baselines and the cdckit functions on one capture; print the table; the goals."""
    events = workload.events
    count = len(events)
    struct, structure = image_types(events)
    print(f"\npandas, {workload.name} capture: {workload.description}, best of {repeat}")
    print(f"  {'':<30} {'seconds':>8} {'events/s':>12} {'x sort':>7} {'x polars':>9} {'x duckdb':>9} {'x query':>8}")
    plain = workload.plain
    runs: list[tuple[str, str, Callable[[pd.DataFrame], Any]]] = [
        ("sort_events", "sort_events (baseline)", cdckit.sort_events),
        ("pandas query", "pandas query (baseline)", pandas_final_state),
        ("polars query", "polars query (baseline)", lambda frame: polars_final_state(frame, struct)),
        ("duckdb query", "duckdb query (baseline)", lambda frame: duckdb_final_state(frame, structure)),
        ("order_report", "order_report", cdckit.order_report)]
    if plain is None:
        runs += [("materialize", "materialize", cdckit.materialize), ("scd2", "scd2", cdckit.scd2)]
    else:  # the capture as read, no key in it (as many rows as the function is given): keys=, or inferred
        runs += [("materialize", "materialize(keys=)",
                  lambda frame: cdckit.materialize(plain.head(len(frame)), keys=VALUE_ONLY_KEYS)),
                 ("scd2", "scd2(keys=)", lambda frame: cdckit.scd2(plain.head(len(frame)), keys=VALUE_ONLY_KEYS)),
                 ("infer_keys", "infer_keys (no key given)",
                  lambda frame: cdckit.infer_keys(plain.head(len(frame))))]
    times: dict[str, float | None] = {}
    expected: dict[str, int] = {}
    for name, label, function in runs:
        warm_up(function, events)
        times[name], result = attempt(label, repeat, lambda: function(events))
        show_row(label, times[name], count, times)
        if result is not None:
            try:
                verify(name, result, count, expected)
            except (KeyError, TypeError, ValueError) as error:  # not the shape it should have
                check(f"{name}: {type(error).__name__}: {error}", False)
        del result

    sort, query = times["sort_events"], times["pandas query"]
    print(f"  the hand-written query: {query_speed(times['materialize'], query)} for materialize, "
          f"{query_speed(times['scd2'], query)} for scd2 (the query's time / the function's; "
          f"goals >= {MATERIALIZE_SPEED:g}x, >= {SCD2_SPEED:g}x); order_report {ratio(times['order_report'], sort)} "
          f"sort_events")
    where = f"{workload.name}, {count:,} events"
    goals = [speed_goal(f"pandas materialize >= {MATERIALIZE_SPEED:g}x the hand-written query ({workload.name})",
                        times["materialize"], query, MATERIALIZE_SPEED, where),
             speed_goal(f"pandas scd2 >= {SCD2_SPEED:g}x the hand-written query ({workload.name})",
                        times["scd2"], query, SCD2_SPEED, where),
             ratio_goal(f"pandas order_report <= {PANDAS_SORT_FACTOR:g}x sort_events ({workload.name})",
                        times["order_report"], sort, PANDAS_SORT_FACTOR, where)]
    if "infer_keys" in times:
        print(f"  infer_keys: {query_speed(times['infer_keys'], query)} the hand-written query (goal >= "
              f"{INFER_KEYS_SPEED:g}x)")
        goals.append(speed_goal(f"pandas infer_keys >= {INFER_KEYS_SPEED:g}x the hand-written query "
                                f"({workload.name})", times["infer_keys"], query, INFER_KEYS_SPEED, where))
    return goals


def query_speed(seconds: float | None, query: float | None) -> str:
    """The query's time over ``seconds``: the issue's "x" (1x: as fast as the hand-written query)."""
    return f"{query / seconds:.2f}x" if seconds and query is not None else "-"


def speed_goal(text: str, seconds: float | None, query: float | None, least: float, where: str) -> Goal:
    """The goal that the hand-written query's time over ``seconds`` be at least ``least``."""
    if seconds is None or not query:
        return Goal(text, None, "it failed" if seconds is None else "the baseline failed")
    return Goal(text, query / seconds >= least, f"{query_speed(seconds, query)} at {where}")


def warm_up(function: Callable[[pd.DataFrame], Any], events: pd.DataFrame) -> None:
    """Run ``function`` once on a few events, untimed: first-call costs (thread pools, caches) are not measured."""
    try:
        function(events.head(1000))
    except Exception:  # noqa: BLE001 - the timed run reports it
        pass


def show_row(label: str, seconds: float | None, count: int, times: dict[str, float | None]) -> None:
    """One line of the pandas table: time, events/s and the ratio to each baseline measured so far."""
    if seconds is None:
        return
    query = times.get("pandas query")
    print(f"  {label:<30} {seconds:8.2f} {count / seconds:12,.0f} {ratio(seconds, times.get('sort_events')):>7} "
          f"{ratio(seconds, times.get('polars query')):>9} {ratio(seconds, times.get('duckdb query')):>9} "
          f"{query_speed(seconds, query):>8}")


def verify(name: str, result: Any, count: int, expected: dict[str, int]) -> None:
    """Check a result against the hand-written query's (outside the timing): say so when it is wrong.

    ``expected``: rows per table, filled by the first query that runs."""
    if name in ("pandas query", "polars query", "duckdb query"):
        rows = rows_per_table(result)
        if expected:
            check(f"{name}: rows per table {rows}, the other query {expected}", rows == expected)
        expected.update(rows)
    elif name == "materialize" and expected:
        rows = {table: len(frame) for table, frame in result.items()}
        check(f"materialize: rows per table {rows}; the query's {expected}", rows == expected)
    elif name == "infer_keys":
        proposed = dict(result)
        check(f"infer_keys: {proposed}; the keys given {VALUE_ONLY_KEYS}",
              proposed == {f"shop.{table}": [column] for table, column in VALUE_ONLY_KEYS.items()})
    elif name == "scd2" and expected:
        current = {table: int(frame["is_current"].sum()) for table, frame in result.items()}
        check(f"scd2: current versions per table {current}; the query's rows {expected}", current == expected)


def rows_per_table(result: Any) -> dict[str, int]:
    """``{"database.table": rows}`` of a hand-written final state (frames per table, a polars frame or an Arrow
    table)."""
    import polars as pl

    if isinstance(result, dict):
        return {table: len(frame) for table, frame in sorted(result.items())}
    frame = result if isinstance(result, pl.DataFrame) else pl.from_arrow(result)
    counted = frame.group_by("database", "table").len().rows()
    return {f"{database}.{table}": n for database, table, n in sorted(counted)}


# --------------------------------------------------------------------------- scaling


def scaling(events: int, keys: int, factors: list[int], repeat: int) -> list[Goal]:
    """Time per event of sort_events (reference) and the cdckit functions at each multiple of the size."""
    names = ("sort_events", *FUNCTIONS)
    micros: dict[str, dict[int, float | None]] = {name: {} for name in names}
    print(f"\nscaling: time per event (µs), best of {repeat}")
    for factor in factors:
        frame = make_events(events * factor, keys * factor)
        for name in names:
            function = getattr(cdckit, name)
            warm_up(function, frame)
            seconds, _ = attempt(f"{name} at {factor}x", repeat, lambda: function(frame))
            micros[name][factor] = None if seconds is None else seconds / len(frame) * 1e6
        del frame
    low, high = min(factors), max(factors)
    header = "".join(f"{f'{f}x ({events * f:,})':>18}" for f in factors)
    print(f"  {'':<16}{header}  {f'{high}x / {low}x':>10}")
    goals = []
    for name in names:
        cells = "".join(f"{'-' if micros[name][f] is None else f'{micros[name][f]:.2f}':>18}" for f in factors)
        grow = ratio(micros[name][high], micros[name][low])
        print(f"  {name:<16}{cells}  {grow:>10}")
        if name in FUNCTIONS:
            goals.append(ratio_goal(f"scaling {name} time per event flat ({high}x / {low}x <= {FLAT:g})",
                                    micros[name][high], micros[name][low], FLAT,
                                    f"from {events * low:,} to {events * high:,} events"))
    return goals


# --------------------------------------------------------------------------- memory


def status_kb(field: str) -> int:
    """A field of /proc/self/status (VmRSS, VmHWM) in kB."""
    with open("/proc/self/status") as status:
        return int(re.search(rf"^{field}:\s+(\d+) kB", status.read(), re.M).group(1))


def probe(name: str, capture: str, events: int, keys: int) -> None:
    """(Run in a fresh process.) Print, as JSON, the memory ``name`` needs beyond the frame's."""
    getattr(cdckit, name)(build(capture, 100, 10).events)  # imports and first-call caches are not its growth
    gc.collect()
    before = status_kb("VmRSS")
    frame = build(capture, events, keys).events
    frame_bytes = int(frame.memory_usage(deep=True).sum())
    gc.collect()
    try:  # give what the build freed back to the system, so the baseline is what the frame holds
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except OSError:
        pass
    with open("/proc/self/clear_refs", "w") as refs:
        refs.write("5")  # resets VmHWM to the current resident size
    start = status_kb("VmRSS")
    result = getattr(cdckit, name)(frame)
    peak = status_kb("VmHWM")
    del result
    print(json.dumps({"frame_bytes": frame_bytes, "frame_rss": (start - before) * 1024,
                      "extra": (peak - start) * 1024}))


def memory(capture: str, events: int, keys: int) -> list[Goal]:
    """Run :func:`probe` for sort_events (reference) and each cdckit function in its own process."""
    print(f"\nmemory, {capture} capture: {events:,} events, each function in a fresh process")
    goals, shown = [], False
    for name in ("sort_events", *FUNCTIONS):
        command = [sys.executable, os.path.abspath(__file__), "--events", str(events), "--keys", str(keys),
                   "--capture", capture, "--probe", name]
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode != 0:
            last = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]
            print(f"  {name:<16} failed: {last}")
            if name in FUNCTIONS:
                goals.append(Goal(f"memory {name} peak extra <= {MEMORY_FACTOR:g}x the frame ({capture})", None))
            continue
        found = json.loads(done.stdout.strip().splitlines()[-1])
        frame = found["frame_bytes"]
        if not shown:
            print(f"  frame: {frame / 1e6:,.0f} MB by memory_usage(deep=True), {found['frame_rss'] / 1e6:,.0f} MB "
                  f"resident")
            print(f"  {'':<16} {'peak extra MB':>14} {'x frame':>8}")
            shown = True
        times = found["extra"] / frame
        print(f"  {name:<16} {found['extra'] / 1e6:14,.0f} {times:7.2f}x")
        if name in FUNCTIONS:
            goals.append(Goal(f"memory {name} peak extra <= {MEMORY_FACTOR:g}x the frame ({capture})",
                              times <= MEMORY_FACTOR,
                              f"{times:.2f}x at {events:,} events"))
    return goals


# --------------------------------------------------------------------------- Spark side


def force(result: Any) -> None:
    """Compute whatever Spark frames ``result`` holds (a frame or a mapping of frames) into ``noop``."""
    from pyspark.sql import DataFrame

    frames = [result] if isinstance(result, DataFrame) else \
        [v for v in result.values() if isinstance(v, DataFrame)] if hasattr(result, "values") else []
    for frame in frames:
        frame.write.format("noop").mode("overwrite").save()


def spark_side(workload: Workload, repeat: int) -> list[Goal]:
    """Time the cdckit Spark functions beside the noop sort, on the frame read back from Parquet."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from cdckit import spark as cdcspark

    spark = cdcspark.get_spark()
    conf = spark.sparkContext.getConf()
    driver = conf.get("spark.driver.memory") or "not set (Spark's default, 1g)"
    print(f"\nSpark {spark.version}, master {conf.get('spark.master')} (get_spark() defaults), "
          f"shuffle partitions {spark.conf.get('spark.sql.shuffle.partitions')}, driver memory {driver}")
    goals = []
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "events.parquet")
        table = pa.Table.from_pandas(workload.events, schema=ARROW_SCHEMA, preserve_index=False)
        pq.write_table(table, path, coerce_timestamps="us", allow_truncated_timestamps=True)
        del table
        frame = spark.read.parquet(path)
        count = frame.count()
        print(f"  {workload.name} capture: {workload.description}")
        print(f"  {count:,} events from Parquet, best of {repeat}; Spark frames a function returns are written "
              "to noop")
        print(f"  {'':<30} {'seconds':>8} {'events/s':>12} {'x sort':>7}")

        def sort() -> None:
            cdcspark.sort_events(frame).write.format("noop").mode("overwrite").save()

        sort()  # warm-up, untimed
        base, _ = attempt("sort_events -> noop", repeat, sort)
        if base is not None:
            print(f"  {'sort_events -> noop':<30} {base:8.2f} {count / base:12,.0f} {ratio(base, base):>7}")
        for name in FUNCTIONS:
            goal = f"Spark {name} <= {SPARK_SORT_FACTOR:g}x noop sort ({workload.name})"
            if not hasattr(cdcspark, name):
                print(f"  {name:<30} not available")
                goals.append(Goal(goal, None, "not available"))
                continue
            seconds, _ = attempt(name, repeat, lambda: force(getattr(cdcspark, name)(frame)))
            spark.catalog.clearCache()
            if seconds is not None:
                print(f"  {name:<30} {seconds:8.2f} {count / seconds:12,.0f} {ratio(seconds, base):>7}")
            goals.append(ratio_goal(goal, seconds, base, SPARK_SORT_FACTOR, f"at {count:,} events"))
    return goals


# --------------------------------------------------------------------------- main


# --------------------------------------------------------------------------- keyless tables (issue 26 item 4)


def keyless_events(count: int, seed: int = 2, partial: float = 0.0) -> pd.DataFrame:
    """``count`` changes of one table without a key: inserts (one in ten inserts a row already live again: a
    duplicate), updates and deletes with whole before images; ``partial``: the share of deletes whose before
    image holds the ``id`` only (as a ``REPLICA IDENTITY DEFAULT`` delete does)."""
    from cdckit.frame import Event
    from cdckit.frame_builders import FrameBuilder
    from cdckit import values as cdc_values

    rng = np.random.default_rng(seed)
    builder, live = FrameBuilder(), []
    for number in range(count):
        pick = rng.random()
        if pick < 0.5 or not live:
            if pick < 0.05 and live:
                row = live[int(rng.integers(0, len(live)))]  # the same row again
            else:
                row = {"id": number, "name": f"n{number % 97}", "qty": int(rng.integers(0, 100))}
            live.append(row)
            op, before, after = "insert", None, row
        else:
            place = int(rng.integers(0, len(live)))
            before = live[place]
            live[place] = live[-1]
            live.pop()
            if pick < 0.8:
                after = dict(before, qty=number)
                live.append(after)
                op = "update"
            else:
                op, after = "delete", None
                if rng.random() < partial:
                    before = {"id": before["id"]}
        builder.add(Event(op=op, op_raw=op.upper(), database="shop", table="t", event_time=None, seq=f"{number:09d}",
                          key_columns=None, key=None, before=cdc_values.image(before), after=cdc_values.image(after)),
                    "canal", "a.jsonl", number)
    return builder.to_pandas()


def duckdb_net_counts(events: pd.DataFrame) -> Any:
    """What an analyst writes for a keyless table: the net count of each image, the live ones."""
    import duckdb

    con = duckdb.connect()
    con.register("events", events[["op", "before", "after"]])
    return con.sql("""
        SELECT image, sum(d) AS n FROM (
            SELECT after AS image, 1 AS d FROM events WHERE after IS NOT NULL AND op <> 'delete'
            UNION ALL SELECT before, -1 FROM events WHERE before IS NOT NULL)
        GROUP BY image HAVING sum(d) > 0""").to_arrow_table()


def keyless_side(count: int, repeat: int, spark: bool) -> list[Goal]:
    """pandas materialize of a keyless table vs the net counts query; Spark materialize vs a sort to ``noop``."""
    events = keyless_events(count)
    print(f"\nkeyless table: {len(events):,} changes")
    query, _ = attempt("duckdb net counts", repeat, lambda: duckdb_net_counts(events))
    ours, state = attempt("cdckit.materialize", repeat, lambda: cdckit.materialize(events))
    print(f"  duckdb net counts  {query:.2f} s\n  materialize        {ours:.2f} s ({ratio(ours, query)})"
          f"  rows {len(state['shop.t']):,}")
    goals = [ratio_goal("keyless pandas materialize vs net counts", ours, query, 1.0, "pandas")]
    values = make_value_only(count)  # the Debezium values a topic holds, replayed with no key given at all
    print(f"\nvalue-only capture, no keys given: {len(values):,} Debezium values")
    query, _ = attempt("duckdb net counts", repeat, lambda: duckdb_net_counts(values))
    ours, state = attempt("cdckit.materialize", repeat, lambda: cdckit.materialize(values))
    print(f"  duckdb net counts  {query:.2f} s\n  materialize        {ours:.2f} s ({ratio(ours, query)})"
          f"  rows {sum(len(frame) for frame in state.values()):,}")
    goals.append(ratio_goal("value-only, no keys: pandas materialize vs net counts", ours, query, 1.0, "pandas"))
    if spark:
        from cdckit import spark as cdcspark
        import pyarrow as pa
        import pyarrow.parquet as pq

        session = cdcspark.get_spark()
        folder = tempfile.mkdtemp()
        path = os.path.join(folder, "keyless.parquet")
        pq.write_table(pa.Table.from_pandas(events, schema=ARROW_SCHEMA, preserve_index=False), path,
                       coerce_timestamps="us", allow_truncated_timestamps=True)
        frame = session.read.parquet(path)
        frame.count()
        sort, _ = attempt("spark sort to noop", repeat,
                          lambda: frame.sort("seq").write.format("noop").mode("overwrite").save())
        replayed, _ = attempt("spark materialize", repeat, lambda: force(cdcspark.materialize(frame)))
        print(f"  spark sort to noop {sort:.2f} s\n  spark materialize  {replayed:.2f} s ({ratio(replayed, sort)})")
        goals.append(ratio_goal("keyless Spark materialize vs a sort to noop", replayed, sort, 2.0, "spark"))
    return goals


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, default=200_000, help="events of the pandas timings and --memory")
    parser.add_argument("--keys", type=int, default=20_000, help="keys of the keyed capture (pandas, --memory)")
    parser.add_argument("--spark-events", type=int, default=1_000_000, help="events of the Spark timings")
    parser.add_argument("--spark-keys", type=int, default=100_000, help="keys of the keyed capture on Spark")
    parser.add_argument("--capture", choices=[*CAPTURES, "both"], default="both")
    parser.add_argument("--scale", help="multiples of --events/--keys, e.g. 1,4,16: time per event at each")
    parser.add_argument("--no-spark", action="store_true")
    parser.add_argument("--no-pandas", action="store_true", help="skip the pandas timings (not --scale, --memory)")
    parser.add_argument("--memory", action="store_true", help="peak memory of each function, in fresh processes")
    parser.add_argument("--repeat", type=int, default=1, help="best of this many runs")
    parser.add_argument("--probe", help=argparse.SUPPRESS)
    parser.add_argument("--keyless", type=int, default=0, help="also time a keyless table of this many changes")
    args = parser.parse_args()
    if args.keys > args.events or args.spark_keys > args.spark_events:
        parser.error("--keys must not exceed --events (every key is inserted once)")
    captures = CAPTURES if args.capture == "both" else (args.capture,)
    if args.probe:
        probe(args.probe, captures[0], args.events, args.keys)
        return

    goals: list[Goal] = []
    for capture in captures:
        if not args.no_pandas:
            goals += pandas_side(build(capture, args.events, args.keys), args.repeat)
        if not args.no_spark:
            goals += spark_side(build(capture, args.spark_events, args.spark_keys), args.repeat)
    if args.scale:
        goals += scaling(args.events, args.keys, [int(f) for f in args.scale.split(",")], args.repeat)
    if args.memory:
        for capture in captures:
            goals += memory(capture, args.events, args.keys)
    if args.keyless:
        goals += keyless_side(args.keyless, args.repeat, not args.no_spark)
    print("\nsummary")
    for goal in goals:
        print(f"  {goal.line()}")


if __name__ == "__main__":
    main()
