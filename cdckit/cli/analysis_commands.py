"""The commands that print an analysis of a capture as text: ``order`` (the ordering report: each finding with
its meaning and first rows, then the lag) and ``schema`` (each table's columns now, then how they changed).

>>> from cdckit import samples
>>> from cdckit.cli.parser import build_parser
>>> run_schema(build_parser().parse_args(["schema", str(samples.path("canal/shop")), "--table", "nosuch"]))
Traceback (most recent call last):
...
cdckit.cli.exit_codes.UsageError: --table: ...
"""

from __future__ import annotations

import argparse

from ..errors import how_to_give_keys
from .exit_codes import EXIT_FOUND
from .options import checked
from .reading import load
from .text import printable, text_table
from .words import cli_words

__all__ = ["run_order", "run_schema"]


def run_order(args: argparse.Namespace) -> int:
    """``cdckit order PATH...``: each ordering finding with its meaning and first rows, then the lag."""
    from ..ordering import order_report

    source, chosen = checked(args, args.paths)
    capture, code = load(args, source, chosen)
    report = order_report(capture, by=args.by)
    print(printable(repr(report)))
    serious = False
    for name, finding in report.findings.items():
        if name == "lag" or not len(finding):
            continue
        serious = serious or finding.severity in ("warning", "error")
        rows = f"{len(finding):,} row" + ("" if len(finding) == 1 else "s")
        print(printable(f"\n{name} ({finding.severity}, {rows}): {finding.meaning}"))
        if args.head:
            print(text_table(finding.frame.head(args.head), args.width))
        if len(finding) > args.head:
            print(f"... and {len(finding) - args.head:,} more (--head N shows more)")
        if name == "keyless_tables":  # the detail's advice, whole and in command-line words
            print(printable(cli_words(how_to_give_keys(sorted(finding.frame["table"].dropna().unique())))))
    lag = report["lag"]
    if len(lag):
        print("\nlag (seconds from event_time to emit_time):")
        print(text_table(lag.round(3), args.width))
    return EXIT_FOUND if serious else code


def run_schema(args: argparse.Namespace) -> int:
    """``cdckit schema PATH...``: the columns of each table now, then how they changed."""
    from ..schemas import schema_history, table_schema

    source, chosen = checked(args, args.paths)
    capture, code = load(args, source, chosen)
    current = table_schema(capture)
    if not len(current):
        print("(no table)")
        return code
    for i, (table, columns) in enumerate(current.groupby("table", sort=False)):
        keys = columns.loc[columns["key"].astype(bool), "column"].tolist()
        count = f"{len(columns)} column" + ("" if len(columns) == 1 else "s")
        print(("\n" if i else "") + printable(f"{table}: {count}" + (f", key {', '.join(keys)}" if keys else "")))
        print(text_table(columns[["column", "type", "kind"]].fillna(""), args.width))
    print("\nchanges:")
    print(text_table(schema_history(capture), args.width))
    return code
