"""Capture the MySQL workload with the Debezium MySQL connector, and read the live tables as cdckit shows them.

:func:`capture` creates the tables and the snapshot's rows, starts the
engines (:mod:`cdckit.samples.mysql.debezium`), waits for their snapshots,
streams the workload, and reads every table half way and at the end.
:func:`snapshot` reads the live tables with each value as cdckit's replay
gives it, so :func:`cdckit.reconcile` compares them cell by cell:

- ``BIT(n)`` as its number (``BIT(1)`` too: the replay's ``true`` is 1);
- ``TIME`` as MySQL writes it (``-838:59:59.000000``; see :func:`time_text`);
- ``POINT`` as ``{"x", "y", "wkb", "srid"}`` (Debezium's
  ``io.debezium.data.geometry.Point``, WKB in Base64);
- binary as Base64; ``DATETIME``/``TIMESTAMP`` as UTC (the reading session's zone);
- a zero date (``0000-00-00``) as the text MySQL shows.

>>> from datetime import timedelta
>>> time_text(timedelta(hours=-838, minutes=-59, seconds=-59)), time_text(timedelta(seconds=1, microseconds=5))
('-838:59:59', '00:00:01.000005')
"""

from __future__ import annotations

import base64
import struct
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

import pandas as pd

from ..debezium_engine import missing as engine_missing
from . import debezium as dbz
from .server import Server
from .server import missing as server_missing
from .workload import KEYS, TABLES, Workload

__all__ = ["Capture", "capture", "snapshot", "time_text", "missing"]

_BIT, _GEOMETRY = 16, 255  # MySQL's protocol column types


def missing() -> str | None:
    """Why a capture cannot run here (and how to fix it), or None when it can."""
    import importlib.util

    if importlib.util.find_spec("pymysql") is None:
        return "PyMySQL is not installed: pip install 'cdckit[producers]'"
    return server_missing() or engine_missing()


@dataclass
class Capture:
    """What a capture run made: the capture file of each style and the tables half way and at the end.

    ``info`` says how: seed, statements run, ``mid_time`` (the server's UTC
    clock when the tables were read half way), the server's version.
    """

    files: dict[str, Path]
    mid: dict[str, pd.DataFrame]
    final: dict[str, pd.DataFrame]
    info: dict[str, Any] = field(default_factory=dict)


def time_text(value: timedelta) -> str:
    """A MySQL ``TIME`` (a duration, -838:59:59 to 838:59:59) as MySQL writes it: hours beyond 24, a sign,
    microseconds when there are any."""
    micros = value // timedelta(microseconds=1)
    sign = "-" if micros < 0 else ""
    seconds, fraction = divmod(abs(micros), 1_000_000)
    text = f"{sign}{seconds // 3600:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"
    return text + (f".{fraction:06d}" if fraction else "")


def _point(wkb: bytes) -> dict[str, Any]:
    """MySQL's geometry value (a 4-byte SRID, then WKB) as Debezium's Point: x, y, the WKB, the SRID."""
    srid = struct.unpack("<I", wkb[:4])[0]
    body = wkb[4:]
    x, y = struct.unpack("<dd" if body[0] == 1 else ">dd", body[5:21])
    return {"x": x, "y": y, "wkb": base64.b64encode(body).decode(), "srid": srid or None}


def _plain(value: Any, type_code: int) -> Any:
    if value is None:
        return None
    if type_code == _BIT:
        return int.from_bytes(value, "big")
    if type_code == _GEOMETRY:
        return _point(value)
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(bytes(value)).decode()
    if isinstance(value, timedelta):
        return time_text(value)
    return value


def snapshot(connection: Any) -> dict[str, pd.DataFrame]:
    """``SELECT * FROM`` every workload table (in a UTC session), each value as cdckit's replay gives it."""
    frames = {}
    with connection.cursor() as cursor:
        cursor.execute("SET time_zone = '+00:00'")
        for name in TABLES:
            cursor.execute(f"SELECT * FROM {name} ORDER BY {', '.join(KEYS.get(name, ['at', 'actor', 'detail']))}")
            described = [(c[0], c[1]) for c in cursor.description]
            rows = [[_plain(v, code) for v, (_, code) in zip(row, described)] for row in cursor.fetchall()]
            frames[name] = pd.DataFrame(rows, columns=[c for c, _ in described], dtype=object)
    return frames


def _utc_now(connection: Any) -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT DATE_FORMAT(UTC_TIMESTAMP(6), '%Y-%m-%dT%H:%i:%s.%fZ')")
        return str(cursor.fetchone()[0])


def capture(server: Server, folder: Path, workload: Workload, styles: list[str] | None = None) -> Capture:
    """Create and fill the tables, start the engines of ``styles`` (all by default), stream ``workload``."""
    folder.mkdir(parents=True, exist_ok=True)
    with server.connect(autocommit=True) as admin:
        workload.prepare(admin)
        with admin.cursor() as cursor:
            cursor.execute("SELECT VERSION()")
            version = cursor.fetchone()[0]
    engines = dbz.start(server.port, folder, styles)
    try:
        dbz.wait_ready(engines, folder, styles)
        half: dict[str, Any] = {}
        with server.connect(autocommit=True) as writer, server.connect(autocommit=True) as reader:

            def on_half() -> None:
                half["time"] = _utc_now(reader)
                half["tables"] = snapshot(reader)

            statements = workload.run(writer, on_half=on_half)
            final = snapshot(reader)
        files = dbz.finish(engines, folder)
    finally:
        if engines.poll() is None:
            engines.kill()
            engines.wait()
    info = {"seed": workload.seed, "statements": statements, "mid_time": half["time"], "mysql": version}
    return Capture(files, half["tables"], final, info)
