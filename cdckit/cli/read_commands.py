"""The commands that look at captures: ``detect`` (which dialect is each file), ``read`` (the first events and
the read summary) and ``samples`` (the bundled sample captures).

>>> from cdckit.cli.parser import build_parser
>>> run_samples(build_parser().parse_args(["samples", "--path", "canal/shop"]))  # doctest: +ELLIPSIS
/.../samples/data/canal/shop.jsonl
0
"""

from __future__ import annotations

import argparse
import sys

from tqdm import tqdm

from .. import samples
from ..errors import CdcError, UnknownDialectError
from ..io import expand_paths
from ..io.kafka import is_kafka_url
from ..reading.detect import FLOOR, LOW, detect
from .exit_codes import EXIT_INPUT, EXIT_OK
from .options import (
    checked,
    columns,
    given_keys,
    is_events_file,
    kafka_settings,
    kafka_topic,
    schema_settings,
    unavailable_values,
)
from .reading import read_counted
from .summary import summary_of
from .text import events_table, printable
from .words import cli_words

__all__ = ["run_detect", "run_read", "run_samples", "DEFAULT_HEAD"]

#: Events ``read`` shows without ``--head`` (it then reads the whole input for the summary).
DEFAULT_HEAD = 20


def run_detect(args: argparse.Namespace) -> int:
    """``cdckit detect PATH...``: one line per file on stdout, reasons for failures on stderr."""
    rows: list[tuple[str, str, str, str]] = []
    failed = 0
    for spec in args.paths:
        try:
            files = [spec] if is_kafka_url(spec) else expand_paths(spec)
        except OSError as err:
            print(f"cdckit: error: {printable(err)}", file=sys.stderr)
            failed += 1
            continue
        for file in files:
            if not is_kafka_url(file) and is_events_file(file):
                rows.append((file, "(cdckit events)", "", "canonical events written by cdckit convert"))
                continue
            try:
                found = detect(
                    kafka_topic(file, kafka_settings(args)) if is_kafka_url(file) else file, **schema_settings(args)
                )
            except UnknownDialectError as err:
                print(f"cdckit: error: {printable(file)}: {printable(cli_words(str(err)))}", file=sys.stderr)
                failed += 1
                if err.best is not None:  # something matched, below the floor: say what, flagged unknown
                    guess = f"best guess {err.best[0]} (below the floor {FLOOR:.2f})"
                    if err.runner_up:
                        guess += f"; runner-up {err.runner_up[0]} ({err.runner_up[1]:.2f})"
                    rows.append((file, "unknown", f"{err.best[1]:.2f}", guess))
                continue
            except (CdcError, OSError, ValueError) as err:
                print(f"cdckit: error: {printable(file)}: {printable(cli_words(str(err)))}", file=sys.stderr)
                failed += 1
                continue
            evidence = ", ".join(found.evidence)
            if found.runner_up:
                evidence += f"; runner-up {found.runner_up} ({found.runner_up_confidence:.2f})"
            confidence = f"{found.confidence:.2f}"
            if found.low_confidence:
                confidence += " LOW"
                print(
                    f"cdckit: warning: {printable(file)}: low confidence ({found.confidence:.2f}, below "
                    f"{LOW:.2f}): check the evidence",
                    file=sys.stderr,
                )
            rows.append((file, found.dialect, confidence, evidence))
    if rows:
        width = max(len(r[0]) for r in rows)
        dialect_width = max(len(r[1]) for r in rows)
        for file, dialect, confidence, evidence in rows:
            print(printable(f"{file:<{width}}  {dialect:<{dialect_width}}  {confidence}  {evidence}"))
    return EXIT_INPUT if failed else EXIT_OK


def run_read(args: argparse.Namespace) -> int:
    """``cdckit read PATH...``: the first events as a table on stdout, the summary on stderr."""
    shown = columns(args.columns)
    source, chosen = checked(args, args.paths)
    head = DEFAULT_HEAD if args.head is None else args.head
    capture, counted = read_counted(
        source,
        args.dialect,
        args.errors,
        chosen,
        keep=head,
        unavailable_value=unavailable_values(args),
        stop=args.head is not None,
        keys=given_keys(args),
    )
    if head:
        print(events_table(capture.events.head(head), shown, args.width))
    return summary_of(source, capture, chosen, counted, head)


def run_samples(args: argparse.Namespace) -> int:
    """``cdckit samples``: name, dialect and size of each bundled sample; ``--path NAME``: one sample's path;
    ``--root``: the folder that holds them."""
    if args.root:
        print(samples.DATA)
        return EXIT_OK
    if args.path:
        try:
            print(samples.path(args.path))
        except KeyError as err:
            raise CdcError(str(err.args[0])) from None
        return EXIT_OK
    names = samples.list()
    width = max(len(n) for n in names)
    dialect_width = max(len(n.split("/", 1)[0]) for n in names)
    for name in names:
        size = tqdm.format_sizeof((samples.DATA / name).stat().st_size, "B", 1024)
        print(f"{name:<{width}}  {name.split('/', 1)[0]:<{dialect_width}}  {size:>7}")
    return EXIT_OK
