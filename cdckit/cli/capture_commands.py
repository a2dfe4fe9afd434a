"""``cdckit capture``: a bounded sample of a live Kafka topic saved as kcat ``-J`` lines (extra ``kafka``).

The lines are those the read path reads from the topic itself (:mod:`cdckit.io.kafka`), so reading the
saved file gives the topic's frame, keys, partitions, offsets, timestamps and headers kept. A key or value
that is not text (a framed Avro or Protobuf record) is kept whole in Base64 (``key_base64``,
``payload_base64``), and the schemas the framed records use are fetched from ``--schema-registry`` and saved
beside the capture (``OUT.schemas/``, one ``<id>.json`` each), where every later read finds them: the
capture reads offline, in a notebook or on Binder, years later.

>>> from cdckit.cli.parser import build_parser
>>> run_capture(build_parser().parse_args(["capture", "kafka://b:9092/t?colour=red", "-o", "x.jsonl"]))
Traceback (most recent call last):
cdckit.cli.exit_codes.UsageError: kafka://b:9092/t?colour=red: unknown option 'colour'; expected partitions, \
start, offsets, max, count, timeout
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ..export.atomic import atomic_path
from ..io.kafka import PartitionCounts, topic_lines
from ..io.schema_book import SCHEMAS_SUFFIX, book_for, save_schemas
from ..io.wire_format import line_schema_ids
from .exit_codes import EXIT_OK
from .options import kafka_settings, kafka_topic, refuse_existing, schema_settings
from .progress import bar
from .text import printable

__all__ = ["run_capture"]


def run_capture(args: argparse.Namespace) -> int:
    """``cdckit capture URL -o OUT``: the topic's sample as kcat ``-J`` lines; a line on stderr says how many
    records of which partitions were saved."""
    spec = kafka_topic(args.url, kafka_settings(args))
    refuse_existing(args.output, args.force)
    schemas = schema_settings(args)
    counts = PartitionCounts()
    ids: set[int] = set()
    with bar(f"capture {spec.topic}", " records") as shown:
        with atomic_path(Path(args.output), overwrite=args.force) as staged, open(staged, "wb") as out:
            for lines in topic_lines(spec, counts):
                out.write(b"\n".join(lines) + b"\n")
                for line in lines:
                    if b'_base64":"AA' in line:  # a framed key or value: its schema is saved beside the capture
                        ids.update(line_schema_ids(line))
                shown.total = counts.total
                shown.update(len(lines))
                shown.set_postfix_str(counts.text(), refresh=False)
    print(
        f"cdckit: saved {counts.read():,} records of {printable(spec.name)} to {printable(args.output)} "
        f"(records per partition: {counts.text() or 'none'})",
        file=sys.stderr,
    )
    if ids:
        print(f"cdckit: {_saved_schemas(ids, args.output, schemas)}", file=sys.stderr)
    return EXIT_OK


def _saved_schemas(ids: set[int], output: str, settings: dict[str, Any]) -> str:
    """Save the schemas of ``ids`` (and those they refer to) beside the capture, ``<output>.schemas/``, so that
    it reads offline; what was saved, or what is missing and how to get it."""
    book = book_for(None, settings["schema_registry"], settings["schema_registry_config"], settings["schemas"])
    listed = ", ".join(map(str, sorted(ids)))
    if book is None:
        return (
            f"the records are framed for a schema registry (schema ids {listed}): give --schema-registry URL "
            "(or --schemas DIR) to save their schemas beside the capture, or give them when reading it"
        )
    found = {i: book.lookup(i) for i in sorted(ids)}
    missing = [book.missing_reason(i) for i, schema in found.items() if schema is None]
    book.mark_used(i for i, schema in found.items() if schema is not None)
    folder = output + SCHEMAS_SUFFIX
    written = save_schemas(book.used(), folder)
    text = f"saved {len(written)} schema(s) the records use to {printable(folder)}"
    return text + ("; " + "; ".join(missing) if missing else "")
