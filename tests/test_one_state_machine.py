"""The ordering report and replay judge a row's history with one state machine (cdckit.analysis.transitions).

On random dirty histories (tests/event_frames.py: key changes, truncates,
partial images, tables without a key, redeliveries, unknown keys, inserts of
live keys, changes without an after image), every change replay refuses is a
finding of the report, and every impossible transition or unmatched row the
report gives is a change replay refuses, with the same words.
"""

from __future__ import annotations

import warnings

from comparable import rows as plain
from event_frames import captures
from hypothesis import HealthCheck, given, settings

import cdckit
from cdckit.analysis import transitions


def refusals(events) -> set[tuple]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # materialize warns of keyless changes that found no row
        problems = cdckit.materialize(events, typed=False).problems
    return {(r["table"], r["source"], r["offset"], r["op"], r["problem"]) for r in plain(problems)}


def findings(report) -> set[tuple]:
    found = set()
    for name in ("impossible_transitions", "unmatched_rows"):
        found |= {(r["table"], r["source"], r["offset"], r["op"], r["detail"]) for r in plain(report[name])}
    return found


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(captures(streams=1))
def test_every_refusal_is_a_finding_and_every_finding_a_refusal(events):
    report = cdckit.order_report(events, by="capture")
    assert findings(report) == refusals(events)
    assert report.summary().set_index("finding").loc["impossible_transitions", "severity"] in ("error", "ok")


def test_the_rules_are_the_words_of_both():
    texts = {rule.text.format(op="update") for rule in transitions.RULES}
    assert "update after the key was deleted" in texts and "update of a key the snapshot did not have" in texts
    # the SQL form gives the same answer as the Python form on every state
    import duckdb

    con = duckdb.connect()
    for op in ("insert", "read", "update", "delete"):
        for state in (transitions.LIVE, transitions.GONE, transitions.NEVER):
            for has_after in (True, False):
                for snapshot in (True, False):
                    sql = transitions.problem_sql("op", "state", "has_after", "snap")
                    (got,) = con.execute(
                        f"SELECT {sql} FROM (SELECT $op AS op, $state::INTEGER AS state, $has_after AS has_after, "
                        "$snap AS snap)", {"op": op, "state": state, "has_after": has_after, "snap": snapshot}
                    ).fetchone()
                    assert got == transitions.problem(op, state, has_after, snapshot), (op, state, has_after)
