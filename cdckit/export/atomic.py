"""Atomic output: build under a hidden temporary name beside the target, rename into place when complete.

A write that fails midway leaves nothing behind (neither a partial output
nor the temporary folder); an existing target is refused with
:class:`FileExistsError` unless ``overwrite=True`` (an existing directory is
then renamed away, the new output renamed in, and the old one removed).

>>> import tempfile, shutil
>>> out = Path(tempfile.mkdtemp())
>>> with atomic_path(out / "note.txt", overwrite=False) as staged:
...     _ = staged.write_text("hello")
>>> (out / "note.txt").read_text(), sorted(p.name for p in out.iterdir())
('hello', ['note.txt'])
>>> shutil.rmtree(out)
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from .written import Written

__all__ = ["atomic_path", "refuse_existing", "written_at"]


def refuse_existing(path: Path, overwrite: bool) -> None:
    """Raise :class:`FileExistsError` when ``path`` exists and ``overwrite`` is false.

    >>> refuse_existing(Path(tempfile.gettempdir()), overwrite=False)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    FileExistsError: ... exists; pass overwrite=True to replace it (CLI: --force)
    """
    if not overwrite and os.path.lexists(path):
        raise FileExistsError(f"{path} exists; pass overwrite=True to replace it (CLI: --force)")


@contextmanager
def atomic_path(path: Path, overwrite: bool) -> Iterator[Path]:
    """Yield a staging path beside ``path``; move it into place when the block ends without error.

    The staging path lies in a hidden temporary folder in ``path``'s folder
    (same file system, so the final rename is atomic); the folder is removed
    in every case. Parent folders of ``path`` are created. See the module
    notes for an example.
    """
    refuse_existing(path, overwrite)
    path.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent))
    try:
        staged = work / path.name
        yield staged
        if not os.path.lexists(staged):
            raise RuntimeError(f"nothing was written for {path}")
        refuse_existing(path, overwrite)  # created by someone else meanwhile?
        if not os.path.lexists(path) or (staged.is_file() and not path.is_dir()):
            os.replace(staged, path)
        else:  # a folder on either side: rename the old one away, the new one in
            old = work / ".replaced"
            os.replace(path, old)
            try:
                os.replace(staged, path)
            except BaseException:
                os.replace(old, path)
                raise
    finally:
        shutil.rmtree(work, ignore_errors=True)


def written_at(path: Path, staged: Path, fmt: str, rows: int, staged_files: list[Path], notes: list[str]) -> Written:
    """The :class:`Written` of an output moved from ``staged`` to ``path`` (``staged_files`` as they were staged).

    >>> print(written_at(Path(tempfile.gettempdir()), Path("staged"), "csv", 0, [], []))  # doctest: +ELLIPSIS
    wrote 0 rows to ... (csv, 0 files, 0 bytes)
    """
    files = [path / file.relative_to(staged) if file != staged else path for file in staged_files]
    return Written(path, fmt, rows, files, sum(file.stat().st_size for file in files), notes)
