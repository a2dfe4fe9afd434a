"""AWS DMS JSON on a Kafka topic or a Kinesis data stream: one ``{data, metadata}`` message per change.

AWS Database Migration Service writes each source row change as a JSON
object with the row in ``data`` and a ``metadata`` object: ``timestamp``
(when DMS built the message, ISO 8601 UTC text with microseconds),
``record-type`` (``data`` or ``control``), ``operation``,
``partition-key-type``, ``partition-key-value`` (``IncludePartitionValue``),
``schema-name``, ``table-name`` and ``transaction-id``; with
``IncludeTransactionDetails`` also ``commit-timestamp``, ``stream-position``,
``transaction-record-id``, ``prev-transaction-id`` and
``prev-transaction-record-id``.

- Data operations: ``load`` (a full-load row: op ``read``), ``insert``,
  ``update``, ``delete``. The user guide's message-format section spells
  them ``create``, ``read``, ``update``, ``delete``; those words are read too.
- Control records carry no row (a ``control`` object with a ``table-def``
  under ``IncludeControlDetails``). Table operations (``create-table``,
  ``drop-table``, ``rename-table``, ``change-columns``, ``add-column``,
  ``drop-column``, ``rename-column``, ``column-type-change``, the guide's
  ``DropTable``) become ``ddl`` events without a statement: ``op_raw`` says
  what was done and ``table-def.primary-key`` gives the key columns.
  ``truncate-table`` (the guide's ``TruncateTable``) is ``truncate``; any
  other control record is ``other``.
- ``data`` is the row after an insert, load or update and the deleted row of
  a delete. An update's before image is the one extra top-level object the
  task's ``BeforeImageSettings`` add, under its configurable ``FieldName``
  (the guide's example names it ``before-image``); it holds what
  ``ColumnFilter`` and the source engine give (only the key columns by
  default). Without it an update has no before image.
- ``schema-name`` is DMS's one qualifier of a table: the schema (for a MySQL
  source, the database). It fills both ``schema`` and ``database``, so tables
  are named ``schema.table`` as cdckit names them everywhere and keep that
  name through conversions. An empty name is no name.
- ``timestamp`` is when DMS built the message: the emit time.
  ``commit-timestamp`` is the event time; without transaction details there
  is none.
- Messages name no key columns except a create-table control record's
  ``table-def``; ``partition-key-value`` (``schema.table.values`` as text) is
  not split into columns, so rows have no key.
- ``seq`` is ``stream-position`` and ``transaction-record-id`` when given.

>>> import cdckit
>>> ev = cdckit.read('{"data": {"id": 45, "name": "Jane"}, "before-image": {"id": 46}, "metadata": {'
...                  '"timestamp": "2024-07-29T00:59:07.686557Z", "record-type": "data", "operation": "update", '
...                  '"partition-key-type": "schema-table", "schema-name": "public", "table-name": "foo", '
...                  '"transaction-id": 1141}}', dialect="aws_dms")
>>> ev.loc[0, ["op", "database", "schema", "table", "txn_id", "before", "after"]].tolist()
['update', 'public', 'public', 'foo', '1141', '{"id":46}', '{"id":45,"name":"Jane"}']
>>> str(ev.loc[0, "emit_time"]), ev.loc[0, "event_time"] is pd.NaT
('2024-07-29 00:59:07.686557+00:00', True)
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timezone
from typing import Any

import msgspec
import pandas as pd

from .. import values
from ..frame import Event, FastRow
from ..io import Message
from .base import BadMessage, Dialect, Match, Record, expect_object, require, rows_of
from .registry import register

#: Data record operations and their canonical ops (``create``/``read``: the user guide's spelling).
DATA_OPS = {
    "load": "read",
    "insert": "insert",
    "update": "update",
    "delete": "delete",
    "create": "insert",
    "read": "read",
}
#: Control record operations that change a table's definition: ``ddl`` events.
TABLE_OPS = frozenset(
    {
        "create-table",
        "drop-table",
        "rename-table",
        "change-columns",
        "add-column",
        "drop-column",
        "rename-column",
        "column-type-change",
        "DropTable",
    }
)
#: Control record operations that empty a table.
TRUNCATES = frozenset({"truncate-table", "TruncateTable"})
#: DMS data types (``control.table-def.columns``) -> the kind declared (:mod:`cdckit.column_types`); a type
#: not named here declares ``string``. NUMERIC is ``decimal(P,S)`` with the column's precision and scale.
DECLARED_KINDS = {
    **dict.fromkeys(
        ("INT1", "INT2", "INT4", "INT8", "INT16", "INT32", "INT64", "UINT1", "UINT2", "UINT4", "UINT8"), "int"
    ),
    **dict.fromkeys(("REAL4", "REAL8", "FLOAT", "DOUBLE"), "float"),
    "NUMERIC": "decimal",
    "DECIMAL": "decimal",
    "BOOLEAN": "bool",
    **dict.fromkeys(("BLOB", "BYTES"), "binary"),
    "DATE": "date",
    "TIME": "time",
    "DATETIME": "timestamp",
    "TIMESTAMP": "timestamp",
}
#: Top-level fields that are not a before image.
ENVELOPE = frozenset({"data", "metadata", "control"})
#: The before image field this encoder writes (the user guide's ``FieldName`` example).
BEFORE_IMAGE = "before-image"
_OP_NAMES = {"read": "load", "insert": "insert", "update": "update", "delete": "delete"}
_EVIDENCE = ("record-type", "operation", "partition-key-type", "schema-name", "table-name", "timestamp")


@register
class AwsDms(Dialect):
    """AWS DMS data and control records written to Kafka or Kinesis."""

    name = "aws_dms"
    title = "AWS DMS JSON (Kafka / Kinesis)"
    spec = "AWS DMS User Guide: Kafka / Kinesis as a target, before image task settings (docs/specs/aws_dms.md)"
    quirks = (
        "metadata.timestamp is when DMS built the message (emit time); the event time is commit-timestamp, "
        "written only with IncludeTransactionDetails, otherwise event_time is empty.",
        "Full-load rows have operation load and become read events.",
        "An update's before image is an extra top-level object named by BeforeImageSettings.FieldName "
        "(any name); by default (ColumnFilter pk-only) it holds only the key columns, and without "
        "BeforeImageSettings an update has no before image.",
        "A delete carries the deleted row in data.",
        "Messages name no primary-key columns (partition-key-value is text, not split), so rows have no key; "
        "only a create-table control record's table-def gives key_columns.",
        "schema-name is the one qualifier of a table (the schema; for a MySQL source the database): it fills both "
        "schema and database. The encoder writes the database, else the schema.",
        "Control records for table changes (create-table, drop-table, add-column...) are ddl events with no "
        "statement: op_raw says what was done. truncate-table is truncate; other control records are other.",
        "seq is stream-position plus transaction-record-id (IncludeTransactionDetails); the position text is "
        "the source engine's own and sorts truly only where it is fixed width (PostgreSQL LSNs).",
    )

    # ------------------------------------------------------------ detection

    def detect(self, value: Any) -> Match | None:
        if not isinstance(value, dict):
            return None
        meta = value.get("metadata")
        if not isinstance(meta, dict):
            return None
        evidence = tuple(f"metadata.{f}" for f in _EVIDENCE if f in meta)
        kind, op = meta.get("record-type"), meta.get("operation")
        if kind == "data" and op in DATA_OPS and isinstance(value.get("data"), dict):
            return Match(0.95, ("data is an object",) + evidence)
        if kind == "control" and isinstance(op, str):
            return Match(0.9, evidence)
        if "partition-key-type" in meta and "table-name" in meta:
            return Match(0.5, evidence)
        return None

    # ------------------------------------------------------------ decoding

    def decode(self, message: Message) -> list[Event]:
        value = expect_object(message.value, "an AWS DMS message")
        meta = expect_object(require(value, "metadata"), "metadata")
        kind = require(meta, "record-type", "metadata.")
        op_raw = require(meta, "operation", "metadata.")
        if not isinstance(op_raw, str):
            raise BadMessage(f"unknown operation {op_raw!r}")
        schema = name_of(meta, "schema-name")
        common: dict[str, Any] = dict(
            op_raw=op_raw,
            database=schema,
            schema=schema,
            table=name_of(meta, "table-name"),
            event_time=time_of(meta, "commit-timestamp", self.tz),
            emit_time=time_of(meta, "timestamp", self.tz),
            seq=seq_of(meta),
            txn_id=txn_of(meta),
        )
        if kind == "control":
            event = control_event(value, op_raw, common)
            if event.op == "ddl":
                self.declare(event.database, event.schema, event.table, declared_columns(value))
            return [event]
        if kind != "data":
            raise BadMessage(f"unknown record-type {kind!r}")
        op = DATA_OPS.get(op_raw)
        if op is None:
            raise BadMessage(f"unknown operation {op_raw!r}")
        before, after = _row_sides(op, values.image(expect_object(require(value, "data"), "data")))
        if op == "update":
            before = before_image(value)
        return [Event(op=op, before=before, after=after, **common)]

    # ------------------------------------------------------------ batch decoding (the fast path)

    has_line_decoder = True

    def decode_lines(self, lines: list[bytes]) -> list[tuple | None]:
        """The events of many raw messages at once: one tuple of ``EVENT_FIELDS`` per data record, else None.

        msgspec splits each message into its top-level fields (kept raw) and
        reads ``metadata`` into :class:`_Meta`, which checks the field types;
        images are written from their raw text with :func:`values.image_text`,
        as :meth:`decode` writes them. Control records, fields of unexpected
        types, bad JSON and anything :meth:`decode` would refuse are handed
        back to it (None).
        """
        out: list[tuple | None] = []
        append = out.append
        split, read_meta, image_text, tz, row_sides = (
            _SPLIT.decode,
            _META.decode,
            values.image_text,
            self.tz,
            _row_sides,
        )
        errors = (msgspec.DecodeError, msgspec.ValidationError, BadMessage, ValueError, OverflowError, KeyError)
        for line in lines:
            try:
                if not line.isascii():
                    line.decode()  # bad UTF-8 anywhere is bad JSON, as decode finds it
                fields = split(line)
                meta = read_meta(fields["metadata"])
                op = DATA_OPS.get(meta.operation) if meta.record_type == "data" else None
                data = bytes(fields.get("data", b""))
                if op is None or data[:1] != b"{":
                    append(None)
                    continue
                before, after = row_sides(op, image_text(data))
                if op == "update":
                    extra = [
                        raw
                        for name, value in fields.items()
                        if name not in ENVELOPE and (raw := bytes(value))[:1] == b"{"
                    ]
                    if len(extra) > 1:
                        append(None)
                        continue
                    before = image_text(extra[0]) if extra else None
                txn = meta.transaction_id
                schema = meta.schema_name or None
                append(
                    FastRow(
                        op,
                        meta.operation,
                        schema,
                        schema,
                        meta.table_name or None,
                        values.text_time_to_ns(meta.commit_timestamp, tz),
                        values.text_time_to_ns(meta.timestamp, tz),
                        position_seq(meta.stream_position, meta.transaction_record_id),
                        None if txn is None else str(txn),
                        None,
                        None,
                        before,
                        after,
                        None,
                    )
                )
            except errors:
                append(None)
        return out

    # ------------------------------------------------------------ encoding

    def encode(self, events: pd.DataFrame) -> Iterator[Record]:
        """DMS messages with transaction details and before images.

        ``read`` events become ``load`` rows; an update's before image is
        written under ``before-image``; ``event_time`` is written as
        ``commit-timestamp`` and ``emit_time`` as ``timestamp`` (null when
        the event has no emit time). A
        ``seq`` of the form ``position:record-id`` is written back as
        ``stream-position`` and ``transaction-record-id``; when no event has
        such a ``seq`` (events from another dialect), positions are
        synthesized in event order (see :func:`synthetic_positions`), as DMS
        writes them with ``IncludeTransactionDetails``. ``truncate`` events
        are ``truncate-table`` control records, ``ddl`` events control records
        named by their ``op_raw`` (or, from another dialect, by a ``CREATE``,
        ``DROP`` or ``RENAME TABLE`` statement; other DDL is skipped).
        ``other`` events are written back only when they came from this
        dialect; heartbeat, begin, commit and tombstone events are skipped.
        """
        rows = list(rows_of(events))
        positions = synthetic_positions(rows) if not any(_parse_seq(r["seq"]) for r in rows) else None
        for number, row in enumerate(rows):
            if positions is not None:
                row["seq"] = positions[number]
            record = encode_event(row)
            if record is not None:
                yield Record(record)


# ---------------------------------------------------------------- decoding helpers


def control_event(value: dict[str, Any], op_raw: str, common: dict[str, Any]) -> Event:
    """A control record: ``ddl`` for a table change (key columns from ``table-def``), ``truncate``, or ``other``."""
    if op_raw in TRUNCATES:
        return Event(op="truncate", **common)
    if op_raw not in TABLE_OPS:
        return Event(op="other", **common)
    control = value.get("control")
    table_def = control.get("table-def") if isinstance(control, dict) else None
    pk = table_def.get("primary-key") if isinstance(table_def, dict) else None
    key_columns = list(pk) if isinstance(pk, list) and pk and all(isinstance(c, str) for c in pk) else None
    return Event(op="ddl", key_columns=key_columns, **common)


def declared_columns(value: dict[str, Any]) -> dict[str, tuple[str, str]]:
    """The column types a control record's ``control.table-def.columns`` declares (``IncludeControlDetails``),
    ``{column: (type, kind)}``; {} when it has none.

    >>> declared_columns({"control": {"table-def": {"columns": {
    ...     "id": {"type": "INT32"}, "price": {"type": "NUMERIC", "precision": 10, "scale": 2}}}}})
    {'id': ('INT32', 'int'), 'price': ('NUMERIC(10,2)', 'decimal(10,2)')}
    """
    control = value.get("control")
    table_def = control.get("table-def") if control.__class__ is dict else None
    columns = table_def.get("columns") if table_def.__class__ is dict else None
    declared: dict[str, tuple[str, str]] = {}
    if columns.__class__ is not dict:
        return declared
    for name, column in columns.items():
        kind_name = column.get("type") if column.__class__ is dict else None
        if kind_name.__class__ is not str:
            continue
        kind, raw = DECLARED_KINDS.get(kind_name.upper(), "string"), kind_name
        if kind == "decimal":
            precision, scale = column.get("precision"), column.get("scale")
            if precision is not None or scale is not None:
                precision, scale = _digits(precision), _digits(scale)
                raw, kind = f"{kind_name}({precision},{scale})", f"decimal({precision},{scale})"
        declared[name] = (raw, kind)
    return declared


def _digits(number: Any) -> str:
    """A precision or scale as text ('' unless a whole number)."""
    if number.__class__ is int or (number.__class__ is str and number.isascii() and number.isdigit()):
        return str(number)
    return ""


def _row_sides(op: str, row: str | None) -> tuple[str | None, str | None]:
    """``(before, after)`` of a data record's ``data`` image: the before image of a delete, else the after."""
    return (row, None) if op == "delete" else (None, row)


def before_image(value: dict[str, Any]) -> str | None:
    """An update's before image: the one top-level object besides ``data``, ``metadata`` and ``control``."""
    extra = [v for k, v in value.items() if k not in ENVELOPE and isinstance(v, dict)]
    if len(extra) > 1:
        raise BadMessage("more than one top-level object could be the before image")
    return values.image(extra[0]) if extra else None


def name_of(meta: dict[str, Any], field: str) -> str | None:
    """A schema or table name; an empty name is none."""
    name = meta.get(field)
    if name is not None and not isinstance(name, str):
        raise BadMessage(f"metadata.{field} is not text")
    return name or None


def time_of(meta: dict[str, Any], field: str, tz: str | None) -> int | None:
    """``timestamp`` or ``commit-timestamp`` (ISO 8601 UTC text) in epoch nanoseconds."""
    return values.text_time_to_ns(meta.get(field), tz)


def txn_of(meta: dict[str, Any]) -> str | None:
    """``transaction-id`` as text (a number or text in the message)."""
    txn = meta.get("transaction-id")
    if txn is None:
        return None
    if isinstance(txn, bool) or not isinstance(txn, (int, str)):
        raise BadMessage("metadata.transaction-id is neither a number nor text")
    return str(txn)


def seq_of(meta: dict[str, Any]) -> str | None:
    """``stream-position`` and ``transaction-record-id`` (see :func:`position_seq`)."""
    where, record = meta.get("stream-position"), meta.get("transaction-record-id")
    if where is not None and not isinstance(where, str):
        raise BadMessage("metadata.stream-position is not text")
    if record is not None and (isinstance(record, bool) or not isinstance(record, int)):
        raise BadMessage("metadata.transaction-record-id is not an integer")
    return position_seq(where, record)


def position_seq(where: str | None, record: int | None) -> str | None:
    """The seq of a stream position and a record id within its transaction (zero-padded).

    >>> position_seq("00000002/7C007178.3.00000002/7C007178", 1)
    '00000002/7C007178.3.00000002/7C007178:00000000000000000001'
    >>> position_seq(None, 1) is None
    True
    """
    if not where:
        return None
    return values.sortable_text(where, record)


# ---------------------------------------------------------------- encoding helpers


def encode_event(row: dict[str, Any]) -> dict[str, Any] | None:
    """One DMS message for a canonical event, or None when DMS cannot say it."""
    op = row["op"]
    if op in _OP_NAMES:
        return data_record(row, _OP_NAMES[op])
    if op == "truncate":
        return control_record(row, "truncate-table")
    if op == "ddl":
        name = row["op_raw"] if row["op_raw"] in TABLE_OPS else _ddl_operation(row["ddl"])
        return None if name is None else control_record(row, name)
    if op == "other" and row.get("dialect") == AwsDms.name:
        return control_record(row, row["op_raw"])
    return None


def data_record(row: dict[str, Any], operation: str) -> dict[str, Any]:
    """A data record: the row in ``data``, an update's before image under ``before-image``."""
    before = None if row["before"] is None else values.loads(row["before"])
    after = None if row["after"] is None else values.loads(row["after"])
    record: dict[str, Any] = {"data": (before if operation == "delete" else after) or {}}
    if operation == "update" and before is not None:
        record[BEFORE_IMAGE] = before
    record["metadata"] = metadata(row, "data", operation)
    return record


def control_record(row: dict[str, Any], operation: str) -> dict[str, Any]:
    """A control record; a table change with key columns carries them in ``control.table-def``."""
    record: dict[str, Any] = {}
    if row["op"] == "ddl" and row["key_columns"]:
        record["control"] = {"table-def": {"primary-key": list(row["key_columns"])}}
    record["metadata"] = metadata(row, "control", operation)
    return record


def metadata(row: dict[str, Any], kind: str, operation: str) -> dict[str, Any]:
    """The ``metadata`` object, fields in DMS's order, transaction details where the event has them."""
    meta: dict[str, Any] = {
        "timestamp": iso_micros(row["emit_time"]),
        "record-type": kind,
        "operation": operation,
        "partition-key-type": "schema-table" if kind == "data" else "task-id",
        "schema-name": row["database"] or row["schema"] or "",
        "table-name": row["table"] or "",
    }
    txn = row["txn_id"]
    if txn is not None:
        meta["transaction-id"] = int(txn) if txn.isascii() and txn.isdigit() else txn
    if row["event_time"] is not None:
        meta["commit-timestamp"] = iso_micros(row["event_time"])
    position = _parse_seq(row["seq"])
    if position is not None:
        meta["stream-position"], meta["transaction-record-id"] = position
    return meta


def _parse_seq(seq: str | None) -> tuple[str, int] | None:
    """``(stream-position, transaction-record-id)`` of a seq this dialect wrote, else None."""
    where, _, record = (seq or "").rpartition(":")
    return (where, int(record)) if where and record.isascii() and record.isdigit() else None


def synthetic_positions(rows: list[dict[str, Any]]) -> list[str | None]:
    """Seqs for events without one: a fixed-width hex position per message (PostgreSQL LSN style) and
    ``transaction-record-id`` counting from 1 within each run of one transaction.

    >>> synthetic_positions([{"txn_id": "7"}, {"txn_id": "7"}, {"txn_id": None}])[1]
    '00000000/00000084:00000000000000000002'
    """
    seqs, record, previous = [], 0, object()
    for number, row in enumerate(rows):
        txn = row["txn_id"]
        record = record + 1 if txn is not None and txn == previous else 1
        previous = txn
        offset = 4 + 128 * number
        seqs.append(position_seq(f"{offset >> 32:08X}/{offset & 0xFFFFFFFF:08X}", record))
    return seqs


def iso_micros(ns: int | None) -> str | None:
    """Epoch nanoseconds as DMS writes a time: ISO 8601 UTC with microseconds and ``Z``.

    >>> iso_micros(1_722_214_747_686_557_000)
    '2024-07-29T00:59:07.686557Z'
    """
    if ns is None:
        return None
    moment = datetime.fromtimestamp(ns // 1_000_000_000, tz=timezone.utc)
    return f"{moment:%Y-%m-%dT%H:%M:%S}.{(ns % 1_000_000_000) // 1_000:06d}Z"


_DDL_WORDS = (("create table", "create-table"), ("drop table", "drop-table"), ("rename table", "rename-table"))


def _ddl_operation(sql: str | None) -> str | None:
    """The DMS control operation of a DDL statement from another dialect, when it has one."""
    text = " ".join((sql or "").lower().split())
    for start, name in _DDL_WORDS:
        if text.startswith(start):
            return name
    return None


# ---------------------------------------------------------------- the batch decoder's view of a message


class _Meta(msgspec.Struct, gc=False):
    """``metadata`` as the batch decoder reads it, in the types :meth:`AwsDms.decode` takes as they are."""

    record_type: str = msgspec.field(name="record-type")
    operation: str = msgspec.field(name="operation")
    timestamp: str | None = None
    schema_name: str | None = msgspec.field(default=None, name="schema-name")
    table_name: str | None = msgspec.field(default=None, name="table-name")
    transaction_id: int | str | None = msgspec.field(default=None, name="transaction-id")
    commit_timestamp: str | None = msgspec.field(default=None, name="commit-timestamp")
    stream_position: str | None = msgspec.field(default=None, name="stream-position")
    transaction_record_id: int | None = msgspec.field(default=None, name="transaction-record-id")


_SPLIT = msgspec.json.Decoder(dict[str, msgspec.Raw])
_META = msgspec.json.Decoder(_Meta)
