"""What scd2 and history answer where an answer is easy to get wrong: a table without key columns (never an
empty answer: say so and how to give the keys), and the kinds of a row's history (whole numbers stay whole)."""

from __future__ import annotations

import warnings

import pandas as pd
import pytest

import cdckit

KEYLESS = ("BEGIN 7\ntable shop.customers: INSERT: id[integer]:1 name[text]:'a'\n"
           "table shop.customers: UPDATE: id[integer]:1 name[text]:'b'\nCOMMIT 7")
KEYED = "BEGIN 8\ntable shop.orders: INSERT: id[integer]:5 total[integer]:12\nCOMMIT 8"
MOVED = ("BEGIN 7\ntable public.t: INSERT: id[integer]:1 name[text]:'a'\n"
         "table public.t: UPDATE: old-key: id[integer]:1 new-tuple: id[integer]:2 name[text]:'b'\n"
         "table public.t: DELETE: id[integer]:2\nCOMMIT 7")


def _read(text: str) -> pd.DataFrame:
    return cdckit.read(text, dialect="pg_test_decoding")


def test_scd2_of_tables_without_key_columns_says_so_and_how_to_give_them():
    with pytest.raises(cdckit.KeylessTableError) as caught:
        cdckit.scd2(_read(KEYLESS))
    message = str(caught.value)
    assert caught.value.tables == ("shop.customers",)
    assert "shop.customers has no key columns" in message and "cdckit.infer_keys(events)" in message
    assert "keys={'shop.customers': [...]}" in message and "--keys shop.customers=" in message
    assert isinstance(caught.value, cdckit.CdcError)


def test_scd2_returns_the_keyed_tables_and_names_the_keyless_ones():
    events = cdckit.with_keys(_read(KEYLESS + "\n" + KEYED), {"orders": "id"})
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        tables = cdckit.scd2(events)
    assert list(tables) == ["shop.orders"] and tables.keyless == ["shop.customers"]
    assert any("scd2 leaves out shop.customers" in str(w.message) and "with_keys" in str(w.message) for w in said)
    # given its keys, the table has versions
    assert len(cdckit.scd2(cdckit.with_keys(events, {"customers": "id"}))["shop.customers"]) == 2


def test_history_of_a_table_without_key_columns_says_so_not_that_the_row_is_missing():
    events = _read(KEYLESS)
    with pytest.raises(cdckit.KeylessTableError, match="shop.customers has no key columns.*with_keys"):
        cdckit.history(events, "customers", 1)
    assert cdckit.history(cdckit.with_keys(events, {"customers": "id"}), "customers", 1)["name"].tolist() == ["a", "b"]


def test_history_of_a_keyed_table_still_raises_key_error_for_an_unknown_key():
    events = cdckit.with_keys(_read(KEYED), {"orders": "id"})
    with pytest.raises(KeyError, match="no row of shop.orders has key 9") as caught:
        cdckit.history(events, "orders", 9)
    assert not isinstance(caught.value, cdckit.KeylessTableError)


@pytest.mark.parametrize("key, ops", [(1, ["insert", "update (key moved away)"]),
                                      (2, ["update (key moved here)", "delete"])])
def test_history_keeps_whole_numbers_whole_after_a_delete_or_a_key_move(key, ops):
    events = cdckit.with_keys(_read(MOVED), {"t": "id"})
    history = cdckit.history(events, "t", key)
    assert history["op"].tolist() == ops
    assert history["id"].dtype == cdckit.materialize(events)["public.t"]["id"].dtype == "Int64"
    assert history["id"].tolist()[0] == key and history["id"].isna().tolist() == [False, True]
    assert "5.0" not in history.to_string() and "NaN" not in history.to_string()


def test_history_keeps_whole_numbers_past_float_precision_exact():
    big = 2**62 + 1
    text = (f"BEGIN 7\ntable public.t: INSERT: id[integer]:1 n[bigint]:{big}\n"
            "table public.t: DELETE: id[integer]:1\nCOMMIT 7")
    history = cdckit.history(cdckit.with_keys(_read(text), {"t": "id"}), "t", 1)
    assert history["n"].dtype == "Int64" and history["n"].iloc[0] == big


def test_replay_hands_duckdb_its_changes_in_batches_it_scans_in_parallel():
    """One Arrow batch is one DuckDB thread: a capture larger than a batch is cut into several, in order."""
    from cdckit.analysis.replay_prepare import _frame_for_sql
    from cdckit.duckdb_scans import BATCH_ROWS

    events = cdckit.read(cdckit.samples.path("canal/shop"))
    many = pd.concat([events] * (2 * BATCH_ROWS // len(events) + 1), ignore_index=True)
    table = _frame_for_sql(many)
    assert len(table.to_batches()) >= 2 and max(len(batch) for batch in table.to_batches()) <= BATCH_ROWS
    assert table.column("_row").to_pylist() == list(range(len(many)))
