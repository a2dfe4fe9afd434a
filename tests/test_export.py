"""cdckit.export: lossless file round trips, state and SCD2 files, atomic writes, Spark writes,
and conversion between dialects (the whole source x target matrix on the shop samples)."""

from __future__ import annotations

import csv
import functools
import json
import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest

import cdckit
from cdckit import export
from cdckit.dialects import registry
from cdckit.export import FORMATS, EncodeError, convert, read_events, write_events, write_scd2, write_state
from cdckit.frame import table_names
from cdckit.python_columns import object_columns

DIALECTS = registry.names()
WRITABLE = [name for name in DIALECTS if registry.get(name).can_encode()]
EXT = {"parquet": ".parquet", "csv": ".csv", "jsonl": ".jsonl"}
DEFAULT_PARTITION = "__HIVE_DEFAULT_PARTITION__"
ROOT = Path(__file__).resolve().parent.parent


@functools.cache
def shop(dialect: str) -> pd.DataFrame:
    """The dialect's shop sample, decoded (cached: tests must not change it)."""
    return cdckit.samples.load(f"{dialect}/shop")


@pytest.fixture(scope="module")
def everything() -> pd.DataFrame:
    """Every bundled sample in one frame: twelve dialects, many tables.

    No sample has times finer than a microsecond, so some are given nanoseconds here.
    """
    events = cdckit.read(cdckit.samples.DATA)
    events.loc[events.index[::7], "event_time"] += pd.Timedelta(nanoseconds=123)
    events.loc[events.index[::5], "emit_time"] += pd.Timedelta(nanoseconds=1)
    return events


@pytest.fixture(scope="module")
def blob() -> pd.DataFrame:
    return shop("datahub_blob")


def files_on_disk(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file())


def arrival(frame: pd.DataFrame) -> pd.DataFrame:
    """Rows by source and offset, a message's rows by table (a partition by table keeps no other order between
    them: one test_decoding TRUNCATE line empties several tables); other ties keep their order."""
    return frame.sort_values(["source", "offset", "table"], kind="stable").reset_index(drop=True)


# ---------------------------------------------------------------- the canonical frame


def test_the_samples_hold_what_a_lossless_round_trip_must_keep(everything, blob):
    # the round trips below would prove little on plain data: check it is not plain
    assert everything["partition"].isna().any() and everything["partition"].notna().any()
    assert (everything["event_time"].dropna().dt.nanosecond != 0).any()  # nanosecond times
    assert everything["emit_time"].isna().any()
    assert any(isinstance(c, list) and len(c) == 2 for c in everything["key_columns"])
    assert everything["key_columns"].isna().any()
    assert everything["after"].str.contains("18446744073709551615", regex=False).any()  # exact decimals as text
    assert everything["after"].str.contains("Chloé", regex=False).any()
    assert everything["ddl"].notna().any() and everything["table"].isna().any()
    assert len(blob) == 320 and set(blob["op"]) == {"insert", "update", "delete"}


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("sample", ["blob", "everything"])
def test_write_then_read_gives_back_the_same_frame(sample, fmt, request, tmp_path):
    events = request.getfixturevalue(sample)
    path = tmp_path / f"events{EXT[fmt]}"
    written = write_events(events, path)
    assert (written.format, written.rows, written.files) == (fmt, len(events), [path])
    back = read_events(path)
    pd.testing.assert_frame_equal(back, events)
    assert "quarantine" not in back.attrs  # attrs are not written


@pytest.mark.parametrize("fmt", FORMATS)
def test_empty_text_null_quotes_newlines_and_spaces_survive(blob, fmt, tmp_path):
    events = blob.head(5).copy()
    events["ddl"] = pd.array(["", None, 'say "hi",\nthen leave', "  padded  ", "a\\b\r\nc"], dtype=events["ddl"].dtype)
    events["table"] = pd.array(["表", "", None, "t,1", "t;2"], dtype=events["table"].dtype)
    events["key_columns"] = pd.Series([[], None, ["a,b", 'q"'], ["ü"], ["x"]], dtype=object)
    path = tmp_path / f"odd{EXT[fmt]}"
    write_events(events, path)
    pd.testing.assert_frame_equal(read_events(path), events)


def test_csv_and_json_lines_hold_times_as_iso_text_and_key_columns_as_json(everything, tmp_path):
    times = everything["event_time"]
    events = everything[times.notna() & (times.dt.nanosecond != 0)].head(3)
    write_events(events, tmp_path / "e.csv")
    write_events(events, tmp_path / "e.jsonl")
    write_events(events, tmp_path / "e.parquet")
    with open(tmp_path / "e.csv", newline="", encoding="utf-8") as f:
        csv_rows = list(csv.DictReader(f))
    json_rows = [json.loads(line) for line in (tmp_path / "e.jsonl").read_text("utf-8").splitlines()]
    for csv_row, json_row, (_, want) in zip(csv_rows, json_rows, events.iterrows()):
        for row in (csv_row, json_row):
            assert row["event_time"].endswith("Z")
            assert pd.Timestamp(row["event_time"]) == want["event_time"]
        assert json.loads(csv_row["key_columns"]) == json_row["key_columns"] == list(want["key_columns"])
    schema = pq.read_schema(tmp_path / "e.parquet")
    assert schema.field("event_time").type == pa.timestamp("ns", tz="UTC")
    assert schema.field("key_columns").type == pa.list_(pa.string())


def test_other_columns_are_written_too(blob, tmp_path):
    events = blob.head(4).copy()
    events["note"] = ["a", None, "c", "d"]
    events["mixed"] = [1, "one", None, 2.5]
    for fmt in FORMATS:
        written = write_events(events, tmp_path / f"x{EXT[fmt]}")
        back = read_events(tmp_path / f"x{EXT[fmt]}")
        assert list(back.columns) == list(events.columns)
        assert back["note"].tolist()[0::2] == ["a", "c"] and pd.isna(back["note"][1])
        # numbers and text in one column: JSON text, said in a note
        assert back["mixed"].tolist()[:2] == ["1", '"one"']
        assert written.notes == ["column mixed holds values of several kinds and was written as JSON text"]


@pytest.mark.parametrize("fmt", FORMATS)
def test_an_empty_frame_round_trips(fmt, tmp_path):
    empty = cdckit.frame.empty_events()
    assert write_events(empty, tmp_path / f"e{EXT[fmt]}").rows == 0
    pd.testing.assert_frame_equal(read_events(tmp_path / f"e{EXT[fmt]}"), empty)
    written = write_events(empty, tmp_path / "parts", fmt, partition_by="table")
    assert written.files == [] and list((tmp_path / "parts").iterdir()) == []
    pd.testing.assert_frame_equal(read_events(tmp_path / "parts"), empty)


@pytest.mark.parametrize("suffix, fmt", [(".parquet", "parquet"), (".pq", "parquet"), (".csv", "csv"),
                                         (".jsonl", "jsonl"), (".json", "jsonl"), (".ndjson", "jsonl")])
def test_the_format_comes_from_the_suffix(blob, suffix, fmt, tmp_path):
    written = write_events(blob.head(2), tmp_path / f"e{suffix}")
    assert written.format == fmt
    pd.testing.assert_frame_equal(read_events(tmp_path / f"e{suffix}"), blob.head(2))


def test_an_unknown_suffix_or_format_or_partition_is_refused(blob, tmp_path):
    with pytest.raises(ValueError, match=r"e\.txt.*parquet, csv, jsonl"):
        write_events(blob, tmp_path / "e.txt")
    with pytest.raises(ValueError, match="unknown format 'xlsx'"):
        write_events(blob, tmp_path / "e.csv", "xlsx")
    with pytest.raises(ValueError, match="partition_by must be 'table'"):
        write_events(blob, tmp_path / "e.csv", partition_by="op")
    with pytest.raises(ValueError, match="no column key, before"):
        write_events(blob.drop(columns=["key", "before"]), tmp_path / "e.csv")
    assert files_on_disk(tmp_path) == []


@pytest.mark.parametrize("fmt", FORMATS)
def test_partitioned_by_table_one_folder_per_table(everything, fmt, tmp_path):
    out = tmp_path / "events"
    written = write_events(everything, out, fmt, partition_by="table")
    names = table_names(everything)
    assert {p.name for p in out.iterdir()} == {
        f"table_name={n}" if n is not None else f"table_name={DEFAULT_PARTITION}" for n in names}
    assert written.files == files_on_disk(out)
    assert all(f.name == f"part-0{EXT[fmt]}" for f in written.files)
    for folder in out.iterdir():
        name = folder.name.split("=", 1)[1]
        mine = names.isna() if name == DEFAULT_PARTITION else names == name
        pd.testing.assert_frame_equal(read_events(folder), everything[mine.to_numpy()].reset_index(drop=True))
    back = read_events(out)  # grouped by table, each table in input order
    pd.testing.assert_frame_equal(arrival(back), arrival(everything))


def test_partitioned_parquet_reads_as_a_hive_dataset(blob, tmp_path):
    write_events(blob, tmp_path / "events", "parquet", partition_by="table")
    table = ds.dataset(tmp_path / "events", format="parquet", partitioning="hive").to_table()
    assert Counter(table.column("table_name").to_pylist()) == Counter(table_names(blob))


def test_partition_folders_are_escaped_as_spark_escapes_them(blob, tmp_path):
    events = blob.head(3).copy()
    events["table"] = pd.array(["a/b:c", None, "x=y"], dtype=events["table"].dtype)
    write_events(events, tmp_path / "events", "jsonl", partition_by="table")
    assert sorted(p.name for p in (tmp_path / "events").iterdir()) == [
        f"table_name={DEFAULT_PARTITION}", "table_name=shop.a%2Fb%3Ac", "table_name=shop.x%3Dy"]
    pd.testing.assert_frame_equal(arrival(read_events(tmp_path / "events")), arrival(events))


# ---------------------------------------------------------------- state and SCD2


def read_table_file(path: Path, fmt: str, like: pd.DataFrame) -> list[dict]:
    """The rows of a state/SCD2 file, read with other tools than the writer's, NaN as None.

    CSV has no types: its text columns are read as text (``like`` tells which), the rest parsed by pandas.
    """
    if fmt == "parquet":
        frame = pd.read_parquet(path)
    elif fmt == "csv":
        frame = pd.read_csv(path, dtype={name: str for name, kind in like.dtypes.items() if kind == "object"})
    else:
        frame = pd.DataFrame([json.loads(line) for line in path.read_text("utf-8").splitlines()])
    return [{k: (None if not isinstance(v, (list, dict)) and pd.isna(v) else v) for k, v in row.items()}
            for row in frame.to_dict("records")]


def as_written(rows: list[dict], fmt: str) -> list[dict]:
    """Rows as a file of ``fmt`` can give them back: times as ISO text outside Parquet, NaN as None."""
    out = []
    for row in rows:
        clean = {}
        for name, value in row.items():
            if isinstance(value, pd.Timestamp) and fmt != "parquet":
                value = value.isoformat().replace("+00:00", "Z")
            clean[name] = None if not isinstance(value, (list, dict)) and pd.isna(value) else value
        out.append(clean)
    return out


@pytest.mark.parametrize("fmt", FORMATS)
def test_state_one_file_per_table_with_the_replayed_rows(blob, fmt, tmp_path):
    states = cdckit.materialize(blob)
    written = write_state(states, tmp_path / "state", fmt)
    assert sorted(p.name for p in (tmp_path / "state").iterdir()) == sorted(f"{n}{EXT[fmt]}" for n in states)
    assert written.files == files_on_disk(tmp_path / "state")
    assert written.rows == sum(len(frame) for frame in states.values()) > 0
    for name, frame in states.items():
        assert read_table_file(tmp_path / "state" / f"{name}{EXT[fmt]}", fmt, frame) == as_written(
            frame.to_dict("records"), fmt)


@pytest.mark.parametrize("fmt", FORMATS)
def test_scd2_one_file_per_table_with_the_versions(blob, fmt, tmp_path):
    tables = cdckit.scd2(blob)
    written = write_scd2(tables, tmp_path / "scd2", fmt)
    assert written.rows == sum(len(frame) for frame in tables.values()) > len(blob) // 2
    for name, frame in tables.items():
        got = read_table_file(tmp_path / "scd2" / f"{name}{EXT[fmt]}", fmt, frame)
        assert got == as_written(frame.to_dict("records"), fmt)


def test_scd2_parquet_keeps_the_column_types(blob, tmp_path):
    tables = cdckit.scd2(blob)
    write_scd2(tables, tmp_path / "scd2")  # no suffix: Parquet
    for name, frame in tables.items():  # pandas 3 reads texts as its str dtype: cdckit's frames hold them as objects
        back = object_columns(pd.read_parquet(tmp_path / "scd2" / f"{name}.parquet"))
        pd.testing.assert_frame_equal(back, frame)


def test_state_columns_of_mixed_kinds_become_json_text_except_in_json_lines(tmp_path):
    states = {"db.t": pd.DataFrame({"id": [1, 2, 3], "v": [1, "one", None], "o": [{"a": 1}, None, {"b": [1, 2]}]})}
    written = write_state(states, tmp_path / "s.parquet")
    table = pq.read_table(tmp_path / "s.parquet" / "db.t.parquet")
    assert table.column("id").type == pa.int64()
    assert table.column("v").to_pylist() == ["1", '"one"', None]
    assert table.column("o").to_pylist() == ['{"a":1}', None, '{"b":[1,2]}']
    assert written.notes == ["db.t: column v holds values of several kinds and was written as JSON text",
                             "db.t: column o holds lists or objects and was written as JSON text"]
    written = write_state(states, tmp_path / "s.jsonl")
    rows = [json.loads(line) for line in (tmp_path / "s.jsonl" / "db.t.jsonl").read_text().splitlines()]
    assert rows == [{"id": 1, "v": 1, "o": {"a": 1}}, {"id": 2, "v": "one", "o": None},
                    {"id": 3, "v": None, "o": {"b": [1, 2]}}]
    assert written.notes == []


def test_state_file_names_are_made_safe_and_problems_are_noted(tmp_path):
    states = cdckit.analysis.replay.TableStates({"a/b": pd.DataFrame({"x": [1]}), ".hidden": pd.DataFrame({"x": [2]}),
                                        "ok.t": pd.DataFrame({"x": [3]})})
    states.problems = pd.DataFrame({"table": ["ok.t"], "problem": ["update of an unknown key"]})
    written = write_state(states, tmp_path / "state", "csv")
    assert sorted(p.name for p in (tmp_path / "state").iterdir()) == ["%2Ehidden.csv", "a%2Fb.csv", "ok.t.csv"]
    assert written.notes == ["1 replay problems were not written (see states.problems)"]


# ---------------------------------------------------------------- atomic writes and reports


def test_written_reports_rows_files_and_bytes(blob, tmp_path):
    written = write_events(blob, tmp_path / "e.parquet")
    assert written.files == files_on_disk(tmp_path) == [tmp_path / "e.parquet"]
    assert written.rows == pq.ParquetFile(tmp_path / "e.parquet").metadata.num_rows == 320
    assert written.bytes == os.path.getsize(tmp_path / "e.parquet")
    assert re.fullmatch(rf"wrote 320 rows to {re.escape(str(tmp_path / 'e.parquet'))} \(parquet, 1 file, \d+ KB\)",
                        str(written))
    parts = write_events(blob, tmp_path / "parts", "csv", partition_by="table")
    assert parts.files == files_on_disk(tmp_path / "parts") and len(parts.files) == 2
    assert parts.bytes == sum(os.path.getsize(f) for f in parts.files)
    assert "(csv, 2 files, " in str(parts)


def test_refuses_to_overwrite_unless_asked(blob, tmp_path):
    path = tmp_path / "e.csv"
    write_events(blob, path)
    before = path.read_bytes()
    with pytest.raises(FileExistsError, match="pass overwrite=True") as err:
        write_events(blob.head(3), path)
    assert str(path) in str(err.value)
    assert path.read_bytes() == before
    write_events(blob.head(3), path, overwrite=True)
    pd.testing.assert_frame_equal(read_events(path), blob.head(3))
    assert os.listdir(tmp_path) == ["e.csv"]  # no temporary file left


def test_overwrite_replaces_a_folder_whole(blob, tmp_path):
    out = tmp_path / "events"
    write_events(blob, out, "parquet", partition_by="table")
    items = blob[blob["table"] == "order_items"]
    with pytest.raises(FileExistsError):
        write_events(items, out, "parquet", partition_by="table")
    write_events(items, out, "parquet", partition_by="table", overwrite=True)
    assert [p.name for p in out.iterdir()] == ["table_name=shop.order_items"]  # the customers folder is gone
    write_events(blob, out, "parquet", overwrite=True)  # a file where the folder was
    assert out.is_file() and os.listdir(tmp_path) == ["events"]


class DiskFull(OSError):
    pass


def failing_after(calls: int, write):
    """A writer that works ``calls`` times, then writes half a file and fails."""
    count = {"n": 0}

    def broken(table, where, *args, **kwargs):
        count["n"] += 1
        if count["n"] > calls:
            Path(where).write_bytes(b"PAR1 half a file")
            raise DiskFull("disk full")
        return write(table, where, *args, **kwargs)

    return broken


def test_a_failed_write_leaves_nothing_behind(blob, tmp_path, monkeypatch):
    monkeypatch.setattr(pq, "write_table", failing_after(0, pq.write_table))
    with pytest.raises(DiskFull):
        write_events(blob, tmp_path / "e.parquet")
    assert list(tmp_path.iterdir()) == []
    monkeypatch.setattr(pq, "write_table", failing_after(1, pq.write_table))  # fails on the second table
    with pytest.raises(DiskFull):
        write_events(blob, tmp_path / "parts", "parquet", partition_by="table")
    monkeypatch.setattr(pq, "write_table", failing_after(1, pq.write_table))
    with pytest.raises(DiskFull):
        write_state(cdckit.materialize(blob), tmp_path / "state")
    assert list(tmp_path.iterdir()) == []


def test_a_failed_overwrite_keeps_the_old_output(blob, tmp_path, monkeypatch):
    write_events(blob, tmp_path / "parts", "parquet", partition_by="table")
    old = {p: p.read_bytes() for p in files_on_disk(tmp_path)}
    monkeypatch.setattr(pq, "write_table", failing_after(1, pq.write_table))
    with pytest.raises(DiskFull):
        write_events(blob.iloc[::10], tmp_path / "parts", "parquet", partition_by="table", overwrite=True)
    assert {p: p.read_bytes() for p in files_on_disk(tmp_path)} == old
    assert os.listdir(tmp_path) == ["parts"]


def test_a_failed_conversion_leaves_nothing_behind(blob, tmp_path, monkeypatch):
    def broken(records, path, layout="jsonl", topic=None):
        Path(path).write_text('{"half": ')
        raise DiskFull("disk full")

    monkeypatch.setattr(export.conversion, "write_messages", broken)
    with pytest.raises(DiskFull):
        convert(blob, "maxwell", tmp_path / "m.jsonl")
    assert list(tmp_path.iterdir()) == []


# ---------------------------------------------------------------- conversion: the matrix

SEQ = "seq is the dialect's own position: it writes back only positions of its own form and makes up the rest"
NO_SCHEMA = "no schema or namespace field"

#: What each target cannot carry of an event: field -> why. (Images: see IMAGE_VIEWS and as_carried.)
LOST: dict[str, dict[str, str]] = {
    "oceanbase_default": {"emit_time": "no emit time field", "schema": NO_SCHEMA, "seq": SEQ},
    "oceanbase_extend": {"emit_time": "no emit time field", "schema": NO_SCHEMA, "seq": SEQ},
    "canal": {"schema": NO_SCHEMA, "seq": SEQ},
    "dataworks": {"emit_time": "no emit time field", "txn_id": "no transaction id field", "seq": SEQ},
    "shareplex": {"schema": "meta.table names database.table only"},  # scn keeps any seq as text
    "datahub_blob": {"txn_id": "no transaction id field", "seq": SEQ},
    "datahub_tuple": {"key_columns": "no primary key names", "key": "no primary key names",
                      "emit_time": "no emit time field", "txn_id": "no transaction id field", "seq": SEQ},
    "debezium": {"seq": SEQ},
    "arcion": {"seq": SEQ},
    "lindorm": {"txn_id": "no transaction id field", "seq": "no position field at all",
                "schema": "the namespace is 'default' where the source names none"},
    "universe": {"key_columns": "the key is the record id _id", "key": "the key is the record id _id",
                 "emit_time": "no emit time field", "txn_id": "no transaction id field", "schema": NO_SCHEMA,
                 "seq": SEQ},
    "maxwell": {"schema": NO_SCHEMA, "seq": SEQ},
    "ogg": {"txn_id": "no transaction id field",
            "seq": "pos keeps any seq as text, but a seq made from the transaction (maxwell's xoffset) is lost"},
    "debezium_mongodb": {"key_columns": "the key is the document's _id", "key": "the key is the document's _id",
                         "schema": NO_SCHEMA, "seq": SEQ},
    "aws_dms": {"schema": "one schema-name field: it comes back as the database name too",
                "key_columns": "no primary key names", "key": "no primary key names", "seq": SEQ},
    "debezium_flat": {"seq": SEQ},
    "wal2json": {"schema": "the schema is PostgreSQL's one qualifier: it comes back as the database name too",
                 "emit_time": "no emit time field", "seq": SEQ},
    "pg_test_decoding": {"key_columns": "no primary key names", "key": "no primary key names",
                         "emit_time": "no emit time field", "event_time": "only a COMMIT line carries a time",
                         "schema": "tables are schema.table: the schema comes back as the database name too",
                         "seq": "pg_recvlogical lines carry no LSN"},
}

#: Targets whose images differ from the source's in a known way, checked with as_carried / seen.
IMAGE_VIEWS = {
    "shareplex": "an update carries the key (before the change) and only the changed columns",
    "datahub_tuple": "every row carries every column of the file: the other tables' columns come back as null",
    "universe": "values are text, an update has no before image, and the record id _id is added",
    "debezium_mongodb": "every document carries the key value as _id",
    "debezium_flat": "the transform keeps only the after row: an update has no before image",
}
#: Targets that write the before image of an update as the after image plus the changed columns' old values.
BEFORE_FROM_AFTER = ("canal", "maxwell")
#: Targets that cannot write an update without its before image (so updates from UniVerse are left out).
NEEDS_BEFORE = ("shareplex", "datahub_blob", "datahub_tuple")
#: Transaction markers, and the targets that can write them (the others leave them out, saying so).
MARKERS = ("begin", "commit")
WRITES_MARKERS = ("dataworks", "datahub_blob", "debezium", "wal2json", "pg_test_decoding")
#: Targets whose encoder writes transaction markers the events did not have: why.
ADDS_MARKERS = {"pg_test_decoding": "test_decoding gives a change its transaction id only through the BEGIN line "
                                    "before it: the encoder writes BEGIN and COMMIT around each transaction"}

#: (source, target) -> fields that do not survive for reasons of both: field -> why.
PAIR_LOST: dict[tuple[str, str], dict[str, str]] = {
    **{("shareplex", target): {"key": "SharePlex update after images hold only the changed columns and "
                                      f"{target} takes the key from the after image"}
       for target in WRITABLE if target != "shareplex"},
    **{(source, "shareplex"): {"key_columns": "without key columns SharePlex's key is the whole before image",
                               "key": "without key columns SharePlex's key is the whole before image"}
       for source in ("lindorm", "datahub_tuple", "aws_dms", "pg_test_decoding")},  # their shop samples name no keys
    ("debezium_mongodb", "canal"): {"key": "a composite key's _id is a list: Canal's key gives it back as text"},
}
#: (source, target) -> fields lost only on the way back to the source.
BACK_LOST: dict[tuple[str, str], dict[str, str]] = {
    ("shareplex", target): {
        "before": f"{target} fills the columns SharePlex's before image lacks from the after image, so SharePlex "
                  "no longer sees which columns changed",
        "after": "(the same)"}
    for target in BEFORE_FROM_AFTER
} | {("debezium_mongodb", "canal"): {"before": "a nested _id comes back from Canal as JSON text", "after": "(the same)"}}

TRANSPORT = ("dialect", "source", "offset", "partition")  # where a message sits, not what it says
THERE = ["op", "database", "schema", "table", "event_time", "emit_time", "txn_id", "key_columns", "key", "ddl"]
BACK = ["op", "op_raw", "database", "schema", "table", "event_time", "emit_time", "seq", "txn_id",
        "key_columns", "key", "before", "after", "ddl"]


def normal(value, name):
    if value is None or value is pd.NA or value is pd.NaT:
        return None
    if name in ("key", "before", "after"):
        return json.loads(value)
    if name == "key_columns":
        return list(value)
    return value


def rows(frame: pd.DataFrame, fields: list[str]) -> list[dict]:
    return [{f: normal(r[f], f) for f in fields} for r in frame[fields].to_dict("records")]


def universe_text(value):
    """A value as UniVerse text (the format has no types)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, str):
        return value
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def changed(before, after):
    return {k: v for k, v in after.items() if k not in before or before[k] != v}


def as_carried(target, event):
    """``(before, after)`` of a source event as the target writes them."""
    op, before, after = event["op"], event["before"], event["after"]
    if target == "shareplex" and op == "update":
        columns = event["key_columns"]
        if columns and all(c in before for c in columns):
            key = {c: before[c] for c in columns}
            return key, after if set(before) <= set(columns) else changed(before, after)
        return before, changed(before, after)
    if target == "universe":
        image = {k: universe_text(v) for k, v in (before if op == "delete" else after).items()}
        return (image, None) if op == "delete" else (None, image)
    if target == "debezium_flat" and op == "update":
        return None, after
    if target == "canal":  # Canal's columns are scalars: a nested value (a composite _id) is written as JSON text
        before, after = (None if image is None else {k: nested_as_text(v) for k, v in image.items()}
                         for image in (before, after))
    if target in BEFORE_FROM_AFTER and op == "update":
        return {**after, **(before or {})}, after
    return before, after


def nested_as_text(value):
    return json.dumps(value, separators=(",", ":")) if isinstance(value, (list, dict)) else value


def seen(target, want, got):
    """The target's image as comparable with what it was meant to carry."""
    if want is None or got is None:
        return got
    if target == "datahub_tuple":
        assert all(v is None for k, v in got.items() if k not in want), got  # the padding is null
        return {k: v for k, v in got.items() if k in want}
    if target in ("universe", "debezium_mongodb") and "_id" not in want:
        return {k: v for k, v in got.items() if k != "_id"}
    return got


def left_out(frame: pd.DataFrame, target: str) -> pd.Series:
    """The events ``target`` must leave out: updates without a before image, where it needs one, and
    transaction markers, where it has none."""
    out = pd.Series(False, index=frame.index)
    if target in NEEDS_BEFORE:
        out |= (frame["op"] == "update") & frame["before"].isna()
    if target not in WRITES_MARKERS:
        out |= frame["op"].isin(MARKERS)
    return out


def expected_drops(frame: pd.DataFrame, target: str) -> dict[str, int]:
    drops = {}
    if target in NEEDS_BEFORE:
        count = int(((frame["op"] == "update") & frame["before"].isna()).sum())
        if count:
            drops[f"update events without a before image cannot be written in {target}"] = count
    if target not in WRITES_MARKERS:
        for op in MARKERS:
            count = int((frame["op"] == op).sum())
            if count:
                drops[f"{op} events have no form in {target}"] = count
    return drops


def without_added_markers(frame: pd.DataFrame, given: pd.DataFrame, target: str) -> pd.DataFrame:
    """``frame`` read back from ``target`` without the transaction markers its encoder added (see
    ADDS_MARKERS): all of them when ``given`` had none."""
    if target not in ADDS_MARKERS or given["op"].isin(MARKERS).any():
        return frame
    return frame[~frame["op"].isin(MARKERS)].reset_index(drop=True)


def read_converted(converted) -> pd.DataFrame:
    back = cdckit.read(converted.kafka_records(), dialect=converted.dialect)
    assert back.attrs["report"]["quarantined"] == 0, cdckit.quarantine(back)
    return back


def test_the_matrix_covers_every_dialect():
    assert DIALECTS == WRITABLE and len(DIALECTS) >= 13
    assert set(LOST) == set(WRITABLE)
    assert left_out(shop("universe"), "shareplex").sum() == (shop("universe")["op"] == "update").sum() > 0


@pytest.mark.parametrize("target", WRITABLE)
@pytest.mark.parametrize("source", DIALECTS)
def test_convert_keeps_every_event_there_and_back(source, target):
    events = shop(source)
    converted = convert(events, target)
    assert converted.dropped == expected_drops(events, target)
    kept = events[~left_out(events, target)].reset_index(drop=True)
    back = without_added_markers(read_converted(converted), kept, target)
    assert len(back) == len(kept)
    assert Counter(zip(back["op"], table_names(back))) == Counter(zip(kept["op"], table_names(kept)))
    if source == target:
        fields = [f for f in BACK if f not in TRANSPORT]
        assert rows(back, fields) == rows(kept, fields)
        return
    lost = {**LOST[target], **PAIR_LOST.get((source, target), {})}
    fields = [f for f in THERE if f not in lost]
    assert rows(back, fields) == rows(kept, fields)
    for number, (want, got) in enumerate(zip(rows(kept, ["op", "key_columns", "before", "after"]),
                                             rows(back, ["before", "after"]))):
        before, after = as_carried(target, want)
        assert (seen(target, before, got["before"]), seen(target, after, got["after"])) == (before, after), number

    # ... and back to the source dialect: the source's own fields, but for what the target could not carry
    converted_back = convert(back, source)
    assert converted_back.dropped == expected_drops(back, source)
    kept = kept[~left_out(back, source).to_numpy()].reset_index(drop=True)
    again = without_added_markers(read_converted(converted_back), kept, source)
    lost.update(BACK_LOST.get((source, target), {}))
    if target in IMAGE_VIEWS:  # the images changed on the way, and the source takes its key from them
        lost.update(before=IMAGE_VIEWS[target], after=IMAGE_VIEWS[target], key=IMAGE_VIEWS[target])
    fields = [f for f in BACK if f not in lost]
    assert rows(again, fields) == rows(kept, fields)


# ---------------------------------------------------------------- conversion: the rest


def test_a_datahub_blob_capture_becomes_a_debezium_one(tmp_path):
    blob = cdckit.samples.load("datahub_blob")
    heartbeats = int((blob["op"] == "heartbeat").sum())
    assert heartbeats and {"ddl", "insert", "update", "delete"} <= set(blob["op"])
    path = tmp_path / "debezium.jsonl"
    written = convert(blob, "debezium", path, layout="kcat")
    assert written.notes == [f"{heartbeats} heartbeat events have no form in debezium and were left out"]
    assert cdckit.detect(path).dialect == "debezium"
    back = cdckit.read(path)
    assert set(back["dialect"]) == {"debezium"} and back.attrs["report"]["quarantined"] == 0
    fields = ["op", "database", "table", "event_time", "key_columns", "key", "before", "after", "ddl"]
    assert rows(back, fields) == rows(blob[blob["op"] != "heartbeat"], fields)


def test_the_shop_blob_read_by_a_debezium_reader_is_the_same_shop(tmp_path):
    blob = shop("datahub_blob")
    convert(blob, "debezium", tmp_path / "shop.jsonl")  # values only: no Kafka keys, so no key columns
    back = cdckit.read(tmp_path / "shop.jsonl")
    assert set(back["dialect"]) == {"debezium"}
    fields = ["op", "database", "table", "event_time", "emit_time", "before", "after"]
    assert rows(back, fields) == rows(blob, fields)
    assert back["key_columns"].isna().all()


def test_without_kcat_a_note_says_the_kafka_keys_were_not_written(blob, tmp_path):
    written = convert(blob, "arcion", tmp_path / "a.jsonl")
    assert written.notes == ["320 Kafka keys were not written (jsonl has no place for them; the kcat and console "
                             "layouts keep them, and with them the key columns)"]  # words for the API and the CLI
    assert convert(blob, "arcion", tmp_path / "k.jsonl", layout="kcat").notes == []
    assert convert(blob, "arcion", tmp_path / "c.txt", layout="console").notes == []
    assert rows(cdckit.read(tmp_path / "c.txt"), ["key_columns", "key"]) == rows(blob, ["key_columns", "key"])
    assert rows(cdckit.read(tmp_path / "k.jsonl"), ["key_columns", "key"]) == rows(blob, ["key_columns", "key"])


def test_events_a_dialect_cannot_say_are_counted_with_the_reason(tmp_path):
    events = cdckit.samples.load("debezium")  # transaction markers, a tombstone, DDL and changes
    counts = Counter(events["op"])
    assert counts["begin"] and counts["commit"] and counts["tombstone"]
    want = {f"{op} events have no form in maxwell": counts[op] for op in ("begin", "commit", "tombstone")}
    converted = convert(events, "maxwell")
    assert converted.dropped == want
    assert len(cdckit.read(converted)) == len(events) - sum(want.values())
    written = convert(events, "maxwell", tmp_path / "m.jsonl")
    assert written.notes == [f"{n} {reason} and were left out" for reason, n in want.items()]
    assert written.rows == len(cdckit.read(tmp_path / "m.jsonl")) == len(events) - sum(want.values())


def test_partly_writable_events_get_their_own_reason():
    events = shop("canal").head(4).copy()
    events.loc[1, "after"] = json.dumps({"id": 2, "name": "two\nlines"})  # a UniVerse line cannot hold a line feed
    assert convert(events, "universe").dropped == {
        "insert events that universe cannot write (names, values or kinds its format cannot carry)": 1}


def test_snapshot_reads_written_as_inserts_are_noted():
    events = shop("maxwell").head(5).copy()
    events["op"] = pd.array(["read", "read", "insert", "insert", "insert"], dtype=events["op"].dtype)
    converted = convert(events, "canal")
    assert converted.dropped == {}
    assert converted.notes == ["2 read (snapshot) events were written as insert: canal has no snapshot op"]
    assert list(cdckit.read(converted)["op"]) == ["insert"] * 5


def test_an_encoder_error_names_the_event():
    events = shop("canal").copy()
    events.loc[200, "after"] = "{broken"
    bad = events.loc[200]
    with pytest.raises(EncodeError) as err:
        convert(events, "debezium")
    assert (err.value.source, err.value.offset) == (bad["source"], bad["offset"])
    assert str(err.value).startswith(f"cannot encode the event at {bad['source']}, message {bad['offset']} as "
                                     f"debezium: {bad['op']} of {bad['database']}.{bad['table']}: JSONDecodeError")


def test_converted_is_a_list_of_message_values(blob):
    converted = convert(blob.head(3), "debezium")
    records = list(registry.create("debezium").encode(blob.head(3)))
    assert len(converted) == 3 and converted.records == records
    assert list(converted) == [r.value for r in records] == converted[:]
    assert converted[1] == records[1].value
    assert repr(converted) == "<Converted: 3 debezium messages, 0 events left out>"
    # values alone carry no Kafka key: read them back with kafka_records() to keep the key columns
    assert cdckit.read(converted)["key_columns"].isna().all()
    assert rows(cdckit.read(converted.kafka_records()), ["key_columns"]) == rows(blob.head(3), ["key_columns"])


def test_convert_writes_each_layout(blob, tmp_path):
    for name, layout in [("t.csv", "csv"), ("t.parquet", "parquet"), ("t.jsonl", "jsonl")]:
        written = convert(blob, "datahub_tuple", tmp_path / name)
        assert written.format == layout and written.rows == 320 + int((blob["op"] == "update").sum())
        assert cdckit.detect(tmp_path / name).dialect == "datahub_tuple"
        assert len(cdckit.read(tmp_path / name)) == len(blob)
    written = convert(blob, "universe", tmp_path / "u.txt")
    assert written.format == "text" and len(cdckit.read(tmp_path / "u.txt", dialect="universe")) == len(blob)
    written = convert(blob, "maxwell", tmp_path / "m.jsonl.gz")
    assert (tmp_path / "m.jsonl.gz").read_bytes()[:2] == b"\x1f\x8b"
    assert written.bytes == os.path.getsize(tmp_path / "m.jsonl.gz")
    assert rows(cdckit.read(tmp_path / "m.jsonl.gz"), ["op", "key", "after"]) == rows(blob, ["op", "key", "after"])
    with pytest.raises(ValueError, match="layout 'csv' does not fit maxwell"):
        convert(blob, "maxwell", tmp_path / "m.csv", layout="csv")
    with pytest.raises(FileExistsError, match="overwrite=True"):
        convert(blob, "maxwell", tmp_path / "m.jsonl.gz")
    convert(blob.head(2), "maxwell", tmp_path / "m.jsonl.gz", overwrite=True)
    assert len(cdckit.read(tmp_path / "m.jsonl.gz")) == 2


# ---------------------------------------------------------------- Spark


PANDAS_ONLY = """
import sys, cdckit
from cdckit import export
events = cdckit.samples.load("canal/shop")
export.write_events(events, sys.argv[1] + "/events.csv")
export.write_events(events, sys.argv[1] + "/parts", "parquet", partition_by="table")
export.write_state(cdckit.materialize(events), sys.argv[1] + "/state.jsonl")
export.write_scd2(cdckit.scd2(events), sys.argv[1] + "/scd2")
export.read_events(sys.argv[1] + "/events.csv")
export.convert(events, "maxwell")
print(sorted(name for name in sys.modules if name.startswith(("pyspark", "cdckit.spark"))))
"""


def test_the_pandas_writers_never_import_pyspark(tmp_path):
    # a pandas user needs no pyspark: only a Spark frame brings in cdckit.spark.export (and with it pyspark)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    done = subprocess.run([sys.executable, "-c", PANDAS_ONLY, str(tmp_path)], capture_output=True, text=True,
                          env=env, cwd=ROOT, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
    assert len(list(tmp_path.iterdir())) == 4  # every writer ran



@pytest.fixture(scope="module")
def spark_blob(spark):
    from cdckit.spark import read as spark_read

    frame = spark_read(spark, str(cdckit.samples.path("datahub_blob/shop"))).cache()
    yield frame
    frame.unpersist()


@pytest.mark.parametrize("fmt", FORMATS)
def test_spark_writes_read_back_as_the_pandas_writes(spark_blob, blob, fmt, tmp_path):
    from_spark = write_events(spark_blob, tmp_path / f"spark{EXT[fmt]}")
    from_pandas = write_events(blob, tmp_path / f"pandas{EXT[fmt]}")
    assert from_spark.rows == from_pandas.rows == 320
    on_disk = files_on_disk(tmp_path / f"spark{EXT[fmt]}")
    assert from_spark.files == [f for f in on_disk if f.name.startswith("part-")]  # not _SUCCESS nor .crc files
    assert len(on_disk) > len(from_spark.files) > 0
    assert from_spark.bytes == sum(os.path.getsize(f) for f in from_spark.files)
    spark_back = read_events(tmp_path / f"spark{EXT[fmt]}")
    pd.testing.assert_frame_equal(arrival(spark_back), arrival(read_events(tmp_path / f"pandas{EXT[fmt]}")))


def test_spark_partitions_like_pandas(spark_blob, blob, tmp_path):
    write_events(spark_blob, tmp_path / "spark", "parquet", partition_by="table")
    write_events(blob, tmp_path / "pandas", "parquet", partition_by="table")
    assert sorted(p.name for p in (tmp_path / "spark").iterdir() if not p.name.startswith(("_", "."))) == \
        sorted(p.name for p in (tmp_path / "pandas").iterdir())
    pd.testing.assert_frame_equal(arrival(read_events(tmp_path / "spark")), arrival(blob))
    with pytest.raises(FileExistsError):
        write_events(spark_blob, tmp_path / "spark", "parquet", partition_by="table")


def test_spark_state_tables_and_conversion(spark, spark_blob, blob, tmp_path):
    states = cdckit.materialize(blob)
    spark_states = {name: spark.createDataFrame(frame) for name, frame in states.items()}
    written = write_state(spark_states, tmp_path / "state")
    assert written.rows == sum(len(frame) for frame in states.values())
    for name, frame in states.items():
        by = list(frame.columns[:2])
        got = pd.read_parquet(tmp_path / "state" / f"{name}.parquet").sort_values(by, ignore_index=True)
        got = object_columns(got)  # pandas 3 reads texts as str, a missing one as NaN: the tables' None
        pd.testing.assert_frame_equal(got, frame.sort_values(by, ignore_index=True), check_dtype=False)
    converted = convert(spark_blob, "maxwell")  # collected to pandas first
    assert len(converted) == 320 and converted.dropped == {}
    assert Counter(cdckit.read(converted)["op"]) == Counter(blob["op"])
