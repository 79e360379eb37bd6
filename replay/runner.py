"""Running a replay: a pre-flight check, one process (or N worker processes), signals, limits,
progress, the summary, its thresholds and the exit status.

With ``--workers N`` each worker plays the sessions whose id ≡ k (mod N). The workers start,
read the scenario and say they are ready; only then does the parent fix the common t0 (a
fraction of a second ahead) and send it to them, so no worker starts late whatever its start-up
took. SIGINT/SIGTERM (to the parent, or to all) stop the schedule, end the running sessions with
every request recorded, flush, and still produce the summary. A worker that ends before the
run does (a signal of its own, a crash, the OOM killer) is a dead worker: reported, the others
stopped, its statistics rebuilt from the rows it wrote (``salvage``), and the run ends
incomplete. Workers die with the parent (``lifeline``); their rows then stay in their part
files, which ``wagon recover`` merges.
"""
from __future__ import annotations

import asyncio
import contextlib
import gc
import itertools
import multiprocessing
import os
import signal
import socket
import ssl
import sys
import threading
import time
from array import array
from dataclasses import asdict, dataclass, replace
from datetime import datetime, timezone
from multiprocessing.connection import wait as wait_any
from typing import Any, Callable, Iterable, Mapping
from urllib.parse import urlsplit

import numpy as np
import uvloop

from ..formats.results import pages_path, write_run
from ..formats.scenario import Scenario, read_scenario
from ..formats.site import SiteSpec
from ..formats.topology import Topology, TopologyError, read_topology
from ..lifeline import die_with_parent
from .browser import Pace, Target
from .events import Call, Hooks, clock
from .http import closes_sent
from .http2 import prior_knowledge_refused
from .identity import IdentityError, SourcePool, loopback, source_pool
from .netpath import PacketPath, PathError, PathOptions, path_sources
from .limits import raise_nofile
from .parts import lost_path, part_paths, pending_run_path, publish, remove_parts
from .metrics import Tally
from .progress import Board, Progress
from .record import CsvRecorder, Stats, speedup_warnings
from .salvage import settle_part
from .scheduler import Scheduler, class_override
from .schedstat import RunQueueWait
from .script import BoundScript, ScriptError, load_script
from .tls import TLS_VERSIONS, TlsConfig, TlsFailed, check_handshake
from .thresholds import Threshold, ThresholdError, check, parse_threshold
from .walltime import expected_wall_time
from .watchdog import BEATS, BOUND_S, Loss, Watchdog, Watched, beat, cause_of_exit

__all__ = ["ReplayOptions", "replay", "ReplayError", "TargetUnreachable", "WorkerDied",
           "estimate_connections", "exit_status", "EXIT_OK", "EXIT_THRESHOLDS",
           "EXIT_INCOMPLETE", "EXIT_UNREACHABLE"]

LIVE_EVERY = 1.0            # seconds between a process's reports to the live view
START_MARGIN = 0.25         # seconds between fixing t0 and the first possible session start
PREFLIGHT_S = 2.0           # the pre-flight connect gives up after this long
CLOSE_WAIT = 1.0            # at the end, clients' FINs still on their way get this (+ R/2)

# complete, within its thresholds; the pre-flight connect failed (nothing was replayed);
# complete, but a --fail-on threshold failed; cut short by a signal, or a worker died
from ..exits import EXIT_BAD_INPUT, EXIT_INCOMPLETE, EXIT_OK, EXIT_THRESHOLDS, EXIT_UNREACHABLE  # noqa: E402,E501


class ReplayError(ValueError):
    """A replay that cannot start (bad target, unreadable scenario, bad option); ``status`` is
    the exit status it stands for."""

    status = EXIT_BAD_INPUT


class TargetUnreachable(ReplayError):
    status = EXIT_UNREACHABLE


class WorkerDied(ReplayError):
    status = EXIT_INCOMPLETE


@dataclass(frozen=True)
class ReplayOptions:
    target: str
    results: str | None = None
    workers: int = 1
    protocol: str | None = None
    emulation: bool = True
    connect_timeout: float = 10.0
    timeout: float = 30.0                      # no byte for this long: a timeout
    request_timeout: float | None = None       # optional cap on a whole request
    follow_redirects: bool = True
    status_marks: bool = True                  # ask a built site for the logged statuses
                                               # (site.status_url); off: the target answers
    fail_on: tuple[str, ...] = ("errors>1%",)
    max_time: float | None = None
    warmup: float = 0.0                        # first seconds left out of the statistics
    cooldown: float = 0.0                      # last seconds before the planned end left out
    progress: bool = False                     # a progress line on stderr (replay.progress)
    progress_every: float = 2.0                # seconds between progress lines
    identity: bool = True                      # each user its own address, agent, referer,
                                               # cookies (replay.identity)
    source_addresses: str | None = None        # a CIDR or list (non-loopback targets)
    network: str = "client"                    # "client": emulated in this process
                                               # (replay.emulation); "packet": every packet
                                               # through its client's path (replay.netpath)
    loss: float = 0.0                          # packet: loss of classes that give none
    queue_ms: float = 200.0                    # packet: each link's queue, in its time
    seed: int = 0                              # packet: the losses' random stream
    topology: str | None = None                # packet: a topology file (formats.topology)
    topology_links: Mapping[str, Mapping[str, Any]] | None = None  # keys set on its links
    path_block: str | None = None              # packet: the path's client block (set by the
    path_shift: int = 0                        # run) and its classes' spacing
    ca_file: str | None = None                 # HTTPS: the CAs that verify the server
    insecure: bool = False                     # HTTPS: no verification (curl -k)
    tls_version: str | None = None             # HTTPS: the highest TLS version (1.2, 1.3)
    watchdog: float = BOUND_S                  # a worker or relay silent this long is lost
    objects: str = "paced"                     # paced: a click's objects when the log placed
                                               # them (object_delays); eager: at once
    script: str | None = None                  # a user's script: bodies, logins, checks
                                               # (replay.script)
    dashboard: str | None = None               # the live view's [HOST:]PORT (replay.dashboard)
    dashboard_hold: float = 0.0                # seconds it serves the final figures after


OBJECTS = ("paced", "eager")        # --objects
DEFAULT_PORTS = {"http": 80, "https": 443}


def _target(url: str) -> tuple[str, int, str, str]:
    """Host, port, Host header and path prefix of ``--target`` (``http://h:p/shop/``: every
    request goes under ``/shop``)."""
    try:
        u = urlsplit(url)
        port = DEFAULT_PORTS.get(u.scheme) if u.port is None else u.port
    except ValueError as e:
        raise ReplayError(f"--target {url!r}: {e}") from None
    if u.scheme not in DEFAULT_PORTS or not u.hostname:
        raise ReplayError(f"--target {url!r}: give an http://HOST[:PORT]/[PREFIX/] or "
                          "https://... URL")
    if port == 0:
        raise ReplayError(f"--target {url!r}: port 0 is no server's port")
    if "@" in u.netloc:     # it would go out in every Host header, and no request uses it
        raise ReplayError(f"--target {url!r}: a target has no user name or password (wagon "
                          "sends no credentials)")
    if u.query or u.fragment:
        raise ReplayError(f"--target {url!r}: a target has no query or fragment (the "
                          "scenario's URLs carry their own)")
    return u.hostname, port, u.netloc, u.path.rstrip("/")


def sources_for(opts: ReplayOptions) -> SourcePool | None:
    """Where the sessions connect from (None: ``identity`` off); ReplayError for bad
    ``source_addresses``."""
    if not opts.identity:
        if opts.source_addresses:
            raise ReplayError("--source-addresses goes with identity (not --no-identity)")
        return None
    if opts.path_block:
        return path_sources(opts.path_block, opts.path_shift)
    try:
        return source_pool(_target(opts.target)[0], opts.source_addresses)
    except IdentityError as e:
        raise ReplayError(str(e)) from None


def tls_for(opts: ReplayOptions) -> TlsConfig | None:
    """How the replay speaks TLS (None: an http:// target); ReplayError for TLS options
    without it, or a CA file that cannot be read."""
    https = urlsplit(opts.target).scheme == "https"
    if not https:
        if opts.ca_file or opts.insecure or opts.tls_version:
            raise ReplayError("--ca-file, --insecure and --tls-version go with an https:// "
                              "--target")
        return None
    if opts.tls_version is not None and opts.tls_version not in TLS_VERSIONS:
        raise ReplayError(f"--tls-version {opts.tls_version!r}: use {' or '.join(TLS_VERSIONS)}")
    config = TlsConfig(_target(opts.target)[0], opts.ca_file, opts.insecure, opts.tls_version)
    try:
        config.context(())
    except (OSError, ssl.SSLError) as e:
        raise ReplayError(f"--ca-file {opts.ca_file}: {getattr(e, 'strerror', None) or e}") \
            from None
    return config


def identity_info(sc: Scenario, pool: SourcePool | None) -> dict | None:
    """What the summary says of how users looked to the server."""
    if pool is None:
        return None
    return {"sources": pool.describe, "agents": [a["family"] for a in sc.agents],
            "warning": pool.warning}


def check_network(opts: ReplayOptions) -> None:
    """ReplayError for a ``network`` mode that cannot go with the other options."""
    if opts.network not in NETWORK_MODES:
        raise ReplayError(f"--network {opts.network!r}: use {' or '.join(NETWORK_MODES)}")
    if not 0 <= opts.loss < 1:
        raise ReplayError(f"--loss {opts.loss:g}: a probability below 1")
    if not opts.queue_ms > 0:
        raise ReplayError(f"--queue-ms {opts.queue_ms:g}: must be positive")
    if opts.network != "packet":
        if opts.loss or opts.topology:
            raise ReplayError(f"{'--loss' if opts.loss else '--topology'} needs --network "
                              "packet (in-process emulation has no packets or links)")
        return
    if not opts.emulation:
        raise ReplayError("--network packet emulates the network: not with --no-emulation")
    if not opts.identity or opts.source_addresses:
        raise ReplayError("--network packet gives every session its own address in the "
                          "path's range: not with --no-identity or --source-addresses")
    if not loopback(_target(opts.target)[0]):
        raise ReplayError(f"--target {opts.target}: --network packet reaches servers on this "
                          "machine's loopback (127.0.0.0/8) through the emulated path")


def preflight(url: str, connect_timeout: float, tls: TlsConfig | None = None,
              http2: bool = False) -> None:
    """One TCP connect to the target (and TLS handshake, or HTTP/2's preface in plain text
    for ``http2`` browsers), within PREFLIGHT_S: a target with nothing listening, whose
    certificate does not verify, or without HTTP/2 (h2 in ALPN, or h2c) for ``http2``
    browsers, is found out at once, not after the run."""
    host, port, _, _ = _target(url)
    limit = min(PREFLIGHT_S, connect_timeout)
    where = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"     # an IPv6 address
    try:
        with socket.create_connection((host, port), timeout=limit) as sock:
            if tls is not None:
                check_handshake(sock, tls, http2)
            elif http2 and (why := prior_knowledge_refused(sock)):
                raise TargetUnreachable(f"--target {url}: no HTTP/2 without TLS (h2c, prior "
                                        f"knowledge) there: {why}; give an https:// target "
                                        "or an HTTP/1.x protocol")
    except TlsFailed as e:
        raise TargetUnreachable(f"--target {url}: {e.args[1]}") from None
    except TimeoutError:
        raise TargetUnreachable(f"--target {url}: no answer from {where} within "
                                f"{limit:g} s") from None
    except OSError as e:
        raise TargetUnreachable(f"--target {url}: cannot connect to {where} "
                                f"({e.strerror or e})") from None


def speaks_h2(sc: Scenario, opts: ReplayOptions) -> bool:
    """Does a browser of the run (its classes, or ``--protocol``) speak HTTP/2?"""
    return any(c.protocol.http2 for c in class_override(sc.classes, opts.protocol))


def estimate_connections(sc: Scenario, protocol: str | None = None) -> int:
    """Peak connections the run would hold: sessions overlapping (from their think times) × the
    connections of their class (``protocol``: ``--protocol``), a lower bound since transfers
    add time."""
    per_class = [c.protocol.sockets for c in class_override(sc.classes, protocol)]
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


NETWORK_MODES = ("client", "packet")
PLANNED_STOPS = frozenset(("max_time", "duration"))  # ends the user asked for, not cuts


def steady_end(sc: Scenario) -> float | None:
    """When a stationary scenario (``wagon synth --steady``) ends, in the run's seconds: its
    duration, sped up; None for others, which play until their last session ends."""
    o = sc.header.get("options") or {}
    if not o.get("steady") or not o.get("duration"):
        return None
    return float(o["duration"]) / sc.speedup


def measured_window(sc: Scenario, opts: ReplayOptions) -> tuple[float, float | None]:
    """The run's seconds [from, to) its statistics measure: after ``warmup``, and before the
    last ``cooldown`` seconds of its planned end (``max_time`` or a steady scenario's end; to
    None: to the end). ReplayError when the options leave nothing to measure."""
    if opts.warmup < 0 or opts.cooldown < 0:
        raise ReplayError("--warmup and --cooldown are seconds, at least 0")
    ends = [e for e in (opts.max_time, steady_end(sc)) if e is not None]
    if opts.cooldown and not ends:
        raise ReplayError("--cooldown needs a planned end to count back from: --max-time, or a "
                          "scenario of wagon synth --steady")
    end = min(ends, default=None)
    hi = end - opts.cooldown if opts.cooldown else None
    if end is not None and opts.warmup >= (hi if hi is not None else end):
        raise ReplayError(f"--warmup {opts.warmup:g} s and --cooldown {opts.cooldown:g} s leave "
                          f"nothing of the run's {end:g} s to measure")
    return opts.warmup, hi


def exit_status(summary: dict) -> int:
    """0 for a run that ran as planned (to its end, or to ``--max-time``) within its
    thresholds; EXIT_INCOMPLETE only for an unplanned cut (a signal, a lost process)."""
    if summary.get("dead_workers") or summary.get("dead_processes") or not (summary["complete"] or
                                           summary.get("stopped_by") in PLANNED_STOPS):
        return EXIT_INCOMPLETE
    if any(t["failed"] for t in summary["thresholds"]):
        return EXIT_THRESHOLDS
    return EXIT_OK


def _to_stderr(kind: str, line: str) -> None:
    print(line, file=sys.stderr)


def _first_of_kind(tell: Callable[[str, str], None]) -> Callable[[str, str], None]:
    """``tell`` (kind, line) only for the first line of each kind: the run says each kind of
    script failure once (the summary counts them all)."""
    said: set[str] = set()

    def first(kind: str, line: str) -> None:
        if kind not in said:
            said.add(kind)
            tell(kind, line)
    return first


def _script_failures(site: SiteSpec, tell: Callable[[str, str], None]
                     ) -> Callable[[Call, str], None]:
    """A ``script_failed`` subscriber: each failure's kind and line, naming the script's page
    and the URL that answered, told to ``tell`` (``_first_of_kind``)."""
    def failed(call: Call, why: str) -> None:
        tell(call.error, f"wagon: script: {call.error} on {site.page_methods[call.page]} "
             f"{site.page_urls[call.page]} (answered at {call.method} {call.url}): {why} "
             "(the first; the summary counts them all)")
    return failed


def _pace(sc: Scenario, opts: ReplayOptions) -> Callable[[int], Pace] | None:
    """With ``--objects paced`` and a scenario that has ``object_delays``: for each session,
    when its clicks' objects are due after their page (``Scenario.object_offsets``)."""
    if opts.objects != "paced" or sc.object_delays is None:
        return None

    def session(sid: int) -> Pace:
        rng = sc.pacing(sid)
        return lambda objects: sc.object_offsets(objects, rng).tolist()
    return session


# ---- one process's part of the run ---------------------------------------------------------
async def play(sc: Scenario, opts: ReplayOptions, worker: int, workers: int, t0_wall: float,
                results: tuple[str, str] | None, control=None, stop=None,
                board: Board | None = None, script: BoundScript | None = None,
                tell: Callable[[str, str], None] = _to_stderr) -> dict:
    """Play this process's sessions; ``control``: the parent's pipe (a worker), whose
    ("stop", why) messages, or closing, stop the run, and where its progress goes; ``stop``:
    another such pipe (the watchdog's alarm, in a process without parent); ``board``: where
    its progress goes in a process without parent; ``script``: the run's script, loaded
    once per process (``bound_script``); ``tell``: where the first script failure of each
    kind goes, (kind, line)."""
    loop = asyncio.get_running_loop()
    t0 = clock() + (t0_wall - time.time())
    hooks = Hooks()
    stats = Stats(t0, measured_window(sc, opts))
    stats.subscribe(hooks)
    files = [open(p, "w", newline="") for p in results] if results else []
    recorder = (CsvRecorder(files[0], files[1], t0, [c.name for c in sc.classes])
                if files else None)
    if recorder is not None:
        recorder.subscribe(hooks)
    host, port, netloc, prefix = _target(opts.target)
    classes = class_override(sc.classes, opts.protocol)
    target = Target(host, port, netloc, opts.connect_timeout, opts.timeout or None,
                    opts.request_timeout, hooks, sc.site,
                    itertools.count(max(worker, 0) * 10**9),
                    opts.emulation and opts.network == "client",
                    opts.follow_redirects, tuple(a["user_agent"] for a in sc.agents),
                    sources_for(opts), prefix, tls_for(opts), script, opts.status_marks,
                    sc.stream_seed, sc.statuses_drawn)
    hooks.script_failed.append(_script_failures(sc.site, _first_of_kind(tell)))
    mine = (s for s in sc.sessions() if workers <= 1 or s.id % workers == worker)
    sched = Scheduler(target, classes, mine, t0, hooks, _pace(sc, opts))
    if threading.current_thread() is threading.main_thread():   # not in a Dask worker's task
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, sched.halt, "signal")
    if opts.max_time is not None:
        loop.call_later(t0 + opts.max_time - clock(), sched.halt, "max_time")
    end = steady_end(sc)
    if end is not None:
        loop.call_later(t0 + end - clock(), sched.halt, "duration")
    pipes = [c for c in (control, stop) if c is not None]
    for c in pipes:
        loop.add_reader(c.fileno(), _on_control, c, sched)
    report = (_progress_reporter(hooks, stats, t0, opts, control or board)
              if reporting(opts) else None)
    keeper = asyncio.ensure_future(_housekeeping(stats, recorder, report, report_every(opts)))
    try:
        cpu0, began = time.process_time(), clock()
        await sched.run()
    finally:
        for c in pipes:
            loop.remove_reader(c.fileno())
        keeper.cancel()
        if recorder is not None:
            recorder.flush()
        for f in files:
            f.close()
        if report is not None:
            report(final=True)
    state = stats.state()
    # until the stop when there was one (what follows is ending the sessions, not the run's)
    state["duration"] = max((clock() if sched.stop_at is None else sched.stop_at) - t0, 0.0)
    state["cpu"] = (time.process_time() - cpu0) / max(clock() - began, 1e-3)
    state["stopped_by"] = sched.stopped.result() if sched.stopped.done() else None
    await closes_sent(CLOSE_WAIT + max((c.network.rtt_ms for c in classes), default=0) / 2000)
    return state


@contextlib.contextmanager
def no_full_collections():
    """Put off full (oldest-generation) garbage collections until the run ends: with 10,000
    sessions held, one stops the event loop for ~0.4 s and starts hundreds of sessions late.
    Entered before t0 is fixed: the first collection of a big heap (``wagon demo`` replays in
    the process that fitted) takes longer than START_MARGIN and made the first sessions late.
    Young collections still run, and the engine leaves little cyclic garbage to old age (a
    connection drops its parser, which points back to it, when idle or closed)."""
    gc.collect()
    gc.freeze()                              # what exists now is never scanned again
    young, middle, full = gc.get_threshold()
    gc.set_threshold(young, middle, 1 << 30)
    try:
        yield
    finally:
        gc.set_threshold(young, middle, full)
        gc.unfreeze()


def _on_control(control, sched: Scheduler) -> None:
    try:
        _, why = control.recv()
    except (EOFError, OSError):
        why = "signal"                                 # the parent is gone
    sched.halt(why)


def reporting(opts: ReplayOptions) -> bool:
    """Do the run's processes report their progress (to the console line, the live view)?"""
    return opts.progress or opts.dashboard is not None


def report_every(opts: ReplayOptions) -> float:
    """Seconds between a process's progress reports: the live view's refresh at most."""
    return min(opts.progress_every, LIVE_EVERY) if opts.dashboard else opts.progress_every


def board_for(opts: ReplayOptions, t0_wall: float, view=None) -> Board | None:
    """Where the run's progress is shown: the console line unless ``--quiet``, ``view``."""
    return Board(t0_wall, opts.progress_every, line=opts.progress, view=view) \
        if reporting(opts) else None


def _progress_reporter(hooks: Hooks, stats: Stats, t0: float, opts: ReplayOptions,
                       to) -> Callable[..., None]:
    """Collectors of the run's progress on ``hooks`` (``Progress``; with the live view, a
    ``metrics.Tally`` and ``stats``' generator histograms too) and the function that reports
    them: to the worker's pipe ``to`` (the parent shows the sum), or to this process's
    ``Board``."""
    progress = Progress()
    progress.subscribe(hooks)
    tally = Tally() if opts.dashboard else None
    if tally is not None:
        tally.subscribe(hooks)
    cpu0 = time.process_time()

    def state() -> dict:
        st = progress.state()
        if tally is not None:
            st["live"] = {"at": clock() - t0, "cpu_s": time.process_time() - cpu0,
                          "tally": tally.state(), "start_lag": stats.h["start_lag"].state(),
                          "loop_lag": stats.h["loop_lag"].state()}
        return st
    if not isinstance(to, Board):
        return lambda final=False: _send(to, ("progress", state()))

    def show(final: bool = False) -> None:
        to.put(0, state())
        to.show(final)
    return show


async def _housekeeping(stats: Stats, recorder: CsvRecorder | None,
                        report: Callable[[], None] | None, every: float) -> None:
    """Flush once a second; sample the event loop's lag every 0.1 s (with the CPU time this
    process used meanwhile and the time its threads waited for a CPU, to tell its own stalls from
    others'); report progress. After a stall the ticks start again from now: one stall is one
    sample, not one per tick missed."""
    tick = last_flush = last_report = clock()
    cpu, run_queue = time.process_time(), RunQueueWait()
    waited = run_queue()
    while True:
        tick += 0.1
        await asyncio.sleep(max(tick - clock(), 0))
        was, waited_before = cpu, waited
        cpu = time.process_time()
        waited, now = run_queue.with_clock(clock)
        stats.loop_lag(max(now - tick, 0.0), cpu - was,
                       None if None in (waited, waited_before) else waited - waited_before)
        if now - tick > 0.1:                     # ticks were missed: start again from now
            tick = now
        if report is not None and now - last_report >= every:
            report()
            last_report = now
        if now - last_flush < 1.0:
            continue
        if recorder is not None:
            recorder.flush()
        last_flush = now


def _witness(opts: ReplayOptions) -> str:
    """Where the run's guardian writes when the run died (none without results)."""
    return lost_path(opts.results) if opts.results else ""


def run_info(path: str, sc: Scenario, opts: ReplayOptions, t0_wall: float) -> dict:
    """What the run file says of a run before its summary exists (written at once)."""
    info = {"scenario": path, "target": opts.target,
            "t0": datetime.fromtimestamp(t0_wall, timezone.utc).isoformat(timespec="microseconds"),
            "t0_unix": t0_wall, "classes": [c.name for c in sc.classes],
            "speedup": sc.speedup, "model": sc.header.get("model"),
            "options": asdict(opts), "identity": identity_info(sc, sources_for(opts)),
            "summary": None}
    if opts.results:
        write_run(opts.results, info, pending_run_path(opts.results))
    return info


def prepare(path: str, opts: ReplayOptions
            ) -> tuple[Scenario, list[Threshold], BoundScript | None]:
    """Check the options, read the scenario and load the script (None: none) before anything
    is played."""
    _target(opts.target)
    try:
        thresholds = [parse_threshold(t) for t in opts.fail_on]
    except ThresholdError as e:
        raise ReplayError(str(e)) from None
    if opts.workers < 1:
        raise ReplayError("--workers must be at least 1")
    if opts.objects not in OBJECTS:
        raise ReplayError(f"--objects {opts.objects!r}: one of {', '.join(OBJECTS)}")
    if not opts.watchdog > 0:
        raise ReplayError(f"--watchdog {opts.watchdog:g}: seconds, more than 0")
    if opts.dashboard_hold and opts.dashboard is None or not opts.dashboard_hold >= 0:
        raise ReplayError("--dashboard-hold is seconds (at least 0) of a --dashboard")
    check_network(opts)
    sources_for(opts)
    tls_for(opts)
    sc = read_scenario(path)
    measured_window(sc, opts)
    script = bound_script(sc, opts)
    _say_unused(script)
    return sc, thresholds, script


def bound_script(sc: Scenario, opts: ReplayOptions) -> BoundScript | None:
    """The run's script bound to the scenario's site (ReplayError: one line): its module runs
    once per process that plays (a side effect at import happens once in a one-process run,
    once in the parent and in each worker with ``--workers``)."""
    if opts.script is None:
        return None
    try:
        return load_script(opts.script, sc.site)
    except ScriptError as e:
        raise ReplayError(str(e)) from None


def _say_unused(bound: BoundScript | None) -> None:
    """Say once, before the run, which of the script's pages the scenario's site lacks."""
    if bound is not None and bound.unused:
        print(f"wagon: script: {len(bound.unused)} of its pages are not pages of the "
              f"scenario's site, skipped: {', '.join(bound.unused)}", file=sys.stderr)


@contextlib.contextmanager
def live_view(opts: ReplayOptions, sc: Scenario):
    """The run's live view (``--dashboard``; None without), serving from before the run until
    its summary, then ``dashboard_hold`` seconds more without holding the run up."""
    if opts.dashboard is None:
        yield None
        return
    from . import dashboard             # lazy: aiohttp (0.4 s to import) only for --dashboard
    try:
        host, port = dashboard.parse_address(opts.dashboard)
        view = dashboard.View(host, port, [c.name for c in sc.classes], sc.site.page_urls)
        url = view.start()
    except dashboard.DashboardError as e:
        raise ReplayError(str(e)) from None
    print(f"wagon: live view at {url}", file=sys.stderr, flush=True)
    if not dashboard.is_loopback(host):
        print(f"wagon: the live view listens on {host}: whoever reaches it sees the run's "
              "figures (it asks for no password)", file=sys.stderr, flush=True)
    try:
        yield view
    finally:
        view.close(opts.dashboard_hold if view.summary is not None else 0.0)


# ---- the whole run -------------------------------------------------------------------------
def replay(path: str, opts: ReplayOptions) -> dict:
    """Play the scenario at ``path`` against ``opts.target``; returns the summary (its exit
    status: ``exit_status``). ReplayError (with its ``status``) when it cannot start."""
    sc, thresholds, script = prepare(path, opts)
    with live_view(opts, sc) as view:
        summary = _replay(path, sc, opts, thresholds, view, script)
        if view is not None:
            view.ended(summary)
    return summary


def _replay(path: str, sc: Scenario, opts: ReplayOptions, thresholds: list[Threshold],
            view, script: BoundScript | None) -> dict:
    """``replay`` once the options are checked; ``view``: the live view (None: none);
    ``script``: the run's, played by this process when it plays alone."""
    http2 = speaks_h2(sc, opts)
    if opts.network != "packet":
        preflight(opts.target, opts.connect_timeout, tls_for(opts), http2)
        with Watchdog(opts.watchdog, opts.workers > 1, _witness(opts)) as dog:
            played = _play_all(path, sc, opts, dog, view, script)
        return finish(*played, opts, thresholds, lost=dog.lost.values())
    networks = [c.network for c in sc.classes]
    names = [(c.name, c.network.name) for c in sc.classes]
    path_opts = PathOptions(opts.queue_ms, loss=opts.loss, seed=opts.seed,
                            topology=_topology(opts.topology, names, opts.topology_links),
                            beat_s=opts.watchdog / BEATS)
    try:
        with PacketPath(networks, path_opts, names) as net:
            opts = replace(opts, path_block=str(net.block), path_shift=net.shift)
            with net.inside():
                preflight(opts.target, opts.connect_timeout, tls_for(opts), http2)
                with Watchdog(opts.watchdog, True, _witness(opts)) as dog:
                    dog.watch(Watched("relay", "relay", net.relay.pid, net.heartbeat,
                                      net.relay.poll))
                    played = _play_all(path, sc, opts, dog, view, script)
    except PathError as e:
        raise ReplayError(str(e)) from None
    return finish(*played, opts, thresholds, lost=dog.lost.values(), extra={"network": {
        "mode": "packet", "clients": net.sources().describe, "block": str(net.block),
        "class_shift": net.shift, "relay": net.report}})


def _topology(path: str | None, names: list[tuple[str, str]],
              links: Mapping[str, Mapping[str, Any]] | None) -> Topology | None:
    """The topology file at ``path`` (None: none) with ``links``' keys set, every name in it
    one of the scenario's classes or networks (ReplayError: one line)."""
    if path is None:
        return None
    try:
        topology = read_topology(path, links)
    except TopologyError as e:
        raise ReplayError(str(e)) from None
    known = {n for pair in names for n in pair}
    named = {c for link in topology.links for c in link.classes} | set(topology.access)
    if named - known:
        raise ReplayError(f"{path}: {sorted(named - known)[0]!r} is none of the scenario's "
                          f"classes or networks ({', '.join(sorted(known))})")
    return topology


def expected_text(sc: Scenario, opts: ReplayOptions) -> str:
    """The run's expected wall time as ``opts`` play it (``walltime``), and the planned stop
    that comes first if one does (--max-time, a steady scenario's end)."""
    wall = expected_wall_time(sc, class_override(sc.classes, opts.protocol), opts.emulation,
                              opts.objects == "paced")
    stops = [(v, k) for k, v in (("--max-time", opts.max_time),
                                 ("the steady scenario's end", steady_end(sc))) if v is not None]
    stop, name = min(stops, default=(None, None))
    if stop is not None and stop < wall.end_s:
        return f"{wall.text()}; {name} stops it at {stop:,.1f} s"
    return wall.text()


def _play_all(path: str, sc: Scenario, opts: ReplayOptions, dog: Watchdog, view=None,
              script: BoundScript | None = None) -> tuple[list[dict], list[str], dict]:
    """Play in this process (with ``script``, loaded already) or in ``opts.workers``
    processes watched by ``dog`` (``view``: the live view they report to): their states, the
    dead workers and the run's info. With
    progress, the expected wall time first (the target has answered: the run starts)."""
    info: dict = {}
    if opts.progress:
        print(f"wagon replay: {expected_text(sc, opts)}", file=sys.stderr, flush=True)

    def started(t0_wall: float) -> None:
        info.update(run_info(path, sc, opts, t0_wall))

    if opts.results:
        remove_parts(opts.results)
    if opts.workers == 1:
        raise_nofile()
        results = part_paths(opts.results, 0) if opts.results else None
        with no_full_collections():
            t0_wall = time.time() + START_MARGIN
            started(t0_wall)
            states, dead = [uvloop.run(play(sc, opts, -1, 1, t0_wall, results,
                                            stop=dog.alarm, script=script,
                                            board=board_for(opts, t0_wall, view)))], []
    else:
        states, dead = _Workers(path, opts, sc, dog, view).run(started)
    return states, dead, info


def finish(states: list[dict], dead: list[str], info: dict, opts: ReplayOptions,
            thresholds: list[Threshold], extra: dict | None = None,
            lost: Iterable[Loss] = ()) -> dict:
    """The merged summary of the processes' ``states`` (plus ``extra`` keys), published with
    the rows of the ``opts.workers`` processes' parts (``parts.publish``); ``lost``: the
    processes the run lost (``watchdog``)."""
    merged = Stats.merged(states)
    reasons = {s["stopped_by"] for s in states} - {None}
    stopped_by = "signal" if "signal" in reasons else (reasons.pop() if reasons else None)
    if dead and stopped_by is None:
        stopped_by = "worker_died"
    summary = merged.summary(max((s["duration"] for s in states), default=0.0),
                             max((s["cpu"] for s in states if s["cpu"] is not None),
                                 default=None),
                             complete=stopped_by is None)
    if not opts.emulation:                # else the exchanges hold the scenario's networks
        summary["warnings"] += speedup_warnings(summary, info.get("speedup", 1.0))
    summary["thresholds"] = check(summary, thresholds)
    summary["stopped_by"] = stopped_by
    summary["dead_workers"] = dead
    summary["dead_processes"] = [loss.report() for loss in lost]
    summary["workers"] = opts.workers
    summary["identity"] = info.get("identity")
    summary["results"] = opts.results
    summary["pages_results"] = pages_path(opts.results) if opts.results else None
    summary.update(extra or {})
    if opts.results:
        publish(opts.results, opts.workers, {**info, "summary": summary})
    return summary


def _send(conn, message) -> bool:
    """Send to the parent; False when it is gone (its pipe closed)."""
    try:
        conn.send(message)
    except (BrokenPipeError, ConnectionResetError):
        return False
    return True


def _worker(path: str, opts: ReplayOptions, k: int, n: int, conn, parent: int, beats) -> None:
    """A worker process: get ready, wait for the common t0, play, send the statistics, with a
    heartbeat on ``beats`` all along (``watchdog``). It gets SIGTERM when the parent dies (its
    loop stops the run and flushes its rows); a parent that is gone ends it quietly, its rows
    in its part files."""
    die_with_parent(parent, signal.SIGTERM)
    beat(lambda: beats.send_bytes(b"."), opts.watchdog / BEATS)
    signal.signal(signal.SIGINT, signal.SIG_IGN)     # until its loop handles it

    def tell(kind: str, line: str) -> None:          # the parent says it once for the run
        _send(conn, ("script_failed", (kind, line)))
    try:
        sc = read_scenario(path)
        script = bound_script(sc, opts)
        raise_nofile()
        results = part_paths(opts.results, k) if opts.results else None
        with no_full_collections():
            _send(conn, ("ready", None))
            t0_wall = conn.recv()
            state = uvloop.run(play(sc, opts, k, n, t0_wall, results, conn, script=script,
                                    tell=tell))
        sent = _send(conn, ("done", state))
    except EOFError:                             # the parent died before the start
        sent = False
    except Exception as e:                       # reported by the parent, in one line
        _send(conn, ("error", f"{type(e).__name__}: {e}"))
        sent = False
    if not sent:
        sys.exit(1)


class _Workers:
    """The parent's side of ``--workers``: start, synchronise, forward signals, collect."""

    def __init__(self, path: str, opts: ReplayOptions, sc: Scenario, dog: Watchdog,
                 view=None) -> None:
        self.path, self.opts, self.sc, self.dog, self.view = path, opts, sc, dog, view
        ctx = multiprocessing.get_context("spawn")
        self.conns, self.procs, self.beats = [], [], []
        for k in range(opts.workers):
            mine, theirs = ctx.Pipe()
            beats, beating = ctx.Pipe(duplex=False)
            self.conns.append(mine)
            self.beats.append((beats, beating))
            self.procs.append(ctx.Process(target=_worker, args=(path, opts, k, opts.workers,
                                                                theirs, os.getpid(), beating)))
        self.dead: dict[int, str] = {}
        self.died_at: dict[int, float] = {}          # wall-clock time each death was seen
        self.t0_wall = 0.0
        self.interrupted = False
        self.playing = False
        self.board: Board | None = None              # the workers' progress, once they play
        self.tell = _first_of_kind(_to_stderr)       # the workers' first script failures

    def _stop_all(self, why: str) -> None:
        """Stop every live worker: through its pipe once it plays (it ends its sessions and
        sends its statistics), with SIGTERM before."""
        for k, p in enumerate(self.procs):
            if k in self.dead or not p.is_alive():
                continue
            if not self.playing:
                os.kill(p.pid, signal.SIGTERM)
                continue
            try:
                self.conns[k].send(("stop", why))
            except OSError:
                pass

    def _on_signal(self, *_) -> None:
        self.interrupted = True
        self._stop_all("signal")

    def _collect(self, want: str) -> dict[int, object]:
        """Wait for message ``want`` from every worker; a worker that dies meanwhile is
        recorded in ``dead`` and the others are stopped."""
        got: dict[int, object] = {}
        while len(got.keys() | self.dead.keys()) < len(self.procs):
            live = [k for k in range(len(self.procs)) if k not in got and k not in self.dead]
            ready = wait_any([self.conns[k] for k in live] + [self.dog.alarm] +
                             [self.procs[k].sentinel for k in live], timeout=0.5)
            if self.dog.alarm in ready and (why := self.dog.alarm.recv()[1]) != "worker_died":
                self._stop_all(why)                  # the relay is lost: the run stops
            for k in live:
                if self.conns[k] in ready or self.conns[k].poll():
                    try:
                        kind, value = self.conns[k].recv()
                    except (EOFError, OSError):
                        kind, value = "error", None
                    if kind == "progress":
                        if self.board is not None:
                            self.board.put(k, value)
                        continue
                    if kind == "script_failed":
                        self.tell(*value)
                        continue
                    if kind == want:
                        got[k] = value
                        if self._stopped_alone(want, value):
                            value["stopped_by"] = "worker_died"
                            self._died(k, "stopped by a signal of its own")
                        continue
                    self._died(k, value)
                elif self.procs[k].sentinel in ready:
                    self._died(k, None)
            if self.board is not None:
                self.board.show()
        return got

    def _stopped_alone(self, want: str, state) -> bool:
        """Did a worker end its run by a signal sent to it alone (not to the parent)?"""
        return want == "done" and state["stopped_by"] == "signal" and not self.interrupted

    def _died(self, k: int, why: str | None) -> None:
        self.died_at[k] = time.time()
        p = self.procs[k]
        p.join(5)
        how = why or self.dog.cause(f"worker {k}") or cause_of_exit(p.exitcode)
        self.dead[k] = f"worker {k}: {how}"
        self.dog.forget(f"worker {k}")
        self.dog.record(Loss("worker", f"worker {k}", p.pid, how))
        self._stop_all("worker_died")

    def run(self, started: Callable[[float], None]) -> tuple[list[dict], list[str]]:
        opts = self.opts
        previous = {s: signal.signal(s, self._on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
        try:
            for k, p in enumerate(self.procs):
                p.start()
                beats, beating = self.beats[k]
                beating.close()                      # the worker's alone: its death is EOF
                self.dog.watch(Watched("worker", f"worker {k}", p.pid, beats,
                                       lambda p=p: p.exitcode, death=False))
            self._collect("ready")
            if self.dead or self.interrupted:
                self._stop_all("signal")
                for p in self.procs:
                    p.join(10)
                why = "interrupted" if self.interrupted else "; ".join(self.dead.values())
                raise WorkerDied(f"the run did not start: {why}")
            t0_wall = self.t0_wall = time.time() + START_MARGIN
            self.board = board_for(opts, t0_wall, self.view)
            started(t0_wall)
            for c in self.conns:
                c.send(t0_wall)
            self.playing = True
            done = self._collect("done")
            states = list(done.values()) + [self._salvage(k) for k in self.dead
                                            if k not in done and opts.results]
            if self.board is not None:
                self.board.show(final=True)
            for p in self.procs:
                p.join(10)
        finally:
            for s, handler in previous.items():
                signal.signal(s, handler)
        return states, list(self.dead.values())

    def _salvage(self, k: int) -> dict:
        """The statistics of dead worker k, from the rows of its part files (``salvage``)."""
        due_by = self.died_at[k] - self.t0_wall
        return settle_part(self.sc, (k, len(self.procs)), due_by, _target(self.opts.target)[3],
                           *part_paths(self.opts.results, k),
                           measured_window(self.sc, self.opts))
