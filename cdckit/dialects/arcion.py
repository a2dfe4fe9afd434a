"""Arcion Replicant JSON CDC: Debezium-shaped keys and values with Arcion's own habits.

Arcion writes, for its Kafka target, a Kafka key and a Kafka value per change,
each as ``{"schema": ..., "payload": ...}`` in the shape of the Debezium MySQL
connector: the value's payload is ``{before, after, source, op, ts_ms,
transaction}`` with ``op`` ``c`` insert, ``u`` update, ``d`` delete and ``r``
snapshot read. What sets it apart from Debezium:

- ``source.connector`` is in capitals (``"MYSQL"``, ``"ORACLE"``...).
- Every column value arrives as a string (``"r_regionkey": "0"``); the
  embedded schema (``int32``...) says what it is, and cdckit types it.
- Key columns are the fields of the Kafka key's payload (values typed by the
  key's schema); a table without a key has the string ``"default"`` as key.
- After each delete comes a tombstone whose value is the JSON string
  ``"default"`` (not a null value) and whose key is the deleted row's key;
  the key schema name ``<connector>.<db>.<table>.Key`` names its table.
- An update of key columns arrives as a DELETE (with its tombstone) followed
  by an INSERT; there is nothing to merge.
- Snapshot rows (``op: r``) have null ``ts_ms`` and null binlog positions.
- ``transaction.id`` is ``""`` when there is no transaction id, and the
  transaction block has no ``data_collection_order``.

``seq`` is the binlog position ``file:pos:row`` (numbers zero-padded),
``event_time`` ``source.ts_ms`` and ``emit_time`` the envelope's ``ts_ms``.

>>> import cdckit
>>> value = ('{"schema": {"type": "struct", "fields": [{"type": "struct", "field": "after", "fields": '
...          '[{"type": "int32", "field": "r_regionkey"}, {"type": "string", "field": "r_name"}]}]}, '
...          '"payload": {"before": null, "after": {"r_regionkey": "6", "r_name": "Test_Region"}, '
...          '"source": {"connector": "MYSQL", "db": "tpch", "table": "region", "ts_ms": 1677159568000, '
...          '"file": "log-bin.000001", "pos": 2690, "row": 1}, "op": "c", "ts_ms": 1677139769357, '
...          '"transaction": {"id": "", "total_order": 1}}}')
>>> ev = cdckit.read(value)
>>> ev.loc[0, ["dialect", "op", "database", "table", "key_columns", "after"]].tolist()
['arcion', 'insert', 'tpch', 'region', None, '{"r_regionkey":6,"r_name":"Test_Region"}']
>>> cdckit.read('"default"').loc[0, "op"]
'tombstone'
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pandas as pd

from .. import values
from ..frame import Event
from ..io import Message
from .base import Match, Record, rows_of
from .debezium import Debezium
from .debezium.encode import CONNECT_TYPES
from .debezium.envelope import envelope_shape, field_types, unwrap
from .registry import register

#: The value of a tombstone, and the key of a row of a table without a key.
DEFAULT = "default"
#: The same, as a Kafka key read from a kcat line (JSON text of the string).
_QUOTED_DEFAULT = '"default"'

_NUMBERS_AS_TEXT = "string values under numeric schema types"
_NO_COLLECTION_ORDER = "transaction without data_collection_order"
_NUMERIC_TYPES = frozenset({"int8", "int16", "int32", "int64", "float", "float32", "float64", "double"})
_OP_CODES = {"insert": "c", "update": "u", "delete": "d", "read": "r"}
#: the connector name Arcion writes in the schema names of keys and values
_CONNECTOR_NAME = "KAFKA_Connector"

_SOURCE_FIELDS = [
    ("version", "string", False),
    ("connector", "string", False),
    ("name", "string", False),
    ("ts_ms", "int64", False),
    ("db", "string", False),
    ("schema", "string", False),
    ("table", "string", True),
    ("query", "string", True),
    ("snapshot", "string", True),
    ("server_id", "int64", False),
    ("gtid", "string", True),
    ("file", "string", False),
    ("pos", "int64", False),
    ("row", "int32", False),
]
_TRANSACTION_FIELDS = [
    ("id", "string", False),
    ("total_order", "int64", False),
    ("data_collection_order", "int64", False),
]


@register
class Arcion(Debezium):
    """Arcion Replicant's JSON CDC format for Kafka (a Debezium variant)."""

    name = "arcion"
    title = "Arcion Replicant JSON CDC"
    spec = "arcion-json-cdc.txt"
    quirks = (
        "Every column value arrives as a string; the embedded schema's types (int32, double...) make them numbers "
        "again.",
        'A tombstone is the JSON string "default", not a null value; its Kafka key names the deleted row and '
        "its table.",
        'A table without a primary key has the string "default" as Kafka key, so its events have no key columns.',
        "Key columns come only from the Kafka key: a file of values alone has none.",
        "An update of a key column arrives as a DELETE (plus its tombstone) and an INSERT, never as one update.",
        "Snapshot rows (op r) have no times and no binlog position: event_time, emit_time and seq are empty.",
        'transaction.id is "" when there is no transaction id; cdckit leaves txn_id empty then.',
        "source.connector is written in capitals (MYSQL), which is how cdckit tells Arcion from Debezium.",
        "In Arcion's own examples source.ts_ms is 5.5 hours after the envelope ts_ms (a local clock written as UTC);"
        " cdckit takes both as given, so compare event_time with emit_time before trusting it.",
        "Image columns keep the message's order, which need not be the schema's order.",
    )

    #: Arcion sends whole rows (no unavailable-value placeholder): an image replaces the row.
    partial_updates = False

    # ------------------------------------------------------------ detection

    def detect(self, value: Any) -> Match | None:
        if value == DEFAULT:
            return Match(0.9, ('value "default" (Arcion tombstone)',))
        payload, schema = unwrap(value)
        if payload is None:
            return None
        shape = envelope_shape(payload)
        if shape is None:
            return None
        source = payload.get("source")
        source = source if isinstance(source, dict) else {}
        if "namespace" in source:  # Lindorm's mark
            return None
        connector = source.get("connector")
        if isinstance(connector, str) and connector.isupper():
            return Match(0.95, shape + ("source.connector=" + connector,) + _more_evidence(payload, schema))
        if connector is not None:  # a connector not in capitals is Debezium's
            return Match(0.2, shape)
        more = _more_evidence(payload, schema)
        if _NUMBERS_AS_TEXT in more:
            return Match(0.9, shape + more)
        if more:
            return Match(0.65, shape + more)
        return Match(0.2, shape)  # a Debezium-shaped envelope, nothing Arcion's own

    # ------------------------------------------------------------ decoding

    def decode(self, message: Message) -> list[Event]:
        if message.value == DEFAULT:
            return [self.tombstone(message, DEFAULT)]
        return super().decode(message)

    def key_columns(self, kafka_key: Any, before: dict | None, after: dict | None) -> list[str] | None:
        if kafka_key in (DEFAULT, _QUOTED_DEFAULT):  # a table without a key
            return None
        return super().key_columns(kafka_key, before, after)

    def table_namespace(
        self, source: dict[str, Any], db: Any, schema: Any, table: Any, topic: str | None = None
    ) -> tuple[Any, Any]:
        return db, schema  # Arcion's source block names the table db.table, whatever source it replicates

    # ------------------------------------------------------------ encoding

    def encode(self, events: pd.DataFrame) -> Iterator[Record]:
        """Wrapped values with every column value as a string, keys as Kafka keys.

        Inserts, updates, deletes and snapshot reads become change values;
        tombstones become the value ``"default"``. Transaction markers, DDL and
        other events have no Arcion form and are skipped. Each value's schema
        types its columns from the message's own images (``values.infer_kinds``).
        A ``seq`` of the form ``file:pos:row`` is written back as the binlog
        position; other events get a synthetic position in input order, except
        snapshot reads, whose position stays null as Arcion writes it. Rows
        without key columns get the key ``"default"``.
        """
        order = 0
        last_txn = None
        for number, row in enumerate(rows_of(events)):
            op = row["op"]
            if op == "tombstone":
                yield Record(DEFAULT, self.encode_key(row, {}))
                continue
            if op not in _OP_CODES:
                continue
            order = order + 1 if row["txn_id"] is not None and row["txn_id"] == last_txn else 1
            last_txn = row["txn_id"]
            before = None if row["before"] is None else values.loads(row["before"])
            after = None if row["after"] is None else values.loads(row["after"])
            payload = {
                "before": _as_text_image(before),
                "after": _as_text_image(after),
                "source": self.encode_source(row, number),
                "op": _OP_CODES[op],
                "ts_ms": values.ns_to_ms(row["emit_time"]),
                "transaction": {"id": row["txn_id"] or "", "total_order": None if op == "read" else order},
            }
            yield Record(self.wrap(payload, row, values.infer_kinds([before, after])), self.encode_key(row, {}))

    def encode_source(self, row: dict[str, Any], number: int) -> dict[str, Any]:
        file, pos, line = _position(row["seq"])
        if file is None and pos is None and row["op"] != "read":
            file, pos, line = "log-bin.000001", 4 + 100 * number, 1
        return {
            "schema": row["schema"],
            "query": None,
            "thread": None,
            "server_id": None if row["op"] == "read" else "1",
            "version": "5.7.24",
            "file": file,
            "connector": "MYSQL",
            "pos": pos,
            "name": _CONNECTOR_NAME,
            "gtid": None,
            "row": line,
            "ts_ms": values.ns_to_ms(row["event_time"]),
            "db": row["database"],
            "table": row["table"],
            "snapshot": "true" if row["op"] == "read" else "false",
        }

    def wrap(self, payload: dict[str, Any], row: dict[str, Any], kinds: dict[str, str]) -> dict[str, Any]:
        name = f"{_CONNECTOR_NAME}.{row['database']}.{row['table']}"
        columns = [_field(c, CONNECT_TYPES[k], True) for c, k in kinds.items()]
        image = {"type": "struct", "optional": False, "name": f"{name}.Value", "fields": columns}
        schema = {
            "type": "struct",
            "optional": False,
            "name": f"{name}.Envelope",
            "fields": [
                dict(image, field="before"),
                dict(image, field="after"),
                {
                    "type": "struct",
                    "optional": False,
                    "field": "source",
                    "name": _CONNECTOR_NAME,
                    "fields": [_field(*f) for f in _SOURCE_FIELDS],
                },
                {
                    "type": "struct",
                    "optional": True,
                    "field": "transaction",
                    "name": None,
                    "fields": [_field(*f) for f in _TRANSACTION_FIELDS],
                },
                _field("op", "string", False),
                _field("ts_ms", "int64", True),
            ],
        }
        return {"schema": schema, "payload": payload}

    def encode_key(self, row: dict[str, Any], kinds: Any) -> Any:
        """The Kafka key: the key columns as strings, typed by a schema, or ``"default"``.

        The key values carry their own kinds, so ``kinds`` is not needed.
        """
        columns, key = row["key_columns"], row["key"]
        if not columns or key is None:
            return DEFAULT
        key_values = values.loads(key)
        fields = [
            _field(c, CONNECT_TYPES[values.kind_of_value(v) or "text"], False) for c, v in zip(columns, key_values)
        ]
        schema = {
            "type": "struct",
            "optional": False,
            "name": f"{_CONNECTOR_NAME}.{row['database']}.{row['table']}.Key",
            "fields": fields,
        }
        return {"schema": schema, "payload": {c: _as_text(v) for c, v in zip(columns, key_values)}}


def _more_evidence(payload: dict[str, Any], schema: dict[str, Any] | None) -> tuple[str, ...]:
    """Arcion's habits besides the connector: numbers as text, a transaction block without its order."""
    found = []
    if schema is not None and _numbers_as_text(payload, schema):
        found.append(_NUMBERS_AS_TEXT)
    txn = payload.get("transaction")
    if isinstance(txn, dict) and "id" in txn and "data_collection_order" not in txn:
        found.append(_NO_COLLECTION_ORDER)
    return tuple(found)


def _numbers_as_text(payload: dict[str, Any], schema: dict[str, Any]) -> bool:
    """True when an image holds a string where its schema says the column is numeric."""
    types = field_types(schema)
    for side in ("after", "before"):
        row, columns = payload.get(side), types.get(side)
        if not isinstance(row, dict) or not columns:
            continue
        for name, value in row.items():
            if isinstance(value, str) and (columns.get(name) or {}).get("type") in _NUMERIC_TYPES:
                return True
    return False


def _as_text_image(image: dict[str, Any] | None) -> dict[str, Any] | None:
    return None if image is None else {name: _as_text(value) for name, value in image.items()}


def _as_text(value: Any) -> Any:
    """A scalar as Arcion writes it: a string (null, objects and arrays unchanged)."""
    if value is None or isinstance(value, (str, dict, list)):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _position(seq: str | None) -> tuple[str | None, int | None, int | None]:
    """``(file, pos, row)`` from a ``file:pos:row`` seq, else Nones."""
    if seq:
        parts = seq.rsplit(":", 2)
        if len(parts) == 3 and parts[1].isdigit() and parts[2].isdigit():
            return parts[0], int(parts[1]), int(parts[2])
    return None, None, None


def _field(name: str, kind: str, optional: bool) -> dict[str, Any]:
    return {"type": kind, "optional": optional, "field": name}
