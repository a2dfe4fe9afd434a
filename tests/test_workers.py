"""``cdckit.read(..., workers=N)``: a file decoded in ranges by worker processes gives the one-process result."""

from __future__ import annotations

import functools
import gzip
import json
import os
import warnings

import pandas as pd
import pytest

import cdckit
from cdckit import io as cdckit_io
from cdckit.reading import workers


def same_read(one: pd.DataFrame, many: pd.DataFrame) -> None:
    pd.testing.assert_frame_equal(one, many)
    assert one.attrs["report"] == many.attrs["report"]
    pd.testing.assert_frame_equal(cdckit.quarantine(one), cdckit.quarantine(many))


@functools.cache
def sample_events() -> pd.DataFrame:
    """Events of every sample of every dialect: up to 40 of each dialect and op."""
    frames = [cdckit.read(cdckit.samples.path(s)) for s in cdckit.samples.list()]
    return pd.concat(frames, ignore_index=True).groupby(["dialect", "op"], group_keys=False).head(40)


def capture(tmp_path, name: str, layout: str = "jsonl"):
    """Sample events of every dialect converted to ``name``, with damage between the messages."""
    records = cdckit.convert(sample_events(), name).records
    text = cdckit.dialects.registry.get(name).layout == "text"
    path = tmp_path / f"capture.{'txt' if text else 'jsonl'}"
    cdckit_io.write_messages(records, path, "text" if text else layout)
    lines = path.read_bytes().split(b"\n")
    for at in range(len(lines) // 3, len(lines), len(lines) // 3 + 1):  # damage spread over the ranges
        lines.insert(at, b'{"broken": ' if not text else b"\xff\xfe not a line")
        lines.insert(at, b"")
    path.write_bytes(b"\n".join(lines))
    return path


@pytest.mark.parametrize("name", cdckit.dialects.names())
def test_workers_give_the_one_process_read_for_every_dialect(name, tmp_path, monkeypatch):
    path = capture(tmp_path, name)
    monkeypatch.setattr(workers, "RANGE_BYTES", max(1, path.stat().st_size // 7))  # several ranges per worker
    one = cdckit.read(path, workers=1)
    many = cdckit.read(path, workers=2)
    assert len(workers.file_units(str(path), cdckit_io.file_container(str(path)), name, None, True, None, 2)) >= 8
    same_read(one, many)


def test_update_halves_split_across_ranges_are_paired_as_in_one_process(tmp_path, monkeypatch):
    path = capture(tmp_path, "datahub_blob")
    monkeypatch.setattr(workers, "RANGE_BYTES", 400)  # a range of a line or two: halves land in different ranges
    one = cdckit.read(path, dialect="datahub_blob", workers=1)
    many = cdckit.read(path, dialect="datahub_blob", workers=2)
    assert one.attrs["report"]["skipped"]  # pairs were merged
    same_read(one, many)


def test_kcat_lines_in_workers_keep_kafka_offsets_and_keys(tmp_path, monkeypatch):
    path = capture(tmp_path, "debezium", layout="kcat")
    monkeypatch.setattr(workers, "RANGE_BYTES", max(1, path.stat().st_size // 5))
    one = cdckit.read(path, dialect="debezium", workers=1)
    many = cdckit.read(path, dialect="debezium", workers=2)
    assert many["key_columns"].notna().any()
    same_read(one, many)


def test_workers_are_used_only_when_asked_or_for_large_files(tmp_path):
    assert workers.worker_count(None, 10) == 1
    assert workers.worker_count(None, workers.PARALLEL_BYTES) >= 1
    assert workers.worker_count(3, 10) == 3
    with pytest.raises(ValueError):
        cdckit.read(tmp_path, workers=0)


def test_a_payload_is_read_in_one_process():
    payload = json.dumps({"database": "d", "table": "t", "type": "insert", "ts": 1, "data": {"id": 1}})
    same_read(cdckit.read(payload, workers=1), cdckit.read(payload, workers=2))


def test_a_half_left_open_by_an_earlier_range_takes_its_partner_as_in_one_process(tmp_path, monkeypatch):
    # A before half with no partner in its range, then (two ranges on) the same update sent again as two
    # halves. One process pairs the first before half with the after half (first in, first out) and
    # quarantines the second before half; a worker alone would pair the two halves it sees.
    def half(seq: str, name: str, before: bool) -> bytes:
        return json.dumps({"id": 1, "name": name, "_sequence_id_": seq, "_operation_type_": "U",
                           "_excute_time_": 1677158088000, "_source_table_": "shop.customers",
                           "_before_image_": "Y" if before else "N", "_after_image_": "N" if before else "Y"}).encode()
    filler = [json.dumps({"id": n, "name": f"n{n}", "_sequence_id_": str(100 + n), "_operation_type_": "I",
                          "_excute_time_": 1677158088000, "_source_table_": "shop.customers",
                          "_before_image_": "N", "_after_image_": "Y"}).encode() for n in range(2, 200)]
    lines = [half("7", "first", True)] + filler + [half("7", "again", True), half("7", "last", False)]
    path = tmp_path / "redelivered.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    monkeypatch.setattr(workers, "RANGE_BYTES", path.stat().st_size // 4)
    one = cdckit.read(path, dialect="datahub_tuple", workers=1)
    many = cdckit.read(path, dialect="datahub_tuple", workers=2)
    update = one[one["op"] == "update"]
    assert len(update) == 1 and json.loads(update["before"].iloc[0])["name"] == "first"
    assert list(cdckit.quarantine(one)["offset"]) == [len(lines) - 2]
    same_read(one, many)


def test_a_bad_message_stops_a_read_in_workers_where_one_process_stops(tmp_path, monkeypatch):
    path = capture(tmp_path, "debezium")
    monkeypatch.setattr(workers, "RANGE_BYTES", max(1, path.stat().st_size // 7))
    with pytest.raises(cdckit.DecodeError) as one:
        cdckit.read(path, dialect="debezium", errors="raise", workers=1)
    with pytest.raises(cdckit.DecodeError) as many:
        cdckit.read(path, dialect="debezium", errors="raise", workers=2)
    assert str(one.value) == str(many.value) and one.value.offset == many.value.offset
    assert len(one.value.partial) > 0
    pd.testing.assert_frame_equal(one.value.partial, many.value.partial)


def test_chunked_reads_use_the_workers_and_give_the_one_process_chunks(tmp_path, monkeypatch):
    path = capture(tmp_path, "canal")
    monkeypatch.setattr(workers, "RANGE_BYTES", max(4, path.stat().st_size // 2))  # a quarter of it per range
    monkeypatch.setattr(workers, "PARALLEL_BYTES", 1)  # workers=None: every core, as for a large file
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)  # two cores at least
    started = []
    monkeypatch.setattr(workers, "pool", lambda *args, _pool=workers.pool: started.append(args) or _pool(*args))
    one = list(cdckit.read(path, workers=1, chunksize=7))
    many = cdckit.read(path, chunksize=7)
    chunks = list(many)
    assert started == [(2,)]  # the default chunked read of a large file went to the workers
    assert [len(c) for c in one] == [len(c) for c in chunks]
    for a, b in zip(one, chunks):
        pd.testing.assert_frame_equal(a, b)
    assert many.report == one[-1].attrs["report"]
    pd.testing.assert_frame_equal(many.quarantine, cdckit.read(path, workers=1, capture=True).quarantine)


def test_the_calling_process_does_not_read_the_lines_it_hands_out(tmp_path):
    # the ranges are cut without counting their lines: each worker counts its own, for the ranges after it
    path = capture(tmp_path, "maxwell")
    units = workers.file_units(str(path), "jsonl", "maxwell", None, False, None, 2, range_bytes=200)
    assert len(units) > 4 and units[0]["first_offset"] == 0
    assert all(unit["first_offset"] is None and unit["first_line"] is None for unit in units[1:])
    # placed in a pool (shared counts) or alone (the lines before it counted): the whole file's numbers
    counted, position, offset = {}, 0, 0
    for number, line in enumerate(path.read_bytes().splitlines(keepends=True), 1):
        counted[position] = (offset, number)  # at each line's start: the messages before it, its number
        position += len(line)
        offset += 1 if line.strip() else 0
    counts = [-1] * (2 * len(units))
    for unit in units:
        shared, alone = workers.placed_unit(unit, counts), workers.placed_unit(unit)
        expected = counted[unit["start"]]
        assert (shared["first_offset"], shared["first_line"]) == expected
        assert (alone["first_offset"], alone["first_line"]) == expected


def test_worker_events_come_back_as_arrow_files_mapped_and_removed(tmp_path, monkeypatch):
    path = capture(tmp_path, "debezium")
    folder = tmp_path / "results"
    folder.mkdir()
    monkeypatch.setattr(workers, "results_folder", lambda size: str(folder))
    mapped = []
    monkeypatch.setattr(workers, "events_of", lambda result, _events_of=workers.events_of: mapped.append(
        result["table"]) or _events_of(result))
    monkeypatch.setattr(workers, "RANGE_BYTES", max(1, path.stat().st_size // 5))
    same_read(cdckit.read(path, workers=1), cdckit.read(path, workers=2))
    assert len(mapped) >= 4 and all(isinstance(found, str) and found.endswith(".arrow") for found in mapped)
    assert not folder.exists()  # the read removes its folder; the mapped events live on in the frame


@pytest.mark.parametrize("given", [None, "canal"])
def test_a_directory_is_read_a_file_per_worker_as_in_one_process(tmp_path, monkeypatch, given):
    folder = tmp_path / "capture"
    (folder / "more").mkdir(parents=True)
    for number, name in enumerate(["canal", "canal", "maxwell", "canal"]):  # one file of another dialect
        path = capture(tmp_path, name)
        path.rename(folder / ("more" if number == 3 else "") / f"part-{number}.jsonl")
    (folder / "part-9.jsonl").write_bytes(b"\xff\xfe not json\n{\"also\": \"not canal\"}\n")
    monkeypatch.setattr(workers, "RANGE_BYTES", 300)  # one file is cut into ranges, the others go whole
    monkeypatch.setattr(workers, "splittable", lambda path, kind, _s=workers.splittable: _s(path, kind)
                        and path.endswith("part-1.jsonl"))
    tasks = []
    monkeypatch.setattr(workers, "results_in_order", lambda executor, units, _r=workers.results_in_order:
                        tasks.append(units) or _r(executor, units))
    with warnings.catch_warnings(record=True) as alone:
        warnings.simplefilter("always")
        one = cdckit.read(folder, dialect=given, workers=1)
    with warnings.catch_warnings(record=True) as together:
        warnings.simplefilter("always")
        many = cdckit.read(folder, dialect=given, workers=2)
    same_read(one, many)
    whole = [unit for unit in tasks[0] if unit.get("whole")]
    assert len(whole) == 4 and len(tasks[0]) > 6  # four files whole, one in ranges, in one pool
    assert one.attrs["report"]["sources"] == many.attrs["report"]["sources"]
    assert [str(w.message) for w in alone] == [str(w.message) for w in together]
    with pytest.raises(cdckit.DecodeError) as stopped_alone:
        cdckit.read(folder, dialect=given, workers=1, errors="raise")
    with pytest.raises(cdckit.DecodeError) as stopped_together:
        cdckit.read(folder, dialect=given, workers=2, errors="raise")
    assert str(stopped_alone.value) == str(stopped_together.value)
    pd.testing.assert_frame_equal(stopped_alone.value.partial, stopped_together.value.partial)


# ------------------------------------------------------------ every layout users save


def gzipped(path):
    """``path`` compressed beside it (``.gz`` added), the plain file removed."""
    packed = path.with_name(path.name + ".gz")
    packed.write_bytes(gzip.compress(path.read_bytes()))
    path.unlink()
    return packed


def several_ranges(monkeypatch, path, size=None) -> None:
    """A range of about an eighth of the (decompressed) file: several ranges per worker."""
    size = size or len(gzip.decompress(path.read_bytes()) if path.name.endswith(".gz") else path.read_bytes())
    monkeypatch.setattr(workers, "RANGE_BYTES", max(1, size // 7))


def units_of(path, dialect=None):
    return workers.file_units(str(path), cdckit_io.file_container(str(path)), dialect, None, dialect is None, None, 2)


@pytest.mark.parametrize("name", [n for n in cdckit.dialects.names() if not cdckit.dialects.registry.flag(n, "whole_files")])
def test_a_gzip_file_is_decompressed_once_and_read_in_ranges(name, tmp_path, monkeypatch):
    path = gzipped(capture(tmp_path, name))
    several_ranges(monkeypatch, path)
    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setattr("tempfile.tempdir", str(folder))
    with units_of(path, name) as units:
        assert len(units) >= 8 and os.listdir(folder)
        assert {unit["source"] for unit in units} == {str(path)} and units[0]["path"] != str(path)
    assert not os.listdir(folder)  # the decompressed copy is removed with the units
    one = cdckit.read(path, workers=1)
    many = cdckit.read(path, workers=2)
    assert not os.listdir(folder)  # ... and when the read ends
    assert set(cdckit.quarantine(many)["source"]) == {str(path)} and set(many["source"]) == {str(path)}
    same_read(one, many)


def test_a_damaged_gzip_file_is_read_whole_and_the_copy_removed_on_error(tmp_path, monkeypatch):
    path = gzipped(capture(tmp_path, "canal"))
    several_ranges(monkeypatch, path)
    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setattr("tempfile.tempdir", str(folder))
    damaged = tmp_path / "damaged.jsonl.gz"
    damaged.write_bytes(path.read_bytes()[:-100])
    units = units_of(damaged, "canal")
    assert [(u["path"], u["end"]) for u in units] == [(str(damaged), -1)] and not os.listdir(folder)
    one, many = cdckit.read(damaged, workers=1), cdckit.read(damaged, workers=2)
    assert cdckit.quarantine(one)["reason"].str.contains("damaged gzip").any()
    same_read(one, many)

    def fail(*args, **kwargs):
        raise RuntimeError("a worker died")

    monkeypatch.setattr(workers, "results_in_order", fail)
    with pytest.raises(RuntimeError):
        cdckit.read(path, workers=2)
    assert not os.listdir(folder)


@pytest.mark.parametrize("name", ["debezium", "canal", "datahub_tuple", "maxwell"])
@pytest.mark.parametrize("packed", [False, True])
def test_console_consumer_lines_are_read_in_ranges(name, packed, tmp_path, monkeypatch):
    path = capture(tmp_path, name, layout="console")
    lines = path.read_bytes().split(b"\n")
    for at in range(len(lines) // 4, len(lines), len(lines) // 4 + 1):  # a bad record in several ranges
        lines.insert(at, b'CreateTime:1\tPartition:0\tOffset:77\tnull\t{"broken": 1}')
    path.write_bytes(b"\n".join(lines))
    path = gzipped(path) if packed else path
    several_ranges(monkeypatch, path)
    assert len(units_of(path)) >= 8
    one, many = cdckit.read(path, workers=1), cdckit.read(path, workers=2)
    assert one.attrs["report"]["quarantined"] >= 3 and one["partition"].notna().all()
    same_read(one, many)


def json_array(tmp_path, name: str):
    """Sample events of a dialect as one JSON array, pretty-printed, with messages no dialect takes."""
    records = [getattr(r, "value", r) for r in cdckit.convert(sample_events(), name).records]
    for at in range(len(records) // 3, len(records), len(records) // 3 + 1):
        records[at:at] = [{"broken": 1}, "not a message", 7]
    path = tmp_path / "capture.json"
    path.write_text(json.dumps(records, indent=1))
    return path


@pytest.mark.parametrize("name", ["debezium", "canal", "datahub_blob", "datahub_tuple", "aws_dms", "maxwell"])
@pytest.mark.parametrize("packed", [False, True])
def test_a_json_array_is_read_in_ranges_of_whole_elements(name, packed, tmp_path, monkeypatch):
    path = json_array(tmp_path, name)
    path = gzipped(path) if packed else path
    several_ranges(monkeypatch, path)
    units = units_of(path)
    assert len(units) >= 8 and units[0]["first_offset"] == 0 and units[1]["first_offset"] > 0
    one, many = cdckit.read(path, workers=1), cdckit.read(path, workers=2)
    assert one.attrs["report"]["quarantined"] >= 6 and (one.attrs["report"]["skipped"] or "datahub" not in name)
    same_read(one, many)
    assert list(cdckit.quarantine(many)["line"]) == list(cdckit.quarantine(one)["line"])


def test_a_broken_json_array_is_read_whole(tmp_path, monkeypatch):
    path = json_array(tmp_path, "canal")
    text = path.read_bytes()
    path.write_bytes(text[: len(text) // 2] + b'{"broken": ,\n' + text[len(text) // 2:])
    several_ranges(monkeypatch, path)
    assert [u["end"] for u in units_of(path)] == [-1]
    same_read(cdckit.read(path, workers=1), cdckit.read(path, workers=2))


def tuple_rows(tmp_path, layout: str, extra: dict | None = None):
    """Sample events as DataHub Tuple rows in a Parquet or CSV file, with bad rows in several ranges."""
    rows = [{k: None if v is None else str(v).replace("\n", " ") for k, v in getattr(r, "value", r).items()}
            for r in cdckit.convert(sample_events(), "datahub_tuple").records]
    for at in range(len(rows) // 4, len(rows), len(rows) // 4 + 1):
        rows.insert(at, {**rows[at], "_operation_type_": "X"})
    if extra:
        rows[len(rows) // 2].update(extra)
    path = tmp_path / f"capture.{layout}"
    cdckit_io.write_messages(rows, path, layout)
    return path, rows


def halves_across_ranges(units, rows) -> bool:
    """True when the two rows of an update lie in different units (rows of a CSV or Parquet file)."""
    ends = [unit["first_offset"] for unit in units[1:]]
    seen = {}
    for offset, row in enumerate(rows):
        if row["_operation_type_"] == "U":
            unit = sum(offset >= end for end in ends)
            if seen.setdefault(row["_sequence_id_"], unit) != unit:
                return True
    return False


@pytest.mark.parametrize("layout, packed", [("parquet", False), ("csv", False), ("csv", True)])
def test_tuple_rows_in_parquet_and_csv_are_read_in_ranges(layout, packed, tmp_path, monkeypatch):
    path, rows = tuple_rows(tmp_path, layout)
    size = path.stat().st_size
    path = gzipped(path) if packed else path
    monkeypatch.setattr(workers, "RANGE_BYTES", max(1, size // 9))
    units = units_of(path, "datahub_tuple")
    assert len(units) >= 8 and halves_across_ranges(units, rows)
    one = cdckit.read(path, dialect="datahub_tuple", workers=1)
    many = cdckit.read(path, dialect="datahub_tuple", workers=2)
    report = one.attrs["report"]
    assert report["quarantined"] >= 3 and report["skipped"] and (one["op"] == "update").any()
    same_read(one, many)


def test_a_csv_cell_holding_a_line_end_keeps_the_file_whole(tmp_path, monkeypatch):
    path, rows = tuple_rows(tmp_path, "csv", {"name": "two\nlines, \"quoted\""})
    several_ranges(monkeypatch, path)
    assert [u["end"] for u in units_of(path, "datahub_tuple")] == [-1]
    same_read(cdckit.read(path, dialect="datahub_tuple", workers=1),
              cdckit.read(path, dialect="datahub_tuple", workers=2))
    path.write_bytes(path.read_bytes().replace(b"\r", b"").replace(b'"two\nlines, ""quoted"""', b'"a, ""b"""'))
    assert len(units_of(path, "datahub_tuple")) >= 8  # quoted cells on one line: cut
    same_read(cdckit.read(path, dialect="datahub_tuple", workers=1),
              cdckit.read(path, dialect="datahub_tuple", workers=2))


def test_worker_events_travel_pickled_when_no_file_can_be_written(tmp_path, monkeypatch):
    path = capture(tmp_path, "canal")
    monkeypatch.setattr(workers, "RANGE_BYTES", max(1, path.stat().st_size // 5))

    def full_disk(*args, **kwargs):
        raise OSError(28, "No space left on device")

    one = cdckit.read(path, workers=1)
    monkeypatch.setattr(workers.pa, "OSFile", full_disk)  # the forked workers inherit it
    same_read(one, cdckit.read(path, workers=2))


def test_a_value_only_console_capture_reads_in_workers_as_in_one_process(tmp_path, monkeypatch):
    # what kafka-console-consumer saves without print.key: values only, no key, no partition, no offset
    events = cdckit.read(cdckit.samples.path("debezium"))
    records = cdckit.convert(events, "debezium").records
    path = tmp_path / "values.txt"
    path.write_bytes(b"".join(json.dumps(record.value).encode() + b"\n" for record in records * 20))
    monkeypatch.setattr(workers, "RANGE_BYTES", max(1, path.stat().st_size // 6))
    one = cdckit.read(path, workers=1)
    many = cdckit.read(path, workers=2)
    assert one["key_columns"].isna().mean() > 0.8 and len(one) >= 100  # (a truncate names its key columns)
    same_read(one, many)
    for table, state in cdckit.materialize(one).items():
        pd.testing.assert_frame_equal(state, cdckit.materialize(many)[table])
