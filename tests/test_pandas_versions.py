"""What cdckit gives is the same on pandas 2 and pandas 3.

pandas 3 reads Python texts (and Arrow strings) as its ``str`` dtype, where a
missing value is NaN, and returns read-only views under copy-on-write. cdckit's
replayed tables, histories and row frames keep texts as Python ``str`` and a
missing value as None in ``object`` columns, as on pandas 2.
"""

from __future__ import annotations

import pandas as pd
import pytest
from test_tables import _events

import cdckit

#: Images Arrow's JSON reader takes in one pass, and images it leaves to the row-by-row parse (a nested value).
PLAIN = [("insert", None, '{"id":1,"name":"a","note":null}'), ("insert", None, '{"id":2,"name":null}'),
         ("update", '{"id":1,"name":"a","note":null}', '{"id":1,"name":"b","note":"x"}')]
NESTED = [(op, before, after and after.replace('"id":', '"tags":[1],"id":')) for op, before, after in PLAIN]


def _texts(frame: pd.DataFrame, columns: list[str]) -> dict[str, tuple[object, list[object]]]:
    return {c: (frame[c].dtype, frame[c].tolist()) for c in columns}


@pytest.mark.parametrize("changes", [PLAIN, NESTED], ids=["arrow", "parsed"])
def test_replayed_text_columns_hold_python_texts_and_none(changes):
    events = _events(changes)
    state = cdckit.materialize(events)["shop.items"].sort_values("id")
    assert _texts(state, ["name", "note"]) == {"name": (object, ["b", None]), "note": (object, ["x", None])}
    versions = cdckit.scd2(events)["shop.items"].sort_values(["id", "valid_from"])
    assert _texts(versions, ["name", "note", "op"]) == {
        "name": (object, ["a", "b", None]), "note": (object, [None, "x", None]),
        "op": (object, ["insert", "update", "insert"])}
    history = cdckit.history(events, "items", 1)
    assert _texts(history, ["op", "name", "note"]) == {
        "op": (object, ["insert", "update"]), "name": (object, ["a", "b"]), "note": (object, [None, "x"])}


def test_row_frames_of_python_values_keep_none():
    from cdckit import viz

    events = _events(PLAIN)
    schema = cdckit.table_schema(events)
    assert schema["type"].dtype == object and set(schema["type"]) == {None}
    diff = viz.diff(events).rows
    assert diff.loc[diff["column"] == "note", "before"].tolist() == [None]  # NULL, not "no such column" (pd.NA)


def test_a_filtered_frame_shows_its_index_whatever_the_index_type():
    from cdckit.notebook import shows_index

    events = _events(PLAIN)
    assert shows_index(events[events["op"] == "update"])  # labels 2..2: an Index on pandas 2, a RangeIndex on 3
    assert not shows_index(events[events["op"] == "insert"])  # labels 0, 1: the default index



@pytest.mark.parametrize("unit", ["ms", "us"])
def test_times_of_any_resolution_give_the_same_findings_and_versions(unit):
    """pandas 3 makes microsecond (or coarser) timestamps where pandas 2 made nanoseconds (a Parquet file,
    ``pd.to_datetime(..., unit="s")``): heartbeat gaps and SCD2's valid_from are read in seconds all the same."""
    from test_findings_oracle import events_of

    beats = events_of([{"op": "heartbeat", "event_time": t, "dialect": "oceanbase_extend"} for t in (0, 1, 2, 3, 10, 11)]
                      + [{"op": "insert", "event_time": 5, "dialect": "oceanbase_extend", "key": "[1]"}])
    beats["event_time"] = beats["event_time"].dt.as_unit("ns")
    coarse = beats.copy()
    coarse["event_time"] = coarse["event_time"].dt.as_unit(unit)
    want = cdckit.order_report(beats)["heartbeat_gaps"]
    assert want["detail"].tolist() == ["7 s without a heartbeat (usual 1 s); 1 other event(s) in between"]
    pd.testing.assert_frame_equal(cdckit.order_report(coarse)["heartbeat_gaps"], want)
    events = _events(PLAIN)
    events["event_time"] = events["event_time"].dt.as_unit("ns")
    coarse = events.copy()
    coarse["event_time"] = coarse["event_time"].dt.as_unit(unit)
    pd.testing.assert_frame_equal(cdckit.scd2(coarse)["shop.items"], cdckit.scd2(events)["shop.items"],
                                  check_dtype=False)
