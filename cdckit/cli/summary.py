"""What a command says when it is done: the read summary on stderr (messages, events, quarantined, the first
quarantined messages) and what was written, on stdout.

>>> summary("capture.jsonl", {"messages": 3, "events": 3, "quarantined": 0, "dialects": {"canal": 3}}, None)
0
"""

from __future__ import annotations

import sys
from typing import Any

import pandas as pd

from ..capture import Capture
from ..filters import Selection
from .exit_codes import EXIT_OK, EXIT_QUARANTINED
from .options import Input
from .text import printable
from .words import cli_words

__all__ = ["QUARANTINE_SHOWN", "summary", "summary_of", "print_written"]

#: How many quarantined messages the summary on stderr names.
QUARANTINE_SHOWN = 3


def summary(label: str, report: dict[str, Any], quarantine: pd.DataFrame | None,
            chosen: int | None = None) -> int:
    """Print the read summary on stderr; returns 1 when messages were quarantined, else 0.

    ``chosen``: how many events the filters kept, when some were given.
    """
    dialects = report.get("dialects") or {}
    named = ", ".join(f"{d} ({n:,})" for d, n in sorted(dialects.items())) if len(dialects) > 1 else "".join(dialects)
    skipped = sum((report.get("skipped") or {}).values())
    line = (f"{label}: {report['messages']:,} messages -> {report['events']:,} events, "
            f"{report['quarantined']:,} quarantined")
    if skipped:
        line += f", {skipped:,} skipped"
    if named:
        line += f"; dialect {named}"
    if chosen is not None:
        line += f"; {chosen:,} events chosen by the filters"
    print(printable(line), file=sys.stderr)
    if quarantine is not None and len(quarantine):
        for row in quarantine.head(QUARANTINE_SHOWN).itertuples():
            where = f"{row.source}, message {row.offset}"
            if getattr(row, "line", None) is not None and not pd.isna(row.line):
                where += f" (line {row.line})"
            code = getattr(row, "reason_code", None)
            code = f"[{code}] " if isinstance(code, str) else ""
            print(printable(f"  quarantined: {where}: {code}{cli_words(str(row.reason))}"), file=sys.stderr)
        more = report["quarantined"] - min(len(quarantine), QUARANTINE_SHOWN)
        if more > 0:
            print(f"  ... and {more:,} more", file=sys.stderr)
    return EXIT_QUARANTINED if report["quarantined"] else EXIT_OK


def summary_of(source: Input, capture: Capture, chosen: Selection) -> int:
    """:func:`summary` of the capture a command read from ``source`` (its report and quarantine)."""
    return summary(source.label, capture.report, capture.quarantine, len(capture.events) if chosen else None)


def print_written(written: Any) -> None:
    """Print what an exporter wrote (its own text) and its notes, in command-line words.

    >>> print_written("wrote 3 events to out.parquet")
    wrote 3 events to out.parquet
    """
    print(printable(written))
    for note in getattr(written, "notes", None) or []:
        print(printable(f"  note: {cli_words(str(note))}"))
