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

import json
import random
import string
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta, timezone
from decimal import Decimal
from typing import Any
from zoneinfo import ZoneInfo

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
_WORDS = [
    "alpha",
    "Bäcker",
    "Øresund",
    "naïve",
    "東京",
    "emoji 🙂",
    "O'Brien",
    'say "hi"',
    "back\\slash",
    "tab\tand\nnewline",
    "",
    "plain",
]
_T0 = datetime(2024, 5, 1, 9, 30, tzinfo=timezone.utc)
#: Text that only rolled-back work writes: no capture may hold it.
UNDONE = "rolled back: must never be captured"
#: The audit detail of the workload's last row: a capture that holds it has seen every commit before it.
END = "end of the workload"
_ST_JOHNS = ZoneInfo("America/St_Johns")
#: Instants at the edges: offsets with seconds (St. John's before 1935), and outside pandas' 1677..2262.
_EDGE_TIMES = [
    datetime(1900, 6, 1, 8, 29, 8, tzinfo=_ST_JOHNS),
    datetime(1884, 1, 1, 0, 0, 1, 500, tzinfo=_ST_JOHNS),
    datetime(101, 3, 4, 5, 6, 7, 891234, tzinfo=timezone.utc),
    datetime(1600, 2, 29, tzinfo=_ST_JOHNS),
    datetime(1677, 9, 21, 0, 12, 43, 145224, tzinfo=timezone.utc),
    datetime(2262, 4, 11, 23, 47, 16, 854776, tzinfo=timezone.utc),
    datetime(9999, 6, 1, 12, 0, 0, 999999, tzinfo=timezone.utc),
    datetime(1970, 1, 1, tzinfo=timezone.utc),
]
_EDGE_DAYS = [date(1, 1, 1), date(1582, 10, 15), date(1677, 9, 20), date(2262, 4, 12), date(9999, 12, 31)]

Statement = tuple[str, tuple]


@dataclass
class _Rows:
    """The keys the first session sees live, kept to write statements that succeed."""

    customers: set[int] = field(default_factory=set)
    lines: set[tuple[int, int]] = field(default_factory=set)
    skus: set[str] = field(default_factory=set)
    audit: int = 0
    sessions: set[int] = field(default_factory=set)
    measures: set[int] = field(default_factory=set)
    documents: set[int] = field(default_factory=set)

    def copy(self) -> _Rows:
        return _Rows(
            set(self.customers),
            set(self.lines),
            set(self.skus),
            self.audit,
            set(self.sessions),
            set(self.measures),
            set(self.documents),
        )


_UNDONE = ("INSERT INTO public.audit VALUES (%s, %s, %s)", (_T0, "first", UNDONE))


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
        rows = _Rows()
        second_id = _SECOND
        plan = []
        for number in range(self.transactions):
            if number % 23 == 11:  # a second session's transaction, left open while others commit
                statements = []
                for _ in range(rnd.randint(1, 3)):
                    second_id += 1
                    statements.append(_insert_customer(rnd, second_id))
                statements.append(
                    ("INSERT INTO public.audit VALUES (%s, %s, %s)", (_time(rnd), "second", f"opened {second_id}"))
                )
                statements.append(("UPDATE public.customers SET tier = %s WHERE id = %s", ("gold", second_id)))
                plan.append(Transaction(statements, second=True))
                continue
            before = rows.copy()
            statements = [_statement(rnd, rows) for _ in range(rnd.randint(1, 8))]
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
        first.execute("INSERT INTO public.audit VALUES (%s, %s, %s)", (_T0, "end", END))
        first.commit()
        return count + 1


# ------------------------------------------------------------ statements


def _statement(rnd: random.Random, rows: _Rows) -> Statement:
    """One statement of the first session that succeeds on ``rows`` (which it updates)."""
    choice = rnd.random()
    if choice < 0.25:
        return _customer_change(rnd, rows)
    if choice < 0.42:
        return _line_change(rnd, rows)
    if choice < 0.55:
        return _inventory_change(rnd, rows)
    if choice < 0.65:
        return _audit_change(rnd, rows)
    if choice < 0.72:
        return _session_change(rnd, rows)
    if choice < 0.88:
        return _measure_change(rnd, rows)
    return _document_change(rnd, rows)


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
    elif sql.startswith("UPDATE public.customers SET id"):
        rows.customers.discard(args[1])
        rows.customers.add(args[0])
    elif sql.startswith("INSERT INTO public.measures"):
        rows.measures.add(args[0])
    elif sql.startswith("DELETE FROM public.measures"):
        rows.measures.discard(args[0])
    elif sql.startswith("UPDATE public.measures SET id"):
        rows.measures.discard(args[1])
        rows.measures.add(args[0])
    elif sql.startswith("INSERT INTO public.documents"):
        rows.documents.add(args[0])
    elif sql.startswith("DELETE FROM public.documents"):
        rows.documents.discard(args[0])
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
    balance = (
        None if rnd.random() < 0.1 else Decimal(f"{rnd.randint(-(10**12), 10**20)}.{rnd.randint(0, 10**10 - 1):010d}")
    )
    notes = None if rnd.random() < 0.5 else "".join(rnd.choices(string.ascii_letters + " ", k=2600))
    tags = (
        None
        if rnd.random() < 0.2
        else [_text(rnd) for _ in range(rnd.randint(0, 3))] + ([None] if rnd.random() < 0.1 else [])
    )
    if tags is not None and rnd.random() < 0.3:  # large enough to be kept out of line
        tags += [_text(rnd) + "".join(rnd.choices(string.ascii_letters, k=300)) for _ in range(10)]
    prefs = (
        None
        if rnd.random() < 0.2
        else {
            "lang": rnd.choice(["de", "ja", "en"]),
            "n": rnd.randint(0, 9),
            "nested": {"ok": rnd.random() < 0.5, "list": [1, "two", None]},
        }
    )
    return (
        "INSERT INTO public.customers VALUES (%s, %s, %s, %s, %s, %s, %s, %s::jsonb, %s, %s, %s)",
        (
            key,
            _text(rnd),
            None if rnd.random() < 0.3 else f"c{key}@example.com",
            rnd.choice(["bronze", "silver", None]),
            balance,
            _time(rnd),
            tags,
            None if prefs is None else json.dumps(prefs, ensure_ascii=False),
            None if rnd.random() < 0.3 else rnd.randbytes(rnd.choice([rnd.randint(0, 40), 3000])),
            rnd.choice([True, False, None]),
            notes,
        ),
    )


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
    if rnd.random() < 0.08:  # a new key: the TOASTed columns it leaves unchanged go with the row
        new = rnd.randint(5001, 9000)
        while new in rows.customers:
            new = rnd.randint(5001, 9000)
        return _made(rows, ("UPDATE public.customers SET id = %s WHERE id = %s", (new, key)))
    if rnd.random() < 0.05:
        return (
            "UPDATE public.customers SET notes = %s, avatar = %s WHERE id = %s",
            ("".join(rnd.choices(string.ascii_letters, k=2400)), rnd.randbytes(2500), key),
        )
    column, value = rnd.choice(
        [
            ("tier", rnd.choice(["gold", "silver", None])),
            ("name", _text(rnd)),
            ("balance", Decimal(rnd.randint(0, 10**6)) / 100),
            ("active", rnd.random() < 0.5),
            ("joined", _time(rnd)),
        ]
    )
    return ("UPDATE public.customers SET " + column + " = %s WHERE id = %s", (value, key))


def _line_change(rnd: random.Random, rows: _Rows) -> Statement:
    live = sorted(rows.lines)
    if not live or rnd.random() < 0.4:
        key = (rnd.randint(1, 300), rnd.randint(1, 6))
        while key in rows.lines:
            key = (rnd.randint(1, 300), rnd.randint(1, 6))
        return _made(
            rows,
            (
                "INSERT INTO sales.order_lines VALUES (%s, %s, %s, %s, %s)",
                (*key, _text(rnd), rnd.randint(1, 9), Decimal(rnd.randint(1, 99999)) / 100),
            ),
        )
    order_id, line_no = rnd.choice(live)
    roll = rnd.random()
    if roll < 0.2:
        free = [n for n in range(1, 10) if (order_id, n) not in rows.lines]
        return _made(
            rows,
            (
                "UPDATE sales.order_lines SET line_no = %s WHERE order_id = %s AND line_no = %s",
                (rnd.choice(free), order_id, line_no),
            ),
        )
    if roll < 0.35:
        return _made(rows, ("DELETE FROM sales.order_lines WHERE order_id = %s AND line_no = %s", (order_id, line_no)))
    return (
        "UPDATE sales.order_lines SET qty = qty + %s WHERE order_id = %s AND line_no = %s",
        (rnd.randint(1, 3), order_id, line_no),
    )


def _inventory_change(rnd: random.Random, rows: _Rows) -> Statement:
    live = sorted(rows.skus)
    if not live or rnd.random() < 0.3:
        sku = f"SKU-{rnd.randint(1, 400):04d}"
        while sku in rows.skus:
            sku = f"SKU-{rnd.randint(1, 400):04d}"
        return _made(
            rows,
            (
                "INSERT INTO public.inventory VALUES (%s, %s, %s, %s)",
                (sku, rnd.randint(0, 500), rnd.choice([rnd.random() * 100, 0.1, 1e-7, None]), _time(rnd)),
            ),
        )
    sku = rnd.choice(live)
    if rnd.random() < 0.1:
        return _made(rows, ("DELETE FROM public.inventory WHERE sku = %s", (sku,)))
    return (
        "UPDATE public.inventory SET qty = %s, price = %s, updated = %s WHERE sku = %s",
        (rnd.randint(0, 500), round(rnd.random() * 100, 3), _time(rnd), sku),
    )


def _audit_change(rnd: random.Random, rows: _Rows) -> Statement:
    roll = rnd.random()
    if rows.audit and roll < 0.1:
        return (
            "UPDATE public.audit SET detail = detail || %s WHERE ctid = (SELECT min(ctid) FROM public.audit "
            "WHERE actor = %s)",
            ("!", "first"),
        )
    if rows.audit and roll < 0.2:
        return (
            "DELETE FROM public.audit WHERE ctid = (SELECT max(ctid) FROM public.audit WHERE actor = %s)",
            ("first",),
        )
    return _made(
        rows,
        (
            "INSERT INTO public.audit VALUES (%s, %s, %s)",
            (_time(rnd), "first", _text(rnd) if rnd.random() < 0.9 else None),
        ),
    )


def _session_change(rnd: random.Random, rows: _Rows) -> Statement:
    if rows.sessions and rnd.random() < 0.08:
        return _made(rows, ("TRUNCATE public.sessions", ()))
    key = rnd.randint(1, 10**12)
    while key in rows.sessions:
        key = rnd.randint(1, 10**12)
    return _made(
        rows, ("INSERT INTO public.sessions VALUES (%s, %s, %s)", (key, f"{rnd.getrandbits(128):032x}", _time(rnd)))
    )


def _exact(rnd: random.Random, digits: int, scale: int) -> Decimal:
    """A number with ``digits`` integer digits (most of them at the limit) and ``scale`` fraction digits."""
    if rnd.random() < 0.3:
        whole = 10**digits - 1 if rnd.random() < 0.5 else rnd.randint(10 ** (digits - 1), 10**digits - 1)
        fraction = 10**scale - 1 if rnd.random() < 0.5 else rnd.randint(0, 10**scale - 1)
    else:
        whole, fraction = rnd.randint(0, 10**6), rnd.randint(0, 10**scale - 1)
    sign = "-" if rnd.random() < 0.4 else ""
    return Decimal(f"{sign}{whole}.{fraction:0{scale}d}") if scale else Decimal(f"{sign}{whole}")


def _measure_values(rnd: random.Random) -> tuple:
    """The non-key columns of a measures row: exact numbers and times at their edges, often."""
    edge = rnd.random() < 0.4
    at = rnd.choice(_EDGE_TIMES) if edge else _time(rnd)
    local = at.replace(tzinfo=None, microsecond=at.microsecond // 1000 * 1000)
    day = rnd.choice(_EDGE_DAYS) if edge else at.date()
    clock = (
        rnd.choice([time(0, 0), time(23, 59, 59, 999000), time(12, 0, 0, 1000)])
        if edge
        else time(rnd.randint(0, 23), rnd.randint(0, 59), rnd.randint(0, 59), rnd.randint(0, 999) * 1000)
    )
    big = (
        _exact(rnd, rnd.choice([30, 45, 60]), rnd.choice([0, 5, 20]))
        if rnd.random() < 0.7
        else Decimal(rnd.choice(["0.000000000000000000000000000000000000000001", "-1E+40", "0", "123.4500"]))
    )
    counts = None if rnd.random() < 0.2 else [rnd.randint(-(2**31), 2**31 - 1) for _ in range(rnd.randint(0, 4))]
    doc = None if rnd.random() < 0.3 else json.dumps({"a": [1, 2.5, None], "b": {"c": _text(rnd)}}, ensure_ascii=False)
    raw = None if rnd.random() < 0.3 else rnd.randbytes(rnd.randint(0, 16))
    return (_exact(rnd, 28, 10), big, at, local, day, clock, _text(rnd), rnd.random() < 0.5, counts, doc, raw)


def _measure_change(rnd: random.Random, rows: _Rows) -> Statement:
    live = sorted(rows.measures)
    if not live or rnd.random() < 0.35:
        key = rnd.randint(1, 10**6)
        while key in rows.measures:
            key = rnd.randint(1, 10**6)
        return _made(
            rows,
            (
                "INSERT INTO public.measures VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s::jsonb, %s)",
                (key, *_measure_values(rnd)),
            ),
        )
    key = rnd.choice(live)
    roll = rnd.random()
    if roll < 0.15:
        return _made(rows, ("DELETE FROM public.measures WHERE id = %s", (key,)))
    if roll < 0.25:
        new = rnd.randint(1, 10**6)
        while new in rows.measures:
            new = rnd.randint(1, 10**6)
        return _made(rows, ("UPDATE public.measures SET id = %s WHERE id = %s", (new, key)))
    values = _measure_values(rnd)
    return (
        "UPDATE public.measures SET amount = %s, big = %s, at = %s, local_at = %s, day = %s, clock = %s WHERE id = %s",
        (*values[:6], key),
    )


def _large_text(rnd: random.Random, size: int) -> str:
    return "".join(rnd.choices(string.ascii_letters + " äöü東", k=size))


def _document_change(rnd: random.Random, rows: _Rows) -> Statement:
    live = sorted(rows.documents)
    if not live or rnd.random() < 0.3:
        key = rnd.randint(1, 10**5)
        while key in rows.documents:
            key = rnd.randint(1, 10**5)
        lines = None if rnd.random() < 0.2 else [_large_text(rnd, 400) for _ in range(rnd.randint(1, 12))]
        return _made(
            rows,
            (
                "INSERT INTO public.documents VALUES (%s, %s, %s, %s, %s, %s)",
                (
                    key,
                    _text(rnd),
                    1,
                    None if rnd.random() < 0.2 else _large_text(rnd, 3000),
                    None if rnd.random() < 0.2 else rnd.randbytes(rnd.choice([10, 4000])),
                    lines,
                ),
            ),
        )
    key = rnd.choice(live)
    roll = rnd.random()
    if roll < 0.1:
        return _made(rows, ("DELETE FROM public.documents WHERE id = %s", (key,)))
    if roll < 0.25:
        return (
            "UPDATE public.documents SET body = %s, version = version + 1 WHERE id = %s",
            (_large_text(rnd, 2500), key),
        )
    return ("UPDATE public.documents SET title = %s, version = version + 1 WHERE id = %s", (_text(rnd), key))
