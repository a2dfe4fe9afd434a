"""UniVerse change files: the spec's lines decoded exactly, both encodings, round trips, shop, quirks, bad input."""

from __future__ import annotations

import json

import pytest
from validator import assert_round_trip, assert_rows, assert_shop, read_clean, row, rows

import cdckit
from cdckit.dialects import registry
from cdckit.frame import Event
from cdckit.frame_builders import FrameBuilder
from cdckit.samples.shop import shop_events

# The spec's example line, as the gist prints it (þ = char 254, ý = char 253).
SPEC_BOB = "src=cssþns=CONTRACTSþts_ms=1550549470126þuid=12345678þop=uþdata=ý_id=1234ýname=Bobýþ"
SPEC_SIMON = "src=cssþns=CONTRACTSþts_ms=1550549470126þuid=12345678þop=uþdata=ý_id=1234ýname=Simonýþ"


def css(offset, op, op_raw, table, time, uid, **fields):
    return row(offset, op, op_raw, database="css", table=table, event_time=time, seq=uid, key_columns=["_id"],
               **fields)


# Both sample files hold the same six lines; every value is text.
EXAMPLES = [
    css(0, "update", "u", "CONTRACTS", "2019-02-19T04:11:10.126000Z", "00000000000012345678", key=["1234"],
        after={"_id": "1234", "name": "Bob"}),
    css(1, "update", "u", "CONTRACTS", "2019-02-19T04:11:10.126000Z", "00000000000012345678", key=["1234"],
        after={"_id": "1234", "name": "Simon"}),
    css(2, "read", "r", "CUSTOMERS", "2019-02-19T04:11:11Z", "00000000000012345679", key=["C-0042"],
        after={"_id": "C-0042", "name": "Renée Dubois", "city": "Montréal", "status": "ACTIVE"}),
    css(3, "insert", "c", "CONTRACTS", "2019-02-19T04:11:12.500000Z", "00000000000012345680", key=["1235"],
        after={"_id": "1235", "name": "Zoé Étienne", "rule": "TOTAL=QTY*PRICE", "amount": "1500.00", "note": ""}),
    css(4, "update", "u", "CONTRACTS", "2019-02-19T04:11:13Z", "00000000000012345681", key=["1235"],
        after={"_id": "1235", "rule": "TOTAL=QTY*PRICE*0.9"}),
    css(5, "delete", "d", "CONTRACTS", "2019-02-19T04:11:14.250000Z", "00000000000012345682", key=["1234"],
        before={"_id": "1234", "name": "Simon"}),
]


def one(line: str) -> dict:
    """The single event of one line, read as universe (images and key parsed, times as ISO text)."""
    events = read_clean([line], dialect="universe")
    assert len(events) == 1
    return rows(events)[0]


# ---------------------------------------------------------------- the spec's examples


def test_latin1_examples_decode_exactly():
    path = cdckit.samples.path("universe/examples.txt")
    data = path.read_bytes()
    assert b"\xfe" in data and b"\xfd" in data and b"\xc3" not in data  # one byte per mark: Latin-1
    assert_rows(read_clean(path), EXAMPLES)


def test_utf8_examples_decode_the_same():
    path = cdckit.samples.path("universe/examples_utf8.txt")
    data = path.read_bytes()
    assert b"\xc3\xbe" in data and b"\xc3\xbd" in data  # þ and ý as two bytes each: UTF-8
    assert_rows(read_clean(path), EXAMPLES)


def test_bytes_payloads_in_either_encoding():
    latin = read_clean(SPEC_BOB.encode("latin-1"))
    utf8 = read_clean(SPEC_BOB.encode("utf-8"))
    assert_rows(latin, EXAMPLES[:1])
    assert_rows(utf8, EXAMPLES[:1])


def test_round_trip_utf8(tmp_path):
    assert_round_trip("universe", read_clean(cdckit.samples.path("universe/examples_utf8.txt")), tmp_path)


def test_round_trip_through_a_latin1_file(tmp_path):
    events = read_clean(cdckit.samples.path("universe/examples_utf8.txt"))
    again = assert_round_trip("universe", events, tmp_path, layout="text")
    path = tmp_path / "capture.latin-1.txt"
    cdckit.io.write_messages(registry.create("universe").encode(again), path, "text")
    assert b"\xfe" in path.read_bytes()
    assert_rows(read_clean(path), EXAMPLES)


# ---------------------------------------------------------------- shop


def as_universe(true_row):
    """What a UniVerse change file can say of one shop event."""
    image = true_row["before"] if true_row["op"] == "delete" else true_row["after"]
    # _id is the record key; the composite order_items key is written as its parts joined by '*'
    ident = "*".join(str(part) for part in true_row["key"])
    # the format has no types: numbers arrive as text and a SQL NULL as the empty string
    data = {"_id": ident}
    data.update({name: "" if value is None else str(value) for name, value in image.items()})
    deleted = true_row["op"] == "delete"
    return dict(
        true_row,
        key_columns=["_id"],
        key=[ident],
        # an update carries no before image; a delete carries its data as the before image
        before=data if deleted else None,
        after=None if deleted else data,
        # the format has no emit time and no transaction id
        emit_time=None,
        txn_id=None,
    )


def test_shop():
    assert_shop("universe", transform=as_universe)


def test_shop_file_is_utf8_text_in_the_line_layout():
    data = cdckit.samples.path("universe/shop.txt").read_bytes()
    first = data.decode("utf-8").split("\n")[0]
    assert first == ("src=shopþns=customersþts_ms=1714554000000þuid=1þop=cþdata=ý_id=1ýid=1ýname=Adaý"
                     "email=customer1@example.comýtier=bronzeýbalance=161.92ýnote=ýþ")
    assert data.endswith(b"\xc3\xbe\n")


# ---------------------------------------------------------------- detection


def test_detects_both_sample_files():
    for name in ("universe/examples.txt", "universe/examples_utf8.txt", "universe/shop.txt"):
        detection = cdckit.detect(cdckit.samples.path(name))
        assert detection.dialect == "universe"
        assert detection.confidence == 0.95
        assert {"þ-separated fields", "op=u", "data"} <= set(detection.evidence)
        assert detection.runner_up is None  # no other dialect claims a þ-separated text line


def test_detect_is_cheap_and_claims_nothing_else():
    universe = registry.create("universe")
    match = universe.detect(SPEC_BOB)
    assert (match.score, match.evidence) == (0.95, ("þ-separated fields", "op=u", "data"))
    assert universe.detect("op=cþ").evidence == ("þ-separated fields", "op=c")
    assert universe.detect("src=cssþns=Xþ").score < 0.5  # þ fields, but neither op nor data: weak
    debezium = {"op": "c", "after": {"id": 1}, "source": {"connector": "mysql"}}
    maxwell = {"database": "d", "table": "t", "type": "insert", "ts": 1, "data": {"id": 1}}
    for value in (debezium, maxwell, "op=cdata=ýa=1ý", "{\"op\": \"c\"}", None, 1, [], b"\xfe"):
        assert universe.detect(value) is None


# ---------------------------------------------------------------- quirks


def test_split_on_the_first_equals_sign():
    event = one("src=a=bþns=Tþop=cþdata=ý_id=k=1ýformula==x+1ýurl=http://h/?a=1&b=2ýþ")
    assert event["database"] == "a=b"
    assert event["after"] == {"_id": "k=1", "formula": "=x+1", "url": "http://h/?a=1&b=2"}
    assert event["key"] == ["k=1"]


def test_id_is_the_key_even_when_missing():
    event = one("ns=Tþop=cþdata=ýname=Bobýþ")
    assert event["key_columns"] == ["_id"]
    assert event["key"] is None
    assert event["after"] == {"name": "Bob"}


def test_op_codes():
    ops = [(code, one(f"ns=Tþop={code}þdata=ý_id=1ýþ")) for code in ("r", "c", "u", "d")]
    assert [(code, e["op"], e["op_raw"]) for code, e in ops] == [
        ("r", "read", "r"), ("c", "insert", "c"), ("u", "update", "u"), ("d", "delete", "d")]


def test_fields_map_to_canonical_columns():
    event = one("src=cssþns=CONTRACTSþts_ms=1550549470126þuid=9þop=cþdata=ý_id=1ýþ")
    assert (event["database"], event["schema"], event["table"]) == ("css", None, "CONTRACTS")
    assert event["event_time"] == "2019-02-19T04:11:10.126000Z"
    assert (event["emit_time"], event["txn_id"], event["ddl"]) == (None, None, None)
    assert event["seq"] == "00000000000000000009"  # uid zero-padded: uid 9 sorts before uid 10
    assert event["seq"] < one("op=cþuid=10þdata=ý_id=1ýþ")["seq"] == "00000000000000000010"


def test_update_carries_only_the_changed_columns_and_no_before():
    event = one("src=cssþns=CONTRACTSþuid=5þop=uþdata=ý_id=1234ýname=Bobýþ")
    assert event["after"] == {"_id": "1234", "name": "Bob"}
    assert event["before"] is None


def test_delete_data_is_the_before_image():
    event = one("ns=Tþop=dþdata=ý_id=7ýname=Bobýþ")
    assert event["before"] == {"_id": "7", "name": "Bob"}
    assert event["after"] is None
    assert event["key"] == ["7"]


def test_values_are_text():
    event = one("ns=Tþop=cþdata=ý_id=0042ýamount=1500.00ýflag=trueýnote=ýþ")
    assert event["after"] == {"_id": "0042", "amount": "1500.00", "flag": "true", "note": ""}


def test_empty_pieces_are_ignored_and_marks_are_optional_at_the_ends():
    with_marks = one("src=cssþns=Tþop=cþdata=ý_id=1ýname=Bobýþ")
    without = one("src=cssþns=Tþop=cþdata=_id=1ýname=Bob")
    doubled = one("þsrc=cssþþns=Tþop=cþdata=ýý_id=1ýýname=Bobýýþþ")
    assert with_marks["after"] == without["after"] == doubled["after"] == {"_id": "1", "name": "Bob"}
    assert one("ns=Tþop=uþdata=þ")["after"] == {}


def test_repeated_uid_keeps_both_lines():
    events = read_clean(SPEC_BOB + "\n" + SPEC_SIMON + "\n")
    assert_rows(events, EXAMPLES[:2])
    report = events.attrs["report"]
    assert (report["messages"], report["events"], report["skipped"]) == (2, 2, {})
    assert "pending" not in report


def test_encoder_writes_the_spec_layout():
    events = read_clean(SPEC_BOB + "\n" + SPEC_SIMON + "\n")
    lines = [record.value for record in registry.create("universe").encode(events)]
    assert lines == [SPEC_BOB, SPEC_SIMON]


def test_encoder_synthesizes_id_and_uid_and_skips_what_a_line_cannot_carry():
    shop = shop_events()
    item = shop[shop["table"] == "order_items"].iloc[:1]
    (record,) = registry.create("universe").encode(item)
    after = json.loads(item["after"].iloc[0])
    assert record.value.startswith("src=shopþns=order_itemsþts_ms=1714554000000þuid=1þop=cþdata="
                                   f"ý_id={after['order_id']}*{after['line_no']}ýorder_id={after['order_id']}ý")

    builder = FrameBuilder()
    kept = Event("insert", "c", table="t", after='{"_id":"1","n":2.5,"ok":true,"x":null}')
    for event in (
        kept,
        Event("ddl", "ddl", table="t", ddl="ALTER TABLE t ADD c INT"),
        Event("tombstone", "null", table="t", key_columns=["_id"], key='["1"]'),
        Event("insert", "c", table="t", after='{"_id":"2","note":"two\\nlines"}'),
        Event("insert", "c", table="t", after='{"_id":"3","note":"a\\u00feb"}'),
        Event("insert", "c", table="t", after='{"_id":"4","a=b":"x"}'),
        Event("delete", "d", table="t"),
        Event("update", "u", table="t", seq="00000000000000000120", after='{"_id":"1","n":3}'),
    ):
        builder.add(event, dialect="x", source="s", offset=len(builder))
    lines = [r.value for r in registry.create("universe").encode(builder.to_pandas())]
    assert lines == ["ns=tþuid=1þop=cþdata=ý_id=1ýn=2.5ýok=1ýx=ýþ", "ns=tþuid=120þop=uþdata=ý_id=1ýn=3ýþ"]


# ---------------------------------------------------------------- bad input

GOOD = "src=cssþns=Tþts_ms=1000þuid=1þop=cþdata=ý_id=1ýname=Bobýþ"


def test_bad_messages_are_quarantined_with_reason():
    messages = [
        GOOD,
        '{"op": "c", "after": {"id": 2',
        '{"database": "d", "table": "t", "type": "insert", "ts": 1, "data": {"id": 1}}',
        "src=cssþns=Tþuid=2þdata=ý_id=2ýþ",
        "src=cssþns=Tþuid=3þop=xþdata=ý_id=3ýþ",
        "src=cssþns=Tþuid=4þop=cþdata=ý_id=4ýnameBobýþ",
        "src=cssþns=Tþuid=5þop=cþ",
        "src=cssþns=Tþts_ms=yesterdayþop=cþdata=ý_id=6ýþ",
        "src=cssþCONTRACTSþop=cþdata=ý_id=7ýþ",
        "hello, world",
        "src=cssþns=Tþop=cþdata=ý=8ýþ",
        GOOD,
    ]
    events = cdckit.read(messages, dialect="universe")
    assert events["offset"].tolist() == [0, 11]
    quarantine = cdckit.quarantine(events)
    assert quarantine["offset"].tolist() == list(range(1, 11))
    assert set(quarantine["source"]) == {"<iterable>"}
    reasons = quarantine["reason"].tolist()
    assert reasons[0].startswith("truncated JSON")
    assert reasons[1].startswith("expected a UniVerse text line, got a JSON object")
    assert reasons[2] == "missing required field op"
    assert reasons[3] == "unknown op 'x'"
    assert reasons[4] == "data pair without '=': 'nameBob'"
    assert reasons[5] == "missing required field data"
    assert reasons[6] == "ts_ms is not epoch milliseconds: 'yesterday'"
    assert reasons[7] == "field without '=': 'CONTRACTS'"
    assert reasons[8] == "not a UniVerse line: no field mark (char 254, þ)"
    assert reasons[9] == "data pair without a column name: '=8'"
    assert quarantine["raw"].tolist()[4] == messages[5]
    assert quarantine["raw"].tolist()[0] == messages[1]
    report = events.attrs["report"]
    assert (report["messages"], report["decoded"], report["events"], report["quarantined"]) == (12, 2, 2, 10)


def test_bad_lines_in_a_latin1_file_are_quarantined_with_line_numbers(tmp_path):
    path = tmp_path / "changes.txt"
    path.write_bytes("\n".join([GOOD, "src=cssþns=Tþop=zþdata=ý_id=1ýþ", "", GOOD, ""]).encode("latin-1"))
    events = cdckit.read(path)
    assert events.attrs["report"]["sources"] == {str(path): "universe"}
    quarantine = cdckit.quarantine(events)
    assert quarantine[["source", "offset", "line", "dialect", "reason"]].values.tolist() == [
        [str(path), 1, 2, "universe", "unknown op 'z'"]]
    assert quarantine["raw"].tolist() == ["src=cssþns=Tþop=zþdata=ý_id=1ýþ"]
    assert events["offset"].tolist() == [0, 2]


def test_errors_raise_names_source_offset_reason_and_keeps_what_was_decoded(tmp_path):
    path = tmp_path / "changes.txt"
    path.write_bytes((GOOD + "\n" + GOOD + "\n" + "src=cssþns=Tþop=cþdata=ý_id=1ýnameý\n" + GOOD + "\n")
                     .encode("latin-1"))
    with pytest.raises(cdckit.DecodeError) as caught:
        cdckit.read(path, dialect="universe", errors="raise")
    err = caught.value
    assert (err.source, err.offset) == (str(path), 2)
    assert str(err) == f"{path}, message 2: data pair without '=': 'name'"
    assert err.raw == "src=cssþns=Tþop=cþdata=ý_id=1ýnameý"
    assert len(err.partial) == 2
    assert err.partial["after"].tolist() == ['{"_id":"1","name":"Bob"}'] * 2
