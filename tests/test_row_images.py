"""The row-image rules of :mod:`cdckit.row_images`, each held once: their edge cases, and that no other module of
cdckit writes its own copy."""

from __future__ import annotations

import ast
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import cdckit
from cdckit.analysis.image_codes import ImageCodes
from cdckit.keys import key_texts
from cdckit.row_images import canonical_text, describes, in_key_order, key_of, key_order, key_permutation, parse_image

PACKAGE = Path(__file__).resolve().parent.parent / "cdckit"

#: The functions of the row-image rules, and the names the copies they replaced had.
RULES = {"parse_image", "key_of", "canonical_text", "describes", "key_order", "in_key_order", "key_permutation"}
OLD_COPIES = {"parse_image_text", "_key_of", "_key_from_image"}


# ---------------------------------------------------------------- parsing an image


@pytest.mark.parametrize("missing", [None, float("nan"), np.nan, np.float64("nan"), pd.NA, pd.NaT, "null", b"null"])
@pytest.mark.parametrize("keep_other", [False, True])
def test_every_kind_of_missing_value_is_no_image(missing, keep_other):
    assert parse_image(missing, keep_other=keep_other) is None


def test_a_json_null_image_is_the_same_as_an_absent_one():
    # JSON's null says there is no row, as a missing cell does: an analyst comparing two captures sees no
    # difference between them (the frame never writes the text "null"; values.image(None) is None)
    assert parse_image("null") is parse_image(None) is None
    assert parse_image(" null ", keep_other=True) is None


def test_an_image_already_parsed_comes_back_as_it_is():
    row = {"id": 1}
    assert parse_image(row) is row and parse_image(row, keep_other=True) is row


def test_an_image_is_parsed_exactly_from_text_or_bytes():
    assert parse_image('{"id": 12345678901234567890, "x": 0.10000000000000000001}') == {
        "id": "12345678901234567890",
        "x": "0.10000000000000000001",
    }
    assert parse_image(b'{"id": 9007199254740993}') == {"id": 9007199254740993}


@pytest.mark.parametrize("text, parsed", [("[1, 2]", [1, 2]), ("5", 5), ('"x"', "x"), ("true", True), ("{}", {})])
def test_json_that_is_no_object_is_no_row_unless_kept(text, parsed):
    assert parse_image(text) == (parsed if isinstance(parsed, dict) else None)
    assert parse_image(text, keep_other=True) == parsed


@pytest.mark.parametrize("text", ["", "   ", "{", "oops", '{"id": 1'])
def test_a_text_that_is_not_json_raises_unless_kept(text):
    # an empty text is no JSON either: the frame is damaged, and replay must not take it for an absent image
    with pytest.raises(ValueError):
        parse_image(text)
    assert parse_image(text, keep_other=True) == text


# ---------------------------------------------------------------- the key of an image


def test_the_key_of_an_image_follows_the_key_columns_order():
    assert key_of({"b": "x", "a": 1, "c": 2}, ["a", "b"]) == '[1,"x"]'
    assert key_of({"b": "x", "a": 1, "c": 2}, ["b", "a"]) == '["x",1]'


def test_an_image_lacking_a_key_column_has_no_key():
    assert key_of({"id": 1}, ["id", "region"]) is None
    assert key_of({}, ["id"]) is None


def test_a_null_key_value_is_part_of_the_key():
    assert key_of({"id": None, "n": 1}, ["id"]) == "[null]"
    assert key_of({"id": None, "n": 1}, ["n", "id"]) == "[1,null]"


@pytest.mark.parametrize("columns", [None, [], (), np.array([], dtype=object)])
def test_no_key_columns_no_key(columns):
    assert key_of({"id": 1}, columns) is None


def test_key_columns_read_back_from_parquet_as_an_array_name_the_key():
    assert key_of({"id": 1, "r": "eu"}, np.array(["r", "id"], dtype=object)) == '["eu",1]'


@pytest.mark.parametrize("row", [None, [1], "id", 5])
def test_no_row_or_a_row_that_is_no_object_has_no_key(row):
    assert key_of(row, ["id"]) is None


def test_key_numbers_stay_exact():
    assert key_of(parse_image('{"id": 9007199254740993}'), ["id"]) == "[9007199254740993]"
    assert key_of({"id": 2**70}, ["id"]) == '["1180591620717411303424"]'  # as values.loads keeps it
    assert key_of(parse_image('{"id": 1180591620717411303424}'), ["id"]) == '["1180591620717411303424"]'
    assert key_of(parse_image('{"id": 1.50}'), ["id"]) == "[1.5]"


@pytest.mark.parametrize("sample", ["canal/shop", "debezium/shop"])
def test_the_key_of_each_image_is_the_frames_key(sample):
    events = cdckit.read(cdckit.samples.path(sample))
    keyed = events[events["key"].notna() & events["op"].isin(["insert", "update", "delete", "read"])]
    assert len(keyed)
    for op, key, columns, before, after in zip(
        keyed["op"], keyed["key"], keyed["key_columns"], keyed["before"], keyed["after"]
    ):
        assert key_of(parse_image(before if op == "delete" else after), columns) == key


def test_a_key_is_not_read_from_an_image_that_is_no_object():
    # the one-pass reading of keys used to hand such an image to values.key_of, which raised TypeError
    assert key_texts(["[1]", "5", '{"id":1}', None], ["id"]) == [None, None, "[1]", None]


# ---------------------------------------------------------------- rows and key order


def test_canonical_text_sorts_columns_and_keeps_numbers():
    assert canonical_text({"b": 1, "a": None}) == canonical_text({"a": None, "b": 1}) == '{"a":null,"b":1}'


def test_describes_reads_a_null_as_a_missing_column_and_a_missing_column_as_nothing():
    assert describes({"id": 1, "gone": None}, {"id": 1}) and describes({"id": 1}, {"id": 1, "b": 2})
    assert not describes({"id": 1, "b": None}, {"id": 1, "b": 2}) and not describes({"id": 1, "x": 3}, {"id": 1})


def test_numbers_beyond_2_to_53_are_in_key_order():
    keys = ["[9007199254740993]", "[9007199254740992]", "[9223372036854775807]", '["a"]', "[null]", "[-1]"]
    keys += ["[18446744073709551616]", "[9007199254740992.5]", "[1e400]", "[123456789012345678901234567890]"]
    expected = [
        "[-1]",
        "[9007199254740992]",
        "[9007199254740992.5]",
        "[9007199254740993]",
        "[9223372036854775807]",
        "[18446744073709551616]",
        "[123456789012345678901234567890]",
        "[1e400]",
        '["a"]',
        "[null]",
    ]
    assert sorted(keys, key=key_order) == expected
    assert in_key_order(keys) == expected
    assert [keys[i] for i in key_permutation(keys).tolist()] == expected


def test_key_permutation_of_long_whole_numbers_is_exact():
    keys = ["[900719925474099312]", "[900719925474099311]", "[-900719925474099313]"]
    assert key_permutation(keys).tolist() == [2, 1, 0]
    assert key_permutation([]).tolist() == []


def test_a_text_that_is_no_json_sorts_after_the_keys():
    assert in_key_order(["oops", "[1]", "[null]"]) == ["[1]", "[null]", "oops"]


# ---------------------------------------------------------------- where the copies disagreed


def test_key_inference_codes_tell_apart_numbers_a_double_cannot():
    # ImageCodes parsed with orjson where Arrow could not read the images: two decimals a double rounds alike
    # shared a code, so a column of distinct values looked like one with repeats
    changes = pd.DataFrame(
        {
            "op": ["insert", "insert"],
            "seq": ["1", "2"],
            "txn_id": [None, None],
            "before": [None, None],
            "after": ['{"id":0.10000000000000000001}', '{"id":0.10000000000000000002}'],
        }
    )
    images = ImageCodes(changes)
    assert images.codes("id").tolist() == [-1, -1, 0, 1]
    assert images.image(1, after=True) == {"id": "0.10000000000000000002"}


def test_compare_takes_a_nan_image_cell_for_no_image():
    # compare wrote a NaN before image (a column pandas made float) as the text "nan": every insert differed
    events = cdckit.read(cdckit.samples.path("canal/shop"))
    other = events.copy()
    other["before"] = other["before"].astype(object).where(other["before"].notna(), np.nan)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert cdckit.compare(events, other).ok


def test_compare_still_tells_apart_images_that_are_no_objects():
    events = cdckit.read(cdckit.samples.path("canal/shop"))
    first = events.index[events["op"] == "insert"][0]
    a, b = events.copy(), events.copy()
    a.loc[first, "after"], b.loc[first, "after"] = "[1]", "[2]"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert not cdckit.compare(a, b).ok


# ---------------------------------------------------------------- one home


def _defined_functions() -> list[tuple[str, str]]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                found.append((str(path.relative_to(PACKAGE)), node.name))
    return found


def test_the_row_image_rules_are_defined_only_in_row_images():
    elsewhere = [
        (path, name) for path, name in _defined_functions() if name in RULES | OLD_COPIES and path != "row_images.py"
    ]
    assert elsewhere == []
    here = {name for path, name in _defined_functions() if path == "row_images.py"}
    assert RULES <= here


def test_no_module_takes_the_rules_from_anywhere_but_row_images():
    relayed = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").rpartition(".")[2] != "row_images":
                relayed += [(str(path), alias.name) for alias in node.names if alias.name in RULES]
    assert relayed == []


def test_the_ground_floor_of_row_images_imports_no_package():
    tree = ast.parse((PACKAGE / "row_images.py").read_text())
    imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.level}
    names = {alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) for alias in node.names}
    assert imported <= {None} and names & {"dialects", "analysis", "io", "reading", "export", "viz", "spark"} == set()
