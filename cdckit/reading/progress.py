"""Progress bars of long reads: tqdm's text bar in a terminal, its widget bar in a Jupyter notebook.

One rule says when a read draws a bar (:func:`drawn`): ``progress=False``
never, ``progress=True`` always, ``progress=None`` (automatic) for a read of
at least :data:`AUTOMATIC_BYTES` (or :data:`AUTOMATIC_MESSAGES`) where there
is a place to draw it (a notebook kernel, or stderr on a terminal), once it
has taken :data:`DELAY` seconds. A notebook kernel gets tqdm's notebook
widget where ipywidgets is installed (:func:`bar_class`), else the text bar.

The bar shows the work done (:class:`ReadProgress`): bytes of the input
files, counted whole for the files the read is past; of a file the calling
process reads, the position of its open file (on Linux, from
``/proc/self/fdinfo``, so it moves inside a long chunk too); of a file
worker processes read (:mod:`cdckit.workers`), what each worker publishes
of its range in a shared progress file (:meth:`ReadProgress.watched`,
:func:`publishing`). A gzip file counts its compressed bytes. An iterable of
messages whose length is known counts messages (:class:`CountProgress`).

>>> drawn(False, 1 << 40), drawn(True, 0)
(False, True)
>>> drawn(None, 1000)  # a small read never draws a bar
False
>>> with ReadProgress([__file__], show=False) as progress:
...     progress.total == os.path.getsize(__file__)
True
"""

from __future__ import annotations

import contextlib
import mmap
import os
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from tqdm import std

__all__ = [
    "AUTOMATIC_BYTES",
    "AUTOMATIC_MESSAGES",
    "DELAY",
    "PROGRESS_TICK",
    "CountProgress",
    "Progress",
    "ReadProgress",
    "bar_class",
    "bar_of_read",
    "drawn",
    "in_kernel",
    "open_positions",
    "place_to_draw",
    "publishing",
]

#: Seconds between two redraws of a read's bar (and between two reports of a worker's position).
PROGRESS_TICK = 0.5
#: Seconds an automatic bar waits before it shows (a read done sooner shows none).
DELAY = 1.0
#: The bytes of input files from which an automatic bar is drawn (the bundled samples are far smaller).
AUTOMATIC_BYTES = 8 << 20
#: The messages (of an iterable whose length is known) from which an automatic bar is drawn.
AUTOMATIC_MESSAGES = 200_000


def in_kernel() -> bool:
    """True inside a Jupyter kernel that shows widgets (notebook, JupyterLab, VS Code, Colab), as
    ``tqdm.auto`` decides, but asked at each call (``tqdm.auto`` decides once, when first imported).

    >>> in_kernel()
    False
    """
    if "ipykernel.zmqshell" not in sys.modules:
        return "IPython.utils._process_emscripten" in sys.modules  # JupyterLite
    if any(name == "QT_API" or name.startswith("SPYDER") for name in os.environ):
        return False  # qtconsole, Spyder: a console
    try:
        shell = sys.modules["IPython"].get_ipython()
    except (KeyError, AttributeError):
        return False
    kind = type(shell).__name__.lower()
    return shell is not None and "qt" not in kind and "spyder" not in kind


def bar_class() -> type[std.tqdm]:
    """tqdm's notebook bar inside a kernel where ipywidgets is installed, else its text bar.

    >>> bar_class().__module__
    'tqdm.std'
    """
    if in_kernel():
        try:
            from tqdm import notebook
        except ImportError:
            return std.tqdm
        if notebook.IProgress is not None:  # ipywidgets is there
            return notebook.tqdm
    return std.tqdm


def place_to_draw() -> bool:
    """True where a bar can be seen: a notebook kernel, or stderr on a terminal (not a pipe, a log file or
    a test's captured output)."""
    if in_kernel():
        return True
    try:
        return bool(sys.stderr.isatty())
    except (AttributeError, ValueError):  # no stderr, or a closed one
        return False


def drawn(progress: bool | None, size: int, messages: bool = False) -> bool:
    """Whether a read of ``size`` bytes (``messages``: messages) draws a bar: ``progress`` True or False says
    so; None (automatic): a large read (:data:`AUTOMATIC_BYTES`, :data:`AUTOMATIC_MESSAGES`) with a place to
    draw it."""
    if progress is not None:
        return bool(progress)
    return size >= (AUTOMATIC_MESSAGES if messages else AUTOMATIC_BYTES) and place_to_draw()


def bar_of_read(
    files: Callable[[], list[str] | None],
    messages: Callable[[], int | None],
    count: Callable[[], int],
    progress: bool | None,
) -> Progress:
    """The bar of a read (:func:`drawn` says whether it is drawn): of the bytes of the files it reads
    (``files()``, None where it reads none), else of its messages where their number is known
    (``messages()``; ``count()``: those taken so far), else of the messages taken, without a total (drawn
    only when ``progress`` is True). Where no bar can be drawn, nothing is looked at.

    >>> bar_of_read(lambda: None, lambda: 10, lambda: 0, None).bar.disable
    True
    """
    if progress is False or (progress is None and not place_to_draw()):
        return CountProgress(None, count, show=False)
    delay = DELAY if progress is None else 0.0
    found = files()
    if found is not None:
        return ReadProgress(found, show=drawn(progress, sum(map(_size_of, found))), delay=delay)
    total = messages()
    if total is not None:
        return CountProgress(total, count, show=drawn(progress, total, messages=True), delay=delay)
    return CountProgress(None, count, show=bool(progress))


_Bar = TypeVar("_Bar", bound="Progress")


class Progress:
    """A bar of ``total`` ``unit`` redrawn every :data:`PROGRESS_TICK` seconds by a thread of its own while
    the work goes on, moved to :meth:`done` (never back); a context manager. At a normal end the bar shows the
    whole total; on an error (or an interrupt) it is closed where it stands. ``show``: True draws it, False
    never, None where there is a place to draw it (:func:`place_to_draw`); it shows after ``delay`` seconds."""

    def __init__(
        self, total: int | None, unit: str, desc: str = "reading", show: bool | None = None, delay: float = 0.0
    ) -> None:
        self.total = total
        self.delay = delay
        draw = place_to_draw() if show is None else show
        kind = bar_class() if draw else std.tqdm
        self.bar = kind(
            total=total,
            desc=desc,
            unit=unit,
            unit_scale=True,
            unit_divisor=1024 if unit == "B" else 1000,
            mininterval=PROGRESS_TICK,
            file=sys.stderr,
            disable=not draw,
            leave=False,
            dynamic_ncols=True,
            delay=delay,
        )
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def done(self) -> int:
        """The work done so far, in the bar's unit."""
        raise NotImplementedError

    def started(self, name: Any) -> None:
        """The read has come to source ``name`` (a bar of files counts those before it as read)."""

    def watched(self, units: list[dict[str, Any]], folder: str) -> list[dict[str, Any]]:
        """Worker units that report their progress to this bar (a bar of files: see
        :meth:`ReadProgress.watched`); as they are here."""
        return units

    def __enter__(self: _Bar) -> _Bar:
        if not self.bar.disable:
            self._thread = threading.Thread(target=self._run, name="cdckit-progress", daemon=True)
            self._thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        if kind is None and not self.bar.disable:  # done to the end
            self.bar.n = self.done() if self.total is None else self.total
            if self._due():
                self.bar.refresh()
        self.bar.close()

    def tick(self) -> None:
        """Move the bar to the work done and redraw it, once its delay is over (the elapsed time and the rate
        move on too)."""
        done = self.done()
        self.bar.n = max(self.bar.n, done if self.total is None else min(done, self.total))
        if self._due():
            self.bar.refresh()

    def _due(self) -> bool:
        return time.time() >= self.bar.start_t + self.delay and self.worth_showing()

    def worth_showing(self) -> bool:
        """Whether the work is large enough for the bar to show (one whose size is known only as it goes, an
        automatic bar of a live topic, says so itself)."""
        return True

    def _run(self) -> None:
        while not self._stop.wait(PROGRESS_TICK):
            self.tick()


class CountProgress(Progress):
    """A bar of ``total`` messages (None: not known) that follows ``count()`` (the messages a read has taken so
    far)."""

    def __init__(
        self,
        total: int | None,
        count: Callable[[], int],
        desc: str = "reading",
        show: bool | None = None,
        delay: float = 0.0,
    ) -> None:
        super().__init__(total, "msg", desc, show, delay)
        self._count = count

    def done(self) -> int:
        return self._count()


class ReadProgress(Progress):
    """The bar of a read of ``files``, in bytes, with a total and an ETA (see the module's words on what moves
    it).

    >>> progress = ReadProgress([__file__], show=False)
    >>> progress.total == os.path.getsize(__file__), progress.bytes_read()
    (True, 0)
    """

    def __init__(self, files: list[str], desc: str = "reading", show: bool | None = None, delay: float = 0.0) -> None:
        self.files = [os.fspath(f) for f in files]
        self.sizes = [_size_of(f) for f in self.files]
        self._real = {os.path.realpath(f): i for i, f in enumerate(self.files)}
        self.reached = 0  # files before this index are read
        self._shared: list[tuple[Any, list[tuple[int, int, float]]]] = []  # workers' slots, what each stands for
        super().__init__(sum(self.sizes), "B", desc, show, delay)

    def started(self, name: Any) -> None:
        """The read has come to file ``name``: those before it are read."""
        index = self._real.get(os.path.realpath(os.fspath(name)))
        if index is not None and index > self.reached:
            self.reached = index

    def sources_seen(self, sources: Any) -> None:
        """The read has come to the last of ``sources`` (a report's ``sources``)."""
        for name in sources:
            self.started(name)

    def watched(self, units: list[dict[str, Any]], folder: str) -> list[dict[str, Any]]:
        """Worker units (:func:`cdckit.workers.shared_units`) that report their progress to this bar: each
        names a slot of a new progress file in ``folder``, where its worker publishes the bytes of its range
        read (:func:`publishing`). As they are when no bar is drawn (nothing is published then)."""
        if self.bar.disable or not units:
            return units
        path = os.path.join(folder, f"progress-{uuid.uuid4().hex}")
        with open(path, "wb") as out:
            out.write(bytes(8 * len(units)))
        with open(path, "r+b") as file:
            slots = memoryview(mmap.mmap(file.fileno(), 0)).cast("q")
        lengths = [_length_of(unit) for unit in units]
        files = [self._real.get(os.path.realpath(unit.get("source", unit["path"]))) for unit in units]
        whole: dict[int, int] = {}
        for index, length in zip(files, lengths):
            if index is not None:
                whole[index] = whole.get(index, 0) + length
        standing = [
            (slot, index, self.sizes[index] / max(1, whole[index]))
            for slot, index in enumerate(files)
            if index is not None
        ]
        self._shared.append((slots, standing))
        return [
            {**unit, "progress": path, "progress_slot": slot, "progress_length": length}
            for slot, (unit, length) in enumerate(zip(units, lengths))
        ]

    def bytes_read(self) -> int:
        """Bytes of the files read so far (never more than the total)."""
        positions = open_positions(self._real)
        self.reached = max([self.reached, *positions])
        found = dict(positions)
        for slots, standing in self._shared:
            by_file: dict[int, float] = {}
            for slot, index, scale in standing:
                by_file[index] = by_file.get(index, 0.0) + slots[slot] * scale
            for index, read in by_file.items():
                found[index] = max(found.get(index, 0), int(read))
        done = sum(self.sizes[: self.reached])
        done += sum(min(read, self.sizes[index]) for index, read in found.items() if index >= self.reached)
        return min(done, sum(self.sizes))

    def done(self) -> int:
        return self.bytes_read()


def _size_of(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def _length_of(unit: dict[str, Any]) -> int:
    """The size of a worker unit's part of its file: bytes ``start`` to ``end`` (rows of a Parquet file), or
    the whole file."""
    if unit.get("whole") or unit.get("end", -1) < 0:
        return _size_of(unit["path"])
    return max(0, unit["end"] - unit["start"])


#: The progress files a worker process has mapped (see :meth:`ReadProgress.watched`), by path.
_MAPPED: dict[str, Any] = {}


@contextlib.contextmanager
def publishing(unit: dict[str, Any]) -> Iterator[None]:
    """Worker: while a unit is decoded, publish how far into its part of the file the worker has read (from
    the position of its open file, every :data:`PROGRESS_TICK` seconds; a Parquet file, read by pyarrow, only
    at the end) in the slot the unit names; at the end, the whole part. Nothing when the unit names no slot
    (no bar is drawn).

    >>> with publishing({"path": __file__}):
    ...     pass
    """
    path = unit.get("progress")
    if path is None:
        yield
        return
    if path not in _MAPPED:
        with open(path, "r+b") as file:
            _MAPPED[path] = memoryview(mmap.mmap(file.fileno(), 0)).cast("q")
    slots, slot, length = _MAPPED[path], unit["progress_slot"], unit["progress_length"]
    stop = threading.Event()
    thread = None
    if unit.get("container") != "parquet" and not str(unit["path"]).endswith(".parquet"):
        real = {os.path.realpath(unit["path"]): 0}
        start = 0 if unit.get("whole") else max(0, unit.get("start", 0))

        def run() -> None:
            while not stop.wait(PROGRESS_TICK):
                position = open_positions(real).get(0)
                if position is not None:
                    slots[slot] = max(slots[slot], min(length, position - start))

        thread = threading.Thread(target=run, name="cdckit-progress", daemon=True)
        thread.start()
    try:
        yield
    finally:
        stop.set()
        if thread is not None:
            thread.join()
    slots[slot] = length


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
