"""What a command says when it is done: the read summary on stderr (messages, events, quarantined, the first
quarantined messages) and what was written, on stdout.

>>> summary("capture.jsonl", {"messages": 3, "events": 3, "quarantined": 0, "dialects": {"canal": 3}}, None)
0
"""

from __future__ import annotations

import contextlib
import sys
from typing import Any

import pandas as pd

from ..analysis.filters import Selection, key_matches_nothing
from ..capture import Capture
from ..frame import find_table
from .exit_codes import EXIT_OK, EXIT_QUARANTINED
from .options import Input
from .text import printable
from .words import cli_words

__all__ = ["QUARANTINE_SHOWN", "summary", "summary_of", "print_written"]

#: How many quarantined messages the summary on stderr names.
QUARANTINE_SHOWN = 3


def summary(
    label: str,
    report: dict[str, Any],
    quarantine: pd.DataFrame | None,
    chosen: int | None = None,
    *,
    head: int | None = None,
    stopped: bool = False,
) -> int:
    """Print the read summary on stderr; returns 1 when messages were quarantined, else 0.

    ``chosen``: how many events the filters chose, when some were given; ``head``: how many of the events
    are shown (``--head N``); ``stopped``: the read stopped once it had them (the counts are of the
    messages read so far).

    >>> import contextlib, io
    >>> err = io.StringIO()
    >>> with contextlib.redirect_stderr(err):
    ...     code = summary("c.jsonl", {"messages": 9, "events": 9, "quarantined": 0}, None, 7, head=2)
    >>> err.getvalue()
    'c.jsonl: 9 messages -> 9 events, 0 quarantined; 7 events chosen by the filters (--head 2 shows the first 2)\\n'
    """
    dialects = report.get("dialects") or {}
    named = ", ".join(f"{d} ({n:,})" for d, n in sorted(dialects.items())) if len(dialects) > 1 else "".join(dialects)
    skipped = sum((report.get("skipped") or {}).values())
    line = (
        f"{label}: {report['messages']:,} messages -> {report['events']:,} events, "
        f"{report['quarantined']:,} quarantined"
    )
    if skipped:
        line += f", {skipped:,} skipped"
    if named:
        line += f"; dialect {named}"
    if chosen is not None:
        line += f"; {chosen:,} events chosen by the filters" + (" in the messages read" if stopped else "")
        if head is not None and chosen > head:
            line += f" (--head {head:,} shows the first {head:,})"
    if stopped:
        shown = f"{head:,} event" + ("" if head == 1 else "s")
        line += (
            f"; the read stopped early, once it had the first {shown} to show: the counts are of the "
            "messages read so far, not of the whole input (--head 0 reads it all)"
        )
    if not report["messages"] and not stopped:
        line += " (the input holds no message: nothing to decode)"
    print(printable(line), file=sys.stderr)
    for loss in report.get("producer_losses") or ():  # what the capture cannot know (its producer's settings)
        where = f"{loss['table']}.{loss['column']}"
        print(printable(f"  producer loss: {where}: {loss['what']} ({loss['why']})"), file=sys.stderr)
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


def summary_of(source: Input, capture: Capture, chosen: Selection, counted: Any = None, head: int | None = None) -> int:
    """:func:`summary` of the capture a command read from ``source`` (its report and quarantine); ``counted``:
    what the read counted (:class:`cdckit.cli.reading.Counted`), where it kept only the first ``head`` events."""
    number = counted.chosen if counted is not None else len(capture.events)
    if counted is not None and chosen.keys is not None and not number:
        _no_key_note(counted.keyed, counted.keyless, chosen)
    return summary(
        source.label,
        capture.report,
        capture.quarantine,
        number if chosen else None,
        head=head,
        stopped=bool(counted is not None and counted.stopped),
    )


def print_written(written: Any) -> None:
    """Print what an exporter wrote (its own text) and its notes, in command-line words.

    >>> print_written("wrote 3 events to out.parquet")
    wrote 3 events to out.parquet
    """
    print(printable(written))
    for note in getattr(written, "notes", None) or []:
        print(printable(f"  note: {cli_words(str(note))}"))


def _no_key_note(keyed: set[str], keyless: set[str], chosen: Selection) -> None:
    """Say why ``--key`` chose nothing when the tables it looked in carry no key, and how to give one."""
    if chosen.tables is not None:
        wanted = set()
        for table in chosen.tables:
            with contextlib.suppress(KeyError):  # a table not read is said elsewhere
                wanted.add(find_table(keyed | keyless, table))
        keyed, keyless = keyed & wanted, keyless & wanted
    unanswerable = key_matches_nothing(keyed, keyless)
    if unanswerable is not None:
        print(printable(f"cdckit: note: {cli_words(str(unanswerable))}"), file=sys.stderr)
