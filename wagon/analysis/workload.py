"""Any workload wagon knows — an access log, a scenario, a replay's results — as one set of
arrays, so that analyses (Hurst, comparisons) treat them alike.

Two logs compared are read on one clock (``on_one_clock``): when one stamps finer than the
other (netnea's microseconds against an export's or a server's whole seconds), it is read again
with its times floored to the coarser grid (``sessions.coarsened``), as a server stamping that
coarsely would have logged it, before its sessions are rebuilt: Tmin and Tmax on whole seconds
cut clicks where exact times do not (a form's follow-up 1.5 s after it, logged 2 s after), so a
log read on a finer clock than the other differs from it by the reading alone."""
from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable, Iterator, TypeVar

import numpy as np

from ..formats.kind import what_is
from ..formats.results import PAGE_COLUMNS, pages_path, read_results
from ..formats.scenario import ScenarioError, SessionBatch, read_scenario
from ..logs.parse import parse_logs
from ..logs.sessions import (OBJECT_EXTENSIONS, coarsened, dilate, extension_flags,
                             merge_partials, sessionize_kept)
from ..synth.timeline import offered_requests

__all__ = ["Workload", "load_workload", "workload_kind", "WorkloadError", "on_one_clock"]


class WorkloadError(ValueError):
    pass


@dataclass
class Workload:
    """Requests (time, URL code, status, bytes, page or object) and sessions (start, clicks,
    think times). ``status``/``size`` are None where the source has none (a scenario). A log's
    requests are those of the clients its sessions keep: robots left out (``robot_requests``),
    as ``wagon fit`` leaves them out of a model.
    ``page_hits``: a log's clicks per page URL as its sessions count them (robots left out,
    an object folded into the click of its page, as ``wagon fit`` counts a page's hits);
    None where every page request is a click (a scenario, a replay)."""

    name: str
    kind: str                      # log | scenario | replay
    time: np.ndarray
    url: np.ndarray
    urls: list[str]
    is_page: np.ndarray
    status: np.ndarray | None
    size: np.ndarray | None
    starts: np.ndarray
    clicks: np.ndarray
    think: np.ndarray
    resolution: float              # finest meaningful time bin (s; a log: its grid, 0: exact)
    source: str = ""               # the file it was read from
    speedup: float = 1.0           # its scenario's times were divided by this
    referer: np.ndarray | None = None   # a log's: each request's code into ``referers`` (-1:
    referers: list[str] | None = None   # the layout has none)
    page_hits: np.ndarray | None = None
    robot_requests: int = 0        # a log's requests of robots, left out of the arrays
    stamps: float | None = None    # a log read on a coarser clock (resolution): its own

    def clicks_per_page(self) -> np.ndarray:
        """Clicks per page URL (any order, some maybe zero): ``page_hits``, or the page
        requests counted by URL."""
        if self.page_hits is not None:
            return self.page_hits
        return np.bincount(self.url[self.is_page], minlength=len(self.urls))

    def modeled(self) -> "Workload":
        """The workload with its times multiplied by ``speedup``: a scenario synthesized with
        ``--speedup`` (or its replay) back in modeled seconds, comparable with its log."""
        if self.speedup == 1.0:
            return self
        k = self.speedup
        return replace(self, time=self.time * k, starts=self.starts * k, think=self.think * k,
                       resolution=self.resolution * k, speedup=1.0)


def _kind(path: str) -> str:
    """scenario, replay or log; a model or a run file is no workload (WorkloadError)."""
    kind = what_is(path)
    if kind == "a wagon scenario":
        return "scenario"
    if kind == "replay results":
        return "replay"
    if kind is not None:
        raise WorkloadError(f"{path}: {kind}, not a workload (give access logs, a scenario or "
                            "replay results)")
    return "log"


def _from_log(paths: list[str], fmt: str, base_month: str | None, speedup: float,
              clock: float = 0.0) -> Workload:
    req, _ = parse_logs(paths, fmt, base_month=base_month)
    req = dilate(req, speedup)
    req = coarsened(req, clock)
    partial, human = sessionize_kept(req)   # robots out: what a model is made of
    s = merge_partials([partial])
    req = req.take(np.flatnonzero(human))
    is_obj = extension_flags(req.urls, OBJECT_EXTENSIONS)[req.url]
    return Workload(", ".join(Path(p).name for p in paths), "log", req.time, req.url, req.urls,
                    ~is_obj, req.status.astype(int), req.size.astype(float),
                    s.session_start, s.samples["clicks"], s.samples["think"], s.resolution,
                    referer=req.referer, referers=list(req.referers),
                    page_hits=np.fromiter(s.site.page_hits.values(), np.int64),
                    robot_requests=int(len(human) - human.sum()))


def _replay_speedup(run: dict | None) -> float:
    """The speedup of a replay's scenario: the run file's, or (files written before it said)
    the scenario's own header when the file is still there, else 1."""
    if not run:
        return 1.0
    if run.get("speedup") is not None:
        return float(run["speedup"])
    try:
        return read_scenario(run["scenario"]).speedup
    except (KeyError, TypeError, OSError, ScenarioError):
        return 1.0


def _from_scenario(path: str) -> Workload:
    """The scenario read once: its requests at their offered times (a URL code and its time
    each: the page flag and size follow from the code) and its sessions."""
    sc = read_scenario(path)
    n_pages = len(sc.site.page_urls)
    starts, clicks, think = [], [], []

    def noted(batches: Iterator[SessionBatch]) -> Iterator[SessionBatch]:
        for b in batches:
            later = np.ones(len(b.thinks), bool)      # think times after a session's first click
            later[b.click_ptr[:-1]] = False
            starts.append(b.starts)
            clicks.append(np.diff(b.click_ptr))
            think.append(b.thinks[later])
            yield b

    # a redirected form's follow-up: a request of its own URL, no click (as a log's)
    targets = {u: n for r in sc.site.page_redirects.values() for u, n in zip(r.urls, r.sizes)}
    first = n_pages + len(sc.site.object_urls)
    target_code = {u: first + i for i, u in enumerate(targets)}
    time, code = [], []
    for r in offered_requests(sc, noted(sc.batches())):
        time.append(r.time)
        c = np.where(r.is_page, r.url, r.url + n_pages).astype(np.int32)
        follow = np.flatnonzero(r.method != "")
        c[follow] = [target_code[u] for u in r.own[follow].tolist()]
        code.append(c)
    if not time:
        raise WorkloadError(f"{path}: the scenario has no session")
    code = np.concatenate(code)
    sizes = np.array(sc.site.page_sizes + sc.site.object_sizes + list(targets.values()), float)
    # a URL the site lists as a page and as an object (an image clicked, and embedded) is one
    # URL, as in a log
    urls, url = np.unique(np.array(sc.site.page_urls + sc.site.object_urls + list(targets),
                                   object), return_inverse=True)
    return Workload(Path(path).name, "scenario", np.concatenate(time), url[code].astype(np.int32),
                    urls.tolist(), code < n_pages, None, sizes[code],
                    *map(np.concatenate, (starts, clicks, think)), 1e-3, path, sc.speedup)


def _from_replay(path: str) -> Workload:
    req = read_results(path)
    if list(req.columns) == list(PAGE_COLUMNS):          # its pages: no request, no URL
        p = Path(path)
        raise WorkloadError(f"{path}: a replay's pages, not its requests (give "
                            f"{p.with_name(p.stem.removesuffix('.pages') + p.suffix)})")
    req = req[req["start"].notna()]
    urls, codes = np.unique(req["url"].to_numpy(str), return_inverse=True)
    starts, clicks, think = np.zeros(0), np.zeros(0, np.int64), np.zeros(0)
    if Path(pages_path(path)).exists():
        pages = read_results(pages_path(path))
        pages = pages[pages["done"].notna()].sort_values(["session", "intended"], kind="stable")
        session = pages["session"].to_numpy()
        intended, done = pages["intended"].to_numpy(), pages["done"].to_numpy()
        first = np.r_[True, session[1:] != session[:-1]] if len(session) else np.zeros(0, bool)
        starts = np.sort(intended[first])
        clicks = np.diff(np.r_[np.flatnonzero(first), len(session)])
        think = intended[1:][~first[1:]] - done[:-1][~first[1:]]
    return Workload(Path(path).name, "replay", req["start"].to_numpy(float), codes.ravel(),
                    list(urls), (req["kind"] == "page").to_numpy(bool),
                    req["status"].to_numpy(int), req["bytes"].to_numpy(float), starts, clicks,
                    think, 1e-6, path, _replay_speedup(req.attrs["run"]))


def workload_kind(paths: list[str]) -> str:
    """log, scenario or replay: what ``paths`` hold (WorkloadError: a missing file, a model or
    run file, several files that are not logs)."""
    for p in paths:
        if not Path(p).exists():
            raise WorkloadError(f"{p}: No such file")
    kind = _kind(paths[0])
    if kind != "log" and len(paths) > 1:
        raise WorkloadError("give one scenario or one results file at a time")
    return kind


def load_workload(paths: list[str] | str, fmt: str = "auto", base_month: str | None = None,
                  log_speedup: float = 1.0, clock: float = 0.0) -> Workload:
    """A workload from a scenario, a replay results CSV, or access logs (kind detected);
    ``log_speedup``: logs written during a replay at that speedup, read in the scenario's
    seconds (``sessions.dilate``: sessions rebuilt by the rules in those seconds); ``clock``:
    logs read on a grid of that many seconds when coarser than their stamps (module
    docstring)."""
    paths = [paths] if isinstance(paths, str) else list(paths)
    kind = workload_kind(paths)
    if kind == "scenario":
        return _from_scenario(paths[0])
    if kind == "replay":
        return _from_replay(paths[0])
    return _from_log(paths, fmt, base_month, log_speedup, clock)


T = TypeVar("T")


def on_one_clock(read: Callable[[list[str], float], T], a: list[str], b: list[str]
                 ) -> tuple[T, T]:
    """Two workloads, each ``read(paths, clock)`` (a ``kind``, a ``resolution`` and
    ``stamps`` each), on one clock (module docstring): of two logs, the one stamped finer read
    again on the other's grid, its own grid then in ``stamps``. A scenario or replay results
    (exact times) are read as they are."""
    sides = [read(a, 0.0), read(b, 0.0)]
    if all(s.kind == "log" for s in sides):
        fine, coarse = sorted(range(2), key=lambda k: sides[k].resolution)
        own = sides[fine].resolution
        if own < sides[coarse].resolution:
            sides[fine] = read((a, b)[fine], sides[coarse].resolution)
            sides[fine].stamps = own
    return sides[0], sides[1]
