"""PostgreSQL logical decoding through the wal2json output plugin, format-version 1 and 2.

- **format-version 1** writes one JSON object per transaction:
  ``{"xid", "nextlsn", "timestamp", "change": [...]}`` (``xid`` with
  ``include-xids``, ``nextlsn`` with ``include-lsn``, ``timestamp`` with
  ``include-timestamp``). Each change has a ``kind``: ``insert``, ``update``,
  ``delete`` (``schema``, ``table``, ``columnnames`` / ``columntypes`` /
  ``columnvalues``, ``oldkeys`` {``keynames``, ``keytypes``, ``keyvalues``},
  ``pk`` {``pknames``, ``pktypes``} with ``include-pk``) or ``message`` (a
  logical message: ``transactional``, ``prefix``, ``content``). A transaction
  becomes a ``begin`` event, one event per change and a ``commit`` event.
- **format-version 2** writes one JSON object per change, its ``action`` one
  of ``B`` (begin), ``C`` (commit), ``I``, ``U``, ``D``, ``T`` (truncate),
  ``M`` (message); ``columns`` and ``identity`` are lists of
  ``{name, type, value}``, ``pk`` a list of ``{name, type}``.

Values are read by :mod:`cdckit.dialects.postgres` (numbers exact, ``bytea``
as Base64, arrays as lists). The schema names the table's one qualifier: it
fills both ``schema`` and ``database``. ``seq`` sorts in commit order (see
:meth:`Wal2Json.decode`); key columns come from ``pk``, remembered per table.

>>> import cdckit
>>> ev = cdckit.read('{"xid": 7, "nextlsn": "0/16B2F48", "timestamp": "2024-05-01 09:00:00.5+02", "change": ['
...                  '{"kind": "insert", "schema": "public", "table": "t", "columnnames": ["id", "n"], '
...                  '"columntypes": ["integer", "numeric"], "columnvalues": [1, 12345678901234567890.5], '
...                  '"pk": {"pknames": ["id"], "pktypes": ["integer"]}}]}', dialect="wal2json")
>>> ev[["op", "database", "table", "seq", "txn_id", "key", "after"]].values.tolist()[1]
['insert', 'public', 't', '00000000/016B2F48/0000000001', '7', '[1]', '{"id":1,"n":"12345678901234567890.5"}']
>>> ev["op"].tolist(), str(ev.loc[0, "event_time"])
(['begin', 'insert', 'commit'], '2024-05-01 07:00:00.500000+00:00')
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterator
from typing import Any

import orjson
import pandas as pd

from .. import values
from ..capture import column_types_of
from ..errors import InvalidValue
from ..frame import Event
from ..io import Message
from ..row_images import key_of
from . import postgres
from .base import BadMessage, Dialect, Match, Record, expect_object, rows_of, table_name
from .registry import register

#: format-version 1 change kinds and their canonical ops.
KIND_OPS = {"insert": "insert", "update": "update", "delete": "delete", "message": "other"}
#: format-version 2 actions and their canonical ops.
ACTION_OPS = {"B": "begin", "C": "commit", "I": "insert", "U": "update", "D": "delete", "T": "truncate", "M": "other"}
#: The top-level fields of a format-version 1 message.
V1_FIELDS = frozenset({"xid", "nextlsn", "timestamp", "change"})
#: The fields of a format-version 2 message (``origin`` with include-origin, ``nextlsn`` on B and C).
V2_FIELDS = frozenset(
    {
        "action",
        "xid",
        "timestamp",
        "lsn",
        "nextlsn",
        "origin",
        "schema",
        "table",
        "columns",
        "identity",
        "pk",
        "transactional",
        "prefix",
        "content",
    }
)
#: The seq parts that put a transaction's begin before and its commit after its changes.
_FIRST, _LAST = "00000000/00000000", "FFFFFFFF/FFFFFFFF"
#: format-version 1: the begin before and the commit after the changes, numbered from 1.
_V1_FIRST, _V1_LAST = "0000000000", "9999999999"
_ENCODE_ACTIONS = {
    "begin": "B",
    "commit": "C",
    "insert": "I",
    "read": "I",
    "update": "U",
    "delete": "D",
    "truncate": "T",
}
_PG_DIALECTS = frozenset({"wal2json", "pg_test_decoding"})


@register
class Wal2Json(Dialect):
    """wal2json format-version 1 (a message per transaction) and 2 (a message per change)."""

    name = "wal2json"
    title = "PostgreSQL wal2json (format-version 1 and 2)"
    spec = "wal2json README (eulerto/wal2json): options and output formats (docs/specs/wal2json.md)"
    quirks = (
        "PostgreSQL names a table schema.table inside one database the plugin does not name: the schema fills "
        "both schema and database, so tables are named public.t everywhere.",
        "format-version 1 is a message per transaction: it becomes a begin event, one event per change and a "
        "commit event, as format-version 2's B and C messages do; a transaction with no decoded change (DDL, an "
        "update of a table without replica identity) is a begin and a commit.",
        "format-version 1 writes nothing for TRUNCATE (an empty transaction); format-version 2 writes T (op truncate).",
        "seq sorts in commit order: format-version 2 is <commit LSN of the last B>/<the change's own LSN> (B and C "
        "around it); a change without a preceding B (include-transaction off) has its own LSN only; "
        "format-version 1 is <nextlsn>/<the change's number>. Without include-lsn there is no seq.",
        "Key columns come from pk (include-pk); a message without pk uses the last pk seen for the table in "
        "this read (format-version 1 leaves pk out for REPLICA IDENTITY FULL tables), else rows have no key.",
        "The before image is oldkeys (v1) / identity (v2): the key columns by default, the whole old row with "
        "REPLICA IDENTITY FULL (v1 leaves its NULL columns out). Unchanged TOASTed columns are left out of an "
        "update's after image: replay merges updates onto the row.",
        "wal2json writes NaN and Infinity of numeric, real and double precision as null.",
        "An update or delete of a table without primary key or replica identity is not written at all "
        "(wal2json only logs a warning).",
        "wal2json 2.5's format-version 1 writes a non-transactional logical message as "
        '{"change":[,{...}]}, which is not JSON: it is quarantined.',
        "Logical messages (pg_logical_emit_message) are other events with {prefix, content, transactional} "
        "as the after image.",
    )
    partial_updates = True
    whole_files = True

    def __init__(self, tz: str | None = None) -> None:
        super().__init__(tz)
        self._pk: dict[str, list[str] | None] = {}  # table name -> key columns of the last pk seen
        self._begin: tuple[str, Any] | None = None  # format-version 2: (commit LSN seq, xid) of the open B

    # ------------------------------------------------------------ detection

    def detect(self, value: Any) -> Match | None:
        if not isinstance(value, dict):
            return None
        change = value.get("change")
        if isinstance(change, list) and value.keys() <= V1_FIELDS:
            if all(isinstance(c, dict) and c.get("kind") in KIND_OPS for c in change):
                found = tuple(f for f in ("xid", "nextlsn", "timestamp") if f in value)
                return Match(0.95 if found or change else 0.6, ("change is a list of kinds",) + found)
            return None
        action = value.get("action")
        if action in ("B", "C") and len(value) == 1:
            # format-version 2 with no include-xids, -lsn or -timestamp writes its begin and commit bare
            return Match(0.6, (f"action {action} alone",))
        if action in ACTION_OPS and value.keys() <= V2_FIELDS and len(value) > 1:
            evidence = tuple(f for f in ("lsn", "xid", "schema", "table", "columns", "identity") if f in value)
            if action in "IUD" and not isinstance(value.get("columns", value.get("identity")), list):
                return None
            return Match(0.9, (f"action {action}",) + evidence)
        return None

    # ------------------------------------------------------------ decoding

    def decode(self, message: Message) -> list[Event]:
        """The events of one message.

        format-version 1: ``begin``, the changes, ``commit`` (no begin and
        commit around non-transactional logical messages). format-version 2:
        the one event of the change; ``B`` opens a transaction whose commit
        LSN the following changes' ``seq`` starts with, ``C`` closes it.
        """
        value = expect_object(message.value, "a wal2json message")
        try:
            if "change" in value:
                return self.transaction(value)
            if "action" in value:
                return [self.change(value)]
        except (ValueError, TypeError) as err:
            if isinstance(err, InvalidValue):
                raise
            raise BadMessage(str(err)) from None
        raise BadMessage("neither change (format-version 1) nor action (format-version 2)")

    # ---------------------------------------------------------------- format-version 1

    def transaction(self, value: dict[str, Any]) -> list[Event]:
        changes = value["change"]
        if not isinstance(changes, list):
            raise BadMessage("change is not a list")
        xid = _txn(value.get("xid"))
        event_time = _time(value.get("timestamp"), self.tz)
        lsn = _lsn(value.get("nextlsn"), "nextlsn")
        seq = (lambda part: None) if lsn is None else (lambda part: f"{lsn}/{part}")
        events = []
        for number, change in enumerate(changes, 1):
            change = expect_object(change, "a change")
            kind = change.get("kind")
            op = KIND_OPS.get(kind) if isinstance(kind, str) else None
            if op is None:
                raise BadMessage(f"unknown change kind {kind!r}")
            common: dict[str, Any] = dict(op_raw=kind, event_time=event_time, seq=seq(f"{number:010d}"), txn_id=xid)
            if op == "other":
                events.append(Event(op=op, after=_logical_message(change), **common))
                continue
            schema, table = _name(change, "schema"), _name(change, "table")
            after = before = None
            if op != "delete":
                names, types = _list(change, "columnnames"), _list(change, "columntypes")
                after = _image(names, types, _list(change, "columnvalues"))
                self.declare(schema, schema, table, postgres.declared_columns(names, types))
            if "oldkeys" in change:
                old = expect_object(change["oldkeys"], "oldkeys")
                before = _image(_list(old, "keynames"), _list(old, "keytypes"), _list(old, "keyvalues"))
            pk = change.get("pk")
            if pk is not None:
                pk = _list(expect_object(pk, "pk"), "pknames")
            events.append(self.row_event(op, schema, table, pk, before, after, common))
        if changes and all(e.op == "other" and not _transactional(e) for e in events):
            return events  # non-transactional logical messages: no transaction around them
        ends: dict[str, Any] = dict(event_time=event_time, txn_id=xid)
        return [
            Event(op="begin", op_raw="begin", seq=seq(_V1_FIRST), **ends),
            *events,
            Event(op="commit", op_raw="commit", seq=seq(_V1_LAST), **ends),
        ]

    # ---------------------------------------------------------------- format-version 2

    def change(self, value: dict[str, Any]) -> Event:
        action = value["action"]
        op = ACTION_OPS.get(action) if isinstance(action, str) else None
        if op is None:
            raise BadMessage(f"unknown action {action!r}")
        xid = value.get("xid")
        lsn = _lsn(value.get("lsn"), "lsn")
        common = dict(op_raw=action, event_time=_time(value.get("timestamp"), self.tz), txn_id=_txn(xid))
        if op == "begin":
            self._begin = None if lsn is None else (lsn, xid)
            return Event(op=op, seq=None if lsn is None else f"{lsn}/{_FIRST}", **common)
        if op == "commit":
            self._begin = None
            return Event(op=op, seq=None if lsn is None else f"{lsn}/{_LAST}", **common)
        begin = self._begin
        if (
            begin is not None
            and (xid is None or begin[1] is None or begin[1] == xid)
            and value.get("transactional", True) is not False
        ):
            common["seq"] = None if lsn is None else f"{begin[0]}/{lsn}"
        else:
            common["seq"] = lsn
        if op == "other":
            return Event(op=op, after=_logical_message(value), **common)
        schema, table = _name(value, "schema"), _name(value, "table")
        if op == "truncate":
            return Event(op=op, database=schema, schema=schema, table=table, **common)
        after = before = None
        if op != "delete":
            names, types, row = _columns(value, "columns")
            after = row
            self.declare(schema, schema, table, postgres.declared_columns(names, types))
        if "identity" in value:
            before = _columns(value, "identity")[2]
        pk = value.get("pk")
        if pk is not None:
            if not isinstance(pk, list) or not all(isinstance(k, dict) for k in pk):
                raise BadMessage("pk is not a list of {name, type} objects")
            pk = [_name(k, "name", "pk[].") for k in pk]
        return self.row_event(op, schema, table, pk, before, after, common)

    # ---------------------------------------------------------------- both

    def row_event(
        self,
        op: str,
        schema: str | None,
        table: str | None,
        pk: list[str] | None,
        before: dict[str, Any] | None,
        after: dict[str, Any] | None,
        common: dict[str, Any],
    ) -> Event:
        """An insert, update or delete; ``pk`` the key columns the message names (None: it names none, the
        table's last ones are used)."""
        name = table_name(schema, schema, table) or ""
        if pk is not None:
            self._pk[name] = key_columns = list(pk) or None
        else:
            key_columns = self._pk.get(name)
        image = before if op == "delete" else after
        return Event(
            op=op,
            database=schema,
            schema=schema,
            table=table,
            key_columns=key_columns,
            key=key_of(image, key_columns),
            before=values.image(before),
            after=values.image(after),
            **common,
        )

    # ------------------------------------------------------------ encoding

    def encode(self, events: pd.DataFrame) -> Iterator[Record]:
        """format-version 2 messages, one per event, with every option's fields where the event has them.

        ``begin`` / ``commit`` events are ``B`` / ``C``; insert (and snapshot
        ``read``) ``I``, update ``U``, delete ``D``, truncate ``T``; an
        ``other`` event whose after image is a logical message
        (``prefix``, ``content``) is ``M``. Other events are skipped.
        ``lsn`` is written when ``seq`` is one this dialect made (the
        change's own LSN; the commit LSN for B and C). Column types are the
        declared PostgreSQL types of events read from PostgreSQL, else the
        type of the declared kind (``cdckit.column_types_of(events)``), else
        one guessed from the value (:func:`postgres.type_of_value`). Key
        columns are written as ``pk``; an update's and a delete's before image
        as ``identity``.
        """
        declared = _declared_types(events)
        for row in rows_of(events):
            message = encode_event(row, declared)
            if message is not None:
                yield Record(message)


# ---------------------------------------------------------------- decoding helpers


def _txn(xid: Any) -> str | None:
    if xid is None:
        return None
    if xid.__class__ is bool or not isinstance(xid, (int, str)):
        raise BadMessage("xid is neither a number nor text")
    return str(xid)


def _time(text: Any, tz: str | None) -> int | None:
    if text is not None and not isinstance(text, str):
        raise BadMessage("timestamp is not text")
    return postgres.timestamp_ns(text, tz)


def _lsn(text: Any, field: str) -> str | None:
    """An LSN field as :func:`postgres.lsn_seq` text (None when absent)."""
    if text is None:
        return None
    try:
        return postgres.lsn_seq(text)
    except ValueError:
        raise BadMessage(f"{field} is not an LSN: {str(text)[:40]!r}") from None


def _name(obj: dict[str, Any], field: str, where: str = "") -> str | None:
    name = obj.get(field)
    if name is not None and not isinstance(name, str):
        raise BadMessage(f"{where}{field} is not text")
    return name


def _list(obj: dict[str, Any], field: str) -> list[Any]:
    found = obj.get(field)
    if not isinstance(found, list):
        raise BadMessage(f"{field} is missing or not a list")
    return found


def _image(names: list[Any], types: list[Any], row: list[Any]) -> dict[str, Any]:
    """A format-version 1 image from its parallel lists."""
    if not len(names) == len(types) == len(row):
        raise BadMessage(f"{len(names)} names, {len(types)} types and {len(row)} values")
    return {
        _text(n, "a column name"): postgres.value_from_json(v, _text(t, "a column type"))
        for n, t, v in zip(names, types, row)
    }


def _columns(value: dict[str, Any], field: str) -> tuple[list[str], list[str], dict[str, Any]]:
    """A format-version 2 ``columns`` / ``identity`` list: names, types and the image as a dict."""
    names, types, row = [], [], {}
    for column in _list(value, field):
        if not isinstance(column, dict) or "value" not in column:
            raise BadMessage(f"{field} is not a list of {{name, type, value}} objects")
        name, kind = _text(column.get("name"), f"{field}[].name"), _text(column.get("type"), f"{field}[].type")
        names.append(name)
        types.append(kind)
        row[name] = postgres.value_from_json(column["value"], kind)
    return names, types, row


def _text(value: Any, what: str) -> str:
    if not isinstance(value, str):
        raise BadMessage(f"{what} is not text")
    return value


def _logical_message(value: dict[str, Any]) -> str:
    """A logical message's after image: ``prefix``, ``content`` and ``transactional`` as given."""
    return values.image({k: value[k] for k in ("prefix", "content", "transactional") if k in value})


def _transactional(event: Event) -> bool:
    return orjson.loads(event.after or "{}").get("transactional") is not False  # a logical message has an after


# ---------------------------------------------------------------- encoding helpers


def _declared_types(events: pd.DataFrame) -> dict[str, dict[str, str]]:
    """``{table: {column: PostgreSQL type}}`` from ``cdckit.column_types_of(events)``: the raw type when the events
    came from PostgreSQL, else the type of the declared kind."""
    frame = column_types_of(events)
    if not isinstance(frame, pd.DataFrame) or frame.empty:
        return {}
    from_pg = "dialect" in events and not events.empty and set(events["dialect"]) <= _PG_DIALECTS
    out: dict[str, dict[str, str]] = {}
    for table, column, raw, kind in frame[["table", "column", "type", "kind"]].itertuples(index=False):
        if isinstance(table, str) and isinstance(column, str) and isinstance(kind, str):
            out.setdefault(table, {})[column] = raw if from_pg and isinstance(raw, str) else _type_of_kind(kind)
    return out


def _type_of_kind(kind: str) -> str:
    """The PostgreSQL type of a kind (``decimal(10,2)`` -> ``numeric(10,2)``)."""
    name, _, args = kind.partition("(")
    pg = postgres.TYPE_OF_KIND.get(name, "text")
    return f"numeric({args}" if name == "decimal" and args.strip(",)") else pg


def encode_event(row: dict[str, Any], declared: dict[str, dict[str, str]]) -> dict[str, Any] | None:
    """One format-version 2 message for a canonical event, or None when wal2json cannot say it."""
    op = row["op"]
    action = _ENCODE_ACTIONS.get(op)
    after = None if row["after"] is None else values.loads(row["after"])
    if op == "other" and isinstance(after, dict) and "prefix" in after and "content" in after:
        action = "M"
    if action is None:
        return None
    message: dict[str, Any] = {"action": action}
    txn = row["txn_id"]
    if txn is not None:
        message["xid"] = int(txn) if txn.isascii() and txn.isdigit() else txn
    if row["event_time"] is not None:
        message["timestamp"] = pg_time(row["event_time"])
    lsn = _seq_lsn(row["seq"], action in "BC")
    if lsn is not None:
        message["lsn"] = lsn
    if action == "M" and isinstance(after, dict):  # (M only for an object after image)
        message.update({k: after[k] for k in ("transactional", "prefix", "content") if k in after})
        return message
    if action in "BC":
        return message
    schema = row["database"] or row["schema"]
    if schema is not None:
        message["schema"] = schema
    message["table"] = row["table"]
    if action == "T":
        return message
    types = declared.get(table_name(schema, None, row["table"]) or "", {})
    before = None if row["before"] is None else values.loads(row["before"])
    if action != "D":
        message["columns"] = _columns_out(after or {}, types)
    if before is not None and action in "UD":
        message["identity"] = _columns_out(before, types)
    if row["key_columns"] is not None:
        image = (before if action == "D" else after) or {}
        message["pk"] = [
            {"name": k, "type": types.get(k) or postgres.type_of_value(image.get(k)) or "text"}
            for k in row["key_columns"]
        ]
    return message


def _columns_out(image: dict[str, Any], types: dict[str, str]) -> list[dict[str, Any]]:
    return [
        {
            "name": name,
            "type": (kind := types.get(name) or postgres.type_of_value(value) or "text"),
            "value": json_value(value, kind),
        }
        for name, value in image.items()
    ]


def json_value(value: Any, type_name: str) -> Any:
    """An image value as wal2json writes it for a column of ``type_name``: numbers as JSON numbers (exact
    number text as a raw number), booleans as JSON booleans, ``bytea`` as hex without ``\\x``, anything else
    as PostgreSQL's text (:func:`postgres.value_to_text`).

    >>> json_value("AP8=", "bytea"), json_value([1, None], "integer[]"), json_value(True, "boolean")
    ('00ff', '{1,NULL}', True)
    >>> values.dumps({"n": json_value("12345678901234567890.1234567890", "numeric(38,10)")})
    '{"n":12345678901234567890.1234567890}'
    """
    if value is None:
        return None
    kind = postgres.kind_of(type_name)
    if (
        kind in ("int", "float", "decimal")
        and value.__class__ is str
        and values.exact_number(value) is value
        and postgres.value_from_json(value, type_name) is value
        and _is_json_number(value)
    ):
        return orjson.Fragment(value)
    if value.__class__ in (bool, int, float) and kind in ("int", "float", "decimal", "bool"):
        return value
    if kind == "binary" and postgres.element_type(type_name) is None and isinstance(value, str):
        try:
            return base64.b64decode(value, validate=True).hex()
        except (binascii.Error, ValueError):
            return value
    return postgres.value_to_text(value, type_name)


def _is_json_number(text: str) -> bool:
    try:
        return isinstance(orjson.loads(text) if text[:1] in "-0123456789" else None, (int, float))
    except orjson.JSONDecodeError:
        return False


def _seq_lsn(seq: str | None, commit: bool) -> str | None:
    """The ``lsn`` of a seq this dialect made: the change's own LSN, or the commit LSN (``commit``) for B and C."""
    parts = (seq or "").split("/")
    if len(parts) not in (2, 4) or not all(len(p) == 8 and _is_hex(p) for p in parts):
        return None
    high, low = parts[:2] if commit or len(parts) == 2 else parts[2:]
    return f"{int(high, 16):X}/{int(low, 16):X}"


def _is_hex(text: str) -> bool:
    return all(ch in "0123456789ABCDEF" for ch in text)


def pg_time(ns: int) -> str:
    """Epoch nanoseconds as PostgreSQL prints a ``timestamp with time zone`` in UTC (microseconds, ``+00``).

    >>> pg_time(1_795_736_976_441_967_000), pg_time(0)
    ('2026-11-26 23:49:36.441967+00', '1970-01-01 00:00:00+00')
    """
    text = values.ns_to_iso(ns, sep=" ")
    return f"{text}+00"
