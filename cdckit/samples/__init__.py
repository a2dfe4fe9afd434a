"""Small sample captures of every dialect, shipped inside the package.

For each dialect there is ``<dialect>/examples.*`` (the spec's own example
messages, made concrete where the spec shows a template) and
``<dialect>/shop.*`` (the deterministic "shop" scenario of
:mod:`cdckit.samples.shop`, written by the dialect's own encoder).

>>> from cdckit import samples
>>> "canal/examples.jsonl" in samples.list()
True
>>> samples.path("canal").name
'examples.jsonl'
>>> samples.load("canal/shop").attrs["report"]["quarantined"]
0
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

__all__ = ["DATA", "list", "path", "load", "raw"]

#: The folder holding the sample files.
DATA = Path(__file__).parent / "data"

_list = list


def list() -> _list[str]:  # noqa: A001 - mirrors itables' sample_dfs naming
    """Names of all sample files, as ``"<dialect>/<file>"`` (the schemas saved beside a binary capture, in its
    ``<file>.schemas/`` folder, are its own, not samples)."""
    return sorted(
        str(p.relative_to(DATA))
        for p in DATA.rglob("*")
        if p.is_file() and not p.name.startswith(".") and not p.parent.name.endswith(".schemas")
    )


def is_framed(name: str) -> bool:
    """True for a capture of framed records (Avro, Protobuf or JSON Schema in Confluent's wire format, kept in
    Base64) saved with its schemas beside it: its messages are bytes until read with those schemas.

    >>> is_framed("debezium/postgres_avro.jsonl"), is_framed("debezium/postgres_kcat.jsonl")
    (True, False)
    """
    return Path(str(path(name)) + ".schemas").is_dir()


def path(name: str) -> Path:
    """The file of a sample.

    ``name`` is a full name from :func:`list`, a dialect (its examples), or
    ``"<dialect>/<stem>"`` (the file with that stem, JSON Lines first).
    """
    names = list()
    if name in names:
        return DATA / name
    stem = name if "/" in name else f"{name}/examples"
    found = [n for n in names if n.split(".", 1)[0] == stem]
    if not found:
        raise KeyError(f"no sample named {name!r}; see cdckit.samples.list()")
    found.sort(key=lambda n: _PREFERRED.index(n.split(".", 1)[1]) if n.split(".", 1)[1] in _PREFERRED else 99)
    return DATA / found[0]


#: Which file a short name picks when several share the stem.
_PREFERRED = ("jsonl", "json", "txt", "jsonl.gz", "csv", "parquet")


def load(name: str, **read_options: Any) -> pd.DataFrame:
    """A sample decoded by :func:`cdckit.read` (options are passed on)."""
    from ..reading.read import read

    return read(path(name), **read_options)


def raw(name: str) -> str:
    """A sample's text as stored (Latin-1 files decoded as Latin-1)."""
    data = path(name).read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("latin-1")
