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

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import duckdb
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from .capture import Capture
from .duckdb_scans import scan_batches
from .frame import find_table, table_names
from .row_images import key_of, parse_image
from .sql_literals import re2_literal, sql_text

__all__ = ["Keys", "with_keys", "given_keys", "key_columns_given", "tables_keyed", "key_texts", "key_text_array"]

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
    :class:`~cdckit.capture.Capture` gives a capture. A table name that
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
    befores, afters = (_image_texts(out[c]) for c in ("before", "after"))
    from_before = out["op"].isin(list(KEY_FROM_BEFORE)).to_numpy()  # whose key is read from its before image
    named = names.to_numpy()
    place = np.full(len(out), -1, dtype=np.int32)  # each row's table's place in wanted (-1: none)
    for number, table in enumerate(wanted):
        place[named == table] = number
    # DuckDB reads each table's rows where they are (a filter, in the rows' order): no image is copied
    images = pa.table({"before": befores, "after": afters, "from_before": from_before, "place": place})
    read_keys = []
    for number, (table, columns) in enumerate(wanted.items()):
        positions = (place == number).nonzero()[0]

        def images_at(rows: np.ndarray, at: np.ndarray = positions) -> pa.Array:
            return pc.if_else(from_before[at[rows]], befores.take(at[rows]), afters.take(at[rows]))

        read = _read_key_texts(images, _IMAGE_READ, f"place = {number}", columns, images_at)
        named_once = np.empty(1, dtype=object)
        named_once[0] = list(columns)
        key_columns[positions] = np.repeat(named_once, len(positions))  # one list, as a decoder shares it
        read_keys.append((positions, read))
        if strict and read.null_count == len(read):
            here = (befores.take(positions).to_pylist(), afters.take(positions).to_pylist())
            if _has_images(*here):
                raise ValueError(
                    f"keys: no image of {table} holds all of its key columns {columns}; its columns: "
                    f"{', '.join(_columns_of(*here))}"
                )
    out["key_columns"] = pd.Series(key_columns, index=out.index, dtype=events["key_columns"].dtype)
    out["key"] = _keys_replaced(out["key"], read_keys)
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


def _image_texts(images: pd.Series) -> pa.Array | pa.ChunkedArray:
    """An image column as Arrow text; a value that is no text (a frame built by hand) counts as no image.

    >>> _image_texts(pd.Series(['{"id":1}', None, {"id": 2}])).to_pylist()
    ['{"id":1}', None, None]
    """
    try:
        return pa.array(images, pa.string(), from_pandas=True)
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return pa.array([image if isinstance(image, str) else None for image in images], pa.string())


def _keys_replaced(keys: pd.Series, read: list[tuple[np.ndarray, pa.Array]]) -> pd.Series:
    """``keys`` with the rows at each entry's positions set to its texts, in ``keys``' own dtype; put together in
    Arrow where that is pandas' Arrow string type (no Python string made), else value by value.

    >>> old = pd.Series(["[1]", None, "[3]"], dtype=pd.StringDtype("pyarrow"))
    >>> _keys_replaced(old, [(np.array([1]), pa.array(["[2]"]))]).tolist()
    ['[1]', '[2]', '[3]']
    """
    dtype = keys.dtype
    if isinstance(dtype, pd.StringDtype) and dtype.storage == "pyarrow":
        texts, taken = [_image_texts(keys)], np.arange(len(keys))  # row i takes the i-th of texts, end to end
        for positions, array in read:
            taken[positions] = sum(len(t) for t in texts) + np.arange(len(positions))
            texts.append(array)
        joined = pa.concat_arrays([t.combine_chunks() if isinstance(t, pa.ChunkedArray) else t for t in texts])
        return pd.Series(dtype.construct_array_type()(joined.take(taken)), index=keys.index, dtype=dtype)
    each = keys.astype(object).to_numpy(copy=True)
    for positions, array in read:
        each[positions] = array.to_pylist()
    return pd.Series(each, index=keys.index, dtype=dtype)


def _has_images(befores: Any, afters: Any) -> bool:
    """Whether any image (text) is among ``befores`` and ``afters``."""
    return any(isinstance(image, str) for image in (*befores, *afters))


def _columns_of(befores: Any, afters: Any, most: int = 200) -> list[str]:
    """The column names of the first ``most`` images of ``befores`` and ``afters``, in first-seen order."""
    seen: dict[str, None] = {}
    for image in [i for i in (*afters, *befores) if isinstance(i, str)][:most]:
        parsed = parse_image(image)
        if parsed is not None:
            seen.update(dict.fromkeys(parsed))
    return list(seen)


def key_texts(images: pa.Array | pa.ChunkedArray | Sequence[str | None], columns: list[str]) -> list[str | None]:
    """The key text of each image in ``columns``, as a list (see :func:`key_text_array`).

    >>> key_texts(['{"id":7,"n":"a"}', None], ["id"])
    ['[7]', None]
    """
    return key_text_array(images, columns).to_pylist()


def key_text_array(images: pa.Array | pa.ChunkedArray | Sequence[str | None], columns: list[str]) -> pa.Array:
    r"""The key text of each image (a JSON object text, or None) in ``columns``, as
    ``key_of(parse_image(image), columns)`` of :mod:`cdckit.row_images` gives it (None for no image or one that
    is no object); errors as it raises them.

    DuckDB reads the key values of all the images in one pass where each is a whole number of up to 18 digits or
    a string with nothing to escape, written once in an image without ``\u`` or ``\/`` escapes (a name written
    twice: orjson keeps the last, DuckDB the first); Python reads every other image.

    >>> key_text_array(['{"id":7,"n":"a"}', '{"n":"a"}', None, '{"id":1.50}'], ["id"]).to_pylist()
    ['[7]', None, None, '[1.5]']
    >>> key_text_array(['{"a":"x","b":-2}', '{"a":"tab\\there","b":2}'], ["a", "b"]).to_pylist()
    ['["x",-2]', '["tab\\there",2]']
    """
    if isinstance(images, pa.ChunkedArray):
        array = images.combine_chunks()
    else:
        array = images if isinstance(images, pa.Array) else pa.array(images, pa.string(), from_pandas=True)
    return _read_key_texts(pa.table({"image": array}), "image", "true", columns, array.take)


#: The image whose key :func:`with_keys` reads (its table's columns: before, after, from_before, place).
_IMAGE_READ = "CASE WHEN from_before THEN before ELSE after END"


def _read_key_texts(
    table: pa.Table, image: str, where: str, columns: list[str], images_at: Callable[[np.ndarray], pa.Array]
) -> pa.Array:
    """The key texts of the images the SQL ``image`` gives in the rows of ``table`` that ``where`` keeps, in their
    order (:func:`key_text_array`): DuckDB reads them, Python those it leaves (``images_at``: the images of
    those rows, numbered among the rows kept)."""
    con = duckdb.connect()
    try:
        con.register("images", scan_batches(table))  # in input order
        read = con.sql(_key_text_sql(columns, image, where)).to_arrow_table().column(0).combine_chunks()
        read = read.cast(pa.string())  # as Arrow types the keys it is joined with, whatever DuckDB hands back
    finally:
        con.close()
    unread = np.flatnonzero(read.is_null().to_numpy(zero_copy_only=False))  # Python reads these (and raises)
    if len(unread):
        texts = read.to_numpy(zero_copy_only=False)
        for i, text in zip(unread.tolist(), images_at(unread).to_pylist()):
            texts[i] = key_of(parse_image(text), columns)
        read = pa.array(texts, pa.string(), from_pandas=True)
    return pc.if_else(pc.equal(read, ""), pa.scalar(None, pa.string()), read)  # "": not every key column


def _key_text_sql(columns: list[str], image: str = "image", where: str = "true") -> str:
    """SQL over ``images``: per row that ``where`` keeps, the key text of its ``image`` (SQL), ``''`` for an image
    lacking a key column, NULL where Python is to read it (see :func:`key_text_array`)."""
    pointers = [sql_text("/" + c.replace("~", "~0").replace("/", "~1")) for c in columns]
    written = [json.dumps(c, ensure_ascii=False) for c in columns]  # a name as the image writes it
    once = " AND ".join(  # the name in the image, and not twice (a regular expression scans without copying)
        f"contains(image, {sql_text(w)}) AND NOT regexp_matches(image, {sql_text(_twice(w))})" for w in written
    )
    parts = [f"parts[{i}]" for i in range(1, len(columns) + 1)]
    texts = [  # the value's JSON text where orjson writes it so: a whole number, or a string with no escape
        f"CASE WHEN json_type({p}) IN ('BIGINT', 'UBIGINT') AND regexp_full_match({p}::VARCHAR, "
        f"'0|-?[1-9][0-9]{{0,17}}') THEN {p}::VARCHAR WHEN json_type({p}) = 'VARCHAR' "
        f"AND NOT regexp_matches({p}::VARCHAR, '[\\x00-\\x1f\\\\]|.\".') THEN {p}::VARCHAR END"
        for p in parts
    ]
    return f"""
        SELECT CASE WHEN parts IS NULL OR NOT starts_with(image, '{{') OR contains(image, '\\u')
                         OR contains(image, '\\/') OR NOT ({once}) THEN NULL
                    WHEN {" OR ".join(f"{p} IS NULL" for p in parts)} THEN ''
                    ELSE '[' || {" || ',' || ".join(texts)} || ']' END
        FROM (SELECT image, try(json_extract(image, [{", ".join(pointers)}])) AS parts
              FROM (SELECT {image} AS image FROM images WHERE {where}))"""


def _twice(text: str) -> str:
    """An RE2 pattern that matches where ``text`` is written twice, the second after the first ends.

    >>> [duckdb.execute("SELECT regexp_matches(?, ?)", [t, _twice('"id"')]).fetchone()[0]
    ...  for t in ('{"id":1,"id":2}', '{"id":1,"x":"i"}')]
    [True, False]
    """
    literal = re2_literal(text)
    return f"{literal}(?s:.*){literal}"
