"""DataWorks JSON v2.0, as OceanBase OMS writes it to Kafka and RocketMQ.

One JSON object per change: ``version`` ``"2.0"``, a ``schema`` describing the
table and a ``payload`` holding the change::

    {"version": "2.0",
     "schema": {"source": {"dbType", "dbVersion", "dbName", "schema", "table"},
                "column": [{"name": "id", "type": "bigint"}, ...],
                "pk": ["id"]},
     "payload": {"before": {"data": {...}}, "after": {"data": {...}},
                 "op": "UPDATE", "timestamp": {"eventTime": 1620457659000},
                 "ddl": {"text": "..."}, "scn": "..."},
     "extend": {"load_fm": "CIBS"}}

- ``schema.source`` ``dbName``/``schema``/``table`` -> ``database``/``schema``/
  ``table``; ``schema.pk`` -> ``key_columns``; ``payload.scn`` -> ``seq``
  (zero-padded); ``payload.timestamp.eventTime`` (epoch ms) -> ``event_time``.
  There is no emit time and no transaction id.
- ``schema.column`` types the values: MySQL-ish names (``bigint``,
  ``varchar(20)``, ``decimal(10,2)``, ``binary``, ``datetime``...). Integer,
  float, decimal and boolean columns turn values that arrive as text into
  numbers (a decimal a double cannot hold stays exact text); binary stays
  Base64 text; datetime values stay as they arrive; other columns are kept.
- A datetime may be written with nanoseconds as ``1590315269000.123456789``
  (13-digit ms, ".", 9 digits). A double cannot hold that number, so the
  reader keeps it as its exact text ``"1590315269000.123456789"``; a plain
  ms value ``1590315269000`` stays a number. (When the fraction is one a
  double holds exactly, such as ``.500000000``, the value is that number.)
- ``payload.op`` is case-sensitive: ``INSERT``/``UPDATE``/``DELETE``;
  ``HEARTBEAT`` (its message has no schema at all); ``TRANSACTION_BEGIN``/
  ``TRANSACTION_END`` -> ``begin``/``commit``; ``CREATE``, ``ALTER``,
  ``ERASE``, ``QUERY``, ``TRUNCATE``, ``RENAME``, ``CINDEX``, ``DINDEX`` ->
  ``ddl``; ``GTID``, ``XACOMMIT``, ``XAROLLBACK`` and any other upper-case
  op -> ``other``. ``XACOMMIT`` is not made a ``commit``: it commits a
  prepared XA transaction, a separate, later event than the transaction's
  own ``TRANSACTION_BEGIN``/``TRANSACTION_END`` pair, and counting it as one
  would close a transaction twice. ``payload.ddl.text`` is the ``ddl``
  whenever given (DML messages carry none, or ``{"text": null}``).
- ``extend`` (free-form extension fields) is not part of the frame.
- DataHub Blob (``schema.dataColumn``, ``payload.before.dataColumn``,
  ``sequenceId``, version ``0.0.1``/``1.0.0``) looks alike and is never
  claimed.

>>> import cdckit
>>> msg = ('{"version": "2.0", "schema": {"source": {"dbName": "shop", "table": "t"}, '
...        '"column": [{"name": "id", "type": "bigint"}, {"name": "price", "type": "decimal(10,2)"}], "pk": ["id"]}, '
...        '"payload": {"after": {"data": {"id": "7", "price": "9.90"}}, "op": "INSERT", '
...        '"timestamp": {"eventTime": 1620457659000}, "scn": "42"}}')
>>> ev = cdckit.read(msg)
>>> ev.loc[0, ["dialect", "op", "database", "table", "seq", "key", "after"]].tolist()
['dataworks', 'insert', 'shop', 't', '00000000000000000042', '[7]', '{"id":7,"price":9.9}']
"""

from .dialect import VERSION, DataWorks
from .fields import (
    DECLARED_KINDS,
    OPS,
    TYPE_KINDS,
    canonical_op,
    column_kinds,
    ddl_text,
    declared_columns,
    declared_kind,
    epoch_ms_to_ns,
    event_time,
    keyed_image,
    primary_key,
    require_images,
    type_kind,
    typed_data,
    typed_image,
)

__all__ = [
    "DECLARED_KINDS",
    "OPS",
    "TYPE_KINDS",
    "VERSION",
    "DataWorks",
    "canonical_op",
    "column_kinds",
    "ddl_text",
    "declared_columns",
    "declared_kind",
    "epoch_ms_to_ns",
    "event_time",
    "keyed_image",
    "primary_key",
    "require_images",
    "type_kind",
    "typed_data",
    "typed_image",
]
