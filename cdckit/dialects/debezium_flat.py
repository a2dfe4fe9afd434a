"""Debezium records flattened by the ``ExtractNewRecordState`` transform (``unwrap``).

The transform replaces the change event by its bare row (the ``after``
image; the ``before`` image of a delete rewritten with
``delete.tombstone.handling.mode=rewrite``, older ``delete.handling.mode``)
and, with ``add.fields``, adds change metadata to the row under the prefix
``__`` (``add.fields.prefix``): ``add.fields=op,table,lsn,source.ts_ms``
gives ``__op``, ``__table``, ``__lsn``, ``__source_ts_ms``. A bare field name
is looked up in the envelope (``op``, ``ts_ms``), the transaction block
(``id``, ``total_order``, ``data_collection_order``) or else ``source``; a
``struct.field`` name becomes ``__struct_field``. A rewritten delete carries
``"__deleted": "true"`` (every other record ``"false"``).

- ``op`` comes from ``__op`` (``c``/``u``/``d``/``r``, and ``t`` though the
  transform drops truncates unless told otherwise, as in Debezium); a
  ``__deleted`` of ``"true"`` makes a delete whose row is the before image.
- Without ``__op`` an insert cannot be told from an update: such a row is
  an ``update`` with no before image (the row as it now is, an upsert).
  ``insert`` would claim the key was new (and make every later row of the
  key an "insert of a live key") and ``read`` would claim a snapshot; an
  update without before image claims only that the row now holds these
  values. ``op_raw`` then says what the record had: ``__deleted=false``, or
  None when it had no operation field at all.
- ``database``/``schema``/``table`` come from ``__db``/``__schema``/``__table``, named as the
  connector names the table (``schema.table`` for PostgreSQL: see
  :mod:`cdckit.dialects.debezium.naming`); where the row does not say the
  namespace (only ``__table`` added), the record's Kafka topic
  (``prefix.schema.table``, ``prefix.db.table``...) says it;
  ``event_time`` from ``__source_ts_ms`` (``_us``/``_ns`` when given);
  ``__ts_ms`` is the envelope's time, when Debezium processed the change, so
  it is the ``emit_time`` and never the event time.
- ``seq`` is the connector position among the added fields (``__lsn``,
  ``__file``/``__pos``/``__row``, ``__change_lsn``..., ``__scn``), read as
  :class:`~cdckit.dialects.debezium.Debezium` reads ``source``; ``txn_id``
  is ``__transaction_id`` (``transaction.id``), else ``__txId``, ``__gtid``
  or ``__xid``.
- The image is the row without the added fields; key columns come from the
  Kafka key (the key struct, or its ``{schema, payload}`` wrapper); a null
  value is a tombstone keyed by the Kafka key.
- A row with none of the added fields is quarantined: it says nothing of
  the change (see :data:`cdckit.dialects.shapes.BARE_ROW`).

>>> import cdckit
>>> ev = cdckit.read('{"id": 1, "name": "a", "__op": "c", "__table": "customers", "__lsn": 33816472, '
...                  '"__source_ts_ms": 1559033904863}', dialect="debezium_flat")
>>> ev.loc[0, ["op", "table", "seq", "after"]].tolist()
['insert', 'customers', '00000000000033816472', '{"id":1,"name":"a"}']
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import Any

import pandas as pd

from .. import values
from ..frame import Event, event_row
from ..io import Message, kafka_key
from ..row_images import key_of, parse_image
from . import shapes
from .base import BadMessage, Match, Record, expect_object, rows_of
from .debezium import Debezium
from .debezium.envelope import OPS as ENVELOPE_OPS
from .debezium.envelope import declared_columns, field_types_of, unwrap
from .registry import register

#: ``__op`` codes and their canonical ops (``t`` is a truncate, ``m`` a logical decoding message).
OPS = {**ENVELOPE_OPS, "t": "truncate"}
#: The ops the encoder writes (the transform drops truncates: they are not written either).
_OP_CODES = {"insert": "c", "update": "u", "delete": "d", "read": "r"}
PREFIX = "__"
#: Envelope fields ``add.fields`` names without a struct (``op``, ``ts_ms``): added as ``__op``, ``__ts_ms``.
ENVELOPE_FIELDS = frozenset({"op", "ts_ms", "ts_us", "ts_ns"})
#: Transaction block fields: ``id`` -> ``__id`` (bare) or ``__transaction_id`` (``transaction.id``).
TRANSACTION_FIELDS = frozenset({"id", "total_order", "data_collection_order"})
#: ``source`` fields the connectors document, added as ``__<field>`` (bare) or ``__source_<field>``.
SOURCE_FIELDS = frozenset(
    {
        "version",
        "connector",
        "name",
        "ts_ms",
        "ts_us",
        "ts_ns",
        "snapshot",
        "db",
        "sequence",
        "schema",
        "table",
        "collection",
        "txId",
        "lsn",
        "xmin",
        "file",
        "pos",
        "row",
        "server_id",
        "gtid",
        "thread",
        "query",
        "change_lsn",
        "commit_lsn",
        "event_serial_no",
        "scn",
        "commit_scn",
        "rs_id",
        "ssn",
        "redo_thread",
        "user_name",
        "ord",
        "xid",
    }
)
#: The added fields that tell a flattened change record from a plain row (detection's evidence).
MARKERS = ("__op", "__deleted", "__table", "__db", "__source_ts_ms", "__lsn", "__ts_ms", "__txId", "__schema")
_SYNTHETIC_FILE = "mysql-bin.000001"
_DELETED = {"true": True, "false": False, True: True, False: False}


@functools.lru_cache(maxsize=65_536)  # a topic's rows repeat their column names
def metadata_name(column: str) -> str | None:
    """What an added field is (``"envelope.op"``, ``"source.lsn"``...), or None for a row column.

    >>> metadata_name("__op"), metadata_name("__source_ts_ms"), metadata_name("__lsn"), metadata_name("name")
    ('envelope.op', 'source.ts_ms', 'source.lsn', None)
    """
    if not column.startswith(PREFIX):
        return None
    name = column[len(PREFIX) :]
    if name == "deleted":
        return "deleted"
    if name in ENVELOPE_FIELDS:
        return "envelope." + name
    for struct, known in (("source", SOURCE_FIELDS), ("transaction", TRANSACTION_FIELDS)):
        if name.startswith(struct + "_") and name[len(struct) + 1 :] in known:
            return f"{struct}.{name[len(struct) + 1 :]}"
    if name in ("total_order", "data_collection_order"):  # "id" alone is too likely a real column
        return "transaction." + name
    if name in SOURCE_FIELDS:
        return "source." + name
    return None


def split_row(row: dict[str, Any]) -> tuple[dict[str, dict[str, Any]], dict[str, Any]]:
    """``(metadata, image)``: the added fields by struct (``envelope``, ``source``, ``transaction``,
    ``deleted``) and the row without them."""
    meta: dict[str, dict[str, Any]] = {"envelope": {}, "source": {}, "transaction": {}, "deleted": {}}
    image: dict[str, Any] = {}
    for column, value in row.items():
        name = metadata_name(column) if column.__class__ is str else None
        if name is None:
            image[column] = value
        elif name == "deleted":
            meta["deleted"]["deleted"] = value
        else:
            struct, _, field = name.partition(".")
            if field not in meta[struct] or column.startswith(f"{PREFIX}{struct}_"):  # struct.field wins
                meta[struct][field] = value
    return meta, image


@register
class DebeziumFlat(Debezium):
    """Flattened Debezium rows (ExtractNewRecordState with add.fields and delete rewriting)."""

    name = "debezium_flat"
    title = "Debezium flattened (ExtractNewRecordState)"
    spec = "public Debezium documentation: New Record State Extraction (event-flattening)"
    quirks = (
        "Tables are named as the connector names them (schema.table for PostgreSQL, told by __connector or "
        "__lsn): a row with only __table takes its namespace from its Kafka topic (prefix.schema.table), when "
        "the topic's last part is the table.",
        "Without __op an insert cannot be told from an update: such a row is an update with no before image "
        "(an upsert: the row as it now is); its op_raw is __deleted=false or empty.",
        "No before image for updates: the transform keeps only the after row; a delete's row is its before image "
        '(delete.tombstone.handling.mode=rewrite adds __deleted: "true").',
        "event_time is __source_ts_ms (add.fields=source.ts_ms); __ts_ms is when Debezium processed the change and "
        "is the emit time. Without __source_ts_ms there is no event time.",
        "seq is the position among the added fields (__lsn, __file/__pos/__row, __change_lsn, __scn): add one "
        "with add.fields to order the rows.",
        "Key columns come only from the Kafka key; a file of values alone has none.",
        "Fields added with add.headers live in Kafka headers, which cdckit does not read: use add.fields.",
        "A row with no added field at all (no __op, __table, __deleted...) says nothing of the change and is "
        "quarantined.",
        "add.fields.prefix other than __ and renamed fields (op:OPERATION) are not recognised.",
    )

    # ------------------------------------------------------------ detection

    def detect(self, value: Any) -> Match | None:
        row, _ = unwrap(value)
        if row is None or "op" in row and ("before" in row or "after" in row):
            return None
        evidence = [name for name in MARKERS if name in row]
        if not evidence:
            return None
        op = row.get("__op")
        if op in OPS:
            return Match(0.9, tuple(evidence) + ("__op=" + op,))
        if row.get("__deleted") in _DELETED:
            return Match(0.85, tuple(evidence))
        return Match(0.6, tuple(evidence)) if op is None else None

    # ------------------------------------------------------------ decoding

    def decode(self, message: Message) -> list[Event]:
        if message.value is None:
            return [self.tombstone(message, "null")]
        row, schema = unwrap(message.value)
        row = expect_object(row, "a flattened Debezium row")
        meta, image = split_row(row)
        envelope, source, txn, deleted = meta["envelope"], meta["source"], meta["transaction"], meta["deleted"]
        if not (envelope or source or txn or deleted):
            raise BadMessage(shapes.BARE_ROW)
        op_raw = envelope.get("op")
        op: str | None
        op = "update"
        if op_raw is not None:
            op = OPS.get(op_raw) if op_raw.__class__ is str else None
            if op is None:
                raise BadMessage(f"unknown __op {op_raw!r}")
        if "deleted" in deleted:
            gone = _DELETED.get(deleted["deleted"]) if deleted["deleted"].__class__ in (str, bool) else None
            if gone is None:
                raise BadMessage(f'__deleted is {deleted["deleted"]!r}, not "true" or "false"')
            if gone:
                op = "delete"
            if op_raw is None:
                op_raw = f"__deleted={str(gone).lower()}"
        types = field_types_of({"schema": schema}) if schema else None
        typed = self.typed_image(self.unavailable.stripped(image), types, "the row")
        before = after = None
        if op == "delete":
            before = typed
        elif op in ("insert", "update", "read"):
            after = typed
        key_columns = self.key_columns(message.key, before, after)
        key = key_of(typed, key_columns)
        if key is None and key_columns:
            key = self.tombstone(message, "").key
        transaction = {"transaction": txn} if txn.get("id") not in (None, "") else {}
        event = Event(
            op=op,
            op_raw=op_raw,
            **self.source_fields(source, envelope, transaction, message.topic),
            key_columns=key_columns,
            key=key,
            before=values.image(before),
            after=values.image(after),
            ddl=source.get("query") if op == "truncate" else None,
        )
        if types:  # the schema's columns less the fields the transform added
            self.declare(
                event.database,
                event.schema,
                event.table,
                declared_columns({"after": {name: f for name, f in types.items() if name in image}}),
                self.__dict__.get("_line"),
            )
        return [event]

    # ------------------------------------------------------------ batch decoding

    uses_kafka_topic = True

    def decode_lines(
        self, lines: list[bytes], keys: list | None = None, topics: list | None = None
    ) -> list[tuple | None]:
        """The events of many raw messages: each line parsed and decoded as :meth:`decode` does it
        (``topics``: the records' Kafka topics, None where unknown, which name a table's namespace).

        Flattened rows are small and have no envelope to skip, so there is
        no shortcut worth a second set of rules: the result is
        :meth:`decode`'s by construction. A message it refuses or skips is
        handed back (None) so the reader quarantines it with the reason.
        """
        out: list[tuple | None] = []
        self._line: int | None  # the line decode() declares column types for (None: a message alone)
        try:
            for index, line in enumerate(lines):
                self._line = index  # where decode() declares column types
                try:
                    key = None if keys is None else kafka_key(keys[index])
                    events = self.decode(
                        Message(
                            values.loads(line),
                            "<batch>",
                            index,
                            key=key,
                            topic=None if topics is None else topics[index],
                        )
                    )
                    out.append(event_row(events[0]) if len(events) == 1 else None)
                except Exception:  # decode() names the problem when the reader hands it the message
                    out.append(None)
        finally:
            self._line = None
        return out

    # ------------------------------------------------------------ encoding

    def encode(self, events: pd.DataFrame) -> Iterator[Record]:
        """Flattened rows as ``add.fields=op,db,schema,table,source.ts_ms,ts_ms,...`` and
        ``delete.tombstone.handling.mode=rewrite-with-tombstone`` write them, with Kafka keys.

        The row comes first, then ``__op``, ``__db``, ``__schema`` (when
        set), ``__table``, ``__source_ts_ms`` (``__source_ts_ns`` too for a
        finer time), ``__ts_ms`` (emit time), the position (a ``file:pos:row``
        seq as ``__file``/``__pos``/``__row``, a number as ``__lsn``),
        ``__transaction_id`` and ``__deleted``. A delete's row is its before
        image (or its key). Tombstones become null values; truncates are not
        written (the transform drops them), nor DDL, transaction markers and
        other events (the transform passes them on unflattened). An update
        that changes the key is written as Debezium sends it: a delete of the
        old key, then a create of the new one. When no event has a seq (events from a dialect
        without positions), binlog positions are made up in event order, as
        the Debezium encoder makes them up.
        """
        rows = [part for row in rows_of(events) for part in _as_debezium_sends(row)]
        synthesize = all(row["seq"] is None for row in rows)
        for number, row in enumerate(rows):
            op = row["op"]
            if op == "tombstone":
                yield Record(None, self.encode_key(row, {}))
                continue
            if op not in _OP_CODES:
                continue
            image = row["before"] if op == "delete" else row["after"]
            data = dict(values.loads(image)) if image is not None else {}
            if op == "delete" and image is None and row["key_columns"] and row["key"]:
                data = dict(zip(row["key_columns"], values.loads(row["key"])))
            kinds = values.infer_kinds([data])
            data.update(self.encode_metadata(row, number if synthesize else None))
            data["__deleted"] = "true" if op == "delete" else "false"
            yield Record(data, self.encode_key(row, kinds))

    def encode_metadata(self, row: dict[str, Any], number: int | None = None) -> dict[str, Any]:
        """The added fields of one event (see :meth:`encode`); ``number``: the event's place in the stream
        when its position is to be made up (None: it is not)."""
        added: dict[str, Any] = {"__op": _OP_CODES[row["op"]], "__db": row["database"]}
        if row["schema"] is not None:
            added["__schema"] = row["schema"]
        added["__table"] = row["table"]
        for name, ns in (("__source_ts", row["event_time"]), ("__ts", row["emit_time"])):
            if ns is not None:
                added[name + "_ms"] = ns // 1_000_000
                if ns % 1_000_000:
                    added[name + "_ns"] = ns
        if number is None:
            added.update(_position_fields(row["seq"]))
        else:
            added.update(__file=_SYNTHETIC_FILE, __pos=4 + 100 * number, __row=0)
        if row["txn_id"] is not None:
            added["__transaction_id"] = row["txn_id"]
        return added


def _as_debezium_sends(row: dict[str, Any]) -> list[dict[str, Any]]:
    """An event as Debezium's relational connectors send it: a key-changing update is a delete and a create.

    >>> [r["op"] for r in _as_debezium_sends({"op": "update", "key_columns": ["id"], "key": "[2]",
    ...                                        "before": '{"id":1}', "after": '{"id":2}'})]
    ['delete', 'insert']
    """
    columns, before = row.get("key_columns"), row.get("before")
    if row["op"] != "update" or not columns or before is None or row.get("key") is None:
        return [row]
    old = key_of(parse_image(before), columns)
    if old is None or old == row["key"]:
        return [row]
    return [dict(row, op="delete", key=old, after=None), dict(row, op="insert", before=None)]


def _position_fields(seq: str | None) -> dict[str, Any]:
    """A seq written back as added position fields: ``file:pos:row`` or a plain number (``__lsn``)."""
    if not seq:
        return {}
    if seq.isascii() and seq.isdigit():
        return {"__lsn": int(seq)}
    head, _, number = seq.rpartition(":")
    file, _, pos = head.rpartition(":")
    if file and pos.isascii() and pos.isdigit() and number.isascii() and number.isdigit():
        return {"__file": file, "__pos": int(pos), "__row": int(number)}
    return {}
