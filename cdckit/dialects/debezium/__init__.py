"""Debezium JSON, with or without the Kafka Connect ``schema``/``payload`` wrapper.

The envelope is ``{before, after, source, op, ts_ms, transaction}``; ``op`` is
``c`` create, ``u`` update, ``d`` delete, ``r`` snapshot read, ``t`` truncate,
``m`` message. A truncate is the canonical ``truncate`` (no images: replay
empties the table there); a logical-decoding message (``m``) is ``other``
with its ``message`` (``prefix``, ``content``) kept as the after image. A
Kafka tombstone (a null value after a delete) becomes a ``tombstone`` event
keyed by the Kafka key. Debezium's transaction topic (``status`` BEGIN/END)
gives ``begin``/``commit`` events. Its schema change topic (``ddl``,
``databaseName``, ``tableChanges``), and Flink CDC's schema change records
(a payload with the same record as JSON text in ``historyRecord``), give one
``ddl`` event per changed table: the statement, the table, the change's
``type`` (``CREATE``, ``ALTER``, ``DROP``) as ``op_raw``, the table's key
columns, and its new column list as the after image
(``{"columns": [...], "primaryKeyColumnNames": [...]}`` as Debezium writes
the table).

- Key columns come from the Kafka key (its ``payload`` when wrapped); a file
  of values alone has no key columns.
- Values are typed from the embedded schema where present: integer and float
  types parse text values, ``org.apache.kafka.connect.data.Decimal`` (Base64
  of the unscaled two's-complement integer) and ``VariableScaleDecimal``
  become numbers, or exact text when a double would lose digits.
- ``seq`` is the connector's log position: MySQL ``file:pos:row``, PostgreSQL
  ``lsn``, SQL Server ``commit_lsn:change_lsn:event_serial_no``, Oracle
  ``scn``, MongoDB ``ts_ms:ord``; numbers zero-padded.
- ``event_time`` is ``source.ts_ms`` (``ts_us``/``ts_ns`` when given),
  ``emit_time`` the envelope's ``ts_ms``.
- Records printed in Avro's JSON encoding (``kafka-avro-console-consumer``:
  images as their record branch ``{"<topic>.Value": {...}}``, nullable
  fields as ``{"string": "x"}``, ``{"long": 5}``) have their unions
  unwrapped first (:func:`avro_unwrapped`); Avro ``bytes`` become Base64.

Arcion and Lindorm subclass :class:`Debezium` and change only what differs.

The package: :mod:`.dialect` (the registered class and its detection),
:mod:`.decode` (one message), :mod:`.fast_path` (the batch decoder),
:mod:`.encode`, and :mod:`.envelope` (the helpers the family shares).

>>> import cdckit
>>> ev = cdckit.read('{"op": "c", "after": {"id": 1}, "source": {"connector": "mysql", "db": "inventory", '
...                  '"table": "customers", "ts_ms": 1000, "file": "mysql-bin.000003", "pos": 154, "row": 0}}',
...                  dialect="debezium")
>>> ev.loc[0, ["op", "database", "table", "after"]].tolist()
['insert', 'inventory', 'customers', '{"id":1}']
>>> ev.loc[0, "seq"]
'mysql-bin.000003:00000000000000000154:00000000000000000000'
"""

from __future__ import annotations

from .dialect import Debezium

__all__ = ["Debezium"]
