"""SharePlex JSON, as OceanBase OMS writes it to Kafka and RocketMQ.

One JSON object per row change::

    {"data": {"col1": "val1"},
     "meta": {"time": "2024-05-01T09:00:00", "op": "upd", "posttime": "2024-05-01T09:00:01",
              "seq": "...", "table": "shop.customers", "rowid": "shop.customers-7",
              "trans": "...", "scn": "..."},
     "key": {"id": 7}}

- ``meta.op`` is ``ins``, ``upd`` or ``del``. An insert's ``data`` is the
  after image and a delete's the before image, both whole. An update's
  ``data`` holds ONLY the changed columns: the after image is that partial
  row (the other columns are absent, never made up), and the before image is
  the top-level ``key`` object, the key values before the change.
- ``meta.table`` is ``{database}.{table}``, split at its LAST dot (so an
  OceanBase ``tenant.database.table`` keeps ``tenant.database`` together).
- Key columns: an update's are the names in ``key``, and its canonical key
  is the key AFTER the change (``key`` overlaid with the key columns present
  in ``data``). An insert or delete names no key columns; they are derived
  from ``meta.rowid`` (``{database.table}-{key values joined by \\u0001}``):
  each rowid value, in order, is matched to the first image column not yet
  taken whose value as text equals it (numbers in JSON form, ``true``/
  ``false``). When a value matches no column, ``key_columns`` is None and
  ``key`` is the rowid values as a JSON array of strings. The match is a
  guess: a non-key column with the same text that comes first in the image
  is taken instead of the key column.
- There are no types: values are kept exactly as they arrive.
- ``meta.time`` (change time) and ``meta.posttime`` (write time) are
  zone-less text, read in the reader's ``tz`` (UTC when None);
  ``meta.trans`` is the transaction id; ``meta.scn``, or else ``meta.seq``,
  is ``seq`` (zero-padded when numeric).

>>> import cdckit
>>> msg = ('{"data": {"tier": "gold"}, "meta": {"time": "2024-05-01T09:00:00", "op": "upd", '
...        '"table": "shop.customers", "rowid": "shop.customers-7", "trans": "1001", "scn": "42"}, "key": {"id": 7}}')
>>> ev = cdckit.read(msg)
>>> ev.loc[0, ["dialect", "op", "database", "table", "seq", "key", "before", "after"]].tolist()
['shareplex', 'update', 'shop', 'customers', '00000000000000000042', '[7]', '{"id":7}', '{"tier":"gold"}']
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import datetime
from typing import Any, Literal
from zoneinfo import ZoneInfo

import msgspec
import pandas as pd

from .. import values
from ..frame import Event, FastRow
from ..io import Message
from ..row_images import key_of
from .base import BadMessage, Dialect, Match, Record, expect_object, require, require_object, rows_of, unpadded_seq
from .registry import register

OPS = {"ins": "insert", "upd": "update", "del": "delete"}
_OP_CODES = {"insert": "ins", "update": "upd", "delete": "del"}
#: Separates the key values in ``meta.rowid``.
ROWID_KEY_SEPARATOR = "\x01"
_META_FIELDS = ("time", "table", "rowid", "posttime", "trans", "scn")
#: How many distinct times (and table names) a decoder remembers.
_REMEMBERED = 4096
#: A zone-less time to the microsecond: :meth:`SharePlex.time` remembers its second.
_MICROSECONDS = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}[T ][0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{6}\Z")


@register
class SharePlex(Dialect):
    """SharePlex JSON row changes (OceanBase OMS)."""

    name = "shareplex"
    title = "SharePlex JSON"
    spec = "oceanbase-oms-formats.txt"
    partial_updates = True
    quirks = (
        "An update's data holds only the changed columns: its after image is partial and its before image is "
        "the key object (the key values before the change).",
        "The canonical key of an update is the key after the change: the key object overlaid with key columns "
        "present in data.",
        "Inserts and deletes do not name their key columns: they are guessed by matching the meta.rowid values "
        "(joined by \\u0001), in order, to the first image column with the same text.",
        "When a rowid value matches no column, key_columns is None and key is the rowid values as strings.",
        "meta.table is '{database}.{table}', split at its last dot.",
        "meta.time and meta.posttime are zone-less text, read as UTC unless the reader is given tz=.",
        "seq is meta.scn when present, else meta.seq; txn_id is meta.trans.",
        "There are no column types: values stay exactly as they arrive.",
    )

    def __init__(self, tz: str | None = None) -> None:
        super().__init__(tz)
        self._times: dict[str, int | None] = {}  # time text -> epoch ns
        self._seconds: dict[str, int | None] = {}  # second of a time to the microsecond -> epoch ns
        self._tables: dict[str | None, tuple[str | None, str | None]] = {}  # meta.table -> (database, table)

    # ------------------------------------------------------------ detection

    def detect(self, value: Any) -> Match | None:
        if not isinstance(value, dict):
            return None
        meta = value.get("meta")
        if not isinstance(meta, dict) or not isinstance(value.get("data"), dict):
            return None
        fields = tuple(f"meta.{f}" for f in _META_FIELDS if f in meta)
        op = meta.get("op")
        if op in OPS:
            score = 0.95 if fields else 0.8
            return Match(score, ("data is an object", "meta.op=" + op) + fields)
        if fields:
            return Match(0.4, ("data is an object",) + fields)
        return None

    # ------------------------------------------------------------ decoding

    def decode(self, message: Message) -> list[Event]:
        value = message.value
        if type(value) is not dict:
            expect_object(value, "a SharePlex message")
        meta = require_object(value, "meta")
        op_raw = require(meta, "op", "meta.")
        op = OPS.get(op_raw) if type(op_raw) is str else None
        if op is None:
            raise BadMessage(f"unknown op {op_raw!r}")
        data = require_object(value, "data")
        before: dict[str, Any] | None
        after: dict[str, Any] | None
        database, table = split_table(meta.get("table"))
        if op == "update":
            key = expect_object(require(value, "key"), "key")
            if not key:
                raise BadMessage("update with an empty key object")
            before, after = key, data
            key_columns, key_text = update_key(key, data)
        else:
            before, after = (None, data) if op == "insert" else (data, None)
            key_columns, key_text = rowid_key(meta.get("rowid"), meta.get("table"), data)
        return [
            Event(
                op=op,
                op_raw=op_raw,
                database=database,
                table=table,
                event_time=self.time(meta.get("time"), "time"),
                emit_time=self.time(meta.get("posttime"), "posttime"),
                seq=seq_of(meta.get("scn"), meta.get("seq")),
                txn_id=text_or_none(meta.get("trans")),
                key_columns=key_columns,
                key=key_text,
                before=values.image(before),
                after=values.image(after),
            )
        ]

    def time(self, text: Any, field: str) -> int | None:
        """The zone-less time ``text`` of ``meta.{field}``, read in ``self.tz``.

        Parsed times are remembered, as a stream repeats the same second many
        times; a time to the microsecond (``YYYY-MM-DD HH:MM:SS.ffffff``) is
        its second's time plus its microseconds (a zone changes its offset
        only at a whole second).
        """
        if text is None or text == "":
            return None
        if text.__class__ is not str:
            raise BadMessage(f"meta.{field} is not a text time: {text!r}")
        try:
            if len(text) == 26 and text[19] == ".":
                second = self._seconds.get(text[:19])  # holds only the seconds of well-formed times
                if second is None and _MICROSECONDS.match(text):
                    second = self._remember(self._seconds, text[:19])
                micros = text[20:]
                if second is not None and micros.isdigit() and micros.isascii():
                    return values.checked_ns(second + int(micros) * 1_000)
            ns = self._times.get(text)
            return ns if ns is not None else self._remember(self._times, text)
        except ValueError:
            raise BadMessage(f"meta.{field} is not a time: {text!r}") from None

    def _remember(self, cache: dict[str, int | None], text: str) -> int | None:
        """The time ``text`` in epoch nanoseconds, kept in ``cache`` (of bounded size)."""
        if len(cache) >= _REMEMBERED:
            cache.clear()
        ns = cache[text] = values.text_time_to_ns(text, self.tz)
        return ns

    # ------------------------------------------------------------ batch decoding (the fast path)

    has_line_decoder = True

    def decode_lines(self, lines: list[bytes]) -> list[tuple | None]:
        """The events of many raw SharePlex messages (JSON lines, no Kafka keys) at once.

        Takes each line's bytes; gives for each its event as a tuple of
        :data:`cdckit.frame.EVENT_FIELDS`, or None to hand it back to
        :meth:`decode`. msgspec reads ``meta`` (:class:`_Message`) and keeps
        ``data`` and ``key`` as raw JSON text: an image is parsed only when a
        key is made from it (an update's key, an insert's or delete's rowid),
        and its text is taken as it stands when it holds no number a double
        cannot carry. Bad JSON, other types of ``meta`` fields, an image that
        is not an object, an update without a key object and times that are
        not times go back to :meth:`decode`, which gives the reason.
        """
        out: list[tuple | None] = []
        append = out.append
        decode = _MESSAGE.decode
        for line in lines:
            try:
                message = decode(line)
                if not line.isascii():
                    line.decode()  # msgspec skips unknown fields unchecked; decode() refuses bad UTF-8 anywhere
                append(self._fast_event(message))
            except (msgspec.DecodeError, msgspec.ValidationError, UnicodeDecodeError, ValueError, BadMessage):
                append(None)
        return out

    def _fast_event(self, message: _Message) -> tuple | None:
        """The event tuple of one message read by msgspec, or None to hand it back to :meth:`decode`."""
        meta = message.meta
        op_raw = meta.op
        op = OPS[op_raw]
        data = bytes(message.data)
        if data[:1] != b"{":
            return None
        before: str | None
        after: str | None
        if op == "update":
            key, before = values.parsed_image(bytes(message.key))
            if key.__class__ is not dict or not key:
                return None
            row, after = values.parsed_image(data)
            key_columns, key_text = update_key(key, row)
        else:
            if meta.rowid is None:
                key_columns = key_text = None
                text = values.image_text(data)
            else:
                row, text = values.parsed_image(data)
                key_columns, key_text = rowid_key(meta.rowid, meta.table, row)
            before, after = (None, text) if op == "insert" else (text, None)
        names = self._tables.get(meta.table)
        if names is None:
            if len(self._tables) >= _REMEMBERED:
                self._tables.clear()
            names = self._tables[meta.table] = split_table(meta.table)
        database, table = names
        return FastRow(
            op,
            op_raw,
            database,
            None,
            table,
            self.time(meta.time, "time"),
            self.time(meta.posttime, "posttime"),
            seq_of(meta.scn, meta.seq),
            text_or_none(meta.trans),
            key_columns,
            key_text,
            before,
            after,
            None,
        )

    # ------------------------------------------------------------ encoding

    def encode(self, events: pd.DataFrame) -> Iterator[Record]:
        """SharePlex messages for inserts, updates and deletes.

        Every other op (DDL, transaction markers, heartbeats, snapshot reads,
        tombstones) has no SharePlex form and is skipped, as is an update
        without a before image. An update writes the key before the change
        as ``key`` (the before image's key columns, or the whole before image
        when there are no key columns) and, as ``data``, only the columns that
        changed; when the before image holds nothing but the key columns (as a
        decoded SharePlex update does) the after image is written as it is.
        Times are written as zone-less text in the dialect's ``tz`` (UTC when
        None). ``meta.rowid`` lists the key values (of the before image for an
        update). When no event has a ``seq``, ``meta.scn`` is synthesized as
        1, 2, 3... in event order; otherwise an event without one gets none.
        """
        rows = list(rows_of(events))
        synthesize = all(row["seq"] is None for row in rows)
        for number, row in enumerate(rows):
            op = row["op"]
            if op not in _OP_CODES:
                continue
            before = None if row["before"] is None else values.loads(row["before"])
            after = None if row["after"] is None else values.loads(row["after"])
            columns = row["key_columns"]
            key = None
            key_values: list[Any] | None
            if op == "update":
                if before is None or after is None:
                    continue
                if columns and all(c in before for c in columns):
                    key = {c: before[c] for c in columns}
                    data = after if before.keys() <= key.keys() else changed_columns(before, after)
                else:  # no key columns known: the whole before image stands for the key
                    key = before
                    data = changed_columns(before, after)
                key_values = list(key.values())
            else:
                data = after if op == "insert" else before
                if data is None:
                    continue
                key_values = self.key_values(row, data)
            table = row["table"] if row["database"] is None else f"{row['database']}.{row['table']}"
            meta: dict[str, Any] = {}
            if row["event_time"] is not None:
                meta["time"] = self.time_text(row["event_time"])
            meta["op"] = _OP_CODES[op]
            if row["emit_time"] is not None:
                meta["posttime"] = self.time_text(row["emit_time"])
            meta["table"] = table
            if key_values is not None:
                meta["rowid"] = f"{table}-" + ROWID_KEY_SEPARATOR.join(as_text(v) for v in key_values)
            if row["txn_id"] is not None:
                meta["trans"] = row["txn_id"]
            scn = unpadded_seq(row["seq"], str(number + 1) if synthesize else None)
            if scn is not None:
                meta["scn"] = scn
            message: dict[str, Any] = {"data": data, "meta": meta}
            if key is not None:
                message["key"] = key
            yield Record(message)

    def key_values(self, row: dict[str, Any], image: dict[str, Any]) -> list[Any] | None:
        """The values the rowid lists: the key columns of the image, else the key itself."""
        columns = row["key_columns"]
        if columns and all(c in image for c in columns):
            return [image[c] for c in columns]
        if row["key"] is not None:
            return list(values.loads(row["key"]))
        return None

    def time_text(self, ns: int) -> str | None:
        """Epoch nanoseconds as zone-less text in ``self.tz``."""
        if self.tz is None:
            return values.ns_to_iso(ns)
        seconds, rest = divmod(ns, 1_000_000_000)
        moment = datetime.fromtimestamp(seconds, ZoneInfo(self.tz)).replace(tzinfo=None, microsecond=rest // 1000)
        return moment.isoformat()


# ---------------------------------------------------------------- the batch decoder's view of a message

_NULL = msgspec.Raw(b"null")


class _Meta(msgspec.Struct):
    """``meta`` as the batch decoder reads it: a field of another type sends the message to ``decode``."""

    op: Literal["ins", "upd", "del"]
    time: str | None = None
    posttime: str | None = None
    table: str | None = None
    rowid: str | None = None
    trans: str | int | None = None
    scn: str | int | None = None
    seq: str | int | None = None


class _Message(msgspec.Struct):
    """A SharePlex message as the batch decoder reads it: the images stay raw JSON text."""

    meta: _Meta
    data: msgspec.Raw
    key: msgspec.Raw = _NULL


_MESSAGE = msgspec.json.Decoder(_Message)


# ---------------------------------------------------------------- helpers


def update_key(key: dict[str, Any], data: dict[str, Any]) -> tuple[list[str] | None, str | None]:
    """``(key_columns, key)`` of an update: the ``key`` object's columns, valued after the change
    (``key`` overlaid with the key columns present in ``data``).

    >>> update_key({"id": 7}, {"id": 8, "tier": "gold"})
    (['id'], '[8]')
    """
    key_columns = list(key)
    now = {name: data[name] if name in data else key[name] for name in key_columns}
    return key_columns, key_of(now, key_columns)


def rowid_key(rowid: Any, table: Any, image: dict[str, Any]) -> tuple[list[str] | None, str | None]:
    """``(key_columns, key)`` of an insert or delete, from ``meta.rowid`` matched to its image
    (the rowid values as text when one matches no column; ``(None, None)`` without a rowid).

    >>> rowid_key("shop.t-7", "shop.t", {"id": 7}), rowid_key("shop.t-9", "shop.t", {"id": 7})
    ((['id'], '[7]'), (None, '["9"]'))
    """
    parts = rowid_values(rowid, table)
    key_columns = match_key_columns(parts, image) if parts is not None else None
    if key_columns is not None:
        return key_columns, key_of(image, key_columns)
    return None, None if parts is None else values.dumps(parts)


def seq_of(scn: Any, seq: Any) -> str | None:
    """``seq`` of a message: ``meta.scn``, or else ``meta.seq``, zero-padded when numeric.

    >>> seq_of("42", "7"), seq_of("", 7), seq_of(None, None)
    ('00000000000000000042', '00000000000000000007', None)
    """
    return values.sortable(scn if scn not in (None, "") else seq)


def split_table(name: Any) -> tuple[str | None, str | None]:
    """``meta.table`` as ``(database, table)``, split at the last dot.

    >>> split_table("shop.customers"), split_table("tenant1.shop.customers"), split_table("customers")
    (('shop', 'customers'), ('tenant1.shop', 'customers'), (None, 'customers'))
    """
    if not isinstance(name, str) or not name:
        return None, None
    database, dot, table = name.rpartition(".")
    return (database, table) if dot else (None, name)


def rowid_values(rowid: Any, table: Any) -> list[str] | None:
    """The key values of ``meta.rowid`` (``{database.table}-{v1\\u0001v2...}``), or None.

    >>> rowid_values("shop.order_items-101\\x012", "shop.order_items")
    ['101', '2']
    """
    if not isinstance(rowid, str) or not rowid:
        return None
    prefix = f"{table}-" if isinstance(table, str) else None
    if prefix and rowid.startswith(prefix):
        rest = rowid[len(prefix) :]
    else:
        _, dash, rest = rowid.partition("-")
        if not dash:
            return None
    return rest.split(ROWID_KEY_SEPARATOR)


def as_text(value: Any) -> str:
    """A JSON value as the text a rowid would show: strings as they are, others as JSON."""
    return value if isinstance(value, str) else values.dumps(value)


def match_key_columns(parts: list[str], image: dict[str, Any]) -> list[str] | None:
    """The image columns the rowid values name: for each value in order, the first
    column not yet taken whose value as text equals it; None when one matches nothing.

    >>> match_key_columns(["101", "2"], {"order_id": 101, "line_no": 2, "qty": 2})
    ['order_id', 'line_no']
    >>> match_key_columns(["9"], {"id": 1}) is None
    True
    """
    chosen: list[str] = []
    for part in parts:
        for name, value in image.items():
            if value is not None and name not in chosen and as_text(value) == part:
                chosen.append(name)
                break
        else:
            return None
    return chosen


def text_or_none(value: Any) -> str | None:
    if value is None or value == "":
        return None
    return value if isinstance(value, str) else str(value)


def changed_columns(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    """The columns of ``after`` whose value differs from ``before`` (or that ``before`` lacks)."""
    missing = object()
    changed = {}
    for name, value in after.items():
        old = before.get(name, missing)
        if old is missing or old != value or type(old) is not type(value):
            changed[name] = value
    return changed
