"""cdckit.analysis.filters: choosing events by table, op, key values and event time."""

from __future__ import annotations

import json

import pandas as pd
import pytest

import cdckit
from cdckit.analysis.filters import parse_key, parse_time, select, selection


def capture(rows: list[tuple[str, str, object, int]]) -> pd.DataFrame:
    """Canal inserts (db, table, id, seconds) keyed by id (an int or a varchar column) read as one capture."""
    lines = [json.dumps({"data": [{"id": ident, "v": "x"}], "pkNames": ["id"], "type": "INSERT", "database": db,
                         "table": table, "es": 1_000 * seconds, "ts": 1_000 * seconds, "isDdl": False,
                         "mysqlType": {"id": "int" if isinstance(ident, int) else "varchar(10)", "v": "text"}})
             for db, table, ident, seconds in rows]
    return cdckit.read("\n".join(lines) + "\n", dialect="canal")


@pytest.fixture
def events() -> pd.DataFrame:
    return capture([("shop", "customers", 3, 0), ("shop", "customers", 13, 1), ("shop", "customers", 30, 2),
                    ("shop", "orders", 3, 3), ("crm", "customers", "3", 4), ("crm", "notes", "a,b", 5)])


def test_a_key_matches_exactly_as_number_or_text(events):
    chosen = select(events, key=3)
    assert chosen["key"].tolist() == ["[3]", "[3]", '["3"]']  # never [13] or [30]
    for same in ("3", [3], ["3"], "[3]", '["3"]', 3.0):
        assert select(events, key=same)["key"].tolist() == chosen["key"].tolist(), same
    assert select(events, key={3, 13})["key"].tolist() == ["[3]", "[13]", "[3]", '["3"]']
    assert select(events, key=4).empty


def test_composite_keys_by_commas_or_json():
    events = cdckit.read(cdckit.samples.path("canal/shop"))
    composite = sorted(k for k in events["key"].dropna().unique() if k.count(",") == 1)
    first = json.loads(composite[0])
    expected = (events["key"] == composite[0]).sum()
    assert expected > 0
    for spec in (f"{first[0]},{first[1]}", f"{first[0]}, {first[1]}", json.dumps(first), tuple(first)):
        assert len(select(events, key=spec)) == expected, spec
    assert select(events, key=str(first[0])).empty or all(select(events, key=str(first[0]))["key"].str.count(",") == 0)
    value_with_comma = capture([("d", "t", "a,b", 0)])
    assert select(value_with_comma, key='["a,b"]')["key"].tolist() == ['["a,b"]']
    assert select(value_with_comma, key="a,b").empty  # commas split values: a two-value key


def test_tables_by_full_or_bare_name(events):
    assert set(select(events, table="orders")["table"]) == {"orders"}
    assert len(select(events, table="shop.customers")) == 3
    assert len(select(events, table=["shop.customers", "notes"])) == 4
    assert len(select(events, table="shop.customers,crm.notes")) == 4
    assert select(events, table=[]).empty
    with pytest.raises(KeyError, match="ambiguous"):
        select(events, table="customers")
    with pytest.raises(KeyError, match="not in the events"):
        select(events, table="nosuch")


def test_ops_are_checked():
    events = cdckit.read(cdckit.samples.path("canal/shop"))
    chosen = select(events, op="update,delete")
    assert set(chosen["op"]) == {"update", "delete"}
    assert len(chosen) == events["op"].isin(["update", "delete"]).sum()
    with pytest.raises(ValueError, match="did you mean delete"):
        selection(op="deletes")


def test_since_until_half_open_utc_unless_zoned(events):
    def seconds(frame):
        return [int(t.timestamp()) for t in frame["event_time"]]

    assert seconds(select(events, since="1970-01-01T00:00:02", until="1970-01-01 00:00:04")) == [2, 3]
    assert seconds(select(events, until="1970-01-01T02:00:03+02:00")) == [1, 2]  # a time of 0 is no time
    assert seconds(select(events, since=pd.Timestamp("1970-01-01 00:00:05", tz="UTC"))) == [5]
    assert len(select(events, since="1970-01-01", until="1970-01-02")) == len(events) - 1
    no_time = capture([("d", "t", 1, 0)])
    no_time["event_time"] = pd.Series([pd.NaT], dtype="datetime64[ns, UTC]")
    assert select(no_time, since="1900-01-01").empty and len(select(no_time)) == 1
    for bad in ("yesterday", "2024-13-01", "1700000000"):
        with pytest.raises(ValueError, match="ISO"):
            parse_time(bad)


def test_the_result_keeps_the_reads_attrs(events):
    chosen = select(events, table="orders", op="insert")
    assert chosen.attrs["report"] == events.attrs["report"]
    assert chosen.attrs["quarantine"] is events.attrs["quarantine"]
    assert list(chosen.index) == list(range(len(chosen)))


def test_bad_keys_are_value_errors():
    for bad in ("", "[", "[1", '{"a": 1}'.join("[]")[:-1], [], "[]"):
        with pytest.raises(ValueError):
            parse_key(bad)
