"""Oracle GoldenGate for Big Data JSON (the Kafka handler's JSON formatter): one operation per message.

An operation-modeled message (``gg.handler.name.format=json``, the default)::

    {"table": "QASOURCE.TCUSTORD", "op_type": "U", "op_ts": "2015-11-05 18:45:39.000000",
     "current_ts": "2016-10-05T10:15:51.310002", "pos": "00000000000000004300",
     "primary_keys": ["ORDER_ID"], "tokens": {"R": "AADPkvAAEAAEqL2AAA"},
     "before": {...}, "after": {...}}

- ``table`` is the fully qualified name, ``SCHEMA.TABLE`` or
  ``CATALOG.SCHEMA.TABLE``. It is split at its dots from the left: one part
  is ``table``; two parts are ``database`` and ``table`` (the first part, an
  Oracle schema, i.e. the owning user, is the only namespace the message
  names, and it goes where the other dialects put theirs, as SharePlex's
  ``owner.table`` does); three parts are ``database`` (the catalog: a
  pluggable database, a SQL Server database), ``schema`` and ``table``; a
  fourth part and more stay in ``table``. The encoder joins the non-empty
  ones with dots again, so ``SHOP.CUSTOMERS`` round-trips, and events of
  any dialect keep their database (and schema) through GoldenGate.
- ``op_type`` is ``I``, ``U``, ``D`` or ``T`` (truncate). The formatter's
  ``insertOpKey`` / ``updateOpKey`` / ``deleteOpKey`` / ``truncateOpKey``
  properties can rename them; the long forms ``INSERT``, ``UPDATE``,
  ``DELETE``, ``TRUNCATE`` (any case) are read too, and ``PK`` (a primary-key
  update, as some trails name it) is an update. ``op_raw`` keeps the text.
- An insert carries ``after``, a delete ``before``, an update both (the
  before image only when the source logs it), a truncate neither: it becomes
  the canonical ``truncate`` with the table and no images.
- Images are kept as they arrive, and partial where the source logged only
  some columns (a column absent from the JSON object is absent from the
  image). The 12.2 formatter can add ``<column>_isMissing`` flags beside each
  column: a column flagged ``true`` is left out of the image and the flags
  are dropped.
- A primary-key update is an update whose before and after images carry
  different keys; ``key`` is the key after the change (the after image
  overlaid on the before image, so a partial after image keeps the key).
- ``op_ts`` (operation commit time in the trail) is ``event_time`` and
  ``current_ts`` (when the formatter wrote the message) is ``emit_time``;
  both are zone-less text (``2015-11-05 18:45:36.000000``,
  ``2016-10-05T10:15:51.267000``), read in the reader's ``tz`` (UTC when None).
- ``pos`` (trail sequence number and RBA, 20 digits) is ``seq``, zero-padded
  if shorter so it stays sortable.
- ``primary_keys`` (``includePrimaryKeys``) gives ``key_columns``; without it
  there are none. ``tokens`` (``includeTokens``) hold user-defined trail
  tokens whose names no standard fixes: they are not kept, never mixed into
  the images, and ``txn_id`` stays empty.
- Two documented variants are read as well: the row-modeled formatter
  (``json_row``), whose columns stand at the top level beside the metadata,
  and the flattened operation formatter (``flatten=true``, the default
  delimiter ``.``), whose columns are ``before.COL`` / ``after.COL``.
  Messages wrapped in a schema envelope are not read.

>>> import cdckit
>>> ev = cdckit.read('{"table": "QASOURCE.TCUSTORD", "op_type": "U", "op_ts": "2015-11-05 18:45:39.000000", '
...                  '"current_ts": "2016-10-05T10:15:51.310002", "pos": "00000000000000004300", '
...                  '"primary_keys": ["ORDER_ID"], "before": {"ORDER_ID": 765, "PRICE": 15000.0}, '
...                  '"after": {"ORDER_ID": 765, "PRICE": 14000.0}}')
>>> ev.loc[0, ["dialect", "op", "database", "table", "seq", "key", "after"]].tolist()
['ogg', 'update', 'QASOURCE', 'TCUSTORD', '00000000000000004300', '[765]', '{"ORDER_ID":765,"PRICE":14000.0}']
>>> str(ev.loc[0, "event_time"]), str(ev.loc[0, "emit_time"])
('2015-11-05 18:45:39+00:00', '2016-10-05 10:15:51.310002+00:00')
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timezone
from typing import Any
from zoneinfo import ZoneInfo

import msgspec
import pandas as pd

from .. import values
from ..errors import InvalidValue
from ..frame import Event, FastRow
from ..io import Message
from ..row_images import key_of
from .base import BadMessage, Dialect, Match, Record, expect_object, require, rows_of
from .registry import register

#: ``op_type`` values (upper-cased) and their canonical ops.
OPS = {
    "I": "insert",
    "U": "update",
    "D": "delete",
    "T": "truncate",
    "PK": "update",
    "INSERT": "insert",
    "UPDATE": "update",
    "DELETE": "delete",
    "TRUNCATE": "truncate",
}
_OP_TYPES = {"insert": "I", "read": "I", "update": "U", "delete": "D", "truncate": "T"}
#: The formatter's metadata fields (everything else at the top level of a row-modeled message is a column).
META_FIELDS = frozenset({"table", "op_type", "op_ts", "current_ts", "pos", "primary_keys", "tokens", "before", "after"})
_MISSING = "_isMissing"
_FLAT = ("before.", "after.")


class _Operation(msgspec.Struct, forbid_unknown_fields=True):
    """An operation-modeled message as the batch decoder reads it (other shapes fail and go to ``decode``)."""

    table: str
    op_type: str
    op_ts: str | None = None
    current_ts: str | None = None
    pos: str | int | None = None
    primary_keys: list[str] | None = None
    tokens: dict | None = None
    before: msgspec.Raw = msgspec.Raw(b"null")
    after: msgspec.Raw = msgspec.Raw(b"null")


_OPERATION = msgspec.json.Decoder(_Operation)


@register
class Ogg(Dialect):
    """Oracle GoldenGate for Big Data JSON formatter messages."""

    name = "ogg"
    title = "Oracle GoldenGate JSON"
    spec = "docs/specs/ogg.md (Oracle GoldenGate for Big Data, Using the Pluggable Formatters: JSON Formatter)"
    partial_updates = True
    quirks = (
        "table is SCHEMA.TABLE or CATALOG.SCHEMA.TABLE: a two-part name's SCHEMA is the database column (the "
        "only namespace named); a three-part name gives database (the catalog), schema and table.",
        "op_type is I, U, D or T; T is a truncate (op truncate, no images). Long forms (INSERT...) and PK "
        "(a primary-key update) are read too.",
        "Update images may be partial: the source logs only the changed columns (and the key), and a column "
        "not logged is absent from the image, not null. Updates without supplemental logging have no before.",
        "A primary-key update is an update whose before and after carry different keys; key is the new key.",
        "op_ts (commit time in the trail) and current_ts (when the formatter wrote the message) are zone-less "
        "text, read as UTC unless the reader is given tz=.",
        "seq is pos, the trail file sequence number and RBA (20 digits): it orders operations of one trail.",
        "key_columns come only from primary_keys (includePrimaryKeys=true); without it there are none.",
        "tokens are user-defined trail tokens: not kept, never mixed into the images; there is no transaction "
        "id, so txn_id is empty.",
        "Values are JSON as the formatter typed them: numbers are numbers, dates and times are text in the "
        "trail's own form (1994-09-30:15:33:00).",
        "The row-modeled formatter (columns at the top level) and the flattened one (before.COL, after.COL) "
        "are read as well; <column>_isMissing flags drop the columns they mark missing.",
    )

    # ------------------------------------------------------------ detection

    def detect(self, value: Any) -> Match | None:
        if not isinstance(value, dict):
            return None
        table, op_type = value.get("table"), value.get("op_type")
        if not isinstance(table, str) or not isinstance(op_type, str):
            return None
        evidence = ["table", "op_type=" + op_type] + [
            f for f in ("op_ts", "current_ts", "pos", "primary_keys", "before", "after") if f in value
        ]
        known = op_type.upper() in OPS
        if known and ("op_ts" in value or "pos" in value):
            return Match(0.95, tuple(evidence))
        if known:
            return Match(0.7, tuple(evidence))
        if "op_ts" in value and "pos" in value:
            return Match(0.5, tuple(evidence))
        return None

    # ------------------------------------------------------------ decoding

    def decode(self, message: Message) -> list[Event]:
        return [self.event(expect_object(message.value, "a GoldenGate message"))]

    def event(self, value: dict[str, Any]) -> Event:
        """The canonical event of one parsed message."""
        op_raw = require(value, "op_type")
        op = OPS.get(op_raw.upper()) if isinstance(op_raw, str) else None
        if op is None:
            raise BadMessage(f"unknown op_type {op_raw!r}")
        table = require(value, "table")
        if not isinstance(table, str) or not table:
            raise BadMessage(f"table is not a table name: {table!r}")
        database, schema, name = split_table(table)
        key_columns = primary_keys(value.get("primary_keys"))
        before, after = images(value, op)
        if op == "insert" and after is None:
            raise BadMessage("insert without an after image")
        if op == "update" and after is None:
            raise BadMessage("update without an after image")
        if op == "delete" and before is None:
            raise BadMessage("delete without a before image")
        if op == "delete":
            key = key_of(before, key_columns)
        elif op == "truncate":
            key = None
        else:
            key = key_of(after if before is None or after is None else {**before, **after}, key_columns)
        return Event(
            op=op,
            op_raw=op_raw,
            database=database,
            schema=schema,
            table=name,
            event_time=self.time(value.get("op_ts"), "op_ts"),
            emit_time=self.time(value.get("current_ts"), "current_ts"),
            seq=trail_position(value.get("pos")),
            key_columns=key_columns,
            key=key,
            before=values.image(before),
            after=values.image(after),
        )

    def time(self, text: Any, field: str) -> int | None:
        """A zone-less text time of ``field``, read in ``self.tz`` (UTC when None)."""
        if text is None or text == "":
            return None
        if not isinstance(text, str):
            raise BadMessage(f"{field} is not a text time: {text!r}")
        try:
            return values.text_time_to_ns(text, self.tz)
        except InvalidValue as err:
            raise BadMessage(f"{field}: {err}") from None

    # ------------------------------------------------------------ batch decoding

    has_line_decoder = True

    def decode_lines(self, lines: list[bytes]) -> list[tuple | None]:
        """The events of many raw messages at once: one tuple of ``EVENT_FIELDS`` each, or None.

        msgspec reads the operation-modeled message (:class:`_Operation`: the
        metadata fields in the types :meth:`event` takes, the images raw);
        an image is parsed once and written as :func:`cdckit.values.image`
        writes it. Row-modeled and flattened messages, ``_isMissing`` flags,
        bad JSON and anything :meth:`event` refuses are handed back to
        :meth:`decode` (None), so every row equals :meth:`decode`'s.
        """
        out: list[tuple | None] = []
        append = out.append
        decode, parsed_image, tables = _OPERATION.decode, values.parsed_image, self.__dict__.setdefault("_tables", {})
        errors = (msgspec.DecodeError, msgspec.ValidationError, BadMessage, ValueError, TypeError, InvalidValue)
        for line in lines:
            try:
                if not line.isascii():
                    line.decode()  # msgspec skips unread fields unchecked: bad UTF-8 anywhere is bad JSON
                message = decode(line)
                op_raw = message.op_type
                op = OPS.get(op_raw.upper())
                names: tuple[str | None, str | None, str] | None = tables.get(message.table)
                if op is None or names is None and not message.table:
                    append(None)
                    continue
                if names is None:
                    names = tables[message.table] = split_table(message.table)
                before = after = before_text = after_text = None
                if op != "truncate":
                    raw_before, raw_after = bytes(message.before), bytes(message.after)
                    if b"_isMissing" in raw_before or b"_isMissing" in raw_after:
                        append(None)
                        continue
                    if raw_before != b"null":
                        before, before_text = parsed_image(raw_before)
                    if raw_after != b"null":
                        after, after_text = parsed_image(raw_after)
                    if (
                        before is not None
                        and before.__class__ is not dict
                        or after is not None
                        and after.__class__ is not dict
                    ):
                        append(None)
                        continue
                    if (after is None and op in ("insert", "update")) or (before is None and op == "delete"):
                        append(None)
                        continue
                key_columns = message.primary_keys or None
                if key_columns is None or op == "truncate":
                    key = None
                elif op == "delete":
                    key = key_of(before, key_columns)
                else:
                    key = key_of(after if before is None or after is None else {**before, **after}, key_columns)
                append(
                    FastRow(
                        op,
                        op_raw,
                        *names,
                        self.time(message.op_ts, "op_ts"),
                        self.time(message.current_ts, "current_ts"),
                        values.sortable(message.pos),
                        None,
                        None if key_columns is None else list(key_columns),
                        key,
                        before_text,
                        after_text,
                        None,
                    )
                )
            except errors:
                append(None)
        return out

    # ------------------------------------------------------------ encoding

    def encode(self, events: pd.DataFrame) -> Iterator[Record]:
        """Operation-modeled JSON formatter messages with primary keys (``includePrimaryKeys=true``).

        ``table`` joins database, schema and table with dots; ``op_ts`` and
        ``current_ts`` are written in the formatter's forms, in ``self.tz``
        (UTC when None), to the microsecond; ``pos`` is ``seq`` as it stands,
        or, when no event has a ``seq`` (events from another dialect), a
        20-digit position synthesized in event order. ``read`` events are
        written as inserts (``I``, as an initial load is); events of other
        ops, and events without a table, have no GoldenGate form and are
        skipped. The transaction id has no place in the formatter's message
        and is not written.
        """
        rows = [row for row in rows_of(events) if row["op"] in _OP_TYPES and row["table"] is not None]
        synthesize = all(row["seq"] is None for row in rows)
        for number, row in enumerate(rows):
            op = row["op"]
            record: dict[str, Any] = {
                "table": ".".join(p for p in (row["database"], row["schema"], row["table"]) if p is not None),
                "op_type": _OP_TYPES[op],
            }
            if row["event_time"] is not None:
                record["op_ts"] = self.time_text(row["event_time"], " ")
            if row["emit_time"] is not None:
                record["current_ts"] = self.time_text(row["emit_time"], "T")
            pos = values.sortable(number * 100 + 4) if synthesize else row["seq"]
            if pos is not None:
                record["pos"] = pos
            if row["key_columns"]:
                record["primary_keys"] = list(row["key_columns"])
            if op != "truncate":
                for side in ("before", "after"):
                    if row[side] is not None and not (op in ("insert", "read") and side == "before"):
                        record[side] = values.loads(row[side])
            if (
                op == "delete"
                and "before" not in record
                or op in ("insert", "read", "update")
                and "after" not in record
            ):
                continue
            yield Record(record)

    def time_text(self, ns: int, sep: str) -> str:
        """Epoch nanoseconds as the formatter writes a time: zone-less, to the microsecond, in ``self.tz``."""
        zone = timezone.utc if self.tz is None else ZoneInfo(self.tz)
        seconds, rest = divmod(ns, 1_000_000_000)
        moment = datetime.fromtimestamp(seconds, zone).replace(microsecond=rest // 1_000)
        return moment.strftime(f"%Y-%m-%d{sep}%H:%M:%S.%f")


# ---------------------------------------------------------------- field helpers


def split_table(table: str) -> tuple[str | None, str | None, str]:
    """``(database, schema, table)`` of a fully qualified name (see the module docstring).

    >>> split_table("QASOURCE.TCUSTORD"), split_table("PDB1.HR.EMP"), split_table("T")
    (('QASOURCE', None, 'TCUSTORD'), ('PDB1', 'HR', 'EMP'), (None, None, 'T'))
    """
    parts = table.split(".", 2)
    if len(parts) == 1:
        return None, None, table
    if len(parts) == 2:
        return parts[0], None, parts[1]
    return parts[0], parts[1], parts[2]


def primary_keys(value: Any) -> list[str] | None:
    """The key columns of a ``primary_keys`` value (a non-empty list of names), else None."""
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(c, str) for c in value):
        raise BadMessage(f"primary_keys is not a list of column names: {value!r}"[:120])
    return value or None


def trail_position(pos: Any) -> str | None:
    """``pos`` as a sortable seq (digits zero-padded to 20).

    >>> trail_position("00000000000000002928"), trail_position(4300), trail_position(None)
    ('00000000000000002928', '00000000000000004300', None)
    """
    if pos is not None and not isinstance(pos, (str, int)) or isinstance(pos, bool):
        raise BadMessage(f"pos is not a trail position: {pos!r}")
    return values.sortable(pos)


def images(value: dict[str, Any], op: str) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """The before and after images of a message of ``op``, in whichever of the formatter's shapes it has."""
    if op == "truncate":
        return None, None
    if "before" in value or "after" in value:
        before, after = value.get("before"), value.get("after")
        before = None if before is None else present(expect_object(before, "before"))
        after = None if after is None else present(expect_object(after, "after"))
        return before, after
    flat: dict[str, dict[str, Any]] = {}
    columns: dict[str, Any] = {}
    for name, column in value.items():
        if name in META_FIELDS:
            continue
        side = next((s for s in _FLAT if name.startswith(s)), None)
        if side is not None:
            flat.setdefault(side[:-1], {})[name[len(side) :]] = column
        else:
            columns[name] = column
    if flat and not columns:  # flattened operation-modeled
        before, after = flat.get("before"), flat.get("after")
        return (None if before is None else present(before)), (None if after is None else present(after))
    if not columns:
        return None, None
    row = present(columns)  # row-modeled: the row after the change, before a delete
    return (row, None) if op == "delete" else (None, row)


def present(image: dict[str, Any]) -> dict[str, Any]:
    """``image`` without the columns its ``<column>_isMissing`` flags mark missing, and without the flags.

    >>> present({"A": 1, "A_isMissing": False, "B": None, "B_isMissing": True})
    {'A': 1}
    """
    if not any(name.endswith(_MISSING) for name in image):
        return image
    flags = {
        name[: -len(_MISSING)]: flag
        for name, flag in image.items()
        if name.endswith(_MISSING) and isinstance(flag, bool) and name[: -len(_MISSING)] in image
    }
    return {
        name: column
        for name, column in image.items()
        if flags.get(name) is not True and not (name.endswith(_MISSING) and name[: -len(_MISSING)] in flags)
    }
