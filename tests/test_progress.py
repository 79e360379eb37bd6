"""Live progress of ``wagon replay``: plain lines when stderr is not a terminal, figures that
agree with the final summary, summed over ``--workers``, none with ``--quiet`` (``--cluster``:
tests/test_cluster.py)."""
from __future__ import annotations

import io
import json
import re
import subprocess
import sys

import pytest

from wagon.replay.progress import Progress, ProgressLine

from .servers import write_scenario_file
from .test_replay import wagon_serve

LINE = re.compile(r"\[\s*([\d.]+) s\] sessions started (\d+) active (\d+) ended (\d+) \| "
                  r"([\d.,]+) ok/s \| requests (\d+) errors (\d+) \| p99 ([\d.,]+) ms")


@pytest.fixture(scope="module")
def scenario(tmp_path_factory):
    """120 sessions over 2.4 s, each two clicks 0.2 s apart; every 10th asks for a missing
    page (a 404: an error)."""
    d = tmp_path_factory.mktemp("progress")
    return write_scenario_file(
        d / "s.jsonl", [("/index.html", 100, []), ("/missing.html", 10, [])], [],
        ["lan/http11"], [(0.02 * i, 0, [(0, 0.2), (1 if i % 10 == 0 else 0, 0.2)])
                         for i in range(120)])


@pytest.fixture(scope="module")
def port(tmp_path_factory):
    """One ``wagon serve --site`` for the module: the replays only read its page."""
    with wagon_serve(tmp_path_factory.mktemp("serve")) as (port, _):
        yield port


def run(tmp_path, port, scenario, *args) -> tuple[list[tuple], dict, str]:
    r = subprocess.run([sys.executable, "-m", "wagon", "replay", str(scenario), "--target",
                        f"http://127.0.0.1:{port}/", "--json", "--fail-on", "errors>50%",
                        "--progress-every", "0.5", *args],
                       cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    lines = [LINE.fullmatch(x) for x in r.stderr.splitlines()]
    return [m.groups() for m in lines if m], json.loads(r.stdout), r.stderr


@pytest.mark.parametrize("workers", [1, 2])
def test_progress_lines_agree_with_the_summary(tmp_path, port, scenario, workers):
    lines, summary, stderr = run(tmp_path, port, scenario, "--workers", str(workers))
    assert "\r" not in stderr and len(lines) >= 4, stderr          # plain lines, every 0.5 s
    elapsed = [float(x[0]) for x in lines]
    assert elapsed == sorted(elapsed) and elapsed[-1] >= 2.4
    assert all(0.3 < b - a < 1.0 for a, b in zip(elapsed[:-2], elapsed[1:-1])), elapsed
    for _, started, active, done, *_ in lines:
        assert int(started) - int(done) == int(active)
    counts = [[int(x[k]) for k in (1, 3, 5, 6)] for x in lines]   # started, done, requests,
    assert all(a <= b for x, y in zip(counts, counts[1:]) for a, b in zip(x, y))    # errors
    _, started, active, done, _, requests, errors, p99 = lines[-1]
    assert int(started) == summary["sessions"]["started"] == 120 and int(active) == 0
    assert int(done) == summary["sessions"]["completed"] + summary["sessions"]["interrupted"]
    assert int(requests) == summary["requests"]["total"] == 240
    assert int(errors) == summary["errors"]["total"] == 12
    assert float(p99.replace(",", "")) == pytest.approx(summary["latency"]["request"]["p99"],
                                                        abs=0.06)
    # ok/s is since the previous line: integrated over the lines it gives the ok requests,
    # within the rounding of the elapsed times shown (0.05 s each end of every interval)
    rates = [float(x[4].replace(",", "")) for x in lines]
    steps = [b - a for a, b in zip([0.0] + elapsed, elapsed)]
    assert sum(r * d for r, d in zip(rates, steps)) == pytest.approx(
        summary["requests"]["ok"], abs=0.1 * sum(rates) + 1)


def test_quiet_shows_nothing(tmp_path, port):
    few = write_scenario_file(tmp_path / "few.jsonl", [("/index.html", 100, [])], [],
                              ["lan/http11"], [(0.0, 0, [(0, 0.0), (0, 0.6)])] * 3)
    lines, summary, stderr = run(tmp_path, port, few, "--quiet", "--progress-every", "0.2")
    assert lines == [] and stderr == "" and summary["requests"]["total"] == 6


def test_on_a_terminal_one_line_is_rewritten():
    out = io.StringIO()
    line = ProgressLine(out, tty=True)
    p = Progress()
    p.on_session_start(0, 0.0, 0.0)
    line.show(1.0, [p.state()])
    p.on_session_end(0, True)
    line.show(2.0, [p.state(), p.state()])                     # two workers' states: summed
    line.close()
    text = out.getvalue()
    assert text.count("\r") == 2 and text.endswith("\n") and text.count("\n") == 1
    assert "sessions started 2 active 0 ended 2" in text and "p99 -" in text
