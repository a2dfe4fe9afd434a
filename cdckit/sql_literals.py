"""Values written into DuckDB SQL built in Python (where a parameter cannot stand: a JSON path, a list of names).

>>> print(sql_text("it's"))
'it''s'
"""

from __future__ import annotations

__all__ = ["sql_text"]


def sql_text(text: str) -> str:
    """A SQL text literal: ``text`` in single quotes, each quote inside doubled.

    >>> print(sql_text("it's"))
    'it''s'
    """
    return "'" + text.replace("'", "''") + "'"
