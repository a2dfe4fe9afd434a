"""Tables without a key, replayed relationally in DuckDB: a multiset of row images and their net counts.

A keyless table's state is each row image's count: +1 for every after image
(insert, snapshot read, update), -1 for every before image (update, delete),
in replay order; a truncate starts the counts again (a segment per truncate).
A removal is found wanting where the running count of its image would go
below zero: with ``s`` the running sum of an image's +1/-1 and ``m`` the
least running sum before it, a removal fails when ``s < min(0, m)``; it is
then not counted (the count stays at zero) and reported, as a key's problems
are. The count at the end is ``s - min(0, least s)``.

Images are compared as their text, by window functions over the whole
table, never walked change by change. That is exact, and enough when every
before image is a live row as it was written: the common case (MySQL's full
row images, ``REPLICA IDENTITY FULL``, Maxwell, Canal). A table where some
removal fails as text but might describe a row the table adds in another
shape (an added image with other column names, or the same in another order,
that lacks only columns the removal holds as null: a partial before image such
as a ``REPLICA IDENTITY DEFAULT`` delete, a column a Lindorm delete removed),
or whose updates merge (:func:`cdckit.analysis.replayer.is_partial`), is left to the
walk of :class:`cdckit.analysis.replayer.Replayer`, which finds the row such an image
describes through an index per shape: a before image that names the key is
the analyst's cue to give the keys (:func:`cdckit.infer_keys`).

>>> import cdckit
>>> events = cdckit.read(cdckit.samples.path("canal/shop"))
>>> from cdckit.analysis.replay_plan import plan_replay
>>> with plan_replay(events) as plan:
...     plan.keyless_rows()
({}, [])
"""

from __future__ import annotations

from typing import Any

import duckdb

__all__ = ["keyless_state", "FAILED_SQL", "LIVE_SQL", "NO_BEFORE", "NOT_THERE", "walked_tables"]

#: The rule, as SQL that DuckDB and Spark both read, over an item's ``d`` (+1: the change adds its image, -1:
#: removes it), ``s`` (the running sum of ``d`` over the items of that image in replay order) and ``m`` (the least
#: ``s`` before the item): a removal that finds no image there (it is then not counted) ...
FAILED_SQL = "d < 0 AND s < least(0, coalesce(m, 0))"
#: ... and the image's count after the item.
LIVE_SQL = "s - least(0, coalesce(m, 0), s)"
#: The problem of an update or delete of a table without a key that has no before image (after its op).
NO_BEFORE = " without a before image cannot be matched to a row"
#: The problem of a removal that finds no image there (after the op, as above).
NOT_THERE = " of a row not in the table"


def walked_tables(partial: list[str], failing: set[str] | list[str]) -> list[str]:
    """The tables without a key that are walked, not counted: those whose updates merge (``partial``) and those
    where some removal finds no image as written but might describe a row of another shape (``failing``: see
    ``_UNLIKE``); the same rule on every engine.

    >>> walked_tables(["s.b"], {"s.a"})
    ['s.a', 's.b']
    """
    return sorted({*partial, *failing})


#: The keyless changes, with their segment (how many truncates of the table came before) and images.
_CHANGES = """
CREATE OR REPLACE TEMP TABLE kl_changes AS
SELECT * FROM (
    SELECT p._row, p._pos, p._table, p.op, e.before, e.after,
        sum((p.op = 'truncate')::INTEGER) OVER (  -- not count(*) FILTER: DuckDB windows it 15x slower
            PARTITION BY p._table ORDER BY p._pos ROWS UNBOUNDED PRECEDING) AS _seg
    FROM prep p JOIN events e USING (_row)
    WHERE p.key IS NULL AND NOT p._cleared AND list_contains($tables, p._table))
WHERE op <> 'truncate'
"""

#: The last segment of each table (how many truncates it has).
_LAST = """
CREATE OR REPLACE TEMP TABLE kl_last AS
SELECT _table, count(*) FILTER (WHERE op = 'truncate') AS _seg FROM prep
WHERE key IS NULL AND NOT _cleared AND list_contains($tables, _table) GROUP BY _table
"""

#: One row per image a change adds (+1) or removes (-1); a removal comes before its change's addition.
_ITEMS = """
SELECT _row, _pos, _table, _seg, op, 0 AS sub, -1 AS d, before AS raw, {before} AS t, NULL::VARCHAR AS target
FROM kl_changes WHERE op IN ('update', 'delete') AND before IS NOT NULL {where}
UNION ALL
SELECT _row, _pos, _table, _seg, op, 1 AS sub, 1 AS d, after AS raw, {after} AS t, NULL::VARCHAR AS target
FROM kl_changes WHERE op IN ('insert', 'read', 'update') AND after IS NOT NULL {where}
"""

#: The running counts of each image (``t``, or a removal's ``target`` when it has one): ``failed`` removals,
#: ``live``: the count after each item.
_COUNTED = """
CREATE OR REPLACE TEMP TABLE {name} AS
WITH named AS (
    SELECT *, coalesce(target, t) AS ident FROM ({items})
), running AS (
    SELECT *, sum(d) OVER (PARTITION BY _table, _seg, ident ORDER BY _pos, sub ROWS UNBOUNDED PRECEDING) AS s
    FROM named
), lowest AS (
    SELECT *, min(s) OVER (PARTITION BY _table, _seg, ident ORDER BY _pos, sub
                           ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS m
    FROM running
)
SELECT *, {failed} AS failed, {live} AS live FROM lowest
"""


def _counted(con: duckdb.DuckDBPyConnection, name: str, items: str, params: dict[str, Any]) -> None:
    con.execute(_COUNTED.format(name=name, items=items, failed=FAILED_SQL, live=LIVE_SQL), params)


def keyless_state(
    con: duckdb.DuckDBPyConnection, tables: list[str], partial: list[str]
) -> tuple[list[tuple[str, str, int]], list[tuple[int, int, str, str, str]], list[str]]:
    """The live images of the keyless changes of ``tables`` (``partial``: those whose updates merge), from the
    ``prep`` and ``events`` tables of a :class:`cdckit.analysis.replay_plan.ReplayPlan`'s connection.

    Returns ``(rows, problems, walked)``: ``(table, image text, count)`` per live image and ``(_row, _pos,
    table, op, problem)`` per change that removes an image not there (or gives none to remove), for every
    table but those in ``walked``: the tables whose updates merge or where a before image is not a live row
    as written (a partial image, or the same row written another way), left to the walk.
    """
    if not tables:
        return [], [], []
    con.execute(_CHANGES, {"tables": tables})
    con.execute(_LAST, {"tables": tables})
    whole = [t for t in tables if t not in partial]
    _counted(
        con,
        "kl_text",
        _ITEMS.format(before="before", after="after", where="AND list_contains($whole, _table)"),
        {"whole": whole},
    )
    unlike = {t for (t,) in con.execute(_UNLIKE).fetchall()}
    walked = walked_tables(partial, unlike)
    fast = [t for t in whole if t not in unlike]
    rows = con.execute(_FINAL.format(name="kl_text"), {"tables": fast}).fetchall()
    problems = con.execute(
        "SELECT _row, _pos, _table, op, op || $said FROM kl_changes "
        "WHERE op IN ('update', 'delete') AND before IS NULL AND list_contains($fast, _table)",
        {"fast": fast, "said": NO_BEFORE},
    ).fetchall()
    problems += con.execute(
        "SELECT _row, _pos, _table, op, op || $said FROM kl_text WHERE failed AND list_contains($fast, _table)",
        {"fast": fast, "said": NOT_THERE},
    ).fetchall()
    return rows, problems, walked


#: Tables with a removal that fails as text but that the walk might still match to a row it describes
#: (:func:`cdckit.row_images.describes`): some image the table adds has other column names (or the same in
#: another order), and every column of the removal that image lacks is null in the removal (a partial image,
#: a column a Lindorm delete removed, a row written another way). Any other failing removal removes a row
#: that is not there (a capture that starts after the row was written): the counts report it, no walk finds
#: more.
_UNLIKE = """
WITH failing AS (
    SELECT DISTINCT _table, json_keys(t) AS names,
        -- a JSON null comes out of json_transform as SQL NULL (DuckDB 2), as the text 'null' before
        [e.key FOR e IN map_entries(json_transform(t, '"MAP(VARCHAR, JSON)"'))
         IF e.value IS NULL OR e.value::VARCHAR = 'null'] AS nulls
    FROM kl_text WHERE failed
), added AS (
    SELECT DISTINCT _table, json_keys(t) AS names FROM kl_text
    WHERE d > 0 AND _table IN (SELECT _table FROM failing)
)
SELECT DISTINCT f._table FROM failing f JOIN added a ON a._table = f._table
WHERE a.names <> f.names AND list_has_all(f.nulls, [n FOR n IN f.names IF NOT list_contains(a.names, n)])
"""


#: Each live image of the last segment of each table: its count at the end, and the text of its last addition.
_FINAL = """
SELECT _table, arg_max(raw, _pos) FILTER (WHERE d > 0), arg_max(live, _pos * 2 + sub) AS n
FROM {name} JOIN kl_last USING (_table, _seg) WHERE list_contains($tables, _table)
GROUP BY _table, ident HAVING n > 0
"""
