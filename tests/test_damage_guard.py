"""One damage guard for every reader of cdckit.io.files: what it keeps and what its one entry says."""

from __future__ import annotations

from cdckit.io import files


def _failing_after_first_block(real):
    def blocks(*args, **kwargs):
        for block in real(*args, **kwargs):
            yield block
            raise OSError("the disk went away")
    return blocks


def test_damage_in_a_range_counts_the_messages_of_the_file_before_it(tmp_path, monkeypatch):
    """A range of a file (a worker's) that fails says, as the whole file's read does, how many messages of the
    file come before the damage: those of the earlier ranges too."""
    path = tmp_path / "x.jsonl"
    path.write_bytes(b"".join(b'{"a": %d}\n' % i for i in range(6)))
    monkeypatch.setattr(files, "jsonl_blocks", _failing_after_first_block(files.jsonl_blocks))
    start = len(b'{"a": 0}\n') * 3
    pieces = list(files.file_pieces(str(path), "jsonl", start, path.stat().st_size, first_offset=3, first_line=4))
    kept = sum(len(p.lines) for p in pieces[:-1])
    entry = pieces[-1]
    assert kept == 3 and entry.offset == 6
    assert entry.error.startswith("damaged file: OSError: the disk went away")
    assert entry.error.endswith("the 6 message(s) before the damage are kept")
    whole = list(files.file_pieces(str(path), "jsonl"))  # the whole file (one block), failing after the same message
    assert (whole[-1].offset, whole[-1].error) == (entry.offset, entry.error)


def test_damage_while_reading_a_table_file_keeps_every_row_before_it(tmp_path, monkeypatch):
    path = tmp_path / "x.csv"
    path.write_text("a,b\n1,2\n3,4\n")
    monkeypatch.setattr(files, "csv_blocks", _failing_after_first_block(files.csv_blocks))
    pieces = list(files.file_pieces(str(path), "csv"))
    assert pieces[0].count == 2
    assert pieces[-1].offset == 2 and "OSError: the disk went away" in pieces[-1].error
    assert pieces[-1].error.endswith("the 2 message(s) before the damage are kept")
