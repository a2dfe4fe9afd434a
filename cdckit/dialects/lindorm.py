"""Lindorm change records: Debezium Format V2.0 with a namespace and HBase cells.

Each record is ``{"payload": ..., "schema": ...}``; the payload is the Debezium
envelope ``{op, ts_ms, before, after, source}`` with ``op`` ``c`` insert,
``u`` update, ``d`` delete (``r`` full export is documented as not available;
cdckit decodes it as a snapshot read should it appear). What is Lindorm's own:

- ``source`` is ``{version, db, namespace, table, ts_ms}``: ``version`` is
  ``v1.0``/``v2.0``, ``db`` the Lindorm *instance id* (``ld-xxxx``, the
  canonical ``database``) and ``namespace`` the canonical ``schema``.
- ``source.ts_ms`` is when the change happened (``event_time``), the
  payload's ``ts_ms`` when the record was written to Kafka (``emit_time``).
- ``schema`` may be ``{}``; when it describes the columns, values are typed
  from it as for Debezium.
- A column delete is an update whose ``after`` omits the deleted column; the
  column stays absent from the canonical after image.
- HBase tables: the row key column is ``ROW`` and the other columns are
  ``<family>_<qualifier>``; every cell is Base64. cdckit shows a cell as text
  where its bytes are printable UTF-8 and leaves binary cells in Base64;
  ``ROW`` is the key column of HBase rows.
- SQL tables name no key columns (``key_columns`` is empty unless a Kafka key
  comes with the record), and there is no log position: ``seq`` is empty and
  input order is the only order.

>>> import cdckit
>>> ev = cdckit.read('{"schema": {}, "payload": {"op": "c", "ts_ms": 1725258859839, '
...                  '"after": {"ROW": "dXNlcjE=", "f_name": "bHVja3k="}, "source": {"version": "v2.0", '
...                  '"db": "ld-xxxx", "namespace": "default", "table": "customers", "ts_ms": 1725258833727}}}')
>>> ev.loc[0, ["dialect", "op", "database", "schema", "table", "key", "after"]].tolist()
['lindorm', 'insert', 'ld-xxxx', 'default', 'customers', '["user1"]', '{"ROW":"user1","f_name":"lucky"}']
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pandas as pd

from .. import values
from .base import Match, Record, rows_of
from .debezium import Debezium
from .debezium.encode import CONNECT_TYPES
from .debezium.envelope import envelope_shape, unwrap
from .registry import register

#: The row key column of an HBase table.
HBASE_ROW = "ROW"
#: The namespace written for events that name no schema.
DEFAULT_NAMESPACE = "default"
VERSIONS = frozenset({"v1.0", "v2.0"})

_OP_CODES = {"insert": "c", "update": "u", "delete": "d", "read": "r"}
#: canonical kinds (values.infer_kinds) -> Kafka Connect types of the schema
_CONNECT_TYPES = {**CONNECT_TYPES, "bytes": "bytes"}
_SOURCE_FIELDS = [
    ("version", "string"),
    ("db", "string"),
    ("namespace", "string"),
    ("table", "string"),
    ("ts_ms", "int64"),
]


@register
class Lindorm(Debezium):
    """Lindorm's Debezium Format V2.0 change records (a Debezium variant)."""

    name = "lindorm"
    title = "Lindorm Debezium V2.0"
    spec = "lindorm-debezium-v2.txt"
    quirks = (
        "source.db is the Lindorm instance id (ld-xxxx), shown as database; source.namespace is the schema.",
        "A column delete is an update whose after image omits the deleted column: absent means deleted, not null.",
        "HBase cells arrive as Base64; cdckit shows them as text when the bytes are printable UTF-8,"
        " binary cells stay Base64.",
        "HBase rows are keyed by the ROW column; other HBase columns are named <family>_<qualifier>.",
        "SQL tables carry no key column names, so key_columns is empty unless a Kafka key comes with the record.",
        "There is no log position: seq is empty and the order of the records is the only order.",
        "source.ts_ms is when the change happened; the payload's ts_ms is when it was written to Kafka.",
        "The schema is often {} and then says nothing about types: values are kept as they arrive.",
        "op r (full export) is documented as not available; should it appear it is decoded as a snapshot read.",
    )

    #: An after image that leaves a column out deleted it (a column delete): the row is replaced, never merged.
    partial_updates = False

    # ------------------------------------------------------------ detection

    def detect(self, value: Any) -> Match | None:
        payload, _ = unwrap(value)
        if payload is None:
            return None
        shape = envelope_shape(payload)
        source = payload.get("source")
        if shape is None or not isinstance(source, dict) or "namespace" not in source:
            return None
        version = source.get("version")
        if version in VERSIONS:
            return Match(0.95, shape + ("source.namespace", "source.version=" + version))
        return Match(0.9, shape + ("source.namespace",))

    # ------------------------------------------------------------ decoding

    def typed_image(self, row: Any, types: dict[str, dict[str, Any]] | None, which: str) -> dict[str, Any] | None:
        """The image typed from the schema; HBase cells (rows with ``ROW``) made readable."""
        image = super().typed_image(row, types, which)
        if image is not None and HBASE_ROW in image:
            return {name: values.readable_bytes(value) for name, value in image.items()}
        return image

    def key_columns(self, kafka_key: Any, before: dict | None, after: dict | None) -> list[str] | None:
        columns = super().key_columns(kafka_key, before, after)
        if columns is None and HBASE_ROW in (after or before or ()):
            return [HBASE_ROW]
        return columns

    def schema_name(self, source: dict[str, Any]) -> str | None:
        return source.get("namespace")

    def table_namespace(
        self, source: dict[str, Any], db: Any, schema: Any, table: Any, topic: str | None = None
    ) -> tuple[Any, Any]:
        return db, schema  # Lindorm names a table instance.table (db is the instance id), whatever its topic

    def position(self, source: dict[str, Any]) -> str | None:
        return None  # Lindorm records carry no log position

    # ------------------------------------------------------------ encoding

    def encode(self, events: pd.DataFrame) -> Iterator[Record]:
        """Records with a schema generated from each record's own images (``values.infer_kinds``).

        Inserts, updates, deletes and snapshot reads are written; tombstones,
        transaction markers, DDL and other events have no Lindorm form and are
        skipped. HBase rows (images with ``ROW``) get their cells back in
        Base64. Events without a schema are written in the namespace
        ``default``; ``seq`` has no Lindorm form and is dropped. SQL rows with
        key columns get a Kafka key ``{column: value}``.
        """
        for row in rows_of(events):
            op = row["op"]
            if op not in _OP_CODES:
                continue
            before = None if row["before"] is None else values.loads(row["before"])
            after = None if row["after"] is None else values.loads(row["after"])
            hbase = HBASE_ROW in (after or before or ())
            kinds = values.infer_kinds([before, after])
            if hbase:
                before, after = _base64_image(before), _base64_image(after)
                kinds = dict.fromkeys(kinds, "bytes")
            payload = {
                "op": _OP_CODES[op],
                "ts_ms": values.ns_to_ms(row["emit_time"]),
                "before": before,
                "after": after,
                "source": {
                    "version": "v2.0",
                    "db": row["database"],
                    "namespace": row["schema"] or DEFAULT_NAMESPACE,
                    "table": row["table"],
                    "ts_ms": values.ns_to_ms(row["event_time"]),
                },
            }
            yield Record(self.wrap(payload, row, kinds), None if hbase else self.encode_key(row, {}))

    def wrap(self, payload: dict[str, Any], row: dict[str, Any], kinds: dict[str, str]) -> dict[str, Any]:
        columns = [{"type": _CONNECT_TYPES[kind], "optional": True, "field": column} for column, kind in kinds.items()]
        schema = {
            "type": "struct",
            "fields": [
                {"type": "string", "optional": False, "field": "op"},
                {"type": "int64", "optional": False, "field": "ts_ms"},
                {"type": "struct", "fields": columns, "optional": True, "field": "before"},
                {"type": "struct", "fields": columns, "optional": True, "field": "after"},
                {
                    "type": "struct",
                    "fields": [{"type": t, "optional": False, "field": f} for f, t in _SOURCE_FIELDS],
                    "optional": False,
                    "field": "source",
                },
            ],
            "optional": False,
        }
        return {"schema": schema, "payload": payload}

    def encode_key(self, row: dict[str, Any], kinds: Any) -> Any:
        """A plain ``{column: value}`` Kafka key, or None without key columns (``kinds`` is not needed)."""
        columns, key = row["key_columns"], row["key"]
        if not columns or key is None:
            return None
        return dict(zip(columns, values.loads(key)))


def _base64_image(image: dict[str, Any] | None) -> dict[str, Any] | None:
    """HBase cells back to Base64 (the inverse of ``values.readable_bytes``)."""
    return None if image is None else {name: values.b64encode_text(value) for name, value in image.items()}
