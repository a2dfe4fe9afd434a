"""PostgreSQL values as the logical decoding plugins write them, shared by the ``wal2json`` and
``pg_test_decoding`` dialects.

Both plugins name each column's type as PostgreSQL prints it
(``format_type``: ``integer``, ``numeric(38,10)``, ``character varying(20)``,
``timestamp with time zone``, ``integer[]``, a user type as ``public.mood`` or
``"My Type"``). :func:`kind_of` reads such a name as a kind of
:mod:`cdckit.column_types`. Values come as PostgreSQL's text output
(``test_decoding``) or as JSON (``wal2json``: numbers and booleans as JSON
values, everything else as that same text, except ``bytea`` hex without its
``\\x``). The one rule for both: :func:`value_from_json` turns a JSON value
back into the text PostgreSQL printed, and :func:`value_from_text` makes the
image value of that text, so one datum gives one image value whichever plugin
sent it:

- integers are ints (beyond 64 bits: their digit text, as :func:`cdckit.values.loads` keeps them);
- ``real`` / ``double precision`` are floats, but ``NaN``, ``Infinity`` and ``-Infinity`` stay text;
- ``numeric`` is an int or float only when that keeps every digit, else its exact text;
- ``boolean`` is a bool;
- ``bytea`` is Base64 text (the contract: binary stays Base64);
- ``json`` / ``jsonb`` stay the JSON text as PostgreSQL printed it;
- arrays are lists (``NULL`` elements None), elements converted by these same rules;
- anything else (times, dates, uuid, text, user types) is the text unchanged.

>>> value_from_text("{1,NULL,3}", "integer[]"), value_from_json("{1,NULL,3}", "integer[]")
([1, None, 3], [1, None, 3])
>>> value_from_text("\\\\x00ff", "bytea"), value_from_json("00ff", "bytea")
('AP8=', 'AP8=')
>>> value_from_json("12345678901234567890.1234567890", "numeric(38,10)")
'12345678901234567890.1234567890'
>>> lsn_seq("0/16B2F48")
'00000000/016B2F48'
"""

from __future__ import annotations

import base64
import functools
import re
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from .. import values

__all__ = [
    "KINDS",
    "kind_of",
    "element_type",
    "value_from_text",
    "value_from_json",
    "value_to_text",
    "array_text",
    "parse_array",
    "lsn_seq",
    "declared_columns",
    "timestamp_ns",
    "TYPE_OF_KIND",
    "type_of_value",
    "IdentityEvidence",
]

#: PostgreSQL type names (typmods left out, lower case, ``pg_catalog.`` dropped) -> kinds of
#: :mod:`cdckit.column_types`. A name not here (user types, enums, ranges, geometry, ``interval``,
#: ``time with time zone`` whose offset a ``time`` cannot hold) is ``string``; an array is ``json``.
KINDS: dict[str, str] = {
    **dict.fromkeys(
        (
            "smallint",
            "integer",
            "bigint",
            "int2",
            "int4",
            "int8",
            "int",
            "smallserial",
            "serial",
            "bigserial",
            "oid",
            "xid",
            "xid8",
            "cid",
        ),
        "int",
    ),
    **dict.fromkeys(("real", "double precision", "float4", "float8", "float"), "float"),
    **dict.fromkeys(("numeric", "decimal"), "decimal"),
    **dict.fromkeys(("boolean", "bool"), "bool"),
    **dict.fromkeys(
        (
            "text",
            "character varying",
            "varchar",
            "character",
            "char",
            "bpchar",
            "name",
            "citext",
            "uuid",
            "xml",
            "inet",
            "cidr",
            "macaddr",
            "macaddr8",
            "money",
            "interval",
            "bit",
            "bit varying",
            "varbit",
            "tsvector",
            "tsquery",
            "time with time zone",
            "timetz",
        ),
        "string",
    ),
    **dict.fromkeys(
        ("timestamp with time zone", "timestamp without time zone", "timestamp", "timestamptz"), "timestamp"
    ),
    "date": "date",
    **dict.fromkeys(("time without time zone", "time"), "time"),
    "bytea": "binary",
    **dict.fromkeys(("json", "jsonb"), "json"),
}

_TYPMOD = re.compile(r"\([^)]*\)")
_LSN = re.compile(r"([0-9A-Fa-f]{1,8})/([0-9A-Fa-f]{1,8})\Z")
_SPECIAL_FLOATS = frozenset({"NaN", "Infinity", "-Infinity"})


def _base_name(type_name: str) -> str:
    """A type name without typmods, in lower case with single spaces (``timestamp(3) with time zone`` ->
    ``timestamp with time zone``); a quoted name is kept as written."""
    if '"' in type_name:
        return type_name
    name = " ".join(_TYPMOD.sub("", type_name).lower().split())
    return name[len("pg_catalog.") :] if name.startswith("pg_catalog.") else name


@functools.lru_cache(maxsize=4096)  # a capture names few types, each on every value
def element_type(type_name: str) -> str | None:
    """The element type of an array type name, None for a type that is not an array.

    >>> element_type("integer[]"), element_type("character varying(20)[][]"), element_type("text")
    ('integer', 'character varying(20)[]', None)
    """
    name = type_name.rstrip()
    return name[:-2].rstrip() if name.endswith("[]") else None


@functools.lru_cache(maxsize=4096)
def kind_of(type_name: str) -> str:
    """The kind (:mod:`cdckit.column_types`) of a PostgreSQL type name as the plugins write it.

    >>> [kind_of(t) for t in ("integer", "numeric(38,10)", "character varying(20)", "timestamp(3) with time zone",
    ...                       "bytea", "jsonb", "text[]", '"My Type"', "public.mood")]
    ['int', 'decimal', 'string', 'timestamp', 'binary', 'json', 'json', 'string', 'string']
    """
    if element_type(type_name) is not None:
        return "json"
    return KINDS.get(_base_name(type_name), "string")


def value_from_text(text: str | None, type_name: str) -> Any:
    """The image value of a datum given as PostgreSQL's text output (see the module docstring).

    >>> value_from_text("42", "bigint"), value_from_text("NaN", "double precision"), value_from_text("t", "boolean")
    (42, 'NaN', True)
    >>> value_from_text("0.1000000000000000055511", "numeric"), value_from_text("12.50", "numeric(10,2)")
    ('0.1000000000000000055511', 12.5)
    >>> value_from_text('{"a b","c,d",NULL,"e\\\\"f"}', "text[]")
    ['a b', 'c,d', None, 'e"f']
    >>> value_from_text("{{1,2},{3,4}}", "integer[]")
    [[1, 2], [3, 4]]
    """
    if text is None:
        return None
    element = element_type(type_name)
    if element is not None:
        try:
            items = parse_array(text)
        except ValueError:
            return text  # not an array literal: kept as it came
        return _map_elements(items, element)
    kind = kind_of(type_name)
    if kind == "int":
        return values.coerce(text, "int")
    if kind == "float":
        return text if text in _SPECIAL_FLOATS else values.coerce(text, "float")
    if kind == "decimal":
        return values.exact_number(text)
    if kind == "bool":
        return {"t": True, "true": True, "f": False, "false": False}.get(text, text)
    if kind == "binary":
        return _bytea(text)
    return text


def _map_elements(items: list[Any], element: str) -> list[Any]:
    return [
        _map_elements(item, element) if isinstance(item, list) else value_from_text(item, element) for item in items
    ]


def _bytea(text: str) -> str:
    """``bytea`` hex output (``\\x00ff``) as Base64; other text (the old escape output) is kept."""
    if not text.startswith("\\x"):
        return text
    try:
        return base64.b64encode(bytes.fromhex(text[2:])).decode("ascii")
    except ValueError:
        return text


def value_from_json(value: Any, type_name: str) -> Any:
    """The image value of a datum as wal2json writes it in JSON: the value :func:`value_from_text` gives for
    the text PostgreSQL printed.

    Numbers are JSON numbers (a long ``numeric`` kept as its exact text by
    :func:`cdckit.values.loads`), booleans JSON booleans, ``bytea`` hex
    without ``\\x``, arrays and everything else PostgreSQL's text.

    >>> value_from_json(1.5, "real"), value_from_json(True, "boolean"), value_from_json("{t,f}", "boolean[]")
    (1.5, True, [True, False])
    """
    return value_from_text(_printed(value, type_name), type_name) if value is not None else None


def _printed(value: Any, type_name: str) -> Any:
    """The text PostgreSQL printed for a value as wal2json wrote it (a value of any other form is kept)."""
    kind = value.__class__
    if kind is bool:
        return "t" if value else "f"
    if kind is int:
        return str(value)
    if kind is float:
        return repr(value)
    if kind is str:
        return "\\x" + value if kind_of(type_name) == "binary" and element_type(type_name) is None else value
    return value  # already JSON (an object or array): value_from_text leaves it as it is


# ---------------------------------------------------------------- arrays


def parse_array(text: str) -> list[Any]:
    """PostgreSQL's array output as nested lists of element texts (``NULL`` -> None); ``ValueError`` for text
    that is not an array literal. A leading dimension decoration (``[0:1]=``) is skipped.

    >>> parse_array('{1,NULL,"NULL"," x ",{}}'), parse_array("[0:1]={a,b}")
    (['1', None, 'NULL', ' x ', []], ['a', 'b'])
    """
    if text.startswith("["):
        text = text[text.index("=") + 1 :] if "=" in text else text
    items, end = _array_at(text, 0)
    if text[end:].strip():
        raise ValueError(f"text after the array: {text[end : end + 20]!r}")
    return items


def _array_at(text: str, start: int) -> tuple[list[Any], int]:
    """The array whose ``{`` is at ``start`` (after spaces), and the index after its ``}``."""
    i = _skip_spaces(text, start)
    if i >= len(text) or text[i] != "{":
        raise ValueError("an array starts with {")
    items: list[Any] = []
    i = _skip_spaces(text, i + 1)
    if i < len(text) and text[i] == "}":
        return items, i + 1
    item: Any
    while True:
        i = _skip_spaces(text, i)
        if i >= len(text):
            raise ValueError("unterminated array")
        if text[i] == "{":
            item, i = _array_at(text, i)
        elif text[i] == '"':
            item, i = _quoted_at(text, i)
        else:
            item, i = _bare_at(text, i)
        items.append(item)
        i = _skip_spaces(text, i)
        if i >= len(text):
            raise ValueError("unterminated array")
        if text[i] == "}":
            return items, i + 1
        if text[i] != ",":
            raise ValueError(f"unexpected {text[i]!r} in an array")
        i += 1


def _skip_spaces(text: str, i: int) -> int:
    while i < len(text) and text[i].isspace():
        i += 1
    return i


def _quoted_at(text: str, start: int) -> tuple[str, int]:
    """A double-quoted element (backslash escapes any character)."""
    out: list[str] = []
    i = start + 1
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text):
            out.append(text[i + 1])
            i += 2
        elif ch == '"':
            return "".join(out), i + 1
        else:
            out.append(ch)
            i += 1
    raise ValueError("unterminated quoted array element")


def _bare_at(text: str, start: int) -> tuple[str | None, int]:
    """An unquoted element up to ``,`` or ``}`` (trailing spaces dropped); ``NULL`` in any case is None."""
    out: list[str] = []
    i = start
    while i < len(text) and text[i] not in ",}":
        if text[i] in '{"':
            raise ValueError(f"unexpected {text[i]!r} in an array element")
        if text[i] == "\\" and i + 1 < len(text):
            i += 1
        out.append(text[i])
        i += 1
    item = "".join(out).rstrip()
    if not item:
        raise ValueError("empty array element")
    return (None if item.upper() == "NULL" else item), i


# ---------------------------------------------------------------- image values back to PostgreSQL text


def value_to_text(value: Any, type_name: str) -> str | None:
    """The text PostgreSQL prints for an image value of a column of ``type_name``: the inverse of
    :func:`value_from_text` (Base64 back to ``bytea`` hex, lists to array literals, JSON values of a
    ``json`` column to their text).

    >>> value_to_text("AP8=", "bytea"), value_to_text(True, "boolean"), value_to_text([1, None], "integer[]")
    ('\\\\x00ff', 't', '{1,NULL}')
    """
    if value is None:
        return None
    element = element_type(type_name)
    if element is not None and isinstance(value, list):
        return array_text(value, element)
    kind = value.__class__
    if kind is bool:
        return "t" if value else "f"
    if kind is str:
        return _bytea_text(value) if kind_of(type_name) == "binary" else value
    if kind in (int, float):
        return str(value) if kind is int else repr(value)
    return values.dumps(value)


def _bytea_text(b64: str) -> str:
    """Base64 as ``bytea`` hex output; text that is not Base64 is kept."""
    try:
        return "\\x" + base64.b64decode(b64, validate=True).hex()
    except ValueError:
        return b64


def array_text(items: list[Any], element: str) -> str:
    """A list as PostgreSQL's array literal, elements written by :func:`value_to_text` and quoted when needed.

    >>> array_text(["a b", "c,d", None, 'e"f', "NULL"], "text"), array_text([[1, 2], [3, 4]], "integer")
    ('{"a b","c,d",NULL,"e\\\\"f","NULL"}', '{{1,2},{3,4}}')
    """
    parts = []
    for item in items:
        if isinstance(item, list):
            parts.append(array_text(item, element))
        elif item is None:
            parts.append("NULL")
        else:
            text = value_to_text(item, element) or ""  # text: the item is not None
            if text == "" or text.upper() == "NULL" or any(ch in text for ch in '{},"\\ \t\n\r'):
                text = '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
            parts.append(text)
    return "{" + ",".join(parts) + "}"


#: The PostgreSQL type written for a column of each kind (:mod:`cdckit.column_types`) when no PostgreSQL type is
#: known; ``decimal(P,S)`` is ``numeric(P,S)``.
TYPE_OF_KIND = {
    "int": "bigint",
    "float": "double precision",
    "decimal": "numeric",
    "bool": "boolean",
    "string": "text",
    "enum": "text",
    "binary": "bytea",
    "json": "jsonb",
    "date": "date",
    "timestamp": "timestamp with time zone",
    "time": "time without time zone",
}


def type_of_value(value: Any) -> str | None:
    """A PostgreSQL type guessed from an image value (None for null): ``boolean``, ``bigint``, ``numeric`` (an
    integer beyond 64 bits), ``double precision``, ``text``, ``jsonb`` (an object, or a list holding one), and
    for a list an array of its elements' type (``numeric[]`` for numbers of both kinds, ``text[]`` for a mix).

    >>> [type_of_value(v) for v in (True, 7, 2**70, 1.5, "x", {"a": 1})]
    ['boolean', 'bigint', 'numeric', 'double precision', 'text', 'jsonb']
    >>> [type_of_value(v) for v in ([1], [[1, 2.5]], ["a", 1], [{}], None)]
    ['bigint[]', 'numeric[]', 'text[]', 'jsonb', None]
    """
    if value.__class__ is list:
        kinds = {type_of_value(item) for item in _leaves(value)} - {None}
        if "jsonb" in kinds:
            return "jsonb"
        if kinds and kinds <= {"bigint", "numeric", "double precision"}:
            return f"{kinds.pop() if len(kinds) == 1 else 'numeric'}[]"
        return f"{kinds.pop()}[]" if len(kinds) == 1 else "text[]"
    if value is None:
        return None
    found = values.scalar_kind(value)
    if found is not None:
        return TYPE_OF_KIND["decimal" if found == "exact" else found]
    return "jsonb" if value.__class__ is dict else "text"


def _leaves(items: list[Any]) -> Iterator[Any]:
    for item in items:
        if item.__class__ is list:
            yield from _leaves(item)
        else:
            yield item


# ---------------------------------------------------------------- positions, times, declarations


def lsn_seq(lsn: str) -> str:
    """A log sequence number (``0/16B2F48``) as fixed-width text whose string order is LSN order.

    >>> lsn_seq("0/16B2F48"), lsn_seq("1A/0")
    ('00000000/016B2F48', '0000001A/00000000')
    >>> lsn_seq("16B2F48")
    Traceback (most recent call last):
    ...
    ValueError: not a PostgreSQL LSN: '16B2F48'
    """
    match = _LSN.match(lsn) if isinstance(lsn, str) else None
    if match is None:
        raise ValueError(f"not a PostgreSQL LSN: {lsn!r}")
    high, low = match.groups()
    return f"{int(high, 16):08X}/{int(low, 16):08X}"


def timestamp_ns(text: str | None, tz: str | None = None) -> int | None:
    """A ``timestamp with time zone`` as PostgreSQL prints it (ISO style, offset ``+00`` or ``+05:30``) in
    epoch nanoseconds; text without an offset is read in ``tz`` (UTC when None).
    Raises :class:`cdckit.errors.InvalidValue` for other text.

    >>> timestamp_ns("2026-11-26 23:49:36.441967+00"), timestamp_ns("1970-01-01 05:30:00+05:30")
    (1795736976441967000, 0)
    """
    return values.text_time_to_ns(text, tz)


def declared_columns(names: Sequence[str], types: Sequence[str]) -> dict[str, tuple[str, str]]:
    """``{column: (type, kind)}`` for :meth:`cdckit.dialects.base.Dialect.declare`: the same dict (do not change
    it) for the same names and types, so a table's repeated declaration is dropped at the cost of a look-up.
    ``ValueError`` when the lists differ in length or hold anything but text.

    >>> declared_columns(["id", "n"], ["integer", "numeric(38,10)"])
    {'id': ('integer', 'int'), 'n': ('numeric(38,10)', 'decimal')}
    >>> declared_columns(["id"], ["integer"]) is declared_columns(["id"], ["integer"])
    True
    """
    key = (tuple(names), tuple(types))
    if not all(v.__class__ is str for v in key[0] + key[1]):
        raise ValueError("a column name or type is not text")
    found = _DECLARED.get(key)
    if found is None:
        if len(key[0]) != len(key[1]):
            raise ValueError(f"{len(key[0])} column names but {len(key[1])} types")
        if len(_DECLARED) >= _DECLARED_LIMIT:
            _DECLARED.clear()
        found = _DECLARED[key] = {name: (raw, kind_of(raw)) for name, raw in zip(*key)}
    return found


_DECLARED: dict[tuple, dict[str, tuple[str, str]]] = {}
_DECLARED_LIMIT = 1024


# ---------------------------------------------------------------- the replica identity a capture shows


class IdentityEvidence:
    """What a capture shows of one table's replica identity, and the key columns it proves.

    PostgreSQL writes a delete's old tuple and an update's old tuple from the
    table's replica identity. Under ``REPLICA IDENTITY DEFAULT`` (or ``USING
    INDEX``) that is exactly the identity columns (never NULL), and an
    update carries an old tuple only when one of them changed. Under
    ``FULL`` it is the whole old row less its NULL columns, on every update;
    under ``NOTHING`` (or without a primary key) a delete has no old tuple.

    The rule (:meth:`key`): the old tuples prove a key when there is at least
    one, every one names the same columns, those are strictly fewer than the
    columns the table's whole rows show (an insert's or an update's new
    tuple), no update's old tuple equals its new row on all of them (a FULL
    table writes one on every update, the key unchanged), and no delete came
    without an old tuple. Anything else (no old tuple, varying columns, as
    many columns as a row, an old tuple on an unchanged key) leaves the table
    keyless: a FULL table whose columns are never NULL looks like a key of
    every column and is not taken for one.

    >>> e = IdentityEvidence()
    >>> e.row(("id", "name")); e.old(("id",), changed=True); e.old(("id",))
    >>> e.key()
    (['id'], 'every old tuple (2: 1 delete, 1 update) holds exactly these columns, fewer than the 2 of its rows')
    >>> e.old(("id", "name")); e.key()[0] is None
    True
    """

    __slots__ = ("olds", "rows", "deletes", "updates", "unchanged", "no_tuple")

    def __init__(self) -> None:
        self.olds: set[tuple[str, ...]] = set()  # the column names of each old tuple seen
        self.rows: set[tuple[str, ...]] = set()  # the column names of each whole row seen
        self.deletes = self.updates = self.unchanged = self.no_tuple = 0

    def row(self, columns: tuple[str, ...]) -> None:
        """A whole row (an insert's or an update's new tuple) named these columns."""
        self.rows.add(columns)

    def old(self, columns: tuple[str, ...] | None, changed: bool | None = None) -> None:
        """An old tuple with these columns: a delete's (``changed`` None; ``columns`` None for a delete
        without one), or an update's (``changed``: whether its values differ from the new row's)."""
        if columns is None:
            self.no_tuple += 1
            return
        self.olds.add(columns)
        if changed is None:
            self.deletes += 1
        else:
            self.updates += 1
            self.unchanged += not changed

    def needs_values(self, olds: Iterable[tuple[str, ...]]) -> bool:
        """Whether :meth:`key` would read the updates' ``changed`` (their values, not only their columns) once old
        tuples with ``olds`` columns are seen too: when every old tuple names the same columns, fewer than the
        rows'. Where it would not, the updates' old tuples count by their columns alone (:meth:`old_columns`).

        >>> e = IdentityEvidence()
        >>> e.row(("id", "name")); e.needs_values([("id",)]), e.needs_values([("id", "name")])
        (True, False)
        """
        seen = self.olds | set(olds)
        width = set().union(*self.rows) if self.rows else set()
        return not self.no_tuple and len(seen) == 1 and set(next(iter(seen))) < width

    def old_columns(self, columns: tuple[str, ...], updates: int) -> None:
        """``updates`` updates' old tuples with these columns, their values not compared (see :meth:`needs_values`)."""
        self.olds.add(columns)
        self.updates += updates

    def key(self) -> tuple[list[str] | None, str]:
        """The key columns the evidence proves (None when it proves none) and why, in words."""
        if self.no_tuple:
            return None, f"{self.no_tuple} delete(s) without an old tuple (REPLICA IDENTITY NOTHING or no key)"
        if not self.olds:
            return None, "no delete or old-key tuple"
        if len(self.olds) > 1:
            return None, "old tuples name different columns (REPLICA IDENTITY FULL, NULLs left out)"
        (found,) = self.olds
        width = set().union(*self.rows) if self.rows else set()
        if not set(found) < width:
            return None, (
                "old tuples hold as many columns as its rows (REPLICA IDENTITY FULL)"
                if width
                else "no whole row to compare the old tuples with"
            )
        if self.unchanged:
            return None, f"{self.unchanged} update(s) wrote an old tuple equal to the new row (REPLICA IDENTITY FULL)"
        return list(found), (
            f"every old tuple ({self.deletes + self.updates}: {self.deletes} delete, "
            f"{self.updates} update) holds exactly these columns, fewer than the {len(width)} "
            f"of its rows"
        )
