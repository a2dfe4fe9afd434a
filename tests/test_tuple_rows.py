"""DataHub Tuple rows of CSV and Parquet files decoded in blocks (``decode_rows``) equal the row path
(each row's message through ``decode``), odd rows at several places of a block; the blocks' messages equal
the container's messages."""

from __future__ import annotations

import base64
import io
from decimal import Decimal

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import cdckit
from cdckit.dialects.datahub_tuple import DataHubTuple
from cdckit.io import file_messages, file_pieces
from cdckit.io.tables import RowBlock, csv_blocks, csv_messages

META = ["_sequence_id_", "_operation_type_", "_excute_time_", "_source_table_", "_before_image_", "_after_image_"]


def plain(i: int) -> list:
    """Row ``i`` of a capture: inserts, deletes and updates (two rows) of two tables."""
    table = "shop.items" if i % 3 else "other"
    return [[i, f"n{i}", 1.5 * i, None if i % 4 else "x", str(1000 + i), op, 1700000000000 + i, table, b, a]
            for op, b, a in ([("I", "N", "Y")] if i % 5 else [("U", "Y", "N"), ("U", "N", "Y")] if i % 2
                             else [("D", "Y", "N")])]


#: Rows decode refuses or treats apart, each put at several places of the capture.
ODD = [
    [1, "a", 1.0, None, "9001", "X", 1700000000000, "shop.items", "N", "Y"],  # unknown op
    [1, "a", 1.0, None, None, "I", 1700000000000, "shop.items", "N", "Y"],  # null sequence
    [1, "a", 1.0, None, "9002", "I", None, "shop.items", "N", "Y"],  # no time
    [1, "a", 1.0, None, "9003", "I", 10**17, "shop.items", "N", "Y"],  # time beyond a timestamp
    [1, "a", 1.0, None, "9004", "U", 1700000000000, "shop.items", "Y", "Y"],  # U with both flags
    [1, "a", 1.0, None, "9005", "U", 1700000000000, "shop.items", "Y", "N"],  # a half with no partner
    [1, "a", 1.0, None, "-3", "D", 1700000000000, None, "Y", "N"],  # no table, negative sequence
    [1, "\u00e9\"\\\n", -0.0, "", "abc", "I", 0, "db.s.t", "N", "Y"],  # escapes, three-part table
    [None, None, None, None, "9006", None, 1700000000000, "t", "N", "Y"],  # null op
]
NAMES = ["id", "name", "price", "note", *META]


def capture(places: list[int], count: int = 60) -> list[list]:
    rows = [row for i in range(count) for row in plain(i)]
    for place in sorted(places, reverse=True):
        rows[place:place] = ODD
    return rows


def write_csv(path, rows: list[list], names: list[str] = NAMES) -> None:
    def cell(v):
        text = "" if v is None else str(v)
        return '"' + text.replace('"', '""') + '"' if any(c in text for c in ',"\n') else text
    with open(path, "w", encoding="utf-8", newline="") as out:
        out.write(",".join(names) + "\n")
        for row in rows:
            out.write(",".join(cell(v) for v in row) + "\n")


def write_parquet(path, rows: list[list], names: list[str] = NAMES, **more) -> None:
    columns = {name: [row[i] for row in rows] for i, name in enumerate(names)}
    columns.update(more)
    pq.write_table(pa.table(columns), path, row_group_size=37)


def frames(path, monkeypatch, **options) -> tuple:
    def read():
        events = cdckit.read(str(path), **options)
        return events.to_csv(), cdckit.quarantine(events).to_csv(), repr(events.attrs.get("report"))
    fast = read()
    with monkeypatch.context() as patched:
        patched.delattr(DataHubTuple, "decode_rows")
        slow = read()
    return fast, slow


@pytest.mark.parametrize("places", [[0], [1, 40], [70], [5, 6, 7]])
@pytest.mark.parametrize("kind", ["csv", "parquet"])
def test_blocks_equal_the_row_path(tmp_path, monkeypatch, kind, places):
    path = tmp_path / f"t.{kind}"
    (write_csv if kind == "csv" else write_parquet)(path, capture(places))
    fast, slow = frames(path, monkeypatch, workers=1)
    assert fast == slow
    assert "no partner" in fast[1] and "unknown _operation_type_" in fast[1]


@pytest.mark.parametrize("kind", ["csv", "parquet"])
def test_blocks_equal_the_row_path_with_the_dialect_given(tmp_path, monkeypatch, kind):
    path = tmp_path / f"t.{kind}"
    (write_csv if kind == "csv" else write_parquet)(path, capture([3, 50]))
    fast, slow = frames(path, monkeypatch, dialect="datahub_tuple")
    assert fast == slow


def test_parquet_typed_values_and_missing_columns(tmp_path, monkeypatch):
    rows = capture([2, 30])
    count = len(rows)
    path = tmp_path / "t.parquet"
    names = [n for n in NAMES if n not in ("_before_image_", "_source_table_")]
    keep = [NAMES.index(n) for n in names]
    write_parquet(path, [[row[i] for i in keep] for row in rows], names,
                  amount=pa.array([Decimal("1.10"), None] * (count // 2) + [Decimal("3")] * (count % 2),
                                  pa.decimal128(20, 2)),
                  blob=pa.array([b"\x00\xff", None] * (count // 2) + [b""] * (count % 2)),
                  big=pa.array([2**64 - 1, 0] * (count // 2) + [1] * (count % 2), pa.uint64()))
    fast, slow = frames(path, monkeypatch, workers=1)
    assert fast == slow
    assert base64.b64encode(b"\x00\xff").decode() in fast[0]


def test_csv_odd_lines_equal_the_row_path(tmp_path, monkeypatch):
    path = tmp_path / "t.csv"
    write_csv(path, capture([4]))
    text = path.read_bytes().split(b"\n")
    text[3] += b",extra"  # more fields than the header
    text[5] = text[5].split(b",", 2)[0]  # a short row
    text[1] = text[1].replace(b"n", b"\xff", 1)  # invalid UTF-8
    text.insert(9, b"")  # a blank line
    path.write_bytes(b"\n".join(text))
    fast, slow = frames(path, monkeypatch, workers=1)
    assert fast == slow
    assert "more fields than the header" in fast[1] and "invalid UTF-8" in fast[1]


def test_csv_blocks_give_the_messages_of_csv_messages():
    data = b'a,b\n1,\n\n"x\ny",2\n3,4,5\n\xff,6\n7\n'
    expected = [(m.offset, m.line, m.value, m.error, m.raw) for m in csv_messages(io.BytesIO(data), "f", ",")]
    got = []
    for block in csv_blocks(io.BytesIO(data), "f", ","):
        assert isinstance(block, RowBlock)
        got.extend((m.offset, m.line, m.value, m.error, m.raw) for m in
                   (block.message(i, "f") for i in range(block.count)))
    assert got == expected


@pytest.mark.parametrize("kind", ["csv", "parquet"])
def test_file_pieces_give_the_messages_of_file_messages(tmp_path, kind):
    path = tmp_path / f"t.{kind}"
    (write_csv if kind == "csv" else write_parquet)(path, capture([0, 9]))
    expected = [(m.offset, m.line, m.value) for m in file_messages(str(path))]
    got = [(m.offset, m.line, m.value) for piece in file_pieces(str(path), kind)
           for m in (piece.message(i, str(path)) for i in range(piece.count))]
    assert got == expected


def test_damaged_csv_keeps_the_rows_before(tmp_path, monkeypatch):
    path = tmp_path / "t.csv"
    write_csv(path, capture([]))
    path.write_bytes(path.read_bytes() + b'1,"unclosed\n')
    fast, slow = frames(path, monkeypatch, workers=1)
    assert fast == slow


def half(seq: str, which: str, value: int = 1) -> list:
    """One update half of ``shop.items`` (``which``: "before" or "after")."""
    return [value, f"h{value}", 1.0, None, seq, "U", 1700000000000 + value, "shop.items",
            *(("Y", "N") if which == "before" else ("N", "Y"))]


#: Update halves the decoder may pair in a block and the ones it must leave to the sink's pairer: adjacent
#: halves whose identity waits (one came before, alone), an after half first, two befores then two afters,
#: halves split by a row decoded alone and by a block's end.
HALVES = [half("500", "before", 1), *capture([], 4), half("500", "before", 2), half("500", "after", 3),
          half("501", "after", 4), half("501", "before", 5),
          half("502", "before", 6), half("502", "before", 7), half("502", "after", 8), half("502", "after", 9),
          half("503", "before", 10), ODD[0], half("503", "after", 11),
          half("504", "before", 12), half("504", "after", 13), *capture([], 3), half("505", "before", 14),
          half("505", "after", 15), half("505", "after", 16)]


@pytest.mark.parametrize("options", [{"workers": 1}, {"workers": 2}, {"workers": 1, "chunksize": 5}])
@pytest.mark.parametrize("block", [7, 16_384])
@pytest.mark.parametrize("kind", ["csv", "parquet"])
def test_halves_paired_in_a_block_equal_the_sinks_pairing(tmp_path, monkeypatch, kind, block, options):
    import cdckit.io.tables as tables
    import cdckit.reading.decoding as decoding

    monkeypatch.setattr(tables, "_CSV_BLOCK_ROWS", block)
    path = tmp_path / f"t.{kind}"
    (write_csv if kind == "csv" else write_parquet)(path, HALVES * 3)

    def read():
        got = cdckit.read(str(path), **options)
        return [(events.to_csv(), cdckit.quarantine(events).to_csv(), repr(events.attrs.get("report")))
                for events in (got if "chunksize" in options else [got])]
    fast = read()
    with monkeypatch.context() as patched:
        patched.setattr(decoding, "pair_adjacent", lambda results, sink, dialect: None)
        unpaired = read()
    assert fast == unpaired
    assert any("no partner" in quarantined for _, quarantined, _ in fast)


def test_adjacent_halves_are_paired_in_the_block(tmp_path, monkeypatch):
    from cdckit.reading.read_job import ReadJob

    path = tmp_path / "t.parquet"
    write_parquet(path, capture([], 60))
    offered = []
    monkeypatch.setattr(ReadJob, "half", lambda self, msg, dialect, event: offered.append(event))
    events = cdckit.read(str(path), workers=1)
    assert not offered and (events["op"] == "update").sum() == 6


PLAIN_CSV = b"a,b,c\n" + b"".join(b"%d,x%d,\n" % (i, i) for i in range(40))
#: CSV texts the csv module and pyarrow may read differently: each must be read as the csv module reads it.
UNUSUAL_CSV = [
    PLAIN_CSV[:-1],  # no line end at the end
    b"\xef\xbb\xbf" + PLAIN_CSV,  # a byte order mark
    PLAIN_CSV + b'7,"x\ny",z\n' + PLAIN_CSV[6:],  # a line end in a quoted cell, late
    PLAIN_CSV + b'7,"x""y",z\n8,a"b,c\n' + PLAIN_CSV[6:],  # quotes
    PLAIN_CSV.replace(b"\n", b"\r\n"),
    PLAIN_CSV + b"\n\n" + PLAIN_CSV[6:],  # blank lines
    PLAIN_CSV + b"1,2\n1,2,3,4\n" + PLAIN_CSV[6:],  # short and long rows
    PLAIN_CSV + b"\xff,1,2\n\xed\xa0\x80,1,2\n\xc3\xa9,\xe2\x82\xac,3\n" + PLAIN_CSV[6:],  # invalid, valid UTF-8
    PLAIN_CSV + b"1,\x00,2\n" + PLAIN_CSV[6:],
    b"a,b,c\n", b"a,b,c", b"", b'"a",b,c\n1,2,3\n', b"a,a,c\n1,2,3\n",
]


def csv_rows(data: bytes, delimiter: str = ",", **options) -> list:
    return [(m.offset, m.line, m.value, m.error, m.raw) for block in csv_blocks(io.BytesIO(data), "f", delimiter,
                                                                                **options)
            for m in (block.message(i, "f") for i in range(block.count))]


@pytest.mark.parametrize("piece", [16, 1 << 20])
@pytest.mark.parametrize("data", [PLAIN_CSV, PLAIN_CSV.replace(b",", b"\t"), *UNUSUAL_CSV])
def test_csv_blocks_read_as_the_csv_module_reads(monkeypatch, data, piece):
    import cdckit.io.tables as tables

    monkeypatch.setattr(tables, "_CSV_PIECE", piece)
    delimiter = "\t" if b"\t" in data else ","
    expected = [(m.offset, m.line, m.value, m.error, m.raw) for m in csv_messages(io.BytesIO(data), "f", delimiter)]
    assert csv_rows(data, delimiter) == expected
    body = data.split(b"\n", 1)[1] if b"\n" in data and not data.startswith(b"\xef") else None
    if body is not None:  # a range: the header given, the first line's number too
        names = data.split(b"\n", 1)[0].decode().split(delimiter)
        expected = [(m.offset, m.line, m.value, m.error, m.raw)
                    for m in csv_messages(io.BytesIO(body), "f", delimiter, names, 5, 9)]
        assert csv_rows(body, delimiter, fieldnames=names, first_offset=5, first_line=9) == expected


def test_plain_csv_is_read_by_pyarrow_and_unusual_csv_by_the_csv_module(monkeypatch):
    import cdckit.io.tables as tables

    parsed = []
    real = tables._csv_parsed
    monkeypatch.setattr(tables, "_csv_parsed", lambda stream, *args: parsed.append(1) or real(stream, *args))
    csv_rows(PLAIN_CSV)
    assert not parsed
    csv_rows(UNUSUAL_CSV[2])
    assert parsed
