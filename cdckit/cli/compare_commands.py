"""The commands that check a capture against another source: ``compare`` (two captures of one source, event
by event and their final states) and ``reconcile`` (a table's replayed state against a snapshot of it).

>>> from cdckit.cli.parser import build_parser
>>> run_reconcile(build_parser().parse_args(["reconcile", "capture.jsonl", "snap.txt", "--table", "t"]))
Traceback (most recent call last):
cdckit.cli.exit_codes.UsageError: the snapshot 'snap.txt' is not Parquet or CSV (by its suffix: .parquet, .pq, .csv)
"""

from __future__ import annotations

import argparse
import dataclasses
import os
from pathlib import Path

from ..frame import table_names
from .exit_codes import EXIT_FOUND, UsageError
from .formats import SNAPSHOT_SUFFIXES
from .options import checked, given_keys, inputs, unavailable_values
from .reading import by_table, load, read_events
from .summary import summary_of
from .text import printable

__all__ = ["run_compare", "run_reconcile"]


def run_compare(args: argparse.Namespace) -> int:
    """``cdckit compare A B``: two captures matched event by event, and their final states."""
    import cdckit  # looked up on the package, so that tests can stand in for it

    first, chosen = checked(args, [args.first])
    second = inputs([args.second], args.dialect, first.key_separator)
    rows = dataclasses.replace(chosen, tables=None)
    sides = []
    for source in (first, second):
        sides.append(
            (
                source,
                read_events(
                    source,
                    args.dialect,
                    args.errors,
                    rows,
                    unavailable_value=unavailable_values(args),
                    keys=given_keys(args),
                ),
            )
        )
    if chosen.tables is not None:  # a table may be on one side only: look the names up in both
        names = set().union(*(table_names(capture.events).dropna().unique() for _, capture in sides))
        sides = [(source, capture.replace(by_table(capture.events, chosen, names))) for source, capture in sides]
    codes = [summary_of(source, capture, chosen) for source, capture in sides]
    result = cdckit.compare(sides[0][1], sides[1][1])
    print(printable(result))
    return EXIT_FOUND if not result.ok else max(codes)


def run_reconcile(args: argparse.Namespace) -> int:
    """``cdckit reconcile CAPTURE SNAPSHOT --table T``: the replayed table against a snapshot of it."""
    import cdckit  # looked up on the package, so that tests can stand in for it

    from ..analysis.replay import materialize
    from ..frame import find_table

    key = [c.strip() for c in args.key.split(",") if c.strip()] if args.key is not None else None
    if key == []:
        raise UsageError("--key names no column")
    if Path(args.snapshot).suffix.lower() not in SNAPSHOT_SUFFIXES:
        raise UsageError(
            f"the snapshot {args.snapshot!r} is not Parquet or CSV (by its suffix: {', '.join(SNAPSHOT_SUFFIXES)})"
        )
    source, chosen = checked(args, [args.capture], table=[args.table], key=None)
    if not os.path.exists(args.snapshot):
        raise FileNotFoundError(f"no such file: {args.snapshot}")
    capture, code = load(args, source, chosen)
    state = materialize(capture)
    try:
        table = find_table(state, args.table)
    except KeyError as err:  # the table's events were all left out by --op, --since or --until
        raise UsageError(f"--table: {err.args[0]}") from None
    result = cdckit.reconcile(state, os.fspath(args.snapshot), table=table, key=key)
    print(printable(result))
    return EXIT_FOUND if not result.ok else code
