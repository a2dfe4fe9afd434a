"""cdckit.transactions and the transaction findings of the ordering report, on hand-written captures of the
shapes real producers write (Debezium's transaction topic for PostgreSQL and MySQL, wal2json, test_decoding,
Maxwell), on the bundled samples, and against the per-event oracle (tests/transaction_oracle.py) on
generated histories."""

from __future__ import annotations

import json

import pandas as pd
import pytest
import transaction_oracle
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import cdckit
from cdckit.analysis.ordering.catalogue import FINDINGS
from cdckit.analysis.transactions import TRANSACTION_COLUMNS
from cdckit.dialects import registry
from cdckit.frame import COLUMN_NAMES

TXN_FINDINGS = ["incomplete_transactions", "unbegun_transactions", "repeated_begins", "unended_transactions",
                "split_transactions", "misordered_transactions"]

# --------------------------------------------------------------------------- Debezium for PostgreSQL


def pg_change(table: str, txid: int, lsn: int, ident: int, order: int, op: str = "c") -> dict:
    """A Debezium PostgreSQL change value (no schema) of transaction ``txid`` at ``lsn``."""
    row = {"id": ident}
    return {"before": row if op == "d" else None, "after": None if op == "d" else row, "op": op,
            "ts_ms": 1_700_000_000_500 + lsn,
            "source": {"connector": "postgresql", "name": "shop", "db": "shop", "schema": "public", "table": table,
                       "ts_ms": 1_700_000_000_000 + lsn, "txId": txid, "lsn": lsn},
            "transaction": {"id": f"{txid}:{lsn}", "total_order": order, "data_collection_order": order}}


def pg_begin(txid: int, lsn: int) -> dict:
    return {"status": "BEGIN", "id": f"{txid}:{lsn}", "event_count": None, "data_collections": None,
            "ts_ms": 1_700_000_000_000 + lsn}


def pg_end(txid: int, lsn: int, tables: dict[str, int]) -> dict:
    return {"status": "END", "id": f"{txid}:{lsn}", "event_count": sum(tables.values()),
            "data_collections": [{"data_collection": name, "event_count": n} for name, n in tables.items()],
            "ts_ms": 1_700_000_000_000 + lsn}


def kcat_file(tmp_path, records: list[tuple[str, int, int, dict]], name: str = "capture.jsonl"):
    """A kcat JSON Lines file of (topic, partition, offset, value) records."""
    path = tmp_path / name
    path.write_text("".join(json.dumps({"topic": topic, "partition": partition, "offset": offset, "key": None,
                                        "payload": json.dumps(value)}) + "\n"
                            for topic, partition, offset, value in records))
    return path


def order_743(lose_item: bool = False) -> list[tuple[str, int, int, dict]]:
    """Transaction 743 (an order and two items) on the transaction topic and the table topics."""
    items = [("shop.public.order_items", 0, 0, pg_change("order_items", 743, 1020, 1, 2)),
             ("shop.public.order_items", 0, 1, pg_change("order_items", 743, 1030, 2, 3))]
    return [("shop.transaction", 0, 0, pg_begin(743, 1000)),
            ("shop.public.orders", 0, 0, pg_change("orders", 743, 1010, 1, 1)),
            *(items[:1] if lose_item else items),
            ("shop.transaction", 0, 1, pg_end(743, 1100, {"public.orders": 1, "public.order_items": 2}))]


def test_debezium_postgres_ids_differ_by_lsn_and_name_one_transaction(tmp_path):
    events = cdckit.read(kcat_file(tmp_path, order_743()))
    assert events["txn_id"].nunique() == 5  # 743:1000, 743:1010... : only txId names the transaction
    table = cdckit.transactions(events)
    assert table.columns.tolist() == list(TRANSACTION_COLUMNS)
    row = table.iloc[0]
    assert len(table) == 1
    assert (row["txn_id"], row["status"], row["complete"], row["changes"]) == ("743", "complete", True, 3)
    assert row["tables"] == '{"public.order_items":2,"public.orders":1}'
    assert row["declared_changes"] == 3 and row["declared_tables"] == row["tables"]
    assert (row["begin_offset"], row["commit_offset"], row["begins"], row["commits"]) == (0, 1, 1, 1)
    assert row["commit_time"] - row["begin_time"] == pd.Timedelta(milliseconds=100) == row["duration"]
    assert "complete, as declared" in row["detail"]
    report = cdckit.order_report(events)
    assert all(len(report[name]) == 0 for name in TXN_FINDINGS)


def test_a_lost_change_is_missing_and_an_incomplete_transaction_at_its_commit(tmp_path):
    events = cdckit.read(kcat_file(tmp_path, order_743(lose_item=True)))
    row = cdckit.transactions(events).iloc[0]
    assert (row["status"], row["complete"], row["changes"], row["declared_changes"]) == (
        "missing_changes", False, 2, 3)
    assert row["tables"] == '{"public.order_items":1,"public.orders":1}'
    found = cdckit.order_report(events)["incomplete_transactions"]
    assert found[["offset", "op", "count"]].values.tolist() == [[1, "commit", 1]]
    assert found["detail"].iat[0] == ("transaction 743 declares 3 change(s) (public.order_items 2, public.orders 1); "
                                      "the capture holds 2 (public.order_items 1)")


def test_an_undeclared_change_is_extra(tmp_path):
    records = order_743()
    records.insert(3, ("shop.public.payments", 0, 0, pg_change("payments", 743, 1040, 9, 4)))
    events = cdckit.read(kcat_file(tmp_path, records))
    row = cdckit.transactions(events).iloc[0]
    assert (row["status"], row["changes"]) == ("extra_changes", 4)
    found = cdckit.order_report(events)["incomplete_transactions"]
    assert found["count"].tolist() == [-1]
    assert found["detail"].iat[0].endswith("the capture holds 4 (public.payments 1)")


def test_a_redelivered_change_counts_once(tmp_path):
    records = order_743()
    records.insert(4, ("shop.public.order_items", 0, 2, records[3][3]))  # the second item delivered again
    events = cdckit.read(kcat_file(tmp_path, records))
    row = cdckit.transactions(events).iloc[0]
    assert (row["status"], row["changes"], row["redelivered"]) == ("complete", 3, 1)
    assert "1 change(s) delivered again" in row["detail"]


def test_a_restarted_begin_is_a_repeated_begin(tmp_path):
    records = order_743()
    # Debezium restarted after the order: BEGIN again, the order again, then the items
    records[2:2] = [("shop.transaction", 0, 1, pg_begin(743, 1000)),
                    ("shop.public.orders", 0, 1, pg_change("orders", 743, 1010, 1, 1))]
    records[-1] = ("shop.transaction", 0, 2, records[-1][3])
    events = cdckit.read(kcat_file(tmp_path, records))
    row = cdckit.transactions(events).iloc[0]
    assert (row["status"], row["begins"], row["redelivered"], row["changes"]) == ("complete", 2, 1, 3)
    found = cdckit.order_report(events)["repeated_begins"]
    assert found[["offset", "other_offset"]].values.tolist() == [[1, 0]]
    assert "begins again here" in found["detail"].iat[0]


def test_a_cut_capture_leaves_the_last_transaction_without_commit(tmp_path):
    records = [*order_743(), ("shop.transaction", 0, 2, pg_begin(744, 2000)),
               ("shop.public.orders", 0, 1, pg_change("orders", 744, 2010, 2, 1))]
    events = cdckit.read(kcat_file(tmp_path, records))
    table = cdckit.transactions(events)
    assert table[["txn_id", "status"]].values.tolist() == [["743", "complete"], ["744", "no_commit"]]
    assert table["commit_offset"].isna().tolist() == [False, True]
    assert pd.isna(table["duration"].iat[1])
    report = cdckit.order_report(events)
    assert report["open_transactions"]["offset"].tolist() == [2]
    assert len(report["unended_transactions"]) == 0  # it has a BEGIN: open_transactions says it


def test_a_capture_begun_mid_transaction_has_an_end_without_begin(tmp_path):
    records = [*order_743()[1:], ("shop.transaction", 0, 2, pg_begin(744, 2000)),
               ("shop.public.orders", 0, 1, pg_change("orders", 744, 2010, 2, 1)),
               ("shop.transaction", 0, 3, pg_end(744, 2100, {"public.orders": 1}))]
    events = cdckit.read(kcat_file(tmp_path, records))
    table = cdckit.transactions(events)
    # the END declares its count and the capture holds it all: complete, its missing BEGIN only a finding
    assert table[["txn_id", "status", "begins"]].values.tolist() == [["743", "complete", 0], ["744", "complete", 1]]
    assert table["begin_offset"].iat[0] == 0 and table["begin_source"].iat[0] == str(tmp_path / "capture.jsonl")
    found = cdckit.order_report(events)["unbegun_transactions"]
    assert found[["offset", "op"]].values.tolist() == [[1, "commit"]]


def test_changes_whose_transaction_records_were_not_captured(tmp_path):
    changes = [r for r in order_743() if r[0] != "shop.transaction"]
    table = cdckit.transactions(cdckit.read(kcat_file(tmp_path, changes)))
    assert table[["status", "changes"]].values.tolist() == [["undeclared", 3]]
    assert pd.isna(table["complete"].iat[0])
    assert (table["begin_seq"].iat[0], table["commit_seq"].iat[0]) == (f"{1010:020d}", f"{1030:020d}")  # its changes
    # beside a transaction whose records were captured, they never end: unended
    other = [("shop.transaction", 1, 0, pg_begin(800, 5000)), ("shop.public.orders", 1, 0,
             pg_change("orders", 800, 5010, 5, 1)), ("shop.transaction", 1, 1, pg_end(800, 5100, {"public.orders": 1}))]
    events = cdckit.read(kcat_file(tmp_path, changes + other))
    table = cdckit.transactions(events)
    assert table.set_index("txn_id")["status"].to_dict() == {"743": "no_commit", "800": "complete"}
    found = cdckit.order_report(events)["unended_transactions"]
    assert found[["table", "count"]].values.tolist() == [["public.orders", 3]]


def test_a_transaction_split_over_partitions_and_misordered_in_one(tmp_path):
    records = order_743()
    # the items in two partitions of their topic; the order's topic holds a later change of it first
    records[3] = ("shop.public.order_items", 1, 0, records[3][3])
    records[1:2] = [("shop.public.orders", 0, 0, pg_change("orders", 743, 1050, 1, 5, op="u")),
                    ("shop.public.orders", 0, 1, records[1][3])]
    records[-1][3]["event_count"] = 4
    records[-1][3]["data_collections"][0]["event_count"] = 2
    events = cdckit.read(kcat_file(tmp_path, records))
    row = cdckit.transactions(events).iloc[0]
    assert (row["status"], row["places"], row["misordered"]) == ("complete", 2, 1)
    report = cdckit.order_report(events)
    split = report["split_transactions"]
    assert split[["partition", "count"]].values.tolist() == [[0, 2]]
    assert "lie in 2 partitions (0, 1)" in split["detail"].iat[0]
    misordered = report["misordered_transactions"]
    assert misordered[["offset", "other_offset", "table"]].values.tolist() == [[1, 0, "public.orders"]]


# --------------------------------------------------------------------------- Debezium for MySQL (GTIDs)

GTID = "3e11fa47-71ca-11e1-9e33-c80aa9429562"


def mysql_change(table: str, gno: int, pos: int, ident: int) -> dict:
    return {"before": None, "after": {"id": ident}, "op": "c", "ts_ms": 1_700_000_001_000,
            "source": {"connector": "mysql", "name": "shop", "db": "inventory", "table": table, "server_id": 1,
                       "gtid": f"{GTID}:{gno}", "file": "mysql-bin.000003", "pos": pos, "row": 0,
                       "ts_ms": 1_700_000_000_000},
            "transaction": {"id": f"{GTID}:{gno}", "total_order": 1, "data_collection_order": 1}}


def test_debezium_mysql_gtid_ids_name_transactions_whole(tmp_path):
    records = [("shop.transaction", 0, 0, {"status": "BEGIN", "id": f"{GTID}:23", "event_count": None}),
               ("shop.inventory.customers", 0, 0, mysql_change("customers", 23, 154, 1)),
               ("shop.transaction", 0, 1, {"status": "END", "id": f"{GTID}:23", "event_count": 1,
                                           "data_collections": [{"data_collection": "inventory.customers",
                                                                 "event_count": 1}]}),
               ("shop.transaction", 0, 2, {"status": "BEGIN", "id": f"{GTID}:24", "event_count": None}),
               ("shop.inventory.customers", 0, 1, mysql_change("customers", 24, 400, 2))]
    table = cdckit.transactions(cdckit.read(kcat_file(tmp_path, records)))
    assert table[["txn_id", "status", "changes"]].values.tolist() == [
        [f"{GTID}:23", "complete", 1], [f"{GTID}:24", "no_commit", 1]]


# --------------------------------------------------------------------------- wal2json and test_decoding

def w2j(action: str, xid: int | None, lsn: str, ident: int = 0) -> str:
    value = {"action": action, "timestamp": "2026-11-26 23:53:11.816929+00", "lsn": lsn}
    if xid is not None:
        value["xid"] = xid
    if action in ("I", "U", "D"):
        value.update(schema="public", table="p", columns=[{"name": "id", "type": "integer", "value": ident}],
                     pk=[{"name": "id", "type": "integer"}])
    return json.dumps(value)


@pytest.mark.parametrize("xids", [True, False])
def test_wal2json_v2_frames_transactions_with_and_without_xids(xids):
    x = (lambda n: n) if xids else (lambda n: None)
    lines = [w2j("I", x(742), "0/10", 1), w2j("C", x(742), "0/20"),  # the capture began inside 742
             w2j("B", x(743), "0/30"), w2j("I", x(743), "0/38", 2), w2j("I", x(743), "0/40", 3),
             w2j("C", x(743), "0/30"),
             w2j("B", x(744), "0/50"), w2j("I", x(744), "0/58", 4)]  # and ends inside 744
    events = cdckit.read(lines, dialect="wal2json")
    table = cdckit.transactions(events)
    assert table[["status", "changes", "begins", "commits"]].values.tolist() == [
        ["no_begin", 1, 0, 1], ["complete", 2, 1, 1], ["no_commit", 1, 1, 0]]
    assert table["txn_id"].tolist() == (["742", "743", "744"] if xids else [pd.NA] * 3)
    report = cdckit.order_report(events)
    assert report["unbegun_transactions"]["offset"].tolist() == [1]
    assert report["open_transactions"]["offset"].tolist() == [6]


def test_test_decoding_with_and_without_xids():
    with_xids = "\n".join(["BEGIN 734", "table public.p: INSERT: id[integer]:1", "COMMIT 734",
                           "BEGIN 735", "table public.p: INSERT: id[integer]:2",
                           "table public.q: INSERT: id[integer]:3"])
    table = cdckit.transactions(cdckit.read(with_xids, dialect="pg_test_decoding"))
    assert table[["txn_id", "status", "tables"]].values.tolist() == [
        ["734", "complete", '{"public.p":1}'], ["735", "no_commit", '{"public.p":1,"public.q":1}']]
    plain = "\n".join(["table public.p: INSERT: id[integer]:0", "COMMIT",
                       "BEGIN", "table public.p: INSERT: id[integer]:1", "COMMIT",
                       "BEGIN", "COMMIT"])
    table = cdckit.transactions(cdckit.read(plain, dialect="pg_test_decoding"))
    assert table[["status", "changes"]].values.tolist() == [["no_begin", 1], ["complete", 1], ["complete", 0]]
    assert table["txn_id"].isna().all()


# --------------------------------------------------------------------------- Maxwell


def maxwell(xid: int, pos: int, xoffset: int | None, ident: int, commit: bool = False) -> str:
    value = {"database": "shop", "table": "items", "type": "insert", "ts": 1_700_000_000, "xid": xid,
             "position": f"mysql-bin.000004:{pos}", "data": {"id": ident}, "primary_key_columns": ["id"]}
    if xoffset is not None:
        value["xoffset"] = xoffset
    if commit:
        value["commit"] = True
    return json.dumps(value)


def test_maxwell_xoffsets_and_commit_rows():
    lines = [maxwell(90, 100, 0, 1), maxwell(90, 100, 1, 2), maxwell(90, 100, None, 3, commit=True),
             maxwell(91, 200, 1, 4), maxwell(91, 200, None, 5, commit=True),  # xoffset 0 lost
             maxwell(92, 300, 0, 6)]  # cut: no commit row
    assert registry.transaction_places()["maxwell"] == r":(\d+)$" and registry.transaction_ends()["maxwell"] == ":~$"
    events = cdckit.read(lines, dialect="maxwell")
    table = cdckit.transactions(events)
    assert table[["txn_id", "status", "changes", "begins", "commits"]].values.tolist() == [
        ["90", "complete", 3, 0, 1], ["91", "missing_changes", 2, 0, 1], ["92", "no_commit", 1, 0, 0]]
    assert table["commit_offset"].tolist()[:2] == [2, 4]
    assert "1 of its declared places hold no change" in table["detail"].iat[1]
    report = cdckit.order_report(events)
    assert report["incomplete_transactions"][["offset", "count"]].values.tolist() == [[4, 1]]
    assert report["unended_transactions"][["offset", "count"]].values.tolist() == [[5, 1]]
    assert len(report["unbegun_transactions"]) == 0  # Maxwell writes no begins


def test_maxwell_rows_without_position_are_undeclared():
    line = json.dumps({"database": "shop", "table": "items", "type": "insert", "ts": 1_700_000_000, "xid": 7,
                       "commit": True, "data": {"id": 1}})
    events = cdckit.read([maxwell(90, 100, None, 3, commit=True), line], dialect="maxwell")
    assert cdckit.transactions(events).set_index("txn_id")["status"].to_dict() == {"90": "complete", "7": "undeclared"}


# --------------------------------------------------------------------------- frames and samples


def test_empty_frames_and_captures_without_transactions_give_the_columns():
    events = cdckit.read(cdckit.samples.path("universe"))
    for frame in (events, events.iloc[:0]):
        table = cdckit.transactions(frame)
        assert table.empty and table.dtypes.astype(str).to_dict() == TRANSACTION_COLUMNS


def test_several_reads_concatenated():
    first = cdckit.read(cdckit.samples.path("wal2json/examples"))
    table = cdckit.transactions(pd.concat([first, cdckit.read(cdckit.samples.path("maxwell/examples"))]))
    assert table["dialect"].value_counts().to_dict() == {"wal2json": 16, "maxwell": 6}
    twice = cdckit.transactions(pd.concat([first, first]))
    assert len(twice) == 16 and (twice["begins"] == 2).all() and (twice["status"] == "complete").all()
    assert (twice["changes"] == cdckit.transactions(first)["changes"]).all()


@pytest.mark.parametrize("name", [n for n in cdckit.samples.list() if not cdckit.samples.is_framed(n)])
def test_every_sample_gives_a_sane_table(name):
    events = cdckit.read(cdckit.samples.path(name))
    table = cdckit.transactions(events)
    assert table.columns.tolist() == list(TRANSACTION_COLUMNS)
    assert (table["changes"] >= 0).all() and (table["misordered"] == 0).all()
    dialect = name.split("/")[0]
    if dialect in ("wal2json", "pg_test_decoding") and events["op"].isin(["begin", "commit"]).any():
        assert (table["status"] == "complete").all(), table["detail"].tolist()
    if not events["op"].isin(["begin", "commit"]).any() and dialect != "maxwell":
        assert (table["status"] == "undeclared").all()
    # every change with a transaction id is in exactly one transaction
    named = events["op"].isin(["insert", "update", "delete", "read", "truncate"]) & events["txn_id"].notna()
    assert table["changes"].sum() + table["redelivered"].sum() >= named.sum()


def test_the_catalogue_has_the_transaction_findings():
    assert [FINDINGS[n].severity for n in TXN_FINDINGS] == ["error", "warning", "warning", "warning", "info",
                                                             "warning"]


# --------------------------------------------------------------------------- the oracle, on generated histories

DIALECT_SHAPES = ["debezium", "wal2json", "wal2json_plain", "maxwell", "canal"]


@st.composite
def histories(draw):
    """A capture of transactions in one dialect's shape: cut, damaged, shuffled, redelivered, partitioned."""
    shape = draw(st.sampled_from(DIALECT_SHAPES))
    dialect = "wal2json" if shape == "wal2json_plain" else shape
    rows = []
    lsn = 100
    for number in range(draw(st.integers(1, 5))):
        txid = 700 + number
        size = draw(st.integers(0, 4))
        tables = [draw(st.sampled_from(["orders", "items"])) for _ in range(size)]
        name = None if shape == "wal2json_plain" else (f"{txid}" if shape != "debezium" else None)
        if shape in ("debezium", "wal2json", "wal2json_plain"):
            ident = f"{txid}:{lsn}" if shape == "debezium" else name
            rows.append({"op": "begin", "txn_id": ident, "seq": None if shape == "debezium" else f"{lsn:08d}"})
        for place, table in enumerate(tables):
            lsn += 10
            seq = f"{lsn:08d}"
            if shape == "maxwell":
                seq = f"bin.1:{txid:020d}:" + ("~" if place == size - 1 else f"{place:020d}")
            ident = f"{txid}:{lsn}" if shape == "debezium" else name
            if shape in ("maxwell", "canal"):
                ident = str(txid)
            rows.append({"op": "insert", "table": table, "seq": seq, "txn_id": ident, "key": f"[{lsn}]",
                         "after": json.dumps({"id": lsn})})
        if shape in ("debezium", "wal2json", "wal2json_plain"):
            lsn += 10
            declared = None
            if shape == "debezium":
                counts = {f"public.{t}": tables.count(t) for t in sorted(set(tables))}
                declared = json.dumps({"event_count": size, "data_collections": counts}, separators=(",", ":"))
            rows.append({"op": "commit", "txn_id": f"{txid}:{lsn}" if shape == "debezium" else name,
                         "seq": None if shape == "debezium" else f"{lsn:08d}", "after": declared})
    # damage: drop some, restart some (a row again later), shuffle neighbours, split over partitions
    kept = [r for r in rows if not draw(st.booleans()) or draw(st.integers(0, 4))]
    for index in draw(st.lists(st.integers(0, max(len(kept) - 1, 0)), max_size=3)):
        if kept:
            kept.insert(min(index + draw(st.integers(1, 3)), len(kept)), dict(kept[index]))
    for index in draw(st.lists(st.integers(0, max(len(kept) - 2, 0)), max_size=3)):
        if len(kept) > 1:
            kept[index], kept[index + 1] = kept[index + 1], kept[index]
    partitions = draw(st.sampled_from([None, 1, 2]))
    frame = []
    offsets: dict = {}
    for row in kept:
        partition = None if partitions is None else draw(st.integers(0, partitions))
        offsets[partition] = offsets.get(partition, -1) + 1
        frame.append({**{c: None for c in COLUMN_NAMES}, "dialect": dialect, "source": "s", "database": "public",
                      "partition": partition, "offset": offsets[partition],
                      "event_time": pd.Timestamp(1_700_000_000 + len(frame), unit="s", tz="UTC"), **row})
    events = pd.DataFrame(frame, columns=COLUMN_NAMES)
    events["offset"] = events["offset"].astype("int64")
    events["partition"] = events["partition"].astype("Int64")
    events["event_time"] = pd.to_datetime(events["event_time"], utc=True)
    events["table"] = events["table"].where(events["table"].notna(), None)
    events.loc[events["table"].isna(), "database"] = None
    return events


def without_detail(frame: pd.DataFrame) -> list[dict]:
    return frame.drop(columns="detail").astype(object).where(frame.drop(columns="detail").notna(), None).to_dict(
        "records")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(histories())
def test_the_table_and_the_findings_match_the_oracle(events):
    got = cdckit.transactions(events)
    want = transaction_oracle.transactions(events)
    assert without_detail(got) == want.astype(object).where(want.notna(), None).to_dict("records")
    report = cdckit.order_report(events)
    oracle_rows = transaction_oracle.findings(events)
    for name in TXN_FINDINGS:
        mine = report[name]
        theirs = cdckit.analysis.ordering.report.OrderReport({name: oracle_rows[oracle_rows["finding"] == name]})[name]
        assert mine.astype(object).where(mine.notna(), None).to_dict("records") == theirs.astype(object).where(
            theirs.notna(), None).to_dict("records"), name
