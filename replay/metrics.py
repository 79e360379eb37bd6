"""What the live view counts (``Tally``, a collector of the core's events) and ``/metrics``, the
run so far in Prometheus' text exposition format 0.0.4.

``Tally`` breaks the requests down by client class, kind (page or object) and outcome (``ok``
or the error's name, as the results and the summary name it), times the successful ones into
Prometheus buckets and per-class histograms (``histogram.Histogram``: the summary's
percentile rule), and counts page visits per class and per page, timing each page's visits
(``histogram.Histograms``: a compact histogram per page, the summary's bins and rule). Its
``state`` is small and picklable: it travels with ``progress.Progress``'s state from every
worker to the parent (``progress.Board``), where ``Snapshot`` sums them.
"""
from __future__ import annotations

import heapq
import itertools
import math
from bisect import bisect_left
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field

from .events import Call, Hooks, PageVisit
from .histogram import Histogram, Histograms

__all__ = ["Tally", "Snapshot", "snapshot", "exposition", "top_pages", "LE", "CONTENT_TYPE",
           "PAGE_SERIES"]

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
#: the upper bounds (s) of wagon_request_seconds' buckets (+Inf after them)
LE = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)
OK = "ok"
#: the most visited pages that /metrics' wagon_page_seconds and the page chart show (a bound
#: on the label values whatever the site's size)
PAGE_SERIES = 5


def _kind(call: Call) -> str:
    return "page" if call.is_page else "object"


class Tally:
    """Requests, their successful latencies and page visits of one process, by class, and
    each page's visits and their times."""

    def __init__(self) -> None:
        self.calls: Counter = Counter()              # (class, kind, outcome) → requests
        self.buckets: dict[tuple[int, str], list[float]] = {}   # per LE bound, +Inf, sum
        self.classes: dict[int, Histogram] = {}      # class → successful request latency
        self.bytes: Counter = Counter()              # class → bytes received
        self.visits: Counter = Counter()             # (class, ok|failed) → page visits
        self.pages: dict[int, list[float]] = {}      # page → visits, with errors, s, timed
        self.page_times = Histograms()               # page → its timed visits' histogram

    def subscribe(self, hooks: Hooks) -> None:
        hooks.call_done.append(self.on_call)
        hooks.page_done.append(self.on_page)

    def on_call(self, call: Call) -> None:
        kind, cls = _kind(call), call.cls
        self.calls[(cls, kind, call.error or OK)] += 1
        self.bytes[cls] += call.bytes
        if call.error is None:
            took = call.last_byte - call.start
            b = self.buckets.get((cls, kind))
            if b is None:
                b = self.buckets[(cls, kind)] = [0.0] * (len(LE) + 2)
            b[bisect_left(LE, took)] += 1
            b[-1] += took
            h = self.classes.get(cls)
            if h is None:
                h = self.classes[cls] = Histogram()
            h.add(took)

    def on_page(self, page: PageVisit) -> None:
        self.visits[(page.cls, "failed" if page.errors else OK)] += 1
        p = self.pages.get(page.page)
        if p is None:
            p = self.pages[page.page] = [0, 0, 0.0, 0]
        took = page.response_time
        p[0] += 1
        p[1] += page.errors > 0
        if took is not None:
            p[2] += took
            p[3] += 1
            self.page_times.add(page.page, took)

    def page_visits(self) -> dict[int, int]:
        """Visits per page (to rank the pages)."""
        return {p: v[0] for p, v in self.pages.items()}

    def state(self) -> dict:
        return {"calls": list(self.calls.items()), "buckets": list(self.buckets.items()),
                "classes": {k: h.state() for k, h in self.classes.items()},
                "bytes": dict(self.bytes), "visits": list(self.visits.items()),
                "pages": self.pages, "page_times": self.page_times.state()}

    def merge(self, state: dict) -> None:
        """Add another process's ``state``."""
        for key, n in state["calls"]:          # keys are lists after a Dask queue's msgpack
            self.calls[tuple(key)] += n
        for key, b in state["buckets"]:
            ours = self.buckets.setdefault(tuple(key), [0.0] * len(b))
            ours[:] = [x + y for x, y in zip(ours, b)]
        for k, h in state["classes"].items():
            self.classes.setdefault(int(k), Histogram()).merge(h)
        self.bytes.update({int(k): n for k, n in state["bytes"].items()})
        for key, n in state["visits"]:
            self.visits[tuple(key)] += n
        for page, p in state["pages"].items():
            ours = self.pages.setdefault(int(page), [0, 0, 0.0, 0])
            ours[:] = [x + y for x, y in zip(ours, p)]
        self.page_times.merge(state["page_times"])


def top_pages(visits: Mapping[int, int], n: int) -> list[int]:
    """The ``n`` most visited pages (``visits``: page → visits; ties: the lower id first)."""
    return heapq.nsmallest(n, visits, key=lambda p: (-visits[p], p))


@dataclass
class Snapshot:
    """The sum of the processes' latest live states."""

    c: Counter = field(default_factory=Counter)      # progress.Progress's counts
    latency: Histogram = field(default_factory=Histogram)     # successful requests
    tally: Tally = field(default_factory=Tally)
    start_lag: Histogram = field(default_factory=Histogram)  # record.Stats' generator
    loop_lag: Histogram = field(default_factory=Histogram)   # histograms
    cpu_s: dict[int, float] = field(default_factory=dict)    # process → CPU seconds
    at: float = 0.0                                  # the latest state's run seconds


def snapshot(states: dict[int, dict]) -> Snapshot:
    """The sum of each process's latest state (``runner``'s reporter: Progress's ``c`` and
    ``h``, and ``live``)."""
    s = Snapshot()
    for k, st in states.items():
        s.c.update(st["c"])
        s.latency.merge(st["h"])
        live = st["live"]
        s.tally.merge(live["tally"])
        s.start_lag.merge(live["start_lag"])
        s.loop_lag.merge(live["loop_lag"])
        s.cpu_s[k] = live["cpu_s"]
        s.at = max(s.at, live["at"])
    return s


def _labels(**kv: str) -> str:
    """``{k="v",...}`` with the exposition format's escapes."""
    def esc(v: str) -> str:
        return str(v).replace("\\", r"\\").replace("\n", r"\n").replace('"', r"\"")
    return "{" + ",".join(f'{k}="{esc(v)}"' for k, v in kv.items()) + "}"


def _num(x: float) -> str:
    if math.isnan(x):
        return "NaN"
    return repr(int(x)) if float(x).is_integer() and abs(x) < 2**53 else repr(float(x))


def _family(name: str, kind: str, text: str, samples: list[tuple[str, float]]) -> list[str]:
    return [f"# HELP {name} {text}", f"# TYPE {name} {kind}",
            *(f"{name}{suffix} {_num(v)}" for suffix, v in samples)]


def _histogram(labels: dict[str, str], at_most: list[float], total: float
               ) -> list[tuple[str, float]]:
    """A histogram's samples: the values at or below each LE bound and +Inf (cumulative),
    their sum and count."""
    return [*(("_bucket" + _labels(**labels, le="+Inf" if le == math.inf else repr(le)), n)
              for le, n in zip((*LE, math.inf), at_most)),
            ("_sum" + _labels(**labels), total), ("_count" + _labels(**labels), at_most[-1])]


def _request_histogram(s: Snapshot, names: list[str]) -> list[str]:
    samples = []
    for (cls, kind), b in sorted(s.tally.buckets.items()):
        samples += _histogram({"class": names[cls], "kind": kind},
                              list(itertools.accumulate(b[:-1])), b[-1])
    return _family("wagon_request_seconds", "histogram",
                   "Successful requests' time, issue to last byte (s).", samples)


def _page_histogram(t: Tally, urls: list[str]) -> list[str]:
    """wagon_page_seconds of the PAGE_SERIES most visited pages (their timed visits)."""
    samples = []
    for p in top_pages(t.page_visits(), PAGE_SERIES):
        samples += _histogram({"page": urls[p] if p < len(urls) else str(p), "id": str(p)},
                              t.page_times.of(p).at_most((*LE, math.inf)).tolist(),
                              t.pages[p][2])
    return _family("wagon_page_seconds", "histogram", f"Page visits' time (a click: the page "
                   f"and its objects, errors included), of the {PAGE_SERIES} pages most "
                   "visited so far (s).", samples)


def _quantiles(name: str, text: str, h: Histogram) -> list[str]:
    got = h.percentiles((50, 90, 99)) or [math.nan] * 3
    return _family(name, "gauge", text, [(_labels(quantile=q), v) for q, v in
                                         zip(("0.5", "0.9", "0.99"), got)])


def exposition(s: Snapshot, names: list[str], urls: list[str], finished: bool) -> str:
    """The run so far as Prometheus text (``names``: the classes' names by index, ``urls``:
    the pages' by id)."""
    t = s.tally
    cls = lambda k: {"class": names[k]}            # noqa: E731 - a label set, by index
    lines = [
        *_family("wagon_requests_total", "counter", "Requests settled, by client class, kind "
                 "(page or object) and outcome (ok or the error's name).",
                 [(_labels(**cls(k), kind=kind, outcome=o), n)
                  for (k, kind, o), n in sorted(t.calls.items())]),
        *_request_histogram(s, names),
        *_family("wagon_received_bytes_total", "counter", "Bytes received, by client class.",
                 [(_labels(**cls(k)), n) for k, n in sorted(t.bytes.items())]),
        *_family("wagon_pages_total", "counter", "Page visits (a click: the page and its "
                 "objects) settled, by client class and outcome (failed: a request failed).",
                 [(_labels(**cls(k), outcome=o), n) for (k, o), n in sorted(t.visits.items())]),
        *_page_histogram(t, urls),
        *_family("wagon_sessions_started_total", "counter", "Sessions started.",
                 [("", s.c["started"])]),
        *_family("wagon_sessions_ended_total", "counter", "Sessions ended.",
                 [("", s.c["ended"])]),
        *_family("wagon_sessions_active", "gauge", "Sessions in flight.",
                 [("", s.c["started"] - s.c["ended"])]),
        *_quantiles("wagon_session_start_lag_seconds", "Sessions' start lag so far (|actual "
                    "- intended|), its percentiles (s).", s.start_lag),
        *_quantiles("wagon_event_loop_lag_seconds", "The generator's event-loop lag so far, "
                    "sampled every 0.1 s, its percentiles (s).", s.loop_lag),
        *_family("wagon_generator_cpu_seconds_total", "counter", "CPU time of each generator "
                 "process.", [(_labels(worker=str(k)), v) for k, v in sorted(s.cpu_s.items())]),
        *_family("wagon_run_seconds", "gauge", "Seconds since the run's start.",
                 [("", s.at)]),
        *_family("wagon_run_finished", "gauge", "1 once the run has ended and these are its "
                 "final figures.", [("", int(finished))]),
    ]
    return "\n".join(lines) + "\n"
