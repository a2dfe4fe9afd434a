"""A source time of 0 is no time: every dialect reads ``ts_ms: 0`` (and its own equivalents) as a null
``event_time``/``emit_time``, never 1970-01-01, and the ordering report's lag does not see those events."""

from __future__ import annotations

import orjson
import pandas as pd
import pytest

import cdckit
from cdckit.dialects import registry

EPOCH = pd.Timestamp(0, tz="UTC")


def _timed_samples(name: str) -> pd.DataFrame:
    events = cdckit.read(cdckit.samples.path(next(s for s in cdckit.samples.list() if s.startswith(f"{name}/"))))
    return events[events["event_time"].notna() | events["emit_time"].notna()]


ENCODABLE = registry.writable()


@pytest.mark.parametrize("name", ENCODABLE)
def test_a_zero_time_reads_as_no_time(name):
    events = _timed_samples(name)
    if events.empty:
        pytest.skip(f"{name}'s samples carry no time")
    zeroed = events.assign(
        event_time=events["event_time"].where(events["event_time"].isna(), EPOCH),
        emit_time=events["emit_time"].where(events["emit_time"].isna(), EPOCH),
    )
    lines = b"".join(orjson.dumps(r.value) + b"\n" for r in cdckit.convert(zeroed, name).records)
    back = cdckit.read(lines, dialect=name)
    assert back.attrs["report"]["quarantined"] == 0
    assert len(back) >= 1
    assert not (back["event_time"] == EPOCH).any()
    assert not (back["emit_time"] == EPOCH).any()
    assert back["event_time"].isna().all() and back["emit_time"].isna().all()


def test_debezium_ts_ms_zero_by_line():
    line = (
        b'{"op":"c","ts_ms":0,"source":{"ts_ms":0,"db":"d","table":"t"},"before":null,"after":{"id":1}}\n'
        b'{"op":"u","ts_ms":1700000001000,"source":{"ts_ms":1700000000000,"db":"d","table":"t"},'
        b'"before":{"id":1},"after":{"id":1}}\n'
    )
    events = cdckit.read(line, dialect="debezium")
    assert events["event_time"].isna().tolist() == [True, False]
    assert events["emit_time"].isna().tolist() == [True, False]


def test_the_lag_does_not_see_untimed_events():
    lines = b"".join(
        b'{"op":"c","ts_ms":%d,"source":{"ts_ms":%d,"db":"d","table":"t"},"before":null,"after":{"id":%d}}\n'
        % (emit, source, i)
        for i, (source, emit) in enumerate([(0, 1700000000500), (1700000000000, 1700000000500)])
    )
    report = cdckit.order_report(cdckit.read(lines, dialect="debezium"))
    lag = report["lag"]
    assert (lag.select_dtypes("number").abs() < 10).all().all(), lag
