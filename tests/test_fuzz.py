"""No input makes ``cdckit.read(..., errors="quarantine")`` raise, and every message is accounted for.

A bounded, reproducible run of the fuzzer in tests/fuzzing.py (hypothesis
draws the seeds, derandomized, no shrinking: a seed is not a size), the
failing cases saved in tests/fuzz_cases/ (by tests/fuzz_campaign.py, the long
run) replayed as regression tests, and Spark checked against pandas on fuzzed
files and on a fuzzed Kafka-shaped frame. Each dialect's samples, mutated:
tests/test_conformance.py.

A failure prints the case and the line that reproduces it, e.g.
``fuzzing.check(fuzzing.generate(random.Random(123), "gzip"))``. Set
``CDCKIT_FUZZ_SAVE=tests/fuzz_cases`` to keep the failing cases as files.
"""

from __future__ import annotations

import itertools
import os
import random
from collections import Counter
from pathlib import Path

import fuzzing
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

import cdckit
from cdckit.dialects import registry

#: Cases per family in the bounded run (the whole run stays well under a minute on one core).
EXAMPLES = 50

SETTINGS = settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
                    phases=[Phase.explicit, Phase.generate], suppress_health_check=list(HealthCheck))


def assert_clean(case: fuzzing.Case, problems: list[str], reproduce: str) -> None:
    """Fail with the case, how to reproduce it and its problems (saved when CDCKIT_FUZZ_SAVE names a folder)."""
    if problems and os.environ.get("CDCKIT_FUZZ_SAVE"):
        fuzzing.save(case, problems, os.environ["CDCKIT_FUZZ_SAVE"])
    assert not problems, f"{case.describe()}\nreproduce: {reproduce}\n" + "\n".join(problems)


@pytest.mark.parametrize("family", fuzzing.FAMILIES)
def test_fuzzed_inputs_are_quarantined_never_raised(family):
    generated: Counter[str] = Counter()

    @SETTINGS
    @given(seed=st.integers(0, 2**32 - 1))
    def run(seed: int) -> None:
        case = fuzzing.generate(random.Random(seed), family)
        generated[case.family] += 1
        assert_clean(case, fuzzing.check(case),
                     f"fuzzing.check(fuzzing.generate(random.Random({seed}), {family!r}))")

    run()
    assert set(generated) == {family} and generated[family] >= 1


def nesting(value: object) -> int:
    """How deep dicts are nested under the key "a" (counted without recursion)."""
    depth = 0
    while isinstance(value, dict) and "a" in value:
        value, depth = value["a"], depth + 1
    return depth


def test_the_generators_reach_every_family_dialect_and_python_input():
    cases = [fuzzing.generate(random.Random(seed)) for seed in range(400)]
    assert {c.family for c in cases} == set(fuzzing.FAMILIES)
    assert {c.kind for c in cases} == {"payload_bytes", "payload_str", "file", "directory", "iterable"}
    dialects = {name.split("/")[0] for c in cases for name in c.seeds}
    assert dialects == set(registry.names())
    items = [item for c in cases if c.kind == "iterable" for item in c.data]
    assert any(isinstance(i, fuzzing.KafkaRecord) for i in items)
    assert any(isinstance(i, str) and "\ud800" in i for i in items)
    assert any(isinstance(i, dict) and nesting(i) > 1000 for i in items)
    forced = {c.dialect for c in cases if c.dialect}
    assert len(forced) >= 6  # dialects forced, not only detected


def test_an_unreadable_file_in_a_directory_is_quarantined(tmp_path):
    if fuzzing.running_as_root():
        pytest.skip("running as root: chmod 000 does not stop reading, so there is no unreadable file to test")
    case = fuzzing.Case("directory", "directory", files={"good.jsonl": b'{"op": "c"}\n', "locked.jsonl": b"{}\n"},
                        unreadable=["locked.jsonl"], expected_messages=1, damaged=1)
    assert_clean(case, fuzzing.check(case), "the unreadable-file case of test_fuzz.py")


SAVED = fuzzing.load_cases()


@pytest.mark.parametrize(
    "case",
    [pytest.param(c, id=c.name) for c in SAVED]
    or [pytest.param(None, marks=pytest.mark.skip(reason="no saved cases in tests/fuzz_cases/"))],
)
def test_saved_fuzz_case_is_fixed(case):
    problems = fuzzing.check(case)
    assert not problems, f"{case.describe()}\nonce: {case.saved_problems}\nnow: " + "\n".join(problems)


# ---------------------------------------------------------------- Spark against pandas


def fuzzed_files(folder: Path, count: int = 30) -> list[Path]:
    """``count`` fuzzed JSON Lines, text and gzip captures written into ``folder``."""
    rng = random.Random(20261122)
    families = ["jsonl", "kcat", "text", "gzip", "mixed", "bytes", "seed"]
    paths = []
    for number in range(count):
        case = fuzzing.generate(rng, families[number % len(families)])
        if case.kind == "payload_str":
            data, suffix = fuzzing.encode_str(case.data), ".jsonl"
        elif case.kind == "payload_bytes":
            data, suffix = case.data, ".gz" if case.data[:2] == b"\x1f\x8b" else ".jsonl"
        else:
            (name, data), = case.files.items()
            suffix = "".join(Path(name).suffixes)
        if suffix.removesuffix(".gz") in (".csv", ".parquet", ".tsv"):
            suffix = ".jsonl"
        path = folder / f"{number:02d}-{case.family}{suffix}"
        path.write_bytes(data)
        paths.append(path)
    return paths


TOTALS = ("messages", "decoded", "quarantined", "events")


@pytest.mark.filterwarnings("ignore::UserWarning")  # low-confidence detection of mixed files
def test_spark_read_agrees_with_pandas_on_fuzzed_files(spark, tmp_path):
    from pyspark.sql import functions as F

    from cdckit import spark as cdcspark

    paths = fuzzed_files(tmp_path)
    want = cdckit.read(str(tmp_path))
    want_report = want.attrs["report"]
    want_messages = {str(p): cdckit.read(str(p)).attrs["report"]["messages"] for p in paths}
    want_events = want["source"].value_counts().to_dict()
    want_quarantined = cdckit.quarantine(want)["source"].value_counts().to_dict()

    events = cdcspark.read(spark, str(tmp_path))
    got_report = cdcspark.report(events)
    got_quarantined = {r["source"]: r["count"] for r in cdcspark.quarantine(events).groupBy("source").count().collect()}
    per_source = cdcspark.combined(events).groupBy("source").agg(
        F.sum("_count").alias("messages"),
        F.sum(F.when(F.col("_status") == "event", 1).otherwise(0)).alias("events")).collect()

    assert {k: got_report[k] for k in TOTALS} == {k: want_report[k] for k in TOTALS}
    assert {r["source"]: r["messages"] for r in per_source if r["messages"]} == \
        {s: n for s, n in want_messages.items() if n}
    assert {r["source"]: r["events"] for r in per_source if r["events"]} == want_events
    assert got_quarantined == want_quarantined
    quarantine = cdckit.quarantine(want)
    want_codes = sorted(zip(quarantine["source"], quarantine["offset"].astype(int), quarantine["reason_code"]))
    got_codes = sorted((r["source"], r["offset"], r["reason_code"]) for r in cdcspark.quarantine(events).collect())
    assert got_codes == want_codes  # the same messages quarantined, for the same kind of reason


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_spark_decode_agrees_with_pandas_on_fuzzed_kafka_records(spark):
    from cdckit import spark as cdcspark

    rng = random.Random(7)
    seed = next(s for s in fuzzing.seeds() if s.name == "debezium/shop.jsonl")
    messages = fuzzing.mutate_messages(rng, list(seed.messages or [])[:60], 15)
    rows = []
    for offset, msg in enumerate(messages):
        value = None if rng.random() < 0.05 else fuzzing.encode(fuzzing.dumps(msg, rng))
        key = rng.choice([None, None, b'{"id": 1}', b"\xff\xfe", b""])
        rows.append((value, key, "fuzz", 0, offset))
    frame = spark.createDataFrame(rows, "value binary, key binary, topic string, partition int, offset long")
    records = [fuzzing.KafkaRecord(value, key, offset, partition) for value, key, _, partition, offset in rows]

    want = cdckit.read(records).attrs["report"]
    got = cdcspark.report(cdcspark.decode(frame))
    assert {k: got[k] for k in TOTALS} == {k: want[k] for k in TOTALS}


@pytest.mark.filterwarnings("ignore::UserWarning")  # low-confidence detection of mixed files
def test_mixed_files_of_every_pair_of_dialects_account_for_every_message():
    """Lines of two dialects in one file, damaged or not: each message has events, is skipped or quarantined."""
    pairs = list(itertools.combinations(fuzzing.mixed_dialects(), 2))
    assert len(pairs) >= 100
    found = {}
    for first, second in pairs:
        for number in range(2):
            rng = random.Random(f"mixed/{first}/{second}/{number}")
            case = fuzzing.gen_mixed(rng, (first, second) if number == 0 else (second, first))
            problems = fuzzing.check(case)
            if problems:
                found[case.describe()] = problems
    assert not found, "\n".join(f"{k}\n  {v}" for k, v in list(found.items())[:5])
