"""Capture a workload from a real PostgreSQL with wal2json (format versions 1 and 2), test_decoding and Debezium.

``python -m cdckit.samples.postgres.capture`` (needs Debian's ``postgresql-15``
and ``postgresql-15-wal2json``, psycopg from the ``dev`` extra and Debezium's
engine from the ``producers`` extra) writes the committed samples:
``wal2json/postgres_v1.jsonl``, ``wal2json/postgres_v2.jsonl``,
``pg_test_decoding/postgres.txt`` (as ``pg_recvlogical`` writes it),
``pg_test_decoding/postgres_copy.txt`` (the SQL interface's rows copied out:
LSN, xid, text), Debezium's captures (:data:`SAMPLE_NAMES`: values as
``kafka-console-consumer`` prints them, ``kcat -J`` with keys, decimals as
text with Connect times, rows flattened by ``ExtractNewRecordState``), plus
the tables' contents half way and at the end under
``cdckit/samples/postgres/tables``.

>>> sorted(SLOTS)
['tdcopy', 'tdtext', 'w2j1', 'w2j2']
"""

from __future__ import annotations

import base64
import json
import subprocess
import sys
import uuid
from dataclasses import dataclass, field
from datetime import date, datetime, time
from decimal import Decimal
from pathlib import Path
from typing import Any

import pandas as pd

from ...python_columns import object_columns
from .. import DATA
from . import debezium as dbz
from .server import Server
from .workload import KEYS, SCHEMA, TABLES, Workload

__all__ = [
    "SLOTS",
    "Capture",
    "capture",
    "snapshot",
    "tables",
    "TABLES_DIR",
    "write_samples",
    "TRANSACTION_SAMPLE",
    "write_transaction_sample",
]

#: Slot name -> (plugin, options, file name under the capture folder).
SLOTS = {
    "w2j1": (
        "wal2json",
        {"format-version": "1", "include-lsn": "1", "include-pk": "1", "include-timestamp": "1", "include-xids": "1"},
        "wal2json_v1.jsonl",
    ),
    "w2j2": (
        "wal2json",
        {
            "format-version": "2",
            "include-lsn": "1",
            "include-pk": "1",
            "include-timestamp": "1",
            "include-xids": "1",
            "include-transaction": "1",
        },
        "wal2json_v2.jsonl",
    ),
    "tdtext": ("test_decoding", {"include-timestamp": "1"}, "test_decoding.txt"),
    "tdcopy": ("test_decoding", {"include-timestamp": "1"}, "test_decoding_copy.txt"),
}
#: Where the committed tables' contents live (beside this module, not among the captures).
TABLES_DIR = Path(__file__).parent / "tables"


@dataclass
class Capture:
    """What a capture run made: the capture files, the LSN half way, and the tables then and at the end.

    ``info`` says how: seed, statements run, ``mid_lsn`` and ``mid_time`` (the server's WAL position and clock
    when the tables were read half way), ``end_lsn``, the server version.
    """

    files: dict[str, Path]
    mid_lsn: str
    end_lsn: str
    mid: dict[str, pd.DataFrame]
    final: dict[str, pd.DataFrame]
    info: dict[str, Any] = field(default_factory=dict)


def _plain(value: Any) -> Any:
    """A value read from PostgreSQL as cdckit images carry it: bytea as Base64, uuid as text."""
    if isinstance(value, (bytes, memoryview)):
        return base64.b64encode(bytes(value)).decode()
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def snapshot(connection: Any) -> dict[str, pd.DataFrame]:
    """``SELECT * FROM`` every workload table, as DataFrames (exact values: Decimal, aware datetimes)."""
    frames = {}
    for name in TABLES:
        cursor = connection.execute(
            f"SELECT * FROM {name} ORDER BY {', '.join(KEYS.get(name, ['at', 'actor', 'detail']))}"
        )
        columns = [c.name for c in cursor.description]
        frames[name] = pd.DataFrame(
            [[_plain(v) for v in row] for row in cursor.fetchall()], columns=columns, dtype=object
        )
    connection.commit()
    return frames


def _position(connection: Any) -> tuple[str, str]:
    """The server's WAL insert position and clock now (no transaction of the workload is open)."""
    lsn, now = connection.execute("SELECT pg_current_wal_insert_lsn()::text, clock_timestamp()").fetchone()
    connection.commit()
    return lsn, now.isoformat()


def capture(
    server: Server, folder: Path, workload: Workload, debezium: list[str] | None = None, registry: str | None = None
) -> Capture:
    """Create the tables and slots, run ``workload``, and capture it into ``folder`` through every slot.

    test_decoding's slots decode two-phase transactions at their ``PREPARE``.
    ``debezium`` names the Debezium capture styles to run beside them
    (:data:`debezium.STYLES`; the ``producers`` extra): their files are in
    ``files`` under the style's name; ``registry``: the schema registry's URL that the ``avro`` and
    ``protobuf`` styles register their schemas with.
    """
    import psycopg  # the dev extra: only capture runs need it

    folder.mkdir(parents=True, exist_ok=True)
    with psycopg.connect(server.dsn(), autocommit=True) as admin:
        admin.execute(SCHEMA)
        for slot, (plugin, _, _) in SLOTS.items():
            admin.execute(
                "SELECT pg_create_logical_replication_slot(%s, %s, false, %s)",
                (slot, plugin, plugin == "test_decoding"),
            )
        if debezium:
            dbz.prepare(admin, debezium)
        version = admin.execute("SHOW server_version").fetchall()[0][0]
    engines = dbz.start(server.port, folder / "debezium", debezium, registry) if debezium else None
    with (
        psycopg.connect(server.dsn()) as first,
        psycopg.connect(server.dsn()) as second,
        psycopg.connect(server.dsn()) as reader,
    ):
        half: dict[str, Any] = {}

        def on_half() -> None:
            half["lsn"], half["time"] = _position(reader)
            half["tables"] = snapshot(reader)

        statements = workload.run(first, second, on_half=on_half)
        end_lsn, _ = _position(reader)
        final = snapshot(reader)
        files = {slot: folder / name for slot, (_, _, name) in SLOTS.items()}
        with (
            open(files["tdcopy"], "wb") as out,
            reader.cursor().copy(
                "COPY (SELECT * FROM pg_logical_slot_get_changes('tdcopy', %s::pg_lsn, NULL, "
                "'include-timestamp', '1')) TO STDOUT",
                (end_lsn,),
            ) as copy,
        ):
            for block in copy:
                out.write(block)
        reader.commit()
    for slot, (_, options, _) in SLOTS.items():
        if slot == "tdcopy":
            continue
        args = ["-d", "postgres", "--slot", slot, "--start", "--no-loop", "-E", end_lsn, "-f", str(files[slot])]
        for name, value in options.items():
            args += ["-o", f"{name}={value}"]
        receiver = server.client("pg_recvlogical", *args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        _, err = receiver.communicate(timeout=120)
        if receiver.returncode != 0:
            raise RuntimeError(f"pg_recvlogical for slot {slot} failed: {err.decode(errors='replace')}")
    if engines is not None:
        files.update(dbz.finish(engines, folder / "debezium"))
    info = {
        "seed": workload.seed,
        "transactions": workload.transactions,
        "statements": statements,
        "mid_lsn": half["lsn"],
        "mid_time": half["time"],
        "end_lsn": end_lsn,
        "postgres": version,
    }
    return Capture(files, half["lsn"], end_lsn, half["tables"], final, info)


# ------------------------------------------------------------ the committed samples

#: Capture file -> where it is committed under ``cdckit/samples/data``.
SAMPLE_NAMES = {
    "w2j1": "wal2json/postgres_v1.jsonl",
    "w2j2": "wal2json/postgres_v2.jsonl",
    "tdtext": "pg_test_decoding/postgres.txt",
    "tdcopy": "pg_test_decoding/postgres_copy.txt",
    "values": "debezium/postgres_values.jsonl",
    "kcat": "debezium/postgres_kcat.jsonl",
    "string": "debezium/postgres_string.jsonl",
    "flat": "debezium_flat/postgres_kcat.jsonl",
}


def _json_default(value: Any) -> Any:
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, (datetime, date, time)):
        return value.isoformat()
    raise TypeError(f"cannot write {type(value).__name__}")


def _write_tables(frames: dict[str, pd.DataFrame], folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name, frame in frames.items():
        with open(folder / f"{name}.jsonl", "w", encoding="utf-8") as out:
            for record in frame.to_dict("records"):
                out.write(json.dumps(record, default=_json_default, ensure_ascii=False) + "\n")


def tables(when: str = "final") -> dict[str, pd.DataFrame]:
    """The committed tables' contents at the end of the sample capture (``"final"``) or half way (``"mid"``).

    Numbers that ``numeric`` columns held are text (exact), times ISO text;
    :func:`cdckit.reconcile` compares them with a replayed state by value.

    >>> sorted(tables())[:2]
    ['public.audit', 'public.customers']
    """
    frames = {}
    for path in sorted((TABLES_DIR / when).glob("*.jsonl")):
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
        frames[path.name[: -len(".jsonl")]] = object_columns(pd.DataFrame(rows))  # values as JSON has them
    return frames


def info() -> dict[str, Any]:
    """How the committed sample capture was made (seed, statements, LSNs, PostgreSQL version)."""
    return json.loads((TABLES_DIR / "capture.json").read_text())


def write_samples(result: Capture) -> None:
    """Commit-ready files: the captures under ``samples/data``, the tables under :data:`TABLES_DIR`."""
    for slot, name in SAMPLE_NAMES.items():
        if slot not in result.files:
            continue
        target = DATA / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(result.files[slot].read_bytes())
    _write_tables(result.mid, TABLES_DIR / "mid")
    _write_tables(result.final, TABLES_DIR / "final")
    (TABLES_DIR / "capture.json").write_text(json.dumps(result.info, indent=1) + "\n")


#: The Debezium capture with its transaction topic, under ``cdckit/samples/data``.
TRANSACTION_SAMPLE = "debezium/postgres_transactions.jsonl"
#: Its workload: small (a few hundred records), the sample workload's seed.
TRANSACTION_WORKLOAD = {"seed": 14, "transactions": 40}


def write_transaction_sample(server: Server, folder: Path, target: Path | None = None) -> Path:
    """Capture :data:`TRANSACTION_WORKLOAD` with the ``kcat`` style (data topics and the transaction topic in
    one file) from ``server`` and write it to ``target`` (:data:`TRANSACTION_SAMPLE` by default)."""
    result = capture(server, folder, Workload(**TRANSACTION_WORKLOAD), ["kcat"])
    target = target or DATA / TRANSACTION_SAMPLE
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(result.files["kcat"].read_bytes())
    return target


def main(argv: list[str] | None = None) -> int:
    """Run the sample workload against a throwaway server and write the samples (``--transactions``: only
    :data:`TRANSACTION_SAMPLE`)."""
    problem = dbz.missing()
    if problem:
        print(problem, file=sys.stderr)
        return 1
    if "--transactions" in (sys.argv[1:] if argv is None else argv):
        with Server() as server:
            written = write_transaction_sample(server, server.root / "capture")
        print(f"written {written}")
        return 0
    with Server() as server:
        result = capture(
            server,
            server.root / "capture",
            Workload(seed=14, transactions=60),
            sorted(SAMPLE_NAMES.keys() & dbz.STYLES.keys()),
        )
        write_samples(result)
    print(f"captured {result.info['statements']} statements; samples written under {DATA} and {TABLES_DIR}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
