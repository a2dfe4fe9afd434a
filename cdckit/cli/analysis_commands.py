"""The commands that print an analysis of a capture as text: ``order`` (the ordering report: each finding with
its meaning and first rows, then the lag), ``schema`` (each table's columns now, then how they changed) and
``keys`` (the key proposed for each table the capture names no key for, with its evidence) and
``transactions`` (one row per transaction, and whether the capture holds all of it).

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

__all__ = ["run_order", "run_schema", "run_keys", "keys_options", "run_transactions"]


def run_order(args: argparse.Namespace) -> int:
    """``cdckit order PATH...``: each ordering finding with its meaning and first rows, then the lag."""
    from ..analysis.ordering import order_report

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
    from ..analysis.schemas import schema_history, table_schema

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


def keys_options(keys: dict[str, list[str]]) -> str:
    """The ``--keys`` options that give ``keys`` to any command that reads.

    >>> keys_options({"public.customers": ["id"], "sales.order_lines": ["order_id", "line_no"]})
    '--keys public.customers=id --keys sales.order_lines=order_id,line_no'
    """
    return " ".join(f"--keys {table}={','.join(columns)}" for table, columns in keys.items())


def run_keys(args: argparse.Namespace) -> int:
    """``cdckit keys PATH...``: the key proposed for each table without one (``cdckit.infer_keys``), its
    evidence and runner-up, and the ``--keys`` options that give it."""
    from ..analysis.keys_inferred import infer_keys

    source, chosen = checked(args, args.paths)
    capture, code = load(args, source, chosen)
    proposal = infer_keys(capture.events)
    evidence = proposal.evidence
    if not len(evidence):
        print("(no table with row changes)")
        return code
    shown = evidence.assign(columns=evidence["columns"].map(lambda c: ", ".join(c) if c is not None else ""))
    print(text_table(shown[["table", "columns", "how", "changes", "runner_up"]].fillna(""), args.width))
    for row in evidence.itertuples(index=False):
        lost = f"; runner-up {row.runner_up}: {row.runner_up_lost}" if row.runner_up else ""
        print(printable(f"\n{row.table}: {row.detail}{lost}"))
    if len(proposal):
        print(printable(f"\ngive these keys to any command that reads: {keys_options(dict(proposal))}"))
        print("(in Python: cdckit.read(..., keys=cdckit.infer_keys(events)) or cdckit.with_keys(events, keys))")
    else:
        print("\nno key proposed: every table names its key already, or no column set identifies its rows")
    return code


#: The columns ``cdckit transactions`` prints as text (``--format csv``/``json`` writes them all).
TRANSACTION_SHOWN = ["txn_id", "dialect", "status", "changes", "declared_changes", "tables", "commit_time", "duration"]


def run_transactions(args: argparse.Namespace) -> int:
    """``cdckit transactions PATH...``: one row per transaction (``cdckit.transactions``), a line of counts
    by status, and the detail of each transaction held only in part."""
    from ..analysis.transactions import transactions

    source, chosen = checked(args, args.paths)
    capture, code = load(args, source, chosen)
    table = transactions(capture.events)
    partial = table[table["complete"].eq(False).fillna(False).astype(bool)]
    shown = partial if args.status == "incomplete" else table
    if args.format == "csv":
        print(shown.to_csv(index=False), end="")
    elif args.format == "json":
        print(shown.to_json(orient="records", lines=True, date_format="iso"), end="")
    else:
        counts = table["status"].value_counts()
        summary = ", ".join(f"{n:,} {status}" for status, n in counts.items())
        print(f"{len(table):,} transaction(s)" + (f": {summary}" if summary else ""))
        if len(shown):
            print(text_table(shown[TRANSACTION_SHOWN].head(args.head), args.width))
            if len(shown) > args.head:
                print(f"... and {len(shown) - args.head:,} more (--head N shows more)")
        for row in partial.head(args.head).itertuples(index=False):
            print(printable(f"\n{row.txn_id if isinstance(row.txn_id, str) else '(unnamed)'}: {row.detail}"))
        if not len(table):
            print(
                "(no transaction: the capture names none; Debezium writes them with provide.transaction.metadata=true)"
            )
    return EXIT_FOUND if len(partial) else code
