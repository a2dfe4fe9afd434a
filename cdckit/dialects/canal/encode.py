"""Encoding canonical events as Canal flat messages: every value as a string, typed by ``mysqlType``/``sqlType``.

>>> _ddl_type("CREATE TABLE t (id int)"), _ddl_type("drop index i on t")
('CREATE', 'DINDEX')
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterator
from typing import Any

import pandas as pd

from ... import values
from ..base import Dialect, Record, rows_of
from .message import DDL_TYPES

__all__ = ["CanalEncoder", "new_message", "add_row", "column_kind"]


_OP_TYPES = {"insert": "INSERT", "update": "UPDATE", "delete": "DELETE", "read": "INSERT"}
_DECLARED = {
    "int": ("bigint(20)", -5),
    "float": ("double", 8),
    "decimal": ("decimal(65,30)", 3),
    "bool": ("boolean", 16),
    "text": ("varchar(255)", 12),
    "binary": ("blob", 2004),
}
_NUMBER = re.compile(r"-?\d+(\.\d+)?([eE][+-]?\d+)?\Z")
_INTEGER = re.compile(r"-?\d+\Z")
_SEQ = re.compile(r"(?P<es>\d*):(?P<id>\d*):(?P<row>\d{20})\Z")


class CanalEncoder(Dialect):
    """What :class:`~cdckit.dialects.canal.Canal` writes."""

    def encode(self, events: pd.DataFrame) -> Iterator[Record]:
        """Canal flat messages, every value as a string with ``mysqlType`` and ``sqlType``.

        Consecutive events whose ``seq`` (``es:id:row``) continues one
        message's rows are written as one message with several rows. When no
        event carries such a ``seq`` (events from another dialect), each
        event becomes one message with an increasing batch ``id``.

        Column types are inferred from all the values a column holds (see
        :func:`column_kind`); a text column whose every value is Base64 of
        non-text bytes is declared ``blob`` and its values are written back
        as the ISO-8859-1 text of the bytes. ``read`` events are written as
        INSERT (Canal has no snapshot type); heartbeat, begin, commit,
        tombstone and other events are skipped. The ``txn_id`` is written as
        ``gtid``. An update without a before image comes back with before
        equal to after.
        """
        rows = list(rows_of(events))
        images = [(_load(row["before"]), _load(row["after"])) for row in rows]
        kinds = _kinds_by_table(rows, images)
        positions = [_parse_seq(row["seq"]) for row in rows]
        synthesize = all(position is None for position in positions)
        batch = 0
        pending: dict[str, Any] | None = None
        pending_ident: tuple = ()
        for row, (before, after), position in zip(rows, images, positions):
            op = row["op"]
            if op != "ddl" and (op not in _OP_TYPES or (before if op == "delete" else after) is None):
                continue  # Canal cannot say it
            if position is not None:
                batch_id, index = position[1], position[2]
            else:
                batch += 1
                batch_id, index = (batch if synthesize else None), 0
            ident = (
                op,
                row["database"],
                row["table"],
                tuple(row["key_columns"] or ()),
                row["event_time"],
                row["emit_time"],
                row["txn_id"],
                batch_id,
            )
            if (
                pending is not None
                and op != "ddl"
                and position is not None
                and ident == pending_ident
                and index == len(pending["data"])
            ):
                add_row(pending, op, before, after, kinds.get((row["database"], row["table"]), {}))
                continue
            if pending is not None:
                yield Record(pending)
            pending, pending_ident = new_message(row, batch_id), ident
            if op != "ddl":
                add_row(pending, op, before, after, kinds.get((row["database"], row["table"]), {}))
        if pending is not None:
            yield Record(pending)


# ---------------------------------------------------------------- encoder helpers


def new_message(row: dict[str, Any], batch_id: int | None) -> dict[str, Any]:
    """An empty Canal message for the event ``row`` (keys in Canal's alphabetical order)."""
    ddl = row["op"] == "ddl"
    message: dict[str, Any] = {
        "data": None if ddl else [],
        "database": row["database"] or "",
        "es": values.ns_to_ms(row["event_time"]),
    }
    if row["txn_id"] is not None:
        message["gtid"] = row["txn_id"]
    if batch_id is not None:
        message["id"] = batch_id
    message["isDdl"] = ddl
    message["mysqlType"] = None if ddl else {}
    message["old"] = None
    message["pkNames"] = None if ddl else row["key_columns"] or None
    message["sql"] = (row["ddl"] or "") if ddl else ""
    message["sqlType"] = None if ddl else {}
    message["table"] = row["table"] or ""
    message["ts"] = values.ns_to_ms(row["emit_time"])
    if ddl:
        message["type"] = row["op_raw"] if row["op_raw"] in DDL_TYPES else _ddl_type(row["ddl"])
    else:
        message["type"] = _OP_TYPES[row["op"]]
    return message


def add_row(message: dict[str, Any], op: str, before: dict | None, after: dict | None, kinds: dict[str, str]) -> None:
    """Append one row (and its ``old`` entry for an update) to a DML message."""
    image = (before if op == "delete" else after) or {}
    message["data"].append({c: _to_text(v, kinds.get(c, "text")) for c, v in image.items()})
    columns = list(image)
    if op == "update":
        changed = {c: v for c, v in (before or {}).items() if c not in image or image[c] != v}
        if message["old"] is None:
            message["old"] = [{} for _ in message["data"][:-1]]
        message["old"].append({c: _to_text(v, kinds.get(c, "text")) for c, v in changed.items()})
        columns += [c for c in changed if c not in image]
    for column in columns:
        mysql_type, sql_type = _DECLARED[kinds.get(column, "text")]
        message["mysqlType"].setdefault(column, mysql_type)
        message["sqlType"].setdefault(column, sql_type)


def _load(text: str | None) -> dict[str, Any] | None:
    return None if text is None else values.loads(text)


def _parse_seq(seq: str | None) -> tuple[str, int | None, int] | None:
    """``(es, batch id, row index)`` of a seq this dialect wrote, else None."""
    match = _SEQ.match(seq) if seq else None
    if match is None:
        return None
    return match["es"], int(match["id"]) if match["id"] else None, int(match["row"])


def _looks_binary(value: Any) -> bool:
    """Base64 text (canonical form) of bytes that are not printable UTF-8 text."""
    if not isinstance(value, str):
        return False
    try:
        raw = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return False
    return base64.b64encode(raw).decode("ascii") == value and values.readable_bytes(value) == value


def _kinds_by_table(rows: list[dict[str, Any]], images: list[tuple]) -> dict[tuple, dict[str, str]]:
    """``{(database, table): {column: kind}}`` from every value each column holds."""
    seen: dict[tuple, dict[str, list]] = {}
    for row, pair in zip(rows, images):
        columns = seen.setdefault((row["database"], row["table"]), {})
        for image in pair:
            for column, value in (image or {}).items():
                found = columns.setdefault(column, [])
                if value is not None:
                    found.append(value)
    return {table: {column: column_kind(found) for column, found in columns.items()} for table, columns in seen.items()}


def column_kind(seen: list[Any]) -> str:
    """The kind to declare so that every value ``seen`` decodes back unchanged.

    ``values.infer_kinds`` lets the first value decide; a Canal column must
    also bring back the other values, so mixed columns are widened: integers
    with integer text beyond 64 bits stay ``int``, integers with floats (or
    with decimal text a double cannot hold) become ``decimal``, and text
    that is all Base64 of non-text bytes is ``binary``.

    >>> column_kind([1, "18446744073709551615"]), column_kind([1, 2.5]), column_kind(["AAEC", ""]), column_kind([""])
    ('int', 'decimal', 'binary', 'text')
    """
    kinds = {values.kind_of_value(v) for v in seen}
    if not kinds:
        return "text"
    if kinds == {"bool"}:
        return "bool"
    if kinds != {"text"} and kinds <= {"int", "float", "text"}:
        texts = [v for v in seen if isinstance(v, str)]
        if all(_NUMBER.match(t) and values.exact_number(t) == t for t in texts):
            if kinds <= {"int", "text"} and all(_INTEGER.match(t) for t in texts):
                return "int"
            return "float" if kinds == {"float"} else "decimal"
    if kinds == {"text"}:
        filled = [v for v in seen if v != ""]
        if filled and all(_looks_binary(v) for v in filled):
            return "binary"
    return "text"


def _to_text(value: Any, kind: str) -> str | None:
    """A canonical value as the string Canal writes."""
    if value is None:
        return None
    if kind == "binary" and isinstance(value, str):
        return base64.b64decode(value).decode("latin-1")
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return value
    return values.dumps(value)


_DDL_WORDS = (
    ("create index", "CINDEX"),
    ("create unique index", "CINDEX"),
    ("drop index", "DINDEX"),
    ("create", "CREATE"),
    ("alter", "ALTER"),
    ("drop", "ERASE"),
    ("truncate", "TRUNCATE"),
    ("rename", "RENAME"),
)


def _ddl_type(sql: str | None) -> str:
    """Canal's DDL type for a statement from another dialect."""
    text = " ".join((sql or "").lower().split())
    for start, kind in _DDL_WORDS:
        if text.startswith(start):
            return kind
    return "QUERY"
