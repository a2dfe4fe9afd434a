"""Where a new analyst is stuck, the kit says why and what to pass: a key asked of a capture that carries none,
console-consumer lines printed with another key separator, an empty input, a misspelt ``--to``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import cdckit
from cdckit.cli import main
from cdckit.errors import KeylessTableError
from cdckit.io.console import guessed_separator


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def debezium_value(ident: int) -> dict:
    """A Debezium MySQL value (no schema, no Kafka key): its row's key is nowhere in the capture."""
    source = {"connector": "mysql", "db": "shop", "table": "items", "ts_ms": 1_700_000_000_000}
    return {"before": None, "after": {"id": ident, "name": f"n{ident}"}, "source": source, "op": "c", "ts_ms": 1}


@pytest.fixture
def values_only(tmp_path: Path) -> Path:
    path = tmp_path / "values.jsonl"
    path.write_text("".join(json.dumps(debezium_value(i)) + "\n" for i in range(4)))
    return path


def test_a_key_asked_of_a_table_without_one_says_so_and_how_to_give_one(capsys, values_only):
    code, out, err = run(capsys, "read", values_only, "--key", "1")
    assert code == 0 and "(no events)" in out
    assert "--key matches nothing: shop.items has no key" in err
    assert "--keys shop.items=COL" in err and "cdckit keys FILE" in err
    # given the key, the same filter finds the row, and nothing more is said
    code, out, err = run(capsys, "read", values_only, "--keys", "shop.items=id", "--key", "1")
    assert code == 0 and '{"id":1,' in out and "matches nothing" not in err


def test_a_key_that_is_not_there_in_a_keyed_capture_is_no_hint(capsys):
    code, out, err = run(capsys, "read", cdckit.samples.path("canal/shop"), "--key", "999999")
    assert "(no events)" in out and "note" not in err


def test_select_by_key_on_a_keyless_capture_raises_with_the_way_out(values_only):
    events = cdckit.read(values_only)
    with pytest.raises(KeylessTableError, match=r"key= matches nothing: shop.items has no key") as raised:
        cdckit.select(events, key=1)
    assert "cdckit.infer_keys(events)" in str(raised.value)
    assert len(cdckit.select(cdckit.with_keys(events, {"items": "id"}), key=1)) == 1


@pytest.mark.parametrize("separator", ["^", " | ", "::", ";"])
def test_lines_printed_with_another_key_separator_name_it(capsys, tmp_path, separator):
    path = tmp_path / "printed.txt"
    lines = [f"{json.dumps({'id': i})}{separator}{json.dumps(debezium_value(i))}" for i in range(3)]
    path.write_text("\n".join(lines) + "\n")
    assert guessed_separator(lines[0].encode()) == separator
    code, out, err = run(capsys, "read", path)
    assert f"--key-separator {separator!r}" in err, err
    code, out, err = run(capsys, "read", path, "--key-separator", separator)
    assert code == 0 and out.count("shop.items") == 3, err


def test_a_text_key_and_another_separator_are_named_by_detect_too(capsys, tmp_path):
    path = tmp_path / "printed.txt"
    path.write_text(f"1004 | {json.dumps(debezium_value(1004))}\n")
    code, out, err = run(capsys, "detect", path)
    assert code != 0 and "--key-separator ' | '" in err and "key_separator=" not in err


def test_guessing_a_separator_leaves_other_lines_alone():
    assert guessed_separator(b'{"a": 1}') is None  # JSON itself
    assert guessed_separator(b"table public.t: INSERT: id[integer]:1") is None  # a test_decoding line
    assert guessed_separator(b'{"a": 1} and then some text') is None
    assert guessed_separator(b'CreateTime:1|Partition:0|{"id":1}|{"op":"c"}') == "|"


def test_an_empty_input_is_said_to_hold_nothing(capsys, tmp_path):
    path = tmp_path / "empty.jsonl"
    path.write_bytes(b"")
    code, out, err = run(capsys, "read", path)
    assert code == 0 and "holds no message" in err


def test_a_misspelt_target_dialect_gets_a_suggestion(capsys, tmp_path):
    code, out, err = run(capsys, "convert", cdckit.samples.path("canal/shop"), "--to", "debezum", "-o", tmp_path / "x")
    assert code == 2 and "did you mean debezium?" in err
