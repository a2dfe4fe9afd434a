"""The row state machine: which change a row's history can take, written once for every engine.

A keyed row is, before each change of its key (in replay order), in one of three states:

- ``LIVE`` (1): an insert, snapshot read or update with an after image made it, or moved it here;
- ``GONE`` (0): a delete, a truncate of its table, or an update that moved it to another key removed it;
- ``NEVER`` (null): no change of the capture has named the key yet.

:data:`RULES` says which change does not fit its row's state, and in what
words. Every engine applies these rules and no others: the walk of
:class:`cdckit.analysis.replayer.Replayer`, replay's windows in DuckDB
(:func:`problem_sql`) and in Spark (``cdckit.spark.replay``), and so the
ordering report, whose ``impossible_transitions`` are the changes replay
refuses (:mod:`cdckit.analysis.ordering.replayed`). A change of a key never
seen is no problem unless a snapshot of its table came before it: a capture
that starts after a row was written sees its first update or delete only.
A key changed by an update leaves the old key ``GONE`` and makes the new one
``LIVE`` (moving onto a live key is allowed: a deferred unique constraint
lets a transaction swap keys).

>>> problem("insert", LIVE, has_after=True, snapshot_before=False)
'insert of a live key (row replaced)'
>>> problem("update", NEVER, has_after=True, snapshot_before=False) is None
True
>>> problem("delete", NEVER, has_after=False, snapshot_before=True)
'delete of a key the snapshot did not have'
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["LIVE", "GONE", "NEVER", "Rule", "RULES", "problem", "problem_sql"]

LIVE = 1
GONE = 0
NEVER = None


@dataclass(frozen=True)
class Rule:
    """Changes with one of ``ops`` that do not fit: where their row is in ``state`` (any state when ``state`` is
    ``"any"``), and, when ``no_after``, only those without an after image; ``snapshot``: only after a snapshot of
    the table. ``text``: the problem, ``{op}`` standing for the change's op."""

    ops: tuple[str, ...]
    state: int | None | str
    text: str
    no_after: bool = False
    snapshot: bool = False


#: The rules, first match wins.
RULES: tuple[Rule, ...] = (
    Rule(("insert", "read", "update"), "any", "{op} without an after image (ignored)", no_after=True),
    Rule(("insert",), LIVE, "insert of a live key (row replaced)"),
    Rule(("update", "delete"), GONE, "{op} after the key was deleted"),
    Rule(("update", "delete"), NEVER, "{op} of a key the snapshot did not have", snapshot=True),
)


def problem(op: str, state: int | None, has_after: bool, snapshot_before: bool) -> str | None:
    """The problem of a change ``op`` of a row in ``state`` (:data:`LIVE`, :data:`GONE`, :data:`NEVER`), or None.

    >>> problem("update", GONE, has_after=True, snapshot_before=False)
    'update after the key was deleted'
    """
    for rule in RULES:
        if op not in rule.ops or (rule.no_after and has_after) or (rule.snapshot and not snapshot_before):
            continue
        if rule.state == "any" or rule.state == state:
            return rule.text.format(op=op)
    return None


def problem_sql(op: str, state: str, has_after: str, snapshot_before: str) -> str:
    """:func:`problem` as a SQL ``CASE`` over the given column expressions (``state``: 1, 0 or NULL).

    >>> print(problem_sql("op", "live_before", "has_after", "snap").splitlines()[1].strip())
    WHEN op IN ('insert', 'read', 'update') AND NOT has_after THEN op || ' without an after image (ignored)'
    """
    cases = []
    for rule in RULES:
        ops = ", ".join(f"'{name}'" for name in rule.ops)
        tests = [f"{op} IN ({ops})"]
        if rule.no_after:
            tests.append(f"NOT {has_after}")
        if rule.snapshot:
            tests.append(f"{snapshot_before}")
        if rule.state is None:
            tests.append(f"{state} IS NULL")
        elif rule.state != "any":
            tests.append(f"{state} = {rule.state}")
        head, _, tail = rule.text.partition("{op}")
        text = f"'{head}' || {op} || '{tail}'" if _ else f"'{head}'"
        text = text.replace("'' || ", "")
        cases.append(f"    WHEN {' AND '.join(tests)} THEN {text}")
    return "CASE\n" + "\n".join(cases) + "\nEND"
