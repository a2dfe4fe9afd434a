"""Avro object container files (extra ``avro``: ``fastavro``), as Kafka Connect's S3/GCS sinks write them.

A container file starts with ``Obj\\x01``, its writer schema in the header, then
blocks of records, each followed by the file's sync marker. Each record becomes a
message whose value is ``{"schema": <Connect schema>, "payload": <value>}``, exactly
what a framed Kafka record of the same schema gives (:mod:`cdckit.io.avro_connect`:
logical types left off, bytes as Base64), so a dialect reads it as if it had been
captured through the JSON converter.

The sink names its files ``<topic>+<partition>+<startOffset>.avro`` (the start
offset zero-padded, ``filename.offset.zero.pad.width``): the messages get that topic
and partition, and offsets from the start offset on. With ``store.kafka.keys=true``
the keys sit beside it in ``<topic>+<partition>+<startOffset>.keys.avro``: record
``i``'s key is the key of value ``i``. Other names: offsets from 0, no partition.

A damaged file (a bad magic, a block cut short, a sync marker that does not match)
keeps every record before the damage, then one quarantined message (code
``damaged_container``) stands for the rest; nothing is raised.

>>> import io, fastavro
>>> schema = {"type": "record", "name": "Value", "fields": [{"name": "id", "type": "int"}]}
>>> out = io.BytesIO()
>>> fastavro.writer(out, schema, [{"id": 1}, {"id": 2}])
>>> _ = out.seek(0)
>>> [(m.topic, m.partition, m.offset, m.value["payload"]) for m in avro_messages(out, "t+3+0000000040.avro")]
[('t', 3, 40, {'id': 1}), ('t', 3, 41, {'id': 2})]
"""

from __future__ import annotations

import os
import re
from collections.abc import Generator, Iterator
from typing import IO, Any, NamedTuple

from .message import Message, error_message
from .streams import damage_of

__all__ = ["MAGIC", "SinkName", "sink_name", "avro_messages", "keys_file", "is_sibling"]

#: The first bytes of an Avro object container file.
MAGIC = b"Obj\x01"
_SINK_NAME = re.compile(r"^(?P<topic>.+)\+(?P<partition>\d+)\+(?P<offset>\d+)(?P<part>\.keys|\.headers)?\.avro$")


class SinkName(NamedTuple):
    """What a sink's file name says: the topic, the Kafka partition, the first record's offset, and which part
    of the records the file holds (``values``, ``keys`` or ``headers``)."""

    topic: str
    partition: int
    offset: int
    part: str


def sink_name(path: str) -> SinkName | None:
    """What a Kafka Connect storage sink's file name says (``.gz`` aside), or None for another name.

    >>> sink_name("topics/pg.public.t/partition=0/pg.public.t+0+0000000120.keys.avro")
    SinkName(topic='pg.public.t', partition=0, offset=120, part='keys')
    >>> sink_name("out.avro") is None
    True
    """
    found = _SINK_NAME.match(os.path.basename(path).removesuffix(".gz"))
    if found is None:
        return None
    part = (found["part"] or ".values")[1:]
    return SinkName(found["topic"], int(found["partition"]), int(found["offset"]), part)


def keys_file(path: str) -> str | None:
    """The keys file beside a sink's values file, when there is one.

    >>> keys_file("/no/such/t+0+0000000000.avro") is None
    True
    """
    name = sink_name(path)
    if name is None or name.part != "values":
        return None
    base = os.path.basename(path)
    suffix = ".avro.gz" if base.endswith(".gz") else ".avro"
    for candidate in (base[: -len(suffix)] + ".keys" + suffix, base[: -len(suffix)] + ".keys.avro"):
        keys = os.path.join(os.path.dirname(path), candidate)
        if os.path.isfile(keys):
            return keys
    return None


def is_sibling(path: str, paths: set[str]) -> bool:
    """True for a sink's keys or headers file whose values file is among ``paths`` (read with it, not alone).

    >>> is_sibling("d/t+0+0000000000.keys.avro", {"d/t+0+0000000000.avro"}), is_sibling("d/x.keys.avro", set())
    (True, False)
    """
    name = sink_name(path)
    if name is None or name.part == "values":
        return False
    base = path.removesuffix(".gz")[: -len(f".{name.part}.avro")]
    return f"{base}.avro" in paths or f"{base}.avro.gz" in paths


class AvroDamage(ValueError):
    """Where and why an Avro container file cannot be read on."""


def avro_messages(stream: IO[bytes], name: str, keys: IO[bytes] | None = None) -> Iterator[Message]:
    """The messages of an Avro container file (``keys``: the sink's keys file beside it, paired by index);
    damage ends them with one quarantined message (:func:`damage_message`), never an exception."""
    named = sink_name(name)
    topic, partition, offset = (named.topic, named.partition, named.offset) if named else (None, None, 0)
    key_values = _keys(keys) if keys is not None else None
    try:
        values = _records(stream)
        layout = next(values)
        for value in values:
            msg = Message(value, name, offset, partition=partition, topic=topic, layout=layout)
            if key_values is not None:
                msg.key = next(key_values, None)
            yield msg
            offset += 1
    except AvroDamage as err:
        yield damage_message(name, offset, _gzip_damage(stream) or str(err))
    except Exception as err:  # an I/O error, a codec's library missing or failing
        yield damage_message(name, offset, _gzip_damage(stream) or f"{type(err).__name__}: {err}")
    finally:
        if key_values is not None:
            key_values.close()
        if keys is not None:
            keys.close()  # also where the keys' reading never started


def _gzip_damage(stream: IO[bytes]) -> str | None:
    """Why a gzip file ended early, when the Avro file inside it was cut short by that."""
    found = damage_of(stream)
    return None if found is None else f"the gzip file around it is damaged: {found}"


def _keys(stream: IO[bytes]) -> Generator[Any, None, None]:
    """The keys of a sink's keys file, in order; none more after damage (their values are read without keys)."""
    try:
        with stream:
            records = _records(stream)
            next(records)
            yield from records
    except Exception:  # damaged: the values after it are read without keys
        return


def _records(stream: IO[bytes]) -> Iterator[Any]:
    """The layout (what detection shows), then each record's ``{"schema", "payload"}``: fastavro's
    ``block_reader`` reads the header, the blocks, their codecs and sync markers, and each block's records are
    decoded by the same :class:`~cdckit.io.avro_connect.AvroDecoder` as framed records."""
    import fastavro

    from .avro_connect import AvroDecoder

    magic = _first_bytes(stream, len(MAGIC))  # fastavro reads the magic bytes without checking them
    if magic is not None and magic != MAGIC:
        raise AvroDamage(f"the file starts with {magic!r}, not Avro's magic {MAGIC!r}")
    try:
        blocks = fastavro.block_reader(stream)
        decoder = AvroDecoder(blocks.writer_schema)
    except Exception as err:  # fastavro's reading of the header: cut short, a schema it cannot parse
        raise AvroDamage(f"the header cannot be read ({type(err).__name__}: {err})") from None
    connect = decoder.connect_schema
    yield "Avro object container file" + (f" (record {decoder.name})" if decoder.name else "")
    number = 0
    while True:
        try:
            block = next(blocks, None)
            if block is None:
                return
            payloads = decoder.read_many(block.bytes_.getvalue(), block.num_records)  # type: ignore[attr-defined]
        except Exception as err:  # a block cut short, a sync marker that does not match, a codec's failure
            raise AvroDamage(f"block {number} cannot be read ({type(err).__name__}: {err})") from None
        for payload in payloads:
            yield {"schema": connect, "payload": payload}
        number += 1


def _first_bytes(stream: IO[bytes], count: int) -> bytes | None:
    """The first ``count`` bytes of ``stream``, which is left where it was (None when it cannot seek back)."""
    try:
        start = stream.tell()
        head = stream.read(count)
        stream.seek(start)
    except (OSError, ValueError):
        return None
    return head


def damage_message(name: str, offset: int, why: str, raw_name: str | None = None) -> Message:
    """The one quarantine entry of a damaged container file (``offset``: the next record's)."""
    named = sink_name(name)
    kept = offset - (named.offset if named else 0)
    msg = error_message(
        name,
        offset,
        f"damaged avro file: {why}; the {kept} message(s) before the damage are kept",
        "damaged_container",
        raw=f"<damaged avro file: the rest of {raw_name or name} is unreadable>",
    )
    if named is not None:
        msg.topic, msg.partition = named.topic, named.partition
    return msg
