"""Decoding one Debezium message: changes, tombstones, transaction markers, schema changes, logical messages.

:class:`DebeziumDecoder` holds what :class:`~cdckit.dialects.debezium.Debezium`
does with one message (:meth:`~DebeziumDecoder.decode`) and the hooks its
variants override (:meth:`~DebeziumDecoder.typed_image`,
:meth:`~DebeziumDecoder.key_columns`, :meth:`~DebeziumDecoder.schema_name`,
:meth:`~DebeziumDecoder.position`).

>>> DebeziumDecoder().position({"file": "mysql-bin.000003", "pos": 154, "row": 0})
'mysql-bin.000003:00000000000000000154:00000000000000000000'
"""

from __future__ import annotations

import functools
from typing import Any

from ... import values
from ...frame import Event
from ...io import Message
from ...row_images import key_of
from ..base import BadMessage, Dialect, SkipMessage, expect_object
from .envelope import (
    avro_unwrapped,
    change_op,
    declared_columns,
    envelope_time,
    field_types,
    field_types_of,
    is_avro_json,
    kafka_payload,
    kafka_schema_name,
    source_time,
    table_id_parts,
    typed_value,
    unwrap,
)
from .mongodb import is_mongodb, mongodb_change
from .naming import connector_of, namespace
from .unavailable import DEFAULT_PLACEHOLDER, Unavailable

__all__ = ["DebeziumDecoder"]


def last_commit(sequence: Any) -> str | None:
    """The first part of the PostgreSQL connector's ``source.sequence`` (a JSON array text: the LSN of the
    last commit before this change, then the change's own LSN), ``"0"`` where it is null (a snapshot), or None
    without a sequence.

    The change LSN alone does not sort in commit order where transactions interleave; the pair does, in the
    order the connector sent the changes.

    >>> last_commit('["22233000","22245784"]'), last_commit('[null,"7"]'), last_commit(None)
    ('22233000', '0', None)
    """
    if sequence.__class__ is str and sequence.startswith("["):
        try:
            parts = values.loads(sequence)
        except ValueError:
            return None
    elif sequence.__class__ is list:
        parts = sequence
    else:
        return None
    if not parts:
        return None
    first = parts[0]
    return "0" if first is None or first == "" else str(first)


class DebeziumDecoder(Dialect):
    """One Debezium message at a time (the base of :class:`~cdckit.dialects.debezium.Debezium`).

    ``unavailable``: the connector's placeholder for a value it could not read (an unchanged TOAST value,
    :mod:`.unavailable`); a column holding it is left out of the image.
    """

    #: Debezium for PostgreSQL names a transaction ``txId:LSN`` (the LSN of BEGIN, of each change, of END):
    #: the ``txId`` names it. Other connectors' ids (a binlog position, a GTID ``uuid:n``) are whole.
    transaction_key = r"^(\d+):\d+$"

    @functools.cached_property
    def unavailable(self) -> Unavailable:
        """The placeholders of this read: the default one and those of ``options.unavailable_value``."""
        return Unavailable(DEFAULT_PLACEHOLDER, *self.options.unavailable_value)

    def decode(self, message: Message) -> list[Event]:
        value = message.value
        if value is None:
            return [self.tombstone(message, "null")]
        payload, schema = unwrap(value)
        if payload is None:
            raise BadMessage(f"expected a Debezium change event as a JSON object, got {type(value).__name__}")
        if is_avro_json(payload):
            payload = avro_unwrapped(payload)
        if "status" in payload and payload.get("status") in ("BEGIN", "END"):
            return [self.transaction_marker(payload)]
        if "op" not in payload and ("ddl" in payload or "historyRecord" in payload):
            return self.schema_change(payload)
        if payload.get("op") == "m":
            return [self.logical_message(payload)]
        return [self.change(payload, schema, message.key, message.topic)]

    def change(
        self, payload: dict[str, Any], schema: dict[str, Any] | None, kafka_key: Any, topic: str | None = None
    ) -> Event:
        if is_mongodb(payload):
            return mongodb_change(self, payload, kafka_key)
        op_raw, op = change_op(payload)
        source = payload.get("source") or {}
        types, declared = self.schema_types(schema)
        unavailable = self.unavailable
        before = self.typed_image(unavailable.stripped(payload.get("before")), types.get("before"), "before")
        after = self.typed_image(unavailable.stripped(payload.get("after")), types.get("after"), "after")
        if op in ("insert", "read") and after is None:
            raise BadMessage(f"op {op_raw!r} without an after image")
        if op == "delete" and before is None:
            raise BadMessage(f"op {op_raw!r} without a before image")
        key_columns = self.key_columns(kafka_key, before, after)
        keyed = before if op == "delete" else after
        event = Event(
            op=op,
            op_raw=op_raw,
            **self.source_fields(source, payload, payload, topic),
            key_columns=key_columns,
            key=key_of(keyed, key_columns),
            before=values.image(before),
            after=values.image(after),
            ddl=source.get("query") if op_raw == "t" else None,
        )
        if declared is not None:
            self.declare(event.database, event.schema, event.table, declared)
        return event

    @functools.cached_property
    def _schema_memo(self) -> dict[int, tuple[dict[str, Any], dict[str, Any], Any]]:
        return {}

    def schema_types(self, schema: dict[str, Any] | None) -> tuple[dict[str, Any], Any]:
        """The image columns' field schemas (:func:`field_types`) and declared types (:func:`declared_columns`,
        None without a schema) of an envelope schema, made once per schema object: the records a registry's
        schema decodes (:mod:`cdckit.io.avro_connect`) share one, so each is read once, and the declaration is
        the same dict each time (see :meth:`~cdckit.dialects.base.Dialect.declare`)."""
        if schema is None:
            return {}, None
        memo = self._schema_memo
        found = memo.get(id(schema))
        if found is not None and found[0] is schema:
            return found[1], found[2]
        types = field_types(schema)
        declared = declared_columns(types) if types else None
        if len(memo) >= 64:  # a JSON capture's schemas are each message's own: keep a few
            memo.clear()
        memo[id(schema)] = (schema, types, declared)
        return types, declared

    def typed_image(self, row: Any, types: dict[str, dict[str, Any]] | None, which: str) -> dict[str, Any] | None:
        """The image with values typed from the schema (unchanged without one)."""
        if row is None:
            return None
        row = expect_object(row, which)
        if not types:
            return dict(row)
        return {name: typed_value(value, types.get(name)) for name, value in row.items()}

    def key_columns(self, kafka_key: Any, before: dict | None, after: dict | None) -> list[str] | None:
        key = kafka_payload(kafka_key)
        if isinstance(key, dict) and key:
            return list(key)
        return None

    def source_fields(
        self, source: dict[str, Any], envelope: dict[str, Any], transaction: dict[str, Any], topic: str | None = None
    ) -> dict[str, Any]:
        """The event fields a change takes from its ``source`` block, its ``envelope`` (``ts_ms``) and the
        object holding its ``transaction`` block: where and when it happened, its log position, its transaction;
        ``topic``: the Kafka topic of the record, where the table's namespace is named when ``source`` does
        not say it (see :mod:`.naming`).

        >>> DebeziumDecoder().source_fields({"db": "shop", "schema": "sales", "table": "orders", "lsn": 7}, {}, {})
        ... # doctest: +ELLIPSIS
        {'database': 'sales', 'schema': 'sales', 'table': 'orders', ..., 'seq': '00000000000000000007', ...}
        """
        table = source.get("table") or source.get("collection")
        db, schema = source.get("db"), self.schema_name(source)
        found = self.table_namespace(source, db, schema, table, topic)
        if found is not None:
            db, schema = found
        return {
            "database": db,
            "schema": schema,
            "table": table,
            "event_time": source_time(source),
            "emit_time": envelope_time(envelope),
            "seq": self.position(source),
            "txn_id": self.transaction_id(transaction, source),
        }

    def schema_name(self, source: dict[str, Any]) -> str | None:
        return source.get("schema")

    def table_namespace(
        self, source: dict[str, Any], db: Any, schema: Any, table: Any, topic: str | None = None
    ) -> tuple[Any, Any] | None:
        """``(database, schema)`` of a change of ``table`` so that the frame names the table as its connector
        does (:func:`.naming.namespace`); None where only a Kafka topic could tell and there is none (the
        record's own ``db`` and ``schema`` stand then).

        >>> DebeziumDecoder().table_namespace({"connector": "sqlserver"}, "testDB", "dbo", "customers")
        ('testDB.dbo', 'dbo')
        """
        return namespace(
            connector_of(source.get("connector"), source.get("lsn"), source.get("scn")), db, schema, table, topic
        )

    def position(self, source: dict[str, Any]) -> str | None:
        """The connector's log position as a sortable string."""
        file, pos = source.get("file"), source.get("pos")
        if file is not None or pos is not None:
            row = source.get("row") or 0
            if (
                pos.__class__ is int
                and row.__class__ is int
                and file.__class__ is str
                and pos >= 0
                and row >= 0
                and not (file.isascii() and file.isdigit())
                and file
            ):
                return f"{file}:{str(pos).zfill(20)}:{str(row).zfill(20)}"  # sortable_text's common MySQL case
            return values.sortable_text(file, pos, row)
        if source.get("lsn") is not None:  # PostgreSQL: its sequence leads with the commit LSN before this one
            committed = last_commit(source.get("sequence"))
            if committed is not None:
                return values.sortable_text(committed, source["lsn"])
            return values.sortable(source["lsn"])
        if source.get("change_lsn") is not None or source.get("commit_lsn") is not None:
            return values.sortable_text(
                source.get("commit_lsn"), source.get("change_lsn"), source.get("event_serial_no")
            )
        if source.get("scn") is not None:  # Oracle: changes arrive in commit order, commit_scn says it
            if source.get("commit_scn") not in (None, ""):
                return values.sortable_text(source["commit_scn"], source["scn"])
            return values.sortable(source["scn"])
        if source.get("ord") is not None:
            return values.sortable_text(source.get("ts_ms"), source["ord"])
        return None

    def transaction_id(self, payload: dict[str, Any], source: dict[str, Any]) -> str | None:
        txn = payload.get("transaction")
        if isinstance(txn, dict) and txn.get("id") not in (None, ""):
            return str(txn["id"])
        for field in ("txId", "gtid", "xid"):
            found = source.get(field)
            if found is not None and found != "":
                return str(found)
        return None

    def tombstone(self, message: Message, op_raw: str) -> Event:
        """A Kafka tombstone, keyed by the Kafka key (table from the key schema name)."""
        key = kafka_payload(message.key)
        names = kafka_schema_name(message.key)
        database = table = None
        parts = names.split(".") if names else []
        if len(parts) >= 4 and parts[-1] == "Key":
            database, table = parts[-3], parts[-2]
        columns = list(key) if isinstance(key, dict) and key else None
        if columns and isinstance(key, dict):
            types = field_types_of(message.key)
            key = {name: typed_value(v, types.get(name)) for name, v in key.items()}
        return Event(
            op="tombstone",
            op_raw=op_raw,
            database=database,
            table=table,
            key_columns=columns,
            key=key_of(key, columns) if isinstance(key, dict) else None,
        )

    def transaction_marker(self, payload: dict[str, Any]) -> Event:
        """A BEGIN or END record of the transaction topic; an END's ``after`` is what it declares
        (:func:`declared_transaction`)."""
        status = payload["status"]
        return Event(
            op="begin" if status == "BEGIN" else "commit",
            op_raw=status,
            event_time=values.ms_to_ns(payload.get("ts_ms")),
            txn_id=None if payload.get("id") in (None, "") else str(payload["id"]),
            after=declared_transaction(payload),
        )

    def schema_change(self, payload: dict[str, Any]) -> list[Event]:
        """One ``ddl`` event per table a schema change record changes (one event when it names none)."""
        source = payload.get("source") or {}
        if "historyRecord" in payload:  # Flink CDC: the schema history record as JSON text
            record = payload["historyRecord"]
            try:
                record = values.loads(record) if isinstance(record, str) else record
            except ValueError as err:
                raise BadMessage(f"historyRecord is not JSON: {err}") from err
            payload = expect_object(record, "historyRecord")
            source = source or payload.get("source") or {}
        source = expect_object(source, "source")
        ddl = payload.get("ddl")
        if not ddl:
            raise SkipMessage("schema change without DDL text")
        changes = payload.get("tableChanges") or [None]
        if not isinstance(changes, list):
            raise BadMessage(f"tableChanges is not a list: {changes!r}")
        events = []
        for change in changes:
            database = payload.get("databaseName") or source.get("db")
            schema = payload.get("schemaName") or None
            table = source.get("table")
            op_raw, key_columns, columns = "ddl", None, None
            if change is not None:
                change = expect_object(change, "tableChanges item")
                op_raw = str(change.get("type") or "ddl")
                names = table_id_parts(change.get("id"))
                if names:
                    table = names[-1]
                    if len(names) == 3:
                        database, schema = names[0], names[1]
                    elif len(names) == 2:
                        if database in (None, names[0]):
                            database = names[0]
                        else:
                            schema = names[0]
                definition = change.get("table")
                if isinstance(definition, dict):
                    keys = definition.get("primaryKeyColumnNames")
                    key_columns = [str(k) for k in keys] if isinstance(keys, list) and keys else None
                    columns = definition
            found = self.table_namespace(source, database, schema, table)
            if found is not None:
                database, schema = found
            events.append(
                Event(
                    op="ddl",
                    op_raw=op_raw,
                    database=database,
                    schema=schema,
                    table=table,
                    event_time=source_time(source) or values.ms_to_ns(payload.get("ts_ms")),
                    seq=self.position(source),
                    key_columns=key_columns,
                    after=values.image(columns),
                    ddl=ddl,
                )
            )
        return events

    def logical_message(self, payload: dict[str, Any]) -> Event:
        """A logical-decoding message (``op`` ``m``): ``other``, its ``message`` kept as the after image."""
        source = expect_object(payload.get("source") or {}, "source")
        message = payload.get("message")
        return Event(
            op="other",
            op_raw="m",
            database=source.get("db") or None,
            schema=self.schema_name(source) or None,  # a non-transactional message names none ("")
            table=source.get("table") or None,
            event_time=source_time(source),
            emit_time=envelope_time(payload),
            seq=self.position(source),
            txn_id=self.transaction_id(payload, source),
            after=None if message is None else values.image(expect_object(message, "message")),
        )


def declared_transaction(payload: dict[str, Any]) -> str | None:
    """What a transaction record declares of its transaction, as the JSON object text a ``commit`` event's
    ``after`` holds: ``event_count`` (its changes) and ``data_collections`` (its changes per table, as the
    connector names the table, sorted); None where it declares neither (a BEGIN). A count that is not a whole
    number is left out, never guessed.

    >>> declared_transaction({"status": "END", "id": "743:26652696", "event_count": 3, "data_collections": [
    ...     {"data_collection": "public.orders", "event_count": 1},
    ...     {"data_collection": "public.order_items", "event_count": 2}]})
    '{"event_count":3,"data_collections":{"public.order_items":2,"public.orders":1}}'
    >>> declared_transaction({"status": "BEGIN", "id": "743:26652104", "event_count": None}) is None
    True
    """
    out: dict[str, Any] = {}
    count = payload.get("event_count")
    if count.__class__ is int:
        out["event_count"] = count
    collections = payload.get("data_collections")
    if isinstance(collections, list):
        per_table: dict[str, int] = {}
        for item in collections:
            name = item.get("data_collection") if isinstance(item, dict) else None
            counted = item.get("event_count") if isinstance(item, dict) else None
            if isinstance(name, str) and counted.__class__ is int:
                per_table[name] = per_table.get(name, 0) + counted
        out["data_collections"] = dict(sorted(per_table.items()))
    return values.image(out) if out else None
