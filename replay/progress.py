"""Live progress of a replay: a collector of the core's events (the core knows nothing of it)
and the line it shows every few seconds on stderr.

``Progress`` counts sessions started and ended, requests, errors and the latency of successful
requests (a ``Histogram``, so its p99 is the summary's rule); its ``state`` is small and
picklable, so ``--workers`` send theirs to the parent through the pipe they already share (and
``--cluster`` segments through a Dask queue); ``Board`` keeps each process's latest state,
shows their sum and hands each state to the live view (``dashboard``). ``ProgressLine`` writes
one line per report: rewritten in place on a terminal, one line each otherwise (a log, a CI
job).
"""
from __future__ import annotations

import sys
import time
from collections import Counter
from typing import TextIO

from .counts import Counts
from .events import UNFINISHED, Call, Hooks
from .histogram import Histogram

__all__ = ["Progress", "ProgressLine", "Board", "merged"]

TICK_S = 0.1                    # how late a state may come for its line (the run's tick)


class Progress:
    """Counts and request latencies so far, of one process."""

    def __init__(self) -> None:
        self.c = Counts()
        self.latency = Histogram()

    def subscribe(self, hooks: Hooks) -> None:
        hooks.session_start.append(self.on_session_start)
        hooks.session_end.append(self.on_session_end)
        hooks.call_done.append(self.on_call)

    def on_session_start(self, session: int, intended: float, actual: float) -> None:
        self.c["started"] += 1

    def on_session_end(self, session: int, completed: bool) -> None:
        self.c["ended"] += 1

    def on_call(self, call: Call) -> None:
        """Requests are counted when settled; one the stop cut off is not an error."""
        self.c["requests"] += 1
        if call.error is None:
            self.c["ok"] += 1
            self.latency.add(call.last_byte - call.start)
        elif call.error not in UNFINISHED:
            self.c["errors"] += 1

    def state(self) -> dict:
        return {"c": dict(self.c), "h": self.latency.state()}


def merged(states: list[dict]) -> tuple[Counter, Histogram]:
    """The counts and the latency histogram of several processes' states."""
    c, h = Counter(), Histogram()
    for s in states:
        c.update(s["c"])
        h.merge(s["h"])
    return c, h


class ProgressLine:
    """Shows merged states: elapsed, sessions started/active/ended, ok requests per second since
    the previous line, errors, p99 so far."""

    def __init__(self, out: TextIO | None = None, tty: bool | None = None) -> None:
        self.out = out or sys.stderr
        self.tty = self.out.isatty() if tty is None else tty
        self.last_t, self.last_ok = 0.0, 0
        self.width = 0

    def show(self, elapsed: float, states: list[dict]) -> None:
        c, h = merged(states)
        rate = (c["ok"] - self.last_ok) / max(elapsed - self.last_t, 1e-9)
        self.last_t, self.last_ok = elapsed, c["ok"]
        p99 = h.percentiles((99,))
        line = (f"[{elapsed:7.1f} s] sessions started {c['started']:,} active "
                f"{c['started'] - c['ended']:,} ended {c['ended']:,} | {rate:,.1f} ok/s | requests "
                f"{c['requests']:,} errors {c['errors']:,} | p99 "
                + ("-" if p99 is None else f"{1e3 * p99[0]:,.1f} ms"))
        if self.tty:
            self.out.write("\r" + line.ljust(self.width))
            self.width = len(line)
        else:
            self.out.write(line + "\n")
        self.out.flush()

    def close(self) -> None:
        """End the line being rewritten on a terminal."""
        if self.tty and self.width:
            self.out.write("\n")
            self.out.flush()


class Board:
    """The latest ``Progress`` state of each process of a run started at ``t0_wall`` (wall
    clock), handed to its displays: their sum as a line every ``every`` seconds and once more
    at the end (``line``), and the live view (``view``: ``dashboard.View``), given each state
    as it comes."""

    def __init__(self, t0_wall: float, every: float, out: TextIO | None = None,
                 line: bool = True, view=None) -> None:
        self.t0_wall, self.every, self.shown = t0_wall, every, t0_wall
        self.latest: dict[int, dict] = {}
        self.line = ProgressLine(out) if line else None
        self.view = view
        if view is not None:
            view.begin(t0_wall)

    def put(self, k: int, state: dict) -> None:
        self.latest[k] = state
        if self.view is not None:
            self.view.put(k, state)

    def show(self, final: bool = False) -> None:
        """The sum, when ``every`` seconds (within a tick) have passed since the last line,
        or ``final``."""
        now = time.time()
        if self.line is None:
            return
        if self.latest and (final or now - self.shown >= self.every - TICK_S):
            self.line.show(now - self.t0_wall, list(self.latest.values()))
            self.shown = now
        if final:
            self.close()

    def close(self) -> None:
        """End the line being rewritten on a terminal."""
        if self.line is not None:
            self.line.close()
