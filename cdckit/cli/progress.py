"""Progress bars on stderr, drawn only when stderr is a terminal: a plain bar (:func:`bar`) and the bar of a
read, which moves by bytes of its input files (:class:`ReadProgress`).

>>> with bar("writing", "event", total=3) as shown:
...     shown.update(3)
>>> shown.disable  # stderr is not a terminal here
True
"""

from __future__ import annotations

import os
import sys
import threading
from typing import Any

from tqdm import tqdm

__all__ = ["PROGRESS_TICK", "ReadProgress", "bar", "open_positions"]

#: Seconds between two redraws of the read's progress bar (it moves by bytes read, also inside a chunk).
PROGRESS_TICK = 0.5


def _on_terminal() -> bool:
    return sys.stderr.isatty()


def bar(desc: str, unit: str, total: int | None = None) -> tqdm:
    """A progress bar on stderr, drawn only when stderr is a terminal."""
    return tqdm(total=total, desc=desc, unit=unit, unit_scale=True, file=sys.stderr,
                disable=not _on_terminal(), leave=False, dynamic_ncols=True)


class ReadProgress:
    """The progress of a read in bytes of its input files, with a total and an ETA, redrawn every
    :data:`PROGRESS_TICK` seconds by a thread of its own while the read goes on.

    Files are read one after another: the files before the one being read
    count whole, and of that one the position of its open file (on Linux,
    from ``/proc/self/fdinfo``, so the bar moves inside a long chunk too;
    elsewhere it moves file by file, and the clock keeps running). Drawn only
    when stderr is a terminal; use it as a context manager.

    >>> progress = ReadProgress([__file__])
    >>> progress.total == os.path.getsize(__file__), progress.bytes_read()
    (True, 0)
    """

    def __init__(self, files: list[str], desc: str = "reading") -> None:
        self.files = list(files)
        self.sizes = [_size_of(f) for f in self.files]
        self.total = sum(self.sizes)
        self._real = {os.path.realpath(f): i for i, f in enumerate(self.files)}
        self.reached = 0  # files before this index are read
        self.bar = tqdm(total=self.total, desc=desc, unit="B", unit_scale=True, unit_divisor=1024,
                        mininterval=PROGRESS_TICK, file=sys.stderr, disable=not _on_terminal(), leave=False,
                        dynamic_ncols=True)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def __enter__(self) -> ReadProgress:
        if not self.bar.disable:
            self._thread = threading.Thread(target=self._run, name="cdckit-progress", daemon=True)
            self._thread.start()
        return self

    def __exit__(self, kind: Any, *exc: Any) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        if kind is None:  # read to the end
            self.bar.n = self.total
            self.bar.refresh()
        self.bar.close()

    def sources_seen(self, sources: Any) -> None:
        """The read has come to the last of ``sources`` (the report's ``sources``): those before it are read."""
        for name in sources:
            index = self._real.get(os.path.realpath(str(name)))
            if index is not None and index > self.reached:
                self.reached = index

    def bytes_read(self) -> int:
        """Bytes of the files read so far (never more than the total)."""
        positions = open_positions(self._real)
        current = max((i for i in positions), default=self.reached)
        self.reached = max(self.reached, current)
        done = sum(self.sizes[: self.reached]) + positions.get(self.reached, 0)
        return min(done, self.total)

    def tick(self) -> None:
        """Move the bar to the bytes read and redraw it (the elapsed time and the rate move on too)."""
        self.bar.n = max(self.bar.n, self.bytes_read())
        self.bar.refresh()

    def _run(self) -> None:
        while not self._stop.wait(PROGRESS_TICK):
            self.tick()


def _size_of(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def open_positions(files: dict[str, int]) -> dict[int, int]:
    """``{index: position}`` of the files this process has open, of ``files`` (real path -> index); on
    systems without ``/proc/self/fdinfo`` nothing.

    >>> open_positions({"/no/such/file": 0})
    {}
    """
    positions: dict[int, int] = {}
    try:
        descriptors = os.listdir("/proc/self/fd")
    except OSError:
        return positions
    for fd in descriptors:
        try:
            index = files.get(os.readlink(f"/proc/self/fd/{fd}"))
            if index is None:
                continue
            with open(f"/proc/self/fdinfo/{fd}", encoding="ascii") as info:
                position = int(info.readline().split()[1])
        except (OSError, ValueError, IndexError):
            continue
        positions[index] = max(positions.get(index, 0), position)
    return positions
