"""``wagon sweep``: the capacity curve of a server, as S-Client's and httperf/autobench's
experiments draw it — the same scenario replayed at increasing rate scales, each step a bounded
replay, achieved against offered throughput, latency and errors per step, and the knee.

A step at rate scale r replays the scenario with every session start divided by r (think times,
pages and classes unchanged: r times as many users arriving), for ``step_time`` seconds of
arrivals. Throughputs are measured on the seconds [``warmup``, ``step_time``): offered = the
scenario's requests due then (``synth.timeline.offered_requests``: their times when answers take
no time), achieved = the successful requests that ended then (the replay's per-second counts).

The knee (docs/methods.md) is the last step, in increasing rate, up to which every step's
achieved throughput stays within ``within`` (10 %) of its offered throughput and its errors
under ``within`` of its requests: past it the server no longer keeps up. The throughput it
sustains there, and the largest achieved throughput of the sweep, are the capacity estimates.
"""
from __future__ import annotations

import math
import os
import tempfile
import time
from dataclasses import asdict, dataclass
from itertools import islice
from typing import Callable

import numpy as np

from ..formats.scenario import ScenarioWriter, SessionBatch, read_scenario
from ..replay import ReplayOptions, replay
from ..synth.timeline import offered_requests

__all__ = ["SweepOptions", "SweepError", "sweep", "scaled_scenario", "knee", "parse_rates",
           "steps_text"]


class SweepError(ValueError):
    pass


@dataclass(frozen=True)
class SweepOptions:
    """A sweep: rate scales, each step's length, what is measured, how the replay runs."""

    target: str
    rates: tuple[float, ...] = (0.5, 1.0, 2.0, 4.0)
    step_time: float = 10.0          # seconds of arrivals (and of replay) per step
    warmup: float = 1.0              # first seconds of a step left out of its throughputs
    pause: float = 1.0               # seconds between steps: the server drains its queue
    within: float = 0.10             # knee: achieved within this fraction of offered
    protocol: str | None = None
    emulation: bool = True
    workers: int = 1


def parse_rates(text: str) -> tuple[float, ...]:
    """``0.5,1,2`` → (0.5, 1.0, 2.0): positive, increasing."""
    try:
        rates = tuple(float(x) for x in text.split(","))
    except ValueError:
        raise SweepError(f"--rates {text!r}: give numbers separated by commas") from None
    if not rates or any(not (math.isfinite(r) and r > 0) for r in rates) or \
            list(rates) != sorted(set(rates)):
        raise SweepError(f"--rates {text!r}: give positive rate scales in increasing order")
    return rates


def scaled_scenario(path: str, rate: float, until: float, out_path: str,
                    chunk: int = 10_000) -> None:
    """The scenario at ``path`` with its session starts divided by ``rate``, keeping the
    sessions that start before ``until`` (streamed, bounded memory)."""
    sc = read_scenario(path)
    header = {k: v for k, v in sc.header.items() if k not in ("format", "version")}
    header["options"] = {**header.get("options", {}), "sweep_rate_scale": rate}
    sessions = (s for s in sc.sessions() if s.start / rate < until)
    with open(out_path, "w") as f:
        writer = ScenarioWriter(f, header)
        while part := list(islice(sessions, chunk)):
            sizes = [len(s.clicks) for s in part]
            writer.write(SessionBatch(
                np.array([s.id for s in part]), np.array([s.start / rate for s in part]),
                np.array([s.cls for s in part]), np.concatenate(([0], np.cumsum(sizes))),
                np.array([p for s in part for p, _ in s.clicks]),
                np.array([t for s in part for _, t in s.clicks])))


def _offered(path: str, lo: float, hi: float) -> float:
    """Requests per second the scenario at ``path`` offers over [lo, hi)."""
    n = sum(int(np.count_nonzero((r.time >= lo) & (r.time < hi)))
            for r in offered_requests(read_scenario(path)))
    return n / (hi - lo)


def _step(path: str, rate: float, opts: SweepOptions, workdir: str) -> dict:
    scaled = os.path.join(workdir, f"step-{rate:g}.jsonl")
    scaled_scenario(path, rate, opts.step_time, scaled)
    lo, hi = math.ceil(opts.warmup), math.floor(opts.step_time)
    s = replay(scaled, ReplayOptions(target=opts.target, workers=opts.workers,
                                     protocol=opts.protocol, emulation=opts.emulation,
                                     fail_on=(), max_time=opts.step_time))
    per_second = np.asarray(s["throughput"]["per_second"][lo:hi], float)
    issued = s["requests"]["total"] - s["requests"]["not_started"]
    return {"rate_scale": rate, "offered_rps": _offered(scaled, lo, hi),
            "achieved_rps": float(per_second.sum()) / (hi - lo),
            "latency_ms": s["latency"]["request"], "requests": issued,
            "errors": s["errors"]["total"], "errors_by_kind": s["errors"]["by_kind"],
            "error_rate": s["errors"]["total"] / issued if issued else 0.0,
            "sessions": s["sessions"]["started"], "warnings": s["warnings"]}


def knee(steps: list[dict], within: float) -> int | None:
    """Index of the last step up to which every step kept up (module docstring); None when the
    first did not."""
    last = None
    for k, st in enumerate(steps):
        if st["achieved_rps"] < (1 - within) * st["offered_rps"] or st["error_rate"] > within:
            break
        last = k
    return last


def sweep(path: str, opts: SweepOptions,
          on_step: Callable[[dict], None] | None = None) -> dict:
    """Replay the scenario at each rate scale (module docstring); ``on_step`` sees each step's
    result as it comes."""
    if not opts.rates:
        raise SweepError("give at least one rate scale")
    if not 0 <= opts.warmup < opts.step_time - 1:
        raise SweepError("--warmup must leave at least one whole second of --step-time")
    span = max((s.start for s in read_scenario(path).sessions()), default=0.0)
    need = opts.step_time * max(opts.rates)
    if span < need:
        raise SweepError(f"{path}: its sessions arrive over {span:g} s; the step at rate scale "
                         f"{max(opts.rates):g} needs {need:g} s of them (--step-time × rate): "
                         "synthesize a longer scenario or shorten --step-time")
    steps = []
    with tempfile.TemporaryDirectory(prefix="wagon-sweep-") as workdir:
        for k, rate in enumerate(opts.rates):
            if k:
                time.sleep(opts.pause)
            steps.append(_step(path, rate, opts, workdir))
            if on_step is not None:
                on_step(steps[-1])
    at = knee(steps, opts.within)
    return {"scenario": path, "target": opts.target,
            "options": {**asdict(opts), "rates": list(opts.rates)}, "steps": steps,
            "knee": None if at is None else {"step": at, **{k: steps[at][k] for k in (
                "rate_scale", "offered_rps", "achieved_rps")}},
            "max_achieved_rps": max(s["achieved_rps"] for s in steps)}


def steps_text(result: dict) -> str:
    """The sweep as a table, then the knee."""
    out = [f"{'rate':>6s} {'offered/s':>10s} {'achieved/s':>11s} {'ratio':>6s} {'p50 ms':>9s} "
           f"{'p90 ms':>9s} {'p99 ms':>9s} {'errors':>7s}"]
    for s in result["steps"]:
        lat = s["latency_ms"]
        ms = "".join(f" {'-':>9s}" if lat[p] is None else f" {lat[p]:9.1f}"
                     for p in ("p50", "p90", "p99"))
        ratio = s["achieved_rps"] / s["offered_rps"] if s["offered_rps"] else float("nan")
        out.append(f"{s['rate_scale']:6g} {s['offered_rps']:10.1f} {s['achieved_rps']:11.1f} "
                   f"{ratio:6.2f}{ms} {100 * s['error_rate']:6.1f}%")
    k, within = result["knee"], result["options"]["within"]
    out.append(f"knee: rate scale {k['rate_scale']:g}, {k['achieved_rps']:,.1f} requests/s "
               f"achieved of {k['offered_rps']:,.1f} offered (the last step within "
               f"{100 * within:g} % of its offered throughput)" if k else
               f"knee: none (the first step already fell more than {100 * within:g} % short)")
    out.append(f"largest achieved throughput: {result['max_achieved_rps']:,.1f} requests/s")
    return "\n".join(out)
