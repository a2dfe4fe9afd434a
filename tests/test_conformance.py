"""What every registered dialect must do, checked for each name of ``cdckit.dialects.names()``.

A dialect added to the registry (by cdckit or by a plugin) gets these tests
without a line of its own; ``tests/dialects/test_<name>.py`` keeps only its
quirks (the spec's examples spelled out, special fields).

- detection: each of its samples is detected as itself, with evidence;
- round trip: encode -> write -> read gives its shop and examples back;
- shop: the committed shop files are what its encoder writes, and the shop
  sample replays to the scenario's final state;
- fast path: the batch decoder (``decode_lines``) gives what the message
  decoder gives, and a file reads the same with or without it;
- fuzzing: its samples, damaged, never make ``cdckit.read`` raise and every
  message is accounted for (messages = decoded + quarantined + skipped).
"""

from __future__ import annotations

import json

import fuzzing
import pandas as pd
import pyarrow.parquet as pq
import pytest
from dialect_messages import (
    converted_values,
    every_sample_event,
    expected_rows,
    given_rows,
    kafka_frames,
    messages_for,
    sample_messages,
)
from test_fuzz import assert_clean
from validator import assert_round_trip, read_clean

import cdckit
from cdckit.dialects import registry
from cdckit.samples.build import build_shop
from cdckit.samples.shop import shop_events

NAMES = cdckit.dialects.names()
WRITABLE = [name for name in NAMES if registry.get(name).can_encode()]
FAST = [name for name in NAMES if registry.get(name).has_line_decoder]
#: Every dialect whose messages are JSON (UniVerse and test_decoding write text lines) and stand alone:
#: a ``whole_files`` dialect's message depends on the ones before it (wal2json's changes take their commit
#: LSN from the transaction's BEGIN), so a batch decoder could not be checked message by message as here.
JSON_DIALECTS = [name for name in NAMES if registry.get(name).layout != "text" and not registry.get(name).whole_files]

#: Fields of the examples a round trip cannot bring back, and why (every other field must come back).
EXAMPLES_ROUND_TRIP_LOSES = {
    # a row without __op (__deleted=...) comes back with the __op the encoder writes
    "debezium_flat": ("op_raw",),
}
#: Dialects whose examples are not round-tripped whole, and why.
EXAMPLES_NOT_ROUND_TRIPPED = {
    "debezium_mongodb": "its examples hold partial updates (updateDescription), which the encoder writes whole",
}


def samples_of(name: str) -> list[str]:
    """The bundled samples of a dialect (``"<name>/<file>"``); a dialect without samples fails the test."""
    found = [  # a capture of framed records is bytes until read with its schemas: tests/test_binary_records.py
        sample
        for sample in cdckit.samples.list()
        if sample.split("/")[0] == name and not cdckit.samples.is_framed(sample)
    ]
    assert found, f"dialect {name!r} ships no samples: add cdckit/samples/data/{name}/examples.* and shop.*"
    return found


def shop_samples(name: str) -> list[str]:
    """The dialect's shop files (several when it has several layouts)."""
    found = [sample for sample in samples_of(name) if sample.split("/")[1].startswith("shop.")]
    assert found, f"dialect {name!r} has no shop sample"
    return found


# ---------------------------------------------------------------- detection


@pytest.mark.parametrize("name", NAMES)
def test_every_sample_is_detected_as_its_own_dialect(name):
    wrong = {}
    for sample in samples_of(name):
        detection = cdckit.detect(cdckit.samples.path(sample))
        assert detection.evidence, sample
        assert 0 < detection.confidence <= 1, sample
        if detection.dialect != name:
            wrong[sample] = (detection.dialect, dict(detection.scores))
    assert not wrong, f"misdetected samples (detected, scores): {wrong}"


# ---------------------------------------------------------------- round trip


@pytest.mark.parametrize("name", WRITABLE)
def test_round_trip_of_the_shop(name, tmp_path):
    for sample in shop_samples(name):
        assert_round_trip(name, read_clean(cdckit.samples.path(sample)), tmp_path)


@pytest.mark.parametrize("name", WRITABLE)
def test_round_trip_of_the_examples(name, tmp_path):
    if name in EXAMPLES_NOT_ROUND_TRIPPED:
        pytest.skip(EXAMPLES_NOT_ROUND_TRIPPED[name])
    examples = read_clean(cdckit.samples.path(name))
    assert_round_trip(name, examples, tmp_path, ignore=EXAMPLES_ROUND_TRIP_LOSES.get(name, ()))


# ---------------------------------------------------------------- shop


@pytest.mark.parametrize("name", WRITABLE)
def test_committed_shop_files_are_what_the_encoder_writes(name, tmp_path):
    written = build_shop(tmp_path, [name])
    assert written, "no shop files were written"
    for path in written:
        committed = cdckit.samples.DATA / path.relative_to(tmp_path)
        assert committed.exists(), f"{committed} is not committed; run make samples"
        if path.suffix == ".parquet":
            assert pq.read_table(path).equals(pq.read_table(committed)), committed
        else:
            assert path.read_bytes() == committed.read_bytes(), f"{committed} is stale; run make samples"


#: Dialects whose shop state differs from the scenario's in one stated way: null written as an empty value.
NULL_AS_EMPTY = {
    "universe": "a UniVerse record has no null: an empty field stands for it",
}


def state_rows(state: pd.DataFrame, columns: list[str], null: str | None = None) -> list[str]:
    """A table state's rows, sorted, on ``columns``, values as text (dialects that carry text compare equal);
    a missing value as ``null``."""
    frame = state.reindex(columns=columns).astype(object)
    records = frame.where(frame.notna(), null).to_dict("records")
    return sorted(json.dumps({c: None if v is None else str(v) for c, v in row.items()}, sort_keys=True)
                  for row in records)


@pytest.mark.parametrize("name", WRITABLE)  # the shop files are written by the dialect's encoder
def test_shop_replays_to_the_scenario_state(name):
    """The shop sample, read, has the scenario's ops and replays to its final tables.

    Only the scenario's changes and columns are compared: a dialect may add its own events (transaction
    markers) and columns (a document's ``_id``, or the columns of every table that DataHub's Tuple rows
    carry, null).
    """
    truth = shop_events()
    want = cdckit.materialize(truth, typed=False)
    null = "" if name in NULL_AS_EMPTY else None
    for sample in shop_samples(name):
        events = read_clean(cdckit.samples.path(sample))
        changes = events[events["op"].isin(set(truth["op"]))]
        assert changes["op"].tolist() == truth["op"].tolist(), sample
        got = cdckit.materialize(events, typed=False)
        assert got.problems.empty, f"{sample}:\n{got.problems.to_string()}"
        assert sorted(got) == sorted(want), sample
        for table, state in want.items():
            columns = list(state.columns)
            assert state_rows(got[table], columns) == state_rows(state, columns, null), f"{sample}: {table}"


# ---------------------------------------------------------------- fast path


def test_every_dialect_whose_messages_are_json_has_a_batch_decoder():
    assert set(JSON_DIALECTS) <= set(FAST), f"no batch decoder: {sorted(set(JSON_DIALECTS) - set(FAST))}"


@pytest.mark.parametrize("name", JSON_DIALECTS)
def test_batch_decoder_equals_the_message_decoder(name):
    """On the samples, conversions into the dialect and mutations of them (shapes a fast path declines)."""
    dialect = registry.create(name)
    lines = messages_for(name)
    results = dialect.decode_lines(lines)
    assert len(results) == len(lines)
    usual = len(sample_messages(name)) + len(converted_values(name))
    handled = 0
    for number, (line, result) in enumerate(zip(lines, results)):
        if result is None or result == []:
            continue
        handled += number < usual
        expected = expected_rows(dialect, line)
        assert expected is not None, f"the batch decoder took a message decode() refuses: {line[:300]!r}"
        assert given_rows(result) == expected, line[:300]  # images too, character for character
    assert handled >= usual * 0.5, f"the batch decoder handed back {usual - handled} of {usual} usual messages"


def read_both_ways(path, name, monkeypatch) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``path`` read as ``name`` with the batch decoder, then without; reports and quarantines equal."""
    fast = cdckit.read(path, dialect=name)
    monkeypatch.setattr(registry.get(name), "has_line_decoder", False)
    slow = cdckit.read(path, dialect=name)
    monkeypatch.undo()
    assert fast.attrs["report"] == slow.attrs["report"]
    assert cdckit.quarantine(fast).drop(columns="raw").equals(cdckit.quarantine(slow).drop(columns="raw"))
    return fast, slow


@pytest.mark.parametrize("name", FAST)
def test_a_file_reads_the_same_with_or_without_the_batch_decoder(name, tmp_path, monkeypatch):
    path = tmp_path / "capture.jsonl"
    lines = sample_messages(name)
    path.write_bytes(b"\n".join(lines[:3] + [b"", b'{"broken": '] + lines[3:]) + b"\n")
    fast, slow = read_both_ways(path, name, monkeypatch)
    columns = [c for c in fast.columns if c not in ("key", "before", "after")]
    assert fast[columns].equals(slow[columns])
    for column in ("key", "before", "after"):
        assert [None if pd.isna(v) else json.loads(v) for v in fast[column]] == \
               [None if pd.isna(v) else json.loads(v) for v in slow[column]]


LAYOUTS = ["jsonl", "kcat", "kafka frames", "json array", "pretty json"]


@pytest.mark.parametrize("name", JSON_DIALECTS)
def test_every_layout_reads_the_same_with_or_without_the_batch_decoder(name, tmp_path, monkeypatch):
    records = cdckit.convert(every_sample_event().head(400), name).records
    for layout in LAYOUTS:
        path = tmp_path / f"{layout.replace(' ', '_')}.jsonl"
        if layout == "kafka frames":
            kafka_frames(records, path)
        elif layout == "json array":
            path.write_text(json.dumps([record.value for record in records], indent=1))
        elif layout == "pretty json":  # one indented value after another, as jq or a log pretty-printer writes them
            path.write_text("\n".join(json.dumps(record.value, indent=2) for record in records))
        else:
            cdckit.io.write_messages(records, path, layout)
        with open(path, "a") as out:  # damage after good messages: quarantined, the rest kept
            out.write('{"topic": "t", "partition": 0, "offset": 9, "payload": "{\\"broken\\": "}\n{"broken": \n')
        fast, slow = read_both_ways(path, name, monkeypatch)
        assert len(fast) >= len(records) // 2, layout
        pd.testing.assert_frame_equal(fast, slow, obj=layout)  # images and keys text for text
        if registry.get(name).uses_kafka_key and layout in ("kcat", "kafka frames"):
            assert fast["key_columns"].notna().any(), f"{layout}: the Kafka keys' columns were lost"


# ---------------------------------------------------------------- fuzzing


@pytest.mark.parametrize("name", NAMES)
def test_every_sample_survives_its_mutations(name):
    for sample in samples_of(name):
        for number in range(2):
            case = fuzzing.case_for_seed(sample, number)
            assert_clean(case, fuzzing.check(case), f"fuzzing.check(fuzzing.case_for_seed({sample!r}, {number}))")
