"""Values written into DuckDB SQL built in Python (where a parameter cannot stand: a JSON path, a list of names).

>>> print(sql_text("it's"))
'it''s'
"""

from __future__ import annotations

__all__ = ["sql_text", "re2_literal"]


def sql_text(text: str) -> str:
    """A SQL text literal: ``text`` in single quotes, each quote inside doubled.

    >>> print(sql_text("it's"))
    'it''s'
    """
    return "'" + text.replace("'", "''") + "'"


def re2_literal(text: str) -> str:
    """An RE2 pattern (DuckDB's ``regexp_*`` functions) that matches ``text`` as it is: every character other than
    an ASCII letter or digit written as its code point (``\\x{...}``), so that none is taken as an operator.

    >>> print(re2_literal('"a.b"'))
    \\x{22}a\\x{2e}b\\x{22}
    """
    return "".join(c if c.isascii() and c.isalnum() else f"\\x{{{ord(c):x}}}" for c in text)
