"""The live view of a replay (``wagon replay --dashboard [HOST:]PORT``): a page that updates
itself every second, ``/state.json`` (what it reads) and ``/metrics`` (Prometheus' text format,
``metrics.exposition``), served by aiohttp on a thread of the run's parent process.

The figures are the processes' latest progress states (``progress.Progress``, ``metrics.Tally``
and ``record.Stats``' generator histograms), which ``progress.Board`` hands to ``View.put``:
the view is one of the board's displays, beside the console line, and the engine knows nothing
of it. Once a second the view adds a point to its series: each process's rates over the time
between its two latest states (processes report out of phase), and the latency percentiles of
the requests they settled meanwhile, in all and per client class (p99), and of the visits of
each of the most visited pages so far (p50, p90, p99). When the run ends the view shows the
final summary and stops (``close``), or keeps serving the final figures for ``hold`` seconds
(``linger``).
"""
from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import json
import signal
import threading
import time
from collections import Counter, deque
from importlib.resources import files

from aiohttp import web

from .events import UNFINISHED
from .histogram import Histogram, Histograms
from .metrics import (CONTENT_TYPE, OK, PAGE_SERIES, Snapshot, Tally, exposition, snapshot,
                      top_pages)
from .record import summary_text

__all__ = ["View", "DashboardError", "parse_address", "linger"]

HOST = "127.0.0.1"
HISTORY = 900                    # points (seconds) the series keep
TOP_PAGES = 15
STOP_S = 2.0                     # closing the server waits at most this long
PAGE = files(__package__).joinpath("dashboard.html").read_bytes()
_lingering: list["View"] = []


class DashboardError(ValueError):
    """A ``--dashboard`` address that cannot be served."""


def parse_address(text: str) -> tuple[str, int]:
    """``PORT``, ``:PORT``, ``HOST:PORT`` or ``[IPv6]:PORT`` → (host, port); the host is
    loopback unless one is given."""
    host, sep, port = text.rpartition(":")
    host = host.strip("[]") if sep else ""
    try:
        number = int(port)
    except ValueError:
        number = -1
    if not 0 <= number <= 65535:
        raise DashboardError(f"--dashboard {text!r}: give [HOST:]PORT, a port from 0 (any "
                             "free one) to 65535")
    return host or HOST, number


def is_loopback(host: str) -> bool:
    """Is ``host`` reachable from this machine only?"""
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"


def _counts(calls: Counter, cls: int | None = None) -> dict[str, int]:
    """Requests, ok, failed and cut by the run's stop, of class ``cls`` (None: every class)."""
    n: Counter = Counter()
    for (c, _, out), v in calls.items():
        if cls is None or c == cls:
            n["requests"] += v
            n[OK if out == OK else "unfinished" if out in UNFINISHED else "failed"] += v
    return {k: n[k] for k in ("requests", OK, "failed", "unfinished")}


def _pages(st: dict) -> int:
    """Page visits settled in a process's state."""
    return sum(n for _, n in st["live"]["tally"]["visits"])


def _hist(state: dict) -> Histogram:
    """A histogram from its ``state``."""
    h = Histogram()
    h.merge(state)
    return h


def _since(state: dict, was: dict | None) -> Histogram:
    """What a histogram's ``state`` holds beyond its earlier state ``was``."""
    h = _hist(state)
    if was:
        h.counts -= _hist(was).counts
    return h


def _ms(h: Histogram, ps: tuple[float, ...] = (50, 90, 99)) -> list[float | None]:
    """Percentiles ``ps`` of ``h`` in ms (None when it is empty)."""
    got = h.percentiles(ps)
    return [None] * len(ps) if got is None else _in_ms(got)


def _in_ms(seconds: list[float]) -> list[float]:
    return [round(1e3 * v, 3) for v in seconds]


class View:
    """The live view of one run: ``put`` each process's latest state, ``ended`` the
    summary; served from ``start`` to ``close``."""

    def __init__(self, host: str, port: int, classes: list[str], urls: list[str]) -> None:
        self.host, self.port, self.classes, self.urls = host, port, classes, urls
        self.lock = threading.Lock()
        self.latest: dict[int, dict] = {}
        self.summary: dict | None = None
        self.t0_wall: float | None = None            # the run's start, once fixed
        self.used: dict[int, dict] = {}              # each process's state of the last point
        self.rates: dict[int, dict] = {}             # and its rates then
        self.page_times: dict[int, Histograms] = {}  # and its pages' histograms
        self.series: deque = deque(maxlen=HISTORY)
        self.ready = threading.Event()
        self.error: OSError | None = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self.done: asyncio.Future | None = None
        self.thread = threading.Thread(target=self._serve, name="wagon-dashboard", daemon=True)

    # ---- fed by the run --------------------------------------------------------------------
    def begin(self, t0_wall: float) -> None:
        """The run starts at ``t0_wall`` (wall clock): the series' points are timed from it."""
        self.t0_wall = t0_wall

    def put(self, k: int, state: dict) -> None:
        with self.lock:
            self.latest[k] = state

    def ended(self, summary: dict) -> None:
        with self.lock:
            self.summary = summary

    def _state(self) -> tuple[Snapshot, bool, int]:
        """The sum of the latest states (summed outside the lock: ``put`` never waits on it),
        whether the run has ended, how many processes report."""
        with self.lock:
            latest, finished = dict(self.latest), self.summary is not None
        return snapshot(latest), finished, len(latest)

    # ---- the series ------------------------------------------------------------------------
    def _point(self) -> None:
        """A point of the series from the states that came since the last one. Percentiles
        are of what was settled in that interval, not of the run so far, as Locust's and k6's
        charts show a recent window: a cumulative percentile flattens as the run grows and
        hides a change. Each page visited in the interval has its visits' count and
        percentiles (the chart draws the PAGE_SERIES pages most visited so far)."""
        with self.lock:
            latest = dict(self.latest)
        new = {k: s for k, s in latest.items() if self.used.get(k) is not s}
        if not new:
            return
        window = Histogram()
        by_class = [Histogram() for _ in self.classes]
        pages = Histograms()
        for k, st in new.items():
            was = self.used.get(k)
            dt = max(st["live"]["at"] - (was["live"]["at"] if was else 0.0), 1e-3)
            c, c0 = st["c"], (was["c"] if was else {})
            self.rates[k] = {
                "requests": (c.get("requests", 0) - c0.get("requests", 0)) / dt,
                "failed": (c.get("errors", 0) - c0.get("errors", 0)) / dt,
                "pages": (_pages(st) - (_pages(was) if was else 0)) / dt,
                "cpu": (st["live"]["cpu_s"] - (was["live"]["cpu_s"] if was else 0.0)) / dt}
            window.merge(_since(st["h"], was and was["h"]).state())
            before = was["live"]["tally"]["classes"] if was else {}
            for cls, h in st["live"]["tally"]["classes"].items():  # str keys after msgpack
                by_class[int(cls)].merge(_since(h, before.get(cls)).state())
            now = Histograms.of_state(st["live"]["tally"]["page_times"])
            pages.merge(now.since(self.page_times.get(k)).state())
            self.page_times[k] = now
            self.used[k] = st
        p50, p90, p99 = _ms(window)
        rates = self.rates.values()
        self.series.append({
            "t": round(time.time() - self.t0_wall if self.t0_wall is not None else
                       max(s["live"]["at"] for s in latest.values()), 3),
            **{f"{k}_per_s": round(sum(r[k] for r in rates), 3)
               for k in ("requests", "pages", "failed")},
            "p50_ms": p50, "p90_ms": p90, "p99_ms": p99,
            "class_p99_ms": [_ms(h, (99,))[0] for h in by_class],
            "page_ms": {p: (n, *_in_ms(got))
                        for p, (n, got) in pages.percentiles((50, 90, 99)).items()},
            "sessions_active": sum(s["c"].get("started", 0) - s["c"].get("ended", 0)
                                   for s in latest.values()),
            "cpu": max(r["cpu"] for r in rates)})

    # ---- what is served --------------------------------------------------------------------
    def state_json(self) -> dict:
        """What the page shows."""
        s, finished, workers = self._state()
        t = s.tally
        by_class = []
        for k, name in enumerate(self.classes):
            p = _ms(t.classes.get(k, Histogram()))
            by_class.append({"class": name, **_counts(t.calls, k),
                             "pages": sum(v for (c, _), v in t.visits.items() if c == k),
                             "p50_ms": p[0], "p90_ms": p[1], "p99_ms": p[2],
                             "mb": t.bytes.get(k, 0) / 1e6})
        outcomes = Counter()
        for (_, _, out), v in t.calls.items():
            if out != OK:
                outcomes[out] += v
        series, visits = list(self.series), t.page_visits()
        last = series[-1] if series else {}
        return {
            "at": s.at, "finished": finished, "workers": workers,
            "totals": {**_counts(t.calls), "pages": sum(t.visits.values()),
                       "sessions_started": s.c["started"],
                       "sessions_ended": s.c["ended"],
                       "sessions_active": s.c["started"] - s.c["ended"]},
            "rate": {"requests_per_s": last.get("requests_per_s")},
            "latency_ms": dict(zip(("p50", "p90", "p99"), _ms(s.latency))),
            "generator": {"start_lag_p99_ms": _ms(s.start_lag, (99,))[0],
                          "loop_lag_p99_ms": _ms(s.loop_lag, (99,))[0], "cpu": last.get("cpu")},
            "series": {key: [p[key] for p in series] for key in
                       ("t", "requests_per_s", "pages_per_s", "failed_per_s", "p50_ms",
                        "p90_ms", "p99_ms", "sessions_active", "cpu")},
            "class_p99_ms": {name: [p["class_p99_ms"][k] for p in series]
                             for k, name in enumerate(self.classes)},
            "classes": by_class,
            "pages": [self._page_row(t, p) for p in top_pages(visits, TOP_PAGES)],
            "page_ms": [self._page_series(p, series) for p in top_pages(visits, PAGE_SERIES)],
            "failures": [{"outcome": o, "requests": v, "stop": o in UNFINISHED}
                         for o, v in outcomes.most_common()],
            "summary": summary_text(self.summary) if finished else None}

    def _url(self, page: int) -> str:
        return self.urls[page] if page < len(self.urls) else str(page)

    def _page_row(self, t: Tally, page: int) -> dict:
        """A page's row of the table: its visits and their time so far."""
        v = t.pages[page]
        p50, p90, p99 = _ms(t.page_times.of(page))
        return {"url": self._url(page), "id": page, "visits": v[0], "with_errors": v[1],
                "timed": v[3], "mean_ms": 1e3 * v[2] / v[3] if v[3] else None,
                "p50_ms": p50, "p90_ms": p90, "p99_ms": p99}

    def _page_series(self, page: int, series: list[dict]) -> dict:
        """A page's visits and p50/p90/p99 (ms) per point of ``series`` (0 visits and null
        percentiles in an interval without one)."""
        got = [p["page_ms"].get(page, (0, None, None, None)) for p in series]
        return {"url": self._url(page), "id": page,
                **{key: [g[i] for g in got] for i, key in enumerate(("visits", "p50", "p90",
                                                                     "p99"))}}

    async def _page(self, request: web.Request) -> web.Response:
        return web.Response(body=PAGE, content_type="text/html", charset="utf-8")

    async def _state_json(self, request: web.Request) -> web.Response:
        return web.Response(text=json.dumps(self.state_json()), content_type="application/json",
                            headers={"Cache-Control": "no-store"})

    async def _metrics(self, request: web.Request) -> web.Response:
        s, finished, _ = self._state()
        return web.Response(body=exposition(s, self.classes, self.urls, finished).encode(),
                            headers={"Content-Type": CONTENT_TYPE})

    # ---- the server's thread -----------------------------------------------------------------
    def start(self) -> str:
        """Serve; the page's URL. DashboardError when the address cannot be listened on."""
        self.thread.start()
        self.ready.wait()
        if self.error is not None:
            raise DashboardError(f"--dashboard {self.host}:{self.port}: cannot listen there "
                                 f"({self.error.strerror or self.error})")
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/"

    def _serve(self) -> None:
        loop = self.loop = asyncio.new_event_loop()
        app = web.Application()
        app.router.add_get("/", self._page)
        app.router.add_get("/state.json", self._state_json)
        app.router.add_get("/metrics", self._metrics)
        runner = web.AppRunner(app, access_log=None, shutdown_timeout=STOP_S / 2)
        loop.run_until_complete(runner.setup())
        try:
            loop.run_until_complete(web.TCPSite(runner, self.host, self.port).start())
        except OSError as e:
            self.error = e
            self.ready.set()
            loop.run_until_complete(runner.cleanup())
            loop.close()
            return
        self.port = runner.addresses[0][1]
        self.done = loop.create_future()
        self.ready.set()
        ticks = loop.create_task(self._tick())
        loop.run_until_complete(self.done)
        ticks.cancel()
        loop.run_until_complete(runner.cleanup())
        loop.close()

    async def _tick(self) -> None:
        while True:
            await asyncio.sleep(1.0)
            self._point()

    def close(self, hold: float = 0.0) -> None:
        """Stop serving now (within STOP_S), or after ``hold`` seconds without waiting for
        it (``linger`` waits)."""
        if self.loop is None or self.done is None:
            return
        stop = lambda: self.done.done() or self.done.set_result(None)   # noqa: E731
        if hold > 0:
            self.loop.call_soon_threadsafe(self.loop.call_later, hold, stop)
            _lingering.append(self)
            return
        with contextlib.suppress(RuntimeError):         # its loop already closed
            self.loop.call_soon_threadsafe(stop)
        self.thread.join(STOP_S)


def linger() -> None:
    """Wait while the views of ended runs keep serving their final figures (``close`` with a
    hold); an interrupt (SIGINT, even where a cluster's start-up left it ignored) stops them
    at once."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        while _lingering:
            _lingering[0].thread.join()
            _lingering.pop(0)
    except KeyboardInterrupt:
        while _lingering:
            _lingering.pop(0).close()
    finally:
        signal.signal(signal.SIGINT, previous)
