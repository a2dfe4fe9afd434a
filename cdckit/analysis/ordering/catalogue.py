"""The findings of the ordering report, as data: each kind, its severity, what it means, its columns.

Both engines fill the same :data:`FINDING_COLUMNS` (pandas dtypes here; the
Spark types follow from them in :mod:`cdckit.spark.ordering`), and the report
lists the findings in the order of :data:`FINDINGS`.

>>> FINDINGS["sequence_gaps"].severity, list(FINDINGS)[:2]
('error', ['inversions', 'time_inversions'])
"""

from __future__ import annotations

from dataclasses import dataclass

from ...errors import how_to_give_keys

__all__ = [
    "FindingSpec",
    "FINDINGS",
    "FINDING_COLUMNS",
    "LAG_COLUMNS",
    "REPEAT_CAUSES",
    "TRANSACTION_FINDINGS",
    "keyless_detail",
]

#: Columns every finding row may fill, with their pandas dtypes.
FINDING_COLUMNS: dict[str, str] = {
    "finding": "string",
    "table": "string",
    "key": "string",
    "source": "string",
    "offset": "Int64",
    "partition": "Int64",
    "seq": "string",
    "op": "string",
    "other_source": "string",
    "other_offset": "Int64",
    "other_seq": "string",
    "count": "Int64",
    "value": "float64",
    "detail": "string",
}

#: Columns of the lag summary (seconds).
LAG_COLUMNS: dict[str, str] = {
    "table": "string",
    "events": "Int64",
    "negative": "Int64",
    "min_s": "float64",
    "p50_s": "float64",
    "p90_s": "float64",
    "p99_s": "float64",
    "max_s": "float64",
    "mean_s": "float64",
}


@dataclass(frozen=True)
class FindingSpec:
    """What a finding is: its severity, what it means, and the columns that show it."""

    severity: str
    meaning: str
    columns: tuple[str, ...]


_AT = ("source", "offset", "partition", "seq", "op")
_OTHER = ("other_source", "other_offset", "other_seq")

#: Every finding of the report, in the order the summary lists them.
FINDINGS: dict[str, FindingSpec] = {
    "inversions": FindingSpec(
        "warning",
        "These events arrived after a later change (higher seq) to the same row, or to the same table when it "
        "has no key: replay in seq order, not arrival order, or the final state is wrong.",
        ("table", "key", *_AT, *_OTHER),
    ),
    "time_inversions": FindingSpec(
        "info",
        "event_time goes backwards here while seq goes forward: seq is the order to trust; event_time is often "
        "the commit time or coarser than the log position.",
        ("table", *_AT, *_OTHER, "detail"),
    ),
    "redeliveries": FindingSpec(
        "warning",
        "The same change (same position, op and images) was delivered more than once: replay is idempotent, but "
        "counts and sums over events count it twice.",
        ("table", "key", *_AT, *_OTHER),
    ),
    "semantic_duplicates": FindingSpec(
        "info",
        "The same change (same key, op and images) as the change of its row just before it, at another position: "
        "harmless for the state but not for event counts. Each detail says what the capture tells of its cause: "
        "a retry or replayed batch upstream, or the source writing it again. An equal change after other changes "
        "of its row, or in another transaction, is the source's own and not listed.",
        ("table", "key", *_AT, *_OTHER, "detail"),
    ),
    "sequence_gaps": FindingSpec(
        "error",
        "Numbers are missing from a sequence that should be contiguous: messages were lost between the source "
        "and this capture.",
        ("source", "partition", "seq", "other_seq", "count", "detail"),
    ),
    "offset_gaps": FindingSpec(
        "warning",
        "Kafka offsets are missing in this partition: messages were lost or filtered, unless the topic is "
        "compacted or written in transactions (commit markers take offsets).",
        ("source", "partition", "offset", "other_offset", "count"),
    ),
    "unpaired_halves": FindingSpec(
        "error",
        "Half of an update never met its other half: that update is not among the events (it is in the quarantine).",
        ("source", "offset", "partition", "detail"),
    ),
    "open_transactions": FindingSpec(
        "warning",
        "A transaction began and did not commit within the capture: its changes may be rolled back, or the "
        "capture was cut in the middle of it.",
        ("source", "offset", "partition", "seq", "detail"),
    ),
    "incomplete_transactions": FindingSpec(
        "error",
        "A transaction's commit declares other counts (in total or per table), or other places, than the changes "
        "the capture holds: changes were lost (count > 0) or delivered beyond the declaration (count < 0). The "
        "row is at its commit; count is declared minus held; cdckit.transactions tells the whole transaction.",
        ("source", "offset", "partition", "seq", "op", "count", "detail"),
    ),
    "unbegun_transactions": FindingSpec(
        "warning",
        "A transaction commits but its BEGIN is not in the capture, though its producer writes begins: the "
        "capture began in the middle of it, or the BEGIN was lost (its changes may be missing too, unless its "
        "commit declares them and they match).",
        ("source", "offset", "partition", "seq", "op", "detail"),
    ),
    "repeated_begins": FindingSpec(
        "warning",
        "A BEGIN seen again for a transaction already begun (other_* is the first): the producer restarted in the "
        "middle of the transaction (Debezium after a crash) and the changes between the two may be delivered twice.",
        ("source", "offset", "partition", "seq", "op", *_OTHER, "detail"),
    ),
    "unended_transactions": FindingSpec(
        "warning",
        "Changes of a transaction with neither BEGIN nor commit in the capture, though the producer marks "
        "transaction ends in it: the capture holds a part of it (its markers in another file or partition not "
        "read, or the capture cut). The row is at its first change; count is its changes.",
        ("table", "source", "offset", "partition", "seq", "op", "count", "detail"),
    ),
    "split_transactions": FindingSpec(
        "info",
        "A transaction whose changes of one source lie in several partitions: a consumer reading the partitions "
        "apart sees it in parts, and no order holds between its partitions. One row per transaction and source, "
        "at its first change there; count is the partitions.",
        ("source", "offset", "partition", "seq", "count", "detail"),
    ),
    "misordered_transactions": FindingSpec(
        "warning",
        "Changes that arrived after a change of their own transaction with a higher seq in the same place "
        "(other_* is that change): the transaction's own order was not kept on the way.",
        ("table", "key", *_AT, *_OTHER, "detail"),
    ),
    "impossible_transitions": FindingSpec(
        "error",
        "Replay refuses these changes: in seq order this row's history cannot happen (insert of a live key, a "
        "change after a delete, a change of a key the snapshot never had, a change without its after image): "
        "events are missing or keys were reused. Truncates and key changes are followed as replay follows them.",
        ("table", "key", *_AT, *_OTHER, "detail"),
    ),
    "unmatched_rows": FindingSpec(
        "warning",
        "Changes of a table without a key that replay cannot place: no live row is their before image, or they "
        "have none. The capture may have begun after these rows were written, or the table has a key the capture "
        "does not name (give it: the keyless_tables detail says how).",
        ("table", *_AT, "detail"),
    ),
    "heartbeat_gaps": FindingSpec(
        "warning",
        "No heartbeat for much longer than usual: the capture may have stalled, and changes from that window "
        "may be missing.",
        ("source", "offset", "other_offset", "value", "count", "detail"),
    ),
    "keyless_tables": FindingSpec(
        "warning",
        "Changes without a primary key: replay keeps these tables as a multiset of rows, per-row checks "
        "compare whole rows, and scd2, history and the explorer's row history need keys: each row's detail says "
        "how to find and give them.",
        ("table", "count", "detail"),
    ),
    "lag": FindingSpec(
        "info",
        "Capture lag (emit_time - event_time) per table in seconds; negative values mean the clocks disagree.",
        tuple(LAG_COLUMNS),
    ),
}


#: Why a change equal to the one before it (no change of the row between them) is there, by whether replay
#: refuses it: the row's history cannot hold it twice, or it can (the capture cannot tell a retry from the
#: source writing it again).
#: The findings read from the transactions of a capture (:mod:`.transaction_findings`), in report order.
TRANSACTION_FINDINGS = (
    "incomplete_transactions",
    "unbegun_transactions",
    "repeated_begins",
    "unended_transactions",
    "split_transactions",
    "misordered_transactions",
)

REPEAT_CAUSES = {
    True: "the row's history cannot repeat it here: a retry or replayed batch upstream, or the changes between "
    "them were lost",
    False: "no change of the row between them: the source wrote the same change again (an update to the same "
    "values, equal rows of a table without a key) or a retry upstream sent it again; the capture cannot tell which",
}


def keyless_detail(table: str, count: int) -> str:
    """The detail of a ``keyless_tables`` row (both engines write it with this): how many changes of ``table``
    name no key, and how to find and give its key columns (:func:`cdckit.errors.how_to_give_keys`).

    >>> keyless_detail("shop.notes", 3).split("; ")[0]
    '3 change(s) of shop.notes without a key: replayed as a multiset of rows'
    """
    return f"{count} change(s) of {table} without a key: replayed as a multiset of rows; {how_to_give_keys([table])}"
