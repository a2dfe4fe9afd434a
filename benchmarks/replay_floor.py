"""Benchmark: what an exact replay must read beyond the hand-written final-state query, each part timed alone.

    .venv/bin/python benchmarks/replay_floor.py                        # both captures, 200,000 events
    .venv/bin/python benchmarks/replay_floor.py --capture value-only --events 1000000

The hand-written query (``benchmarks/replay.py``'s DuckDB baseline: ``arg_max(after, seq)`` per key, deletes
dropped, the final images parsed with a struct written beforehand) answers "the last image of each key". To
give the same rows *and* say what the capture got wrong, ``cdckit.materialize`` must also, on the same frame:

- find exact redeliveries (a change sent twice must not be replayed twice: a second insert is no problem);
- read the column names of every image (a column seen only in a deleted row or a before image is still a
  column of the table, and the columns come in the order they first appear);
- read the key columns of every update's images (an update that names another key moves its row);
- tell, per key, whether its changes fit (first a create, one create, no change after a delete) so that only
  the keys that do not are walked in order.

``scd2`` types every version of every row, and ``infer_keys`` reads every image's values (a candidate key must
tell every image of a row from every other row's): both must parse every image into its values, where the
query parses the final ones only; that part (``VALUES``) is timed the same way, its rows fetched.

Each part is one DuckDB query over the same Arrow table, timed alone (best of ``--repeat``), against the hand
query in the same run. A function that does a part cannot be faster than that part alone: the lines ``at
most`` are the query's time over the costliest part's, the most "x query" each function can reach (reading
the names of every image parses every image, where the query parses only the final ones). Timings depend on
the machine and on what else runs on it: compare only the ratios of one run.

The issue's baseline is the hand-written *pandas* query (``benchmarks/replay.py``'s ``pandas_final_state``),
slower than DuckDB's; it is timed too, and on the value-only capture so is ``with_keys`` (the baselines get
the keys free; ``materialize(keys=...)`` must read them from every image). The last line sums the parts: not a
strict floor (one pass could share the parsing of the names, the key columns and the keys), the cost of
doing them one after the other.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from replay import CAPTURES, NEEDED, VALUE_ONLY_KEYS, build, image_types, pandas_final_state  # noqa: E402

import cdckit  # noqa: E402
from cdckit.analysis.replay_prepare import _frame_for_sql  # noqa: E402

#: What each part reads, as one query over the ``events`` table (``{key_paths}``: the key columns' JSON paths).
PARTS = {
    "exact redeliveries (identity hashed, groups of two or more)": """
        SELECT count(*) FROM (
            SELECT hash(dialect, database, schema, "table", key, seq, op, before, after) AS h
            FROM events GROUP BY 1 HAVING count(*) > 1)""",
    "column names of every image, first place per name set": """
        SELECT count(*) FROM (
            SELECT "table", hash(list_concat(coalesce(json_keys(before), []), coalesce(json_keys(after), []))),
                min(row(seq, "offset"))
            FROM events GROUP BY ALL)""",
    "key columns of every update's images against its key": """
        SELECT count(*) FILTER (WHERE to_json(json_extract(before, {key_paths}))::VARCHAR <> key
                                   OR to_json(json_extract(after, {key_paths}))::VARCHAR <> key)
        FROM events WHERE op = 'update'""",
    "per key: its last change and whether its changes fit": """
        SELECT count(*) FILTER (WHERE NOT fits) FROM (
            SELECT "table", key, arg_max(_row, row(seq, "offset", _row)) AS last,
                arg_min(op, row(seq, "offset", _row)) IN ('insert', 'read')
                AND count(*) FILTER (WHERE op IN ('insert', 'read')) = 1
                AND count(*) FILTER (WHERE op = 'delete') = 0 AS fits
            FROM events GROUP BY ALL)""",
}


#: What ``scd2`` and ``infer_keys`` read beyond ``materialize``: every after image's values, typed and fetched.
VALUES = ("every after image's values (each version of each row), fetched",
          """SELECT "table", unnest(json_transform(after, '{structure}')) FROM events WHERE after IS NOT NULL""")


def best(con: Any, sql: str, repeat: int, fetched: bool = False) -> float:
    """The shortest of ``repeat`` runs of ``sql``, in seconds; ``fetched``: its rows fetched as an Arrow table
    (else the query is a count, whose every input the query must compute)."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        if fetched:
            con.sql(sql).to_arrow_table()
        else:
            con.execute(sql).fetchall()
        times.append(time.perf_counter() - start)
    return min(times)


def run(capture: str, count: int, keys: int, repeat: int) -> None:
    import duckdb

    workload = build(capture, count, keys)
    events = workload.events
    _, structure = image_types(events)
    columns = sorted({c for listed in events["key_columns"].dropna() for c in listed})
    con = duckdb.connect()
    con.execute("SET enable_progress_bar = false")
    con.register("events", _frame_for_sql(events))
    con.register("needed", events[NEEDED])
    hand = best(
        con,
        f"""SELECT database, "table", unnest(json_transform(after, '{structure}'))
            FROM (SELECT database, "table", arg_max(op, seq) AS op, arg_max(after, seq) AS after
                  FROM needed WHERE op IN ('insert', 'update', 'delete', 'read') GROUP BY database, "table", key)
            WHERE op <> 'delete'""",
        repeat,
        fetched=True,  # as benchmarks/replay.py fetches it (a count would let DuckDB skip the parse)
    )
    pandas_query = min(timed(lambda: pandas_final_state(events)) for _ in range(repeat))
    keys_read = 0.0
    if workload.plain is not None:
        plain = workload.plain
        keys_read = min(timed(lambda: cdckit.with_keys(plain, VALUE_ONLY_KEYS)) for _ in range(repeat))
    paths = "[" + ", ".join(f"'$.\"{c}\"'" for c in columns) + "]"
    print(f"\n{capture}: {workload.description}")
    print(f"  {'the hand-written query in DuckDB (baseline)':<62} {hand:7.3f} s")
    print(f"  {'the hand-written query in pandas (the issue baseline)':<62} {pandas_query:7.3f} s")
    if keys_read:
        print(f"  {'with_keys: the key of every image read (keys=)':<62} {keys_read:7.3f} s   "
              f"{keys_read / pandas_query:5.2f}x the pandas query")
    costliest, total = 0.0, keys_read
    for label, sql in PARTS.items():
        seconds = best(con, sql.format(key_paths=paths), repeat)
        costliest, total = max(costliest, seconds), total + seconds
        print(f"  {label:<62} {seconds:7.3f} s   {seconds / hand:5.2f}x the query")
    label, sql = VALUES
    values = best(con, sql.format(structure=structure), repeat, fetched=True)
    print(f"  {label:<62} {values:7.3f} s   {values / hand:5.2f}x the query")
    print(f"  materialize: at most {hand / costliest:.2f}x the query (doing every check above; goal 1x)")
    print(f"  scd2, infer_keys: at most {hand / values:.2f}x the query (reading every image's values; goal 0.5x)")
    print(f"  the parts one after the other: {total:.3f} s, {pandas_query / total:.2f}x the pandas query "
          f"(materialize's goal: 1x; scd2 adds the values: {pandas_query / (total + values):.2f}x, goal 0.5x)")


def timed(work: Any) -> float:
    """Seconds ``work()`` takes."""
    start = time.perf_counter()
    work()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--capture", choices=CAPTURES, action="append")
    parser.add_argument("--events", type=int, default=200_000)
    parser.add_argument("--keys", type=int, default=20_000, help="keys of the keyed capture")
    parser.add_argument("--repeat", type=int, default=3)
    options = parser.parse_args()
    for capture in options.capture or CAPTURES:
        run(capture, options.events, options.keys, options.repeat)


if __name__ == "__main__":
    main()
