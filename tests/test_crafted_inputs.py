"""Issue 36's crafted files and endless inputs, through the real commands: each gave a
traceback or never ended; each is now one line naming the file (and the line and field),
exit status 2. The oracle is the documented limits (docs/formats.md, "Limits"; "Input files
and their bounds"), not the readers."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from click.testing import CliRunner

from wagon import source
from wagon.cli import main
from wagon.logs.parse import LogError

from .test_results_mutations import played  # noqa: F401 (a fixture: a real replay's files)

NAMES = {"requests": "r.csv", "pages": "r.pages.csv", "run": "r.run.json"}


def _results(d, played, **changed) -> None:  # noqa: F811
    """The played files in ``d``, ``changed`` ones (name → text) in their place."""
    for what, name in NAMES.items():
        (d / name).write_text(changed.get(what, played[what]), newline="")


def _one_line_exit_2(r, *said: str) -> None:
    lines = r.output.strip().splitlines()
    assert r.exit_code == 2 and len(lines) == 1 and "Traceback" not in r.output, r.output
    assert all(s in lines[0] for s in said), (said, r.output)


def _in(d, args: list[str]):
    with pytest.MonkeyPatch.context() as m:
        m.chdir(d)
        return CliRunner().invoke(main, args)


def test_report_of_a_time_beyond_any_run(tmp_path, played):  # noqa: F811
    """last_byte = 99999999999999999999: an IndexError in the report's plot."""
    rows = played["requests"].split("\r\n")
    row = rows[1].split(",")
    row[rows[0].split(",").index("last_byte")] = "99999999999999999999"
    _results(tmp_path, played, requests="\r\n".join([rows[0], ",".join(row), *rows[2:]]))
    _one_line_exit_2(_in(tmp_path, ["report", "r.csv", "-o", "x.html"]), "r.csv:2: last_byte")
    assert not (tmp_path / "x.html").exists()


def test_report_of_a_run_file_whose_generator_lags_are_empty(tmp_path, played):  # noqa: F811
    """summary.generator.start_lag = {}: a KeyError in the report's summary table."""
    doc = json.loads(played["run"])
    doc["summary"]["generator"]["start_lag"] = {}
    _results(tmp_path, played, run=json.dumps(doc))
    _one_line_exit_2(_in(tmp_path, ["report", "r.csv", "-o", "x.html"]), "r.run.json",
                     "summary.generator.start_lag.p50")


@pytest.mark.parametrize("order", [0, 1])
def test_compare_of_a_run_file_sped_up_2_to_the_70(tmp_path, played, order):  # noqa: F811
    """speedup = 2**70: a ValueError (an array of 10^21 seconds) in compare; the limit is
    wagon synth's --speedup range [0.001, 10^6]."""
    doc = json.loads(played["run"])
    doc["speedup"] = 2**70
    _results(tmp_path, played, run=json.dumps(doc))
    (tmp_path / "a.csv").write_text(played["requests"], newline="")
    args = ["compare", "a.csv", "r.csv"] if order else ["compare", "r.csv", "a.csv"]
    _one_line_exit_2(_in(tmp_path, args), "r.run.json", "speedup")


@pytest.mark.parametrize("line", ["drain = 1e308", "duration = 1e20", "pause = 1e300"])
def test_experiment_dry_run_of_a_recipe_beyond_the_run_limit(tmp_path, line):
    """drain = 1e308: an OverflowError in the dry run's schedule; a 10^20-s experiment was
    accepted."""
    (tmp_path / "x.toml").write_text(f'[experiment]\nname = "x"\n{line}\n')
    _one_line_exit_2(_in(tmp_path, ["experiment", "x.toml", "--dry-run"]), "x.toml",
                     "experiment." + line.split()[0], "at most")


#: every command reading a file, the file under test as F (the output paths are harmless)
READERS = [["synth", "F", "-o", "s.jsonl"], ["serve", "--scenario", "F", "--max-time", "1"],
           ["serve", "--model", "F", "--max-time", "1"],
           ["replay", "F", "--target", "http://127.0.0.1:9/"], ["export", "F", "--to", "clf", "-o", "x.log"],
           ["site", "build", "out", "--scenario", "F"], ["report", "F", "-o", "x.html"],
           ["compare", "F", "F"], ["hurst", "F"], ["hurst", "--counts", "F"],
           ["fit", "F", "-o", "m.json"], ["experiment", "F", "--dry-run"],
           ["advise", "keepalive", "--model", "F"], ["sweep", "F", "--target",
                                                     "http://127.0.0.1:9/"]]


@pytest.mark.parametrize("args", READERS, ids=lambda a: " ".join(a[:2]))
def test_a_device_is_refused_in_one_line(tmp_path, args):
    """/dev/zero as any input: read without end (memory grew, or the command hung)."""
    r = _in(tmp_path, [a if a != "F" else "/dev/zero" for a in args])
    _one_line_exit_2(r, "/dev/zero: a character device")


@pytest.mark.parametrize("args", [a for a in READERS if a[0] not in ("fit", "compare")
                                  and a[:2] != ["hurst", "F"]],
                         ids=lambda a: " ".join(a[:2]))
def test_a_fifo_is_refused_where_a_file_is_read(tmp_path, args):
    """A FIFO with no writer where a wagon file is read: open() blocked for ever. (Logs may
    come down a pipe: fit, compare and hurst read them as streams.)"""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    r = _in(tmp_path, [a if a != "F" else "fifo" for a in args])
    _one_line_exit_2(r, "fifo: a pipe, not a regular file")


@pytest.mark.parametrize("args", [["fit", "fifo", "-o", "m.json"], ["compare", "fifo", "fifo"],
                                  ["hurst", "fifo"]], ids=lambda a: a[0])
def test_a_log_fifo_no_writer_opens_is_refused_after_the_wait(tmp_path, monkeypatch, args):
    """A FIFO as a log that no writer ever opens: open() waited for one for ever."""
    os.mkfifo(tmp_path / "fifo")
    monkeypatch.setattr(source, "FIFO_WAIT_S", 0.3)
    _one_line_exit_2(_in(tmp_path, args), "fifo: a pipe no writer opened in 0.3 s")


def test_a_log_fifo_gives_its_bytes_whoever_opened_it_first(tmp_path):
    """Bytes already in the FIFO when it is opened (read while its writer is looked for)
    come first, then the rest its writer sends, then its end when the writer closes."""
    fifo = str(tmp_path / "fifo")
    os.mkfifo(fifo)
    writer = os.open(fifo, os.O_RDWR)              # a writer that never blocks (Linux)
    os.write(writer, b"first\n" * 1000)
    stream = source.open_stream(fifo, LogError)
    os.write(writer, b"last\n")
    os.close(writer)
    assert stream.read() == b"first\n" * 1000 + b"last\n"


def test_a_log_from_a_pipe_is_read_and_a_device_on_stdin_refused(tmp_path):
    """``wagon fit -``: a pipe is a log, read as lines of at most 1 MiB (a longer one is a
    counted skip, its 3 MiB never held whole); /dev/zero on standard input is refused at
    once, where it was read for ever."""
    with open("/dev/zero", "rb") as zero:
        r = subprocess.run([sys.executable, "-m", "wagon", "fit", "-", "-o", "m.json"],
                           stdin=zero, capture_output=True, text=True, timeout=120,
                           cwd=tmp_path)
    assert r.returncode == 2 and r.stderr.strip().splitlines() == [
        "Error: -: standard input is a device, not a log file or a pipe"], r.stderr
    line = b'1.2.3.4 - - [01/Aug/1995:00:00:01 -0400] "GET / HTTP/1.0" 200 100\n'
    r = subprocess.run([sys.executable, "-m", "wagon", "fit", "-", "-o", "m.json"],
                       input=b"\0" * (3 << 20) + b"\n" + line, capture_output=True,
                       timeout=120, cwd=tmp_path)
    assert r.returncode == 0 and b"skipped -:1 (line too long)" in r.stderr, r.stderr
    assert (tmp_path / "m.json").exists() and b"Traceback" not in r.stderr
