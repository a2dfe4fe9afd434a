"""Time rules shared by every dialect: epoch numbers and text times to UTC nanoseconds, dates, times of day,
and nanoseconds back to milliseconds and ISO text (:mod:`cdckit.values` names them too, as dialects take them).

>>> ms_to_ns(1605339932000)
1605339932000000000
>>> instant_ns("2020-11-14 07:45:32.5+08:00"), ns_to_iso(0)
(1605311132500000000, '1970-01-01T00:00:00')
"""

from __future__ import annotations

import math
import re
from datetime import datetime, timezone
from decimal import Decimal
from functools import lru_cache
from typing import Any
from zoneinfo import ZoneInfo

from .errors import InvalidValue

__all__ = [
    "INT64_MIN",
    "INT64_MAX",
    "INT_TEXT",
    "NUMBER_TEXT",
    "ms_to_ns",
    "seconds_to_ns",
    "checked_ns",
    "text_time_to_ns",
    "instant_ns",
    "date_days",
    "time_of_day_ns",
    "DAY_NS",
    "duration_text",
    "duration_ns",
    "ns_to_ms",
    "ns_to_iso",
]

#: The range of a 64-bit integer: of a timestamp in nanoseconds, of an int64 column.
INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1
#: Text of an integer, and of a number (JSON's form, no sign +, no leading dot).
INT_TEXT = re.compile(r"-?\d+\Z")
NUMBER_TEXT = re.compile(r"-?\d+(\.\d+)?([eE][+-]?\d+)?\Z")


def ms_to_ns(value: Any) -> int | None:
    """Epoch milliseconds (number or number text) to epoch nanoseconds.

    Raises :class:`~cdckit.errors.InvalidValue` for anything else, and for a
    time a timestamp cannot hold (before 1677 or after 2262).

    >>> ms_to_ns("1605339932000.5")
    1605339932000500000
    >>> ms_to_ns(1e308)
    Traceback (most recent call last):
    ...
    cdckit.errors.InvalidValue: 1e+308 epoch milliseconds is beyond the years a timestamp can hold (1677 to 2262)
    """
    return _epoch_to_ns(value, 1_000_000, "milliseconds")


def seconds_to_ns(value: Any) -> int | None:
    """Epoch seconds (number or number text) to epoch nanoseconds (see :func:`ms_to_ns`)."""
    return _epoch_to_ns(value, 1_000_000_000, "seconds")


def _epoch_to_ns(value: Any, scale: int, unit: str) -> int | None:
    if value is None or value == "":
        return None
    kind = value.__class__
    if kind is str:
        text = value.strip()
        if INT_TEXT.match(text):
            value, kind = int(text), int
        elif NUMBER_TEXT.match(text) and len(text) < 40:  # exact: no float rounding of the digits given
            value, kind = int((Decimal(text) * scale).to_integral_value()), int
            scale = 1
        else:
            raise InvalidValue(f"{value[:40]!r} is not a number of epoch {unit}")
    if kind is int:
        ns = value * scale
    elif kind is float and math.isfinite(value) and abs(value) < 1e30:
        ns = int(round(value * scale))
    elif kind is float:
        ns = INT64_MAX + 1  # inf or beyond: out of range below
    else:
        raise InvalidValue(f"a time in epoch {unit} is a {kind.__name__}, not a number")
    if not INT64_MIN <= ns <= INT64_MAX:
        raise InvalidValue(f"{value} epoch {unit} is beyond the years a timestamp can hold (1677 to 2262)")
    return ns


def checked_ns(ns: int | None) -> int | None:
    """``ns`` when a timestamp can hold it, else :class:`~cdckit.errors.InvalidValue`.

    >>> checked_ns(5), checked_ns(None)
    (5, None)
    """
    if ns is not None and not INT64_MIN <= ns <= INT64_MAX:
        raise InvalidValue(f"{ns} ns is beyond the years a timestamp can hold (1677 to 2262)")
    return ns


@lru_cache(maxsize=64)
def _zone(tz: str | None) -> Any:
    return timezone.utc if tz in (None, "UTC", "utc", "Z") else ZoneInfo(tz)


def text_time_to_ns(text: str | None, tz: str | None = None) -> int | None:
    """An ISO-like text time to epoch nanoseconds (the forms of :func:`instant_ns`).

    A time without an offset is read in ``tz`` (UTC when None); :class:`~cdckit.errors.InvalidValue` for
    text that is no time and for a time a nanosecond timestamp cannot hold.

    >>> text_time_to_ns("1970-01-01T00:00:01"), text_time_to_ns("1970-01-01 09:00:01", "Asia/Tokyo")
    (1000000000, 1000000000)
    """
    if text is None or text == "":
        return None
    return checked_ns(instant_ns(text, tz))


_OFFSET = r"(Z|z|UTC|[+-]\d{2}(?::?\d{2}(?::?\d{2})?)?)"
_DATE_PART = r"(-?\d{4,})-(\d{2})-(\d{2})"
_CLOCK_PART = r"(\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?"
_BC = r"(\s+BC)?"
_INSTANT_TEXT = re.compile(rf"\s*{_DATE_PART}(?:[T ]{_CLOCK_PART}\s*{_OFFSET}?)?{_BC}\s*\Z")
_CLOCK_TEXT = re.compile(rf"\s*(\d{{1,2}}):(\d{{2}})(?::(\d{{2}})(?:[.,](\d{{1,9}}))?)?\s*{_OFFSET}?\s*\Z")
_DAY_NS = 86_400_000_000_000
#: Nanoseconds in a day: a time of day lies in ``0 <= ns < DAY_NS``.
DAY_NS = _DAY_NS
_DURATION_TEXT = re.compile(r"\s*(-)?(\d+):([0-5]\d):([0-5]\d)(?:\.(\d{1,9}))?\s*\Z")


def _civil_days(year: int, month: int, day: int) -> int:
    """Days since 1970-01-01 of a proleptic Gregorian date of any year (year 0 is 1 BC); ValueError for no such day.

    >>> _civil_days(1970, 1, 1), _civil_days(2000, 3, 1), _civil_days(10000, 1, 1)
    (0, 11017, 2932897)
    """
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    if (
        not 1 <= month <= 12
        or not 1 <= day <= (31, 29 if leap else 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)[month - 1]
    ):
        raise ValueError("no such day")
    y = year - (month <= 2)
    era = y // 400
    yoe = y - era * 400
    doy = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    return era * 146_097 + yoe * 365 + yoe // 4 - yoe // 100 + doy - 719_468


def _offset_ns(zone: str | None) -> int | None:
    """An offset's nanoseconds east of UTC; None for no offset."""
    if zone is None:
        return None
    if zone in ("Z", "z", "UTC"):
        return 0
    digits = zone[1:].replace(":", "")
    seconds = int(digits[:2]) * 3600 + int(digits[2:4] or 0) * 60 + int(digits[4:6] or 0)
    return (-seconds if zone[0] == "-" else seconds) * 1_000_000_000


def _clock_ns(hours: str, minutes: str, seconds: str | None, fraction: str | None) -> int:
    if int(minutes) > 59 or int(seconds or 0) > 60:
        raise ValueError("no such time")
    return ((int(hours) * 60 + int(minutes)) * 60 + int(seconds or 0)) * 1_000_000_000 + int(
        (fraction or "0").ljust(9, "0")
    )


def instant_ns(text: str, tz: str | None = None) -> int:
    """A date or date-time text as epoch nanoseconds, for any year (a Python int, not bounded to 64 bits).

    The forms of PostgreSQL's output and of ISO 8601: offsets ``+HH``, ``+HH:MM``, ``+HH:MM:SS`` (the
    local mean time of old dates), ``Z``; up to nine fraction digits; years of more than four digits; a
    `` BC`` suffix (1 BC is year 0). A time without an offset is read in ``tz`` (UTC when None).
    :class:`~cdckit.errors.InvalidValue` for anything else (``infinity`` included: it is no instant).

    >>> instant_ns("1900-06-01 08:29:08-03:30:52") == instant_ns("1900-06-01T12:00:00Z")
    True
    >>> instant_ns("10000-01-01") // 86_400_000_000_000, instant_ns("0001-01-01 BC") // 86_400_000_000_000
    (2932897, -719528)
    """
    if not isinstance(text, str):
        raise InvalidValue(f"a text time is a {type(text).__name__}, not text")
    dot = text.find(".")
    if dot < 0 or not text[dot + 7 : dot + 8].isdigit():  # the standard library keeps six fraction digits
        try:  # the common case, in C: years 1 to 9999, ISO forms (PostgreSQL's offsets included)
            return _iso_ns(text, tz)
        except InvalidValue:
            pass
    match = _INSTANT_TEXT.match(text)
    if match is None:
        raise InvalidValue(f"{text[:40]!r} is not a time")
    year, month, day, hours, minutes, seconds, fraction, zone, bc = match.groups()
    year = int(year)
    if bc:
        if year < 1:
            raise InvalidValue(f"{text[:40]!r} is not a time")
        year = 1 - year
    try:
        ns = _civil_days(year, int(month), int(day)) * _DAY_NS
        if hours is not None:
            if int(hours) > 24 or int(hours) == 24 and (int(minutes) or int(seconds or 0) or int(fraction or 0)):
                raise ValueError("no such time")
            ns += _clock_ns(hours, minutes, seconds, fraction)
    except ValueError:
        raise InvalidValue(f"{text[:40]!r} is not a time") from None
    offset = _offset_ns(zone)
    if offset is not None:
        return ns - offset
    if tz in (None, "UTC", "utc", "Z"):
        return ns
    raise InvalidValue(f"{text[:40]!r} is beyond the years a time in zone {tz} can be read")


def _iso_ns(text: str, tz: str | None) -> int:
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00") if text.endswith("Z") else text)
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=_zone(tz))
        delta = moment - datetime(1970, 1, 1, tzinfo=timezone.utc)
    except (ValueError, OverflowError):
        raise InvalidValue(f"{text[:40]!r} is not a time") from None
    return (delta.days * 86_400 + delta.seconds) * 1_000_000_000 + delta.microseconds * 1_000


def date_days(text: str) -> int:
    """A date text (``2024-05-01``, ``10000-01-01``, ``0044-03-15 BC``) as days since 1970-01-01, for any year;
    :class:`~cdckit.errors.InvalidValue` for text that is no date.

    >>> date_days("1970-01-02"), date_days("0001-01-01 BC")
    (1, -719528)
    """
    match = _INSTANT_TEXT.match(text) if isinstance(text, str) else None
    if match is None or match.group(4) is not None:
        raise InvalidValue(f"{str(text)[:40]!r} is not a date")
    return instant_ns(text) // _DAY_NS


def time_of_day_ns(text: str) -> int:
    """A time of day text as nanoseconds after midnight: ``HH:MM[:SS[.f]]``, PostgreSQL's ``24:00:00``, and a
    ``time with time zone`` (``12:34:56.789+05:30``) as the UTC time of day it names (as Debezium gives it).

    >>> time_of_day_ns("00:00:01.5"), time_of_day_ns("12:00:00+05:30") == time_of_day_ns("06:30:00")
    (1500000000, True)
    """
    match = _CLOCK_TEXT.match(text) if isinstance(text, str) else None
    if match is None:
        raise InvalidValue(f"{str(text)[:40]!r} is not a time of day")
    hours, minutes, seconds, fraction, zone = match.groups()
    try:
        ns = _clock_ns(hours, minutes, seconds, fraction)
    except ValueError:
        raise InvalidValue(f"{text[:40]!r} is not a time of day") from None
    if not 0 <= ns <= _DAY_NS:
        raise InvalidValue(f"{text[:40]!r} is not a time of day")
    offset = _offset_ns(zone)
    return ns if offset is None else (ns - offset) % _DAY_NS


def duration_text(ns: int) -> str:
    """A duration (a MySQL ``TIME`` outside a day: negative, or 24 hours and more) as MySQL writes it:
    ``[-]HH:MM:SS``, hours beyond 24, then six digits of fraction when there is one (nine when finer than a
    microsecond).

    >>> duration_text(-3_020_399 * 10**9), duration_text(90_000 * 10**9 + 1_000), duration_text(-1)
    ('-838:59:59', '25:00:00.000001', '-00:00:00.000000001')
    """
    sign = "-" if ns < 0 else ""
    seconds, fraction = divmod(abs(ns), 1_000_000_000)
    text = f"{sign}{seconds // 3600:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"
    if fraction % 1000:
        return f"{text}.{fraction:09d}"
    return f"{text}.{fraction // 1000:06d}" if fraction else text


def duration_ns(text: str) -> int:
    """A duration text (:func:`duration_text`'s form, MySQL's ``TIME``) as signed nanoseconds.

    >>> duration_ns("-838:59:59.000000"), duration_ns("25:00:00.5")
    (-3020399000000000, 90000500000000)
    """
    match = _DURATION_TEXT.match(text) if isinstance(text, str) else None
    if match is None:
        raise InvalidValue(f"{str(text)[:40]!r} is not a duration")
    sign, hours, minutes, seconds, fraction = match.groups()
    ns = _clock_ns(hours, minutes, seconds, fraction)
    return -ns if sign else ns


def ns_to_ms(ns: Any) -> int | None:
    """Epoch nanoseconds (int or pandas Timestamp) to epoch milliseconds."""
    ns = _as_ns(ns)
    return None if ns is None else ns // 1_000_000


def ns_to_iso(ns: Any, sep: str = "T") -> str | None:
    """Epoch nanoseconds to UTC text without offset, to the second (or finer when needed).

    >>> ns_to_iso(1_000_000_000), ns_to_iso(1_500_000_000, sep=" ")
    ('1970-01-01T00:00:01', '1970-01-01 00:00:01.500000')
    """
    ns = _as_ns(ns)
    if ns is None:
        return None
    moment = datetime.fromtimestamp(ns // 1_000_000_000, tz=timezone.utc)
    micros = (ns % 1_000_000_000) // 1_000
    text = moment.replace(tzinfo=None, microsecond=micros).isoformat(sep=sep)
    return text


def _as_ns(value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, int):
        return value
    try:
        if value != value:  # NaT / NaN
            return None
    except (TypeError, ValueError):  # pragma: no cover
        pass
    return int(value.value) if hasattr(value, "value") else int(value)
