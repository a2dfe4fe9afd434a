"""Replay on Spark, in Spark SQL: table states, SCD type 2 versions and one row's history.

The rules are those of :mod:`cdckit.analysis.replay`. A row key's state is read
from window functions and ``max_by`` over its changes in replay order: the
last change that applied (an insert, snapshot read or update with an after
image, or a delete) gives the row, and for dialects whose updates carry only
the changed columns (SharePlex, UniVerse) each column takes the value of the
last image of the row's current life that holds it. Images are parsed with
``from_json`` and a schema per table inferred natively (the JSON kinds seen
per column: long, double, boolean, else string; nested values stay JSON
text); column order is where each column first appears in seq order.
A column given a kind (``types=``) is parsed as a variant instead (exact
decimals kept), carried as its JSON text and typed at the end by
:func:`cdckit.spark.tables.typed_json`, as the pandas typed state is.

Changes without a key are a multiset of row images, counted with window
functions as pandas counts them (:mod:`cdckit.spark.keyless`). Tables whose
primary key changes or that are truncated, and tables without a key whose
updates merge or where a before image is no live row as written
(:func:`cdckit.analysis.replay_keyless.walked_tables`), need a walk in order: only
their rows go to the Python replayer (:func:`cdckit.analysis.replayer.replay_rows`, one
``applyInPandas`` group per table). Only per-table metadata (columns, kinds),
the names of the tables to walk and problem rows reach the driver.

>>> from cdckit.spark import replay
>>> sorted(replay.ORDERS)
['arrival', 'event_time', 'seq']
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import orjson
import pandas as pd
from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F
from pyspark.sql import types as T

from ..analysis import replay
from ..analysis.replay_keyless import walked_tables
from ..analysis.replayer import old_key, problem_rows, replay_rows
from ..analysis.transitions import GONE, LIVE, RULES
from ..frame import REPLAY_OPS, find_table
from ..keys import Keys
from ..values import none_if_missing
from .columns import table_name_column
from .keyless import KeylessCounts
from .keys import given_keys
from .replay_survey import ORDERS, Table, effective, key_moved, plan
from .session import check_workers

__all__ = ["materialize", "scd2", "history", "problems", "ORDERS"]


# --------------------------------------------------------------------------- keyed tables, natively


def _rows(changes: DataFrame, table: Table) -> DataFrame:
    """The effective changes that name a key of one table, each with the row it leaves (``_r``, a struct).

    Full images: the after image. Partial images: per column, the last image
    of the key's current life that holds it (the life starts at an insert,
    a snapshot read, or an update of a key that is not live, which starts
    from its before image).
    """
    schema = table.schema()
    frame = changes.filter((F.col("_table") == table.name) & F.col("key").isNotNull() & effective())
    if not table.partial:
        return frame.withColumn("_r", F.from_json("after", schema))
    by_key = Window.partitionBy("_table", "key").orderBy("_position")
    reset = (F.col("op") != "update") | F.coalesce(F.lag("op").over(by_key) == "delete", F.lit(True))
    frame = (
        frame.withColumn("_reset", reset)
        .withColumn(
            "_life",
            F.sum(F.col("_reset").cast("long")).over(by_key.rowsBetween(Window.unboundedPreceding, Window.currentRow)),
        )
        .withColumn("_a", F.from_json("after", schema))
        .withColumn("_ak", F.json_object_keys("after"))
        .withColumn("_b", F.when(F.col("_reset") & (F.col("op") == "update"), F.from_json("before", schema)))
        .withColumn("_bk", F.when(F.col("_reset") & (F.col("op") == "update"), F.json_object_keys("before")))
    )
    life = (
        Window.partitionBy("_table", "key", "_life")
        .orderBy("_position")
        .rowsBetween(Window.unboundedPreceding, Window.currentRow)
    )
    values = []
    for column in table.columns:
        latest = F.last(
            F.when(F.coalesce(F.array_contains("_ak", column), F.lit(False)), F.struct(F.col("_a")[column].alias("v"))),
            ignorenulls=True,
        ).over(life)
        base = F.first(
            F.when(F.coalesce(F.array_contains("_bk", column), F.lit(False)), F.struct(F.col("_b")[column].alias("v"))),
            ignorenulls=True,
        ).over(life)
        values.append(F.coalesce(latest, base)["v"].alias(column))
    return frame.withColumn("_r", F.struct(*values))


def _state(changes: DataFrame, table: Table) -> DataFrame:
    """The live rows of one keyed table, one column per source column."""
    rows = _rows(changes, table)
    if table.partial:
        last = rows.groupBy("key").agg(F.max_by(F.struct("op", "_r"), "_position").alias("_last"))
        row = F.col("_last")["_r"]
    else:  # parse only the images that survive
        last = rows.groupBy("key").agg(F.max_by(F.struct("op", "after"), "_position").alias("_last"))
        row = F.from_json(F.col("_last")["after"], table.schema())
    live = last.filter(F.col("_last")["op"] != "delete").select(row.alias("_r"))
    return live.select(*table.values(F.col("_r")))


def _versions(changes: DataFrame, table: Table) -> DataFrame:
    """The SCD type 2 rows of one keyed table: each change that set a row opens a version, the next change ends it."""
    by_key = Window.partitionBy("_table", "key").orderBy("_position")
    rows = (
        _rows(changes, table).withColumn("valid_to", F.lead("event_time").over(by_key)).filter(F.col("op") != "delete")
    )
    return rows.select(
        *table.values(F.col("_r")),
        F.col("event_time").alias("valid_from"),
        "valid_to",
        F.col("valid_to").isNull().alias("is_current"),
        "op",
        "seq",
    )


def _problem_column(op: Column, state: Column, has_after: Column, snapshot: Column) -> Column:
    """:func:`cdckit.analysis.transitions.problem` as a column, built from :data:`~cdckit.analysis.transitions.RULES`
    (``state``: 1, 0 or null)."""
    out: Column | None = None
    for rule in RULES:
        test = op.isin(*rule.ops)
        if rule.no_after:
            test = test & ~has_after
        if rule.snapshot:
            test = test & snapshot
        if rule.state is None:
            test = test & state.isNull()
        elif rule.state != "any":
            test = test & (state == F.lit(rule.state))
        head, marked, tail = rule.text.partition("{op}")
        text = F.concat(F.lit(head), op, F.lit(tail)) if marked else F.lit(head)
        out = F.when(test, text) if out is None else out.when(test, text)
    assert out is not None
    return out


#: The columns of a problem row of :func:`_problems` and :func:`problems`.
_PROBLEM_FIELDS = ["table", "key", "source", "partition", "offset", "seq", "op", "problem", "_position"]


def _problems(changes: DataFrame, tables: list[str]) -> DataFrame:
    """The changes that name a key of ``tables`` that did not fit (the state machine of
    :mod:`cdckit.analysis.transitions`), with ``_previous`` (the source, offset and seq of the change of the row
    before it; null for a key not seen before). ``tables`` have no key changes and no truncate of keyed rows
    (those are walked), so a key's state is its previous effective change's."""
    frame = changes.filter(F.col("_table").isin(*tables)) if tables else changes.limit(0)
    first_read = (  # where each table's snapshot begins: a change after it has a snapshot before it
        frame.filter(F.col("op") == "read").groupBy("_table").agg(F.min("_position").alias("_first_read"))
    )
    by_key = Window.partitionBy("_table", "key").orderBy("_position")
    before = by_key.rowsBetween(Window.unboundedPreceding, -1)
    set_or_gone = F.when(F.col("op") == "delete", F.lit(GONE)).when(F.col("after").isNotNull(), F.lit(LIVE))
    keyed = (
        frame.filter(F.col("key").isNotNull())
        .join(F.broadcast(first_read), "_table", "left")
        .withColumn("_state", F.last(set_or_gone, ignorenulls=True).over(before))
        .withColumn("_previous", F.lag(F.struct("source", "offset", "seq")).over(by_key))
        .withColumn("_snapshot", F.coalesce(F.col("_first_read") < F.col("_position"), F.lit(False)))
    )
    problem = _problem_column(F.col("op"), F.col("_state"), F.col("after").isNotNull(), F.col("_snapshot"))
    return (
        keyed.withColumn("problem", problem)
        .filter(F.col("problem").isNotNull())
        .select(F.col("_table").alias("table"), *_PROBLEM_FIELDS[1:], "_previous")
    )


# --------------------------------------------------------------------------- walked tables, in Python

_WALK_SCHEMA = T.StructType(
    [
        T.StructField("kind", T.StringType()),
        T.StructField("table", T.StringType()),
        T.StructField("key", T.StringType()),
        T.StructField("row", T.StringType()),
        T.StructField("source", T.StringType()),
        T.StructField("partition", T.LongType()),
        T.StructField("offset", T.LongType()),
        T.StructField("seq", T.StringType()),
        T.StructField("op", T.StringType()),
        T.StructField("problem", T.StringType()),
        T.StructField("pos", T.LongType()),
        T.StructField("other_source", T.StringType()),
        T.StructField("other_offset", T.LongType()),
        T.StructField("other_seq", T.StringType()),
        T.StructField("valid_from", T.TimestampType()),
        T.StructField("valid_to", T.TimestampType()),
    ]
)

_WALK_COLUMNS = [
    "dialect",
    "_table",
    "key",
    "key_columns",
    "op",
    "before",
    "after",
    "seq",
    "_seq",
    "source",
    "partition",
    "offset",
    "event_time",
    *sorted(set(sum(ORDERS.values(), [])) - {"_seq", "source", "offset"}),
]


def _listed(key_columns: pd.Series) -> pd.Series:
    """``key_columns`` as Python lists, as the pandas code reads them (Spark hands arrays to pandas as numpy arrays)."""
    return pd.Series([None if c is None else list(c) for c in key_columns], index=key_columns.index, dtype=object)


def _walker(order: str, partial: dict[str, bool]):
    """The ``applyInPandas`` function: replay one table in order; emit live rows, problems and versions."""

    def walk(group: pd.DataFrame) -> pd.DataFrame:
        group = group.sort_values(ORDERS[order], kind="stable").reset_index(drop=True)
        group["key_columns"] = _listed(group["key_columns"])
        group["_pos"] = range(len(group))
        places = {  # each change's partition, offset and seq, for the problems and the changes they follow
            row: (source, _whole(partition), _whole(offset), seq)
            for row, source, partition, offset, seq in zip(
                group["_row"], group["source"], group["partition"], group["offset"], group["seq"]
            )
        }
        out: list[dict[str, Any]] = []
        for table, replayer, steps, _ in replay_rows(group, partial):
            out.extend(
                {"kind": "row", "table": table, "row": orjson.dumps(row).decode()} for row in replayer.state_rows()
            )
            out.extend(_walked_problem(p, places) for p in problem_rows(table, steps))
            out.extend(
                {
                    "kind": "version",
                    "table": table,
                    "row": orjson.dumps(v["row"]).decode(),
                    "pos": pos,
                    "op": v["op"],
                    "seq": v["seq"],
                    "valid_from": v["valid_from"],
                    "valid_to": v["valid_to"],
                }
                for pos, v in replay.step_versions(steps)
            )
        frame = pd.DataFrame(out, columns=[f.name for f in _WALK_SCHEMA.fields], dtype=object)
        for name in ("valid_from", "valid_to"):
            frame[name] = pd.to_datetime(frame[name], utc=True)
        return frame

    return walk


def _whole(value: Any) -> int | None:
    """A whole number handed to pandas (maybe as a float, for a column with nulls) as an int; None for none."""
    value = none_if_missing(value)
    return None if value is None else int(value)


def _walked_problem(problem: dict[str, Any], places: dict[Any, tuple]) -> dict[str, Any]:
    """A problem row of the walk (:func:`cdckit.analysis.replayer.problem_rows`) as a row of the walk's output."""
    previous = places.get(problem["_previous_row"])
    return {
        "kind": "problem",
        **{k: v for k, v in problem.items() if not k.startswith("_")},
        "partition": places[problem["_row"]][1],
        "pos": problem["_pos"],
        "other_source": None if previous is None else previous[0],
        "other_offset": None if previous is None else previous[2],
        "other_seq": None if previous is None else previous[3],
    }


def _walk(changes: DataFrame, tables: dict[str, Table], order: str, persist: bool = True) -> DataFrame:
    """The walked tables replayed by the Python replayer (one group per table).

    Persisted when there are any and ``persist`` (their rows, problems and
    versions are read several times; such tables are rare and their output
    is no larger than their changes).
    """
    walked = [name for name, t in tables.items() if t.walked]
    if not walked:
        return changes.sparkSession.createDataFrame([], _WALK_SCHEMA)
    check_workers(changes.sparkSession)
    partial = {name: t.partial for name, t in tables.items()}
    frame = changes.filter(F.col("_table").isin(*walked)).select(*_WALK_COLUMNS)
    replayed = frame.groupBy("_table").applyInPandas(_walker(order, partial), _WALK_SCHEMA)
    return replayed.persist() if persist else replayed


def _parsed(rows: DataFrame, table: Table) -> DataFrame:
    return rows.withColumn("_r", F.from_json("row", table.schema()))


def _keyless_counts(prepared: DataFrame, tables: dict[str, Table]) -> KeylessCounts:
    """The net counts of the keyless rows of the tables not walked for their keyed rows; the tables whose updates
    merge or where a removal finds no image as written are marked walked (the rule pandas follows)."""
    candidates = [n for n, t in tables.items() if t.keyless and not t.walked]
    partial = [n for n in candidates if tables[n].partial]
    counted = [n for n in candidates if n not in partial]
    counts = KeylessCounts(prepared, counted, [n for n in counted if tables[n].truncated])
    for name in walked_tables(partial, counts.failing):
        tables[name].walked = True
    return counts


def _state_of(changes: DataFrame, table: Table, counts: KeylessCounts) -> DataFrame:
    """The live rows of a table not walked: its keyed rows, then its counted keyless rows."""
    keyless = _parsed(counts.rows(table.name), table).select(*table.values(F.col("_r"))) if table.keyless else None
    if keyless is not None and not table.keyed:
        return keyless
    keyed = _state(changes, table)
    return keyed if keyless is None else keyed.unionByName(keyless)


# --------------------------------------------------------------------------- public functions


def materialize(
    events: DataFrame, as_of: Any = None, order: str = "seq", types: Any = None, *, keys: Keys | None = None
) -> replay.TableStates:
    """The state of every table (see :func:`cdckit.materialize`): ``{"database.table": Spark DataFrame}``.

    Each frame has one typed column per source column (in the pandas
    order) and one row per live key, in no particular order; it is computed
    when used. ``.problems`` is a pandas frame of the changes that did not
    fit; ``.keyless`` lists the tables kept as a multiset of rows.

    ``types``: the kinds of columns, as for :func:`cdckit.spark.table` (a
    column types frame such as ``cdckit.column_types_of(events)`` of the pandas
    read, ``{column: kind}`` or ``{table: {column: kind}}``). A column given a
    kind has the Spark type of the pandas typed state (``decimal(P,S)``, UTC
    ``timestamp``, ``date``, ``bigint``...; a time of day is text) and its
    values typed as pandas types them (a column where a value does not fit is text, each value as the
    capture wrote it: never null).
    The other columns keep the JSON typing above: long, double, boolean,
    ``decimal(38,0)`` for whole numbers beyond 64 bits, else string.

    ``keys``: key columns of tables whose capture names none, as for :func:`cdckit.materialize`
    (:func:`cdckit.spark.keys.with_keys`).
    """
    changes, prepared, tables = plan(given_keys(events, keys), as_of, order, types)
    counts = _keyless_counts(prepared, tables)
    walked = _walk(prepared, tables, order)
    states = replay.TableStates()
    for name, table in tables.items():
        if table.walked:
            rows = _parsed(walked.filter((F.col("kind") == "row") & (F.col("table") == name)), table)
            states[name] = table.typed(rows.select(*table.values(F.col("_r"))))
        else:
            states[name] = table.typed(_state_of(changes, table, counts))
    kept = [n for n, t in tables.items() if not t.walked]
    counted = counts.problems([n for n in counts.tables if n in kept])
    keyed: pd.DataFrame = _problems(prepared, kept).select(*_PROBLEM_FIELDS).unionByName(counted).toPandas()
    # toPandas gives a struct as a dict (with Arrow) or a Row: its values, in field order, are the position
    keyed["_sort"] = _places([tuple(p.values()) if isinstance(p, dict) else tuple(p) for p in keyed.pop("_position")])
    walked_problems: pd.DataFrame = walked.filter(F.col("kind") == "problem").toPandas()
    walked_problems["_sort"] = _places(walked_problems.pop("pos").tolist())
    problems = pd.concat([keyed, walked_problems[[*replay.PROBLEM_COLUMNS, "_sort"]]], ignore_index=True)
    problems = problems.sort_values(["table", "source", "offset", "_sort"], kind="stable")
    states.problems = problems[replay.PROBLEM_COLUMNS].astype({"offset": "Int64"}).reset_index(drop=True)
    states.keyless = sorted(n for n, t in tables.items() if t.keyless)
    said = replay.unmatched_warning(states.problems[states.problems["key"].isna()].to_dict("records"))
    if said is not None:  # as pandas says it: changes of keyless rows that found no row
        warnings.warn(said, stacklevel=2)
    return states


def problems(events: DataFrame, stream: Sequence[str] = ()) -> DataFrame:
    """Every change replay refuses (in seq order), each stream (the values of the ``stream`` columns) replayed on
    its own, as the pandas report's :func:`cdckit.analysis.ordering.replayed.replay_problems`: a Spark frame of
    ``table`` (the table's own name), ``key`` (null for a row without a key), ``source``, ``partition``,
    ``offset``, ``seq``, ``op``, ``problem`` and ``other_source``, ``other_offset``, ``other_seq`` (the change of
    the row before it; null for a key not seen before and for rows without a key). Computed when used; only
    per-table metadata reaches the driver (walked tables are replayed on the workers)."""
    _, prepared, tables = plan(events, None, "seq", None, stream)
    counts = _keyless_counts(prepared, tables)
    walked = _walk(prepared, tables, "seq", persist=False)  # read once, for its problems
    kept = [n for n, t in tables.items() if not t.walked]
    fields = [*_PROBLEM_FIELDS[:-1]]
    none = F.lit(None)
    keyed = _problems(prepared, kept).select(
        *fields,
        F.col("_previous")["source"].alias("other_source"),
        F.col("_previous")["offset"].alias("other_offset"),
        F.col("_previous")["seq"].alias("other_seq"),
    )
    counted = counts.problems([n for n in counts.tables if n in kept]).select(
        *fields,
        none.cast("string").alias("other_source"),
        none.cast("long").alias("other_offset"),
        none.cast("string").alias("other_seq"),
    )
    walked_problems = walked.filter(F.col("kind") == "problem").select(
        *fields, "other_source", "other_offset", "other_seq"
    )
    found = keyed.unionByName(counted).unionByName(walked_problems)
    return found.withColumn("table", F.element_at(F.split("table", "\x1f"), -1))


def _places(positions: list[Any]) -> list[int]:
    """Each position's place in replay order (positions of one kind; a table's problems are all of one kind)."""
    places = [0] * len(positions)
    for place, i in enumerate(sorted(range(len(positions)), key=positions.__getitem__)):
        places[i] = place
    return places


def scd2(events: DataFrame, order: str = "seq", types: Any = None, *, keys: Keys | None = None) -> replay.SCD2Tables:
    """A type 2 history per table (see :func:`cdckit.scd2`): ``{"database.table": Spark DataFrame}``.

    Columns: the source columns, then ``valid_from``, ``valid_to``,
    ``is_current``, ``op``, ``seq``; one row per version, in no particular
    order. Tables with no versions (nothing live ever) are left out; tables whose changes name no key
    columns too, named in a warning and in ``.keyless`` (:class:`cdckit.KeylessTableError` when no table
    has a key), as pandas does. ``types`` and ``keys``: as for :func:`materialize`.
    """
    changes, prepared, tables = plan(given_keys(events, keys), None, order, types)
    keyless = sorted(n for n, t in tables.items() if t.keyless)
    keyed = (
        [r[0] for r in changes.filter(F.col("key").isNotNull()).select("_table").distinct().collect()]
        if keyless
        else []
    )
    said = replay.keyless_left_out(keyless, keyed)  # raises when no table has a key
    walked = _walk(prepared, tables, order)
    out = replay.SCD2Tables()
    for name, table in tables.items():
        if table.walked:
            rows = _parsed(walked.filter((F.col("kind") == "version") & (F.col("table") == name)), table)
            frame = rows.select(
                *table.values(F.col("_r")),
                "valid_from",
                "valid_to",
                F.col("valid_to").isNull().alias("is_current"),
                "op",
                "seq",
            )
            if frame.limit(1).count():
                out[name] = table.typed(frame)
        elif table.versions:
            out[name] = table.typed(_versions(prepared, table))
    out.keyless = keyless
    for sentence in said:
        warnings.warn(sentence, stacklevel=2)
    return out


def history(events: DataFrame, table: str, key: Any, order: str = "seq", *, keys: Keys | None = None) -> pd.DataFrame:
    """Every version of one row (see :func:`cdckit.history`), as a pandas frame.

    Only that key's changes reach the driver, with those of the keys it
    moved from or to (found from the key-changing updates of the table),
    where the pandas code replays them. ``keys``: as for :func:`materialize`.
    """
    frame = given_keys(events, keys).withColumn("_table", table_name_column()).filter(F.col("op").isin(*REPLAY_OPS))
    names = [r[0] for r in frame.select("_table").distinct().collect()]  # as pandas: tables that have changes
    name = find_table(names, table)
    frame = frame.filter(F.col("_table") == name)
    keyless, keyed = frame.agg(
        F.max(F.col("key").isNull() & (F.col("op") != "truncate")), F.max(F.col("key").isNotNull())
    ).first()
    moves = frame.filter(key_moved()).select("op", "key", "key_columns", "before").collect()
    linked: dict[str, set[str]] = {}
    for move in moves:
        start = old_key(move["op"], move["key"], list(move["key_columns"] or []), move["before"])
        if start is not None and start != move["key"]:
            linked.setdefault(start, set()).add(move["key"])
            linked.setdefault(move["key"], set()).add(start)
    pairs = (
        frame.filter(F.col("op").isin("delete", "insert") & F.col("seq").isNotNull() & (F.col("seq") != ""))
        .groupBy("seq")
        .agg(F.collect_set("key").alias("keys"), F.countDistinct("op").alias("ops"))
        .filter((F.col("ops") == 2) & (F.size("keys") > 1))
        .select("keys")
        .collect()
    )
    for pair in pairs:  # a delete and an insert of another key at one seq: maybe a key update (see rekeyed_tables)
        for one in pair["keys"]:
            linked.setdefault(one, set()).update(k for k in pair["keys"] if k != one)
    joined: set[str] = set()
    todo = [replay.given_key_text(key)]
    while todo:  # every key joined to this one by key changes: their rows flow into it
        current = todo.pop()
        if current not in joined:
            joined.add(current)
            todo.extend(linked.get(current, ()))
    small: pd.DataFrame = (
        frame.filter(F.col("key").isin(*sorted(joined)) | (F.col("op") == "truncate")).drop("_table").toPandas()
    )
    for column in ("event_time", "emit_time"):  # Spark hands back UTC wall times without the zone
        small[column] = pd.to_datetime(small[column]).dt.tz_localize("UTC")
    small["partition"] = small["partition"].astype("Int64")
    small["key_columns"] = _listed(small["key_columns"])
    if keyless and not small["key"].notna().any():
        raise replay.keyless_key_error(name, key, bool(keyed))  # the key's changes name it: none here
    return replay.history(small, name, key, order)
