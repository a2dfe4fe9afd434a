"""Keys given once, used everywhere (issue 26 item 3): ``keys=`` on read, materialize, scd2, history, explore
and the report, ``--keys`` on every command that reads, the same rule on Spark, and the keyless finding (both
engines) and KeylessTableError saying how to find and give keys."""

from __future__ import annotations

import json
import re
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from comparable import row_texts
from hypothesis import example, given, settings
from hypothesis import strategies as st

import cdckit
from cdckit import samples
from cdckit.cli import EXIT_CODES, exit_codes, main
from cdckit.keys import key_texts, with_keys
from cdckit.row_images import key_of, parse_image

KEYED = "canal/shop"
KEYLESS_FILE = "pg_test_decoding/shop.txt"
KEYS = {"customers": "id", "order_items": ["order_id", "line_no"]}


def stripped(events: pd.DataFrame) -> pd.DataFrame:
    """``events`` as a capture that names no key (key and key_columns empty), attrs kept."""
    out = events.assign(key=pd.Series([None] * len(events), index=events.index, dtype=events["key"].dtype),
                        key_columns=pd.Series([None] * len(events), index=events.index, dtype=object))
    out.attrs = dict(events.attrs)
    return out


@pytest.fixture(scope="module")
def keyed():
    return cdckit.read(samples.path(KEYED))


@pytest.fixture(scope="module")
def keyless(keyed):
    return stripped(keyed)


def test_the_capture_is_keyless_without_keys(keyless):
    assert keyless["key"].isna().all()
    with pytest.raises(cdckit.KeylessTableError):
        cdckit.scd2(keyless)


def test_materialize_with_keys_is_the_keyed_state(keyed, keyless):
    want, got = cdckit.materialize(keyed), cdckit.materialize(keyless, keys=KEYS)
    assert list(got) == list(want) and got.keyless == [] and got.key_columns == want.key_columns
    for table in want:
        pd.testing.assert_frame_equal(got[table], want[table])
    pd.testing.assert_frame_equal(got.problems, want.problems)


def test_scd2_and_history_with_keys_are_the_keyed_ones(keyed, keyless):
    want, got = cdckit.scd2(keyed), cdckit.scd2(keyless, keys=KEYS)
    assert list(got) == list(want)
    for table in want:
        pd.testing.assert_frame_equal(got[table], want[table])
    for table, key in (("customers", 3), ("shop.order_items", [101, 1])):
        pd.testing.assert_frame_equal(cdckit.history(keyless, table, key, keys=KEYS), cdckit.history(keyed, table, key))


@pytest.mark.parametrize("dtype", ["arrow", "object"])
def test_with_keys_sets_the_given_tables_keys_and_keeps_the_others_in_the_key_columns_dtype(keyed, dtype):
    """Keys put together in Arrow (pandas' Arrow string dtype) or value by value (any other dtype): the given
    tables' keys read from their images, every other row's key as it was, the column's dtype kept."""
    frame = keyed.copy()
    others = frame["table"] != "customers"  # order_items: not given below
    assert others.any() and not others.all()
    kept = pd.Series([f"kept {i}" if o else None for i, o in enumerate(others)], index=frame.index)
    frame["key"] = kept.astype(pd.StringDtype("pyarrow") if dtype == "arrow" else object)
    got = with_keys(frame, {"customers": "id"})
    assert got["key"].dtype == frame["key"].dtype
    assert got["key"][others].tolist() == kept[others].tolist()
    assert got["key"][~others].tolist() == keyed["key"][~others].tolist()


def test_with_keys_reads_interleaved_tables_over_several_scan_batches_in_their_rows_order():
    """Two tables' rows interleaved over more rows than one scan batch (16,384): each row gets its own key."""
    rng = np.random.default_rng(7)
    ids = rng.permutation(40_000)
    lines = "\n".join(
        f"table public.{'ab'[i % 2]}: {'DELETE' if i % 5 == 0 else 'INSERT'}: id[integer]:{n} v[text]:'x{n}'"
        for i, n in enumerate(ids)
    )
    events = cdckit.read("BEGIN 1\n" + lines + "\nCOMMIT 1", dialect="pg_test_decoding")
    got = with_keys(events, {"a": "id", "b": "id"})
    rows = got[got["op"].isin(["insert", "delete"])]  # not the BEGIN and COMMIT
    assert rows["table"].tolist()[:2] == ["a", "b"] and len(rows) == len(ids)
    assert rows["key"].tolist() == [f"[{n}]" for n in ids]
    assert got["key"].isna().sum() == 2


def test_read_with_keys_keeps_quarantine_report_and_capture():
    path = samples.path(KEYLESS_FILE)
    plain = cdckit.read(path)
    events = cdckit.read(path, keys=KEYS)
    assert plain["key"].isna().all() and events["key"].notna().sum() > 0
    assert events.attrs["report"] == plain.attrs["report"]
    assert len(cdckit.quarantine(events)) == len(cdckit.quarantine(plain))
    capture = cdckit.read(path, keys=KEYS, capture=True)
    assert capture.events["key"].tolist() == events["key"].tolist() and capture.report == plain.attrs["report"]
    chunks = list(cdckit.read(path, keys=KEYS, chunksize=100))
    assert pd.concat(chunks, ignore_index=True)["key"].tolist() == events["key"].tolist()
    assert cdckit.scd2(events).keyless == []  # every later call sees the keys


def test_unknown_table_and_unknown_column_are_clear_errors(keyless):
    with pytest.raises(ValueError, match=r"'custmers', which is not in the events; tables: shop.customers, "
                                         r"shop.order_items"):
        cdckit.materialize(keyless, keys={"custmers": "id"})
    with pytest.raises(ValueError, match=r"no image of shop.customers holds .*'idd'.*its columns: id, name"):
        cdckit.history(keyless, "customers", 3, keys={"customers": "idd"})
    with pytest.raises(ValueError, match="names no key column"):
        cdckit.read(samples.path(KEYLESS_FILE), keys={"customers": []})


def test_explorer_key_box_and_row_history_work_with_keys(keyed, keyless):
    pytest.importorskip("ipywidgets")
    bare = cdckit.explore(keyless)
    bare.table.value, bare.key.value = "shop.customers", "3"
    assert len(bare.filtered()) == 0
    given, want = cdckit.explore(keyless, keys=KEYS), cdckit.explore(keyed)
    for ex in (given, want):
        ex.table.value, ex.key.value = "shop.customers", "3"
    assert given.filtered().index.tolist() == want.filtered().index.tolist() != []
    given.select(given.filtered().index[0])
    want.select(want.filtered().index[0])
    assert "history of shop.customers key [3]" in given.details.value and given.details.value == want.details.value


def test_report_with_keys_is_the_keyed_report(keyed, keyless):
    pytest.importorskip("plotly")
    from cdckit.viz.report import build_report

    def page(events, **options):
        made = re.compile(r"made \d{4}-\d\d-\d\d \d\d:\d\d UTC")
        return made.sub("", build_report(events, title="shop", sources=[], **options))

    assert page(keyless, keys=KEYS) == page(keyed)
    said = "change(s) of shop.customers without a key"
    assert said in page(keyless) and said not in page(keyless, keys=KEYS)


# --------------------------------------------------------------------------- what the warnings say


def test_keyless_finding_names_the_table_the_proposal_and_how_to_give_keys(keyless):
    found = cdckit.order_report(keyless)["keyless_tables"]
    detail = dict(zip(found["table"], found["detail"]))["shop.customers"]
    assert detail.startswith("161 change(s) of shop.customers without a key")
    for said in ("cdckit.infer_keys(events)", "cdckit keys FILE", "keys={'shop.customers': [...]}",
                 "--keys shop.customers=COL"):
        assert said in detail
    with pytest.raises(cdckit.KeylessTableError) as err:
        cdckit.history(keyless, "customers", 3)
    assert cdckit.errors.how_to_give_keys(["shop.customers"]) in str(err.value)


# --------------------------------------------------------------------------- the command line


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_state_and_scd2_with_keys(capsys, tmp_path):
    path = samples.path(KEYLESS_FILE)
    events = cdckit.read(path, keys=KEYS)
    code, _, err = run(capsys, "scd2", path)
    assert code == exit_codes.EXIT_INPUT and "--keys shop.customers=COL" in err and "cdckit keys FILE" in err
    for command, replay in (("state", cdckit.materialize), ("scd2", cdckit.scd2)):
        out = tmp_path / command
        code, _, err = run(capsys, command, path, "--keys", "customers=id", "--keys", "order_items=order_id,line_no",
                           "-o", out, "--to", "csv")
        assert code == 0, err
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no table left keyless
            want = replay(events)
        for table, frame in want.items():
            written = pd.read_csv(next(Path(out).rglob(f"*{table}*")))
            assert len(written) == len(frame) and list(written.columns) == list(frame.columns), (command, table)


def test_cli_read_filters_by_the_given_keys(capsys):
    path = samples.path(KEYLESS_FILE)
    code, out, _ = run(capsys, "read", path, "--keys", "customers=id", "--table", "customers", "--key", "3",
                       "--columns", "op,key", "--head", "0")
    want = cdckit.read(path, keys=KEYS)
    want = want[(want["table"] == "customers") & (want["key"] == "[3]")]
    code, out, _ = run(capsys, "read", path, "--keys", "customers=id", "--table", "customers", "--key", "3",
                       "--columns", "op,key", "--head", "100")
    assert code == 0 and len(want) > 0 and len(out.splitlines()) == len(want) + 1
    assert all(line.split()[1] == "[3]" for line in out.splitlines()[1:])


@pytest.mark.parametrize("given, said", [
    ("customers", "--keys customers: write TABLE=COL"),
    ("=id", "--keys =id: write TABLE=COL"),
    ("customers=id,", "--keys customers=id,: write TABLE=COL"),
    ("custmers=id", "'custmers', which is not in the events; tables: shop.customers, shop.order_items"),
])
def test_cli_bad_keys_are_usage_errors(capsys, given, said):
    code, _, err = run(capsys, "state", samples.path(KEYLESS_FILE), "--keys", given)
    assert code == exit_codes.EXIT_USAGE and said in err and "Traceback" not in err
    assert exit_codes.EXIT_USAGE in EXIT_CODES


def test_every_reading_command_takes_keys():
    from cdckit.cli.parser import build_parser

    parser = build_parser()
    for command in ("read", "convert", "report", "order", "state", "scd2", "schema", "compare", "reconcile"):
        argv = {"compare": ["a", "b"], "reconcile": ["a", "b", "--table", "t"],
                "convert": ["a", "-o", "x"], "report": ["a", "-o", "x"]}.get(command, ["a"])
        assert parser.parse_args([command, *argv, "--keys", "t=id"]).keys == ["t=id"], command


# --------------------------------------------------------------------------- Spark


TRICKY = """BEGIN 7
table public.t: INSERT: id[numeric]:12345678901234567890.5 name[text]:'é😀 ''q''' n[integer]:null k[integer]:1
table public.t: INSERT: id[numeric]:2.50 name[text]:'a' n[integer]:3 k[integer]:-9223372036854775807
table public.t: UPDATE: id[numeric]:2.50 name[text]:'a' n[integer]:4 k[integer]:-9223372036854775807
table public.t: DELETE: id[numeric]:2.50 name[text]:'a' n[integer]:4 k[integer]:-9223372036854775807
COMMIT 7
"""


def test_spark_key_texts_are_the_pandas_ones(spark, tmp_path):
    from cdckit import spark as cdcspark

    path = tmp_path / "tricky.txt"
    path.write_text(TRICKY, encoding="utf-8")
    keys = {"t": ["id", "name", "n", "k"]}
    want = cdckit.read(path, keys=keys)
    got = cdcspark.read(spark, str(path), keys=keys).toPandas()
    assert got["key"].astype(object).where(got["key"].notna(), None).tolist() == \
        want["key"].astype(object).where(want["key"].notna(), None).tolist()
    assert [list(c) if c is not None else None for c in got["key_columns"]] == want["key_columns"].tolist()
    assert want["key"].notna().sum() == 4 and "é😀" in want["key"].iat[1]


def test_spark_replay_and_finding_with_and_without_keys(spark):
    from cdckit import spark as cdcspark

    path = samples.path(KEYLESS_FILE)
    pandas_events, events = cdckit.read(path), cdcspark.read(spark, str(path))
    want, got = cdckit.order_report(pandas_events)["keyless_tables"], cdcspark.order_report(events)["keyless_tables"]
    assert got["detail"].tolist() == want["detail"].tolist() and "cdckit.infer_keys(events)" in want["detail"].iat[0]
    states, want_states = cdcspark.materialize(events, keys=KEYS), cdckit.materialize(pandas_events, keys=KEYS)
    assert states.keyless == [] and sorted(states) == list(want_states)
    for table in want_states:
        assert row_texts(states[table]) == row_texts(want_states[table]), table
    versions = cdcspark.scd2(events, keys=KEYS)
    assert {t: versions[t].count() for t in versions} == {t: len(f) for t, f in cdckit.scd2(pandas_events,
                                                                                                keys=KEYS).items()}
    assert row_texts(cdcspark.history(events, "customers", 3, keys=KEYS)[["op", "seq", "version"]]) == \
        row_texts(cdckit.history(pandas_events, "customers", 3, keys=KEYS)[["op", "seq", "version"]])
    with pytest.raises(ValueError, match="not in the events; tables: shop.customers"):
        cdcspark.materialize(events, keys={"nosuch": "id"})


# --------------------------------------------------------------------------- key texts read in one pass

_NAMES = st.sampled_from(["id", "a/b", "n~1", "k\"q", "é", "line", ""])
_VALUES = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70),
    st.integers(min_value=-(10**19), max_value=10**19),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(alphabet=st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=6),
    st.sampled_from(["id", '"id"', "a\\/b", "x\"y", "tab\t", "\u2028"]),
    st.booleans(),
    st.none(),
    st.lists(st.integers(), max_size=2),
)


@st.composite
def _image_texts(draw: st.DrawFn) -> str | None:
    """A row image's text as producers write it: any names and values, compact or spaced, escaped or not, a name
    written twice, an array, bad JSON, or no image."""
    shape = draw(st.sampled_from(["object", "object", "object", "twice", "array", "bad", "none"]))
    if shape == "none":
        return None
    if shape == "bad":
        return draw(st.sampled_from(['{"id":', "not json", '{"id":01}', '{"id":1e999}']))
    row = draw(st.dictionaries(_NAMES, _VALUES, max_size=4))
    if shape == "array":
        return json.dumps(list(row.values()))
    text = json.dumps(row, ensure_ascii=draw(st.booleans()), separators=draw(st.sampled_from([(",", ":"), (", ", ": ")])))
    if shape == "twice" and row:
        name = draw(st.sampled_from(sorted(row)))
        text = text[:-1] + ("," if len(text) > 2 else "") + json.dumps(name) + ":" + json.dumps(draw(_VALUES)) + "}"
    if draw(st.booleans()):
        text = text.replace("/", "\\/")  # JSON's other way to write a slash
    return text


def _python_key(image: str | None, columns: list[str]) -> str | None | type:
    """The key text as one image at a time gives it (the rule), or the type of the error it raises."""
    try:
        return key_of(parse_image(image), columns) if isinstance(image, str) else None
    except Exception as error:  # noqa: BLE001 - the error's type is compared
        return type(error)


@settings(max_examples=150, deadline=None)
@given(images=st.lists(_image_texts(), max_size=12), columns=st.lists(_NAMES, min_size=1, max_size=3, unique=True))
@example(images=['{"id":1,"id":2}', '{"id":"x\\"y"}', '{"a\\/b":1,"a/b":2}'], columns=["id", "a/b"])
@example(images=['{"id":12345678901234567890}', '{"id":-0}', '{"id":1.50}', '{"id":[1]}'], columns=["id"])
def test_key_texts_read_in_one_pass_are_those_of_each_image(images, columns):
    """with_keys reads the key values of all the images in one DuckDB pass; every key text (and every error) is
    the one the rule gives image by image."""
    expected = [_python_key(image, columns) for image in images]
    if any(isinstance(e, type) for e in expected):
        with pytest.raises(Exception) as raised:
            key_texts(images, columns)
        assert raised.type in [e for e in expected if isinstance(e, type)]
        return
    assert key_texts(images, columns) == expected


def test_key_texts_of_more_images_than_a_scan_batch_come_in_the_images_order():
    """DuckDB scans the images in batches, in parallel: each key text is still its own image's."""
    from cdckit.duckdb_scans import BATCH_ROWS

    count = 3 * BATCH_ROWS + 5
    ids = np.random.default_rng(3).permutation(count)
    images = [f'{{"id":{i},"n":"x"}}' if i % 7 else f'{{"n":"y","id":"k{i}"}}' for i in ids.tolist()]
    expected = [f"[{i}]" if i % 7 else f'["k{i}"]' for i in ids.tolist()]
    assert key_texts(images, ["id"]) == expected
