"""Captures saved with ``kafka-console-consumer --property print.key=true``: keys from the Kafka key.

The layout (Kafka's ``DefaultMessageFormatter``): timestamp, partition,
offset, headers (each when asked for), key, value, between ``key.separator``
(a tab by default). Read like kcat ``-J`` lines: the same events, with the
printed partition and offset, on every read path.
"""

from __future__ import annotations

import itertools
import json

import pandas as pd
import pytest
from comparable import event_rows, rows

import cdckit
from cdckit import values
from cdckit.dialects import registry
from cdckit.io import ConsoleLayout, write_messages
from cdckit.io.console import LAYOUT_WITH_KEY, console_line
from cdckit.reading import workers
from cdckit.samples.shop import shop_events

#: The columns a console capture and its kcat twin share (the source is the file's name).
SAME = ["dialect", "offset", "partition", "op", "op_raw", "database", "schema", "table", "event_time",
        "emit_time", "seq", "txn_id", "key_columns", "key", "before", "after", "ddl"]
#: The same, without where the records sit (a test that prints no offset or partition).
CONTENT = [c for c in SAME if c not in ("offset", "partition")]


def shop_records(dialect: str = "debezium") -> list:
    return list(registry.create(dialect).encode(shop_events()))


def printed(records: list, fields: tuple[str, ...], sep: str = "\t", key_of=None) -> str:
    """The records as the console consumer prints them with ``fields`` before each key and value, the way
    Kafka's formatter writes them (written here by hand, not by cdckit's writer)."""
    lines = []
    for i, record in enumerate(records):
        parts = []
        if "timestamp" in fields:
            parts.append(f"CreateTime:{1714554000000 + i}" if i % 5 else "LogAppendTime:1714554000000")
        if "partition" in fields:
            parts.append(f"Partition:{i % 3}")
        if "offset" in fields:
            parts.append(f"Offset:{1000 + i}")
        if "headers" in fields:
            parts.append("NO_HEADERS" if i % 2 else f"trace:id:{i},origin:a,b")  # header values with : and ,
        key = record.key if key_of is None else key_of(record)
        parts.append("null" if key is None else key if isinstance(key, str) else values.dumps(key))
        parts.append("null" if record.value is None else values.dumps(record.value))
        lines.append(sep.join(parts))
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def kcat_events() -> pd.DataFrame:
    return cdckit.read(cdckit.samples.path("debezium/shop"))


PREFIXES = ("timestamp", "partition", "offset", "headers")


@pytest.mark.parametrize("fields", [c for n in range(len(PREFIXES) + 1) for c in itertools.combinations(PREFIXES, n)],
                         ids=lambda fields: "+".join(fields) or "key-only")
@pytest.mark.parametrize("sep", ["\t", "|", " => "], ids=["tab", "bar", "arrow"])
def test_every_prefix_combination_and_separator_reads_as_kcat(fields, sep, kcat_events, tmp_path):
    path = tmp_path / "console.txt"
    path.write_text(printed(shop_records(), fields, sep))
    capture = cdckit.read(path, key_separator=None if sep == "\t" else sep, capture=True)
    got = capture.events
    assert capture.report["quarantined"] == 0
    assert event_rows(got, CONTENT) == event_rows(kcat_events, CONTENT)
    assert got["key_columns"].notna().all()
    if "offset" in fields:
        assert got["offset"].tolist() == [1000 + i for i in range(len(got))]
    else:
        assert got["offset"].tolist() == list(range(len(got)))  # the line ordinal
    if "partition" in fields:
        assert got["partition"].tolist() == [i % 3 for i in range(len(got))]
    else:
        assert got["partition"].isna().all()


def test_the_bundled_sample_replays_exactly_as_its_kcat_twin(kcat_events):
    console = cdckit.read(cdckit.samples.path("debezium/console_keys"), capture=True)
    assert console.report["quarantined"] == 0
    assert event_rows(console.events, SAME) == event_rows(kcat_events, SAME)
    got, want = cdckit.materialize(console.events), cdckit.materialize(kcat_events)
    assert got.keys() == want.keys()
    for table in want:
        assert rows(got[table]) == rows(want[table]), table


@pytest.mark.parametrize("dialect", ["debezium", "debezium_flat", "debezium_mongodb", "arcion"])
def test_the_console_writer_round_trips_and_keys_give_key_columns(dialect, tmp_path):
    records = shop_records(dialect)
    write_messages(records, tmp_path / "k.jsonl", "kcat")
    write_messages(records, tmp_path / "c.txt", "console", timestamps=[1714554000000] * len(records))
    write_messages(records, tmp_path / "a.txt", "console", console=ConsoleLayout(" => ", timestamp=False,
                                                                                  headers=True))
    kcat = cdckit.read(tmp_path / "k.jsonl")
    assert kcat["key_columns"].notna().any()
    for name, separator in (("c.txt", None), ("a.txt", " => ")):
        console = cdckit.read(tmp_path / name, key_separator=separator, capture=True)
        assert console.report["quarantined"] == 0, console.quarantine
        assert event_rows(console.events, SAME) == event_rows(kcat, SAME), name
        assert cdckit.detect(tmp_path / name, key_separator=separator).dialect == dialect


def test_a_debezium_key_gives_the_key_with_or_without_its_schema(tmp_path):
    records = shop_records()
    bare = printed(records, ("offset",), key_of=lambda r: r.key["payload"])  # {"id": 1}: no schema
    events = cdckit.read(bare)
    kcat = cdckit.read(cdckit.samples.path("debezium/shop"))
    assert event_rows(events, ["key_columns", "key", "after"]) == event_rows(kcat, ["key_columns", "key", "after"])


def test_null_key_tombstone_and_headers():
    value = {"before": None, "after": {"id": 7, "name": "x"}, "op": "c", "ts_ms": 1,
             "source": {"connector": "mysql", "db": "shop", "table": "t", "ts_ms": 1}}
    text = (f"CreateTime:1\tPartition:4\tOffset:10\tNO_HEADERS\tnull\t{json.dumps(value)}\n"
            f"CreateTime:2\tPartition:4\tOffset:11\ta:b:c,d:e,f\t{{\"id\":7}}\t{json.dumps(value)}\n"
            "CreateTime:3\tPartition:4\tOffset:12\tNO_HEADERS\t{\"id\":7}\tnull\n")
    capture = cdckit.read(text, capture=True)
    events = capture.events
    assert capture.report["quarantined"] == 0
    assert events["offset"].tolist() == [10, 11, 12] and events["partition"].tolist() == [4, 4, 4]
    assert events["op"].tolist() == ["insert", "insert", "tombstone"]
    assert events["key"].tolist()[1:] == ["[7]", "[7]"]
    assert list(events["key_columns"].iloc[2]) == ["id"]


def test_separators_inside_json_are_not_field_ends():
    for sep in ("|", " => "):
        key = {"id": "a|b"} if sep == "|" else {"id": "k => v"}
        value = {"before": None, "after": {**key, "note": "x|y => z"}, "op": "c", "ts_ms": 1,
                 "source": {"connector": "mysql", "db": "shop", "table": "t", "ts_ms": 1}}
        line = sep.join(["Offset:3", json.dumps(key), json.dumps(value)])
        found = console_line(line.encode(), sep)
        assert json.loads(found.key) == key and json.loads(found.value) == value and found.offset == 3
        events = cdckit.read(line + "\n", key_separator=sep)
        assert json.loads(events["key"].iloc[0]) == [key["id"]]
        assert json.loads(events["after"].iloc[0])["note"] == "x|y => z"


def test_every_read_path_gives_the_same_events(tmp_path, kcat_events):
    text = printed(shop_records(), ("timestamp", "partition", "offset"))
    path = tmp_path / "c.txt"
    path.write_text(text)
    want = event_rows(kcat_events, CONTENT)
    lines = text.splitlines()
    for label, source, options in (
            ("file", path, {}), ("file as text", path, {"container": "text"}),
            ("file, dialect given", path, {"dialect": "debezium"}), ("str", text, {}),
            ("bytes", text.encode(), {}), ("lines", lines, {}), ("byte lines", [ln.encode() for ln in lines], {}),
            ("chunks", path, {"chunksize": 50})):
        got = cdckit.read(source, **options)
        got = pd.concat(list(got), ignore_index=True) if options.get("chunksize") else got
        assert event_rows(got, CONTENT) == want, label
        assert got["offset"].tolist() == [1000 + i for i in range(len(got))], label


@pytest.mark.parametrize("sep", ["\t", " => "])
def test_worker_ranges_give_the_one_process_read(sep, tmp_path, monkeypatch):
    path = tmp_path / "c.txt"
    path.write_text(printed(shop_records() * 3, ("timestamp", "partition", "offset", "headers"), sep))
    monkeypatch.setattr(workers, "RANGE_BYTES", max(1, path.stat().st_size // 7))  # several ranges per worker
    separator = None if sep == "\t" else sep
    one = cdckit.read(path, workers=1, key_separator=separator)
    many = cdckit.read(path, workers=2, key_separator=separator)
    assert one.attrs["report"]["quarantined"] == 0
    assert one.equals(many) and one.attrs["report"] == many.attrs["report"]
    assert one["partition"].notna().all()


def test_detection_names_the_layout():
    found = cdckit.detect(cdckit.samples.path("debezium/console_keys"))
    assert found.dialect == "debezium" and LAYOUT_WITH_KEY in found.evidence
    assert LAYOUT_WITH_KEY not in cdckit.detect(cdckit.samples.path("debezium/shop")).evidence


def test_text_dialects_with_tabs_are_not_taken_for_the_layout():
    for line in (b"table public.t: INSERT: id[integer]:1 note[text]:'a\tb'",
                 b"table public.t: INSERT: doc[json]:'x'\t{\"a\": 1",
                 "src=css\xfeop=I\tx\xfe{}".encode("latin-1"), b"\t\t{}", b"BEGIN 42\t[1]x"):
        assert console_line(line) is None, line
    for sample in ("universe", "universe/shop", "pg_test_decoding", "pg_test_decoding/shop"):
        assert cdckit.detect(cdckit.samples.path(sample)).dialect == sample.split("/")[0]
        events = cdckit.read(cdckit.samples.path(sample))
        assert events.attrs["report"]["quarantined"] == 0


def test_spark_reads_the_same_events(spark, tmp_path):
    from cdckit import spark as cdcspark

    path = tmp_path / "c.txt"
    path.write_text(printed(shop_records(), ("timestamp", "partition", "offset", "headers"), " => "))
    want = cdckit.read(path, key_separator=" => ")
    got = cdcspark.read(spark, str(path), split_messages=40, key_separator=" => ").toPandas()
    assert event_rows(got, SAME + ["source"]) == event_rows(want, SAME + ["source"])
    sample = cdckit.samples.path("debezium/console_keys")
    got = cdcspark.read(spark, str(sample), split_messages=40).toPandas()
    assert event_rows(got, SAME) == event_rows(cdckit.read(sample), SAME)


def test_cli_key_separator(capsys, tmp_path):
    from cdckit.cli import main

    path = tmp_path / "c.txt"
    path.write_text(printed(shop_records(), ("offset",), " => "))
    out = tmp_path / "events.parquet"
    assert main(["convert", str(path), "-o", str(out), "--key-separator", " => "]) == 0
    events = cdckit.read(out)
    assert events["key_columns"].notna().all() and events["offset"].iloc[0] == 1000
    assert main(["convert", str(path), "-o", str(tmp_path / "bad.parquet")]) != 0  # without it: unknown lines
    capsys.readouterr()
