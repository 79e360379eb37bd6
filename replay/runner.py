"""Running a replay: one process (or N worker processes), signals, limits, progress, summary.

Each worker plays the sessions whose id ≡ k (mod N) against the same wall-clock t0, writes its
own part of the results and returns its statistics; the parent merges them. SIGINT/SIGTERM stop
the schedule, end the running sessions, flush what was recorded and still produce the summary.
"""
from __future__ import annotations

import asyncio
import itertools
import multiprocessing
import os
import resource
import shutil
import signal
import sys
import time
from array import array
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from urllib.parse import urlsplit

import numpy as np
import uvloop

from ..formats.classes import parse_protocol
from ..formats.results import pages_path, write_run
from ..formats.scenario import Scenario, read_scenario
from .browser import Target
from .events import Hooks, clock
from .record import CsvRecorder, Stats
from .scheduler import Scheduler, class_override

__all__ = ["ReplayOptions", "replay", "ReplayError", "estimate_connections", "raise_nofile"]

START_MARGIN = 0.5          # seconds between setting t0 and the first possible session start


class ReplayError(ValueError):
    """A replay that cannot start (bad target, unreadable scenario, bad option)."""


@dataclass(frozen=True)
class ReplayOptions:
    target: str
    results: str | None = None
    workers: int = 1
    protocol: str | None = None
    emulation: bool = True
    connect_timeout: float = 10.0
    timeout: float = 30.0
    max_time: float | None = None
    progress: bool = False


def _target(url: str) -> tuple[str, int, str]:
    u = urlsplit(url)
    if u.scheme != "http" or not u.hostname:
        raise ReplayError(f"--target {url!r}: give an http://HOST[:PORT]/ URL")
    port = u.port or 80
    return u.hostname, port, u.netloc


def raise_nofile() -> int:
    """Raise the soft open-files limit to the hard one; returns the limit now in force."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def estimate_connections(sc: Scenario, protocol_override=None) -> int:
    """Peak connections the run would hold: sessions overlapping (from their think times) × the
    connections of their class, a lower bound since transfers add time."""
    per_class = [max(1, (protocol_override or c.protocol).connections) for c in sc.classes]
    starts, ends, weights = array("d"), array("d"), array("d")     # compact: one pass, any size
    for s in sc.sessions():
        starts.append(s.start)
        ends.append(s.start + sum(t for _, t in s.clicks) + 1e-9)
        weights.append(per_class[s.cls])
    if not starts:
        return 0
    w = np.frombuffer(weights)
    times = np.concatenate((np.frombuffer(starts), np.frombuffer(ends)))
    deltas = np.concatenate((w, -w))
    return int(np.cumsum(deltas[np.argsort(times, kind="stable")]).max())


def _part_paths(results: str, k: int) -> tuple[str, str]:
    """Request and page files of worker k (k < 0: the final files of a single process)."""
    if k < 0:
        return results, pages_path(results)
    return f"{results}.part{k}", f"{pages_path(results)}.part{k}"


async def _play(sc: Scenario, opts: ReplayOptions, worker: int, workers: int, t0_wall: float,
                results: tuple[str, str] | None) -> dict:
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    stopped_by: list[str] = []

    def halt(why: str) -> None:
        if not stop.is_set():
            stopped_by.append(why)
            stop.set()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, halt, "signal")
    t0 = clock() + (t0_wall - time.time())
    hooks = Hooks()
    stats = Stats(t0)
    stats.subscribe(hooks)
    files = [open(p, "w", newline="") for p in results] if results else []
    recorder = (CsvRecorder(files[0], files[1], t0, [c.name for c in sc.classes],
                            header=worker <= 0) if files else None)
    if recorder is not None:
        recorder.subscribe(hooks)
    host, port, netloc = _target(opts.target)
    protocol = parse_protocol(opts.protocol) if opts.protocol else None
    classes = class_override(sc.classes, protocol)
    target = Target(host, port, netloc, opts.connect_timeout, opts.timeout, hooks, sc.site,
                    itertools.count(max(worker, 0) * 10**9), opts.emulation)
    mine = (s for s in sc.sessions() if workers <= 1 or s.id % workers == worker)
    sched = Scheduler(target, classes, mine, t0, stop, hooks)

    async def housekeeping() -> None:
        """Flush once a second; sample the event loop's lag every 0.1 s; show progress."""
        tick, last_flush, last_requests = clock(), clock(), 0
        while True:
            tick += 0.1
            await asyncio.sleep(max(tick - clock(), 0))
            now = clock()
            stats.loop_lag(max(now - tick, 0.0))
            if now - last_flush >= 1.0:
                if recorder is not None:
                    recorder.flush()
                if opts.progress and worker <= 0:
                    rate = stats.c["requests"] - last_requests
                    last_requests = stats.c["requests"]
                    print(f"\r[{now - t0:7.1f} s] sessions started {stats.c['sessions_started']:,}"
                          f" active {sched.active:,} finished {sched.finished:,}  "
                          f"{rate / (now - last_flush):,.0f} req/s  errors "
                          f"{sum(stats.errors.values()):,}   ", end="", file=sys.stderr,
                          flush=True)
                last_flush = now

    keeper = asyncio.ensure_future(housekeeping())
    if opts.max_time is not None:
        loop.call_later(t0 + opts.max_time - clock(), halt, "max_time")
    cpu0, began = time.process_time(), clock()
    try:
        await sched.run()
    finally:
        keeper.cancel()
        if recorder is not None:
            recorder.flush()
        for f in files:
            f.close()
        if opts.progress and worker <= 0:
            print(file=sys.stderr)
    state = stats.state()
    state["duration"] = max(clock() - t0, 0.0)
    state["cpu"] = (time.process_time() - cpu0) / max(clock() - began, 1e-3)
    state["stopped_by"] = stopped_by[0] if stopped_by else None
    return state


def _worker(path: str, opts: ReplayOptions, k: int, n: int, t0_wall: float, out) -> None:
    sc = read_scenario(path)
    raise_nofile()
    results = _part_paths(opts.results, k) if opts.results else None
    out.put(uvloop.run(_play(sc, opts, k, n, t0_wall, results)))


def _run_info(path: str, sc: Scenario, opts: ReplayOptions, t0_wall: float) -> dict:
    """What the run file says of a run before its summary exists."""
    return {"scenario": path, "target": opts.target,
            "t0": datetime.fromtimestamp(t0_wall, timezone.utc).isoformat(timespec="microseconds"),
            "t0_unix": t0_wall, "classes": [c.name for c in sc.classes],
            "options": asdict(opts), "summary": None}


def replay(path: str, opts: ReplayOptions) -> dict:
    """Play the scenario at ``path`` against ``opts.target``; returns the summary."""
    _target(opts.target)
    sc = read_scenario(path)
    if opts.workers < 1:
        raise ReplayError("--workers must be at least 1")
    # the workers need time to start: their common t0 is set later
    t0_wall = time.time() + START_MARGIN + (1.5 if opts.workers > 1 else 0.0)
    info = _run_info(path, sc, opts, t0_wall)
    if opts.results:
        write_run(opts.results, info)
    if opts.workers == 1:
        raise_nofile()
        results = _part_paths(opts.results, -1) if opts.results else None
        states = [uvloop.run(_play(sc, opts, -1, 1, t0_wall, results))]
    else:
        states = _run_workers(path, opts, t0_wall)
    merged = Stats.merged(states)
    duration = max(s["duration"] for s in states)
    summary = merged.summary(duration, max(s["cpu"] for s in states))
    reasons = {s["stopped_by"] for s in states} - {None}
    summary["stopped_by"] = "signal" if "signal" in reasons else (reasons.pop() if reasons else None)
    summary["workers"] = opts.workers
    summary["results"] = opts.results
    summary["pages_results"] = pages_path(opts.results) if opts.results else None
    if opts.results:
        write_run(opts.results, {**info, "summary": summary})
    return summary


def _run_workers(path: str, opts: ReplayOptions, t0_wall: float) -> list[dict]:
    ctx = multiprocessing.get_context("spawn")
    queue = ctx.Queue()
    procs = [ctx.Process(target=_worker, args=(path, opts, k, opts.workers, t0_wall, queue))
             for k in range(opts.workers)]
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)     # the workers stop themselves
    term = signal.signal(signal.SIGTERM, lambda *_: [os.kill(p.pid, signal.SIGTERM)
                                                      for p in procs if p.pid])
    try:
        for p in procs:
            p.start()
        states = [queue.get() for _ in procs]
        for p in procs:
            p.join()
    finally:
        signal.signal(signal.SIGINT, previous)
        signal.signal(signal.SIGTERM, term)
    if opts.results:
        _concat(opts.results, opts.workers)
        _concat(pages_path(opts.results), opts.workers)
    return states


def _concat(target: str, n: int) -> None:
    """Join the workers' parts ``target.partK`` (only part 0 has the header) into ``target``."""
    with open(target, "wb") as out:
        for k in range(n):
            part = f"{target}.part{k}"
            with open(part, "rb") as f:
                shutil.copyfileobj(f, out)
            os.remove(part)
