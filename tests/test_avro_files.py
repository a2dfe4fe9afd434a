"""Avro object container files (Kafka Connect's S3/GCS sinks, AvroFormat) read as the same records captured
through the JSON converter: the Connect schemas and payloads of the JSON side are written here by hand."""

from __future__ import annotations

import base64
import json
import shutil

import fastavro
import pytest
from comparable import event_rows

import cdckit
from cdckit import spark as cdcspark
from cdckit.frame import COLUMN_NAMES
from cdckit.io import file_messages, sniff_container

TOPIC = "pg.public.t"
DECIMAL = {
    "type": "bytes", "scale": 2, "precision": 10, "connect.version": 1,
    "connect.parameters": {"scale": "2", "connect.decimal.precision": "10"},
    "connect.name": "org.apache.kafka.connect.data.Decimal", "logicalType": "decimal",
}  # fmt: skip
VALUE = {
    "type": "record", "name": "Value", "namespace": TOPIC, "connect.name": f"{TOPIC}.Value", "fields": [
        {"name": "id", "type": {"type": "int", "connect.default": 0}, "default": 0},
        {"name": "price", "type": ["null", DECIMAL], "default": None},
        {"name": "small", "type": ["null", {"type": "int", "connect.type": "int16"}], "default": None},
        {"name": "day", "type": ["null", {"type": "int", "connect.version": 1, "connect.name": "io.debezium.time.Date"}],
         "default": None},
        {"name": "ts", "type": ["null", {"type": "long", "connect.version": 1,
                                         "connect.name": "io.debezium.time.MicroTimestamp"}], "default": None},
        {"name": "pic", "type": ["null", "bytes"], "default": None},
        {"name": "note", "type": ["null", "string"], "default": None},
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
        {"name": "db", "type": "string"}, {"name": "schema", "type": "string"}, {"name": "table", "type": "string"},
        {"name": "txId", "type": ["null", "long"], "default": None},
        {"name": "lsn", "type": ["null", "long"], "default": None},
    ],
}  # fmt: skip
ENVELOPE = {
    "type": "record", "name": "Envelope", "namespace": TOPIC, "connect.version": 2,
    "connect.name": f"{TOPIC}.Envelope", "fields": [
        {"name": "before", "type": ["null", VALUE], "default": None},
        {"name": "after", "type": ["null", "Value"], "default": None},
        {"name": "source", "type": SOURCE},
        {"name": "op", "type": "string"},
        {"name": "ts_ms", "type": ["null", "long"], "default": None},
    ],
}  # fmt: skip
KEY = {
    "type": "record", "name": "Key", "namespace": TOPIC, "connect.name": f"{TOPIC}.Key",
    "fields": [{"name": "id", "type": {"type": "int", "connect.default": 0}, "default": 0}],
}  # fmt: skip

# The same schemas as Kafka Connect's JsonConverter writes them (by hand).
JSON_VALUE_FIELDS = [
    {"type": "int32", "optional": False, "default": 0, "field": "id"},
    {"type": "bytes", "optional": True, "name": "org.apache.kafka.connect.data.Decimal", "version": 1,
     "parameters": {"scale": "2", "connect.decimal.precision": "10"}, "field": "price"},
    {"type": "int16", "optional": True, "field": "small"},
    {"type": "int32", "optional": True, "name": "io.debezium.time.Date", "version": 1, "field": "day"},
    {"type": "int64", "optional": True, "name": "io.debezium.time.MicroTimestamp", "version": 1, "field": "ts"},
    {"type": "bytes", "optional": True, "field": "pic"},
    {"type": "string", "optional": True, "field": "note"},
]  # fmt: skip
JSON_ENVELOPE = {
    "type": "struct", "optional": False, "name": f"{TOPIC}.Envelope", "version": 2, "fields": [
        {"type": "struct", "fields": JSON_VALUE_FIELDS, "optional": True, "name": f"{TOPIC}.Value", "field": "before"},
        {"type": "struct", "fields": JSON_VALUE_FIELDS, "optional": True, "name": f"{TOPIC}.Value", "field": "after"},
        {"type": "struct", "optional": False, "name": "io.debezium.connector.postgresql.Source", "field": "source",
         "fields": [
            {"type": "string", "optional": False, "field": "version"},
            {"type": "string", "optional": False, "field": "connector"},
            {"type": "string", "optional": False, "field": "name"},
            {"type": "int64", "optional": False, "field": "ts_ms"},
            {"type": "string", "optional": True, "name": "io.debezium.data.Enum", "version": 1,
             "parameters": {"allowed": "true,last,false,incremental"}, "default": "false", "field": "snapshot"},
            {"type": "string", "optional": False, "field": "db"},
            {"type": "string", "optional": False, "field": "schema"},
            {"type": "string", "optional": False, "field": "table"},
            {"type": "int64", "optional": True, "field": "txId"},
            {"type": "int64", "optional": True, "field": "lsn"},
        ]},
        {"type": "string", "optional": False, "field": "op"},
        {"type": "int64", "optional": True, "field": "ts_ms"},
    ],
}  # fmt: skip
JSON_KEY = {"type": "struct", "optional": False, "name": f"{TOPIC}.Key",
            "fields": [{"type": "int32", "optional": False, "default": 0, "field": "id"}]}  # fmt: skip


def _source(lsn: int) -> dict:
    return {"version": "3.6.3", "connector": "postgresql", "name": "pg", "ts_ms": 1700000000000 + lsn,
            "snapshot": "false", "db": "shop", "schema": "public", "table": "t", "txId": 700 + lsn, "lsn": lsn}  # fmt: skip


def _row(i: int, price: bytes | None, **more) -> dict:
    return {"id": i, "price": price, "small": None, "day": None, "ts": None, "pic": None, "note": None, **more}


#: (key, value) records: a create with every type, updates, a delete; nulls and negative numbers among them.
RECORDS = [
    ({"id": 1}, {"before": None, "after": _row(1, b"\x30\x39", small=-3, day=19700, ts=1700000000123456,
                                                pic=b"\xff\x00\x10", note="first"),
                 "source": _source(10), "op": "c", "ts_ms": 1}),
    ({"id": 2}, {"before": None, "after": _row(2, b"\xff\x9c", small=32767), "source": _source(20), "op": "c",
                 "ts_ms": 2}),
    ({"id": 1}, {"before": _row(1, b"\x30\x39", small=-3), "after": _row(1, None, day=-1, note="ü"),
                 "source": _source(30), "op": "u", "ts_ms": 3}),
    ({"id": 2}, {"before": _row(2, None), "after": None, "source": {**_source(40), "snapshot": None}, "op": "d",
                 "ts_ms": None}),
    ({"id": 3}, {"before": None, "after": _row(3, b"\x00", pic=b""), "source": _source(50), "op": "r",
                 "ts_ms": 5}),
]  # fmt: skip


def _connect_json(value):
    """A payload as the JSON converter writes it: bytes in Base64 (by hand, not through cdckit)."""
    if isinstance(value, dict):
        return {k: _connect_json(v) for k, v in value.items()}
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    return value


def _write_avro(path, schema, records, codec="null", block=None):
    with open(path, "wb") as out:
        fastavro.writer(out, schema, records, codec=codec, sync_interval=block or 16000)


def _write_kcat(path, first_offset=0, partition=0):
    """The same records saved with kcat -J through the JSON converter (key and value as JSON text)."""
    with open(path, "w") as out:
        for index, (key, value) in enumerate(RECORDS):
            line = {
                "topic": TOPIC, "partition": partition, "offset": first_offset + index,
                "key": json.dumps({"schema": JSON_KEY, "payload": key}),
                "payload": json.dumps({"schema": JSON_ENVELOPE, "payload": _connect_json(value)}),
            }  # fmt: skip
            out.write(json.dumps(line) + "\n")


def _write_values_jsonl(path):
    with open(path, "w") as out:
        for _, value in RECORDS:
            out.write(json.dumps({"schema": JSON_ENVELOPE, "payload": _connect_json(value)}) + "\n")


COMPARED = [c for c in COLUMN_NAMES if c != "source"]


def _same_events(got, expected, columns=COMPARED):
    assert len(got) == len(expected) == len(RECORDS)
    assert event_rows(got, columns) == event_rows(expected, columns)
    assert got[columns].astype(str).values.tolist() == expected[columns].astype(str).values.tolist()


def test_a_container_file_reads_as_the_json_converters_lines(tmp_path):
    _write_avro(tmp_path / "values.avro", ENVELOPE, [v for _, v in RECORDS])
    _write_values_jsonl(tmp_path / "values.jsonl")
    got = cdckit.read(tmp_path / "values.avro")
    expected = cdckit.read(tmp_path / "values.jsonl")
    _same_events(got, expected)
    assert got["offset"].tolist() == [0, 1, 2, 3, 4] and got["partition"].isna().all()
    first = json.loads(got.loc[0, "after"])
    assert first["price"] == 123.45 and first["small"] == -3 and first["pic"] == "/wAQ"
    assert got.attrs["report"]["detection"][str(tmp_path / "values.avro")]["dialect"] == "debezium"


def test_messages_are_those_of_framed_records_of_the_schema(tmp_path):
    _write_avro(tmp_path / "x.avro", ENVELOPE, [v for _, v in RECORDS])
    messages = list(file_messages(str(tmp_path / "x.avro")))
    assert [m.value for m in messages] == [
        {"schema": JSON_ENVELOPE, "payload": _connect_json(v)} for _, v in RECORDS
    ]  # the Connect schema, field for field what the JSON converter writes
    assert sniff_container(open(tmp_path / "x.avro", "rb").read(64)) == "avro"


@pytest.mark.parametrize("codec", ["null", "deflate", "bzip2", "xz"])
def test_sink_file_names_give_topic_partition_and_offsets_and_keys_pair(tmp_path, codec):
    name = f"{TOPIC}+3+0000000120"
    _write_avro(tmp_path / f"{name}.avro", ENVELOPE, [v for _, v in RECORDS], codec, block=200)
    _write_avro(tmp_path / f"{name}.keys.avro", KEY, [k for k, _ in RECORDS], codec)
    _write_kcat(tmp_path / "kcat.jsonl", first_offset=120, partition=3)
    got = cdckit.read(tmp_path / f"{name}.avro")
    _same_events(got, cdckit.read(tmp_path / "kcat.jsonl"))
    assert got["offset"].tolist() == [120, 121, 122, 123, 124] and set(got["partition"]) == {3}
    assert list(got["key_columns"].tolist()[0]) == ["id"] and [json.loads(k)[0] for k in got["key"]] == [1, 2, 1, 2, 3]
    message = next(file_messages(str(tmp_path / f"{name}.avro")))
    assert (message.topic, message.key) == (TOPIC, {"schema": JSON_KEY, "payload": {"id": 1}})


def test_a_folder_reads_the_keys_file_with_its_values_not_alone(tmp_path):
    folder = tmp_path / "topics" / TOPIC / "partition=0"
    folder.mkdir(parents=True)
    _write_avro(folder / f"{TOPIC}+0+0000000000.avro", ENVELOPE, [v for _, v in RECORDS[:3]])
    _write_avro(folder / f"{TOPIC}+0+0000000000.keys.avro", KEY, [k for k, _ in RECORDS[:3]])
    _write_avro(folder / f"{TOPIC}+0+0000000003.avro", ENVELOPE, [v for _, v in RECORDS[3:]])
    _write_avro(folder / f"{TOPIC}+0+0000000003.keys.avro", KEY, [k for k, _ in RECORDS[3:]])
    _write_kcat(tmp_path / "kcat.jsonl")
    expected = cdckit.read(tmp_path / "kcat.jsonl")
    for workers in (1, 2):
        got = cdckit.read(tmp_path / "topics", workers=workers)
        _same_events(got, expected)
        assert got["offset"].tolist() == [0, 1, 2, 3, 4]
        assert sorted(got.attrs["report"]["detection"]) == sorted(str(p) for p in folder.glob("*+?????????[03].avro"))
    globbed = cdckit.read(str(folder / "*.avro"))
    _same_events(globbed, expected)


def _damaged(tmp_path, how):
    good = tmp_path / f"{TOPIC}+0+0000000010.avro"
    _write_avro(good, ENVELOPE, [v for _, v in RECORDS], block=1)  # a block per record
    data = bytearray(good.read_bytes())
    sync = data[-16:]
    ends = [i + 16 for i in range(len(data)) if data[i : i + 16] == sync][1:]  # the ends of the blocks
    if how == "truncated":
        data = data[: ends[1] + 10]  # inside the third block
    elif how == "sync":
        data[ends[2] - 1] ^= 0xFF  # the third block's marker
    elif how == "magic":
        data[:4] = b"Obj\x02"
    path = tmp_path / f"{TOPIC}+0+0000000010.avro"
    path.write_bytes(bytes(data))
    return path


@pytest.mark.parametrize("how, kept", [("truncated", 2), ("sync", 2), ("magic", 0)])
def test_a_damaged_file_keeps_the_records_before_the_damage(tmp_path, how, kept):
    path = _damaged(tmp_path, how)
    capture = cdckit.read(path, capture=True)
    assert capture.events["offset"].tolist() == list(range(10, 10 + kept))
    bad = capture.quarantine
    assert bad["reason_code"].tolist() == ["damaged_container"] and bad["offset"].tolist() == [10 + kept]
    assert bad.loc[0, "reason"].startswith("damaged avro file: ")
    assert bad.loc[0, "reason"].endswith(f"the {kept} message(s) before the damage are kept")


def test_a_gzip_container_file_and_a_forced_container(tmp_path):
    import gzip

    _write_avro(tmp_path / "x.avro", ENVELOPE, [v for _, v in RECORDS])
    _write_values_jsonl(tmp_path / "values.jsonl")
    (tmp_path / "x.bin.gz").write_bytes(gzip.compress((tmp_path / "x.avro").read_bytes()))
    _same_events(cdckit.read(tmp_path / "x.bin.gz"), cdckit.read(tmp_path / "values.jsonl"))
    shutil.copy(tmp_path / "x.avro", tmp_path / "x.data")
    _same_events(cdckit.read(tmp_path / "x.data", container="avro"), cdckit.read(tmp_path / "values.jsonl"))


def test_spark_reads_container_files_as_pandas_does(spark, tmp_path):
    folder = tmp_path / "sink"
    folder.mkdir()
    _write_avro(folder / f"{TOPIC}+1+0000000000.avro", ENVELOPE, [v for _, v in RECORDS[:3]])
    _write_avro(folder / f"{TOPIC}+1+0000000000.keys.avro", KEY, [k for k, _ in RECORDS[:3]])
    _write_avro(folder / f"{TOPIC}+1+0000000003.avro", ENVELOPE, [v for _, v in RECORDS[3:]])
    _write_avro(folder / f"{TOPIC}+1+0000000003.keys.avro", KEY, [k for k, _ in RECORDS[3:]])
    shutil.copy(_damaged(tmp_path, "truncated"), folder / f"{TOPIC}+0+0000000010.avro")
    expected = cdckit.read(folder, capture=True)
    events = cdcspark.read(spark, folder)
    columns = list(COLUMN_NAMES)
    assert event_rows(events.toPandas(), columns) == event_rows(expected.events, columns)
    assert len(expected.events) == 7
    bad = cdcspark.quarantine(events).toPandas()
    assert bad[["offset", "reason_code"]].values.tolist() == [[12, "damaged_container"]]
    assert bad.loc[0, "reason"] == expected.quarantine.loc[0, "reason"]


def test_a_cut_gzip_container_file_is_one_damage_entry(tmp_path):
    import gzip

    _write_avro(tmp_path / "x.avro", ENVELOPE, [v for _, v in RECORDS] * 40, block=400)
    packed = gzip.compress((tmp_path / "x.avro").read_bytes())
    (tmp_path / "x.avro.gz").write_bytes(packed[:-60])  # the last few blocks and the trailer cut off
    capture = cdckit.read(tmp_path / "x.avro.gz", capture=True)
    bad = capture.quarantine
    assert bad["reason_code"].tolist() == ["damaged_container"] and 0 < len(capture.events) < 200
    assert "the gzip file around it is damaged" in bad.loc[0, "reason"]
    assert bad["offset"].tolist() == [len(capture.events)]
