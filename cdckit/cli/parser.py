"""The argument parser of ``cdckit``: one subcommand per command, each with its options, its filters and the
examples of its help (:mod:`cdckit.cli.help_texts`); each subcommand's ``run`` is its command function.

>>> build_parser().parse_args(["order", "capture.jsonl"]).run.__name__
'run_order'
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from ..analysis.ordering.identity import STREAMS
from ..dialects import registry
from ..frame import COLUMN_NAMES, OPS
from ..io.write import LAYOUTS
from ..version import __version__
from .analysis_commands import run_keys, run_order, run_schema, run_transactions
from .capture_commands import run_capture
from .compare_commands import run_compare, run_reconcile
from .exit_codes import EXIT_CODES
from .formats import formats
from .help_texts import COMMAND_EXAMPLES, MAIN_EXAMPLES
from .options import READ_COLUMNS, count
from .read_commands import run_detect, run_read, run_samples
from .state_commands import run_scd2, run_state
from .write_commands import run_convert, run_report

__all__ = ["build_parser"]


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
        epilog=MAIN_EXAMPLES.format(codes=codes, ops=", ".join(OPS)),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"cdckit {__version__}")
    parser.add_argument("--debug", action="store_true", help="show the traceback of an error")
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--debug",
        action="store_true",
        default=argparse.SUPPRESS,  # keeps `cdckit --debug CMD`
        help="show the traceback of an error",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def command(name: str, summary: str, run: Callable[[argparse.Namespace], int], **epilog: str) -> Any:
        sub = commands.add_parser(
            name,
            help=summary,
            description=summary,
            parents=[common],
            epilog=COMMAND_EXAMPLES[name].format(**epilog),
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        sub.set_defaults(run=run)
        return sub

    sub = command("detect", "Detect the dialect of each file.", run_detect)
    sub.add_argument("paths", nargs="+", metavar="PATH", help="file, directory, glob or kafka://host:port/topic")
    _add_kafka_config(sub)

    sub = command("read", "Show the first events of a capture and its read summary.", run_read)
    _add_input(sub)
    sub.add_argument(
        "--head",
        type=count,
        default=None,
        metavar="N",
        help="events to show (default 20); given, the read stops once it has them (0: reads it all)",
    )
    sub.add_argument(
        "--columns",
        action="append",
        metavar="A,B,...",
        help=f"columns to show (default {','.join(READ_COLUMNS)}); any of: {', '.join(COLUMN_NAMES)}",
    )
    _add_width(sub)

    sub = command(
        "convert",
        "Write a capture's canonical events as Parquet/CSV/JSON Lines, or in another dialect.",
        run_convert,
        formats=", ".join(formats()),
        dialects=", ".join(registry.names()),
    )
    _add_input(sub)
    sub.add_argument("-o", "--output", required=True, metavar="OUT", help="file (or folder) to write")
    sub.add_argument("--to", metavar="FORMAT_OR_DIALECT", help="output format or dialect (default: OUT's suffix)")
    sub.add_argument(
        "--engine",
        choices=("pandas", "spark"),
        default="pandas",
        help="decode with pandas (default) or Spark (needs Java 17+)",
    )
    sub.add_argument(
        "--partition-by",
        choices=("table",),
        help="one folder per database.table (table_name=<database.table>/part-0.<ext>)",
    )
    sub.add_argument(
        "--layout",
        choices=LAYOUTS,
        help="with a dialect: how its messages are laid out (kcat keeps Kafka keys; default: the "
        "dialect's own, or OUT's suffix)",
    )
    sub.add_argument("--force", action="store_true", help="replace OUT when it exists")

    sub = command("report", "Write a self-contained HTML report of a capture.", run_report)
    _add_input(sub)
    sub.add_argument("-o", "--output", required=True, metavar="OUT", help="HTML file to write")
    sub.add_argument("--force", action="store_true", help="replace OUT when it exists")

    sub = command("order", "List what is wrong with the order of a capture (the ordering report).", run_order)
    _add_input(sub)
    sub.add_argument(
        "--by",
        choices=tuple(STREAMS),
        default="source",
        help="which events are compared with each other (default source: within each file or topic)",
    )
    sub.add_argument("--head", type=count, default=10, metavar="N", help="rows to show per finding (default 10)")
    _add_width(sub)

    sub = command("transactions", "List the transactions of a capture and whether each is whole.", run_transactions)
    _add_input(sub)
    sub.add_argument(
        "--status",
        choices=("all", "incomplete"),
        default="all",
        help="which transactions to list: all (default) or those the capture holds only in part",
    )
    sub.add_argument(
        "--format", choices=("text", "csv", "json"), default="text", help="text (default), or CSV / JSON Lines"
    )
    sub.add_argument("--head", type=count, default=20, metavar="N", help="rows to show as text (default 20)")
    _add_width(sub)

    for name, summary, run in (
        ("state", "Replay a capture: the final rows of each table, shown or written out.", run_state),
        ("scd2", "Every version of every row (SCD type 2), shown or written out.", run_scd2),
    ):
        sub = command(name, summary, run)
        _add_input(sub)
        sub.add_argument("-o", "--output", metavar="OUT", help="folder to write, one file per table")
        sub.add_argument("--to", metavar="FORMAT", help=f"{', '.join(formats())} (default: OUT's suffix, else parquet)")
        sub.add_argument("--force", action="store_true", help="replace OUT when it exists")
        sub.add_argument("--head", type=count, default=20, metavar="N", help="rows to show per table (default 20)")
        _add_width(sub)
        if name == "state":
            sub.add_argument(
                "--after-transaction",
                metavar="ID",
                help="the state right after transaction ID committed (cdckit transactions lists the ids)",
            )
            sub.add_argument(
                "--whole-transactions",
                action="store_true",
                help="leave out the transactions the capture holds only in part (said on stderr)",
            )

    sub = command("schema", "Show each table's columns and how they changed over time.", run_schema)
    _add_input(sub)
    _add_width(sub)

    sub = command("keys", "Propose key columns for the tables a capture names no key for, with the evidence.", run_keys)
    _add_input(sub)
    _add_width(sub)

    sub = command("compare", "Compare two captures of the same source.", run_compare)
    sub.add_argument("first", metavar="A", help="the first capture: file, directory or glob")
    sub.add_argument("second", metavar="B", help="the second capture: file, directory or glob")
    _add_read_options(sub)
    _add_filters(sub)

    sub = command("reconcile", "Check a table's replayed state against a snapshot of the source table.", run_reconcile)
    sub.add_argument("capture", metavar="CAPTURE", help="the capture: file, directory or glob")
    sub.add_argument("snapshot", metavar="SNAPSHOT", help="the snapshot: a Parquet or CSV file")
    sub.add_argument("--table", required=True, metavar="T", help="the table (database.table or the bare name)")
    sub.add_argument("--key", metavar="COL,...", help="the key columns (default: the capture's key columns)")
    _add_read_options(sub)
    _add_filters(sub, tables=False, keys=False)

    sub = command("capture", "Save a sample of a live Kafka topic as kcat -J lines.", run_capture)
    sub.add_argument("url", metavar="URL", help="kafka://host:port[,host:port]/topic[?options]")
    sub.add_argument("-o", "--output", required=True, metavar="OUT", help="JSON Lines file to write")
    sub.add_argument("--force", action="store_true", help="replace OUT when it exists")
    _add_kafka_config(sub)

    sub = command("samples", "List the bundled sample captures, or print one's path.", run_samples)
    sub.add_argument("--path", metavar="NAME", help="print the path of sample NAME instead of the list")
    sub.add_argument("--root", action="store_true", help="print the folder that holds the samples")
    return parser


def _add_input(sub: argparse.ArgumentParser) -> None:
    sub.add_argument(
        "paths",
        nargs="+",
        metavar="PATH",
        help="file, directory or glob (.gz read transparently); several are read as one capture; or a "
        "live Kafka topic, kafka://host:port/topic[?options] (see cdckit capture --help)",
    )
    _add_read_options(sub)
    _add_filters(sub)


def _add_read_options(sub: argparse.ArgumentParser) -> None:
    sub.add_argument("--dialect", metavar="D", help="skip detection: read every file as dialect D")
    sub.add_argument(
        "--errors",
        choices=("quarantine", "raise"),
        default="quarantine",
        help="quarantine undecodable messages (default) or stop at the first one (exit 3)",
    )
    sub.add_argument(
        "--unavailable-value",
        action="append",
        metavar="TEXT",
        help="Debezium: the connector's unavailable.value.placeholder when set to another text "
        "(repeat for several; __debezium_unavailable_value is always recognised): a column holding "
        "it is an unchanged TOASTed value",
    )
    sub.add_argument(
        "--keys",
        action="append",
        metavar="TABLE=COL,...",
        help="the key columns of a table whose capture names none (repeat for several tables): "
        "customers=id, order_lines=order_id,line_no; TABLE is schema.table or the bare name",
    )
    sub.add_argument(
        "--key-separator",
        metavar="SEP",
        help="the key.separator kafka-console-consumer printed its fields with, when not a tab "
        "(lines of key, separator, value are read as the Kafka records they show)",
    )
    _add_kafka_config(sub)


def _add_kafka_config(sub: argparse.ArgumentParser) -> None:
    sub.add_argument(
        "-X",
        action="append",
        dest="kafka_config",
        metavar="KEY=VALUE",
        help="a Kafka client setting for a kafka:// PATH, as kcat takes it (repeat: -X security.protocol=SASL_SSL "
        "-X sasl.mechanism=PLAIN ...); the URL holds no secret",
    )
    sub.add_argument(
        "--schema-registry",
        metavar="URL",
        help="the schema registry of framed records (Avro, Protobuf or JSON Schema in Confluent's wire format)",
    )
    sub.add_argument(
        "--schema-registry-config",
        action="append",
        metavar="KEY=VALUE",
        help="a setting of the schema registry's client (repeat: --schema-registry-config "
        "basic.auth.user.info=USER:PASSWORD)",
    )
    sub.add_argument(
        "--schemas",
        metavar="DIR",
        help="a folder of schemas exported from a registry (<id>.json, <id>.avsc, <id>.proto); a capture's own, "
        "saved beside it by cdckit capture, are found without it",
    )


def _add_filters(sub: argparse.ArgumentParser, tables: bool = True, keys: bool = True) -> None:
    group = sub.add_argument_group(
        "filters",
        "Keep only some events (options combine with and; the values of "
        "one option, repeated or between commas, with or).",
    )
    if tables:
        group.add_argument(
            "--table",
            action="append",
            metavar="NAME",
            help="database.table or the bare table name (customers or shop.customers)",
        )
    group.add_argument("--op", action="append", metavar="OP", help=f"one of {', '.join(OPS)}")
    if keys:
        group.add_argument(
            "--key",
            action="append",
            metavar="K",
            help='key values, matched exactly (3 matches 3 and "3", never 13); a composite key '
            "as 3,7 or JSON '[3,\"x\"]'",
        )
    group.add_argument("--since", metavar="T", help="events at or after T (ISO time or date; UTC unless zoned)")
    group.add_argument("--until", metavar="T", help="events before T (ISO time or date; UTC unless zoned)")


def _add_width(sub: argparse.ArgumentParser) -> None:
    sub.add_argument(
        "--width", type=count, default=40, metavar="N", help="cut longer cells to N characters (default 40)"
    )
