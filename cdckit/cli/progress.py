"""Progress bars on stderr, drawn only when stderr is a terminal: a plain bar (:func:`bar`), and the bar of a
read, which :func:`cdckit.read` draws itself when told to (:func:`read_progress`; see :mod:`cdckit.reading.progress`:
it moves by bytes of the input files, read here or by worker processes).

>>> with bar("writing", "event", total=3) as shown:
...     shown.update(3)
>>> shown.disable  # stderr is not a terminal here
True
>>> read_progress()
False
"""

from __future__ import annotations

import sys

from tqdm import tqdm

__all__ = ["bar", "read_progress"]


def read_progress() -> bool:
    """The ``progress`` a command gives :func:`cdckit.read`: a bar whenever stderr is a terminal (whatever the
    size of the read), never elsewhere."""
    try:
        return bool(sys.stderr.isatty())
    except (AttributeError, ValueError):  # no stderr, or a closed one
        return False


def bar(desc: str, unit: str, total: int | None = None) -> tqdm:
    """A progress bar on stderr, drawn only when stderr is a terminal."""
    return tqdm(
        total=total,
        desc=desc,
        unit=unit,
        unit_scale=True,
        file=sys.stderr,
        disable=not read_progress(),
        leave=False,
        dynamic_ncols=True,
    )
