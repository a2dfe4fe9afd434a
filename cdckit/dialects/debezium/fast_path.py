"""The batch decoder of Debezium (the fast path): many raw JSON lines at once, through msgspec.

:class:`DebeziumFastPath` adds :meth:`~DebeziumFastPath.decode_lines` to the
one-message decoder (:class:`~.decode.DebeziumDecoder`). The images stay raw
JSON text when nothing in them needs typing; a schema block is read once per
distinct text; any message of a shape not foreseen here is handed back
(None) to :meth:`~.decode.DebeziumDecoder.decode`.

Kept whole: the batch loop of Debezium, one concept: which messages of a block it reads and how (one msgspec
call for a block of bare messages, line by line for any other) and which it hands back. The shapes it reads
(:mod:`.batch_view`) and the columns it builds from them (:mod:`.batch_columns`) are modules of their own.

>>> line = (b'{"op":"c","after":{"id":1},"source":{"db":"shop","table":"t","ts_ms":1,'
...         b'"file":"mysql-bin.000001","pos":4,"row":0},"ts_ms":2}')
>>> row, = DebeziumFastPath().decode_lines([line])
>>> row.op, row.table, row.seq, row.after
('insert', 't', 'mysql-bin.000001:00000000000000000004:00000000000000000000', '{"id":1}')
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import compress, repeat
from typing import Any

import msgspec
import pyarrow as pa

from ... import values
from ...frame import TABLE_ROW, FastRow, columns_table
from ...io import kafka_key
from ...row_images import key_of
from . import naming
from .batch_columns import (
    block_images,
    fast_rows,
    json_array,
    placed,
    raw_image_text,
    record_branch,
    seq_positions,
    times,
)
from .batch_view import (
    EMPTY_SOURCE,
    ENVELOPE,
    HAND_BACK,
    KEY_PAYLOAD,
    NO_SCHEMA,
    NULL,
    PAYLOAD,
    PAYLOADS,
    PLAIN,
    PLAIN_KEY,
    PLAINS,
    WRAPPED,
    WRAPPED_KEY,
    Envelope,
    KnownSchema,
    SchemaPlan,
)
from .decode import DebeziumDecoder
from .envelope import OPS, field_types, kafka_payload, source_time

__all__ = ["DebeziumFastPath"]


class DebeziumFastPath(DebeziumDecoder):
    """:class:`~.decode.DebeziumDecoder` with the batch decoder (the base of
    :class:`~cdckit.dialects.debezium.Debezium`)."""

    has_line_decoder = True
    uses_kafka_key = True
    uses_kafka_topic = True

    def decode_lines(
        self, lines: list[bytes], keys: list | None = None, topics: list | None = None
    ) -> Sequence[tuple | None]:
        """Change events of many raw messages at once, through msgspec with the images kept raw.

        ``keys`` are the messages' Kafka keys as text (None: no key), ``topics`` their Kafka topics (None:
        unknown; they name a table's namespace where the record does not, see :mod:`.naming`). The
        images are not parsed when nothing in them needs typing: their JSON
        text is taken as it stands (after checking it holds no number a double
        could not carry and, when a schema is included, that no column the
        schema types holds text). A schema block is read once per distinct
        text (:meth:`_plan`). Everything else (tombstones, transaction
        markers, schema changes, unknown fields, bad JSON) is handed back to
        :meth:`decode`. The result for each message equals what :meth:`decode`
        gives, with images compared as parsed JSON.
        """
        plain = self._plain()
        if not all(plain):
            return self._line_by_line(lines, keys, plain, topics=topics)
        kept, columns = self._plain_columns(lines, keys, topics)
        out: list[Any] = [None] * len(lines)
        for index, row in zip(kept, fast_rows(columns)):
            out[index] = row
        return self._handed_back(out, lines, keys, topics, plain)

    def decode_columns(
        self, lines: list[bytes], keys: list | None = None, topics: list | None = None
    ) -> tuple[list[Any], pa.Table | None]:
        """:meth:`decode_lines` with the usual messages' events as one Arrow table: ``(results, table)``,
        where each result that is :data:`~cdckit.frame.TABLE_ROW` is the next row of ``table`` (an
        :func:`~cdckit.frame.event_table`), the others as :meth:`decode_lines` gives them.

        >>> line = b'{"op":"c","after":{"id":1},"source":{"table":"t"}}'
        >>> results, table = DebeziumFastPath().decode_columns([line, b'[]'])
        >>> results[0] is TABLE_ROW, results[1], table.column("after").to_pylist()
        (True, None, ['{"id":1}'])
        """
        if type(self).decode_lines is not DebeziumFastPath.decode_lines:  # a subclass that reads lines its own way
            return list(self.decode_lines(lines, keys, topics)), None
        plain = self._plain()
        if not all(plain):
            return self._line_by_line(lines, keys, plain, topics=topics), None
        kept, columns = self._plain_columns(lines, keys, topics)
        out: list[Any] = [None] * len(lines)
        try:
            table = columns_table(columns, utf8=("before", "after"))
        except Exception:  # a value the frame cannot hold: the rows, where the decode loop names it
            table = None
            for index, row in zip(kept, fast_rows(columns)):
                out[index] = row
        else:
            if len(kept) == len(lines):
                return [TABLE_ROW] * len(lines), table
            for index in kept:
                out[index] = TABLE_ROW
        return self._handed_back(out, lines, keys, topics, plain), table

    def _plain(self) -> tuple[bool, bool, bool]:
        """Whether this class types images, names key columns, and reads positions and names as
        :class:`~.decode.DebeziumDecoder` does (the batch loop assumes so)."""
        cls = type(self)
        return (
            cls.typed_image is DebeziumDecoder.typed_image,
            cls.key_columns is DebeziumDecoder.key_columns,
            cls.position is DebeziumDecoder.position
            and cls.schema_name is DebeziumDecoder.schema_name
            and cls.table_namespace is DebeziumDecoder.table_namespace,
        )

    def _handed_back(
        self, out: list[Any], lines: list[bytes], keys: list | None, topics: list | None, plain: tuple[bool, bool, bool]
    ) -> list[Any]:
        """``out`` with the lines the batch loop left out (None) decoded by :meth:`_line_by_line`."""
        if None not in out:
            return out
        missed = [index for index, result in enumerate(out) if result is None]
        again = self._line_by_line(
            [lines[i] for i in missed],
            None if keys is None else [keys[i] for i in missed],
            plain,
            missed,
            None if topics is None else [topics[i] for i in missed],
        )
        for index, result in zip(missed, again):
            out[index] = result
        return out

    def _line_by_line(
        self,
        lines: list[bytes],
        keys: list | None,
        plain: tuple[bool, bool, bool],
        indexes: list[int] | None = None,
        topics: list | None = None,
    ) -> list[FastRow | None]:
        """:meth:`decode_lines` one line at a time, for every shape the batch decoder takes on (``indexes``:
        the lines' places in the batch, where column types are declared; by default their own)."""
        decode = ENVELOPE.decode
        out: list[FastRow | None] = []
        append = out.append
        for index, line in enumerate(lines):
            try:
                envelope = decode(line)
                if envelope.op is None and envelope.payload is not NULL:
                    schema = envelope.schema
                    envelope = decode(envelope.payload)
                    if envelope.payload is not NULL or envelope.schema is not NULL:
                        append(None)
                        continue
                elif envelope.payload is not NULL or envelope.schema is not NULL:
                    append(None)
                    continue
                else:
                    schema = NULL
                append(
                    self._fast_change(
                        envelope,
                        schema,
                        plain,
                        None if keys is None else keys[index],
                        index if indexes is None else indexes[index],
                        None if topics is None else topics[index],
                    )
                )
            except Exception:  # a shape not foreseen here: decode() takes the message and names the problem
                append(None)
        return out

    def _plain_columns(
        self, lines: list[bytes], keys: list | None, topics: list | None = None
    ) -> tuple[list[int], list[list]]:
        """The usual message (bare or in the schema/payload wrapper, MySQL-style position or none, no
        transaction fields, a Kafka key or none) as columns: ``(kept, columns)``, the indexes of the lines
        taken and one list per :data:`~cdckit.frame.EVENT_FIELDS` (a row per kept line). msgspec checks the
        shape (:class:`Plain`, :class:`Wrapped`); the questions about the images are answered for the
        whole block at once (:func:`block_images`). Any other message is left out, for :meth:`_line_by_line`."""
        if keys is None or keys.count(None) == len(keys):
            found = self._block_columns(lines, topics)
            if found is not None:
                return found
        ops, hand_back = OPS, HAND_BACK
        plain_decode, wrapped_decode, payload_decode, plan_of = PLAIN.decode, WRAPPED.decode, PAYLOAD.decode, self._plan
        known, key_names = self.__dict__.setdefault("_known", KnownSchema()), self._key_names
        declare, name_of = self.declare, naming.named
        errors = (msgspec.DecodeError, msgspec.ValidationError, UnicodeDecodeError)
        read: list[tuple] = []  # (index, message, plan, has before, has after) of the lines msgspec took
        images: list[bytes] = []  # their images that are objects, before then after
        null, brace = b"null", b"{"
        before: bytes | None  # a raw image here; its text (or None) in the loop over ``read``
        after: bytes | None
        for index, line in enumerate(lines):
            if line.startswith(b'{"schema"'):  # Kafka Connect writes the wrapper's schema first
                rest = known.rest(line)
                try:
                    if rest is not None:  # the schema of the last message, byte for byte: not read again
                        message, plan = payload_decode(rest).payload, known.plan
                    else:
                        wrapped = wrapped_decode(line)
                        message, plan = wrapped.payload, plan_of(wrapped.schema)
                        known.remember(line, wrapped.schema, plan)
                except errors:
                    continue
                if plan is None:
                    continue
            else:
                try:
                    message = plain_decode(line)
                    plan = None
                except errors:
                    try:
                        wrapped = wrapped_decode(line)
                    except errors:
                        continue
                    message, plan = wrapped.payload, plan_of(wrapped.schema)
                    if plan is None:
                        continue
            before, after = bytes(message.before), bytes(message.after)
            has_before, has_after = before.startswith(brace), after.startswith(brace)
            if not (has_before or before == null) or not (has_after or after == null):
                continue
            if has_before:
                images.append(before)
            if has_after:
                images.append(after)
            read.append((index, message, plan, has_before, has_after))
        texts, parsed = block_images(images, self.unavailable)
        kept: list[int] = []
        rows: list[tuple] = []
        append = rows.append
        names: dict[tuple, tuple] = {}
        at = 0  # the place of the next message's first image in ``images``
        for index, message, plan, has_before, has_after in read:
            before = parsed_before = after = parsed_after = None
            if has_before:
                before, parsed_before = texts[at], parsed[at]
                at += 1
            if has_after:
                after, parsed_after = texts[at], parsed[at]
                at += 1
            if before is hand_back or after is hand_back:
                continue
            op_raw = message.op
            op = ops[op_raw]
            if after is None and op != "delete" or before is None and op == "delete":
                continue
            if plan is not None and not (
                plan.untyped(message.before, "before") and plan.untyped(message.after, "after")
            ):
                continue
            key_columns = key = None
            if keys is not None and keys[index] is not None:
                key_columns = key_names(keys[index])
                if key_columns is hand_back:
                    continue
                if key_columns is not None:
                    key = key_of(parsed_before if op == "delete" else parsed_after, key_columns)
            src = message.source
            file = src.file
            if file is None:
                seq = None
            elif not file or (file.isascii() and file.isdigit()):
                continue
            else:
                seq = f"{file}:{str(src.pos).zfill(20)}:{str(src.row or 0).zfill(20)}"
            # Debezium 2 writes ts_us and ts_ns besides ts_ms: the finest one given wins (source_time, envelope_time)
            ts_ms, emit = src.ts_ms, message.ts_ms
            event_time = (
                src.ts_ns
                if src.ts_ns is not None
                else src.ts_us * 1_000
                if src.ts_us is not None
                else None
                if ts_ms is None
                else ts_ms * 1_000_000
            )
            emit_time = (
                message.ts_ns
                if message.ts_ns is not None
                else message.ts_us * 1_000
                if message.ts_us is not None
                else None
                if emit is None
                else emit * 1_000_000
            )
            # as the connector names the table (the topic may say where the record does not)
            table = src.table
            where = (src.connector, src.db, src.schema, table, None if topics is None else topics[index])
            named = names.get(where)
            if named is None:
                named = names[where] = name_of(*where)
            if plan is not None and plan.declared:
                declare(named[0], named[1], table, plan.declared, index)
            kept.append(index)
            append((op, op_raw, named[0], named[1], table, event_time, emit_time, seq, key_columns, key, before, after))
        nothing = [None] * len(kept)
        columns = [list(column) for column in zip(*rows)] if rows else [[] for _ in range(12)]
        columns.insert(8, nothing)  # txn_id
        columns.append(nothing)  # ddl
        return kept, columns

    def _block_columns(self, lines: list[bytes], topics: list | None) -> tuple[list[int], list[list]] | None:
        """:meth:`_plain_columns` of a block of messages without Kafka keys that are all bare (:class:`Plain`) or
        all in a ``{"payload": ...}`` wrapper: one msgspec call reads the whole block (joined as a JSON array),
        each column is one comprehension. None when the block is of another kind (a message msgspec refuses
        as :class:`Plain` included): :meth:`_plain_columns` then reads it line by line.

        >>> line = b'{"op":"c","after":{"id":1},"source":{"table":"t","file":"f","pos":4}}'
        >>> kept, columns = DebeziumFastPath()._block_columns([line, b'{"op":"d","before":null,"source":{}}'], None)
        >>> kept, columns[4], columns[12]
        ([0], ['t'], [b'{"id":1}'])
        """
        count = len(lines)
        if not count or lines[0].startswith(b'{"schema"'):
            return None
        wrapped = lines[0].startswith(b'{"payload"')
        try:
            block = json_array(lines)
            messages = [wrapper.payload for wrapper in PAYLOADS.decode(block)] if wrapped else PLAINS.decode(block)
        except (msgspec.DecodeError, msgspec.ValidationError, UnicodeDecodeError):
            return None
        if len(messages) != count:  # a line that is not one JSON value
            return None
        before = [bytes(message.before) for message in messages]
        after = [bytes(message.after) for message in messages]
        op_raw = [message.op for message in messages]
        ops = OPS
        op = [ops[raw] for raw in op_raw]
        sources = [message.source for message in messages]
        bad: set[int] = set()  # the lines handed back (to _plain_columns's line-by-line loop, then decode())
        # the images: null (None), an object (its text, see block_images), anything else handed back
        null, brace = b"null", b"{"
        before_given, after_given = list(map(null.__ne__, before)), list(map(null.__ne__, after))
        images = list(compress(before, before_given))
        split = len(images)
        images += compress(after, after_given)
        if not all(map(bytes.startswith, images, repeat(brace))):  # an image neither null nor an object
            bad.update(
                i
                for column in (before, after)
                for i, raw in enumerate(column)
                if raw != null and not raw.startswith(brace)
            )
            images = [raw if raw.startswith(brace) else b"{}" for raw in images]  # its line is left out
        texts = block_images(images, self.unavailable)[0]
        del images
        if texts.count(HAND_BACK):
            places = [*compress(range(count), before_given), *compress(range(count), after_given)]
            bad.update(index for index, text in zip(places, texts) if text is HAND_BACK)
        before, after = placed(before_given, texts[:split]), placed(after_given, texts[split:])
        if len(texts) - split != count:  # only a delete may have no after image, only a delete must have a before
            bad.update(i for i, text in enumerate(after) if text is None and op_raw[i] != "d")
        if "d" in op_raw:
            bad.update(i for i, text in enumerate(before) if text is None and op_raw[i] == "d")
        files = [src.file for src in sources]
        if files.count(None) == count:
            seq = files
        else:
            positions = [src.pos for src in sources]
            if (
                None in files
                or None in positions
                or not all(file and not (file.isascii() and file.isdigit()) for file in set(files))
            ):
                bad.update(
                    i
                    for i, (file, pos) in enumerate(zip(files, positions))
                    if file is not None and (pos is None or not file or (file.isascii() and file.isdigit()))
                )
                files = [None if i in bad else file for i, file in enumerate(files)]
                positions = [0 if pos is None else pos for pos in positions]
            seq = seq_positions(files, positions, [src.row for src in sources])
        event_time = times(
            [src.ts_ms for src in sources], [src.ts_us for src in sources], [src.ts_ns for src in sources]
        )
        emit_time = times([m.ts_ms for m in messages], [m.ts_us for m in messages], [m.ts_ns for m in messages])
        # as the connector names the table (the topic may say where the record does not)
        table = [src.table for src in sources]
        where = list(
            zip(
                [src.connector for src in sources],
                [src.db for src in sources],
                [src.schema for src in sources],
                table,
                topics or [None] * count,
            )
        )
        name_of = naming.named
        names = {place: name_of(*place) for place in set(where)}
        if len(names) == 1:
            ((one_database, one_schema),) = names.values()
            database, schema = [one_database] * count, [one_schema] * count
        else:
            named = [names[place] for place in where]
            database, schema = [n[0] for n in named], [n[1] for n in named]
        nothing = [None] * count
        columns: list[Any] = [
            op,
            op_raw,
            database,
            schema,
            table,
            event_time,
            emit_time,
            seq,
            nothing,
            nothing,
            nothing,
            before,
            after,
            nothing,
        ]
        kept = list(range(count))
        if bad:
            kept = [index for index in kept if index not in bad]
            taken = pa.array(kept, pa.int64())
            columns = [
                column.take(taken) if isinstance(column, pa.Array) else [column[index] for index in kept]
                for column in columns
            ]
        return kept, columns

    def _fast_change(
        self,
        envelope: Envelope,
        schema: msgspec.Raw,
        plain: tuple[bool, bool, bool],
        key_text: Any = None,
        index: int | None = None,
        topic: str | None = None,
    ) -> FastRow | None:
        row = self._fast_row(envelope, schema, plain, key_text, topic)
        plan = None if row is None else self._plan(schema)  # a row is made only where the schema has a plan
        if row is not None and plan is not None and plan.declared:
            self.declare(row.database, row.schema, row.table, plan.declared, index)
        return row

    def _fast_row(
        self,
        envelope: Envelope,
        schema: msgspec.Raw,
        plain: tuple[bool, bool, bool],
        key_text: Any = None,
        topic: str | None = None,
    ) -> FastRow | None:
        op_raw = envelope.op
        op = None if op_raw is None else OPS.get(op_raw)
        if op_raw is None or op is None:
            return None
        plain_images, plain_keys, plain_source = plain
        plan = self._plan(schema)
        if plan is None:
            return None
        seen = self.unavailable.seen
        if (
            envelope.before is not NULL
            and seen(bytes(envelope.before))
            or envelope.after is not NULL
            and seen(bytes(envelope.after))
        ):  # decode() leaves the placeholder's columns out
            return None
        parsed_key = None if key_text is None else kafka_key(key_text)
        keyless = plain_keys and not isinstance(kafka_payload(parsed_key), dict)
        before = after = None
        if (
            plain_images
            and keyless
            and plan.untyped(envelope.before, "before")
            and plan.untyped(envelope.after, "after")
        ):  # the images' text as it stands
            before_text = raw_image_text(envelope.before)
            after_text = raw_image_text(envelope.after)
        else:
            before_text = after_text = HAND_BACK
        if before_text is HAND_BACK or after_text is HAND_BACK:
            before_text, before = self._fast_image(envelope.before, plan.types, "before")
            after_text, after = self._fast_image(envelope.after, plan.types, "after")
            if before_text is HAND_BACK or after_text is HAND_BACK:
                return None
        if after_text is None and op in ("insert", "read") or before_text is None and op == "delete":
            return None
        if keyless:
            key_columns = key = None
        else:
            key_columns = self.key_columns(parsed_key, before, after)
            key = key_of(before if op == "delete" else after, key_columns)
        emit_time = envelope.ts_ms
        if envelope.ts_ns is not None:
            emit_time = envelope.ts_ns
        elif envelope.ts_us is not None:
            emit_time = envelope.ts_us * 1_000
        elif emit_time is not None:
            emit_time *= 1_000_000
        src = envelope.source or EMPTY_SOURCE
        txn_id = None
        txn = envelope.transaction
        if txn and txn.get("id") not in (None, ""):
            txn_id = str(txn["id"])
        elif src.txId is not None or src.gtid is not None or src.xid is not None:
            found = src.txId if src.txId not in (None, "") else src.gtid if src.gtid not in (None, "") else src.xid
            txn_id = None if found in (None, "") else str(found)
        # The common cases inline; anything else through the same helpers as decode().
        ts_ms, file, pos, row = src.ts_ms, src.file, src.pos, src.row or 0
        table = src.table or src.collection
        if plain_source:
            named = naming.named(naming.connector_of(src.connector, src.lsn, src.scn), src.db, src.schema, table, topic)
        if plain_source and src.ts_ns is None and src.ts_us is None and (ts_ms is None or ts_ms.__class__ is int):
            if (
                pos.__class__ is int
                and row.__class__ is int
                and file.__class__ is str
                and pos >= 0
                and row >= 0
                and file
                and not (file.isascii() and file.isdigit())
            ):
                return FastRow(
                    op,
                    op_raw,
                    named[0],
                    named[1],
                    table,
                    None if ts_ms is None else ts_ms * 1_000_000,
                    emit_time,
                    f"{file}:{str(pos).zfill(20)}:{str(row).zfill(20)}",
                    txn_id,
                    key_columns,
                    key,
                    before_text,
                    after_text,
                    src.query if op_raw == "t" else None,
                )
            if (
                file is None
                and pos is None
                and src.lsn is None
                and src.change_lsn is None
                and src.commit_lsn is None
                and src.scn is None
                and src.ord is None
            ):
                return FastRow(
                    op,
                    op_raw,
                    named[0],
                    named[1],
                    table,
                    None if ts_ms is None else ts_ms * 1_000_000,
                    emit_time,
                    None,
                    txn_id,
                    key_columns,
                    key,
                    before_text,
                    after_text,
                    src.query if op_raw == "t" else None,
                )
        source = msgspec.structs.asdict(src)
        db, source_schema = src.db, self.schema_name(source)
        names = self.table_namespace(source, db, source_schema, table, topic) or (db, source_schema)
        return FastRow(
            op,
            op_raw,
            names[0],
            names[1],
            table,
            source_time(source),
            emit_time,
            self.position(source),
            txn_id,
            key_columns,
            key,
            before_text,
            after_text,
            src.query if op_raw == "t" else None,
        )

    def _fast_image(self, raw: msgspec.Raw, types: dict, which: str) -> tuple[Any, Any]:
        """``(JSON text, parsed image)`` of a raw image typed as :meth:`typed_image` types it.

        ``(None, None)`` for a null image, ``(HAND_BACK, None)`` for one that is not an object.
        """
        if raw is NULL:
            return None, None
        data = bytes(raw)
        if data == b"null":
            return None, None
        if data[:1] != b"{" or record_branch(data):
            return HAND_BACK, None
        row = self.typed_image(values.loads(data), types.get(which), which)
        return values.image(row), row

    def _key_names(self, text: Any) -> Any:
        """The key columns a Kafka key (JSON text) names, as :meth:`key_columns` takes them; ``HAND_BACK``
        for a key of another shape. A key schema repeated byte for byte is skipped (:class:`KnownSchema`)."""
        data = text.encode() if text.__class__ is str else text
        known = self.__dict__.setdefault("_known_key", KnownSchema())
        try:
            rest = known.rest(data)
            if rest is not None:
                payload = KEY_PAYLOAD.decode(rest).payload
            else:
                try:
                    wrapped = WRAPPED_KEY.decode(data)
                    payload = wrapped.payload
                    known.remember(data, wrapped.schema, None)
                except msgspec.ValidationError:
                    payload = PLAIN_KEY.decode(data)
        except (msgspec.DecodeError, msgspec.ValidationError, TypeError, UnicodeEncodeError):
            return HAND_BACK
        return list(payload) if payload else None

    def _plan(self, schema: msgspec.Raw) -> SchemaPlan | None:
        """The :class:`SchemaPlan` of a raw envelope schema, made once per distinct schema text
        (None for a schema :func:`field_types` cannot read)."""
        if schema is NULL:
            return NO_SCHEMA
        data = bytes(schema)
        last = self.__dict__.get("_last_plan")
        if last is not None and last[0] == data:  # a topic's messages repeat one schema: no hashing
            return last[1]
        cache = self.__dict__.setdefault("_plans", {})
        found = cache.get(data, HAND_BACK)
        if found is HAND_BACK:
            if len(cache) >= 256:
                cache.clear()
            try:
                found = SchemaPlan(field_types(values.loads(data)))
            except Exception:  # a schema decode() would stumble on: it takes these messages and says why
                found = None
            cache[data] = found
        self.__dict__["_last_plan"] = (data, found)
        return found
