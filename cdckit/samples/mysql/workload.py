"""A seeded MySQL workload at the edges of MySQL's types, for the Debezium MySQL connector's captures.

Rows exist before the connector starts (:data:`SNAPSHOT`: its snapshot reads
them), then :meth:`Workload.run` streams seeded changes: inserts, updates
(the primary key too), deletes, equal rows in a table without a key, a
``TRUNCATE``, an ``ALTER TABLE ... ADD COLUMN`` half way. ``TIMESTAMP`` values
are written in a session whose zone is ``+05:30``. The last statement inserts
the log row :data:`END`: an engine that has written it has everything.

>>> plan = Workload(seed=3, changes=40).plan()
>>> len(plan), plan == Workload(seed=3, changes=40).plan()
(41, True)
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from decimal import Decimal
from typing import Any

__all__ = ["DATABASE", "SCHEMA", "TABLES", "KEYS", "SNAPSHOT", "END", "ZONE", "Workload", "edge_row"]

#: The workload's database (MySQL's database is its schema: tables are ``edges.<table>``).
DATABASE = "edges"
SCHEMA = [
    f"CREATE DATABASE {DATABASE} CHARACTER SET utf8mb4",
    f"""CREATE TABLE {DATABASE}.types (
        id INT PRIMARY KEY, amount DECIMAL(65,30), big BIGINT UNSIGNED, flag BIT(1), bits BIT(10), wide BIT(64),
        clock TIME, fine TIME(6), yr YEAR, day DATE, at DATETIME(6), stamp TIMESTAMP(6) NULL DEFAULT NULL,
        color ENUM('red','green','blue'), tags SET('a','b','c','d'), doc JSON, spot POINT,
        label VARCHAR(64), raw VARBINARY(64), body BLOB)""",
    f"CREATE TABLE {DATABASE}.log (at DATETIME, actor VARCHAR(16), detail VARCHAR(64))",
    f"CREATE TABLE {DATABASE}.accounts (id INT PRIMARY KEY, name VARCHAR(32), balance DECIMAL(12,2))",
    f"CREATE TABLE {DATABASE}.scratch (id INT PRIMARY KEY, note VARCHAR(32))",
]
#: Every table, as cdckit names it (database.table).
TABLES = [f"{DATABASE}.{name}" for name in ("types", "log", "accounts", "scratch")]
#: The primary key of each table (none for the log).
KEYS = {f"{DATABASE}.types": ["id"], f"{DATABASE}.accounts": ["id"], f"{DATABASE}.scratch": ["id"]}
#: The log's detail of the workload's last row: a capture that holds it has seen every commit before it.
END = "end of the workload"
#: The session time zone the workload writes in (TIMESTAMP values are stored in UTC).
ZONE = "+05:30"

_TYPES_COLUMNS = (
    "id, amount, big, flag, bits, wide, clock, fine, yr, day, at, stamp, color, tags, doc, spot, label, raw, body"
)
_INSERT_TYPES = (
    f"INSERT INTO {DATABASE}.types ({_TYPES_COLUMNS}) VALUES "
    "(%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, ST_PointFromText(%s), %s, %s, %s)"
)
_DECIMALS = [
    "99999999999999999999999999999999999.999999999999999999999999999999",
    "-99999999999999999999999999999999999.999999999999999999999999999999",
    "0.000000000000000000000000000001",
    "0",
    "12345.678900000000000000000000000000",
]
_BIGS = [0, 2**64 - 1, 2**63, 2**63 - 1, 42]
_TIMES = ["-838:59:59", "838:59:59", "25:00:00", "12:34:56", "-00:00:01", "00:00:00", "23:59:59"]
_FINE = ["-838:59:59.000000", "838:59:59.000000", "23:59:59.999999", "100:00:00.000001", "00:00:00.5", "-01:02:03.25"]
_YEARS = [1901, 2155, 2024, 1999]
_DAYS = ["0000-00-00", "1700-01-01", "9999-12-31", "2024-02-29", "1970-01-01"]
_AT = ["1970-01-01 00:00:00", "9999-12-31 23:59:59.999999", "2024-02-29 12:00:00.123456", "1700-06-01 01:02:03"]
#: In the session zone (+05:30): 1970-01-01 05:30:01 is one second after the epoch, the first TIMESTAMP.
_STAMPS = ["1970-01-01 05:30:01", "2038-01-19 08:44:07.999999", "2024-03-31 02:30:00.000001", "2000-01-01 00:00:00"]
_DOCS = ['{"a": [1, 2.5, "x"], "b": null, "emoji": "🙂"}', "[]", '"text"', "123", '{"nested": {"deep": [true]}}']
_POINTS = ["POINT(1.5 -2.25)", "POINT(0 0)", "POINT(-180 90)"]
_LABELS = ["plain", "emoji 🙂👍", "東京", "O'Brien", "tab\tand\nnewline", "", "Bäcker"]


def edge_row(rnd: random.Random, row_id: int) -> tuple:
    """The arguments of an insert into ``types``: each column at or near an edge of its type, or null."""

    def pick(choices: list[Any], nulls: float = 0.1) -> Any:
        return None if rnd.random() < nulls else rnd.choice(choices)

    bits = rnd.choice([0, 1023, 0b1010101010, rnd.randrange(1024)])
    wide = rnd.choice([2**64 - 1, 0, 1, rnd.randrange(2**64)])
    return (
        row_id,
        Decimal(rnd.choice(_DECIMALS)) if rnd.random() > 0.1 else None,
        pick(_BIGS + [rnd.randrange(2**64)]),
        rnd.choice([0, 1, None]),
        bits,
        wide,
        pick(_TIMES),
        pick(_FINE),
        pick(_YEARS),
        pick(_DAYS),
        pick(_AT),
        pick(_STAMPS),
        pick(["red", "green", "blue"]),
        pick(["a,c", "", "a,b,c,d", "d"]),
        pick(_DOCS),
        pick(_POINTS),
        pick(_LABELS),
        bytes(rnd.randrange(256) for _ in range(rnd.randrange(0, 20))) if rnd.random() > 0.1 else None,
        bytes(rnd.randrange(256) for _ in range(rnd.randrange(0, 300))) if rnd.random() > 0.1 else None,
    )


#: How many equal rows of the keyless log the snapshot reads; the stream deletes at most two of them.
_SNAPSHOT_LOG = 5
#: A statement and its arguments, as PyMySQL runs it.
Statement = tuple[str, tuple]


def _log(rnd: random.Random, actor: str) -> Statement:
    return (
        f"INSERT INTO {DATABASE}.log VALUES (%s, %s, %s)",
        (f"2024-05-0{rnd.randint(1, 3)} 09:30:00", actor, "same"),
    )


def snapshot_rows(seed: int) -> list[Statement]:
    """The statements whose rows are in the tables before the connector starts (its snapshot reads them)."""
    rnd = random.Random(seed * 7919)
    rows = [(_INSERT_TYPES, edge_row(rnd, i)) for i in range(1, 9)]
    rows += [_log(random.Random(0), "snapshot") for _ in range(_SNAPSHOT_LOG)]  # equal rows, no key
    rows += [
        (f"INSERT INTO {DATABASE}.accounts VALUES (%s, %s, %s)", (i, f"acct {i}", Decimal(i) * 10)) for i in range(1, 6)
    ]
    rows += [(f"INSERT INTO {DATABASE}.scratch VALUES (%s, %s)", (i, "before the truncate")) for i in range(1, 4)]
    return rows


#: The rows the snapshot reads (seed 0; :meth:`Workload.prepare` inserts its own seed's).
SNAPSHOT = snapshot_rows(0)


class Workload:
    """``changes`` seeded statements after the snapshot rows; :meth:`run` executes them on a PyMySQL connection."""

    def __init__(self, seed: int = 5, changes: int = 160) -> None:
        self.seed = seed
        self.changes = changes

    def plan(self) -> list[Statement]:
        """The streamed statements, in order (the same for the same seed)."""
        rnd = random.Random(self.seed)
        types = set(range(1, 9))
        accounts = set(range(1, 6))
        next_type, next_account = 100, 100
        snapshot_log = _SNAPSHOT_LOG
        plan: list[Statement] = []
        for number in range(self.changes):
            if number == self.changes // 3:
                plan.append((f"TRUNCATE TABLE {DATABASE}.scratch", ()))
                plan.append((f"INSERT INTO {DATABASE}.scratch VALUES (%s, %s)", (1, "after the truncate")))
                continue
            if number == self.changes * 2 // 3:
                plan.append((f"ALTER TABLE {DATABASE}.accounts ADD COLUMN note VARCHAR(16) NULL", ()))
                continue
            roll = rnd.random()
            if roll < 0.3:
                next_type += 1
                types.add(next_type)
                plan.append((_INSERT_TYPES, edge_row(rnd, next_type)))
            elif roll < 0.45 and types:
                victim = rnd.choice(sorted(types))
                row = edge_row(rnd, victim)
                columns = [c.strip() for c in _TYPES_COLUMNS.split(",")][1:]
                sets = ", ".join(f"{c} = ST_PointFromText(%s)" if c == "spot" else f"{c} = %s" for c in columns)
                plan.append((f"UPDATE {DATABASE}.types SET {sets} WHERE id = %s", (*row[1:], victim)))
            elif roll < 0.52 and types:
                victim = rnd.choice(sorted(types))
                types.discard(victim)
                plan.append((f"DELETE FROM {DATABASE}.types WHERE id = %s", (victim,)))
            elif roll < 0.65:
                plan.append(_log(rnd, "stream"))  # equal rows again, now from the binlog
            elif roll < 0.72:
                actor = rnd.choice(["snapshot", "stream"]) if snapshot_log > _SNAPSHOT_LOG - 2 else "stream"
                snapshot_log -= actor == "snapshot"
                plan.append((f"DELETE FROM {DATABASE}.log WHERE detail = 'same' AND actor = %s LIMIT 1", (actor,)))
            elif roll < 0.82 and accounts:  # the primary key changes
                old = rnd.choice(sorted(accounts))
                next_account += 1
                accounts.discard(old)
                accounts.add(next_account)
                plan.append((f"UPDATE {DATABASE}.accounts SET id = %s WHERE id = %s", (next_account, old)))
            elif roll < 0.92 and accounts:
                plan.append(
                    (
                        f"UPDATE {DATABASE}.accounts SET balance = balance + %s WHERE id = %s",
                        (Decimal(rnd.randint(-5000, 5000)) / 100, rnd.choice(sorted(accounts))),
                    )
                )
            else:
                next_account += 1
                accounts.add(next_account)
                plan.append(
                    (
                        f"INSERT INTO {DATABASE}.accounts (id, name, balance) VALUES (%s, %s, %s)",
                        (next_account, rnd.choice(_LABELS), Decimal("0.01")),
                    )
                )
        return plan

    def prepare(self, connection: Any) -> None:
        """Create the tables and insert the rows the snapshot reads (``connection`` autocommits)."""
        with connection.cursor() as cursor:
            for sql in SCHEMA:
                cursor.execute(sql)
            cursor.execute(f"SET time_zone = '{ZONE}'")
            for sql, args in snapshot_rows(self.seed):
                cursor.execute(sql, args)

    def run(self, connection: Any, *, on_half: Callable[[], None] | None = None) -> int:
        """Run the plan on ``connection`` (autocommit, each statement its own transaction), then the end row.

        ``on_half`` is called once, half way, a second and more apart from the
        statements before and after it (a binary log's times have whole
        seconds). Returns the number of statements run.
        """
        plan = self.plan()
        with connection.cursor() as cursor:
            cursor.execute(f"SET time_zone = '{ZONE}'")
            for number, (sql, args) in enumerate(plan):
                if number == len(plan) // 2 and on_half is not None:
                    time.sleep(1.1)
                    on_half()
                    time.sleep(1.1)
                cursor.execute(sql, args or None)
            cursor.execute(f"INSERT INTO {DATABASE}.log VALUES (%s, %s, %s)", ("2024-05-01 09:30:00", "end", END))
        return len(plan) + 1
