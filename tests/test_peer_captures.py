"""Peers' test captures are read whole: lines before, between and after the messages that are not messages
(a licence header, a cut record, comments, blank lines) are quarantined one by one, with file, offset and
a reason; every message is decoded, in one process and in workers."""

from __future__ import annotations

import pandas as pd
import pytest
from peer_captures import HEADERS, SHAPES, peer_capture

import cdckit
from cdckit import io as cdckit_io
from cdckit.reading import workers


@pytest.mark.parametrize("header", sorted(HEADERS))
@pytest.mark.parametrize("shape", SHAPES)
def test_only_the_lines_that_are_not_messages_are_quarantined(tmp_path, shape, header):
    path, bad = peer_capture(tmp_path / "capture.txt", shape, header)
    capture = cdckit.read(path, capture=True)
    assert capture.events["op"].tolist() == ["insert"] * 6
    assert capture.events["after"].str.contains('"id":').all()
    assert capture.report["dialects"] == {"debezium": capture.report["messages"]}
    assert capture.report["quarantined"] == bad
    quarantine = capture.quarantine
    assert "unknown_dialect" not in set(quarantine["reason_code"])
    assert (quarantine["source"] == str(path)).all() and quarantine["offset"].notna().all()
    assert quarantine["line"].is_monotonic_increasing
    comments = quarantine[quarantine["raw"].str.lstrip().str[:1].isin(["#", "-", "/", "*"])]
    assert len(comments) == HEADERS[header].count("\n") - HEADERS[header].count("\n\n") + 1
    assert comments["reason"].str.startswith("a comment line, not a message").all()


@pytest.mark.parametrize("shape", SHAPES)
def test_detection_looks_past_the_header(tmp_path, shape):
    path, _ = peer_capture(tmp_path / "capture.txt", shape, "block")
    assert cdckit.detect(path).dialect == "debezium"
    assert cdckit_io.file_container(str(path)) == ("json" if shape == "pretty" else "jsonl")


@pytest.mark.parametrize("shape", SHAPES)
def test_workers_read_a_peer_capture_as_one_process(tmp_path, monkeypatch, shape):
    path, bad = peer_capture(tmp_path / "capture.txt", shape, "hash", count=120)
    monkeypatch.setattr(workers, "RANGE_BYTES", max(1, path.stat().st_size // 7))
    one = cdckit.read(path, workers=1)
    many = cdckit.read(path, workers=2)
    assert len(one) == 120 and one.attrs["report"]["quarantined"] == bad
    pd.testing.assert_frame_equal(one, many)
    assert one.attrs["report"] == many.attrs["report"]
    pd.testing.assert_frame_equal(cdckit.quarantine(one), cdckit.quarantine(many))


def test_a_text_capture_stays_text():
    head = b"BEGIN 529\ntable public.t: INSERT: id[integer]:1\nCOMMIT 529\n"
    assert cdckit_io.sniff_container(head) == "text"
    assert cdckit_io.sniff_container(b"# a comment\n" + head) == "text"
