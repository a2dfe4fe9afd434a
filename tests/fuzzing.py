"""A fuzzer for ``cdckit.read(..., errors="quarantine")``: whatever the input, nothing may escape.

Cases are grown from the bundled samples (:func:`seeds`) by structure-aware
mutations of the parsed messages (hostile values at paths weighted toward the
fields that matter, deleted and renamed keys, swapped values, duplicated
messages, Kafka envelopes with odd offsets), by byte damage (truncation,
flipped and inserted bytes, invalid UTF-8, BOMs, CRLF, blank lines), by
damaged containers (gzip, Parquet, CSV, empty and binary files, directories
with a bad member, two dialects in one file) and by odd Python inputs
(surrogates, Kafka record objects, deep nesting, non-JSON values).

Every generator takes a :class:`random.Random`, so a case is reproduced from
its family and seed alone: ``generate(random.Random(seed), family)``.
:func:`check` runs one case and returns the problems found; :func:`save` and
:func:`load_cases` keep failing cases as regression tests.
"""

from __future__ import annotations

import copy
import datetime
import functools
import gzip
import hashlib
import io
import json
import os
import pickle
import random
import reprlib
import shutil
import signal
import stat
import sys
import tempfile
import threading
import time
import traceback
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

import cdckit
from cdckit import samples
from cdckit.dialects import registry

#: Seconds one ``cdckit.read`` of a case may take before it counts as a hang.
TIME_LIMIT = 20

#: Where failing cases are kept (one folder each).
CASES_DIR = Path(__file__).parent / "fuzz_cases"

_CDCKIT_DIR = str(Path(cdckit.__file__).parent)
_BOM = b"\xef\xbb\xbf"
_RAW_TOKEN = "__cdckit_fuzz_raw_{}__"


# ---------------------------------------------------------------- the case


@dataclass
class Case:
    """One input for ``cdckit.read`` and what the fuzzer knows about it.

    ``kind`` says how ``data`` is fed: ``payload_bytes`` (bytes), ``payload_str``
    (str), ``file`` (``files`` holds one file), ``directory`` (``files`` holds
    the folder's files, ``unreadable`` those made unreadable) or ``iterable``
    (``data`` is a list of Python items, fed as ``source_as``: list, tuple or
    iterator). ``expected_messages`` is the message count the fuzzer knows
    independently (None: it cannot know); ``damaged`` containers may add up to
    that many quarantine entries for the damage itself. ``positions_unique``: every message has its own
    position (source, partition, offset) in the frame (no Kafka records, whose offsets may repeat), so
    the messages with events can be counted.
    """

    family: str
    kind: str
    data: Any = None
    files: dict[str, bytes] = field(default_factory=dict)
    unreadable: list[str] = field(default_factory=list)
    dialect: str | None = None
    container: str | None = None
    expected_messages: int | None = None
    damaged: int = 0
    names_no_file: bool = False
    source_as: str = "list"
    seeds: list[str] = field(default_factory=list)
    note: str = ""
    saved_problems: list[str] = field(default_factory=list)
    name: str = ""
    positions_unique: bool = False

    def describe(self) -> str:
        """One line naming the case, for test output and the campaign log."""
        size = len(self.data) if isinstance(self.data, (bytes, str, list)) else sum(map(len, self.files.values()))
        return (f"{self.family}/{self.kind} seeds={self.seeds} dialect={self.dialect} container={self.container} "
                f"expected={self.expected_messages} size={size} note={self.note!r}")


class KafkaRecord:
    """A Kafka record as a consumer library hands it over (``value``, ``key``, ``offset``, ``partition``)."""

    def __init__(self, value: Any, key: Any = None, offset: Any = 0, partition: Any = 0, topic: str = "fuzz") -> None:
        self.value = value
        self.key = key
        self.offset = offset
        self.partition = partition
        self.topic = topic

    def __repr__(self) -> str:
        return (f"KafkaRecord(value={reprlib.repr(self.value)}, key={reprlib.repr(self.key)}, "
                f"offset={self.offset!r}, partition={self.partition!r})")


# ---------------------------------------------------------------- seeds


@dataclass
class Seed:
    """A bundled sample: its bytes and, for JSON ones, its messages (text ones: its lines)."""

    name: str
    dialect: str
    layout: str  # jsonl, json, text, csv, parquet
    raw: bytes
    messages: list[Any] | None = None
    lines: list[bytes] | None = None


@functools.lru_cache(maxsize=1)
def seeds() -> tuple[Seed, ...]:
    """Every bundled sample, parsed once."""
    found = []
    for name in samples.list():
        path = samples.path(name)
        raw = path.read_bytes()
        plain = gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw
        dialect = name.split("/")[0]
        suffix = name.removesuffix(".gz").rsplit(".", 1)[1]
        if suffix == "jsonl":
            messages = [json.loads(line) for line in plain.splitlines() if line.strip()]
            found.append(Seed(name, dialect, "jsonl", raw, messages=messages))
        elif suffix == "json":
            found.append(Seed(name, dialect, "json", raw, messages=parse_json_values(plain.decode("utf-8"))))
        elif suffix == "txt":
            found.append(Seed(name, dialect, "text", raw, lines=[ln for ln in plain.split(b"\n") if ln.strip()]))
        elif suffix == "csv":
            found.append(Seed(name, dialect, "csv", raw))
        elif suffix == "parquet":
            found.append(Seed(name, dialect, "parquet", raw))
    return tuple(found)


def parse_json_values(text: str) -> list[Any]:
    """The messages of a JSON array or of concatenated JSON values."""
    decoder = json.JSONDecoder()
    out: list[Any] = []
    pos = 0
    while True:
        while pos < len(text) and text[pos].isspace():
            pos += 1
        if pos >= len(text):
            return out
        value, pos = decoder.raw_decode(text, pos)
        out.extend(value if isinstance(value, list) else [value])


def json_seeds() -> list[Seed]:
    """The samples whose messages are JSON."""
    return [s for s in seeds() if s.messages]


@functools.lru_cache(maxsize=1)
def field_names() -> tuple[str, ...]:
    """Every key seen in the top two levels of any sample message (the fields that matter)."""
    names: set[str] = set()
    for seed in json_seeds():
        for msg in seed.messages or []:
            for value in (msg, unwrap_kcat(msg)):
                if isinstance(value, dict):
                    names.update(value)
                    for inner in value.values():
                        if isinstance(inner, dict):
                            names.update(inner)
    return tuple(sorted(names))


def unwrap_kcat(msg: Any) -> Any:
    """The parsed payload of a kcat ``-J`` envelope, or None."""
    if isinstance(msg, dict) and isinstance(msg.get("payload"), str) and "offset" in msg:
        try:
            return json.loads(msg["payload"])
        except (ValueError, RecursionError):  # not JSON, or a deep nest the fuzzer put there
            return None
    return None


# ---------------------------------------------------------------- hostile values


class Raw:
    """JSON text written as is where this value sits (deep nesting json.dumps cannot write)."""

    def __init__(self, text: str) -> None:
        self.text = text


def deep_text(depth: int, rng: random.Random) -> str:
    """A list or dict nested ``depth`` levels, as JSON text."""
    if rng.random() < 0.5:
        return "[" * depth + "1" + "]" * depth
    return '{"a":' * depth + "1" + "}" * depth


def hostile_value(rng: random.Random) -> Any:
    """A value that a decoder may not expect where it sits."""
    choices: list[Callable[[], Any]] = [
        lambda: rng.randint(-5, 5),
        lambda: 10**30,
        lambda: -(10**30),
        lambda: -1,
        lambda: 0,
        lambda: 10_000_000_000_000,
        lambda: 2**63,
        lambda: 1e308,
        lambda: -1e308,
        lambda: 1.5,
        lambda: float("nan"),
        lambda: float("inf"),
        lambda: "Infinity",
        lambda: "NaN",
        lambda: "-",
        lambda: "",
        lambda: " ",
        lambda: True,
        lambda: False,
        lambda: None,
        lambda: [],
        lambda: [1, 2],
        lambda: [None],
        lambda: {},
        lambda: {"a": {"b": 1}},
        lambda: Raw(deep_text(1200, rng)),
        lambda: "x" * 200_000,
        lambda: "\ud800",
        lambda: "a\x00b",
        lambda: "12",
        lambda: "1.5e3",
        lambda: "2024-13-45 25:61:61",
        lambda: "0000-00-00 00:00:00",
        lambda: "1970-01-01T00:00:00Z",
        lambda: "\u00fe\u00fd",
        lambda: "'; DROP TABLE t; --",
        lambda: "null",
        lambda: "{}",
        lambda: "[1,",
        lambda: rng.choice(registry.names()),
        lambda: rng.choice(["c", "u", "d", "r", "t", "m", "I", "U", "D", "INSERT", "UPDATE", "DELETE", "DDL",
                            "QUERY", "ALTER", "insert", "update", "delete", "UPDATE_BEFORE", "UPDATE_AFTER"]),
        lambda: rng.choice(field_names()),
    ]
    return rng.choice(choices)()


def dumps(value: Any, rng: random.Random | None = None, indent: int | None = None) -> str:
    """JSON text of ``value`` (NaN written as NaN; :class:`Raw` parts written as they are)."""
    raws: list[str] = []

    def default(obj: Any) -> Any:
        if isinstance(obj, Raw):
            raws.append(obj.text)
            return _RAW_TOKEN.format(len(raws) - 1)
        if isinstance(obj, (set, frozenset)):
            return sorted(obj, key=repr)
        return repr(obj)

    ascii_only = rng.random() < 0.5 if rng is not None else False
    text = json.dumps(value, default=default, indent=indent, ensure_ascii=ascii_only)
    for number, raw in enumerate(raws):
        text = text.replace(json.dumps(_RAW_TOKEN.format(number)), raw, 1)
    return text


def encode(text: str) -> bytes:
    """UTF-8 bytes of ``text``, lone surrogates kept as the (invalid) bytes they would be."""
    return text.encode("utf-8", "surrogatepass")


# ---------------------------------------------------------------- structure-aware mutations


def paths(value: Any, max_depth: int = 6) -> list[tuple]:
    """Paths (tuples of keys and indexes) to every value inside ``value``, up to ``max_depth`` deep."""
    out: list[tuple] = []
    stack: list[tuple[tuple, Any]] = [((), value)]
    while stack:
        path, node = stack.pop()
        if len(path) >= max_depth:
            continue
        children = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else []
        for key, child in children:
            out.append(path + (key,))
            stack.append((path + (key,), child))
    return out


def pick_path(rng: random.Random, value: Any) -> tuple | None:
    """A random path, weighted toward the top two levels (where the fields that matter are)."""
    found = paths(value)
    if not found:
        return None
    weights = [8 if len(p) == 1 else 4 if len(p) == 2 else 1 for p in found]
    return rng.choices(found, weights)[0]


def get_at(value: Any, path: tuple) -> Any:
    for key in path:
        value = value[key]
    return value


def set_at(value: Any, path: tuple, new: Any) -> None:
    get_at(value, path[:-1])[path[-1]] = new


def copy_json(value: Any) -> Any:
    """A deep copy of a (possibly already mutated) message."""
    return copy.deepcopy(value)


def mutate_value(rng: random.Random, msg: Any) -> Any:
    """One structure-aware mutation of one parsed message (a copy is returned)."""
    msg = copy_json(msg)
    if not isinstance(msg, (dict, list)) or rng.random() < 0.02:
        return hostile_value(rng)  # the whole message replaced
    inner = unwrap_kcat(msg)
    if inner is not None and rng.random() < 0.7:
        msg["payload"] = dumps(mutate_value(rng, inner), rng)
        return msg
    path = pick_path(rng, msg)
    if path is None:
        msg_path: tuple = ()
    else:
        msg_path = path
    action = rng.choice(["replace", "replace", "replace", "delete", "rename", "swap", "add"])
    parent = get_at(msg, msg_path[:-1]) if msg_path else msg
    if action == "replace" and msg_path:
        set_at(msg, msg_path, hostile_value(rng))
    elif action == "delete" and msg_path:
        del parent[msg_path[-1]]
    elif action == "rename" and msg_path and isinstance(parent, dict):
        new_key = rng.choice([*field_names(), "", " ", msg_path[-1].upper(), msg_path[-1] + " "])
        parent[new_key] = parent.pop(msg_path[-1])
    elif action == "swap" and path is not None:
        other = pick_path(rng, msg)
        if other is not None and not _related(path, other):
            first, second = get_at(msg, path), get_at(msg, other)
            set_at(msg, path, second)
            set_at(msg, other, first)
    else:  # add a field the dialects know, with a hostile value
        target = parent if isinstance(parent, dict) else msg
        if isinstance(target, dict):
            target[rng.choice(field_names())] = hostile_value(rng)
    return msg


def _related(a: tuple, b: tuple) -> bool:
    """True when one path is inside the other (swapping them would nest a value in itself)."""
    short = min(len(a), len(b))
    return a[:short] == b[:short]


def kcat_envelope(rng: random.Random, msg: Any, offset: int) -> dict[str, Any]:
    """``msg`` wrapped as a kcat ``-J`` record, its offset, partition and key sometimes hostile."""
    odd = [True, "x", -5, 1.5, {"a": 1}, None, 10**30, "7"]
    key: Any = rng.choice([None, '{"id": 1}', "plain-key", '{"schema": null, "payload": {"id": 1}}', "[1,"])
    record = {
        "topic": rng.choice(["shop", "", "t" * 300]),
        "partition": rng.choice(odd) if rng.random() < 0.4 else rng.randint(0, 3),
        "offset": rng.choice(odd) if rng.random() < 0.4 else offset,
        "key": rng.choice(odd) if rng.random() < 0.2 else key,
        "payload": dumps(msg, rng) if rng.random() < 0.9 else rng.choice([None, msg, 5, "not json"]),
    }
    if rng.random() < 0.2:
        record["ts"] = hostile_value(rng)
    return record


def mutate_messages(rng: random.Random, messages: list[Any], rounds: int | None = None) -> list[Any]:
    """A copy of ``messages`` with a few mutations: values, duplicates, Kafka envelopes."""
    out = list(messages)
    for _ in range(rounds if rounds is not None else rng.randint(1, 4)):
        if not out:
            break
        index = rng.randrange(len(out))
        action = rng.random()
        if action < 0.75:
            out[index] = mutate_value(rng, out[index])
        elif action < 0.85:
            out.insert(index, copy_json(out[index]))
        else:
            out[index] = kcat_envelope(rng, out[index], index)
    return out


def some_messages(rng: random.Random, seed: Seed, limit: int = 40) -> list[Any]:
    """A random run of at most ``limit`` consecutive messages of a JSON seed."""
    messages = seed.messages or []
    if len(messages) <= limit:
        return list(messages)
    start = rng.randrange(len(messages) - limit)
    return messages[start : start + rng.randint(1, limit)]


# ---------------------------------------------------------------- text lines (UniVerse)


def mutate_text_line(rng: random.Random, line: bytes) -> bytes:
    """One field-level mutation of a UniVerse line (þ-separated ``name=value`` fields, ý inside data)."""
    latin = True
    try:
        text = line.decode("utf-8")
        latin = False
    except UnicodeDecodeError:
        text = line.decode("latin-1")
    fields = text.split("\u00fe")
    index = rng.randrange(len(fields))
    action = rng.choice(["value", "value", "drop", "dup", "swap", "sep"])
    name, _, value = fields[index].partition("=")
    if action == "value":
        fields[index] = name + "=" + rng.choice(
            ["", "=", "\u00fd" * 5, "x" * 200_000, "-1", "99999999999999999999999", "1e308", "NaN", "zz",
             "\u00fd=\u00fd", "\x00", "\u00fe", str(hostile_value(rng))])
    elif action == "drop" and len(fields) > 1:
        del fields[index]
    elif action == "dup":
        fields.insert(index, fields[index])
    elif action == "swap":
        other = rng.randrange(len(fields))
        fields[index], fields[other] = fields[other], fields[index]
    else:
        fields[index] = value + "=" + name
    text = "\u00fe".join(fields)
    if latin:
        return text.encode("latin-1", "replace")
    return encode(text)


# ---------------------------------------------------------------- byte mutations


def mutate_bytes(rng: random.Random, data: bytes) -> bytes:
    """One or more byte-level damages: truncation, flips, inserted bytes, invalid UTF-8, BOM, CRLF, blanks."""
    for _ in range(rng.randint(1, 3)):
        action = rng.choice(["truncate", "flip", "insert", "separator", "invalid_utf8", "bom", "crlf", "blank",
                             "nul"])
        at = rng.randint(0, len(data))
        if action == "truncate":
            data = data[:at]
        elif action == "flip" and data:
            spot = rng.randrange(len(data))
            data = data[:spot] + bytes([data[spot] ^ (1 << rng.randrange(8))]) + data[spot + 1 :]
        elif action == "insert":
            data = data[:at] + bytes(rng.randrange(256) for _ in range(rng.randint(1, 8))) + data[at:]
        elif action == "separator":
            data = data[:at] + rng.choice([b"\xfe", b"\xfd", b"\xff", b"\x00", b"\xfe\xfd", b"\xc3\xbe"]) + data[at:]
        elif action == "invalid_utf8":
            data = data[:at] + rng.choice([b"\x80", b"\xc3", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xc0\xaf"]) \
                + data[at:]
        elif action == "bom":
            data = rng.choice([_BOM + data, data[:at] + _BOM + data[at:], _BOM])
        elif action == "crlf":
            data = data.replace(b"\n", b"\r\n")
        elif action == "blank":
            data = data[:at] + rng.choice([b"\n\n", b"\n \n", b"\r\n", b"\n\t\n"]) + data[at:]
        else:
            data = data[:at] + b"\x00" * rng.randint(1, 4) + data[at:]
    return data


def count_lines_if_sure(data: bytes) -> int | None:
    """Messages of a JSON Lines or text capture counted as non-blank lines, or None when the layout is unsure.

    Sure means: every non-blank line is one JSON object (``{`` ... ``}``),
    or the first non-blank byte cannot start JSON (a text capture). Leading
    byte-order marks are not content, however many; bytes of which more than
    one in sixteen (one in four under 64 bytes) are control characters are
    binary: the whole input is one message, quarantined.
    """
    while data.startswith(_BOM):
        data = data[len(_BOM):]
    if data.startswith(b"PAR1") or data[:2] == b"\x1f\x8b":
        return None
    head = data[:1 << 16]
    controls = sum(1 for byte in head if byte < 32 and byte not in (9, 10, 12, 13, 27) or byte == 127)
    if head and controls * (16 if len(head) >= 64 else 4) > len(head):
        return 1
    lines = [ln.strip() for ln in data.split(b"\n")]
    lines = [ln for ln in lines if ln]
    if not lines:
        return 0
    if all(ln[:1] == b"{" and ln[-1:] == b"}" for ln in lines):
        return len(lines)
    rest = _after_the_header(lines)
    if not rest or rest[0][:1] not in (b"{", b"[", b'"'):
        return len(lines)
    if all(ln[:1] == b"{" and ln[-1:] == b"}" for ln in rest):
        return len(lines)  # JSON Lines after a header: every line is a message, the header's quarantined
    return None


def _after_the_header(lines: list[bytes]) -> list[bytes]:
    """The non-blank lines from the first that may be a message on, as a peer's capture is read: comment
    lines (``#``, ``--``, ``//``, ``/*``, ``*``) and at most one other line before a JSON line are its header."""
    others = 0
    for index, line in enumerate(lines):
        if line.startswith((b"#", b"--", b"//", b"/*", b"*")):
            continue
        if line[:1] in (b"{", b"[") or (not others and line[:1] == b'"'):
            return lines[index:]
        others += 1
        if others > 1:
            return lines
    return lines


# ---------------------------------------------------------------- the generators, one per family


def _dialect_choice(rng: random.Random, own: str | None) -> str | None:
    """Mostly None (detect), sometimes the seed's own dialect, sometimes a random one."""
    roll = rng.random()
    if roll < 0.15 and own is not None:
        return own
    if roll < 0.35:
        return rng.choice(registry.names())
    return None


def _feed_text(rng: random.Random, case: Case, data: bytes, file_name: str) -> Case:
    """Feed ``data`` as bytes, str (when it decodes) or a file."""
    roll = rng.random()
    if roll < 0.35:
        case.kind, case.data = "payload_bytes", data
    elif roll < 0.55:
        text = data.decode("utf-8", "surrogateescape") if rng.random() < 0.2 else data.decode("utf-8", "replace")
        if "\n" not in text:
            text += "\n"  # a str without a line end and not starting with JSON would name a file
        case.kind, case.data = "payload_str", text
        case.expected_messages = count_lines_if_sure(encode_str(text)) if case.expected_messages is not None \
            else None
    else:
        case.kind, case.files = "file", {file_name: data}
        case.source_as = rng.choice(["str", "path"])
    return case


def encode_str(text: str) -> bytes:
    """The bytes of a str payload as the fuzzer counts them (surrogates kept)."""
    return text.encode("utf-8", "surrogateescape") if any("\udc80" <= c <= "\udcff" for c in text) else encode(text)


def gen_jsonl(rng: random.Random) -> Case:
    """Mutated messages of a JSON sample, written as JSON Lines."""
    seed = rng.choice(json_seeds())
    messages = mutate_messages(rng, some_messages(rng, seed))
    data = ("\n".join(dumps(m, rng) for m in messages) + "\n").encode("utf-8", "surrogatepass")
    case = Case("jsonl", "payload_bytes", seeds=[seed.name], dialect=_dialect_choice(rng, seed.dialect),
                expected_messages=count_lines_if_sure(data))
    return _feed_text(rng, case, data, "capture.jsonl")


def gen_json_document(rng: random.Random) -> Case:
    """Mutated messages written as a JSON array or as concatenated pretty-printed JSON."""
    seed = rng.choice(json_seeds())
    messages = mutate_messages(rng, some_messages(rng, seed, 20))
    if rng.random() < 0.5:
        text = "[\n" + ",\n".join(dumps(m, rng, indent=2) for m in messages) + "\n]\n"
        note = "array"
        known = len(messages)
    else:
        text = "\n".join(dumps(m, rng, indent=2) for m in messages) + "\n"
        note = "concatenated"
        known = len(messages) if all(isinstance(m, dict) for m in messages) else None
    case = Case("json_document", "payload_bytes", seeds=[seed.name], dialect=_dialect_choice(rng, seed.dialect),
                expected_messages=known, note=note)
    return _feed_text(rng, case, encode(text), "capture.json")


def gen_kcat(rng: random.Random) -> Case:
    """Messages in kcat ``-J`` envelopes (some hostile offsets, partitions, keys), as JSON Lines."""
    seed = rng.choice(json_seeds())
    messages = some_messages(rng, seed, 20)
    records = [kcat_envelope(rng, m, i) if unwrap_kcat(m) is None else m for i, m in enumerate(messages)]
    records = mutate_messages(rng, records, rng.randint(0, 3))
    data = encode("\n".join(dumps(r, rng) for r in records) + "\n")
    case = Case("kcat", "payload_bytes", seeds=[seed.name], dialect=_dialect_choice(rng, seed.dialect),
                expected_messages=count_lines_if_sure(data))
    return _feed_text(rng, case, data, "records.jsonl")


def gen_text(rng: random.Random) -> Case:
    """UniVerse lines (UTF-8 or Latin-1) with field-level mutations."""
    seed = rng.choice([s for s in seeds() if s.layout == "text"])
    lines = list(seed.lines or [])
    start = rng.randrange(len(lines))
    lines = lines[start : start + rng.randint(1, 30)]
    for _ in range(rng.randint(1, 4)):
        index = rng.randrange(len(lines))
        lines[index] = mutate_text_line(rng, lines[index])
    data = b"\n".join(lines) + b"\n"
    case = Case("text", "payload_bytes", seeds=[seed.name], dialect=_dialect_choice(rng, seed.dialect),
                expected_messages=count_lines_if_sure(data))
    return _feed_text(rng, case, data, "changes.txt")


def gen_bytes(rng: random.Random) -> Case:
    """A sample's bytes (JSON Lines, pretty JSON or text) damaged byte by byte."""
    seed = rng.choice([s for s in seeds() if s.layout in ("jsonl", "json", "text")])
    plain = gzip.decompress(seed.raw) if seed.raw[:2] == b"\x1f\x8b" else seed.raw
    if len(plain) > 40_000:
        plain = plain[: plain.find(b"\n", 30_000) + 1] or plain
    data = mutate_bytes(rng, plain)
    known = count_lines_if_sure(data) if seed.layout in ("jsonl", "text") else None
    case = Case("bytes", "payload_bytes", seeds=[seed.name], dialect=_dialect_choice(rng, seed.dialect),
                expected_messages=known)
    if rng.random() < 0.1:
        case.container = rng.choice(["jsonl", "json", "text", "csv", "parquet"])
        case.expected_messages = None
        case.damaged = 1
    suffix = {"jsonl": "capture.jsonl", "json": "capture.json", "text": "changes.txt"}[seed.layout]
    return _feed_text(rng, case, data, suffix)


def gzip_damage(rng: random.Random, packed: bytes) -> tuple[bytes, str, bool]:
    """``packed`` truncated, corrupted in the middle, or with a wrong CRC; and whether the content survives."""
    action = rng.choice(["truncate", "middle", "crc", "length", "trailing"])
    if action == "truncate":
        return packed[: rng.randint(2, max(2, len(packed) - 1))], action, False
    if action == "middle":
        spot = rng.randint(10, max(10, len(packed) - 9))
        return packed[:spot] + bytes(rng.randrange(256) for _ in range(4)) + packed[spot + 4 :], action, False
    if action == "crc":
        crc = bytes(b ^ 0xFF for b in packed[-8:-4])
        return packed[:-8] + crc + packed[-4:], action, True
    if action == "length":
        return packed[:-4] + b"\x00\x00\x00\x00", action, True
    return packed + b"garbage after the gzip member", action, True


def gen_gzip(rng: random.Random) -> Case:
    """A JSON Lines or text capture gzipped, then truncated or corrupted (or left whole)."""
    seed = rng.choice([s for s in seeds() if s.layout in ("jsonl", "text")])
    plain = gzip.decompress(seed.raw) if seed.raw[:2] == b"\x1f\x8b" else seed.raw
    known = count_lines_if_sure(plain)
    packed = gzip.compress(plain)
    case = Case("gzip", "payload_bytes", seeds=[seed.name], dialect=_dialect_choice(rng, seed.dialect))
    if rng.random() < 0.15:
        case.data, case.expected_messages, case.note = packed, known, "whole"
    else:
        damaged, action, survives = gzip_damage(rng, packed)
        case.data, case.note, case.damaged = damaged, action, 1
        case.expected_messages = known if survives else None
    if rng.random() < 0.6:
        name = "capture.jsonl.gz" if seed.layout == "jsonl" else "changes.txt.gz"
        case.kind, case.files, case.data = "file", {name: case.data}, None
        case.source_as = rng.choice(["str", "path"])
    return case


def odd_parquet(rng: random.Random) -> tuple[bytes, int]:
    """A DataHub tuple Parquet file whose columns have odd types; and its row count."""
    table = pq.read_table(io.BytesIO(samples.path("datahub_tuple/examples.parquet").read_bytes()))
    rows = table.num_rows
    odd_columns: list[tuple[str, pa.Array]] = [
        ("_sequence_id_", pa.array([1.5] * rows)),
        ("_sequence_id_", pa.array([None] * rows, pa.null())),
        ("_operation_type_", pa.array([7] * rows)),
        ("_operation_type_", pa.array([b"\xff\xfe"] * rows)),
        ("_excute_time_", pa.array(["not a time"] * rows)),
        ("_excute_time_", pa.array([datetime.datetime(2024, 5, 1)] * rows, pa.timestamp("us", tz="UTC"))),
        ("_excute_time_", pa.array([2**64 - 1] * rows, pa.uint64())),
        ("id", pa.array([[1, 2]] * rows)),
        ("id", pa.array([{"a": 1}] * rows)),
        ("name", pa.array([datetime.date(2024, 1, 1)] * rows)),
        ("name", pa.array([datetime.timedelta(seconds=3)] * rows)),
        ("comment", pa.array([float("nan")] * rows)),
        ("_source_table_", pa.array([None] * rows, pa.string())),
        ("_before_image_", pa.array([True] * rows)),
        ("extra", pa.array([b"\x00\x01"] * rows, pa.binary())),
    ]
    for _ in range(rng.randint(1, 3)):
        name, array = rng.choice(odd_columns)
        if name in table.column_names:
            table = table.set_column(table.column_names.index(name), name, array)
        else:
            table = table.append_column(name, array)
    out = io.BytesIO()
    pq.write_table(table, out)
    return out.getvalue(), rows


def gen_parquet(rng: random.Random) -> Case:
    """A Parquet file truncated, empty, corrupted, or with odd column types."""
    seed = rng.choice([s for s in seeds() if s.layout == "parquet"])
    rows = pq.ParquetFile(io.BytesIO(seed.raw)).metadata.num_rows
    action = rng.choice(["truncate", "empty", "corrupt", "odd_types", "magic_only"])
    case = Case("parquet", "file", seeds=[seed.name], dialect=_dialect_choice(rng, "datahub_tuple"), note=action)
    if action == "truncate":
        data, case.damaged = seed.raw[: rng.randint(0, len(seed.raw) - 1)], 1
    elif action == "empty":
        data, case.expected_messages, case.damaged = b"", 0, 1
    elif action == "magic_only":
        data, case.expected_messages, case.damaged = b"PAR1", 0, 1
    elif action == "corrupt":
        data, case.damaged = mutate_bytes(rng, seed.raw), 1
    else:
        data, rows = odd_parquet(rng)
        case.expected_messages = rows
    case.files = {rng.choice(["rows.parquet", "rows.parquet.gz"]) if action == "truncate" else "rows.parquet": data}
    if rng.random() < 0.2:
        case.kind, case.data, case.files, case.container = "payload_bytes", data, {}, "parquet"
    return case


def gen_csv(rng: random.Random) -> Case:
    """A DataHub tuple CSV with a huge cell, extra or missing fields, bad UTF-8, or only a header."""
    seed = rng.choice([s for s in seeds() if s.layout == "csv"])
    lines = seed.raw.split(b"\n")
    header, rows = lines[0], [ln for ln in lines[1:] if ln.strip()]
    rows = rows[: rng.randint(0, min(len(rows), 40))]
    action = rng.choice(["huge_cell", "extra_fields", "bad_utf8", "missing_fields", "header_only", "bom", "nul",
                         "crlf"])
    if rows:
        index = rng.randrange(len(rows))
        cells = rows[index].split(b",")
        spot = rng.randrange(len(cells))
        if action == "huge_cell":
            cells[spot] = b"x" * rng.choice([131_073, 200_000])
        elif action == "extra_fields":
            cells += [b"extra"] * rng.randint(1, 3)
        elif action == "bad_utf8":
            cells[spot] += rng.choice([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\x80abc"])
        elif action == "missing_fields":
            cells = cells[: rng.randint(1, len(cells))]
        elif action == "nul":
            cells[spot] += b"\x00"
        rows[index] = b",".join(cells)
    if action == "header_only":
        rows = []
    data = b"\n".join([header, *rows]) + b"\n"
    if action == "bom":
        data = _BOM + data
    if action == "crlf":
        data = data.replace(b"\n", b"\r\n")
    counted = len([r for r in rows if r.strip(b"\r")])  # an empty line is no CSV row
    case = Case("csv", "file", files={"rows.csv": data}, seeds=[seed.name], note=action,
                dialect=_dialect_choice(rng, "datahub_tuple"), expected_messages=counted, damaged=1)
    if rng.random() < 0.2:
        case.kind, case.data, case.files, case.container = "payload_bytes", data, {}, "csv"
    return case


def gen_tiny(rng: random.Random) -> Case:
    """An empty file, one holding only a BOM or blanks, a lone bracket, or random binary bytes."""
    choices: list[tuple[str, bytes, int | None]] = [
        ("empty", b"", 0),
        ("bom_only", _BOM, 0),
        ("bom_newline", _BOM + b"\n", 0),
        ("blanks", b"\n \n\t\r\n", 0),
        ("null", b"null\n", 1),
        ("empty_array", b"[]", None),
        ("empty_object", b"{}\n", 1),
        ("open_bracket", b"[", None),
        ("open_brace", b"{", None),
        ("quote", b'"', None),
        ("nul_bytes", b"\x00" * rng.randint(1, 64), None),
        ("separators", b"\xfe\xfd\xff" * rng.randint(1, 20), None),
        ("random", bytes(rng.randrange(256) for _ in range(rng.randint(1, 4096))), None),
        ("gzip_magic", b"\x1f\x8b", None),
        ("par1", b"PAR1" + bytes(rng.randrange(256) for _ in range(rng.randint(0, 64))), None),
    ]
    note, data, known = rng.choice(choices)
    case = Case("tiny", "file", files={rng.choice(["capture.jsonl", "capture", "capture.json", "capture.txt",
                                                   "capture.gz", "capture.csv", "capture.parquet"]): data},
                note=note, dialect=_dialect_choice(rng, None), expected_messages=known)
    name = next(iter(case.files))
    if name.endswith((".csv", ".parquet", ".gz")):  # a blank line is a CSV row; the rest is damage at most
        case.damaged = 1
        case.expected_messages = 0 if note in ("empty", "bom_only", "bom_newline") else None
    if rng.random() < 0.3:
        case.kind, case.data, case.files = "payload_bytes", data, {}
        case.damaged = 1 if data[:2] == b"\x1f\x8b" else 0
    return case


def gen_directory(rng: random.Random) -> Case:
    """A folder: good sample files, a damaged ``.gz``, an unreadable file, a hidden file; or an empty folder."""
    if rng.random() < 0.08:
        return Case("directory", "directory", names_no_file=True, note="empty directory")
    case = Case("directory", "directory", dialect=_dialect_choice(rng, None) if rng.random() < 0.3 else None)
    expected: int | None = 0
    for number, seed in enumerate(rng.sample([s for s in seeds() if s.layout in ("jsonl", "text")], 2)):
        plain = gzip.decompress(seed.raw) if seed.raw[:2] == b"\x1f\x8b" else seed.raw
        name = f"good{number}" + (".txt" if seed.layout == "text" else ".jsonl")
        case.files[name] = plain
        case.seeds.append(seed.name)
        expected = expected + len([ln for ln in plain.split(b"\n") if ln.strip()]) if expected is not None else None
    bad = rng.choice([s for s in seeds() if s.layout == "jsonl"])
    bad_plain = gzip.decompress(bad.raw) if bad.raw[:2] == b"\x1f\x8b" else bad.raw
    damaged, action, survives = gzip_damage(rng, gzip.compress(bad_plain))
    case.files["sub/damaged.jsonl.gz"] = damaged
    case.seeds.append(bad.name)
    case.damaged = 1
    if survives and expected is not None:
        expected += len([ln for ln in bad_plain.split(b"\n") if ln.strip()])
    else:
        expected = None
    case.files[".hidden.jsonl"] = b"{ this is never read\n"
    if rng.random() < 0.5:
        case.files["locked.jsonl"] = (b'{"op": "c"}\n')
        case.unreadable = ["locked.jsonl"]
        case.damaged += 1
        if expected is not None:
            expected += 1
    case.expected_messages = expected
    case.note = f"gzip {action}" + (", unreadable file" if case.unreadable else "")
    return case


def mixed_dialects() -> list[str]:
    """The dialects with a JSON Lines or text sample, whose lines :func:`gen_mixed` interleaves."""
    return sorted({s.dialect for s in seeds() if s.layout in ("jsonl", "text")})


def gen_mixed(rng: random.Random, pair: tuple[str, str] | None = None) -> Case:
    """Lines of two samples of different dialects (``pair``, or two at random) interleaved in one file,
    with damage: lines mutated, comment lines and a cut record among them."""
    if pair is None:
        pair = tuple(rng.sample(mixed_dialects(), 2))  # type: ignore[assignment]
    first, second = (rng.choice([s for s in seeds() if s.layout in ("jsonl", "text") and s.dialect == d])
                     for d in pair)

    def lines_of(seed: Seed) -> list[bytes]:
        plain = gzip.decompress(seed.raw) if seed.raw[:2] == b"\x1f\x8b" else seed.raw
        found = [ln for ln in plain.split(b"\n") if ln.strip()]
        start = rng.randrange(len(found))
        return found[start : start + rng.randint(1, 25)]

    one, two = lines_of(first), lines_of(second)
    mixed: list[bytes] = []
    while one or two:
        source = one if (one and (not two or rng.random() < 0.5)) else two
        mixed.append(source.pop(0))
    damage = rng.random() < 0.7
    if damage:
        for _ in range(rng.randint(1, 3)):
            at = rng.randrange(len(mixed) + 1)
            roll = rng.random()
            if roll < 0.4 and mixed:
                line = mixed[at % len(mixed)]
                mixed[at % len(mixed)] = (mutate_bytes if line[:1] == b"{" else mutate_text_line)(rng, line)
            elif roll < 0.7:
                mixed.insert(at, rng.choice([b"# a comment", b"-- a comment", b"// a comment", b" * a licence"]))
            elif mixed:
                line = mixed[at % len(mixed)]
                mixed.insert(at, line[len(line) // 2 :] if rng.random() < 0.5 else line[: len(line) // 2])
    data = b"\n".join(mixed) + b"\n"
    case = Case("mixed", "payload_bytes", seeds=[first.name, second.name], expected_messages=count_lines_if_sure(data),
                dialect=_dialect_choice(rng, first.dialect), note="damaged" if damage else "")
    case.positions_unique = not any(_kafka_record(line) for line in mixed)
    return _feed_text(rng, case, data, "mixed.jsonl")


def _kafka_record(line: bytes) -> bool:
    """True for a line that is a saved Kafka record (kcat ``-J``, a Kafka-shaped frame): its offset is Kafka's."""
    try:
        value = json.loads(line)
    except ValueError:
        return b"\t" in line  # a console-consumer line may carry its own position
    return isinstance(value, dict) and "offset" in value and ("payload" in value or "value" in value)


def deep_dict(depth: int) -> dict[str, Any]:
    """A dict nested ``depth`` levels (built without recursion)."""
    value: dict[str, Any] = {"leaf": 1}
    for _ in range(depth):
        value = {"a": value}
    return value


def python_oddity(rng: random.Random) -> Any:
    """A Python value JSON cannot hold."""
    return rng.choice([
        {1, 2, 3},
        datetime.datetime(2024, 5, 1, 10, 15, tzinfo=datetime.timezone.utc),
        datetime.date(2024, 5, 1),
        b"\xff\x00bytes",
        bytearray(b"ba"),
        (1, 2),
        object(),
        1 + 2j,
        float("nan"),
        10**400,
        {(1, 2): "tuple key"},
        {1: "int key"},
        frozenset({"a"}),
    ])


def python_item(rng: random.Random, seed: Seed) -> Any:
    """One item of an iterable source: a (mutated) message as dict, str or bytes, or something odd."""
    msg = rng.choice(seed.messages or [{}])
    if rng.random() < 0.5:
        msg = mutate_value(rng, msg)
    roll = rng.random()
    if roll < 0.2:
        return dumps(msg, rng)
    if roll < 0.3:
        text = dumps(msg, rng)
        spot = rng.randint(0, len(text))
        return text[:spot] + "\ud800" + text[spot:]  # a lone surrogate in a Python str
    if roll < 0.4:
        return encode(dumps(msg, rng))
    if roll < 0.5:
        return kafka_record(rng, msg)
    if roll < 0.6 and isinstance(msg, dict):
        odd = copy_json(msg)
        path = pick_path(rng, odd)
        if path is not None:
            set_at(odd, path, python_oddity(rng))
        else:
            odd["x"] = python_oddity(rng)
        return odd
    if roll < 0.63:
        return deep_dict(5000)
    if roll < 0.66:
        return rng.choice([None, 5, 1.5, True, [1, 2], "", b"", '{"a": "\ud800"}', "\ud800", object()])
    if isinstance(msg, Raw):
        return msg.text
    return msg


def kafka_record(rng: random.Random, msg: Any) -> KafkaRecord:
    """A Kafka record object whose value is bytes, str, a dict, an int or None, its offset sometimes odd."""
    text = dumps(msg, rng)
    value = rng.choice([encode(text), encode(text), text, msg if isinstance(msg, dict) else text, 7, None,
                        bytearray(encode(text)), memoryview(encode(text)), encode(text)[: len(text) // 2]])
    key = rng.choice([None, b'{"id": 1}', '{"id": 1}', b"\xff\xfe", {"id": 1}, 5, b""])
    offset = rng.choice([0, 1, 2, -1, None, "7", 1.5, True, 10**30, float("nan")]) if rng.random() < 0.4 \
        else rng.randint(0, 1000)
    partition = rng.choice([0, 1, None, -1, "p", 1.5, 2**63]) if rng.random() < 0.3 else 0
    return KafkaRecord(value, key, offset, partition)


def gen_python(rng: random.Random) -> Case:
    """An iterable of Python items: dicts, str (lone surrogates), bytes, Kafka records, deep and odd values."""
    seed = rng.choice(json_seeds())
    items = [python_item(rng, seed) for _ in range(rng.randint(1, 12))]
    if rng.random() < 0.3:  # mostly plain messages, so detection finds the dialect and decoding goes on
        items = [copy_json(m) for m in some_messages(rng, seed, 10)] + items
        rng.shuffle(items)
    return Case("python", "iterable", data=items, seeds=[seed.name], dialect=_dialect_choice(rng, seed.dialect),
                expected_messages=len(items), source_as=rng.choice(["list", "tuple", "iterator"]))


def gen_seed(rng: random.Random, seed: Seed | None = None) -> Case:
    """A sample as it is, or lightly mutated (every sample reached, whatever its layout)."""
    seed = seed or rng.choice(seeds())
    case = Case("seed", "file", seeds=[seed.name], dialect=_dialect_choice(rng, seed.dialect))
    name = seed.name.split("/")[-1]
    if seed.messages is not None and rng.random() < 0.7:
        messages = mutate_messages(rng, seed.messages)
        data = encode("\n".join(dumps(m, rng) for m in messages) + "\n")
        case.files = {"capture.jsonl": data}
        case.expected_messages = count_lines_if_sure(data)
        case.note = "messages mutated, written as JSON Lines"
    elif seed.lines is not None and rng.random() < 0.7:
        lines = list(seed.lines)
        index = rng.randrange(len(lines))
        lines[index] = mutate_text_line(rng, lines[index])
        data = b"\n".join(lines) + b"\n"
        case.files = {name: data}
        case.expected_messages = count_lines_if_sure(data)
        case.note = "one line mutated"
    else:
        case.files = {name: seed.raw}
        case.expected_messages = expected_of_seed(seed)
        case.note = "as bundled"
    return case


def expected_of_seed(seed: Seed) -> int | None:
    """The message count of an untouched sample."""
    if seed.messages is not None:
        return len(seed.messages)
    if seed.lines is not None:
        return len(seed.lines)
    if seed.layout == "parquet":
        return pq.ParquetFile(io.BytesIO(seed.raw)).metadata.num_rows
    if seed.layout == "csv":
        return len([ln for ln in seed.raw.split(b"\n")[1:] if ln.strip()])
    return None


def _damaged_frame(rng: random.Random, data: bytes) -> bytes:
    """A framed key or value (magic byte, schema id, body) damaged one way, or as it is."""
    how = rng.choice(["none", "none", "magic", "unknown id", "truncated", "flipped", "extra", "short", "empty"])
    if how == "magic":
        return bytes([rng.choice([1, 0xFF])]) + data[1:]
    if how == "unknown id":
        return data[:1] + rng.randrange(1, 2**32).to_bytes(4, "big") + data[5:]
    if how == "truncated":
        return data[: rng.randrange(0, len(data))]
    if how == "flipped":
        return mutate_bytes(rng, data[:5]) if rng.random() < 0.2 else data[:5] + mutate_bytes(rng, data[5:])
    if how == "extra":
        return data + rng.randbytes(rng.randint(1, 8))
    if how == "short":
        return data[: rng.randint(1, 4)]
    return b"" if how == "empty" else data


def gen_framed(rng: random.Random) -> Case:
    """Debezium changes through Confluent's Avro converter, saved in cdckit's binary capture layout with their
    schemas beside the file: bad magic, unknown ids, truncated, flipped and overlong bodies, damaged keys and
    Base64 fields; or the same framed records as Kafka record objects with no schemas at all."""
    import avro_records

    rows = avro_records.changes()
    records = [rng.choice(avro_records.avro_records(rows)) for _ in range(rng.randint(1, 12))]
    records = [(_damaged_frame(rng, key) if rng.random() < 0.3 else key,
                None if value is None else _damaged_frame(rng, value)) for key, value in records]
    if rng.random() < 0.2:
        items = [KafkaRecord(value, key, offset) for offset, (key, value) in enumerate(records)]
        return Case("framed", "iterable", data=items, dialect=_dialect_choice(rng, "debezium"),
                    expected_messages=len(items), note="framed records, no schemas")
    lines = avro_records.avro_lines(records).splitlines()
    for index in range(len(lines)):
        if rng.random() < 0.1:
            lines[index] = lines[index].replace(b'_base64":"', rng.choice([b'_base64":"!', b'_base64":"A', b'_base64":7,"x":"']))
    data = b"\n".join(lines) + b"\n"
    files = {"capture.jsonl": data}
    for schema in avro_records.registered():
        text = json.dumps(schema.to_json()).encode()
        files[f"capture.jsonl.schemas/{schema.id}.json"] = mutate_bytes(rng, text) if rng.random() < 0.05 else text
    return Case("framed", "directory", files=files, dialect=_dialect_choice(rng, "debezium"),
                expected_messages=count_lines_if_sure(data), seeds=["debezium/avro_records"])


#: Every family of generated cases and its generator.
GENERATORS: dict[str, Callable[[random.Random], Case]] = {
    "seed": gen_seed,
    "jsonl": gen_jsonl,
    "json_document": gen_json_document,
    "kcat": gen_kcat,
    "text": gen_text,
    "bytes": gen_bytes,
    "gzip": gen_gzip,
    "parquet": gen_parquet,
    "csv": gen_csv,
    "tiny": gen_tiny,
    "directory": gen_directory,
    "mixed": gen_mixed,
    "python": gen_python,
    "framed": gen_framed,
}
FAMILIES = tuple(GENERATORS)


def generate(rng: random.Random, family: str | None = None) -> Case:
    """One case of ``family`` (a random family when None)."""
    family = family or rng.choice(FAMILIES)
    return GENERATORS[family](rng)


def case_for_seed(seed_name: str, number: int = 0) -> Case:
    """A mutated case grown from one named sample (to reach every sample deterministically)."""
    seed = next(s for s in seeds() if s.name == seed_name)
    return gen_seed(random.Random(f"{seed_name}/{number}"), seed)


# ---------------------------------------------------------------- running a case


class CaseTimeout(BaseException):
    """Raised by the alarm when one read runs past :data:`TIME_LIMIT` (a BaseException: no decoder swallows it)."""


def _on_alarm(signum: int, frame: Any) -> None:
    raise CaseTimeout(f"read ran longer than {TIME_LIMIT} s")


def running_as_root() -> bool:
    """True when file permissions do not stop this process from reading (chmod 000 means nothing)."""
    return hasattr(os, "geteuid") and os.geteuid() == 0


def materialise(case: Case, folder: Path) -> tuple[Any, list[str]]:
    """What to pass to ``cdckit.read`` for ``case`` (files written under ``folder``), and notes."""
    notes: list[str] = []
    if case.kind == "payload_bytes":
        return case.data, notes
    if case.kind == "payload_str":
        return case.data, notes
    if case.kind == "iterable":
        items = list(case.data)
        if case.source_as == "tuple":
            return tuple(items), notes
        if case.source_as == "iterator":
            return iter(items), notes
        return items, notes
    root = folder / "input"
    root.mkdir(parents=True, exist_ok=True)
    for name, data in case.files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    for name in case.unreadable:
        if running_as_root():
            notes.append(f"unreadable sub-case skipped for {name}: running as root, chmod 000 does not stop reading")
        else:
            os.chmod(root / name, 0)
    if case.kind == "file":
        path = root / next(iter(case.files))
        return (path if case.source_as == "path" else str(path)), notes
    return (root if case.source_as == "path" else str(root)), notes


def _cleanup(folder: Path) -> None:
    for dirpath, _, filenames in os.walk(folder):
        for name in filenames:
            try:
                os.chmod(os.path.join(dirpath, name), stat.S_IRUSR | stat.S_IWUSR)
            except OSError:
                pass
    shutil.rmtree(folder, ignore_errors=True)


def _where(frame: traceback.FrameSummary) -> str:
    """``cdckit/module.py:function`` (or ``module.py:function`` outside cdckit)."""
    if frame.filename.startswith(_CDCKIT_DIR):
        name = os.path.relpath(frame.filename, os.path.dirname(_CDCKIT_DIR))
    else:
        name = os.path.basename(frame.filename)
    return f"{name}:{frame.name}"


def escaped(mode: str, err: BaseException) -> str:
    """The problem line for an exception that escaped ``cdckit.read``.

    The class (in brackets) is the exception type and the innermost cdckit
    function; the detail gives the message, the line and the innermost frame.
    """
    frames = traceback.extract_tb(err.__traceback__)
    ours = [f for f in frames if f.filename.startswith(_CDCKIT_DIR)]
    where = f"{_where(ours[-1])}" if ours else "(not in cdckit)"
    line = ours[-1].lineno if ours else None
    last = f"{_where(frames[-1])}:{frames[-1].lineno}" if frames else "(no frame)"
    message = str(err).replace("\n", " ")[:300]
    return f"[{mode}: escaped {type(err).__name__} at {where}] {message} (line {line}; innermost frame {last})"


def timed_read(source: Any, **options: Any) -> Any:
    """``cdckit.read`` under an alarm of :data:`TIME_LIMIT` seconds (when in the main thread)."""
    use_alarm = threading.current_thread() is threading.main_thread() and hasattr(signal, "SIGALRM")
    previous = None
    if use_alarm:
        previous = signal.signal(signal.SIGALRM, _on_alarm)
        signal.alarm(TIME_LIMIT)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return cdckit.read(source, **options)
    finally:
        if use_alarm:
            signal.alarm(0)
            signal.signal(signal.SIGALRM, previous)


def check(case: Case) -> list[str]:
    """Run ``case`` through ``cdckit.read`` (quarantine, then raise) and return the problems found."""
    folder = Path(tempfile.mkdtemp(prefix="cdckit-fuzz-"))
    try:
        source, _ = materialise(case, folder / "quarantine")
        problems, quarantined = _check_quarantine(case, source)
        source, _ = materialise(case, folder / "raise")
        problems += _check_raise(case, source, quarantined)
        return problems
    finally:
        _cleanup(folder)


def _allowed_without_file(case: Case, err: BaseException) -> bool:
    return case.names_no_file and isinstance(err, (cdckit.UnknownDialectError, FileNotFoundError))


def _check_quarantine(case: Case, source: Any) -> tuple[list[str], int | None]:
    """Problems of the ``errors="quarantine"`` read, and how many messages it quarantined (None: unknown)."""
    options = {"dialect": case.dialect, "container": case.container, "errors": "quarantine"}
    try:
        events = timed_read(source, **options)
    except CaseTimeout as err:
        return [f"[quarantine: hang] {err}"], None
    except Exception as err:  # noqa: BLE001 - every escape is a finding
        if _allowed_without_file(case, err):
            return [], None
        return [escaped("quarantine", err)], None
    problems = check_frame(events)
    problems += check_accounting(case, events)
    report = events.attrs.get("report")
    return problems, report.get("quarantined") if isinstance(report, dict) else None


def check_frame(events: Any) -> list[str]:
    """The frame has the canonical columns and dtypes; its quarantine rows are complete."""
    from cdckit.errors import REASON_CODES  # imported now: the set is being extended
    from cdckit.frame import COLUMN_NAMES, empty_events

    problems: list[str] = []
    if not isinstance(events, pd.DataFrame):
        return [f"[frame: not a DataFrame] got {type(events).__name__}"]
    if list(events.columns) != COLUMN_NAMES:
        problems.append(f"[frame: columns] {list(events.columns)}")
    else:
        want = empty_events().dtypes
        for name in COLUMN_NAMES:
            if str(events.dtypes[name]) != str(want[name]):
                problems.append(f"[frame: dtype of {name}] {events.dtypes[name]} instead of {want[name]}")
    if "quarantine" not in events.attrs:
        return problems + ["[frame: quarantine missing] attrs has no 'quarantine'"]
    try:
        json.dumps(events.attrs)  # as pandas writes them into Parquet and Feather
    except (TypeError, ValueError) as err:
        problems.append(f"[frame: attrs not JSON] {err}")
    quarantine = cdckit.quarantine(events)
    for column in ("reason", "reason_code", "source", "offset"):
        if column not in quarantine.columns:
            problems.append(f"[quarantine: column {column} missing] {list(quarantine.columns)}")
    if problems:
        return problems
    for row in quarantine.itertuples(index=False):
        if not isinstance(row.reason, str) or not row.reason.strip():
            problems.append(f"[quarantine: empty reason] row {row!r:.200}")
        if row.reason_code not in REASON_CODES:
            problems.append(f"[quarantine: unknown reason_code] {row.reason_code!r} for {str(row.reason)[:120]!r}")
        if not isinstance(row.source, str) or not row.source:
            problems.append(f"[quarantine: no source] row {row!r:.200}")
        if pd.isna(row.offset):
            problems.append(f"[quarantine: no offset] {str(row.reason)[:120]!r}")
        if len(problems) > 5:
            break
    return problems


def check_accounting(case: Case, events: pd.DataFrame) -> list[str]:
    """Every message decoded or quarantined; counts agree with the frames and with the fuzzer's own count."""
    report = events.attrs.get("report")
    quarantine = cdckit.quarantine(events)
    if not isinstance(report, dict):
        return ["[report: missing] attrs['report'] is not a dict"]
    problems: list[str] = []
    messages, decoded, quarantined = (report.get(name) for name in ("messages", "decoded", "quarantined"))
    if not all(isinstance(n, int) for n in (messages, decoded, quarantined)):
        return [f"[report: counts missing] {report!r:.300}"]
    if messages != decoded + quarantined:
        problems.append(f"[accounting: messages != decoded + quarantined] {messages} != {decoded} + {quarantined}")
    skipped = sum(report.get("skipped", {}).values())
    if skipped > decoded:
        problems.append(f"[accounting: skipped > decoded] {skipped} > {decoded}")
    if quarantine is not None and len(quarantine) != quarantined:
        problems.append(f"[accounting: quarantine rows != report] {len(quarantine)} != {quarantined}")
    if len(events) != report.get("events"):
        problems.append(f"[accounting: events != report] {len(events)} != {report.get('events')}")
    if report.get("pending"):
        problems.append(f"[accounting: pending halves left] {report['pending']}")
    if case.positions_unique and quarantine is not None and not problems:
        with_events = len(set(zip(events["source"].tolist(), events["partition"].fillna(-1).tolist(),
                                  events["offset"].tolist())))
        if with_events + quarantined + skipped != messages:
            problems.append(f"[accounting: messages with events + quarantined + skipped != messages] "
                            f"{with_events} + {quarantined} + {skipped} != {messages}")
    expected = case.expected_messages
    if expected is not None and not expected <= messages <= expected + case.damaged:
        allowed = f"{expected}" + (f"..{expected + case.damaged}" if case.damaged else "")
        codes = ",".join(sorted(set(quarantine["reason_code"].dropna().astype(str))))[:80] \
            if quarantine is not None and "reason_code" in quarantine.columns else ""
        how = "fewer" if messages < expected else "more"
        problems.append(f"[accounting: {how} messages than the fuzzer counted; quarantine codes {codes or '-'}] "
                        f"fuzzer counted {allowed}, report says {messages}")
    return problems


def _check_raise(case: Case, source: Any, quarantined: int | None) -> list[str]:
    """Problems of the ``errors="raise"`` read: only DecodeError may escape, with its partial frame.

    ``quarantined`` (from the quarantine read) says whether it should raise at all.
    """
    options = {"dialect": case.dialect, "container": case.container, "errors": "raise"}
    try:
        timed_read(source, **options)
    except CaseTimeout as err:
        return [f"[raise: hang] {err}"]
    except cdckit.DecodeError as err:
        if not isinstance(err.partial, pd.DataFrame):
            return [f"[raise: DecodeError.partial not a DataFrame] {type(err.partial).__name__}"]
        if quarantined == 0:
            return [f"[raise: DecodeError where quarantine kept nothing] {str(err)[:200]}"]
        return []
    except Exception as err:  # noqa: BLE001
        if _allowed_without_file(case, err):
            return []
        return [escaped("raise", err)]
    if quarantined:
        return [f"[raise: no DecodeError although {quarantined} messages were quarantined]"]
    return []


def problem_class(problem: str) -> str:
    """The class of a problem line: the bracketed part (exception type and where, or the broken invariant)."""
    return problem[1 : problem.index("]")] if problem.startswith("[") and "]" in problem else problem[:80]


# ---------------------------------------------------------------- saving and loading cases


def _case_bytes(case: Case) -> bytes:
    """The case's input as bytes, for its hash."""
    if case.kind == "payload_bytes":
        return case.data
    if case.kind == "payload_str":
        return encode(case.data)
    if case.kind == "iterable":
        return repr_items(case.data).encode("utf-8", "surrogatepass")
    return b"".join(name.encode() + data for name, data in sorted(case.files.items()))


def repr_items(items: list[Any]) -> str:
    """A short readable rendering of an iterable case's items (deep nesting cut)."""
    short = reprlib.Repr()
    short.maxlevel, short.maxstring, short.maxother, short.maxlist, short.maxdict = 6, 200, 200, 20, 20
    return "[" + ", ".join(short.repr(item) for item in items) + "]"


def save(case: Case, problems: list[str], root: Path | str = CASES_DIR) -> Path:
    """Write a failing case to ``root/<short hash>/`` (inputs plus ``case.json``); returns the folder."""
    digest = hashlib.sha1(_case_bytes(case) + repr((case.kind, case.dialect, case.container)).encode()).hexdigest()
    folder = Path(root) / digest[:12]
    folder.mkdir(parents=True, exist_ok=True)
    meta: dict[str, Any] = {
        "family": case.family, "kind": case.kind, "dialect": case.dialect, "container": case.container,
        "expected_messages": case.expected_messages, "damaged": case.damaged, "names_no_file": case.names_no_file,
        "source_as": case.source_as, "seeds": case.seeds, "note": case.note, "unreadable": case.unreadable,
        "problems": problems, "positions_unique": case.positions_unique,
    }
    if case.kind == "payload_bytes":
        (folder / "payload.bin").write_bytes(case.data)
        meta["feed"] = "cdckit.read(open('payload.bin', 'rb').read(), ...)"
    elif case.kind == "payload_str":
        (folder / "payload.txt").write_bytes(encode_str(case.data))
        meta["feed"] = "cdckit.read(payload.txt read as UTF-8 with errors='surrogateescape' then 'surrogatepass', ...)"
        meta["str_errors"] = "surrogateescape" if any("\udc80" <= c <= "\udcff" for c in case.data) \
            else "surrogatepass"
    elif case.kind == "iterable":
        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(max(limit, 20_000))
        try:
            (folder / "items.pickle").write_bytes(pickle.dumps(case.data))
        except (pickle.PicklingError, TypeError, AttributeError) as err:  # object() and the like
            meta["pickle_error"] = str(err)
            (folder / "items.pickle").write_bytes(pickle.dumps([_picklable(i) for i in case.data]))
        finally:
            sys.setrecursionlimit(limit)
        meta["feed"] = f"cdckit.read(<items.pickle as a {case.source_as}>, ...)"
        meta["preview"] = repr_items(case.data)[:4000]
    else:
        for name, data in case.files.items():
            path = folder / "files" / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        meta["files"] = sorted(case.files)
        meta["feed"] = f"cdckit.read(<the {'file' if case.kind == 'file' else 'folder'} under files/>, ...)"
    (folder / "case.json").write_text(json.dumps(meta, indent=2, ensure_ascii=True) + "\n")
    return folder


def _picklable(item: Any) -> Any:
    """``item`` as pickle can keep it: a record's memoryview as bytes, anything else unpicklable as its repr."""
    if isinstance(item, KafkaRecord) and isinstance(item.value, memoryview):
        item = KafkaRecord(bytes(item.value), item.key, item.offset, item.partition, item.topic)
    try:
        pickle.dumps(item)
        return item
    except Exception:  # noqa: BLE001
        return repr(item)


def load_case(folder: Path) -> Case:
    """A case saved by :func:`save`."""
    meta = json.loads((folder / "case.json").read_text())
    case = Case(meta["family"], meta["kind"], dialect=meta["dialect"], container=meta["container"],
                expected_messages=meta["expected_messages"], damaged=meta["damaged"],
                names_no_file=meta["names_no_file"], source_as=meta["source_as"], seeds=meta["seeds"],
                note=meta["note"], unreadable=meta["unreadable"], saved_problems=meta["problems"], name=folder.name,
                positions_unique=meta.get("positions_unique", False))
    if case.kind == "payload_bytes":
        case.data = (folder / "payload.bin").read_bytes()
    elif case.kind == "payload_str":
        case.data = (folder / "payload.txt").read_bytes().decode("utf-8", meta.get("str_errors", "surrogatepass"))
    elif case.kind == "iterable":
        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(max(limit, 20_000))
        try:
            case.data = pickle.loads((folder / "items.pickle").read_bytes())
        finally:
            sys.setrecursionlimit(limit)
    else:
        case.files = {name: (folder / "files" / name).read_bytes() for name in meta.get("files", [])}
    return case


def load_cases(root: Path | str = CASES_DIR) -> list[Case]:
    """Every case saved under ``root`` (none when it does not exist)."""
    root = Path(root)
    if not root.is_dir():
        return []
    return [load_case(folder) for folder in sorted(root.iterdir()) if (folder / "case.json").is_file()]


def run_one(seed: int, family: str | None = None) -> tuple[Case, list[str], float]:
    """Generate the case of ``seed`` (and ``family``), check it; returns the case, its problems, the seconds taken."""
    case = generate(random.Random(seed), family)
    start = time.perf_counter()
    problems = check(case)
    return case, problems, time.perf_counter() - start
