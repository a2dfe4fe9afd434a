"""A Debezium connector's own ``unavailable.value.placeholder``: ``cdckit.read(..., unavailable_value=...)``, the
command line's ``--unavailable-value`` and ``cdckit.spark.read``/``decode`` leave the columns holding it out of
the image (as text, Base64 bytes, a one-element array...), so that replay keeps the row's values, also across a
primary-key update and in worker processes."""

from __future__ import annotations

import json

import debezium_pg
import pandas as pd
import pytest

import cdckit
from cdckit.cli import main
from cdckit.reading import workers

CUSTOM = "<<toast unchanged>>"
OTHER = "‹sin cambios›"  # a second connector's, not ASCII
TOASTED = {"bio": "x" * 9000, "pic": "AAEC", "tags": ["a", "b"], "doc": '{"k": 1}', "nums": [1, 2]}


def records(placeholder: str = CUSTOM, rows: int = 1) -> list[dict]:
    """kcat -J records: each row inserted, updated and moved to a new key, both leaving its TOASTed columns
    unchanged (the placeholder in each column's shape)."""
    capture = debezium_pg.Capture(placeholder)
    for n in range(rows):
        capture.insert({"id": n, "name": f"r{n}", "qty": 1, **TOASTED}).update({"id": n, "name": f"r{n}", "qty": 5})
        capture.change_key(n, {"id": rows + n, "name": f"r{n} moved", "qty": 6})
    return capture.records


def wanted(rows: int = 1) -> list[dict]:
    return [{"id": rows + n, "name": f"r{n} moved", "qty": 6, **TOASTED} for n in range(rows)]


def state_rows(events: pd.DataFrame) -> list[dict]:
    state = cdckit.materialize(events, typed=False)
    assert state.problems.empty
    (table,) = state.values()
    return table.sort_values("id").to_dict("records")


def write_kcat(path, found: list[dict]):
    path.write_text("".join(json.dumps(r) + "\n" for r in found), encoding="utf-8")
    return path


def test_a_custom_placeholder_in_every_shape_is_left_out_and_replay_keeps_the_values():
    found = records()
    raw = CUSTOM.encode()
    update = json.loads(found[1]["payload"])["payload"]["after"]
    assert (update["bio"], update["tags"], update["nums"]) == (CUSTOM, [CUSTOM], list(raw))  # text, array, bytes
    assert update["pic"] != CUSTOM and update["pic"].endswith("=")  # bytea: Base64
    plain = cdckit.read(found, dialect="debezium")
    assert CUSTOM in plain.loc[1, "after"]  # not a placeholder the connector's default names
    events = cdckit.read(found, dialect="debezium", unavailable_value=CUSTOM)
    assert json.loads(events.loc[1, "after"]) == {"id": 0, "name": "r0", "qty": 5}
    assert state_rows(events) == wanted()  # the new key's row keeps the old row's unchanged values
    assert state_rows(plain) != wanted()


def test_several_placeholders_and_the_default_one_are_all_recognised(tmp_path):
    found = records(CUSTOM) + records(OTHER) + records(debezium_pg.PLACEHOLDER)
    events = cdckit.read(found, dialect="debezium", unavailable_value=[CUSTOM, OTHER])
    afters = [json.loads(a) for a in events["after"].dropna()]
    assert all(set(a) == {"id", "name", "qty"} for a in afters[1:3] + afters[4:6] + afters[7:])
    values_only = tmp_path / "values.jsonl"  # the connector's values alone: the batch decoder's path
    values_only.write_text("".join(r["payload"] + "\n" for r in found if r["payload"]), encoding="utf-8")
    from_file = cdckit.read(values_only, dialect="debezium", unavailable_value=(CUSTOM, OTHER))
    assert not any(text in from_file["after"].str.cat() for text in (CUSTOM, OTHER, "PDx0b2FzdCB1bmNoYW5nZWQ"))
    with pytest.raises(ValueError, match="unavailable_value"):
        cdckit.read(found, dialect="debezium", unavailable_value="")


def test_worker_processes_get_the_placeholder(tmp_path, monkeypatch):
    path = write_kcat(tmp_path / "capture.jsonl", records(rows=60))
    monkeypatch.setattr(workers, "RANGE_BYTES", max(1, path.stat().st_size // 8))
    assert len(workers.file_units(str(path), "jsonl", "debezium", None, False, None, 2)) >= 8
    one = cdckit.read(path, dialect="debezium", workers=1, unavailable_value=CUSTOM)
    many = cdckit.read(path, dialect="debezium", workers=2, unavailable_value=CUSTOM)
    pd.testing.assert_frame_equal(one, many)
    assert state_rows(many) == wanted(60)


def test_the_command_line_takes_the_placeholder(tmp_path, capsys):
    path = write_kcat(tmp_path / "capture.jsonl", records())
    args = ["read", str(path), "--dialect", "debezium", "--columns", "after", "--width", "400"]
    assert main(args) == 0
    assert CUSTOM in capsys.readouterr().out
    assert main([*args, "--unavailable-value", CUSTOM]) == 0
    assert CUSTOM not in capsys.readouterr().out
    out = tmp_path / "state"
    assert main(["state", str(path), "--unavailable-value", CUSTOM, "-o", str(out), "--to", "jsonl"]) == 0
    (written,) = [p for p in out.rglob("*.jsonl")]
    (row,) = pd.read_json(written, lines=True, dtype=False).to_dict("records")
    assert (row["id"], row["bio"], row["pic"], row["doc"]) == (1, TOASTED["bio"], TOASTED["pic"], TOASTED["doc"])
    assert json.loads(row["tags"]) == TOASTED["tags"]
    assert main(["read", str(path), "--unavailable-value", ""]) == 2


def test_spark_read_and_decode_take_the_placeholder(spark, tmp_path):
    from cdckit import spark as cdcspark

    found = records(rows=3)
    path = write_kcat(tmp_path / "capture.jsonl", found)
    read = cdcspark.read(spark, str(path), dialect="debezium", split_messages=4, unavailable_value=CUSTOM).toPandas()
    assert state_rows(read) == wanted(3)
    frame = spark.createDataFrame([(r["key"], r["payload"], r["topic"], r["partition"], r["offset"]) for r in found],
                                  "key string, value string, topic string, partition int, offset long")
    decoded = cdcspark.decode(frame, dialect="debezium", unavailable_value=[CUSTOM]).toPandas()
    assert state_rows(decoded) == wanted(3)
    assert CUSTOM in cdcspark.decode(frame, dialect="debezium").toPandas()["after"].str.cat()
