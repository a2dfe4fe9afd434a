"""Column types: what each dialect says a source column holds, in one small vocabulary.

A dialect that knows its columns' types (Canal's MySQL types and JDBC codes, OceanBase Extend's type map,
DataWorks and DataHub Blob column types, Debezium's Kafka Connect schema with its logical types, ...) declares
them for each table as ``{column: (raw, kind)}``: ``raw`` is the type exactly as the dialect wrote it
(``"decimal(10,2)"``, ``"int32 io.debezium.time.Date"``), ``kind`` is one of these canonical kinds:

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

A ``time`` column with a value outside a day (MySQL's ``TIME``, -838:59:59 to 838:59:59, as a number or
as :func:`cdckit.times.duration_text`) is a duration (Arrow ``duration``, pandas ``timedelta64``), every
value alike; 24:00:00 is a duration only there, a misfit of a time of day otherwise.

A read keeps the declarations it met in ``cdckit.column_types_of(events)``: a DataFrame with one row per column
each time a table's declared types change (the first time a table is seen included), columns ``table``
(``"db.table"`` as :func:`cdckit.frame.table_names` names it), ``column``, ``type`` (raw), ``kind``, ``source``
and ``offset`` (the message that declared it), in input order.

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
from collections.abc import Iterable, Sequence
from datetime import date
from decimal import Decimal, localcontext
from typing import Any

import pandas as pd
import pyarrow as pa

from . import times, values
from .errors import InvalidValue
from .frame import PANDAS_TYPES

__all__ = [
    "KINDS",
    "TYPE_COLUMNS",
    "parse_kind",
    "is_kind",
    "arrow_type",
    "decimal_type",
    "typed_array",
    "infer_kind",
    "Misfit",
    "column_types_frame",
]

#: The canonical kind names (a kind may carry arguments in parentheses, see the module docstring).
KINDS = ("int", "float", "decimal", "bool", "string", "enum", "binary", "json", "date", "timestamp", "time")

#: The columns of ``cdckit.column_types_of(events)``.
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
_PLAIN_TYPES = {
    "int": pa.int64(),
    "float": pa.float64(),
    "bool": pa.bool_(),
    "string": pa.string(),
    "enum": pa.string(),
    "binary": pa.string(),
    "json": pa.string(),
    "date": pa.date32(),
}
_UNITS = {"s": 1_000_000_000, "ms": 1_000_000, "us": 1_000, "ns": 1}
_MAX_PRECISION = 38
_MAX_WIDE_PRECISION = 76


def arrow_type(kind: str) -> pa.DataType:
    """The Arrow type a column of ``kind`` gets before its values are seen.

    The type :func:`typed_array` gives may be finer: a ``decimal`` without
    scale gets the smallest scale that holds every value, a ``timestamp`` or
    ``time`` is in nanoseconds only when a value needs them, an ``int``
    column with a value beyond 64 bits is a decimal of scale 0. A decimal is
    ``decimal128`` up to 38 digits, ``decimal256`` up to 76, and its exact
    text beyond (PostgreSQL's ``numeric`` holds a thousand).

    >>> arrow_type("decimal(10,2)"), arrow_type("decimal")
    (Decimal128Type(decimal128(10, 2)), Decimal128Type(decimal128(38, 0)))
    >>> arrow_type("timestamp(ms)"), arrow_type("enum")
    (TimestampType(timestamp[us, tz=UTC]), DataType(string))
    >>> arrow_type("decimal(50,10)"), arrow_type("decimal(1000,10)")
    (Decimal256Type(decimal256(50, 10)), DataType(string))
    """
    name, args = parse_kind(kind)
    if name == "decimal":
        precision, scale = _decimal_args(args)
        return decimal_type(precision or _MAX_PRECISION, scale or 0)
    if name == "timestamp":
        return pa.timestamp("ns" if args == ("ns",) else "us", tz="UTC")
    if name == "time":
        return pa.time64("ns" if args == ("ns",) else "us")
    return _PLAIN_TYPES[name]


def _decimal_args(args: tuple[str, ...]) -> tuple[int | None, int | None]:
    """``(precision, scale)`` of a decimal kind's arguments, None for one not given."""
    precision = int(args[0]) if args and args[0].isdigit() and int(args[0]) > 0 else None
    scale = int(args[1]) if len(args) > 1 and args[1].lstrip("-").isdigit() else None
    return precision, scale


def decimal_type(precision: int, scale: int) -> pa.DataType:
    """The Arrow type of exact decimals of ``precision`` digits, ``scale`` after the point: ``decimal128`` up to
    38 digits, ``decimal256`` up to 76, beyond (or a scale Arrow refuses) their exact text as ``string``.

    A scale above the precision (PostgreSQL's ``numeric(5,6)``) widens the precision to it, as Arrow needs.

    >>> decimal_type(38, 10), decimal_type(76, 0), decimal_type(77, 0)
    (Decimal128Type(decimal128(38, 10)), Decimal256Type(decimal256(76, 0)), DataType(string))
    >>> decimal_type(5, 6)
    Decimal128Type(decimal128(6, 6))
    """
    precision = max(precision, scale)
    try:
        if precision <= _MAX_PRECISION:
            return pa.decimal128(precision, scale)
        if precision <= _MAX_WIDE_PRECISION:
            return pa.decimal256(precision, scale)
    except (ValueError, pa.ArrowInvalid):
        pass
    return pa.string()


# --------------------------------------------------------------------------- image value -> typed value


class Misfit(ValueError):
    """A value that does not fit its column's kind (the message says why)."""


_INT_TEXT = re.compile(r"\s*[-+]?\d+\s*\Z")
_NUMBER_TEXT = re.compile(r"\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*\Z")
_DATE_TEXT = re.compile(r"(\d{4})-(\d{2})-(\d{2})\Z")
_DATETIME_TEXT = re.compile(
    r"(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}(?::\d{2})?)(?:[.,](\d{1,9}))?"
    r"\s*(Z|z|UTC|[+-]\d{2}(?::?\d{2}(?::?\d{2})?)?)?\Z"
)
#: The days and nanoseconds pandas and Python's ``datetime`` hold: years 1 to 9999.
_FIRST_DAY, _LAST_DAY = (
    date(1, 1, 1).toordinal() - date(1970, 1, 1).toordinal(),
    date(9999, 12, 31).toordinal() - date(1970, 1, 1).toordinal(),
)
_DAY_NS = 86_400_000_000_000
_FIRST_NS, _LAST_NS = _FIRST_DAY * _DAY_NS, (_LAST_DAY + 1) * _DAY_NS - 1
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
            return int(value) if len(value) < 4000 else int(Decimal(value))  # int() of text stops at 4300 digits
        if _NUMBER_TEXT.match(value):
            number = Decimal(value)
            if number == number.to_integral_value():  # exact: an integral value needs no rounding
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
    """A date as days since 1970-01-01: date text (PostgreSQL's forms, see :func:`cdckit.values.date_days`, or a
    time text at midnight), or a number of days; a date Python's ``datetime`` cannot hold (years 1 to 9999)
    does not fit."""
    if isinstance(value, str):
        try:
            days = values.date_days(value)
        except InvalidValue:
            ns = _instant_ns(value, "a date")
            if ns % _DAY_NS:
                raise Misfit(f"text {value[:40]!r} is not a date") from None
            days = ns // _DAY_NS
    else:
        days = _whole(value, "a date")
    if not _FIRST_DAY <= days <= _LAST_DAY:
        raise Misfit(f"{_shown(value)} is beyond the years a date can hold (1 to 9999)")
    return days


def _instant_ns(text: str, what: str = "a time") -> int:
    """Date-time text as epoch nanoseconds (:func:`cdckit.values.instant_ns`; zone-less text is UTC)."""
    try:
        return values.instant_ns(text)
    except InvalidValue:
        raise Misfit(f"text {text[:40]!r} is not {what}") from None


def _timestamp_ns(value: Any, unit: str) -> int:
    """An instant as epoch nanoseconds: ISO text, or a number of ``unit`` since the epoch."""
    if isinstance(value, str) and not _NUMBER_TEXT.match(value):
        return _instant_ns(value)
    number = _decimal(value)
    with localcontext() as context:  # (not localcontext(prec=...): Python 3.10 takes no settings there)
        context.prec = len(number.as_tuple().digits) + 12  # exact: room for the unit's nine digits
        number *= _UNITS[unit]
    if number != number.to_integral_value():
        raise Misfit(f"{_shown(value)} {unit} is finer than a nanosecond")
    return int(number)


def _time_or_duration_ns(value: Any, unit: str) -> int:
    """A time of day as nanoseconds after midnight: ``HH:MM[:SS[.f]]`` text (with an offset: the UTC time of
    day it names), or a number of ``unit``; or a duration outside a day (negative, a day or more: the number,
    or its text ``[-]H:MM:SS[.f]``) as signed nanoseconds (:func:`_nanos_array` tells them apart)."""
    if isinstance(value, str) and not _NUMBER_TEXT.match(value):
        try:
            return values.time_of_day_ns(value)
        except InvalidValue:
            try:
                ns = times.duration_ns(value)
            except InvalidValue:
                raise Misfit(f"text {value[:40]!r} is not a time of day or a duration") from None
    else:
        ns = _timestamp_ns(value, unit)
    if not values.INT64_MIN <= ns <= values.INT64_MAX:  # beyond 292 years: no time of day, no duration
        raise Misfit(f"{_shown(value)} is not a time of day or a duration")
    return ns


def _json_kind(value: Any) -> str:
    names: dict[type, str] = {dict: "object", list: "array"}
    return names.get(type(value), type(value).__name__)


def _shown(value: Any) -> str:
    return repr(value[:40]) if isinstance(value, str) else f"a {_json_kind(value)}"


def typed_array(column: Sequence[Any], kind: str) -> tuple[pa.Array, list[tuple[int, str]]]:
    """A column's image values (JSON values as :func:`cdckit.values.loads` gives them, None for null) as an
    Arrow array of ``kind``, and the values that did not fit: ``[(index, reason)]`` (they are null).

    >>> array, misfits = typed_array(["12345678901234567.89", 1.5, None, "x"], "decimal(,2)")
    >>> array.type, array.to_pylist()[:2]
    (Decimal128Type(decimal128(38, 2)), [Decimal('12345678901234567.89'), Decimal('1.50')])
    >>> misfits
    [(3, "'x' is not a number")]
    >>> typed_array([18000, "2024-05-01"], "date")[0].to_pylist()
    [datetime.date(2019, 4, 14), datetime.date(2024, 5, 1)]
    >>> typed_array(["-838:59:59", 3_600_000_000], "time(us)")[0].to_pylist()  # MySQL's TIME: durations
    [datetime.timedelta(days=-35, seconds=3601), datetime.timedelta(seconds=3600)]
    """
    name, args = parse_kind(kind)
    unit = args[0] if args and args[0] in _UNITS else "ms"
    convert = {
        "int": lambda v: _whole(v, "a whole number"),
        "float": _float,
        "decimal": _decimal,
        "bool": _bool,
        "date": _date_days,
        "timestamp": lambda v: _timestamp_ns(v, unit),
        "time": lambda v: _time_or_duration_ns(v, unit),
    }.get(name, _text)
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
    """Whole numbers as int64, or as a decimal of scale 0 when one lies beyond 64 bits."""
    if all(v is None or values.INT64_MIN <= v <= values.INT64_MAX for v in typed):
        return pa.array(typed, pa.int64()), misfits
    return _decimal_array([None if v is None else Decimal(v) for v in typed], ("", "0"), misfits)


def _decimal_array(
    typed: list[Decimal | None], args: tuple[str, ...], misfits: list[tuple[int, str]]
) -> tuple[pa.Array, list[tuple[int, str]]]:
    """Exact decimals as :func:`decimal_type` of the declared precision and scale; when not declared, the scale
    is the smallest that holds every value and the precision the fewest digits of 38, 76 or more that hold
    them all (more than 76: their exact text)."""
    precision, scale = _decimal_args(args)
    present = [v for v in typed if v is not None]
    if scale is None:
        scale = max((max(-_exponent(v), 0) for v in present), default=0)
    if precision is None:
        needed = max((_int_digits(v) for v in present), default=1) + max(scale, 0)
        precision = (
            _MAX_PRECISION
            if needed <= _MAX_PRECISION
            else _MAX_WIDE_PRECISION
            if needed <= _MAX_WIDE_PRECISION
            else needed
        )
    target = decimal_type(precision, scale)
    out: list[Any] = []
    for index, value in enumerate(typed):
        cell: Decimal | str | None = None
        if value is not None:
            exact = _at_scale(value, scale)
            if exact is None or _significant_digits(exact, scale) > precision:
                misfits.append((index, f"{_plain_text(value)[:40]} does not fit decimal({precision},{scale})"))
            else:
                cell = exact if target != pa.string() else _plain_text(exact)
        out.append(cell)
    misfits.sort()
    return pa.array(out, target), misfits


def _exponent(value: Decimal) -> int:
    """The exponent of a Decimal without its trailing zeros (``1.50`` -> -1), exactly whatever its digits."""
    sign, digits, exponent = value.as_tuple()
    if not isinstance(exponent, int):
        return 0
    stripped = len(digits) - len("".join(map(str, digits)).rstrip("0")) if any(digits) else len(digits) - 1
    return exponent + stripped


def _at_scale(value: Decimal, scale: int) -> Decimal | None:
    """``value`` with ``scale`` digits after the point when that keeps it exact, else None."""
    _, digits, exponent = value.as_tuple()
    if not isinstance(exponent, int) or _exponent(value) < -scale:  # (an int exponent: a finite value)
        return None
    with localcontext() as context:  # (not localcontext(prec=...): Python 3.10 takes no settings there)
        context.prec = len(digits) + abs(exponent) + abs(scale) + 2
        return value.quantize(Decimal((0, (1,), -scale)))


def _int_digits(value: Decimal) -> int:
    """Digits before the point (none for a value below 1)."""
    return max(value.adjusted() + 1, 0) if value else 0


def _significant_digits(value: Decimal, scale: int) -> int:
    """The digits of the unscaled integer of ``value`` as :func:`_at_scale` gives it (no context to round)."""
    return _int_digits(value) if scale < 0 or not value else len(value.as_tuple().digits)


def _plain_text(value: Decimal) -> str:
    return format(value, "f")


def _nanos_array(
    typed: list[int | None], name: str, misfits: list[tuple[int, str]]
) -> tuple[pa.Array, list[tuple[int, str]]]:
    """Nanosecond instants or times of day in microseconds, or nanoseconds when a value needs them. An
    instant pandas cannot hold (before year 1 or after 9999; in nanoseconds, beyond 1677 to 2262) does not
    fit."""
    fine = any(v is not None and v % 1000 for v in typed)
    unit = "ns" if fine else "us"
    if name == "timestamp":
        low, high = (values.INT64_MIN, values.INT64_MAX) if fine else (_FIRST_NS, _LAST_NS)
        kept = []
        for index, v in enumerate(typed):
            if v is not None and not low <= v <= high:
                misfits.append(
                    (
                        index,
                        f"{v} ns since 1970 is beyond the years a timestamp"
                        f"{' in nanoseconds' if fine else ''} can hold",
                    )
                )
                v = None
            kept.append(v if v is None or fine else v // 1000)
        misfits.sort()
        return pa.array(kept, pa.int64()).cast(pa.timestamp(unit, tz="UTC")), misfits
    scaled = [v if v is None or fine else v // 1000 for v in typed]
    if any(v is not None and not 0 <= v <= _DAY_NS for v in typed):  # a duration (MySQL's TIME), not a time of day
        return pa.array(scaled, pa.int64()).cast(pa.duration(unit)), misfits
    for index, v in enumerate(typed):
        if v == _DAY_NS:  # 24:00:00 (PostgreSQL's end of the day): no time of day holds it
            misfits.append((index, "24:00:00 is not a time of day"))
            scaled[index] = None
    misfits.sort()
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


def column_types_frame(declarations: list[tuple[str, dict[str, tuple[str, str]], str, int]]) -> pd.DataFrame:
    """Declarations ``(table, columns, source, offset)`` as a frame of :data:`cdckit.column_types.TYPE_COLUMNS`,
    one row per column (empty, with those columns, when there is none).

    >>> column_types_frame([("shop.items", {"id": ("bigint(20)", "int")}, "f.jsonl", 3)]).values.tolist()
    [['shop.items', 'id', 'bigint(20)', 'int', 'f.jsonl', 3]]
    >>> list(column_types_frame([]).columns)
    ['table', 'column', 'type', 'kind', 'source', 'offset']
    """
    rows = [
        (
            _declared_text(table),
            _declared_text(column),
            _declared_text(raw),
            _declared_text(kind),  # a Python
            _declared_text(source),
            offset,
        )  # message's
        for table, columns, source, offset in declarations
        for column, (raw, kind) in columns.items()
    ]  # names may be any
    arrays = [
        pa.array(list(values), pa.int64() if name == "offset" else pa.string())
        for name, values in zip(TYPE_COLUMNS, zip(*rows) if rows else [[]] * len(TYPE_COLUMNS))
    ]
    return pa.Table.from_arrays(arrays, names=list(TYPE_COLUMNS)).to_pandas(types_mapper=PANDAS_TYPES.get)


def _declared_text(value: Any) -> str | None:
    """A declared name or type as text (a message given as a Python dict may name a column by a number, or
    by text holding a lone surrogate, which Arrow cannot hold: it becomes U+FFFD).

    >>> _declared_text(3), _declared_text("id"), _declared_text("a" + chr(0xD800)) == "a" + chr(0xFFFD)
    ('3', 'id', True)
    """
    if value is None:
        return None
    text = value if isinstance(value, str) else str(value)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "".join("\ufffd" if "\ud800" <= c <= "\udfff" else c for c in text)
    return text
