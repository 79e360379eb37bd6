"""``wagon replay --cluster``: one scenario played by the workers of a Dask cluster.

The sessions are split into deterministic segments exactly as ``--workers`` splits them
(segment k of n: the sessions whose id ≡ k mod n), one segment per worker process, each played
by ``runner.play`` on an event loop of its own. The scenario travels as bytes (the workers need
no shared disk). Every worker reads it and says it is ready; then this process measures each
clock against its own (bracketed readings, NTP-style), fixes t0 a fraction of a second ahead
on the scheduler's clock and sends each worker that instant on the worker's clock, so all start
together whatever their start-up took and however their clocks are set. The workers' rows come
back as data and are merged, with their statistics, by the same code as ``--workers``
(``runner.finish``, which publishes them: ``parts``); the summary reports each worker's clock offset.
With progress on, each segment's ``Progress`` states travel through a Dask queue and this
process shows their sum every ``progress_every`` seconds, as ``--workers`` does.
SIGINT/SIGTERM here stop every segment, which still ends with every request recorded.

The segments' workers are watched through Dask's own heartbeats (``watchdog``'s bound): a
worker the scheduler no longer lists (it died: its Nanny starts a new one elsewhere on the
cluster's books) or has not heard from for the bound (``last_seen``: stopped, frozen) is lost:
the run stops, a silent one is restarted by its Nanny (``Client.restart_workers``, which kills
it), and its segment is settled as a dead worker's (its rows were on the worker: every request
due by then is ``not_started``), named in ``dead_processes``.
"""
from __future__ import annotations

import dataclasses
import functools
import multiprocessing
import os
import signal
import tempfile
import threading
import time
import uuid
from typing import Callable

import uvloop
from distributed import Event, Queue, Variable, get_worker, wait
from distributed.comm import CommClosedError

from ..cluster import ClockOffset, clock_offsets, quiet_dask
from ..formats.scenario import read_scenario
from .limits import raise_nofile
from .parts import part_paths, remove_parts
from .progress import Board
from .runner import (START_MARGIN, ReplayError, ReplayOptions, WorkerDied, _target,
                     board_for, bound_script, finish, live_view, measured_window,
                     no_full_collections, play, preflight, prepare, run_info, speaks_h2, tls_for)
from .salvage import settle_part
from .watchdog import BEATS, Loss

__all__ = ["replay_on_cluster"]

READY_TIMEOUT_S = 120.0       # a worker that cannot read the scenario in this long is dead
RESTART_S = 1.0               # a silent worker's Nanny SIGKILLs it after 0.8 × this (a stopped
                              # one never handles its SIGTERM)


def _watch(stop: Event, done: threading.Event, control) -> None:
    """Forward the cluster's stop event to ``play``'s control pipe; a lost scheduler stops the
    segment too (nobody is left to collect it)."""
    while not done.is_set():
        try:
            stopped = stop.wait(timeout=0.5)
        except (OSError, TimeoutError, CommClosedError):
            stopped = not done.is_set()
        if stopped:
            control.send(("stop", "signal"))
            return


def _forward(conn, progress: Queue, k: int, done: threading.Event | None) -> None:
    """Put the segment's progress states (``play`` sends them through its control pipe) on the
    run's queue as (k, state), until ``done``; with ``done`` None, only what is waiting."""
    while done is None or not done.is_set():
        try:
            if not conn.poll(0.2):
                if done is None:
                    return
                continue
            kind, value = conn.recv()
            if kind == "progress":
                progress.put((k, value))
        except (EOFError, OSError, TimeoutError, CommClosedError):
            return                              # progress is a display: never fail the run


def _segment(scenario: bytes, opts: ReplayOptions, k: int, n: int,
             run: str) -> tuple[dict, bytes, bytes]:
    """A worker's task: play segment k of n; its statistics and its request and page rows."""
    # in the worker's own folder, which Dask removes with a lost worker (a LocalCluster's:
    # in wagon's scratch folder): a worker killed mid-run left it in TMPDIR
    with tempfile.TemporaryDirectory(prefix="wagon-segment-",
                                     dir=get_worker().local_directory) as d:
        path = os.path.join(d, "scenario.jsonl")
        with open(path, "wb") as f:
            f.write(scenario)
        sc = read_scenario(path)
        script = bound_script(sc, opts)
        raise_nofile()
        results = (os.path.join(d, "requests.csv"), os.path.join(d, "pages.csv"))
        ours, theirs = multiprocessing.Pipe()
        done = threading.Event()
        with no_full_collections():
            Queue(f"wagon-ready-{run}").put(k)
            t0_wall = Variable(f"wagon-t0-{run}").get(timeout=READY_TIMEOUT_S)[
                get_worker().address]
            threading.Thread(target=_watch, args=(Event(f"wagon-stop-{run}"), done, ours),
                             daemon=True).start()
            progress = Queue(f"wagon-progress-{run}")
            forward = threading.Thread(target=_forward, args=(ours, progress, k, done),
                                       daemon=True)
            forward.start()
            try:
                state = uvloop.run(play(sc, opts, k, n, t0_wall,
                                        results if opts.results else None, theirs,
                                        script=script))
            finally:
                done.set()
                forward.join()
            _forward(ours, progress, k, None)          # what came after the thread's last look
        if not opts.results:
            return state, b"", b""
        with open(results[0], "rb") as r, open(results[1], "rb") as p:
            return state, r.read(), p.read()


def _write(results: str, parts: dict[int, tuple[bytes, bytes]], n: int) -> None:
    """Each of the ``n`` segments' request and page rows as its part files (``finish``
    publishes them); a segment without rows (lost) gets empty ones."""
    for k in range(n):
        for path, data in zip(part_paths(results, k), parts.get(k, (b"", b""))):
            with open(path, "wb") as f:
                f.write(data)


def _offsets(sched: ClockOffset, workers: dict[str, ClockOffset]) -> list[dict]:
    return [{"worker": a, "clock_offset_ms": 1e3 * (c.offset_s - sched.offset_s),
             "uncertainty_ms": 1e3 * (c.rtt_s + sched.rtt_s) / 2}
            for a, c in sorted(workers.items())]


def replay_on_cluster(path: str, opts: ReplayOptions, client) -> dict:
    """Play the scenario at ``path`` on every worker of ``client``'s cluster (``replay``'s
    contract: the merged summary, ReplayError when it cannot start)."""
    sc, thresholds, _ = prepare(path, opts)
    if opts.network == "packet":
        raise ReplayError("--network packet emulates the path on this machine: not with "
                          "--cluster")
    with live_view(opts, sc) as view:
        summary = _on_cluster(path, sc, opts, thresholds, client, view)
        if view is not None:
            view.ended(summary)
    return summary


def _on_cluster(path: str, sc, opts: ReplayOptions, thresholds: list, client, view) -> dict:
    """``replay_on_cluster`` once the options are checked; ``view``: the live view."""
    preflight(opts.target, opts.connect_timeout, tls_for(opts), speaks_h2(sc, opts))
    with open(path, "rb") as f:
        scenario = f.read()
    addresses = sorted(client.scheduler_info()["workers"])
    n, run = len(addresses), uuid.uuid4().hex
    worker_opts = dataclasses.replace(opts, workers=n)
    stop, t0s = Event(f"wagon-stop-{run}", client=client), Variable(f"wagon-t0-{run}", client)
    futures = [client.submit(_segment, scenario, worker_opts, k, n, run, workers=[a],
                             allow_other_workers=False, pure=False)
               for k, a in enumerate(addresses)]
    previous = {s: signal.signal(s, lambda *_: stop.set()) for s in (signal.SIGINT,
                                                                     signal.SIGTERM)}
    try:
        _await_ready(client, Queue(f"wagon-ready-{run}", client), futures, stop)
        sched, clocks = clock_offsets(client)
        pids = client.run(os.getpid)
        t0_wall = time.time() + START_MARGIN
        t0s.set({a: t0_wall + clocks[a].offset_s for a in addresses})
        info = run_info(path, sc, worker_opts, t0_wall)
        show, board = None, board_for(opts, t0_wall, view)
        if board is not None:
            show = functools.partial(_follow, Queue(f"wagon-progress-{run}", client), board)
        got, lost = _gather(client, futures, addresses, stop, (opts.watchdog, sched.offset_s),
                            show)
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
    states = [state for state, _, _ in got.values()]
    if opts.results:
        remove_parts(opts.results)
        _write(opts.results, {k: (rows, pages) for k, (_, rows, pages) in got.items()}, n)
        window, prefix = measured_window(sc, opts), _target(opts.target)[3]
        states += [settle_part(sc, (k, n), at - t0_wall, prefix, *part_paths(opts.results, k),
                               window) for k, (at, _) in lost.items()]
    losses = [Loss("cluster worker", f"worker {k} ({addresses[k]})", pids.get(addresses[k]),
                   why) for k, (_, why) in sorted(lost.items())]
    return finish(states, [f"{x.name}: {x.cause}" for x in losses], info, worker_opts,
                  thresholds, {"cluster": {"scheduler": client.scheduler.address,
                                           "workers": _offsets(sched, clocks)}}, lost=losses)


def _silent(client, addresses: list[str], pending: set[int], bound: float,
            offset: float) -> dict[int, str]:
    """The pending segments whose worker Dask has lost (no longer listed) or not heard from
    for ``bound`` seconds (its ``last_seen``, on the scheduler's clock: ``offset`` from
    ours), with the cause."""
    workers = client.scheduler_info()["workers"]
    now, out = time.time() + offset, {}
    for k in pending:
        w = workers.get(addresses[k])
        if w is None:
            out[k] = "left the cluster (died: the Dask scheduler no longer lists it)"
        elif now - w["last_seen"] > bound:
            out[k] = f"silent for {now - w['last_seen']:.1f} s (no Dask heartbeat)"
    return out


def _gather(client, futures: list, addresses: list[str], stop: Event,
            watch: tuple[float, float], show: Callable[[bool], bool] | None
            ) -> tuple[dict[int, tuple], dict[int, tuple[float, str]]]:
    """Every segment's result as it comes, by k, and the segments lost (failed, or lost by
    Dask's heartbeats: ``_silent`` with ``watch``, its bound and the scheduler's clock offset)
    with when and why. A lost segment stops the others; a silent worker is restarted by its
    Nanny (which kills it). ``show`` shows the progress meanwhile (False: no more)."""
    got, lost = {}, {}
    bound, offset = watch
    pending = set(range(len(futures)))
    while pending:
        if show is not None and not show(False):
            show = None
        try:
            wait([futures[k] for k in pending], timeout=bound / BEATS,
                 return_when="FIRST_COMPLETED")
        except TimeoutError:
            pass
        for k in [k for k in pending if futures[k].done()]:
            pending.discard(k)
            try:
                got[k] = futures[k].result()
            except Exception as e:                # reported in the summary, in one line
                lost[k] = (time.time(), f"{type(e).__name__}: {e}")
                stop.set()
        for k, why in _silent(client, addresses, pending, bound, offset).items():
            pending.discard(k)
            lost[k] = (time.time(), why)
            stop.set()
            client.cancel(futures[k])
            quiet_dask()                          # named in the summary: not Dask's news
            if why.startswith("silent"):
                client.restart_workers([addresses[k]], timeout=RESTART_S, raise_for_error=False)
    if show is not None:
        show(True)
    return got, lost


def _await_ready(client, ready: Queue, futures: list, stop: Event) -> None:
    """Wait until every segment has read the scenario; a failed one ends the run unstarted.
    The queue's size is polled: a ``get`` that times out is an error the scheduler logs,
    with its traceback, on a ``local:N`` run's terminal."""
    deadline = time.monotonic() + READY_TIMEOUT_S
    while ready.qsize() < len(futures):
        failed = [f for f in futures if f.status == "error"]
        if failed or stop.is_set() or time.monotonic() > deadline:
            stop.set()
            client.cancel(futures)
            why = (f"{type(failed[0].exception()).__name__}: {failed[0].exception()}" if failed
                   else "interrupted" if stop.is_set() else "a worker never got ready")
            raise WorkerDied(f"the run did not start: {why}")
        time.sleep(0.1)


def _follow(progress: Queue, board: Board, final: bool) -> bool:
    """Put the segments' progress states on ``board`` and show it (``final``: the last line,
    the summary's counts); False once the scheduler is gone (the results will say)."""
    try:
        for k, state in progress.get(batch=True):
            board.put(k, state)
    except (OSError, TimeoutError, CommClosedError):
        board.close()
        return False
    board.show(final=final)
    return True
