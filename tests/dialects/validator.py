"""The one validator every dialect test uses.

- :func:`assert_rows`: decoded events equal rows written out by hand, every
  event field spelled out (images and keys compared as parsed JSON).
- :func:`assert_round_trip`: encode -> write -> read gives the same events.
- :func:`assert_shop`: the dialect's shop sample decodes to the scenario.
- :func:`read_clean`: read a sample and insist nothing was quarantined.
- :func:`row`: an expected event row, every field not given expected None.
- :func:`assert_quarantined`: bad lines between good ones are quarantined with raw and reason.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd

import cdckit
from cdckit.dialects import registry
from cdckit.io import write_messages
from cdckit.samples.build import shop_file_names
from cdckit.samples.shop import shop_events

#: The fields a hand-written expected row must give, every one of them.
EVENT_FIELDS = [
    "offset", "op", "op_raw", "database", "schema", "table", "event_time", "emit_time",
    "seq", "txn_id", "key_columns", "key", "before", "after", "ddl",
]
_JSON_FIELDS = ("key", "before", "after")
_TIME_FIELDS = ("event_time", "emit_time")


def row(offset: int, op: str, op_raw: str, **fields: Any) -> dict[str, Any]:
    """An expected event for :func:`assert_rows`: every field not given is expected to be None."""
    base = dict(offset=offset, op=op, op_raw=op_raw, database=None, schema=None, table=None, event_time=None,
                emit_time=None, seq=None, txn_id=None, key_columns=None, key=None, before=None, after=None, ddl=None)
    base.update(fields)
    return base


def read_clean(source: Any, **options: Any) -> pd.DataFrame:
    """``cdckit.read`` that fails the test if anything was quarantined."""
    events = cdckit.read(source, **options)
    quarantine = cdckit.quarantine(events)
    assert quarantine.empty, f"unexpected quarantine:\n{quarantine[['offset', 'reason']].to_string()}"
    report = events.attrs["report"]
    assert report["messages"] == report["decoded"] + report["quarantined"], report
    return events


def normal(row: dict[str, Any]) -> dict[str, Any]:
    """An event row in comparable form: JSON parsed, times as ISO text, NA as None."""
    out = {}
    for name, value in row.items():
        if value is None or value is pd.NA or value is pd.NaT or (isinstance(value, float) and value != value):
            out[name] = None
        elif name in _JSON_FIELDS and isinstance(value, str):
            out[name] = json.loads(value)
        elif name in _TIME_FIELDS:
            out[name] = pd.Timestamp(value).tz_convert("UTC").isoformat().replace("+00:00", "Z")
        elif name == "key_columns":
            out[name] = list(value)
        elif name == "offset":
            out[name] = int(value)
        else:
            out[name] = value
    return out


def rows(events: pd.DataFrame, fields: list[str] = EVENT_FIELDS) -> list[dict[str, Any]]:
    return [normal(dict(zip(fields, values))) for values in events[fields].itertuples(index=False, name=None)]


def assert_rows(events: pd.DataFrame, expected: list[dict[str, Any]]) -> None:
    """Every decoded event equals its hand-written row, in order.

    Each expected row gives every field of :data:`EVENT_FIELDS`; images and
    keys as Python values, times as ISO text ending in ``Z`` (or None).
    """
    for number, want in enumerate(expected):
        missing = set(EVENT_FIELDS) - set(want)
        assert not missing, f"expected row {number} does not spell out {sorted(missing)}"
    got = rows(events)
    assert len(got) == len(expected), f"{len(got)} events, expected {len(expected)}"
    for number, (have, want) in enumerate(zip(got, expected)):
        want = normal({k: (json.dumps(v) if k in _JSON_FIELDS and v is not None else v) for k, v in want.items()})
        diff = {k: (have[k], want[k]) for k in EVENT_FIELDS if have[k] != want[k]}
        assert not diff, f"event {number}: (got, expected) differ in {diff}"


def assert_quarantined(dialect: str, good: str, bad: list[tuple[str, str]], tmp_path: Path) -> pd.DataFrame:
    """A file of ``good``, each bad raw line, ``good``: every bad line is quarantined with its raw text
    and a reason starting as given, the good ones decode, and the report accounts for all. Returns the
    quarantine."""
    path = tmp_path / "capture.jsonl"
    path.write_text("\n".join([good] + [raw for raw, _ in bad] + [good]) + "\n")
    events = cdckit.read(path, dialect=dialect)
    assert events["offset"].tolist() == [0, len(bad) + 1]
    quarantine = cdckit.quarantine(events)
    assert quarantine["offset"].tolist() == list(range(1, len(bad) + 1))
    assert set(quarantine["source"]) == {str(path)}
    for (raw, reason), got_reason, got_raw in zip(bad, quarantine["reason"], quarantine["raw"]):
        assert got_reason.startswith(reason), (got_reason, reason)
        assert got_raw == raw
    report = events.attrs["report"]
    assert (report["messages"], report["decoded"], report["quarantined"]) == (len(bad) + 2, 2, len(bad))
    return quarantine


def assert_round_trip(dialect: str, events: pd.DataFrame, tmp_path: Path, layout: str | None = None,
                      ignore: tuple[str, ...] = ()) -> pd.DataFrame:
    """Encode ``events`` as ``dialect``, write them, read them back: same events.

    ``ignore`` names fields the dialect cannot carry back (say why at the call).
    Returns the events read back.
    """
    records = list(registry.create(dialect).encode(events))
    file_name, default_layout = shop_file_names(dialect)[0]
    path = tmp_path / f"round_trip_{file_name.removesuffix('.gz')}"
    write_messages(records, path, layout or default_layout)
    again = read_clean(path, dialect=dialect)
    fields = [f for f in EVENT_FIELDS if f != "offset" and f not in ignore]
    assert rows(again, fields) == rows(events, fields)
    return again


def assert_shop(dialect: str, transform: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
                fields: tuple[str, ...] = ("op", "database", "table", "key_columns", "key", "before", "after",
                                           "event_time", "emit_time", "txn_id"),
                sample: str | None = None) -> pd.DataFrame:
    """The dialect's shop sample, detected and decoded, equals the scenario.

    ``transform`` turns each true row (parsed form, see :func:`normal`) into
    what this dialect can say of it (partial images, text values...);
    ``fields`` are the ones compared.
    """
    path = cdckit.samples.path(sample or f"{dialect}/shop")
    assert cdckit.detect(path).dialect == dialect
    events = read_clean(path)
    truth = [normal(row) for row in shop_events().to_dict("records")]
    if transform is not None:
        truth = [transform(row) for row in truth]
    assert len(events) == len(truth), f"{len(events)} events, scenario has {len(truth)}"
    got = rows(events, list(fields))
    for number, (have, want) in enumerate(zip(got, truth)):
        diff = {k: (have[k], want[k]) for k in fields if have[k] != want[k]}
        assert not diff, f"shop event {number}: (got, expected) differ in {diff}"
    return events
