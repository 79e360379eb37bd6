"""``wagon compare`` undoes a scenario's ``--speedup``: a scenario synthesized at speedup 10,
and its replay, compared with the same sessions at speedup 1 no longer differ on timings."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest
from click.testing import CliRunner

from wagon.cli import main
from wagon.replay import ReplayOptions, replay
from wagon.synth import Generator, SynthOptions, synthesize

from .servers import free_port, wait_port
from .test_synth import hand_model

TIMINGS = ("session rate (/s)", "session inter-arrival (s)", "think time (s)")


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """The same 150 sessions at speedup 1 and 10; the fast one replayed (~3.5 s: 1.5 s of
    arrivals, then the last session's clicks)."""
    d = tmp_path_factory.mktemp("speedup")
    model = hand_model(think=(0.0, 0.5), rate=10.0)
    paths = {}
    for k in (1, 10):
        paths[k] = d / f"s{k}.jsonl"
        with open(paths[k], "w") as f:
            synthesize(Generator(model, SynthOptions(sessions=150, seed=5, pages=30,
                                                     speedup=k, classes="lan/http11")), f)
    port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "wagon", "serve", "--scenario",
                               str(paths[10]), "--port", str(port), "--max-time", "60"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_port(port)
        s = replay(str(paths[10]), ReplayOptions(target=f"http://127.0.0.1:{port}/",
                                                 results=str(d / "r.csv"), emulation=False))
    finally:
        server.terminate()
        server.wait(10)
    assert s["errors"]["total"] == 0 and s["complete"]
    return paths[1], paths[10], d / "r.csv"


def rows(a, b) -> dict[str, dict]:
    r = CliRunner().invoke(main, ["compare", str(a), str(b), "--json"])
    assert r.exit_code == 0, r.output
    return {row["row"]: row for row in json.loads(r.output)["rows"]}


def test_a_sped_up_scenario_matches_itself_at_speedup_one(runs):
    """Same sessions: small KS distances (B's times are written to the millisecond, 10 ms once
    multiplied, and A's floored to that: D ~0.06) and the same rate (before: D ~1 and a rate
    10 × A's)."""
    slow, fast, _ = runs
    got = rows(slow, fast)
    assert all(got[k]["verdict"] != "differs" for k in TIMINGS), got
    assert got["session inter-arrival (s)"]["effect"] < 0.1
    assert got["think time (s)"]["effect"] < 0.1
    assert got["session rate (/s)"]["b"] == pytest.approx(got["session rate (/s)"]["a"])


def test_a_replay_at_speedup_ten_does_not_differ_on_timings(runs):
    """The replay's own times, ×10: the start lag and response times (~1 ms, 1 % of a think
    time once multiplied) leave small KS distances."""
    slow, _, results = runs
    got = rows(slow, results)
    assert all(got[k]["verdict"] != "differs" for k in TIMINGS), got
    assert got["session inter-arrival (s)"]["effect"] < 0.1
    assert got["think time (s)"]["effect"] < 0.1
    assert got["session rate (/s)"]["b"] == pytest.approx(got["session rate (/s)"]["a"],
                                                          rel=0.02)
