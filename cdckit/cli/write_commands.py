"""The commands that write a capture out: ``convert`` (canonical events as Parquet/CSV/JSON Lines, or
re-encoded in a dialect; with ``--engine spark`` on Spark) and ``report`` (one HTML file).

Spark is imported only for ``convert --engine spark`` (:mod:`cdckit.spark.convert`).

>>> from cdckit.cli.parser import build_parser
>>> run_convert(build_parser().parse_args(["convert", "a.jsonl", "-o", "b.jsonl", "--layout", "kcat"]))
Traceback (most recent call last):
cdckit.cli.exit_codes.UsageError: --layout applies to a dialect, not to jsonl output
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ..errors import CdcError
from .exit_codes import UsageError
from .formats import target as output_target
from .options import checked, given_keys, refuse_existing, unavailable_values
from .progress import bar
from .reading import load
from .summary import QUARANTINE_SHOWN, print_written, summary

__all__ = ["run_convert", "run_report", "write"]

#: The filter options, which ``--engine spark`` does not take.
_FILTERS = ("table", "op", "key", "since", "until")


def run_convert(args: argparse.Namespace) -> int:
    """``cdckit convert PATH... -o OUT``: the canonical events as a file format, or re-encoded in a dialect."""
    kind, target = output_target(args.to, args.output)
    if args.partition_by and kind == "dialect":
        raise UsageError("--partition-by applies to parquet, csv and jsonl output, not to a dialect")
    if args.layout and kind != "dialect":
        raise UsageError(f"--layout applies to a dialect, not to {target} output")
    if args.engine == "spark":
        if args.errors == "raise":
            raise UsageError("--errors raise needs --engine pandas (Spark quarantines, see the summary)")
        if len(args.paths) > 1:
            raise UsageError("--engine spark reads one PATH (a folder or a quoted glob)")
        if any(getattr(args, name) is not None for name in _FILTERS):
            raise UsageError("the filters (--table, --op, --key, --since, --until) need --engine pandas")
    source, chosen = checked(args, args.paths)
    refuse_existing(args.output, args.force)
    if args.engine == "spark":
        return _convert_on_spark(args, kind, target)
    capture, code = load(args, source, chosen)
    events = capture.events
    with bar(f"writing {target}", "event", total=len(events)) as shown:
        written = write(events, kind, target, args)
        shown.update(len(events))
    print_written(written)
    return code


def write(events: Any, kind: str, target: str, args: argparse.Namespace) -> Any:
    """Write ``events`` (pandas or Spark) as ``target``, a format or a dialect, to ``args.output``; the
    exporter's objections to options are usage errors."""
    from .. import export

    try:
        if kind == "dialect":
            return export.convert(events, target, args.output, layout=args.layout, overwrite=args.force)
        return export.write_events(events, args.output, target, partition_by=args.partition_by, overwrite=args.force)
    except CdcError:
        raise
    except ValueError as err:  # e.g. a layout that does not fit the dialect, csv output with .gz
        raise UsageError(str(err)) from err


def _convert_on_spark(args: argparse.Namespace, kind: str, target: str) -> int:
    """``convert --engine spark``: decode and write with Spark, then the summary and what was written."""
    from ..spark.convert import convert_capture  # pyspark is imported here, and only here

    written, report, quarantine = convert_capture(
        args.paths[0],
        lambda events: write(events, kind, target, args),
        dialect=args.dialect,
        shown=QUARANTINE_SHOWN,
        unavailable_value=unavailable_values(args),
        keys=given_keys(args),
        key_separator=args.key_separator,
    )
    code = summary(args.paths[0], report, quarantine)
    print_written(written)
    return code


def run_report(args: argparse.Namespace) -> int:
    """``cdckit report PATH... -o OUT``: the HTML report, from a read with a progress bar."""
    source, chosen = checked(args, args.paths)
    refuse_existing(args.output, args.force)
    from ..viz.report import write_report

    capture, code = load(args, source, chosen)
    named = source.specs[0] if len(source.specs) == 1 else [Path(f) for f in source.files]
    with bar("writing report", "event", total=len(capture.events)) as shown:
        written = write_report(named, args.output, dialect=args.dialect, overwrite=args.force, events=capture)
        shown.update(len(capture.events))
    print_written(written)
    return code
