"""``wagon sweep``: the capacity curve of a server, as S-Client's and httperf/autobench's
experiments draw it — the same scenario replayed at increasing rate scales, each step a bounded
replay, achieved against offered throughput, latency and errors per step, and the knee.

A step at rate scale r replays the scenario with every session start divided by r (think times,
pages and classes unchanged: r times as many users arriving): the sessions that arrive in its
first ``step_time`` seconds, each with the clicks *due* by then — due at its start plus the think
times before them, the times they would have if answers took no time. The schedule alone says
what a step offers, whatever the links' emulated speed:

- offered = the requests of the clicks due in the window [``warmup``, ``step_time``);
- achieved = those of them that succeeded, however late their click came (a session's clicks
  follow each other, so they are the session's requests issued from its first click due in the
  window on: ``achieved``), by the step's end: when its last session ends, or ``drain`` seconds
  after ``step_time``, where what still runs is cut (counted in ``cut`` with the requests never
  issued). Nothing is due after ``step_time``, so one step's sessions never run into the next.

A session's clicks come later than due by the response times before them (the model is closed
inside a session), seconds on slow emulated links: the drain is what lets them finish. By
default it is calibrated: the first step, the lightest, plays until its sessions end (at most
DRAIN_CAP), and the others get DRAIN_MARGIN times the time it took past ``step_time`` (at least
DRAIN_MIN). A server that queues rather than refuses serves its backlog during the drain, which
raises its achieved throughput by at most its capacity × drain / (``step_time`` − ``warmup``):
keep the drain short against the steps (each step's result says the drain it had).

Steps are repeatable: a step is a function of the scenario (its ``seed`` is recorded) and r.

The knee (docs/methods.md) is the last step, in increasing rate, up to which every step's
achieved throughput stays within ``within`` (10 %) of its offered throughput and its errors
under ``within`` of its requests, when a later step fell short: past it the server no longer
keeps up. The throughput it sustains there is the lower capacity estimate, the largest served
throughput (below) the upper one. When every step kept up there is no knee in the range.

The latency a user sees is the page's: each step reports the page response time of its window's
clicks (``analysis.pages``: first request to the last object's last byte), the pages its end
cut counted as censored at it (Kaplan–Meier median and 90th percentile, the mean with them),
beside the successful requests' percentiles.

Beside them, served = the successful answers whose last byte fell in the window, whichever
click they were for: what the server delivered in those wall-clock seconds. Below the knee it
trails offered while late clicks are still to come; past it, it is the server's capacity
(achieved then overstates it when the drain is long: late clicks meet a server no longer
loaded by new arrivals).
"""
from __future__ import annotations

import math
import os
import tempfile
import time
from dataclasses import asdict, dataclass, replace
from itertools import islice
from typing import TYPE_CHECKING, Callable

import numpy as np

from ..formats.atomic import atomic_write
from ..formats.results import pages_path, read_results
from ..formats.scenario import Scenario, ScenarioWriter, SessionBatch, read_scenario
from ..replay import ReplayOptions, replay
from ..replay.events import UNFINISHED
from ..replay.scheduler import class_override
from ..replay.walltime import WallTime, expected_wall_time
from .pages import page_times, request_percentiles

if TYPE_CHECKING:                   # annotations only: pandas loads once a step has run
    import pandas as pd

__all__ = ["SweepOptions", "SweepError", "StepPlan", "sweep", "scaled_scenario", "of_window",
           "knee", "kept_up", "parse_rates", "steps_text", "window_pages", "step_pages"]


class SweepError(ValueError):
    pass


DRAIN_MARGIN = 1.5        # a calibrated drain: this many times the first step's own overrun,
DRAIN_MIN = 0.5           # and at least this many seconds
DRAIN_CAP = 60.0          # the first step's sessions may take this long after its end to finish


@dataclass(frozen=True)
class SweepOptions:
    """A sweep: rate scales, each step's length, what is measured, how the replay runs."""

    target: str
    rates: tuple[float, ...] = (0.5, 1.0, 2.0, 4.0)
    step_time: float = 10.0          # seconds of arrivals (and of replay) per step
    warmup: float = 1.0              # first seconds of a step left out of its throughputs
    drain: float | None = None       # seconds after a step's end its window's requests may take
                                     # (None: calibrated on the first step, DRAIN_MARGIN × its own)
    pause: float = 1.0               # seconds between steps: the server drains its queue
    within: float = 0.10             # knee: achieved within this fraction of offered
    protocol: str | None = None
    emulation: bool = True
    workers: int = 1
    ca_file: str | None = None       # HTTPS targets, as wagon replay's
    insecure: bool = False
    tls_version: str | None = None


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


@dataclass
class StepPlan:
    """What a step offers: per session kept, how many of its clicks fall before the measured
    window (``before``, by session id); the requests due in the window (``offered``); the
    clicks due in it (``pages``)."""

    before: dict[int, int]
    offered: int
    sessions: int
    pages: int = 0


def scaled_scenario(path: str, rate: float, until: float, warmup: float, out_path: str,
                    chunk: int = 10_000) -> StepPlan:
    """The scenario at ``path`` with its session starts divided by ``rate``, keeping the
    sessions that start before ``until`` and, of each, the clicks due before ``until`` (due:
    their session's start plus the think times before them — the times they would have if
    answers took no time, as ``synth.timeline`` offers them); streamed, bounded memory. Returns
    the step's plan (``StepPlan``: clicks before ``warmup``, requests due in [warmup, until))."""
    sc = read_scenario(path)
    header = {k: v for k, v in sc.header.items() if k not in ("format", "version")}
    # the cut has no planned end of its own: it plays until its clicks (due by ``until``) are
    # done, or the caller's --max-time; a steady source's end would stop it before its drain
    header["options"] = {**header.get("options", {}), "sweep_rate_scale": rate,
                         "until": until, "steady": False}
    fetch = sc.site.fetches()
    plan = StepPlan({}, 0, 0)
    sessions = (s for s in sc.sessions() if s.start / rate < until)
    with atomic_write(out_path) as f:
        writer = ScenarioWriter(f, header)
        while part := list(islice(sessions, chunk)):
            kept = []
            for s in part:
                due = s.start / rate + np.cumsum([0.0] + [t for _, t in s.clicks[1:]])
                n = int(np.searchsorted(due, until, "left"))
                first = int(np.searchsorted(due, warmup, "left"))
                plan.before[s.id] = first
                pages = np.array([p for p, _ in s.clicks[first:n]], np.int64)
                views = np.array([s.view(k) for k in range(first, n)], np.int64)
                plan.offered += int(fetch.asked(fetch.rows(pages, views)).sum())
                plan.pages += len(pages)
                kept.append((s, s.clicks[:n]))
            plan.sessions += len(kept)
            sizes = [len(c) for _, c in kept]
            agents = [s.agent for s, _ in kept]
            writer.write(SessionBatch(
                np.array([s.id for s, _ in kept]), np.array([s.start / rate for s, _ in kept]),
                np.array([s.cls for s, _ in kept]), np.concatenate(([0], np.cumsum(sizes))),
                np.array([p for _, c in kept for p, _ in c], np.int64),
                np.array([t for _, c in kept for _, t in c], float),
                None if None in agents else np.array(agents, np.int64),
                np.array([s.view(k) for s, c in kept for k in range(len(c))], np.int64)))
    return plan


def _click_rank(pages: "pd.DataFrame") -> "pd.Series":
    """Each page row's rank among its session's clicks (0 first), aligned on ``pages``."""
    order = pages.sort_values(["session", "intended"], kind="stable")
    return order.groupby("session").cumcount().reindex(pages.index)


def window_pages(pages: "pd.DataFrame", plan: StepPlan) -> "pd.Series":
    """Which of the step's page rows (``read_results``) are its window's clicks'."""
    return _click_rank(pages) >= pages["session"].map(plan.before)


def of_window(req: "pd.DataFrame", pages: "pd.DataFrame", plan: StepPlan) -> "pd.Series":
    """Which of the step's recorded requests (``read_results``) are its window's: of each
    session, those issued from its first click due in the window on (its clicks run one after
    the other, so they are exactly the window's clicks' requests that were issued), placed at
    their start — a skipped object, never issued, at its page's failure: it failed with it."""
    # lazy: pandas only once a step has run
    import pandas as pd  # lazy: see above
    first = pages[_click_rank(pages) == pages["session"].map(plan.before)].set_index("session")
    begun = first["start"].fillna(first["intended"])
    ids = np.fromiter(plan.before, np.int64, len(plan.before))
    firsts = np.fromiter(plan.before.values(), np.int64, len(plan.before))
    bound = pd.Series(np.where(firsts == 0, -np.inf, np.inf), index=ids)
    bound.update(begun[begun.index.isin(ids[firsts > 0])])
    at = req["start"].fillna(req["intended"])        # a skipped object: when its page failed
    return at >= req["session"].map(bound)


def step_pages(pages: "pd.DataFrame", req: "pd.DataFrame", plan: StepPlan, end: float) -> dict:
    """Page response time of the step's window's clicks (``analysis.pages``), cut at the
    step's ``end`` (its drain's stop, or its last session's end); not started: the window's
    clicks with no page row."""
    mine = pages[window_pages(pages, plan)]
    times = page_times(mine, end, req)
    return replace(times, not_started=max(plan.pages - len(mine), 0)).summary()


def _step(path: str, rate: float, opts: SweepOptions, drain: float, workdir: str) -> dict:
    """Replay one step (module docstring) and measure its window."""
    scaled = os.path.join(workdir, f"step-{rate:g}.jsonl")
    results = os.path.join(workdir, f"step-{rate:g}.csv")
    plan = scaled_scenario(path, rate, opts.step_time, opts.warmup, scaled)
    s = replay(scaled, ReplayOptions(target=opts.target, results=results, workers=opts.workers,
                                     protocol=opts.protocol, emulation=opts.emulation,
                                     ca_file=opts.ca_file, insecure=opts.insecure,
                                     tls_version=opts.tls_version,
                                     fail_on=(), max_time=opts.step_time + drain))
    req, pages = read_results(results), read_results(pages_path(results))
    window = req[of_window(req, pages, plan)]
    ok = window[window["error"] == ""]
    served = req.loc[req["error"] == "", "last_byte"].between(opts.warmup, opts.step_time, "left")
    failed = window[~window["error"].isin(("", *UNFINISHED))]
    seconds = opts.step_time - opts.warmup
    return {"rate_scale": rate, "offered": plan.offered, "ok": len(ok), "failed": len(failed),
            "cut": max(plan.offered - len(ok) - len(failed), 0),
            "offered_rps": plan.offered / seconds, "achieved_rps": len(ok) / seconds,
            "served_rps": int(served.sum()) / seconds,
            "latency_ms": request_percentiles(ok),
            "pages": step_pages(pages, req, plan, s["duration_s"]),
            "errors_by_kind": failed["error"].value_counts().to_dict(),
            "error_rate": len(failed) / (len(ok) + len(failed)) if len(ok) + len(failed) else 0.0,
            "sessions": plan.sessions, "drain_s": drain, "stopped_by": s["stopped_by"],
            "overrun_s": max(float(window["last_byte"].max()) - opts.step_time, 0.0)
            if len(window) else 0.0, "warnings": s["warnings"]}


def kept_up(step: dict, within: float) -> bool:
    """Did the step's server keep up: achieved within ``within`` of offered, errors under it?"""
    return (step["achieved_rps"] >= (1 - within) * step["offered_rps"]
            and step["error_rate"] <= within)


def knee(steps: list[dict], within: float) -> int | None:
    """Index of the last step up to which every step kept up, when a later one did not (module
    docstring); None when every step kept up (no knee in the range) or the first did not."""
    short = next((k for k, st in enumerate(steps) if not kept_up(st, within)), None)
    return None if short is None or short == 0 else short - 1


def remedy(sc: Scenario) -> str:
    """What shortens a scenario's sessions' network time, as the scenario was made: its
    network sped up with its times (``wagon synth --speedup`` without ``--real-network``)
    leaves only a longer step."""
    made = sc.header.get("options", {})
    if sc.speedup == 1:
        return "a longer --step-time, or wagon synth --speedup, which speeds the network too"
    if made.get("real_network"):
        return "a longer --step-time, or the scenario synthesized without --real-network"
    return (f"a longer --step-time only: the scenario's network is already {sc.speedup:g} "
            "times faster, with its times")


def short_step(wall: WallTime, opts: SweepOptions, fix: str) -> str | None:
    """What a step too short for the classes' pages does to it, or None: a class whose
    sessions' round trips and transfers (expected, against an idle server) add up to more than
    ``within`` of the step's measured window has its clicks come that late after they are due,
    so its served throughput trails the offered one by as much, and a given --drain shorter
    than that cuts them. Said, not lengthened: a longer step would offer another window than
    the one asked for; ``fix``: what would (``remedy``)."""
    window = opts.step_time - opts.warmup
    slow = {name: t for name, t in wall.network_s.items() if t > opts.within * window}
    if not slow:
        return None
    name = max(slow, key=slow.get)
    note = (f"--step-time {opts.step_time:g} s is short for the pages of {', '.join(slow)}: "
            f"a {name} session's round trips and transfers take about {slow[name]:,.2f} s "
            f"against an idle server, {100 * slow[name] / window:.0f} % of the step's "
            f"{window:g} s window, so its last clicks come that late and finish in the drain")
    if opts.drain is not None and opts.drain < slow[name]:
        note += f"; --drain {opts.drain:g} s cuts those still running (counted as cut)"
    return f"{note} ({fix})"


def sweep(path: str, opts: SweepOptions,
          on_step: Callable[[dict], None] | None = None,
          on_note: Callable[[str], None] | None = None) -> dict:
    """Replay the scenario at each rate scale (module docstring); ``on_step`` sees each step's
    result as it comes, ``on_note`` what is said before the first (``short_step``)."""
    if not opts.rates:
        raise SweepError("give at least one rate scale")
    if not 0 <= opts.warmup <= opts.step_time - 1:
        raise SweepError("--warmup must leave at least one second of --step-time")
    sc = read_scenario(path)
    wall = expected_wall_time(sc, class_override(sc.classes, opts.protocol), opts.emulation)
    span = wall.arrivals_s
    need = opts.step_time * max(opts.rates)
    if span < need:
        raise SweepError(f"{path}: its sessions arrive over {span:g} s; the step at rate scale "
                         f"{max(opts.rates):g} needs {need:g} s of them (--step-time × rate): "
                         "synthesize a longer scenario or shorten --step-time")
    note = short_step(wall, opts, remedy(sc))
    if note is not None and on_note is not None:
        on_note(note)
    steps: list[dict] = []
    drain = opts.drain
    with tempfile.TemporaryDirectory(prefix="wagon-sweep-") as workdir:
        for k, rate in enumerate(opts.rates):
            if k:
                time.sleep(opts.pause)
            steps.append(_step(path, rate, opts, DRAIN_CAP if drain is None else drain,
                               workdir))
            if steps[-1]["stopped_by"] == "signal":   # Ctrl-C or SIGTERM stopped the step's
                raise KeyboardInterrupt              # replay: the sweep stops too (it said 0)
            if drain is None:
                drain = max(DRAIN_MARGIN * steps[0]["overrun_s"], DRAIN_MIN)
            if on_step is not None:
                on_step(steps[-1])
    at = knee(steps, opts.within)
    return {"scenario": path, "target": opts.target, "seed": sc.header.get("seed"),
            "options": {**asdict(opts), "rates": list(opts.rates)}, "steps": steps,
            "expected_network_s": wall.network_s, "short_step": note,
            "kept_up": all(kept_up(st, opts.within) for st in steps), "drain_s": drain,
            "knee": None if at is None else {"step": at, **{k: steps[at][k] for k in (
                "rate_scale", "offered_rps", "achieved_rps")}},
            "max_served_rps": max(s["served_rps"] for s in steps)}


def _seconds(summary: dict, q: str) -> str:
    """A Kaplan–Meier quantile of a step's pages for the table: ``>x`` when beyond every time
    observed, ``-`` without pages."""
    value, beyond = summary[f"km_{q}_s"], summary[f"km_{q}_lower_bound_s"]
    return "-" if value is None and beyond is None else \
        f"{value:.2f}" if value is not None else f">{beyond:.2f}"


def _latency_cells(step: dict, latency: str) -> str:
    """The table's latency columns: page response time (Kaplan–Meier p50, p90 and the pages
    cut) or the successful requests' percentiles."""
    if latency == "page":
        pages = step["pages"]
        return "".join(f" {_seconds(pages, q):>10s}" for q in ("median", "p90")) + \
            f" {pages['cut']:9,d}"
    lat = step["latency_ms"]
    return "".join(f" {'-':>9s}" if lat[p] is None else f" {lat[p]:9.1f}"
                   for p in ("p50", "p90", "p99"))


TABLE_LATENCY = "page"              # the table's latency columns by default
LATENCY_HEADERS = {"page": f" {'page p50 s':>10s} {'page p90 s':>10s} {'pages cut':>9s}",
                   "request": f" {'p50 ms':>9s} {'p90 ms':>9s} {'p99 ms':>9s}"}


def steps_text(result: dict, latency: str = TABLE_LATENCY) -> str:
    """The sweep as a table, then the knee; ``latency``: the columns' latency, ``page`` (page
    response time, the cut pages censored) or ``request`` (successful requests)."""
    out = [f"{'rate':>6s} {'offered/s':>10s} {'achieved/s':>11s} {'ratio':>6s} {'served/s':>9s}"
           f"{LATENCY_HEADERS[latency]} {'errors':>7s} {'cut':>6s}"]
    for s in result["steps"]:
        ratio = s["achieved_rps"] / s["offered_rps"] if s["offered_rps"] else float("nan")
        out.append(f"{s['rate_scale']:6g} {s['offered_rps']:10.1f} {s['achieved_rps']:11.1f} "
                   f"{ratio:6.2f} {s['served_rps']:9.1f}{_latency_cells(s, latency)} "
                   f"{100 * s['error_rate']:6.1f}% {s['cut']:6,d}")
    k, within = result["knee"], result["options"]["within"]
    if k:
        out.append(f"knee: rate scale {k['rate_scale']:g}, {k['achieved_rps']:,.1f} requests/s "
                   f"achieved of {k['offered_rps']:,.1f} offered (the last step within "
                   f"{100 * within:g} % of its offered throughput before one fell short)")
    elif result["kept_up"]:
        out.append(f"knee: none — the server kept up at every step, up to "
                   f"{result['steps'][-1]['offered_rps']:,.1f} requests/s offered (its capacity "
                   "is above: sweep higher rates)")
    else:
        out.append(f"knee: none — the first step already fell more than {100 * within:g} % "
                   "short (sweep lower rates)")
    out.append(f"largest served throughput: {result['max_served_rps']:,.1f} requests/s (ok answers "
               "per second in a step's window, whichever click they were for)")
    return "\n".join(out)
