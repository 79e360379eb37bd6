"""Recording and statistics: the collectors that subscribe to the core's events.

- ``CsvRecorder``: every request and every page to the results files (``wagon.formats.results``),
  buffered in memory and flushed at least once a second, so an interrupted run keeps everything
  recorded up to its last second;
- ``Stats``: bounded-memory statistics (HDR histograms in microseconds, per-second counts),
  mergeable across worker processes, and the run's summary.
"""
from __future__ import annotations

from collections import Counter
from typing import TextIO

import numpy as np
from hdrh.histogram import HdrHistogram

from ..formats.results import PAGE_COLUMNS, REQUEST_COLUMNS, ResultsWriter
from .events import Call, Hooks, PageVisit

__all__ = ["Stats", "CsvRecorder", "summary_text"]

HIST_MAX_US = 3_600_000_000         # one hour
LATE_S = 0.010                      # a session starting this late is counted as late
HISTOGRAMS = ("latency", "latency_intended", "send_lag", "loop_lag", "page_response",
              "page_html_latency")


def _hist() -> HdrHistogram:
    return HdrHistogram(1, HIST_MAX_US, 3)


def _grown(a: np.ndarray, size: int) -> np.ndarray:
    """``a`` padded with zeros to at least ``size``."""
    return a if len(a) >= size else np.concatenate((a, np.zeros(size - len(a), a.dtype)))


def _us(seconds: float) -> int:
    return int(min(max(seconds * 1e6, 1), HIST_MAX_US))


class Stats:
    """Counters and histograms of one run (or of several workers once merged)."""

    def __init__(self, t0: float) -> None:
        self.t0 = t0
        self.h = {name: _hist() for name in HISTOGRAMS}
        self.c: Counter = Counter()
        self.errors: Counter = Counter()
        self.per_second = np.zeros(64, np.int64)       # completed requests per second of run
        self.bytes_per_second = np.zeros(64, np.int64)

    def subscribe(self, hooks: Hooks) -> None:
        hooks.call_done.append(self.on_call)
        hooks.page_done.append(self.on_page)
        hooks.session_start.append(self.on_session_start)
        hooks.session_end.append(self.on_session_end)
        hooks.connection_open.append(lambda _id: self.c.update(connections=1))

    def on_call(self, call: Call) -> None:
        self.c["requests"] += 1
        if call.error is not None:
            self.errors[call.error] += 1
            if call.first_byte is None:
                return
        else:
            self.c["ok"] += 1
        self.c["bytes"] += call.bytes
        end = call.last_byte
        sec = int(end - self.t0)
        if sec >= len(self.per_second):
            size = max(sec + 1, 2 * len(self.per_second))
            self.per_second = _grown(self.per_second, size)
            self.bytes_per_second = _grown(self.bytes_per_second, size)
        if sec >= 0:
            self.per_second[sec] += 1
            self.bytes_per_second[sec] += call.bytes
        if call.start is not None:
            self.h["latency"].record_value(_us(end - call.start))
        self.h["latency_intended"].record_value(_us(end - call.intended))

    def on_page(self, page: PageVisit) -> None:
        self.c["pages"] += 1
        if page.errors:
            self.c["page_errors"] += 1
            return
        if page.response_time is not None:
            self.h["page_response"].record_value(_us(page.response_time))
        if page.html_latency is not None:
            self.h["page_html_latency"].record_value(_us(page.html_latency))

    def on_session_start(self, session: int, intended: float, actual: float) -> None:
        """Send lag: |actual − intended| start (early is as wrong as late); late: > LATE_S."""
        lag = actual - intended
        self.c["sessions_started"] += 1
        self.c["sessions_late"] += lag > LATE_S
        self.h["send_lag"].record_value(_us(abs(lag)))

    def on_session_end(self, session: int, completed: bool) -> None:
        self.c["sessions_completed" if completed else "sessions_interrupted"] += 1

    def loop_lag(self, lag: float) -> None:
        self.h["loop_lag"].record_value(_us(lag))

    # ---- merge across processes ------------------------------------------------------------
    def state(self) -> dict:
        return {"t0": self.t0, "h": {k: v.encode() for k, v in self.h.items()},
                "c": dict(self.c), "errors": dict(self.errors),
                "per_second": self.per_second.tolist(),
                "bytes_per_second": self.bytes_per_second.tolist()}

    @classmethod
    def merged(cls, states: list[dict]) -> "Stats":
        out = cls(min(s["t0"] for s in states))
        for s in states:
            for k, enc in s["h"].items():
                out.h[k].decode_and_add(enc)
            out.c.update(s["c"])
            out.errors.update(s["errors"])
            for name in ("per_second", "bytes_per_second"):
                theirs = np.asarray(s[name], np.int64)
                mine = _grown(getattr(out, name), len(theirs))
                mine[:len(theirs)] += theirs
                setattr(out, name, mine)
        return out

    # ---- the summary -----------------------------------------------------------------------
    def _ms(self, name: str) -> dict:
        h = self.h[name]
        n = h.get_total_count()
        if n == 0:
            return {"count": 0}
        return {"count": n, "mean": h.get_mean_value() / 1e3,
                **{f"p{p:g}": h.get_value_at_percentile(p) / 1e3 for p in (50, 90, 99, 99.9)},
                "max": h.get_max_value() / 1e3}

    def summary(self, duration: float, cpu: float | None = None) -> dict:
        last = int(np.max(np.nonzero(self.per_second)[0], initial=-1)) + 1
        series = self.per_second[:last].tolist()
        send_lag, loop_lag = self._ms("send_lag"), self._ms("loop_lag")
        out = {
            "requests": {"total": self.c["requests"], "ok": self.c["ok"], "bytes": self.c["bytes"]},
            "errors": {"total": sum(self.errors.values()), "by_kind": dict(self.errors)},
            "throughput": {"requests_per_s": self.c["requests"] / duration if duration else 0.0,
                           "bytes_per_s": self.c["bytes"] / duration if duration else 0.0,
                           "per_second": series},
            "latency_ms": self._ms("latency"),
            "latency_from_intended_ms": self._ms("latency_intended"),
            "send_lag_ms": send_lag,
            "loop_lag_ms": loop_lag,
            "pages": {"total": self.c["pages"], "errors": self.c["page_errors"],
                      "response_ms": self._ms("page_response"),
                      "html_latency_ms": self._ms("page_html_latency")},
            "sessions": {k: self.c[f"sessions_{k}"] for k in
                         ("started", "late", "completed", "interrupted")},
            "connections": self.c["connections"],
            "duration_s": duration,
            "cpu_fraction": cpu,
        }
        out["warnings"] = self._warnings(out)
        return out

    @staticmethod
    def _warnings(s: dict) -> list[str]:
        why = []
        lag99 = s["send_lag_ms"].get("p99", 0.0)
        loop99 = s["loop_lag_ms"].get("p99", 0.0)
        started = s["sessions"]["started"]
        if lag99 > 10:
            why.append(f"session start lag p99 {lag99:.1f} ms")
        if loop99 > 20:
            why.append(f"event-loop lag p99 {loop99:.1f} ms")
        if started and s["sessions"]["late"] > 0.01 * started:
            why.append(f"{s['sessions']['late']} of {started} sessions started > "
                       f"{LATE_S * 1e3:.0f} ms late")
        if s["cpu_fraction"] is not None and s["cpu_fraction"] > 0.9:
            why.append(f"the generator used {100 * s['cpu_fraction']:.0f}% of a core")
        if not why:
            return []
        return ["the generator, not the server, was the bottleneck (" + "; ".join(why) +
                "): its latencies include its own delay. Use --workers, or a lighter scenario."]


class CsvRecorder:
    """Requests and pages to the results files, times in seconds from t0, classes by name;
    rows are buffered until ``flush``."""

    def __init__(self, requests: TextIO, pages: TextIO, t0: float, class_names: list[str],
                 header: bool = True) -> None:
        self.t0, self.names = t0, class_names
        self.requests = ResultsWriter(requests, REQUEST_COLUMNS, header)
        self.pages = ResultsWriter(pages, PAGE_COLUMNS, header)

    def subscribe(self, hooks: Hooks) -> None:
        hooks.call_done.append(self.on_call)
        hooks.page_done.append(self.on_page)

    def _t(self, x: float | None) -> str:
        return "" if x is None else f"{x - self.t0:.6f}"

    def on_call(self, c: Call) -> None:
        self.requests.add((c.session, self.names[c.cls], c.page, c.url,
                           "page" if c.is_page else "object", c.conn, int(c.reused),
                           self._t(c.intended), self._t(c.start), self._t(c.connect_start),
                           self._t(c.connected), self._t(c.first_byte), self._t(c.last_byte),
                           c.status, c.bytes, c.error or ""))

    def on_page(self, p: PageVisit) -> None:
        rt, hl = p.response_time, p.html_latency
        self.pages.add((p.session, self.names[p.cls], p.page, self._t(p.intended),
                        self._t(p.start), self._t(p.html_first_byte), self._t(p.done),
                        "" if rt is None else f"{rt:.6f}", "" if hl is None else f"{hl:.6f}",
                        p.objects, p.errors))

    def flush(self) -> None:
        self.requests.flush()
        self.pages.flush()


def summary_text(s: dict) -> str:
    """The summary as a few human lines."""
    def row(name: str, d: dict) -> str:
        if not d.get("count"):
            return f"  {name:31s} -"
        return (f"  {name:31s} p50 {d['p50']:9.2f}  p90 {d['p90']:9.2f}  p99 {d['p99']:9.2f}  "
                f"max {d['max']:9.2f}  (n={d['count']:,})")
    r, e, t = s["requests"], s["errors"], s["throughput"]
    ss = s["sessions"]
    lines = [f"requests {r['total']:,} (ok {r['ok']:,}), {r['bytes'] / 1e6:,.1f} MB in "
             f"{s['duration_s']:.1f} s: {t['requests_per_s']:,.1f} req/s, "
             f"{8 * t['bytes_per_s'] / 1e6:,.2f} Mbit/s; connections {s['connections']:,}",
             f"sessions started {ss['started']:,}, completed {ss['completed']:,}, "
             f"cut short {ss['interrupted']:,}, late {ss['late']:,}",
             "errors " + (", ".join(f"{k} {v:,}" for k, v in sorted(e["by_kind"].items()))
                          if e["total"] else "none"),
             "latency (ms)",
             row("request, from its send", s["latency_ms"]),
             row("request, from intended start", s["latency_from_intended_ms"]),
             row("page (HTML + objects)", s["pages"]["response_ms"]),
             row("page, to last object 1st byte", s["pages"]["html_latency_ms"]),
             "generator (ms)",
             row("session start lag", s["send_lag_ms"]),
             row("event-loop lag", s["loop_lag_ms"])]
    if s.get("cpu_fraction") is not None:
        lines.append(f"  CPU: {100 * s['cpu_fraction']:.0f}% of a core")
    if s.get("stopped_by") == "signal":
        lines.append("interrupted: the results hold everything recorded until then")
    elif s.get("stopped_by") == "max_time":
        lines.append(f"stopped at --max-time with {ss['interrupted']:,} sessions still running")
    lines += [f"WARNING: {w}" for w in s["warnings"]]
    if s.get("results"):
        lines.append(f"results: {s['results']} (requests), {s['pages_results']} (pages)")
    return "\n".join(lines)
