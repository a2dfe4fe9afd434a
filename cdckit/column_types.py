"""Column types: what each dialect says a source column holds, in one small vocabulary.

A dialect that knows its columns' types (Canal's MySQL types and JDBC codes,
OceanBase Extend's type map, DataWorks and DataHub Blob column types,
Debezium's Kafka Connect schema with its logical types, ...) declares them for
each table as ``{column: (raw, kind)}``: ``raw`` is the type exactly as the
dialect wrote it (``"decimal(10,2)"``, ``"int32 io.debezium.time.Date"``),
``kind`` is one of these canonical kinds:

======================  ======================================================
kind                    values in the images
======================  ======================================================
``int``                 whole numbers (JSON numbers, or digit text)
``float``               floating point numbers
``decimal(P,S)``        exact decimals with precision P and scale S; either may
                        be empty when the dialect does not say (``decimal(,2)``,
                        ``decimal``): JSON numbers or exact text
``bool``                true/false (also 0/1 and their text)
``string``              text
``enum``                text from a fixed set
``binary``              Base64 text
``json``                JSON text (or an object/array)
``date``                a calendar date: ISO text, or a number of days since 1970-01-01
``timestamp``           an instant: ISO text (zone-less text is UTC), or epoch milliseconds
``timestamp(us)``       ... epoch microseconds when a number (``(ms)``, ``(ns)`` likewise)
``time``                a time of day: text, or milliseconds after midnight
``time(us)``            ... microseconds when a number (``(ms)``, ``(ns)`` likewise)
======================  ======================================================

A read keeps the declarations it met in ``events.attrs["column_types"]``: a
DataFrame with one row per column each time a table's declared types change
(the first time a table is seen included), columns ``table`` (``"db.table"``
as :func:`cdckit.ordering.table_names` names it), ``column``, ``type`` (raw),
``kind``, ``source`` and ``offset`` (the message that declared it), in input
order.

>>> parse_kind("decimal(10,2)")
('decimal', ('10', '2'))
>>> parse_kind("timestamp(us)")
('timestamp', ('us',))
>>> parse_kind("int")
('int', ())
"""

from __future__ import annotations

import re

__all__ = ["KINDS", "TYPE_COLUMNS", "parse_kind"]

#: The canonical kind names (a kind may carry arguments in parentheses, see the module docstring).
KINDS = ("int", "float", "decimal", "bool", "string", "enum", "binary", "json", "date", "timestamp", "time")

#: The columns of ``events.attrs["column_types"]``.
TYPE_COLUMNS = ("table", "column", "type", "kind", "source", "offset")

_KIND = re.compile(r"^([a-z]+)(?:\(([^)]*)\))?$")


def parse_kind(kind: str) -> tuple[str, tuple[str, ...]]:
    """A kind's name and its arguments; ``ValueError`` for a text that is not a kind."""
    match = _KIND.match(kind)
    if match is None or match.group(1) not in KINDS:
        raise ValueError(f"not a column kind: {kind!r}")
    args = match.group(2)
    return match.group(1), tuple(a.strip() for a in args.split(",")) if args is not None else ()
