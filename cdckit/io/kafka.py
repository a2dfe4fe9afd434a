"""A bounded sample of a live Kafka topic, as the kcat ``-J`` lines of its records (extra ``kafka``).

A topic is named by a URL, ``kafka://host:port[,host2:port]/topic[?options]``;
its options bound the sample:

- ``partitions=0,2``: read only these partitions (all of them when left out);
- ``start=beginning`` (the default), ``start=end`` (only what arrives while reading: usually nothing; a record
  stamped before the read began is left out even where the broker's end lags its last records), or a
  time, in milliseconds since the epoch or ISO 8601 (``2024-05-01T12:00:00Z``): the first offset of each
  partition at or after it (``offsets_for_times``), records older than it left out by their timestamp;
- ``offsets=0:10,1:5``: start partition 0 at offset 10 and partition 1 at offset 5 (only these partitions,
  unless ``partitions`` names others, which start at ``start``);
- ``max=N`` (or ``count=N``): stop after N records in all;
- ``timeout=S``: seconds to wait for the broker's answers (10), and for a partition to give anything.

The read stops when every partition read has caught up (librdkafka's partition end, which is right where a
broker's high watermark is not) or the count is reached. It never commits an offset and joins no consumer
group: partitions are assigned, never subscribed, so exploring moves no one's position. Client settings
(SASL, TLS, ``client.id``...) are the client's own configuration, given apart (``kafka_config=`` on
:func:`cdckit.read`, ``-X key=value`` on the command line, as kcat takes them): the URL holds no secret.

Each record becomes the line kcat ``-J`` prints (topic, partition, offset, ``tstype``/``ts``, headers as
``[name, value, ...]``, key, payload), so a topic is read exactly as the same records saved by kcat are
(:mod:`cdckit.io.records` unwraps both). A key or value that is not text, which kcat cannot hold in JSON text
(a framed Avro or Protobuf record, :mod:`cdckit.io.wire_format`, or other bytes that are not UTF-8), is kept
whole in Base64 as ``key_base64`` or ``payload_base64`` instead of ``key`` or ``payload``: cdckit's binary
capture layout, which ``cdckit capture`` writes and every read takes back byte for byte.

>>> spec = parse_kafka_url("kafka://localhost:9092/shop.orders?partitions=0,2&max=100")
>>> spec.brokers, spec.topic, spec.partitions, spec.max
('localhost:9092', 'shop.orders', (0, 2), 100)
>>> print(record_line("t", 0, 7, (1, 1700000000000), b"k", b'{"a":1}', [("h", b"v")]).decode())
{"topic":"t","partition":0,"offset":7,"tstype":"create","ts":1700000000000,"headers":["h","v"],"key":"k",\
"payload":"{\\"a\\":1}"}
"""

from __future__ import annotations

import base64
import time
import uuid
from collections import Counter
from collections.abc import Callable, Generator, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

import orjson

from ..errors import KafkaSourceError
from ..optional import require
from .message import LineBlock, Message
from .records import parse_line

__all__ = [
    "KafkaSpec",
    "PartitionCounts",
    "is_kafka_url",
    "parse_kafka_url",
    "record_line",
    "topic_lines",
    "TopicMessages",
]

#: The options a ``kafka://`` URL may hold.
OPTIONS = ("partitions", "start", "offsets", "max", "count", "timeout")
#: Records asked of the client at once.
BATCH = 10_000
#: Seconds one ask waits for records (it returns sooner with a full batch): short, so that a small sample or the
#: partitions' ends do not wait.
WAIT = 0.1
_TSTYPES = {1: "create", 2: "logappend"}


@dataclass(frozen=True)
class KafkaSpec:
    """What a ``kafka://`` URL names: the brokers, the topic and the sample's bounds."""

    brokers: str
    topic: str
    partitions: tuple[int, ...] | None = None
    start: str | int = "beginning"  #: "beginning", "end" or a time in milliseconds since the epoch
    offsets: dict[int, int] = field(default_factory=dict)
    max: int | None = None
    timeout: float = 10.0
    config: Mapping[str, Any] = field(default_factory=dict)

    @property
    def name(self) -> str:
        """The source's name in the frame, the quarantine and the report: ``kafka://brokers/topic``."""
        return f"kafka://{self.brokers}/{self.topic}"


def is_kafka_url(source: Any) -> bool:
    """True when ``source`` is a ``kafka://`` URL (text).

    >>> is_kafka_url("kafka://b:9092/t"), is_kafka_url("t.jsonl")
    (True, False)
    """
    return isinstance(source, str) and source[:8].lower() == "kafka://"


def parse_kafka_url(url: str, config: Mapping[str, Any] | None = None) -> KafkaSpec:
    """The topic and bounds a ``kafka://`` URL names (see the module's text); ``config``: client settings.

    >>> parse_kafka_url("kafka://b:1/t?offsets=0:10,1:5&start=2024-01-01T00:00:00Z").start
    1704067200000
    >>> parse_kafka_url("kafka://b:1/t?colour=red")
    Traceback (most recent call last):
    ...
    ValueError: kafka://b:1/t?colour=red: unknown option 'colour'; expected partitions, start, offsets, max, \
count, timeout
    """
    parts = urlsplit(url)
    topic = unquote(parts.path.lstrip("/"))
    if not parts.netloc or not topic or "/" in topic:
        raise ValueError(f"{url}: expected kafka://host:port[,host2:port]/topic[?options]")
    if parts.username or parts.password:
        raise ValueError(f"{url}: a kafka:// URL holds no credentials; give them as client settings (-X)")
    query = parse_qs(parts.query, keep_blank_values=True, strict_parsing=False)
    for name in query:
        if name not in OPTIONS:
            raise ValueError(f"{url}: unknown option {name!r}; expected {', '.join(OPTIONS)}")
    one = {name: values[-1] for name, values in query.items()}
    try:
        partitions = tuple(_whole(p) for p in one["partitions"].split(",")) if "partitions" in one else None
        offsets = (
            {_whole(p): _whole(o) for p, o in (pair.split(":") for pair in one["offsets"].split(","))}
            if ("offsets" in one)
            else {}
        )
        count = one.get("max", one.get("count"))
        limit = _whole(count) if count is not None else None
        timeout = float(one.get("timeout", 10.0))
    except ValueError as err:
        raise ValueError(f"{url}: {err}") from None
    if limit is not None and limit < 1 or timeout <= 0:
        raise ValueError(f"{url}: max and timeout must be positive")
    return KafkaSpec(
        parts.netloc, topic, partitions, _start(one.get("start", "beginning"), url), offsets, limit, timeout,
        dict(config or {}),
    )  # fmt: skip


def _whole(text: str) -> int:
    """A whole number of an option, or ValueError naming the text."""
    try:
        return int(text)
    except ValueError:
        raise ValueError(f"{text!r} is not a whole number") from None


def _start(text: str, url: str) -> str | int:
    """``beginning``, ``end`` or a time in milliseconds since the epoch (ISO 8601 text read as UTC when
    it names no zone)."""
    if text in ("beginning", "end"):
        return text
    if text.lstrip("-").isdigit():
        return int(text)
    from datetime import datetime, timezone

    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(f"{url}: start={text!r}: expected beginning, end, milliseconds or an ISO time") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return int(moment.timestamp() * 1000)


# ---------------------------------------------------------------- records to kcat -J lines


def _text(data: bytes | str | None) -> bytes:
    """A JSON text (or null) of bytes as kcat writes them: valid UTF-8 through the JSON encoder, other bytes
    kept as they are with only quotes, backslashes and control characters escaped."""
    if data is None:
        return b"null"
    if isinstance(data, str):
        return orjson.dumps(data)
    try:
        return orjson.dumps(data.decode("utf-8"))
    except UnicodeDecodeError:
        out = data.replace(b"\\", b"\\\\").replace(b'"', b'\\"')
        for code in range(32):
            if bytes((code,)) in out:
                out = out.replace(bytes((code,)), b"\\u%04x" % code)
        return b'"' + out + b'"'


def _field(name: bytes, data: bytes | str | None) -> bytes:
    """``"name":<text>``, or ``"name_base64":"<Base64>"`` for bytes that are not text: a framed key or value
    (Confluent's wire format, its magic byte first) or bytes that are not UTF-8."""
    if isinstance(data, (bytes, bytearray)) and data and (data[0] == 0 or not _is_utf8(data)):
        return b'"%s_base64":"%s"' % (name, base64.b64encode(data))
    return b'"%s":%s' % (name, _text(data))


def _is_utf8(data: bytes | bytearray) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def record_line(
    topic: str,
    partition: int,
    offset: int,
    timestamp: tuple[int, int],
    key: bytes | None,
    value: bytes | None,
    headers: list[tuple[str, bytes | None]] | None,
) -> bytes:
    """The kcat ``-J`` line of one record (``timestamp``: the client's ``(type, milliseconds)``); a key or value
    that is not text is kept whole in Base64, as ``key_base64`` or ``payload_base64`` (the module notes).

    >>> record_line("t", 0, 1, (0, 0), b"\\x00\\x00\\x00\\x00\\x01\\x02", None, None)
    b'{"topic":"t","partition":0,"offset":1,"key_base64":"AAAAAAEC","payload":null}'
    """
    kind, ms = timestamp
    stamp = b',"tstype":"%s","ts":%d' % (_TSTYPES[kind].encode(), ms) if kind in _TSTYPES else b""
    heads = b',"headers":[' + b",".join(_text(n) + b"," + _text(v) for n, v in headers) + b"]" if headers else b""
    return b'{"topic":%s,"partition":%d,"offset":%d%s%s,%s,%s}' % (
        _text(topic), partition, offset, stamp, heads, _field(b"key", key), _field(b"payload", value),
    )  # fmt: skip


class PartitionCounts:
    """The records a sample has read of each partition, and how many it expects of each where the broker
    tells the partitions' ends (:func:`topic_lines` tells it both); what a progress bar and ``cdckit capture``
    show.

    >>> counts = PartitionCounts()
    >>> counts.expect({0: 1500, 1: 20}, limit=None)
    >>> for partition in [0] * 1200 + [1] * 20:
    ...     counts.seen(partition)
    >>> counts.text(), counts.read(), counts.total
    ('p0 1,200 · p1 20', 1220, 1520)
    """

    def __init__(self) -> None:
        self.counts: Counter[int] = Counter()
        self.expected: dict[int, int] | None = None  #: records to come of each partition, where known
        self.limit: int | None = None  #: the sample's count (``max=``)

    def seen(self, partition: int) -> None:
        """One record of ``partition`` read."""
        self.counts[partition] += 1

    def expect(self, remaining: dict[int, int] | None, limit: int | None) -> None:
        """The records to come of each partition read (None: not known), and the sample's count."""
        self.expected, self.limit = remaining, limit
        for partition in remaining or ():
            self.counts[partition] += 0  # shown from the start, at 0

    def read(self) -> int:
        """The records read so far, of all partitions."""
        return sum(list(self.counts.values()))

    @property
    def total(self) -> int | None:
        """The records the sample will read where known: the partitions' ends minus their starts (at most the
        sample's count), else the count, else None."""
        if self.expected is None:
            return self.limit
        known = sum(self.expected.values())
        return known if self.limit is None else min(known, self.limit)

    def text(self) -> str:
        """The records read of each partition, as ``p0 1,200 · p1 1,180``."""
        return " · ".join(f"p{partition} {n:,}" for partition, n in sorted(list(self.counts.items())))


def topic_lines(spec: KafkaSpec, counts: PartitionCounts | None = None) -> Iterator[list[bytes]]:
    """The sample's records as kcat ``-J`` lines, in batches as the client gives them; ``counts`` is told of
    each record kept, and first of the records each partition holds past its start (:class:`PartitionCounts`,
    a progress bar's count).

    Raises :class:`~cdckit.errors.KafkaSourceError` when the broker cannot be reached, the topic or a chosen
    partition does not exist, or a partition gives nothing for ``spec.timeout`` seconds before catching up.
    """
    kafka = require("confluent_kafka", "kafka", what="reading a Kafka topic")
    began = int(time.time() * 1000)  # start=end: what arrives from now on, whatever the broker's end says
    consumer = kafka.Consumer(_client_config(spec))
    try:
        partitions = _partitions(consumer, spec, kafka)
        starts = _within_the_log(consumer, spec, _start_offsets(consumer, spec, partitions, kafka), kafka)
        if counts is not None:
            counts.expect(_remaining(consumer, spec, starts, kafka), spec.max)
        consumer.assign(starts)
        yield from _batches(
            consumer, spec, set(partitions), kafka, None if counts is None else counts.seen, began=began
        )
    finally:
        consumer.close()


def _within_the_log(consumer: Any, spec: KafkaSpec, starts: list[Any], kafka: Any) -> list[Any]:
    """``starts`` with each given offset moved inside its partition's log: one below the first record kept (the
    rest was deleted) starts at that record; one past the last record starts at the end, where the partition has
    caught up at once. Records before a given offset are still left out (:func:`_batches`): a broker whose high
    watermark lags its last records makes the end too early."""
    placed = []
    for start in starts:
        if start.offset < 0:  # the beginning, the end, or no record at or after the start time
            placed.append(start)
            continue
        try:
            low, high = consumer.get_watermark_offsets(start, timeout=spec.timeout, cached=False)
        except kafka.KafkaException as err:
            raise KafkaSourceError(f"cannot find where {spec.name} partition {start.partition} ends: {err}") from None
        placed.append(kafka.TopicPartition(spec.topic, start.partition, max(low, min(start.offset, high))))
    return placed


def _remaining(consumer: Any, spec: KafkaSpec, starts: list[Any], kafka: Any) -> dict[int, int] | None:
    """The records each partition holds past its start, from its watermarks (None where the broker does not
    tell them within the timeout). A broker whose high watermark lags its last records makes it short."""
    remaining = {}
    for start in starts:
        try:
            low, high = consumer.get_watermark_offsets(start, timeout=spec.timeout, cached=False)
        except kafka.KafkaException:
            return None
        first = {kafka.OFFSET_BEGINNING: low, kafka.OFFSET_END: high}.get(start.offset, max(start.offset, low))
        remaining[start.partition] = max(0, high - first)
    return remaining


def _client_config(spec: KafkaSpec) -> dict[str, Any]:
    """The consumer's settings: the caller's, then what a sample needs (no commits, partition ends told)."""
    config: dict[str, Any] = {
        "group.id": f"cdckit-sample-{uuid.uuid4().hex}",  # the client needs one; nothing is ever committed
        "socket.connection.setup.timeout.ms": int(spec.timeout * 1000),
        "auto.offset.reset": "earliest",
        "log_level": 0,  # the client's own log lines (retries...) stay quiet: errors are raised here
        **spec.config,
        "bootstrap.servers": spec.brokers,
        "enable.auto.commit": False,
        "enable.auto.offset.store": False,
        "enable.partition.eof": True,
    }
    return config


def _partitions(consumer: Any, spec: KafkaSpec, kafka: Any) -> list[int]:
    """The partitions to read, checked against the topic's metadata."""
    try:
        meta = consumer.list_topics(spec.topic, timeout=spec.timeout)
    except kafka.KafkaException as err:
        raise KafkaSourceError(
            f"cannot reach the Kafka broker at {spec.brokers} within {spec.timeout:g} s: {err.args[0].str()}"
        ) from None
    topic = meta.topics.get(spec.topic)
    if topic is None or topic.error is not None or not topic.partitions:
        why = topic.error.str() if topic is not None and topic.error is not None else "no partitions"
        raise KafkaSourceError(f"no topic {spec.topic!r} on the Kafka broker at {spec.brokers} ({why})")
    have = sorted(topic.partitions)
    wanted = list(spec.partitions) if spec.partitions is not None else list(spec.offsets) or have
    wanted += [p for p in spec.offsets if p not in wanted and spec.partitions is not None]
    missing = [p for p in wanted if p not in have]
    if missing:
        raise KafkaSourceError(
            f"topic {spec.topic!r} on {spec.brokers} has no partition {', '.join(map(str, missing))} "
            f"(it has {', '.join(map(str, have))})"
        )
    return sorted(set(wanted))


def _start_offsets(consumer: Any, spec: KafkaSpec, partitions: list[int], kafka: Any) -> list[Any]:
    """Where each partition starts: its given offset, else the start (a time through ``offsets_for_times``)."""
    tp = kafka.TopicPartition
    starts = {p: spec.offsets[p] for p in partitions if p in spec.offsets}
    rest = [p for p in partitions if p not in starts]
    if isinstance(spec.start, int) and rest:
        try:
            found = consumer.offsets_for_times([tp(spec.topic, p, spec.start) for p in rest], timeout=spec.timeout)
        except kafka.KafkaException as err:
            raise KafkaSourceError(f"cannot find offsets by time on {spec.brokers}: {err.args[0].str()}") from None
        starts.update({t.partition: t.offset if t.offset >= 0 else kafka.OFFSET_END for t in found})
    else:
        where = kafka.OFFSET_END if spec.start == "end" else kafka.OFFSET_BEGINNING
        starts.update(dict.fromkeys(rest, where))
    return [tp(spec.topic, p, starts[p]) for p in partitions]


def _batches(
    consumer: Any,
    spec: KafkaSpec,
    open_: set[int],
    kafka: Any,
    seen: Callable[[int], None] | None,
    began: int | None = None,
) -> Iterator[list[bytes]]:
    """Batches of lines until every partition of ``open_`` reached its end or ``spec.max`` records were read.

    With ``start=end``, a partition not given an offset keeps only the records stamped at or after ``began``
    (the read's start, in ms): a broker whose high watermark lags its last records (Tansu's is its last batch's
    first offset + 1) puts the end before records it already held, which did not arrive during the read."""
    eof = kafka.KafkaError._PARTITION_EOF
    after = spec.start if isinstance(spec.start, int) else None
    given = spec.offsets
    arrived = began if spec.start == "end" else None
    left = spec.max
    last = time.monotonic()
    while open_ and (left is None or left > 0):
        batch = consumer.consume(min(BATCH, left or BATCH), timeout=min(WAIT, spec.timeout))
        lines: list[bytes] = []
        for msg in batch:
            err = msg.error()
            if err is not None:
                if err.code() == eof:
                    open_.discard(msg.partition())  # caught up: what arrives later is not read
                    consumer.pause([kafka.TopicPartition(spec.topic, msg.partition())])
                    continue
                if err.fatal() or err.code() in (kafka.KafkaError.UNKNOWN_TOPIC_OR_PART, kafka.KafkaError._TRANSPORT):
                    raise KafkaSourceError(f"reading {spec.name} failed: {err.str()}")
                continue
            if msg.offset() < given.get(msg.partition(), 0):
                continue  # before the offset asked for (the start was moved back to where the log ends)
            stamp = msg.timestamp()
            if after is not None and stamp[0] in _TSTYPES and stamp[1] < after:
                continue  # older than the start time (a broker may answer offsets_for_times loosely)
            if arrived is not None and stamp[0] in _TSTYPES and stamp[1] < arrived and msg.partition() not in given:
                continue  # held before the read began, past an end the broker put too early
            lines.append(
                record_line(
                    spec.topic, msg.partition(), msg.offset(), stamp, msg.key(), msg.value(), msg.headers()
                )
            )  # fmt: skip
            if seen is not None:
                seen(msg.partition())
            if left is not None:
                left -= 1
                if left == 0:
                    break
        if batch:
            last = time.monotonic()
        elif time.monotonic() - last > spec.timeout:
            raise KafkaSourceError(
                f"{spec.name}: partition {', '.join(map(str, sorted(open_)))} gave nothing for {spec.timeout:g} s "
                "before catching up (is the broker still there? raise ?timeout= to wait longer)"
            )
        if lines:
            yield lines


# ---------------------------------------------------------------- the lines as a source's messages


class TopicMessages(Generator[Message, None, None]):
    """A topic's sample as a source's messages, as the lines of a kcat ``-J`` file would give them (offset:
    the record's place in the sample; ``line``: its line in the saved file; the record's own offset and
    partition unwrapped); :meth:`pieces` gives them again from the first, in blocks, for a batch decoder.

    >>> line = b'{"topic":"t","partition":1,"offset":9,"key":"k","payload":"{}"}'
    >>> msgs = TopicMessages("kafka://b/t", iter([[line]]))
    >>> [(m.offset, m.line, m.partition, m.key, m.value) for m in msgs]
    [(9, 1, 1, 'k', {})]
    """

    def __init__(self, name: str, batches: Iterator[list[bytes]]) -> None:
        self.name = name
        self._batches = batches
        self._kept: list[bytes] = []  # lines given as messages, given again by pieces()
        self._queue: list[bytes] = []
        self._at = 0

    def send(self, value: None) -> Message:
        if self._at >= len(self._queue):
            self._queue = next(self._batches)  # StopIteration ends the messages
            self._at = 0
        line = self._queue[self._at]
        self._at += 1
        self._kept.append(line)
        ordinal = len(self._kept) - 1
        return parse_line(line, self.name, ordinal, ordinal + 1)

    def throw(self, typ: Any = None, val: Any = None, tb: Any = None) -> Message:
        raise typ if val is None else val

    def close(self) -> None:
        """Read no more: the client is closed."""
        close = getattr(self._batches, "close", None)
        if close is not None:
            close()

    def pieces(self) -> Iterator[LineBlock]:
        """Every message of the sample from the first, in blocks of lines (those given already, then the rest)."""
        first = self._kept + self._queue[self._at :]
        self._queue, self._at = [], 0
        offset = len(first)
        if first:
            yield LineBlock(0, 1, first)
        for lines in self._batches:
            yield LineBlock(offset, offset + 1, lines)
            offset += len(lines)
