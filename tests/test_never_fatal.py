"""Never fatal: every class of damaged input found by the hostile-user review, each a regression test.

Each test reads damaged input with ``errors="quarantine"`` and checks that
nothing escapes, that the good messages around the damage decode, and that
the damage is quarantined with a reason and a ``reason_code``. The fuzzer
(tests/test_fuzz.py) looks for new classes; these pin the known ones.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import os
import warnings
from pathlib import Path

import pandas as pd
import pytest

import cdckit
from cdckit.errors import REASON_CODES
from cdckit.frame import COLUMN_NAMES, event_table, row_problem

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def sample_lines(name: str) -> list[str]:
    return [line for line in cdckit.samples.raw(name).splitlines() if line.strip()]


def plain_debezium(index: int = 2) -> dict:
    """A Debezium change event without the schema wrapper (the shop sample holds kcat records)."""
    return json.loads(json.loads(sample_lines("debezium/shop.jsonl")[index])["payload"])["payload"]


def accounted(events: pd.DataFrame, messages: int | None = None) -> pd.DataFrame:
    """Check the accounting of a read; returns its quarantine."""
    report, quarantine = events.attrs["report"], cdckit.quarantine(events)
    assert report["messages"] == report["decoded"] + report["quarantined"], report
    assert len(quarantine) == report["quarantined"] and len(events) == report["events"]
    assert list(events.columns) == COLUMN_NAMES
    assert set(quarantine["reason_code"]) <= set(REASON_CODES)
    assert quarantine["reason"].str.len().min() > 0 if len(quarantine) else True
    if messages is not None:
        assert report["messages"] == messages, report
    return quarantine


def sandwich(good: str, bad: str, tmp_path: Path, **read_options) -> tuple[pd.DataFrame, pd.DataFrame]:
    """good, bad, good as a JSON Lines file: the goods decode, the bad one is quarantined."""
    path = tmp_path / "capture.jsonl"
    path.write_text("\n".join([good, bad, good]) + "\n", encoding="utf-8")
    events = cdckit.read(path, **read_options)
    quarantine = accounted(events, 3)
    assert quarantine["line"].tolist() == [2], quarantine  # the bad one, whatever offsets kcat records carry
    return events, quarantine


# ---------------------------------------------------------------- a message's bad value


def maxwell_row(**changes) -> str:
    row = {"database": "shop", "table": "t", "type": "insert", "ts": 1714554000, "xid": 5,
           "primary_key_columns": ["id"], "data": {"id": 1, "n": 2}}
    return json.dumps({**row, **changes})


@pytest.mark.parametrize("field", ["database", "table"])
@pytest.mark.parametrize("value", [5, [1, 2], {"a": 1}, True])
def test_maxwell_names_that_are_not_text_are_quarantined(field, value, tmp_path):
    _, quarantine = sandwich(maxwell_row(), maxwell_row(**{field: value}), tmp_path)
    assert quarantine["reason_code"].tolist() == ["invalid_value"]
    assert quarantine["reason"].iloc[0].startswith(f"{field} holds")


def test_maxwell_ddl_that_is_not_text_is_quarantined(tmp_path):
    ddl = json.dumps({"database": "shop", "table": "t", "type": "table-create", "ts": 1714554000000, "sql": ["x"]})
    _, quarantine = sandwich(maxwell_row(), ddl, tmp_path)
    assert quarantine["reason"].iloc[0] == "ddl holds a list, not text"


@pytest.mark.parametrize("ts", [10000000000000, 1e308, "Infinity", "-", -1e20])
def test_times_out_of_range_are_quarantined(ts, tmp_path):
    _, quarantine = sandwich(maxwell_row(), maxwell_row(ts=ts), tmp_path)
    assert quarantine["reason_code"].tolist() == ["invalid_value"]
    assert "epoch seconds" in quarantine["reason"].iloc[0]


@pytest.mark.parametrize("ts_ms", [1e308, 10**17, "Infinity", "-"])
def test_debezium_times_out_of_range_are_quarantined_on_the_fast_path_and_off_it(ts_ms, tmp_path):
    good = plain_debezium()
    bad = json.loads(json.dumps(good))
    bad["source"]["ts_ms"] = ts_ms
    _, quarantine = sandwich(json.dumps(good), json.dumps(bad), tmp_path)  # a file: the batch decoder
    assert quarantine["reason_code"].tolist() == ["invalid_value"]
    events = cdckit.read([good, bad, good])  # parsed messages: the general decoder
    assert accounted(events, 3)["reason_code"].tolist() == ["invalid_value"]


@pytest.mark.parametrize("dialect, sample, path", [
    ("canal", "canal/shop.jsonl", ["table"]),
    ("canal", "canal/shop.jsonl", ["database"]),
    ("debezium", None, ["source", "table"]),
    ("debezium", None, ["source", "db"]),
    ("lindorm", "lindorm/shop.jsonl", ["payload", "source", "table"]),
    ("arcion", "arcion/shop.jsonl", None),
    ("dataworks", "dataworks/shop.jsonl", ["schema", "source", "table"]),
    ("datahub_blob", "datahub_blob/shop.jsonl", None),
])
@pytest.mark.parametrize("value", [7, ["t"], {"name": "t"}])
def test_names_that_are_not_text_never_stop_a_read(dialect, sample, path, value, tmp_path):
    good = json.dumps(plain_debezium()) if sample is None else sample_lines(sample)[0]
    message = json.loads(good)
    if path is None:  # a kcat record or a nested layout: replace every name-like field the message has
        message = _replace_names(message, value)
    else:
        target = message
        for step in path[:-1]:
            target = target[step]
        target[path[-1]] = value
    events, quarantine = sandwich(good, json.dumps(message), tmp_path, dialect=dialect)
    assert len(events) >= 2
    assert quarantine["reason_code"].iloc[0] in ("invalid_value", "invalid_message")


def _replace_names(value, new):
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if key in ("table", "tableName", "db", "dbName", "database", "schema") and isinstance(item, str):
                out[key] = new
            elif key == "payload" and isinstance(item, str) and item.startswith("{"):
                out[key] = json.dumps(_replace_names(json.loads(item), new))
            else:
                out[key] = _replace_names(item, new)
        return out
    if isinstance(value, list):
        return [_replace_names(item, new) for item in value]
    return value


def test_a_kcat_record_whose_offset_is_a_boolean_is_quarantined():
    record = {"topic": "t", "partition": 0, "offset": True, "key": None, "payload": json.dumps(plain_debezium())}
    events = cdckit.read(json.dumps(record) + "\n")
    quarantine = accounted(events, 1)
    assert quarantine["reason"].tolist() == ["the Kafka record's offset is True, not a whole number"]


def test_a_blob_half_whose_table_is_a_list_does_not_break_pairing(tmp_path):
    lines = sample_lines("datahub_blob/examples_split.jsonl")
    halves = [json.loads(line) for line in lines]
    broken = _replace_names(halves[0], ["t"])
    assert broken != halves[0]
    path = tmp_path / "blob.jsonl"
    path.write_text("\n".join([json.dumps(broken)] + lines[1:]) + "\n")
    accounted(cdckit.read(path, dialect="datahub_blob"), len(lines))


# ---------------------------------------------------------------- the fast batch decoders


@pytest.mark.parametrize("bad, code", [
    (b'{"op": "c", "after": {"a": "\xff"}, "source": {}}', "invalid_utf8"),
    (b"[" * 1100 + b"]" * 1100, "too_deep"),
    (b'{"op": "c", "after": {"id": 1}, "source": {"table": "t"}, "ts_ms": 100000000000000000}', "invalid_value"),
])
def test_the_fast_path_lets_nothing_out(bad, code, tmp_path):
    good = json.dumps(plain_debezium()).encode()
    path = tmp_path / "capture.jsonl"
    path.write_bytes(b"\n".join([good, bad, good]) + b"\n")
    events = cdckit.read(path, dialect="debezium")
    assert accounted(events, 3)["reason_code"].tolist() == [code]
    payload = cdckit.read(path.read_bytes(), dialect="debezium")  # the same bytes as a payload agree
    assert cdckit.quarantine(payload)["reason_code"].tolist() == [code]


def test_a_schema_whose_fields_is_a_number_is_quarantined(tmp_path):
    wrapped = json.loads(json.loads(sample_lines("debezium/shop.jsonl")[2])["payload"])
    bad = json.loads(json.dumps(wrapped))
    bad["schema"]["fields"] = 5
    _, quarantine = sandwich(json.dumps(wrapped), json.dumps(bad), tmp_path, dialect="debezium")
    assert quarantine["reason_code"].iloc[0] in ("invalid_message", "decoder_error")


def test_a_decoder_that_raises_on_a_whole_block_falls_back_to_one_message_at_a_time(tmp_path, monkeypatch):
    def broken(self, lines):
        raise RuntimeError("fast path bug")

    monkeypatch.setattr(cdckit.dialects.get("debezium"), "decode_lines", broken)  # the class reads use
    path = tmp_path / "capture.jsonl"
    path.write_text("\n".join(json.dumps(plain_debezium(i)) for i in (2, 3, 4)) + "\n")
    events = cdckit.read(path, dialect="debezium")
    assert len(events) == 3 and not len(accounted(events, 3))


def test_row_problem_refuses_what_arrow_refuses_or_would_change():
    """The one rule: a row it accepts turns into Arrow as it is; each value it refuses is named.

    Arrow itself refuses most of these; some it would take and change (a
    float time truncated, a text taken as a list of characters)."""
    good = ("insert", "c", "db", None, "t", 7, 5, "1", "x", ["id"], "[1]", None, '{"id":1}', None)  # 0 is no time
    assert row_problem(good) is None
    table = event_table([good])
    assert [table.column(i).cast("int64").to_pylist()[0] if i in (5, 6) else table.column(i).to_pylist()[0]
            for i in range(len(good))] == list(good)
    bad_values = [(2, 5), (4, ["t"]), (4, "\ud800"), (5, 2**63), (5, 1.5), (5, True), (9, ["id", 1]), (9, "id"),
                  (0, "upsert"), (11, {"a": 1}), (12, b"{}")]
    for index, value in bad_values:
        row = good[:index] + (value,) + good[index + 1:]
        assert row_problem(row) is not None, (index, value)


# ---------------------------------------------------------------- containers


def canal_text(count: int = 40) -> bytes:
    return ("\n".join(sample_lines("canal/shop.jsonl")[:count]) + "\n").encode()


def test_a_truncated_gzip_in_a_directory_keeps_the_rest_of_the_directory(tmp_path):
    folder = tmp_path / "capture"
    folder.mkdir()
    data = gzip.compress(canal_text())
    (folder / "a.jsonl.gz").write_bytes(data[: len(data) // 2])
    (folder / "b.jsonl").write_bytes(canal_text())
    events = cdckit.read(folder)
    quarantine = accounted(events)
    damage = quarantine[quarantine["reason_code"] == "damaged_container"]
    assert damage["source"].tolist() == [str(folder / "a.jsonl.gz")]
    assert "bytes of content" in damage["reason"].iloc[0]
    assert (events["source"] == str(folder / "b.jsonl")).sum() == 40
    assert (events["source"] == str(folder / "a.jsonl.gz")).sum() > 0  # what came before the damage is kept


@pytest.mark.parametrize("damage", ["crc", "length", "deflate", "header"])
def test_corrupt_gzip_is_one_quarantine_entry_after_what_it_held(damage, tmp_path):
    data = bytearray(gzip.compress(canal_text()))
    if damage == "crc":
        data[-6] ^= 0xFF
    elif damage == "length":
        data[-2] ^= 0xFF
    elif damage == "deflate":
        data[len(data) // 2: len(data) // 2 + 8] = b"\xff" * 8
    else:
        data[3] = 0xFF  # reserved flag bits
    path = tmp_path / "capture.jsonl.gz"
    path.write_bytes(bytes(data))
    events = cdckit.read(path)
    quarantine = accounted(events)
    assert quarantine["reason_code"].iloc[-1] == "damaged_container"
    assert "gzip" in quarantine["reason"].iloc[-1]


def test_a_damaged_gzip_payload_is_quarantined_too():
    data = gzip.compress(canal_text())
    events = cdckit.read(data[:-10])
    assert accounted(events)["reason_code"].iloc[-1] == "damaged_container"


@pytest.mark.parametrize("cut", [0, 4, 100, -8])
def test_an_empty_or_truncated_parquet_file_is_one_entry(cut, tmp_path):
    whole = cdckit.samples.path("datahub_tuple/examples.parquet").read_bytes()
    path = tmp_path / "rows.parquet"
    path.write_bytes(whole[:cut] if cut >= 0 else whole[:cut])
    quarantine = accounted(cdckit.read(path), 1)
    assert quarantine["reason_code"].tolist() == ["damaged_container"]
    assert "parquet" in quarantine["reason"].iloc[0]


def test_a_csv_cell_over_131072_characters_is_read(tmp_path):
    rows = list(csv.DictReader(io.StringIO(cdckit.samples.raw("datahub_tuple/examples.csv"))))
    column = next(name for name in rows[0] if not name.startswith("_"))
    rows[1][column] = "x" * 200_000
    path = tmp_path / "rows.csv"
    with open(path, "w", newline="", encoding="utf-8") as out:
        writer = csv.DictWriter(out, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    events = cdckit.read(path)
    accounted(events, len(rows))
    images = events["after"].fillna("").tolist() + events["before"].fillna("").tolist()
    assert any("x" * 200_000 in text for text in images)
    assert csv.field_size_limit() == 131_072  # the csv module's limit is left as it was


@pytest.mark.skipif(not os.path.exists("/proc/self/mem"), reason="needs Linux's /proc/self/mem")
def test_an_unreadable_file_in_a_directory_is_one_entry(tmp_path):
    """A file every read of fails with an I/O error, even for root: a link to /proc/self/mem."""
    folder = tmp_path / "capture"
    folder.mkdir()
    (folder / "a.jsonl").symlink_to("/proc/self/mem")
    (folder / "b.jsonl").write_bytes(canal_text())
    events = cdckit.read(folder)
    quarantine = accounted(events, 41)
    assert quarantine["reason_code"].tolist() == ["unreadable_file"]
    assert quarantine["reason"].iloc[0] == f"cannot read {folder / 'a.jsonl'}: Input/output error"
    assert len(events) == 40


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file whatever its mode")
def test_an_unreadable_file_by_its_mode(tmp_path):
    path = tmp_path / "a.jsonl"
    path.write_bytes(canal_text())
    path.chmod(0)
    try:
        assert accounted(cdckit.read(path), 1)["reason_code"].tolist() == ["unreadable_file"]
    finally:
        path.chmod(0o644)


@pytest.mark.parametrize("content", [b"\xef\xbb\xbf", b"\xef\xbb\xbf\n", b"\xef\xbb\xbf  \r\n\n"])
def test_a_file_holding_only_a_byte_order_mark_holds_no_message(content, tmp_path):
    path = tmp_path / "empty.jsonl"
    path.write_bytes(content)
    assert cdckit.read(path, dialect="canal").attrs["report"]["messages"] == 0
    assert cdckit.read(path, container="jsonl").attrs["report"]["messages"] == 0
    assert cdckit.read(content).attrs["report"]["messages"] == 0


def test_random_bytes_are_binary_not_universe(tmp_path):
    path = tmp_path / "noise.dat"
    path.write_bytes(bytes(range(256)) * 20 + b"\xfe" * 50)
    events = cdckit.read(path)
    assert accounted(events, 1)["reason_code"].tolist() == ["binary_data"]
    with pytest.raises(cdckit.UnknownDialectError, match="binary"):
        cdckit.detect(path)


# ---------------------------------------------------------------- Python inputs


class Record:
    """A Kafka client's record: value, key, offset, partition."""

    def __init__(self, value, offset=0, key=None, partition=0):
        self.value, self.key, self.offset, self.partition = value, key, offset, partition


def test_a_str_with_a_lone_surrogate_is_quarantined():
    good = json.dumps(plain_debezium())
    events = cdckit.read([good, '{"a": "\ud800"}', "src=a\ud800", good])
    quarantine = accounted(events, 4)
    assert quarantine["reason_code"].tolist() == ["invalid_utf8", "invalid_utf8"]
    cdckit.read('{"a": "\ud800"}\n')  # a payload with one too
    parsed = cdckit.read([json.loads(maxwell_row()), json.loads(maxwell_row(data={"id": "\ud800"}))])
    assert accounted(parsed, 2)["reason_code"].tolist() == ["invalid_utf8"]


@pytest.mark.parametrize("value, code", [(5, "invalid_message"), (object(), "invalid_message"),
                                         ({"op": "c", "after": {"id": 1}, "source": {"table": "t"}}, None)])
def test_kafka_record_objects_with_odd_values(value, code):
    good = Record(json.dumps(plain_debezium()).encode(), 0)
    events = cdckit.read([good, Record(value, 1), Record(json.dumps(plain_debezium()), 2)], dialect="debezium")
    quarantine = accounted(events, 3)
    assert quarantine["reason_code"].tolist() == ([code] if code else [])


@pytest.mark.parametrize("offset", ["x", True, 2**70, None, 1.5])
def test_kafka_record_objects_with_odd_offsets(offset):
    events = cdckit.read([Record(json.dumps(plain_debezium()).encode(), offset)], dialect="debezium")
    assert accounted(events, 1)["reason_code"].tolist() == ["invalid_value"]


def test_a_5000_level_nested_dict_in_an_iterable():
    deep: dict = {}
    inner = deep
    for _ in range(5_000):
        inner["a"] = {}
        inner = inner["a"]
    events = cdckit.read([plain_debezium(), {"op": "c", "source": {}, "after": deep}, deep])
    quarantine = accounted(events, 3)
    assert len(quarantine) == 2


def test_a_dict_with_a_python_integer_beyond_64_bits_keeps_it_as_text():
    message = {"database": "d", "table": "t", "type": "insert", "ts": 1, "data": {"id": 1, "big": 2**80}}
    events = cdckit.read([message])
    assert not len(accounted(events, 1))
    assert events["after"].iloc[0] == f'{{"id":1,"big":"{2**80}"}}'  # as a JSON text with that number gives


# ---------------------------------------------------------------- dialects mixed in one file


def test_a_file_that_mixes_dialects_is_decoded_message_by_message(tmp_path):
    maxwell, canal = sample_lines("maxwell/examples_bootstrap.jsonl"), sample_lines("canal/shop.jsonl")
    lines = [line for pair in zip(maxwell[:6], canal[:6]) for line in pair]  # an exact tie on detection
    path = tmp_path / "mixed.jsonl"
    path.write_text("\n".join(lines) + "\n")
    events = cdckit.read(path)
    assert not len(accounted(events, 12))
    assert events["dialect"].tolist() == ["maxwell", "canal"] * 6
    with pytest.raises(cdckit.DecodeError):  # a dialect given is every message's dialect
        cdckit.read(path, dialect="maxwell", errors="raise")


def test_per_message_dialects_on_the_fast_path(tmp_path):
    lines = [json.dumps(plain_debezium(i)) for i in range(2, 8)]
    lines.insert(3, sample_lines("canal/shop.jsonl")[0])
    path = tmp_path / "mixed.jsonl"
    path.write_text("\n".join(lines) + "\n")
    events = cdckit.read(path)
    assert events["dialect"].tolist() == ["debezium"] * 3 + ["canal"] + ["debezium"] * 3
    assert events["offset"].tolist() == list(range(7))


# ---------------------------------------------------------------- detection


def test_a_weak_verdict_is_unknown_below_the_floor_and_flagged_above_it(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text("aþb\n", encoding="utf-8")
    with pytest.raises(cdckit.UnknownDialectError, match="below the floor") as caught:
        cdckit.detect(path)
    assert caught.value.best[0] == "universe"
    weak = tmp_path / "weak.jsonl"  # Maxwell fields but a type it does not know: a 0.5 match
    weak.write_text(json.dumps({"database": "d", "table": "t", "ts": 1, "type": "upsert", "data": {}}) + "\n")
    found = cdckit.detect(weak)
    assert found.low_confidence and "low" in str(found)


@pytest.mark.parametrize("message, words", [
    ({"database": "d", "table": "t", "type": "insert", "ts": 1, "encrypted": {"iv": "aa==", "bytes": "bb=="}},
     "encrypted Maxwell message"),
    ({"encrypted": {"iv": "aa==", "bytes": "bb=="}}, "encrypted Maxwell message"),
    ({"id": 1, "name": "x", "price": 2.5}, "no change metadata"),
    # a record key on its own line: a key printed apart from its value, or a tombstone printed without its null
    ({"schema": {"type": "struct", "name": "shop.public.items.Key", "fields": [{"field": "id", "type": "int32"}]},
      "payload": {"id": 4}}, "Kafka record key alone (schema shop.public.items.Key)"),
    ({"id": '{"$oid": "64b0c0ffee"}'}, "Kafka record key alone (a MongoDB document id)"),
])
@pytest.mark.parametrize("dialect", [None, "debezium", "maxwell"])
def test_known_but_unsupported_shapes_are_named(message, words, dialect):
    events = cdckit.read([message], dialect=dialect)
    quarantine = accounted(events, 1)
    if dialect is None or "no change metadata" not in words:
        assert quarantine["reason_code"].tolist() == ["unsupported_format"]
        assert words in quarantine["reason"].iloc[0]


# ---------------------------------------------------------------- errors="raise", convert, explorer, CLI


def test_errors_raise_lets_only_decode_error_out_with_its_cause(tmp_path):
    data = gzip.compress(canal_text())
    path = tmp_path / "a.jsonl.gz"
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(cdckit.DecodeError) as caught:
        cdckit.read(path, errors="raise")
    assert caught.value.source == str(path) and isinstance(caught.value.partial, pd.DataFrame)
    with pytest.raises(cdckit.DecodeError) as caught:
        cdckit.read([maxwell_row(ts="x")], errors="raise")
    assert isinstance(caught.value.__cause__, cdckit.InvalidValue)


def test_convert_reports_an_integer_beyond_64_bits_as_an_encode_error():
    from cdckit.export import EncodeError

    events = cdckit.samples.load("universe/shop.txt").head(3).copy()
    events["seq"] = "123456789012345678901234567890"
    with pytest.raises(EncodeError, match="64-bit"):
        cdckit.convert(events, "debezium")


def test_the_explorer_shows_a_column_named_empty():
    from cdckit.viz.explorer import explore

    lines = [maxwell_row(data={"id": 1, "": 5}), maxwell_row(type="update", data={"id": 1, "": 6}, old={"": 5})]
    events = cdckit.read("\n".join(lines) + "\n")
    explorer = explore(events)
    for index in events.index:
        explorer.select(index)
    assert "history of shop.t" in explorer.details.value


def test_the_cli_reads_a_directory_with_a_half_copied_gzip(tmp_path, capsys):
    from cdckit.cli import main

    folder = tmp_path / "capture"
    folder.mkdir()
    data = gzip.compress(canal_text())
    (folder / "a.jsonl.gz").write_bytes(data[: len(data) // 2])
    (folder / "b.jsonl").write_bytes(canal_text())
    assert main(["read", str(folder), "--head", "1"]) == 1  # 1: read, with messages quarantined
    err = capsys.readouterr().err
    assert "internal error" not in err
    assert f"{folder / 'a.jsonl.gz'}, message 13: [damaged_container] damaged gzip file" in err


def test_the_cli_flags_unknown_and_low_confidence(tmp_path, capsys):
    from cdckit.cli import main

    weak = tmp_path / "weak.jsonl"
    weak.write_text(json.dumps({"database": "d", "table": "t", "ts": 1, "type": "upsert", "data": {}}) + "\n")
    notes = tmp_path / "notes.txt"
    notes.write_text("aþb\n", encoding="utf-8")
    assert main(["detect", str(weak), str(notes)]) == 3
    out, err = capsys.readouterr()
    assert "LOW" in out and "low confidence" in err
    assert "unknown" in out and "best guess universe" in out


# ---------------------------------------------------------------- Spark keeps the same promise


@pytest.mark.skipif(not os.path.exists("/proc/self/mem"), reason="needs Linux's /proc/self/mem")
def test_spark_reads_the_same_damaged_directory_as_pandas(spark, tmp_path):
    from cdckit import spark as cdcspark

    folder = tmp_path / "capture"
    folder.mkdir()
    data = gzip.compress(canal_text())
    (folder / "a.jsonl.gz").write_bytes(data[: len(data) // 2])  # half-copied
    (folder / "b.jsonl").symlink_to("/proc/self/mem")  # unreadable
    maxwell, canal = sample_lines("maxwell/examples_bootstrap.jsonl"), sample_lines("canal/shop.jsonl")
    mixed = [line for pair in zip(maxwell[:6], canal[:6]) for line in pair] + ['{"broken": ', maxwell_row(ts=1e308)]
    (folder / "c.jsonl").write_text("\n".join(mixed) + "\n")
    (folder / "d.bin").write_bytes(bytes(range(256)) * 8)
    want = cdckit.read(folder)
    events = cdcspark.read(spark, str(folder), split_messages=5)  # the mixed file in several tasks
    report = cdcspark.report(events)
    assert {k: report[k] for k in ("messages", "decoded", "quarantined", "events")} == \
        {k: want.attrs["report"][k] for k in ("messages", "decoded", "quarantined", "events")}
    quarantine = cdckit.quarantine(want)
    assert sorted((r["source"], r["offset"], r["reason_code"]) for r in cdcspark.quarantine(events).collect()) == \
        sorted(zip(quarantine["source"], quarantine["offset"].astype(int), quarantine["reason_code"]))
    assert set(quarantine["reason_code"]) == {"truncated_json", "damaged_container", "unreadable_file",
                                              "invalid_value", "binary_data"}
    dialects = events.filter(events.source == str(folder / "c.jsonl")).groupBy("dialect").count().collect()
    assert {r["dialect"]: r["count"] for r in dialects} == {"maxwell": 6, "canal": 6}


def test_the_read_report_and_the_html_report_flag_a_weak_verdict_and_show_reason_codes(tmp_path):
    from cdckit.viz.report import build_report

    weak = tmp_path / "weak.jsonl"  # Maxwell fields but a type it does not know: a 0.5 match
    odd = json.dumps({"database": "d", "table": "t", "ts": 1, "type": "upsert", "data": {}})
    weak.write_text("\n".join([odd] * 4 + [maxwell_row()]) + "\n")  # mean score (4 x 0.5 + 0.95) / 5 < 0.6
    with pytest.warns(UserWarning, match="low-confidence"):
        events = cdckit.read(weak)
    detection = events.attrs["report"]["detection"][str(weak)]
    assert detection["dialect"] == "maxwell" and detection["low_confidence"] is True
    page = build_report(events, sources=[str(weak)])
    assert "(low)" in page and "LOW CONFIDENCE" in page
    assert "invalid_message" in page  # the quarantined message's reason_code


@pytest.mark.parametrize("first, second", [("debezium_flat/examples.jsonl", "debezium_mongodb/examples.jsonl"),
                                           ("debezium_mongodb/shop.jsonl", "debezium_flat/shop.jsonl"),
                                           ("maxwell/examples_bootstrap.jsonl", "canal/shop.jsonl")])
@pytest.mark.parametrize("dialect", [None, "first"])
def test_lines_of_two_dialects_alternating_are_each_accounted_for(tmp_path, first, second, dialect):
    """Issue 25 item 16 (a regression guard: not reproduced here): every line of a file whose lines alternate two
    dialects is decoded or quarantined, and a decoded one gives an event or a skip reason."""
    one, two = sample_lines(first)[:8], sample_lines(second)[:8]
    lines = [line for pair in zip(one, two) for line in pair]
    path = tmp_path / "mixed.jsonl"
    path.write_text("\n".join(lines) + "\n")
    given = first.split("/")[0] if dialect else None
    for source in (path, "\n".join(lines) + "\n", lines):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            capture = cdckit.read(source, dialect=given, capture=True)
        report = capture.report
        assert report["messages"] == len(lines) == report["decoded"] + report["quarantined"], report
        assert len(capture.quarantine) == report["quarantined"] and not report.get("pending")
        assert report["decoded"] - sum(report["skipped"].values()) <= len(capture.events), report
        assert capture.quarantine["line"].dropna().is_unique  # from a file or a text: each at its own line
        if len({json.loads(line).get("topic") for line in lines} - {None}) > 1:
            continue  # two topics' records in one file share Kafka offsets: a position is (topic, partition, offset)
        # each message is found at its own place: kcat records at their Kafka partition and offset, bare lines at
        # their line (no partition), so a record's offset never hides a bare line's, decoded or quarantined
        events, quarantine = capture.events, capture.quarantine
        places = set(zip(events["partition"].astype(object).where(events["partition"].notna(), None),
                         events["offset"].astype(int)))
        places |= set(zip(quarantine["partition"].astype(object).where(quarantine["partition"].notna(), None),
                          quarantine["offset"].astype(int)))
        assert len(places) == len(lines), sorted(places, key=str)
