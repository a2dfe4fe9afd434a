"""The small base every dialect builds on.

A dialect is a class with a registry ``name`` and three methods:

- ``detect(value) -> Match | None``: how sure it is that one message value is
  in this dialect, and the fields that made it sure (None: it cannot be);
- ``decode(message) -> list[Event]``: the canonical events of one message;
  raise :class:`BadMessage` with a reason for a message it cannot decode, or
  :class:`SkipMessage` for one that rightly produces no row;
- ``encode(events) -> Iterator[Record]``: canonical events back to messages,
  where the format can be written.

>>> from cdckit.dialects.base import Dialect, Match
>>> class Toy(Dialect):
...     name = "toy"
...     def detect(self, value):
...         return Match(1.0, ("toy",)) if isinstance(value, dict) and "toy" in value else None
>>> Toy().detect({"toy": 1})
Match(score=1.0, evidence=('toy',))
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import pandas as pd

from ..frame import Event
from ..io import Message
from .options import DialectOptions

__all__ = [
    "Dialect",
    "Match",
    "Record",
    "BadMessage",
    "SkipMessage",
    "Decoded",
    "Columns",
    "require",
    "expect_object",
    "require_object",
    "rows_of",
    "table_name",
    "unpadded_seq",
]

#: A table's declared column types: ``{column: (raw type as the dialect wrote it, kind)}``, the kinds
#: those of :mod:`cdckit.column_types`.
Columns = dict[str, tuple[str, str]]

#: A dialect remembers the last declaration of at most this many tables (then forgets them all).
_DECLARED_TABLES = 4096


@dataclass(frozen=True, slots=True)
class Match:
    """A detection verdict on one message: a score in (0, 1] and its evidence.

    ``evidence`` names the fields (as dotted paths) or values that decided it.
    """

    score: float
    evidence: tuple[str, ...]


@dataclass(slots=True)
class Record:
    """One encoded message: its value and, for keyed dialects, its Kafka key."""

    value: Any
    key: Any = None


@dataclass(slots=True)
class Decoded:
    """A message and the events it was decoded into, held until its source is over (see
    :meth:`Dialect.settle`); ``skip`` is the reason it is counted as skipped when ``events`` ends empty."""

    message: Message
    dialect: str
    events: list[Event]
    skip: str | None = None


class BadMessage(Exception):
    """Raised by ``decode`` for a message it cannot decode; the text is the reason."""


class SkipMessage(Exception):
    """Raised by ``decode`` for a message that rightly produces no row; the text is the reason."""


class Dialect:
    """Base class of all dialects. Subclasses set ``name`` and override the methods.

    ``tz`` is the zone for zone-less text times (UTC when None); ``options`` holds it with the read's other
    settings (:class:`~cdckit.dialects.options.DialectOptions`; :meth:`configured` makes an instance with them).
    ``title`` is a human name, ``spec`` the document the dialect follows and
    ``quirks`` the things an analyst must know (the dialect tour shows them).
    ``layout`` tells writers how encoded messages are laid out in a file:
    ``"jsonl"`` (one JSON value per line), ``"text"`` (one line each) or
    ``"rows"`` (table rows: JSON Lines, CSV or Parquet).
    """

    name: ClassVar[str] = ""
    title: ClassVar[str] = ""
    spec: ClassVar[str] = ""
    layout: ClassVar[str] = "jsonl"
    #: One sentence each: what an analyst must know about this dialect.
    quirks: ClassVar[tuple[str, ...]] = ()

    def __init__(self, tz: str | None = None) -> None:
        self.tz = tz
        self.options = DialectOptions(tz=tz)
        self._declared: dict[str, Columns] = {}  # table name -> the columns last declared for it
        self._declared_next = 0  # the batch index the next declaration is expected at
        self._declared_same: tuple | None = None  # the last call's columns and table, while they are remembered
        self._declarations: list[tuple[str, Columns, int | None]] = []

    @classmethod
    def producer_losses(cls, types: pd.DataFrame) -> list[dict[str, Any]]:
        """What the producer wrote with less than the database held, told by the read's column declarations
        (``types``: :func:`cdckit.column_types_of`): ``[{table, column, what, why}]`` for the read's report
        (``producer_losses``). None known here.

        >>> Dialect.producer_losses(pd.DataFrame())
        []
        """
        return []

    @classmethod
    def configured(cls, options: DialectOptions) -> Dialect:
        """An instance that follows ``options`` (``__init__`` takes only ``tz``, so that subclasses and
        plug-in dialects keep their constructor).

        >>> from cdckit.dialects import registry
        >>> registry.get("maxwell").configured(DialectOptions(tz="Asia/Tokyo")).tz
        'Asia/Tokyo'
        """
        dialect = cls(tz=options.tz)
        dialect.options = options
        return dialect

    def __repr__(self) -> str:
        return f"<dialect {self.name}>"

    def detect(self, value: Any) -> Match | None:
        """How sure this dialect is that ``value`` (one parsed message) is its own."""
        raise NotImplementedError

    def decode(self, message: Message) -> list[Event]:
        """The canonical events of one message."""
        raise NotImplementedError

    def encode(self, events: pd.DataFrame) -> Iterator[Record]:
        """Canonical events back to this dialect's messages."""
        raise NotImplementedError(f"the {self.name} dialect cannot be written")

    #: True when the dialect sends an update as two messages (events with ``half`` set).
    splits_updates: ClassVar[bool] = False

    #: True when an update's after image may hold only the changed columns:
    #: replay merges it onto the row's current state instead of replacing the row.
    partial_updates: ClassVar[bool] = False

    #: True when the last ``:`` part of ``seq`` is the event's place in its message (Canal's row index in
    #: ``data``), not a position of the source: messages may share the rest (one batch, one millisecond), and the
    #: capture's order then decides between them (see :mod:`cdckit.analysis.ordering.sort`).
    seq_row_in_message: ClassVar[bool] = False

    #: True when ``seq`` numbers are meant to be contiguous (each message one more
    #: than the last), so a missing number is a lost message.
    contiguous_seq: ClassVar[bool] = False

    #: Where a producer writes one transaction's id differently in its records, a regular expression whose first
    #: group is the part that names the transaction (Debezium for PostgreSQL writes ``txId:LSN``, and the LSN part
    #: differs between BEGIN, the changes and END); None: the whole id.
    transaction_key: ClassVar[str | None] = None

    #: Where a change's ``seq`` declares its place in its transaction, a regular expression on ``seq`` whose first
    #: group is that place, counted from 0 (Maxwell's ``xoffset``): a transaction whose places are not 0..n-1 has
    #: lost changes. None: the dialect declares no places.
    transaction_place: ClassVar[str | None] = None

    #: Where a change's ``seq`` says it is its transaction's last (it is also the transaction's commit marker:
    #: Maxwell's ``commit: true`` row), a regular expression on ``seq``. None: the dialect ends its
    #: transactions with ``commit`` events, or not at all.
    transaction_end: ClassVar[str | None] = None

    #: True when a message's meaning depends on the messages before it in its file (a transaction's
    #: BEGIN line gives the id its changes lack; a value may run over several lines): such files are
    #: decoded in one piece, in order, never cut into ranges for worker processes or Spark tasks.
    whole_files: ClassVar[bool] = False

    def finish(self) -> None:
        """The messages of a source have all been decoded: a dialect that holds a message waiting for the
        ones after it (a ``whole_files`` dialect) gives it up, to be taken by :meth:`take_failed`."""

    #: True when the dialect revises a source's events once the source is over (:meth:`settle`): the decode
    #: loop then holds the source's events until its end (a ``whole_files`` dialect's source is one file or
    #: one topic partition, decoded in one piece).
    settles: ClassVar[bool] = False

    def settle(self, decoded: list[Decoded]) -> dict[str, dict[str, Any]]:
        """The messages of a source are over (after :meth:`finish`): revise their events, which no sink has
        seen yet. ``decoded`` holds, in input order, every message decoded into events (by this dialect
        or another); the dialect may edit each one's ``events`` in place (drop, move, fill in) and must
        give each message it leaves without events a ``skip`` reason. Returns what the read report is to
        say of the source: ``{"inferred_keys": {table: {"columns": [...], "evidence": text}}}`` or empty."""
        return {}

    def take_failed(self) -> list[tuple[Message, str, str]]:
        """Messages this dialect held (skipped, waiting for the messages after them) and has given up since
        the last call, as ``(message, the reason it was skipped for, why it is given up)``: the decode loop
        counts each as quarantined instead of skipped (it calls this after every message and after
        :meth:`finish`)."""
        return []

    #: True when the dialect has a batch decoder for raw JSON messages (:meth:`decode_lines`).
    has_line_decoder: ClassVar[bool] = False

    #: True when :meth:`decode` reads the Kafka key (``message.key``); :meth:`decode_lines` then takes
    #: the keys too (``keys``: one JSON text or None per message). Other dialects ignore keys.
    uses_kafka_key: ClassVar[bool] = False

    #: True when :meth:`decode` reads the Kafka topic (``message.topic``); :meth:`decode_lines` then takes
    #: the topics too (``topics``: one text or None per message), when some message has one.
    uses_kafka_topic: ClassVar[bool] = False

    def decode_lines(self, lines: list[bytes]) -> Sequence[tuple | Sequence[tuple] | Event | None]:
        """Decode many raw JSON messages (without Kafka keys) at once, for speed.

        For each message: its events as :class:`cdckit.frame.FastRow` (the
        :data:`cdckit.frame.EVENT_FIELDS` by position; one row, or a list of
        them; a plain tuple in that order is taken too), one :class:`~cdckit.frame.Event` with
        ``half`` set for half of a split update, or None to hand the message
        back to :meth:`decode` (anything unusual: bad JSON, rare shapes,
        errors). For every message it does not hand back it must give exactly
        what :meth:`decode` gives (images compared as parsed JSON); a parity
        test checks this on samples, conversions and mutations of them.
        """
        raise NotImplementedError

    # ------------------------------------------------------------ column types

    def declare(
        self, database: str | None, schema: str | None, table: str | None, columns: Columns, index: int | None = None
    ) -> None:
        """Say what types a table's columns have (``columns``: :data:`Columns`), from the message being decoded.

        ``database``, ``schema`` and ``table`` are the message's events' own.
        ``index`` is the message's position in the lines of :meth:`decode_lines`
        (None in :meth:`decode`). Call it for every message whose types are
        known, in input order: a declaration equal to the last one this
        instance made for the table is dropped at the cost of one identity
        check (hand the same dict for the same raw types). In a batch, a gap
        in the indexes (a message handed back) forgets every table's last
        declaration, so the next one is made again and the declarations a
        batch made stay complete whatever :meth:`decode` does with the
        messages handed back. The declarations made are taken by
        :meth:`take_declarations` (the decode loop does it).

        >>> from cdckit.dialects import registry
        >>> d = registry.create("maxwell")
        >>> cols = {"id": ("bigint", "int")}
        >>> d.declare("shop", None, "items", cols); d.declare("shop", None, "items", dict(cols))
        >>> d.take_declarations()
        [('shop.items', {'id': ('bigint', 'int')}, None)]
        """
        if index is not None:
            if index != self._declared_next:
                self.forget_declarations()
            self._declared_next = index + 1
        same = self._declared_same
        if (
            same is not None and same[0] is columns and same[1] == table and same[2] == database and same[3] == schema
        ):  # the table of the last call again, with its types
            return
        name = table_name(database, schema, table)
        if name is None or not columns:
            return
        declared = self._declared
        last = declared.get(name)
        self._declared_same = (columns, table, database, schema)
        if last is columns:
            return
        if len(declared) >= _DECLARED_TABLES:
            declared.clear()
        declared[name] = columns
        if last != columns:
            self._declarations.append((name, columns, index))

    def take_declarations(self) -> list[tuple[str, Columns, int | None]]:
        """The declarations made since the last call, as ``(table name, columns, index)``, in the order made."""
        found = self._declarations
        if found:
            self._declarations = []
        return found

    def forget_declarations(self) -> None:
        """Forget the last declaration of every table (the next ones are made again): for a decode loop
        whose messages reach this instance out of input order."""
        self._declared.clear()
        self._declared_next = 0
        self._declared_same = None

    @classmethod
    def can_encode(cls) -> bool:
        """True when the dialect overrides :meth:`encode`."""
        return cls.encode is not Dialect.encode


def table_name(database: str | None, schema: str | None, table: str | None) -> str | None:
    """The name :func:`cdckit.frame.table_names` gives an event of this table (None without a table).

    >>> table_name("shop", "public", "items"), table_name(None, "ns", "t"), table_name(None, None, "t")
    ('shop.items', 'ns.t', 't')
    """
    if table.__class__ is not str:
        return None
    prefix = database if database is not None else schema
    return table if prefix is None else f"{prefix}.{table}"


def require(obj: Mapping[str, Any], field: str, where: str = "") -> Any:
    """``obj[field]``, or :class:`BadMessage` naming the missing field.

    >>> require({"a": 1}, "a")
    1
    >>> require({}, "op", "payload.")
    Traceback (most recent call last):
    ...
    cdckit.dialects.base.BadMessage: missing required field payload.op
    """
    try:
        return obj[field]
    except (KeyError, TypeError):
        raise BadMessage(f"missing required field {where}{field}") from None


def expect_object(value: Any, what: str) -> dict[str, Any]:
    """``value`` if it is a JSON object, else :class:`BadMessage`."""
    if not isinstance(value, dict):
        kind = "text" if isinstance(value, str) else "null" if value is None else type(value).__name__
        raise BadMessage(f"expected {what} as a JSON object, got {kind}")
    return value


def require_object(obj: Mapping[str, Any], field: str, where: str = "") -> dict[str, Any]:
    """``obj[field]`` when it is a JSON object, else :class:`BadMessage` naming the field missing or not an object.

    >>> require_object({"meta": {"op": "ins"}}, "meta")
    {'op': 'ins'}
    >>> require_object({"data": [1]}, "data", "payload.before.")
    Traceback (most recent call last):
    ...
    cdckit.dialects.base.BadMessage: expected payload.before.data as a JSON object, got list
    """
    found = require(obj, field, where)
    if type(found) is not dict:
        expect_object(found, where + field)
    return found


def unpadded_seq(seq: str | None, otherwise: str | None) -> str | None:
    """A ``seq`` to write back as the log number it was read from: a zero-padded 20-digit number
    (:func:`cdckit.values.sortable`) without its padding, other text as it is; ``otherwise`` when there is none.

    >>> unpadded_seq("00000000000000000042", None), unpadded_seq("000:7", None), unpadded_seq(None, "8")
    ('42', '000:7', '8')
    """
    if seq is None:
        return otherwise
    if len(seq) == 20 and seq.isdigit():
        return seq.lstrip("0") or "0"
    return seq


def rows_of(events: pd.DataFrame) -> Iterator[dict[str, Any]]:
    """The canonical events as plain dicts (times as int nanoseconds, NA as None), for encoders."""
    columns = list(events.columns)
    for values in events.itertuples(index=False, name=None):
        row = dict(zip(columns, values))
        for name, value in row.items():
            if value is None or isinstance(value, (list, str, int, float)):
                continue
            if value is pd.NA or value is pd.NaT:
                row[name] = None
            elif isinstance(value, pd.Timestamp):
                row[name] = value.value
            elif hasattr(value, "tolist"):
                row[name] = value.tolist()
        yield row
