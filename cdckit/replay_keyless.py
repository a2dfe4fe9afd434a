"""Tables without a key, replayed relationally in DuckDB: a multiset of row images and their net counts.

A keyless table's state is each row image's count: +1 for every after image
(insert, snapshot read, update), -1 for every before image (update, delete),
in replay order; a truncate starts the counts again (a segment per truncate).
A removal is found wanting where the running count of its image would go
below zero: with ``s`` the running sum of an image's +1/-1 and ``m`` the
least running sum before it, a removal fails when ``s < min(0, m)``; it is
then not counted (the count stays at zero) and reported, as a key's problems
are. The count at the end is ``s - min(0, least s)``.

Images are compared in two passes, both window functions over the whole
table, never walked change by change:

1. as their text: exact, and enough when every before image is a row as it
   was written (the common case);
2. for a table where some removal fails as text (or whose updates merge, see
   :func:`cdckit.replayer.is_partial`): as their normal form, the columns
   sorted and the ``null`` ones left out (a ``null`` and a missing column are
   the same). A before image that still matches no live row is a partial image:
   it removes the first row (in normal-form text order) it describes
   (:func:`cdckit.replayer.describes`: the row cut to the image's columns is
   the image), live before it. Rows are joined per shape (the set of an image's
   columns: few per table). The counts are then read again with those targets.

>>> import cdckit
>>> events = cdckit.read(cdckit.samples.path("canal/shop"))
>>> from cdckit.replay_plan import plan_replay
>>> with plan_replay(events) as plan:
...     plan.keyless_rows()
({}, [])
"""

from __future__ import annotations

from typing import Any

import duckdb

__all__ = ["keyless_state", "NORMAL_FORM"]

#: The keyless changes, with their segment (how many truncates of the table came before) and images.
_CHANGES = """
CREATE OR REPLACE TEMP TABLE kl_changes AS
SELECT * FROM (
    SELECT p._row, p._pos, p._table, p.op, e.before, e.after,
        count(*) FILTER (WHERE p.op = 'truncate') OVER (
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
SELECT *, d < 0 AND s < least(0, coalesce(m, 0)) AS failed, s - least(0, coalesce(m, 0), s) AS live FROM lowest
"""

#: An image in normal form (SQL over a JSON text ``{t}``): its members sorted by name, the nulls left out.
NORMAL_FORM = ("list_sort(list_filter(map_entries(try(json_transform({t}, '\"MAP(VARCHAR, JSON)\"'))), "
               "lambda e: e.value::VARCHAR <> 'null'))")


def _text(entries: str) -> str:
    """SQL: the JSON text of a list of (name, JSON value) entries."""
    return f"coalesce(to_json(map_from_entries({entries}))::VARCHAR, '{{}}')"


def _merged(before: str, after: str) -> str:
    """SQL: the normal form of the after image merged onto the before image (updates of partial-image tables)."""
    b, a = NORMAL_FORM.format(t=before), NORMAL_FORM.format(t=after)
    names = "coalesce(try(json_keys(after)), [])"
    return _text(f"list_sort(list_concat(list_filter({b}, lambda e: NOT list_contains({names}, e.key)), {a}))")


def _counted(con: duckdb.DuckDBPyConnection, name: str, items: str, params: dict[str, Any]) -> None:
    con.execute(_COUNTED.format(name=name, items=items), params)


#: Removals that failed as normal forms (``kl_wanting``): the first image (in text order) each describes, live
#: just before it by the counts of ``{counts}`` (the exact pass, then each pass with the targets found so far).
_WANTING = """
CREATE OR REPLACE TEMP TABLE kl_wanting AS
SELECT _row, _pos, _table, _seg, t, list_sort(coalesce(try(json_keys(raw)), [])) AS shape
FROM kl_exact WHERE failed
"""

_CUTS = """
CREATE OR REPLACE TEMP TABLE kl_cuts AS  -- every image added, in normal form, cut to each shape of its table
WITH shapes AS (SELECT DISTINCT _table, _seg, shape FROM kl_wanting)
SELECT DISTINCT i._table, i._seg, i.t, s.shape, {cut} AS cut
FROM (SELECT DISTINCT _table, _seg, t FROM kl_exact WHERE d > 0) i
JOIN shapes s ON s._table = i._table AND s._seg = i._seg
"""

_TARGETS = """
CREATE OR REPLACE TEMP TABLE kl_targets AS
WITH candidates AS (
    SELECT w._row, w._pos, w._table, w._seg, c.t AS target
    FROM kl_wanting w JOIN kl_cuts c ON c._table = w._table AND c._seg = w._seg AND c.shape = w.shape
        AND c.cut = w.t AND c.t <> w.t
), counted AS (  -- each candidate's count just before the removal (its own removal, if it has one, left out)
    SELECT c._row, c.target, (SELECT arg_max(x.live, x._pos * 2 + x.sub) FROM {counts} x
                              WHERE x._table = c._table AND x._seg = c._seg AND x.ident = c.target
                                AND x._pos < c._pos) AS live
    FROM candidates c
)
SELECT _row, min(target) AS target FROM counted WHERE live > 0 GROUP BY _row
"""

#: How many times the targets are looked for again with the counts the previous targets give (a row updated
#: many times with partial images needs one pass per update that follows another on it).
MAX_PASSES = 10_000


def keyless_state(con: duckdb.DuckDBPyConnection, tables: list[str], partial: list[str]
                  ) -> tuple[list[tuple[str, str, int]], list[tuple[int, int, str, str, str]]]:
    """The live images of the keyless changes of ``tables`` (``partial``: those whose updates merge), from the
    ``prep`` and ``events`` tables of a :class:`cdckit.replay_plan.ReplayPlan`'s connection.

    Returns ``(rows, problems)``: ``(table, image text, count)`` per live image, and ``(_row, _pos, table, op,
    problem)`` per change that removes an image not there (or gives none to remove).
    """
    if not tables:
        return [], []
    con.execute(_CHANGES, {"tables": tables})
    con.execute(_LAST, {"tables": tables})
    problems = con.execute(
        "SELECT _row, _pos, _table, op, op || ' without a before image cannot be matched to a row' FROM kl_changes "
        "WHERE op IN ('update', 'delete') AND before IS NULL").fetchall()
    # pass 1: images as their text
    whole = [t for t in tables if t not in partial]
    params = {"whole": whole}
    _counted(con, "kl_text", _ITEMS.format(before="before", after="after",
                                           where="AND list_contains($whole, _table)"), params)
    slow = sorted({*partial, *(t for t, in con.execute("SELECT DISTINCT _table FROM kl_text WHERE failed").fetchall())})
    fast = [t for t in whole if t not in slow]
    rows = con.execute(_FINAL.format(name="kl_text"), {"tables": fast}).fetchall()
    if slow:
        rows += _normal_forms(con, slow, partial)
        problems += con.execute("SELECT _row, _pos, _table, op, op || ' of a row not in the table' FROM kl_final "
                                "WHERE failed").fetchall()
    problems += con.execute("SELECT _row, _pos, _table, op, op || ' of a row not in the table' FROM kl_text "
                            "WHERE failed AND list_contains($fast, _table)", {"fast": fast}).fetchall()
    return rows, problems


#: Each live image of the last segment of each table: its count at the end, and the text of its last addition.
_FINAL = """
SELECT _table, arg_max(raw, _pos) FILTER (WHERE d > 0), arg_max(live, _pos * 2 + sub) AS n
FROM {name} JOIN kl_last USING (_table, _seg) WHERE list_contains($tables, _table)
GROUP BY _table, ident HAVING n > 0
"""


def _normal_forms(con: duckdb.DuckDBPyConnection, slow: list[str], partial: list[str]) -> list[tuple[str, str, int]]:
    """Pass 2 (see the module notes) for the ``slow`` tables: the live images, and ``kl_final`` for the problems."""
    normal = _text(NORMAL_FORM.format(t="before"))
    merged = f"CASE WHEN op = 'update' AND before IS NOT NULL AND list_contains($partial, _table) " \
             f"THEN {_merged('before', 'after')} ELSE {_text(NORMAL_FORM.format(t='after'))} END"
    params = {"slow": slow, "partial": partial}
    items = _ITEMS.format(before=normal, after=merged, where="AND list_contains($slow, _table)")
    _counted(con, "kl_exact", items, params)
    cut = _text("list_filter(" + NORMAL_FORM.format(t="i.t") + ", lambda e: list_contains(s.shape, e.key))")
    con.execute(_WANTING)
    con.execute(_CUTS.format(cut=cut))
    retargeted = f"SELECT i.* EXCLUDE (target), k.target FROM ({items}) i LEFT JOIN kl_targets k " \
                 f"ON k._row = i._row AND i.d < 0"
    counts, found = "kl_exact", None
    for _ in range(MAX_PASSES):  # until the targets hold: each pass settles at least the first removal left
        con.execute(_TARGETS.format(counts=counts))
        targets = con.execute("SELECT _row, target FROM kl_targets ORDER BY _row").fetchall()
        if targets == found:
            break
        found, counts = targets, "kl_final"
        _counted(con, "kl_final", retargeted, params)
    return con.execute(_FINAL.format(name="kl_final"), {"tables": slow}).fetchall()
