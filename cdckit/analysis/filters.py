"""Choosing events: by table, op, key values and event time (what ``cdckit ... --table/--op/--key/--since/--until`` do).

One rule for the library and the command line. :func:`selection` checks the
options and returns a :class:`Selection` (so that a bad value is found before
any decoding); :func:`select` applies them to a frame at once.

- ``table``: a name or several; each is the full ``database.table`` name or
  the bare table name, matched as :func:`cdckit.frame.find_table` matches
  (a name no event has, or a bare name two databases share, raises
  ``KeyError`` naming the tables there are).
- ``op``: canonical op names (:data:`cdckit.OPS`); another name raises
  ``ValueError`` suggesting the nearest.
- ``key``: the key values, matched exactly: the ``key`` column holds a JSON
  array (``[3]``, ``["a",1]``), and a value given as a number or as text
  matches either (``3`` and ``"3"`` both match ``[3]`` and ``["3"]``, never
  ``[13]`` or ``[30]``). A composite key is a list or tuple of values, or a
  text: values between commas (``"3,7"``) or a JSON array (``'[3,"x,y"]'``,
  for values that hold a comma). Several keys: a ``set`` of them.
- ``since`` / ``until``: times (ISO text, ``datetime``, ``Timestamp``) or
  dates; zone-less means UTC. ``since`` keeps events at or after it,
  ``until`` events before it (a half-open interval: ``since="2024-01-01",
  until="2024-01-02"`` is that one day); events without an ``event_time``
  are left out when either is given.

The options combine with *and*; the values of one option with *or*. The
result keeps the frame's ``attrs`` (the read's quarantine and report, which
still describe the whole read).

>>> import cdckit
>>> events = cdckit.read(cdckit.samples.path("canal/shop"))
>>> chosen = select(events, table="customers", key=3)
>>> chosen["key"].unique().tolist(), chosen.attrs["report"] is events.attrs["report"]
(['[3]'], True)
>>> len(select(events, op="delete", since="2024-01-01")) == int((events["op"] == "delete").sum())
True
"""

from __future__ import annotations

import datetime as dt
import difflib
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
import orjson
import pandas as pd

from ..errors import KeylessTableError
from ..frame import CHANGE_OPS, OPS, find_table, table_names

__all__ = [
    "Selection",
    "selection",
    "select",
    "key_mask",
    "key_coverage",
    "key_matches_nothing",
    "parse_key",
    "parse_time",
    "parse_ops",
]


@dataclass(frozen=True)
class Selection:
    """Checked filter options; call :meth:`apply` on a frame. ``None`` means "no filter on this"."""

    tables: tuple[str, ...] | None = None
    ops: tuple[str, ...] | None = None
    keys: frozenset[tuple[str, ...]] | None = None
    since: pd.Timestamp | None = None
    until: pd.Timestamp | None = None

    def __bool__(self) -> bool:
        """True when some option is set (the selection may leave events out)."""
        return any(v is not None for v in (self.tables, self.ops, self.keys, self.since, self.until))

    def apply(self, events: pd.DataFrame, names: Iterable[str] | None = None) -> pd.DataFrame:
        """The events chosen, in their order (index reset), with ``events.attrs`` kept.

        ``names``: the table names the ``tables`` are looked up in (default:
        those of ``events``); a reader that filters a capture piece by piece
        passes the names of the whole capture.

        >>> import cdckit
        >>> events = cdckit.read(cdckit.samples.path("canal/shop"))
        >>> sorted(selection(op=["insert", "delete"]).apply(events)["op"].unique())
        ['delete', 'insert']
        """
        mask = np.ones(len(events), dtype=bool)
        if self.tables is not None:
            shown = table_names(events)
            known = shown.dropna().unique() if names is None else names
            wanted = {find_table(known, name) for name in self.tables}
            mask &= shown.isin(wanted).fillna(False).to_numpy(dtype=bool)
        if self.ops is not None:
            mask &= events["op"].isin(self.ops).fillna(False).to_numpy(dtype=bool)
        if self.keys is not None:
            mask &= _key_mask(events["key"], self.keys)
        if self.since is not None or self.until is not None:
            times = events["event_time"]
            known = times.notna().to_numpy()
            if self.since is not None:
                mask &= known & (times >= self.since).fillna(False).to_numpy(dtype=bool)
            if self.until is not None:
                mask &= known & (times < self.until).fillna(False).to_numpy(dtype=bool)
        chosen = events.loc[mask].reset_index(drop=True)
        chosen.attrs = dict(events.attrs)
        return chosen


def selection(
    table: str | Iterable[str] | None = None,
    op: str | Iterable[str] | None = None,
    key: Any = None,
    since: Any = None,
    until: Any = None,
) -> Selection:
    """The options checked (see the module notes); ``ValueError`` names a bad one.

    Tables are checked against the events only when applied.

    >>> s = selection(table="customers", op="update", key="3,x", since="2024-05-01")
    >>> s.tables, s.ops, sorted(s.keys), s.since
    (('customers',), ('update',), [('3', 'x')], Timestamp('2024-05-01 00:00:00+0000', tz='UTC'))
    >>> selection(op="updates")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: unknown op 'updates' (did you mean update?); ops: insert, update, delete, read, truncate, ddl, ...
    """
    tables = None if table is None else _names(table)
    keys = (
        None if key is None else frozenset(parse_key(k) for k in (key if isinstance(key, (set, frozenset)) else [key]))
    )
    since_at = None if since is None else parse_time(since)
    until_at = None if until is None else parse_time(until)
    return Selection(tables, None if op is None else parse_ops(op), keys, since_at, until_at)


def select(
    events: pd.DataFrame,
    table: str | Iterable[str] | None = None,
    op: str | Iterable[str] | None = None,
    key: Any = None,
    since: Any = None,
    until: Any = None,
) -> pd.DataFrame:
    """The events of ``table`` with ``op`` and ``key`` between ``since`` and ``until`` (see the module notes).

    >>> import cdckit
    >>> events = cdckit.read(cdckit.samples.path("canal/shop"))
    >>> select(events, table="shop.customers", key="3")["op"].tolist()[:2]
    ['insert', 'update']
    >>> len(select(events, key=["3"])) == len(select(events, key=3)), len(select(events, key=[13])) > 0
    (True, True)

    ``key`` on tables whose changes carry no key (a capture of values only) matches nothing, whatever the
    rows hold: that is :class:`~cdckit.errors.KeylessTableError`, which says how to give or infer the keys.
    """
    chosen = selection(table, op, key, since, until)
    found = chosen.apply(events)
    if chosen.keys is not None and found.empty:
        scope = Selection(tables=chosen.tables).apply(events) if chosen.tables is not None else events
        unanswerable = key_matches_nothing(*key_coverage(scope))
        if unanswerable is not None:
            raise unanswerable
    return found


def key_matches_nothing(keyed: set[str], keyless: set[str]) -> KeylessTableError | None:
    """Why a key chose no event, where that is because the tables looked in carry no key at all (``keyed`` and
    ``keyless`` as :func:`key_coverage` gives them): the error that says so and how to give or infer the keys;
    None where some table carries keys (the key is simply not there).

    >>> str(key_matches_nothing(set(), {"shop.items"})).split(",")[0]
    'key= matches nothing: shop.items has no key (its changes carry none)'
    >>> key_matches_nothing({"shop.orders"}, {"shop.items"}) is None
    True
    """
    if not keyless or keyed:
        return None
    tables = sorted(keyless)
    its, has = ("its", "has") if len(tables) == 1 else ("their", "have")
    return KeylessTableError(
        tables, what=f"key= matches nothing: {', '.join(tables)} {has} no key ({its} changes carry none)"
    )


def key_coverage(events: pd.DataFrame) -> tuple[set[str], set[str]]:
    """The tables some row change of which carries a key, and the tables none of whose row changes does.

    >>> import cdckit
    >>> keyed, keyless = key_coverage(cdckit.read(cdckit.samples.path("canal/shop")))
    >>> sorted(keyed), keyless
    (['shop.customers', 'shop.order_items'], set())
    """
    changes = events.loc[events["op"].isin(CHANGE_OPS).to_numpy(dtype=bool), ["database", "schema", "table", "key"]]
    names = table_names(changes)
    carried = changes["key"].notna().to_numpy(dtype=bool)
    keyed = set(names[carried].dropna())
    return keyed, set(names[~carried].dropna()) - keyed


def parse_ops(op: str | Iterable[str]) -> tuple[str, ...]:
    """Canonical op names from a name, a comma list or several; ``ValueError`` for another name.

    >>> parse_ops("insert,delete"), parse_ops(["read"])
    (('insert', 'delete'), ('read',))
    """
    ops = _names(op)
    for name in ops:
        if name not in OPS:
            near = difflib.get_close_matches(name, OPS, n=1)
            hint = f" (did you mean {near[0]}?)" if near else ""
            raise ValueError(f"unknown op {name!r}{hint}; ops: {', '.join(OPS)}")
    return ops


def parse_key(key: Any) -> tuple[str, ...]:
    """A key as the texts of its values, the form keys are compared in.

    A text is values between commas or a JSON array; a list or tuple is a
    composite key; anything else is one value. Numbers and text compare as
    text (``3`` is ``"3"``, and a value in double quotes is the text inside);
    JSON ``null``, ``true`` and ``false`` as those words.

    >>> parse_key(3), parse_key("3"), parse_key('"3"'), parse_key("3, 7"), parse_key('"x,y", 3')
    (('3',), ('3',), ('3',), ('3', '7'), ('x,y', '3'))
    >>> parse_key((1.0, None))
    ('1', 'null')
    >>> parse_key("[3,")
    Traceback (most recent call last):
    ...
    ValueError: key '[3,' starts with [ but is not a JSON array: unexpected end of data: line 1 column 4 (char 3)
    """
    if isinstance(key, str):
        text = key.strip()
        if text.startswith("["):
            try:
                values = orjson.loads(text)
            except orjson.JSONDecodeError as err:
                raise ValueError(f"key {key!r} starts with [ but is not a JSON array: {err.args[0]}") from None
            if not isinstance(values, list):
                raise ValueError(f"key {key!r} is not a JSON array")
        else:
            values = _quoted_values(text) if '"' in text else [part.strip() for part in text.split(",")]
        if not values or values == [""]:
            raise ValueError("a key needs at least one value")
        return tuple(_value_text(v) for v in values)
    if isinstance(key, (list, tuple)):
        if not key:
            raise ValueError("a key needs at least one value")
        return tuple(_value_text(v) for v in key)
    return (_value_text(key),)


def parse_time(value: Any) -> pd.Timestamp:
    """A time or date as a UTC ``Timestamp``; zone-less means UTC. ``ValueError`` when it is neither.

    >>> parse_time("2024-05-01"), parse_time("2024-05-01T12:00+02:00")
    (Timestamp('2024-05-01 00:00:00+0000', tz='UTC'), Timestamp('2024-05-01 10:00:00+0000', tz='UTC'))
    >>> parse_time("yesterday")
    Traceback (most recent call last):
    ...
    ValueError: not an ISO time or date: 'yesterday' (for example 2024-05-01 or 2024-05-01T12:30:00+02:00)
    """
    if isinstance(value, str):
        try:
            value = dt.datetime.fromisoformat(value.strip())
        except ValueError:
            raise ValueError(
                f"not an ISO time or date: {value!r} (for example 2024-05-01 or 2024-05-01T12:30:00+02:00)"
            ) from None
    elif isinstance(value, dt.date) and not isinstance(value, dt.datetime):
        value = dt.datetime(value.year, value.month, value.day)
    elif not isinstance(value, (dt.datetime, pd.Timestamp)):
        raise ValueError(f"not a time or date: {value!r}")
    stamp = pd.Timestamp(value)
    return stamp.tz_localize("UTC") if stamp.tzinfo is None else stamp.tz_convert("UTC")


# ---------------------------------------------------------------- helpers


def _names(value: str | Iterable[str]) -> tuple[str, ...]:
    """Names from a text (a comma list) or an iterable of texts (each maybe a comma list)."""
    items = [value] if isinstance(value, str) else list(value)
    names = tuple(name.strip() for item in items for name in str(item).split(",") if name.strip())
    return names


def key_mask(keys: pd.Series, key: Any) -> np.ndarray:
    """True where the frame's ``key`` (a compact JSON array text) has exactly the values of ``key``.

    ``key`` is what :func:`parse_key` reads. A bad key is ``ValueError``.

    >>> key_mask(pd.Series(["[3]", "[13]", '["3"]', "[30]", None]), "3").tolist()
    [True, False, True, False, False]
    """
    return _key_mask(keys, frozenset([parse_key(key)]))


def _quoted_values(text: str) -> list[Any]:
    """Comma-separated values some of which are JSON strings (``"a,b", 1``); a part that is not JSON stays text."""
    try:
        return list(orjson.loads(f"[{text}]"))
    except orjson.JSONDecodeError:
        return [part.strip().strip('"') for part in text.split(",")]


def _value_text(value: Any) -> str:
    """One key value as text: text as it is, a whole number without ``.0``, others as compact JSON."""
    if isinstance(value, str):
        return value
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, (np.generic,)):
        return _value_text(value.item())
    try:
        return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS).decode()
    except TypeError:
        return str(value)


def _key_mask(keys: pd.Series, wanted: frozenset[tuple[str, ...]]) -> np.ndarray:
    """True where the key text (a JSON array) has the values of one of ``wanted`` (each distinct key parsed once)."""
    matching = []
    for text in keys.dropna().unique():
        try:
            values = orjson.loads(text)
        except orjson.JSONDecodeError:
            continue
        if isinstance(values, list) and tuple(_value_text(v) for v in values) in wanted:
            matching.append(text)
    return keys.isin(matching).fillna(False).to_numpy(dtype=bool)
