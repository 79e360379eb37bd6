"""The loop closes: a known model (WAGON's generator) → wagon synth → wagon replay against a real
server → wagon fit of that server's own log → the model again.

The observers: the known model (its true parameters), the scenario (what each user was told to
do), and the access log nginx, or ``wagon serve``, wrote itself. A small version of
bench/closed_loop.py, which runs the full one."""
from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from wagon.fitting import fit
from wagon.formats.scenario import read_scenario
from wagon.formats.site import build_site
from wagon.logs.sessions import SessionRules
from wagon.modeling import FitOptions, fit_logs
from wagon.modeling.model import observations
from wagon.replay import ReplayOptions, replay
from wagon.synth import Generator, SynthOptions, synthesize
from wagon.synth.reference import WAGON_TRUTH, wagon_model
from wagon.synth.site import resolve_site

from .servers import free_port, nginx, wait_port

SPEEDUP = 400.0
SESSIONS = 300
TMIN, TMAX = 0.5, 600.0     # the session rules, in modeled seconds


@pytest.fixture(scope="module")
def loop_scenario(tmp_path_factory):
    d = tmp_path_factory.mktemp("loop")
    model = wagon_model(0.5, TMIN, TMAX, {"firefox": 6, "chrome": 3, "safari": 1})
    with open(d / "s.jsonl", "w") as f:
        synthesize(Generator(model, SynthOptions(sessions=SESSIONS, seed=7, pages=60, zipf=1.0,
                                                 classes="lan/http11", speedup=SPEEDUP)), f)
    build_site(resolve_site(model, pages=60, zipf_exponent=1.0).spec, d / "site")
    return d


def _refit(log) -> object:
    """``wagon fit --speedup`` of a server log of the replay: in the scenario's seconds."""
    return fit_logs([str(log)], FitOptions(rules=SessionRules(tmin=TMIN, tmax=TMAX),
                                           speedup=SPEEDUP))


def _truth(d) -> dict:
    """What the scenario told its users to do (the independent side)."""
    sessions = list(read_scenario(d / "s.jsonl").sessions())
    clicks = np.array([len(s.clicks) for s in sessions])
    starts = np.array([s.start for s in sessions])
    return {"sessions": len(sessions), "clicks": clicks,
            "rate": (len(starts) - 1) / (starts[-1] - starts[0]) / SPEEDUP}


def _check_sessions(fitted, truth: dict) -> None:
    s = fitted.sessions
    assert fitted.stats.formats[next(iter(fitted.stats.formats))].startswith("wagon")
    assert s.counts["sessions"] == pytest.approx(truth["sessions"], rel=0.05)
    assert s.samples["clicks"].mean() == pytest.approx(truth["clicks"].mean(), rel=0.05)
    starts = np.sort(s.session_start)
    rate = (len(starts) - 1) / (starts[-1] - starts[0])
    assert rate == pytest.approx(truth["rate"], rel=0.05)
    assert s.agents and set(s.agents) <= {"firefox", "chrome", "safari"}
    observed = observations(s)
    for var in ("clicks", "think"):            # the generator's families, fitted alone
        law, params = WAGON_TRUTH[var]
        ci = fit(s.samples[var], candidates=[law], observation=observed[var],
                 name=var).best.conf_int(alpha=0.001)
        for p, true in params.items():
            assert ci[p][0] <= true <= ci[p][1], (var, p, ci[p])


@pytest.fixture(scope="module")
def served_logs(loop_scenario, tmp_path_factory):
    """The scenario played against nginx and against ``wagon serve`` at the same time (the one
    from this process, the other by a ``wagon replay`` of its own): {server: (summary, the
    server's own log)}."""
    d, out = loop_scenario, tmp_path_factory.mktemp("served")
    port = free_port()
    serve = subprocess.Popen([sys.executable, "-m", "wagon", "serve", "--scenario",
                              str(d / "s.jsonl"), "--port", str(port), "--access-log",
                              str(out / "serve.log"), "--max-time", "120"], cwd=out,
                             stderr=subprocess.DEVNULL)
    try:
        with nginx(d / "site", d / "ng") as ng:
            wait_port(port)
            other = subprocess.Popen([sys.executable, "-m", "wagon", "replay", str(d / "s.jsonl"),
                                      "--target", f"http://127.0.0.1:{port}/", "--quiet",
                                      "--json", "--results", str(out / "r.csv")], cwd=out,
                                     stdout=subprocess.PIPE, text=True)
            summary = replay(str(d / "s.jsonl"), ReplayOptions(target=ng.url))
            served = json.loads(other.communicate(timeout=120)[0])
            assert other.returncode == 0, served
    finally:
        serve.terminate()
        serve.wait(10)
    return {"nginx": (summary, ng.wagon_log), "wagon serve": (served, out / "serve.log")}


@pytest.mark.parametrize("server", ["nginx", "wagon serve"])
def test_the_servers_log_gives_back_the_sessions(loop_scenario, served_logs, server):
    summary, log = served_logs[server]
    assert summary["errors"]["total"] == 0
    _check_sessions(_refit(log), _truth(loop_scenario))


def _wagon_layout_log(path, starts: np.ndarray, thinks: list[np.ndarray], tick: float,
                      base: float = 1_700_000_000.0) -> None:
    """A log in the `wagon` layout: client i clicks at starts[i] + cumsum(thinks[i]), each
    request ending one ``tick`` after it began; times are multiples of ``tick``."""
    lines = []
    for i, (s, th) in enumerate(zip(starts, thinks)):
        for k, t in enumerate(s + np.cumsum(th)):
            begin = base + round(t / tick) * tick
            lines.append((begin, f'10.1.{i // 250}.{i % 250} - - [{begin + tick:.3f}] '
                                 f'"GET /p{k % 7}.html HTTP/1.1" 200 900 "-" "Mozilla/5.0 (X11; '
                                 f'Linux) Firefox/133.0" {tick:.3f} {i} {k + 1}'))
    path.write_text("\n".join(line for _, line in sorted(lines)) + "\n")


@pytest.mark.untimed                # two fits of written logs, nothing timed
def test_fit_speedup_reads_a_fast_log_in_the_scenario_seconds(tmp_path):
    """The same sessions logged at modeled speed (times on a 10 ms grid) and 10 times faster
    (on a 1 ms grid): wagon fit --speedup 10 of the fast log gives the model of the other."""
    rng = np.random.default_rng(8)
    starts = np.cumsum(rng.exponential(2.0, 400))
    thinks = [np.r_[0.0, rng.lognormal(3.0, 1.1, rng.integers(0, 6))] for _ in starts]
    _wagon_layout_log(tmp_path / "slow.log", starts, thinks, 0.010)
    _wagon_layout_log(tmp_path / "fast.log", starts / 10, [t / 10 for t in thinks], 0.001)
    slow = fit_logs([str(tmp_path / "slow.log")])
    fast = fit_logs([str(tmp_path / "fast.log")], FitOptions(speedup=10.0))
    assert fast.sessions.resolution == pytest.approx(slow.sessions.resolution) == 0.01
    for name in ("interarrival", "clicks", "think"):
        a, b = slow.fits[name].best, fast.fits[name].best
        assert a.name == b.name, name
        assert b.params == pytest.approx(a.params, rel=1e-6), name
    assert fast.model.data["provenance"]["options"]["speedup"] == 10.0
