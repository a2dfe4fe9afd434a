"""Checks of a command's options and inputs, all made before any decoding starts: a bad value is a usage
error naming the option, a missing input or an existing output fails before the (long) read.

>>> count("5"), columns(["op, key", "after"])
(5, ['op', 'key', 'after'])
>>> selection(argparse.Namespace(table=None, op=["insert"], key=None, since=None, until=None)).ops
('insert',)
"""

from __future__ import annotations

import argparse
import dataclasses
import os
from typing import Any

from ..analysis.filters import Selection
from ..analysis.filters import selection as filter_selection
from ..dialects import registry
from ..frame import COLUMN_NAMES
from ..io import expand_paths
from ..io.kafka import KafkaSpec, is_kafka_url, parse_kafka_url
from .exit_codes import UsageError

__all__ = [
    "READ_COLUMNS",
    "Input",
    "count",
    "columns",
    "inputs",
    "selection",
    "check_dialect",
    "refuse_existing",
    "checked",
    "is_events_file",
    "unavailable_values",
    "given_keys",
]

#: Columns ``cdckit read`` shows by default.
READ_COLUMNS = ("op", "table", "key", "seq", "event_time", "before", "after")


def count(text: str) -> int:
    """An option's whole number, 0 or more (an argparse ``type``).

    >>> count("-1")
    Traceback (most recent call last):
    argparse.ArgumentTypeError: must be 0 or more, not -1
    """
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, not {value}")
    return value


def columns(chosen: list[str] | None) -> list[str]:
    """The columns ``--columns`` names (repeated or between commas), else :data:`READ_COLUMNS`.

    >>> columns(None) == list(READ_COLUMNS)
    True
    """
    if not chosen:
        return list(READ_COLUMNS)
    names = [c.strip() for part in chosen for c in part.split(",") if c.strip()]
    unknown = [c for c in names if c not in COLUMN_NAMES]
    if unknown:
        raise UsageError(f"unknown column(s) {', '.join(unknown)}; choose from {', '.join(COLUMN_NAMES)}")
    return names


@dataclasses.dataclass
class Input:
    """What a command reads: the paths as given and the files they name (or cdckit's own events).

    >>> Input(["a.jsonl", "b.jsonl", "c.jsonl"], [], False).label
    'a.jsonl and 2 more'
    """

    specs: list[str]
    files: list[str]
    exported: bool
    #: ``--key-separator``: that of kafka-console-consumer lines (:func:`cdckit.read`'s ``key_separator``).
    key_separator: str | None = None
    #: A live Kafka topic read instead of files (a ``kafka://`` PATH, read alone), with its ``-X`` settings.
    topic: KafkaSpec | None = None
    #: Where the schemas of framed records are (:func:`schema_settings`: :func:`cdckit.read`'s arguments).
    schemas: dict[str, Any] = dataclasses.field(default_factory=dict)

    @property
    def label(self) -> str:
        """How the summary names the input: the one path, or the first and how many more."""
        return self.specs[0] if len(self.specs) == 1 else f"{self.specs[0]} and {len(self.specs) - 1} more"


def is_events_file(path: str) -> bool:
    """Whether ``path`` holds canonical events cdckit wrote (``cdckit.export.is_events_file``, imported on use).

    >>> is_events_file(__file__)
    False
    """
    from ..export import is_events_file as exported

    return exported(path)


def inputs(
    specs: list[str], dialect: str | None, key_separator: str | None = None, kafka: dict[str, str] | None = None
) -> Input:
    """The files of ``specs`` (each must name some; the same file twice is read once), canonical events
    cdckit wrote, or one live Kafka topic (``kafka`` its client settings); nothing is decoded yet.

    >>> inputs([__file__, __file__], None).files == [__file__]
    True
    """
    if any(is_kafka_url(spec) for spec in specs):
        if len(specs) > 1:
            raise UsageError("a kafka:// topic is read alone: give it as the only PATH")
        return Input(list(specs), list(specs), False, key_separator, kafka_topic(specs[0], kafka))
    exported = [dialect is None and os.path.exists(spec) and is_events_file(spec) for spec in specs]
    if any(exported) and not all(exported):
        raise UsageError("canonical events written by cdckit and raw captures cannot be read together")
    if all(exported):
        return Input(list(specs), list(specs), True)
    files: list[str] = []
    for spec in specs:
        files += [f for f in expand_paths(spec) if f not in files]
    return Input(list(specs), files, False, key_separator)


def selection(args: argparse.Namespace, **given: Any) -> Selection:
    """The filter options, each checked (a bad value is a usage error naming the option); ``given``
    replaces options of ``args`` (``reconcile`` has a table of its own and key columns, not key values).

    >>> selection(argparse.Namespace(op=["upsert"]))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    cdckit.cli.exit_codes.UsageError: --op upsert: unknown op 'upsert' (did you mean insert?); ...
    """
    options = {name: getattr(args, name, None) for name in ("table", "op", "key", "since", "until")}
    options.update(given)
    if options["key"] is not None:
        options["key"] = frozenset(options["key"])
    for name, value in options.items():
        if value is not None:
            try:
                filter_selection(**{name: value})
            except ValueError as err:
                shown = (
                    ", ".join(sorted(value))
                    if isinstance(value, frozenset)
                    else ",".join(value)
                    if isinstance(value, list)
                    else value
                )
                raise UsageError(f"--{name} {shown}: {err}") from None
    return filter_selection(**options)


def check_dialect(name: str | None) -> None:
    """A misspelt ``--dialect`` fails before any reading, with a suggestion (``UnknownDialectError``)."""
    if name is not None:
        registry.get(name)


def unavailable_values(args: argparse.Namespace) -> tuple[str, ...]:
    """The texts ``--unavailable-value`` gives (each taken whole: a placeholder may hold commas).

    >>> unavailable_values(argparse.Namespace(unavailable_value=["<unchanged>", "a,b"]))
    ('<unchanged>', 'a,b')
    >>> unavailable_values(argparse.Namespace(unavailable_value=[""]))
    Traceback (most recent call last):
    cdckit.cli.exit_codes.UsageError: --unavailable-value takes a non-empty text
    """
    given = tuple(getattr(args, "unavailable_value", None) or ())
    if any(not text for text in given):
        raise UsageError("--unavailable-value takes a non-empty text")
    return given


def given_keys(args: argparse.Namespace) -> dict[str, list[str]] | None:
    """The key columns ``--keys TABLE=COL,...`` gives (repeatable), or None when none are given.

    >>> given_keys(argparse.Namespace(keys=["customers=id", "shop.order_lines=order_id, line_no"]))
    {'customers': ['id'], 'shop.order_lines': ['order_id', 'line_no']}
    >>> given_keys(argparse.Namespace(keys=["customers"]))
    Traceback (most recent call last):
    cdckit.cli.exit_codes.UsageError: --keys customers: write TABLE=COL or TABLE=COL1,COL2 (customers=id)
    """
    keys: dict[str, list[str]] = {}
    for text in getattr(args, "keys", None) or ():
        table, _, named = text.partition("=")
        columns = [c.strip() for c in named.split(",")]
        if not table.strip() or not all(columns):
            raise UsageError(f"--keys {text}: write TABLE=COL or TABLE=COL1,COL2 (customers=id)")
        if table.strip() in keys:
            raise UsageError(f"--keys {text}: {table.strip()} is given twice")
        keys[table.strip()] = columns
    return keys or None


def kafka_settings(args: argparse.Namespace) -> dict[str, str]:
    """The ``-X KEY=VALUE`` Kafka client settings (each checked).

    >>> kafka_settings(argparse.Namespace(kafka_config=["client.id=me"]))
    {'client.id': 'me'}
    """
    return _key_values(getattr(args, "kafka_config", None), "-X", "security.protocol=SASL_SSL")


def _key_values(texts: list[str] | None, option: str, example: str) -> dict[str, str]:
    """``KEY=VALUE`` settings of a repeated ``option`` (a usage error shows ``example``)."""
    found: dict[str, str] = {}
    for text in texts or []:
        name, sep, value = text.partition("=")
        if not sep or not name.strip():
            raise UsageError(f"{option} {text}: write KEY=VALUE ({example})")
        found[name.strip()] = value
    return found


def schema_settings(args: argparse.Namespace) -> dict[str, Any]:
    """``--schema-registry``, ``--schema-registry-config KEY=VALUE`` and ``--schemas``, as :func:`cdckit.read`
    takes them (each checked).

    >>> schema_settings(argparse.Namespace(schema_registry="http://r:8081", schema_registry_config=["a=b"]))
    {'schema_registry': 'http://r:8081', 'schema_registry_config': {'a': 'b'}, 'schemas': None}
    """
    config = _key_values(
        getattr(args, "schema_registry_config", None), "--schema-registry-config", "basic.auth.user.info=USER:PASS"
    )
    registry = getattr(args, "schema_registry", None)
    if config and not registry:
        raise UsageError("--schema-registry-config sets the client of a --schema-registry URL: give it too")
    folder = getattr(args, "schemas", None)
    if folder is not None and not os.path.isdir(folder):
        raise UsageError(f"--schemas {folder}: no such folder")
    return {"schema_registry": registry, "schema_registry_config": config or None, "schemas": folder}


def kafka_topic(url: str, kafka: dict[str, str] | None) -> KafkaSpec:
    """The topic and bounds a ``kafka://`` PATH names (a malformed one is a usage error)."""
    try:
        return parse_kafka_url(url, kafka)
    except ValueError as err:
        raise UsageError(str(err)) from None


def refuse_existing(output: str, force: bool) -> None:
    """Fail before the (long) read when the output exists and --force was not given.

    >>> refuse_existing(__file__, force=True)
    """
    if not force and os.path.lexists(output):
        raise FileExistsError(f"{output} exists; pass --force to replace it")


def checked(args: argparse.Namespace, specs: list[str], **given: Any) -> tuple[Input, Selection]:
    """The common checks of a reading command, all before any decoding: dialect, filters, input paths."""
    check_dialect(args.dialect)
    unavailable_values(args)
    given_keys(args)
    chosen = selection(args, **given)
    separator = getattr(args, "key_separator", None)
    if separator is not None and (not separator or "\n" in separator):
        raise UsageError("--key-separator takes a non-empty text without a line end")
    found = inputs(specs, args.dialect, separator, kafka_settings(args))
    return dataclasses.replace(found, schemas=schema_settings(args)), chosen
