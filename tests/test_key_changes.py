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


@pytest.mark.parametrize("column", ["id", 'say "hi"', "it's", "a.b"])
def test_a_key_change_is_found_whatever_the_key_column_is_called(column):
    # the replay plan reads an update's key columns with paths written into its query: quotes and dots in the
    # name must not hide the change; a second table keyed by two columns shares the query
    builder = FrameBuilder()
    changes = [("t", [column], "insert", None, {column: 1, "n": "a"}),
               ("t", [column], "update", {column: 1, "n": "a"}, {column: 2, "n": "a"}),
               ("u", ["k1", "k2"], "insert", None, {"k1": 1, "k2": "x", "n": "b"}),
               ("u", ["k1", "k2"], "update", {"k1": 1, "k2": "x", "n": "b"}, {"k1": 1, "k2": "y", "n": "b"})]
    for number, (table, columns, op, before, after) in enumerate(changes):
        key = json.dumps([after[c] for c in columns], separators=(",", ":"))
        builder.add(Event(op=op, op_raw=op, database="shop", table=table, event_time=T0 + number * 10**9,
                          seq=str(number + 1), key_columns=columns, key=key,
                          before=None if before is None else json.dumps(before), after=json.dumps(after)),
                    "canonical", "s", number)
    state = cdckit.materialize(builder.to_pandas())
    assert [str(v) for v in state["shop.t"][column]] == ["2"]
    assert state["shop.u"][["k1", "k2"]].astype(str).values.tolist() == [["1", "y"]]
    assert state.problems.empty


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


def binlog_records() -> list[dict]:
    """Debezium on MySQL as kcat -J saves a one-partition topic: positions ``file:pos:row``; the primary key
    of row 4 changes to 2 (a delete, its tombstone and a create at one binlog position), the create leaving
    ``bio`` out as the connector's placeholder; row 1 is deleted. Spread over three partitions by key (see
    :func:`cdckit.samples.partitioning.spread_by_key`), row 4 lands in partition 2 and row 2 in partition 0."""
    records: list[dict] = []

    def add(id_: int, op: str | None, pos: int, before: dict | None = None, after: dict | None = None) -> None:
        source = {"version": "2.7.0.Final", "connector": "mysql", "name": "shop", "ts_ms": 1_714_554_000_000 + pos,
                  "db": "shop", "table": "docs", "server_id": 1, "file": "mysql-bin.000003", "pos": pos, "row": 0}
        value = None if op is None else {"before": before, "after": after, "source": source, "op": op,
                                         "ts_ms": 1_714_554_000_050 + pos}
        records.append({"topic": "shop.shop.docs", "partition": 0, "offset": len(records),
                        "key": json.dumps({"id": id_}), "payload": None if value is None else json.dumps(value)})

    four, one = {"id": 4, "name": "Dee", "bio": "long text"}, {"id": 1, "name": "Al", "bio": "short"}
    add(4, "c", 100, after=four)
    add(1, "c", 200, after=one)
    add(4, "u", 300, before=four, after={**four, "name": "Dee B"})
    add(4, "d", 400, before={**four, "name": "Dee B"})
    add(4, None, 400)
    add(2, "c", 400, after={"id": 2, "name": "Dee C", "bio": "__debezium_unavailable_value"})
    add(9, "c", 500, after={"id": 9, "name": "Nine", "bio": "x"})
    add(1, "d", 600, before=one)
    add(1, None, 600)
    return records


@pytest.mark.parametrize("interleave", ["whole", "reversed", "random"])
def test_a_key_change_split_over_partitions_replays_as_in_one_partition(interleave):
    from cdckit.samples.partitioning import spread_by_key

    lines = [json.dumps(record) for record in binlog_records()]
    one = cdckit.read(lines, dialect="debezium")
    spread = cdckit.read(spread_by_key(lines, 3, interleave=interleave, seed=3), dialect="debezium")
    assert sorted(set(spread["partition"])) == [0, 1, 2]
    at = spread[spread["seq"] == one.loc[one["op"] == "delete", "seq"].iloc[0]]
    assert at.set_index("key")["partition"].to_dict() == {"[4]": 2, "[2]": 0}  # the two halves apart
    ordered = cdckit.sort_events(spread)
    steps = ordered.loc[ordered["key"].isin(["[4]", "[2]"]), ["op", "key"]].agg(" ".join, axis=1).tolist()
    assert steps == ["insert [4]", "update [4]", "delete [4]", "tombstone [4]", "insert [2]"]  # the old key first
    want = [{"id": 2, "name": "Dee C", "bio": "long text"}, {"id": 9, "name": "Nine", "bio": "x"}]
    for events in (one, spread):
        state = cdckit.materialize(events, typed=False)
        assert state.problems.empty
        assert state["shop.docs"].to_dict("records") == want
        assert cdckit.order_report(events).problems() == 0


def test_a_missing_seq_is_filled_within_its_partition():
    from cdckit.analysis.ordering.sort import filled_seq

    events = pd.DataFrame({"source": "t", "partition": [0, 0, 1, 1], "offset": [0, 1, 0, 1],
                           "seq": ["5", "6", None, "3"], "op": ["insert", "insert", "begin", "insert"]})
    assert filled_seq(events).tolist() == ["5", "6", "", "3"]  # not partition 0's last position


def test_a_redelivery_at_a_position_partitions_share_is_a_redelivery():
    # partition 0 holds a key change (delete of 4, create of 2) and then the delete again (redelivered); partition 1
    # a change at the same position: the copy is a redelivery although the tie mark (ordering.sort) differs
    records = [dict(record) for record in binlog_records()]
    delete, create, other = records[3], records[5], records[6]
    placed = [(delete, 0, 0), (create, 0, 1), (delete, 0, 2), ({**other, "payload": other["payload"].replace(
        '"pos": 500', '"pos": 400')}, 1, 0)]
    lines = [json.dumps({**record, "partition": partition, "offset": offset}) for record, partition, offset in placed]
    events = cdckit.read(lines, dialect="debezium")
    assert events["seq"].nunique() == 1
    report = cdckit.order_report(events)
    assert report["redeliveries"][["key", "offset"]].values.tolist() == [["[4]", 2]]
    assert report["semantic_duplicates"].empty
