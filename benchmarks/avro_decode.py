"""Avro decoding benchmark: cdckit's decoding of framed Debezium Avro records against fastavro's own reader.

Makes N (default 200,000) Debezium PostgreSQL change records as Confluent's Avro converter frames them
(magic byte, schema id, Avro body; a realistic ``Envelope`` of 11 columns with a decimal, a date, a
MicroTimestamp, bytes, an int16, a boolean and nulls, a full ``Source`` block and a ``transaction`` block)
and measures, interleaved, the median of ``--repeat`` rounds (ratios taken per round):

- baseline: ``fastavro.schemaless_reader`` of every body (one process, a ``BytesIO`` per body, the schema
  parsed once): the floor of any Python Avro decoder;
- ``unframe``: :meth:`cdckit.io.schema_book.SchemaBook.unframe` of each message holding a framed value
  (:class:`~cdckit.io.wire_format.Framed`) to its ``{"schema", "payload"}`` value, as a read does;
  ratio to the baseline (speed of ours / speed of the baseline; goal: at least 0.5x);
- ``read``: the whole ``cdckit.read`` of the binary capture file (kcat ``-J`` lines with the framed key and
  value in Base64, the schemas in its ``.schemas`` folder) to events, one worker; its ratio to the baseline;
- ``container``: ``cdckit.read`` of the same records as an Avro object container file (Kafka Connect's S3
  sink) with its keys file, one worker; its ratio to the baseline.

Also printed, for reference: the baseline reading with the logical types left off (no ``Decimal`` made),
which is what cdckit reads.

Run: ``python benchmarks/avro_decode.py [-n 200000] [--repeat 3]``.
"""

from __future__ import annotations

import argparse
import copy
import io
import json
import os
import platform
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import fastavro

import cdckit
from cdckit.io import Message
from cdckit.io.kafka import record_line
from cdckit.io.registered_schema import RegisteredSchema, save_schemas
from cdckit.io.schema_book import SchemaBook
from cdckit.io.wire_format import framed

TOPIC = "pg.public.orders"
VALUE_ID, KEY_ID = 41, 40


def _optional(kind: Any) -> list:
    return ["null", kind]


VALUE = {
    "type": "record", "name": "Value", "namespace": TOPIC, "connect.name": f"{TOPIC}.Value", "fields": [
        {"name": "id", "type": {"type": "int", "connect.default": 0}, "default": 0},
        {"name": "customer_id", "type": "long"},
        {"name": "status", "type": _optional("string"), "default": None},
        {"name": "email", "type": _optional("string"), "default": None},
        {"name": "amount", "type": _optional({
            "type": "bytes", "scale": 2, "precision": 12, "connect.version": 1,
            "connect.parameters": {"scale": "2", "connect.decimal.precision": "12"},
            "connect.name": "org.apache.kafka.connect.data.Decimal", "logicalType": "decimal"}), "default": None},
        {"name": "quantity", "type": _optional({"type": "int", "connect.type": "int16"}), "default": None},
        {"name": "order_date", "type": _optional({"type": "int", "connect.version": 1,
                                                  "connect.name": "io.debezium.time.Date"}), "default": None},
        {"name": "updated_at", "type": _optional({"type": "long", "connect.version": 1,
                                                  "connect.name": "io.debezium.time.MicroTimestamp"}),
         "default": None},
        {"name": "paid", "type": _optional("boolean"), "default": None},
        {"name": "receipt", "type": _optional("bytes"), "default": None},
        {"name": "note", "type": _optional("string"), "default": None},
    ],
}  # fmt: skip
SOURCE = {
    "type": "record", "name": "Source", "namespace": "io.debezium.connector.postgresql",
    "connect.name": "io.debezium.connector.postgresql.Source", "fields": [
        {"name": "version", "type": "string"}, {"name": "connector", "type": "string"},
        {"name": "name", "type": "string"}, {"name": "ts_ms", "type": "long"},
        {"name": "snapshot", "type": [{"type": "string", "connect.version": 1,
                                       "connect.parameters": {"allowed": "true,last,false,incremental"},
                                       "connect.default": "false", "connect.name": "io.debezium.data.Enum"}, "null"],
         "default": "false"},
        {"name": "db", "type": "string"}, {"name": "sequence", "type": _optional("string"), "default": None},
        {"name": "ts_us", "type": _optional("long"), "default": None},
        {"name": "ts_ns", "type": _optional("long"), "default": None},
        {"name": "schema", "type": "string"}, {"name": "table", "type": "string"},
        {"name": "txId", "type": _optional("long"), "default": None},
        {"name": "lsn", "type": _optional("long"), "default": None},
        {"name": "xmin", "type": _optional("long"), "default": None},
    ],
}  # fmt: skip
BLOCK = {
    "type": "record", "name": "block", "namespace": "event", "connect.version": 1, "connect.name": "event.block",
    "fields": [{"name": "id", "type": "string"}, {"name": "total_order", "type": "long"},
               {"name": "data_collection_order", "type": "long"}],
}  # fmt: skip
ENVELOPE = {
    "type": "record", "name": "Envelope", "namespace": TOPIC, "connect.version": 2,
    "connect.name": f"{TOPIC}.Envelope", "fields": [
        {"name": "before", "type": _optional(VALUE), "default": None},
        {"name": "after", "type": _optional("Value"), "default": None},
        {"name": "source", "type": SOURCE},
        {"name": "transaction", "type": _optional(BLOCK), "default": None},
        {"name": "op", "type": "string"},
        {"name": "ts_ms", "type": _optional("long"), "default": None},
        {"name": "ts_us", "type": _optional("long"), "default": None},
        {"name": "ts_ns", "type": _optional("long"), "default": None},
    ],
}  # fmt: skip
KEY = {
    "type": "record", "name": "Key", "namespace": TOPIC, "connect.name": f"{TOPIC}.Key",
    "fields": [{"name": "id", "type": {"type": "int", "connect.default": 0}, "default": 0}],
}  # fmt: skip


def _row(i: int, version: int) -> dict[str, Any]:
    return {
        "id": i, "customer_id": 1_000_000 + i % 5000, "status": ("new", "paid", "shipped")[version % 3],
        "email": None if i % 7 == 0 else f"customer{i % 5000}@example.com",
        "amount": (12345 + i * 7 + version).to_bytes(4, "big", signed=True), "quantity": (i % 40) - 3,
        "order_date": 19700 + i % 365, "updated_at": 1_700_000_000_000_000 + i * 1000 + version,
        "paid": version > 0, "receipt": None if version == 0 else bytes([i % 256, version, 0, 255]),
        "note": None if i % 3 else "leave at the door",
    }  # fmt: skip


def records(n: int) -> list[tuple[dict, dict]]:
    """``n`` changes: a create of each key, then updates (with before images) and some deletes."""
    out = []
    keys = max(1, n // 4)
    for number in range(n):
        i, version = number % keys, number // keys
        lsn = 30_000_000 + number * 64
        source = {
            "version": "3.6.3.Final", "connector": "postgresql", "name": "pg", "ts_ms": 1_700_000_000_000 + number,
            "snapshot": "false", "db": "shop", "sequence": f'["{lsn - 64}","{lsn}"]', "ts_us": None, "ts_ns": None,
            "schema": "public", "table": "orders", "txId": 700 + number // 3, "lsn": lsn, "xmin": None,
        }  # fmt: skip
        block = {"id": f"{700 + number // 3}:{lsn}", "total_order": number % 3 + 1, "data_collection_order": 1}
        if version == 0:
            before, after, op = None, _row(i, 0), "c"
        elif number % 11 == 0:
            before, after, op = _row(i, version - 1), None, "d"
        else:
            before, after, op = _row(i, version - 1), _row(i, version), "u"
        value = {"before": before, "after": after, "source": source, "transaction": block, "op": op,
                 "ts_ms": 1_700_000_000_500 + number, "ts_us": None, "ts_ns": None}  # fmt: skip
        out.append(({"id": i}, value))
    return out


def _body(schema: Any, datum: dict) -> bytes:
    out = io.BytesIO()
    fastavro.schemaless_writer(out, schema, datum)
    return out.getvalue()


def _frame(schema_id: int, body: bytes) -> bytes:
    return b"\x00" + schema_id.to_bytes(4, "big") + body


def _without_logical_types(schema: Any) -> Any:
    if isinstance(schema, dict):
        return {k: _without_logical_types(v) for k, v in schema.items() if k != "logicalType"}
    if isinstance(schema, list):
        return [_without_logical_types(v) for v in schema]
    return schema


def paired(repeat: int, runs: dict[str, Callable[[], int]]) -> dict[str, tuple[float, float]]:
    """Each run in turn, ``repeat`` rounds: the median records/s of each, and the median per-round ratio of
    each rate to the first run's (the baseline)."""
    rates: dict[str, list[float]] = {name: [] for name in runs}
    ratios: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(repeat):
        for name, run in runs.items():
            began = time.perf_counter()
            count = run()
            rates[name].append(count / (time.perf_counter() - began))
        first = next(iter(runs))
        for name in runs:
            ratios[name].append(rates[name][-1] / rates[first][-1])
    return {name: (statistics.median(rates[name]), statistics.median(ratios[name])) for name in runs}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("-n", type=int, default=200_000, help="records (default 200,000)")
    parser.add_argument("--repeat", type=int, default=3, help="rounds (default 3)")
    args = parser.parse_args()
    print(f"machine: {os.cpu_count()} cores, {platform.processor() or platform.machine()}; Python "
          f"{platform.python_version()}, fastavro {fastavro.__version__}, cdckit {cdckit.__version__}")  # fmt: skip

    changes = records(args.n)
    writer_schema = fastavro.parse_schema(copy.deepcopy(ENVELOPE))
    key_schema = fastavro.parse_schema(copy.deepcopy(KEY))
    bodies = [_body(writer_schema, value) for _, value in changes]
    key_bodies = [_body(key_schema, key) for key, _ in changes]
    print(f"{args.n:,} records, {sum(map(len, bodies)) / args.n:.0f} bytes per value body on average")

    book = SchemaBook()
    book._known[VALUE_ID] = RegisteredSchema(VALUE_ID, "AVRO", json.dumps(ENVELOPE), f"{TOPIC}-value", 1)
    book._known[KEY_ID] = RegisteredSchema(KEY_ID, "AVRO", json.dumps(KEY), f"{TOPIC}-key", 1)
    values = [framed(_frame(VALUE_ID, body)) for body in bodies]
    plain_schema = fastavro.parse_schema(_without_logical_types(ENVELOPE))

    def baseline() -> int:
        reader, schema = fastavro.schemaless_reader, writer_schema
        for body in bodies:
            reader(io.BytesIO(body), schema, None)
        return len(bodies)

    def baseline_plain() -> int:
        reader, schema = fastavro.schemaless_reader, plain_schema
        for body in bodies:
            reader(io.BytesIO(body), schema, None)
        return len(bodies)

    def unframe() -> int:
        last = None
        for offset, value in enumerate(values):  # a message as a read makes it, its value dropped as the baseline's
            last = book.unframe(Message(value, TOPIC, offset, partition=0))
        assert last is not None and last.error is None and last.value["payload"]["op"] in ("c", "u", "d")
        return len(values)

    with tempfile.TemporaryDirectory() as folder:
        capture = Path(folder) / "capture.jsonl"
        with open(capture, "wb") as out:
            for offset, (body, key) in enumerate(zip(bodies, key_bodies)):
                line = record_line(TOPIC, 0, offset, (1, 1_700_000_000_000 + offset), _frame(KEY_ID, key),
                                   _frame(VALUE_ID, body), None)  # fmt: skip
                out.write(line + b"\n")
        save_schemas(list(book._known.values()), f"{capture}.schemas")
        sink = Path(folder) / "sink"
        sink.mkdir()
        with open(sink / f"{TOPIC}+0+0000000000.avro", "wb") as out:
            fastavro.writer(out, writer_schema, (value for _, value in changes))
        with open(sink / f"{TOPIC}+0+0000000000.keys.avro", "wb") as out:
            fastavro.writer(out, key_schema, (key for key, _ in changes))
        print(f"binary capture: {capture.stat().st_size / 1e6:.0f} MB; container file: "
              f"{(sink / f'{TOPIC}+0+0000000000.avro').stat().st_size / 1e6:.0f} MB")  # fmt: skip

        def read(path: Path) -> Callable[[], int]:
            def run() -> int:
                events = cdckit.read(path, workers=1)
                assert len(events) == args.n, len(events)
                return len(events)

            return run

        found = paired(
            args.repeat,
            {
                "baseline": baseline,
                "baseline, logical types off": baseline_plain,
                "unframe": unframe,
                "read": read(capture),
                "container": read(sink),
            },
        )
    labels = {
        "baseline": "fastavro.schemaless_reader (baseline)",
        "baseline, logical types off": "  the same, logical types off (reference)",
        "unframe": "SchemaBook.unframe to message values",
        "read": "cdckit.read of the binary capture, to events",
        "container": "cdckit.read of the container file, to events",
    }
    for name, (rate, ratio) in found.items():
        goal = "  (goal: at least 0.5x)" if name == "unframe" else ""
        print(f"  {labels[name]:48s} {rate:>10,.0f} records/s  {ratio:5.2f}x baseline{goal}")


if __name__ == "__main__":
    main()
