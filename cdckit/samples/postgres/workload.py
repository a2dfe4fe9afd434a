"""A seeded workload of the changes real schemas see, run against a PostgreSQL server with psycopg.

Tables (what each one exercises):

- ``public.customers``: a primary key, ``numeric(38,10)``, ``timestamptz``,
  ``text[]``, ``jsonb``, ``bytea``, booleans, unicode, NULLs, and a large
  ``notes`` text kept out of line (TOAST) that most updates leave unchanged;
- ``sales.order_lines``: a composite primary key whose ``line_no`` changes;
- ``public.inventory``: ``REPLICA IDENTITY FULL`` (whole before images);
- ``public.audit``: no primary key (``REPLICA IDENTITY FULL``, so its updates
  and deletes still name the row);
- ``public.sessions``: emptied by ``TRUNCATE`` now and then;
- ``public.measures``: ``NOT NULL`` columns of every time kind and exact
  numbers at their limits: ``numeric(38,10)`` with 28 integer digits,
  unconstrained ``numeric`` longer than 38 digits, ``timestamptz`` long ago
  (zone offsets with seconds in ``America/St_Johns``) and outside
  1677..2262, ``timestamp(3)``, ``date``, ``time(3)``; its key changes, and a
  delete's before image (``REPLICA IDENTITY DEFAULT``) holds only the key;
- ``public.documents``: ``REPLICA IDENTITY FULL`` with TOASTed text, ``bytea``
  and ``text[]`` (``STORAGE EXTERNAL``) that most updates leave unchanged.

``customers`` keeps its ``notes``, ``avatar`` (``bytea``) and ``tags``
(``text[]``) out of line too (``STORAGE EXTERNAL``, often large) under
``REPLICA IDENTITY DEFAULT``, and some updates change its key while they
leave those unchanged.

Transactions hold one to eight statements; some are rolled back, some roll
back to a savepoint part way (their changes must not reach a capture), and
now and then a second session's transaction is left open while others
commit, so the capture interleaves transactions by commit order. Some are
two-phase: ``PREPARE TRANSACTION`` then ``COMMIT PREPARED`` or ``ROLLBACK
PREPARED`` (a rolled-back one writes :data:`UNDONE`, which no replayed state
may hold). :data:`END` is the last row written: a capture that holds it holds
the whole workload.

>>> work = Workload(seed=3, transactions=10)
>>> len(work.plan()) == 10
True
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .statements import T0, LiveRows, Statement, insert_customer, next_statement, random_time, replayed

__all__ = ["Workload", "Transaction", "SCHEMA", "TABLES", "KEYS", "UNDONE", "END"]

SCHEMA = """
CREATE SCHEMA sales;
CREATE TABLE public.customers (
    id integer PRIMARY KEY, name text NOT NULL, email text, tier text, balance numeric(38,10),
    joined timestamptz, tags text[], prefs jsonb, avatar bytea, active boolean, notes text);
ALTER TABLE public.customers ALTER COLUMN notes SET STORAGE EXTERNAL, ALTER COLUMN avatar SET STORAGE EXTERNAL,
    ALTER COLUMN tags SET STORAGE EXTERNAL;
CREATE TABLE sales.order_lines (
    order_id integer, line_no integer, product text, qty integer, price numeric(12,2),
    PRIMARY KEY (order_id, line_no));
CREATE TABLE public.inventory (sku text PRIMARY KEY, qty integer, price double precision, updated timestamptz);
ALTER TABLE public.inventory REPLICA IDENTITY FULL;
CREATE TABLE public.audit (at timestamptz, actor text, detail text);
ALTER TABLE public.audit REPLICA IDENTITY FULL;
CREATE TABLE public.sessions (id bigint PRIMARY KEY, token uuid, started timestamptz);
CREATE TABLE public.measures (
    id integer PRIMARY KEY, amount numeric(38,10) NOT NULL, big numeric NOT NULL, at timestamptz NOT NULL,
    local_at timestamp(3) NOT NULL, day date NOT NULL, clock time(3) NOT NULL, label text NOT NULL,
    flag boolean NOT NULL, counts integer[], doc jsonb, raw bytea);
CREATE TABLE public.documents (
    id integer PRIMARY KEY, title text NOT NULL, version integer NOT NULL, body text, blob bytea, lines text[]);
ALTER TABLE public.documents ALTER COLUMN body SET STORAGE EXTERNAL, ALTER COLUMN blob SET STORAGE EXTERNAL,
    ALTER COLUMN lines SET STORAGE EXTERNAL;
ALTER TABLE public.documents REPLICA IDENTITY FULL;
"""
#: Every table, as cdckit names it (schema.table).
TABLES = [
    "public.customers",
    "sales.order_lines",
    "public.inventory",
    "public.audit",
    "public.sessions",
    "public.measures",
    "public.documents",
]
#: The primary key of each table (none for the audit log).
KEYS = {
    "public.customers": ["id"],
    "sales.order_lines": ["order_id", "line_no"],
    "public.inventory": ["sku"],
    "public.sessions": ["id"],
    "public.measures": ["id"],
    "public.documents": ["id"],
}
#: Key values the second session uses, apart from the first session's, so neither waits for the other.
_SECOND = 1_000_000
#: Text that only rolled-back work writes: no capture may hold it.
UNDONE = "rolled back: must never be captured"
#: The audit detail of the workload's last row: a capture that holds it has seen every commit before it.
END = "end of the workload"

_UNDONE = ("INSERT INTO public.audit VALUES (%s, %s, %s)", (T0, "first", UNDONE))


@dataclass
class Transaction:
    """One transaction of the plan: its statements, how it ends, and whether a second session runs it."""

    statements: list[Statement]
    #: "commit", "rollback", "savepoint" (roll back to a savepoint after `keep`), "prepared" (PREPARE
    #: TRANSACTION, then COMMIT PREPARED) or "prepared_rollback" (PREPARE TRANSACTION, then ROLLBACK PREPARED)
    ending: str = "commit"
    keep: int = 0
    second: bool = False  # run by the second session, left open across the next transactions


class Workload:
    """``transactions`` seeded transactions; :meth:`run` executes them on two psycopg connections."""

    def __init__(self, seed: int = 14, transactions: int = 600) -> None:
        self.seed = seed
        self.transactions = transactions

    # ------------------------------------------------------------ the plan

    def plan(self) -> list[Transaction]:
        """The transactions, in the order they begin (the same for the same seed)."""
        rnd = random.Random(self.seed)
        rows = LiveRows()
        second_id = _SECOND
        plan = []
        for number in range(self.transactions):
            if number % 23 == 11:  # a second session's transaction, left open while others commit
                statements = []
                for _ in range(rnd.randint(1, 3)):
                    second_id += 1
                    statements.append(insert_customer(rnd, second_id))
                statements.append(
                    (
                        "INSERT INTO public.audit VALUES (%s, %s, %s)",
                        (random_time(rnd), "second", f"opened {second_id}"),
                    )
                )
                statements.append(("UPDATE public.customers SET tier = %s WHERE id = %s", ("gold", second_id)))
                plan.append(Transaction(statements, second=True))
                continue
            before = rows.copy()
            statements = [next_statement(rnd, rows) for _ in range(rnd.randint(1, 8))]
            roll = rnd.random()
            if roll < 0.06:
                plan.append(Transaction(statements + [_UNDONE], "rollback"))
                rows = before
            elif roll < 0.08:
                plan.append(Transaction(statements + [_UNDONE], "prepared_rollback"))
                rows = before
            elif roll < 0.11:
                plan.append(Transaction(statements, "prepared"))
            elif roll < 0.14 and len(statements) > 1:
                keep = rnd.randint(1, len(statements) - 1)
                rows = replayed(before, statements[:keep])
                plan.append(Transaction(statements[:keep] + [_UNDONE] + statements[keep:], "savepoint", keep))
            else:
                plan.append(Transaction(statements))
        return plan

    # ------------------------------------------------------------ running it

    def run(self, first: Any, second: Any, *, on_half: Callable[[], None] | None = None) -> int:
        """Run the plan: ``first`` and ``second`` are psycopg connections (not autocommit).

        A second-session transaction stays open until three more transactions
        have committed. ``on_half`` is called once, half way, with no
        transaction open. The last transaction inserts the audit row
        :data:`END`. Returns the number of statements run.
        """
        plan = self.plan()
        count = 0
        open_second: list[int] = []  # countdown of the open second-session transaction
        for number, tx in enumerate(plan):
            if number == len(plan) // 2:
                if open_second:
                    second.commit()
                    open_second.clear()
                if on_half is not None:
                    on_half()
            if tx.second:
                if open_second:
                    second.commit()
                for sql, args in tx.statements:
                    second.execute(sql, args)
                open_second[:] = [3]
                count += len(tx.statements)
                continue
            if tx.ending.startswith("prepared"):
                first.tpc_begin(f"cdckit-{self.seed}-{number}")
            for index, (sql, args) in enumerate(tx.statements):
                if tx.ending == "savepoint" and index == tx.keep:
                    first.execute("SAVEPOINT part")
                first.execute(sql, args)
            count += len(tx.statements)
            if tx.ending == "rollback":
                first.rollback()
            elif tx.ending.startswith("prepared"):
                first.tpc_prepare()
                if tx.ending == "prepared_rollback":
                    first.tpc_rollback()
                else:
                    first.tpc_commit()
            else:
                if tx.ending == "savepoint":
                    first.execute("ROLLBACK TO SAVEPOINT part")
                first.commit()
            if open_second:
                open_second[0] -= 1
                if open_second[0] == 0:
                    second.commit()
                    open_second.clear()
        if open_second:
            second.commit()
        first.execute("INSERT INTO public.audit VALUES (%s, %s, %s)", (T0, "end", END))
        first.commit()
        return count + 1
