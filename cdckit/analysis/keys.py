"""Key columns the capture does not name, given by the analyst.

Some captures never say which columns are a table's primary key:
PostgreSQL's ``test_decoding`` plugin writes only column names, types and
values, and wal2json names the key only when asked (``include-pk``). Without
key columns, replay treats a table as a bag of rows, which cannot follow an
update whose before image is empty. :func:`with_keys` gives such events the
key columns the analyst knows, and the key of each row, as a dialect that
names them would have.

The key of an event is taken from its after image (insert, update, snapshot
read) or its before image (delete), as every dialect takes it; an event
whose image lacks a key column keeps no key.

The same keys can be given once to every entry point that takes events
(``keys=`` on :func:`cdckit.read`, :func:`cdckit.materialize`,
:func:`cdckit.scd2`, :func:`cdckit.history`, :func:`cdckit.explore`, the
report, and ``cdckit.spark``'s), and as ``--keys TABLE=COL,...`` to every
command that reads: each applies them with :func:`given_keys` (Spark frames
with :func:`cdckit.spark.keys.with_keys`, the same rule in Spark columns).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pandas as pd

from .. import values
from ..frame import find_table, table_names
from ..reading.capture import Capture

__all__ = ["Keys", "with_keys", "given_keys", "key_columns_given", "tables_keyed"]

#: What ``keys=`` takes: a table (``"schema.table"`` or the bare table name) -> its key column or columns.
Keys = Mapping[str, "Sequence[str] | str"]

#: Ops whose key is read from the before image; every other op reads the after image.
KEY_FROM_BEFORE = frozenset({"delete"})


def key_columns_given(keys: Keys) -> dict[str, list[str]]:
    """``keys`` checked, each table's columns as a list (a single column may be given as text).

    >>> key_columns_given({"customers": "id", "order_lines": ("order_id", "line_no")})
    {'customers': ['id'], 'order_lines': ['order_id', 'line_no']}
    >>> key_columns_given({"customers": []})
    Traceback (most recent call last):
    ValueError: keys: customers names no key column; give one or more column names
    """
    if not isinstance(keys, Mapping):
        raise ValueError(f"keys must map each table to its key column(s), as {{'customers': 'id'}}, not {keys!r}")
    given: dict[str, list[str]] = {}
    for table, columns in keys.items():
        listed = [columns] if isinstance(columns, str) else list(columns) if isinstance(columns, Iterable) else None
        if not isinstance(table, str) or not table:
            raise ValueError(f"keys: a table is named by its text (schema.table or the bare name), not {table!r}")
        if not listed:
            raise ValueError(f"keys: {table} names no key column; give one or more column names")
        if not all(isinstance(c, str) and c for c in listed):
            raise ValueError(f"keys: the key columns of {table} are column names (text), not {columns!r}")
        given[table] = listed
    return given


def tables_keyed(known: Iterable[Any], keys: Keys, strict: bool = True) -> dict[str, list[str]]:
    """The full table names of ``known`` that ``keys`` names, each with its key columns (both engines use it).

    ``strict``: a name in ``keys`` that matches no table (or several) raises ValueError naming the tables
    there are; otherwise it is skipped (a chunk of a read need not hold every table).

    >>> tables_keyed(["shop.customers", "shop.orders"], {"customers": "id"})
    {'shop.customers': ['id']}
    >>> tables_keyed(["shop.orders"], {"customer": "id"})
    Traceback (most recent call last):
    ValueError: keys names table 'customer', which is not in the events; tables: shop.orders
    """
    names = sorted({n for n in known if isinstance(n, str)})
    wanted: dict[str, list[str]] = {}
    for table, columns in key_columns_given(keys).items():
        try:
            wanted[find_table(names, table)] = columns
        except KeyError:
            if not strict:
                continue
            matches = [n for n in names if n.rsplit(".", 1)[-1] == table]
            if matches:
                raise ValueError(
                    f"keys names table {table!r}, which is ambiguous: {', '.join(matches)} (name it as schema.table)"
                ) from None
            raise ValueError(
                f"keys names table {table!r}, which is not in the events; tables: "
                f"{', '.join(names) if names else '(none)'}"
            ) from None
    return wanted


def with_keys(events: pd.DataFrame | Capture, keys: Keys, strict: bool = True) -> pd.DataFrame | Capture:
    """A copy of ``events`` whose rows of the tables named in ``keys`` have those key columns and keys.

    ``keys`` maps a table (``"schema.table"`` or the bare table name) to its
    key column or columns. Rows of other tables, and rows of these tables
    that already name key columns, are left as they are, except that a table
    named here gets the given columns on every row (what the analyst says
    wins). ``attrs`` (quarantine, report, column types) are kept; a
    :class:`~cdckit.reading.capture.Capture` gives a capture. A table name that
    matches no table raises ValueError naming those there are (``strict=False``
    skips it), as does a table none of whose images holds the key columns.

    >>> import cdckit
    >>> lines = ("BEGIN 7\\ntable public.t: INSERT: id[integer]:1 name[text]:'a'\\n"
    ...          "table public.t: UPDATE: id[integer]:1 name[text]:'b'\\nCOMMIT 7")
    >>> events = cdckit.read(lines, dialect="pg_test_decoding")
    >>> keyed = with_keys(events, {"t": "id"})
    >>> keyed.loc[keyed["op"] == "update", ["key_columns", "key"]].values.tolist()
    [[['id'], '[1]']]
    >>> cdckit.materialize(keyed)["public.t"].values.tolist()
    [[1, 'b']]
    """
    if isinstance(events, Capture):
        return events.replace(with_keys(events.events, keys, strict))
    names = table_names(events)
    wanted = tables_keyed(names.dropna().unique(), keys, strict)
    out = events.copy()
    out.attrs = dict(events.attrs)
    if not wanted:
        return out
    key_columns = out["key_columns"].astype(object).to_numpy(copy=True)
    key = out["key"].astype(object).to_numpy(copy=True)
    ops, befores, afters = out["op"].to_numpy(), out["before"].to_numpy(), out["after"].to_numpy()
    named = names.to_numpy()
    for table, columns in wanted.items():
        positions = (named == table).nonzero()[0]
        found = 0
        for position in positions.tolist():
            image = befores[position] if ops[position] in KEY_FROM_BEFORE else afters[position]
            key_columns[position] = list(columns)
            key[position] = values.key_of(values.loads(image), columns) if isinstance(image, str) else None
            found += key[position] is not None
        if strict and not found and _has_images(befores[positions], afters[positions]):
            raise ValueError(
                f"keys: no image of {table} holds all of its key columns {columns}; its columns: "
                f"{', '.join(_columns_of(befores[positions], afters[positions]))}"
            )
    out["key_columns"] = pd.Series(key_columns, index=out.index, dtype=events["key_columns"].dtype)
    out["key"] = pd.Series(key, index=out.index, dtype=events["key"].dtype)
    return out


def given_keys(events: pd.DataFrame | Capture, keys: Keys | None) -> pd.DataFrame | Capture:
    """``events`` with the key columns ``keys`` gives (:func:`with_keys`), or ``events`` themselves when none are
    given: what every entry point that takes ``keys=`` calls first.

    >>> import cdckit
    >>> events = cdckit.read(cdckit.samples.path("canal/shop"))
    >>> given_keys(events, None) is events
    True
    """
    return events if not keys else with_keys(events, keys)


def _has_images(befores: Any, afters: Any) -> bool:
    """Whether any image (text) is among ``befores`` and ``afters``."""
    return any(isinstance(image, str) for image in (*befores, *afters))


def _columns_of(befores: Any, afters: Any, most: int = 200) -> list[str]:
    """The column names of the first ``most`` images of ``befores`` and ``afters``, in first-seen order."""
    seen: dict[str, None] = {}
    for image in [i for i in (*afters, *befores) if isinstance(i, str)][:most]:
        parsed = values.loads(image)
        if isinstance(parsed, dict):
            seen.update(dict.fromkeys(parsed))
    return list(seen)
