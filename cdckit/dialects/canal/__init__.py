"""Canal flat JSON (as Alibaba Canal and OceanBase OMS write it to Kafka / RocketMQ).

One message is one statement's row change: ``data`` is a LIST of rows,
``old`` (UPDATE only) a parallel list holding just the changed columns'
previous values, ``type`` the operation in capitals (``INSERT``, ``UPDATE``,
``DELETE``, or a DDL type: ``CREATE``, ``ALTER``, ``ERASE``, ``QUERY``,
``TRUNCATE``, ``RENAME``, ``CINDEX``, ``DINDEX``), ``isDdl`` whether it is a
DDL (its text in ``sql``), ``pkNames`` the key columns, ``es`` the event time
and ``ts`` the write time (epoch milliseconds). Real Canal also writes ``id``
(the batch id) and sometimes ``gtid``; OceanBase's Canal writes neither.

- Each element of ``data`` is one event; the before image of row i is
  ``data[i]`` overlaid with ``old[i]``.
- Every value arrives as a string. Values are typed from ``mysqlType``
  (``bigint(20) unsigned``, ``decimal(10,2)``, ``varchar(255)``...), or from
  ``sqlType`` (java.sql.Types codes) for a column ``mysqlType`` does not name
  or names with a type this module does not know: integers become numbers (a
  ``bigint unsigned`` beyond 64 bits stays text), floats floats, decimals
  exact numbers or text, booleans booleans; dates, times and character types
  stay text. Binary columns arrive as the ISO-8859-1 string of their bytes
  and become Base64 of those bytes.
- ``seq`` is ``es:id:row`` (event time, batch id, row index in ``data``),
  zero-padded. It is not a log position: the flat message has none, messages
  of one batch in the same millisecond tie, and without ``id`` only ``es``
  and the row index remain.
- ``gtid`` (when present) is the ``txn_id``.
- A DML message whose ``data`` is null or empty is skipped with a reason.
- A message with no more than ``data`` and ``type`` (no ``database``,
  ``table``, type maps, ``pkNames``, times) still decodes: table and key
  unknown, values as given. Detection proposes canal for it with a low
  confidence (:data:`LENIENT_SCORE`), its evidence naming what is missing.

TiCDC's canal-json (``protocol=canal-json``) is the same message with these
differences: ``id`` is always 0; ``old`` of an UPDATE holds every column
(unless ``only_output_updated_columns`` or ``content-compatible`` is set:
then only the changed ones, as in Canal; either way the overlay gives the
before image); before v5.4 a DELETE's ``old`` repeats ``data`` (ignored);
``mysqlType`` names types without parameters (``decimal``, ``varchar``);
``sqlType`` codes ENUM as 4 and SET as -7 (``mysqlType``, preferred, keeps
them text). With ``enable-tidb-extension=true`` DML and DDL messages carry
``_tidb: {"commitTs": TSO}``: the commit TSO becomes ``seq`` (20 digits
zero-padded, as :func:`cdckit.values.sortable` renders integers) and, as
TiDB's transaction identifier, ``txn_id``; and TiCDC sends WATERMARK
messages (``type`` ``TIDB_WATERMARK``, ``_tidb: {"watermarkTs": TSO}``:
every change committed before that TSO has been sent), which become one
``heartbeat`` event each with the watermark TSO as ``seq``. A "large message"
TiCDC cut down (``_tidb.onlyHandleKey`` true: only the key columns sent; or
``_tidb.claimCheckLocation``: the row stored elsewhere) is quarantined with
that reason rather than read as a row holding only its key.

The package: :mod:`.dialect` (the registered class and its detection),
:mod:`.message` (fields, ops, column types and value converters),
:mod:`.decode` (one message), :mod:`.fast_path` (the batch decoder) and
:mod:`.encode`.

>>> import cdckit
>>> msg = ('{"id": 7, "database": "shop", "table": "items", "type": "INSERT", "isDdl": false, "es": 1000, '
...        '"ts": 1005, "pkNames": ["id"], "mysqlType": {"id": "bigint(20)", "price": "decimal(10,2)"}, '
...        '"sql": "", "old": null, "data": [{"id": "1", "price": "9.90"}, {"id": "2", "price": null}]}')
>>> ev = cdckit.read(msg, dialect="canal")
>>> ev["after"].tolist(), ev["key"].tolist()
(['{"id":1,"price":9.9}', '{"id":2,"price":null}'], ['[1]', '[2]'])
>>> ev.loc[1, "seq"]
'00000000000000001000:00000000000000000007:00000000000000000001'
"""

from __future__ import annotations

from .dialect import Canal

__all__ = ["Canal"]
