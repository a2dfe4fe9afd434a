"""What a Canal flat message holds: its ``type`` values, its fields, and how its string values are typed.

``mysqlType`` (or ``sqlType`` where it lacks a column) gives each column a
kind; a converter per kind turns Canal's strings back into values. Shared by
:mod:`.decode`, :mod:`.fast_path`, :mod:`.encode` and :mod:`.dialect`.

>>> mysql_kind("decimal(10,2)"), mysql_kind("bigint(20) unsigned"), mysql_kind("datetime")
('decimal', 'int', 'text')
"""

from __future__ import annotations

import base64
import re
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from ... import values
from ..base import BadMessage

__all__ = [
    "DML_OPS",
    "DDL_TYPES",
    "WATERMARK",
    "FIELDS",
    "LENIENT_SCORE",
    "MYSQL_DECLARED",
    "SQL_DECLARED",
    "MYSQL_KINDS",
    "SQL_KINDS",
    "CONVERTERS",
    "mysql_kind",
    "column_kinds",
    "mysql_declared",
    "declared_columns",
    "tidb_ts",
    "check_whole_row",
    "latin1_to_base64",
    "to_int",
    "to_decimal",
    "to_float",
    "to_bool",
    "typed_row",
]

#: DML ``type`` values and their canonical ops.
DML_OPS = {"INSERT": "insert", "UPDATE": "update", "DELETE": "delete"}
#: ``type`` values of DDL messages (Canal's EventType names).
DDL_TYPES = frozenset({"CREATE", "ALTER", "ERASE", "QUERY", "TRUNCATE", "RENAME", "CINDEX", "DINDEX"})
#: ``type`` of TiCDC's WATERMARK messages (sent with ``enable-tidb-extension=true``).
WATERMARK = "TIDB_WATERMARK"
#: Every top-level field a Canal flat message may have (Canal, OceanBase and TiCDC's ``_tidb``).
FIELDS = frozenset(
    {
        "id",
        "database",
        "table",
        "pkNames",
        "isDdl",
        "type",
        "es",
        "ts",
        "sql",
        "sqlType",
        "mysqlType",
        "data",
        "old",
        "gtid",
        "_tidb",
    }
)
#: The fields whose absence a lenient (``data`` and ``type`` only) verdict names.
USUAL_FIELDS = ("database", "table", "pkNames", "isDdl", "es", "ts", "mysqlType", "sqlType")
#: Detection score of a message with ``data`` and ``type`` but none of Canal's other markers: above
#: ``cdckit.reading.detect.FLOOR`` (so it is proposed) and below ``cdckit.reading.detect.LOW`` (so it is
#: flagged as a guess).
LENIENT_SCORE = 0.4

#: MySQL type names (before any ``(`` or space) -> the kind declared (:mod:`cdckit.column_types`);
#: ``decimal`` gets its precision and scale from the type's parameters.
MYSQL_DECLARED = {
    "tinyint": "int",
    "smallint": "int",
    "mediumint": "int",
    "int": "int",
    "integer": "int",
    "bigint": "int",
    "bit": "int",
    "year": "int",
    "float": "float",
    "double": "float",
    "real": "float",
    "decimal": "decimal",
    "numeric": "decimal",
    "dec": "decimal",
    "fixed": "decimal",
    "bool": "bool",
    "boolean": "bool",
    "binary": "binary",
    "varbinary": "binary",
    "tinyblob": "binary",
    "blob": "binary",
    "mediumblob": "binary",
    "longblob": "binary",
    "char": "string",
    "varchar": "string",
    "tinytext": "string",
    "text": "string",
    "mediumtext": "string",
    "longtext": "string",
    "set": "string",
    "enum": "enum",
    "json": "json",
    "date": "date",
    "time": "time",
    "datetime": "timestamp",
    "timestamp": "timestamp",
}
#: java.sql.Types codes -> the kind declared (codes not listed: ``string``, their values stay text).
SQL_DECLARED = {
    -7: "int",
    -6: "int",
    5: "int",
    4: "int",
    -5: "int",
    6: "float",
    7: "float",
    8: "float",
    2: "decimal",
    3: "decimal",
    16: "bool",
    91: "date",
    92: "time",
    93: "timestamp",
    -2: "binary",
    -3: "binary",
    -4: "binary",
    2004: "binary",
}
#: How the values of a declared kind are read; every other kind keeps the string ("text").
_VALUE_KINDS = {"int": "int", "float": "float", "decimal": "decimal", "bool": "bool", "binary": "binary"}
#: MySQL type names -> value kind (a YEAR stays text: it is declared a whole number, but sent as text).
MYSQL_KINDS = {
    name: "text" if name == "year" else _VALUE_KINDS.get(kind, "text") for name, kind in MYSQL_DECLARED.items()
}
#: java.sql.Types codes -> value kind (codes not listed: sqlType says nothing; CHAR, VARCHAR, LONGVARCHAR are text).
SQL_KINDS = {
    **{code: _VALUE_KINDS.get(kind, "text") for code, kind in SQL_DECLARED.items()},
    1: "text",
    12: "text",
    -1: "text",
}
_PARAMETERS = re.compile(r"\(\s*(\d+)\s*(?:,\s*(\d+)\s*)?\)")
#: What the encoder declares for each value kind: (mysqlType, sqlType).
_SHORT_DECIMAL = re.compile(r"-?\d+\.\d+\Z")
_TYPE_END = re.compile(r"[\s(]")


@lru_cache(maxsize=4096)
def mysql_kind(declared: str) -> str | None:
    """The value kind of a ``mysqlType`` text, or None for a type this module does not know.

    >>> mysql_kind("bigint(20) unsigned"), mysql_kind("DECIMAL(10,2)")
    ('int', 'decimal')
    >>> mysql_kind("datetime(3)"), mysql_kind("geometry")
    ('text', None)
    """
    text = declared.strip().lower()
    end = _TYPE_END.search(text)
    return MYSQL_KINDS.get(text[: end.start()] if end else text)


def column_kinds(mysql_types: Any, sql_types: Any) -> dict[str, str]:
    """``{column: kind}`` for the columns whose values must be typed (text columns left out)."""
    kinds: dict[str, str] = {}
    if isinstance(sql_types, dict):
        for name, code in sql_types.items():
            if isinstance(code, str) and code.lstrip("-").isdigit():
                code = int(code)
            kind = SQL_KINDS.get(code) if isinstance(code, int) else None
            if kind is not None:
                kinds[name] = kind
    if isinstance(mysql_types, dict):
        for name, declared in mysql_types.items():
            kind = mysql_kind(declared) if isinstance(declared, str) else None
            if kind is not None:  # mysqlType is preferred; an unknown type leaves sqlType's verdict
                kinds[name] = kind
    return {name: kind for name, kind in kinds.items() if kind != "text"}


@lru_cache(maxsize=4096)
def mysql_declared(declared: str) -> str | None:
    """The kind (:mod:`cdckit.column_types`) a ``mysqlType`` text declares, None for a type not known here.

    >>> mysql_declared("decimal(10,2)"), mysql_declared("DECIMAL(8)"), mysql_declared("decimal")
    ('decimal(10,2)', 'decimal(8,0)', 'decimal')
    >>> mysql_declared("bigint(20) unsigned"), mysql_declared("datetime(3)"), mysql_declared("geometry")
    ('int', 'timestamp', None)
    """
    text = declared.strip().lower()
    end = _TYPE_END.search(text)
    kind = MYSQL_DECLARED.get(text[: end.start()] if end else text)
    if kind == "decimal" and end is not None:
        found = _PARAMETERS.match(text, end.start())
        if found is not None:
            kind = f"decimal({found.group(1)},{found.group(2) or 0})"
    return kind


def declared_columns(mysql_types: Any, sql_types: Any) -> dict[str, tuple[str, str]]:
    """The column types a message declares, ``{column: (raw, kind)}``: ``mysqlType`` preferred, ``sqlType``
    for a column it does not name or names with a type not known here (the same rule as :func:`column_kinds`).

    >>> declared_columns({"id": "bigint(20)", "g": "geometry"}, {"id": -5, "g": 1111, "d": 91})
    {'id': ('bigint(20)', 'int'), 'g': ('1111', 'string'), 'd': ('91', 'date')}
    """
    coded: dict[str, tuple[str, str]] = {}
    if isinstance(sql_types, dict):
        for name, code in sql_types.items():
            if isinstance(code, str) and code.lstrip("-").isdigit():
                code = int(code)
            if isinstance(code, int) and not isinstance(code, bool):
                coded[name] = (str(code), SQL_DECLARED.get(code, "string"))
    columns: dict[str, tuple[str, str]] = {}
    if isinstance(mysql_types, dict):
        for name, declared in mysql_types.items():
            kind = mysql_declared(declared) if isinstance(declared, str) else None
            if kind is not None:
                columns[name] = (declared, kind)
            elif name in coded:
                columns[name] = coded[name]
            elif isinstance(declared, str):
                columns[name] = (declared, "string")  # a type not known here: its values stay text
    for name, found in coded.items():
        columns.setdefault(name, found)
    return columns


def tidb_ts(tidb: dict[str, Any] | None, name: str) -> int | str | None:
    """A TiDB TSO (``commitTs``, ``watermarkTs``) of a ``_tidb`` object: a non-negative integer, or None.

    >>> tidb_ts({"commitTs": 429918007904436226}, "commitTs"), tidb_ts(None, "commitTs")
    (429918007904436226, None)
    >>> tidb_ts({"commitTs": -1}, "commitTs")
    Traceback (most recent call last):
    ...
    cdckit.dialects.base.BadMessage: _tidb.commitTs is not a TiDB timestamp (a non-negative integer): -1
    """
    value = None if tidb is None else tidb.get(name)
    if value is None or (value.__class__ is int and value >= 0):
        return value
    if value.__class__ is str and value.isascii() and value.isdigit():  # beyond 64 bits values.loads keeps text
        return value
    raise BadMessage(f"_tidb.{name} is not a TiDB timestamp (a non-negative integer): {value!r}")


def check_whole_row(tidb: dict[str, Any]) -> None:
    """:class:`BadMessage` for a TiCDC DML message whose ``data`` is not the whole row (a "large message").

    >>> check_whole_row({"commitTs": 1, "onlyHandleKey": True})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    cdckit.dialects.base.BadMessage: TiCDC large message: only the handle key columns were sent ...
    """
    if tidb.get("onlyHandleKey") not in (None, False):
        raise BadMessage(
            "TiCDC large message: only the handle key columns were sent (_tidb.onlyHandleKey); the "
            f"row must be read from TiDB as of commitTs {tidb.get('commitTs')}"
        )
    location = tidb.get("claimCheckLocation")
    if location not in (None, ""):
        raise BadMessage(f"TiCDC large message: the row was stored at {location!r} (_tidb.claimCheckLocation)")


def latin1_to_base64(value: Any) -> Any:
    """A binary value as Canal writes it (its bytes as ISO-8859-1 text) to Base64 of those bytes."""
    if not isinstance(value, str):
        return value
    try:
        return base64.b64encode(value.encode("latin-1")).decode("ascii")
    except UnicodeEncodeError:  # not bytes-as-Latin-1: keep it as it came
        return value


def to_int(value: Any) -> Any:
    """``values.coerce(value, "int")``, with a fast path for short unsigned digit text."""
    if value.__class__ is str and len(value) < 19 and value.isascii() and value.isdigit():
        return int(value)
    return values.coerce(value, "int")


def to_decimal(value: Any) -> Any:
    """``values.coerce(value, "decimal")``, with a fast path for text of at most 15 digits (a double holds those)."""
    if value.__class__ is str and len(value) <= 16 and _SHORT_DECIMAL.match(value):
        return float(value)
    return values.coerce(value, "decimal")


def to_float(value: Any) -> Any:
    """``values.coerce(value, "float")``, with :func:`to_decimal`'s fast path (the same numbers, the same floats)."""
    if value.__class__ is str and len(value) <= 16 and _SHORT_DECIMAL.match(value):
        return float(value)
    return values.coerce(value, "float")


@lru_cache(maxsize=256)
def _bool_of_text(value: str) -> Any:
    return values.coerce(value, "bool")


def to_bool(value: Any) -> Any:
    """``values.coerce(value, "bool")``, remembered per text (a boolean column holds few distinct texts)."""
    if value.__class__ is str:
        return _bool_of_text(value)
    return values.coerce(value, "bool")


#: kind -> the function that types one value of that kind (non-text values pass through unchanged).
CONVERTERS: dict[str, Callable[[Any], Any]] = {
    "int": to_int,
    "float": to_float,
    "decimal": to_decimal,
    "bool": to_bool,
    "binary": latin1_to_base64,
}
#: java.sql.Types codes of text: an ENUM or SET sent with one of these holds its labels, not their numbers.
_TEXT_CODES = frozenset({1, 12, -1, -9, -15, -16, 2005})
_LABELS = re.compile(r"\s*(enum|set)\s*\((.*)\)\s*\Z", re.IGNORECASE | re.DOTALL)
_LABEL = re.compile(r"'((?:[^']|'')*)'")


@lru_cache(maxsize=1024)
def _labels(declared: str) -> tuple[str, tuple[str, ...]] | None:
    """``("enum" | "set", labels)`` of an ``enum('a','b')`` / ``set('a','b')`` mysqlType, else None."""
    found = _LABELS.match(declared)
    if found is None:
        return None
    return found.group(1).lower(), tuple(label.replace("''", "'") for label in _LABEL.findall(found.group(2)))


def enum_label(labels: tuple[str, ...]) -> Callable[[Any], Any]:
    """The converter of an ENUM whose values come as their number (1 the first label, 0 MySQL's empty error
    value); a number out of range, or anything else, is kept as it came.

    >>> enum_label(("small", "large"))("2"), enum_label(("small", "large"))("0"), enum_label(("a",))("7")
    ('large', '', '7')
    """

    def convert(value: Any) -> Any:
        number = _whole_number(value)
        return value if number is None or number > len(labels) else ("" if number == 0 else labels[number - 1])

    return convert


def set_labels(labels: tuple[str, ...]) -> Callable[[Any], Any]:
    """The converter of a SET whose values come as their bit mask (bit 0 the first label): the labels of the set
    bits joined by commas, as MySQL writes a SET; a mask with bits beyond the labels is kept as it came.

    >>> set_labels(("a", "b", "c", "d"))("3"), set_labels(("a", "b"))(0), set_labels(("a",))("2")
    ('a,b', '', '2')
    """

    def convert(value: Any) -> Any:
        mask = _whole_number(value)
        if mask is None or mask >> len(labels):
            return value
        return ",".join(label for bit, label in enumerate(labels) if mask >> bit & 1)

    return convert


def _whole_number(value: Any) -> int | None:
    if value.__class__ is int:
        return value if value >= 0 else None
    return int(value) if value.__class__ is str and value.isascii() and value.isdigit() else None


def column_converters(mysql_types: Any, sql_types: Any) -> dict[str, Callable[[Any], Any]]:
    """``{column: converter}`` of a message: its typed columns (:func:`column_kinds`), and its ENUM and SET
    columns that Canal sent as numbers (a ``sqlType`` that is not text: Canal without the table's metadata
    writes an ENUM's index and a SET's bit mask) turned into their labels.

    >>> convert = column_converters({"size": "enum('s','m','l')", "tags": "set('a','b')"}, {"size": 4, "tags": -7})
    >>> convert["size"]("3"), convert["tags"]("2")
    ('l', 'b')
    >>> column_converters({"size": "enum('s','m')"}, {"size": 12})
    {}
    """
    converters = {name: CONVERTERS[kind] for name, kind in column_kinds(mysql_types, sql_types).items()}
    if isinstance(mysql_types, dict) and isinstance(sql_types, dict):
        for name, declared in mysql_types.items():
            code = sql_types.get(name)
            if isinstance(code, str) and code.lstrip("-").isdigit():
                code = int(code)
            if not isinstance(declared, str) or not isinstance(code, int) or code in _TEXT_CODES:
                continue
            found = _labels(declared)
            if found is not None:
                converters[name] = (enum_label if found[0] == "enum" else set_labels)(found[1])
    return converters


def typed_row(row: dict[str, Any], converters: dict[str, Callable[[Any], Any]]) -> dict[str, Any]:
    """The row with its text values typed by column, in place (column order kept); returns it."""
    if len(row) < len(converters):  # an old image: a few changed columns
        for name, value in tuple(row.items()):
            convert = converters.get(name)
            if convert is not None and value is not None:
                row[name] = convert(value)
        return row
    for name, convert in converters.items():
        value = row.get(name)
        if value is not None:
            row[name] = convert(value)
    return row


#: The row index of a message's first row, as ``seq`` writes it.
ROW_ZERO = "0" * 20


def txn_id_of(gtid: Any, commit_ts: int | str | None) -> str | None:
    """The transaction id: Canal's ``gtid``, else TiCDC's commit TSO (TiDB's transaction identifier)."""
    if gtid not in (None, ""):
        return str(gtid)
    return None if commit_ts is None else str(commit_ts)


def kind_name(value: Any) -> str:
    return "object" if isinstance(value, dict) else "text" if isinstance(value, str) else type(value).__name__
