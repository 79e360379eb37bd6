"""One table of exit statuses for every command (``wagon.exits``, docs/README.md "Exit
statuses"), driven with real inputs: Ctrl-C is 5 for every command (click said "Aborted!",
exit 1, where replay said 5), a real SIGINT to a running fit is 5 and leaves no model and no
scratch folder, an unreachable target is 3. Bad input (2) is tests/test_bad_inputs.py's, a
full disk (6) tests/test_disk_full.py's, thresholds (4) and a recovered run (5)
tests/test_replay.py's and tests/test_results_mutations.py's."""
from __future__ import annotations

import gzip
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from wagon import exits
from wagon.cli import main

from .servers import write_scenario_file
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


def test_a_fit_interrupted_by_sigint_exits_5_and_leaves_nothing(tmp_path):
    """A real SIGINT while ``wagon fit -`` reads its log from a pipe: 4 MiB written to a pipe
    of 64 KiB return only once fit has read most of them, so the signal comes while fit runs
    (no sleep); the pipe stays open, so fit is still reading."""
    with gzip.open(DATA / "nasa-aug95-morning.log.gz", "rb") as f:
        log = f.read(4 << 20)
    log = log[:log.rfind(b"\n") + 1]
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    p = subprocess.Popen([sys.executable, "-m", "wagon", "fit", "-", "-o", "m.json"],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         cwd=tmp_path, env=env)
    p.stdin.write(log)
    p.stdin.flush()
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=120)
    assert p.returncode == exits.EXIT_INCOMPLETE, err.decode()[-2000:]
    assert err.decode().strip().splitlines() == [
        "Error: interrupted: stopped before the end; no file was written half"], err
    assert sorted(os.listdir(tmp_path)) == []


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
