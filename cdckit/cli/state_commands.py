"""The commands that replay a capture into tables: ``state`` (the final rows of each table) and ``scd2``
(every version of every row), printed as text tables or written with ``-o`` to a folder of one file per table.

>>> from cdckit.cli.parser import build_parser
>>> run_state(build_parser().parse_args(["state", "capture.jsonl", "--to", "csv"]))
Traceback (most recent call last):
cdckit.cli.exit_codes.UsageError: --to needs -o OUT
"""

from __future__ import annotations

import argparse
import sys
import warnings
from collections.abc import Callable
from typing import Any

import pandas as pd

from .exit_codes import UsageError
from .formats import table_format
from .options import checked, refuse_existing
from .reading import load
from .summary import QUARANTINE_SHOWN, print_written
from .text import print_tables, printable, text_table
from .words import cli_words

__all__ = ["run_state", "run_scd2"]


def _tables_command(args: argparse.Namespace, make: Callable[[pd.DataFrame], Any], write_name: str, what: str) -> int:
    """``state`` and ``scd2``: the tables ``make`` builds from the chosen events, printed or written."""
    fmt = table_format(args.to, args.output) if args.output else None
    if args.to is not None and args.output is None:
        raise UsageError("--to needs -o OUT")
    source, chosen = checked(args, args.paths)
    if args.output:
        refuse_existing(args.output, args.force)
    capture, code = load(args, source, chosen)
    with warnings.catch_warnings(record=True) as caught:  # what the replay says (a table without key columns)
        warnings.simplefilter("always")
        tables = make(capture)
    for warning in caught:
        print(f"cdckit: warning: {printable(cli_words(str(warning.message)))}", file=sys.stderr)
    problems = getattr(tables, "problems", None)
    if problems is not None and len(problems):
        print(
            f"cdckit: {len(problems):,} change(s) did not fit the replay (an update or delete of a key that "
            "is not there, an insert of a live key...); first:",
            file=sys.stderr,
        )
        print(text_table(problems.head(QUARANTINE_SHOWN), 40), file=sys.stderr)
    if args.output:
        from .. import export

        print_written(getattr(export, write_name)(tables, args.output, fmt, overwrite=args.force))
    else:
        print_tables(dict(tables), args.head, args.width, what)
    return code


def run_state(args: argparse.Namespace) -> int:
    """``cdckit state PATH...``: the final rows of each table."""
    from ..analysis.replay import materialize

    def make(events: pd.DataFrame) -> Any:
        return materialize(events, after_transaction=args.after_transaction, whole_transactions=args.whole_transactions)

    return _tables_command(args, make, "write_state", "rows")


def run_scd2(args: argparse.Namespace) -> int:
    """``cdckit scd2 PATH...``: every version of every row."""
    from ..analysis.replay import scd2

    return _tables_command(args, scd2, "write_scd2", "versions")
