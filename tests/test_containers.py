"""Containers: every layout a capture comes in becomes the right messages."""

from __future__ import annotations

import gzip
import json
from collections import namedtuple

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from cdckit import io as cdckit_io
from cdckit.io import iter_sources, json_values, sniff_container


def messages(source, **options):
    return [m for _, msgs in iter_sources(source, **options) for m in msgs]


def test_json_lines_with_blank_lines_crlf_and_bom(tmp_path):
    path = tmp_path / "x.jsonl"
    path.write_bytes(b'\xef\xbb\xbf{"a": 1}\r\n\r\n{"a": 2}\r\n   \n{"a": 3}')
    got = messages(path)
    assert [(m.offset, m.line, m.value) for m in got] == [(0, 1, {"a": 1}), (1, 3, {"a": 2}), (2, 5, {"a": 3})]


def test_json_array_streams_elements_across_block_boundaries(tmp_path, monkeypatch):
    monkeypatch.setattr(json_values, "BLOCK", 7)  # force many refills mid-value
    items = [{"id": i, "text": "a \"quoted\" ] } [ { value", "n": None} for i in range(20)]
    path = tmp_path / "x.json"
    path.write_text(json.dumps(items, indent=2))
    got = messages(path)
    assert [m.value for m in got] == items
    assert all(m.error is None for m in got)
    assert got[1].line == 2 + 5  # '[' line, then 5 lines per pretty element


def test_concatenated_pretty_json_resyncs_after_a_truncated_value(tmp_path):
    text = '{\n  "a": 1\n}\n{\n  "a": {"b": 2\n{\n  "a": 3\n}\n{\n  "a": 4\n'
    got = messages(text)
    assert [m.value for m in got] == [{"a": 1}, None, {"a": 3}, None]
    assert got[1].error.startswith("truncated JSON") and got[1].raw == b'{\n  "a": {"b": 2\n'
    assert got[3].error.startswith("truncated JSON")
    assert [m.line for m in got] == [1, 4, 6, 9]


def test_json_scalars_between_values():
    got = messages('{"a": 1}\n"default"\nnull\n')
    assert [m.value for m in got] == [{"a": 1}, "default", None]


def test_invalid_utf8_and_bad_json_become_message_errors():
    got = messages(b'{"a": "\xff"}\n{"a": 1,}\n{"a": 2}\n')
    assert got[0].error.startswith("invalid UTF-8")
    assert got[1].error.startswith("invalid JSON")
    assert got[2].value == {"a": 2}
    assert got[0].raw_text() == '{"a": "\\xff"}'


def test_exact_numbers_are_kept():
    got = messages('{"big": 123456789012345678901234567890, "ns": 1590315269000.123456789, "f": 0.5}\n')
    assert got[0].value == {"big": "123456789012345678901234567890", "ns": "1590315269000.123456789", "f": 0.5}


def test_sniffing():
    assert sniff_container(b'{"a": 1}\n{"a": 2}\n') == "jsonl"
    assert sniff_container(b'{\n  "a": 1\n}\n') == "json"
    assert sniff_container(b"[\n") == "json"
    assert sniff_container(b"src=css\xfens=X\xfe\n") == "text"
    assert sniff_container(b"PAR1....") == "parquet"


def test_text_lines_latin1_and_utf8(tmp_path):
    latin = tmp_path / "latin.txt"
    latin.write_bytes("src=cssþns=Xþdata=ýname=Renéýþ\n".encode("latin-1"))
    utf8 = tmp_path / "utf8.txt"
    utf8.write_bytes("src=cssþns=Xþdata=ýname=Renéýþ\n".encode())
    assert messages(latin)[0].value == messages(utf8)[0].value == "src=cssþns=Xþdata=ýname=Renéýþ"


def test_gzip_directories_and_globs(tmp_path):
    (tmp_path / "d").mkdir()
    with gzip.open(tmp_path / "d" / "a.jsonl.gz", "wt") as out:
        out.write('{"a": 1}\n')
    (tmp_path / "d" / "b.jsonl").write_text('{"b": 2}\n')
    (tmp_path / "d" / ".hidden").write_text("ignored\n")
    names = [name for name, msgs in iter_sources(tmp_path / "d") for _ in msgs]
    assert [n.rsplit("/", 1)[-1] for n in names] == ["a.jsonl.gz", "b.jsonl"]
    assert [m.value for m in messages(str(tmp_path / "d" / "*.jsonl*"))] == [{"a": 1}, {"b": 2}]
    with pytest.raises(FileNotFoundError, match="no files match"):
        messages(str(tmp_path / "nothing*.jsonl"))
    with pytest.raises(FileNotFoundError, match="no such file"):
        messages(str(tmp_path / "missing.jsonl"))


def test_csv_rows_empty_is_null_and_extra_fields_are_errors(tmp_path):
    path = tmp_path / "rows.csv"
    path.write_text('id,name\n1,"a, b"\n2,\n3,x,extra\n')
    got = messages(path)
    assert [m.value for m in got[:2]] == [{"id": "1", "name": "a, b"}, {"id": "2", "name": None}]
    assert "more fields than the header" in got[2].error


def test_parquet_rows(tmp_path):
    path = tmp_path / "rows.parquet"
    pq.write_table(pa.table({"id": [1, 2], "name": ["a", None]}), path)
    assert [m.value for m in messages(path)] == [{"id": 1, "name": "a"}, {"id": 2, "name": None}]


def test_a_parquet_file_under_another_name_is_read_as_parquet(tmp_path):
    # its content says Parquet (as file_container, workers and Spark already judge it), whatever its suffix
    path = tmp_path / "rows.jsonl"
    pq.write_table(pa.table({"id": [1, 2], "name": ["a", None]}), path)
    assert [m.value for m in messages(path)] == [{"id": 1, "name": "a"}, {"id": 2, "name": None}]


def test_kcat_records_are_unwrapped():
    line = json.dumps({"topic": "t", "partition": 3, "offset": 99, "tstype": "create", "ts": 1, "broker": 0,
                       "key": json.dumps({"id": 1}), "payload": json.dumps({"op": "c"})})
    msg = messages(line + "\n")[0]
    assert (msg.value, msg.key, msg.partition, msg.offset) == ({"op": "c"}, {"id": 1}, 3, 99)
    assert msg.raw == line.encode()


def test_kafka_record_objects_and_null_values():
    Rec = namedtuple("Rec", "key value offset partition")
    got = messages([Rec(b'{"id": 1}', b'{"op": "c"}', 5, 1), Rec(b'{"id": 1}', None, 6, 1)])
    assert [(m.value, m.key, m.offset, m.partition) for m in got] == [
        ({"op": "c"}, {"id": 1}, 5, 1), (None, {"id": 1}, 6, 1)]


def test_payloads_and_iterables():
    assert messages(b'{"a": 1}')[0].value == {"a": 1}
    assert messages(gzip.compress(b'{"a": 1}\n'))[0].value == {"a": 1}
    assert [m.value for m in messages([{"a": 1}, '{"a": 2}', "src=xþop=c"])] == [{"a": 1}, {"a": 2}, "src=xþop=c"]
    with pytest.raises(TypeError, match="cannot read a int"):
        messages(42)


def test_written_rows_keep_every_column_whatever_row_has_it(tmp_path):
    rows = [{"id": 1, "a": "x"}, {"id": 2, "b": 2.5}]
    for name, layout in (("rows.parquet", "parquet"), ("rows.csv", "csv")):
        cdckit_io.write_messages(rows, tmp_path / name, layout)
        got = [m.value for m in messages(tmp_path / name)]
        text = layout == "csv"
        assert got == [{"id": "1" if text else 1, "a": "x", "b": None},
                       {"id": "2" if text else 2, "a": None, "b": "2.5" if text else 2.5}], layout


def test_line_ranges_give_the_offsets_and_line_numbers_of_the_whole_file(tmp_path):
    import random

    from cdckit.io import jsonl_blocks, line_ranges, open_range

    rng = random.Random(3)
    path = tmp_path / "f.jsonl"
    for trial in range(150):
        lines = []
        for i in range(rng.randint(0, 60)):
            kind = rng.random()
            lines.append(b"" if kind < 0.1 else b"   " if kind < 0.15 else b"\r" if kind < 0.18
                         else b'{"a": %d}' % i + b"x" * rng.randint(0, 30))
        path.write_bytes(b"\n".join(lines) + (b"\n" if rng.random() < 0.5 else b""))
        whole = [(m.offset, m.line, m.raw) for _, ms in iter_sources(path, container="jsonl") for m in ms]
        for size, per_range in ((7, None), (20, None), (64, None), (1000, None), (10**9, 3)):
            pieces = []
            for start, end, first_offset, first_line in line_ranges(str(path), size, per_range):
                with open_range(str(path), start, end) as stream:
                    piece = [(block.first_offset + i, block.line_of(i), raw.strip())
                             for block in jsonl_blocks(stream, first_offset, first_line)
                             for i, raw in enumerate(block.lines)]
                assert per_range is None or len(piece) <= per_range
                pieces += piece
            assert pieces == whole, (trial, size)


def random_json_values_file(rng) -> bytes:
    """A JSON array or JSON values one after another, pretty or compact, with the damage real files have:
    truncated values, scalars and text between values, escapes and brackets in strings, a second array."""
    def value(depth=0):
        kind = rng.random()
        if depth < 3 and kind < 0.3:
            return {rng.choice(["a", "b}", 'c\\"', "[d"]): value(depth + 1) for _ in range(rng.randint(0, 3))}
        if depth < 3 and kind < 0.45:
            return [value(depth + 1) for _ in range(rng.randint(0, 3))]
        return rng.choice([1, -2.5, None, True, "x", "\\", "\\\\\"", "{", "]", "a\nb", "é"])
    texts = []
    for _ in range(rng.randint(1, 30)):
        element = {"id": rng.randint(0, 99), "v": value()}
        text = json.dumps(element, indent=rng.choice([None, 1, 2]), ensure_ascii=rng.random() < 0.5)
        damage = rng.random()
        if damage < 0.08:
            text = text[: rng.randint(1, len(text))]  # truncated
        elif damage < 0.12:
            text = rng.choice(["7", '"s"', "nonsense", "[1, 2]", "]", "}", "{"])
        texts.append(text)
    glue = rng.choice([",\n", ", ", ",", "\n", "\n\n", " "])
    body = glue.join(texts)
    if rng.random() < 0.5:
        body = "[" + body + "]"
        if rng.random() < 0.2:
            body += "\n" + rng.choice(['{"after": 1}', "[{\"second\": 2}]", "trailing"])
    data = body.encode()
    return (b"\xef\xbb\xbf" + data) if rng.random() < 0.1 else data


@pytest.mark.parametrize("block", [5, 64, 1 << 20])
def test_objects_cut_many_at_once_are_the_messages_of_the_value_by_value_scan(tmp_path, monkeypatch, block):
    import random
    monkeypatch.setattr(json_values, "BLOCK", block)
    path = tmp_path / "x.json"
    fields = lambda m: (m.offset, m.line, m.raw, m.value, m.error, m.code)  # noqa: E731
    rng = random.Random(f"json-values-{block}")
    cut_many = 0
    for _ in range(150):
        path.write_bytes(random_json_values_file(rng))
        got = list(cdckit_io.file_messages(str(path), "json"))
        pieces = list(cdckit_io.file_pieces(str(path), "json"))
        cut_many += sum(isinstance(p, cdckit_io.LineBlock) for p in pieces)
        with monkeypatch.context() as scan_only:
            scan_only.setattr(json_values, "_whole_objects", lambda buf, pos, depth: ([], True))
            expected = list(cdckit_io.file_messages(str(path), "json"))
        assert [fields(m) for m in got] == [fields(m) for m in expected], path.read_bytes()[:500]
    assert cut_many > 100  # the blocks were taken, not just the one-by-one scan


def test_an_unknown_layout_is_refused_before_anything_is_written(tmp_path):
    with pytest.raises(ValueError, match="unknown layout 'xml'"):
        cdckit_io.write_messages([{"a": 1}], tmp_path / "x.xml", "xml")
    assert list(tmp_path.iterdir()) == []
