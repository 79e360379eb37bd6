"""Every process of a run is watched: heartbeats, and what a lost one costs the run.

Each process the parent starts (the replay's workers, the packet relay) sends a heartbeat, one
byte, every ``bound / BEATS`` seconds from a thread of its own (the relay from its loop), on a
pipe only it writes. The parent's ``Watchdog`` thread reads them all, every ``bound / BEATS``
seconds. A process is lost when it dies (its pipe reads EOF: the kernel closed it) or stays
silent for ``bound`` seconds (stopped by SIGSTOP, or frozen; before its first beat, while
Python starts, ``START_S``): a silent one is killed (SIGKILL works on a stopped process), so
nothing of it outlives the run. A process whose heartbeats say it is lagging (``!``: the
packet relay behind its packets' schedule) for a whole bound of them in a row is lost too: it
is alive, but the run it serves is no longer the one asked for. Each loss is kept with its
cause (killed by signal N, exit status N, silent for X s) and signalled on ``alarm``, a pipe the runner waits on: it stops the
run within 1.2 × the bound. The watchdog only detects and reports; what a loss does to the run
is the runner's.

A run with children (workers, relay) is also guarded: the same thread beats for the parent to
a ``lifeline.Guardian``, told every child's pid, which ends them (SIGTERM, then SIGKILL after
``lifeline.GRACE_S``) when the parent dies or goes silent, and then the silent parent. A run
that writes results has one even alone (``witness``): it writes when the parent died, which
``wagon recover`` counts the run's due sessions to.
"""
from __future__ import annotations

import os
import signal
import threading
import time
from dataclasses import asdict, dataclass
from multiprocessing.connection import Connection, Pipe, wait
from typing import Callable

from ..lifeline import Guardian

__all__ = ["BOUND_S", "BEATS", "Watched", "Loss", "Watchdog", "beat", "cause_of_exit"]

BOUND_S = 5.0      # a process silent this long is lost (``--watchdog``)
BEATS = 5          # heartbeats per bound: one missed beat, even four, is no loss
START_S = 30.0     # a process starting (Python importing wagon) has this long to beat first


@dataclass(frozen=True)
class Loss:
    """A process lost to the run: its kind (worker, relay), name, pid and why."""

    kind: str
    name: str
    pid: int | None
    cause: str

    def report(self) -> dict:
        """The summary's ``dead_processes`` entry."""
        return asdict(self)


@dataclass
class Watched:
    """A process the watchdog follows: its heartbeats come on ``beats`` (a Connection or a
    raw descriptor); ``exitcode`` gives its exit code once it ended (negative: a signal);
    ``death`` says whether its death is the watchdog's to report (the runner sees its
    workers' own)."""

    kind: str
    name: str
    pid: int
    beats: Connection | int
    exitcode: Callable[[], int | None]
    death: bool = True
    last: float = 0.0
    beating: bool = False       # it has beaten once (before, START_S applies)
    lagging: int = 0            # heartbeats in a row that said "lagging"


def cause_of_exit(code: int | None) -> str:
    """How a process ended, from its exit code (negative: the signal that killed it)."""
    if code is None:
        return "ended (status unknown)"
    return f"killed by signal {-code}" if code < 0 else f"exit status {code}"


def beat(send: Callable[[], object], every: float) -> None:
    """Start a daemon thread calling ``send`` every ``every`` seconds until ``send`` fails
    (the reader is gone)."""
    def run() -> None:
        while True:
            time.sleep(every)
            try:
                send()
            except (OSError, ValueError):
                return
    threading.Thread(target=run, name="wagon-heartbeat", daemon=True).start()


def _drain(beats: Connection | int) -> bytes | None:
    """The heartbeats waiting on ``beats``; None at EOF (the writer died or closed)."""
    try:
        if isinstance(beats, Connection):
            got = b""
            while beats.poll():
                got += beats.recv_bytes()
            return got
        return os.read(beats, 4096) or None
    except (EOFError, OSError):
        return None


def _lagging(w: Watched, beats: bytes) -> int:
    """``w``'s heartbeats in a row that said "lagging", ``beats`` read after the others."""
    calm = beats.rfind(b".")
    return beats.count(b"!") + w.lagging if calm < 0 else len(beats) - calm - 1


class Watchdog:
    """The parent's watcher of its processes (module docstring); a context manager whose
    thread runs while it is entered, with a guardian when ``guarded`` (a run with
    children) or a ``witness`` file is named (the guardian's record of the parent's death)."""

    def __init__(self, bound: float = BOUND_S, guarded: bool = False, witness: str = ""
                 ) -> None:
        self.bound, self.tick = bound, bound / BEATS
        self._guardian = (Guardian(bound, witness=witness, ends_silent=guarded)
                          if guarded or witness else None)
        self._beat = self._guardian.beat if self._guardian is not None else None
        self._watched: dict[str, Watched] = {}
        self._lock = threading.Lock()
        self._done = threading.Event()
        self.lost: dict[str, Loss] = {}
        self.alarm, self._ring = Pipe(duplex=False)
        self._thread = threading.Thread(target=self._run, name="wagon-watchdog", daemon=True)

    def watch(self, w: Watched) -> None:
        """Follow ``w`` (and have the guardian end it if this process dies)."""
        if self._guardian is not None:
            self._guardian.adopt(w.pid)
        w.last = time.monotonic()
        if isinstance(w.beats, int):
            os.set_blocking(w.beats, False)
        with self._lock:
            self._watched[w.name] = w

    def forget(self, name: str) -> None:
        """Stop watching ``name`` (it ended as planned, or the runner handled its end)."""
        with self._lock:
            self._watched.pop(name, None)

    def record(self, loss: Loss) -> None:
        """A loss the runner saw itself (a worker's death): the summary names it too."""
        self.lost.setdefault(loss.name, loss)

    def cause(self, name: str) -> str | None:
        """Why ``name`` was lost, if the watchdog lost it."""
        loss = self.lost.get(name)
        return None if loss is None else loss.cause

    def __enter__(self) -> "Watchdog":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._done.set()
        self._thread.join()
        self.alarm.close()
        self._ring.close()
        if self._guardian is not None:
            self._guardian.release()

    def _run(self) -> None:
        beaten = 0.0
        while not self._done.is_set():
            with self._lock:
                watched = list(self._watched.values())
            if watched:
                ready = wait([w.beats for w in watched], timeout=self.tick)
            else:
                ready = []
                self._done.wait(self.tick)
            now = time.monotonic()
            for w in watched:
                if w.beats in ready:
                    if (beats := _drain(w.beats)) is not None:
                        w.last, w.beating, w.lagging = now, True, _lagging(w, beats)
                        if w.lagging >= BEATS:
                            self._lose(w, f"lagging: {w.lagging} heartbeats in a row "
                                          f"({w.lagging * self.tick:.1f} s) said over 1 % of "
                                          "its packets went out late", why="lagged")
                    elif w.death:
                        self._lose(w, cause_of_exit(_reaped(w)))
                    else:
                        self.forget(w.name)         # its end is the runner's to see
                elif now - w.last > (self.bound if w.beating else max(self.bound, START_S)):
                    self._lose(w, f"silent for {now - w.last:.1f} s (stopped responding)",
                               kill=True)
            if self._beat is not None and now - beaten >= self.tick:
                beaten = now
                try:
                    self._beat()
                except (OSError, ValueError):
                    self._beat = None

    def _lose(self, w: Watched, cause: str, kill: bool = False, why: str = "died") -> None:
        """Record the loss (before the kill, so the runner that sees the death finds its
        cause), kill a silent process, ring the alarm (the run stops: ``KIND_WHY``)."""
        self.lost[w.name] = Loss(w.kind, w.name, w.pid, cause)
        self.forget(w.name)
        if kill:
            try:
                os.kill(w.pid, signal.SIGKILL)    # our unreaped child: its pid is still its own
            except ProcessLookupError:
                pass
        try:
            self._ring.send(("stop", f"{w.kind}_{why}"))
        except OSError:
            pass


def _reaped(w: Watched, wait_s: float = 1.0) -> int | None:
    """The exit code of a process whose pipe closed (it may take a moment to be reaped)."""
    deadline = time.monotonic() + wait_s
    while (code := w.exitcode()) is None and time.monotonic() < deadline:
        time.sleep(0.01)
    return code
