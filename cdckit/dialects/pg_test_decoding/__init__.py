r"""PostgreSQL's built-in ``test_decoding`` logical decoding plugin: one text line per change.

The plugin writes each decoded transaction as lines of text (PostgreSQL's
``contrib/test_decoding``, documented in the "Logical Decoding Examples" of
the PostgreSQL manual):

- ``BEGIN 529`` and ``COMMIT 529`` around a transaction; ``COMMIT 529 (at
  2026-11-26 23:50:08.466157+00)`` with ``include-timestamp``; plain
  ``BEGIN`` / ``COMMIT`` with ``include-xids=0``;
- ``table public.t: INSERT: id[integer]:1 name[text]:'x'``: the table as
  ``schema.table`` and each column as ``name[type]:value``; ``UPDATE:``
  gives ``old-key: <columns> new-tuple: <columns>`` when the key changed (or
  under ``REPLICA IDENTITY FULL``, the whole old row), else the new row
  alone; ``DELETE:`` gives the old key (the whole row under FULL) or
  ``(no-tuple-data)`` for a table without a replica identity;
  ``TRUNCATE: (no-flags)`` (or ``restart_seqs`` / ``cascade``) names every
  table truncated together: ``table public.a, public.b: TRUNCATE: cascade``;
- ``message: transactional: 1 prefix: pfx, sz: 5 content:hello`` for a
  ``pg_logical_emit_message`` call.

Names are quoted as PostgreSQL quotes identifiers (``"My Schema"."t.1"``,
``"Odd Col"``); types are PostgreSQL's names without typmods
(``timestamp with time zone``, ``integer[]``); values are ``null``,
``unchanged-toast-datum`` (a large value the update did not touch: the column
is left out of the image, a partial image), bare numbers (``NaN`` and
``Infinity`` too) and booleans, ``B'0101'`` bit strings, or single-quoted
text with ``''`` for a quote. Values become image values by the rules of
:mod:`cdckit.dialects.postgres` (numbers, exact numerics, bytea as Base64,
arrays as lists).

Two forms of file are read. ``pg_recvlogical -f`` writes the lines as they
are: a text value holding a line feed runs over several physical lines,
which this decoder joins (it is stateful: the first lines of such a change
are skipped with the reason "continues on the next line", the last carries
the event). ``COPY (SELECT * FROM pg_logical_slot_get_changes(...)) TO
STDOUT`` (or ``peek_changes``, or psql's ``\copy``) writes
``lsn<TAB>xid<TAB>data`` with COPY's backslash escapes, one change a line;
its LSNs give ``seq`` (see :func:`copy_seq`).

>>> import cdckit
>>> ev = cdckit.read("BEGIN 529\ntable public.t: INSERT: id[integer]:1 name[text]:'it''s'\n"
...                  "COMMIT 529 (at 2026-11-26 23:50:08.466157+00)\n", dialect="pg_test_decoding")
>>> ev[["op", "database", "table", "txn_id", "after"]].values.tolist()[1]
['insert', 'public', 't', '529', '{"id":1,"name":"it\'s"}']
>>> str(ev.loc[2, "event_time"])
'2026-11-26 23:50:08.466157+00:00'
"""

from .dialect import (
    CONTINUES,
    MOVED,
    OPS,
    PREPARED,
    ROLLBACK,
    ROLLED_BACK,
    STREAM_ABORT,
    STREAM_BLOCK,
    STREAMED_CHANGE,
    UNRESOLVED,
    PgTestDecoding,
)
from .grammar import MESSAGE, NO_TUPLE, UNCHANGED_TOAST, unescape_copy
from .writing import literal, quote_identifier, quote_name, tuple_text

__all__ = [
    "CONTINUES",
    "MESSAGE",
    "MOVED",
    "NO_TUPLE",
    "OPS",
    "PREPARED",
    "ROLLBACK",
    "ROLLED_BACK",
    "STREAM_ABORT",
    "STREAM_BLOCK",
    "STREAMED_CHANGE",
    "UNCHANGED_TOAST",
    "UNRESOLVED",
    "PgTestDecoding",
    "literal",
    "quote_identifier",
    "quote_name",
    "tuple_text",
    "unescape_copy",
]
