"""One message from its raw form: JSON parsed, and a saved Kafka record unwrapped to the message it carries.

Kafka records saved with their envelope (``kcat -J`` lines with ``key`` and
``payload``, or rows with ``key``/``value``/``topic``/``partition``/``offset``
as Spark writes them) are unwrapped: the message value is the record value,
and its Kafka key, partition and offset are kept. Record objects of a Kafka
client (``value``, ``key``, ``offset``, ``partition``) are read alike.

>>> msg = parse_line(b'{"topic": "t", "partition": 0, "offset": 7, "key": "1", "payload": "{}"}', "<bytes>", 0, 1)
>>> msg.value, msg.key, msg.partition, msg.offset
({}, '1', 0, 7)

``value_message``, ``unwrap_record`` and ``record_object`` are shared by the
modules of :mod:`cdckit.io` (not public).
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import Annotated, Any, overload

import msgspec

from .. import values
from .message import Message, error_message, safe_repr
from .wire_format import framed

__all__ = ["parse_line", "kafka_key", "record_message", "SavedRecord", "saved_records"]


def parse_line(raw: bytes, name: str, offset: int, line: int | None) -> Message:
    """One JSON message from its raw bytes (Kafka records unwrapped; errors kept on the message).

    >>> parse_line(b'{"a": 1,}', "<bytes>", 0, 1).code
    'invalid_json'
    >>> parse_line(b'# Licensed to the ASF', "<bytes>", 0, 1).error[:29], parse_line(b'1}}', "<bytes>", 0, 1).code
    ('a comment line, not a message', 'truncated_json')
    >>> parse_line(b'  "op": "c",', "<bytes>", 0, 1).error[:34]
    'a piece of a cut record, not a who'
    """
    try:
        value = values.loads(raw)
    except (ValueError, RecursionError) as err:
        reason, code = _json_error(err, raw)
        return _placed(error_message(name, offset, reason, code, raw, line), raw)
    return unwrap_record(Message(value, name, offset, raw=raw, line=line))


def _placed(msg: Message, raw: bytes) -> Message:
    """A kcat ``-J`` line whose key or payload bytes are not UTF-8 (kcat writes them as they are) quarantined at
    its record's partition and Kafka offset, read from the rest of the line: the record arrived there.

    >>> line = b'{"topic":"t","partition":2,"offset":7,"key":null,"payload":"' + bytes([255]) + b'"}'
    >>> msg = parse_line(line, "f", 5, 5)
    >>> msg.code, msg.partition, msg.offset
    ('invalid_utf8', 2, 7)
    """
    if msg.code != "invalid_utf8" or not raw.lstrip()[:9] == b'{"topic":':
        return msg
    try:
        record = values.loads(raw.decode("utf-8", "replace"))
    except (ValueError, RecursionError):
        return msg
    if not isinstance(record, dict) or record.get("offset") is None:
        return msg
    if _position_problem(record.get("offset"), record.get("partition")) is None:
        msg.offset, msg.partition = record["offset"], record.get("partition")
    return msg


#: The place orjson gives in a text of one line: its line is always 1, which beside the message's own line in
#: the file (``(line 9)``) reads as a contradiction; the column is what places the fault.
_FIRST_LINE_PLACE = re.compile(r"line 1 column (\d+) \(char \d+\)")


def _json_error(err: Exception, raw: bytes) -> tuple[str, str]:
    """The reason and ``reason_code`` of a message that is not JSON.

    >>> _json_error(ValueError("unexpected character: line 1 column 16 (char 15)"), b'{"a": 1, "b": x}')
    ('invalid JSON: unexpected character at column 16', 'invalid_json')
    """
    text = str(err)
    if b"\n" not in raw.rstrip(b"\r\n"):
        text = _FIRST_LINE_PLACE.sub(r"at column \1", text).replace(": at column", " at column")
    if "UTF-8" in text or "surrogate" in text:
        return f"invalid UTF-8: {text}", "invalid_utf8"
    if "depth" in text or isinstance(err, RecursionError):
        return f"nested deeper than the JSON parser allows: {text}", "too_deep"
    if raw.strip() and raw.count(b"{") + raw.count(b"[") > raw.count(b"}") + raw.count(b"]"):
        return f"truncated JSON: {text}", "truncated_json"
    start = raw.lstrip(b"\xef\xbb\xbf \t\r\n")[:2]
    if start[:1] in (b"#", b"*") or start in (b"--", b"//", b"/*"):
        return f"a comment line, not a message (invalid JSON: {text})", "invalid_json"
    if (start[:1] not in (b"{", b"[", b'"') and raw.rstrip()[-1:] in (b"}", b"]")) or (
        start[:1] == b'"' and b'":' in raw
    ):
        return f"a piece of a cut record, not a whole message (invalid JSON: {text})", "truncated_json"
    return f"invalid JSON: {text}", "invalid_json"


def _payload_message(item: str | bytes, name: str, offset: int, **extra: Any) -> Message:
    """A message from one payload: JSON when it looks like JSON, else a text line."""
    if isinstance(item, str) and not item.isascii():
        try:
            item.encode("utf-8")
        except UnicodeEncodeError as err:
            return error_message(
                name,
                offset,
                f"the text holds a lone surrogate ({item[err.start]!r} at character {err.start}), not valid UTF-8",
                "invalid_utf8",
                item.encode("utf-8", "backslashreplace").decode("utf-8"),
                extra.get("line"),
            )
    data = item.encode("utf-8") if isinstance(item, str) else item
    found = framed(data) if isinstance(item, bytes) else None
    if found is not None:  # Confluent's wire format: decoded with its schema (cdckit.io.schema_book)
        msg = Message(found, name, offset, raw=data)
    elif data.lstrip()[:1] in (b"{", b"[", b'"') or data.strip() in (b"null", b"true", b"false"):
        msg = parse_line(data.strip(), name, offset, None)
    elif isinstance(item, str):
        msg = Message(item.rstrip("\r\n"), name, offset, raw=item)
    else:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            text = data.decode("latin-1")
        msg = Message(text.rstrip("\r\n"), name, offset, raw=text)
    for attr, value in extra.items():
        setattr(msg, attr, value)
    return msg


# ---------------------------------------------------------------- Kafka records

#: The fields of a saved Kafka record: a dict holding any other key is a message, not a record.
_RECORD_FIELDS = frozenset(
    {
        "topic",
        "partition",
        "offset",
        "timestamp",
        "timestampType",
        "tstype",
        "ts",
        "broker",
        "key",
        "value",
        "payload",
        "headers",
        "key_error",
        "payload_error",
        "key_base64",
        "payload_base64",
    }
)


def may_be_record(keys: Any) -> bool:
    """True when an object of these keys may be a saved Kafka record (:func:`unwrap_record` may unwrap it).

    >>> may_be_record(["topic", "value"]), may_be_record(["id", "value"])
    (True, False)
    """
    return set(keys) <= _RECORD_FIELDS


def unwrap_record(msg: Message) -> Message:
    """Unwrap a saved Kafka record (kcat ``-J`` or key/value/offset rows); any other message is kept.

    A record counts only when it has a body (``payload`` or ``value``) and one
    of ``topic``, ``partition``, ``offset``, ``key``.
    """
    record = msg.value
    if not isinstance(record, dict) or not record.keys() <= _RECORD_FIELDS:
        return msg
    body = next((name for name in ("payload", "value", "payload_base64") if name in record), None)
    if body is None or not ({"key", "key_base64", "offset", "partition", "topic"} & record.keys()):
        return msg
    try:
        value = _base64_field(record, body)
        key = _base64_field(record, "key_base64") if "key_base64" in record else record.get("key")
    except ValueError as err:
        undecoded = error_message(
            msg.source, msg.offset, str(err), "invalid_value", msg.raw or safe_repr(record), msg.line
        )
        if _position_problem(record.get("offset"), record.get("partition")) is None:  # held at its record's place
            undecoded.offset = msg.offset if record.get("offset") is None else record["offset"]
            undecoded.partition = record.get("partition")
        return undecoded
    inner = value_message(value, msg.source, msg.offset, msg.line)
    if inner is None:
        return msg
    inner.key = kafka_key(key)
    bad = _position_problem(record.get("offset"), record.get("partition"))
    if bad is not None:
        return error_message(msg.source, msg.offset, bad, "invalid_value", msg.raw or safe_repr(record), msg.line)
    if record.get("offset") is not None:
        inner.offset = record["offset"]
    if record.get("partition") is not None:
        inner.partition = record["partition"]
    if record.get("topic").__class__ is str:
        inner.topic = record["topic"]
    if msg.raw is not None:
        inner.raw = msg.raw
    return inner


def _base64_field(record: dict[str, Any], name: str) -> Any:
    """A record's field; the bytes of a ``*_base64`` field (cdckit's binary capture layout,
    :mod:`cdckit.io.kafka`), or ValueError saying why they are not Base64."""
    value = record[name]
    if not name.endswith("_base64") or value is None:
        return value
    if not isinstance(value, str):
        raise ValueError(f"the record's {name} is a {type(value).__name__}, not Base64 text")
    try:
        return base64.b64decode(value, validate=True)
    except (ValueError, binascii.Error) as err:
        raise ValueError(f"the record's {name} is not Base64: {err}") from None


def record_object(item: Any, name: str, ordinal: int) -> Message:
    """The message of a Kafka record object (``value``, ``key``, ``offset``, ``partition``, as clients give)."""
    kafka_offset, partition = item.offset, getattr(item, "partition", None)
    bad = _position_problem(kafka_offset, partition, offset_required=True)
    if bad is not None:
        return error_message(name, ordinal, bad, "invalid_value", safe_repr(item.value))
    topic = getattr(item, "topic", None)
    return record_message(
        item.value, getattr(item, "key", None), name, kafka_offset, partition, topic if topic.__class__ is str else None
    )


def _position_problem(offset: Any, partition: Any, offset_required: bool = False) -> str | None:
    """Why a Kafka record's offset or partition is not one (a whole number of 64 bits), or None.

    >>> _position_problem(7, None), _position_problem(None, 0, offset_required=True)
    (None, "the Kafka record's offset is None, not a whole number")
    """
    for what, value, required in (("offset", offset, offset_required), ("partition", partition, False)):
        if value is None and not required:
            continue
        if value.__class__ is int and values.INT64_MIN <= value <= values.INT64_MAX:
            continue
        return f"the Kafka record's {what} is {safe_repr(value)[:40]}, not a whole number"
    return None


def kafka_key(key: Any) -> Any:
    """A Kafka key as a message carries it: JSON parsed when it is a JSON object or array, else text.

    >>> kafka_key(b'{"id": 1}'), kafka_key("k1")
    ({'id': 1}, 'k1')
    """
    if isinstance(key, (bytes, bytearray)):
        found = framed(key)
        if found is not None:
            return found
        key = bytes(key).decode("utf-8", errors="replace")
    if isinstance(key, str) and key.lstrip()[:1] in ("{", "["):
        try:
            key = values.loads(key)
        except ValueError:
            pass
    return key


def record_message(
    value: Any, key: Any, source: str, offset: int, partition: int | None = None, topic: str | None = None
) -> Message:
    """The message of one Kafka record (value and key as bytes, text or None; ``topic`` when known).

    >>> msg = record_message(b'{"op": "c"}', b"7", "topic", 42, 3)
    >>> msg.value, msg.key, msg.offset, msg.partition
    ({'op': 'c'}, '7', 42, 3)
    """
    msg = value_message(value, source, offset)
    if msg is None:
        return error_message(
            source,
            offset,
            f"the Kafka record's value is a {type(value).__name__}, not bytes or text",
            "invalid_message",
            safe_repr(value),
        )
    msg.key = kafka_key(key)
    msg.partition = partition
    msg.topic = topic
    return msg


@overload
def value_message(
    value: str | bytes | bytearray | memoryview | dict | None, source: str, offset: int, line: int | None = None
) -> Message: ...
@overload
def value_message(value: Any, source: str, offset: int, line: int | None = None) -> Message | None: ...


def value_message(value: Any, source: str, offset: int, line: int | None = None) -> Message | None:
    """The message a Kafka record's value carries: JSON or text from bytes or text, a value a client
    (or a kcat line's reader) parsed already, or null; None when the value is anything else."""
    if value is None:
        return Message(None, source, offset, raw="null", line=line)
    if isinstance(value, dict):
        return Message(value, source, offset, line=line)
    if isinstance(value, (str, bytes, bytearray, memoryview)):
        return _payload_message(value if isinstance(value, (str, bytes)) else bytes(value), source, offset, line=line)
    return None


# ---------------------------------------------------------------- saved records read in C (the batch path)

_Position = Annotated[int, msgspec.Meta(ge=values.INT64_MIN, le=values.INT64_MAX)]


class SavedRecord(msgspec.Struct, forbid_unknown_fields=True):
    """One saved Kafka record as the batch path reads it: a kcat ``-J`` line or a Kafka-shaped frame
    whose value is JSON text.

    The same records :func:`unwrap_record` unwraps, read in C: ``payload``
    (kcat) or ``value`` holds the message, ``key`` the Kafka key as text.
    A field left out stays ``UNSET``.
    """

    topic: Any = msgspec.UNSET
    partition: _Position | None | msgspec.UnsetType = msgspec.UNSET
    offset: _Position | None | msgspec.UnsetType = msgspec.UNSET
    key: str | None | msgspec.UnsetType = msgspec.UNSET
    payload: str | None | msgspec.UnsetType = msgspec.UNSET
    value: str | None | msgspec.UnsetType = msgspec.UNSET
    key_base64: str | None | msgspec.UnsetType = msgspec.UNSET
    payload_base64: str | None | msgspec.UnsetType = msgspec.UNSET
    timestamp: Any = None
    timestampType: Any = None
    tstype: Any = None
    ts: Any = None
    broker: Any = None
    headers: Any = None

    def message_bytes(self) -> bytes | None:
        """The message as raw JSON object text, or None when it is anything else (null, text, absent)."""
        body = self.payload if self.payload is not msgspec.UNSET else self.value
        if body.__class__ is not str or body[:1] != "{" or self.key_base64 is not msgspec.UNSET:  # a binary key
            # is decoded with its schema, on the slow path
            return None
        return body.encode()

    def key_text(self) -> str | None:
        return None if self.key is msgspec.UNSET else self.key

    def topic_text(self) -> str | None:
        return self.topic if self.topic.__class__ is str else None


_SAVED_RECORD = msgspec.json.Decoder(SavedRecord)


def saved_records(lines: list[bytes]) -> list[SavedRecord | None] | None:
    """The lines of a block as saved Kafka records (None for a line that is not one), or None at once
    when the first line is not one: the block is not a saved-records file.

    A record counts only when it has a body (``payload`` or ``value``) and one
    of ``topic``, ``partition``, ``offset``, ``key``, as for :func:`unwrap_record`.

    >>> saved = saved_records([b'{"topic": "t", "partition": 0, "offset": 7, "key": null, "payload": "{}"}'])
    >>> saved[0].offset, saved[0].message_bytes()
    (7, b'{}')
    """
    decode, unset = _SAVED_RECORD.decode, msgspec.UNSET
    out: list[SavedRecord | None] = []
    for line in lines:
        try:
            record = decode(line)
        except (msgspec.DecodeError, msgspec.ValidationError, UnicodeDecodeError, RecursionError):  # the slow
            # path says why (msgspec gives up on very deep nesting with RecursionError)
            record = None
        if record is not None and (
            record.payload is unset
            and record.value is unset
            and record.payload_base64 is unset
            or (record.topic is unset and record.partition is unset and record.offset is unset and record.key is unset)
        ):
            record = None
        if record is None and not out:
            return None
        out.append(record)
    return out
