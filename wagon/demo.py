"""``wagon demo``: from nothing to a result in about a minute, on the bundled sample log.

Fit the sample → synthesize a short scenario (WAGON's client classes, times sped up) → start
``wagon serve --scenario`` on a free loopback port → replay → print the summary, write the plots
and the report. The sample is package data (``wagon.data``), so an installed wagon runs it too.
"""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Callable

import numpy as np

from .analysis.workload import load_workload
from .formats.atomic import atomic_write
from .formats.classes import ClientClass, Protocol
from .formats.model import save_model
from .formats.results import read_results
from .formats.scenario import read_scenario
from .modeling import fit_logs
from .replay import ReplayOptions, replay
from .replay.record import summary_text
from .replay.walltime import WallTime, expected_wall_time
from .report.units import duration, size
from .synth import SynthOptions

__all__ = ["run_demo", "DemoOptions", "DemoError", "SAMPLE_NAME"]

SAMPLE_NAME = "sample-combined.log.gz"
STEADY_WINDOW_S = 5
DEMO_CLASSES = "modem/http10x4:0.15,t1-dsl/http11:0.45,wan/http11x2:0.25,satellite/pipeline:0.15"
#: each fitted variable: how its mean reads (a time, a size or a count) and what it is
MEANINGS = {"interarrival": (duration, "between two sessions' starts"),
            "clicks": ("{:.3g}".format, "clicks (pages asked for) in a session"),
            "think": (duration, "from a page to the same user's next click"),
            "page_size": (size, "a page's own body"),
            "objects_per_page": ("{:.3g}".format, "objects (images, scripts...) a page embeds"),
            "object_size": (size, "an object's body")}


class DemoError(RuntimeError):
    pass


@dataclass(frozen=True)
class DemoOptions:
    """What ``wagon demo`` can be told."""

    outdir: str = "wagon-demo"
    # 45 s of arrivals: the ramp (as long as the sessions, ~10 s on average, think times
    # mostly) is followed by a steady state of ~20 s, and the whole demo takes about a minute
    duration: float = 900.0           # modeled seconds of session arrivals
    speedup: float = 20.0
    rate_scale: float = 2.0
    seed: int = 1
    drain: float = 5.0                # seconds the replay may run after the last arrival


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_port(port: int, proc: subprocess.Popen, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise DemoError("the embedded server exited: " + proc.stderr.read().decode()[-500:])
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            return
        except OSError:
            time.sleep(0.1)
    raise DemoError(f"the embedded server did not listen on port {port}")


def steady_state(per_second: list[int], arrivals: float, window: int = STEADY_WINDOW_S
                 ) -> tuple[int, float] | None:
    """(first second, mean requests/s) of the steady state within the arrival window: its level
    is the mean throughput of the window's last third (a mean, as what it is compared with: the
    per-second counts are skewed by pages' bursts of objects, their median 5–10 % below); it
    starts at the first second from which every ``window``-second mean up to the window's end
    stays within 10 % of that level. None when that leaves less than ``window`` seconds (the
    run measured only a ramp)."""
    end = int(arrivals)
    x = np.asarray(per_second[:end], float)
    if len(x) < 3 * window:
        return None
    level = float(np.mean(x[2 * end // 3:]))
    means = np.convolve(x, np.ones(window) / window, "valid")       # means[i]: x[i:i+window]
    off = np.abs(means - level) > 0.1 * level
    first = int(np.flatnonzero(off)[-1]) + 1 if off.any() else 0
    if end - first < 2 * window or level <= 0:
        return None
    return first, float(x[first:].mean())


def _browser(p: Protocol) -> str:
    """A protocol profile in words."""
    k = p.connections
    if p.http2:
        return f"HTTP/2, {k} streams on one connection"
    if not p.persistent:
        return f"HTTP/1.0, a connection per object, {k} at once"
    kind = "pipelined" if p.pipeline else "keep-alive"
    closed = ", closed after each page" if p.close_after_page else ""
    return f"HTTP/1.1 {kind}, {k} connection{'s' * (k > 1)}{closed}"


def fits_text(fits: dict) -> list[str]:
    """A line per fitted variable: its chosen law, its mean as recorded (``law_mean``: what
    ``wagon fit`` prints and the model holds) in its unit, what it measures, its sample size."""
    out = []
    for name, rep in fits.items():
        shown, meaning = MEANINGS[name]
        law = rep.best.name if rep.best is not None else "no law fitted"
        mean = shown(rep.law_mean) if rep.law_mean is not None else "-"
        out.append(f"    {name:17s} {law:17s} mean {mean:>8s}  {meaning} (n={rep.n:,})")
    return out


def classes_text(classes: list[ClientClass], speedup: float) -> list[str]:
    """The client classes as the replay plays them: share, round trip, bandwidths, browser."""
    out = [f"    client classes (their networks {speedup:g} times faster too, as the whole "
           "world is: --speedup):",
           f"      {'share':>6s}  {'class':20s} {'round trip':>10s} {'down/up kbit/s':>16s}  "
           "browser"]
    for c in classes:
        n = c.network
        rates = f"{n.down_kbps:,.0f}/{n.up_kbps:,.0f}"
        out.append(f"      {100 * c.weight:4.0f} %  {c.name:20s} {n.rtt_ms:7.0f} ms "
                   f"{rates:>16s}  {_browser(c.protocol)}")
    return out


def reading_text(summary: dict, results: Path, o: DemoOptions, wall: WallTime) -> list[str]:
    """What the summary's numbers mean here: the planned stop, and latency per class (the
    server is on loopback: what a class sees is its emulated network)."""
    req, sessions = summary["requests"], summary["sessions"]
    stop = o.duration / o.speedup + o.drain
    out = ["reading it:"]
    if req["not_started"] or req["in_flight"]:
        out.append(f"  not started {req['not_started']:,} and in flight {req['in_flight']:,}: "
                   f"the demo stops as planned at {stop:g} s ({o.duration / o.speedup:g} s of "
                   f"arrivals + {o.drain:g} s, --drain); the {sessions['interrupted']:,} "
                   "sessions still clicking then stop there, their later clicks not started "
                   f"(not errors; playing every click to its end takes about {wall.end_s:.0f} s)")
    from .report.replay import nearest_rank  # lazy: matplotlib, not for --help
    ok = read_results(str(results))
    ok = ok[ok["error"] == ""]
    ms = (ok["last_byte"] - ok["start"]) * 1e3
    out.append("  latency is what each class's emulated client sees, its round trips and "
               "bandwidth included (the server, on loopback, answers in a few ms):")
    out.append(f"    {'class':20s} {'ok requests':>11s} {'p50 ms':>8s} {'p99 ms':>8s}")
    for name, x in ms.groupby(ok["class"]):
        p50, p99 = nearest_rank(x.to_numpy(), [50, 99])       # the summary's and the report's
        out.append(f"    {name:20s} {len(x):11,d} {p50:8.1f} {p99:8.1f}")
    return out


def run_demo(o: DemoOptions = DemoOptions(), echo: Callable[[str], None] = print,
             progress: bool = False) -> dict:
    """Run the whole pipeline; returns the replay summary. Files go under ``o.outdir``."""
    from .report.html import workload_report  # lazy: matplotlib and SciPy, not for --help
    from .report.plots import plot_replay, write_plots  # lazy: matplotlib, not for --help
    from .synth.generate import Generator, synthesize  # lazy: SciPy, not for --help
    out = Path(o.outdir)
    try:
        (out / "plots").mkdir(parents=True, exist_ok=True)
    except OSError as e:                 # --outdir names a file, or a folder it cannot make
        raise DemoError(f"--outdir {o.outdir}: cannot make {out / 'plots'}: "
                        f"{e.strerror or e}") from None
    t_start = time.monotonic()
    echo(f"1/4 fit {SAMPLE_NAME}: each variable's law and its mean as the log recorded it "
         "(wagon fit's)")
    with resources.as_file(resources.files("wagon.data") / SAMPLE_NAME) as sample:
        fitted = fit_logs([str(sample)])
    save_model(fitted.model, out / "model.json")
    for line in fits_text(fitted.fits):
        echo(line)
    write_plots(fitted.fits, fitted.sessions.samples, out / "plots")
    echo(f"2/4 synth {o.duration:g} s of arrivals at {o.rate_scale:g}x the logged rate, "
         f"the world {o.speedup:g} times faster (--speedup)")
    gen = Generator(fitted.model, SynthOptions(duration=o.duration, rate_scale=o.rate_scale,
                                               speedup=o.speedup, seed=o.seed,
                                               classes=DEMO_CLASSES))
    scenario = out / "scenario.jsonl"
    with atomic_write(scenario) as f:
        info = synthesize(gen, f, "model.json").as_dict()
    echo(f"    {info['sessions']:,} sessions, {info['clicks']:,} clicks, "
         f"{info['requests']:,} requests")
    sc = read_scenario(scenario)
    for line in classes_text(sc.classes, o.speedup):
        echo(line)
    wall = expected_wall_time(sc)
    echo(f"    {wall.text()}")
    port = _free_port()
    echo(f"3/4 serve the scenario's site on http://127.0.0.1:{port}/")
    server = subprocess.Popen([sys.executable, "-m", "wagon", "serve", "--scenario",
                               str(scenario), "--port", str(port), "--max-time", "600"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        _wait_port(port, server)
        echo("4/4 replay (each session with its class' delay, bandwidth and browser), "
             f"stopping at {o.duration / o.speedup + o.drain:g} s: the arrivals and "
             f"{o.drain:g} s (--drain)")
        summary = replay(str(scenario), ReplayOptions(
            target=f"http://127.0.0.1:{port}/", results=str(out / "results.csv"),
            max_time=o.duration / o.speedup + o.drain, progress=progress))
    finally:
        server.terminate()
        server.wait(10)
    plot_replay(summary, out / "results.csv", out / "plots" / "replay.png")
    with atomic_write(out / "report.html") as f:
        f.write(workload_report(load_workload(str(out / "results.csv"))))
    echo("")
    echo(summary_text(summary))
    for line in reading_text(summary, out / "results.csv", o, wall):
        echo(line)
    arrivals = o.duration / o.speedup
    steady = steady_state(summary["throughput"]["per_second"], arrivals)
    echo(f"steady state from {steady[0]} s to {arrivals:.0f} s (the last arrival): "
         f"{steady[1]:,.1f} ok/s" if steady else
         f"no steady state: {arrivals:.0f} s of arrivals held only the ramp (give a longer "
         "--duration)")
    echo(f"\ndemo done in {time.monotonic() - t_start:.0f} s; model, scenario, results, plots and "
         f"report.html in {os.path.abspath(out)}/")
    return summary
