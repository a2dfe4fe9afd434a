"""cdckit.compare (two captures of one source) and cdckit.reconcile (a replayed state against a snapshot)."""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal

import pandas as pd
import pytest

import cdckit
from cdckit.analysis.reconcile import ReconcileError, normal, same


@pytest.fixture(scope="module")
def canal() -> pd.DataFrame:
    return cdckit.read(cdckit.samples.path("canal/shop"))


@pytest.fixture(scope="module")
def converted(canal: pd.DataFrame, tmp_path_factory: pytest.TempPathFactory) -> pd.DataFrame:
    """The same changes written as Debezium (with Kafka keys) and read back: a second capture of the same source."""
    path = tmp_path_factory.mktemp("converted") / "debezium.jsonl"
    cdckit.convert(canal, "debezium", path, layout="kcat")
    events = cdckit.read(path)
    assert set(events["dialect"]) == {"debezium"}
    return events


def _rows(events: pd.DataFrame, key: str, op: str | None = None) -> pd.Index:
    """Index labels of the changes of one key (customers and order_items keys differ in shape)."""
    chosen = events["key"] == key
    if op is not None:
        chosen &= events["op"] == op
    return events.index[chosen.fillna(False).to_numpy()]


def _edit(events: pd.DataFrame, row: int, image: str, **changes: object) -> None:
    parsed = json.loads(events.loc[row, image])
    for column, value in changes.items():
        if value is _DROP:
            parsed.pop(column)
        else:
            parsed[column] = value
    events.loc[row, image] = json.dumps(parsed)


_DROP = object()


# --------------------------------------------------------------------------- compare


def test_a_capture_and_its_conversion_to_another_dialect_compare_equal(canal, converted):
    result = cdckit.compare(canal, converted, names=("canal", "debezium"))
    assert result.ok, str(result)
    assert result.summary["matched"].sum() == (canal["op"].isin(["insert", "update", "delete", "read"])).sum()
    assert result.summary["canal"].tolist() == result.summary["debezium"].tolist() == result.summary["matched"].tolist()
    assert result.only_a.empty and result.only_b.empty and result.different.empty and result.states.empty
    assert str(result).splitlines()[0].endswith("(same)")


def test_a_capture_without_keys_is_paired_by_the_key_columns_of_the_other(canal, tmp_path):
    path = tmp_path / "debezium.jsonl"
    cdckit.convert(canal, "debezium", path)  # no kcat layout: the Kafka keys, and so the events' keys, are lost
    keyless = cdckit.read(path)
    assert keyless["key"].isna().all()
    result = cdckit.compare(keyless, canal)
    assert result.ok, str(result)


def test_a_dropped_event_is_only_in_the_other_capture(canal, converted):
    b = converted.copy()
    row = _rows(b, "[11]", "update")[0]
    dropped = b.loc[row]
    b = b.drop(index=row)
    result = cdckit.compare(canal, b, names=("canal", "debezium"))
    assert not result.ok
    assert result.only_b.empty and result.different.empty
    assert result.only_a[["table", "key", "op"]].values.tolist() == [[dropped["table"], "[11]", "update"]]
    assert result.only_a["change"].tolist() == [2]  # the insert is change 1 of key 11
    summary = result.summary.set_index("table")
    assert summary.loc["shop.customers", "only_canal"] == 1
    assert summary.loc["shop.customers", "debezium"] == summary.loc["shop.customers", "canal"] - 1
    assert summary.loc["shop.order_items", "only_canal"] == 0


def test_an_altered_value_is_a_different_pair_naming_the_column_and_the_final_state_shows_it(canal, converted):
    b = converted.copy()
    last = _rows(b, "[4]")[-1]  # key 4's last change leaves a live row
    assert b.loc[last, "op"] in ("insert", "update")
    _edit(b, last, "after", tier="platinum")
    result = cdckit.compare(canal, b, names=("canal", "debezium"))
    assert result.only_a.empty and result.only_b.empty
    assert len(result.different) == 1
    row = result.different.iloc[0]
    assert (row["key"], row["columns"]) == ("[4]", ["after.tier"])
    assert "'platinum'" in row["detail"] and row["op_canal"] == row["op_debezium"] == b.loc[last, "op"]
    assert row["seq_debezium"] == b.loc[last, "seq"]
    assert json.loads(row["after_debezium"])["tier"] == "platinum"
    states = result.states
    assert states[["table", "key", "found", "columns"]].values.tolist() == [
        ["shop.customers", "[4]", "different", ["tier"]]]
    assert json.loads(states["row_debezium"].iloc[0])["tier"] == "platinum"


def test_a_column_on_one_side_only_is_named(canal, converted):
    b = converted.copy()
    row = _rows(b, "[6]", "insert")[0]
    _edit(b, row, "after", note=_DROP)
    result = cdckit.compare(canal, b)
    assert result.different["columns"].tolist() == [["after.note"]]
    assert result.different["detail"].tolist() == ["after.note: only in a"]


def test_reordered_changes_show_on_both_sides_with_a_note(canal, converted):
    b = converted.copy()
    first, second = _rows(b, "[2]", "update")[:2]
    b.loc[first, "seq"], b.loc[second, "seq"] = b.loc[second, "seq"], b.loc[first, "seq"]
    result = cdckit.compare(canal, b)
    assert len(result.only_a) == len(result.only_b) == 1 and result.different.empty
    assert result.only_a["key"].tolist() == result.only_b["key"].tolist() == ["[2]"]
    assert "order differs" in result.only_a["note"].iloc[0] and "order differs" in result.only_b["note"].iloc[0]
    assert sorted([result.only_a["change"].iloc[0], result.only_b["change"].iloc[0]]) == [2, 3]


def test_a_duplicate_is_one_extra_event_said_to_repeat_another(canal, converted):
    row = _rows(converted, "[104,1]", "insert")[0]
    b = pd.concat([converted, converted.loc[[row]]])
    result = cdckit.compare(canal, b, names=("canal", "debezium"))
    assert result.only_a.empty and result.different.empty and result.states.empty
    assert result.only_b[["key", "op"]].values.tolist() == [["[104,1]", "insert"]]
    assert "a repeat" in result.only_b["note"].iloc[0]
    assert result.only_b["change"].tolist() == [2]  # the copy delivered second is the repeat
    assert result.summary.set_index("table").loc["shop.order_items", "only_debezium"] == 1


def test_values_compare_by_value_and_keys_by_their_values(canal):
    b = canal.copy()
    row = _rows(b, "[1]", "insert")[0]
    parsed = json.loads(b.loc[row, "after"])
    _edit(b, row, "after", balance=f"{Decimal(str(parsed['balance'])):.4f}", id=float(parsed["id"]))
    assert cdckit.compare(canal, b).ok
    b.loc[_rows(b, "[1]"), "key"] = '["1"]'  # the key as text: the same key
    result = cdckit.compare(canal, b)
    assert result.only_a.empty and result.only_b.empty and result.different.empty
    _edit(b, row, "after", balance=str(parsed["balance"] + 1))
    assert cdckit.compare(canal, b).different["columns"].tolist() == [["after.balance"]]


def test_transaction_markers_and_ddl_are_set_aside_and_counted():
    events = cdckit.read(cdckit.samples.path("debezium/examples"))
    fewer = events[events["op"] != "commit"]
    result = cdckit.compare(events, fewer)
    assert result.ok
    aside = result.set_aside.set_index("op")
    assert aside.loc["commit", "a"] == (events["op"] == "commit").sum() > 0
    assert aside.loc["commit", "b"] == 0
    assert aside.loc["ddl", "a"] == aside.loc["ddl", "b"] == (events["op"] == "ddl").sum()


def test_result_tables_html_and_bad_input(canal, converted):
    b = converted.copy()
    row = _rows(b, "[8]", "update")[0]
    _edit(b, row, "after", note="<script>alert(1)</script>")
    result = cdckit.compare(canal, b, names=("old", "new"))
    assert set(result.frames()) == {"summary", "only_a", "only_b", "different", "states", "set_aside"}
    assert {"op_old", "op_new", "after_old", "after_new"} <= set(result.different.columns)
    page = result._repr_html_()
    assert "<script>" not in page and "&lt;script&gt;" in page
    assert "<support>" not in page and "&lt;support&gt;" in page  # the sample's own note, before the edit
    assert "different: shop.customers [8]" in repr(result)
    with pytest.raises(TypeError, match="event frames"):
        cdckit.compare(canal, [1, 2])
    with pytest.raises(ValueError, match="two different names"):
        cdckit.compare(canal, canal, names=("x", "x"))
    with pytest.raises(ValueError, match="cannot be table"):
        cdckit.compare(canal, canal, names=("table", "x"))


# --------------------------------------------------------------------------- reconcile


@pytest.fixture(scope="module")
def states(canal: pd.DataFrame) -> cdckit.TableStates:
    return cdckit.materialize(canal)


def test_the_normalising_rule():
    assert same("10.50", 10.5) and same(1, 1.0) and same(Decimal("2.50"), "2.5") and same(True, 1)
    assert same("2024-01-01 00:00:00", pd.Timestamp("2024-01-01", tz="UTC"))
    assert same("2024-01-01T02:00:00+02:00", pd.Timestamp("2024-01-01", tz="UTC"))
    assert same(None, float("nan")) and same(pd.NA, None) and same(pd.NaT, None)
    assert same('{"a": 1}', {"a": 1.0})
    assert not same("10.5", "10.6") and not same("a", "A") and not same(None, 0) and not same("", None)
    assert not same(1704067200000, "2024-01-01 00:00:00")  # epoch milliseconds are a number, not a time
    assert hash(normal("10.50")) == hash(normal(10.5))


def test_a_state_against_its_own_snapshot_is_ok(states):
    result = cdckit.reconcile(states, states["shop.order_items"].copy(), table="order_items")
    assert result.ok, str(result)
    assert result.key == ["order_id", "line_no"]  # from the events' key columns
    assert result.matched == len(states["shop.order_items"])
    assert set(result.frames()) == {"summary", "missing", "extra", "different"}


def test_missing_extra_and_different_rows_are_found(states):
    state = states["shop.customers"]
    snapshot = state.copy()
    gone = snapshot["id"].iloc[0]
    snapshot = snapshot[snapshot["id"] != gone]
    added = {**snapshot.iloc[0].to_dict(), "id": 999, "name": "New <b>"}
    snapshot = pd.concat([snapshot, pd.DataFrame([added])], ignore_index=True)
    changed = snapshot["id"].iloc[2]
    snapshot.loc[snapshot["id"] == changed, "balance"] = 12345.5
    result = cdckit.reconcile(state, snapshot)  # one frame: its key columns travel with it
    assert not result.ok
    assert result.extra["id"].tolist() == [gone]
    assert result.missing["id"].tolist() == [999]
    assert result.different.values.tolist() == [[f"[{changed}]", "balance",
                                                 state.loc[state["id"] == changed, "balance"].item(), 12345.5]]
    assert result.matched == len(state) - 2
    summary = result.summary.iloc[0]
    assert (summary["missing"], summary["extra"], summary["different_rows"]) == (1, 1, 1)
    assert "New &lt;b&gt;" in result._repr_html_() and "New <b>" not in result._repr_html_()
    assert "missing (in the snapshot only): [999]" in str(result)


def test_parquet_and_csv_snapshots(states, tmp_path):
    for fmt in ("parquet", "csv"):
        written = cdckit.export.write_state(states, tmp_path / fmt, fmt)
        path = next(f for f in written.files if f.name.startswith("shop.customers"))
        result = cdckit.reconcile(states, path, table="shop.customers")
        assert result.ok, (fmt, str(result))
    text = (tmp_path / "csv" / "shop.customers.csv").read_text().splitlines()
    header = text[0].replace('"', "").split(",")
    fields = text[1].split(",")  # the first row has no comma inside a field
    fields[header.index("balance")] = "0.01"
    (tmp_path / "changed.csv").write_text("\n".join([text[0], ",".join(fields), *text[2:]]) + "\n")
    result = cdckit.reconcile(states, tmp_path / "changed.csv", table="customers")
    assert result.different[["column", "snapshot"]].values.tolist() == [["balance", "0.01"]]


def test_a_typed_state_against_a_text_snapshot():
    state = pd.DataFrame({"id": [1, 2], "price": [Decimal("10.50"), Decimal("3")],
                          "at": pd.to_datetime(["2024-01-01", "2024-05-01 09:30"], utc=True, format="ISO8601"),
                          "note": [None, "x"]})
    snapshot = pd.DataFrame({"id": ["1", "2"], "price": ["10.5", "3.00"],
                             "at": ["2024-01-01 00:00:00", "2024-05-01T09:30:00Z"], "note": [float("nan"), "x"]})
    assert cdckit.reconcile(state, snapshot, key="id").ok


def test_times_of_day_compare_by_the_time_they_name():
    # a typed state holds datetime.time; a snapshot saved as JSON or CSV holds the text PostgreSQL printed
    state = pd.DataFrame({"id": [1, 2, 3], "clock": [dt.time(5, 44, 35, 183000), dt.time(0, 0), dt.time(6, 30)]})
    snapshot = pd.DataFrame({"id": [1, 2, 3], "clock": ["05:44:35.183000", "00:00:00", "12:00:00+05:30"]})
    assert cdckit.reconcile(state, snapshot, key="id").ok
    assert same(dt.time(12, 0, tzinfo=dt.timezone(dt.timedelta(hours=5, minutes=30))), "06:30:00")
    assert not same(dt.time(5, 44, 35), "05:44:36") and not same("25:00:00", dt.time(1, 0))
    assert same("24:00:00", "24:00:00") and not same("12:00:00", 43200)


def test_durations_compare_by_their_length_and_within_a_day_as_the_time_they_reach():
    # MySQL's TIME: a typed state holds timedelta, the live table's text is MySQL's -838:59:59.000000 form
    state = pd.DataFrame({"id": [1, 2, 3], "clock": [pd.Timedelta(hours=-838, minutes=-59, seconds=-59),
                                                     pd.Timedelta(hours=25, microseconds=1), pd.Timedelta(hours=1)]})
    snapshot = pd.DataFrame({"id": [1, 2, 3], "clock": ["-838:59:59.000000", "25:00:00.000001", "01:00:00"]})
    assert cdckit.reconcile(state, snapshot, key="id").ok
    assert same(dt.timedelta(hours=1), dt.time(1, 0)) and same("-00:00:01", dt.timedelta(seconds=-1))
    assert not same("25:00:00", dt.timedelta(hours=1)) and not same("-01:00:00", "01:00:00")


def test_columns_on_one_side_only_are_reported(states):
    snapshot = states["shop.customers"].drop(columns=["note"]).assign(region="eu")
    result = cdckit.reconcile(states, snapshot, table="customers")
    assert not result.ok and result.different.empty and result.matched == len(snapshot)
    assert (result.columns_only_in_state, result.columns_only_in_snapshot) == (["note"], ["region"])
    assert "columns only in the snapshot: region" in str(result)


def test_bad_input_gives_a_clear_error(states, tmp_path):
    snapshot = states["shop.customers"]
    with pytest.raises(ReconcileError, match="'nope'"):
        cdckit.reconcile(states, snapshot, table="nope")
    with pytest.raises(ReconcileError, match="pass table="):
        cdckit.reconcile(states, snapshot)
    with pytest.raises(ReconcileError, match="key column id is not in the snapshot"):
        cdckit.reconcile(states, snapshot.drop(columns=["id"]), table="customers")
    with pytest.raises(ReconcileError, match="pass key="):
        cdckit.reconcile(pd.DataFrame({"id": [1]}), pd.DataFrame({"id": [1]}))
    broken = tmp_path / "broken.parquet"
    broken.write_bytes(b"not parquet at all")
    with pytest.raises(ReconcileError, match="broken.parquet"):
        cdckit.reconcile(states, broken, table="customers")
    with pytest.raises(ReconcileError, match="does not exist"):
        cdckit.reconcile(states, tmp_path / "absent.csv", table="customers")


def test_a_spark_snapshot(states, spark):
    state = states["shop.customers"]
    snapshot = state.copy()
    snapshot.loc[snapshot["id"] == snapshot["id"].iloc[0], "tier"] = "diamond"
    result = cdckit.reconcile(states, spark.createDataFrame(snapshot), table="customers")
    assert result.different[["column", "snapshot"]].values.tolist() == [["tier", "diamond"]]
    assert result.matched == len(state) - 1


# --------------------------------------------------------------------------- a delete's default-filled image


def _debezium_and_wal2json() -> tuple[pd.DataFrame, pd.DataFrame, list[dict]]:
    """One PostgreSQL table's changes as Debezium writes them (kcat with keys: REPLICA IDENTITY DEFAULT, so a
    delete's before image holds the key and type defaults) and as wal2json does (its delete image: the key)."""
    import debezium_pg

    empty = dict.fromkeys(("bio", "pic", "tags", "doc", "nums"))
    capture = debezium_pg.Capture()
    capture.insert({"id": 1, "name": "Ann", "qty": 3, **empty, "bio": "b"})
    capture.insert({"id": 2, "name": "Bo", "qty": 4, **empty, "tags": ["t"]})
    capture.update({"id": 1, "name": "Ann", "qty": 5, **empty}, unchanged=False).delete(1)
    debezium = cdckit.read(capture.records, dialect="debezium")
    keyed = debezium.copy()
    deletes = keyed.index[keyed["op"] == "delete"]
    keyed.loc[deletes, "before"] = [json.dumps({"id": json.loads(b)["id"]}) for b in keyed.loc[deletes, "before"]]
    wal2json = cdckit.read([r.value for r in cdckit.dialects.registry.create("wal2json").encode(keyed)],
                           dialect="wal2json")
    return debezium, wal2json, capture.records


@pytest.mark.filterwarnings("ignore:materialize.*found no row to change:UserWarning")  # keyless rows on purpose (the warning: test_value_only_capture)
def test_a_delete_image_of_type_defaults_compares_by_its_key_only():
    debezium, wal2json, records = _debezium_and_wal2json()
    assert json.loads(debezium.loc[debezium["op"] == "delete", "before"].iloc[0])["name"] == ""  # a default
    result = cdckit.compare(debezium, wal2json, names=("debezium", "wal2json"))
    assert result.ok, result
    values_only = cdckit.read([r["payload"] for r in records], dialect="debezium")  # no Kafka keys: wal2json's
    result = cdckit.compare(values_only, wal2json, names=("debezium", "wal2json"))
    assert result.summary["matched"].sum() == 4 and result.different.empty and result.only_a.empty
    other = wal2json.copy()  # a delete that does differ is shown by what each image tells of the row
    row = other.index[other["op"] == "delete"][0]
    other.loc[row, "before"] = json.dumps({"id": 1, "name": "Ann"})
    (different,) = cdckit.compare(debezium, other, names=("debezium", "wal2json")).different.to_dict("records")
    assert different["columns"] == ["before.name"]
    assert json.loads(different["before_debezium"]) == {"id": 1}


def test_known_values_of_real_delete_images_with_and_without_key_columns():
    from cdckit.analysis.connector_defaults import known_values

    # Debezium 3.6 on PostgreSQL 15 (REPLICA IDENTITY DEFAULT): a Connect Decimal zero, a VariableScaleDecimal
    # zero, a ZonedTimestamp at epoch 0, io.debezium.time types at 0, decimal.handling.mode=string's zero
    measures = {"id": 898578, "amount": "AA==", "big": {"scale": 0, "value": "AA=="}, "at": "1970-01-01T00:00:00Z",
                "local_at": 0, "day": 0, "clock": 0, "label": "", "flag": False, "counts": None, "doc": None,
                "text_amount": "0.0000000000", "zoned_time": "00:00:00Z"}
    assert known_values(measures, ["id"]) == {"id": 898578}
    assert known_values(measures, None) == {"id": 898578}  # no key known: the defaults still tell nothing
    order_line = {"order_id": 157, "line_no": 4, "product": None, "qty": None, "price": None}
    assert known_values(order_line, None) == {"order_id": 157, "line_no": 4}
    full = {"sku": "SKU-0227", "qty": 495, "price": 57.545, "updated": "2024-05-20T03:58:22.765609Z"}
    assert known_values(full, None) == known_values(full, ["sku"]) == full  # REPLICA IDENTITY FULL: the row
    assert known_values({"id": 1, "qty": 0, "name": "Ann"}, ["id"]) == {"id": 1, "qty": 0, "name": "Ann"}
