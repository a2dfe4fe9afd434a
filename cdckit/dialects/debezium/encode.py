"""Encoding canonical events as Debezium messages: Kafka Connect's schema/payload wrapper with Kafka keys.

>>> table_changes({"table": "t", "database": "shop", "schema": None, "op_raw": "CREATE", "after": None})
[{'type': 'CREATE', 'id': '"shop"."t"', 'table': None}]
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pandas as pd

from ... import values
from ..base import Dialect, Record, rows_of

__all__ = ["DebeziumEncoder", "CONNECT_TYPES", "table_changes"]

_OP_CODES = {"insert": "c", "update": "u", "delete": "d", "read": "r", "truncate": "t"}
_POSITION = re.compile(r"(?P<file>.+):(?P<pos>\d{20}):(?P<row>\d{20})\Z")
#: A PostgreSQL position read from ``source.sequence``: the last commit's LSN, then the change's.
_LSN_PAIR = re.compile(r"(?P<commit>\d{20}):(?P<lsn>\d{20})\Z")


class DebeziumEncoder(Dialect):
    """What :class:`~cdckit.dialects.debezium.Debezium` writes (its variants override the parts that differ)."""

    connector = "mysql"

    def encode(self, events: pd.DataFrame) -> Iterator[Record]:
        """Wrapped (schema + payload) values with Kafka keys; MySQL-style positions.

        Each value's schema types its columns from that message's own images
        (``values.infer_kinds``), so a column whose values change type along
        the stream is written as each message has it. A ``seq`` of the form
        ``file:pos:row`` is written back as the binlog position, two numbers
        (``commit:lsn``) as a PostgreSQL ``sequence`` and ``lsn``, a plain number
        as a PostgreSQL ``lsn``; events without one get a synthetic binlog
        position in input order.
        """
        for number, row in enumerate(rows_of(events)):
            op = row["op"]
            if op == "tombstone":
                yield Record(None, self.encode_key(row, {}))
                continue
            if op in ("begin", "commit"):
                yield Record(transaction_record(row))
                continue
            if op == "ddl":
                yield Record(
                    {
                        "source": self.encode_source(row, number),
                        "ts_ms": values.ns_to_ms(row["event_time"]),
                        "databaseName": row["database"],
                        "schemaName": row["schema"],
                        "ddl": row["ddl"],
                        "tableChanges": table_changes(row),
                    }
                )
                continue
            if op not in _OP_CODES:
                continue
            before = None if row["before"] is None else values.loads(row["before"])
            after = None if row["after"] is None else values.loads(row["after"])
            kinds = values.infer_kinds([before, after])
            payload = {
                "before": before,
                "after": after,
                "source": self.encode_source(row, number),
                "op": _OP_CODES[op],
                "ts_ms": values.ns_to_ms(row["emit_time"]),
                "transaction": {"id": row["txn_id"], "total_order": None, "data_collection_order": None}
                if row["txn_id"] is not None
                else None,
            }
            yield Record(self.wrap(payload, row, kinds), self.encode_key(row, kinds))

    def encode_source(self, row: dict[str, Any], number: int) -> dict[str, Any]:
        source: dict[str, Any] = {
            "version": "2.7.0.Final",
            "connector": self.connector,
            "name": "cdckit",
            "ts_ms": values.ns_to_ms(row["event_time"]),
            "db": row["database"],
        }
        if row["schema"] is not None:
            source["schema"] = row["schema"]
        source["table"] = row["table"]
        seq = row["seq"]
        match = _POSITION.match(seq) if seq else None
        pair = _LSN_PAIR.match(seq) if seq and not match else None
        if match:
            source.update(file=match["file"], pos=int(match["pos"]), row=int(match["row"]))
        elif pair:
            source["sequence"] = json.dumps([str(int(pair["commit"])), str(int(pair["lsn"]))])
            source["lsn"] = int(pair["lsn"])
        elif seq and seq.isdigit():
            source["lsn"] = int(seq)
        else:
            source.update(file="mysql-bin.000001", pos=4 + 100 * number, row=0)
        return source

    def wrap(self, payload: dict[str, Any], row: dict[str, Any], kinds: dict[str, str]) -> dict[str, Any]:
        name = f"cdckit.{row['database']}.{row['table']}"
        image = {
            "type": "struct",
            "optional": True,
            "name": f"{name}.Value",
            "fields": [{"type": CONNECT_TYPES[k], "optional": True, "field": c} for c, k in kinds.items()],
        }
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
                    "name": "io.debezium.connector.mysql.Source",
                    "fields": [],
                },
                {"type": "string", "optional": False, "field": "op"},
                {"type": "int64", "optional": True, "field": "ts_ms"},
            ],
        }
        return {"schema": schema, "payload": payload}

    def encode_key(self, row: dict[str, Any], kinds: dict[str, str]) -> Any:
        """The Kafka key (schema + payload) of an event, typed by its values; None without key columns."""
        columns, key = row["key_columns"], row["key"]
        if not columns or key is None:
            return None
        key_values = values.loads(key)
        schema = {
            "type": "struct",
            "optional": False,
            "name": f"cdckit.{row['database']}.{row['table']}.Key",
            "fields": [
                {"type": CONNECT_TYPES[values.kind_of_value(v) or "text"], "optional": False, "field": c}
                for c, v in zip(columns, key_values)
            ],
        }
        return {"schema": schema, "payload": dict(zip(columns, key_values))}


def table_changes(row: dict[str, Any]) -> list[dict[str, Any]]:
    """A ``ddl`` event's ``tableChanges``: its table with the change type and definition it carries, if any."""
    definition = None if row["after"] is None else values.loads(row["after"])
    if row["table"] is None or (definition is None and row["op_raw"] not in _CHANGE_TYPES):
        return []
    names = [n for n in (row["database"], row["schema"], row["table"]) if n is not None]
    return [
        {
            "type": row["op_raw"] if row["op_raw"] in _CHANGE_TYPES else "ALTER",
            "id": ".".join('"' + n.replace('"', '""') + '"' for n in names),
            "table": definition,
        }
    ]


_CHANGE_TYPES = ("CREATE", "ALTER", "DROP")

#: canonical value kinds (``values.infer_kinds``) -> Kafka Connect schema types
CONNECT_TYPES = {"int": "int64", "float": "double", "bool": "boolean", "text": "string"}


def transaction_record(row: dict[str, Any]) -> dict[str, Any]:
    """The transaction topic's BEGIN or END record of a ``begin``/``commit`` event, with what a commit's
    ``after`` declares (``event_count``, ``data_collections``) as the connector writes it.

    >>> transaction_record({"op": "commit", "txn_id": "7", "event_time": None,
    ...                     "after": '{"event_count":2,"data_collections":{"s.t":2}}'})["data_collections"]
    [{'data_collection': 's.t', 'event_count': 2}]
    """
    declared = values.loads(row["after"]) if isinstance(row.get("after"), str) else {}
    declared = declared if isinstance(declared, dict) else {}
    collections = declared.get("data_collections")
    return {
        "status": "BEGIN" if row["op"] == "begin" else "END",
        "id": row["txn_id"],
        "ts_ms": values.ns_to_ms(row["event_time"]),
        "event_count": declared.get("event_count"),
        "data_collections": None
        if not isinstance(collections, dict)
        else [{"data_collection": name, "event_count": count} for name, count in collections.items()],
    }
