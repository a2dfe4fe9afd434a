"""Spark parity of sort_events, order_report, materialize, scd2 and history: the answers of the oracle.

``oracle`` (tests/oracle.py) walks every event in Python; the Spark engine
(Spark SQL, and the Python replayer only for tables whose keys change or
that have none) must give exactly its rows.
"""

from __future__ import annotations

import oracle
import orjson
import pytest
from comparable import row_texts, rows
from histories import capture, deliver

import cdckit
from cdckit import spark as cdcspark
from cdckit import values
from cdckit.dialects import registry
from cdckit.frame import Event
from cdckit.frame_builders import FrameBuilder
from cdckit.row_images import key_of

_T0 = 1_714_554_000 * 1_000_000_000


def _written(folder, dialect, order, repeats, name=None):
    cap = capture(dialect, [("insert", 0), ("insert", 0), ("update", 0), ("update", 1), ("insert", 0),
                            ("delete", 0), ("update", 2), ("update", 0)])
    messages, _ = deliver(cap, order, repeats)
    path = folder / (name or f"{dialect}.jsonl")
    path.write_bytes(b"".join(orjson.dumps(m) + b"\n" for m in messages))
    return path


def _encoded(path, dialect, changes, key_columns=("id",)):
    """A file of ``changes`` (op, before, after) to table shop.items written in ``dialect``."""
    builder = FrameBuilder()
    for number, (op, before, after) in enumerate(changes):
        row = after if after is not None else before
        columns = list(key_columns) if key_columns else None
        builder.add(Event(op=op, op_raw=op, database="shop", table="items", event_time=_T0 + number * 10**9,
                          emit_time=_T0 + (number + 2) * 10**9, txn_id=str(1000 + number), key_columns=columns,
                          key=key_of(row, columns) if columns else None, before=values.image(before),
                          after=values.image(after)), dialect="truth", source="truth", offset=number)
    messages = [record.value for record in registry.create(dialect).encode(builder.to_pandas())]
    path.write_bytes(b"".join((m if isinstance(m, bytes) else orjson.dumps(m)) + b"\n" for m in messages))
    return path


def _toast_records():
    from test_key_changes import toast_records

    return toast_records()


def _spread_binlog():
    from test_key_changes import binlog_records

    from cdckit.samples.partitioning import spread_by_key

    return spread_by_key([orjson.dumps(r).decode() for r in binlog_records()], 3, interleave="random", seed=3)


def _lindorm_messages():
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parent / "dialects"))
    from test_lindorm import column_delete_then_key_changes

    return column_delete_then_key_changes()


@pytest.fixture(scope="module")
def captures(tmp_path_factory):
    folder = tmp_path_factory.mktemp("parity")
    mixed = folder / "mixed"
    mixed.mkdir()
    _written(mixed, "canal", [0, 1, 2, 3, 4, 5, 6, 7], [], "first.jsonl")
    _written(mixed, "canal", [1, 0, 2, 3, 4, 5, 6, 7], [], "second.jsonl")
    _written(mixed, "datahub_blob", [0, 1, 2, 3, 4, 5, 6, 7], [(3, 0)], "third.jsonl")
    one, two, three = ({"id": i, "name": f"n{i}", "qty": i} for i in (1, 2, 3))
    moved = _encoded(folder / "moved.jsonl", "canal", [
        ("insert", None, one), ("insert", None, two), ("update", one, {**one, "id": 4}),
        ("update", {**one, "id": 4}, {**one, "id": 5, "qty": 9}), ("insert", None, three),
        ("update", two, {**two, "qty": 7}), ("delete", three, None), ("update", {**one, "id": 5, "qty": 9},
                                                                      {**one, "id": 1, "qty": 10})])
    keyless = _encoded(folder / "keyless.jsonl", "canal", [
        ("insert", None, one), ("insert", None, one), ("update", one, {**one, "qty": 5}), ("delete", two, None),
        ("insert", None, three), ("delete", three, None)], key_columns=())
    partial = _encoded(folder / "partial.jsonl", "shareplex", [
        ("insert", None, one), ("insert", None, two), ("update", {"id": 1}, {"id": 1, "qty": 5}),
        ("update", {"id": 2, "name": "n2"}, {"id": 2, "name": "m2"}), ("delete", {"id": 1}, None),
        ("update", {"id": 1, "name": "old", "qty": 0}, {"id": 1, "qty": 6}), ("update", {"id": 3}, None)])
    toast = folder / "toast.jsonl"  # Debezium PostgreSQL as kcat -J saves it: unchanged TOAST placeholders
    toast.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in _toast_records()))
    spread = folder / "spread.jsonl"  # Debezium MySQL over three partitions, a key change's halves apart
    spread.write_text("\n".join(_spread_binlog()) + "\n", encoding="utf-8")
    lindorm = folder / "lindorm.jsonl"  # no key anywhere, a column delete, key changes
    lindorm.write_bytes(b"".join(orjson.dumps(m) + b"\n" for m in _lindorm_messages()))
    return {
        "toast": toast, "lindorm_keyless": lindorm, "spread": spread,
        "canal": _written(folder, "canal", [0, 2, 1, 6, 3, 5, 4, 7], [(2, 1), (5, 0)]),
        "datahub_blob": _written(folder, "datahub_blob", [1, 0, 3, 2, 5, 4, 7, 6], [(3, 2)]),
        "shareplex": cdckit.samples.path("shareplex/examples"),
        "debezium": cdckit.samples.path("debezium/examples"),
        "canal_samples": cdckit.samples.path("canal/examples"),
        "mixed": mixed, "moved": moved, "keyless": keyless, "partial": partial,
    }


def _events(spark, path):
    """The capture read by both engines; the Spark events cached, as an analyst caches them: each check below
    runs several Spark jobs over them."""
    return cdckit.read(path), cdcspark.read(spark, str(path)).cache()


def _assert_reports_agree(got, want, label):
    assert list(got) == list(want), label
    for name in want:
        if name == "lag":
            assert list(got[name]["table"]) == list(want[name]["table"]), label
            for column in want[name].columns[1:]:
                assert got[name][column].astype(float).tolist() == pytest.approx(
                    want[name][column].astype(float).tolist(), rel=1e-12), (label, column)
        else:
            assert rows(got[name]) == rows(want[name]), (label, name)
    assert got.problems() == want.problems(), label


def _assert_states_agree(got, want, label):
    assert sorted(got) == list(want), label
    for table in want:
        assert list(got[table].columns) == list(want[table].columns), (label, table)
        assert row_texts(got[table]) == row_texts(want[table]), (label, table)
    assert rows(got.problems) == rows(want.problems), label
    assert got.keyless == want.keyless, label


NAMES = ["canal", "datahub_blob", "shareplex", "debezium", "canal_samples", "mixed", "moved", "keyless", "partial",
         "toast", "lindorm_keyless", "spread"]


@pytest.mark.parametrize("name", NAMES)
def test_order_report_agrees(spark, captures, name):
    events, on_spark = _events(spark, captures[name])
    want = oracle.order_report(events)
    got = cdcspark.order_report(on_spark, cdcspark.quarantine(on_spark))
    _assert_reports_agree(got, want, name)


@pytest.mark.filterwarnings("ignore:materialize.*found no row to change:UserWarning")  # keyless rows on purpose (the warning: test_value_only_capture)
@pytest.mark.parametrize("name", NAMES)
def test_materialize_agrees(spark, captures, name):
    events, on_spark = _events(spark, captures[name])
    _assert_states_agree(cdcspark.materialize(on_spark), oracle.materialize(events), name)


#: The captures where no table has key columns.
KEYLESS = ["keyless", "lindorm_keyless", "debezium"]


@pytest.mark.parametrize("name", NAMES)
def test_scd2_agrees(spark, captures, name):
    events, on_spark = _events(spark, captures[name])
    want = oracle.scd2(events)
    if name in KEYLESS:  # no table has key columns: both say so, with how to give them
        with pytest.raises(cdckit.KeylessTableError) as on_pandas:
            cdckit.scd2(events)
        with pytest.raises(cdckit.KeylessTableError) as on_spark_too:
            cdcspark.scd2(on_spark)
        assert str(on_spark_too.value) == str(on_pandas.value) and want == {}
        return
    got = cdcspark.scd2(on_spark)
    assert sorted(got) == sorted(want), name
    assert got.keyless == cdckit.scd2(events).keyless, name
    for table in want:
        assert list(got[table].columns) == list(want[table].columns), (name, table)
        assert row_texts(got[table]) == row_texts(want[table]), (name, table)


@pytest.mark.parametrize("by", ["capture", "source", "partition"])
@pytest.mark.parametrize("name", ["mixed", "canal", "datahub_blob"])
def test_order_report_by_stream_agrees(spark, captures, name, by):
    events, on_spark = _events(spark, captures[name])
    _assert_reports_agree(cdcspark.order_report(on_spark, by=by), oracle.order_report(events, by=by), (name, by))


def test_files_are_separate_streams_by_default(spark, captures):
    on_spark = cdcspark.read(spark, str(captures["mixed"]))
    by_source = cdcspark.order_report(on_spark)
    assert len(by_source["inversions"]) == 0 and len(by_source["redeliveries"]) == 1  # the datahub repeat
    by_capture = cdcspark.order_report(on_spark, by="capture")  # the two canal files now meet
    assert len(by_capture["inversions"]) > 0 or len(by_capture["redeliveries"]) > 1
    with pytest.raises(ValueError, match="by must be one of"):
        cdcspark.order_report(on_spark, by="table")


def test_shuffled_capture_has_findings(spark, captures):
    report = cdcspark.order_report(cdcspark.read(spark, str(captures["canal"])))
    assert len(report["inversions"]) > 0 and len(report["redeliveries"]) == 2


@pytest.mark.filterwarnings("ignore:materialize.*found no row to change:UserWarning")  # keyless rows on purpose (the warning: test_value_only_capture)
def test_key_changes_keyless_and_partial_images_replay(spark, captures):
    moved = cdcspark.materialize(cdcspark.read(spark, str(captures["moved"])))["shop.items"]
    assert sorted(r["id"] for r in moved.collect()) == [1, 2]
    keyless = cdcspark.materialize(cdcspark.read(spark, str(captures["keyless"])))
    assert keyless.keyless == ["shop.items"] and keyless["shop.items"].count() == 2
    partial = cdcspark.materialize(cdcspark.read(spark, str(captures["partial"])))["shop.items"]
    rows = {r["id"]: r.asDict() for r in partial.collect()}
    # id 2 keeps the qty its update did not send; id 1 restarts (after its delete) from its update's images
    assert rows == {1: {"id": 1, "name": None, "qty": 6}, 2: {"id": 2, "name": "m2", "qty": 2}}
    assert dict(partial.dtypes) == {"id": "bigint", "name": "string", "qty": "bigint"}


@pytest.mark.parametrize("order", ["event_time", "arrival"])
def test_other_orders_agree(spark, captures, order):
    events, on_spark = _events(spark, captures["canal"])
    _assert_states_agree(cdcspark.materialize(on_spark, order=order), oracle.materialize(events, order=order), order)


@pytest.mark.parametrize("name, key", [("canal", 1), ("canal", [2]), ("moved", 1), ("moved", 5), ("partial", 1),
                                       ("toast", 2)])
def test_history_agrees(spark, captures, name, key):
    events, on_spark = _events(spark, captures[name])
    table = "docs" if name == "toast" else "items"
    want = oracle.history(events, table, key)
    got = cdcspark.history(on_spark, table, key)
    assert len(want) > 0
    assert list(got.columns) == list(want.columns)
    assert rows(got) == rows(want), (name, key)


def test_sort_events_agrees(spark, captures):
    for name in NAMES:
        want = cdckit.sort_events(cdckit.read(captures[name]))
        got = cdcspark.sort_events(cdcspark.read(spark, str(captures[name]))).select("source", "offset").toPandas()
        assert list(zip(got["source"], got["offset"])) == list(zip(want["source"], want["offset"])), name


@pytest.mark.parametrize("name, at", [("shareplex", 2), ("canal", 4), ("moved", 3)])
def test_as_of_agrees(spark, captures, name, at):
    events, on_spark = _events(spark, captures[name])
    cut = events["event_time"].sort_values().iloc[at]
    want = oracle.materialize(events, as_of=cut)
    _assert_states_agree(cdcspark.materialize(on_spark, as_of=cut), want, name)
    final = oracle.materialize(events)  # the cut matters: the state at it is not the final one
    assert [row_texts(want[t]) for t in want] != [row_texts(final[t]) for t in want]


def test_keyless_tables_are_named_not_dropped(spark, captures, tmp_path):
    folder = tmp_path / "some_keyless"
    folder.mkdir()
    (folder / "keyless.jsonl").write_bytes(captures["keyless"].read_bytes())
    (folder / "shop.jsonl").write_bytes(cdckit.samples.path("canal/shop").read_bytes())
    events, on_spark = _events(spark, folder)
    with pytest.warns(UserWarning, match="scd2 leaves out shop.items: .*with_keys"):
        got = cdcspark.scd2(on_spark)
    assert sorted(got) == ["shop.customers", "shop.order_items"] and got.keyless == ["shop.items"]
    for key in (1, 3):
        with pytest.raises(cdckit.KeylessTableError) as on_spark_too:
            cdcspark.history(cdcspark.read(spark, str(captures["keyless"])), "items", key)
        with pytest.raises(cdckit.KeylessTableError) as on_pandas:
            cdckit.history(cdckit.read(captures["keyless"]), "items", key)
        assert str(on_spark_too.value) == str(on_pandas.value)


@pytest.mark.parametrize("key", [3, 1])  # 3 ends in a delete; 1 moves to 4, 5 and back
def test_history_keeps_whole_numbers_whole(spark, captures, key):
    events, on_spark = _events(spark, captures["moved"])
    got, want = cdcspark.history(on_spark, "items", key), cdckit.history(events, "items", key)
    assert got["id"].isna().any() or key == 1
    assert got["id"].dtype == want["id"].dtype == got["qty"].dtype == "Int64"
    assert rows(got) == rows(want)


# --------------------------------------------------------------------------- keyless tables, counted as pandas counts

_A, _B, _C = {"a": 1, "b": "x"}, {"a": 2, "b": "y"}, {"a": 3, "b": None}
_K1, _K2 = {"id": 1, "a": 7, "b": "k"}, {"id": 2, "a": 8, "b": "k"}

#: Changes (op, before, after[, key column]) to shop.items: counted (whole images that are live rows as written) or
#: walked (a removal of a row not there, merging updates, a truncate of keyed rows), on both engines alike.
KEYLESS_CASES = {
    "duplicates": [("insert", None, _A), ("insert", None, _A), ("read", None, _B), ("update", _A, _C),
                   ("insert", None, _A), ("delete", _A, None), ("update", None, _B), ("delete", None, None),
                   ("insert", None, {**_A, "c": None}), ("insert", None, _C), ("update", _C, _B)],
    "absent": [("insert", None, _A), ("delete", _A, None), ("delete", _A, None), ("insert", None, _A),
               ("update", _B, _C), ("insert", None, _B)],
    "truncates": [("insert", None, _A), ("insert", None, _A), ("truncate", None, None), ("insert", None, _A),
                  ("insert", None, _B), ("delete", _A, None), ("insert", None, _B), ("truncate", None, None),
                  ("insert", None, _C), ("insert", None, _B), ("update", _B, _A)],
    "absent after a truncate": [("insert", None, _A), ("truncate", None, None), ("delete", _A, None),
                                ("insert", None, _B)],
    "mixed": [("insert", None, _K1, "id"), ("insert", None, _A), ("insert", None, _A), ("insert", None, _K2, "id"),
              ("update", _K1, {**_K1, "a": 9}, "id"), ("delete", _A, None), ("delete", _K2, None, "id"),
              ("delete", _K2, None, "id"), ("update", None, _C)],
    "mixed and truncated": [("insert", None, _K1, "id"), ("insert", None, _A), ("truncate", None, None),
                            ("insert", None, _K2, "id"), ("insert", None, _B), ("insert", None, _B)],
}

#: Partial-image dialects: updates merge where images differ in their columns (walked), else replace (counted).
PARTIAL_CASES = {
    "partial, merged": [("insert", None, {"id": 1, "n": "a", "q": 1}), ("insert", None, {"id": 2, "n": "b", "q": 2}),
                        ("update", {"id": 1}, {"q": 5}), ("delete", {"id": 2, "n": "b"}, None),
                        ("insert", None, {"id": 1, "n": "a", "q": 1})],
    "partial, whole": [("insert", None, _A), ("insert", None, _A), ("update", _A, _B), ("delete", _A, None)],
}


def _keyless_events(changes, dialect="canal", scrambled=False):
    """A pandas frame of ``changes`` to shop.items; ``scrambled``: seq, event time and arrival in three orders."""
    builder = FrameBuilder()
    count = len(changes)
    for number, (op, before, after, *key) in enumerate(changes):
        row = after if after is not None else before
        columns = list(key) or None
        seq, time = (number * 5 % count, number * 7 % count) if scrambled else (number, number)
        builder.add(Event(op=op, op_raw=op.upper(), database="shop", table="items", event_time=_T0 + time * 10**9,
                          seq=f"{seq:06d}", key_columns=columns, key=key_of(row, columns) if columns else None,
                          before=values.image(before), after=values.image(after)), dialect, "a.jsonl", number)
    events = builder.to_pandas()
    events.attrs["quarantine"] = cdckit.capture.Attached(cdckit.frame.empty_quarantine(), "none")
    return events


def _on_spark(spark, events):
    import pyarrow as pa
    from pyspark.sql.pandas.types import from_arrow_schema

    from cdckit.frame import COLUMN_NAMES
    from cdckit.spark.engine import COMBINED_ARROW

    schema = pa.schema([COMBINED_ARROW.field(n) for n in COLUMN_NAMES])
    return spark.createDataFrame(events[COLUMN_NAMES], schema=from_arrow_schema(schema))


def _assert_keyless_agree(spark, events, label, **options):
    """Spark's states, problems and warnings are pandas'."""
    import warnings

    with warnings.catch_warnings(record=True) as pandas_said:
        warnings.simplefilter("always")
        want = cdckit.materialize(events, **options)
    with warnings.catch_warnings(record=True) as spark_said:
        warnings.simplefilter("always")
        got = cdcspark.materialize(_on_spark(spark, events), **options)
    _assert_states_agree(got, want, label)
    assert _cdckit_said(spark_said) == _cdckit_said(pandas_said), label
    return got, want


def _cdckit_said(said) -> list[str]:
    """The warnings cdckit gave, not PySpark's own (on pandas 3: that PySpark does not fully support it yet, and
    pandas' deprecation of the copy keyword PySpark still passes)."""
    return [str(w.message) for w in said
            if "pyspark" not in w.filename.replace("\\", "/").split("/") and not str(w.message).startswith("PySpark ")]


@pytest.mark.parametrize("name", sorted(KEYLESS_CASES) + sorted(PARTIAL_CASES))
def test_keyless_tables_agree(spark, name):
    changes, dialect = (KEYLESS_CASES[name], "canal") if name in KEYLESS_CASES else (PARTIAL_CASES[name], "shareplex")
    events = _keyless_events(changes, dialect)
    got, want = _assert_keyless_agree(spark, events, name)
    assert len(want["shop.items"]) > 0 and want.keyless == ["shop.items"]
    if name in ("duplicates", "absent"):
        assert len(want.problems) > 0


@pytest.mark.parametrize("name", ["duplicates", "truncates", "mixed", "absent"])
@pytest.mark.parametrize("order", ["seq", "event_time", "arrival"])
def test_keyless_tables_agree_in_every_order_and_as_of(spark, name, order):
    events = _keyless_events(KEYLESS_CASES[name], scrambled=True)
    _assert_keyless_agree(spark, events, (name, order), order=order)
    cut = events["event_time"].sort_values().iloc[len(events) // 2]
    _assert_keyless_agree(spark, events, (name, order, "as_of"), order=order, as_of=cut)


@pytest.mark.filterwarnings("ignore:materialize.*found no row to change:UserWarning")  # keyless rows on purpose (the warning: test_value_only_capture)
@pytest.mark.parametrize("name", ["duplicates", "truncates", "mixed", "partial, whole"])
def test_keyless_tables_of_whole_images_are_counted_not_walked(spark, name, monkeypatch):
    """No Python runs for a keyless table of whole images (no applyInPandas walk, no Python in its plan), a removal
    of a row not there included; merging updates or a truncate of keyed rows still send their table to the walk."""
    from cdckit.spark import replay as spark_replay

    def walker(*args):
        raise AssertionError("a table went to the Python walk")

    changes = KEYLESS_CASES.get(name) or PARTIAL_CASES[name]
    on_spark = _on_spark(spark, _keyless_events(changes, "shareplex" if name in PARTIAL_CASES else "canal"))
    monkeypatch.setattr(spark_replay, "_walker", walker)
    state = cdcspark.materialize(on_spark)["shop.items"]
    plan = state._jdf.queryExecution().executedPlan().toString()
    assert "Python" not in plan and "Pandas" not in plan and state.count() > 0
    for counted in ("absent", "absent after a truncate"):  # rows not there, written as the table's: counted
        assert cdcspark.materialize(_on_spark(spark, _keyless_events(KEYLESS_CASES[counted]))).problems["problem"] \
            .str.endswith("of a row not in the table").any()
    with pytest.raises(Exception, match="went to the Python walk"):
        cdcspark.materialize(_on_spark(spark, _keyless_events(KEYLESS_CASES["mixed and truncated"])))
    with pytest.raises(Exception, match="went to the Python walk"):
        cdcspark.materialize(_on_spark(spark, _keyless_events(PARTIAL_CASES["partial, merged"], "shareplex")))


#: Spark's own plan settings, which tests/spark/spark-defaults.conf turns off for the rest of the run.
SPARK_PLAN_DEFAULTS = {"spark.sql.codegen.wholeStage": "true", "spark.sql.codegen.factoryMode": "FALLBACK",
                       "spark.sql.adaptive.enabled": "true"}


@pytest.mark.filterwarnings("ignore:materialize.*found no row to change:UserWarning")  # keyless rows on purpose (the warning: test_value_only_capture)
@pytest.mark.parametrize("name", ["mixed", "keyless"])
def test_compiled_adaptive_plans_agree_as_well(spark, captures, name):
    """The run interprets its plans (tests/spark/spark-defaults.conf); an analyst's Spark compiles and adapts
    them: the read, the order report and the replay agree there too."""
    session = spark.newSession()  # the same Spark, its own SQL settings
    for setting, value in SPARK_PLAN_DEFAULTS.items():
        session.conf.set(setting, value)
    assert spark.conf.get("spark.sql.codegen.wholeStage") == "false"  # the run's own, for the other tests
    events, on_spark = _events(session, captures[name])
    assert on_spark.sparkSession.conf.get("spark.sql.codegen.wholeStage") == "true"
    _assert_reports_agree(cdcspark.order_report(on_spark, cdcspark.quarantine(on_spark)), oracle.order_report(events),
                          name)
    _assert_states_agree(cdcspark.materialize(on_spark), oracle.materialize(events), name)


def test_the_survey_reads_each_images_names_once(spark, captures):
    """json_object_keys once per image column (before, after) in the survey's executed plan, though three
    places use the names (the shape, the first event's columns, whether a key moved)."""
    from cdckit.spark import replay_survey

    changes = replay_survey._changes(cdcspark.read(spark, str(captures["moved"])), None)
    plan = replay_survey.shape_groups(changes, "seq")
    executed = plan._jdf.queryExecution().executedPlan().toString()
    for image in ("before", "after"):  # Spark 4.0 writes the function by its SQL name, 4.1 by its Java method's
        reads = executed.count(f"json_object_keys({image}") + executed.count(f"jsonObjectKeys({image}")
        assert reads == 1, (image, executed)
