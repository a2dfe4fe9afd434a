"""What the ordering report may say of a clean capture of a real producer, and what a damaged copy must show.

A clean capture (its replay reconciles with the live tables) gets no error and
no warning but those a test names with the reason they are true of it (a
values-only capture truly names no key). A copy with one message removed (a
delete whose key is inserted again later) must show the loss as an error.
"""

from __future__ import annotations

import pandas as pd

import cdckit
from cdckit.frame import table_names


def loud_findings(events: pd.DataFrame) -> dict[str, int]:
    """The errors and warnings of the report of ``events``: finding -> rows."""
    summary = cdckit.order_report(events).summary()
    loud = summary[summary["severity"].isin(["error", "warning"])]
    return dict(zip(loud["finding"], loud["rows"].astype(int)))


def assert_only_true_findings(events: pd.DataFrame, true: dict[str, str]) -> None:
    """The report of ``events`` has no error or warning but those named in ``true`` (finding -> why it is true)."""
    found = loud_findings(events)
    report = cdckit.order_report(events)
    false = {name: report[name].head(3).to_dict("records") for name in found if name not in true}
    assert not false, false


def without_a_lost_message(events: pd.DataFrame) -> tuple[pd.DataFrame, pd.Series]:
    """``events`` without one change that a later change of its key needs, and that change: a delete whose key
    is inserted again later, else an insert (after a snapshot of its table) whose key is changed later."""
    changes = events[events["op"].isin(["read", "insert", "update", "delete"]) & events["key"].notna()]
    changes = cdckit.sort_events(changes.assign(_table=table_names(changes)))
    row = [changes["_table"], changes["key"]]
    after = changes.groupby(row)["op"].shift(-1)
    snapshot = (changes["op"] == "read").groupby(changes["_table"]).cummax()
    for wanted in ((changes["op"] == "delete") & (after == "insert"),
                   (changes["op"] == "insert") & after.isin(["update", "delete"]) & snapshot):
        if wanted.any():
            lost = changes[wanted].iloc[wanted.sum() // 2]
            return events.drop(index=lost.name), lost
    raise AssertionError("the capture has no change a later change of its key needs: nothing to remove")


def assert_a_lost_message_shows(events: pd.DataFrame) -> None:
    """Removing one change that a later change of its key needs gives an impossible transition on that key."""
    damaged, lost = without_a_lost_message(events)
    found = cdckit.order_report(damaged)["impossible_transitions"]
    assert (found["key"] == lost["key"]).any(), (lost.to_dict(), found.head().to_string())
