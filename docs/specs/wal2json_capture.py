"""How cdckit/samples/data/wal2json/examples_v1.jsonl and examples.jsonl (format-version 2) were captured.

Runs a workload on a PostgreSQL database (wal_level logical, the wal2json
plugin installed) with a wal2json replication slot, then reads the slot's
changes with format-version 1 and 2 (without consuming them) and prints them
as JSON Lines, one file per format. Long values are trimmed the same way in
both (see ``TRIMMED``). Usage::

    python docs/specs/wal2json_capture.py "host=127.0.0.1 port=55432 user=postgres dbname=w2j" out/
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import psycopg

SLOT = "cdckit_wal2json_capture"
#: The large value of the TOAST example, and the text it is replaced by in the samples.
BIG = "SELECT string_agg(md5(i::text), '') FROM generate_series(1, 300) AS i"
TRIMMED = "<9600 characters trimmed>"

SETUP = """
DROP TABLE IF EXISTS p, full_t, nopk, toasty, later_t;
CREATE TABLE p (id integer PRIMARY KEY, name text, n numeric(38,10), r real, d double precision,
    ts timestamp with time zone, tsn timestamp without time zone, dt date, b bytea, j jsonb, js json,
    a integer[], ta text[], f boolean, u uuid, v character varying(20), "Odd Col" text);
CREATE TABLE full_t (id integer PRIMARY KEY, a text, b integer);
ALTER TABLE full_t REPLICA IDENTITY FULL;
CREATE TABLE nopk (x integer, y text);
CREATE TABLE toasty (id integer PRIMARY KEY, note text, big text);
"""

WORKLOAD = [
    # every type, NULLs, unicode, a numeric with 30 digits
    """INSERT INTO p VALUES (1, E'a''b "q" \\\\ x\\nline2', 12345678901234567890.1234567890, 1.5, 0.1,
        '2024-01-02 03:04:05.123456+02', '2024-01-02 03:04:05', '2024-01-02', '\\x00ff', '{"k": [1, 2]}',
        '[1, "x"]', '{1,NULL,3}', '{"a b","c,d",NULL,"e\\"f"}', true, 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11',
        'short', 'ü€')""",
    # NaN and infinities, and a row of NULLs
    "INSERT INTO p (id, n, r, d) VALUES (2, 'NaN', 'NaN', '-Infinity')",
    "INSERT INTO p (id) VALUES (3)",
    # one transaction, three changes: an update, a primary key change, a delete
    ["UPDATE p SET name = 'changed', n = -0.5 WHERE id = 1", "UPDATE p SET id = 30 WHERE id = 3",
     "DELETE FROM p WHERE id = 2"],
    # REPLICA IDENTITY FULL: the whole old row (v1 leaves its NULL columns out)
    "INSERT INTO full_t VALUES (1, NULL, 5)",
    "UPDATE full_t SET b = 6 WHERE id = 1",
    "DELETE FROM full_t WHERE id = 1",
    # no primary key, no replica identity
    "INSERT INTO nopk VALUES (1, NULL)",
    "UPDATE nopk SET y = 'y'",
    # an unchanged TOASTed column is left out of the update
    f"INSERT INTO toasty VALUES (1, 'first', ({BIG}))",
    "UPDATE toasty SET note = 'second' WHERE id = 1",
    # TRUNCATE (format-version 1 writes an empty transaction)
    "TRUNCATE nopk",
    # logical messages, in a transaction and outside any
    ["SELECT pg_logical_emit_message(true, 'cdckit', 'in a transaction')", "INSERT INTO nopk VALUES (2, 'z')"],
    "SELECT pg_logical_emit_message(false, 'cdckit', 'outside any transaction')",
    # DDL is not decoded: an empty transaction
    "CREATE TABLE later_t (id integer)",
]

OPTIONS = {
    "examples_v1.jsonl": {"format-version": "1", "include-xids": "1", "include-timestamp": "1", "include-lsn": "1",
                          "include-pk": "1", "write-in-chunks": "0"},
    "examples.jsonl": {"format-version": "2", "include-xids": "1", "include-timestamp": "1", "include-lsn": "1",
                          "include-pk": "1", "include-transaction": "1"},
    "examples_v1_plain.jsonl": {"format-version": "1"},
    "examples_v2_plain.jsonl": {"format-version": "2", "include-transaction": "0"},
}


def _is_json(line: str) -> bool:
    try:
        json.loads(line)
    except ValueError:
        return False
    return True


def interleaved(dsn: str) -> None:
    """Two transactions whose changes interleave: B commits first, so A's first change comes after B's in
    the stream but has the lower LSN."""
    with psycopg.connect(dsn) as a, psycopg.connect(dsn) as b:
        a.execute("INSERT INTO p (id, name) VALUES (20, 'A first')")
        b.execute("INSERT INTO p (id, name) VALUES (21, 'B only')")
        b.commit()
        a.execute("INSERT INTO p (id, name) VALUES (22, 'A second')")
        a.commit()


def main(dsn: str, out: Path) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(SETUP)
        conn.execute(f"SELECT pg_drop_replication_slot('{SLOT}') FROM pg_replication_slots WHERE slot_name = '{SLOT}'")
        conn.execute(f"SELECT pg_create_logical_replication_slot('{SLOT}', 'wal2json')")
        big = conn.execute(BIG).fetchone()[0]
        for step in WORKLOAD:
            with conn.transaction():
                for statement in [step] if isinstance(step, str) else step:
                    conn.execute(statement)
    interleaved(dsn)
    with psycopg.connect(dsn, autocommit=True) as conn:
        for name, options in OPTIONS.items():
            args = ", ".join(f"'{k}', '{v}'" for k, v in options.items())
            rows = conn.execute(f"SELECT data FROM pg_logical_slot_peek_changes('{SLOT}', NULL, NULL, {args})")
            lines = [row[0].replace(big, TRIMMED) for row in rows]
            for line in lines:
                try:
                    json.loads(line)
                except ValueError:  # wal2json 2.5's v1 non-transactional message: {"change":[,{...}]}
                    print(f"{name}: not JSON, left out: {line}", file=sys.stderr)
            text = "".join(line + "\n" for line in lines if _is_json(line))
            (out / name).write_text(text, encoding="utf-8")
        conn.execute(f"SELECT pg_drop_replication_slot('{SLOT}')")


if __name__ == "__main__":
    main(sys.argv[1], Path(sys.argv[2]))
