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
from pathlib import Path

import pandas as pd
import pytest

import cdckit
from cdckit import samples
from cdckit.cli import EXIT_CODES, main
from cdckit.dialects import registry

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
    for command in ("detect", "read", "convert", "report", "samples"):
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
    [offset] = expected.attrs["quarantine"]["offset"].tolist()
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
    from cdckit.ordering import table_names

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
    assert "reading" in drawn and "msg" in drawn and "\r" in drawn and TQDM_TIMER.search(drawn)
