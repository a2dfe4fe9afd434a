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
import dataclasses
import sys
import warnings
from pathlib import Path
from typing import Any

import pandas as pd

from ..capture import Capture, plain
from ..filters import Selection
from ..frame import empty_events
from ..frame import table_names
from ..read import exported_events, read
from .exit_codes import UsageError
from .options import Input, unavailable_values
from .progress import ReadProgress
from .summary import summary_of
from .text import printable
from .words import cli_words

__all__ = ["CHUNK_EVENTS", "read_events", "by_table", "read_exported", "load"]

#: Events per chunk of a read.
CHUNK_EVENTS = 20_000


def read_events(source: Input, dialect: str | None, errors: str, chosen: Selection | None = None,
                keep: int | None = None, *, unavailable_value: tuple[str, ...] = ()) -> Capture:
    """Read ``source`` in chunks with a progress bar and keep the events ``chosen`` selects, with the whole
    read's report and quarantine (``unavailable_value`` as in :func:`cdckit.read`).

    ``keep`` keeps only the first ``keep`` events chosen (the read still goes to the end, for the summary).
    """
    chosen = chosen or Selection()
    if source.exported:
        return read_exported(source, chosen, keep)
    rows = dataclasses.replace(chosen, tables=None)  # what each chunk can be filtered by on its own
    names: set[str] = set()
    frames: list[pd.DataFrame] = []
    kept = 0
    paths = [Path(f) for f in source.files]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        chunks = read(paths, dialect=dialect, errors=errors, chunksize=CHUNK_EVENTS,
                      unavailable_value=unavailable_value)
        with ReadProgress(source.files) as progress:
            for frame in chunks:
                progress.sources_seen(frame.attrs["report"]["sources"])
                if chosen.tables is not None:
                    names.update(table_names(frame).dropna().unique())
                part = rows.apply(frame) if rows else frame
                if keep is None or chosen.tables is not None or kept < keep:
                    part = part if keep is None or chosen.tables is not None else part.head(keep - kept)
                    frames.append(plain(part))  # the chunk's attrs (its quarantine) are freed with it
                    kept += len(part)
            report = chunks.report
    for warning in caught:
        print(f"cdckit: warning: {printable(cli_words(str(warning.message)))}", file=sys.stderr)
    events = pd.concat(frames, ignore_index=True) if frames else empty_events()
    capture = Capture(events, chunks.quarantine, report, chunks.column_types)
    if chosen.tables is not None:
        capture = capture.replace(by_table(capture.events, chosen, names))
    if keep is not None:
        capture = capture.replace(capture.events.head(keep))
    return capture


def by_table(events: pd.DataFrame, chosen: Selection, names: Any) -> pd.DataFrame:
    """The events of the ``--table`` tables, looked up among ``names`` (an unknown table is a usage error)."""
    try:
        return Selection(tables=chosen.tables).apply(events, names=names)
    except KeyError as err:
        raise UsageError(f"--table: {err.args[0]}") from None


def read_exported(source: Input, chosen: Selection, keep: int | None) -> Capture:
    """Canonical events that ``cdckit convert`` (or :func:`cdckit.export.write_events`) wrote, read back as
    they are; several files as one, their reports added up."""
    parts = []
    for spec in source.specs:
        parts.append(exported_events(spec, capture=True))
        print(f"cdckit: {printable(spec)} holds canonical events (written by cdckit); read without dialect "
              "detection", file=sys.stderr)
    capture = Capture.combined(parts)
    events = capture.events
    if chosen:
        events = by_table(dataclasses.replace(chosen, tables=None).apply(events), chosen,
                          table_names(events).dropna().unique()) if chosen.tables is not None \
            else chosen.apply(events)
    if keep is not None:
        events = events.head(keep)
    return capture.replace(events)


def load(args: argparse.Namespace, source: Input, chosen: Selection) -> tuple[Capture, int]:
    """The chosen events of a whole capture and the code of its summary (printed on stderr)."""
    capture = read_events(source, args.dialect, args.errors, chosen, unavailable_value=unavailable_values(args))
    return capture, summary_of(source, capture, chosen)
