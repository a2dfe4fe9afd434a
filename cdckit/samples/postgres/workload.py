"""A seeded workload of the changes real schemas see, run against a PostgreSQL server with psycopg.

Tables (what each one exercises):

- ``public.customers``: a primary key, ``numeric(38,10)``, ``timestamptz``,
  ``text[]``, ``jsonb``, ``bytea``, booleans, unicode, NULLs, and a large
  ``notes`` text kept out of line (TOAST) that most updates leave unchanged;
- ``sales.order_lines``: a composite primary key whose ``line_no`` changes;
- ``public.inventory``: ``REPLICA IDENTITY FULL`` (whole before images);
- ``public.audit``: no primary key (``REPLICA IDENTITY FULL``, so its updates
  and deletes still name the row);
- ``public.sessions``: emptied by ``TRUNCATE`` now and then.

Transactions hold one to eight statements; some are rolled back, some roll
back to a savepoint part way (their changes must not reach a capture), and
now and then a second session's transaction is left open while others
commit, so the capture interleaves transactions by commit order.

>>> work = Workload(seed=3, transactions=10)
>>> len(work.plan()) == 10
True
"""

from __future__ import annotations

import json
import random
import string
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from decimal import Decimal
from typing import Any, Callable

__all__ = ["Workload", "Transaction", "SCHEMA", "TABLES", "KEYS", "UNDONE"]

SCHEMA = """
CREATE SCHEMA sales;
CREATE TABLE public.customers (
    id integer PRIMARY KEY, name text NOT NULL, email text, tier text, balance numeric(38,10),
    joined timestamptz, tags text[], prefs jsonb, avatar bytea, active boolean, notes text);
ALTER TABLE public.customers ALTER COLUMN notes SET STORAGE EXTERNAL;
CREATE TABLE sales.order_lines (
    order_id integer, line_no integer, product text, qty integer, price numeric(12,2),
    PRIMARY KEY (order_id, line_no));
CREATE TABLE public.inventory (sku text PRIMARY KEY, qty integer, price double precision, updated timestamptz);
ALTER TABLE public.inventory REPLICA IDENTITY FULL;
CREATE TABLE public.audit (at timestamptz, actor text, detail text);
ALTER TABLE public.audit REPLICA IDENTITY FULL;
CREATE TABLE public.sessions (id bigint PRIMARY KEY, token uuid, started timestamptz);
"""
#: Every table, as cdckit names it (schema.table).
TABLES = ["public.customers", "sales.order_lines", "public.inventory", "public.audit", "public.sessions"]
#: The primary key of each table (none for the audit log).
KEYS = {"public.customers": ["id"], "sales.order_lines": ["order_id", "line_no"], "public.inventory": ["sku"],
        "public.sessions": ["id"]}
#: Key values the second session uses, apart from the first session's, so neither waits for the other.
_SECOND = 1_000_000
_WORDS = ["alpha", "Bäcker", "Øresund", "naïve", "東京", "emoji 🙂", "O'Brien", 'say "hi"', "back\\slash",
          "tab\tand\nnewline", "", "plain"]
_T0 = datetime(2024, 5, 1, 9, 30, tzinfo=timezone.utc)
#: Text that only rolled-back work writes: no capture may hold it.
UNDONE = "rolled back: must never be captured"

Statement = tuple[str, tuple]


@dataclass
class _Rows:
    """The keys the first session sees live, kept to write statements that succeed."""

    customers: set[int] = field(default_factory=set)
    lines: set[tuple[int, int]] = field(default_factory=set)
    skus: set[str] = field(default_factory=set)
    audit: int = 0
    sessions: set[int] = field(default_factory=set)

    def copy(self) -> "_Rows":
        return _Rows(set(self.customers), set(self.lines), set(self.skus), self.audit, set(self.sessions))


_UNDONE = ("INSERT INTO public.audit VALUES (%s, %s, %s)", (_T0, "first", UNDONE))


@dataclass
class Transaction:
    """One transaction of the plan: its statements, how it ends, and whether a second session runs it."""

    statements: list[Statement]
    ending: str = "commit"  # "commit", "rollback" or "savepoint" (roll back to a savepoint after `keep`)
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
        rows = _Rows()
        second_id = _SECOND
        plan = []
        for number in range(self.transactions):
            if number % 23 == 11:  # a second session's transaction, left open while others commit
                statements = []
                for _ in range(rnd.randint(1, 3)):
                    second_id += 1
                    statements.append(_insert_customer(rnd, second_id))
                statements.append(("INSERT INTO public.audit VALUES (%s, %s, %s)",
                                   (_time(rnd), "second", f"opened {second_id}")))
                statements.append(("UPDATE public.customers SET tier = %s WHERE id = %s", ("gold", second_id)))
                plan.append(Transaction(statements, second=True))
                continue
            before = rows.copy()
            statements = [_statement(rnd, rows) for _ in range(rnd.randint(1, 8))]
            roll = rnd.random()
            if roll < 0.06:
                plan.append(Transaction(statements + [_UNDONE], "rollback"))
                rows = before
            elif roll < 0.14 and len(statements) > 1:
                keep = rnd.randint(1, len(statements) - 1)
                rows = _replayed(before, statements[:keep])
                plan.append(Transaction(statements[:keep] + [_UNDONE] + statements[keep:], "savepoint", keep))
            else:
                plan.append(Transaction(statements))
        return plan

    # ------------------------------------------------------------ running it

    def run(self, first: Any, second: Any, *, on_half: Callable[[], None] | None = None) -> int:
        """Run the plan: ``first`` and ``second`` are psycopg connections (not autocommit).

        A second-session transaction stays open until three more transactions
        have committed. ``on_half`` is called once, half way, with no
        transaction open. Returns the number of statements run.
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
            for index, (sql, args) in enumerate(tx.statements):
                if tx.ending == "savepoint" and index == tx.keep:
                    first.execute("SAVEPOINT part")
                first.execute(sql, args)
            count += len(tx.statements)
            if tx.ending == "rollback":
                first.rollback()
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
        return count


# ------------------------------------------------------------ statements


def _statement(rnd: random.Random, rows: _Rows) -> Statement:
    """One statement of the first session that succeeds on ``rows`` (which it updates)."""
    choice = rnd.random()
    if choice < 0.30:
        return _customer_change(rnd, rows)
    if choice < 0.55:
        return _line_change(rnd, rows)
    if choice < 0.75:
        return _inventory_change(rnd, rows)
    if choice < 0.90:
        return _audit_change(rnd, rows)
    return _session_change(rnd, rows)


def _replayed(rows: _Rows, statements: list[Statement]) -> _Rows:
    """``rows`` after ``statements`` (the part of a transaction kept when it rolls back to a savepoint)."""
    out = rows.copy()
    for sql, args in statements:
        _account(out, sql, args)
    return out


def _account(rows: _Rows, sql: str, args: tuple) -> None:
    """Update the live-key bookkeeping for one statement (the inverse of how they are made)."""
    if sql.startswith("INSERT INTO public.customers"):
        rows.customers.add(args[0])
    elif sql.startswith("DELETE FROM public.customers"):
        rows.customers.discard(args[0])
    elif sql.startswith("INSERT INTO sales.order_lines"):
        rows.lines.add((args[0], args[1]))
    elif sql.startswith("UPDATE sales.order_lines SET line_no"):
        rows.lines.discard((args[1], args[2]))
        rows.lines.add((args[1], args[0]))
    elif sql.startswith("DELETE FROM sales.order_lines"):
        rows.lines.discard((args[0], args[1]))
    elif sql.startswith("INSERT INTO public.inventory"):
        rows.skus.add(args[0])
    elif sql.startswith("DELETE FROM public.inventory"):
        rows.skus.discard(args[0])
    elif sql.startswith("INSERT INTO public.audit"):
        rows.audit += 1
    elif sql.startswith("INSERT INTO public.sessions"):
        rows.sessions.add(args[0])
    elif sql.startswith("TRUNCATE public.sessions"):
        rows.sessions.clear()


def _made(rows: _Rows, statement: Statement) -> Statement:
    _account(rows, *statement)
    return statement


def _time(rnd: random.Random) -> datetime:
    return _T0 + timedelta(seconds=rnd.randint(0, 90 * 86400), microseconds=rnd.randint(0, 999_999))


def _text(rnd: random.Random) -> str:
    return rnd.choice(_WORDS) + " " + "".join(rnd.choices(string.ascii_lowercase, k=rnd.randint(0, 12)))


def _insert_customer(rnd: random.Random, key: int) -> Statement:
    balance = None if rnd.random() < 0.1 else Decimal(f"{rnd.randint(-10**12, 10**20)}.{rnd.randint(0, 10**10 - 1):010d}")
    notes = None if rnd.random() < 0.5 else "".join(rnd.choices(string.ascii_letters + " ", k=2600))
    tags = None if rnd.random() < 0.2 else [_text(rnd) for _ in range(rnd.randint(0, 3))] + ([None] if rnd.random() < 0.1 else [])
    prefs = None if rnd.random() < 0.2 else {"lang": rnd.choice(["de", "ja", "en"]), "n": rnd.randint(0, 9),
                                              "nested": {"ok": rnd.random() < 0.5, "list": [1, "two", None]}}
    return ("INSERT INTO public.customers VALUES (%s, %s, %s, %s, %s, %s, %s, %s::jsonb, %s, %s, %s)",
            (key, _text(rnd), None if rnd.random() < 0.3 else f"c{key}@example.com", rnd.choice(["bronze", "silver", None]),
             balance, _time(rnd), tags, None if prefs is None else json.dumps(prefs, ensure_ascii=False),
             None if rnd.random() < 0.3 else rnd.randbytes(rnd.randint(0, 40)), rnd.choice([True, False, None]), notes))


def _customer_change(rnd: random.Random, rows: _Rows) -> Statement:
    live = sorted(rows.customers)
    if not live or rnd.random() < 0.35:
        key = rnd.randint(1, 5000)
        while key in rows.customers:
            key = rnd.randint(1, 5000)
        return _made(rows, _insert_customer(rnd, key))
    key = rnd.choice(live)
    if rnd.random() < 0.15:
        return _made(rows, ("DELETE FROM public.customers WHERE id = %s", (key,)))
    column, value = rnd.choice([("tier", rnd.choice(["gold", "silver", None])), ("name", _text(rnd)),
                                ("balance", Decimal(rnd.randint(0, 10**6)) / 100), ("active", rnd.random() < 0.5),
                                ("joined", _time(rnd))])
    return ("UPDATE public.customers SET " + column + " = %s WHERE id = %s", (value, key))


def _line_change(rnd: random.Random, rows: _Rows) -> Statement:
    live = sorted(rows.lines)
    if not live or rnd.random() < 0.4:
        key = (rnd.randint(1, 300), rnd.randint(1, 6))
        while key in rows.lines:
            key = (rnd.randint(1, 300), rnd.randint(1, 6))
        return _made(rows, ("INSERT INTO sales.order_lines VALUES (%s, %s, %s, %s, %s)",
                            (*key, _text(rnd), rnd.randint(1, 9), Decimal(rnd.randint(1, 99999)) / 100)))
    order_id, line_no = rnd.choice(live)
    roll = rnd.random()
    if roll < 0.2:
        free = [n for n in range(1, 10) if (order_id, n) not in rows.lines]
        return _made(rows, ("UPDATE sales.order_lines SET line_no = %s WHERE order_id = %s AND line_no = %s",
                            (rnd.choice(free), order_id, line_no)))
    if roll < 0.35:
        return _made(rows, ("DELETE FROM sales.order_lines WHERE order_id = %s AND line_no = %s",
                            (order_id, line_no)))
    return ("UPDATE sales.order_lines SET qty = qty + %s WHERE order_id = %s AND line_no = %s",
            (rnd.randint(1, 3), order_id, line_no))


def _inventory_change(rnd: random.Random, rows: _Rows) -> Statement:
    live = sorted(rows.skus)
    if not live or rnd.random() < 0.3:
        sku = f"SKU-{rnd.randint(1, 400):04d}"
        while sku in rows.skus:
            sku = f"SKU-{rnd.randint(1, 400):04d}"
        return _made(rows, ("INSERT INTO public.inventory VALUES (%s, %s, %s, %s)",
                            (sku, rnd.randint(0, 500), rnd.choice([rnd.random() * 100, 0.1, 1e-7, None]),
                             _time(rnd))))
    sku = rnd.choice(live)
    if rnd.random() < 0.1:
        return _made(rows, ("DELETE FROM public.inventory WHERE sku = %s", (sku,)))
    return ("UPDATE public.inventory SET qty = %s, price = %s, updated = %s WHERE sku = %s",
            (rnd.randint(0, 500), round(rnd.random() * 100, 3), _time(rnd), sku))


def _audit_change(rnd: random.Random, rows: _Rows) -> Statement:
    roll = rnd.random()
    if rows.audit and roll < 0.1:
        return ("UPDATE public.audit SET detail = detail || %s WHERE ctid = (SELECT min(ctid) FROM public.audit "
                "WHERE actor = %s)", ("!", "first"))
    if rows.audit and roll < 0.2:
        return ("DELETE FROM public.audit WHERE ctid = (SELECT max(ctid) FROM public.audit WHERE actor = %s)",
                ("first",))
    return _made(rows, ("INSERT INTO public.audit VALUES (%s, %s, %s)",
                        (_time(rnd), "first", _text(rnd) if rnd.random() < 0.9 else None)))


def _session_change(rnd: random.Random, rows: _Rows) -> Statement:
    if rows.sessions and rnd.random() < 0.08:
        return _made(rows, ("TRUNCATE public.sessions", ()))
    key = rnd.randint(1, 10**12)
    while key in rows.sessions:
        key = rnd.randint(1, 10**12)
    return _made(rows, ("INSERT INTO public.sessions VALUES (%s, %s, %s)",
                        (key, f"{rnd.getrandbits(128):032x}", _time(rnd))))
