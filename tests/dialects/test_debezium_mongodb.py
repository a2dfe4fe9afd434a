"""Debezium's MongoDB connector: the documentation's events decoded exactly, partial updates, round trips, shop."""

from __future__ import annotations

import json

import pandas as pd
from validator import assert_round_trip, assert_rows, assert_shop, read_clean, row, rows

import cdckit
from cdckit.dialects import registry

ANNE = {"_id": 1004, "first_name": "Anne", "last_name": "Kretchmar", "email": "annek@noanswer.org"}
KEY = {"key_columns": ["_id"], "key": [1004]}


def at(ord_: int, ms: int) -> dict:
    """The seq and event time of a change at source ``ts_ms`` ``ms`` and ``ord`` ``ord_``."""
    return {"seq": f"{ms:020d}:{ord_:020d}", "event_time": ms}


def expected(offset, op, op_raw, ms, ord_, **fields):
    place = at(ord_, ms)
    when = pd.Timestamp(place["event_time"], unit="ms", tz="UTC").isoformat().replace("+00:00", "Z")
    return row(offset, op, op_raw, database="inventory", table=fields.pop("table", "customers"), event_time=when,
               seq=place["seq"], **fields)


def test_examples_decode_exactly():
    events = read_clean(cdckit.samples.path("debezium_mongodb/examples.jsonl"))
    assert set(events["dialect"]) == {"debezium_mongodb"}
    assert_rows(events, [
        expected(0, "insert", "c", 1558965508000, 31, emit_time="2019-05-27T13:58:35.240Z", after=ANNE, **KEY),
        expected(1, "update", "u", 1558965508001, 1, emit_time="2016-06-09T16:57:41.815Z",
                 before=dict(ANNE, first_name="unknown"), after=dict(ANNE, first_name="Anne Marie"), **KEY),
        # an update description alone: a partial image, $numberLong and $date made plain, the removed field null
        expected(2, "update", "u", 1558965509000, 2, emit_time="2016-06-09T16:57:41.816Z",
                 after={"_id": 1004, "email": "anne@example.com", "visits": 3, "seen": "2019-05-27T13:58:29.000Z",
                        "last_name": None}, **KEY),
        # an older connector's $set/$unset patch
        expected(3, "update", "u", 1558965510000, 3, emit_time="2016-06-09T16:57:41.817Z",
                 after={"_id": 1004, "first_name": "Anna", "email": None}, **KEY),
        expected(4, "delete", "d", 1558965511000, 4, emit_time="2016-06-09T18:04:22.115Z", before={"_id": 1004},
                 **KEY),
        row(5, "tombstone", "null", **KEY),
        expected(6, "read", "r", 1558965512000, 5, table="products", emit_time="2019-05-27T13:58:35.241Z",
                 key_columns=["_id"], key=["596e275826f08b2730779e1f"],
                 after={"_id": "596e275826f08b2730779e1f", "price": 19.99, "photo": "AAEC", "tags": ["a", "b"]}),
    ])


def test_partial_updates_merge_onto_the_document_in_replay():
    events = read_clean(cdckit.samples.path("debezium_mongodb/examples.jsonl"))
    before_delete = events[events["offset"] < 4]
    state = cdckit.materialize(before_delete, typed=False)["inventory.customers"]
    assert state.astype(object).where(state.notna(), None).to_dict("records") == [
        {"_id": 1004, "first_name": "Anna", "last_name": None, "email": None, "visits": 3,
         "seen": "2019-05-27T13:58:29.000Z"}]
    # typed (the default): the extended-JSON date, ISO text in the image, is inferred a UTC timestamp
    typed = cdckit.materialize(before_delete)["inventory.customers"]
    assert typed.loc[0, "seen"] == pd.Timestamp("2019-05-27 13:58:29", tz="UTC") and typed.loc[0, "visits"] == 3
    assert cdckit.materialize(events)["inventory.customers"].empty  # then deleted


def test_read_as_plain_debezium_the_documents_decode_the_same():
    path = cdckit.samples.path("debezium_mongodb/examples.jsonl")
    fields = ["op", "database", "table", "key", "before", "after", "seq"]
    plain, own = read_clean(path, dialect="debezium"), read_clean(path)
    changes = own["op"] != "tombstone"  # a tombstone is only a key: plain Debezium cannot tell it is MongoDB's
    assert rows(plain[changes], fields) == rows(own[changes], fields)
    assert cdckit.detect(path).dialect == "debezium_mongodb"


def test_extended_json_values_become_plain_values():
    doc = {"_id": {"$oid": "5d505646cf6d4fe581014ab2"}, "n": {"$numberInt": "7"}, "big": {"$numberLong": "9007199254740993"},
           "d": {"$numberDouble": "2.5"}, "nan": {"$numberDouble": "NaN"}, "dec": {"$numberDecimal": "0.1000000000000000055511151231257827"},
           "at": {"$date": {"$numberLong": "-1000"}}, "iso": {"$date": "2020-01-01T00:00:00Z"},
           "legacy": {"$binary": "AAEC", "$type": "00"}, "u": {"$uuid": "3b241101-e2bb-4255-8caf-4136c566a962"},
           "nested": {"a": [{"$numberLong": "1"}, {"b": {"$oid": "ff"}}]}, "money": {"$currency": "EUR"}}
    msg = {"op": "c", "after": json.dumps(doc), "source": {"connector": "mongodb", "db": "d", "collection": "c"}}
    after = json.loads(read_clean([json.dumps(msg)])["after"].iloc[0])
    assert after == {"_id": "5d505646cf6d4fe581014ab2", "n": 7, "big": 9007199254740993, "d": 2.5, "nan": "NaN",
                     "dec": "0.1000000000000000055511151231257827", "at": "1969-12-31T23:59:59.000Z",
                     "iso": "2020-01-01T00:00:00Z", "legacy": "AAEC", "u": "3b241101-e2bb-4255-8caf-4136c566a962",
                     "nested": {"a": [1, {"b": "ff"}]}, "money": {"$currency": "EUR"}}


def test_bad_documents_are_quarantined_with_the_reason():
    good = {"op": "c", "after": json.dumps({"_id": 1}), "source": {"connector": "mongodb", "collection": "c"}}
    bad = [dict(good, after="{not json"), dict(good, op="u", after=None),
           dict(good, op="d", after=None, before=None), dict(good, after=json.dumps([1, 2]))]
    events = cdckit.read([json.dumps(m) for m in [good, *bad]], dialect="debezium_mongodb")
    assert len(events) == 1
    reasons = list(cdckit.quarantine(events)["reason"])
    assert reasons[0].startswith("after is not extended JSON")
    assert reasons[1] == "update with neither a document, an updateDescription nor a patch"
    assert reasons[2].startswith("delete without a document")
    assert "after" in reasons[3] and "object" in reasons[3]


def test_round_trip_examples(tmp_path):
    events = read_clean(cdckit.samples.path("debezium_mongodb/examples.jsonl"))
    full = events[events["offset"].isin([0, 1, 6])]  # whole documents (a partial update is written whole)
    assert_round_trip("debezium_mongodb", full, tmp_path)


def as_documents(truth: dict) -> dict:
    """The scenario's row as the MongoDB connector carries it: ``_id`` (the key) first in every document."""
    ident = truth["key"][0] if len(truth["key"]) == 1 else truth["key"]
    for image in ("before", "after"):
        if truth[image] is not None:
            truth[image] = {"_id": ident, **truth[image]}
    return dict(truth, key_columns=["_id"], key=[ident])


def test_shop():
    assert_shop("debezium_mongodb", transform=as_documents)


def test_is_a_partial_update_dialect_of_the_debezium_family():
    cls = registry.get("debezium_mongodb")
    assert cls.partial_updates and issubclass(cls, registry.get("debezium"))
