"""The ``cdckit`` command line: detect, read, convert, report, order, state, scd2, schema, compare,
reconcile, samples.

Every command is a small function over the library (``cdckit.detect``,
``cdckit.read``, :mod:`cdckit.filters`, :mod:`cdckit.export`,
:mod:`cdckit.report`, ``cdckit.order_report``, ``cdckit.materialize``...);
this module only parses arguments, checks them all before any decoding
starts, shows progress and turns errors into one-line messages and exit
codes (see :data:`EXIT_CODES`). Commands that read take several PATH
arguments (one capture) and the filters ``--table``, ``--op``, ``--key``,
``--since`` and ``--until`` (the rule is :func:`cdckit.filters.select`).
``main`` takes the arguments as a list, so it can be called in-process:

>>> main(["samples", "--path", "canal/shop"])  # doctest: +ELLIPSIS
/.../samples/data/canal/shop.jsonl
0
"""
from __future__ import annotations

import argparse
import dataclasses
import os
import re
import sys
import threading
import traceback
import warnings
from pathlib import Path
from typing import Any, Callable

import pandas as pd
from tqdm import tqdm

from . import __version__, samples
from .containers import expand_paths
from .detect import FLOOR, LOW, detect
from .dialects import registry
from .errors import AmbiguousDialectError, CdcError, DecodeError, SparkSetupError, UnknownDialectError
from .filters import Selection, selection
from .frame import COLUMN_NAMES, OPS, empty_events
from .ordering._shared import STREAMS, table_names
from .read import exported_events, read

__all__ = [
    "main",
    "build_parser",
    "EXIT_OK",
    "EXIT_QUARANTINED",
    "EXIT_FOUND",
    "EXIT_USAGE",
    "EXIT_INPUT",
    "EXIT_OUTPUT_EXISTS",
    "EXIT_NO_JAVA",
    "EXIT_INTERNAL",
    "EXIT_CODES",
    "ReadProgress",
    "cli_words",
]

EXIT_OK = 0
EXIT_QUARANTINED = 1
#: The same code: the command finished and found something to look at.
EXIT_FOUND = EXIT_QUARANTINED
EXIT_USAGE = 2
EXIT_INPUT = 3
EXIT_OUTPUT_EXISTS = 4
EXIT_NO_JAVA = 5
EXIT_INTERNAL = 70

#: Every exit code and what it means (printed by ``cdckit --help``).
EXIT_CODES = {
    EXIT_OK: "success",
    EXIT_FOUND: "finished, but found something to look at: quarantined messages (every command that reads),\n"
    "     ordering findings of severity warning or error (order), differences (compare, reconcile)",
    EXIT_USAGE: "usage error (bad option or argument: format, suffix, --op, --key, --since/--until, --table)",
    EXIT_INPUT: "input problem: missing or unreadable file, unknown dialect name, no dialect detected\n"
    "     (detect), undecodable message with --errors raise, output that cannot be written",
    EXIT_OUTPUT_EXISTS: "the output exists (pass --force to replace it)",
    EXIT_NO_JAVA: "--engine spark, but Spark cannot start (no Java 17+); the message says what to install",
    EXIT_INTERNAL: "internal error (a bug: --debug shows the traceback)",
}

#: Events per chunk of a read.
CHUNK_EVENTS = 20_000
#: Seconds between two redraws of the read's progress bar (it moves by bytes read, also inside a chunk).
PROGRESS_TICK = 0.5
#: Columns ``cdckit read`` shows by default.
READ_COLUMNS = ("op", "table", "key", "seq", "event_time", "before", "after")
#: Output formats ``--to`` guesses from the output's suffix.
SUFFIX_FORMATS = {".parquet": "parquet", ".pq": "parquet", ".csv": "csv", ".jsonl": "jsonl", ".json": "jsonl",
                  ".ndjson": "jsonl"}
#: Suffixes of a snapshot ``cdckit reconcile`` reads.
SNAPSHOT_SUFFIXES = (".parquet", ".pq", ".csv")
#: How many quarantined messages the summary on stderr names.
QUARANTINE_SHOWN = 3

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")  # all but tab and newline
_CONTROL_IN_CELL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


class UsageError(Exception):
    """A bad combination of options, found after argparse (exit code 2)."""


# ---------------------------------------------------------------- the parser

_MAIN_EXAMPLES = """\
examples:
  cdckit samples                                  list the bundled sample captures
  cdckit detect captures/                         which dialect is each file?
  cdckit read $(cdckit samples --path canal/shop) --head 5
  cdckit read captures/*.jsonl --table customers --key 3
  cdckit convert capture.jsonl -o events.parquet  the canonical events as Parquet
  cdckit convert capture.jsonl -o out.jsonl --to debezium
  cdckit report capture.jsonl -o report.html      a self-contained HTML report
  cdckit order capture.jsonl                      what is wrong with the order?
  cdckit state capture.jsonl -o state/            the final rows of each table, as Parquet
  cdckit compare before.jsonl after.jsonl         two captures of one source

filters (every command that reads):
  --table NAME   database.table or the bare table name; repeat it or use commas for several
  --op OP        {ops}
  --key K        key values, exact: 3 matches key 3 (or "3"), never 13; 3,7 or '[3,"x"]' is a
                 composite key; repeat --key for several keys
  --since T      events at or after T; --until T: events before T (ISO time or date, UTC unless
                 a zone is given: 2024-05-01, 2024-05-01T12:00:00+02:00)

exit codes:
{codes}

Progress bars are drawn on stderr only when stderr is a terminal.
"""

_EXAMPLES = {
    "detect": """\
examples:
  cdckit detect capture.jsonl
  cdckit detect captures/ 'more/*.json.gz'
  cdckit detect $(cdckit samples --path maxwell)

One line per file: path, dialect, confidence (the mean detector score) and the
evidence. Exits 3 when some file could not be detected (the reason is on stderr).
""",
    "read": """\
examples:
  cdckit read capture.jsonl
  cdckit read capture.jsonl --head 5 --columns op,table,key,after
  cdckit read captures/*.jsonl --table shop.customers --op update --since 2024-05-01
  cdckit read capture.jsonl --dialect canal --errors raise
  cdckit read $(cdckit samples --path lindorm/shop) --width 80

Prints the first N events as a table (the table column shows database.table,
long images are cut to --width characters), then a summary of the whole capture
on stderr: messages, events, quarantined, and the first quarantined messages
with file and offset. Exits 1 when some messages were quarantined.
""",
    "convert": """\
examples:
  cdckit convert capture.jsonl -o events.parquet
  cdckit convert captures/ -o events.csv --force
  cdckit convert capture.jsonl -o events/ --to parquet --partition-by table
  cdckit convert capture.jsonl -o events.parquet --engine spark
  cdckit convert canal.jsonl -o debezium.jsonl --to debezium --table customers

--to is a format ({formats}) or a dialect
({dialects});
without it, the format comes from OUT's suffix (.parquet, .csv, .jsonl).
--engine spark reads one PATH (a folder or a quoted glob), without filters, and
writes a folder of part files (Spark's own writers).
Exits 1 when some messages were quarantined, 4 when OUT exists (without --force).
""",
    "report": """\
examples:
  cdckit report capture.jsonl -o report.html
  cdckit report captures/ -o report.html --force
  cdckit report a.jsonl b.jsonl -o report.html --table customers

One HTML file that opens offline: detection, accounting, quarantine, op counts,
timeline, ordering findings, lag and before/after diffs. Exits 1 when some
messages were quarantined, 4 when the output exists (without --force).
""",
    "order": """\
examples:
  cdckit order capture.jsonl
  cdckit order captures/ --by partition --head 5
  cdckit order capture.jsonl --table customers --since 2024-05-01

Lists each ordering finding (inversions, redeliveries, gaps, unpaired halves...)
with its meaning and first rows, then the capture lag per table. Exits 1 when
a finding of severity warning or error has rows (or messages were quarantined),
0 when there are only findings of severity info or none.
""",
    "state": """\
examples:
  cdckit state capture.jsonl
  cdckit state capture.jsonl --table customers --head 50
  cdckit state capture.jsonl -o state/             one Parquet file per table
  cdckit state capture.jsonl -o state.csv --force  one CSV file per table, in folder state.csv
  cdckit state capture.jsonl -o out/ --to jsonl --until 2024-05-02

The final rows of each table after replaying the changes (cdckit.materialize):
printed as tables, or written with -o to a folder of one file per table (the
format from --to, else OUT's suffix, else Parquet). Changes that did not fit
(replay problems) are counted on stderr. Exits 1 when some messages were
quarantined, 4 when OUT exists (without --force).
""",
    "scd2": """\
examples:
  cdckit scd2 capture.jsonl --table customers
  cdckit scd2 capture.jsonl -o history/ --to csv

Every version of every row, valid_from / valid_to / is_current (cdckit.scd2):
printed as tables, or written with -o as state does. Exits 1 when some
messages were quarantined, 4 when OUT exists (without --force).
""",
    "schema": """\
examples:
  cdckit schema capture.jsonl
  cdckit schema capture.jsonl --table customers

The columns of each table now (name and type, the key), then every change of
the column set, a type or the key over time, beside the DDL that made it
(cdckit.schema_history). Exits 1 when some messages were quarantined.
""",
    "compare": """\
examples:
  cdckit compare connector_a.jsonl connector_b.jsonl
  cdckit compare before/ after/ --table customers

Two captures of the same source: events matched by table, key and image, those
missing on either side, those that differ, and the final states' differences
(cdckit.compare). A and B are each one file, folder or quoted glob; the filters
apply to both. Exits 0 when they agree, 1 when they differ (or messages were
quarantined).
""",
    "reconcile": """\
examples:
  cdckit reconcile capture.jsonl snapshot.parquet --table customers
  cdckit reconcile capture.jsonl customers.csv --table shop.customers --key id
  cdckit reconcile captures/ snapshot.csv --table orders --key order_id,line_no --until 2024-05-02

The replayed state of table T against a snapshot of it (Parquet or CSV): rows
missing, extra and different, by key (cdckit.reconcile). --key names the key
columns (default: the capture's key columns); --op, --since and --until choose
the changes replayed. Exits 0 when they agree, 1 when they differ.
""",
    "samples": """\
examples:
  cdckit samples
  cdckit samples --path canal/shop
  cdckit samples --root
  cdckit read $(cdckit samples --path canal/shop)

NAME is a name from the list, a dialect (its examples file) or DIALECT/STEM.
--root prints the folder that holds them all.
""",
}


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``cdckit`` (one subcommand per command).

    >>> args = build_parser().parse_args(["read", "capture.jsonl", "--head", "5"])
    >>> args.command, args.paths, args.head
    ('read', ['capture.jsonl'], 5)
    """
    codes = "\n".join(f"  {code:<3}{meaning}" for code, meaning in EXIT_CODES.items())
    parser = argparse.ArgumentParser(
        prog="cdckit",
        description="Understand captured change-data-capture streams: detect the dialect, decode to the "
        "canonical event frame, convert, report, replay, compare.",
        epilog=_MAIN_EXAMPLES.format(codes=codes, ops=", ".join(OPS)),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"cdckit {__version__}")
    parser.add_argument("--debug", action="store_true", help="show the traceback of an error")
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,  # keeps `cdckit --debug CMD`
                        help="show the traceback of an error")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def command(name: str, summary: str, run: Callable[[argparse.Namespace], int], **epilog: str) -> Any:
        sub = commands.add_parser(
            name, help=summary, description=summary, parents=[common],
            epilog=_EXAMPLES[name].format(**epilog), formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        sub.set_defaults(run=run)
        return sub

    sub = command("detect", "Detect the dialect of each file.", _detect)
    sub.add_argument("paths", nargs="+", metavar="PATH", help="file, directory or glob")

    sub = command("read", "Show the first events of a capture and its read summary.", _read)
    _add_input(sub)
    sub.add_argument("--head", type=_count, default=20, metavar="N", help="events to show (default 20)")
    sub.add_argument("--columns", action="append", metavar="A,B,...",
                     help=f"columns to show (default {','.join(READ_COLUMNS)}); any of: {', '.join(COLUMN_NAMES)}")
    _add_width(sub)

    sub = command("convert", "Write a capture's canonical events as Parquet/CSV/JSON Lines, or in another dialect.",
                  _convert, formats=", ".join(_formats()), dialects=", ".join(registry.names()))
    _add_input(sub)
    sub.add_argument("-o", "--output", required=True, metavar="OUT", help="file (or folder) to write")
    sub.add_argument("--to", metavar="FORMAT_OR_DIALECT", help="output format or dialect (default: OUT's suffix)")
    sub.add_argument("--engine", choices=("pandas", "spark"), default="pandas",
                     help="decode with pandas (default) or Spark (needs Java 17+)")
    sub.add_argument("--partition-by", choices=("table",),
                     help="one folder per database.table (table_name=<database.table>/part-0.<ext>)")
    sub.add_argument("--layout", choices=("jsonl", "kcat", "text", "csv", "parquet"),
                     help="with a dialect: how its messages are laid out (kcat keeps Kafka keys; default: the "
                     "dialect's own, or OUT's suffix)")
    sub.add_argument("--force", action="store_true", help="replace OUT when it exists")

    sub = command("report", "Write a self-contained HTML report of a capture.", _report)
    _add_input(sub)
    sub.add_argument("-o", "--output", required=True, metavar="OUT", help="HTML file to write")
    sub.add_argument("--force", action="store_true", help="replace OUT when it exists")

    sub = command("order", "List what is wrong with the order of a capture (the ordering report).", _order)
    _add_input(sub)
    sub.add_argument("--by", choices=tuple(STREAMS), default="source",
                     help="which events are compared with each other (default source: within each file or topic)")
    sub.add_argument("--head", type=_count, default=10, metavar="N", help="rows to show per finding (default 10)")
    _add_width(sub)

    for name, summary, run in (
            ("state", "Replay a capture: the final rows of each table, shown or written out.", _state),
            ("scd2", "Every version of every row (SCD type 2), shown or written out.", _scd2)):
        sub = command(name, summary, run)
        _add_input(sub)
        sub.add_argument("-o", "--output", metavar="OUT", help="folder to write, one file per table")
        sub.add_argument("--to", metavar="FORMAT", help=f"{', '.join(_formats())} (default: OUT's suffix, else "
                         "parquet)")
        sub.add_argument("--force", action="store_true", help="replace OUT when it exists")
        sub.add_argument("--head", type=_count, default=20, metavar="N", help="rows to show per table (default 20)")
        _add_width(sub)

    sub = command("schema", "Show each table's columns and how they changed over time.", _schema)
    _add_input(sub)
    _add_width(sub)

    sub = command("compare", "Compare two captures of the same source.", _compare)
    sub.add_argument("first", metavar="A", help="the first capture: file, directory or glob")
    sub.add_argument("second", metavar="B", help="the second capture: file, directory or glob")
    _add_read_options(sub)
    _add_filters(sub)

    sub = command("reconcile", "Check a table's replayed state against a snapshot of the source table.", _reconcile)
    sub.add_argument("capture", metavar="CAPTURE", help="the capture: file, directory or glob")
    sub.add_argument("snapshot", metavar="SNAPSHOT", help="the snapshot: a Parquet or CSV file")
    sub.add_argument("--table", required=True, metavar="T", help="the table (database.table or the bare name)")
    sub.add_argument("--key", metavar="COL,...", help="the key columns (default: the capture's key columns)")
    _add_read_options(sub)
    _add_filters(sub, tables=False, keys=False)

    sub = command("samples", "List the bundled sample captures, or print one's path.", _samples)
    sub.add_argument("--path", metavar="NAME", help="print the path of sample NAME instead of the list")
    sub.add_argument("--root", action="store_true", help="print the folder that holds the samples")
    return parser


def _add_input(sub: argparse.ArgumentParser) -> None:
    sub.add_argument("paths", nargs="+", metavar="PATH",
                     help="file, directory or glob (.gz read transparently); several are read as one capture")
    _add_read_options(sub)
    _add_filters(sub)


def _add_read_options(sub: argparse.ArgumentParser) -> None:
    sub.add_argument("--dialect", metavar="D", help="skip detection: read every file as dialect D")
    sub.add_argument("--errors", choices=("quarantine", "raise"), default="quarantine",
                     help="quarantine undecodable messages (default) or stop at the first one (exit 3)")


def _add_filters(sub: argparse.ArgumentParser, tables: bool = True, keys: bool = True) -> None:
    group = sub.add_argument_group("filters", "Keep only some events (options combine with and; the values of "
                                   "one option, repeated or between commas, with or).")
    if tables:
        group.add_argument("--table", action="append", metavar="NAME",
                           help="database.table or the bare table name (customers or shop.customers)")
    group.add_argument("--op", action="append", metavar="OP", help=f"one of {', '.join(OPS)}")
    if keys:
        group.add_argument("--key", action="append", metavar="K",
                           help="key values, matched exactly (3 matches 3 and \"3\", never 13); a composite key "
                           "as 3,7 or JSON '[3,\"x\"]'")
    group.add_argument("--since", metavar="T", help="events at or after T (ISO time or date; UTC unless zoned)")
    group.add_argument("--until", metavar="T", help="events before T (ISO time or date; UTC unless zoned)")


def _add_width(sub: argparse.ArgumentParser) -> None:
    sub.add_argument("--width", type=_count, default=40, metavar="N",
                     help="cut longer cells to N characters (default 40)")


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, not {value}")
    return value


def _formats() -> tuple[str, ...]:
    from .export import FORMATS

    return tuple(FORMATS)


# ---------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    """Run the command line on ``argv`` (``sys.argv[1:]`` when None); returns the exit code.

    >>> main(["--version"])
    cdckit 0.1.0
    0
    """
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as stop:  # --help, --version, or a usage error already printed
        return stop.code if isinstance(stop.code, int) else EXIT_USAGE
    try:
        return args.run(args)
    except KeyboardInterrupt:
        print("cdckit: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `cdckit read ... | head`: the reader has gone, and that is fine
        _silence_stdout()
        return EXIT_OK
    except Exception as err:  # every error ends as one line on stderr and an exit code
        code, message = _explain(err)
        if code == EXIT_INTERNAL:
            inputs = [getattr(args, name, None) for name in ("first", "second", "capture", "snapshot")]
            named = ", ".join(str(i) for i in (getattr(args, "paths", None) or inputs) if i)
            message = f"{message}, while working on {named}" if named else message
        if args.debug:
            traceback.print_exc()
        print(f"cdckit: error: {_printable(cli_words(message))}", file=sys.stderr)
        return code


def _explain(err: Exception) -> tuple[int, str]:
    """The exit code and message of an error."""
    if isinstance(err, UsageError):
        return EXIT_USAGE, f"{err} (see cdckit --help)"
    if isinstance(err, FileExistsError):
        return EXIT_OUTPUT_EXISTS, str(err)
    if isinstance(err, SparkSetupError):
        return EXIT_NO_JAVA, str(err)
    if isinstance(err, DecodeError):
        return EXIT_INPUT, f"cannot decode {err.source}, message {err.offset}: {err.reason}"
    if isinstance(err, UnknownDialectError):
        message = str(err)
        if "known dialects" not in message and "tried:" not in message:
            message += f" (known dialects: {', '.join(registry.names())})"
        return EXIT_INPUT, message
    if isinstance(err, AmbiguousDialectError):
        return EXIT_INPUT, str(err)
    if isinstance(err, (CdcError, OSError)):
        return EXIT_INPUT, str(err)
    return EXIT_INTERNAL, f"internal error: {type(err).__name__}: {err} (--debug shows the traceback)"


def _silence_stdout() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


# ---------------------------------------------------------------- CLI words

#: Library phrases that name Python arguments, and how the command line says them.
_CLI_WORDS: tuple[tuple[re.Pattern[str], str], ...] = tuple((re.compile(p), r) for p, r in (
    (r"pass overwrite=True to replace it(?: \(CLI: --force\))?", "pass --force to replace it"),
    (r"\boverwrite=True\b", "--force"),
    (r"pass format= \(one of ([^)]*)\)", r"pass --to (one of \1)"),
    (r"\bformat=", "--to "),
    (r"\blayout=?\s*['\"]?(\w+)['\"]?", r"--layout \1"),
    (r"pass dialect= to choose", "pass --dialect NAME to choose"),
    (r"\bdialect=['\"](\w+)['\"]", r"--dialect \1"),
    (r"\berrors=['\"](\w+)['\"]", r"--errors \1"),
    (r"\bpartition_by=['\"](\w+)['\"]", r"--partition-by \1"),
    (r"\(see states\.problems\)", "(counted on stderr)"),
    (r"; see cdckit\.samples\.list\(\)", "; cdckit samples lists them"),
    (r"tables: \[([^\]]*)\]", lambda m: "tables: " + m.group(1).replace("'", "")),  # type: ignore[list-item]
))


def cli_words(text: str) -> str:
    """A library message as the command line says it: options, not Python arguments.

    >>> cli_words("layout 'csv' does not fit debezium messages; choose one of jsonl, kcat")
    '--layout csv does not fit debezium messages; choose one of jsonl, kcat'
    >>> cli_words("out.parquet exists; pass overwrite=True to replace it (CLI: --force)")
    'out.parquet exists; pass --force to replace it'
    """
    for pattern, replacement in _CLI_WORDS:
        text = pattern.sub(replacement, text)
    return text


# ---------------------------------------------------------------- helpers


def _printable(text: Any, pattern: re.Pattern[str] = _CONTROL) -> str:
    """``text`` with terminal control characters shown as escapes (a capture must not drive the terminal)."""
    return pattern.sub(lambda m: repr(m.group())[1:-1], str(text))


def _on_terminal() -> bool:
    return sys.stderr.isatty()


def _bar(desc: str, unit: str, total: int | None = None) -> tqdm:
    """A progress bar on stderr, drawn only when stderr is a terminal."""
    return tqdm(total=total, desc=desc, unit=unit, unit_scale=True, file=sys.stderr,
                disable=not _on_terminal(), leave=False, dynamic_ncols=True)


class ReadProgress:
    """The progress of a read in bytes of its input files, with a total and an ETA, redrawn every
    :data:`PROGRESS_TICK` seconds by a thread of its own while the read goes on.

    Files are read one after another: the files before the one being read
    count whole, and of that one the position of its open file (on Linux,
    from ``/proc/self/fdinfo``, so the bar moves inside a long chunk too;
    elsewhere it moves file by file, and the clock keeps running). Drawn only
    when stderr is a terminal; use it as a context manager.

    >>> progress = ReadProgress([__file__])
    >>> progress.total == os.path.getsize(__file__), progress.bytes_read()
    (True, 0)
    """

    def __init__(self, files: list[str], desc: str = "reading") -> None:
        self.files = list(files)
        self.sizes = [_size_of(f) for f in self.files]
        self.total = sum(self.sizes)
        self._real = {os.path.realpath(f): i for i, f in enumerate(self.files)}
        self.reached = 0  # files before this index are read
        self.bar = tqdm(total=self.total, desc=desc, unit="B", unit_scale=True, unit_divisor=1024,
                        mininterval=PROGRESS_TICK, file=sys.stderr, disable=not _on_terminal(), leave=False,
                        dynamic_ncols=True)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def __enter__(self) -> "ReadProgress":
        if not self.bar.disable:
            self._thread = threading.Thread(target=self._run, name="cdckit-progress", daemon=True)
            self._thread.start()
        return self

    def __exit__(self, kind: Any, *exc: Any) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        if kind is None:  # read to the end
            self.bar.n = self.total
            self.bar.refresh()
        self.bar.close()

    def sources_seen(self, sources: Any) -> None:
        """The read has come to the last of ``sources`` (the report's ``sources``): those before it are read."""
        for name in sources:
            index = self._real.get(os.path.realpath(str(name)))
            if index is not None and index > self.reached:
                self.reached = index

    def bytes_read(self) -> int:
        """Bytes of the files read so far (never more than the total)."""
        positions = open_positions(self._real)
        current = max((i for i in positions), default=self.reached)
        self.reached = max(self.reached, current)
        done = sum(self.sizes[: self.reached]) + positions.get(self.reached, 0)
        return min(done, self.total)

    def tick(self) -> None:
        """Move the bar to the bytes read and redraw it (the elapsed time and the rate move on too)."""
        self.bar.n = max(self.bar.n, self.bytes_read())
        self.bar.refresh()

    def _run(self) -> None:
        while not self._stop.wait(PROGRESS_TICK):
            self.tick()


def _size_of(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def open_positions(files: dict[str, int]) -> dict[int, int]:
    """``{index: position}`` of the files this process has open, of ``files`` (real path -> index); on
    systems without ``/proc/self/fdinfo`` nothing."""
    positions: dict[int, int] = {}
    try:
        descriptors = os.listdir("/proc/self/fd")
    except OSError:
        return positions
    for fd in descriptors:
        try:
            index = files.get(os.readlink(f"/proc/self/fd/{fd}"))
            if index is None:
                continue
            with open(f"/proc/self/fdinfo/{fd}", encoding="ascii") as info:
                position = int(info.readline().split()[1])
        except (OSError, ValueError, IndexError):
            continue
        positions[index] = max(positions.get(index, 0), position)
    return positions


# ---------------------------------------------------------------- inputs, checked before reading


@dataclasses.dataclass
class _Input:
    """What a command reads: the paths as given and the files they name (or cdckit's own events)."""

    specs: list[str]
    files: list[str]
    exported: bool

    @property
    def label(self) -> str:
        return self.specs[0] if len(self.specs) == 1 else f"{self.specs[0]} and {len(self.specs) - 1} more"


def _inputs(specs: list[str], dialect: str | None) -> _Input:
    """The files of ``specs`` (each must name some; the same file twice is read once), or canonical events
    cdckit wrote; nothing is decoded yet."""
    exported = [dialect is None and os.path.exists(spec) and _is_events_file(spec) for spec in specs]
    if any(exported) and not all(exported):
        raise UsageError("canonical events written by cdckit and raw captures cannot be read together")
    if all(exported):
        return _Input(list(specs), list(specs), True)
    files: list[str] = []
    for spec in specs:
        files += [f for f in expand_paths(spec) if f not in files]
    return _Input(list(specs), files, False)


def _selection(args: argparse.Namespace, **given: Any) -> Selection:
    """The filter options, each checked (a bad value is a usage error naming the option); ``given``
    replaces options of ``args`` (``reconcile`` has a table of its own and key columns, not key values)."""
    options = {name: getattr(args, name, None) for name in ("table", "op", "key", "since", "until")}
    options.update(given)
    if options["key"] is not None:
        options["key"] = frozenset(options["key"])
    for name, value in options.items():
        if value is not None:
            try:
                selection(**{name: value})
            except ValueError as err:
                shown = ", ".join(sorted(value)) if isinstance(value, frozenset) else \
                    ",".join(value) if isinstance(value, list) else value
                raise UsageError(f"--{name} {shown}: {err}") from None
    return selection(**options)


def _check_dialect(name: str | None) -> None:
    if name is not None:
        registry.get(name)  # a misspelt name fails before any reading, with a suggestion


def _refuse_existing(output: str, force: bool) -> None:
    """Fail before the (long) read when the output exists and --force was not given."""
    if not force and os.path.lexists(output):
        raise FileExistsError(f"{output} exists; pass --force to replace it")


def _checked(args: argparse.Namespace, specs: list[str], **given: Any) -> tuple[_Input, Selection]:
    """The common checks of a reading command, all before any decoding: dialect, filters, input paths."""
    _check_dialect(args.dialect)
    chosen = _selection(args, **given)
    return _inputs(specs, args.dialect), chosen


# ---------------------------------------------------------------- reading


def _read_events(source: _Input, dialect: str | None, errors: str, chosen: Selection | None = None,
                 keep: int | None = None) -> pd.DataFrame:
    """Read ``source`` in chunks with a progress bar and keep the events ``chosen`` selects; the frame carries
    the whole read's report and quarantine.

    ``keep`` keeps only the first ``keep`` events chosen (the read still goes to the end, for the summary).
    """
    chosen = chosen or Selection()
    if source.exported:
        return _exported_events(source, chosen, keep)
    rows = dataclasses.replace(chosen, tables=None)  # what each chunk can be filtered by on its own
    names: set[str] = set()
    frames: list[pd.DataFrame] = []
    kept = 0
    paths = [Path(f) for f in source.files]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        chunks = read(paths, dialect=dialect, errors=errors, chunksize=CHUNK_EVENTS)
        with ReadProgress(source.files) as progress:
            for frame in chunks:
                progress.sources_seen(frame.attrs["report"]["sources"])
                if chosen.tables is not None:
                    names.update(table_names(frame).dropna().unique())
                part = rows.apply(frame) if rows else frame
                if keep is None or chosen.tables is not None or kept < keep:
                    part = part if keep is None or chosen.tables is not None else part.head(keep - kept)
                    part.attrs = {}  # concat would compare the per-chunk attrs
                    frames.append(part)
                    kept += len(part)
            report = chunks.report
    for warning in caught:
        print(f"cdckit: warning: {_printable(cli_words(str(warning.message)))}", file=sys.stderr)
    events = pd.concat(frames, ignore_index=True) if frames else empty_events()
    events.attrs = {"report": report, "quarantine": chunks.quarantine, "column_types": chunks.column_types}
    if chosen.tables is not None:
        events = _by_table(events, chosen, names)
    if keep is not None:
        attrs, events = events.attrs, events.head(keep)
        events.attrs = attrs
    return events


def _by_table(events: pd.DataFrame, chosen: Selection, names: Any) -> pd.DataFrame:
    """The events of the ``--table`` tables, looked up among ``names`` (an unknown table is a usage error)."""
    try:
        picked = Selection(tables=chosen.tables).apply(events, names=names)
    except KeyError as err:
        raise UsageError(f"--table: {err.args[0]}") from None
    picked.attrs = events.attrs
    return picked


def _is_events_file(path: str) -> bool:
    from .export import is_events_file

    return is_events_file(path)


def _exported_events(source: _Input, chosen: Selection, keep: int | None) -> pd.DataFrame:
    """Canonical events that ``cdckit convert`` (or :func:`cdckit.export.write_events`) wrote, read back as they are."""
    parts = []
    for spec in source.specs:
        parts.append(exported_events(spec))
        print(f"cdckit: {_printable(spec)} holds canonical events (written by cdckit); read without dialect "
              "detection", file=sys.stderr)
    events = parts[0] if len(parts) == 1 else _joined(parts)
    attrs = events.attrs
    if chosen:
        events = _by_table(dataclasses.replace(chosen, tables=None).apply(events), chosen,
                           table_names(events).dropna().unique()) if chosen.tables is not None \
            else chosen.apply(events)
    if keep is not None:
        events = events.head(keep).copy()
    events.attrs = attrs
    return events


def _joined(parts: list[pd.DataFrame]) -> pd.DataFrame:
    """Several frames of exported events as one, their reports added up."""
    report: dict[str, Any] = {"messages": 0, "decoded": 0, "events": 0, "quarantined": 0, "skipped": {},
                              "dialects": {}, "sources": {}, "detection": {}}
    for part in parts:
        for name, value in part.attrs["report"].items():
            if isinstance(value, int):
                report[name] = report.get(name, 0) + value
            elif name in ("dialects", "skipped"):
                for key, count in value.items():
                    report[name][key] = report[name].get(key, 0) + count
            elif isinstance(value, dict):
                report[name].update(value)
    quarantine = parts[0].attrs["quarantine"]
    for part in parts:
        part.attrs = {}
    events = pd.concat(parts, ignore_index=True)
    events.attrs = {"report": report, "quarantine": quarantine}
    return events


def _summary(label: str, report: dict[str, Any], quarantine: pd.DataFrame | None,
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
    print(_printable(line), file=sys.stderr)
    if quarantine is not None and len(quarantine):
        for row in quarantine.head(QUARANTINE_SHOWN).itertuples():
            where = f"{row.source}, message {row.offset}"
            if getattr(row, "line", None) is not None and not pd.isna(row.line):
                where += f" (line {row.line})"
            code = getattr(row, "reason_code", None)
            code = f"[{code}] " if isinstance(code, str) else ""
            print(_printable(f"  quarantined: {where}: {code}{cli_words(str(row.reason))}"), file=sys.stderr)
        more = report["quarantined"] - min(len(quarantine), QUARANTINE_SHOWN)
        if more > 0:
            print(f"  ... and {more:,} more", file=sys.stderr)
    return EXIT_QUARANTINED if report["quarantined"] else EXIT_OK


def _summary_of(source: _Input, events: pd.DataFrame, chosen: Selection) -> int:
    return _summary(source.label, events.attrs["report"], events.attrs["quarantine"],
                    len(events) if chosen else None)


def _load(args: argparse.Namespace, source: _Input, chosen: Selection) -> tuple[pd.DataFrame, int]:
    """The chosen events of a whole capture and the code of its summary (printed on stderr)."""
    events = _read_events(source, args.dialect, args.errors, chosen)
    return events, _summary_of(source, events, chosen)


def _print_written(written: Any) -> None:
    print(_printable(written))
    for note in getattr(written, "notes", None) or []:
        print(_printable(f"  note: {cli_words(str(note))}"))


# ---------------------------------------------------------------- text tables


def _table(events: pd.DataFrame, columns: list[str], width: int) -> str:
    """The events as plain text: ``table`` as database.table, cells cut to ``width`` characters."""
    if not len(events):
        return "(no events)"
    view = pd.DataFrame({c: table_names(events) if c == "table" else events[c] for c in columns},
                        index=events.index)
    return _text_table(view, width)


def _text_table(frame: pd.DataFrame, width: int) -> str:
    """Any frame as plain left-aligned text, cells cut to ``width`` characters (control characters escaped)."""
    if not len(frame.columns):
        return "(no columns)"
    view = pd.DataFrame({str(c): [_cell(v, width) for v in frame[c]] for c in frame.columns}, index=frame.index)
    if not len(view):
        return "  ".join(view.columns)
    widths = {c: max(len(c), max(len(v) for v in view[c])) for c in view.columns}
    left = {c: (lambda v, w=widths[c]: v.ljust(w)) for c in view.columns}  # pandas right-aligns text
    text = view.to_string(index=False, justify="left", formatters=left)
    return "\n".join(line.rstrip() for line in text.splitlines())


def _cell(value: Any, width: int) -> str:
    if value is None or (not isinstance(value, (list, tuple, dict)) and pd.isna(value)):
        return ""
    text = ",".join(map(str, value)) if isinstance(value, (list, tuple)) else str(value)
    text = _printable(text, _CONTROL_IN_CELL)  # a tab or newline would break the table too
    if width and len(text) > width:
        text = text[: max(width - 1, 0)] + "…"
    return text


def _print_tables(tables: dict[str, pd.DataFrame], head: int, width: int, what: str) -> None:
    """Each table's first ``head`` rows under its name, and how many more there are."""
    if not tables:
        print(f"(no {what})")
    for i, (name, frame) in enumerate(tables.items()):
        print(("\n" if i else "") + _printable(f"{name}: {len(frame):,} {what}"))
        if head:
            print(_text_table(frame.head(head), width))
        if len(frame) > head:
            print(f"... and {len(frame) - head:,} more (--head N shows more, -o OUT writes them all)")


# ---------------------------------------------------------------- the commands


def _detect(args: argparse.Namespace) -> int:
    """``cdckit detect PATH...``: one line per file on stdout, reasons for failures on stderr."""
    rows: list[tuple[str, str, str, str]] = []
    failed = 0
    for spec in args.paths:
        try:
            files = expand_paths(spec)
        except OSError as err:
            print(f"cdckit: error: {_printable(err)}", file=sys.stderr)
            failed += 1
            continue
        for file in files:
            if _is_events_file(file):
                rows.append((file, "(cdckit events)", "", "canonical events written by cdckit convert"))
                continue
            try:
                found = detect(file)
            except UnknownDialectError as err:
                print(f"cdckit: error: {_printable(file)}: {_printable(err)}", file=sys.stderr)
                failed += 1
                if err.best is not None:  # something matched, below the floor: say what, flagged unknown
                    guess = f"best guess {err.best[0]} (below the floor {FLOOR:.2f})"
                    if err.runner_up:
                        guess += f"; runner-up {err.runner_up[0]} ({err.runner_up[1]:.2f})"
                    rows.append((file, "unknown", f"{err.best[1]:.2f}", guess))
                continue
            except (CdcError, OSError, ValueError) as err:
                print(f"cdckit: error: {_printable(file)}: {_printable(cli_words(str(err)))}", file=sys.stderr)
                failed += 1
                continue
            evidence = ", ".join(found.evidence)
            if found.runner_up:
                evidence += f"; runner-up {found.runner_up} ({found.runner_up_confidence:.2f})"
            confidence = f"{found.confidence:.2f}"
            if found.low_confidence:
                confidence += " LOW"
                print(f"cdckit: warning: {_printable(file)}: low confidence ({found.confidence:.2f}, below "
                      f"{LOW:.2f}): check the evidence", file=sys.stderr)
            rows.append((file, found.dialect, confidence, evidence))
    if rows:
        width = max(len(r[0]) for r in rows)
        dialect_width = max(len(r[1]) for r in rows)
        for file, dialect, confidence, evidence in rows:
            print(_printable(f"{file:<{width}}  {dialect:<{dialect_width}}  {confidence}  {evidence}"))
    return EXIT_INPUT if failed else EXIT_OK


def _read(args: argparse.Namespace) -> int:
    """``cdckit read PATH...``: the first events as a table on stdout, the summary on stderr."""
    columns = _columns(args.columns)
    source, chosen = _checked(args, args.paths)
    events = _read_events(source, args.dialect, args.errors, chosen, keep=args.head)
    if args.head:
        print(_table(events.head(args.head), columns, args.width))
    report = events.attrs["report"]
    return _summary(source.label, report, events.attrs["quarantine"], len(events) if chosen else None)


def _columns(chosen: list[str] | None) -> list[str]:
    if not chosen:
        return list(READ_COLUMNS)
    columns = [c.strip() for part in chosen for c in part.split(",") if c.strip()]
    unknown = [c for c in columns if c not in COLUMN_NAMES]
    if unknown:
        raise UsageError(f"unknown column(s) {', '.join(unknown)}; choose from {', '.join(COLUMN_NAMES)}")
    return columns


def _target(to: str | None, output: str) -> tuple[str, str]:
    """``("format", name)`` or ``("dialect", name)`` for ``--to`` (or the output's suffix)."""
    formats = _formats()
    if to is None:
        suffix = Path(output).suffix.lower()
        if suffix not in SUFFIX_FORMATS:
            raise UsageError(f"cannot tell the format of {output!r} from its suffix; pass --to "
                             f"({', '.join(formats)} or a dialect)")
        return "format", SUFFIX_FORMATS[suffix]
    if to.lower() in formats:
        return "format", to.lower()
    try:
        dialect = registry.get(to)
    except UnknownDialectError:
        raise UsageError(f"--to {to!r} is neither a format ({', '.join(formats)}) nor a dialect "
                         f"({', '.join(registry.names())})") from None
    if not dialect.can_encode():
        writable = [name for name in registry.names() if registry.get(name).can_encode()]
        raise UsageError(f"the {dialect.name} dialect cannot be written; these can: {', '.join(writable)}")
    return "dialect", dialect.name


def _table_format(to: str | None, output: str) -> str:
    """The file format of a folder of tables (state, scd2): ``--to``, else OUT's suffix, else Parquet."""
    formats = _formats()
    if to is not None:
        if to.lower() not in formats:
            raise UsageError(f"--to {to!r} is not a format; choose one of {', '.join(formats)}")
        return to.lower()
    suffix = Path(output).suffix.lower()
    if not suffix:
        return "parquet"
    if suffix not in SUFFIX_FORMATS:
        raise UsageError(f"cannot tell the format of {output!r} from its suffix; pass --to ({', '.join(formats)})")
    return SUFFIX_FORMATS[suffix]


def _convert(args: argparse.Namespace) -> int:
    """``cdckit convert PATH... -o OUT``: the canonical events as a file format, or re-encoded in a dialect."""
    kind, target = _target(args.to, args.output)
    if args.partition_by and kind == "dialect":
        raise UsageError("--partition-by applies to parquet, csv and jsonl output, not to a dialect")
    if args.layout and kind != "dialect":
        raise UsageError(f"--layout applies to a dialect, not to {target} output")
    if args.engine == "spark":
        if args.errors == "raise":
            raise UsageError("--errors raise needs --engine pandas (Spark quarantines, see the summary)")
        if len(args.paths) > 1:
            raise UsageError("--engine spark reads one PATH (a folder or a quoted glob)")
        if any(getattr(args, name) is not None for name in ("table", "op", "key", "since", "until")):
            raise UsageError("the filters (--table, --op, --key, --since, --until) need --engine pandas")
    source, chosen = _checked(args, args.paths)
    _refuse_existing(args.output, args.force)
    if args.engine == "spark":
        return _convert_spark(args, kind, target)
    from . import export

    events, code = _load(args, source, chosen)
    with _bar(f"writing {target}", "event", total=len(events)) as bar:
        written = _write(export, events, kind, target, args)
        bar.update(len(events))
    _print_written(written)
    return code


def _write(export: Any, events: Any, kind: str, target: str, args: argparse.Namespace) -> Any:
    """Write ``events`` as ``target`` (a format or a dialect); the exporter's objections to options are usage errors."""
    try:
        if kind == "dialect":
            return export.convert(events, target, args.output, layout=args.layout, overwrite=args.force)
        return export.write_events(events, args.output, target, partition_by=args.partition_by, overwrite=args.force)
    except CdcError:
        raise
    except ValueError as err:  # e.g. a layout that does not fit the dialect, csv output with .gz
        raise UsageError(str(err)) from err


def _convert_spark(args: argparse.Namespace, kind: str, target: str) -> int:
    """``convert --engine spark``: decode and write with Spark; stops the session only if it started it."""
    from pyspark.sql import SparkSession

    from . import spark as cdcspark

    started = SparkSession.getActiveSession() is None
    session = cdcspark.get_spark()
    try:
        from . import export

        events = cdcspark.read(session, args.paths[0], dialect=args.dialect)
        written = _write(export, events, kind, target, args)
        report = cdcspark.report(events)
        quarantine = cdcspark.quarantine(events).limit(QUARANTINE_SHOWN).toPandas() if report["quarantined"] else None
    finally:
        if started:
            session.stop()
    code = _summary(args.paths[0], report, quarantine)
    _print_written(written)
    return code


def _report(args: argparse.Namespace) -> int:
    """``cdckit report PATH... -o OUT``: the HTML report, from a read with a progress bar."""
    source, chosen = _checked(args, args.paths)
    _refuse_existing(args.output, args.force)
    from .report import write_report

    events, code = _load(args, source, chosen)
    named = source.specs[0] if len(source.specs) == 1 else [Path(f) for f in source.files]
    with _bar("writing report", "event", total=len(events)) as bar:
        written = write_report(named, args.output, dialect=args.dialect, overwrite=args.force, events=events)
        bar.update(len(events))
    _print_written(written)
    return code


def _order(args: argparse.Namespace) -> int:
    """``cdckit order PATH...``: each ordering finding with its meaning and first rows, then the lag."""
    from .ordering import order_report

    source, chosen = _checked(args, args.paths)
    events, code = _load(args, source, chosen)
    report = order_report(events, by=args.by)
    print(_printable(repr(report)))
    serious = False
    for name, finding in report.findings.items():
        if name == "lag" or not len(finding):
            continue
        serious = serious or finding.severity in ("warning", "error")
        rows = f"{len(finding):,} row" + ("" if len(finding) == 1 else "s")
        print(_printable(f"\n{name} ({finding.severity}, {rows}): {finding.meaning}"))
        if args.head:
            print(_text_table(finding.frame.head(args.head), args.width))
        if len(finding) > args.head:
            print(f"... and {len(finding) - args.head:,} more (--head N shows more)")
    lag = report["lag"]
    if len(lag):
        print("\nlag (seconds from event_time to emit_time):")
        print(_text_table(lag.round(3), args.width))
    return EXIT_FOUND if serious else code


def _tables_command(args: argparse.Namespace, make: Callable[[pd.DataFrame], Any], write_name: str,
                    what: str) -> int:
    """``state`` and ``scd2``: the tables ``make`` builds from the chosen events, printed or written."""
    fmt = _table_format(args.to, args.output) if args.output else None
    if args.to is not None and args.output is None:
        raise UsageError("--to needs -o OUT")
    source, chosen = _checked(args, args.paths)
    if args.output:
        _refuse_existing(args.output, args.force)
    events, code = _load(args, source, chosen)
    tables = make(events)
    problems = getattr(tables, "problems", None)
    if problems is not None and len(problems):
        print(f"cdckit: {len(problems):,} change(s) did not fit the replay (an update or delete of a key that "
              "is not there, an insert of a live key...); first:", file=sys.stderr)
        print(_text_table(problems.head(QUARANTINE_SHOWN), 40), file=sys.stderr)
    if args.output:
        from . import export

        _print_written(getattr(export, write_name)(tables, args.output, fmt, overwrite=args.force))
    else:
        _print_tables(dict(tables), args.head, args.width, what)
    return code


def _state(args: argparse.Namespace) -> int:
    """``cdckit state PATH...``: the final rows of each table."""
    from .replay import materialize

    return _tables_command(args, materialize, "write_state", "rows")


def _scd2(args: argparse.Namespace) -> int:
    """``cdckit scd2 PATH...``: every version of every row."""
    from .replay import scd2

    return _tables_command(args, scd2, "write_scd2", "versions")


def _schema(args: argparse.Namespace) -> int:
    """``cdckit schema PATH...``: the columns of each table now, then how they changed."""
    from .schemas import schema_history, table_schema

    source, chosen = _checked(args, args.paths)
    events, code = _load(args, source, chosen)
    current = table_schema(events)
    if not len(current):
        print("(no table)")
        return code
    for i, (table, columns) in enumerate(current.groupby("table", sort=False)):
        keys = columns.loc[columns["key"].astype(bool), "column"].tolist()
        count = f"{len(columns)} column" + ("" if len(columns) == 1 else "s")
        print(("\n" if i else "") + _printable(f"{table}: {count}" + (f", key {', '.join(keys)}" if keys else "")))
        print(_text_table(columns[["column", "type", "kind"]].fillna(""), args.width))
    print("\nchanges:")
    print(_text_table(schema_history(events), args.width))
    return code


def _compare(args: argparse.Namespace) -> int:
    """``cdckit compare A B``: two captures matched event by event, and their final states."""
    import cdckit  # looked up on the package, so that tests can stand in for it

    first, chosen = _checked(args, [args.first])
    second = _inputs([args.second], args.dialect)
    rows = dataclasses.replace(chosen, tables=None)
    sides = []
    for source in (first, second):
        events = _read_events(source, args.dialect, args.errors, rows)
        sides.append((source, events))
    if chosen.tables is not None:  # a table may be on one side only: look the names up in both
        names = set().union(*(table_names(events).dropna().unique() for _, events in sides))
        sides = [(source, _by_table(events, chosen, names)) for source, events in sides]
    codes = [_summary_of(source, events, chosen) for source, events in sides]
    result = cdckit.compare(sides[0][1], sides[1][1])
    print(_printable(result))
    return EXIT_FOUND if not result.ok else max(codes)


def _reconcile(args: argparse.Namespace) -> int:
    """``cdckit reconcile CAPTURE SNAPSHOT --table T``: the replayed table against a snapshot of it."""
    import cdckit  # looked up on the package, so that tests can stand in for it
    from .replay import find_table, materialize

    key = [c.strip() for c in args.key.split(",") if c.strip()] if args.key is not None else None
    if key == []:
        raise UsageError("--key names no column")
    if Path(args.snapshot).suffix.lower() not in SNAPSHOT_SUFFIXES:
        raise UsageError(f"the snapshot {args.snapshot!r} is not Parquet or CSV (by its suffix: "
                         f"{', '.join(SNAPSHOT_SUFFIXES)})")
    source, chosen = _checked(args, [args.capture], table=[args.table], key=None)
    if not os.path.exists(args.snapshot):
        raise FileNotFoundError(f"no such file: {args.snapshot}")
    events, code = _load(args, source, chosen)
    state = materialize(events)
    try:
        table = find_table(state, args.table)
    except KeyError as err:  # the table's events were all left out by --op, --since or --until
        raise UsageError(f"--table: {err.args[0]}") from None
    result = cdckit.reconcile(state, os.fspath(args.snapshot), table=table, key=key)
    print(_printable(result))
    return EXIT_FOUND if not result.ok else code


def _samples(args: argparse.Namespace) -> int:
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
