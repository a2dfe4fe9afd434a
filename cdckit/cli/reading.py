"""How a command reads its capture: in chunks with a progress bar, filtered as it goes, warnings printed in
command-line words; or canonical events cdckit wrote, read back as they are.

>>> from cdckit import samples
>>> source = Input([str(samples.path("canal/shop"))], [str(samples.path("canal/shop"))], False)
>>> capture = read_events(source, None, "quarantine", keep=2)
>>> len(capture.events), capture.report["quarantined"]
(2, 0)
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import sys
import warnings
from pathlib import Path
from typing import Any

import pandas as pd

from ..analysis.filters import Selection, key_coverage
from ..capture import Capture, plain
from ..frame import empty_events, table_names
from ..keys import Keys, tables_keyed, with_keys
from ..reading.read import exported_events, read
from .exit_codes import UsageError
from .options import Input, given_keys, unavailable_values
from .progress import read_progress
from .summary import summary_of
from .text import printable
from .words import cli_words

__all__ = [
    "CHUNK_EVENTS",
    "STOP_CHUNK_EVENTS",
    "Counted",
    "read_events",
    "read_counted",
    "by_table",
    "read_exported",
    "load",
]

#: Events per chunk of a read.
CHUNK_EVENTS = 20_000
#: Events per chunk of a read that stops at ``--head N`` events without filters (at least N).
STOP_CHUNK_EVENTS = 1_000


@dataclasses.dataclass
class Counted:
    """What a read counted beside its events: ``chosen``, how many events the filters chose (before ``--head``
    kept the first of them); ``stopped``, whether the read stopped early, once it had the events it was to show
    (its report then counts the messages read so far)."""

    chosen: int = 0
    stopped: bool = False
    #: With ``--key``: the tables some change of which carries a key, and those with changes carrying none.
    keyed: set[str] = dataclasses.field(default_factory=set)
    keyless: set[str] = dataclasses.field(default_factory=set)


def read_events(
    source: Input,
    dialect: str | None,
    errors: str,
    chosen: Selection | None = None,
    keep: int | None = None,
    *,
    unavailable_value: tuple[str, ...] = (),
    keys: Keys | None = None,
) -> Capture:
    """Read ``source`` in chunks with a progress bar and keep the events ``chosen`` selects, with the whole
    read's report and quarantine (``unavailable_value`` and ``keys`` as in :func:`cdckit.read`).

    ``keep`` keeps only the first ``keep`` events chosen (the read still goes to the end, for the summary).
    """
    return read_counted(source, dialect, errors, chosen, keep, unavailable_value=unavailable_value, keys=keys)[0]


def read_counted(
    source: Input,
    dialect: str | None,
    errors: str,
    chosen: Selection | None = None,
    keep: int | None = None,
    *,
    unavailable_value: tuple[str, ...] = (),
    stop: bool = False,
    keys: Keys | None = None,
) -> tuple[Capture, Counted]:
    """:func:`read_events`, and what it counted (:class:`Counted`). ``stop``: with ``keep``, stop reading once
    ``keep`` events are chosen, where no filter needs the whole capture (``--table`` does: it names tables
    among all those read); the report and quarantine are then those of the messages read so far. ``keys``
    (``--keys``) are given to each chunk before the filters (so ``--key`` finds keyless rows by them); a table
    they name that the whole read does not hold is a usage error.

    >>> from cdckit import samples
    >>> source = Input([str(samples.path("canal/shop"))], [str(samples.path("canal/shop"))], False)
    >>> capture, counted = read_counted(source, None, "quarantine", keep=2, stop=True)
    >>> len(capture.events), counted.chosen, counted.stopped  # a small file is read whole before its first chunk
    (2, 320, False)
    """
    chosen = chosen or Selection()
    if source.exported:
        capture = read_exported(source, chosen, None, keys=keys)
        return capture.replace(capture.events.head(keep)) if keep is not None else capture, Counted(len(capture.events))
    stop = bool(stop and keep and chosen.tables is None)
    rows = dataclasses.replace(chosen, tables=None)  # what each chunk can be filtered by on its own
    names: set[str] = set()
    frames: list[pd.DataFrame] = []
    counted = Counted()
    size = min(CHUNK_EVENTS, max(keep or 0, STOP_CHUNK_EVENTS)) if stop and not rows else CHUNK_EVENTS
    paths = [Path(f) for f in source.files]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        chunks = read(
            paths if source.topic is None else source.topic,
            dialect=dialect,
            errors=errors,
            chunksize=size,
            unavailable_value=unavailable_value,
            keys=keys,
            key_separator=source.key_separator,
            progress=read_progress(),
            **source.schemas,
        )
        with contextlib.closing(chunks):  # a read stopped early takes its bar away before the summary
            for frame in chunks:
                if chosen.tables is not None or keys:
                    names.update(table_names(_table_parts(frame)).dropna().unique())
                if chosen.keys is not None:  # to say why --key finds nothing where tables carry no key
                    keyed, keyless = key_coverage(frame)
                    counted.keyed |= keyed
                    counted.keyless |= keyless
                part = rows.apply(frame) if rows else frame
                if keep is None or chosen.tables is not None or counted.chosen < keep:
                    kept = part if keep is None or chosen.tables is not None else part.head(keep - counted.chosen)
                    frames.append(plain(kept))  # the chunk's attrs (its quarantine) are freed with it
                counted.chosen += len(part)
                if stop and counted.chosen >= keep:  # type: ignore[operator]
                    after = next(chunks, None)  # one chunk more: is there more to read at all?
                    if after is not None:
                        counted.chosen += len(rows.apply(after) if rows else after)
                        counted.stopped = True
                    break
            report = chunks.report
    for warning in caught:
        print(f"cdckit: warning: {printable(cli_words(str(warning.message)))}", file=sys.stderr)
    if keys and not counted.stopped:
        keyed_tables(names, keys)
    events = pd.concat(frames, ignore_index=True) if frames else empty_events()
    capture = Capture(events, chunks.quarantine, report, chunks.column_types)
    if chosen.tables is not None:
        capture = capture.replace(by_table(capture.events, chosen, names))
        counted.chosen = len(capture.events)
    if keep is not None:
        capture = capture.replace(capture.events.head(keep))
    return capture, counted


def by_table(events: pd.DataFrame, chosen: Selection, names: Any) -> pd.DataFrame:
    """The events of the ``--table`` tables, looked up among ``names`` (an unknown table is a usage error)."""
    try:
        return Selection(tables=chosen.tables).apply(events, names=names)
    except KeyError as err:
        raise UsageError(f"--table: {err.args[0]}") from None


def _table_parts(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per distinct (database, schema, table) of ``frame``: what its table names are made of."""
    return frame[["database", "schema", "table"]].drop_duplicates()


def keyed_tables(names: Any, keys: Keys) -> dict[str, list[str]]:
    """The tables among ``names`` that ``--keys`` names, each with its key columns; a name matching none (or
    several) is a usage error naming the tables there are.

    >>> keyed_tables(["shop.customers"], {"customer": ["id"]})
    Traceback (most recent call last):
    cdckit.cli.exit_codes.UsageError: --keys: keys names table 'customer', which is not in the events; \
tables: shop.customers
    """
    try:
        return tables_keyed(names, keys)
    except ValueError as err:
        raise UsageError(f"--keys: {err}") from None


def read_exported(source: Input, chosen: Selection, keep: int | None, *, keys: Keys | None = None) -> Capture:
    """Canonical events that ``cdckit convert`` (or :func:`cdckit.export.write_events`) wrote, read back as
    they are; several files as one, their reports added up; ``keys`` given to them first."""
    parts = []
    for spec in source.specs:
        parts.append(exported_events(spec, capture=True))
        print(
            f"cdckit: {printable(spec)} holds canonical events (written by cdckit); read without dialect detection",
            file=sys.stderr,
        )
    capture = Capture.combined(parts)
    if keys:
        keyed_tables(table_names(_table_parts(capture.events)).dropna().unique(), keys)
        capture = with_keys(capture, keys)
    events = capture.events
    if chosen:
        events = (
            by_table(
                dataclasses.replace(chosen, tables=None).apply(events), chosen, table_names(events).dropna().unique()
            )
            if chosen.tables is not None
            else chosen.apply(events)
        )
    if keep is not None:
        events = events.head(keep)
    return capture.replace(events)


def load(args: argparse.Namespace, source: Input, chosen: Selection) -> tuple[Capture, int]:
    """The chosen events of a whole capture and the code of its summary (printed on stderr)."""
    capture = read_events(
        source, args.dialect, args.errors, chosen, unavailable_value=unavailable_values(args), keys=given_keys(args)
    )
    return capture, summary_of(source, capture, chosen)
