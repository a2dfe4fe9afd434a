r"""Lines ``kafka-console-consumer`` prints with ``--property print.key=true``: the key, a separator, the value.

Kafka's ``DefaultMessageFormatter`` writes, in this order and each followed by
the key separator (``key.separator``, a tab unless set), the fields asked for:
the timestamp (``CreateTime:1714554000000``, ``LogAppendTime:...`` or
``NO_TIMESTAMP``, with ``print.timestamp``), ``Partition:0``
(``print.partition``), ``Offset:42`` (``print.offset``), the headers
(``h1:v1,h2:v2`` or ``NO_HEADERS``, with ``print.headers``), the key
(``print.key``) and last the value; a null key or value prints as ``null``.

Such a line is read as the Kafka record it shows, as a kcat ``-J`` line is:
the message is the value, its Kafka key the key, and the printed partition
and offset are the message's. A line counts only when the value is a whole
JSON object or array (or ``null``, a tombstone) and the key is JSON, ``null``
or text without the separator, so the text lines of other dialects (UniVerse,
test_decoding) are never taken for one. The timestamp and headers are read
past (no dialect takes them from a Kafka record).

>>> line = console_line(b'CreateTime:1714554000000\tPartition:2\tOffset:42\t{"id":1}\t{"op":"c"}')
>>> line.key, line.value, line.partition, line.offset
('{"id":1}', b'{"op":"c"}', 2, 42)
>>> console_line(b'null\tnull').value is None, console_line(b'id[integer]:1\tname[text]:x') is None
(True, True)
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from .. import values
from .message import Message
from .records import kafka_key, value_message

__all__ = [
    "TAB",
    "ConsoleLine",
    "console_line",
    "console_lines",
    "console_message",
    "console_messages",
    "console_head",
    "LAYOUT_WITH_KEY",
    "LAYOUT_WITHOUT_KEY",
    "guessed_separator",
]

#: The separator the console consumer prints between fields unless ``key.separator`` is set.
TAB = "\t"
#: How detection names a message read from such a line (with and without a printed key).
LAYOUT_WITH_KEY = "kafka-console-consumer layout with key"
LAYOUT_WITHOUT_KEY = "kafka-console-consumer layout"

_TIMESTAMP = re.compile(rb"(?:CreateTime|LogAppendTime):-?\d+|NO_TIMESTAMP")
_NUMBER = re.compile(rb"-?\d{1,19}")
_OPENERS = (b"{", b"[", b'"')
_CLOSERS = {b"{": b"}", b"[": b"]", b'"': b'"'}
#: The reason codes of a line that did not parse as one JSON value: it may be a console-consumer line.
_NOT_JSON = ("invalid_json", "truncated_json")
#: A run of characters that may separate a printed key from its value (no letter, digit, quote or bracket).
_SEPARATOR_RUN = re.compile(rb"[^\w\"'\[\]{}]+\Z")
#: How many places a value may start at that :func:`guessed_separator` tries on one line.
_GUESSES = 8


@dataclass(slots=True)
class ConsoleLine:
    """One console-consumer line: ``key`` as printed (None for ``null`` or no key printed), ``value`` the
    JSON text of the value (None for ``null``), ``partition`` and ``offset`` when printed."""

    key: str | None
    value: bytes | None
    partition: int | None = None
    offset: int | None = None
    keyed: bool = True

    # what the batch path asks of a saved Kafka record (see :class:`cdckit.io.SavedRecord`)

    def message_bytes(self) -> bytes | None:
        """The value as raw JSON object text, or None when it is anything else (null, an array)."""
        value = self.value
        return value if value is not None and value[:1] == b"{" else None

    def key_text(self) -> str | None:
        return self.key

    def topic_text(self) -> str | None:
        return None


def console_line(raw: bytes, separator: str | None = None) -> ConsoleLine | None:
    r"""``raw`` (one line, no line end) as a console-consumer line, or None when it is not one.

    ``separator`` is the ``key.separator`` the consumer printed with (a tab when None).

    >>> console_line(b'k1 => {"a": 1}', " => ").key
    'k1'
    >>> console_line(b'{"id":"a|b"}|{"a":1}', "|").key
    '{"id":"a|b"}'
    >>> console_line(b'Partition:0\tNO_HEADERS\tk\t{}').partition
    0
    """
    sep = (separator or TAB).encode("utf-8")
    if sep not in raw:
        return None
    width = len(sep)
    pos, partition, offset, prefixed = 0, None, None, False
    cut = raw.find(sep)
    if cut >= 0 and _TIMESTAMP.fullmatch(raw, 0, cut):
        pos, prefixed = cut + width, True
        cut = raw.find(sep, pos)
    if cut >= 0 and raw.startswith(b"Partition:", pos) and _NUMBER.fullmatch(raw, pos + 10, cut):
        partition, pos, prefixed = int(raw[pos + 10 : cut]), cut + width, True
        cut = raw.find(sep, pos)
    if cut >= 0 and raw.startswith(b"Offset:", pos) and _NUMBER.fullmatch(raw, pos + 7, cut):
        offset, pos, prefixed = int(raw[pos + 7 : cut]), cut + width, True
        cut = raw.find(sep, pos)
        if not values.INT64_MIN <= offset <= values.INT64_MAX:
            return None
    if (
        cut >= 0
        and raw[pos : pos + 1] not in _OPENERS
        and (raw.startswith(b"NO_HEADERS", pos) and cut == pos + 10 or raw.find(b":", pos, cut) >= 0)
    ):
        found = _key_and_value(raw, cut + width, sep, prefixed=False)  # headers are followed by a key
        if found is not None:
            return ConsoleLine(found[0], found[1], partition, offset)
    found = _key_and_value(raw, pos, sep, prefixed)
    if found is None:
        return None
    return ConsoleLine(found[0], found[1], partition, offset, keyed=found[2])


def _key_and_value(raw: bytes, pos: int, sep: bytes, prefixed: bool) -> tuple[str | None, bytes | None, bool] | None:
    """``(key, value, keyed)`` of what follows the prefix fields (from ``pos``), or None. With ``prefixed`` (a
    prefix field was printed), a lone value (no key printed) counts too."""
    start, plain, width = pos, None, len(sep)
    while True:
        cut = raw.find(sep, start)
        if cut < 0:
            break
        key = raw[pos:cut]
        whole = _whole_value(raw, cut + width)
        if key[:1] not in _OPENERS or key == b"null":
            plain = (key, cut + width) if whole and plain is None and start == pos else plain
            break
        if whole and (_closed(key) if start == pos else _json(key)):  # a longer key holds the separator:
            text = _utf8(key)  # it must be JSON to count
            return None if text is None else (text, _value_bytes(raw, cut + width), True)
        if start == pos and whole:
            plain = (key, cut + width)  # text that opens like JSON: a plain key unless a longer JSON key fits
        start = cut + 1  # a JSON key may hold the separator in its quotes
    if plain is not None:
        key, at = plain
        if key == b"null":
            return None, _value_bytes(raw, at), True
        if not key and not prefixed:
            return None
        text = _utf8(key)
        return None if text is None else (text, _value_bytes(raw, at), True)
    if prefixed and _whole_value(raw, pos):
        return None, _value_bytes(raw, pos), False
    return None


def _utf8(key: bytes) -> str | None:
    r"""A printed key as text, or None where it is not UTF-8 (then the line is not a console line).

    >>> _utf8(b'{"id":1}'), _utf8(b'{"id":"\xed"}')
    ('{"id":1}', None)
    """
    try:
        return key.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _whole_value(raw: bytes, pos: int) -> bool:
    """True when ``raw`` from ``pos`` is shaped as a whole JSON object or array on one line, or ``null``."""
    end = len(raw)
    while end > pos and raw[end - 1] in b"\r ":
        end -= 1
    first, last = raw[pos : pos + 1], raw[end - 1 : end]
    return end > pos and (
        (first == b"{" and last == b"}")
        or (first == b"[" and last == b"]")
        or (end - pos == 4 and raw.startswith(b"null", pos))
    )


def _value_bytes(raw: bytes, pos: int) -> bytes | None:
    value = raw[pos:].rstrip(b"\r ")
    return None if value == b"null" else value


def _closed(key: bytes) -> bool:
    """True when ``key`` closes as it opens (``{...}``, ``[...]``, ``"..."``): the key, when it ends at the first
    separator (read as text if it is not JSON after all)."""
    return len(key) > 1 and key[-1:] == _CLOSERS[key[:1]]


def _json(text: bytes) -> bool:
    try:
        values.loads(text)
    except (ValueError, RecursionError):
        return False
    return True


def console_lines(lines: list[bytes], separator: str | None = None) -> list[ConsoleLine | None] | None:
    r"""The lines of a block as console-consumer lines (None for a line that is not one), or None at once
    when the first line is not one: the block is not in that layout.

    >>> [line.offset for line in console_lines([b'Offset:1\tk\t{}', b'Offset:2\tk\t{}'])]
    [1, 2]
    >>> console_lines([b'{"a": 1}']) is None
    True
    """
    sep = (separator or TAB).encode("utf-8")
    out: list[ConsoleLine | None] = []
    for raw in lines:
        raw = raw.strip(b"\r\n")
        line = _usual_line(raw, sep)
        if line is None:
            line = console_line(raw, separator)
            if line is None and not out:
                return None
        out.append(line)
    return out


def _usual_line(raw: bytes, sep: bytes) -> ConsoleLine | None:
    r""":func:`console_line` of the usual line, read at once: the fields the separator cuts are the prefix
    fields the consumer prints (no headers), a key that is ``null``, closed JSON or plain text (no ``:``) and
    a whole value; None for any other line (then :func:`console_line` reads it, and may still take it).

    >>> _usual_line(b'CreateTime:1\tPartition:2\tOffset:3\t{"id":1}\t{"a":1}', b"\t")
    ConsoleLine(key='{"id":1}', value=b'{"a":1}', partition=2, offset=3, keyed=True)
    >>> _usual_line(b'Partition:0\tNO_HEADERS\tk\t{}', b"\t") is None  # headers: the general reading
    True
    """
    width = len(sep)
    cut = raw.rfind(sep)
    if cut < 0:
        return None
    value: bytes | None
    value = raw[cut + width :].rstrip(b"\r ")
    first, last = value[:1], value[-1:]
    if not (first == b"{" and last == b"}" or first == b"[" and last == b"]"):
        if value != b"null":
            return None
        value = None
    before = raw.rfind(sep, 0, cut)
    key: bytes | None
    key = raw[before + width if before >= 0 else 0 : cut]
    head = key[:1]
    if head in _OPENERS:
        if len(key) < 2 or key[-1:] != _CLOSERS[head]:
            return None
    elif key == b"null":
        key = None
    elif not key or b":" in key or key in (b"NO_HEADERS", b"NO_TIMESTAMP"):  # a prefix field, no key
        return None
    fields = raw[:before].split(sep) if before >= 0 else []
    count, at, partition, offset = len(fields), 0, None, None
    if count > 3:
        return None
    if at < count and _TIMESTAMP.fullmatch(fields[at]):
        at += 1
    if at < count and fields[at].startswith(b"Partition:"):
        number = fields[at][10:]
        if not (number.isdigit() and len(number) <= 18):
            return None
        partition, at = int(number), at + 1
    if at < count and fields[at].startswith(b"Offset:"):
        number = fields[at][7:]
        if not (number.isdigit() and len(number) <= 18):
            return None
        offset, at = int(number), at + 1
    if at != count:
        return None
    key_text = None
    if key is not None:
        try:
            key_text = key.decode("utf-8")
        except UnicodeDecodeError:
            return None
    return ConsoleLine(key_text, value, partition, offset)


def console_message(msg: Message, separator: str | None = None) -> Message:
    r"""``msg`` unwrapped when its text is a console-consumer line (see :func:`console_line`), else ``msg``.

    Only a message read as text, or one whose JSON did not parse, can be one.

    >>> from cdckit.io import parse_line
    >>> msg = console_message(parse_line(b'{"id": 1}\t{"op": "c"}', "f", 0, 1))
    >>> msg.value, msg.key, msg.offset
    ({'op': 'c'}, {'id': 1}, 0)
    """
    if msg.code in _NOT_JSON or (msg.error is None and msg.value.__class__ is str):
        raw = msg.raw
        if isinstance(raw, str):
            if (separator or TAB) not in raw and msg.code not in _NOT_JSON:  # a text dialect's line: nothing to do
                return msg
            raw = raw.encode("utf-8", "surrogatepass")
        if not isinstance(raw, (bytes, bytearray)):
            return msg
        line = console_line(bytes(raw).rstrip(b"\r\n"), separator)
        if line is None:
            if msg.code in _NOT_JSON:
                _name_the_separator(msg, bytes(raw), separator)
            return msg
        return unwrapped(line, msg.source, msg.offset, msg.line, raw=msg.raw, partition=msg.partition) or msg
    return msg


def _name_the_separator(msg: Message, raw: bytes, separator: str | None) -> None:
    """Add to the error of a message that is not JSON the separator it would be a console-consumer line with."""
    found = guessed_separator(raw)
    if found is not None and found != (separator or TAB):
        msg.error = (
            f"{msg.error}; it reads as a key, {found!r} and a JSON value: a line kafka-console-consumer printed "
            f"with key.separator={found!r}? read it with key_separator={found!r} (CLI: --key-separator {found!r})"
        )


def guessed_separator(raw: bytes) -> str | None:
    r"""The ``key.separator`` a console-consumer line that is not JSON was printed with, guessed: the run of
    punctuation or spaces just before a JSON object or array that runs to the line's end, when the line reads
    as a console-consumer line with it (a key, or the printed prefix fields and a key, then the value); None
    when no such run makes it one.

    >>> guessed_separator(b'{"id":1}^{"op":"c"}'), guessed_separator(b'1004 | {"op":"c"}')
    ('^', ' | ')
    >>> guessed_separator(b'CreateTime:1::Partition:0::k::{"op":"c"}'), guessed_separator(b'{"op":"c"} trailing')
    ('::', None)
    """
    raw = raw.rstrip(b"\r\n ")
    if raw[-1:] not in (b"}", b"]"):
        return None
    tried, start = 0, 1
    while tried < _GUESSES:
        starts = [at for at in (raw.find(b"{", start), raw.find(b"[", start)) if at > 0]
        if not starts:
            return None
        at = min(starts)
        tried, start = tried + 1, at + 1
        run = _SEPARATOR_RUN.search(raw, 0, at)
        if run is None or run.start() == 0 or not _json(raw[at:]):
            continue
        try:
            separator = run.group().decode("utf-8")
        except UnicodeDecodeError:
            continue
        if "\n" not in separator and console_line(raw, separator) is not None:
            return separator
    return None


def unwrapped(
    line: ConsoleLine,
    source: str,
    offset: int,
    number: int | None,
    raw: bytes | str | None = None,
    partition: int | None = None,
) -> Message | None:
    """The message a console-consumer line carries (its value parsed), with its key, partition and offset."""
    inner = value_message(line.value, source, offset if line.offset is None else line.offset, number)
    if inner is None:
        return None
    inner.key = None if line.key is None else kafka_key(line.key)
    inner.partition = partition if line.partition is None else line.partition
    inner.layout = LAYOUT_WITH_KEY if line.keyed else LAYOUT_WITHOUT_KEY
    if raw is not None:
        inner.raw = raw
    return inner


def console_messages(messages: Iterable[Message], separator: str | None = None) -> Iterator[Message]:
    """``messages``, each unwrapped by :func:`console_message`."""
    for msg in messages:
        yield console_message(msg, separator)


def console_head(head: bytes, separator: str | None = None) -> bool:
    r"""True when most of the first lines of ``head`` (a file's first bytes) are console-consumer lines.

    >>> console_head(b'CreateTime:1\tk\t{"a": 1}\nCreateTime:2\tk\t{"a": 2}\n'), console_head(b"op=c\n")
    (True, False)
    """
    lines = [ln.rstrip(b"\r") for ln in head.split(b"\n")[:-1] if ln.strip()][:10] or [head.strip()]
    found = sum(1 for ln in lines if console_line(ln, separator) is not None)
    return found > 0 and found * 2 >= len(lines)
