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
"""

from __future__ import annotations

from typing import Mapping, Sequence

import pandas as pd

from . import values
from .ordering._shared import table_names
from .replay import find_table

__all__ = ["with_keys"]

#: Ops whose key is read from the before image; every other op reads the after image.
_KEY_FROM_BEFORE = frozenset({"delete"})


def with_keys(events: pd.DataFrame, keys: Mapping[str, Sequence[str] | str]) -> pd.DataFrame:
    """A copy of ``events`` whose rows of the tables named in ``keys`` have those key columns and keys.

    ``keys`` maps a table (``"schema.table"`` or the bare table name) to its
    key column or columns. Rows of other tables, and rows of these tables
    that already name key columns, are left as they are, except that a table
    named here gets the given columns on every row (what the analyst says
    wins). ``attrs`` (quarantine, report, column types) are kept.

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
    names = table_names(events)
    known = names.dropna().unique().tolist()
    wanted: dict[str, list[str]] = {}
    for table, columns in keys.items():
        full = find_table(known, table) if known else table
        wanted[full] = [columns] if isinstance(columns, str) else list(columns)
    out = events.copy()
    out.attrs = dict(events.attrs)
    if not wanted:
        return out
    key_columns = out["key_columns"].astype(object).to_numpy(copy=True)
    key = out["key"].astype(object).to_numpy(copy=True)
    ops, befores, afters = out["op"].to_numpy(), out["before"].to_numpy(), out["after"].to_numpy()
    for position, name in enumerate(names.to_numpy()):
        columns = wanted.get(name)
        if columns is None:
            continue
        image = befores[position] if ops[position] in _KEY_FROM_BEFORE else afters[position]
        key_columns[position] = list(columns)
        key[position] = values.key_of(values.loads(image), columns) if isinstance(image, str) else None
    out["key_columns"] = pd.Series(key_columns, index=out.index, dtype=events["key_columns"].dtype)
    out["key"] = pd.Series(key, index=out.index, dtype=events["key"].dtype)
    return out
