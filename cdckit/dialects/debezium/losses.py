"""What a Debezium capture cannot know, read from the schema its messages carry.

Some connector settings write a value with less than the database holds, and
the schema says so when the connector propagates the source column types
(``column.propagate.source.type``: the field parameters
``__debezium.source.column.type`` and ``__debezium.source.column.length``).
:func:`producer_losses` finds them in a read's column declarations
(:func:`cdckit.column_types_of`), one entry per table and column:

- an unsigned ``BIGINT`` written as a signed ``int64``
  (``bigint.unsigned.handling.mode=long``, MySQL's default): values above
  2^63-1 arrive as negative numbers;
- a ``TIME`` written as Connect's ``Time`` or Debezium's ``Time``
  (milliseconds of a day: ``time.precision.mode=connect``): a ``TIME``
  outside 00:00-24:00 arrives as null, and a ``TIME(4..6)`` floored to
  milliseconds;
- a ``DATETIME(4..6)`` or ``TIMESTAMP(4..6)`` written in milliseconds
  (Connect's or Debezium's ``Timestamp``): floored to milliseconds.

>>> import pandas as pd
>>> types = pd.DataFrame({"table": ["d.t", "d.t"], "column": ["big", "id"], "type": [
...     "int64(__debezium.source.column.type=BIGINT UNSIGNED,__debezium.source.column.length=20)", "int32"]})
>>> [(x["table"], x["column"], x["what"]) for x in producer_losses(types)]
[('d.t', 'big', 'values above 9223372036854775807 arrive as negative numbers')]
"""

from __future__ import annotations

import re
from typing import Any

import pandas as pd

__all__ = ["producer_losses"]

_RAW = re.compile(r"(?P<type>[^\s(]+)(?: (?P<name>[^(]+))?(?:\((?P<parameters>.*)\))?\Z")
_MILLI_TIMES = {"io.debezium.time.Time", "org.apache.kafka.connect.data.Time"}
_MILLI_STAMPS = {"io.debezium.time.Timestamp", "org.apache.kafka.connect.data.Timestamp"}


def _parameters(text: str | None) -> dict[str, str]:
    found = {}
    for part in (text or "").split(","):
        name, sep, value = part.partition("=")
        if sep:
            found[name.strip()] = value.strip()
    return found


def _losses(raw: str) -> list[tuple[str, str]]:
    """``[(what, why)]`` of one declared type text (:func:`cdckit.dialects.debezium.envelope.field_kind`'s raw)."""
    match = _RAW.match(raw)
    if match is None:
        return []
    parameters = _parameters(match["parameters"])
    source = parameters.get("__debezium.source.column.type", "").upper()
    digits = parameters.get("__debezium.source.column.length", "")
    fine = digits.isdigit() and int(digits) > 3
    name = match["name"]
    found = []
    if match["type"] == "int64" and name is None and source == "BIGINT UNSIGNED":
        found.append(
            (
                "values above 9223372036854775807 arrive as negative numbers",
                "an unsigned BIGINT written as a signed int64 (bigint.unsigned.handling.mode=long)",
            )
        )
    if name in _MILLI_TIMES and source == "TIME":
        found.append(
            (
                "a TIME outside 00:00-24:00 arrives as null",
                f"a TIME written as milliseconds of a day ({name}: time.precision.mode=connect)",
            )
        )
    if fine and (
        (name in _MILLI_TIMES and source == "TIME")
        or (
            name in _MILLI_STAMPS
            and source
            in (
                "DATETIME",
                "TIMESTAMP",
            )
        )
    ):
        found.append(
            (
                "fractions of a second beyond milliseconds are floored",
                f"a {source}({digits}) written in milliseconds ({name})",
            )
        )
    return found


def producer_losses(types: pd.DataFrame) -> list[dict[str, Any]]:
    """``[{table, column, what, why}]``: what the capture cannot know of each column whose declared type
    (``types``: a read's column declarations, columns ``table``, ``column``, ``type``) says the producer
    wrote less than the database holds; each entry once, in declaration order."""
    out: list[dict[str, Any]] = []
    seen = set()
    if types is None or types.empty:
        return out
    for table, column, raw in zip(types["table"], types["column"], types["type"]):
        if not isinstance(raw, str) or "__debezium.source.column.type" not in raw:
            continue
        for what, why in _losses(raw):
            if (table, column, what) not in seen:
                seen.add((table, column, what))
                out.append({"table": table, "column": column, "what": what, "why": why})
    return out
