"""The file formats of an export and the names of what it writes: suffixes, extensions, partition folders.

>>> SUFFIX_FORMATS[".ndjson"], EXTENSIONS["jsonl"], partition_folder("shop.a/b"), partition_folder(None)
('jsonl', '.jsonl', 'table_name=shop.a%2Fb', 'table_name=__HIVE_DEFAULT_PARTITION__')
"""

from __future__ import annotations

from pathlib import Path

__all__ = [
    "FORMATS",
    "SUFFIX_FORMATS",
    "EXTENSIONS",
    "PARTITION_COLUMN",
    "DEFAULT_PARTITION",
    "format_of",
    "partition_folder",
    "file_stems",
]

#: The file formats the writers know.
FORMATS = ("parquet", "csv", "jsonl")

#: File suffixes and the format each means.
SUFFIX_FORMATS = {
    ".parquet": "parquet",
    ".pq": "parquet",
    ".csv": "csv",
    ".jsonl": "jsonl",
    ".json": "jsonl",
    ".ndjson": "jsonl",
}

#: The suffix each format writes.
EXTENSIONS = {"parquet": ".parquet", "csv": ".csv", "jsonl": ".jsonl"}

#: The folder key of a partitioned output: ``table_name=<database.table>``.
PARTITION_COLUMN = "table_name"

#: The folder value of events without a table (Hive's and Spark's name for a null partition value).
DEFAULT_PARTITION = "__HIVE_DEFAULT_PARTITION__"

#: Characters Spark (and Hive) escape in partition folder names, besides control characters.
_ESCAPED = frozenset("\"#%'*/:=?\\\x7f{[]^")


def format_of(path: Path, format: str | None) -> str:
    """``format`` checked, or the format ``path``'s suffix names.

    >>> format_of(Path("events.PQ"), None), format_of(Path("events"), "CSV")
    ('parquet', 'csv')
    >>> format_of(Path("events.txt"), None)
    Traceback (most recent call last):
    ...
    ValueError: cannot tell the format of events.txt from its suffix; pass format= (one of parquet, csv, jsonl) \
or name it .parquet, .csv or .jsonl
    """
    if format is not None:
        if format.lower() not in FORMATS:
            raise ValueError(f"unknown format {format!r}; choose one of {', '.join(FORMATS)}")
        return format.lower()
    found = SUFFIX_FORMATS.get(path.suffix.lower())
    if found is None:
        raise ValueError(
            f"cannot tell the format of {path} from its suffix; pass format= (one of "
            f"{', '.join(FORMATS)}) or name it .parquet, .csv or .jsonl"
        )
    return found


def partition_folder(name: str | None) -> str:
    """The folder of a table's events in a partitioned output: ``table_name=<escaped name>``.

    >>> partition_folder("shop.x=y"), partition_folder("")
    ('table_name=shop.x%3Dy', 'table_name=__HIVE_DEFAULT_PARTITION__')
    """
    return f"{PARTITION_COLUMN}={_escape(name) if name else DEFAULT_PARTITION}"


def file_stems(names: list[str]) -> dict[str, str]:
    """A safe, distinct file stem for each table name (a leading ``.`` or ``_`` escaped too: readers skip those).

    >>> file_stems(["shop.customers", "a/b", ".hidden", "_x"])
    {'shop.customers': 'shop.customers', 'a/b': 'a%2Fb', '.hidden': '%2Ehidden', '_x': '%5Fx'}
    """
    stems = {}
    for name in names:
        stem = _escape(str(name)) or "%00"
        if stem[0] in "._":
            stem = f"%{ord(stem[0]):02X}{stem[1:]}"
        stems[name] = stem
    return stems


def _escape(name: str) -> str:
    """A name as a file or folder name: control characters and :data:`_ESCAPED` as ``%XX`` (as Spark does)."""
    return "".join(f"%{ord(c):02X}" if c in _ESCAPED or ord(c) < 0x20 else c for c in name)
