"""WAGON's page measures from replay results, with the pages a cut left unfinished kept in.

Page response time is a click's first request to the last byte of its last object (the pages
file's ``done`` − ``start``); HTML latency its ``html_latency`` column (click to the first byte
of the last embedded object, of the HTML for a page without objects). A page is, at the end of
a run or of a cell (``end``, on the results' clock):

- **finished**: done by ``end``; its duration is an event;
- **cut**: started before ``end`` and not finished by then — the run's stop (``--max-time``,
  ``duration``) abandoned it, or ``end`` falls before its ``done``; its duration is censored at
  ``end`` − ``start`` (it took at least that long);
- **not started**: due (its HTML request has a row) but never begun, so it has no pages row.

Dropping the cut pages keeps the quick ones and loses the slow ones: the completed-only mean is
biased low, the more so the heavier the load. ``PageTimes.summary`` gives it beside the mean with
the cut pages at their censoring time (a lower bound of the pages' true mean) and the
Kaplan–Meier median (docs/methods.md, "Page response time, censored").

The run's stop leaves at most one page per session unfinished (the one in progress; the
session's later clicks end ``not_started`` without a pages row). Its pages row has ``done`` =
the stop, so the requests file says which it is: the session has a request that ended
``in_flight`` or ``not_started`` with an ``intended`` time (an issued HTML or object; the
requests of clicks never begun have none).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..replay.events import NOT_STARTED, UNFINISHED

__all__ = ["PageTimes", "page_times", "request_percentiles", "PERCENTILES"]

PERCENTILES = (50, 90, 99)
ROUNDING = 1e-9                   # a survival curve this close to a level has reached it


def _percentiles(x: np.ndarray, ps=PERCENTILES, scale: float = 1.0) -> dict:
    """``{"p50": …}`` of ``x`` × ``scale`` (NumPy's linear interpolation); None when empty."""
    got = scale * np.percentile(x, ps) if len(x) else [None] * len(ps)
    return {f"p{p}": None if v is None else float(v) for p, v in zip(ps, got)}


def _mean(x: np.ndarray) -> float | None:
    return float(np.mean(x)) if len(x) else None


@dataclass(frozen=True)
class PageTimes:
    """The started pages of a run or cell: ``duration`` (s; finished: done − start, cut:
    censored at the cut), ``event`` (True finished, False cut), ``html_latency`` (s, of the
    finished pages that have one); ``not_started`` and ``with_errors`` (started pages with a
    failed request) counts."""

    duration: np.ndarray
    event: np.ndarray
    html_latency: np.ndarray
    not_started: int
    with_errors: int

    @property
    def finished(self) -> int:
        return int(np.count_nonzero(self.event))

    @property
    def cut(self) -> int:
        return len(self.event) - self.finished

    def km_quantile(self, p: float) -> tuple[float | None, float | None]:
        """The Kaplan–Meier ``p`` quantile (the curve of statsmodels' ``SurvfuncRight``; its
        convention, SAS's: the first event time where the curve falls below 1 − ``p``), and,
        when it never does, None and the largest time observed (the quantile is beyond it)."""
        if not len(self.duration):
            return None, None
        # lazy: statsmodels only when a summary is asked for (wagon sweep's steps, reports)
        from statsmodels.duration.survfunc import SurvfuncRight  # lazy: see above
        curve = SurvfuncRight(self.duration, self.event.astype(float))
        # its quantile(p) compares the curve as computed, exp of a sum of logs: at exactly 0.5
        # (7/8 · 4/7) it comes out 0.49999999999999994, and the median one step early
        below = np.flatnonzero(curve.surv_prob < (1 - p) - ROUNDING)
        if not len(below):
            return None, float(self.duration.max())
        return float(curve.surv_times[below[0]]), None

    def summary(self) -> dict:
        """Counts and page response time in seconds: ``mean_finished_s`` (finished pages only:
        biased low when pages were cut), ``mean_with_cut_s`` (cut pages at their censoring time:
        a lower bound of the true mean), ``km_median_s`` and ``km_p90_s`` (Kaplan–Meier; None
        when the curve never falls that low, and then ``km_median_lower_bound_s``,
        ``km_p90_lower_bound_s``: the largest time observed, else None), ``finished_s``
        (p50/p90/p99 of the finished pages), ``html_latency_s`` (mean, p50, p90, and the
        ``pages`` it is over)."""
        (median, beyond), (p90, p90_beyond) = self.km_quantile(0.5), self.km_quantile(0.9)
        done = self.duration[self.event]
        return {"pages": len(self.event), "finished": self.finished, "cut": self.cut,
                "not_started": self.not_started, "with_errors": self.with_errors,
                "mean_finished_s": _mean(done), "mean_with_cut_s": _mean(self.duration),
                "km_median_s": median, "km_median_lower_bound_s": beyond,
                "km_p90_s": p90, "km_p90_lower_bound_s": p90_beyond,
                "finished_s": _percentiles(done),
                "html_latency_s": {"mean": _mean(self.html_latency),
                                   **_percentiles(self.html_latency, (50, 90)),
                                   "pages": len(self.html_latency)}}


def _cut_by_stop(pages, requests) -> np.ndarray:
    """Which pages rows the run's stop abandoned: of each session with an issued request that
    ended ``in_flight`` or ``not_started`` (module docstring), its last page."""
    stopped = requests[requests["error"].isin(UNFINISHED) & requests["intended"].notna()]
    last = pages.sort_values(["session", "start"], kind="stable").groupby("session").tail(1)
    cut = last.index[last["session"].isin(stopped["session"].unique())]
    return pages.index.isin(cut)


def page_times(pages, end: float, requests=None) -> PageTimes:
    """The pages (``read_results`` of a ``.pages.csv``) that started before ``end`` (seconds,
    on the results' clock: the run's ``duration_s``, or a cell's cut time) as ``PageTimes``.
    ``requests`` (the run's requests file) says which pages the run's stop abandoned and which
    clicks it never began; without it, only ``end`` cuts, and ``not_started`` is 0."""
    start, done = pages["start"].to_numpy(float), pages["done"].to_numpy(float)
    began = start < end
    event = began & (done <= end)                   # NaN done: never finished
    if requests is not None:
        event &= ~_cut_by_stop(pages, requests)
        never = (requests["kind"] == "page") & (requests["error"] == NOT_STARTED) & \
            requests["intended"].isna()
        not_started = int(np.count_nonzero(never))
    else:
        not_started = 0
    duration = np.where(event, done, np.fmin(done, end)) - start
    html = pages["html_latency"].to_numpy(float)[event]
    return PageTimes(duration[began], event[began], html[~np.isnan(html)], not_started,
                     int(np.count_nonzero(began & (pages["errors"].to_numpy() > 0))))


def request_percentiles(requests) -> dict:
    """p50, p90, p99 in milliseconds of the successful requests' times (``last_byte`` −
    ``start``) of a requests frame (``read_results``); None each when there are none."""
    ok = requests[requests["error"] == ""]
    return _percentiles((ok["last_byte"] - ok["start"]).to_numpy(float), scale=1e3)
