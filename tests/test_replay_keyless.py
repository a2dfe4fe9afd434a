"""Keyless tables replayed relationally (cdckit.analysis.replay_keyless): the multiset of row images, against a plain
reference multiset written here, on random captures with duplicate rows, absent rows, null and missing
columns, partial before images and truncates; and never through the Python walk."""

from __future__ import annotations

from collections import Counter
from typing import Any

import orjson
import pandas as pd
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import cdckit
from cdckit import values
from cdckit.frame import Event
from cdckit.frame_builders import FrameBuilder

# Every test here replays keyless tables, whose unmatched changes materialize warns of (that warning is tested in
# test_value_only_capture.py); here the problems themselves are checked.
pytestmark = pytest.mark.filterwarnings("ignore:materialize.*found no row to change:UserWarning")

_T0 = 1_714_554_000 * 1_000_000_000


def normal(image: dict[str, Any]) -> str:
    """The reference's identity of an image: columns sorted, nulls left out (a null and a missing column are one)."""
    return orjson.dumps({k: v for k, v in image.items() if v is not None}, option=orjson.OPT_SORT_KEYS).decode()


def describes(image: dict[str, Any], row: str) -> bool:
    found = orjson.loads(row)
    return all(found.get(k) == v for k, v in image.items())


def reference(changes: list[tuple[str, dict | None, dict | None]]) -> tuple[Counter, list[tuple[int, str]]]:
    """The plain multiset: a removal takes its image, else the first live row (text order) it describes."""
    bag: Counter = Counter()
    problems = []
    for number, (op, before, after) in enumerate(changes):
        if op == "truncate":
            bag.clear()
            continue
        if op in ("update", "delete"):
            if before is None:
                problems.append((number, f"{op} without a before image cannot be matched to a row"))
            else:
                text = normal(before)
                if bag[text] <= 0:
                    text = min((t for t, n in bag.items() if n > 0 and describes(before, t)), default=None)
                if text is None:
                    problems.append((number, f"{op} of a row not in the table"))
                else:
                    bag[text] -= 1
        if op != "delete" and after is not None:
            bag[normal(after)] += 1
    return +bag, problems


def capture(changes: list[tuple[str, dict | None, dict | None]]) -> pd.DataFrame:
    builder = FrameBuilder()
    for number, (op, before, after) in enumerate(changes):
        event = Event(op=op, op_raw=op.upper(), database="shop", table="items", event_time=_T0 + number * 10**9,
                      seq=f"{number:06d}", key_columns=None, key=None, before=values.image(before),
                      after=values.image(after))
        builder.add(event, "canal", "a.jsonl", number)
    return builder.to_pandas()


def state_of(states: cdckit.TableStates) -> Counter:
    frame = states.get("shop.items")
    if frame is None:
        return Counter()
    return Counter(normal({k: (None if pd.isna(v) else v) for k, v in row.items()})
                   for row in frame.to_dict("records"))


def problems_of(states: cdckit.TableStates) -> list[tuple[int, str]]:
    return [(int(o), p) for o, p in zip(states.problems["offset"], states.problems["problem"])]


@st.composite
def whole_images(draw: Any) -> list[tuple[str, dict | None, dict | None]]:
    """Changes with whole images from a small pool (duplicate rows), some removing rows not there, some images
    with a null where others lack the column, truncates."""
    pool = [{"a": a, "b": b} for a in range(3) for b in ("x", "y")]
    steps = draw(st.lists(st.tuples(st.sampled_from(["insert", "insert", "update", "delete", "truncate", "read"]),
                                    st.integers(0, 999)), min_size=1, max_size=30))
    live: list[dict] = []
    out = []
    for op, choice in steps:
        image = dict(pool[choice % len(pool)])
        if choice % 7 == 0:
            image["c"] = None  # the same row, a column present with null
        if op == "truncate":
            live.clear()
            out.append((op, None, None))
        elif op in ("insert", "read"):
            live.append(image)
            out.append((op, None, image))
        else:
            before = live.pop(choice % len(live)) if live and choice % 5 else image  # else maybe not there
            if choice % 17 == 0:
                before = None
            out.append((op, before, dict(image, b="z") if op == "update" else None))
    return out


@st.composite
def partial_images(draw: Any) -> list[tuple[str, dict | None, dict | None]]:
    """Rows with a unique id (never reused) whose deletes and updates carry only some columns (REPLICA IDENTITY
    DEFAULT, an unchanged TOAST value left out), among rows without that id."""
    steps = draw(st.lists(st.tuples(st.sampled_from(["insert", "insert", "update", "delete"]), st.integers(0, 999)),
                          min_size=1, max_size=30))
    live: list[dict] = []
    out = []
    for number, (op, choice) in enumerate(steps):
        if op == "insert" or not live:
            row = {"id": number, "name": f"n{choice % 3}", "qty": choice % 4}
            live.append(row)
            out.append(("insert", None, row))
            continue
        row = live.pop(choice % len(live))
        before = {"id": row["id"]} if choice % 3 == 0 else {"id": row["id"], "name": row["name"]} \
            if choice % 3 == 1 else row
        after = dict(row, qty=number) if op == "update" else None
        if after is not None:
            live.append(after)
        out.append((op, before, after))
    return out


def replays_as_the_reference(changes: list[tuple[str, dict | None, dict | None]]) -> None:
    states = cdckit.materialize(capture(changes), typed=False)
    bag, problems = reference(changes)
    assert state_of(states) == bag
    assert problems_of(states) == problems


@settings(max_examples=60, deadline=None)
@given(whole_images())
# a before image with a null where the row lacks the column (DuckDB reads that JSON null as SQL NULL)
@example([("insert", None, {"a": 2, "b": "y"}),
          ("update", {"a": 2, "b": "y", "c": None}, {"a": 2, "b": "z", "c": None})])
def test_whole_images_replay_as_the_reference_multiset(changes):
    replays_as_the_reference(changes)


@settings(max_examples=60, deadline=None)
@given(partial_images())
def test_partial_before_images_remove_the_row_they_describe(changes):
    replays_as_the_reference(changes)


def test_removing_a_row_not_there_is_a_problem_and_removes_nothing():
    row = {"a": 1}
    changes = [("insert", None, row), ("delete", row, None), ("delete", row, None), ("insert", None, row),
               ("update", {"a": 2}, {"a": 3}), ("delete", None, None)]
    states = cdckit.materialize(capture(changes), typed=False)
    assert states["shop.items"]["a"].tolist() == [1, 3]
    assert problems_of(states) == [(2, "delete of a row not in the table"), (4, "update of a row not in the table"),
                                   (5, "delete without a before image cannot be matched to a row")]


def test_as_of_and_truncate_cut_the_counts():
    row = {"a": 1}
    changes = [("insert", None, row), ("insert", None, row), ("truncate", None, None), ("delete", row, None),
               ("insert", None, {"a": 2})]
    events = capture(changes)
    assert cdckit.materialize(events, as_of=pd.Timestamp(_T0 + 10**9, tz="UTC"))["shop.items"]["a"].tolist() == [1, 1]
    states = cdckit.materialize(events)
    assert states["shop.items"]["a"].tolist() == [2]
    assert problems_of(states) == [(3, "delete of a row not in the table")]


def test_rows_come_in_text_order_as_many_times_as_they_are_live():
    changes = [("insert", None, {"b": 0}), ("insert", None, {"a": None, "b": 1}), ("insert", None, {"b": 0})]
    frame = cdckit.materialize(capture(changes), typed=False)["shop.items"]
    assert frame["b"].tolist() == [1, 0, 0]  # '{"a":null,...' < '{"b":0}'


def test_keyless_tables_of_whole_images_are_not_walked(monkeypatch):
    """Whole before images that are live rows as written: net counts only, no walk. A before image that is no live
    row as written (a partial image, a removal of a row not there) sends its table to the walk."""
    from cdckit.analysis import replayer

    def walked(*args: Any) -> None:
        raise AssertionError("a keyless change went to the Python walk")

    monkeypatch.setattr(replayer.Replayer, "_apply_keyless", walked)
    changes = [("insert", None, {"a": 1, "b": 1}), ("insert", None, {"a": 1, "b": 1}),
               ("update", {"a": 1, "b": 1}, {"a": 2, "b": 1}), ("delete", {"a": 1, "b": 1}, None),
               ("insert", None, {"a": 3, "b": None})]
    assert cdckit.materialize(capture(changes))["shop.items"]["a"].tolist() == [2, 3]
    # a row not there, written as the table's rows are (a capture that starts after it was written): counted
    state = cdckit.materialize(capture(changes + [("delete", {"a": 5, "b": 1}, None)]))
    assert state["shop.items"]["a"].tolist() == [2, 3] and problems_of(state) == [(5, "delete of a row not in the table")]
    for unlike in (("delete", {"a": 2}, None), ("delete", {"b": 1, "a": 2}, None)):  # partial; columns reordered
        with pytest.raises(AssertionError, match="went to the Python walk"):
            cdckit.materialize(capture(changes + [unlike]))


def test_partial_images_are_found_through_the_index_not_by_reading_every_row(monkeypatch):
    """A partial before image is looked up among the live rows of a shape through an index of the columns it
    holds: the rows are not parsed again for every partial image (which made 100k changes take a minute)."""
    from cdckit import values
    from cdckit.analysis import replayer

    changes = [("insert", None, {"id": i, "v": i % 3}) for i in range(300)]
    changes += [("delete", {"id": i}, None) for i in range(0, 300, 2)]
    parsed = []
    real = values.loads
    monkeypatch.setattr(replayer.values, "loads", lambda text: parsed.append(text) or real(text))
    state = cdckit.materialize(capture(changes), typed=False)["shop.items"]
    assert sorted(state["id"]) == list(range(1, 300, 2))
    assert len(parsed) < 10 * 300  # each change, the index once, each found row: ~1,050 (a scan per image: ~34,000)


def test_scd2_of_a_keyless_table_says_how_to_give_keys():
    with pytest.raises(cdckit.KeylessTableError):
        cdckit.scd2(capture([("insert", None, {"a": 1})]))
