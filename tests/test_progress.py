"""The progress bar of ``cdckit.read``: when it is drawn, what moves it (worker processes' own reports of how
far they have read), what it counts, which bar a notebook gets, and that it always goes away."""

from __future__ import annotations

import gzip
import io
import sys
import threading
import types
from typing import ClassVar

import pytest
from tqdm import notebook, std

import cdckit
from cdckit import samples
from cdckit.reading import progress as progress_bars
from cdckit.reading import workers
from cdckit.reading.progress import open_positions

SHOP = samples.path("canal/shop")


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


class Recorded(std.tqdm):
    """A text bar that writes nowhere and keeps every position it was drawn at."""

    made: ClassVar[list[Recorded]] = []

    def __init__(self, *args, **kwargs):
        kwargs["file"] = io.StringIO()
        self.drawn: list[int] = []
        self.from_parent: list[bool] = []  # at each redraw: did the calling process have an input file open?
        self.closed = False
        super().__init__(*args, **kwargs)
        Recorded.made.append(self)

    def refresh(self, *args, **kwargs):
        self.drawn.append(self.n)
        return super().refresh(*args, **kwargs)

    def close(self):
        self.closed = True
        return super().close()


@pytest.fixture
def recorded(monkeypatch):
    Recorded.made = []
    monkeypatch.setattr(progress_bars, "bar_class", lambda: Recorded)
    return Recorded.made


def _progress_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "cdckit-progress"]


def _big_capture(path, copies: int) -> int:
    """A JSON Lines capture of ``copies`` times the shop sample (a few MB); its size."""
    data = SHOP.read_bytes()
    path.write_bytes(data * copies)
    return path.stat().st_size


def test_the_bar_follows_what_the_workers_report(tmp_path, monkeypatch, recorded):
    """With worker processes the calling process does not read the file: the bar moves by the bytes each
    worker publishes of its range while it decodes, up to the file's size."""
    if not hasattr(open_positions({}), "get") or not __import__("os").path.isdir("/proc/self/fdinfo"):
        pytest.skip("positions of open files come from /proc/self/fdinfo")
    path = tmp_path / "big.jsonl"
    size = _big_capture(path, 60)
    monkeypatch.setattr(progress_bars, "PROGRESS_TICK", 0.01)  # forked workers inherit it too
    monkeypatch.setattr(workers, "RANGE_BYTES", max(1, size // 40))  # many ranges, each its own report
    real = {__import__("os").path.realpath(path): 0}
    seen_in_parent: list[bool] = []
    tick = progress_bars.ReadProgress.tick

    def watching(self):
        seen_in_parent.append(bool(open_positions(real)))
        tick(self)

    monkeypatch.setattr(progress_bars.ReadProgress, "tick", watching)
    events = cdckit.read(path, workers=2, progress=True)
    assert len(events) == 60 * len(cdckit.read(SHOP))
    (bar,) = recorded
    assert bar.total == size and bar.n == size and bar.closed
    moving = [n for n, parent in zip(bar.drawn, seen_in_parent) if 0 < n < size and not parent]
    assert moving, "the bar moved during the read, while the calling process had the file closed"
    assert bar.drawn == sorted(bar.drawn)  # never back
    assert not _progress_threads()


def test_a_gzip_file_counts_its_compressed_bytes_in_workers(tmp_path, monkeypatch, recorded):
    path = tmp_path / "big.jsonl.gz"
    with gzip.open(path, "wb") as out:
        out.write(SHOP.read_bytes() * 30)
    monkeypatch.setattr(workers, "RANGE_BYTES", 1 << 16)
    events = cdckit.read(path, workers=2, progress=True)
    assert len(events) == 30 * len(cdckit.read(SHOP))
    (bar,) = recorded
    assert bar.total == path.stat().st_size and bar.n == bar.total and bar.closed


def test_worker_reports_of_several_files_add_up_to_their_sizes(tmp_path, monkeypatch):
    """Each worker unit stands for its share of its file: whatever the ranges, a file read whole counts its
    size (a gzip file's decompressed ranges its compressed size)."""
    monkeypatch.setattr(sys, "stderr", FakeTerminal())
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    _big_capture(first, 2)
    _big_capture(second, 3)
    bar = progress_bars.ReadProgress([str(first), str(second)], show=True)
    units = workers.file_units(str(second), "jsonl", "canal", None, False, None, 2, range_bytes=5000)
    units = [*units, workers.file_unit(str(first), None, None, None, 50, len(units))]
    watched = bar.watched(workers.shared_units(units, str(tmp_path)), str(tmp_path))
    assert bar.bytes_read() == 0
    with progress_bars.publishing(watched[0]):
        pass
    assert bar.bytes_read() == watched[0]["end"] - watched[0]["start"]
    for unit in watched[1:]:
        with progress_bars.publishing(unit):
            pass
    assert bar.bytes_read() == bar.total == first.stat().st_size + second.stat().st_size
    bar.bar.close()


def test_a_read_in_the_calling_process_shows_its_whole_total_at_the_end(recorded):
    events = cdckit.read(SHOP, progress=True, workers=1)
    (bar,) = recorded
    assert bar.total == SHOP.stat().st_size and bar.n == bar.total and bar.closed and len(events)


def test_messages_whose_number_is_known_are_counted(recorded):
    lines = SHOP.read_text().splitlines()
    cdckit.read(lines, progress=True)
    (bar,) = recorded
    assert bar.unit == "msg" and bar.total == len(lines) and bar.n == len(lines) and bar.closed


def test_no_bar_with_progress_false_nor_for_a_small_read(monkeypatch):
    terminal = FakeTerminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    cdckit.read(SHOP, progress=False)
    cdckit.read(SHOP)  # automatic: far below AUTOMATIC_BYTES
    cdckit.read(SHOP.read_text().splitlines())
    assert terminal.getvalue() == ""
    cdckit.read(SHOP, progress=True)
    assert "reading" in terminal.getvalue() and "\r" in terminal.getvalue()


def test_automatic_bars_show_for_a_large_read_where_they_can_be_seen(monkeypatch):
    monkeypatch.setattr(progress_bars, "AUTOMATIC_BYTES", SHOP.stat().st_size)
    monkeypatch.setattr(progress_bars, "DELAY", 0.0)
    log = io.StringIO()  # not a terminal (a log file, a pipe, a test's output): nothing drawn
    monkeypatch.setattr(sys, "stderr", log)
    cdckit.read(SHOP)
    assert log.getvalue() == ""
    terminal = FakeTerminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    cdckit.read(SHOP)
    assert "reading" in terminal.getvalue()


def test_an_automatic_bar_waits_a_second_before_it_shows(monkeypatch):
    monkeypatch.setattr(progress_bars, "AUTOMATIC_BYTES", SHOP.stat().st_size)
    terminal = FakeTerminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    cdckit.read(SHOP)  # done well within DELAY
    assert terminal.getvalue() == ""


def test_a_notebook_kernel_gets_the_widget_bar(monkeypatch):
    assert progress_bars.bar_class() is std.tqdm
    shell = type("ZMQInteractiveShell", (), {})()
    monkeypatch.setitem(sys.modules, "ipykernel.zmqshell", types.ModuleType("ipykernel.zmqshell"))
    monkeypatch.setattr(sys.modules["IPython"] if "IPython" in sys.modules else __import__("IPython"),
                        "get_ipython", lambda: shell)
    assert progress_bars.in_kernel() and progress_bars.place_to_draw()
    assert progress_bars.bar_class() is notebook.tqdm  # ipywidgets is installed here
    monkeypatch.setattr(notebook, "IProgress", None)  # without ipywidgets: the text bar
    assert progress_bars.bar_class() is std.tqdm
    monkeypatch.setenv("QT_API", "pyqt5")  # a Qt console is no notebook
    assert not progress_bars.in_kernel()


def test_a_damaged_file_still_closes_the_bar(tmp_path, recorded):
    path = tmp_path / "cut.jsonl.gz"
    path.write_bytes(gzip.compress(SHOP.read_bytes())[:-40])
    events = cdckit.read(path, progress=True)
    assert cdckit.quarantine(events)["reason_code"].eq("damaged_container").any()
    garbage = tmp_path / "garbage.jsonl"
    garbage.write_text("not json\n" * 50)
    cdckit.read(garbage, progress=True, dialect="canal")  # every message quarantined
    with pytest.raises(cdckit.DecodeError):
        cdckit.read(garbage, progress=True, dialect="canal", errors="raise")
    assert len(recorded) == 3 and all(bar.closed for bar in recorded)
    assert recorded[0].n == recorded[0].total and recorded[1].n == recorded[1].total
    assert not _progress_threads()


def test_an_interrupted_read_closes_the_bar(monkeypatch, recorded):
    read_module = sys.modules["cdckit.reading.read_job"]

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt
        yield

    monkeypatch.setattr(read_module, "decode_source", interrupted)
    with pytest.raises(KeyboardInterrupt):
        cdckit.read(SHOP, progress=True, workers=1)
    (bar,) = recorded
    assert bar.closed and bar.n < bar.total and not _progress_threads()


def test_a_chunked_read_stopped_early_takes_its_bar_away(recorded):
    chunks = cdckit.read(SHOP, chunksize=10, progress=True)
    next(chunks)
    assert not recorded[0].closed
    chunks.close()
    assert recorded[0].closed and chunks.report["messages"] > 0


def test_a_read_in_a_notebook_kernel_draws_the_widget_bar(tmp_path, monkeypatch):
    """In a real Jupyter kernel, ``progress=True`` draws tqdm's notebook widget (not text on stderr)."""
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    root = __import__("pathlib").Path(__file__).resolve().parent.parent
    monkeypatch.setenv("IPYTHONDIR", str(root / "tests" / "ipython"))
    monkeypatch.setenv("PYTHONPATH", str(root))
    notebook_ = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell("import cdckit, cdckit.reading.progress\nprint(cdckit.reading.progress.bar_class().__module__)"),
        nbformat.v4.new_code_cell(f"events = cdckit.read({str(SHOP)!r}, progress=True)"),
        nbformat.v4.new_code_cell(f"events = cdckit.read({str(SHOP)!r})"),
    ])
    nbclient.NotebookClient(notebook_, timeout=120, kernel_name="python3",
                            resources={"metadata": {"path": str(tmp_path)}}).execute()
    chosen, forced, automatic = (cell.outputs for cell in notebook_.cells)
    assert chosen[0]["text"].strip() == "tqdm.notebook"
    assert any("application/vnd.jupyter.widget-view+json" in out.get("data", {}) for out in forced)
    assert not any(out.get("name") == "stderr" for out in forced)
    assert automatic == []  # a small read: nothing at all
