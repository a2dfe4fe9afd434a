"""What a write did: :class:`Written`, the result of every writer of :mod:`cdckit.export`.

>>> print(Written(Path("out/state"), "csv", 12, [Path("out/state/a.csv"), Path("out/state/b.csv")], 512))
wrote 12 rows to out/state (csv, 2 files, 512 bytes)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["Written"]


@dataclass
class Written:
    """What a write did: where, in which format, how many rows, which files, how many bytes, and notes;
    ``what``: what was written, where it is not rows (a report of the events).

    >>> print(Written(Path("out/events.parquet"), "parquet", 4684, [Path("out/events.parquet")], 215_040))
    wrote 4,684 rows to out/events.parquet (parquet, 1 file, 210 KB)
    >>> print(Written(Path("r.html"), "html", 20, [Path("r.html")], 9_000, what="the report of 20 events"))
    wrote the report of 20 events to r.html (html, 1 file, 9 KB)
    """

    path: Path
    format: str
    rows: int
    files: list[Path]
    bytes: int
    notes: list[str] = field(default_factory=list)
    what: str = ""

    def __str__(self) -> str:
        files = f"{len(self.files):,} file" + ("" if len(self.files) == 1 else "s")
        what = self.what or f"{self.rows:,} rows"
        return f"wrote {what} to {self.path} ({self.format}, {files}, {_size(self.bytes)})"


def _size(count: int) -> str:
    """A byte count for people.

    >>> _size(512), _size(215_040), _size(5_347_738)
    ('512 bytes', '210 KB', '5.1 MB')
    """
    if count < 1024:
        return f"{count} bytes"
    if count < 1024**2:
        return f"{count / 1024:.0f} KB"
    if count < 1024**3:
        return f"{count / 1024**2:.1f} MB"
    return f"{count / 1024**3:.1f} GB"
