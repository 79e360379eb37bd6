"""Recording and statistics: the collectors that subscribe to the core's events.

- ``CsvRecorder``: every request and every page to the process' part files (``parts``; the
  results files, ``wagon.formats.results``, are published from them when the run ends),
  buffered in memory and flushed at least once a second, so an interrupted run keeps everything
  recorded up to its last second;
- ``Stats``: bounded-memory statistics (``histogram.Histogram``, per-second counts), mergeable
  across worker processes, and the run's summary.

The measured window (``--warmup``, ``--cooldown``) is applied here, once: a request, page,
session or connection outside [from_s, to_s) is counted as left out (per part) and in nothing
else, so every output built from the summary shows the window's numbers. A request is placed at
its issue (``start``), else at when it was due (``intended``), else at the stop that settled it
(``wagon.formats.results.measured`` applies the same rule to the CSV). The per-second series
cover the whole run (the report shades the parts left out).
"""
from __future__ import annotations

import os
from array import array
from typing import TextIO

import numpy as np

from ..formats.results import PAGE_COLUMNS, REQUEST_COLUMNS, ResultsWriter
from .counts import Counts
from .events import IN_FLIGHT, NOT_STARTED, UNFINISHED, Call, Hooks, PageVisit, clock
from .histogram import Histogram

__all__ = ["Stats", "CsvRecorder", "summary_text", "window_text", "LATENCIES", "LATENCY_LABELS",
           "GENERATOR_LABELS"]

LATE_S = 0.010                      # a session starting this late is counted as late
#: the summary's latency and generator entries, with the names the summary text and the report
#: give them (what each measures: docs/replay.md)
LATENCY_LABELS = {"request": "request (successful)", "request_all": "request (every outcome)",
                  "connect": "connect", "tls": "TLS handshake", "first_byte": "first byte", "transfer": "transfer",
                  "page": "page (errors included)", "intended": "request, from intended start"}
GENERATOR_LABELS = {"start_lag": "session start lag", "loop_lag": "event-loop lag"}
LATENCIES = tuple(LATENCY_LABELS)
GENERATOR = tuple(GENERATOR_LABELS)
#: per-second series: ok requests, their bytes, connections opened, connections closed
PER_SECOND = ("per_second", "bytes_per_second", "opened", "closed")
PERCENTILES = (50, 90, 99)
BUSY_CPU = 0.9                      # above this share of a core the generator is saturated
STALL_S = 0.005                     # event-loop lag above this is a stall, and has a cause
OWN_SHARE = 0.25                    # of the stall time its own work: the generator's doing
#: a sped-up replay's exchanges, times K, said when their p90 reaches this (s of the
#: scenario's time): the grain a server logs its requests in
SPEEDUP_GRAIN_S = 1.0


#: a request's durations, the histograms they go to
CALL_TIMES = ("intended", "request_all", "first_byte", "request", "transfer")
#: an answered request (``Stats.on_call``) and a page, staged as rows of these values (None as
#: NaN) and counted in bulk, one list extend each instead of a dozen counts (columnar)
ANSWER_ROW = ("last_byte", "start", "intended", "first_byte", "bytes")
PAGE_ROW = ("start", "intended", "done", "errors")
_STAGED = 1 << 16                            # values staged before they are counted


def _grown(a: np.ndarray, size: int) -> np.ndarray:
    """``a`` padded with zeros to at least ``size``."""
    return a if len(a) >= size else np.concatenate((a, np.zeros(size - len(a), a.dtype)))


def _seconds(n: int) -> array:
    """A per-second series of ``n`` zero counts."""
    return array("q", bytes(8 * n))


WARMUP, COOLDOWN = "warmup", "cooldown"


class Stats:
    """Counters and histograms of one run (or of several workers once merged); ``window``: the
    measured seconds [from, to) of the run (to None: to the end)."""

    def __init__(self, t0: float, window: tuple[float, float | None] = (0.0, None)) -> None:
        self.t0, self.window = t0, window
        self.outside: set[int] = set()               # sessions started outside the window
        self.stop_at: float | None = None            # the run's stop, once it came
        self.windowed = bool(window[0]) or window[1] is not None
        self.h = {name: Histogram() for name in LATENCIES + GENERATOR}
        self.answers: list[float] = []               # rows of ANSWER_ROW not yet counted
        self.pages: list[float] = []                 # rows of PAGE_ROW not yet counted
        self.c = Counts()
        self.errors = Counts()
        # per second of run: successful requests, their bytes, connections opened and closed
        self.s = {name: _seconds(64) for name in PER_SECOND}

    def subscribe(self, hooks: Hooks) -> None:
        hooks.call_done.append(self.on_call)
        hooks.page_done.append(self.on_page)
        hooks.session_start.append(self.on_session_start)
        hooks.session_end.append(self.on_session_end)
        hooks.run_stop.append(self.on_stop)
        hooks.connection_open.append(self.on_connection)
        hooks.tls_handshake.append(self.on_tls)
        hooks.connection_close.append(self.on_connection_close)

    def _series(self, name: str, n: int) -> array:
        """Series ``name``, grown to at least ``n`` seconds."""
        series = self.s[name]
        if n > len(series):
            series.extend(_seconds(max(n, 2 * len(series)) - len(series)))
        return series

    def _count(self, name: str, t: float, amount: int = 1) -> None:
        """Add ``amount`` to second ``t`` (clock time) of series ``name``."""
        sec = max(int(t - self.t0), 0)
        self._series(name, sec + 1)[sec] += amount

    def on_stop(self, at: float) -> None:
        self.stop_at = at

    def _part(self, t: float | None) -> str | None:
        """WARMUP, COOLDOWN or None (measured) for clock time ``t`` (None: now, or the stop
        once it came: what the stop settles, recorded after it, is placed there, as
        ``formats.results.measured`` places its rows)."""
        sec = (t if t is not None else self.stop_at if self.stop_at is not None
               else clock()) - self.t0
        lo, hi = self.window
        return (WARMUP if lo and sec < lo else          # no warm-up: what started early counts
                COOLDOWN if hi is not None and sec >= hi else None)

    def _left_out(self, what: str, t: float | None) -> bool:
        """Count ``what`` at clock time ``t`` as left out when it falls outside the window."""
        part = self._part(t)
        if part is not None:
            self.c[f"{part}_{what}"] += 1
        return part is not None

    def on_call(self, call: Call) -> None:
        """One outcome per request. An answer is staged, counted and timed in bulk by
        ``_fold`` (the per-second series count it even outside the window); any other outcome
        is counted now (a request the stop cut off is not an error) and timed where it has
        times."""
        if call.error is None:
            self.answers.extend((call.last_byte, call.start, call.intended, call.first_byte,
                                 call.bytes))
            if len(self.answers) >= _STAGED:
                self._fold()
            return
        start, intended, end = call.start, call.intended, call.last_byte
        if self.windowed and self._left_out("requests",
                                            start if start is not None else intended):
            return
        self.c["requests"] += 1
        if call.error in UNFINISHED:
            self.c[call.error] += 1
        else:
            self.errors[call.error] += 1
        self.c["bytes"] += call.bytes
        if end is None:                                # not started, skipped
            return
        if intended is not None:
            self.h["intended"].add(end - intended)
        if start is not None:
            self.h["request_all"].add(end - start)
            if call.first_byte is not None:
                self.h["first_byte"].add(call.first_byte - start)

    def _fold(self) -> None:
        """Count the staged answers and pages."""
        if self.answers:
            self._answers(np.array(self.answers, np.float64).reshape(-1, len(ANSWER_ROW)))
            self.answers = []
        if self.pages:
            self._pages(np.array(self.pages, np.float64).reshape(-1, len(PAGE_ROW)))
            self.pages = []

    def _answers(self, rows: np.ndarray) -> None:
        """Count answers (rows of ANSWER_ROW): in the per-second series by the second they
        ended in (from t0 on), then those in the window: counts and durations."""
        end, start, intended, first, size = rows.T
        after = end >= self.t0
        sec = (end[after] - self.t0).astype(np.int64)
        if len(sec):
            n = int(sec.max()) + 1
            for name, weights in (("per_second", None), ("bytes_per_second", size[after])):
                np.frombuffer(self._series(name, n), np.int64)[:n] += \
                    np.bincount(sec, weights).astype(np.int64)
        if self.windowed:
            end, start, intended, first, size = rows[self._measured("requests",
                                                                    start, intended)].T
        c = self.c
        c["requests"] += len(end)
        c["ok"] += len(end)
        c["bytes"] += int(size.astype(np.int64).sum())
        took = end - start
        for name, t in zip(CALL_TIMES, (end - intended, took, first - start, took, end - first)):
            self.h[name].add_many(t)

    def _pages(self, rows: np.ndarray) -> None:
        """Count pages (rows of PAGE_ROW) in the window, and their response times."""
        start, intended, done, errors = rows.T
        if self.windowed:
            start, intended, done, errors = rows[self._measured("pages", start, intended)].T
        self.c["pages"] += len(start)
        self.c["page_errors"] += int(np.count_nonzero(errors > 0))
        self.h["page"].add_many(done - start)

    def _measured(self, what: str, t: np.ndarray, instead: np.ndarray) -> np.ndarray:
        """Which of clock times ``t`` (NaN: ``instead``'s, and where that is NaN too the
        stop's, or now: as ``_part``) fall in the window; the others are counted as left
        out."""
        now = self.stop_at if self.stop_at is not None else clock()
        sec = np.where(np.isnan(t), np.where(np.isnan(instead), now, instead), t) - self.t0
        lo, hi = self.window
        warm = sec < lo if lo else np.zeros(len(sec), bool)
        cool = ~warm & (sec >= hi) if hi is not None else np.zeros(len(sec), bool)
        for part, out in ((WARMUP, warm), (COOLDOWN, cool)):
            if out.any():
                self.c[f"{part}_{what}"] += int(np.count_nonzero(out))
        return ~(warm | cool)

    def on_connection(self, conn_id: int, connect: float | None,
                      at: float | None = None) -> None:
        """A connection opened (``at``: when, on the clock; default now) after ``connect``
        seconds (None: not known, as for a connection whose opening row was lost)."""
        self._count("opened", clock() if at is None else at)
        if self._left_out("connections", at):
            return
        self.c["connections"] += 1
        if connect is not None:
            self.h["connect"].add(connect)

    def on_tls(self, conn_id: int, seconds: float, resumed: bool) -> None:
        if self._part(None) is not None:          # its connection's: counted as left out there
            return
        self.c["tls_handshakes"] += 1
        self.c["tls_resumed"] += resumed
        self.h["tls"].add(seconds)

    def on_connection_close(self, conn_id: int, at: float | None = None) -> None:
        self._count("closed", clock() if at is None else at)

    def on_page(self, page: PageVisit) -> None:
        """A page, staged (``_fold`` counts it)."""
        self.pages.extend((page.start, page.intended, page.done, page.errors))
        if len(self.pages) >= _STAGED:
            self._fold()

    def on_session_start(self, session: int, intended: float, actual: float) -> None:
        """Start lag: |actual − intended| start (early is as wrong as late); late: > LATE_S."""
        lag = actual - intended
        self.h["start_lag"].add(abs(lag))
        if self._left_out("sessions", actual):
            self.outside.add(session)
            return
        self.c["sessions_started"] += 1
        self.c["sessions_late"] += lag > LATE_S

    def on_session_end(self, session: int, completed: bool) -> None:
        if session in self.outside:
            self.outside.discard(session)
            return
        self.c["sessions_completed" if completed else "sessions_interrupted"] += 1

    def loop_lag(self, lag: float, ran: float = 0.0, waited: float | None = None) -> None:
        """An event-loop lag sample; ``ran``: the CPU seconds this process used since the
        previous sample, ``waited``: the seconds its loop waited for a CPU meanwhile (the
        kernel's run-queue wait; None where it does not say). Of a stall, ``ran`` (at most all
        of it) was the generator's own work, the rest spent elsewhere, not running: of that,
        ``waited`` was other processes having the CPU, the rest blocked in the kernel (disk,
        swap, a stop signal)."""
        self.h["loop_lag"].add(lag)
        if lag > STALL_S:
            own = min(max(ran, 0.0), lag)
            self.c["stall_own_s"] += own
            self.c["stall_elsewhere_s"] += lag - own
            if waited is not None:
                self.c["stall_waiting_s"] += min(max(waited, 0.0), lag - own)
        if waited is not None:
            self.c["waits_measured"] += 1

    # ---- merge across processes ------------------------------------------------------------
    def state(self) -> dict:
        self._fold()
        return {"t0": self.t0, "window": self.window,
                "h": {k: v.state() for k, v in self.h.items()},
                "c": dict(self.c), "errors": dict(self.errors),
                **{name: a.tolist() for name, a in self.s.items()}}

    @classmethod
    def merged(cls, states: list[dict]) -> "Stats":
        out = cls(min((s["t0"] for s in states), default=0.0),
                  tuple(states[0]["window"]) if states else (0.0, None))
        for s in states:
            for k, st in s["h"].items():
                out.h[k].merge(st)
            out.c.update(s["c"])
            out.errors.update(s["errors"])
            for name in PER_SECOND:
                theirs = np.asarray(s[name], np.int64)
                ours = _grown(np.frombuffer(out.s[name], np.int64), len(theirs))
                ours[:len(theirs)] += theirs
                out.s[name] = array("q", ours.tobytes())
        return out

    # ---- the summary -----------------------------------------------------------------------
    def _ms(self, name: str) -> dict:
        """p50, p90, p99 and max in milliseconds (None when nothing was measured)."""
        self._fold()
        h = self.h[name]
        got = h.percentiles(PERCENTILES)
        if got is None:
            return {f"p{p}": None for p in PERCENTILES} | {"max": None}
        return {f"p{p}": 1e3 * v for p, v in zip(PERCENTILES, got)} | {"max": 1e3 * h.top}

    def summary(self, duration: float, cpu: float | None, complete: bool) -> dict:
        self._fold()
        ok, opened, closed = (np.frombuffer(self.s[name], np.int64) for name in
                              ("per_second", "opened", "closed"))
        last = int(np.max(np.nonzero(ok)[0], initial=-1)) + 1
        n = max(len(opened), len(closed))
        held = np.cumsum(_grown(opened, n)) - np.cumsum(_grown(closed, n))
        held_until = int(np.max(np.nonzero(held)[0], initial=-1)) + 1
        lo, hi = self.window
        measured = max(min(duration, hi if hi is not None else duration) - lo, 0.0)
        per_s = 1.0 / measured if measured else 0.0
        out = {
            "requests": {"total": self.c["requests"],
                         "sent": self.c["requests"] - self.c[NOT_STARTED], "ok": self.c["ok"],
                         "failed": sum(self.errors.values()),
                         IN_FLIGHT: self.c[IN_FLIGHT], NOT_STARTED: self.c[NOT_STARTED],
                         "bytes": self.c["bytes"]},
            "errors": {"total": sum(self.errors.values()), "by_kind": dict(self.errors)},
            "latency": {name: self._ms(name) for name in LATENCIES},
            "generator": {"start_lag": self._ms("start_lag"), "loop_lag": self._ms("loop_lag"),
                          "cpu": cpu,
                          "stalls": {"own_s": self.c["stall_own_s"],
                                     "elsewhere_s": self.c["stall_elsewhere_s"],
                                     "waiting_s": self.c["stall_waiting_s"]
                                     if self.c["waits_measured"] else None},
                          "machine": {"load_1min": os.getloadavg()[0],
                                      "cores": os.cpu_count() or 1}},
            "complete": complete,
            "throughput": {"requests_per_s": self.c["ok"] * per_s,
                           "bytes_per_s": self.c["bytes"] * per_s,
                           "per_second": ok[:last].tolist()},
            "pages": {"total": self.c["pages"], "with_errors": self.c["page_errors"]},
            "sessions": {k: self.c[f"sessions_{k}"] for k in
                         ("started", "late", "completed", "interrupted")},
            "connections": self.c["connections"],
            "tls": {"handshakes": self.c["tls_handshakes"], "resumed": self.c["tls_resumed"]},
            "open_connections": {"per_second": held[:held_until].tolist(),
                                 "peak": int(held.max(initial=0))},
            "duration_s": duration,
            "window": {"from_s": lo, "to_s": hi, "seconds": measured, "left_out": {
                part: {what: self.c[f"{part}_{what}"] for what in
                       ("requests", "sessions", "pages", "connections")}
                for part in (WARMUP, COOLDOWN)}},
        }
        out["warnings"] = self._warnings(out)
        return out

    @staticmethod
    def _warnings(s: dict) -> list[str]:
        why = []
        g = s["generator"]
        lag99, loop99 = g["start_lag"]["p99"] or 0.0, g["loop_lag"]["p99"] or 0.0
        started = s["sessions"]["started"]
        if lag99 > 10:
            why.append(f"session start lag p99 {lag99:.1f} ms")
        if loop99 > 20:
            why.append(f"event-loop lag p99 {loop99:.1f} ms")
        if started and s["sessions"]["late"] > 0.01 * started:
            why.append(f"{s['sessions']['late']} of {started} sessions started > "
                       f"{LATE_S * 1e3:.0f} ms late")
        busy = g["cpu"] is not None and g["cpu"] > BUSY_CPU and s["duration_s"] >= 1.0
        if busy:
            why.append(f"the generator used {100 * g['cpu']:.0f}% of a core")
        if not why:
            return []
        if busy or g["cpu"] is None:
            return ["the generator, not the server, was the bottleneck (" + "; ".join(why) +
                    "): its latencies include its own delay. Use --workers, or a lighter "
                    "scenario."]
        own, away, m = g["stalls"]["own_s"], g["stalls"]["elsewhere_s"], g["machine"]
        if own > 0 and own >= OWN_SHARE * (own + away):
            more = f", {away:.2f} s more while it was not running" if away else ""
            return [f"the generator held up its own event loop ({'; '.join(why)}; {own:.2f} s "
                    f"of stalls while it ran its own code{more}; {100 * g['cpu']:.0f}% of a "
                    "core on average): its latencies include that delay. Use --workers, or a "
                    "lighter scenario."]
        cause = _elsewhere(g["stalls"], m)
        return [f"the generator was held up ({'; '.join(why)}) while it used only "
                f"{100 * g['cpu']:.0f}% of a core"
                + (f", {away:.2f} s of stalls while it was not running" if away else "")
                + f": {cause}; its latencies include that delay. Rerun on a quieter machine."]


def speedup_warnings(s: dict, speedup: float) -> list[str]:
    """What a scenario's ``--speedup`` K did to its timing in a replay that emulated no
    network: each real millisecond of an exchange (the server's and the machine's: a process
    woken from an idle wait runs late, ``bench/wakeup_bench.py``) is K of the scenario's, so a
    click's later requests reach the server that much later than the scenario placed them.
    Said when the exchanges' p90, times K, reaches ``SPEEDUP_GRAIN_S``."""
    p90 = s["latency"]["request_all"]["p90"]
    if speedup <= 1 or p90 is None or speedup * p90 / 1e3 < SPEEDUP_GRAIN_S:
        return []
    return [f"at --speedup {speedup:g} an exchange's p90 ({p90:.2f} ms) is "
            f"{speedup * p90 / 1e3:.1f} s of the scenario's time: a click's requests after "
            "its first reach the server that much later than the scenario places them (a "
            "server's log read back in the scenario's time shows more clicks and objects "
            "spread later). A lower --speedup keeps them."]


def _elsewhere(stalls: dict, m: dict) -> str:
    """What held the generator up while it was not running, as measured: the time its loop
    waited for a CPU (other processes had it), or else blocked in the kernel. Unmeasured
    causes are said to be: no stall sampled, or a kernel that does not tell the wait (then
    the load average says which is likelier)."""
    load = f"load average {m['load_1min']:.1f} on {m['cores']} cores"
    away, waited = stalls["elsewhere_s"], stalls["waiting_s"]
    if not away:
        return f"no stall of its event loop was sampled (every 0.1 s): cause not measured ({load})"
    if waited is None:
        unknown = "this kernel does not report the time it waited for a core"
        return (f"other processes likely took the CPU ({load}; {unknown})"
                if m["load_1min"] >= m["cores"] else
                f"it was likely paused or waited on the system (swap, disk; {load}; {unknown})")
    if waited >= away / 2:
        return (f"other processes had the CPU ({waited:.2f} s of it waiting for a core; "
                f"{load})")
    blocked = (f"it was blocked outside its own code ({away - waited:.2f} s neither running nor "
               f"waiting for a core: disk, swap, or stopped; {load})")
    if waited >= away / 10:                         # both, each as measured
        return (f"other processes had the CPU ({waited:.2f} s of it waiting for a core) and "
                + blocked)
    return blocked


class CsvRecorder:
    """Requests and pages to the process' part files (``parts``: rows without a header), times
    in seconds from t0, classes by name; rows are buffered until ``flush``."""

    def __init__(self, requests: TextIO, pages: TextIO, t0: float,
                 class_names: list[str]) -> None:
        self.t0, self.names = t0, class_names
        self.requests = ResultsWriter(requests, REQUEST_COLUMNS, header=False)
        self.pages = ResultsWriter(pages, PAGE_COLUMNS, header=False)

    def subscribe(self, hooks: Hooks) -> None:
        hooks.call_done.append(self.on_call)
        hooks.page_done.append(self.on_page)

    def _t(self, x: float | None) -> str:
        return "" if x is None else f"{x - self.t0:.6f}"

    def on_call(self, c: Call) -> None:
        self.requests.add((c.session, self.names[c.cls], c.page, c.url,
                           "page" if c.is_page else "object", c.conn, int(c.reused),
                           int(c.retried),
                           self._t(c.intended), self._t(c.start), self._t(c.connect_start),
                           self._t(c.tls_start), self._t(c.connected), self._t(c.first_byte), self._t(c.last_byte),
                           c.status, c.bytes, c.error or "", c.number, c.method))

    def on_page(self, p: PageVisit) -> None:
        rt, hl = p.response_time, p.html_latency
        self.pages.add((p.session, self.names[p.cls], p.page, self._t(p.intended),
                        self._t(p.start), self._t(p.html_first_byte), self._t(p.done),
                        "" if rt is None else f"{rt:.6f}", "" if hl is None else f"{hl:.6f}",
                        p.objects, p.errors))

    def flush(self) -> None:
        self.requests.flush()
        self.pages.flush()


def _tls_text(tls: dict | None) -> str:
    """The TLS handshakes, when there were any."""
    if not tls or not tls["handshakes"]:
        return ""
    return f" ({tls['handshakes']:,} TLS handshakes, {tls['resumed']:,} resumed)"


def window_text(s: dict) -> str | None:
    """What the figures measure and what they leave out; None when they measure the whole run."""
    w = s.get("window")
    if not w or (w["from_s"] == 0 and w["to_s"] is None):
        return None
    left = w["left_out"]
    parts = [f"{name} {left[part]['requests']:,} requests due ({left[part]['sessions']:,} "
             "sessions started)" for part, name in ((WARMUP, "warm-up"), (COOLDOWN, "cool-down"))
             if part == WARMUP and w["from_s"] or part == COOLDOWN and w["to_s"] is not None]
    to = "the end" if w["to_s"] is None else f"{w['to_s']:g} s"
    return (f"measured window {w['from_s']:g} s to {to} ({w['seconds']:.1f} s): every figure "
            f"counts only what it holds; left out: {'; '.join(parts)}")


def summary_text(s: dict) -> str:
    """The summary as a few human lines."""
    def row(name: str, d: dict) -> str:
        if d["max"] is None:
            return f"  {name:30s} -"
        return (f"  {name:30s}" + "".join(f"{d[k]:10.2f}" for k in ("p50", "p90", "p99", "max")))
    r, e, t, lat, g = s["requests"], s["errors"], s["throughput"], s["latency"], s["generator"]
    ss = s["sessions"]
    sent = r["total"] - r["not_started"]
    cut = (f", in flight at the stop {r['in_flight']:,}; not started {r['not_started']:,} of "
           f"{r['total']:,} due" if r["in_flight"] or r["not_started"] else "")
    lines = [f"requests sent {sent:,} (ok {r['ok']:,}, failed {e['total']:,}{cut}), "
             f"{r['bytes'] / 1e6:,.1f} MB in "
             f"{s['window']['seconds']:.1f} s: {t['requests_per_s']:,.1f} ok/s, "
             f"{8 * t['bytes_per_s'] / 1e6:,.2f} Mbit/s; connections {s['connections']:,}"
             + _tls_text(s.get("tls")),
             *filter(None, [window_text(s)]),
             f"sessions started {ss['started']:,}, completed {ss['completed']:,}, "
             f"cut short {ss['interrupted']:,}, late {ss['late']:,}",
             "errors " + (", ".join(f"{k} {v:,}" for k, v in sorted(e["by_kind"].items()))
                          if e["total"] else "none"),
             f"latency (ms){'':19s}{'p50':>10s}{'p90':>10s}{'p99':>10s}{'max':>10s}",
             *(row(name, lat[key]) for key, name in LATENCY_LABELS.items()),
             "generator (ms)",
             *(row(name, g[key]) for key, name in GENERATOR_LABELS.items())]
    if g.get("cpu") is not None:
        lines.append(f"  CPU: {100 * g['cpu']:.0f}% of a core")
    ident = s.get("identity")
    lines.append("users: " + ("one client (--no-identity): one address, User-Agent wagon-replay"
                              if ident is None else
                              f"from {ident['sources']}; browsers "
                              f"{', '.join(ident['agents']) or 'wagon-replay'}; Referer and "
                              "cookies per session"))
    net = s.get("network")
    if net and net["relay"] is None:
        lines.append("network: every packet through its client's path; the relay's counts "
                     "were lost with it")
    elif net:
        relay = net["relay"]
        lines.append(f"network: every packet through its client's path; "
                     f"relayed {relay.get('packets', 0):,} packets, lost "
                     f"{relay.get('lost', 0):,}, dropped by full queues "
                     f"{relay.get('queue_drops', 0) - relay.get('early_drops', 0):,}"
                     + (f", early (RED) {relay['early_drops']:,}" if relay.get("early_drops")
                        else "") + "; relay lag mean "
                     f"{relay.get('lag_mean_ms', 0):.2f} ms, p99 {relay.get('lag_p99_ms', 0):.1f} ms, max "
                     f"{relay.get('lag_max_ms', 0):.1f} ms, {relay.get('late', 0):,} packets over "
                     f"1 ms late; relay CPU {relay.get('cpu_s', 0):.1f} s")
        for name, sides in relay.get("links", {}).items():
            lines.append(f"  shared link {name}: " + "; ".join(
                f"{side} {c['packets']:,} packets, lost {c['lost']:,}, dropped by the full "
                f"queue {c['queue_drops'] - c.get('early_drops', 0):,}"
                + (f", early (RED) {c['early_drops']:,}" if c.get("early_drops") else "")
                for side, c in sides.items()))
    for th in s.get("thresholds", []):
        got = "not measured" if th["value"] is None else f"{th['value']:,.4g}"
        lines.append(f"threshold {th['threshold']}: {got} -> {'FAILED' if th['failed'] else 'ok'}")
    for why in s.get("dead_workers", []):
        lines.append(f"worker died: {why}")
    lines += [f"{p['name']} lost (pid {p['pid']}): {p['cause']}; the run stopped"
              for p in s.get("dead_processes", []) if p["kind"] != "worker"]
    if s.get("stopped_by") == "signal":
        lines.append("interrupted: the results hold everything recorded until then")
    elif s.get("stopped_by") == "max_time":
        lines.append(f"stopped at --max-time with {ss['interrupted']:,} sessions still running")
    elif s.get("stopped_by") == "parent_died":
        lines.append("the replay's process died: recovered from the rows its workers wrote "
                     "(wagon recover)")
    elif s.get("stopped_by") == "disk_full":
        lines.append("the disk filled up: recovered from the rows written until then "
                     "(wagon recover)")
    elif s.get("stopped_by") == "duration":
        lines.append(f"ended at the steady scenario's duration with {ss['interrupted']:,} "
                     "sessions still running (cut, as a running site's are)")
    lines += [f"WARNING: {w}" for w in s["warnings"] + ([ident["warning"]] if ident and
                                                         ident.get("warning") else [])]
    if s.get("results"):
        lines.append(f"results: {s['results']} (requests), {s['pages_results']} (pages)")
    return "\n".join(lines)
