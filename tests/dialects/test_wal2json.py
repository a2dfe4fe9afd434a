"""wal2json: the real captures decoded exactly (format-version 1 and 2, with and without options), seq in commit
order, key columns remembered, partial updates merged, exact numbers, round trips, shop, bad input, detection."""

from __future__ import annotations

import json
from decimal import Decimal

from validator import assert_quarantined, assert_round_trip, assert_rows, assert_shop, read_clean, row, rows

import cdckit
from cdckit.dialects import registry

P = dict(database="public", schema="public", table="p")
FULL_T = dict(database="public", schema="public", table="full_t")
NOPK = dict(database="public", schema="public", table="nopk")
TOASTY = dict(database="public", schema="public", table="toasty")
COLUMNS = ["id", "name", "n", "r", "d", "ts", "tsn", "dt", "b", "j", "js", "a", "ta", "f", "u", "v", "Odd Col"]
#: Row 1 of public.p as inserted: every type, read as the contract says.
ROW1 = {"id": 1, "name": "a'b \"q\" \\ x\nline2", "n": "12345678901234567890.1234567890", "r": 1.5, "d": 0.1,
        "ts": "2024-01-02 01:04:05.123456+00", "tsn": "2024-01-02 03:04:05", "dt": "2024-01-02", "b": "AP8=",
        "j": '{"k": [1, 2]}', "js": '[1, "x"]', "a": [1, None, 3], "ta": ["a b", "c,d", None, 'e"f'], "f": True,
        "u": "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", "v": "short", "Odd Col": "ü€"}
BIG = "<9600 characters trimmed>"


def nulls(id_: int, **given) -> dict:
    """A row of public.p with every column but id NULL (NaN and -Infinity are written as null too)."""
    return {c: None for c in COLUMNS} | {"id": id_} | given


def at(day_time: str) -> str:
    return f"2026-11-26T{day_time}Z"


def lsn(text: str) -> str:
    high, low = text.split("/")
    return f"{int(high, 16):08X}/{int(low, 16):08X}"


def sample(name: str):
    return read_clean(cdckit.samples.path(f"wal2json/{name}.jsonl"))


# ---------------------------------------------------------------- format-version 2, every event by hand


def v2_txn(offset: int, xid: int, time: str, commit: str, *changes: tuple) -> list[dict]:
    """B, the changes ``(op, op_raw, own lsn, fields)``, C; offsets from ``offset`` on."""
    common = dict(event_time=at(time), txn_id=str(xid))
    out = [row(offset, "begin", "B", seq=f"{lsn(commit)}/00000000/00000000", **common)]
    for number, (op, op_raw, own, fields) in enumerate(changes, 1):
        out.append(row(offset + number, op, op_raw, seq=f"{lsn(commit)}/{lsn(own)}", **common, **fields))
    out.append(row(offset + len(changes) + 1, "commit", "C", seq=f"{lsn(commit)}/FFFFFFFF/FFFFFFFF", **common))
    return out


def keyed(key: int, before: dict | None = None, after: dict | None = None, **table) -> dict:
    return dict(**(table or P), key_columns=["id"], key=[key], before=before, after=after)


V2_EXPECTED = [
    *v2_txn(0, 743, "23:53:11.816929", "0/1951530", ("insert", "I", "0/1951358", keyed(1, after=ROW1))),
    *v2_txn(3, 744, "23:53:11.817693", "0/19515F8", ("insert", "I", "0/1951560", keyed(2, after=nulls(2)))),
    *v2_txn(6, 745, "23:53:11.818812", "0/19516B0", ("insert", "I", "0/1951628", keyed(3, after=nulls(3)))),
    *v2_txn(9, 746, "23:53:11.8203", "0/19518F0",
            ("update", "U", "0/19516E0", keyed(1, before={"id": 1}, after=ROW1 | {"name": "changed", "n": -0.5})),
            ("update", "U", "0/1951808", keyed(30, before={"id": 3}, after=nulls(30))),
            ("delete", "D", "0/19518A8", keyed(2, before={"id": 2}))),
    *v2_txn(14, 747, "23:53:11.821123", "0/1951A00",
            ("insert", "I", "0/1951920", keyed(1, after={"id": 1, "a": None, "b": 5}, **FULL_T))),
    *v2_txn(17, 748, "23:53:11.821806", "0/1951A88",
            ("update", "U", "0/1951A30", keyed(1, before={"id": 1, "a": None, "b": 5},
                                               after={"id": 1, "a": None, "b": 6}, **FULL_T))),
    *v2_txn(20, 749, "23:53:11.823002", "0/1951B00",
            ("delete", "D", "0/1951AB8", keyed(1, before={"id": 1, "a": None, "b": 6}, **FULL_T))),
    *v2_txn(23, 750, "23:53:11.825162", "0/1951B70", ("insert", "I", "0/1951B30", dict(**NOPK, after={"x": 1, "y": None}))),
    *v2_txn(26, 751, "23:53:11.825791", "0/1951BE8"),  # UPDATE of a table without identity: not written
    *v2_txn(28, 752, "23:53:11.830294", "0/19545B8",
            ("insert", "I", "0/19544C0", keyed(1, after={"id": 1, "note": "first", "big": BIG}, **TOASTY))),
    *v2_txn(31, 753, "23:53:11.831189", "0/1954680",  # the unchanged TOASTed column is left out
            ("update", "U", "0/1954620", keyed(1, before={"id": 1}, after={"id": 1, "note": "second"}, **TOASTY))),
    *v2_txn(34, 754, "23:53:11.836723", "0/1954F10", ("truncate", "T", "0/1954EE0", NOPK)),
    *v2_txn(37, 755, "23:53:11.840334", "0/19550B0",
            ("other", "M", "0/1955070", dict(after={"prefix": "cdckit", "content": "in a transaction",
                                                    "transactional": True})),
            ("insert", "I", "0/1955070", dict(**NOPK, after={"x": 2, "y": "z"}))),
    row(41, "other", "M", seq=lsn("0/1955130"),
        after={"prefix": "cdckit", "content": "outside any transaction", "transactional": False}),
    *v2_txn(42, 756, "23:53:11.845093", "0/1956528"),  # CREATE TABLE: DDL is not decoded
    # two interleaved transactions: 758 commits first though 757 wrote first
    *v2_txn(44, 758, "23:53:11.86351", "0/1956820", ("insert", "I", "0/1956790", keyed(21, after=nulls(21, name="B only")))),
    *v2_txn(47, 757, "23:53:11.864743", "0/19568E0",
            ("insert", "I", "0/1956700", keyed(20, after=nulls(20, name="A first"))),
            ("insert", "I", "0/1956850", keyed(22, after=nulls(22, name="A second")))),
]


def test_v2_examples_decode_exactly():
    events = sample("examples")
    assert_rows(events, V2_EXPECTED)
    assert events["seq"].is_monotonic_increasing  # commit order, although 757's first change has a lower LSN


def test_v2_without_options_has_no_transaction_seq_xid_time_or_key():
    events = sample("examples_v2_plain")
    assert "begin" not in set(events["op"])
    assert events[["seq", "txn_id", "event_time", "key_columns"]].isna().all().all()
    want = [e for e in V2_EXPECTED if e["op"] not in ("begin", "commit")]
    assert rows(events, ["op", "op_raw", "table", "before", "after"]) == \
        [{k: (json.loads(json.dumps(e[k])) if k in ("before", "after") else e[k])
          for k in ("op", "op_raw", "table", "before", "after")} for e in want]


# ---------------------------------------------------------------- format-version 1


def v1_txn(offset: int, xid: int, time: str, nextlsn: str, *changes: tuple) -> list[dict]:
    """begin, the changes ``(op, op_raw, fields)`` numbered from 1, commit; all of one message."""
    common = dict(event_time=at(time), txn_id=str(xid))
    base = lsn(nextlsn)
    out = [row(offset, "begin", "begin", seq=f"{base}/0000000000", **common)]
    for number, (op, op_raw, fields) in enumerate(changes, 1):
        out.append(row(offset, op, op_raw, seq=f"{base}/{number:010d}", **common, **fields))
    out.append(row(offset, "commit", "commit", seq=f"{base}/9999999999", **common))
    return out


def keyless(before: dict | None = None, after: dict | None = None, **table) -> dict:
    return dict(**table, before=before, after=after)


V1_EXPECTED = [
    *v1_txn(0, 743, "23:53:11.816929", "0/1951560", ("insert", "insert", keyed(1, after=ROW1))),
    *v1_txn(1, 744, "23:53:11.817693", "0/1951628", ("insert", "insert", keyed(2, after=nulls(2)))),
    *v1_txn(2, 745, "23:53:11.818812", "0/19516E0", ("insert", "insert", keyed(3, after=nulls(3)))),
    *v1_txn(3, 746, "23:53:11.8203", "0/1951920",
            ("update", "update", keyed(1, before={"id": 1}, after=ROW1 | {"name": "changed", "n": -0.5})),
            ("update", "update", keyed(30, before={"id": 3}, after=nulls(30))),
            ("delete", "delete", keyed(2, before={"id": 2}))),
    # REPLICA IDENTITY FULL: no pk written (none seen before either), the old row without its NULL columns
    *v1_txn(4, 747, "23:53:11.821123", "0/1951A30", ("insert", "insert", keyless(after={"id": 1, "a": None, "b": 5}, **FULL_T))),
    *v1_txn(5, 748, "23:53:11.821806", "0/1951AB8",
            ("update", "update", keyless({"id": 1, "b": 5}, {"id": 1, "a": None, "b": 6}, **FULL_T))),
    *v1_txn(6, 749, "23:53:11.823002", "0/1951B30", ("delete", "delete", keyless({"id": 1, "b": 6}, **FULL_T))),
    *v1_txn(7, 750, "23:53:11.825162", "0/1951BA0", ("insert", "insert", keyless(after={"x": 1, "y": None}, **NOPK))),
    *v1_txn(8, 751, "23:53:11.825791", "0/1951C18"),
    *v1_txn(9, 752, "23:53:11.830294", "0/19545E8",
            ("insert", "insert", keyed(1, after={"id": 1, "note": "first", "big": BIG}, **TOASTY))),
    *v1_txn(10, 753, "23:53:11.831189", "0/19546B0",
            ("update", "update", keyed(1, before={"id": 1}, after={"id": 1, "note": "second"}, **TOASTY))),
    *v1_txn(11, 754, "23:53:11.836723", "0/1955020"),  # TRUNCATE: format-version 1 writes no change
    *v1_txn(12, 755, "23:53:11.840334", "0/19550E0",
            ("other", "message", dict(after={"transactional": True, "prefix": "cdckit", "content": "in a transaction"})),
            ("insert", "insert", keyless(after={"x": 2, "y": "z"}, **NOPK))),
    *v1_txn(13, 756, "23:53:11.845093", "0/19566C0"),
    *v1_txn(14, 758, "23:53:11.86351", "0/1956850", ("insert", "insert", keyed(21, after=nulls(21, name="B only")))),
    *v1_txn(15, 757, "23:53:11.864743", "0/1956910",
            ("insert", "insert", keyed(20, after=nulls(20, name="A first"))),
            ("insert", "insert", keyed(22, after=nulls(22, name="A second")))),
]


def test_v1_examples_decode_exactly():
    events = sample("examples_v1")
    assert_rows(events, V1_EXPECTED)
    assert events["seq"].is_monotonic_increasing


def test_v1_without_options_gives_the_same_changes_without_seq_xid_time_or_key():
    events = sample("examples_v1_plain")
    assert events[["seq", "txn_id", "event_time", "key_columns", "key"]].isna().all().all()
    fields = ["offset", "op", "op_raw", "table", "before", "after"]
    assert rows(events, fields) == rows(sample("examples_v1"), fields)


def test_both_formats_give_the_same_changes_and_the_same_state():
    v1, v2 = sample("examples_v1"), sample("examples")
    v2 = v2[(v2["op"] != "truncate") & (v2["offset"] != 41)]  # v1 writes no truncate; its message 41 is not JSON
    fields = ["op", "database", "schema", "table", "txn_id", "event_time", "after"]
    assert rows(v1, fields) == rows(v2, fields)
    assert (v1["op"] == "begin").sum() == (v2["op"] == "begin").sum() == 16


def test_the_v1_non_transactional_message_wal2json_writes_is_not_json_and_is_quarantined():
    # real output of wal2json 2.5, format-version 1: pg_logical_emit_message(false, 'cdckit', '...')
    raw = '{"change":[,{"kind":"message","transactional":false,"prefix":"cdckit","content":"outside any transaction"}]}'
    events = cdckit.read([raw], dialect="wal2json")
    assert events.empty and len(cdckit.quarantine(events)) == 1
    # the same message as JSON: an other event without begin and commit
    fixed = json.loads(raw.replace("[,", "["))
    got = rows(read_clean([json.dumps(fixed)], dialect="wal2json"))
    assert [(e["op"], e["op_raw"], e["after"]) for e in got] == \
        [("other", "message", {"transactional": False, "prefix": "cdckit", "content": "outside any transaction"})]


# ---------------------------------------------------------------- values, keys, order


def test_numeric_keeps_every_digit_end_to_end():
    text = ('{"action":"I","xid":1,"lsn":"0/10","schema":"s","table":"t","columns":['
            '{"name":"id","type":"integer","value":1},'
            '{"name":"n","type":"numeric(38,10)","value":12345678901234567890.1234567890},'
            '{"name":"m","type":"numeric","value":0.1000000000000000055511},'
            '{"name":"big","type":"bigint","value":9223372036854775807},'
            '{"name":"short","type":"numeric(10,2)","value":12.50}],"pk":[{"name":"id","type":"integer"}]}')
    events = read_clean([text], dialect="wal2json")
    assert events.loc[0, "after"] == ('{"id":1,"n":"12345678901234567890.1234567890","m":"0.1000000000000000055511",'
                                      '"big":9223372036854775807,"short":12.5}')
    assert cdckit.materialize(events, typed=False)["s.t"].loc[0, "n"] == "12345678901234567890.1234567890"
    assert cdckit.materialize(events)["s.t"].loc[0, "n"] == Decimal("12345678901234567890.1234567890")  # decimal128
    encoded = [cdckit.values.dumps(r.value) for r in registry.create("wal2json").encode(events)]
    assert '"value":12345678901234567890.1234567890}' in encoded[0]  # written back as the same bare number


def test_text_and_json_forms_of_a_datum_give_one_value():
    from cdckit.dialects import postgres

    for text, wal2json_value, type_name in [
        ("\\x00ff", "00ff", "bytea"), ("t", True, "boolean"), ("1.5", 1.5, "real"), ("42", 42, "bigint"),
        ("12345678901234567890.1234567890", "12345678901234567890.1234567890", "numeric(38,10)"),
        ("{1,NULL,3}", "{1,NULL,3}", "integer[]"), ('{"\\\\x01",NULL}', '{"\\\\x01",NULL}', "bytea[]"),
        ("2024-01-02 01:04:05+00", "2024-01-02 01:04:05+00", "timestamp with time zone"),
    ]:
        assert postgres.value_from_text(text, type_name) == postgres.value_from_json(wal2json_value, type_name)


def interleaved() -> list[str]:
    """Two transactions as format-version 2 writes them: 20 begins first, 21 commits first."""
    def msg(action, xid, lsn_, **more):
        return json.dumps({"action": action, "xid": xid, "lsn": lsn_, **more})

    def ins(xid, lsn_, id_):
        return msg("I", xid, lsn_, schema="s", table="t", columns=[{"name": "id", "type": "integer", "value": id_}],
                   pk=[{"name": "id", "type": "integer"}])

    return [msg("B", 21, "0/300"), ins(21, "0/200", 2), msg("C", 21, "0/300"),
            msg("B", 20, "0/400"), ins(20, "0/100", 1), ins(20, "0/350", 3), msg("C", 20, "0/400")]


def test_seq_sorts_interleaved_transactions_in_commit_order():
    events = read_clean(interleaved(), dialect="wal2json")
    assert events["seq"].tolist() == [
        "00000000/00000300/00000000/00000000", "00000000/00000300/00000000/00000200",
        "00000000/00000300/FFFFFFFF/FFFFFFFF", "00000000/00000400/00000000/00000000",
        "00000000/00000400/00000000/00000100", "00000000/00000400/00000000/00000350",
        "00000000/00000400/FFFFFFFF/FFFFFFFF"]
    assert events["seq"].is_monotonic_increasing
    # a change without a preceding B (include-transaction off) has its own LSN
    alone = read_clean(interleaved()[4:5], dialect="wal2json")
    assert alone["seq"].tolist() == ["00000000/00000100"]


def test_a_change_of_another_transaction_than_the_open_b_uses_its_own_lsn():
    lines = interleaved()
    events = read_clean([lines[0], lines[4]], dialect="wal2json")  # B of 21, a change of 20
    assert events["seq"].tolist()[1] == "00000000/00000100"


def test_pk_is_remembered_per_table_and_an_empty_pk_means_no_key():
    pk = {"pknames": ["id"], "pktypes": ["integer"]}

    def change(kind, values_, with_pk):
        c = {"kind": kind, "schema": "s", "table": "t", "columnnames": ["id", "x"],
             "columntypes": ["integer", "text"], "columnvalues": values_}
        return c | ({"pk": pk} if with_pk else {})

    messages = [{"xid": 1, "change": [change("insert", [1, "a"], True)]},
                {"xid": 2, "change": [change("update", [1, "b"], False),
                                      {"kind": "delete", "schema": "s", "table": "t",
                                       "oldkeys": {"keynames": ["id", "x"], "keytypes": ["integer", "text"],
                                                   "keyvalues": [1, "b"]}}]},
                {"xid": 3, "change": [change("insert", [5, "c"], False) | {"table": "other"}]}]
    events = read_clean([json.dumps(m) for m in messages], dialect="wal2json")
    changes = events[~events["op"].isin(["begin", "commit"])]
    assert [(e["key_columns"], e["key"]) for e in rows(changes)] == \
        [(["id"], [1]), (["id"], [1]), (["id"], [1]), (None, None)]
    empty = {"action": "I", "schema": "s", "table": "t", "columns": [{"name": "id", "type": "integer", "value": 1}],
             "pk": []}
    assert read_clean([json.dumps(empty)], dialect="wal2json")["key_columns"].tolist() == [None]


def test_partial_updates_merge_unchanged_toast_columns():
    assert registry.get("wal2json").partial_updates and registry.get("wal2json").whole_files
    state = cdckit.materialize(sample("examples"))
    assert state["public.toasty"].to_dict("records") == [{"id": 1, "note": "second", "big": BIG}]
    assert sorted(state["public.p"]["id"].tolist()) == [1, 20, 21, 22, 30]
    assert state["public.nopk"].to_dict("records") == [{"x": 2, "y": "z"}]  # truncated, then one more insert
    for name in ("examples_v1", "examples"):
        toasty = cdckit.materialize(sample(name))["public.toasty"]
        assert toasty.loc[0, "big"] == BIG


def test_column_types_are_declared():
    declared = cdckit.column_types_of(sample("examples"))
    p = declared[declared["table"] == "public.p"].set_index("column")
    assert p.loc["n", "type"] == "numeric(38,10)" and p.loc["n", "kind"] == "decimal"
    assert p.loc["ts", "kind"] == "timestamp" and p.loc["b", "kind"] == "binary" and p.loc["a", "kind"] == "json"
    assert len(p) == 17  # declared once although 7 messages name the table's columns


# ---------------------------------------------------------------- round trip, shop, encoder


def test_round_trip_v2_plain(tmp_path):
    assert_round_trip("wal2json", sample("examples_v2_plain"), tmp_path)


def test_round_trip_of_v1_as_v2(tmp_path):
    # format-version 1 is written as format-version 2: the seq (nextlsn and change numbers) is not an LSN
    # a change has, and format-version 2 names what it does by action letters
    assert_round_trip("wal2json", sample("examples_v1"), tmp_path, ignore=("seq", "op_raw"))


def test_shop():
    def what_wal2json_says(truth: dict) -> dict:
        return dict(truth, schema=truth["database"], emit_time=None)

    events = assert_shop("wal2json", what_wal2json_says,
                         fields=("op", "database", "schema", "table", "key_columns", "key", "before", "after",
                                 "event_time", "emit_time", "txn_id"))
    assert set(events["op"]) == {"insert", "update", "delete"}


def test_encoder_writes_declared_types_and_wal2json_values():
    records = [r.value for r in registry.create("wal2json").encode(sample("examples"))]
    insert = records[1]
    assert {c["name"]: (c["type"], c["value"]) for c in insert["columns"]}["b"] == ("bytea", "00ff")
    assert {c["name"]: c["value"] for c in insert["columns"]}["ta"] == '{"a b","c,d",NULL,"e\\"f"}'
    assert insert["lsn"] == "0/1951358" and records[0]["lsn"] == records[2]["lsn"] == "0/1951530"
    assert records[41] == {"action": "M", "lsn": "0/1955130", "transactional": False, "prefix": "cdckit",
                           "content": "outside any transaction"}


# ---------------------------------------------------------------- detection, bad input


def test_detect_steals_nothing():
    wal2json = registry.create("wal2json")
    assert wal2json.detect({"action": "insert", "data": {}}) is None
    assert wal2json.detect({"change": [{"kind": "insert"}], "database": "x"}) is None
    assert wal2json.detect({"type": "INSERT", "data": [{}]}) is None


def test_bare_begin_and_commit_of_default_options_are_wal2json():
    # format-version 2 with default options writes a transaction's B and C with no other field; a capture of
    # mostly such transactions (changes filtered out, or no replica identity for a delete) is still wal2json
    lines = ['{"action":"B"}', '{"action":"C"}'] * 3
    lines[3:3] = ['{"action":"I","schema":"s","table":"t","columns":[{"name":"id","type":"integer","value":7}]}']
    assert cdckit.detect("\n".join(lines)).dialect == "wal2json"
    events = read_clean("\n".join(lines))
    assert events["op"].tolist() == ["begin", "commit", "begin", "insert", "commit", "begin", "commit"]
    assert registry.create("wal2json").detect({"action": "I"}) is None
    assert registry.create("wal2json").detect({"action": "B", "data": 1}) is None


def test_bad_messages_are_quarantined(tmp_path):
    good = '{"action":"I","schema":"s","table":"t","columns":[{"name":"id","type":"integer","value":1}]}'
    assert_quarantined("wal2json", good, [
        ('{"action":"X"}', "unknown action 'X'"),
        ('{"action":"I","lsn":"nope","schema":"s","table":"t","columns":[]}', "lsn is not an LSN"),
        ('{"action":"I","schema":"s","table":"t","columns":[{"name":"id"}]}', "columns is not a list of"),
        ('{"action":"I","schema":"s","table":"t"}', "columns is missing"),
        ('{"xid":1,"change":[{"kind":"insert","schema":"s","table":"t","columnnames":["a"],"columntypes":[],'
         '"columnvalues":[1]}]}', "1 names, 0 types and 1 values"),
        ('{"xid":1,"change":[{"kind":"nope"}]}', "unknown change kind 'nope'"),
        ('{"xid":1,"change":{}}', "change is not a list"),
        ('{"xid":1,"timestamp":"yesterday","change":[]}', "'yesterday' is not a time"),
        ('{"xid":[1],"change":[]}', "xid is neither"),
        ('{"nothing":1}', "neither change"),
        ('[1]', "expected a wal2json message as a JSON object"),
    ], tmp_path)


# ---------------------------------------------------------------- every digit, every PostgreSQL time form, typed

#: PostgreSQL's text output of each time type, and the value the typed state holds for it
#: (None: it fits no typed column and stays as PostgreSQL printed it).
TIME_FORMS = [
    ("timestamp with time zone", "1900-06-01 08:29:08-03:30:52", "1900-06-01T12:00:00Z"),  # LMT offset, seconds
    ("timestamp with time zone", "2024-01-02 03:04:05.123456+05:30", "2024-01-01T21:34:05.123456Z"),
    ("timestamp with time zone", "2024-01-02 03:04:05+02", "2024-01-02T01:04:05Z"),
    ("timestamp with time zone", "1500-01-01 00:00:00+00", "1500-01-01T00:00:00Z"),  # before pandas' ns range
    ("timestamp with time zone", "2400-01-01 00:00:00.5+00", "2400-01-01T00:00:00.5Z"),  # after it
    ("timestamp with time zone", "10000-01-01 00:00:00+00", None),
    ("timestamp with time zone", "0044-03-15 12:00:00+00 BC", None),
    ("timestamp with time zone", "infinity", None),
    ("timestamp with time zone", "-infinity", None),
    ("timestamp without time zone", "2024-01-02 03:04:05.1", "2024-01-02T03:04:05.1Z"),
    ("timestamp without time zone", "1200-02-29 00:00:00", "1200-02-29T00:00:00Z"),
    ("date", "2024-02-29", "2024-02-29"),
    ("date", "1000-01-01", "1000-01-01"),
    ("date", "10000-01-01", None),
    ("date", "0001-01-01 BC", None),
    ("date", "infinity", None),
    ("time without time zone", "12:34:56.789", "12:34:56.789"),
    ("time without time zone", "24:00:00", None),
    ("time with time zone", "12:34:56.789+05:30", "12:34:56.789+05:30"),  # PostgreSQL's plugins: kept as text
]


def _typed_forms_capture() -> str:
    big = "9" * 990 + "." + "1234567890"  # numeric(1000,10) at its limit, a bare JSON number
    columns = [{"name": "id", "type": "integer", "value": 1}, {"name": "n", "type": "numeric(1000,10)", "value": 0},
               {"name": "u", "type": "numeric", "value": 0}]
    columns += [{"name": f"c{i}", "type": t, "value": v} for i, (t, v, _) in enumerate(TIME_FORMS)]
    line = json.dumps({"action": "I", "xid": 1, "lsn": "0/10", "schema": "s", "table": "t", "columns": columns,
                       "pk": [{"name": "id", "type": "integer"}]})
    line = line.replace('"value": 0}', f'"value": {big}}}', 1).replace('"value": 0}', '"value": -' + "7" * 5000 + "}", 1)
    return line


def test_long_numbers_and_every_time_form_reach_typed_state():
    import datetime as dt

    import pandas as pd

    events = read_clean(_typed_forms_capture(), dialect="wal2json")
    after = json.loads(events.loc[0, "after"])
    assert after["n"] == "9" * 990 + ".1234567890" and after["u"] == "-" + "7" * 5000
    states = cdckit.materialize(events)
    state = states["s.t"]
    assert Decimal(str(state.loc[0, "n"])) == Decimal("9" * 990 + ".1234567890")
    assert Decimal(str(state.loc[0, "u"])) == Decimal("-" + "7" * 5000)
    misfits = set(states.type_problems["column"])
    for i, (kind, text, typed) in enumerate(TIME_FORMS):
        cell = state.loc[0, f"c{i}"]
        if typed is None:
            assert cell == text and f"c{i}" in misfits, (kind, text, cell)  # kept as captured, and reported
        elif kind.startswith("timestamp"):
            assert cell == pd.Timestamp(typed), (kind, text, cell)
        elif kind == "date":
            assert cell == dt.date.fromisoformat(typed), (kind, text, cell)
        elif kind.startswith("time without"):
            assert cell == dt.time.fromisoformat(typed), (kind, text, cell)
        else:
            assert cell == typed, (kind, text, cell)
