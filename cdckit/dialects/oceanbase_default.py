"""OceanBase OMS "Default" JSON: ``prevStruct`` / ``postStruct`` / ``allMetaData`` / ``recordType``.

OceanBase Migration Service (OMS) writes one JSON object per changed row to
Kafka or RocketMQ::

    {"prevStruct": {...}, "postStruct": {...},
     "allMetaData": {"checkpoint", "record_primary_key", "record_primary_value", "source_identity",
                     "dbType", "storeDataSequence", "table_name", "db", "timestamp", "uniqueId"},
     "recordType": "INSERT" | "UPDATE" | "DELETE" | "HEARTBEAT" | "DDL"}

- ``prevStruct`` is the before image (DELETE and UPDATE), ``postStruct`` the
  after image (INSERT and UPDATE); the other one is null and is not read.
  The format carries no column types, so values stay exactly as they arrive
  (OMS usually writes them as text).
- ``record_primary_key`` names the key columns, ``record_primary_value``
  their values, several joined by the control character U+0001 (the spec
  prints it as "/u0001"). Key values are taken from the image, typed as the
  image has them; the text parts are the fallback when the image lacks a key
  column.
- ``db`` is ``tenant.database`` when ``dbType`` says the source is OceanBase
  (``OCEANBASE``, ``OB_IN_ORACLE_MODE``, ``OB_MYSQL``...): the tenant prefix
  is dropped and the database is the part after the first ``.``. Other
  sources (``MYSQL``, ``ORACLE``...) write a plain name, kept whole.
- ``timestamp`` is second-level epoch text, the event time (zone-less
  date-time text is read in the reader's ``tz``). There is no emit time.
- ``storeDataSequence`` (timestamp * 100000 + a sequence number) is ``seq``;
  ``uniqueId``, the transaction sequence id, is ``txn_id``. ``checkpoint`` and
  ``source_identity`` are synchronization metadata, not part of the frame.
- The spec does not say where a DDL record puts its statement: OMS puts it in
  ``postStruct.ddl`` (``postStruct.sql`` is accepted too); that text is the
  ``ddl`` field and such a ``postStruct`` is not a row image.
- A HEARTBEAT has no images: a ``heartbeat`` event with its time. A ``ROW``
  record (full synchronization, not in the spec's list but written by OMS
  during the full phase) is a snapshot ``read`` without timestamp or sequence.

>>> import cdckit
>>> msg = ('{"prevStruct": null, "postStruct": {"id": "7", "name": "Ada"}, "recordType": "INSERT", '
...        '"allMetaData": {"record_primary_key": "id", "record_primary_value": "7", "dbType": "OCEANBASE", '
...        '"storeDataSequence": 171455400000003, "table_name": "customer", "db": "t1.shop", '
...        '"timestamp": "1714554000", "uniqueId": "u-1"}}')
>>> ev = cdckit.read(msg, dialect="oceanbase_default")
>>> ev.loc[0, ["op", "database", "table", "key", "after", "seq"]].tolist()
['insert', 'shop', 'customer', '["7"]', '{"id":"7","name":"Ada"}', '00000171455400000003']
>>> str(ev.loc[0, "event_time"])
'2024-05-01 09:00:00+00:00'
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated, Any, ClassVar

import msgspec
import pandas as pd

from .. import values
from ..frame import Event, FastRow
from ..io import Message
from ..row_images import key_of
from .base import BadMessage, Dialect, Match, Record, expect_object, require, rows_of
from .registry import register

#: recordType -> canonical op.
OPS = {
    "INSERT": "insert",
    "UPDATE": "update",
    "DELETE": "delete",
    "HEARTBEAT": "heartbeat",
    "DDL": "ddl",
    "ROW": "read",
}
_RECORD_TYPES = {op: record_type for record_type, op in OPS.items()}
_ROW_OPS = frozenset({"insert", "update", "delete", "read"})
_KEY_SEPARATOR = "\u0001"
#: The tenant written in front of the database by the encoder (dbType OCEANBASE).
TENANT = "ob_tenant"
_SEQUENCE_DIGITS = 100_000  # storeDataSequence = seconds * 100000 + a sequence number of at most 5 digits
_NS = 1_000_000_000


@register
class OceanBaseDefault(Dialect):
    """OceanBase OMS Default JSON records."""

    name = "oceanbase_default"
    title = "OceanBase OMS Default JSON"
    spec = "oceanbase-oms-formats.txt"
    quirks: ClassVar[tuple[str, ...]] = (
        "prevStruct is the before image (UPDATE, DELETE) and postStruct the after image (INSERT, UPDATE).",
        "There are no column types: values stay exactly as they arrive, usually as text.",
        "Composite keys are joined by the control character U+0001 (the spec prints it as '/u0001') "
        "in record_primary_key and record_primary_value.",
        "Key values come from the image; the text parts of record_primary_value are used only "
        "when the image lacks a key column.",
        "For an OceanBase source db reads tenant.database: the tenant is dropped; other dbTypes "
        "(MYSQL...) write a plain database name.",
        "timestamp is second-level epoch text: event times have whole seconds and there is no emit time.",
        "seq is storeDataSequence (seconds * 100000 + a sequence number), absent when sequenceEnabled is off.",
        "uniqueId (the transaction sequence id) is txn_id; checkpoint and source_identity are not kept.",
        "A DDL record carries its statement in postStruct.ddl (the spec does not say where; "
        "OMS writes it there), which is not a row image.",
        "HEARTBEAT records have no images: heartbeat events with a time only.",
        "ROW records (the full-synchronization phase) are snapshot reads without timestamp or sequence.",
    )

    # ------------------------------------------------------------ detection

    def detect(self, value: Any) -> Match | None:
        shape = record_shape(value)
        if shape is None:
            return None
        score, evidence = shape
        if light_type_where(value) is not None:  # DefaultExtendColumnType, not plain Default
            return Match(0.4, evidence)
        return Match(score, evidence)

    # ------------------------------------------------------------ decoding

    def decode(self, message: Message) -> list[Event]:
        record = expect_object(message.value, "an OceanBase record")
        op_raw = require(record, "recordType")
        op = OPS.get(op_raw) if isinstance(op_raw, str) else None
        if op is None:
            raise BadMessage(f"unknown recordType {op_raw!r}")
        meta = expect_object(require(record, "allMetaData"), "allMetaData")
        event = Event(
            op=op,
            op_raw=op_raw,
            database=database_of(meta),
            table=text_field(meta, "table_name"),
            event_time=self.event_time(meta.get("timestamp")),
            seq=sequence_of(meta.get("storeDataSequence")),
            txn_id=txn_id_of(meta.get("uniqueId")),
        )
        if op == "ddl":
            event.ddl = ddl_text(record.get("postStruct"))
            return [event]
        if op == "heartbeat":
            return [event]
        if op == "delete":
            prev, post = row_struct(record, "prevStruct", op_raw), None
        elif op == "update":
            prev = row_struct(record, "prevStruct", op_raw, optional=True)  # tolerated: the after image says it all
            post = row_struct(record, "postStruct", op_raw)
        else:
            prev, post = None, row_struct(record, "postStruct", op_raw)
        before, after = self.images(prev, post, event)
        columns = split_key(meta.get("record_primary_key"))
        event.key_columns = columns
        event.key = key_text(before if op == "delete" else after, columns, meta.get("record_primary_value"))
        event.before = values.image(before)
        event.after = values.image(after)
        return [event]

    def images(
        self, prev: dict[str, Any] | None, post: dict[str, Any] | None, event: Event | None = None
    ) -> tuple[dict | None, dict | None]:
        """The before and after images (``event``: the record's, for the table it names): Default has no
        types, values are kept as they are."""
        return prev, post

    # ------------------------------------------------------------ batch decoding (the fast path)

    has_line_decoder = True

    def decode_lines(self, lines: list[bytes]) -> list[tuple | None]:
        """The events of many raw JSON records at once: msgspec reads them (:class:`_Record`), the
        images stay raw JSON text and go through :meth:`line_images`.

        Takes one record per line; gives for each its event as a tuple of
        :data:`cdckit.frame.EVENT_FIELDS` (what :meth:`decode` gives, images
        compared as parsed JSON), or None to hand it back to :meth:`decode`:
        DDL records, bad JSON, an unknown recordType, a missing image, fields of
        a type other than the usual ones (a numeric record_primary_value or
        dbType, a float timestamp...). :meth:`decode` keeps no state between records, so the
        order of fast and handed-back records does not matter. Event times and
        databases are worked out once per distinct text in ``lines``.
        """
        out: list[tuple | None] = []
        append = out.append
        decode = _RECORD.decode
        times: dict[str | int | None, int | None] = {}
        databases: dict[tuple[str | None, str | None], str | None] = {}
        for index, line in enumerate(lines):
            try:
                record = decode(line)
                op_raw = record.recordType
                op = OPS.get(op_raw)
                if op is None or op == "ddl":
                    append(None)
                    continue
                meta = record.allMetaData
                timestamp, place = meta.timestamp, (meta.db, meta.dbType)
                event_time = (
                    times[timestamp] if timestamp in times else times.setdefault(timestamp, self.event_time(timestamp))
                )
                database = (
                    databases[place]
                    if place in databases
                    else databases.setdefault(place, database_name(meta.db or None, meta.dbType))
                )
                head = (
                    op,
                    op_raw,
                    database,
                    None,
                    meta.table_name or None,
                    event_time,
                    None,
                    sequence_of(meta.storeDataSequence),
                    txn_id_of(meta.uniqueId),
                )
                if op == "heartbeat":
                    append(FastRow(*head, None, None, None, None, None))
                    continue
                prev = raw_object(record.prevStruct, "prevStruct") if op in ("update", "delete") else None
                post = raw_object(record.postStruct, "postStruct") if op != "delete" else None
                if (post if op != "delete" else prev) is None:
                    append(None)  # decode() refuses it: the image it needs is null
                    continue
                columns = split_key(meta.record_primary_key)
                key_side = None if columns is None else "before" if op == "delete" else "after"
                before, after, key_row = self.line_images(prev, post, key_side, head, index)
                append(
                    FastRow(*head, columns, key_text(key_row, columns, meta.record_primary_value), before, after, None)
                )
            except (msgspec.DecodeError, ValueError, BadMessage):  # ValueError covers bad UTF-8 in an image
                append(None)
        return out

    def line_images(
        self, prev: bytes | None, post: bytes | None, key_side: str | None, head: tuple = (), index: int | None = None
    ) -> tuple[str | None, str | None, dict[str, Any] | None]:
        """``(before, after, key image)`` from raw image JSON, as :meth:`images` makes them: Default keeps
        the text as :func:`values.image_text` writes it and parses only the image the key is read from
        (``key_side``: "before", "after" or None for none). ``head``: the event's first fields (its table),
        ``index``: the line's place in the batch."""
        key_data = prev if key_side == "before" else post if key_side == "after" else None
        before = None if prev is None else values.image_text(prev)
        after = None if post is None else values.image_text(post)
        return before, after, None if key_data is None else values.loads(key_data)

    def event_time(self, timestamp: Any) -> int | None:
        """``allMetaData.timestamp``: epoch seconds (text or number), or zone-less date-time text."""
        if timestamp is None or timestamp == "":
            return None
        try:
            if isinstance(timestamp, str):
                whole, dot, fraction = timestamp.partition(".")
                if whole.isdigit() and (not dot or fraction.isdigit()):
                    return int(whole) * _NS + int(fraction[:9].ljust(9, "0") if dot else 0)
                return values.text_time_to_ns(timestamp, self.tz)
            if isinstance(timestamp, (int, float)) and not isinstance(timestamp, bool):
                return values.seconds_to_ns(timestamp)
        except ValueError:
            pass
        raise BadMessage(f"allMetaData.timestamp is not a time: {timestamp!r}")

    # ------------------------------------------------------------ encoding

    def encode(self, events: pd.DataFrame) -> Iterator[Record]:
        """Records with dbType OCEANBASE and db ``ob_tenant.<database>``.

        ``seq`` (digits) is written back as ``storeDataSequence``; an
        incremental event without one gets ``event seconds * 100000 + n`` (n
        counts the events of that second), kept increasing in event order.
        Snapshot reads get none (the full phase has no sequence). Events
        Default cannot carry are skipped: begin, commit, tombstone, other, a
        ddl without statement, an insert, read or update without after image
        and a delete without before image. Emit times are not written (the
        format has none).
        """
        rows = list(rows_of(events))
        types = self.table_types(rows)
        sequencer = Sequencer()
        for row in rows:
            op = row["op"]
            record_type = _RECORD_TYPES.get(op)
            if record_type is None or not _expressible(row):
                continue
            seconds = None if row["event_time"] is None else row["event_time"] // _NS
            seq = row["seq"]
            if seq is not None and seq.isdigit():
                sequence: Any = sequencer.seen(int(seq)) if int(seq) <= values.INT64_MAX else seq
            else:
                sequence = None if op == "read" else sequencer.next(seconds)
            table_types = types.get((row["database"], row["table"]), {})
            prev = post = None
            if op == "ddl":
                post = {"ddl": row["ddl"]}
            elif op != "heartbeat":
                prev = self.encode_image(row["before"], table_types) if op in ("update", "delete") else None
                post = self.encode_image(row["after"], table_types) if op != "delete" else None
            columns = row["key_columns"] if op in _ROW_OPS else None
            key_value = join_key_values(values.loads(row["key"])) if columns and row["key"] is not None else ""
            meta = {
                "checkpoint": key_value if op == "read" else None if seconds is None else str(seconds),
                "record_primary_key": _KEY_SEPARATOR.join(columns) if columns else "",
                "record_primary_value": key_value,
                "source_identity": "cdckit_subtopic_0",
                "dbType": "OCEANBASE",
                "storeDataSequence": sequence,
                "table_name": row["table"],
                "db": None if row["database"] is None else f"{TENANT}.{row['database']}",
                "timestamp": None if row["event_time"] is None else seconds_text(row["event_time"]),
                "uniqueId": row["txn_id"],
            }
            yield Record({"prevStruct": prev, "postStruct": post, "allMetaData": meta, "recordType": record_type})

    def table_types(self, rows: list[dict[str, Any]]) -> dict[tuple, Any]:
        """Column types per table for the encoder: Default writes none."""
        return {}

    def encode_image(self, text: str | None, types: Any) -> dict[str, Any] | None:
        """An image as written: Default writes the values as they are."""
        return None if text is None else values.loads(text)


def _expressible(row: dict[str, Any]) -> bool:
    op = row["op"]
    if op == "ddl":
        return bool(row["ddl"])
    if op == "delete":
        return row["before"] is not None
    return op == "heartbeat" or row["after"] is not None


class Sequencer:
    """Synthetic ``storeDataSequence`` values: seconds * 100000 + n, always increasing."""

    def __init__(self) -> None:
        self.last = -1
        self.per_second: dict[int, int] = {}

    def seen(self, sequence: int) -> int:
        """A sequence taken from the events; later synthetic ones stay above it."""
        self.last = max(self.last, sequence)
        return sequence

    def next(self, seconds: int | None) -> int:
        second = seconds if seconds is not None else max(self.last, 0) // _SEQUENCE_DIGITS
        n = self.per_second.get(second, 0)
        self.per_second[second] = n + 1
        return self.seen(max(self.last + 1, second * _SEQUENCE_DIGITS + n))


# ---------------------------------------------------------------- helpers shared with Extend


def record_shape(value: Any) -> tuple[float, tuple[str, ...]] | None:
    """``(score, evidence)`` when ``value`` has the OMS Default shape, else None."""
    if not isinstance(value, dict) or "allMetaData" not in value or "recordType" not in value:
        return None
    record_type = value["recordType"]
    if isinstance(value["allMetaData"], dict) and isinstance(record_type, str) and record_type in OPS:
        return 0.9, ("allMetaData", "recordType=" + record_type)
    return 0.5, ("allMetaData", "recordType")


def light_type_where(value: dict[str, Any]) -> str | None:
    """Which image carries a ``__light_type`` map (the Extend marker), or None."""
    post = value.get("postStruct")
    if isinstance(post, dict) and "__light_type" in post:
        return "postStruct.__light_type"
    prev = value.get("prevStruct")
    if isinstance(prev, dict) and "__light_type" in prev:
        return "prevStruct.__light_type"
    return None


def _is_oceanbase(db_type: Any) -> bool:
    if not isinstance(db_type, str):
        return False
    upper = db_type.upper()
    return upper.startswith("OCEANBASE") or upper.startswith("OB_")


def text_field(meta: dict[str, Any], field: str) -> str | None:
    """A text field of ``allMetaData`` (None when absent or empty)."""
    text = meta.get(field)
    if text is None or text == "":
        return None
    if not isinstance(text, str):
        raise BadMessage(f"allMetaData.{field} is not text: {text!r}")
    return text


def database_of(meta: dict[str, Any]) -> str | None:
    """``allMetaData.db`` without the tenant prefix an OceanBase source writes."""
    return database_name(text_field(meta, "db"), meta.get("dbType"))


def database_name(db: str | None, db_type: Any) -> str | None:
    """The database of a non-empty ``db`` text: ``tenant.database`` loses its tenant when ``db_type``
    says the source is OceanBase."""
    if db is None:
        return None
    if _is_oceanbase(db_type):
        tenant, dot, database = db.partition(".")
        if dot:
            return database
    return db


def txn_id_of(value: Any) -> str | None:
    """``allMetaData.uniqueId`` as text (None when absent or empty)."""
    return None if value is None or value == "" else str(value)


def sequence_of(value: Any) -> str | None:
    """``storeDataSequence`` as a 20-digit sortable string."""
    if value is None or value == "":
        return None
    if (isinstance(value, int) and not isinstance(value, bool) and value >= 0) or (
        isinstance(value, str) and value.isdigit()
    ):
        return values.sortable(value)
    raise BadMessage(f"allMetaData.storeDataSequence is not a non-negative integer: {value!r}")


def row_struct(record: dict[str, Any], field: str, op_raw: str, optional: bool = False) -> dict[str, Any] | None:
    """The row image ``field`` of a record (None only when ``optional`` and null or absent)."""
    struct = record.get(field)
    if struct is None:
        if optional:
            return None
        require(record, field)
        raise BadMessage(f"{op_raw} record with a null {field}")
    return expect_object(struct, field)


def split_key(text: Any) -> list[str] | None:
    """``record_primary_key`` as a list of column names; None when empty."""
    if text is None or text == "":
        return None
    if not isinstance(text, str):
        raise BadMessage(f"allMetaData.record_primary_key is not text: {text!r}")
    return text.split(_KEY_SEPARATOR)


def key_text(row: dict[str, Any] | None, columns: list[str] | None, primary_value: Any) -> str | None:
    """The key from the image, falling back to the parts of ``record_primary_value``."""
    if not columns or row is None:
        return None
    for column in columns:
        if column not in row:
            break
    else:
        return key_of(row, columns)
    parts = primary_value.split(_KEY_SEPARATOR) if isinstance(primary_value, str) and primary_value else None
    if parts is None or len(parts) != len(columns):
        return None
    return values.dumps([row[c] if c in row else part for c, part in zip(columns, parts)])


def ddl_text(post: Any) -> str:
    """The statement of a DDL record: ``postStruct.ddl`` (or ``postStruct.sql``)."""
    if isinstance(post, dict):
        text = post.get("ddl", post.get("sql"))
        if isinstance(text, str) and text:
            return text
    raise BadMessage("DDL record without its statement in postStruct.ddl")


def value_text(value: Any) -> Any:
    """A value as OMS writes it in text: numbers as their digits, booleans as 1/0, null as null."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value)
    return value


def join_key_values(parts: list[Any]) -> str:
    """Key values as ``record_primary_value`` text, joined by U+0001."""
    return _KEY_SEPARATOR.join("" if p is None else str(value_text(p)) for p in parts)


def seconds_text(ns: int) -> str:
    """Epoch nanoseconds as second-level epoch text (a fraction only when there is one)."""
    seconds, rest = divmod(ns, _NS)
    return str(seconds) if not rest else f"{seconds}.{rest:09d}".rstrip("0")


# ---------------------------------------------------------------- the batch decoder's view of a record

_NULL = msgspec.Raw(b"null")
_INT64 = Annotated[int, msgspec.Meta(ge=values.INT64_MIN, le=values.INT64_MAX)]


class _Meta(msgspec.Struct, gc=False):
    """``allMetaData`` as the batch decoder reads it: a field of another type than these hands the
    record back to ``decode``; ``checkpoint``, ``source_identity`` and unknown fields are skipped."""

    record_primary_key: str | None = None
    record_primary_value: str | None = None
    dbType: str | None = None
    storeDataSequence: int | str | None = None
    table_name: str | None = None
    db: str | None = None
    timestamp: str | _INT64 | None = None
    uniqueId: str | int | None = None


class _Record(msgspec.Struct, gc=False):
    """An OMS record as the batch decoder reads it, the images kept as raw JSON."""

    recordType: str
    allMetaData: _Meta
    prevStruct: msgspec.Raw = _NULL
    postStruct: msgspec.Raw = _NULL


_RECORD = msgspec.json.Decoder(_Record)


def raw_object(raw: msgspec.Raw, field: str) -> bytes | None:
    """The JSON text of a raw image: None when null, :class:`BadMessage` when not an object."""
    data = bytes(raw)
    if data == b"null":
        return None
    if data[:1] != b"{":
        raise BadMessage(f"expected {field} as a JSON object")
    return data
