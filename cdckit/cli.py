"""The ``cdckit`` command line: detect, read, convert, report, samples.

Every command is a small function over the library (``cdckit.detect``,
``cdckit.read``, :mod:`cdckit.export`, :mod:`cdckit.report`); this module only
parses arguments, shows progress and turns errors into one-line messages and
exit codes (see :data:`EXIT_CODES`). ``main`` takes the arguments as a list,
so it can be called in-process:

>>> main(["samples", "--path", "canal/shop"])  # doctest: +ELLIPSIS
/.../samples/data/canal/shop.jsonl
0
"""

from __future__ import annotations

import argparse
import os
import re
import sys
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
from .frame import COLUMN_NAMES, empty_events
from .ordering import table_names
from .read import exported_events, read

__all__ = [
    "main",
    "build_parser",
    "EXIT_OK",
    "EXIT_QUARANTINED",
    "EXIT_USAGE",
    "EXIT_INPUT",
    "EXIT_OUTPUT_EXISTS",
    "EXIT_NO_JAVA",
    "EXIT_INTERNAL",
    "EXIT_CODES",
]

EXIT_OK = 0
EXIT_QUARANTINED = 1
EXIT_USAGE = 2
EXIT_INPUT = 3
EXIT_OUTPUT_EXISTS = 4
EXIT_NO_JAVA = 5
EXIT_INTERNAL = 70

#: Every exit code and what it means (printed by ``cdckit --help``).
EXIT_CODES = {
    EXIT_OK: "success",
    EXIT_QUARANTINED: "finished, but some messages were quarantined (read, convert, report)",
    EXIT_USAGE: "usage error (bad option or argument)",
    EXIT_INPUT: "input problem: missing or unreadable file, unknown dialect name, no dialect detected\n"
    "     (detect), undecodable message with --errors raise, output that cannot be written",
    EXIT_OUTPUT_EXISTS: "the output exists (pass --force to replace it)",
    EXIT_NO_JAVA: "--engine spark, but Spark cannot start (no Java 17+); the message says what to install",
    EXIT_INTERNAL: "internal error (a bug: --debug shows the traceback)",
}

#: Events per chunk of a read (the progress bar moves once per chunk).
CHUNK_EVENTS = 20_000
#: Columns ``cdckit read`` shows by default.
READ_COLUMNS = ("op", "table", "key", "seq", "event_time", "before", "after")
#: Output formats ``--to`` guesses from the output's suffix.
SUFFIX_FORMATS = {".parquet": "parquet", ".pq": "parquet", ".csv": "csv", ".jsonl": "jsonl", ".json": "jsonl",
                  ".ndjson": "jsonl"}
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
  cdckit convert capture.jsonl -o events.parquet  the canonical events as Parquet
  cdckit convert capture.jsonl -o out.jsonl --to debezium
  cdckit report capture.jsonl -o report.html      a self-contained HTML report

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
  cdckit convert canal.jsonl -o debezium.jsonl --to debezium

--to is a format ({formats}) or a dialect
({dialects});
without it, the format comes from OUT's suffix (.parquet, .csv, .jsonl).
--engine spark writes a folder of part files (Spark's own writers).
Exits 1 when some messages were quarantined, 4 when OUT exists (without --force).
""",
    "report": """\
examples:
  cdckit report capture.jsonl -o report.html
  cdckit report captures/ -o report.html --force

One HTML file that opens offline: detection, accounting, quarantine, op counts,
timeline, ordering findings, lag and before/after diffs. Exits 1 when some
messages were quarantined, 4 when the output exists (without --force).
""",
    "samples": """\
examples:
  cdckit samples
  cdckit samples --path canal/shop
  cdckit read $(cdckit samples --path canal/shop)

NAME is a name from the list, a dialect (its examples file) or DIALECT/STEM.
""",
}


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``cdckit`` (one subcommand per command).

    >>> args = build_parser().parse_args(["read", "capture.jsonl", "--head", "5"])
    >>> args.command, args.path, args.head
    ('read', 'capture.jsonl', 5)
    """
    codes = "\n".join(f"  {code:<3}{meaning}" for code, meaning in EXIT_CODES.items())
    parser = argparse.ArgumentParser(
        prog="cdckit",
        description="Understand captured change-data-capture streams: detect the dialect, decode to the "
        "canonical event frame, convert, report.",
        epilog=_MAIN_EXAMPLES.format(codes=codes),
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
    sub.add_argument("--width", type=_count, default=40, metavar="N",
                     help="cut longer cells to N characters (default 40)")

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

    sub = command("samples", "List the bundled sample captures, or print one's path.", _samples)
    sub.add_argument("--path", metavar="NAME", help="print the path of sample NAME instead of the list")
    return parser


def _add_input(sub: argparse.ArgumentParser) -> None:
    sub.add_argument("path", metavar="PATH", help="file, directory or glob (.gz read transparently)")
    sub.add_argument("--dialect", metavar="D", help="skip detection: read every file as dialect D")
    sub.add_argument("--errors", choices=("quarantine", "raise"), default="quarantine",
                     help="quarantine undecodable messages (default) or stop at the first one (exit 3)")


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, not {value}")
    return value


def _formats() -> tuple[str, ...]:
    try:
        from .export import FORMATS
    except ImportError:  # export.py not there yet: the formats it will write
        return ("parquet", "csv", "jsonl")
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
            inputs = getattr(args, "paths", None) or [getattr(args, "path", None) or getattr(args, "source", None)]
            named = ", ".join(str(i) for i in inputs if i)
            message = f"{message}, while working on {named}" if named else message
        if args.debug:
            traceback.print_exc()
        print(f"cdckit: error: {_printable(message)}", file=sys.stderr)
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
        return EXIT_INPUT, f"{err} (on the command line: --dialect NAME)"
    if isinstance(err, (CdcError, OSError)):
        return EXIT_INPUT, str(err)
    return EXIT_INTERNAL, f"internal error: {type(err).__name__}: {err} (--debug shows the traceback)"


def _silence_stdout() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


# ---------------------------------------------------------------- helpers


def _printable(text: Any, pattern: re.Pattern[str] = _CONTROL) -> str:
    """``text`` with terminal control characters shown as escapes (a capture must not drive the terminal)."""
    return pattern.sub(lambda m: repr(m.group())[1:-1], str(text))


def _bar(desc: str, unit: str, total: int | None = None) -> tqdm:
    """A progress bar on stderr, drawn only when stderr is a terminal."""
    return tqdm(total=total, desc=desc, unit=unit, unit_scale=True, file=sys.stderr,
                disable=not sys.stderr.isatty(), leave=False, dynamic_ncols=True)


def _read_events(path: str, dialect: str | None, errors: str, keep: int | None = None) -> pd.DataFrame:
    """Read ``path`` in chunks with a progress bar; the frame carries the whole read's report and quarantine.

    ``keep`` keeps only the first ``keep`` events (the read still goes to the end, for the summary).
    """
    if dialect is None and _is_events_file(path):
        return _exported_events(path, keep)
    frames: list[pd.DataFrame] = []
    kept = 0
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        chunks = read(path, dialect=dialect, errors=errors, chunksize=CHUNK_EVENTS)
        with _bar("reading", "msg") as bar:
            for frame in chunks:
                bar.update(frame.attrs["report"]["messages"] - bar.n)
                if keep is None or kept < keep:
                    part = frame if keep is None else frame.head(keep - kept)
                    part.attrs = {}  # concat would compare the per-chunk attrs
                    frames.append(part)
                    kept += len(part)
            report = chunks.report
            bar.update(report["messages"] - bar.n)
    for warning in caught:
        print(f"cdckit: warning: {_printable(warning.message)}", file=sys.stderr)
    events = pd.concat(frames, ignore_index=True) if frames else empty_events()
    events.attrs = {"report": report, "quarantine": chunks.quarantine}
    return events


def _is_events_file(path: str) -> bool:
    from .export import is_events_file

    return is_events_file(path)


def _exported_events(path: str, keep: int | None) -> pd.DataFrame:
    """Canonical events that ``cdckit convert`` (or :func:`cdckit.export.write_events`) wrote, read back as they are."""
    events = exported_events(path)
    print(f"cdckit: {path} holds canonical events (written by cdckit); read without dialect detection",
          file=sys.stderr)
    if keep is not None:
        attrs = events.attrs
        events = events.head(keep).copy()
        events.attrs = attrs
    return events


def _summary(path: str, report: dict[str, Any], quarantine: pd.DataFrame | None) -> int:
    """Print the read summary on stderr; returns 1 when messages were quarantined, else 0."""
    dialects = report.get("dialects") or {}
    named = ", ".join(f"{d} ({n:,})" for d, n in sorted(dialects.items())) if len(dialects) > 1 else "".join(dialects)
    skipped = sum((report.get("skipped") or {}).values())
    line = (f"{path}: {report['messages']:,} messages -> {report['events']:,} events, "
            f"{report['quarantined']:,} quarantined")
    if skipped:
        line += f", {skipped:,} skipped"
    if named:
        line += f"; dialect {named}"
    print(_printable(line), file=sys.stderr)
    if quarantine is not None and len(quarantine):
        for row in quarantine.head(QUARANTINE_SHOWN).itertuples():
            where = f"{row.source}, message {row.offset}"
            if getattr(row, "line", None) is not None and not pd.isna(row.line):
                where += f" (line {row.line})"
            code = getattr(row, "reason_code", None)
            code = f"[{code}] " if isinstance(code, str) else ""
            print(_printable(f"  quarantined: {where}: {code}{row.reason}"), file=sys.stderr)
        more = report["quarantined"] - min(len(quarantine), QUARANTINE_SHOWN)
        if more > 0:
            print(f"  ... and {more:,} more", file=sys.stderr)
    return EXIT_QUARANTINED if report["quarantined"] else EXIT_OK


def _refuse_existing(output: str, force: bool) -> None:
    """Fail before the (long) read when the output exists and --force was not given."""
    if not force and os.path.lexists(output):
        raise FileExistsError(f"{output} exists; pass --force to replace it")


def _print_written(written: Any) -> None:
    print(_printable(written))
    for note in getattr(written, "notes", None) or []:
        print(_printable(f"  note: {note}"))


def _check_dialect(name: str | None) -> None:
    if name is not None:
        registry.get(name)  # a misspelt name fails before any reading, with a suggestion


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
                print(f"cdckit: error: {_printable(file)}: {_printable(err)}", file=sys.stderr)
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
    """``cdckit read PATH``: the first events as a table on stdout, the summary on stderr."""
    columns = _columns(args.columns)
    _check_dialect(args.dialect)
    events = _read_events(args.path, args.dialect, args.errors, keep=args.head)
    if args.head:
        print(_table(events.head(args.head), columns, args.width))
    return _summary(args.path, events.attrs["report"], events.attrs["quarantine"])


def _columns(chosen: list[str] | None) -> list[str]:
    if not chosen:
        return list(READ_COLUMNS)
    columns = [c.strip() for part in chosen for c in part.split(",") if c.strip()]
    unknown = [c for c in columns if c not in COLUMN_NAMES]
    if unknown:
        raise UsageError(f"unknown column(s) {', '.join(unknown)}; choose from {', '.join(COLUMN_NAMES)}")
    return columns


def _table(events: pd.DataFrame, columns: list[str], width: int) -> str:
    """The events as plain text: ``table`` as database.table, cells cut to ``width`` characters."""
    if not len(events):
        return "(no events)"
    view = pd.DataFrame(index=events.index)
    for column in columns:
        values = table_names(events) if column == "table" else events[column]
        view[column] = [_cell(v, width) for v in values]
    widths = {c: max(len(c), max(len(v) for v in view[c])) for c in view.columns}
    left = {c: (lambda v, w=widths[c]: v.ljust(w)) for c in view.columns}  # pandas right-aligns text
    text = view.to_string(index=False, justify="left", formatters=left)
    return "\n".join(line.rstrip() for line in text.splitlines())


def _cell(value: Any, width: int) -> str:
    if value is None or (not isinstance(value, (list, tuple)) and pd.isna(value)):
        return ""
    text = ",".join(map(str, value)) if isinstance(value, (list, tuple)) else str(value)
    text = _printable(text, _CONTROL_IN_CELL)  # a tab or newline would break the table too
    if width and len(text) > width:
        text = text[: max(width - 1, 0)] + "…"
    return text


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


def _convert(args: argparse.Namespace) -> int:
    """``cdckit convert PATH -o OUT``: the canonical events as a file format, or re-encoded in a dialect."""
    kind, target = _target(args.to, args.output)
    if args.partition_by and kind == "dialect":
        raise UsageError("--partition-by applies to parquet, csv and jsonl output, not to a dialect")
    if args.layout and kind != "dialect":
        raise UsageError(f"--layout applies to a dialect, not to {target} output")
    if args.engine == "spark" and args.errors == "raise":
        raise UsageError("--errors raise needs --engine pandas (Spark quarantines, see the summary)")
    _check_dialect(args.dialect)
    _refuse_existing(args.output, args.force)
    if args.engine == "spark":
        return _convert_spark(args, kind, target)
    from . import export

    events = _read_events(args.path, args.dialect, args.errors)
    with _bar(f"writing {target}", "event", total=len(events)) as bar:
        written = _write(export, events, kind, target, args)
        bar.update(len(events))
    code = _summary(args.path, events.attrs["report"], events.attrs["quarantine"])
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

        events = cdcspark.read(session, args.path, dialect=args.dialect)
        written = _write(export, events, kind, target, args)
        report = cdcspark.report(events)
        quarantine = cdcspark.quarantine(events).limit(QUARANTINE_SHOWN).toPandas() if report["quarantined"] else None
    finally:
        if started:
            session.stop()
    code = _summary(args.path, report, quarantine)
    _print_written(written)
    return code


def _report(args: argparse.Namespace) -> int:
    """``cdckit report PATH -o OUT``: the HTML report, from a read with a progress bar."""
    _check_dialect(args.dialect)
    _refuse_existing(args.output, args.force)
    from .report import write_report

    events = _read_events(args.path, args.dialect, args.errors)
    with _bar("writing report", "event", total=len(events)) as bar:
        written = write_report(args.path, args.output, dialect=args.dialect, overwrite=args.force, events=events)
        bar.update(len(events))
    code = _summary(args.path, events.attrs["report"], events.attrs["quarantine"])
    _print_written(written)
    return code


def _samples(args: argparse.Namespace) -> int:
    """``cdckit samples``: name, dialect and size of each bundled sample; ``--path NAME``: one sample's path."""
    if args.path:
        try:
            print(samples.path(args.path))
        except KeyError as err:
            raise CdcError(f"{err.args[0]} (cdckit samples lists them)") from None
        return EXIT_OK
    names = samples.list()
    width = max(len(n) for n in names)
    dialect_width = max(len(n.split("/", 1)[0]) for n in names)
    for name in names:
        size = tqdm.format_sizeof((samples.DATA / name).stat().st_size, "B", 1024)
        print(f"{name:<{width}}  {name.split('/', 1)[0]:<{dialect_width}}  {size:>7}")
    return EXIT_OK
