"""The grammar of a test_decoding change line: quoted names, ``name[type]:value`` tuples, their values, and
COPY's backslash escapes (the lines themselves are told apart in :mod:`.dialect`).

>>> tuple_columns(" id[integer]:1 name[text]:'it''s'", 0)
([('id', 'integer', '1'), ('name', 'text', "it's")], 33)
>>> tuple_image([("id", "integer", "1"), ("n", "text", UNCHANGED_TOAST)])
'{"id":1}'
"""

from __future__ import annotations

import re
from typing import Any

from ... import values
from ..base import BadMessage
from ..postgres import value_from_text

#: What a column of a tuple holds instead of a value when a large (TOASTed) value was not changed.
UNCHANGED_TOAST = "unchanged-toast-datum"
#: A tuple the plugin could not print (a table without a replica identity, for a DELETE).
NO_TUPLE = "(no-tuple-data)"
#: The op_raw of a logical decoding message (``pg_logical_emit_message``).
MESSAGE = "message"
_COPY_ESCAPES = {"b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"}


class Unfinished(Exception):
    """The text ends inside a quoted value (or before a message's ``sz`` bytes of content)."""


def unescape_copy(text: str) -> str:
    r"""A COPY text field with its backslash escapes undone (``\n``, ``\t``, ``\\``, octal, ``\x`` hex).

    >>> unescape_copy(r"a\\b\nc\td\101\x42")
    'a\\b\nc\tdAB'
    """
    if "\\" not in text:
        return text
    out, i, n = [], 0, len(text)
    while i < n:
        ch = text[i]
        if ch != "\\" or i + 1 >= n:
            out.append(ch)
            i += 1
            continue
        nxt = text[i + 1]
        if nxt in _COPY_ESCAPES:
            out.append(_COPY_ESCAPES[nxt])
            i += 2
        elif octal := re.match(r"[0-7]{1,3}", text[i + 1 : i + 4]):
            digits = octal.group()
            out.append(chr(int(digits, 8)))
            i += 1 + len(digits)
        elif nxt == "x" and (hexadecimal := re.match(r"[0-9A-Fa-f]{1,2}", text[i + 2 : i + 4])):
            digits = hexadecimal.group()
            out.append(chr(int(digits, 16)))
            i += 2 + len(digits)
        else:
            out.append(nxt)
            i += 2
    return "".join(out)


def _identifier(text: str, i: int, stops: str) -> tuple[str, int]:
    """A name at ``i``: a double-quoted identifier (``""`` a quote) or the text up to one of ``stops``."""
    if text.startswith('"', i):
        out, j = [], i + 1
        while True:
            end = text.find('"', j)
            if end < 0:
                raise Unfinished
            out.append(text[j:end])
            if text.startswith('"', end + 1):
                out.append('"')
                j = end + 2
            else:
                return "".join(out), end + 1
    j = i
    while j < len(text) and text[j] not in stops:
        j += 1
    if j == i:
        raise BadMessage(f"a name expected at column {i}")
    return text[i:j], j


def table_names(line: str, i: int) -> tuple[list[tuple[str | None, str]], int]:
    """The ``schema.table`` names of a change line from ``i``, and the index after ``": "``."""
    names: list[tuple[str | None, str]] = []
    while True:
        first, i = _identifier(line, i, ".:, ")
        if line.startswith(".", i):
            second, i = _identifier(line, i + 1, ".:, ")
            names.append((first, second))
        else:
            names.append((None, first))
        if line.startswith(", ", i):
            i += 2
        elif line.startswith(": ", i):
            return names, i + 2
        else:
            raise BadMessage("a table name not followed by ': '")


def tuple_columns(line: str, i: int, stop: str | None = None) -> tuple[list[tuple[str, str, Any]], int]:
    """The columns ``(name, type, value)`` of a tuple from ``i`` up to the end or ``stop``; a value is text,
    None, True/False, or :data:`UNCHANGED_TOAST`. ``Unfinished`` when a quote is still open at the end."""
    columns = []
    n = len(line)
    while i < n and not (stop and line.startswith(stop, i)):
        if line[i] != " ":
            raise BadMessage(f"unexpected text after a value at column {i}: {line[i : i + 20]!r}")
        name, i = _identifier(line, i + 1, "[")
        if not line.startswith("[", i):
            raise BadMessage(f"column {name!r} without [type]")
        end = line.find("]:", i)
        if end < 0:
            raise BadMessage(f"column {name!r}: its [type] does not end with ']:'")
        raw_type, i = line[i + 1 : end], end + 2
        value, i = _value(line, i)
        columns.append((name, raw_type, value))
    if not columns:
        raise BadMessage("a tuple without columns")
    return columns, i


def _value(line: str, i: int) -> tuple[Any, int]:
    """The value at ``i`` (see :func:`tuple_columns`) and the index after it."""
    if line.startswith("'", i) or line.startswith("B'", i):
        start = i + 1 if line[i] == "'" else i + 2
        out, j = [], start
        while True:
            end = line.find("'", j)
            if end < 0:
                raise Unfinished
            out.append(line[j:end])
            if line.startswith("'", end + 1):
                out.append("'")
                j = end + 2
            else:
                return "".join(out), end + 1
    end = line.find(" ", i)
    end = len(line) if end < 0 else end
    token = line[i:end]
    if not token:
        raise BadMessage(f"a column without a value at column {i}")
    if token == "null":
        return None, end
    if token in ("true", "false"):
        return token == "true", end
    return token, end  # a number, NaN, Infinity or unchanged-toast-datum


def tuple_image(columns: list[tuple[str, str, Any]] | None) -> str | None:
    """The image of a tuple: values typed by their column types, unchanged TOAST values left out."""
    if columns is None:
        return None
    row = {}
    for name, raw_type, value in columns:
        if value == UNCHANGED_TOAST:
            continue
        row[name] = value if value is None or value.__class__ is bool else value_from_text(value, raw_type)
    return values.image(row)
