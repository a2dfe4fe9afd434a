"""UniVerse change files: one text line per row event, UniVerse marks as delimiters.

A change file holds one row event per LF-terminated line. A line is a list of
``name=value`` fields separated by char 254 (``þ``, the UniVerse field mark,
``"\\xfe"``), and the line itself ends with ``þ``:

- ``src`` the source (like a database name) -> ``database``;
- ``ns`` the namespace, the UniVerse file name -> ``table``;
- ``ts_ms`` epoch milliseconds when the row changed -> ``event_time``;
- ``uid`` the unique, incrementing id of the trigger event -> ``seq``
  (zero-padded so it sorts as text);
- ``op`` ``r`` read (snapshot), ``c`` create, ``u`` update, ``d`` delete;
- ``data`` the column values as ``name=value`` pairs separated by char 253
  (``ý``, the value mark, ``"\\xfd"``), with a ``ý`` at both ends:
  ``data=ý_id=1234ýname=Bobý``.

Quirks:

- Fields and pairs are split on the FIRST ``=``: a value may contain ``=``,
  a name may not. The empty pieces left by the leading/trailing ``ý`` and
  the trailing ``þ`` are ignored.
- Files come in Latin-1 (one byte each, ``FE``/``FD``) or UTF-8 (two bytes
  each); the container decodes either, so this module sees ``str`` lines.
- The format has no types: every value stays text, and an empty value is
  the empty string (UniVerse has no separate SQL NULL).
- ``_id`` is the record key (``key_columns`` is ``["_id"]``).
- ``c``/``r`` data is the after image, ``d`` data the before image, and
  ``u`` data the after image of the changed columns only: an update carries
  no before image and a partial after image.
- ``uid`` need not be unique in practice: the spec's own example sends uid
  12345678 twice (name Bob, then Simon); both lines are kept as events.
- There is no emit time, transaction id or schema.

>>> import cdckit
>>> line = "src=cssþns=CONTRACTSþts_ms=1550549470126þuid=12345678þop=uþdata=ý_id=1234ýname=Bobýþ"
>>> ev = cdckit.read(line)
>>> ev.loc[0, ["dialect", "op", "database", "table", "seq", "key", "after"]].tolist()
['universe', 'update', 'css', 'CONTRACTS', '00000000000012345678', '["1234"]', '{"_id":"1234","name":"Bob"}']
>>> str(ev.loc[0, "event_time"])
'2019-02-19 04:11:10.126000+00:00'
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pandas as pd

from .. import values
from ..frame import Event
from ..io import Message
from ..row_images import key_of
from .base import BadMessage, Dialect, Match, Record, require, rows_of, unpadded_seq
from .registry import register

#: Char 254, the UniVerse field mark: separates the fields of a line.
FIELD_MARK = "\xfe"
#: Char 253, the UniVerse value mark: separates the pairs of the data field.
VALUE_MARK = "\xfd"
#: The record key column.
KEY = "_id"
#: How a composite canonical key is joined into one ``_id`` (the UniVerse multi-part key convention).
KEY_JOIN = "*"

OPS = {"r": "read", "c": "insert", "u": "update", "d": "delete"}
_OP_CODES = {"read": "r", "insert": "c", "update": "u", "delete": "d"}
_UNWRITABLE = (FIELD_MARK, VALUE_MARK, "\n")


@register
class Universe(Dialect):
    """UniVerse change-data-capture files (þ fields, ý data pairs)."""

    name = "universe"
    title = "UniVerse change file"
    spec = "universe-cdc-file.txt"
    layout = "text"
    partial_updates = True
    contiguous_seq = True
    quirks = (
        "Each line is one row event: name=value fields split by char 254 (þ), data pairs split by char 253 (ý).",
        "Names and values are split on the first '=', so a value may contain '=' but a column name may not.",
        "Files are Latin-1 (bytes FE/FD) or UTF-8 (þ and ý as two bytes each); both decode the same.",
        "Every value is text: the format has no types, and an empty value is the empty string, never null.",
        "An update (op=u) carries only the changed columns as its after image and no before image.",
        "A delete (op=d) carries its data as the before image; create (c) and snapshot read (r) as the after image.",
        "_id is the record key; a composite key is written as its parts joined by '*'.",
        "uid is the ordering key (seq), but it may repeat: the spec's example sends uid 12345678 twice and both "
        "lines are kept.",
        "There is no emit time, transaction id or schema.",
    )

    # ------------------------------------------------------------ detection

    def detect(self, value: Any) -> Match | None:
        """A text line with þ field marks; sure when it has both ``op=`` and ``data=`` fields."""
        if not isinstance(value, str) or FIELD_MARK not in value:
            return None
        op = _field_value(value, "op")
        data = value.startswith("data=") or (FIELD_MARK + "data=") in value
        if op is not None and data:
            return Match(0.95, ("þ-separated fields", f"op={op}", "data"))
        if op is not None:
            return Match(0.6, ("þ-separated fields", f"op={op}"))
        if data:
            return Match(0.6, ("þ-separated fields", "data"))
        return Match(0.2, ("þ-separated fields",))

    # ------------------------------------------------------------ decoding

    def decode(self, message: Message) -> list[Event]:
        """The one event of a line (fields split on þ, data pairs on ý, each on its first ``=``)."""
        line = message.value
        if not isinstance(line, str):
            kind = "null" if line is None else "a JSON object" if isinstance(line, dict) else type(line).__name__
            raise BadMessage(f"expected a UniVerse text line, got {kind}")
        if FIELD_MARK not in line:
            raise BadMessage("not a UniVerse line: no field mark (char 254, þ)")
        fields = {}
        for part in line.split(FIELD_MARK):
            if part:
                name, eq, value = part.partition("=")
                if not eq:
                    raise BadMessage(f"field without '=': {part!r}")
                fields[name] = value
        op_raw = require(fields, "op")
        op = OPS.get(op_raw)
        if op is None:
            raise BadMessage(f"unknown op {op_raw!r}")
        row = parse_data(require(fields, "data"))
        try:
            event_time = values.ms_to_ns(fields.get("ts_ms"))
        except ValueError:
            raise BadMessage(f"ts_ms is not epoch milliseconds: {fields['ts_ms']!r}") from None
        text = values.image(row)
        deleted = op == "delete"
        return [
            Event(
                op=op,
                op_raw=op_raw,
                database=fields.get("src"),
                table=fields.get("ns"),
                event_time=event_time,
                seq=values.sortable(fields.get("uid")),
                key_columns=[KEY],
                key=key_of(row, [KEY]),
                before=text if deleted else None,
                after=None if deleted else text,
            )
        ]

    # ------------------------------------------------------------ encoding

    def encode(self, events: pd.DataFrame) -> Iterator[Record]:
        """One line per insert, update, delete or read event.

        The data is the after image (the before image for a delete), written
        whole; an update's before image is dropped. Values are written as
        text: numbers as Python writes them, booleans as ``1``/``0``, null as
        the empty string, objects and arrays as JSON. When the image has no
        ``_id`` column, ``_id=`` is written first from the event's key (parts
        joined by ``*``). ``seq`` is written back as ``uid`` (leading zeros
        dropped); events without one get uid 1, 2, 3... in event order.

        Skipped: other ops (ddl, tombstone, begin...), events without the
        image their op needs, and events whose names or values hold þ, ý or
        a line feed (or ``=`` in a column name), which a line cannot carry.
        """
        for number, row in enumerate(rows_of(events), start=1):
            code = _OP_CODES.get(row["op"])
            image = row["before"] if row["op"] == "delete" else row["after"]
            if code is None or image is None:
                continue
            pairs = [(name, _text(value)) for name, value in values.loads(image).items()]
            if not any(name == KEY for name, _ in pairs) and row["key"] is not None:
                parts = values.loads(row["key"])
                pairs.insert(0, (KEY, KEY_JOIN.join(_text(part) for part in parts)))
            fields = [
                ("src", row["database"]),
                ("ns", row["table"]),
                ("ts_ms", None if row["event_time"] is None else str(values.ns_to_ms(row["event_time"]))),
                ("uid", unpadded_seq(row["seq"], str(number))),
                ("op", code),
            ]
            fields = [(name, value) for name, value in fields if value is not None]
            if not _writable(fields + pairs):
                continue
            data = VALUE_MARK + "".join(f"{name}={value}{VALUE_MARK}" for name, value in pairs)
            yield Record("".join(f"{name}={value}{FIELD_MARK}" for name, value in fields) + f"data={data}{FIELD_MARK}")


def parse_data(data: str) -> dict[str, str]:
    """The column values of a ``data`` field (``ýname=valueý...``), in order.

    >>> parse_data("ý_id=1234ýname=Bobýformula=a=bý")
    {'_id': '1234', 'name': 'Bob', 'formula': 'a=b'}
    """
    row = {}
    for pair in data.split(VALUE_MARK):
        if pair:
            name, eq, value = pair.partition("=")
            if eq and name:
                row[name] = value
            elif not eq:
                raise BadMessage(f"data pair without '=': {pair!r}")
            else:
                raise BadMessage(f"data pair without a column name: {pair!r}")
    return row


def _field_value(line: str, name: str) -> str | None:
    """The value of field ``name`` in a line, or None (cheap: no full split)."""
    head = name + "="
    if line.startswith(head):
        start = len(head)
    else:
        found = line.find(FIELD_MARK + head)
        if found < 0:
            return None
        start = found + len(head) + 1
    end = line.find(FIELD_MARK, start)
    return line[start:] if end < 0 else line[start:end]


def _text(value: Any) -> str:
    """A canonical image value as UniVerse text."""
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, (int, float)):
        return str(value)
    return values.dumps(value)


def _writable(pairs: list[tuple[str, str]]) -> bool:
    for name, value in pairs:
        if "=" in name or not name:
            return False
        for mark in _UNWRITABLE:
            if mark in name or mark in value:
                return False
    return True
