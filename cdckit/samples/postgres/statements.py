"""The statements of the seeded PostgreSQL workload (:mod:`cdckit.samples.postgres.workload`): for each table,
a change that succeeds on the rows live at that point (inserts, updates that change keys or leave TOASTed
values unchanged, deletes, truncates), with values at the edges of their types.

>>> import random
>>> rows = LiveRows()
>>> sql, args = insert_customer(random.Random(1), 7)
>>> sql.startswith("INSERT INTO public.customers"), args[0]
(True, 7)
>>> replayed(rows, [(sql, args)]).customers, rows.customers
({7}, set())
"""

from __future__ import annotations

import json
import random
import string
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta, timezone
from decimal import Decimal
from zoneinfo import ZoneInfo

__all__ = ["T0", "LiveRows", "Statement", "insert_customer", "next_statement", "random_time", "replayed"]

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
#: The first instant of the workload's times.
T0 = datetime(2024, 5, 1, 9, 30, tzinfo=timezone.utc)

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

#: A statement and its arguments, as psycopg runs it.
Statement = tuple[str, tuple]


@dataclass
class LiveRows:
    """The keys the first session sees live, kept to write statements that succeed."""

    customers: set[int] = field(default_factory=set)
    lines: set[tuple[int, int]] = field(default_factory=set)
    skus: set[str] = field(default_factory=set)
    audit: int = 0
    sessions: set[int] = field(default_factory=set)
    measures: set[int] = field(default_factory=set)
    documents: set[int] = field(default_factory=set)

    def copy(self) -> LiveRows:
        return LiveRows(
            set(self.customers),
            set(self.lines),
            set(self.skus),
            self.audit,
            set(self.sessions),
            set(self.measures),
            set(self.documents),
        )


def next_statement(rnd: random.Random, rows: LiveRows) -> Statement:
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


def replayed(rows: LiveRows, statements: list[Statement]) -> LiveRows:
    """``rows`` after ``statements`` (the part of a transaction kept when it rolls back to a savepoint)."""
    out = rows.copy()
    for sql, args in statements:
        _account(out, sql, args)
    return out


def _account(rows: LiveRows, sql: str, args: tuple) -> None:
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


def _made(rows: LiveRows, statement: Statement) -> Statement:
    _account(rows, *statement)
    return statement


def random_time(rnd: random.Random) -> datetime:
    return T0 + timedelta(seconds=rnd.randint(0, 90 * 86400), microseconds=rnd.randint(0, 999_999))


def _text(rnd: random.Random) -> str:
    return rnd.choice(_WORDS) + " " + "".join(rnd.choices(string.ascii_lowercase, k=rnd.randint(0, 12)))


def insert_customer(rnd: random.Random, key: int) -> Statement:
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
            random_time(rnd),
            tags,
            None if prefs is None else json.dumps(prefs, ensure_ascii=False),
            None if rnd.random() < 0.3 else rnd.randbytes(rnd.choice([rnd.randint(0, 40), 3000])),
            rnd.choice([True, False, None]),
            notes,
        ),
    )


def _customer_change(rnd: random.Random, rows: LiveRows) -> Statement:
    live = sorted(rows.customers)
    if not live or rnd.random() < 0.35:
        key = rnd.randint(1, 5000)
        while key in rows.customers:
            key = rnd.randint(1, 5000)
        return _made(rows, insert_customer(rnd, key))
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
            ("joined", random_time(rnd)),
        ]
    )
    return ("UPDATE public.customers SET " + column + " = %s WHERE id = %s", (value, key))


def _line_change(rnd: random.Random, rows: LiveRows) -> Statement:
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


def _inventory_change(rnd: random.Random, rows: LiveRows) -> Statement:
    live = sorted(rows.skus)
    if not live or rnd.random() < 0.3:
        sku = f"SKU-{rnd.randint(1, 400):04d}"
        while sku in rows.skus:
            sku = f"SKU-{rnd.randint(1, 400):04d}"
        return _made(
            rows,
            (
                "INSERT INTO public.inventory VALUES (%s, %s, %s, %s)",
                (sku, rnd.randint(0, 500), rnd.choice([rnd.random() * 100, 0.1, 1e-7, None]), random_time(rnd)),
            ),
        )
    sku = rnd.choice(live)
    if rnd.random() < 0.1:
        return _made(rows, ("DELETE FROM public.inventory WHERE sku = %s", (sku,)))
    return (
        "UPDATE public.inventory SET qty = %s, price = %s, updated = %s WHERE sku = %s",
        (rnd.randint(0, 500), round(rnd.random() * 100, 3), random_time(rnd), sku),
    )


def _audit_change(rnd: random.Random, rows: LiveRows) -> Statement:
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
            (random_time(rnd), "first", _text(rnd) if rnd.random() < 0.9 else None),
        ),
    )


def _session_change(rnd: random.Random, rows: LiveRows) -> Statement:
    if rows.sessions and rnd.random() < 0.08:
        return _made(rows, ("TRUNCATE public.sessions", ()))
    key = rnd.randint(1, 10**12)
    while key in rows.sessions:
        key = rnd.randint(1, 10**12)
    return _made(
        rows,
        ("INSERT INTO public.sessions VALUES (%s, %s, %s)", (key, f"{rnd.getrandbits(128):032x}", random_time(rnd))),
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
    at = rnd.choice(_EDGE_TIMES) if edge else random_time(rnd)
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


def _measure_change(rnd: random.Random, rows: LiveRows) -> Statement:
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


def _document_change(rnd: random.Random, rows: LiveRows) -> Statement:
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
