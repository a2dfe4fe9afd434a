"""``cdckit.read(..., workers=N)``: a file decoded in ranges by worker processes gives the one-process result."""

from __future__ import annotations

import functools
import json
import warnings

import pandas as pd
import pytest

import cdckit
from cdckit import io as cdckit_io, workers


def same_read(one: pd.DataFrame, many: pd.DataFrame) -> None:
    pd.testing.assert_frame_equal(one, many)
    assert one.attrs["report"] == many.attrs["report"]
    pd.testing.assert_frame_equal(cdckit.quarantine(one), cdckit.quarantine(many))


@functools.lru_cache(maxsize=None)
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


def test_a_gzip_file_or_a_payload_is_read_in_one_process(tmp_path):
    import gzip

    path = tmp_path / "capture.jsonl.gz"
    with gzip.open(path, "wb") as out:
        out.write(cdckit.samples.path("canal/shop.jsonl").read_bytes() if hasattr(cdckit.samples.path("canal/shop.jsonl"), "read_bytes")
                  else open(cdckit.samples.path("canal/shop.jsonl"), "rb").read())
    assert not workers.splittable(str(path), "jsonl")
    same_read(cdckit.read(path, workers=1), cdckit.read(path, workers=2))
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
    started = []
    monkeypatch.setattr(workers, "pool", lambda *args, _pool=workers.pool: started.append(args) or _pool(*args))
    one = list(cdckit.read(path, workers=1, chunksize=7))
    many = cdckit.read(path, chunksize=7)
    chunks = list(many)
    assert started and len(started[0]) == 3  # the default read of a large file went to the workers
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
