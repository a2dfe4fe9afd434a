"""A throwaway PostgreSQL 15 cluster on 127.0.0.1, for captures and tests.

``initdb`` into a temporary folder, ``wal_level=logical``, a free port, run
as ``nobody`` when the caller is root (PostgreSQL refuses to run as root),
stopped and removed on exit.

>>> missing() is None or "apt-get install" in missing()
True
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path
from typing import Any

__all__ = ["Server", "missing", "BIN", "PACKAGES"]

#: Where Debian puts the server programs.
BIN = Path("/usr/lib/postgresql/15/bin")
#: The Debian packages the server and the wal2json plugin come from.
PACKAGES = "postgresql-15 postgresql-15-wal2json"
_PLUGIN = Path("/usr/lib/postgresql/15/lib/wal2json.so")
#: Settings for a server that only captures: logical decoding on, no syncs to disk (a throwaway cluster).
#: Commits stay synchronous: logical decoding reads only WAL already flushed, so an asynchronous commit's
#: changes could be missing from a capture taken right after it. Prepared transactions are allowed (two-phase
#: commits). The zone is St. John's, whose offsets before 1935 have seconds (``-03:30:52``): the plugins write
#: ``timestamptz`` in the decoding session's zone, which is the server's.
SETTINGS = {
    "wal_level": "logical",
    "max_replication_slots": "16",
    "max_wal_senders": "16",
    "fsync": "off",
    "full_page_writes": "off",
    "listen_addresses": "127.0.0.1",
    "timezone": "America/St_Johns",
    "max_prepared_transactions": "10",
}


def _known(setting: str) -> bool:
    """Whether this server build has ``setting`` (newer minor releases add some)."""
    described = subprocess.run([str(BIN / "postgres"), "--describe-config"], capture_output=True, text=True)
    return any(line.split("\t", 1)[0] == setting for line in described.stdout.splitlines())


def missing() -> str | None:
    """Why a server cannot be started here (and how to fix it), or None when it can."""
    lacking = [str(p) for p in (BIN / "initdb", BIN / "pg_ctl", BIN / "pg_recvlogical", _PLUGIN) if not p.exists()]
    if not lacking:
        return None
    return (
        f"PostgreSQL 15 with wal2json is not installed (missing {', '.join(lacking)}); "
        f"on Debian or Ubuntu: sudo apt-get install {PACKAGES}"
    )


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Server:
    """A PostgreSQL cluster in a temporary folder; a context manager that starts and removes it.

    ``dsn(db)`` is a connection string for psycopg, ``run(program, ...)``
    runs a client program (``pg_recvlogical``) against it.
    """

    def __init__(self) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="cdckit-pg-"))
        self.port = _free_port()
        self.data = self.root / "data"
        self._as_nobody = os.geteuid() == 0

    def __enter__(self) -> Server:
        try:
            self.start()
        except BaseException:
            self.remove()
            raise
        return self

    def __exit__(self, *exc: Any) -> None:
        self.remove()

    def _server_command(self, *args: str) -> list[str]:
        return (["runuser", "-u", "nobody", "--"] if self._as_nobody else []) + list(args)

    def start(self) -> None:
        """initdb, then start the server and wait until it accepts connections."""
        problem = missing()
        if problem:
            raise RuntimeError(problem)
        if self._as_nobody:
            self.root.chmod(0o755)
            shutil.chown(self.root, "nobody")
        subprocess.run(
            self._server_command(
                str(BIN / "initdb"), "-D", str(self.data), "-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C"
            ),
            check=True,
            capture_output=True,
        )
        settings = {**SETTINGS, "port": self.port, "unix_socket_directories": self.root}
        if _known("output_plugin_libraries"):  # releases that have it allow only listed plugins for slots
            settings["output_plugin_libraries"] = "pgoutput,test_decoding,wal2json"
        options = " ".join(f"-c {k}={v}" for k, v in settings.items())
        subprocess.run(
            self._server_command(
                str(BIN / "pg_ctl"),
                "-D",
                str(self.data),
                "-o",
                options,
                "-l",
                str(self.root / "server.log"),
                "-w",
                "start",
            ),
            check=True,
            capture_output=True,
        )

    def dsn(self, db: str = "postgres") -> str:
        """A libpq connection string for database ``db``."""
        return f"host=127.0.0.1 port={self.port} user=postgres dbname={db}"

    def client(self, program: str, *args: str, **options: Any) -> subprocess.Popen:
        """Start a client program (``pg_recvlogical``...) connected to this server."""
        common = ["-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres"]
        return subprocess.Popen([str(BIN / program), *common, *args], **options)

    def remove(self) -> None:
        """Stop the server (if it runs) and remove its folder."""
        if (self.data / "postmaster.pid").exists():
            subprocess.run(
                self._server_command(str(BIN / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop"),
                capture_output=True,
            )
        shutil.rmtree(self.root, ignore_errors=True)
