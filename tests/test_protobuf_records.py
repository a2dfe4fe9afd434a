"""Protobuf records in Confluent's wire format read as the JSON converter's records of the same changes."""

from __future__ import annotations

import base64
import json
import struct
import sys

import pytest

import cdckit
from cdckit.io.kafka import record_line
from cdckit.io.registered_schema import RegisteredSchema, save_schemas

pytest.importorskip("grpc_tools")
pytest.importorskip("google.protobuf")

from cdckit.io.protobuf_connect import ProtobufDecoder, compile_proto  # noqa: E402

TOPIC = "pg.public.orders"
VALUE_ID, KEY_ID, OTHER_ID, BROKEN_ID = 11, 12, 13, 14

# The .proto Confluent's Protobuf converter registers for Debezium's PostgreSQL envelope (fromConnectSchema:
# the root message named by the Connect name, the structs nested in it, a Decimal as confluent.type.Decimal).
ENVELOPE = """syntax = "proto3";
package pg.public.orders;

import "confluent/meta.proto";
import "confluent/type/decimal.proto";

message Envelope {
  Value before = 1;
  Value after = 2;
  Source source = 3;
  string op = 4;
  int64 ts_ms = 5;

  message Value {
    int32 id = 1;
    string name = 2;
    confluent.type.Decimal price = 3 [(confluent.field_meta) = {
      params: [ { key: "precision", value: "10" }, { key: "scale", value: "2" } ]
    }];
    bool active = 4;
  }
  message Source {
    string version = 1;
    string connector = 2;
    string name = 3;
    int64 ts_ms = 4;
    string snapshot = 5;
    string db = 6;
    string sequence = 7;
    string schema = 8;
    string table = 9;
    int64 txId = 10;
    int64 lsn = 11;
    int64 xmin = 12;
  }
}
"""
KEY = """syntax = "proto3";
package pg.public.orders;

message Key {
  int32 id = 1;
}
"""
# Every other kind of field ProtobufData reads, and nested messages to name by index paths.
KINDS = """syntax = "proto3";
package demo;

import "google/protobuf/timestamp.proto";
import "google/protobuf/wrappers.proto";
import "google/type/date.proto";

message First { string s = 1; }
message Outer {
  message Inner {
    message Deepest { sint64 n = 1; }
    uint32 u = 1;
  }
  string t = 1;
}
message Kinds {
  enum Color { RED = 0; GREEN = 1; }
  sint32 a = 1;
  uint64 b = 2;
  float f = 3;
  double d = 4;
  bytes raw = 5;
  Color color = 6;
  repeated int32 many = 7;
  map<string, int64> counts = 8;
  map<int32, string> names = 9;
  oneof choice {
    string word = 10;
    int32 number = 11;
  }
  google.protobuf.Timestamp at = 12;
  google.type.Date day = 13;
  google.protobuf.StringValue maybe = 14;
  optional string opt = 15;
  First first = 16;
}
"""

_SOURCE = {
    "version": "2.7.0.Final",
    "connector": "postgresql",
    "name": "pg",
    "ts_ms": 1700000000000,
    "snapshot": "false",
    "db": "shop",
    "sequence": '["100","200"]',
    "schema": "public",
    "table": "orders",
    "txId": 501,
    "lsn": 200,
    "xmin": 0,
}


def _decimal(unscaled: int) -> bytes:
    return unscaled.to_bytes((~unscaled if unscaled < 0 else unscaled).bit_length() // 8 + 1, "big", signed=True)


def _frame(schema_id: int, indexes: list[int], body: bytes) -> bytes:
    """Confluent's wire format: magic 0, the id, the message indexes (zig-zag varints; [0] as one 0), the body."""
    if indexes == [0]:
        head = b"\x00"
    else:
        head = bytes([len(indexes) * 2]) + bytes(i * 2 for i in indexes)
    return b"\x00" + struct.pack(">I", schema_id) + head + body


# ------------------------------------------------------------------ the same changes as the JSON converter writes


def _json_value_schema() -> dict:
    value = {
        "type": "struct",
        "optional": True,
        "name": "pg.public.orders.Value",
        "fields": [
            {"type": "int32", "optional": False, "field": "id"},
            {"type": "string", "optional": True, "field": "name"},
            {
                "type": "bytes",
                "optional": True,
                "name": "org.apache.kafka.connect.data.Decimal",
                "version": 1,
                "parameters": {"scale": "2", "connect.decimal.precision": "10"},
                "field": "price",
            },
            {"type": "boolean", "optional": True, "field": "active"},
        ],
    }
    source = {
        "type": "struct",
        "optional": False,
        "name": "io.debezium.connector.postgresql.Source",
        "fields": [
            {"type": "string", "optional": False, "field": k}
            if isinstance(v, str)
            else {"type": "int64", "optional": k not in ("ts_ms",), "field": k}
            for k, v in _SOURCE.items()
        ],
    }
    return {
        "type": "struct",
        "optional": False,
        "name": "pg.public.orders.Envelope",
        "fields": [
            {**value, "field": "before"},
            {**value, "field": "after"},
            {**source, "field": "source"},
            {"type": "string", "optional": False, "field": "op"},
            {"type": "int64", "optional": True, "field": "ts_ms"},
        ],
    }


def _json_key_schema() -> dict:
    return {
        "type": "struct",
        "optional": False,
        "name": "pg.public.orders.Key",
        "fields": [{"type": "int32", "optional": False, "field": "id"}],
    }


CHANGES = [  # (op, before, after, lsn)
    ("c", None, {"id": 1, "name": "Ada", "price": 1999, "active": True}, 100),
    ("u", {"id": 1, "name": "Ada", "price": 1999, "active": True}, {"id": 1, "name": "Ada L", "price": -5, "active": False}, 200),
    ("d", {"id": 1, "name": "Ada L", "price": -5, "active": False}, None, 300),
]  # fmt: skip


def _json_row(row: dict | None) -> dict | None:
    if row is None:
        return None
    return {**row, "price": base64.b64encode(_decimal(row["price"])).decode("ascii")}


def _json_lines() -> bytes:
    lines = []
    for offset, (op, before, after, lsn) in enumerate(CHANGES):
        source = {**_SOURCE, "lsn": lsn}
        payload = {"before": _json_row(before), "after": _json_row(after), "source": source, "op": op,
                   "ts_ms": 1700000000100 + offset}  # fmt: skip
        value = json.dumps({"schema": _json_value_schema(), "payload": payload}).encode()
        key = json.dumps({"schema": _json_key_schema(), "payload": {"id": (after or before)["id"]}}).encode()
        lines.append(record_line(TOPIC, 0, offset, (1, 1700000000200 + offset), key, value, None))
    return b"\n".join(lines) + b"\n"


# ------------------------------------------------------------------ the same changes through the Protobuf converter


@pytest.fixture(scope="module")
def classes():
    envelope, key = ProtobufDecoder(ENVELOPE), ProtobufDecoder(KEY)
    return envelope.message_class([0]), envelope.message_class([0, 0]), key.message_class([0])


def _protobuf_value(classes, op, before, after, lsn, offset) -> bytes:
    envelope_class, value_class, _ = classes
    message = envelope_class(op=op, ts_ms=1700000000100 + offset)
    message.source.CopyFrom(envelope_class.Source(**{**_SOURCE, "lsn": lsn}))
    for name, row in (("before", before), ("after", after)):
        if row is not None:
            image = getattr(message, name)
            image.CopyFrom(value_class(id=row["id"], name=row["name"], active=row["active"]))
            image.price.value, image.price.scale, image.price.precision = _decimal(row["price"]), 2, 10
    return message.SerializeToString()


def _protobuf_lines(classes, extra: list[bytes] = ()) -> bytes:
    lines = []
    for offset, (op, before, after, lsn) in enumerate(CHANGES):
        value = _frame(VALUE_ID, [0], _protobuf_value(classes, op, before, after, lsn, offset))
        key = _frame(KEY_ID, [0], classes[2](id=(after or before)["id"]).SerializeToString())
        lines.append(record_line(TOPIC, 0, offset, (1, 1700000000200 + offset), key, value, None))
    for offset, value in enumerate(extra, start=len(lines)):
        lines.append(record_line(TOPIC, 0, offset, (1, 1700000000200 + offset), None, value, None))
    return b"\n".join(lines) + b"\n"


def _schemas(folder, *more: RegisteredSchema):
    save_schemas(
        [
            RegisteredSchema(VALUE_ID, "PROTOBUF", ENVELOPE, f"{TOPIC}-value", 1),
            RegisteredSchema(KEY_ID, "PROTOBUF", KEY, f"{TOPIC}-key", 1),
            *more,
        ],
        folder,
    )
    return folder


def _events(frame):
    """What a read's events say, without the columns that name where the bytes came from."""
    frame = frame.reset_index(drop=True)
    drop = [c for c in frame.columns if c in ("_raw", "_source", "_line", "_evidence", "_layout")]
    return frame.drop(columns=drop)


def test_protobuf_envelopes_read_as_the_json_converter_records(tmp_path, classes):
    (tmp_path / "json").mkdir(), (tmp_path / "proto").mkdir()
    json_file, proto_file = tmp_path / "json" / "orders.jsonl", tmp_path / "proto" / "orders.jsonl"
    json_file.write_bytes(_json_lines())
    proto_file.write_bytes(_protobuf_lines(classes))
    schemas = _schemas(tmp_path / "schemas")
    expected = cdckit.read(str(json_file))
    got = cdckit.read(str(proto_file), schemas=schemas)
    assert list(got["op"]) == ["insert", "update", "delete"] == list(expected["op"])
    assert got["after"][1] == '{"id":1,"name":"Ada L","price":-0.05,"active":false}'

    assert list(got.columns) == list(expected.columns)
    for column in expected.columns:
        if column in ("source", "evidence", "raw"):
            continue
        assert got[column].tolist() == expected[column].tolist(), column


def test_an_unknown_id_and_a_body_that_does_not_match_are_quarantined(tmp_path, classes):
    bad_body = _frame(VALUE_ID, [0], b"\x0a\xff\xff")  # field 1 (before) with a length past the end
    unknown = _frame(99, [0], b"\x08\x01")
    no_message = _frame(VALUE_ID, [5], b"")
    path = tmp_path / "proto.jsonl"
    path.write_bytes(_protobuf_lines(classes, [bad_body, unknown, no_message]))
    capture = cdckit.read(str(path), schemas=_schemas(tmp_path / "schemas"), capture=True)
    assert len(capture.events) == 3
    assert list(capture.quarantine["reason_code"]) == ["invalid_encoding", "unknown_schema", "invalid_encoding"]
    reasons = list(capture.quarantine["reason"])
    assert "Protobuf schema id 11" in reasons[0]
    assert "schema id 99 was not found" in reasons[1]
    assert "name no message" in reasons[2]


def test_a_schema_that_does_not_compile_is_quarantined_with_protoc_s_message(tmp_path, classes):
    broken = RegisteredSchema(BROKEN_ID, "PROTOBUF", 'syntax = "proto3"; message Broken { strin x = 1; }', "b-value")
    path = tmp_path / "proto.jsonl"
    path.write_bytes(_protobuf_lines(classes, [_frame(BROKEN_ID, [0], b"")]))
    capture = cdckit.read(str(path), schemas=_schemas(tmp_path / "schemas", broken), capture=True)
    assert len(capture.events) == 3
    reasons = capture.quarantine["reason"]
    assert list(capture.quarantine["reason_code"]) == ["invalid_encoding"]
    assert "protoc" in reasons.iloc[0] and '"strin" is not defined' in reasons.iloc[0]


# ------------------------------------------------------------------ the decoder alone: every kind, index paths


@pytest.fixture(scope="module")
def kinds():
    return ProtobufDecoder(KINDS)


def test_nested_messages_are_named_by_index_paths(kinds):
    inner = kinds.message_class([1, 0])(u=4000000000)
    got = kinds.read(bytes([4, 2, 0]) + inner.SerializeToString())
    assert got["schema"]["name"] == "demo.Outer.Inner"
    assert got["payload"] == {"u": 4000000000}
    deepest = kinds.message_class([1, 0, 0])(n=-3)
    assert kinds.read(bytes([6, 2, 0, 0]) + deepest.SerializeToString())["payload"] == {"n": -3}
    assert kinds.read(b"\x02\x04" + kinds.message_class([2])().SerializeToString())["schema"]["name"] == "demo.Kinds"
    with pytest.raises(ValueError, match="name no message"):
        kinds.read(bytes([4, 2, 8]))


def test_every_kind_of_field_as_protobuf_data_reads_it(kinds):
    cls = kinds.message_class([2])
    message = cls(a=-5, b=2**64 - 1, f=1.1, d=2.5, raw=b"\x01\x02", color=1, many=[1, 2], word="hi", opt="")
    message.counts["x"] = 3
    message.names[7] = "seven"
    message.at.seconds, message.at.nanos = 86400, 5_999_999
    message.day.year, message.day.month, message.day.day = 1970, 1, 3
    message.maybe.value = "m"
    payload = kinds.read(b"\x02\x04" + message.SerializeToString())["payload"]
    assert payload == {
        "choice_0": {"word": "hi", "number": None},
        "a": -5,
        "b": -1,
        "f": 1.1,
        "d": 2.5,
        "raw": "AQI=",
        "color": "GREEN",
        "many": [1, 2],
        "counts": {"x": 3},
        "names": [[7, "seven"]],
        "at": 86400005,
        "day": 2,
        "maybe": "m",
        "opt": "",
        "first": None,
    }
    empty = kinds.read(b"\x02\x04")["payload"]
    assert empty["a"] == 0 and empty["color"] == "RED" and empty["raw"] == "" and empty["many"] == []
    assert empty["choice_0"] is None and empty["at"] is None and empty["maybe"] is None and empty["opt"] is None
    fields = {f["field"]: f for f in kinds.read(b"\x02\x04")["schema"]["fields"]}
    assert (fields["a"]["type"], fields["a"]["optional"], fields["a"]["parameters"]) == (
        "int32", False, {"io.confluent.connect.protobuf.Type": "sint32", "io.confluent.connect.protobuf.Tag": "1"},
    )  # fmt: skip
    assert fields["at"]["name"] == "org.apache.kafka.connect.data.Timestamp" and fields["at"]["type"] == "int64"
    assert fields["day"]["name"] == "org.apache.kafka.connect.data.Date" and fields["day"]["type"] == "int32"
    assert (fields["maybe"]["type"], fields["maybe"]["optional"]) == ("string", True)
    assert (fields["opt"]["type"], fields["opt"]["optional"]) == ("string", True)
    assert fields["choice_0"]["name"] == "io.confluent.connect.protobuf.Union.demo.Kinds.choice"
    assert fields["color"]["type"] == "string" and fields["first"]["name"] == "demo.First"
    assert fields["counts"]["type"] == "map" and fields["counts"]["keys"]["type"] == "string"
    assert fields["many"]["items"]["type"] == "int32"


def test_a_wrapper_at_the_root_is_its_scalar():
    decoder = ProtobufDecoder('syntax = "proto3"; import "google/protobuf/wrappers.proto"; message Unused {}')
    assert decoder.message_class([0])  # the file's own message
    wrapped = ProtobufDecoder(
        'syntax = "proto3"; package google.protobuf; message StringValue { string value = 1; }', name="w.proto"
    )
    got = wrapped.read(b"\x00" + wrapped.message_class([0])(value="k").SerializeToString())
    assert got == {"schema": {"type": "string", "optional": False}, "payload": "k"}


def test_protoc_s_message_names_the_mistake():
    with pytest.raises(ValueError, match="protoc: .*Expected"):
        compile_proto("syntax = 'proto3'; message { }")


def test_a_missing_reference_is_a_lookup_error(tmp_path):
    from cdckit.io.framed_decoders import decoder_for
    from cdckit.io.schema_book import SchemaBook

    schema = RegisteredSchema(
        5, "PROTOBUF", 'syntax = "proto3"; import "other.proto"; message M { Other o = 1; }', "m-value", 1,
        ({"name": "other.proto", "subject": "other", "version": 1},),
    )  # fmt: skip
    with pytest.raises(LookupError, match="other.proto"):
        decoder_for(schema, SchemaBook(folders=[str(tmp_path)]))
    other = RegisteredSchema(6, "PROTOBUF", 'syntax = "proto3"; message Other { int32 x = 1; }', "other", 1)
    save_schemas([schema, other], tmp_path)
    book = SchemaBook(folders=[str(tmp_path)])
    decoder = decoder_for(book.lookup(5), book)
    assert decoder.decode(b"\x00\x0a\x02\x08\x07")["payload"] == {"o": {"x": 7}}
    assert decoder.evidence == "Confluent wire format, Protobuf schema id 5 (subject m-value, record M)"


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([__file__, "-q"]))
