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

import math
import re
from datetime import date, datetime, timezone
from decimal import Decimal, localcontext
from typing import Any, Iterable, Sequence

import pyarrow as pa

from . import values

__all__ = ["KINDS", "TYPE_COLUMNS", "parse_kind", "is_kind", "arrow_type", "typed_array", "infer_kind", "Misfit"]

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


def is_kind(kind: object) -> bool:
    """Whether ``kind`` is a kind's text.

    >>> is_kind("decimal(10,2)"), is_kind("varchar"), is_kind(None)
    (True, False, False)
    """
    if not isinstance(kind, str):
        return False
    try:
        parse_kind(kind)
    except ValueError:
        return False
    return True


# --------------------------------------------------------------------------- kind -> Arrow type

#: Arrow types of the kinds whose type does not depend on the values.
_PLAIN_TYPES = {"int": pa.int64(), "float": pa.float64(), "bool": pa.bool_(), "string": pa.string(),
                "enum": pa.string(), "binary": pa.string(), "json": pa.string(), "date": pa.date32()}
_UNITS = {"s": 1_000_000_000, "ms": 1_000_000, "us": 1_000, "ns": 1}
_MAX_PRECISION = 38


def arrow_type(kind: str) -> pa.DataType:
    """The Arrow type a column of ``kind`` gets before its values are seen.

    The type :func:`typed_array` gives may be finer: a ``decimal`` without
    scale gets the smallest scale that holds every value, a ``timestamp`` or
    ``time`` is in nanoseconds only when a value needs them, an ``int``
    column with a value beyond 64 bits is ``decimal128(38, 0)``.

    >>> arrow_type("decimal(10,2)"), arrow_type("decimal"), arrow_type("timestamp(ms)"), arrow_type("enum")
    (Decimal128Type(decimal128(10, 2)), Decimal128Type(decimal128(38, 0)), TimestampType(timestamp[us, tz=UTC]), DataType(string))
    """
    name, args = parse_kind(kind)
    if name == "decimal":
        precision, scale = _decimal_args(args)
        return pa.decimal128(precision, scale or 0)
    if name == "timestamp":
        return pa.timestamp("ns" if args == ("ns",) else "us", tz="UTC")
    if name == "time":
        return pa.time64("ns" if args == ("ns",) else "us")
    return _PLAIN_TYPES[name]


def _decimal_args(args: tuple[str, ...]) -> tuple[int, int | None]:
    """``(precision, scale)`` of a decimal kind's arguments: precision 38 when not given, scale None."""
    precision = int(args[0]) if args and args[0].isdigit() else _MAX_PRECISION
    scale = int(args[1]) if len(args) > 1 and args[1].isdigit() else None
    return min(max(precision, 1), _MAX_PRECISION), scale


# --------------------------------------------------------------------------- image value -> typed value


class Misfit(ValueError):
    """A value that does not fit its column's kind (the message says why)."""


_INT_TEXT = re.compile(r"\s*[-+]?\d+\s*\Z")
_NUMBER_TEXT = re.compile(r"\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*\Z")
_DATE_TEXT = re.compile(r"(\d{4})-(\d{2})-(\d{2})\Z")
_TIME_TEXT = re.compile(r"(\d{1,2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?\Z")
_DATETIME_TEXT = re.compile(r"(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}(?::\d{2})?)(?:[.,](\d{1,9}))?"
                            r"\s*(Z|z|UTC|[+-]\d{2}(?::?\d{2})?)?\Z")
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_EPOCH_DAY = date(1970, 1, 1).toordinal()
_TRUE = ("true", "t", "1", "y", "yes")
_FALSE = ("false", "f", "0", "n", "no")


def _whole(value: Any, what: str) -> int:
    """A JSON number or number text that is a whole number, as an int."""
    if value.__class__ is bool:
        raise Misfit(f"a boolean is not {what}")
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if value.is_integer():
            return int(value)
        raise Misfit(f"{value!r} is not a whole number")
    if isinstance(value, str):
        if _INT_TEXT.match(value):
            return int(value)
        if _NUMBER_TEXT.match(value):
            number = Decimal(value)
            if number == number.to_integral_value():
                return int(number)
        raise Misfit(f"text {value[:40]!r} is not a whole number")
    raise Misfit(f"a {_json_kind(value)} is not {what}")


def _decimal(value: Any) -> Decimal:
    """A JSON number or number text as an exact Decimal (a float by its shortest text, as JSON wrote it)."""
    if value.__class__ is bool:
        raise Misfit("a boolean is not a number")
    if isinstance(value, int):
        return Decimal(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise Misfit(f"{value!r} is not a finite number")
        return Decimal(repr(value))
    if isinstance(value, str) and _NUMBER_TEXT.match(value):
        return Decimal(value.strip())
    raise Misfit(f"{_shown(value)} is not a number")


def _float(value: Any) -> float:
    if value.__class__ is bool:
        raise Misfit("a boolean is not a number")
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str) and _NUMBER_TEXT.match(value):
        return float(value)
    if isinstance(value, str) and value.strip().lower() in ("nan", "inf", "+inf", "-inf", "infinity", "-infinity"):
        return float(value.strip().lower().replace("infinity", "inf"))
    raise Misfit(f"{_shown(value)} is not a number")


def _bool(value: Any) -> bool:
    if value.__class__ is bool:
        return value
    if isinstance(value, (int, float)) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in _TRUE + _FALSE:
        return value.strip().lower() in _TRUE
    raise Misfit(f"{_shown(value)} is not a boolean")


def _text(value: Any) -> str:
    """Text as it is; any other JSON value as its JSON text."""
    return value if isinstance(value, str) else values.dumps(value)


def _date_days(value: Any) -> int:
    """A date as days since 1970-01-01: ISO date text (or a time text at midnight), or a number of days."""
    if isinstance(value, str):
        text = value.strip()
        match = _DATE_TEXT.match(text)
        if match is None:
            match = _DATETIME_TEXT.match(text)
            if match is None or _instant_ns(text) % 86_400_000_000_000:
                raise Misfit(f"text {value[:40]!r} is not a date")
            return _instant_ns(text) // 86_400_000_000_000
        try:
            return date(*map(int, match.groups())).toordinal() - _EPOCH_DAY
        except ValueError:
            raise Misfit(f"text {value[:40]!r} is not a date") from None
    days = _whole(value, "a date")
    if not -719_162 <= days <= 2_932_896:  # years 1 to 9999
        raise Misfit(f"{days} days since 1970 is beyond the years a date can hold")
    return days


def _instant_ns(text: str) -> int:
    """ISO-8601 date-time text as epoch nanoseconds (zone-less text is UTC; nine fraction digits kept)."""
    match = _DATETIME_TEXT.match(text.strip())
    if match is None:
        raise Misfit(f"text {text[:40]!r} is not a time")
    day, clock, fraction, zone = match.groups()
    if zone in (None, "Z", "z", "UTC"):
        zone = "+00:00"
    elif len(zone) == 3:
        zone += ":00"
    try:
        moment = datetime.fromisoformat(f"{day}T{clock}{zone}")
    except ValueError:
        raise Misfit(f"text {text[:40]!r} is not a time") from None
    delta = moment - _EPOCH
    seconds = delta.days * 86_400 + delta.seconds
    return seconds * 1_000_000_000 + int((fraction or "0").ljust(9, "0"))


def _timestamp_ns(value: Any, unit: str) -> int:
    """An instant as epoch nanoseconds: ISO text, or a number of ``unit`` since the epoch."""
    if isinstance(value, str) and not _NUMBER_TEXT.match(value):
        return _instant_ns(value)
    number = _decimal(value) * _UNITS[unit]
    if number != number.to_integral_value():
        raise Misfit(f"{_shown(value)} {unit} is finer than a nanosecond")
    return int(number)


def _time_ns(value: Any, unit: str) -> int:
    """A time of day as nanoseconds after midnight: ``HH:MM[:SS[.f]]`` text, or a number of ``unit``."""
    if isinstance(value, str) and not _NUMBER_TEXT.match(value):
        match = _TIME_TEXT.match(value.strip())
        if match is None:
            raise Misfit(f"text {value[:40]!r} is not a time of day")
        hours, minutes, seconds, fraction = match.groups()
        ns = ((int(hours) * 60 + int(minutes)) * 60 + int(seconds or 0)) * 1_000_000_000
        ns += int((fraction or "0").ljust(9, "0"))
    else:
        ns = _timestamp_ns(value, unit)
    if not 0 <= ns < 86_400_000_000_000:
        raise Misfit(f"{_shown(value)} is not a time of day")
    return ns


def _json_kind(value: Any) -> str:
    return {dict: "object", list: "array"}.get(type(value), type(value).__name__)


def _shown(value: Any) -> str:
    return repr(value[:40]) if isinstance(value, str) else f"a {_json_kind(value)}"


def typed_array(column: Sequence[Any], kind: str) -> tuple[pa.Array, list[tuple[int, str]]]:
    """A column's image values (JSON values as :func:`cdckit.values.loads` gives them, None for null) as an
    Arrow array of ``kind``, and the values that did not fit: ``[(index, reason)]`` (they are null).

    >>> array, misfits = typed_array(["12345678901234567.89", 1.5, None, "x"], "decimal(,2)")
    >>> array.type, array.to_pylist()[:2], misfits
    (Decimal128Type(decimal128(38, 2)), [Decimal('12345678901234567.89'), Decimal('1.50')], [(3, "'x' is not a number")])
    >>> typed_array([18000, "2024-05-01"], "date")[0].to_pylist()
    [datetime.date(2019, 4, 14), datetime.date(2024, 5, 1)]
    """
    name, args = parse_kind(kind)
    unit = args[0] if args and args[0] in _UNITS else "ms"
    convert = {"int": lambda v: _whole(v, "a whole number"), "float": _float, "decimal": _decimal, "bool": _bool,
               "date": _date_days, "timestamp": lambda v: _timestamp_ns(v, unit),
               "time": lambda v: _time_ns(v, unit)}.get(name, _text)
    typed: list[Any] = []
    misfits: list[tuple[int, str]] = []
    for index, value in enumerate(column):
        if value is None:
            typed.append(None)
            continue
        try:
            typed.append(convert(value))
        except (Misfit, ArithmeticError, ValueError, OverflowError) as err:
            typed.append(None)
            misfits.append((index, str(err) if isinstance(err, Misfit) else f"{_shown(value)} does not fit {kind}"))
    if name == "int":
        return _int_array(typed, misfits)
    if name == "decimal":
        return _decimal_array(typed, args, misfits)
    if name in ("timestamp", "time"):
        return _nanos_array(typed, name, misfits)
    return pa.array(typed, arrow_type(kind)), misfits


def _int_array(typed: list[int | None], misfits: list[tuple[int, str]]) -> tuple[pa.Array, list[tuple[int, str]]]:
    """Whole numbers as int64, or as decimal128(38, 0) when one lies beyond 64 bits."""
    if all(v is None or values.INT64_MIN <= v <= values.INT64_MAX for v in typed):
        return pa.array(typed, pa.int64()), misfits
    return _decimal_array([None if v is None else Decimal(v) for v in typed], ("38", "0"), misfits)


def _decimal_array(typed: list[Decimal | None], args: tuple[str, ...],
                   misfits: list[tuple[int, str]]) -> tuple[pa.Array, list[tuple[int, str]]]:
    """Exact decimals as decimal128(P, S); S, when not declared, the smallest that holds every value
    (string text of the values when none fits 38 digits)."""
    precision, scale = _decimal_args(args)
    if scale is None:
        with localcontext(prec=2 * _MAX_PRECISION + 2):  # normalize rounds to the context's precision
            scale = max((max(-v.normalize().as_tuple().exponent, 0) for v in typed if v is not None), default=0)
        digits = max((_int_digits(v) for v in typed if v is not None), default=1)
        if digits + scale > precision:  # no decimal128 holds them all: exact text
            return pa.array([None if v is None else _plain_text(v) for v in typed], pa.string()), misfits
    out: list[Decimal | None] = []
    for index, value in enumerate(typed):
        if value is not None:
            try:
                with localcontext(prec=2 * _MAX_PRECISION + 2):
                    exact = value.quantize(Decimal(1).scaleb(-scale))
            except ArithmeticError:
                exact = None
            if exact is None or exact != value or _int_digits(exact) + scale > precision:
                misfits.append((index, f"{_plain_text(value)[:40]} does not fit decimal({precision},{scale})"))
                value = None
            else:
                value = exact
        out.append(value)
    misfits.sort()
    return pa.array(out, pa.decimal128(precision, scale)), misfits


def _int_digits(value: Decimal) -> int:
    """Digits before the point (at least 1)."""
    whole = abs(int(value))
    return max(len(str(whole)), 1)


def _plain_text(value: Decimal) -> str:
    return format(value, "f")


def _nanos_array(typed: list[int | None], name: str,
                 misfits: list[tuple[int, str]]) -> tuple[pa.Array, list[tuple[int, str]]]:
    """Nanosecond instants or times of day in microseconds, or nanoseconds when a value needs them."""
    fine = any(v is not None and v % 1000 for v in typed)
    unit = "ns" if fine else "us"
    if name == "timestamp":
        limit = (values.INT64_MIN, values.INT64_MAX)
        kept = []
        for index, v in enumerate(typed):
            if v is not None and fine and not limit[0] <= v <= limit[1]:
                misfits.append((index, f"{v} ns is beyond the years a timestamp in nanoseconds can hold"))
                v = None
            kept.append(v if v is None or fine else v // 1000)
        misfits.sort()
        return pa.array(kept, pa.int64()).cast(pa.timestamp(unit, tz="UTC")), misfits
    scaled = [v if v is None or fine else v // 1000 for v in typed]
    return pa.array(scaled, pa.int64()).cast(pa.time64(unit)), misfits


# --------------------------------------------------------------------------- inference


def infer_kind(column: Iterable[Any]) -> str:
    """The kind of a column nothing declares, from its image values (None for null).

    The rule, on the non-null values:

    - all booleans: ``bool``;
    - all JSON numbers or exact-number text (a number :func:`cdckit.values.loads`
      keeps as text because a double or 64 bits cannot hold it): ``decimal``
      when one is such a text, else ``float`` when one is a fraction, else
      ``int`` (an integer beyond 64 bits is such a text, so ``decimal``);
    - all ISO-8601 date text (``2024-05-01``): ``date``;
    - all ISO-8601 date-time text (``2024-05-01T09:00:00``, ``...Z``,
      ``...+02:00``, a space for the ``T``): ``timestamp`` (zone-less text is UTC);
    - all objects or arrays: ``json``;
    - anything else, mixes included, and a column only ever null: ``string``
      (other values as their JSON text).

    Digit text such as ``"42"`` stays ``string``: dialects that send every
    value as text (SharePlex, UniVerse) say nothing of the column's type.

    >>> infer_kind([1, 2, None]), infer_kind([1, 2.5]), infer_kind([1, "12345678901234567.89"])
    ('int', 'float', 'decimal')
    >>> infer_kind(["2024-05-01"]), infer_kind(["2024-05-01 09:00:00"]), infer_kind(["42", 1]), infer_kind([])
    ('date', 'timestamp', 'string', 'string')
    """
    seen: set[str] = set()
    for value in column:
        if value is None:
            continue
        seen.add(_value_kind(value))
        if len(seen) > 1 and not seen <= {"int", "float", "exact"}:
            return "string"
    if not seen:
        return "string"
    if seen <= {"int", "float", "exact"}:
        return "decimal" if "exact" in seen else "float" if "float" in seen else "int"
    return {"bool": "bool", "date": "date", "datetime": "timestamp", "nested": "json"}.get(seen.pop(), "string")


def _value_kind(value: Any) -> str:
    found = values.scalar_kind(value)
    if found is not None:
        return found
    kind = value.__class__
    if kind is str:
        if _EXACT_TEXT.match(value) and values.exact_number(value) is value:
            return "exact"
        if _DATE_TEXT.match(value):
            return "date"
        if _DATETIME_TEXT.match(value):
            return "datetime"
        return "text"
    if kind in (dict, list):
        return "nested"
    return "text"


#: A number as JSON writes it (what :func:`cdckit.values.loads` keeps as text when a double cannot hold it).
_EXACT_TEXT = re.compile(r"-?(0|[1-9]\d*)(\.\d+)?([eE][-+]?\d+)?\Z")
