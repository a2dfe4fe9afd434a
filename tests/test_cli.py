"""The ``cdckit`` command line, run in-process through ``cdckit.cli.main`` (one subprocess test of the script)."""

from __future__ import annotations

import io
import json
import os
import re
import runpy
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pandas as pd
import pytest
from tqdm import tqdm

import cdckit
from cdckit import cli, samples
from cdckit.analysis.filters import select
from cdckit.cli import EXIT_CODES, main
from cdckit.cli import exit_codes as cli_exit_codes
from cdckit.cli import reading as cli_reading
from cdckit.dialects import registry
from cdckit.reading import progress as progress_bars

SHOP = "canal/shop"


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def bad_capture(tmp_path: Path) -> Path:
    """The canal shop sample with one broken line inserted as message 3 (line 4)."""
    lines = samples.raw(SHOP).splitlines()
    lines.insert(3, '{"data": [ this is not json')
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def debezium_line(table: str, i: int) -> str:
    return json.dumps({"op": "c", "after": {"id": i, "v": f"value {i}"},
                       "source": {"connector": "mysql", "db": "d", "table": table, "ts_ms": 1_000 * i}})


# ---------------------------------------------------------------- help, version, entry points


def test_help_of_every_command_has_a_description_and_examples(capsys):
    code, out, _ = run(capsys, "--help")
    assert code == 0
    assert "examples:" in out and "exit codes:" in out
    for exit_code in EXIT_CODES:
        assert f"\n  {exit_code:<3}" in out, exit_code
    for command in ("detect", "read", "convert", "report", "order", "transactions", "state", "scd2", "schema", "compare",
                    "reconcile", "samples"):
        assert command in out
        code, sub, _ = run(capsys, command, "--help")
        assert code == 0, command
        assert f"usage: cdckit {command}" in sub and "examples:" in sub, command
        assert f"cdckit {command}" in sub.split("examples:", 1)[1], command


def test_version(capsys):
    code, out, _ = run(capsys, "--version")
    assert code == 0 and out.strip() == f"cdckit {cdckit.__version__}"


def test_installed_console_script_runs():
    script = shutil.which("cdckit", path=os.path.dirname(sys.executable)) or shutil.which("cdckit")
    assert script, "the cdckit console script is not installed"
    done = subprocess.run([script, "--help"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: cdckit") and "examples:" in done.stdout


def test_python_dash_m_cdckit(monkeypatch, capsys):
    monkeypatch.setattr(sys, "argv", ["cdckit", "--version"])
    monkeypatch.delitem(sys.modules, "cdckit.__main__", raising=False)  # as in a fresh `python -m cdckit`
    # pytest's assertion rewriter claims cdckit/__main__.py when that file is named on the command line,
    # and it cannot hand runpy the module's code: leave it out of the import machinery for this call
    monkeypatch.setattr(sys, "meta_path", [f for f in sys.meta_path if type(f).__name__ != "AssertionRewritingHook"])
    with pytest.raises(SystemExit) as stop:
        runpy.run_module("cdckit", run_name="__main__")
    assert stop.value.code == 0
    assert capsys.readouterr().out.strip() == f"cdckit {cdckit.__version__}"


def test_usage_errors_exit_2(capsys, tmp_path):
    assert run(capsys, )[0] == 2  # no command
    assert run(capsys, "read")[0] == 2  # no PATH
    assert run(capsys, "read", samples.path(SHOP), "--head", "-1")[0] == 2
    assert run(capsys, "read", samples.path(SHOP), "--columns", "op,nonsense")[0] == 2
    code, _, err = run(capsys, "convert", samples.path(SHOP), "-o", tmp_path / "out.xyz")
    assert code == 2 and "--to" in err
    code, _, err = run(capsys, "convert", samples.path(SHOP), "-o", tmp_path / "o.jsonl", "--to", "nosuch")
    assert code == 2 and "canal" in err and "parquet" in err
    code, _, err = run(capsys, "convert", samples.path(SHOP), "-o", tmp_path / "o.jsonl", "--to", "debezium",
                       "--layout", "csv")  # the exporter refuses the layout: still a usage error
    assert code == 2 and "layout" in err and "Traceback" not in err
    assert run(capsys, "convert", samples.path(SHOP), "-o", tmp_path / "o.parquet", "--layout", "kcat")[0] == 2
    assert not any(tmp_path.iterdir())


# ---------------------------------------------------------------- detect


@pytest.mark.parametrize("name", ["canal/shop", "maxwell/shop", "debezium/examples", "universe/shop",
                                  "datahub_tuple/shop.parquet", "oceanbase_extend/shop"])
def test_detect_names_each_samples_dialect(capsys, name):
    path = samples.path(name)
    expected = cdckit.detect(path)
    assert expected.dialect == path.parent.name  # the folder a sample lives in is its dialect
    code, out, err = run(capsys, "detect", path)
    assert code == 0 and err == ""
    [line] = out.splitlines()
    shown_path, dialect, confidence, evidence = line.split(maxsplit=3)
    assert (shown_path, dialect) == (str(path), path.parent.name)
    assert float(confidence) == pytest.approx(expected.confidence, abs=0.006)  # shown to 2 places
    assert expected.evidence[0] in evidence


def test_detect_expands_directories_and_globs(capsys):
    folder = samples.DATA / "maxwell"
    files = sorted(str(p) for p in folder.iterdir() if p.is_file())
    code, out, _ = run(capsys, "detect", folder, str(samples.DATA / "canal" / "*.jsonl"))
    assert code == 0
    shown = [line.split()[0] for line in out.splitlines()]
    canal = sorted(str(p) for p in (samples.DATA / "canal").glob("*.jsonl"))
    assert shown == files + canal
    assert {line.split()[1] for line in out.splitlines()} == {"maxwell", "canal"}


def test_detect_fails_with_the_reason_and_still_lists_the_rest(capsys, tmp_path):
    junk = tmp_path / "junk.txt"
    junk.write_text("hello world\n")
    good = samples.path(SHOP)
    code, out, err = run(capsys, "detect", junk, tmp_path / "missing.jsonl", good)
    assert code == 3
    assert out.split()[:2] == [str(good), "canal"]
    assert f"{junk}: no dialect recognises" in err
    assert "missing.jsonl" in err
    assert "Traceback" not in err


# ---------------------------------------------------------------- read


def test_read_shows_the_first_events_and_a_summary(capsys):
    path = samples.path(SHOP)
    events = cdckit.read(path)
    report = events.attrs["report"]
    code, out, err = run(capsys, "read", path, "--head", "7")
    assert code == 0
    header, *rows = out.splitlines()
    assert header.split() == ["op", "table", "key", "seq", "event_time", "before", "after"]
    assert len(rows) == 7
    first = events.iloc[0]
    assert rows[0].split()[:3] == [first["op"], f"{first['database']}.{first['table']}", first["key"]]
    assert first["after"][:30] in rows[0] and first["after"] not in rows[0]  # the long image is cut
    assert f"{report['messages']} messages -> {report['events']} events, 0 quarantined" in err
    assert "canal" in err


def test_read_columns_and_width(capsys):
    path = samples.path("lindorm/shop")
    events = cdckit.read(path)
    code, out, _ = run(capsys, "read", path, "--head", "4", "--columns", "offset,op", "--columns", "after",
                       "--width", "12")
    assert code == 0
    header, *rows = out.splitlines()
    assert header.split() == ["offset", "op", "after"]
    assert [int(r.split()[0]) for r in rows] == events["offset"].head(4).tolist()
    assert [r.split()[1] for r in rows] == events["op"].head(4).tolist()
    assert all(len(r.split(maxsplit=2)[2]) <= 12 for r in rows)


def test_read_head_zero_prints_only_the_summary(capsys):
    code, out, err = run(capsys, "read", samples.path("maxwell/shop"), "--head", "0")
    assert code == 0 and out == ""
    assert len(cdckit.read(samples.path("maxwell/shop"))) > 0 and " events" in err


def test_read_a_bad_line_exits_1_naming_file_and_offset(capsys, bad_capture):
    expected = cdckit.read(bad_capture)
    [offset] = cdckit.quarantine(expected)["offset"].tolist()
    code, out, err = run(capsys, "read", bad_capture, "--head", "5")
    assert code == 1
    assert len(out.splitlines()) == 6
    assert "1 quarantined" in err
    assert f"{bad_capture}, message {offset}" in err and offset == 3


def test_read_errors_raise_exits_3_naming_file_offset_and_reason(capsys, bad_capture):
    with pytest.raises(cdckit.DecodeError) as raised:
        cdckit.read(bad_capture, errors="raise")
    code, _, err = run(capsys, "read", bad_capture, "--errors", "raise")
    assert code == 3
    assert err.startswith("cdckit: error: ")
    assert f"{bad_capture}, message {raised.value.offset}" in err and raised.value.reason in err
    assert "Traceback" not in err


def test_missing_file_exits_3(capsys, tmp_path):
    code, out, err = run(capsys, "read", tmp_path / "nope.jsonl")
    assert code == 3 and out == ""
    assert err.startswith("cdckit: error: ") and "nope.jsonl" in err and "Traceback" not in err


def test_unknown_dialect_exits_3_with_the_names(capsys):
    code, _, err = run(capsys, "read", samples.path(SHOP), "--dialect", "nosuchdialect")
    assert code == 3
    assert "nosuchdialect" in err
    assert all(name in err for name in registry.names())


def test_debug_shows_the_traceback(capsys, tmp_path):
    missing = tmp_path / "nope.jsonl"
    for argv in (["--debug", "read", missing], ["read", missing, "--debug"]):
        code, _, err = run(capsys, *argv)
        assert code == 3 and "Traceback" in err and "cdckit: error:" in err


def test_terminal_control_characters_from_a_capture_are_shown_escaped(capsys, tmp_path):
    path = tmp_path / "esc.jsonl"
    path.write_text(debezium_line("t\x1b[2J\x07\nx", 1) + "\n", encoding="utf-8")
    assert cdckit.read(path)["table"].iloc[0] == "t\x1b[2J\x07\nx"
    code, out, _ = run(capsys, "read", path, "--dialect", "debezium", "--columns", "table")
    assert code == 0
    assert "\x1b" not in out and "\x07" not in out
    assert out.splitlines() == ["table", "d.t\\x1b[2J\\x07\\nx"]


# ---------------------------------------------------------------- convert


@pytest.mark.parametrize("fmt", ["parquet", "csv", "jsonl"])
def test_convert_to_a_file_format(capsys, tmp_path, fmt):
    source = samples.path(SHOP)
    events = cdckit.read(source)
    out = tmp_path / f"events.{fmt}"
    code, stdout, _ = run(capsys, "convert", source, "-o", out)
    assert code == 0
    assert out.exists() and str(out) in stdout and "wrote" in stdout
    back = {"parquet": pd.read_parquet, "csv": pd.read_csv, "jsonl": lambda p: pd.read_json(p, lines=True)}[fmt](out)
    assert len(back) == len(events)
    assert back["op"].value_counts().to_dict() == events["op"].value_counts().to_dict()


@pytest.mark.parametrize("fmt", ["parquet", "csv", "jsonl"])
def test_exported_events_are_read_and_converted_again(capsys, tmp_path, fmt):
    """cdckit's own output is an input too: no dialect detection, nothing quarantined, every event kept."""
    source = samples.path(SHOP)
    events = cdckit.read(source)
    exported = tmp_path / f"events.{fmt}"
    assert run(capsys, "convert", source, "-o", exported)[0] == 0
    code, stdout, stderr = run(capsys, "read", exported, "--head", "3")
    assert code == 0 and "canonical events" in stderr and "0 quarantined" in stderr
    assert len(stdout.splitlines()) == 4  # header and three events
    code, stdout, _ = run(capsys, "detect", exported)
    assert code == 0 and "canonical events written by cdckit" in stdout
    out = tmp_path / "as_maxwell.jsonl"
    code, stdout, stderr = run(capsys, "convert", exported, "-o", out, "--to", "maxwell")
    assert code == 0, stderr
    back = cdckit.read(out)
    assert back["op"].value_counts().to_dict() == events["op"].value_counts().to_dict()
    assert back["key"].tolist() == events["key"].tolist()
    report = tmp_path / "report.html"
    assert run(capsys, "report", exported, "-o", report)[0] == 0
    assert "canonical events written by cdckit" in report.read_text(encoding="utf-8")


def test_convert_to_another_dialect(capsys, tmp_path):
    source = samples.path(SHOP)
    events = cdckit.read(source)
    out = tmp_path / "as_debezium.jsonl"
    code, stdout, _ = run(capsys, "convert", source, "-o", out, "--to", "debezium")
    assert code == 0 and "wrote" in stdout
    back = cdckit.read(out)
    assert cdckit.detect(out).dialect == "debezium"
    assert back.attrs["report"]["quarantined"] == 0
    assert len(back) == len(events)
    assert back["op"].value_counts().to_dict() == events["op"].value_counts().to_dict()


def test_convert_partitioned_by_table(capsys, tmp_path):
    from cdckit.export import read_events
    from cdckit.frame import table_names

    source = samples.path(SHOP)
    events = cdckit.read(source)
    out = tmp_path / "events"
    code, stdout, _ = run(capsys, "convert", source, "-o", out, "--to", "csv", "--partition-by", "table")
    assert code == 0 and "wrote" in stdout
    folders = sorted(p.name for p in out.iterdir())
    assert folders == sorted(f"table_name={name}" for name in set(table_names(events)))
    assert len(read_events(out)) == len(events)


def test_convert_keeps_an_existing_output_unless_forced(capsys, tmp_path):
    out = tmp_path / "events.parquet"
    out.write_bytes(b"precious")
    code, stdout, err = run(capsys, "convert", samples.path(SHOP), "-o", out)
    assert code == 4 and stdout == ""
    assert "--force" in err and str(out) in err
    assert out.read_bytes() == b"precious"
    code, _, _ = run(capsys, "convert", samples.path(SHOP), "-o", out, "--force")
    assert code == 0
    assert len(pd.read_parquet(out)) == len(cdckit.read(samples.path(SHOP)))


def test_convert_with_quarantined_messages_writes_and_exits_1(capsys, tmp_path, bad_capture):
    out = tmp_path / "events.parquet"
    code, stdout, err = run(capsys, "convert", bad_capture, "-o", out)
    assert code == 1
    assert "1 quarantined" in err and f"{bad_capture}, message 3" in err
    assert len(pd.read_parquet(out)) == len(cdckit.read(bad_capture))


def test_convert_with_spark(capsys, tmp_path, spark):
    source = samples.path("maxwell/examples")
    events = cdckit.read(source)
    out = tmp_path / "events.parquet"
    code, stdout, err = run(capsys, "convert", source, "-o", out, "--engine", "spark")
    assert code == 0, err
    assert "wrote" in stdout
    back = pd.read_parquet(out)
    assert len(back) == len(events)
    assert sorted(back["op"]) == sorted(events["op"])
    assert spark.range(1).count() == 1  # the shared session was not stopped


def test_spark_without_java_exits_5_saying_what_to_install(capsys, tmp_path, monkeypatch):
    from pyspark.sql import SparkSession

    monkeypatch.setattr(SparkSession, "getActiveSession", staticmethod(lambda: None))
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "no-java-here"))
    code, _, err = run(capsys, "convert", samples.path(SHOP), "-o", tmp_path / "e.parquet", "--engine", "spark")
    assert code == 5
    assert "Java" in err and "install" in err and "Traceback" not in err


# ---------------------------------------------------------------- report


def test_report_writes_html_and_refuses_to_overwrite(capsys, tmp_path):
    out = tmp_path / "report.html"
    code, stdout, _ = run(capsys, "report", samples.path(SHOP), "-o", out)
    assert code == 0
    assert out.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert str(out) in stdout
    before = out.read_bytes()
    assert run(capsys, "report", samples.path(SHOP), "-o", out)[0] == 4
    assert out.read_bytes() == before
    assert run(capsys, "report", samples.path(SHOP), "-o", out, "--force")[0] == 0


def test_report_escapes_values_from_the_capture(capsys, tmp_path):
    capture = tmp_path / "evil.jsonl"
    script, img = "<script>alert(1)</script>", "<img src=x onerror=alert(1)>"
    lines = [json.dumps({"op": "c", "after": {"id": i, "note": img},
                         "source": {"connector": "mysql", "db": "d", "table": script, "ts_ms": 1_000 * i}})
             for i in range(3)]
    capture.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert cdckit.read(capture)["table"].iloc[0] == script
    out = tmp_path / "report.html"
    assert run(capsys, "report", capture, "-o", out)[0] == 0
    page = out.read_text(encoding="utf-8")
    assert script not in page and img not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page


# ---------------------------------------------------------------- samples


def test_samples_lists_every_sample_with_dialect_and_size(capsys):
    code, out, _ = run(capsys, "samples")
    assert code == 0
    lines = out.splitlines()
    assert [line.split()[0] for line in lines] == samples.list()
    units = {"B": 1, "kB": 1024, "MB": 1024**2}
    for line in lines:
        name, dialect, size = line.split()
        assert dialect == name.split("/")[0]
        number = size.rstrip("kMB")
        actual = (samples.DATA / name).stat().st_size
        assert float(number) * units[size[len(number):]] == pytest.approx(actual, rel=0.01)


def test_samples_path_prints_a_path_read_can_use(capsys):
    code, out, _ = run(capsys, "samples", "--path", SHOP)
    assert code == 0
    path = Path(out.strip())
    assert path.exists() and path.parts[-2:] == ("canal", "shop.jsonl")
    assert run(capsys, "read", path, "--head", "1")[0] == 0
    code, out, err = run(capsys, "samples", "--path", "no/such")
    assert code == 3 and out == "" and "no/such" in err


# ---------------------------------------------------------------- progress bars


TQDM_TIMER = re.compile(r"\[\d\d:\d\d")  # tqdm's "[00:01<..." elapsed time


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_bars_only_on_a_terminal(capsys, monkeypatch):
    argv = ["read", str(samples.path(SHOP)), "--head", "1"]
    code, _, err = run(capsys, *argv)
    assert code == 0
    assert "\r" not in err and "msg/s" not in err and "reading" not in err and not TQDM_TIMER.search(err)
    assert len(err.splitlines()) == 1  # the summary alone (the sample's path holds "it/s": cdck-it/s-amples)
    terminal = FakeTerminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    assert main(argv) == 0
    drawn = terminal.getvalue()
    total = tqdm.format_sizeof(samples.path(SHOP).stat().st_size, divisor=1024)
    assert "reading" in drawn and f"/{total}" in drawn and "\r" in drawn and TQDM_TIMER.search(drawn)


def test_the_read_progress_moves_by_bytes_inside_a_file(tmp_path, monkeypatch):
    """The bar counts bytes of the input files: the files before the open one whole, and the open file's
    position, so it moves while one long chunk is decoded."""
    if not os.path.isdir("/proc/self/fdinfo"):
        pytest.skip("positions of open files come from /proc/self/fdinfo")
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    first.write_bytes(b"x" * 1000)
    second.write_bytes(b"y" * 5000)
    monkeypatch.setattr(sys, "stderr", FakeTerminal())
    with cli.ReadProgress([str(first), str(second)]) as progress:
        assert progress.total == 6000 and progress.bytes_read() == 0
        with open(second, "rb", buffering=0) as reading:
            reading.read(1200)  # the first file is read, the second partly
            progress.tick()
            assert progress.bar.n == 1000 + reading.tell()
        progress.tick()
        assert progress.bar.n == 1000 + 1200  # the bar never goes back


def test_the_read_progress_redraws_by_itself_on_a_terminal(monkeypatch):
    ticked = threading.Event()
    monkeypatch.setattr(progress_bars, "PROGRESS_TICK", 0.01)
    monkeypatch.setattr(cli.ReadProgress, "tick", lambda self: ticked.set())
    monkeypatch.setattr(sys, "stderr", FakeTerminal())
    with cli.ReadProgress([str(samples.path(SHOP))]):
        assert ticked.wait(30)  # the thread redraws while the reader (here: nobody) works
    ticked.clear()
    monkeypatch.setattr(sys, "stderr", io.StringIO())  # not a terminal: no bar, no thread
    with cli.ReadProgress([str(samples.path(SHOP))]) as progress:
        assert progress.bar.disable and progress._thread is None


# ---------------------------------------------------------------- several paths, filters


def test_several_paths_are_read_as_one_capture(capsys):
    files = sorted((samples.DATA / "canal").glob("*.jsonl"))
    expected = cdckit.read(files)
    assert len(expected) == sum(len(cdckit.read(f)) for f in files)
    code, out, err = run(capsys, "read", *files, "--head", "1000", "--columns", "source,offset", "--width", "0")
    assert code == 0
    shown = [tuple(line.split()) for line in out.splitlines()[1:]]
    assert shown == list(zip(expected["source"], expected["offset"].astype(str)))
    report = expected.attrs["report"]
    assert f"{files[0]} and {len(files) - 1} more: {report['messages']} messages -> {report['events']} events" in err
    code, again, _ = run(capsys, "read", files[0], *files[1:], *files, "--head", "1000", "--columns", "source,offset",
                         "--width", "0")
    assert again == out  # a file named twice is read once


def test_read_filters_by_table_op_key_and_time(capsys):
    path = samples.path(SHOP)
    events = cdckit.read(path)
    code, out, err = run(capsys, "read", path, "--table", "customers", "--key", "3", "--columns", "table,key,op")
    assert code == 0
    rows = [line.split() for line in out.splitlines()[1:]]
    expected = events[(events["table"] == "customers") & (events["key"] == "[3]")]
    assert rows == [["shop.customers", "[3]", op] for op in expected["op"]]
    assert f"{len(expected)} events chosen by the filters" in err
    assert "[13]" in set(events["key"]) and "[30]" in set(events["key"])  # there, and not matched
    code, out, _ = run(capsys, "read", path, "--key", "3", "--key", "13", "--op", "update,delete",
                       "--columns", "key,op", "--head", "1000")
    rows = [tuple(line.split()) for line in out.splitlines()[1:]]
    chosen = events[events["key"].isin(["[3]", "[13]"]) & events["op"].isin(["update", "delete"])]
    assert rows == list(zip(chosen["key"], chosen["op"]))
    middle = events["event_time"].sort_values().iloc[len(events) // 2]
    code, out, _ = run(capsys, "read", path, "--since", middle.strftime("%Y-%m-%dT%H:%M:%S.%f"), "--until",
                       (middle + pd.Timedelta(minutes=1)).tz_convert("Etc/GMT-2").isoformat(),
                       "--columns", "offset", "--head", "1000")
    inside = events[(events["event_time"] >= middle) & (events["event_time"] < middle + pd.Timedelta(minutes=1))]
    assert [int(line) for line in out.splitlines()[1:]] == inside["offset"].tolist() and len(inside) > 1


def test_a_composite_key_by_commas_or_json(capsys):
    path = samples.path(SHOP)
    events = cdckit.read(path)
    key = events.loc[events["table"] == "order_items", "key"].iloc[0]
    first, second = json.loads(key)
    expected = (events["key"] == key).sum()
    for spec in (f"{first},{second}", json.dumps([first, second])):
        code, out, _ = run(capsys, "read", path, "--key", spec, "--columns", "key", "--head", "1000")
        assert code == 0 and out.splitlines()[1:] == [key] * expected, spec


def test_an_unknown_table_is_a_usage_error_naming_the_tables(capsys):
    code, out, err = run(capsys, "read", samples.path(SHOP), "--table", "nosuch")
    assert code == 2 and out == ""
    assert "--table" in err and "nosuch" in err and "shop.customers, shop.order_items" in err and "['" not in err


def test_filters_apply_to_what_convert_and_report_write(capsys, tmp_path):
    path = samples.path(SHOP)
    events = cdckit.read(path)
    out = tmp_path / "deletes.parquet"
    assert run(capsys, "convert", path, "-o", out, "--op", "delete", "--table", "shop.order_items")[0] == 0
    back = pd.read_parquet(out)
    expected = events[(events["op"] == "delete") & (events["table"] == "order_items")]
    assert len(back) == len(expected) > 0 and set(back["op"]) == {"delete"}
    report = tmp_path / "r.html"
    assert run(capsys, "report", path, "-o", report, "--key", "3")[0] == 0
    assert f"{(events['key'] == '[3]').sum()} events from" in report.read_text(encoding="utf-8")


# ---------------------------------------------------------------- every argument checked before decoding


@pytest.fixture
def no_decoding(monkeypatch):
    """Any decoding fails the test: the CLI's reader and the reader of exported events."""
    def refuse(*args, **kwargs):
        raise AssertionError("decoding started")

    monkeypatch.setattr(cli_reading, "read", refuse)
    monkeypatch.setattr(cli_reading, "exported_events", refuse)
    monkeypatch.setattr(cdckit, "read", refuse)


CHECKED = {  # argv after the input path, the exit code, text the one-line message holds
    "bad op": (["read", "--op", "upsert"], 2, "--op upsert: unknown op"),
    "bad op on state": (["state", "--op", "inserts"], 2, "did you mean insert"),
    "bad key": (["order", "--key", "[3,"], 2, "--key [3,"),
    "bad since": (["scd2", "--since", "yesterday"], 2, "--since yesterday: not an ISO time"),
    "bad until": (["report", "-o", "{tmp}/r.html", "--until", "2024-13-40"], 2, "--until"),
    "unknown dialect": (["read", "--dialect", "canall"], 3, "canal"),
    "unknown dialect on convert": (["convert", "-o", "{tmp}/e.parquet", "--dialect", "debezum"], 3, "debezium"),
    "unknown suffix": (["convert", "-o", "{tmp}/e.xyz"], 2, "pass --to"),
    "unknown format": (["state", "-o", "{tmp}/state", "--to", "xlsx"], 2, "--to 'xlsx' is not a format"),
    "state suffix": (["scd2", "-o", "{tmp}/state.xyz"], 2, "pass --to"),
    "output exists": (["convert", "-o", "{tmp}/exists.parquet"], 4, "--force"),
    "report exists": (["report", "-o", "{tmp}/exists.parquet"], 4, "--force"),
    "state exists": (["state", "-o", "{tmp}/exists.parquet"], 4, "--force"),
    "missing input": (["read", "{tmp}/missing.jsonl"], 3, "missing.jsonl"),
    "missing among several": (["order", "{tmp}/nothing/*.jsonl"], 3, "no files match"),
    "spark with filters": (["convert", "-o", "{tmp}/e.parquet", "--engine", "spark", "--op", "insert"], 2,
                           "--engine pandas"),
    "reconcile snapshot suffix": (["reconcile", "{tmp}/snap.txt", "--table", "customers"], 2, "Parquet or CSV"),
    "reconcile snapshot missing": (["reconcile", "{tmp}/snap.csv", "--table", "customers"], 3, "snap.csv"),
}


@pytest.mark.parametrize("case", list(CHECKED))
def test_every_argument_is_checked_before_decoding(capsys, tmp_path, no_decoding, case, monkeypatch):
    argv, expected, text = CHECKED[case]
    if argv[0] in ("compare", "reconcile"):
        monkeypatch.setattr(cdckit, argv[0], lambda *a, **k: pytest.fail("compared"), raising=False)
    (tmp_path / "exists.parquet").write_bytes(b"precious")
    argv = [a.format(tmp=tmp_path) for a in argv]
    command, *rest = argv
    code, out, err = run(capsys, command, samples.path(SHOP), *rest)
    assert code == expected, err
    assert out == "" and len(err.strip().splitlines()) == 1 and err.startswith("cdckit: error: "), err
    assert text in err and "Traceback" not in err
    assert (tmp_path / "exists.parquet").read_bytes() == b"precious"


def test_the_second_capture_of_compare_is_checked_before_decoding(capsys, tmp_path, no_decoding, monkeypatch):
    monkeypatch.setattr(cdckit, "compare", lambda *a, **k: pytest.fail("compared"), raising=False)
    code, _, err = run(capsys, "compare", samples.path(SHOP), tmp_path / "missing.jsonl")
    assert code == 3 and "missing.jsonl" in err


# ---------------------------------------------------------------- order, state, scd2


def test_order_lists_the_findings_and_exits_1_on_warnings(capsys, tmp_path):
    lines = samples.raw(SHOP).splitlines()
    capture = tmp_path / "redelivered.jsonl"
    capture.write_text("\n".join(lines + [lines[5]]) + "\n", encoding="utf-8")
    report = cdckit.order_report(cdckit.read(capture))
    assert len(report["redeliveries"]) == 1
    code, out, _ = run(capsys, "order", capture, "--width", "0")
    assert code == 1
    assert out.startswith(repr(report).splitlines()[0])
    assert "redeliveries (warning, 1 row):" in out and report.findings["redeliveries"].meaning in out
    assert f"{capture}" in out.split("redeliveries (warning", 1)[1]  # its rows follow
    assert "lag (seconds" in out
    clean = cdckit.order_report(cdckit.read(samples.path(SHOP)))
    assert clean.problems() == 0
    again = tmp_path / "again.jsonl"  # the last update written again later: the same change just after it
    last = json.loads(lines[-1])
    again.write_text("\n".join(lines + [json.dumps(dict(last, id=last["id"] + 1000, es=last["es"] + 1))]) + "\n",
                     encoding="utf-8")
    found = cdckit.order_report(cdckit.read(again))
    assert {f.severity for f in found.findings.values() if len(f) and f.name != "lag"} == {"info"}
    assert run(capsys, "order", again)[0] == 0  # info findings alone are no problem
    code, out, _ = run(capsys, "order", capture, "--table", "order_items")
    assert code == 0 and "redeliveries" in out and "redeliveries (" not in out  # the redelivery is a customer's


def test_state_prints_each_tables_final_rows(capsys):
    path = samples.path(SHOP)
    states = cdckit.materialize(cdckit.read(path))
    code, out, _ = run(capsys, "state", path, "--head", "1000", "--width", "0")
    assert code == 0
    blocks = out.split("\n\n")
    assert [b.splitlines()[0] for b in blocks] == [f"{name}: {len(frame)} rows" for name, frame in states.items()]
    customers = states["shop.customers"]
    header, *rows = blocks[0].splitlines()[1:]
    assert header.split() == list(customers.columns)
    assert [r.split()[0] for r in rows] == [str(i) for i in customers["id"]]
    code, out, _ = run(capsys, "state", path, "--table", "customers", "--head", "2")
    assert out.splitlines()[0] == f"shop.customers: {len(customers)} rows" and len(out.splitlines()) == 5
    assert f"and {len(customers) - 2} more" in out


@pytest.mark.parametrize("command", ["state", "scd2"])
@pytest.mark.parametrize("fmt", ["parquet", "csv", "jsonl"])
def test_state_and_scd2_write_a_folder_of_tables(capsys, tmp_path, command, fmt):
    from cdckit.export import write_scd2, write_state

    path = samples.path(SHOP)
    events = cdckit.read(path)
    tables = cdckit.materialize(events) if command == "state" else cdckit.scd2(events)
    expected = (write_state if command == "state" else write_scd2)(tables, tmp_path / "lib", fmt)
    out = tmp_path / ("out" if fmt == "parquet" else f"out.{fmt}")  # no suffix: parquet
    argv = [command, path, "-o", out] + (["--to", fmt] if fmt == "jsonl" else [])
    code, stdout, _ = run(capsys, *argv)
    assert code == 0 and "wrote" in stdout and str(out) in stdout
    assert sorted(p.name for p in out.iterdir()) == sorted(p.name for p in expected.files)
    for file in expected.files:
        assert (out / file.name).read_bytes() == file.read_bytes()
    assert run(capsys, *argv)[0] == 4
    assert run(capsys, *argv, "--force")[0] == 0


def test_scd2_prints_every_version(capsys):
    path = samples.path(SHOP)
    versions = cdckit.scd2(cdckit.read(path))["shop.customers"]
    code, out, _ = run(capsys, "scd2", path, "--table", "customers", "--key", "3")
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == f"shop.customers: {(versions['id'] == 3).sum()} versions"
    assert lines[1].split()[-5:] == ["valid_from", "valid_to", "is_current", "op", "seq"]


# ---------------------------------------------------------------- schema, compare, reconcile


def test_schema_shows_columns_and_their_history(capsys):
    path = samples.path("debezium")
    history = cdckit.schema_history(cdckit.read(path))
    code, out, _ = run(capsys, "schema", path, "--width", "0")
    assert code == 0
    assert "changes:" in out
    for table in history["table"].unique():
        assert f"\n{table}: " in f"\n{out}"
    assert len(out.split("changes:", 1)[1].strip().splitlines()) == len(history) + 1
    current = cdckit.table_schema(cdckit.read(path))
    customers = current[current["table"] == "inventory.customers"]
    assert f"inventory.customers: {len(customers)} columns, key id" in out
    assert "balance" in out and "decimal(10,2)" in out


def test_compare_exits_0_when_alike_and_1_when_not(capsys, tmp_path):
    path = samples.path(SHOP)
    code, out, _ = run(capsys, "compare", path, path)
    assert code == 0 and out.strip() == str(cdckit.compare(cdckit.read(path), cdckit.read(path))).strip()
    lines = samples.raw(SHOP).splitlines()
    fewer = tmp_path / "fewer.jsonl"
    fewer.write_text("\n".join(lines[:-5]) + "\n", encoding="utf-8")
    code, out, _ = run(capsys, "compare", path, fewer)
    assert code == 1 and out.strip() == str(cdckit.compare(cdckit.read(path), cdckit.read(fewer))).strip()
    assert run(capsys, "compare", path, fewer, "--key", "999999")[0] == 0  # no event of that key on either side


def test_reconcile_exits_0_when_alike_and_1_when_not(capsys, tmp_path):
    path = samples.path(SHOP)
    customers = cdckit.materialize(cdckit.read(path))["shop.customers"]
    snapshot = tmp_path / "customers.parquet"
    customers.to_parquet(snapshot)
    code, out, err = run(capsys, "reconcile", path, snapshot, "--table", "customers")
    assert code == 0, err
    customers.iloc[1:].to_parquet(snapshot)
    code, out, _ = run(capsys, "reconcile", path, snapshot, "--table", "customers", "--key", "id")
    assert code == 1 and out.strip()


# ---------------------------------------------------------------- samples --root, CLI words


def test_samples_root_is_the_folder_of_every_sample(capsys):
    code, out, _ = run(capsys, "samples", "--root")
    assert code == 0
    root = Path(out.strip())
    assert root.is_dir() and all((root / name).is_file() for name in samples.list())
    code, out, _ = run(capsys, "read", root / "canal" / "shop.jsonl", "--head", "0")
    assert code == 0


def test_messages_speak_cli_not_python(capsys, tmp_path):
    code, _, err = run(capsys, "convert", samples.path(SHOP), "-o", tmp_path / "o.jsonl", "--to", "debezium",
                       "--layout", "csv")
    assert code == 2 and "--layout csv does not fit" in err and "layout=" not in err and "'csv'" not in err
    code, _, err = run(capsys, "samples", "--path", "no/such")
    assert code == 3 and "cdckit samples lists them" in err and "list()" not in err
    python_isms = re.compile(r"\b\w+=(True|False|None|['\"])|\(\)|\bpass \w+=")
    library = [
        "out.parquet exists; pass overwrite=True to replace it (CLI: --force)",
        "cannot tell the format of x.y from its suffix; pass format= (one of parquet, csv, jsonl)",
        "the input fits canal and maxwell equally well; pass dialect= to choose",
        "1 replay problems were not written (see states.problems)",
        "cannot stop with errors='raise' here",
    ]
    for message in library:
        said = cli.cli_words(message)
        assert not python_isms.search(said), said
    assert cli.cli_words(library[0]) == "out.parquet exists; pass --force to replace it"
    assert "pass --dialect NAME to choose" in cli.cli_words(library[2])
    assert "--errors raise" in cli.cli_words(library[4])
    assert cli_exit_codes.explain(FileExistsError(library[0]))[0] == 4


class FakeResult:
    """What cdckit.compare and cdckit.reconcile return, as far as the CLI uses it."""

    def __init__(self, ok: bool) -> None:
        self.ok = ok
        self.summary = pd.DataFrame({"what": ["missing"], "rows": [0 if ok else 2]})

    def frames(self) -> dict[str, pd.DataFrame]:
        return {"summary": self.summary}

    def __str__(self) -> str:
        return f"fake result: {'no differences' if self.ok else '2 differences'}"


@pytest.mark.parametrize("ok", [True, False])
def test_compare_wiring_filters_both_sides(capsys, monkeypatch, tmp_path, ok):
    """The CLI gives compare both captures, filtered alike, and exits by ``ok``."""
    given = []
    monkeypatch.setattr(cdckit, "compare", lambda a, b: given.append((a, b)) or FakeResult(ok), raising=False)
    path = samples.path(SHOP)
    other = tmp_path / "other.jsonl"
    other.write_text("\n".join(samples.raw(SHOP).splitlines()[:100]) + "\n", encoding="utf-8")
    code, out, err = run(capsys, "compare", path, other, "--table", "order_items", "--op", "insert")
    assert code == (0 if ok else 1)
    assert out.strip() == str(FakeResult(ok))
    [(a, b)] = given
    for side, source in ((a, path), (b, other)):
        expected = select(cdckit.read(source), table="order_items", op="insert")
        assert side.events["offset"].tolist() == expected["offset"].tolist() and len(side.events) > 0
        assert side.report == cdckit.read(source).attrs["report"]
    assert err.count("events chosen by the filters") == 2


@pytest.mark.parametrize("ok", [True, False])
def test_reconcile_wiring_replays_the_table(capsys, monkeypatch, tmp_path, ok):
    """The CLI gives reconcile the replayed state, the snapshot, the table and the key."""
    given = []
    monkeypatch.setattr(cdckit, "reconcile", lambda state, snapshot, table=None, key=None:
                        given.append((state, snapshot, table, key)) or FakeResult(ok), raising=False)
    snapshot = tmp_path / "snap.csv"
    snapshot.write_text("id\n1\n", encoding="utf-8")
    path = samples.path(SHOP)
    code, out, _ = run(capsys, "reconcile", path, snapshot, "--table", "customers", "--key", "id, name")
    assert code == (0 if ok else 1) and out.strip() == str(FakeResult(ok))
    [(state, snap, table, key)] = given
    expected = cdckit.materialize(cdckit.read(path))
    assert list(state) == ["shop.customers"] and state["shop.customers"].equals(expected["shop.customers"])
    assert (snap, table, key) == (str(snapshot), "shop.customers", ["id", "name"])


def test_the_command_line_does_not_import_spark():
    """Only ``convert --engine spark`` imports pyspark (cdckit.spark.convert); reading and --help do not."""
    code = ("import sys; from cdckit.cli import main; from cdckit import samples; "
            "assert main(['read', str(samples.path('canal/shop')), '--head', '1']) == 0; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pyspark', 'py4j') "
            "or m == 'cdckit.spark.convert'))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(Path(cdckit.__file__).parent.parent)})
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[]"


# ---------------------------------------------------------------- issue 25: what the commands say


def _big_capture(tmp_path: Path, count: int = 30_000) -> Path:
    path = tmp_path / "big.jsonl"
    path.write_text("\n".join(debezium_line("t", i) for i in range(count)) + "\n", encoding="utf-8")
    return path


def test_read_head_reports_the_number_the_filters_chose(capsys):
    events = cdckit.read(samples.path(SHOP))
    chosen = int((events["table"] == "customers").sum())
    code, out, err = run(capsys, "read", samples.path(SHOP), "--table", "customers", "--head", "2")
    assert code == 0 and len(out.splitlines()) == 3
    assert f"{chosen:,} events chosen by the filters (--head 2 shows the first 2)" in err


def test_read_head_stops_reading_once_it_has_the_events_and_says_so(capsys, tmp_path):
    path = _big_capture(tmp_path)
    code, out, err = run(capsys, "read", path, "--head", "1")
    assert code == 0 and len(out.splitlines()) == 2
    messages = int(re.search(r": ([\d,]+) messages", err).group(1).replace(",", ""))
    assert messages < 30_000 and "the read stopped early" in err and "messages read so far" in err
    code, _, err = run(capsys, "read", path, "--head", "0")  # no events to show: the whole input
    assert "30,000 messages" in err and "stopped" not in err
    code, _, err = run(capsys, "read", samples.path(SHOP), "--head", "1")  # all read before the first chunk
    assert "320 messages" in err and "stopped" not in err


def test_read_with_a_row_filter_and_head_stops_too(capsys, tmp_path):
    code, out, err = run(capsys, "read", _big_capture(tmp_path), "--op", "insert", "--head", "3")
    assert len(out.splitlines()) == 4 and "the read stopped early" in err
    assert "events chosen by the filters in the messages read" in err


def test_scd2_of_a_capture_without_key_columns_is_an_error_saying_what_to_do(capsys, tmp_path):
    path = tmp_path / "keyless.txt"
    path.write_text("BEGIN 7\ntable shop.customers: INSERT: id[integer]:1 name[text]:'a'\nCOMMIT 7\n")
    code, out, err = run(capsys, "scd2", path, "--dialect", "pg_test_decoding")
    assert code == cli_exit_codes.EXIT_INPUT and "(no versions)" not in out
    assert "shop.customers has no key columns" in err and "Traceback" not in err
    assert "cdckit keys FILE proposes its key columns; give them with --keys shop.customers=COL" in err


def test_report_says_it_wrote_a_report_of_the_events(capsys, tmp_path):
    out = tmp_path / "r.html"
    code, stdout, _ = run(capsys, "report", samples.path(SHOP), "-o", out)
    assert code == 0 and f"wrote the report of 320 events to {out}" in stdout and "rows" not in stdout


def test_read_head_with_a_row_filter_counts_every_chosen_event(capsys):
    inserts = int((cdckit.read(samples.path(SHOP))["op"] == "insert").sum())
    code, out, err = run(capsys, "read", samples.path(SHOP), "--op", "insert", "--head", "2")
    assert len(out.splitlines()) == 3 and f"{inserts:,} events chosen by the filters (--head 2" in err
