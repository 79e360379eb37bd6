"""One table of exit statuses for every command (``wagon.exits``, docs/README.md "Exit
statuses"), driven with real inputs: Ctrl-C is 5 for every command (click said "Aborted!",
exit 1, where replay said 5), a real SIGINT or SIGTERM to a running fit, compare, synth or
replay is 5 and leaves no file and no scratch folder (a replay settles every request), an unreachable target is 3. Bad input (2) is tests/test_bad_inputs.py's, a
full disk (6) tests/test_disk_full.py's, thresholds (4) and a recovered run (5)
tests/test_replay.py's and tests/test_results_mutations.py's."""
from __future__ import annotations

import gzip
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from wagon import exits
from wagon.cli import main
from wagon.formats.results import read_results

from .servers import _Fault, fault_server, write_scenario_file
from .test_bad_inputs import commands

DOCS = Path(__file__).resolve().parent.parent / "docs" / "README.md"
DATA = Path(__file__).resolve().parent / "data"


def test_the_documented_table_is_the_one_commands_use():
    section = DOCS.read_text().split("### Exit statuses", 1)[1].split("\n#", 1)[0]
    documented = {int(m[1]) for m in re.finditer(r"^\| (\d) \|", section, re.M)}
    assert documented == set(exits.EXIT_STATUSES) == set(range(7))


def _command(name: str):
    group = main
    for part in name.split():
        group = group.get_command(None, part)
    return group


@pytest.mark.parametrize("name", commands(main))
def test_ctrl_c_is_5_and_one_line_for_every_command(name, monkeypatch):
    """The command's own code interrupted (its callback raises KeyboardInterrupt, as Python
    does on SIGINT)."""
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt
    cmd = _command(name)
    monkeypatch.setattr(cmd, "callback", interrupted)
    monkeypatch.setattr(cmd, "parse_args", lambda ctx, args: [])   # no arguments needed
    r = CliRunner().invoke(main, name.split())
    lines = r.output.strip().splitlines()
    assert r.exit_code == exits.EXIT_INCOMPLETE and len(lines) == 1, (name, r.output)
    assert lines[0].startswith("Error: interrupted") and "Aborted" not in r.output


INTERRUPTED = "Error: interrupted: stopped before the end; no file was written half"


def _log(size: int) -> bytes:
    """The first ``size`` bytes of the NASA log, whole lines."""
    with gzip.open(DATA / "nasa-aug95-morning.log.gz", "rb") as f:
        log = f.read(size)
    return log[:log.rfind(b"\n") + 1]


def _wagon(args: list[str], cwd: Path, **kwargs) -> subprocess.Popen:
    """``wagon ARGS`` in ``cwd``, its temporary files there too (TMPDIR)."""
    return subprocess.Popen([sys.executable, "-m", "wagon", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, cwd=cwd,
                            env={**os.environ, "TMPDIR": str(cwd)}, **kwargs)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_fit_interrupted_by_a_signal_exits_5_and_leaves_nothing(tmp_path, sig):
    """A real SIGINT or SIGTERM while ``wagon fit -`` reads its log from a pipe: 4 MiB written
    to a pipe of 64 KiB return only once fit has read most of them, so the signal comes while
    fit runs (no sleep); the pipe stays open, so fit is still reading."""
    p = _wagon(["fit", "-", "-o", "m.json"], tmp_path, stdin=subprocess.PIPE)
    p.stdin.write(_log(4 << 20))
    p.stdin.flush()
    p.send_signal(sig)
    out, err = p.communicate(timeout=120)
    assert p.returncode == exits.EXIT_INCOMPLETE, err.decode()[-2000:]
    assert err.decode().strip().splitlines() == [INTERRUPTED], err
    assert sorted(os.listdir(tmp_path)) == []


def test_sigterm_of_compare_reading_a_fifo_and_of_synth_is_5(tmp_path, sample_model):
    """SIGTERM is Ctrl-C for every command (Python's default died silently, status -15):
    ``compare`` reading a log from a FIFO that stays open, ``synth`` once it said it writes;
    each leaves one line and no file."""
    fifo = tmp_path / "log.fifo"
    os.mkfifo(fifo)
    compare = _wagon(["compare", str(fifo), str(DATA / "nasa-aug95-morning.log.gz")], tmp_path)
    with open(fifo, "wb") as w:                 # the open returns once compare opened it too
        w.write(_log(1 << 20))                  # ... and this once compare read most of it
        w.flush()
        compare.send_signal(signal.SIGTERM)
        _, err = compare.communicate(timeout=120)
    assert compare.returncode == exits.EXIT_INCOMPLETE, err.decode()[-2000:]
    assert err.decode().strip().splitlines() == [INTERRUPTED]
    os.unlink(fifo)
    synth = _wagon(["synth", str(sample_model[0]), "--sessions", "10000000", "--speedup", "10",
                    "-o", "s.jsonl"],
                   tmp_path)
    said = synth.stderr.readline().decode()     # "writing about ...": synth is running
    synth.send_signal(signal.SIGTERM)
    _, err = synth.communicate(timeout=120)
    assert synth.returncode == exits.EXIT_INCOMPLETE, said + err.decode()[-2000:]
    # no progress bar off a terminal: click printed its label alone, a line "sessions"
    assert err.decode().strip().splitlines() == [INTERRUPTED]
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("args", [["replay", "S", "--target", "http://127.0.0.1:9/",
                                   "--quiet"],
                                  ["sweep", "S", "--target", "http://127.0.0.1:9/", "--rates",
                                   "1", "--step-time", "2"]])
def test_an_unreachable_target_is_3(tmp_path, args):
    scenario = write_scenario_file(tmp_path / "s.jsonl", [("/a.html", 10, [])], [],
                                   ["lan/http11"], [(0.5 * i, 0, [(0, 0.0)]) for i in range(9)])
    r = CliRunner().invoke(main, [str(scenario) if a == "S" else a for a in args])
    assert r.exit_code == exits.EXIT_UNREACHABLE, r.output
    assert "Connection refused" in r.output


@pytest.mark.parametrize("command", ["replay", "sweep"])
def test_sigterm_of_a_replay_settles_every_request_and_is_5(tmp_path, command):
    """SIGTERM while every request waits on a server that never answers (its loop's handler:
    the run ends, what it measured written): status 5, every request of the scenario one row,
    as the fault server saw them issued or not. A sweep stops with its step (it said 0 and
    went on to print the step's throughput)."""
    scenario = write_scenario_file(tmp_path / "s.jsonl", [("/hang", 10, [])], [],
                                   ["lan/http11"], [(0.0, 0, [(0, 0.0)]) for _ in range(3)]
                                   + [(5.0, 0, [(0, 0.0)])])
    args = (["--quiet", "--results", "r.csv"] if command == "replay" else
            ["--rates", "1", "--step-time", "5"])
    with fault_server() as port:
        replay = _wagon([command, str(scenario), "--target", f"http://127.0.0.1:{port}/",
                         *args], tmp_path)
        while len(_Fault.served) < 3:           # every request read by the server
            assert replay.poll() is None, replay.communicate()
            time.sleep(0.05)
        replay.send_signal(signal.SIGTERM)
        _, err = replay.communicate(timeout=120)
    assert replay.returncode == exits.EXIT_INCOMPLETE, err.decode()[-2000:]
    assert "Traceback" not in err.decode()
    if command == "sweep":
        assert err.decode().strip().splitlines() == [INTERRUPTED]
        return
    rows = read_results(tmp_path / "r.csv")
    assert sorted(rows.error) == ["in_flight"] * 3 and sorted(rows.session) == [0, 1, 2]
