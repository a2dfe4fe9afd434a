"""``cdckit.read(..., workers=N)``: a file decoded in ranges by worker processes gives the one-process result."""

from __future__ import annotations

import functools
import json

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
