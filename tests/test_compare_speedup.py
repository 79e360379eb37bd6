"""``wagon compare`` undoes a scenario's ``--speedup``: a scenario synthesized at speedup 10,
and its replay, compared with the same sessions at speedup 1 no longer differ on timings; and
a replay at a speed-up beyond what the machine's exchanges allow says so, as nginx's own log
shows it."""
from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
from click.testing import CliRunner

from wagon.cli import main
from wagon.formats.site import build_site
from wagon.replay import ReplayOptions, replay
from wagon.synth import Generator, SynthOptions, synthesize
from wagon.synth.site import resolve_site

from .servers import free_port, nginx, wait_port
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
    assert not [w for w in s["warnings"] if "--speedup" in w], s["warnings"]   # 10 ms: no word
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


def test_a_speedup_the_exchanges_cannot_keep_is_said_as_nginx_logs_it(tmp_path):
    """At --speedup 100,000 each real 10 µs is a second of the scenario's: the replay says its
    exchanges' p90 times K, and nginx's own clock shows it: a page's object, which the
    scenario asks for as the page arrives (the model has no object delays), logged on the
    page's connection over a second of the scenario's time after it, on average."""
    k = 100_000
    model = hand_model(think=(0.0, 0.5), rate=10.0, clicks_p=0.8)
    build_site(resolve_site(model, pages=10).spec, tmp_path / "site")
    scenario = tmp_path / "s.jsonl"
    with open(scenario, "w") as f:
        synthesize(Generator(model, SynthOptions(sessions=20, seed=3, pages=10, speedup=k,
                                                 classes="lan/http11")), f)
    with nginx(tmp_path / "site", tmp_path / "ng",
               log_format="$connection $msec $request_uri") as server:
        s = replay(str(scenario), ReplayOptions(target=server.url, emulation=False))
        lines = [line.split() for line in server.log_lines(s["requests"]["ok"])]
    p90 = s["latency"]["request_all"]["p90"]
    said = [w for w in s["warnings"] if w.startswith(f"at --speedup {k} ")]
    assert said and f"({p90:.2f} ms) is {k * p90 / 1e3:.1f} s of the scenario's time" in said[0]
    assert s["requests"]["ok"] == len(lines) > 20
    lines.sort(key=lambda x: (int(x[0]), float(x[1])))
    after_page = [(float(b[1]) - float(a[1])) * k for a, b in zip(lines, lines[1:])
                  if a[0] == b[0] and a[2].startswith("/pages/") and b[2].startswith("/objects/")]
    # $msec ticks in milliseconds (100 s of the scenario's here): a gap is 0 or ticks, and
    # on average, over the ticks' phase, what it was
    assert len(after_page) >= 5 and np.mean(after_page) >= 1.0, after_page
