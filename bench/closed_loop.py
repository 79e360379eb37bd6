"""The loop closes: WAGON's generator → wagon synth → wagon replay against a real server →
wagon fit of that server's own log → the model again, within its intervals.

For each server (nginx logging the `wagon` layout: millisecond end times and request times;
``wagon serve --access-log``):

1. the scenario: ``--sessions`` sessions of ``wagon.synth.reference.wagon_model`` (Poisson
   sessions, clicks IG(5, 3), think lognormal(3, 1.1) kept inside [Tmin, Tmax], Zipf pages),
   times divided by ``--speedup``, every user a client of its own (LAN class: no emulated
   delay, so the server's times are the scenario's);
2. the replay, every request in the server's log;
3. ``wagon fit --speedup k`` of the log: its times multiplied by k, so rules, laws and grid
   are in the scenario's seconds;
4. the table: each parameter's true value, its refit and 95 % interval (of the chosen law, or
   of the true family fitted alone when another law was chosen), whether the interval holds
   it; sessions, mean clicks and session rate against the scenario's (within 5 %); and
   ``wagon compare --speedup k`` of the scenario against the server's log on the session rows.

    python bench/closed_loop.py [--sessions 5000] [--speedup 50] [--server nginx serve]
"""
from __future__ import annotations

import argparse
import math
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from wagon.analysis.compare import compare  # noqa: E402
from wagon.analysis.workload import load_workload  # noqa: E402
from wagon.fitting import fit  # noqa: E402
from wagon.formats.scenario import read_scenario  # noqa: E402
from wagon.formats.site import build_site  # noqa: E402
from wagon.logs.sessions import SessionRules  # noqa: E402
from wagon.modeling import FitOptions, fit_logs  # noqa: E402
from wagon.modeling.model import observations  # noqa: E402
from wagon.replay import ReplayOptions, replay  # noqa: E402
from wagon.synth import Generator, SynthOptions, synthesize  # noqa: E402
from wagon.synth.reference import WAGON_TRUTH, wagon_model  # noqa: E402
from wagon.synth.site import resolve_site  # noqa: E402
from tests.servers import free_port, nginx, wait_port  # noqa: E402

RATE, TMIN, TMAX = 0.5, 0.5, 600.0           # modeled sessions/s; session rules (s)
SESSION_ROWS = ("session rate (/s)", "session inter-arrival (s)", "clicks per session",
                "think time (s)", "Zipf slope of page popularity")


def truth() -> dict[str, tuple[str, dict]]:
    return {"interarrival": ("exponential", {"scale": 1.0 / RATE}), **WAGON_TRUTH}


def parameter_rows(fitted) -> list[dict]:
    """True value, refit and 95 % interval of every parameter of the generator's laws."""
    rows = []
    obs = observations(fitted.sessions)
    for var, (law, params) in truth().items():
        report = fitted.fits[var]
        chosen = report.best.name if report.best else None
        cand = report.best
        if chosen != law:                         # the true family, fitted alone
            cand = fit(fitted.sessions.samples[var], candidates=[law], observation=obs[var],
                       name=var).best
        ci = cand.conf_int() if cand is not None else {}
        for p, true in params.items():
            est = cand.params[p] if cand else math.nan
            lo, hi = ci.get(p) or (math.nan, math.nan)
            rows.append({"variable": var, "law": law, "chosen": chosen, "param": p,
                         "true": true, "refit": est, "lo": lo, "hi": hi,
                         "inside": bool(lo <= true <= hi)})
    return rows


def session_rows(fitted, scenario: Path) -> list[tuple[str, float, float]]:
    """Sessions, mean clicks and session rate: the scenario's (in its modeled seconds) and
    those the fit of the server's log found."""
    sc = read_scenario(scenario)
    sessions = list(sc.sessions())
    starts = np.array([s.start for s in sessions]) * sc.speedup
    logged = np.sort(fitted.sessions.session_start)
    return [("sessions", len(sessions), fitted.sessions.counts["sessions"]),
            ("mean clicks", float(np.mean([len(s.clicks) for s in sessions])),
             float(fitted.sessions.samples["clicks"].mean())),
            ("session rate (/s)", (len(starts) - 1) / (starts[-1] - starts[0]),
             (len(logged) - 1) / (logged[-1] - logged[0]))]


def run_server(kind: str, d: Path, scenario: Path):
    """Replay ``scenario`` against ``kind``; returns (summary, the server's log)."""
    if kind == "nginx":
        with nginx(d / "site", d / "ng") as server:
            return replay(str(scenario), ReplayOptions(target=server.url)), server.wagon_log
    port, log = free_port(), d / "serve.log"
    proc = subprocess.Popen([sys.executable, "-m", "wagon", "serve", "--scenario", str(scenario),
                             "--port", str(port), "--access-log", str(log), "--max-time",
                             "3600"], stderr=subprocess.DEVNULL)
    try:
        wait_port(port)
        return replay(str(scenario), ReplayOptions(target=f"http://127.0.0.1:{port}/")), log
    finally:
        proc.terminate()
        proc.wait(10)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sessions", type=int, default=5000)
    ap.add_argument("--speedup", type=float, default=50.0)
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--server", nargs="+", default=["nginx", "serve"])
    a = ap.parse_args()
    k = a.speedup
    d = Path(tempfile.mkdtemp(prefix="wagon-loop-"))
    model = wagon_model(RATE, TMIN, TMAX, {"firefox": 6, "chrome": 3, "safari": 1})
    scenario = d / "scenario.jsonl"
    with open(scenario, "w") as f:
        synthesize(Generator(model, SynthOptions(sessions=a.sessions, seed=a.seed, pages=200,
                                                 zipf=1.0, classes="lan/http11", speedup=k)), f)
    build_site(resolve_site(model, pages=200, zipf_exponent=1.0).spec, d / "site")
    print(f"{a.sessions:,} sessions of WAGON's generator, speedup {k:g}, in {d}")
    for kind in a.server:
        began = time.monotonic()
        summary, log = run_server(kind, d, scenario)
        played = time.monotonic() - began
        fitted = fit_logs([str(log)], FitOptions(rules=SessionRules(tmin=TMIN, tmax=TMAX),
                                                 speedup=k))
        print(f"\n== {kind}: {summary['requests']['total']:,} requests, errors "
              f"{summary['errors']['total']}, replay {played:.0f} s; log layout "
              f"{next(iter(fitted.stats.formats.values()))}")
        print(f"{'variable':13s} {'law (chosen)':32s} {'param':7s} {'true':>8s} {'refit':>9s} "
              f"{'95 % interval':>22s}  inside")
        for r in parameter_rows(fitted):
            chosen = r["law"] if r["chosen"] == r["law"] else f"{r['law']} ({r['chosen']})"
            print(f"{r['variable']:13s} {chosen:32s} {r['param']:7s} {r['true']:8.4g} "
                  f"{r['refit']:9.4g} [{r['lo']:9.4g}, {r['hi']:9.4g}]  "
                  f"{'yes' if r['inside'] else 'NO'}")
        for name, want, got in session_rows(fitted, scenario):
            print(f"{name:20s} scenario {want:10.4g}  server log {got:10.4g}  "
                  f"({100 * (got / want - 1):+.1f} %)")
        rows = compare(load_workload(str(scenario)), load_workload(str(log), log_speedup=k))
        for r in rows:
            if r["row"] in SESSION_ROWS:
                print(f"compare {r['row']:28s} {r['verdict']}")


if __name__ == "__main__":
    main()
