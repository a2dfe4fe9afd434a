"""Blocks of saved Kafka records (kcat ``-J`` lines, console-consumer lines) through the batch path: the same
events, quarantine and counts as each line decoded alone, whatever the records hold."""

from __future__ import annotations

import itertools
import json

import pytest

from cdckit.dialects import registry
from cdckit.io import LineBlock, parse_line
from cdckit.io.console import console_line, console_lines, console_message
from cdckit.reading.decoding import MessageDecoder
from cdckit.reading.sinks import FrameSink
from cdckit.reading.workers import RangeSink


def change(i: int) -> dict:
    return {"op": "c" if i % 4 else "u", "ts_ms": 1_700_000_000_000 + i,
            "before": {"id": i, "name": "old"} if i % 4 == 0 else None,
            "after": {"id": i, "name": f"n{i}", "note": "tab\there"},
            "source": {"db": "shop", "table": "customers", "ts_ms": 1_700_000_000_000 + i}}


def kcat_line(i: int, **record) -> bytes:
    base = {"topic": "shop.customers", "partition": i % 3, "offset": 100 + i, "key": json.dumps({"id": i}),
            "payload": json.dumps(change(i))}
    base.update(record)
    return json.dumps({k: v for k, v in base.items() if v is not ...}).encode()


def console_text(i: int, key: str = "", value: str = "", partition: int | None = None) -> bytes:
    part = i % 3 if partition is None else partition
    return "\t".join([f"CreateTime:{1_700_000_000_000 + i}", f"Partition:{part}", f"Offset:{100 + i}",
                      key or json.dumps({"id": i}), value or json.dumps(change(i))]).encode()


def decoded(lines: list[bytes], alone: bool) -> tuple:
    """What a worker's sink holds once ``lines`` are decoded as one block, or each line alone (the reference)."""
    sink = RangeSink()
    decoder = MessageDecoder(registry.create("debezium"), sink)
    if alone:
        for index, raw in enumerate(lines):
            decoder.message(console_message(parse_line(raw.strip(), "s", index, index + 1)))
    else:
        decoder.block(LineBlock(0, 1, lines), "s")
    decoder.finish()
    result = sink.result()
    halves = [(p, m.offset, m.partition, m.raw, e) for p, m, _, e in result.pop("halves")]
    return result.pop("table").to_pylist(), halves, result


class Counting(FrameSink):
    def __init__(self) -> None:
        super().__init__()
        self.calls = {"rows": 0, "events": 0}

    def rows(self, table, *args, **kwargs) -> None:
        self.calls["rows"] += 1
        super().rows(table, *args, **kwargs)

    def events(self, msg, dialect, events) -> None:
        self.calls["events"] += 1
        super().events(msg, dialect, events)


@pytest.mark.parametrize("layout", ["kcat", "console"])
def test_interleaved_partitions_stay_in_one_run_with_a_partition_per_row(layout):
    lines = [kcat_line(i) if layout == "kcat" else console_text(i) for i in range(90)]
    sink = Counting()
    MessageDecoder(registry.create("debezium"), sink).block(LineBlock(0, 1, lines), "s")
    assert sink.calls == {"rows": 1, "events": 0}  # not 90 runs of one message
    table = sink.builder.to_arrow()
    assert table.column("partition").to_pylist() == [i % 3 for i in range(90)]
    assert table.column("offset").to_pylist() == [100 + i for i in range(90)]
    assert decoded(lines, alone=False) == decoded(lines, alone=True)


def test_kcat_records_of_every_shape_in_a_block_decode_as_each_alone():
    odd = {5: {"payload": None}, 9: {"payload": "not json"}, 13: {"payload": change(13)},  # null, text, object
           17: {"key": None}, 21: {"key": ...}, 25: {"partition": None}, 29: {"partition": ...},
           33: {"offset": ...}, 37: {"offset": 2**64}, 41: {"payload": "[1, 2]"}, 45: {"topic": 7},
           49: {"payload": json.dumps({"op": "c"})}, 53: {"value": json.dumps(change(53)), "payload": ...}}
    lines = [kcat_line(i, **odd.get(i, {})) for i in range(60)]
    lines[30] = lines[30][: len(lines[30]) // 2]  # a damaged record in the middle of the block
    lines[31] = b'{"not": "a record"}'
    lines[32] = b'"just text"'
    block, alone = decoded(lines, alone=False), decoded(lines, alone=True)
    assert block == alone
    assert len(block[2]["quarantine"]) >= 3 and {row["partition"] for row in block[0]} == {0, 1, 2, None}


def test_console_lines_of_every_shape_in_a_block_decode_as_each_alone():
    lines = [console_text(i) for i in range(60)]
    lines[5] = console_text(5, value="null")  # a tombstone
    lines[9] = console_text(9, key="null")
    lines[13] = console_text(13, key="plain-key")
    lines[17] = console_text(17, value='{"op": "c", "after": ')  # damaged in the middle of the block
    lines[21] = json.dumps(change(21)).encode()  # no separator: a bare message
    lines[25] = b"Partition:1\tNO_HEADERS\tk\t" + json.dumps(change(25)).encode()  # headers printed
    lines[29] = console_text(29, key='{"id": "a\tb"}')  # a key holding the separator
    lines[33] = console_text(33, value="[1, 2]")
    lines[37] = b"NO_TIMESTAMP\t" + json.dumps(change(37)).encode()  # no key printed
    lines[41] = console_text(41) + b"\r"
    assert decoded(lines, alone=False) == decoded(lines, alone=True)


def test_the_usual_console_line_is_read_as_the_general_reading_reads_it():
    prefixes = ["", "CreateTime:5\t", "NO_TIMESTAMP\t", "LogAppendTime:-1\t", "Partition:2\t", "Partition:-2\t",
                "Partition:99999999999999999999\t", "Offset:7\t", "Offset:9223372036854775808\t",
                "CreateTime:5\tPartition:2\tOffset:7\t", "Partition:2\tOffset:7\t", "Offset:7\tPartition:2\t",
                "NO_HEADERS\t", "h1:v1\t", "Partition:x\t", "\t"]
    keys = ["", "null", "k", "k:v", "NO_HEADERS", "NO_TIMESTAMP", '{"id":1}', '{"id":"a\tb"}', '{"id"', "[1]",
            '"q"', '"', "{", "Offset:3", "Partition:1", "CreateTime:4"]
    values = ['{"op":"c"}', "[1]", "null", "nul", '{"op"', "text", "", '{"a":1}\r', '{"a":1} ', '"s"']
    for prefix, key, value in itertools.product(prefixes, keys, values):
        for raw in ((prefix + key + "\t" + value).encode(), (prefix + value).encode()):
            for separator in (None, "\t"):
                try:
                    expected = console_line(raw, separator)
                except UnicodeDecodeError:
                    continue
                found = console_lines([raw, b'Offset:1\tk\t{}'], separator)
                assert (found[0] if found else None) == expected, raw


def test_a_key_that_is_not_utf8_is_left_to_the_general_reading():
    raw = b'CreateTime:1\tPartition:0\tOffset:1\tk\xff\t{"a":1}'
    assert console_lines([b"Offset:1\tk\t{}", raw])[1] is console_line(raw) is None


def sample_records(name: str) -> list[bytes]:
    import cdckit

    frames = [cdckit.read(cdckit.samples.path(s)) for s in cdckit.samples.list()]
    import pandas as pd

    events = pd.concat(frames, ignore_index=True).groupby(["dialect", "op"], group_keys=False).head(20)
    return [json.dumps(getattr(r, "value", r)).encode() if not isinstance(getattr(r, "value", r), (bytes, str))
            else getattr(r, "value", r) for r in cdckit.convert(events, name).records]


@pytest.mark.parametrize("name", ["debezium", "datahub_blob"])  # datahub_blob: update halves among the rows
def test_the_spark_sink_takes_kafka_records_of_interleaved_partitions_as_each_alone(name):
    from cdckit.spark.engine import _CombinedSink

    values = [v if isinstance(v, bytes) else v.encode() for v in sample_records(name)]
    values[len(values) // 2:len(values) // 2] = [b'{"broken": ', b"null"]
    count = len(values)
    columns = (values, [None] * count, ["t"] * count, [i % 3 for i in range(count)], list(range(count)),
               [None] * count)

    def combined(alone: bool) -> list[dict]:
        sink = _CombinedSink()
        decoder = MessageDecoder(registry.create(name), sink)
        if alone:
            for index in range(count):
                decoder.records(*(column[index:index + 1] for column in columns))
        else:
            decoder.records(*columns)
        decoder.finish()
        return sink.take().to_pylist() if len(sink) else []

    together = combined(alone=False)
    assert together == combined(alone=True)
    assert {row["partition"] for row in together} == {0, 1, 2}


@pytest.mark.parametrize("block_size", [1, 3, 7, 64, 1 << 20])
def test_json_lines_blocks_give_the_lines_and_numbers_of_the_stream_whatever_the_block_size(block_size):
    import io

    from cdckit.io.json_lines import jsonl_blocks

    data = b'\xef\xbb\xbf{"a": 1}\n\n  \n{"b": 2}\r\n' + b'{"long": "' + b"x" * 100 + b'"}\n\n{"c": 3}'
    expected = [(number, raw) for number, raw in enumerate(data[3:].split(b"\n"), start=1) if raw.strip()]
    for first_line in (1, 9):  # a range that is not the file's start keeps a leading BOM-like text as it is
        blocks = list(jsonl_blocks(io.BytesIO(data if first_line == 1 else data[3:]), 4, first_line, block_size))
        found = [(block.line_of(i) - first_line + 1, raw) for block in blocks for i, raw in enumerate(block.lines)]
        assert found == expected
        assert [block.first_offset for block in blocks] == list(
            itertools.accumulate([4] + [len(block.lines) for block in blocks[:-1]]))
