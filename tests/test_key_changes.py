"""An update that changes a row's primary key leaves only the new row in ``materialize``, in every dialect that
can write one, with key metadata and without it (Lindorm with ``schema: {}``, any capture that names no key)."""

from __future__ import annotations

import json

import oracle
import pandas as pd
import pytest

import cdckit
from cdckit.dialects import registry
from cdckit.frame import Event
from cdckit.frame_builders import FrameBuilder

T0 = 1_714_554_000 * 10**9
#: Dialects whose messages cannot say that a key changed, and why.
CANNOT = {"universe": "a UniVerse update carries no before image: a changed record id is a new record"}
WRITERS = [name for name in cdckit.dialects.names() if registry.get(name).can_encode() and name not in CANNOT]


def key_change() -> pd.DataFrame:
    """Row 1 inserted, its key changed to 2, row 3 inserted."""
    builder = FrameBuilder()
    changes = [("insert", "[1]", None, {"id": 1, "name": "a"}), ("update", "[2]", {"id": 1, "name": "a"},
               {"id": 2, "name": "a"}), ("insert", "[3]", None, {"id": 3, "name": "c"})]
    for number, (op, key, before, after) in enumerate(changes):
        builder.add(Event(op=op, op_raw=op, database="shop", table="t", event_time=T0 + number * 10**9,
                          seq=str(number + 1), txn_id="9", key_columns=["id"], key=key,
                          before=None if before is None else json.dumps(before),
                          after=json.dumps(after)), "canonical", "s", number)
    return builder.to_pandas()


def live_ids(events: pd.DataFrame) -> list[str]:
    state = cdckit.materialize(events)["shop.t"]
    return sorted(str(value) for value in state["id"])


@pytest.mark.parametrize("name", WRITERS)
def test_a_key_change_leaves_only_the_new_row(name):
    back = cdckit.read(cdckit.convert(key_change(), name).kafka_records(), dialect=name)
    assert back.attrs["report"]["quarantined"] == 0
    assert live_ids(back) == ["2", "3"]
    # nothing names the key: the changed row is found by its whole before image
    keyless = back.assign(key_columns=pd.Series([None] * len(back), index=back.index, dtype=object),
                          key=pd.array([None] * len(back), dtype=back["key"].dtype))
    assert live_ids(keyless) == ["2", "3"]
    assert cdckit.materialize(keyless).keyless == ["shop.t"]


def test_without_the_before_image_the_old_row_stays_and_universe_is_the_case():
    back = cdckit.read(cdckit.convert(key_change(), "universe").kafka_records(), dialect="universe")
    assert live_ids(back) == ["1", "2", "3"]


# ---------------------------------------------------------------- Debezium PostgreSQL: unchanged TOAST values

TOASTED = {"bio": "x" * 9000, "pic": "AAEC", "tags": ["a", "b"], "doc": '{"k": 1}', "nums": [1, 2]}


def toast_records() -> list[dict]:
    """Debezium on PostgreSQL (REPLICA IDENTITY DEFAULT) as kcat -J saves it: updates and a primary-key update
    that leave the TOASTed columns unchanged carry the placeholder; row 3 is deleted."""
    import debezium_pg

    capture = debezium_pg.Capture()
    capture.insert({"id": 1, "name": "Ann", "qty": 1, **TOASTED}).update({"id": 1, "name": "Ann", "qty": 5})
    capture.change_key(1, {"id": 2, "name": "Ann B", "qty": 6}).update({"id": 2, "name": "Ann C", "qty": 7})
    capture.insert({"id": 3, "name": "Cy", "qty": 1, **TOASTED}).update({"id": 3, "name": "Cy", "qty": 2})
    capture.delete(3)
    return capture.records


def toast_capture() -> pd.DataFrame:
    return cdckit.read(toast_records(), dialect="debezium")


def test_unchanged_toast_values_are_kept_across_updates_and_a_primary_key_update():
    events = toast_capture()
    want = [{"id": 2, "name": "Ann C", "qty": 7, **TOASTED}]
    state = cdckit.materialize(events, typed=False)
    assert state.problems.empty
    assert state["public.docs"].to_dict("records") == want
    assert oracle.materialize(events)["public.docs"].to_dict("records") == want
    versions = cdckit.scd2(events, typed=False)["public.docs"]
    assert (versions["bio"] == TOASTED["bio"]).all() and versions["tags"].tolist() == [["a", "b"]] * len(versions)
    history = cdckit.history(events, "docs", 2)
    assert history["op"].tolist() == ["insert", "update"] and (history["bio"] == TOASTED["bio"]).all()


def test_a_delete_image_of_type_defaults_is_not_shown_as_the_row_values():
    from cdckit.viz import diff

    events = toast_capture()
    deleted = events[events["op"] == "delete"].iloc[-1]
    assert json.loads(deleted["before"])["name"] == ""  # what Debezium writes: the key and type defaults
    rows = diff(deleted).rows
    assert rows["column"].tolist() == ["id"] and rows["before"].tolist() == [3]
    history = cdckit.history(events, "docs", 3)  # the last version before the delete keeps the real values
    assert history["name"].tolist()[:2] == ["Cy", "Cy"] and history["op"].tolist()[-1] == "delete"


def test_a_keyless_before_image_is_found_by_its_columns_not_by_reading_every_row(monkeypatch):
    # a before image that is no live row as it stands must not make replay read the whole table (a capture of
    # 250,000 such updates took hours): rows with the image's columns are described only by an equal image,
    # rows with fewer columns by the image cut to theirs; only rows with columns the image lacks are read
    from cdckit.analysis import replayer

    replay = replayer.Replayer()
    for number in range(200):
        replay.apply({"op": "insert", "before": None, "after": {"id": number, "note": None}})
    replay.apply({"op": "insert", "before": None, "after": {"id": 500}})  # a row whose note column was deleted
    reads = []
    monkeypatch.setattr(replayer.values, "loads", lambda text: reads.append(text) or json.loads(text))
    missing = replay.apply({"op": "update", "before": {"id": 999, "note": "x"}, "after": {"id": 999, "note": "y"}})
    assert missing.problem == "update of a row not in the table" and reads == []
    cut = replay.apply({"op": "delete", "before": {"id": 500, "note": None}, "after": None})
    assert cut.problem is None and reads == [] and '{"id":500}' not in replay.bag
    partial = replay.apply({"op": "delete", "before": {"id": 7}, "after": None})  # a partial image: rows are read
    assert partial.problem is None and reads and '{"id":7,"note":null}' not in replay.bag
