"""Property tests: random histories in every dialect, shuffled and partly redelivered.

``materialize`` in seq order gives the true final state, and ``order_report``
finds exactly the inversions and redeliveries injected (and nothing else).
"""

from __future__ import annotations

import json

import pytest
from histories import SEQ_DIALECTS, capture, deliver, expected_inversions
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import cdckit

STEPS = st.lists(st.tuples(st.sampled_from(["insert", "insert", "update", "update", "delete"]),
                           st.integers(0, 50)), min_size=2, max_size=18)


def normal_rows(frame, columns) -> list[str]:
    """Rows restricted to ``columns``, values as text (dialects type values differently), sorted."""
    rows = frame.astype(object).where(frame.notna(), None).to_dict("records")
    return sorted(json.dumps({c: None if r.get(c) is None else str(r[c]) for c in columns}) for r in rows)


@pytest.mark.parametrize("dialect", SEQ_DIALECTS)
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), steps=STEPS)
def test_shuffled_redelivered_history_replays_to_the_truth(dialect, data, steps):
    cap = capture(dialect, steps)
    clean = cdckit.read(cap.messages, dialect=dialect, errors="raise")
    keyed = bool(clean["key"].notna().all())
    order = data.draw(st.permutations(range(len(cap.units))), label="arrival")
    repeats = data.draw(st.lists(st.tuples(st.integers(0, len(cap.units) - 1), st.integers(0, 100)),
                                 max_size=3, unique_by=lambda r: r[0]), label="redelivered")
    messages, arrival = deliver(cap, order, repeats)
    events = cdckit.read(messages, dialect=dialect, errors="raise")

    state = cdckit.materialize(events)
    truth_rows = [{"id": r["id"], "name": r["name"], "qty": r["qty"]} for r in cap.final.values()]
    got = state.get("shop.items")
    got_rows = [] if got is None else normal_rows(got, ["id", "name", "qty"])
    want = sorted(json.dumps({c: str(r[c]) for c in ("id", "name", "qty")}) for r in truth_rows)
    assert got_rows == want
    assert state.problems.empty, state.problems.to_dict("records")

    report = cdckit.order_report(events)
    assert len(report["redeliveries"]) == len(repeats)
    assert len(report["inversions"]) == expected_inversions(cap, arrival, None if keyed else clean)
    assert report["semantic_duplicates"].empty
    assert report["impossible_transitions"].empty
    assert report["time_inversions"].empty


@pytest.mark.parametrize("dialect", ["canal", "shareplex", "datahub_blob"])
def test_arrival_order_replay_is_wrong_where_seq_order_is_right(dialect):
    """The same capture replayed in arrival order gives a stale row: the seq order is what fixes it."""
    cap = capture(dialect, [("insert", 0), ("update", 0), ("update", 0)])
    messages, _ = deliver(cap, [0, 2, 1], [])
    events = cdckit.read(messages, dialect=dialect)
    right = cdckit.materialize(events)["shop.items"]
    wrong = cdckit.materialize(events, order="arrival")["shop.items"]
    assert str(right["qty"].iloc[0]) == "2" and str(wrong["qty"].iloc[0]) == "1"
    assert len(cdckit.order_report(events)["inversions"]) == 1


_KEY_PARTS = st.one_of(
    st.integers(-(10**19), 10**19), st.integers(2**53 - 2, 2**53 + 2), st.floats(-1e6, 1e6, allow_nan=False),
    st.none(), st.sampled_from(["a", "b", "10"]),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(_KEY_PARTS, min_size=1, max_size=2), max_size=12),
       st.sampled_from(["one number", "any"]))
def test_rows_come_in_key_order_by_value_however_the_keys_are_sorted(parts, shape) -> None:
    from cdckit.row_images import key_order, key_permutation

    if shape == "one number":
        parts = [[p[0]] for p in parts if isinstance(p[0], (int, float))]
    keys = list(dict.fromkeys(json.dumps(p, separators=(",", ":")) for p in parts))
    ordered = [keys[i] for i in key_permutation(keys).tolist()]
    assert ordered == sorted(keys, key=key_order)
    numbers = [json.loads(k)[0] for k in ordered if len(json.loads(k)) == 1 and type(json.loads(k)[0]) in (int, float)]
    if len(numbers) == len(ordered):  # every key one number: by value, exactly (2**53 + 1 after 2**53)
        assert numbers == sorted(numbers)


def test_a_partial_update_whose_names_end_to_end_equal_the_insert_s_is_merged() -> None:
    """The insert names [id] + [] + [id, name, qty], the update [id] + [id] + [name, qty]: the same names end to
    end, different images; the update's image lacks id, so it is merged onto the row, not put in its place."""
    cap = capture("shareplex", [("insert", 0), ("update", 0)])
    events = cdckit.read(cap.messages, dialect="shareplex", errors="raise")
    assert events["before"].iloc[1] == '{"id":1}' and "id" not in json.loads(events["after"].iloc[1])
    row = cdckit.materialize(events)["shop.items"].iloc[0]
    assert (str(row["id"]), row["name"], str(row["qty"])) == ("1", "n1", "1")
