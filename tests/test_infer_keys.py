"""``cdckit.infer_keys``: keys proposed for keyless tables, from the capture's own evidence first, then the data."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import cdckit
from cdckit.analysis.image_codes import ImageCodes
from cdckit.analysis.keys_inferred import EVIDENCE_COLUMNS
from cdckit.frame import Event, table_names
from cdckit.frame_builders import FrameBuilder

T0 = 1_714_554_000 * 10**9


def frame(changes: list[tuple], table: str = "t") -> pd.DataFrame:
    """A canonical frame of one table's changes: (op, before, after) or (op, before, after, seq)."""
    builder = FrameBuilder()
    for number, change in enumerate(changes):
        op, before, after = change[:3]
        seq = change[3] if len(change) > 3 else f"{number:06d}"
        builder.add(Event(op=op, op_raw=op, database="shop", table=table, event_time=T0 + number * 10**9,
                          seq=seq, before=None if before is None else json.dumps(before),
                          after=None if after is None else json.dumps(after)), "canonical", "s", number)
    return builder.to_pandas()


def keyless(events: pd.DataFrame) -> pd.DataFrame:
    """The capture as a value-only one holds it: no key anywhere."""
    return events.assign(key=None, key_columns=None)


def evidence(proposal: cdckit.InferredKeys, table: str) -> dict:
    rows = proposal.evidence[proposal.evidence["table"] == table]
    assert len(rows) == 1, proposal.evidence
    return rows.iloc[0].to_dict()


def state(events: pd.DataFrame) -> dict[str, list]:
    """Each table's final rows as sorted JSON texts."""
    return {name: sorted(json.dumps(row, sort_keys=True, default=str) for row in rows.to_dict("records"))
            for name, rows in cdckit.materialize(events).items()}


@pytest.mark.parametrize("sample", ["debezium/shop", "canal/shop", "maxwell/shop"])
def test_single_and_composite_keys_of_a_value_only_capture(sample: str) -> None:
    events = cdckit.read(cdckit.samples.path(sample))
    proposal = cdckit.infer_keys(keyless(events))
    named = events[events["key_columns"].notna()].groupby(cdckit.frame.table_names(events))["key_columns"].first()
    assert dict(proposal) == {table: list(columns) for table, columns in named.items()}
    assert dict(proposal)["shop.order_items"] == ["order_id", "line_no"]
    lines = evidence(proposal, "shop.order_items")
    # no single column identifies the order lines: the runner-up is one, and the reason says two live rows share it
    assert lines["how"] == "data" and len(lines["runner_up"].split(", ")) == 1
    assert lines["runner_up_lost"].startswith("two live rows share")


def test_the_proposal_replays_as_the_keyed_capture() -> None:
    events = cdckit.read(cdckit.samples.path("debezium/shop"))
    bare = keyless(events)
    proposal = cdckit.infer_keys(bare)
    assert state(cdckit.with_keys(bare, proposal)) == state(events)
    keyed = cdckit.with_keys(bare, proposal)
    assert keyed["key"].tolist() == events["key"].tolist()


def test_tables_that_name_keys_are_listed_not_proposed() -> None:
    events = cdckit.read(cdckit.samples.path("debezium/shop"))
    proposal = cdckit.infer_keys(events)
    assert dict(proposal) == {}
    assert set(proposal.evidence["how"]) == {"named by the capture"}
    assert evidence(proposal, "shop.order_items")["columns"] == ["order_id", "line_no"]


def test_an_update_that_changes_a_candidate_rejects_it_and_names_it() -> None:
    changes = [("insert", None, {"id": 1, "sku": "a", "qty": 1}),
               ("insert", None, {"id": 2, "sku": "b", "qty": 1}),
               ("update", {"id": 2, "sku": "b", "qty": 1}, {"id": 3, "sku": "b", "qty": 2})]
    proposal = cdckit.infer_keys(frame(changes))
    assert dict(proposal) == {"shop.t": ["sku"]}
    row = evidence(proposal, "shop.t")
    assert (row["how"], row["runner_up"]) == ("data", "id")
    assert row["runner_up_lost"].startswith("an update changes it")


def test_duplicate_whole_rows_have_no_key() -> None:
    changes = [("insert", None, {"a": 1, "b": "x"}), ("insert", None, {"a": 1, "b": "x"}),
               ("insert", None, {"a": 2, "b": "y"})]
    proposal = cdckit.infer_keys(frame(changes))
    assert dict(proposal) == {}
    row = evidence(proposal, "shop.t")
    assert row["how"] == "none" and row["columns"] is None
    assert row["detail"].startswith("no column set identifies the live rows")
    assert "no key" in repr(proposal)


def test_a_delete_that_finds_no_live_row_rejects_a_candidate() -> None:
    # "name" is unique among live rows, but the second delete of "a" finds none: only id follows the rows
    changes = [("insert", None, {"name": "a", "id": 1}), ("insert", None, {"name": "b", "id": 2}),
               ("delete", {"name": "a", "id": 1}, None), ("insert", None, {"name": "a", "id": 3}),
               ("delete", {"name": "a", "id": 3}, None), ("insert", None, {"name": "a", "id": 4})]
    assert dict(cdckit.infer_keys(frame(changes))) == {"shop.t": ["id"]}
    rows = [("insert", None, {"n": 1, "v": "a"}), ("insert", None, {"n": 2, "v": "a"}),
            ("delete", {"n": 1, "v": "a"}, None), ("delete", {"n": 1, "v": "a"}, None)]
    row = evidence(cdckit.infer_keys(frame(rows)), "shop.t")
    assert row["columns"] is None and "finds no live row with n = [1]" in row["runner_up_lost"]


def test_a_composite_key_when_no_single_column_is_unique() -> None:
    changes = [("insert", None, {"order_id": o, "line_no": n, "qty": 1}) for o in (1, 2) for n in (1, 2)]
    changes.append(("update", {"order_id": 1, "line_no": 2, "qty": 1}, {"order_id": 1, "line_no": 2, "qty": 5}))
    proposal = cdckit.infer_keys(frame(changes))
    assert dict(proposal) == {"shop.t": ["order_id", "line_no"]}


def test_rows_live_before_the_capture_are_counted() -> None:
    changes = [("update", {"id": 7, "v": "a"}, {"id": 7, "v": "b"}), ("delete", {"id": 7, "v": "b"}, None),
               ("insert", None, {"id": 8, "v": "b"})]
    row = evidence(cdckit.infer_keys(frame(changes)), "shop.t")
    assert row["columns"] == ["id"] and "1 first met in a delete or update" in row["detail"]


def test_a_key_change_sent_as_a_delete_and_a_create() -> None:
    # ref_id is named like a key, but the key change (a delete and a create at one seq) keeps it: num is the key
    changes = [("insert", None, {"ref_id": "a", "num": 1}, "1"), ("insert", None, {"ref_id": "b", "num": 2}, "2"),
               ("delete", {"ref_id": "a", "num": 1}, None, "3"), ("insert", None, {"ref_id": "a", "num": 5}, "3")]
    proposal = cdckit.infer_keys(frame(changes))
    assert dict(proposal) == {"shop.t": ["num"]}
    row = evidence(proposal, "shop.t")
    assert row["how"] == "pk-update pair" and row["runner_up"] == "ref_id"
    assert "a key change sent as a delete and a create" in row["runner_up_lost"]


def test_replica_identity_read_from_test_decoding_is_named_not_proposed() -> None:
    events = cdckit.read(cdckit.samples.path("pg_test_decoding/postgres"))
    proposal = cdckit.infer_keys(events)
    row = evidence(proposal, "sales.order_lines")
    assert row["how"] == "replica identity (at read)" and row["columns"] == ["order_id", "line_no"]
    assert "sales.order_lines" not in proposal
    assert proposal["public.inventory"] == ["sku"]  # REPLICA IDENTITY FULL: the data decides


def test_replica_identity_from_a_capture_s_old_tuples() -> None:
    # wal2json without include-pk: the old keys of deletes and updates hold the identity columns only
    events = cdckit.read(cdckit.samples.path("wal2json/examples_v1_plain"))
    proposal = cdckit.infer_keys(events)
    row = evidence(proposal, "public.p")
    assert proposal["public.p"] == ["id"] and row["how"] == "replica identity"
    # Debezium values of a PostgreSQL capture: deletes under REPLICA IDENTITY DEFAULT hold the key, the rest null
    values = cdckit.infer_keys(cdckit.read(cdckit.samples.path("debezium/postgres_values")))
    assert values["sales.order_lines"] == ["order_id", "line_no"]
    assert evidence(values, "sales.order_lines")["how"] == "replica identity"


def test_test_decoding_stripped_of_its_read_keys_finds_them_again() -> None:
    events = cdckit.read(cdckit.samples.path("pg_test_decoding/postgres"))
    found = events.attrs["report"]["inferred_keys"]
    bare = keyless(events)
    bare.attrs = {**events.attrs, "report": {k: v for k, v in events.attrs["report"].items() if k != "inferred_keys"}}
    proposal = cdckit.infer_keys(bare)
    for table, entry in found.items():
        assert proposal[table] == entry["columns"]
        assert evidence(proposal, table)["how"] == "replica identity"
    assert state(cdckit.with_keys(bare, proposal)) == state(cdckit.with_keys(events, proposal))


def test_html_escapes_capture_values() -> None:
    changes = [("insert", None, {"id": 1, "tag": "<b>x</b>"}), ("insert", None, {"id": 2, "tag": "<b>x</b>"})]
    proposal = cdckit.infer_keys(frame(changes, table="<i>t</i>"))
    page = proposal._repr_html_()
    assert "<b>x" not in page and "&lt;b&gt;x" in page and "&lt;i&gt;t" in page
    assert "two live rows share tag" in repr(proposal)


def test_the_proposal_is_a_mapping_keys_accepts() -> None:
    events = keyless(cdckit.read(cdckit.samples.path("debezium/shop")))
    proposal = cdckit.infer_keys(events)
    assert isinstance(proposal, dict) and list(proposal.evidence.columns) == EVIDENCE_COLUMNS
    assert cdckit.with_keys(events, proposal)["key"].notna().sum() > 0


# the images' columnar codes: Arrow's reading agrees with the images parsed one by one

_VALUES = st.one_of(
    st.none(), st.integers(-(2**53), 2**53), st.floats(-1e9, 1e9, allow_nan=False).map(lambda x: round(x, 3)),
    st.booleans(), st.sampled_from(["a", "b", "2024-01-01 10:00:00", "2024-01-01 10:00:01", "", "é"]),
)
_IMAGES = st.one_of(st.none(), st.dictionaries(st.sampled_from(["id", "a", "b", "c"]), _VALUES, max_size=4))


def _partition(codes) -> list[tuple[int, ...]]:
    """Which positions share a code (-1 kept apart): codes up to their numbering."""
    groups: dict[int, list[int]] = {}
    for place, code in enumerate(codes.tolist()):
        groups.setdefault(code if code >= 0 else -2 - place, []).append(place)
    return sorted(tuple(group) for group in groups.values())


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["insert", "update", "delete", "read"]), _IMAGES, _IMAGES),
                min_size=1, max_size=12))
@example([("insert", None, {"id": None, "b": 0}), ("insert", None, {"id": None, "b": 0.0})])  # one code, floating
@example([("insert", {"c": -0.0}, {"c": 0})])  # -0.0 equals 0
def test_image_codes_read_by_arrow_equal_those_of_parsed_images(changes) -> None:
    table = pd.DataFrame({"op": [op for op, _, _ in changes], "seq": [f"{i:03d}" for i in range(len(changes))],
                          "txn_id": None,
                          "before": [None if b is None else json.dumps(b) for _, b, _ in changes],
                          "after": [None if a is None else json.dumps(a) for _, _, a in changes]})
    by_arrow = ImageCodes(table)
    by_python = ImageCodes(table)
    by_python.columns, by_python._codes, by_python.kind, by_python.unusable = [], {}, {}, {}
    by_python._coded_by_python()
    assert by_arrow.row_columns == by_python.row_columns
    if by_arrow._arrays or not by_arrow._codes:  # Arrow read them (else both are the Python reading)
        assert sorted(by_arrow.columns) == sorted(by_python.columns)
        assert by_arrow.unusable == by_python.unusable and by_arrow.kind == by_python.kind
        for column in by_python.kind:
            assert by_arrow.present(column).tolist() == (by_python.codes(column) >= 0).tolist()
            assert _partition(by_arrow.codes(column)) == _partition(by_python.codes(column)), column


@pytest.mark.parametrize("sample", ["debezium/shop.jsonl", "debezium/postgres_values.jsonl", "maxwell/examples.json",
                                    "wal2json/postgres_v2.jsonl", "pg_test_decoding/postgres.txt"])
def test_replica_identity_read_from_columns_alone_is_that_of_the_parsed_images(sample, monkeypatch) -> None:
    """The old tuples' columns are counted by DuckDB where they decide the replica identity on their own; the
    evidence is the same as when every update's images are parsed and compared."""
    from cdckit.analysis import keys_inferred

    events = cdckit.read(cdckit.samples.path(sample))
    names = table_names(events)
    tables = {name: events[names == name] for name in names.dropna().unique()}
    assert tables, sample
    read = {name: keys_inferred._identity(ImageCodes(table)) for name, table in tables.items()}
    monkeypatch.setattr(ImageCodes, "old_tuple_shapes", lambda self, positions: None)
    parsed = {name: keys_inferred._identity(ImageCodes(table)) for name, table in tables.items()}
    assert read == parsed
