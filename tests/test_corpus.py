"""Peers' real captures, each read whole, detected, replayed and ordered (``tests/corpus_manifest.json``).

The files are other projects' test data (Flink CDC, SeaTunnel, RisingWave,
Debezium, Maxwell, Paimon, Artie, wal2json) and are not in this repository:
``python tools/corpus.py --out /work/corpus`` copies them out of bare mirrors
of the repositories the manifest names. The corpus folder is ``$CDCKIT_CORPUS``,
else ``/work/corpus``, else ``../shared/corpus`` beside the repository; without
one these tests skip.

Each file is checked five ways: read whole (every message decoded or
quarantined with a reason, the count of decoded messages the file holds),
detected as its dialect, no event dated 1970-01-01, replayed to the rows the
peer's own test states, and ordered in seq as cleanly as in the file's own
order. A check that a finding another branch fixes makes fail is an expected
failure naming that branch (the manifest's ``known``), strict, so that it shows
when the fix arrives.

Speed: every file is read once; one replay and two ordering reports cover
them all (each file's tables renamed apart), a few seconds for the corpus.
"""

from __future__ import annotations

import json
import numbers
import os
import warnings
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import cdckit
from cdckit import Capture
from cdckit.analysis.ordering.catalogue import FINDINGS
from cdckit.errors import CdcError
from cdckit.frame import table_names

ROOT = Path(__file__).resolve().parent.parent
MANIFEST = json.loads((ROOT / "tests" / "corpus_manifest.json").read_text(encoding="utf-8"))
ENTRIES: list[dict[str, Any]] = MANIFEST["files"]
BUILD = (
    "corpus absent: fetch the repositories tests/corpus_manifest.json names, then "
    "python tools/corpus.py --out /work/corpus (or set CDCKIT_CORPUS to the folder)"
)
ERRORS = [name for name, spec in FINDINGS.items() if spec.severity == "error"]


def corpus_folder() -> Path | None:
    """The corpus folder: ``$CDCKIT_CORPUS``, ``/work/corpus`` or ``../shared/corpus``, the first that exists."""
    for folder in (os.environ.get("CDCKIT_CORPUS"), "/work/corpus", ROOT.parent / "shared" / "corpus"):
        if folder and Path(folder).is_dir():
            return Path(folder)
    return None


def entry_id(entry: dict[str, Any]) -> str:
    return entry["repo"].split("/")[1] + ":" + "/".join(entry["path"].split("/")[-4:])


def entry_file(folder: Path, entry: dict[str, Any]) -> Path:
    return folder / entry["repo"].replace("/", "+") / entry["path"]


@dataclass(repr=False)
class Corpus:
    """What the corpus gave: each present file's capture, detection, final state and findings in both orders."""

    captures: dict[str, Capture]
    detected: dict[str, str | None]
    state: dict[str, dict[str, pd.DataFrame]]
    by_seq: dict[str, dict[str, int]]
    by_arrival: dict[str, dict[str, int]]

    def __repr__(self) -> str:  # short: a failing check's traceback shows it
        return f"Corpus({len(self.captures)} files)"


def _tagged(number: int, capture: Capture) -> Capture:
    """The capture with each table named ``c<number>.<its full name>``, so that files replay apart in one call."""
    events = capture.events.copy()
    names = table_names(events)
    events["database"] = f"c{number}"
    events["schema"] = None
    events["table"] = names
    types = capture.column_types.copy()
    types["table"] = f"c{number}." + types["table"].astype(str)
    return Capture(events, capture.quarantine, capture.report, types)


def _error_counts(report: cdckit.OrderReport, sources: dict[str, str]) -> dict[str, dict[str, int]]:
    """Per file (by its source), the rows of each error finding."""
    counts: dict[str, dict[str, int]] = {name: dict.fromkeys(ERRORS, 0) for name in set(sources.values())}
    for finding in ERRORS:
        for source in report[finding]["source"].dropna():
            if source in sources:
                counts[sources[source]][finding] += 1
    return counts


@pytest.fixture(scope="module")
def corpus() -> Corpus:
    folder = corpus_folder()
    if folder is None:
        pytest.skip(BUILD)
    captures, detected, tagged, sources = {}, {}, [], {}
    for number, entry in enumerate(ENTRIES):
        path = entry_file(folder, entry)
        if not path.is_file():
            continue
        name = entry_id(entry)
        with warnings.catch_warnings():  # low-confidence and unknown verdicts: the checks below say what matters
            warnings.simplefilter("ignore")
            captures[name] = cdckit.read(path, capture=True)
            try:
                detected[name] = cdckit.detect(path).dialect
            except CdcError:
                detected[name] = None
        tagged.append(_tagged(number, captures[name]))
        sources.update({source: name for source in captures[name].events["source"].dropna().unique()})
        sources.update({source: name for source in captures[name].quarantine["source"].dropna().unique()})
    if not captures:
        pytest.skip(BUILD)
    whole = Capture.combined(tagged)
    state: dict[str, dict[str, pd.DataFrame]] = {}
    with warnings.catch_warnings():  # (changes of keyless rows never seen: single-message fixtures)
        warnings.simplefilter("ignore")
        final = cdckit.materialize(whole)
    for table, rows in final.items():
        number, original = table.split(".", 1)
        state.setdefault(entry_id(ENTRIES[int(number[1:])]), {})[original] = rows
    arrival = whole.events.copy()
    arrival["seq"] = [f"{position:012d}" for position in range(len(arrival))]
    return Corpus(
        captures,
        detected,
        state,
        _error_counts(cdckit.order_report(whole), sources),
        _error_counts(cdckit.order_report(whole.replace(arrival)), sources),
    )


def entries(check: str) -> list[Any]:
    """The manifest's entries as parameters of ``check``, an expected failure where a finding of another branch
    makes it fail."""
    params = []
    for entry in ENTRIES:
        known = entry.get("known", {}).get(check)
        marks = [pytest.mark.xfail(reason=known, strict=True)] if known else []
        params.append(pytest.param(entry, id=entry_id(entry), marks=marks))
    return params


def present(corpus: Corpus, entry: dict[str, Any]) -> Capture:
    name = entry_id(entry)
    if name not in corpus.captures:
        pytest.skip(f"{entry['repo']}:{entry['path']} is not in the corpus folder; {BUILD}")
    return corpus.captures[name]


def _json_object(raw: Any) -> bool:
    try:
        return isinstance(json.loads(str(raw).split("\t")[-1] or str(raw)), dict)
    except ValueError:
        return False


@pytest.mark.parametrize("entry", entries("read"))
def test_read_whole(corpus: Corpus, entry: dict[str, Any]) -> None:
    """Every message is decoded or quarantined with a reason; the file's messages decode, none lost to one line."""
    capture = present(corpus, entry)
    report, quarantine = capture.report, capture.quarantine
    assert report["messages"] == report["decoded"] + report["quarantined"], report
    assert quarantine["reason"].fillna("").str.len().gt(0).all()
    messages = sum(_json_object(raw) for raw in quarantine["raw"])
    assert (report["decoded"], messages) == (entry["expect"]["decoded"], entry["expect"]["quarantined"]), (
        quarantine[["offset", "reason_code", "reason"]].head(5).to_string()
    )
    says = entry["expect"].get("quarantine_says")
    if says:  # the reason names what the quarantined messages are
        reasons = quarantine.loc[quarantine["raw"].map(_json_object), "reason"]
        assert reasons.str.contains(says, regex=False).all(), reasons.tolist()


@pytest.mark.parametrize("entry", entries("detect"))
def test_detect(corpus: Corpus, entry: dict[str, Any]) -> None:
    present(corpus, entry)
    assert corpus.detected[entry_id(entry)] == entry["dialect"], entry.get("why")


@pytest.mark.parametrize("entry", entries("epoch"))
def test_no_event_dated_1970(corpus: Corpus, entry: dict[str, Any]) -> None:
    events = present(corpus, entry).events
    assert not (events["event_time"].dt.year == 1970).any()


def _cell(value: Any, exact: bool) -> str | None:
    """A cell in comparable form: numbers as their plain decimal text (exactly as typed when ``exact``)."""
    if value is None or (not isinstance(value, str | list | dict) and pd.isna(value)):
        return None
    if isinstance(value, pd.Timestamp):
        return value.tz_localize(None).isoformat(sep=" ") if value.tzinfo else value.isoformat(sep=" ")
    if exact:  # an exact number: a Decimal or an integer, never a float
        if isinstance(value, Decimal):
            return format(value, "f")
        exact_int = isinstance(value, numbers.Integral) and not isinstance(value, bool)
        return str(value) if exact_int else f"{type(value).__name__} {value!r}"
    try:
        number = Decimal(str(value))
    except InvalidOperation:
        return str(value)
    if not number.is_finite():
        return str(value)
    text = format(number, "f")  # every digit (normalize() would round to the context's 28)
    return text.rstrip("0").rstrip(".") if "." in text else text


@pytest.mark.parametrize("entry", entries("replay"))
def test_replay_gives_the_peers_rows(corpus: Corpus, entry: dict[str, Any]) -> None:
    present(corpus, entry)
    expected = entry["expect"].get("tables")
    same = entry["expect"].get("same_rows_as")
    if not expected and not same:
        pytest.skip("the peer states no final rows for this file")
    state = corpus.state.get(entry_id(entry), {})
    if same:  # the peer states that another file of the corpus holds the same changes in another dialect
        assert _rows_by_table(state) == _rows_by_table(corpus.state.get(same, {}))
    expected = expected or {}
    exact = entry["expect"].get("exact", False)
    for table, want in expected.items():
        assert table in state, sorted(state)
        rows = state[table]
        if "count" in want:
            assert len(rows) == want["count"], rows.to_string()
            continue
        got = sorted(tuple(_cell(v, exact) for v in row) for row in rows[want["columns"]].itertuples(index=False))
        stated = [
            tuple(None if v is None else str(v) if exact else _cell(v, False) for v in row) for row in want["rows"]
        ]
        assert got == sorted(stated)


def _rows_by_table(state: dict[str, pd.DataFrame]) -> dict[str, list[tuple]]:
    """Each table (by its bare name) as its sorted rows of comparable cells, columns in name order."""
    return {
        name.rsplit(".", 1)[-1].lower(): sorted(
            tuple(_cell(v, False) for v in row) for row in rows[sorted(rows.columns)].itertuples(index=False)
        )
        for name, rows in state.items()
    }


@pytest.mark.parametrize("entry", entries("ordering"))
def test_seq_order_is_as_clean_as_the_files_own(corpus: Corpus, entry: dict[str, Any]) -> None:
    """No error finding in seq order that the file's own order does not have."""
    present(corpus, entry)
    name = entry_id(entry)
    by_seq = corpus.by_seq.get(name, dict.fromkeys(ERRORS, 0))
    by_arrival = corpus.by_arrival.get(name, dict.fromkeys(ERRORS, 0))
    assert all(by_seq[finding] <= by_arrival[finding] for finding in ERRORS), (by_seq, by_arrival)


def test_manifest_names_each_file_once_with_provenance() -> None:
    assert len({entry_id(e) for e in ENTRIES}) == len(ENTRIES)
    for entry in ENTRIES:
        assert len(entry["commit"]) == 40 and len(entry["sha256"]) == 64 and entry["stated_by"]
        assert entry["dialect"] is not None or entry["why"]
        assert set(entry.get("known", {})) <= {"read", "detect", "epoch", "replay", "ordering"}
