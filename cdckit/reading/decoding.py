"""The decode loop both engines run: messages in, events, halves, skips and bad messages out.

:class:`MessageDecoder` runs one dialect over messages (one by one, or a
JSON Lines block at a time through the dialect's batch decoder: its base,
:class:`~cdckit.reading.batch_decoding.BatchDecoding`) and tells a
:class:`~cdckit.reading.sinks.Sink` what became of each message. ``cdckit.read`` (pandas) and
``cdckit.spark`` (inside Spark tasks) differ only in their sinks.

>>> from cdckit.io import Message
>>> from cdckit.dialects import registry
>>> class Printing(Sink):
...     def events(self, msg, dialect, events): print(msg.offset, [e.op for e in events])
...     def bad(self, msg, dialect, reason, code, cause=None): print(msg.offset, "bad:", reason)
>>> decoder = MessageDecoder(registry.create("maxwell"), Printing())
>>> decoder.message(Message({"database": "d", "table": "t", "type": "insert", "ts": 1, "data": {"id": 1}}, "s", 0))
0 ['insert']
>>> decoder.message(Message({"type": "insert"}, "s", 1))
1 bad: missing required field data
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from ..dialects import registry, shapes
from ..dialects.base import BadMessage, Decoded, Dialect, SkipMessage
from ..dialects.options import DialectOptions, resolved
from ..errors import InvalidValue
from ..frame import event_row, row_problem
from ..io import Message
from ..io.schema_book import unframed
from ..io.wire_format import Framed
from .batch_decoding import BatchDecoding
from .detect import FLOOR, family_hint, score_message
from .sinks import Sink

__all__ = ["MessageDecoder"]


class MessageDecoder(BatchDecoding):
    """Runs ``dialect`` over messages and tells ``sink`` what became of each one.

    This is the one guard around everything a single message can cause: the
    decoder, the batch decoders (fast paths), the values it yields (checked by
    :func:`cdckit.frame.row_problem`, so turning a batch into Arrow cannot
    fail) and pairing. Whatever goes wrong ends as one quarantined message
    with its reason and ``reason_code``; nothing raises.

    ``unknown`` is the reason given when ``dialect`` is None. With
    ``each=True`` (the file's dialect was detected, not given), a message the
    file's dialect cannot decode is detected on its own and decoded by the
    dialect that claims it: a file that mixes dialects is decoded message by
    message, the file's dialect winning every tie.

    A dialect that ``settles`` (:meth:`cdckit.dialects.base.Dialect.settle`:
    test_decoding's prepared transactions and inferred keys) has the events
    of its source held here until :meth:`finish`, then revised and handed to
    the sink in input order: such a source's events stay in memory until it
    ends (a ``whole_files`` dialect's source is decoded in one piece anyway).
    """

    def __init__(
        self,
        dialect: Dialect | None,
        sink: Sink,
        unknown: str | None = None,
        *,
        each: bool = False,
        tz: str | None = None,
        options: DialectOptions | None = None,
    ) -> None:
        self.dialect = dialect
        self.sink = sink
        self.unknown = unknown or "no dialect recognises this message"
        self.each = each
        self.options = dialect.options if dialect is not None else resolved(options, tz)
        self.tz = self.options.tz
        self._name = dialect.name if dialect is not None else None
        self._all: list[Dialect] | None = None
        self._batch_types: list[tuple] = []
        self._batch_table: pa.Table | None = None
        self._held: list[Decoded] | None = [] if dialect is not None and dialect.settles else None

    # ------------------------------------------------------------ one message

    def message(self, msg: Message) -> None:
        """Decode one message and tell the sink."""
        if msg.value.__class__ is Framed or msg.key.__class__ is Framed:
            msg = unframed(msg, self.options.schemas)
        if msg.error is not None:
            self._bad(msg, self._name, msg.error, msg.code or "damaged_input", None)
            return
        dialect = self.dialect
        first = self._attempt(dialect, msg) if dialect is not None else None
        if dialect is not None and first is not None and first[0] != "bad":
            self._deliver(dialect, msg, first)
            return
        other = self._claimant(msg) if self.each or dialect is None else None
        if other is not None:
            second = self._attempt(other, msg)
            # two instances declared for one stream: neither's last declarations can be trusted now
            other.forget_declarations()
            if dialect is not None:
                dialect.forget_declarations()
            if second[0] != "bad":
                self._deliver(other, msg, second)
                return
            first, dialect = second, other  # the message looks like `other`: its reason says most
        known = _explained(shapes.unsupported_reason, msg.value)
        if known is None and first is None:
            known = _explained(shapes.bare_row_reason, msg.value)
        if known is not None:
            self._bad(msg, self._name if other is None else other.name, known, "unsupported_format", None)
        elif first is None:
            self._bad(msg, None, self.unknown, "unknown_dialect", None)
        else:
            _, reason, code, cause = first
            hint = self.hint(msg) if other is None else ""
            self._bad(msg, None if dialect is None else dialect.name, reason + hint, code, cause)

    def _attempt(self, dialect: Dialect, msg: Message) -> tuple:
        """``("events", events)``, ``("skip", reason)`` or ``("bad", reason, code, cause)``; the column types
        the dialect declared meanwhile go to the sink (whatever became of the message)."""
        outcome = self._outcome(dialect, msg)
        declared = dialect.take_declarations()
        if declared:
            for table, columns, _ in declared:
                self.sink.types(dialect.name, msg.source, msg.offset, table, columns)
        self._given_up(dialect)
        return outcome

    def finish(self) -> None:
        """A source's messages are over: what its dialect still holds (see :meth:`Dialect.finish`) is
        quarantined."""
        if self.dialect is not None:
            self.dialect.finish()
            self._given_up(self.dialect)
        held = self._held
        if held is None:
            return
        self._held = []
        dialect = self._given()  # a list of held messages only where the dialect settles
        found = dialect.settle(held)
        for decoded in held:
            if decoded.events:
                self.sink.events(decoded.message, decoded.dialect, decoded.events)
            else:
                self.sink.skipped(
                    decoded.message, decoded.dialect, decoded.skip or f"{decoded.dialect}: message without rows"
                )
        keys = found.get("inferred_keys")
        if keys and held:
            self.sink.inferred_keys(held[0].message.source, dialect.name, keys)

    def _given_up(self, dialect: Dialect) -> None:
        """Quarantine the messages ``dialect`` held (counted as skipped when they came) and gave up."""
        for msg, skip_reason, reason in dialect.take_failed():
            self.sink.unskip(msg, dialect.name, skip_reason)
            self.sink.bad(msg, dialect.name, reason, "invalid_message")

    def _outcome(self, dialect: Dialect, msg: Message) -> tuple:
        try:
            events = dialect.decode(msg)
            if not events:
                return ("skip", f"{dialect.name}: message without rows")
            for event in events:
                problem = row_problem(event_row(event))
                if problem is None and event.half not in (None, "before", "after"):
                    problem = f"update half {event.half!r} is neither before nor after"
                if problem is not None:
                    return ("bad", problem, "invalid_value", None)
        except SkipMessage as skip:
            return ("skip", str(skip))
        except BadMessage as bad:
            return ("bad", str(bad), "invalid_message", bad)
        except InvalidValue as err:
            return ("bad", str(err), "invalid_value", err)
        except RecursionError as err:
            return ("bad", "the message nests too deep to decode", "too_deep", err)
        except Exception as err:  # a decoder bug or a shape it did not foresee: quarantine, never stop
            text = str(err)
            code = (
                "too_deep"
                if "Recursion limit" in text
                else "invalid_utf8"
                if "surrogates not allowed" in text
                else "decoder_error"
            )
            return ("bad", f"{type(err).__name__}: {err}", code, err)
        return ("events", events)

    def _deliver(self, dialect: Dialect, msg: Message, outcome: tuple) -> None:
        sink, name = self.sink, dialect.name
        sink.read(name, 1)
        if outcome[0] == "skip":
            sink.skipped(msg, name, outcome[1])
            return
        events = outcome[1]
        if len(events) == 1 and events[0].half is not None:
            sink.half(msg, name, events[0])
        elif self._held is not None:
            self._held.append(Decoded(msg, name, events))
        else:
            sink.events(msg, name, events)

    def _bad(self, msg: Message, dialect: str | None, reason: str, code: str, cause: BaseException | None) -> None:
        self.sink.read(dialect, 1)
        self.sink.bad(msg, dialect, reason, code, cause=cause)

    def _claimant(self, msg: Message) -> Dialect | None:
        """Another dialect whose detector is sure enough that ``msg`` is its own (see :data:`detect.FLOOR`)."""
        for name, match in score_message(msg.value, self._dialects()):
            if match.score < FLOOR:
                return None
            if name != self._name:
                return next(d for d in self._dialects() if d.name == name)
        return None

    def _dialects(self) -> list[Dialect]:
        if self._all is None:
            self._all = registry.all_dialects(options=self.options)
        return self._all

    def hint(self, msg: Message) -> str:
        """`` (it looks like a X message)`` when another dialect explains the message better."""
        if self.dialect is None:
            return ""
        return family_hint(msg.value, self.dialect, self._dialects())


def _explained(explain: Any, value: Any) -> str | None:
    """A reason from ``explain`` (a :mod:`cdckit.dialects.shapes` rule), or None: explaining must never stop a read."""
    try:
        return explain(value)
    except Exception:
        return None
