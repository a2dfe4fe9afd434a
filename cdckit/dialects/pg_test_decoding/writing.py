"""Writing test_decoding lines: names quoted as PostgreSQL quotes them, ``name[type]:value`` tuples, values
as the plugin prints them, the column types to print, and the ``COMMIT`` line.

>>> commit_line("529", 1_700_000_000_123_000_000)
'COMMIT 529 (at 2023-11-14 22:13:20.123+00)'
"""

from __future__ import annotations

import re
from typing import Any

import pandas as pd

from ..postgres import TYPE_OF_KIND, kind_of, type_of_value, value_to_text

_SAFE_NAME = re.compile(r"[a-z_][a-z0-9_$]*\Z")
#: Types whose values test_decoding writes bare (its ``print_literal``); every other is quoted.
_BARE_KINDS = ("int", "float", "decimal")


def quote_name(schema: str | None, table: str) -> str:
    """``schema.table`` with each part quoted as PostgreSQL quotes identifiers.

    >>> quote_name("public", "t"), quote_name("My Schema", 't.1"x')
    ('public.t', '"My Schema"."t.1""x"')
    """
    return f"{quote_identifier(schema)}.{quote_identifier(table)}" if schema else quote_identifier(table)


def quote_identifier(name: str) -> str:
    """A name as PostgreSQL writes it: bare when lower-case letters, digits and ``_``, else double-quoted."""
    return name if _SAFE_NAME.match(name) else '"' + name.replace('"', '""') + '"'


def tuple_text(row: dict[str, Any], types: dict[str, str | None]) -> str:
    """`` name[type]:value`` for each column of an image.

    >>> print(tuple_text({"id": 1, "Note": "it's", "ok": True, "n": None}, {"n": "numeric"}))
     id[bigint]:1 "Note"[text]:'it''s' ok[boolean]:true n[numeric]:null
    """
    parts = []
    for name, value in row.items():
        raw_type = types.get(name) or type_of_value(value) or "text"
        parts.append(f" {quote_identifier(name)}[{raw_type}]:{literal(value, raw_type)}")
    return "".join(parts)


def literal(value: Any, raw_type: str) -> str:
    """A value as test_decoding prints it for a column of ``raw_type``.

    >>> literal("AP8=", "bytea"), literal([1, None], "integer[]"), literal("NaN", "double precision")
    ("'\\\\x00ff'", "'{1,NULL}'", 'NaN')
    """
    if value is None:
        return "null"
    if value is True or value is False:
        return "true" if value else "false"
    kind = kind_of(raw_type)
    if kind in _BARE_KINDS and isinstance(value, (int, float, str)) and _bare_number(value):
        return str(value) if not isinstance(value, float) else repr(value).replace("inf", "Infinity")
    text = value_to_text(value, raw_type)
    return "null" if text is None else "'" + text.replace("'", "''") + "'"


def _bare_number(value: Any) -> bool:
    if isinstance(value, (int, float)):
        return value == value  # NaN floats cannot come from JSON
    return bool(re.fullmatch(r"-?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?|NaN|-?Infinity", value))


def guessed_types(images: list[dict]) -> dict[str, str | None]:
    """Each column's type from its first non-null value across a table's images."""
    found: dict[str, str | None] = {}
    for image in images:
        for name, value in image.items():
            if name not in found and value is not None:
                found[name] = type_of_value(value)
    return found


def declared_types(frame: Any) -> dict[str | None, dict[str, str]]:
    """``{table name: {column: PostgreSQL type}}`` from ``cdckit.column_types_of(events)``: the raw type when
    PostgreSQL reads it as the declared kind, else a type of that kind."""
    found: dict[str | None, dict[str, str]] = {}
    if not isinstance(frame, pd.DataFrame) or frame.empty:
        return found
    for table, column, raw, kind in frame[["table", "column", "type", "kind"]].itertuples(index=False, name=None):
        if not isinstance(column, str):
            continue
        base = str(kind).split("(")[0]
        if isinstance(raw, str) and "\n" not in raw and "]:" not in raw and kind_of(raw) == base:
            found.setdefault(table, {})[column] = raw
        elif base in TYPE_OF_KIND:
            found.setdefault(table, {})[column] = TYPE_OF_KIND[base]
    return found


def commit_line(xid: str | None, event_time: int | None) -> str:
    """``COMMIT <xid>`` with ``(at <time>)`` as PostgreSQL prints a timestamp with time zone in UTC."""
    line = "COMMIT" if xid is None else f"COMMIT {xid}"
    if event_time is None:
        return line
    moment = pd.Timestamp(event_time, unit="ns", tz="UTC")
    micros = f".{moment.microsecond:06d}".rstrip("0").rstrip(".")
    return f"{line} (at {moment:%Y-%m-%d %H:%M:%S}{micros}+00)"
