"""The ``pg_test_decoding`` dialect: test_decoding lines told apart, decoded into events (a value that runs
over several lines joined, prepared and streamed transactions settled) and written back (see the package's
documentation, :mod:`cdckit.dialects.pg_test_decoding`)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pandas as pd

from ... import values
from ...frame import Event
from ...io import Message
from ...row_images import key_of, parse_image
from ..base import BadMessage, Columns, Decoded, Dialect, Match, Record, SkipMessage, table_name
from ..postgres import IdentityEvidence, declared_columns, lsn_seq
from ..registry import register
from .grammar import MESSAGE, NO_TUPLE, Unfinished, table_names, tuple_columns, tuple_image, unescape_copy
from .writing import encoded_lines

#: The change operations of a ``table ...:`` line and their canonical ops.
OPS = {"INSERT": "insert", "UPDATE": "update", "DELETE": "delete", "TRUNCATE": "truncate"}
#: The reason a line whose quoted value goes on past its end is skipped (its last line carries the event).
CONTINUES = "pg_test_decoding: a quoted value continues on the next line"

#: Why the lines of a prepared transaction give no rows where they are (see :meth:`PgTestDecoding.settle`).
MOVED = "pg_test_decoding: a line of a prepared transaction: its events come at its COMMIT PREPARED"
ROLLED_BACK = "pg_test_decoding: a line of a prepared transaction rolled back (ROLLBACK PREPARED): it never happened"
UNRESOLVED = (
    "pg_test_decoding: a line of a prepared transaction neither committed nor rolled back by the end of "
    "its source: not committed state"
)
PREPARED = "pg_test_decoding: PREPARE TRANSACTION (the transaction counts at its COMMIT PREPARED)"
ROLLBACK = "pg_test_decoding: ROLLBACK PREPARED (the prepared transaction's changes never happened)"
STREAM_BLOCK = "pg_test_decoding: a streamed block opens or closes (stream-changes)"
STREAM_ABORT = "pg_test_decoding: a streamed (sub)transaction aborted (its streamed changes never happened)"
#: Why a ``streaming change`` line is quarantined: stream-changes output names a change but prints none of it.
STREAMED_CHANGE = (
    "test_decoding's stream-changes output names a change but prints no table or values: the change "
    "is not in the capture (capture without 'stream-changes')"
)

_COPY = re.compile(r"([0-9A-Fa-f]{1,8}/[0-9A-Fa-f]{1,8})\t(\d+)\t(.*)\Z", re.S)
_BEGIN = re.compile(r"BEGIN(?: (\d+))?\Z")
_COMMIT = re.compile(r"COMMIT(?: (\d+))?(?: \(at (.+)\))?\Z")
_MESSAGE = re.compile(r"(?:streaming )?message: transactional: ([01]) prefix: (.*?), sz: (\d+) content:(.*)\Z", re.S)
#: ``PREPARE TRANSACTION 'gid'``, ``COMMIT PREPARED 'gid'``, ``ROLLBACK PREPARED 'gid'`` (the gid as
#: ``quote_literal``: ``E'...'`` with doubled backslashes when it holds one), ``, txid N`` with include-xids,
#: `` (at time)`` with include-timestamp; ``preparing streamed transaction [TXN ]'gid'`` is a PREPARE.
_TWO_PHASE = re.compile(
    r"(PREPARE TRANSACTION|COMMIT PREPARED|ROLLBACK PREPARED|preparing streamed transaction"
    r"(?: TXN)?) (E?)'((?:[^']|'')*)'(?:, txid (\d+))?(?: \(at (.+)\))?\Z",
    re.S,
)
#: The stream-changes lines (``TXN N`` with include-xids, ``transaction`` without).
_STREAM = re.compile(
    r"(opening a streamed block for transaction|closing a streamed block for transaction|"
    r"committing streamed transaction|aborting streamed \(sub\)transaction|"
    r"aborting streamed transaction|streaming change for|streaming truncate for)"
    r"(?: (?:TXN (\d+)|transaction))?(?: \(at (.+)\))?\Z"
)
_TRUNCATE_FLAGS = ("restart_seqs", "cascade")


@dataclass(slots=True)
class _Held:
    """The first physical lines of a change whose quoted value goes on: the text so far and their messages."""

    text: str
    messages: list[Message]
    last_line: int | None


def _gap(message: Message, last_line: int | None) -> str:
    """The lines between a held line and ``message``, its next line, as they were: the reader's own record of
    the blank lines it left out, or as many empty lines as the line numbers show.

    >>> _gap(Message("b'", "<s>", 1, line=4, gap=" \\r\\n"), 2), _gap(Message("b'", "<s>", 1, line=4), 2)
    (' \\r\\n', '\\n')
    """
    if message.gap is not None:
        return message.gap
    if message.line is None or last_line is None:
        return ""
    return "\n" * max(message.line - last_line - 1, 0)


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
        "are counted as skipped ('continues on the next line'). The value comes back byte for byte: the text "
        "reader keeps the carriage returns before each line feed and the blank or whitespace-only lines it "
        "leaves out, and the joined value puts them back (CR LF, a lone CR, a line of spaces).",
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
            head = re.match(
                r'table (?:"(?:[^"]|"")*"|[^ :."]+)(?:\.(?:"(?:[^"]|"")*"|[^ :."]+))?[^:]*: '
                r"(INSERT|UPDATE|DELETE|TRUNCATE):",
                line,
            )
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
            joined = held.text + "\n" + _gap(message, held.last_line) + line
            try:
                return self._plain_line(joined, message)
            except Unfinished:
                if not _whole_line(line):
                    self._held = _Held(joined + (message.line_end or ""), held.messages + [message], message.line)
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
        except Unfinished:
            self._held = _Held(line + (message.line_end or ""), [message], message.line)
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
        """The events of one whole pg_recvlogical line (``Unfinished`` when its value goes on)."""
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
        except Unfinished:
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
            return [
                Event(
                    op="commit",
                    op_raw="COMMIT",
                    txn_id=found.group(1) or xid or self._xid,
                    event_time=self._time(found.group(2)),
                )
            ]
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
            raise BadMessage(
                f"COMMIT PREPARED {gid!r}: its transaction was not prepared in this source, so its "
                "changes are not in these events (its PREPARE TRANSACTION is in an earlier capture: "
                "read the lines from its BEGIN on as one source)"
            )
        commit = Event(
            op="commit",
            op_raw="COMMIT PREPARED",
            event_time=self._time(when),
            txn_id=txn or next((e.txn_id for e in prepared if e.txn_id is not None), None),
        )
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
        return [
            Event(
                op="commit", op_raw="committing streamed transaction", txn_id=txid or xid, event_time=self._time(when)
            )
        ]

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
                event.key = key_of(parse_image(image), columns)
        return {"inferred_keys": found}

    def _message(self, line: str, xid: str | None) -> Event:
        found = _MESSAGE.match(line)
        if found is None:
            raise BadMessage("a message line without transactional, prefix, sz and content")
        transactional, prefix, size, content = found.groups()
        length = len(content.encode("utf-8", "surrogateescape"))
        if length < int(size):
            raise Unfinished
        if length > int(size):
            raise BadMessage(f"message content of {length} bytes, sz says {size}")
        after = {"transactional": transactional == "1", "prefix": prefix, "content": content}
        return Event(
            op="other", op_raw=MESSAGE, txn_id=xid if transactional == "1" else None, after=values.image(after)
        )

    def _change(self, line: str, xid: str | None) -> list[Event]:
        """The events of a ``table ...: OP: ...`` line."""
        names, pos = table_names(line, len("table "))
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
            return [
                Event(op="truncate", op_raw=op_raw, database=schema, schema=schema, table=table, txn_id=xid)
                for schema, table in names
            ]
        if len(names) != 1:
            raise BadMessage(f"{op_raw} names {len(names)} tables")
        schema, table = names[0]
        old = new = None
        if rest == " " + NO_TUPLE:
            pass
        elif op == "update" and rest.startswith(" old-key:"):
            old, pos = tuple_columns(line, pos + len(" old-key:"), stop=" new-tuple:")
            if not line.startswith(" new-tuple:", pos):
                raise BadMessage("an old-key tuple without its new-tuple")
            new, _ = tuple_columns(line, pos + len(" new-tuple:"))
        else:
            new, _ = tuple_columns(line, pos)
        if op == "delete":
            old, new = new, None
        name = table_name(schema, schema, table)
        for columns, whole in ((new, True), (old, False)):
            if columns:
                self._declare(name, schema, table, columns, whole)
        if name is not None:
            self._evidence(name, op, old, new if op != "delete" else None)
        return [
            Event(
                op=op,
                op_raw=op_raw,
                database=schema,
                schema=schema,
                table=table,
                txn_id=xid,
                before=tuple_image(old),
                after=tuple_image(new),
            )
        ]

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
            evidence.old(
                tuple(column for column, _, _ in old),
                changed=any(now.get(column, now) != value for column, _, value in old),
            )

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
        """pg_recvlogical lines, one per event (a line feed in a value written raw, as the plugin does): see
        :func:`~cdckit.dialects.pg_test_decoding.writing.encoded_lines`."""
        return encoded_lines(events)


def _whole_line(line: str) -> bool:
    """True when ``line`` is on its own a complete test_decoding line (it cannot go on a value begun before)."""
    if _BEGIN.match(line) or _COMMIT.match(line) or _COPY.match(line) or _TWO_PHASE.match(line) or _STREAM.match(line):
        return True
    if not line.startswith(("table ", "message: ", "streaming message: ")):
        return False
    try:
        PgTestDecoding()._events(line, None)
    except (BadMessage, Unfinished, ValueError):
        return False
    return True
