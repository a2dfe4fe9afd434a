"""Maxwell's daemon JSON (zendesk/maxwell): one row change per message.

A row message is ``{database, table, type, ts, xid, xoffset, commit,
position, server_id, thread_id, primary_key, primary_key_columns, data,
old}``; which of the optional fields appear depends on Maxwell's
``output_*`` options. ``type`` is ``insert``, ``update``, ``delete``, the
bootstrap types ``bootstrap-start``, ``bootstrap-insert``,
``bootstrap-complete``, or (with ``output_ddl``) a DDL type:
``database-create``, ``database-alter``, ``database-drop``, ``table-create``,
``table-alter``, ``table-drop``, whose message carries ``sql``, ``def`` and
``old`` (table definitions) instead of rows.

- ``data`` is the row (after an insert or update, before a delete); ``old``
  holds only the changed columns' previous values, so the before image of
  an update is ``data`` overlaid with ``old``.
- Values are typed JSON already (binary columns Base64, sets arrays).
- ``ts`` is epoch SECONDS on row messages but epoch MILLISECONDS on DDL
  messages (Maxwell writes the DDL's own timestamp); a ``ts_ms`` field,
  which upstream Maxwell does not write but some forks do, is preferred.
  ``push_ts`` (``output_push_timestamp``: seconds with microseconds) is the
  emit time.
- ``xid`` is the transaction id; ``commit: true`` marks a transaction's last
  row and is not kept (``txn_id`` groups the rows).
- ``seq`` is ``position`` (``file:offset``) and ``xoffset`` (the row's
  offset in its transaction), zero-padded. Maxwell leaves ``xoffset`` off
  the commit row, so a commit row without it gets ``~``, which sorts after
  its transaction's other rows at the same position.
- ``primary_key_columns`` gives the key columns; without it there are none.
- ``bootstrap-insert`` rows are snapshot reads; ``bootstrap-start`` and
  ``bootstrap-complete`` carry no row and become ``other`` events so a
  bootstrap stays visible in the frame.

>>> import cdckit
>>> ev = cdckit.read('{"database": "test", "table": "e", "type": "update", "ts": 1477053234, "xid": 23400, '
...                  '"commit": true, "position": "master.000006:801170", "data": {"id": 1, "m": 5.444}, '
...                  '"old": {"m": 4.2341}}', dialect="maxwell")
>>> ev.loc[0, ["op", "txn_id", "before", "after"]].tolist()
['update', '23400', '{"id":1,"m":4.2341}', '{"id":1,"m":5.444}']
>>> ev.loc[0, "seq"], str(ev.loc[0, "event_time"])
('master.000006:00000000000000801170:~', '2016-10-21 12:33:54+00:00')
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import msgspec
import pandas as pd

from .. import values
from ..frame import Event, FastRow
from ..io import Message
from ..row_images import key_of
from .base import BadMessage, Dialect, Match, Record, expect_object, require, rows_of
from .registry import register

#: Row ``type`` values and their canonical ops.
ROW_OPS = {"insert": "insert", "update": "update", "delete": "delete", "bootstrap-insert": "read"}
#: Bootstrap markers: no row, kept visible as ``other``.
MARKERS = frozenset({"bootstrap-start", "bootstrap-complete"})
#: DDL ``type`` values (written with ``output_ddl``).
DDL_TYPES = frozenset(
    {"database-create", "database-alter", "database-drop", "table-create", "table-alter", "table-drop"}
)
_OP_TYPES = {"insert": "insert", "update": "update", "delete": "delete", "read": "bootstrap-insert"}
#: The last part of a seq for a commit row that has no xoffset: sorts after any digits.
COMMIT_MARK = "~"
_SEQ = re.compile(r"(?P<file>.*):(?P<pos>\d{20}):(?P<x>\d{20}|~|)\Z")
_EVIDENCE_FIELDS = ("database", "table", "ts", "xid", "commit", "position", "old", "primary_key_columns")
_SYNTHETIC_FILE = "mysql-bin.000001"


@register
class Maxwell(Dialect):
    """Maxwell's daemon row, bootstrap and DDL messages."""

    name = "maxwell"
    title = "Maxwell JSON"
    #: seq ends with the row's xoffset (its place in its transaction), or ``~`` on the commit row (its last)
    transaction_place = r":(\d+)$"
    transaction_end = r":~$"
    spec = "public Maxwell documentation (maxwells-daemon.io)"
    quirks = (
        "ts is epoch seconds on row messages but epoch milliseconds on DDL messages; ts_ms (written by some "
        "forks, not by upstream Maxwell) is preferred when present.",
        "old holds only the changed columns' previous values: the before image is data overlaid with old.",
        "xid is the transaction id; commit: true marks the last row of a transaction and is not kept.",
        "seq is position (binlog file:offset) plus xoffset; Maxwell leaves xoffset off the commit row, whose "
        "seq ends in ~ so it sorts after its siblings. Without output_binlog_position there is no seq.",
        "Key columns come only from primary_key_columns (output_primary_key_columns); without it there are none.",
        "bootstrap-insert rows are snapshot reads (op read); bootstrap-start and bootstrap-complete carry no row "
        "and become op other so the bootstrap stays visible.",
        "Values are typed JSON already: binary columns are Base64, sets arrays, and invalid dates such as "
        "0000-00-00 00:00:00 stay text.",
        "push_ts (output_push_timestamp, seconds with microseconds) is the emit time; without it emit_time is empty.",
        "DDL messages carry the statement in sql and table definitions in def/old, which are not kept.",
    )

    # ------------------------------------------------------------ detection

    def detect(self, value: Any) -> Match | None:
        if not isinstance(value, dict) or "meta" in value:  # SharePlex has data + meta
            return None
        kind = value.get("type")
        if not isinstance(kind, str) or not kind.islower():
            return None
        if isinstance(value.get("data"), dict):
            evidence = ["data is an object"]
        elif kind in DDL_TYPES and "sql" in value:
            evidence = ["sql"]
        else:
            return None
        evidence += [f for f in _EVIDENCE_FIELDS if f in value]
        evidence.append("type=" + kind)
        known = kind in ROW_OPS or kind in MARKERS or kind in DDL_TYPES
        if known and "database" in value and "ts" in value:
            return Match(0.95, tuple(evidence))
        if known:
            return Match(0.8, tuple(evidence))
        if "database" in value and "table" in value and "ts" in value:
            return Match(0.5, tuple(evidence))
        return None

    # ------------------------------------------------------------ decoding

    def decode(self, message: Message) -> list[Event]:
        value = expect_object(message.value, "a Maxwell message")
        kind = require(value, "type")
        if not isinstance(kind, str):
            raise BadMessage(f"unknown type {kind!r}")
        op = ROW_OPS.get(kind)
        if op is None:
            if kind in DDL_TYPES:
                return [self.schema_change(value, kind)]
            if kind in MARKERS:
                return [self.marker(value, kind)]
            raise BadMessage(f"unknown type {kind!r}")
        data = expect_object(require(value, "data"), "data")
        before = after = None
        if op == "delete":
            before = data
        elif op == "update":
            before = updated_from(data, value.get("old"))
            after = data
        else:
            after = data
        key_columns = primary_key_columns(value.get("primary_key_columns"))
        xid = value.get("xid")
        return [
            Event(
                op=op,
                op_raw=kind,
                event_time=row_time(value),
                **_table_and_position(value),
                txn_id=None if xid is None else str(xid),
                key_columns=key_columns,
                key=key_of(before if op == "delete" else after, key_columns),
                before=values.image(before),
                after=values.image(after),
            )
        ]

    def schema_change(self, value: dict[str, Any], kind: str) -> Event:
        """A DDL message: the statement in ``ddl``; ``ts`` in milliseconds."""
        ts_ms = value.get("ts_ms")
        return Event(
            op="ddl",
            op_raw=kind,
            event_time=values.ms_to_ns(ts_ms if ts_ms is not None else value.get("ts")),
            **_table_and_position(value),
            ddl=require(value, "sql"),
        )

    def marker(self, value: dict[str, Any], kind: str) -> Event:
        """``bootstrap-start`` / ``bootstrap-complete``: no row, an ``other`` event."""
        return Event(op="other", op_raw=kind, event_time=row_time(value), **_table_and_position(value))

    # ------------------------------------------------------------ batch decoding (the fast path)

    has_line_decoder = True

    def decode_lines(self, lines: list[bytes]) -> list[tuple | None]:
        """The events of many raw messages at once: one tuple of ``EVENT_FIELDS`` per row message, else None.

        msgspec reads each line into :class:`_Row`, which checks the field
        types; ``data`` and ``old`` stay raw JSON. When ``data`` is written
        compactly (as Maxwell writes it) and holds no number a double cannot
        carry, its text is the image as it stands and it is parsed only when
        the row is needed (an update with ``old``, ``primary_key_columns``);
        otherwise it is parsed and written as :meth:`decode` does. DDL
        messages, bootstrap markers, fields of unexpected types, bad JSON
        and times a timestamp cannot hold are handed back to :meth:`decode`
        (None).
        """
        out: list[tuple | None] = []
        append = out.append
        decode, ops, null = _ROW.decode, ROW_OPS, _NULL
        loads, image, image_text = values.loads, values.image, values.image_text
        errors = (msgspec.DecodeError, msgspec.ValidationError, BadMessage, ValueError, OverflowError)
        for line in lines:
            try:
                if not line.isascii():
                    line.decode()  # msgspec skips unread fields unchecked: bad UTF-8 anywhere is bad JSON
                message = decode(line)
                op = ops.get(message.type)
                if op is None:
                    append(None)
                    continue
                update_of = op == "update" and message.old is not null
                key_columns = primary_key_columns(message.primary_key_columns)
                raw = bytes(message.data)
                if update_of or key_columns is not None or raw[:1] != b"{":  # the row itself is needed
                    row = expect_object(loads(raw), "data")
                    before = after = image(row)
                else:
                    before = after = image_text(raw)
                if update_of:
                    before = image(updated_from(row, loads(bytes(message.old))))
                elif op == "delete":
                    after = None
                elif op != "update":
                    before = None
                xid = message.xid
                append(
                    FastRow(
                        op,
                        message.type,
                        message.database,
                        None,
                        message.table,
                        epoch_time(message.ts, message.ts_ms),
                        push_time(message.push_ts),
                        binlog_seq(message.position, message.xoffset, message.commit),
                        None if xid is None else str(xid),
                        key_columns,
                        None if key_columns is None else key_of(row, key_columns),
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
        """Maxwell messages with commit info, binlog position, push_ts and primary key columns.

        A ``seq`` of the form ``file:offset:xoffset`` is written back as
        ``position`` and ``xoffset`` (``~``: a commit row without xoffset).
        When no event has such a ``seq`` (events from another dialect),
        positions are synthesized in event order, with ``xoffset`` counting
        the rows of each transaction and ``commit`` on its last row. A row
        time with a fraction of a second adds ``ts_ms``.

        ``read`` events become ``bootstrap-insert``; ``other`` events other
        than the bootstrap markers, heartbeat, begin, commit and tombstone
        events are skipped. An update without a before image comes back with
        before equal to after. DDL messages carry no ``def``/``old``.
        """
        rows = [(row, kind) for row in rows_of(events) if (kind := maxwell_type(row)) is not None]
        parsed = [_parse_seq(row["seq"]) for row, _ in rows]
        synthesize = all(p is None for p in parsed)
        xoffset = 0
        for number, ((row, kind), seq) in enumerate(zip(rows, parsed)):
            txn = row["txn_id"]
            last_of_txn = txn is not None and (number + 1 == len(rows) or rows[number + 1][0]["txn_id"] != txn)
            file: str | None = None
            pos: int | None = None
            offset_in_txn: int | None = None
            if seq is not None:
                file, pos, x = seq
                commit = x == COMMIT_MARK
                offset_in_txn = int(x) if x.isdigit() else None
            else:
                commit = last_of_txn
                if synthesize:
                    file, pos = _SYNTHETIC_FILE, 4 + 100 * number
                    offset_in_txn = xoffset if txn is not None and not commit else None
            xoffset = 0 if txn is None or last_of_txn else xoffset + 1
            where = None if file is None else f"{file}:{pos}"
            if kind in DDL_TYPES:
                yield Record(encode_ddl(row, kind, where))
            else:
                yield Record(encode_row(row, kind, where, offset_in_txn, commit and txn is not None))


def maxwell_type(row: dict[str, Any]) -> str | None:
    """The Maxwell ``type`` of a canonical event, or None when Maxwell cannot say it."""
    op = row["op"]
    if op in _OP_TYPES:
        return _OP_TYPES[op]
    if op == "ddl":
        return row["op_raw"] if row["op_raw"] in DDL_TYPES else _ddl_type(row["ddl"], row["table"])
    if op == "other" and row["op_raw"] in MARKERS:
        return row["op_raw"]
    return None


def encode_row(row: dict[str, Any], kind: str, where: str | None, xoffset: int | None, commit: bool) -> dict[str, Any]:
    """One row or bootstrap message (fields in Maxwell's order)."""
    event_time = row["event_time"]
    record: dict[str, Any] = {
        "database": row["database"],
        "table": row["table"],
        "type": kind,
        "ts": None if event_time is None else event_time // 1_000_000_000,
    }
    if event_time is not None and event_time % 1_000_000_000:
        record["ts_ms"] = event_time // 1_000_000
    txn = row["txn_id"]
    if txn is not None:
        record["xid"] = int(txn) if txn.isdigit() else txn
    if xoffset is not None:
        record["xoffset"] = xoffset
    if commit:
        record["commit"] = True
    if where is not None:
        record["position"] = where
    if row["emit_time"] is not None:
        record["push_ts"] = row["emit_time"] / 1_000_000_000
    if kind in MARKERS:
        record["data"] = {}
        return record
    before = None if row["before"] is None else values.loads(row["before"])
    after = None if row["after"] is None else values.loads(row["after"])
    data = (before if row["op"] == "delete" else after) or {}
    columns = row["key_columns"]
    if columns:
        record["primary_key"] = values.loads(row["key"]) if row["key"] else [data.get(c) for c in columns]
        record["primary_key_columns"] = list(columns)
    record["data"] = data
    if row["op"] == "update" and before is not None:
        old = {c: v for c, v in before.items() if c not in data or data[c] != v}
        if old:
            record["old"] = old
    return record


def encode_ddl(row: dict[str, Any], kind: str, where: str | None) -> dict[str, Any]:
    """One DDL message (``ts`` in milliseconds, as Maxwell writes it)."""
    record: dict[str, Any] = {"type": kind, "database": row["database"]}
    if row["table"] is not None:
        record["table"] = row["table"]
    record["ts"] = values.ns_to_ms(row["event_time"])
    record["sql"] = row["ddl"]
    if where is not None:
        record["position"] = where
    if row["emit_time"] is not None:
        record["push_ts"] = row["emit_time"] / 1_000_000_000
    return record


# ---------------------------------------------------------------- field helpers


def _table_and_position(value: dict[str, Any]) -> dict[str, Any]:
    """The event fields every Maxwell message gives alike: its table, ``push_ts`` as the emit time and its
    binlog position as ``seq``."""
    return {
        "database": value.get("database"),
        "table": value.get("table"),
        "emit_time": push_time(value.get("push_ts")),
        "seq": position(value),
    }


def row_time(value: dict[str, Any]) -> int | None:
    """A row message's event time: ``ts_ms`` when present, else ``ts`` in seconds."""
    return epoch_time(value.get("ts"), value.get("ts_ms"))


def epoch_time(ts: Any, ts_ms: Any) -> int | None:
    """A row's event time from its ``ts`` (epoch seconds) and ``ts_ms`` (epoch milliseconds, preferred)."""
    if ts_ms is not None:
        return values.ms_to_ns(ts_ms)
    return values.seconds_to_ns(ts)


def push_time(push_ts: Any) -> int | None:
    """``push_ts`` (epoch seconds with microseconds) in nanoseconds, exact to the microsecond."""
    if push_ts is None:
        return None
    return int(round(float(push_ts) * 1_000_000)) * 1_000


def position(value: dict[str, Any]) -> str | None:
    """``file:offset:xoffset`` zero-padded; ``~`` for a commit row without xoffset."""
    return binlog_seq(value.get("position"), value.get("xoffset"), value.get("commit"))


def binlog_seq(where: Any, xoffset: Any, commit: Any) -> str | None:
    """The seq of a ``position`` (``file:offset``), ``xoffset`` and ``commit`` (see :func:`position`)."""
    if not where:
        return None
    file, _, offset = str(where).rpartition(":")
    if xoffset is None and commit is True:
        xoffset = COMMIT_MARK
    if not file:
        return values.sortable_text(offset, xoffset)
    return values.sortable_text(file, offset, xoffset)


def updated_from(data: dict[str, Any], old: Any) -> dict[str, Any]:
    """An update's before image: ``data`` overlaid with ``old`` (the changed columns' previous values)."""
    return {**data, **expect_object(old, "old")} if old is not None else data


def primary_key_columns(pk: Any) -> list[str] | None:
    """The key columns of a ``primary_key_columns`` value (a non-empty list), else None."""
    return list(pk) if isinstance(pk, list) and pk else None


# ---------------------------------------------------------------- the batch decoder's view of a message

_NULL = msgspec.Raw(b"null")


class _Row(msgspec.Struct, gc=False):
    """A Maxwell row message as the batch decoder reads it: the fields :meth:`Maxwell.decode` reads, in
    the types it takes as they are (other types fail validation and the message goes to ``decode``).

    Other fields (``server_id``, ``thread_id``, ``primary_key``...) do not change an event and are
    skipped. ``ts``, ``ts_ms`` and ``xid`` are not floats: a float with many digits would be read
    exactly by ``decode`` but rounded here (``push_ts`` goes through ``float`` in :func:`push_time`
    either way).
    """

    type: str
    data: msgspec.Raw
    old: msgspec.Raw = _NULL
    database: str | None = None
    table: str | None = None
    ts: int | None = None
    ts_ms: int | None = None
    push_ts: int | float | None = None
    xid: int | str | None = None
    xoffset: int | None = None
    commit: bool | None = None
    position: str | None = None
    primary_key_columns: list[str] | None = None


_ROW = msgspec.json.Decoder(_Row)


def _parse_seq(seq: str | None) -> tuple[str, int, str] | None:
    """``(file, offset, xoffset part)`` of a seq this dialect wrote, else None."""
    match = _SEQ.match(seq) if seq else None
    if match is None:
        return None
    return match["file"], int(match["pos"]), match["x"]


_DDL_WORDS = (
    ("create database", "database-create"),
    ("create schema", "database-create"),
    ("alter database", "database-alter"),
    ("alter schema", "database-alter"),
    ("drop database", "database-drop"),
    ("drop schema", "database-drop"),
    ("create table", "table-create"),
    ("drop table", "table-drop"),
)


def _ddl_type(sql: str | None, table: str | None) -> str:
    """Maxwell's DDL type for a statement from another dialect."""
    text = " ".join((sql or "").lower().split())
    for start, kind in _DDL_WORDS:
        if text.startswith(start):
            return kind
    return "table-alter" if table is not None else "database-alter"
