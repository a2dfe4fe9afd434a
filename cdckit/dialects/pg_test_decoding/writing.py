"""Writing test_decoding lines: names quoted as PostgreSQL quotes them, ``name[type]:value`` tuples, values
as the plugin prints them, the column types to print, the ``COMMIT`` line, and a frame written back as lines
(:func:`encoded_lines`).

>>> commit_line("529", 1_700_000_000_123_000_000)
'COMMIT 529 (at 2023-11-14 22:13:20.123+00)'
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pandas as pd

from ... import values
from ...capture import column_types_of
from ..base import Record, rows_of, table_name
from ..postgres import TYPE_OF_KIND, kind_of, type_of_value, value_to_text
from .grammar import MESSAGE, NO_TUPLE

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


def encoded_lines(events: pd.DataFrame) -> Iterator[Record]:
    """pg_recvlogical lines, one per event (a line feed in a value written raw, as the plugin does).

    A run of changes with one ``txn_id`` is put between ``BEGIN <xid>``
    and ``COMMIT <xid>`` lines unless begin / commit events of its own
    say where (the made-up COMMIT carries the last change's event time);
    changes without a ``txn_id`` get none, since a made-up transaction id
    would read back as one. Column types are the declared ones
    (``cdckit.column_types_of(events)``) when they are PostgreSQL names of
    the column's kind, else a type for the kind, else one guessed from
    the values (lists as arrays of their elements' type, objects as
    ``jsonb``: such values read back as text). An update's before image
    is written as ``old-key:`` whatever it holds (it reads back as the
    same image); a read (snapshot) row as an INSERT; a message event of
    this dialect as a ``message:`` line. Not written: ddl, heartbeat,
    tombstone events and ``other`` events that are not messages.
    """
    rows = list(rows_of(events))
    types = declared_types(column_types_of(events))
    images: dict[str | None, list[dict]] = {}
    parsed = []
    for row in rows:
        before, after = _loads(row["before"]), _loads(row["after"])
        parsed.append((row, before, after))
        images.setdefault(_qualified(row), []).extend(i for i in (before, after) if i)
    guessed = {name: guessed_types(found) for name, found in images.items()}
    open_xid: list[Any] = []  # [xid, made up?, event time of the last change] of the transaction open
    for row, before, after in parsed:
        op, xid = row["op"], row["txn_id"]
        if op in ("begin", "commit"):
            if open_xid and open_xid[1]:
                yield Record(commit_line(open_xid[0], open_xid[2]))
            open_xid[:] = [xid, False, None] if op == "begin" else []
            yield Record(
                f"BEGIN {xid}"
                if op == "begin" and xid is not None
                else "BEGIN"
                if op == "begin"
                else commit_line(xid, row["event_time"])
            )
            continue
        line = _change_line(row, before, after, {**guessed.get(_qualified(row), {}), **types.get(_qualified(row), {})})
        if line is None:
            continue
        if open_xid and open_xid[1] and open_xid[0] != xid:
            yield Record(commit_line(open_xid[0], open_xid[2]))
            open_xid.clear()
        if xid is not None and not open_xid:
            open_xid[:] = [xid, True, None]
            yield Record(f"BEGIN {xid}")
        if open_xid:
            open_xid[2] = row["event_time"] if row["event_time"] is not None else open_xid[2]
        yield Record(line)
    if open_xid and open_xid[1]:
        yield Record(commit_line(open_xid[0], open_xid[2]))


def _change_line(row: dict, before: dict | None, after: dict | None, types: dict[str, str | None]) -> str | None:
    """One change line, or None for an event this format cannot say."""
    op = row["op"]
    if op == "other":
        if row["op_raw"] != MESSAGE or not isinstance(after, dict) or not isinstance(after.get("content"), str):
            return None
        content = after["content"]
        return (
            f"message: transactional: {1 if after.get('transactional') else 0} prefix: "
            f"{after.get('prefix') or ''}, sz: {len(content.encode())} content:{content}"
        )
    if row["table"] is None:
        return None
    head = f"table {quote_name(row['database'] or row['schema'], row['table'])}:"
    if op == "truncate":
        return f"{head} TRUNCATE: (no-flags)"
    if op in ("insert", "read") and after is not None:
        return f"{head} INSERT:{tuple_text(after, types)}"
    if op == "update" and after is not None:
        old = f" old-key:{tuple_text(before, types)} new-tuple:" if before else ""
        return f"{head} UPDATE:{old}{tuple_text(after, types)}"
    if op == "delete":
        return f"{head} DELETE:{tuple_text(before, types) if before else ' ' + NO_TUPLE}"
    return None


def _qualified(row: dict) -> str | None:
    return table_name(row["database"], row["schema"], row["table"])


def _loads(text: str | None) -> Any:
    return None if text is None else values.loads(text)
