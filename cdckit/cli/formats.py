"""Which output format a command writes: ``--to`` (a file format or a dialect), else the output's suffix.

The suffix -> format map is the exporter's (:data:`cdckit.io.formats.SUFFIX_FORMATS`), so that the
command line guesses exactly what ``write_events`` would.

>>> target(None, "events.parquet")
('format', 'parquet')
>>> table_format(None, "state/")
'parquet'
"""

from __future__ import annotations

import difflib
from pathlib import Path

from ..dialects import registry
from ..errors import UnknownDialectError
from ..io.formats import FORMATS, SUFFIX_FORMATS
from .exit_codes import UsageError

__all__ = ["SNAPSHOT_SUFFIXES", "formats", "target", "table_format"]

#: Suffixes of a snapshot ``cdckit reconcile`` reads.
SNAPSHOT_SUFFIXES = (".parquet", ".pq", ".csv")


def formats() -> tuple[str, ...]:
    """The file formats cdckit writes (:data:`cdckit.io.formats.FORMATS`).

    >>> "parquet" in formats()
    True
    """
    return tuple(FORMATS)


def target(to: str | None, output: str) -> tuple[str, str]:
    """``("format", name)`` or ``("dialect", name)`` for ``--to`` (or the output's suffix).

    >>> target("debezium", "out.jsonl"), target("CSV", "out.txt")
    (('dialect', 'debezium'), ('format', 'csv'))
    >>> target("debezum", "out.jsonl")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    cdckit.cli.exit_codes.UsageError: --to 'debezum' is neither a format ... (did you mean debezium?)
    """
    known = formats()
    if to is None:
        suffix = Path(output).suffix.lower()
        if suffix not in SUFFIX_FORMATS:
            raise UsageError(
                f"cannot tell the format of {output!r} from its suffix; pass --to ({', '.join(known)} or a dialect)"
            )
        return "format", SUFFIX_FORMATS[suffix]
    if to.lower() in known:
        return "format", to.lower()
    try:
        dialect = registry.get(to)
    except UnknownDialectError:
        near = difflib.get_close_matches(to.lower(), [*known, *registry.writable()], n=1, cutoff=0.6)
        hint = f" (did you mean {near[0]}?)" if near else ""
        raise UsageError(
            f"--to {to!r} is neither a format ({', '.join(known)}) nor a dialect ({', '.join(registry.names())}){hint}"
        ) from None
    if not dialect.can_encode():
        writable = registry.writable()
        raise UsageError(f"the {dialect.name} dialect cannot be written; these can: {', '.join(writable)}")
    return "dialect", dialect.name


def table_format(to: str | None, output: str) -> str:
    """The file format of a folder of tables (state, scd2): ``--to``, else OUT's suffix, else Parquet.

    >>> table_format("JSONL", "out"), table_format(None, "state.csv")
    ('jsonl', 'csv')
    """
    known = formats()
    if to is not None:
        if to.lower() not in known:
            raise UsageError(f"--to {to!r} is not a format; choose one of {', '.join(known)}")
        return to.lower()
    suffix = Path(output).suffix.lower()
    if not suffix:
        return "parquet"
    if suffix not in SUFFIX_FORMATS:
        raise UsageError(f"cannot tell the format of {output!r} from its suffix; pass --to ({', '.join(known)})")
    return SUFFIX_FORMATS[suffix]
