r"""What a source names: paths, globs, directories, ``str``/``bytes`` payloads or iterables of messages.

>>> [(m.offset, m.value) for name, msgs in iter_sources('{"a": 1}\n{"a": 2}\n') for m in msgs]
[(0, {'a': 1}), (1, {'a': 2})]
>>> [m.value for name, msgs in iter_sources([{"a": 1}, "op=c"]) for m in msgs]
[{'a': 1}, 'op=c']
>>> [(name, list(msgs)) for name, msgs in iter_sources("")]
[('<string>', [])]
"""

from __future__ import annotations

import glob
import os
from collections.abc import Generator, Iterable, Iterator
from pathlib import Path
from typing import Any

from .avro_files import is_sibling
from .console import console_message
from .files import file_messages, stream_messages_guarded
from .kafka import KafkaSpec, PartitionCounts, TopicMessages, is_kafka_url, parse_kafka_url, topic_lines
from .message import Message, safe_repr
from .records import record_object, unwrap_record, value_message
from .sniff import CONTAINERS
from .streams import payload_stream

__all__ = ["iter_sources", "expand_paths", "looks_like_payload"]


def iter_sources(
    source: Any, container: str | None = None, key_separator: str | None = None, counts: PartitionCounts | None = None
) -> Iterator[tuple[str, Generator[Message, None, None]]]:
    """Yield ``(source name, messages)`` for each file or payload in ``source``.

    ``source`` may be a path (file, directory or glob), a list of
    ``pathlib.Path`` objects (read one after another), a ``str``/``bytes``
    payload, or an iterable of messages (``str``, ``bytes``, ``dict`` or Kafka
    record objects with ``value``/``key``/``offset``/``partition``).
    ``container`` forces one of :data:`CONTAINERS` instead of sniffing.
    Lines ``kafka-console-consumer`` printed with their keys are read as the
    records they show (:mod:`cdckit.io.console`; ``key_separator`` is its
    ``key.separator``, a tab when None). A ``kafka://host:port/topic`` URL (or its
    :class:`~cdckit.io.kafka.KafkaSpec`) is a sample of a live topic, read as its kcat ``-J`` lines
    (:mod:`cdckit.io.kafka`); ``counts`` is told of its records of each partition (a progress bar's).
    """
    if container is not None and container not in CONTAINERS:
        raise ValueError(f"unknown container {container!r}; expected one of {', '.join(CONTAINERS)}")
    if isinstance(source, KafkaSpec) or is_kafka_url(source):
        spec = source if isinstance(source, KafkaSpec) else parse_kafka_url(source)
        yield spec.name, TopicMessages(spec.name, topic_lines(spec, counts))
    elif isinstance(source, os.PathLike):
        yield from _path_sources([os.fspath(source)], container, key_separator)
    elif isinstance(source, (list, tuple)) and source and all(isinstance(s, os.PathLike) for s in source):
        yield from _path_sources([os.fspath(spec) for spec in source], container, key_separator)  # one capture
    elif isinstance(source, str):
        if looks_like_payload(source):
            data = source.encode("utf-8", "surrogatepass")  # a lone surrogate becomes invalid UTF-8, quarantined
            yield (
                "<string>",
                stream_messages_guarded(payload_stream(data), "<string>", container, key_separator=key_separator),
            )
        else:
            yield from _path_sources([source], container, key_separator)
    elif isinstance(source, (bytes, bytearray)):
        yield (
            "<bytes>",
            stream_messages_guarded(payload_stream(bytes(source)), "<bytes>", container, key_separator=key_separator),
        )
    elif isinstance(source, dict):
        yield "<iterable>", _iterable_messages([source], key_separator)
    else:
        try:
            items = iter(source)
        except TypeError:
            raise TypeError(
                f"cannot read a {type(source).__name__}: pass a path, a str/bytes payload or an iterable of messages"
            ) from None
        yield "<iterable>", _iterable_messages(items, key_separator)


def _path_sources(
    specs: list[str], container: str | None, key_separator: str | None
) -> Iterator[tuple[str, Generator[Message, None, None]]]:
    for spec in specs:
        for path in expand_paths(spec):
            yield path, file_messages(path, container, key_separator)


def looks_like_payload(text: str) -> bool:
    """True for text that is a payload rather than a path: several lines, a JSON start, or no text at all (an
    empty capture, never a file name)."""
    if "\n" in text or "\xfe" in text or (not text.strip() and not os.path.exists(text)):
        return True
    stripped = text.lstrip("\ufeff \t\r")
    return stripped[:1] in ("{", "[", '"')


def expand_paths(spec: str) -> list[str]:
    """The files a path names: the file itself, a directory's files (recursively, hidden ones left out, and the
    schemas saved beside a capture, in its ``<file>.schemas/`` folder), or a glob's.

    >>> expand_paths("/no/such/*.jsonl")
    Traceback (most recent call last):
    ...
    FileNotFoundError: no files match /no/such/*.jsonl
    """
    if os.path.isdir(spec):
        found = [
            str(p)
            for p in sorted(Path(spec).rglob("*"))
            if p.is_file()
            and not any(part.startswith(".") or part.endswith(".schemas") for part in p.relative_to(spec).parts[:-1])
            and not p.name.startswith(".")
        ]
        if not found:
            raise FileNotFoundError(f"no files in directory {spec}")
        return _without_siblings(found)
    if os.path.exists(spec):
        return [spec]
    if glob.has_magic(spec):
        found = sorted(p for p in glob.glob(spec, recursive=True) if os.path.isfile(p))
        if not found:
            raise FileNotFoundError(f"no files match {spec}")
        return _without_siblings(found)
    raise FileNotFoundError(f"no such file or directory: {spec}")


def _without_siblings(paths: list[str]) -> list[str]:
    """``paths`` but a sink's Avro keys and headers files whose values file is among them (read with it)."""
    named = set(paths)
    return [path for path in paths if not is_sibling(path, named)]


def _iterable_messages(items: Iterable[Any], key_separator: str | None = None) -> Generator[Message, None, None]:
    name = "<iterable>"
    for offset, item in enumerate(items):
        if isinstance(item, dict):
            yield unwrap_record(Message(item, name, offset))
        elif isinstance(item, (str, bytes, bytearray, memoryview)) or item is None:
            yield console_message(value_message(item, name, offset), key_separator)
        elif hasattr(item, "value") and hasattr(item, "offset"):
            yield record_object(item, name, offset)
        else:
            yield Message(item, name, offset, raw=safe_repr(item))
