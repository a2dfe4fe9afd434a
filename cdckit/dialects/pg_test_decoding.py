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

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any
from collections.abc import Iterator

import pandas as pd

from .. import values
from ..capture import column_types_of
from ..io import Message
from ..frame import Event
from .base import BadMessage, Columns, Decoded, Dialect, Match, Record, SkipMessage, rows_of, table_name
from .postgres import TYPE_OF_KIND, IdentityEvidence, declared_columns, kind_of, lsn_seq, type_of_value, \
    value_from_text, value_to_text
from .registry import register

#: The change operations of a ``table ...:`` line and their canonical ops.
OPS = {"INSERT": "insert", "UPDATE": "update", "DELETE": "delete", "TRUNCATE": "truncate"}
#: What a column of a tuple holds instead of a value when a large (TOASTed) value was not changed.
UNCHANGED_TOAST = "unchanged-toast-datum"
#: A tuple the plugin could not print (a table without a replica identity, for a DELETE).
NO_TUPLE = "(no-tuple-data)"
#: The op_raw of a logical decoding message (``pg_logical_emit_message``).
MESSAGE = "message"
#: The reason a line whose quoted value goes on past its end is skipped (its last line carries the event).
CONTINUES = "pg_test_decoding: a quoted value continues on the next line"

#: Why the lines of a prepared transaction give no rows where they are (see :meth:`PgTestDecoding.settle`).
MOVED = "pg_test_decoding: a line of a prepared transaction: its events come at its COMMIT PREPARED"
ROLLED_BACK = "pg_test_decoding: a line of a prepared transaction rolled back (ROLLBACK PREPARED): it never happened"
UNRESOLVED = ("pg_test_decoding: a line of a prepared transaction neither committed nor rolled back by the end of "
              "its source: not committed state")
PREPARED = "pg_test_decoding: PREPARE TRANSACTION (the transaction counts at its COMMIT PREPARED)"
ROLLBACK = "pg_test_decoding: ROLLBACK PREPARED (the prepared transaction's changes never happened)"
STREAM_BLOCK = "pg_test_decoding: a streamed block opens or closes (stream-changes)"
STREAM_ABORT = "pg_test_decoding: a streamed (sub)transaction aborted (its streamed changes never happened)"
#: Why a ``streaming change`` line is quarantined: stream-changes output names a change but prints none of it.
STREAMED_CHANGE = ("test_decoding's stream-changes output names a change but prints no table or values: the change "
                   "is not in the capture (capture without 'stream-changes')")

_COPY = re.compile(r"([0-9A-Fa-f]{1,8}/[0-9A-Fa-f]{1,8})\t(\d+)\t(.*)\Z", re.S)
_BEGIN = re.compile(r"BEGIN(?: (\d+))?\Z")
_COMMIT = re.compile(r"COMMIT(?: (\d+))?(?: \(at (.+)\))?\Z")
_MESSAGE = re.compile(r"(?:streaming )?message: transactional: ([01]) prefix: (.*?), sz: (\d+) content:(.*)\Z", re.S)
#: ``PREPARE TRANSACTION 'gid'``, ``COMMIT PREPARED 'gid'``, ``ROLLBACK PREPARED 'gid'`` (the gid as
#: ``quote_literal``: ``E'...'`` with doubled backslashes when it holds one), ``, txid N`` with include-xids,
#: `` (at time)`` with include-timestamp; ``preparing streamed transaction [TXN ]'gid'`` is a PREPARE.
_TWO_PHASE = re.compile(r"(PREPARE TRANSACTION|COMMIT PREPARED|ROLLBACK PREPARED|preparing streamed transaction"
                        r"(?: TXN)?) (E?)'((?:[^']|'')*)'(?:, txid (\d+))?(?: \(at (.+)\))?\Z", re.S)
#: The stream-changes lines (``TXN N`` with include-xids, ``transaction`` without).
_STREAM = re.compile(r"(opening a streamed block for transaction|closing a streamed block for transaction|"
                     r"committing streamed transaction|aborting streamed \(sub\)transaction|"
                     r"aborting streamed transaction|streaming change for|streaming truncate for)"
                     r"(?: (?:TXN (\d+)|transaction))?(?: \(at (.+)\))?\Z")
_COPY_ESCAPES = {"b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"}
_SAFE_NAME = re.compile(r"[a-z_][a-z0-9_$]*\Z")
_TRUNCATE_FLAGS = ("restart_seqs", "cascade")
#: Types whose values test_decoding writes bare (its ``print_literal``); every other is quoted.
_BARE_KINDS = ("int", "float", "decimal")


class _Unfinished(Exception):
    """The text ends inside a quoted value (or before a message's ``sz`` bytes of content)."""


@dataclass(slots=True)
class _Held:
    """The first physical lines of a change whose quoted value goes on: the text so far and their messages."""

    text: str
    messages: list[Message]
    last_line: int | None


@register
class PgTestDecoding(Dialect):
    """PostgreSQL test_decoding text lines, as pg_recvlogical writes them or as COPY of the SQL functions."""

    name = "pg_test_decoding"
    title = "PostgreSQL test_decoding"
    spec = "PostgreSQL manual: Logical Decoding Examples; contrib/test_decoding (docs/specs/pg_test_decoding.md)"
    layout = "text"
    partial_updates = True
    whole_files = True
    settles = True
    quirks = (
        "Tables are named schema.table: the schema fills both schema and database (as wal2json's).",
        "The lines name no key columns: a table's key columns are inferred from its old tuples (deletes and "
        "old-key), which under REPLICA IDENTITY DEFAULT hold exactly the identity columns (the rule: "
        "cdckit.dialects.postgres.IdentityEvidence), per source once it is read, and said in the report's "
        "inferred_keys. A FULL table, one without old tuples or one whose evidence differs stays keyless: give "
        "its key with cdckit.with_keys(events, {'public.t': ['id']}) (which wins over an inferred key).",
        "Two-phase slots: a prepared transaction's events (BEGIN, changes) move to its COMMIT PREPARED line "
        "(offset, and with COPY seqs the commit's seq and a counter), so it counts where it committed; a "
        "ROLLBACK PREPARED one's never happened, and one not resolved by the end of its source is not committed "
        "state: their lines are skipped with those reasons. A COMMIT PREPARED whose PREPARE is in an earlier "
        "source is quarantined (its changes are not in these events): read such a capture as one source.",
        "stream-changes output: 'streaming change' and 'streaming truncate' lines print no table or values and "
        "are quarantined; streamed blocks and aborts are skipped; a streamed commit is a commit event and "
        "'preparing streamed transaction' a PREPARE.",
        "A source's events are held until it ends (to infer keys and settle prepared transactions): a "
        "test_decoding file is never cut, and a chunked read yields its events once the file is over.",
        "An update's before image is the old-key tuple, written only when the key changed (all old values under "
        "REPLICA IDENTITY FULL); a delete's is the old key (the whole row under FULL), none for (no-tuple-data).",
        "unchanged-toast-datum means a large value the update did not touch: the column is left out of the after "
        "image (a partial image, merged onto the row when replayed).",
        "Only COMMIT lines carry a time (with include-timestamp): the commit event has it, changes have none.",
        "pg_recvlogical files: a value holding a line feed runs over several lines, joined here; the first lines "
        "are counted as skipped ('continues on the next line'). The text reader drops blank lines and trailing "
        "carriage returns: blank lines inside a value are put back from the line numbers, but a line of only "
        "spaces comes back empty and a carriage return before a line feed is lost.",
        "A value still open when a line that is a whole test_decoding line on its own comes, or when the input "
        "ends, is quarantined (its lines were counted as skipped).",
        "The txn_id of a pg_recvlogical line is the xid of the BEGIN before it (none with include-xids=0); "
        "a COPY line gives its own.",
        "Only the COPY form has LSNs; they are not in stream order (a BEGIN has its transaction's first LSN, which "
        "may be lower than an earlier-committed transaction's COMMIT), so seq is the previous COMMIT's LSN and a "
        "counter: string order is stream order within a file. pg_recvlogical files have no seq.",
        "TRUNCATE flags (restart_seqs, cascade) are not kept; one line truncating several tables gives one "
        "truncate event per table.",
        "pg_logical_emit_message lines are op other (op_raw message) with transactional, prefix and content as "
        "the after image; a non-transactional message has no txn_id.",
        "A COPY file named .tsv is read as a CSV file with a header by the container reader: name it .txt.",
    )

    def __init__(self, tz: str | None = None) -> None:
        super().__init__(tz)
        self._xid: str | None = None  # the xid of the last BEGIN (pg_recvlogical form)
        self._held: _Held | None = None  # the lines of a change whose value goes on
        self._failed: list[tuple[Message, str, str]] = []  # held lines given up: (message, skip reason, reason)
        self._base: str | None = None  # COPY form: the LSN seqs are counted from (the last COMMIT's)
        self._count = 0
        self._known: dict[str | None, Columns] = {}  # table name -> the columns last declared for it
        self._open: list[Event] | None = None  # the events of the transaction open (since its BEGIN)
        self._prepared: dict[str, list[Event]] = {}  # gid -> the events of its prepared transaction
        self._fate: dict[int, str] = {}  # id(event) -> MOVED, ROLLED_BACK or UNRESOLVED
        self._commits: dict[int, list[Event]] = {}  # id(COMMIT PREPARED event) -> the events it commits
        self._identity: dict[str, IdentityEvidence] = {}  # table name -> what its old tuples show

    # ------------------------------------------------------------ detection

    def detect(self, value: Any) -> Match | None:
        """A text line in the plugin's grammar: a change line is sure, a BEGIN or COMMIT line alone less so."""
        if value.__class__ is not str:
            return None
        copy = _COPY.match(value)
        line = copy.group(3) if copy else value
        evidence = ("lsn, xid, data (COPY)",) if copy else ()
        if line.startswith("table "):
            head = re.match(r'table (?:"(?:[^"]|"")*"|[^ :."]+)(?:\.(?:"(?:[^"]|"")*"|[^ :."]+))?[^:]*: '
                            r'(INSERT|UPDATE|DELETE|TRUNCATE):', line)
            if head:
                return Match(0.95, evidence + (f"table ...: {head.group(1)}:",))
            return None
        if line.startswith("message: transactional: ") and _MESSAGE.match(line):
            return Match(0.9, evidence + ("message: transactional:",))
        found = _BEGIN.match(line) or _COMMIT.match(line) or _TWO_PHASE.match(line) or _STREAM.match(line)
        if found:
            word = line.split(" ", 1)[0]
            sure = 0.85 if copy else 0.7 if found.group(1) else 0.4
            return Match(sure, evidence + (word,))
        return None

    # ------------------------------------------------------------ decoding

    def decode(self, message: Message) -> list[Event]:
        """The events of one line; a line whose value goes on is held (SkipMessage) until its last line."""
        line = message.value
        if line.__class__ is not str:
            kind = "null" if line is None else "a JSON object" if isinstance(line, dict) else type(line).__name__
            raise BadMessage(f"expected a test_decoding text line, got {kind}")
        copy = _COPY.match(line)
        if copy is not None and self._held is None:
            return self._copy_line(copy)
        held, self._held = self._held, None
        if held is not None:
            gap = message.line - held.last_line if message.line is not None and held.last_line is not None else 1
            joined = held.text + "\n" * max(gap, 1) + line
            try:
                return self._plain_line(joined, message)
            except _Unfinished:
                if not _whole_line(line):
                    self._held = _Held(joined, held.messages + [message], message.line)
                    raise SkipMessage(CONTINUES) from None
                self._give_up(held, "a quoted value never ended: the next line is a test_decoding line of its own")
                return self.decode(message)
            except BadMessage as bad:
                first = held.messages[0]
                reason = f"{bad} (in a value begun on line {first.line}, offset {first.offset})"
                self._give_up(held, reason)
                raise BadMessage(reason) from None
        try:
            return self._plain_line(line, message)
        except _Unfinished:
            self._held = _Held(line, [message], message.line)
            raise SkipMessage(CONTINUES) from None

    def finish(self) -> None:
        """The input ended: a change still waiting for the rest of its value is given up (see :meth:`take_failed`)."""
        held, self._held = self._held, None
        if held is not None:
            self._give_up(held, "the input ended inside a quoted value")

    def take_failed(self) -> list[tuple[Message, str, str]]:
        """The held lines given up since the last call: ``(message, CONTINUES, reason)``, to be quarantined."""
        found, self._failed = self._failed, []
        return found

    def _give_up(self, held: _Held, reason: str) -> None:
        """Each line of ``held`` (skipped as :data:`CONTINUES` when it came) is to be quarantined for ``reason``."""
        self._failed.extend((message, CONTINUES, reason) for message in held.messages)

    def _plain_line(self, line: str, message: Message) -> list[Event]:
        """The events of one whole pg_recvlogical line (``_Unfinished`` when its value goes on)."""
        events = self._events(line, None)
        for event in events:
            if event.op == "begin":
                self._xid = event.txn_id
            elif event.op == "commit":
                self._xid = None
        return events

    def _copy_line(self, copy: re.Match) -> list[Event]:
        """The events of one COPY row ``lsn<TAB>xid<TAB>data``."""
        lsn, xid, data = copy.groups()
        try:
            events = self._events(unescape_copy(data), None if xid == "0" else xid)
        except _Unfinished:
            raise BadMessage("a quoted value does not end on its line (a COPY row holds a whole change)") from None
        for event in events:
            event.seq = self.copy_seq(lsn)
            if event.op == "commit":
                self._base, self._count = lsn_seq(lsn), 0
        return events

    def copy_seq(self, lsn: str) -> str | None:
        """The seq of the next COPY row at ``lsn``: the last COMMIT's LSN (this row's, before any) and a
        counter. A BEGIN row has its transaction's first LSN and changes their own, which may be lower than
        an earlier-committed transaction's COMMIT; COMMIT LSNs rise in stream order, so these seqs sort as
        the rows come.

        >>> d = PgTestDecoding()
        >>> d.copy_seq("0/1940A10"), d.copy_seq("0/1940AA0")
        ('00000000/01940A10:00000000000000000001', '00000000/01940A10:00000000000000000002')
        """
        try:
            if self._base is None:
                self._base = lsn_seq(lsn)
        except ValueError as err:
            raise BadMessage(str(err)) from None
        self._count += 1
        return values.sortable_text(self._base, self._count)

    def _events(self, line: str, xid: str | None) -> list[Event]:
        """The events of a line's data (``xid``: the COPY row's, else the remembered BEGIN's)."""
        if line.startswith("table "):
            return self._in_transaction(self._change(line, xid if xid is not None else self._xid))
        found = _BEGIN.match(line)
        if found:
            begin = Event(op="begin", op_raw="BEGIN", txn_id=found.group(1) or xid)
            self._open = [begin]
            return [begin]
        found = _COMMIT.match(line)
        if found:
            self._open = None
            return [Event(op="commit", op_raw="COMMIT", txn_id=found.group(1) or xid or self._xid,
                          event_time=self._time(found.group(2)))]
        if line.startswith(("message: ", "streaming message: ")):
            message = self._message(line, xid if xid is not None else self._xid)
            return self._in_transaction([message]) if message.txn_id is not None else [message]
        found = _TWO_PHASE.match(line)
        if found:
            return self._two_phase(found, xid)
        found = _STREAM.match(line)
        if found:
            return self._stream(found, xid)
        word = line.split(" ", 1)[0][:40]
        raise BadMessage(f"not a test_decoding line: starts with {word!r}")

    def _time(self, text: str | None) -> int | None:
        """The epoch nanoseconds of an ``(at ...)`` time (None without one)."""
        try:
            return values.text_time_to_ns(text, self.tz)
        except ValueError:
            raise BadMessage(f"COMMIT time is not a timestamp: {text!r}") from None

    def _in_transaction(self, events: list[Event]) -> list[Event]:
        """``events``, remembered as the open transaction's (it may turn out to be a prepared one)."""
        if self._open is not None:
            self._open.extend(events)
        return events

    def _two_phase(self, found: re.Match, xid: str | None) -> list[Event]:
        """A PREPARE TRANSACTION (its transaction's events wait for their fate), COMMIT PREPARED (they
        come here, see :meth:`settle`) or ROLLBACK PREPARED (they never happened) line."""
        word, escaped, gid, txid, when = found.groups()
        gid = gid.replace("''", "'")
        if escaped:
            gid = gid.replace("\\\\", "\\")
        txn = txid or xid
        if word[0] in "Pp":  # PREPARE TRANSACTION, preparing streamed transaction
            events, self._open, self._xid = self._open or [], None, None
            for event in self._prepared.pop(gid, ()):  # a gid prepared again before its fate came
                self._fate[id(event)] = UNRESOLVED
            self._prepared[gid] = events
            for event in events:
                self._fate[id(event)] = UNRESOLVED
            raise SkipMessage(PREPARED)
        prepared = self._prepared.pop(gid, None)
        if word == "ROLLBACK PREPARED":
            for event in prepared or ():
                self._fate[id(event)] = ROLLED_BACK
            raise SkipMessage(ROLLBACK)
        if prepared is None:
            raise BadMessage(f"COMMIT PREPARED {gid!r}: its transaction was not prepared in this source, so its "
                             "changes are not in these events (its PREPARE TRANSACTION is in an earlier capture: "
                             "read the lines from its BEGIN on as one source)")
        commit = Event(op="commit", op_raw="COMMIT PREPARED", event_time=self._time(when),
                       txn_id=txn or next((e.txn_id for e in prepared if e.txn_id is not None), None))
        for event in prepared:
            self._fate[id(event)] = MOVED
        self._commits[id(commit)] = prepared
        return [commit]

    def _stream(self, found: re.Match, xid: str | None) -> list[Event]:
        """A stream-changes line: a streamed change (it prints no values: quarantined), a block's start or
        end and an aborted streamed transaction (no rows), a streamed transaction's commit."""
        word, txid, when = found.groups()
        if word.startswith("streaming"):
            raise BadMessage(STREAMED_CHANGE)
        if word.startswith(("opening", "closing")):
            raise SkipMessage(STREAM_BLOCK)
        if word.startswith("aborting"):
            raise SkipMessage(STREAM_ABORT)
        return [Event(op="commit", op_raw="committing streamed transaction", txn_id=txid or xid,
                      event_time=self._time(when))]

    def settle(self, decoded: list[Decoded]) -> dict[str, dict[str, Any]]:
        """The source is over: a prepared transaction's events go to its COMMIT PREPARED (before that
        commit event, in its message: the transaction counts where it committed; with COPY seqs, the
        commit's seq and a counter), or nowhere when it was rolled back or never resolved in this source.
        Then the tables whose old tuples prove a key (:class:`~cdckit.dialects.postgres.IdentityEvidence`)
        get its columns and each event its key; the report says which and why."""
        fate, commits = self._fate, self._commits
        self._fate, self._commits, self._prepared = {}, {}, {}
        if fate:
            for item in decoded:
                if item.dialect != self.name:
                    continue
                reasons = [fate[id(e)] for e in item.events if id(e) in fate]
                if reasons:
                    item.events = [e for e in item.events if id(e) not in fate]
                    item.skip = item.skip or reasons[0]
                for index, event in enumerate(item.events):
                    moved = commits.get(id(event))
                    if moved is None:
                        continue
                    if event.seq is not None:
                        base = event.seq
                        for number, each in enumerate(moved + [event], 1):
                            each.seq = values.sortable_text(base, number)
                    item.events[index:index] = moved
                    break
        return self._keys(decoded)

    def _keys(self, decoded: list[Decoded]) -> dict[str, dict[str, Any]]:
        """Fill in the key columns and keys of the tables whose old tuples prove a key (report entries)."""
        found: dict[str, dict[str, Any]] = {}
        keys: dict[str | None, list[str]] = {}
        for name, evidence in self._identity.items():
            columns, why = evidence.key()
            if columns is not None:
                keys[name] = columns
                found[name] = {"columns": columns, "evidence": why}
        if not keys:
            return {}
        for item in decoded:
            if item.dialect != self.name:
                continue
            for event in item.events:
                columns = keys.get(table_name(event.database, event.schema, event.table))
                if columns is None or event.key_columns is not None:
                    continue
                image = event.before if event.op == "delete" else event.after
                event.key_columns = list(columns)
                event.key = values.key_of(values.loads(image), columns) if image is not None else None
        return {"inferred_keys": found}

    def _message(self, line: str, xid: str | None) -> Event:
        found = _MESSAGE.match(line)
        if found is None:
            raise BadMessage("a message line without transactional, prefix, sz and content")
        transactional, prefix, size, content = found.groups()
        length = len(content.encode("utf-8", "surrogateescape"))
        if length < int(size):
            raise _Unfinished
        if length > int(size):
            raise BadMessage(f"message content of {length} bytes, sz says {size}")
        after = {"transactional": transactional == "1", "prefix": prefix, "content": content}
        return Event(op="other", op_raw=MESSAGE, txn_id=xid if transactional == "1" else None,
                     after=values.image(after))

    def _change(self, line: str, xid: str | None) -> list[Event]:
        """The events of a ``table ...: OP: ...`` line."""
        names, pos = _table_names(line, len("table "))
        op_raw, colon, _ = line[pos:].partition(":")
        op = OPS.get(op_raw)
        if op is None or not colon:
            raise BadMessage(f"unknown operation {op_raw[:40]!r}")
        pos += len(op_raw) + 1
        rest = line[pos:]
        if op == "truncate":
            flags = rest.split()
            if flags != ["(no-flags)"] and not (flags and set(flags) <= set(_TRUNCATE_FLAGS)):
                raise BadMessage(f"unknown TRUNCATE flags {rest.strip()[:40]!r}")
            return [Event(op="truncate", op_raw=op_raw, database=schema, schema=schema, table=table, txn_id=xid)
                    for schema, table in names]
        if len(names) != 1:
            raise BadMessage(f"{op_raw} names {len(names)} tables")
        schema, table = names[0]
        old = new = None
        if rest == " " + NO_TUPLE:
            pass
        elif op == "update" and rest.startswith(" old-key:"):
            old, pos = _tuple(line, pos + len(" old-key:"), stop=" new-tuple:")
            if not line.startswith(" new-tuple:", pos):
                raise BadMessage("an old-key tuple without its new-tuple")
            new, _ = _tuple(line, pos + len(" new-tuple:"))
        else:
            new, _ = _tuple(line, pos)
        if op == "delete":
            old, new = new, None
        name = table_name(schema, schema, table)
        for columns, whole in ((new, True), (old, False)):
            if columns:
                self._declare(name, schema, table, columns, whole)
        if name is not None:
            self._evidence(name, op, old, new if op != "delete" else None)
        return [Event(op=op, op_raw=op_raw, database=schema, schema=schema, table=table, txn_id=xid,
                      before=_image(old), after=_image(new))]

    def _evidence(self, name: str, op: str, old: list[tuple] | None, new: list[tuple] | None) -> None:
        """What a change shows of its table's replica identity (see :meth:`settle`)."""
        evidence = self._identity.get(name)
        if evidence is None:
            evidence = self._identity[name] = IdentityEvidence()
        if new is not None:
            evidence.row(tuple(column for column, _, _ in new))
        if op == "delete":
            evidence.old(tuple(column for column, _, _ in old) if old else None)
        elif old:
            now = {column: value for column, _, value in new or ()}
            evidence.old(tuple(column for column, _, _ in old),
                         changed=any(now.get(column, now) != value for column, _, value in old))

    def _declare(self, name: str | None, schema: str | None, table: str, columns: list[tuple], whole: bool) -> None:
        """Declare the tuple's column types: a whole row's as they are, a key's (or a FULL old row's) added to
        what the table's last declaration says."""
        pairs = [(column, raw) for column, raw, _ in columns]
        known = self._known.get(name) or {}
        if not whole:
            if all(column in known and known[column][0] == raw for column, raw in pairs):
                return
            merged = {column: raw for column, (raw, _) in known.items()}
            merged.update(pairs)
            pairs = list(merged.items())
        declared = declared_columns([column for column, _ in pairs], [raw for _, raw in pairs])
        if name is not None:
            self._known[name] = declared
        self.declare(schema, schema, table, declared)

    # ------------------------------------------------------------ encoding

    def encode(self, events: pd.DataFrame) -> Iterator[Record]:
        """pg_recvlogical lines, one per event (a line feed in a value written raw, as the plugin does).

        A run of changes with one ``txn_id`` is put between ``BEGIN <xid>``
        and ``COMMIT <xid>`` lines unless begin / commit events of its own
        say where (the made-up COMMIT carries the last change's event time);
        changes without a ``txn_id`` get none, since a made-up transaction id
        would read back as one. Column types are the declared ones
        (``cdckit.column_types_of(events)``) when they are PostgreSQL names of
        the column's kind, else a type for the kind, else one guessed from
        the values (lists as arrays of their elements' type, objects as
        ``jsonb``: such values read back as text). An update's before image
        is written as ``old-key:`` whatever it holds (it reads back as the
        same image); a read (snapshot) row as an INSERT; a message event of
        this dialect as a ``message:`` line. Not written: ddl, heartbeat,
        tombstone events and ``other`` events that are not messages.
        """
        rows = list(rows_of(events))
        types = _declared_types(column_types_of(events))
        images: dict[str | None, list[dict]] = {}
        parsed = []
        for row in rows:
            before, after = _loads(row["before"]), _loads(row["after"])
            parsed.append((row, before, after))
            images.setdefault(_qualified(row), []).extend(i for i in (before, after) if i)
        guessed = {name: _guessed_types(found) for name, found in images.items()}
        open_xid: list[Any] = []  # [xid, made up?, event time of the last change] of the transaction open
        for row, before, after in parsed:
            op, xid = row["op"], row["txn_id"]
            if op in ("begin", "commit"):
                if open_xid and open_xid[1]:
                    yield Record(_commit_line(open_xid[0], open_xid[2]))
                open_xid[:] = [xid, False, None] if op == "begin" else []
                yield Record(f"BEGIN {xid}" if op == "begin" and xid is not None else
                             "BEGIN" if op == "begin" else _commit_line(xid, row["event_time"]))
                continue
            line = self._line(row, before, after, {**guessed.get(_qualified(row), {}),
                                                    **types.get(_qualified(row), {})})
            if line is None:
                continue
            if open_xid and open_xid[1] and open_xid[0] != xid:
                yield Record(_commit_line(open_xid[0], open_xid[2]))
                open_xid.clear()
            if xid is not None and not open_xid:
                open_xid[:] = [xid, True, None]
                yield Record(f"BEGIN {xid}")
            if open_xid:
                open_xid[2] = row["event_time"] if row["event_time"] is not None else open_xid[2]
            yield Record(line)
        if open_xid and open_xid[1]:
            yield Record(_commit_line(open_xid[0], open_xid[2]))

    def _line(self, row: dict, before: dict | None, after: dict | None, types: dict[str, str | None]) -> str | None:
        """One change line, or None for an event this format cannot say."""
        op = row["op"]
        if op == "other":
            if row["op_raw"] != MESSAGE or not isinstance(after, dict) or not isinstance(after.get("content"), str):
                return None
            content = after["content"]
            return (f"message: transactional: {1 if after.get('transactional') else 0} prefix: "
                    f"{after.get('prefix') or ''}, sz: {len(content.encode())} content:{content}")
        if row["table"] is None:
            return None
        head = f"table {quote_name(row['database'] or row['schema'], row['table'])}:"
        if op == "truncate":
            return f"{head} TRUNCATE: (no-flags)"
        if op in ("insert", "read") and after is not None:
            return f"{head} INSERT:{tuple_text(after, types)}"
        if op == "update" and after is not None:
            old = f" old-key:{tuple_text(before, types)} new-tuple:" if before else ""
            return f"{head} UPDATE:{old}{tuple_text(after, types)}"
        if op == "delete":
            return f"{head} DELETE:{tuple_text(before, types) if before else ' ' + NO_TUPLE}"
        return None


# ---------------------------------------------------------------- parsing


def unescape_copy(text: str) -> str:
    r"""A COPY text field with its backslash escapes undone (``\n``, ``\t``, ``\\``, octal, ``\x`` hex).

    >>> unescape_copy(r"a\\b\nc\td\101\x42")
    'a\\b\nc\tdAB'
    """
    if "\\" not in text:
        return text
    out, i, n = [], 0, len(text)
    while i < n:
        ch = text[i]
        if ch != "\\" or i + 1 >= n:
            out.append(ch)
            i += 1
            continue
        nxt = text[i + 1]
        if nxt in _COPY_ESCAPES:
            out.append(_COPY_ESCAPES[nxt])
            i += 2
        elif octal := re.match(r"[0-7]{1,3}", text[i + 1:i + 4]):
            digits = octal.group()
            out.append(chr(int(digits, 8)))
            i += 1 + len(digits)
        elif nxt == "x" and (hexadecimal := re.match(r"[0-9A-Fa-f]{1,2}", text[i + 2:i + 4])):
            digits = hexadecimal.group()
            out.append(chr(int(digits, 16)))
            i += 2 + len(digits)
        else:
            out.append(nxt)
            i += 2
    return "".join(out)


def _identifier(text: str, i: int, stops: str) -> tuple[str, int]:
    """A name at ``i``: a double-quoted identifier (``""`` a quote) or the text up to one of ``stops``."""
    if text.startswith('"', i):
        out, j = [], i + 1
        while True:
            end = text.find('"', j)
            if end < 0:
                raise _Unfinished
            out.append(text[j:end])
            if text.startswith('"', end + 1):
                out.append('"')
                j = end + 2
            else:
                return "".join(out), end + 1
    j = i
    while j < len(text) and text[j] not in stops:
        j += 1
    if j == i:
        raise BadMessage(f"a name expected at column {i}")
    return text[i:j], j


def _table_names(line: str, i: int) -> tuple[list[tuple[str | None, str]], int]:
    """The ``schema.table`` names of a change line from ``i``, and the index after ``": "``."""
    names: list[tuple[str | None, str]] = []
    while True:
        first, i = _identifier(line, i, ".:, ")
        if line.startswith(".", i):
            second, i = _identifier(line, i + 1, ".:, ")
            names.append((first, second))
        else:
            names.append((None, first))
        if line.startswith(", ", i):
            i += 2
        elif line.startswith(": ", i):
            return names, i + 2
        else:
            raise BadMessage("a table name not followed by ': '")


def _tuple(line: str, i: int, stop: str | None = None) -> tuple[list[tuple[str, str, Any]], int]:
    """The columns ``(name, type, value)`` of a tuple from ``i`` up to the end or ``stop``; a value is text,
    None, True/False, or :data:`UNCHANGED_TOAST`. ``_Unfinished`` when a quote is still open at the end."""
    columns = []
    n = len(line)
    while i < n and not (stop and line.startswith(stop, i)):
        if line[i] != " ":
            raise BadMessage(f"unexpected text after a value at column {i}: {line[i:i + 20]!r}")
        name, i = _identifier(line, i + 1, "[")
        if not line.startswith("[", i):
            raise BadMessage(f"column {name!r} without [type]")
        end = line.find("]:", i)
        if end < 0:
            raise BadMessage(f"column {name!r}: its [type] does not end with ']:'")
        raw_type, i = line[i + 1:end], end + 2
        value, i = _value(line, i)
        columns.append((name, raw_type, value))
    if not columns:
        raise BadMessage("a tuple without columns")
    return columns, i


def _value(line: str, i: int) -> tuple[Any, int]:
    """The value at ``i`` (see :func:`_tuple`) and the index after it."""
    if line.startswith("'", i) or line.startswith("B'", i):
        start = i + 1 if line[i] == "'" else i + 2
        out, j = [], start
        while True:
            end = line.find("'", j)
            if end < 0:
                raise _Unfinished
            out.append(line[j:end])
            if line.startswith("'", end + 1):
                out.append("'")
                j = end + 2
            else:
                return "".join(out), end + 1
    end = line.find(" ", i)
    end = len(line) if end < 0 else end
    token = line[i:end]
    if not token:
        raise BadMessage(f"a column without a value at column {i}")
    if token == "null":
        return None, end
    if token in ("true", "false"):
        return token == "true", end
    return token, end  # a number, NaN, Infinity or unchanged-toast-datum


def _image(columns: list[tuple[str, str, Any]] | None) -> str | None:
    """The image of a tuple: values typed by their column types, unchanged TOAST values left out."""
    if columns is None:
        return None
    row = {}
    for name, raw_type, value in columns:
        if value == UNCHANGED_TOAST:
            continue
        row[name] = value if value is None or value.__class__ is bool else value_from_text(value, raw_type)
    return values.image(row)


def _whole_line(line: str) -> bool:
    """True when ``line`` is on its own a complete test_decoding line (it cannot go on a value begun before)."""
    if _BEGIN.match(line) or _COMMIT.match(line) or _COPY.match(line) or _TWO_PHASE.match(line) \
            or _STREAM.match(line):
        return True
    if not line.startswith(("table ", "message: ", "streaming message: ")):
        return False
    try:
        PgTestDecoding()._events(line, None)
    except (BadMessage, _Unfinished, ValueError):
        return False
    return True


# ---------------------------------------------------------------- writing


def quote_name(schema: str | None, table: str) -> str:
    """``schema.table`` with each part quoted as PostgreSQL quotes identifiers.

    >>> quote_name("public", "t"), quote_name("My Schema", 't.1"x')
    ('public.t', '"My Schema"."t.1""x"')
    """
    return f"{quote_identifier(schema)}.{quote_identifier(table)}" if schema else quote_identifier(table)


def quote_identifier(name: str) -> str:
    """A name as PostgreSQL writes it: bare when lower-case letters, digits and ``_``, else double-quoted."""
    return name if _SAFE_NAME.match(name) else '"' + name.replace('"', '""') + '"'


def tuple_text(row: dict[str, Any], types: dict[str, str | None]) -> str:
    """`` name[type]:value`` for each column of an image.

    >>> print(tuple_text({"id": 1, "Note": "it's", "ok": True, "n": None}, {"n": "numeric"}))
     id[bigint]:1 "Note"[text]:'it''s' ok[boolean]:true n[numeric]:null
    """
    parts = []
    for name, value in row.items():
        raw_type = types.get(name) or type_of_value(value) or "text"
        parts.append(f" {quote_identifier(name)}[{raw_type}]:{literal(value, raw_type)}")
    return "".join(parts)


def literal(value: Any, raw_type: str) -> str:
    """A value as test_decoding prints it for a column of ``raw_type``.

    >>> literal("AP8=", "bytea"), literal([1, None], "integer[]"), literal("NaN", "double precision")
    ("'\\\\x00ff'", "'{1,NULL}'", 'NaN')
    """
    if value is None:
        return "null"
    if value is True or value is False:
        return "true" if value else "false"
    kind = kind_of(raw_type)
    if kind in _BARE_KINDS and isinstance(value, (int, float, str)) and _bare_number(value):
        return str(value) if not isinstance(value, float) else repr(value).replace("inf", "Infinity")
    text = value_to_text(value, raw_type)
    return "null" if text is None else "'" + text.replace("'", "''") + "'"


def _bare_number(value: Any) -> bool:
    if isinstance(value, (int, float)):
        return value == value  # NaN floats cannot come from JSON
    return bool(re.fullmatch(r"-?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?|NaN|-?Infinity", value))


def _guessed_types(images: list[dict]) -> dict[str, str | None]:
    """Each column's type from its first non-null value across a table's images."""
    found: dict[str, str | None] = {}
    for image in images:
        for name, value in image.items():
            if name not in found and value is not None:
                found[name] = type_of_value(value)
    return found


def _declared_types(frame: Any) -> dict[str | None, dict[str, str]]:
    """``{table name: {column: PostgreSQL type}}`` from ``cdckit.column_types_of(events)``: the raw type when
    PostgreSQL reads it as the declared kind, else a type of that kind."""
    found: dict[str | None, dict[str, str]] = {}
    if not isinstance(frame, pd.DataFrame) or frame.empty:
        return found
    for table, column, raw, kind in frame[["table", "column", "type", "kind"]].itertuples(index=False, name=None):
        if not isinstance(column, str):
            continue
        base = str(kind).split("(")[0]
        if isinstance(raw, str) and "\n" not in raw and "]:" not in raw and kind_of(raw) == base:
            found.setdefault(table, {})[column] = raw
        elif base in TYPE_OF_KIND:
            found.setdefault(table, {})[column] = TYPE_OF_KIND[base]
    return found


def _qualified(row: dict) -> str | None:
    return table_name(row["database"], row["schema"], row["table"])


def _loads(text: str | None) -> Any:
    return None if text is None else values.loads(text)


def _commit_line(xid: str | None, event_time: int | None) -> str:
    """``COMMIT <xid>`` with ``(at <time>)`` as PostgreSQL prints a timestamp with time zone in UTC."""
    line = "COMMIT" if xid is None else f"COMMIT {xid}"
    if event_time is None:
        return line
    moment = pd.Timestamp(event_time, unit="ns", tz="UTC")
    micros = f".{moment.microsecond:06d}".rstrip("0").rstrip(".")
    return f"{line} (at {moment:%Y-%m-%d %H:%M:%S}{micros}+00)"
