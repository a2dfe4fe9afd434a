"""The help texts of ``cdckit``: the examples, filters and exit codes under ``cdckit --help``
(:data:`MAIN_EXAMPLES`) and the examples under each ``cdckit COMMAND --help`` (:data:`COMMAND_EXAMPLES`).

>>> sorted(COMMAND_EXAMPLES)[:3]
['capture', 'compare', 'convert']
>>> all(text.startswith("examples:") for text in COMMAND_EXAMPLES.values())
True
"""

from __future__ import annotations

__all__ = ["MAIN_EXAMPLES", "COMMAND_EXAMPLES"]

#: The epilog of ``cdckit --help``; ``{ops}`` and ``{codes}`` are filled in by the parser.
MAIN_EXAMPLES = """\
examples:
  cdckit samples                                  list the bundled sample captures
  cdckit detect captures/                         which dialect is each file?
  cdckit read $(cdckit samples --path canal/shop) --head 5
  cdckit read captures/*.jsonl --table customers --key 3
  cdckit convert capture.jsonl -o events.parquet  the canonical events as Parquet
  cdckit convert capture.jsonl -o out.jsonl --to debezium
  cdckit report capture.jsonl -o report.html      a self-contained HTML report
  cdckit order capture.jsonl                      what is wrong with the order?
  cdckit keys values.jsonl                        propose keys for tables that name none
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

#: The epilog of each command's help; ``{formats}`` and ``{dialects}`` (convert) are filled in by the parser.
COMMAND_EXAMPLES = {
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
  cdckit state capture.jsonl --after-transaction 743   right after transaction 743
  cdckit state capture.jsonl --whole-transactions      without partial transactions

The final rows of each table after replaying the changes (cdckit.materialize):
printed as tables, or written with -o to a folder of one file per table (the
format from --to, else OUT's suffix, else Parquet). Changes that did not fit
(replay problems) are counted on stderr, and so are the transactions that
--whole-transactions leaves out. Exits 1 when some messages were
quarantined, 4 when OUT exists (without --force).
""",
    "scd2": """\
examples:
  cdckit scd2 capture.jsonl --table customers
  cdckit scd2 capture.jsonl -o history/ --to csv

Every version of every row, valid_from / valid_to / is_current (cdckit.scd2):
printed as tables, or written with -o as state does. A table whose changes
name no key columns has no versions: a warning names it, and when no table
has key columns scd2 says so and exits 3. Exits 1 when some messages were
quarantined, 4 when OUT exists (without --force).
""",
    "schema": """\
examples:
  cdckit schema capture.jsonl
  cdckit schema capture.jsonl --table customers

The columns of each table now (name and type, the key), then every change of
the column set, a type or the key over time, beside the DDL that made it
(cdckit.schema_history). Exits 1 when some messages were quarantined.
""",
    "transactions": """\
examples:
  cdckit transactions capture.jsonl
  cdckit transactions data.jsonl transaction_topic.jsonl --status incomplete
  cdckit transactions capture.jsonl --format csv > transactions.csv

One row per transaction the capture holds (cdckit.transactions): its id, where
it begins and commits, its commit time and duration, its changes per table,
what the producer declared (Debezium's END record: event_count and
data_collections), and whether the capture holds all of it (status complete,
no_commit, no_begin, missing_changes, extra_changes, or undeclared when the
producer marks no boundaries in the capture). Give Debezium's transaction
topic (<prefix>.transaction) beside its data topics. Exits 1 when a transaction
is held only in part (or messages were quarantined).
""",
    "keys": """\
examples:
  cdckit keys values.jsonl
  cdckit keys values.jsonl --table customers

For each table whose changes name no key columns (Kafka values saved without
their keys, Maxwell, test_decoding, ...), the key cdckit.infer_keys proposes:
first from what the capture shows (a PostgreSQL capture's old tuples, a key
change sent as a delete and a create), then from the data (the smallest set of
columns no update changes that identifies the live rows at every point), with
the runner-up and why it lost. Prints the --keys options that give the keys
to any command that reads. Exits 1 when some messages were quarantined.
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
    "capture": """\
examples:
  cdckit capture kafka://localhost:9092/pg.public.orders -o capture.jsonl
  cdckit capture 'kafka://b1:9092,b2:9092/orders?partitions=0,2&max=10000' -o sample.jsonl
  cdckit capture 'kafka://b1:9092/orders?start=2024-05-01T12:00:00Z' -o since-noon.jsonl
  cdckit capture 'kafka://b1:9092/orders?offsets=0:100,1:250&max=500' -o some.jsonl --force
  cdckit capture kafka://b1:9093/orders -X security.protocol=SASL_SSL -X sasl.mechanism=PLAIN \\
      -X sasl.username=me -X sasl.password=... -o capture.jsonl
  cdckit read capture.jsonl

Saves a bounded sample of a live topic as kcat -J lines (topic, partition,
offset, timestamp, headers, key, payload), which every command reads as it
reads the topic itself (any PATH may be the kafka:// URL too). The URL's
options: partitions=0,2 (default all); start=beginning (default), end, a time
in ms since the epoch or ISO 8601 (records before it left out); offsets=P:O,...
(start partition P at offset O); max=N (or count=N) records in all;
timeout=S seconds to wait for the broker (10). The read stops when every
partition has caught up or N records are read. It joins no consumer group and
never commits an offset. -X passes a setting to the Kafka client (librdkafka's
names), as kcat does. Exits 3 when the broker cannot be reached or the topic
does not exist, 4 when OUT exists (without --force).
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
