"""Requests left out after parsing, counted and shown: time outliers and lines repeated across
inputs.

- **Time outliers.** The sorted times of each input file are cut wherever two successive
  times are more than ``G = max(1 day, Q99 - Q1)`` apart (``Q1``, ``Q99``: the file's 1st and
  99th percentiles of time); requests outside the run holding the file's median time are a
  clock jump or a stray line (a line dated 2100 in a 1995 log) and would stretch the span the
  arrival rate is measured over. A file's own traffic is never cut: its quiet hours and
  outages shorter than a day or than its central 98 % stay, whatever the daily cycle.
- **Duplicates.** A request identical in every field wagon reads (time, client, request,
  status, size, referer, agent, duration, virtual host) to one of an *earlier-listed* file is a
  repeated line (overlapping rotated logs, a file given twice) and is dropped. Within one file
  identical lines are kept: a browser does fetch a URL twice in a second.
"""
from __future__ import annotations

from datetime import datetime, timezone

import numpy as np

__all__ = ["clean_requests", "time_outliers", "cross_file_duplicates", "MIN_GAP_S"]

MIN_GAP_S = 86400.0          # a gap shorter than a day never cuts a file
SHOWN = 5                    # left-out lines listed per cause


def time_outliers(time: np.ndarray, file: np.ndarray) -> np.ndarray:
    """True for times outside the run of their file's median time (module docstring)."""
    out = np.zeros(len(time), bool)
    for f in np.unique(file):
        rows = np.flatnonzero(file == f)
        q01, q99 = np.quantile(time[rows], [0.01, 0.99])
        gap = max(MIN_GAP_S, q99 - q01)
        if time[rows].max() - time[rows].min() <= gap:
            continue                                   # no gap can be that wide: no sort
        order = rows[np.argsort(time[rows], kind="stable")]
        t = time[order]
        cut = np.flatnonzero(np.diff(t) > gap) + 1
        if len(cut) == 0:
            continue
        run = np.searchsorted(cut, np.arange(len(t)), side="right")   # run of each time
        out[order] = run != run[len(t) // 2]
    return out


_KEYS = ("time", "host", "url", "method", "status", "size", "agent", "referer", "duration",
         "vhost")


def cross_file_duplicates(req) -> np.ndarray:
    """True for requests identical (module docstring) to one of an earlier-listed file."""
    if len(req) == 0 or len(np.unique(req.file)) < 2:
        return np.zeros(len(req), bool)
    cols = [np.nan_to_num(req.duration, nan=-1.0)] + [getattr(req, k) for k in _KEYS
                                                      if k != "duration"]
    order = np.lexsort([req.file] + cols[::-1])
    same = np.ones(len(order) - 1, bool)
    for c in cols:
        s = c[order]
        same &= s[1:] == s[:-1]
    group = np.cumsum(np.r_[True, ~same])              # identical requests share a group
    f = req.file[order]
    first_file = f[np.r_[0, np.flatnonzero(~same) + 1]][group - 1]
    dup = np.zeros(len(req), bool)
    dup[order] = f != first_file
    return dup


def _when(t: float) -> str:
    try:
        return datetime.fromtimestamp(t, timezone.utc).isoformat(timespec="seconds")
    except (OverflowError, OSError, ValueError):
        return f"{t:.0f} s since 1970"


def clean_requests(req, stats):
    """``req`` (``parse.Requests``) without its time outliers and cross-file duplicates;
    ``stats`` (``parse.ParseStats``) counts them and lists the first few (file, line, cause,
    detail). The types are not imported: ``parse`` imports this module."""
    if len(req) == 0:
        return req, stats
    outlier = time_outliers(req.time, req.file)
    dup = cross_file_duplicates(req) & ~outlier
    for mask, cause in ((outlier, "time outlier"), (dup, "repeated from an earlier input")):
        for i in np.flatnonzero(mask)[:SHOWN]:
            detail = (_when(float(req.time[i])) if cause == "time outlier"
                      else f"{req.urls[req.url[i]]} at {_when(float(req.time[i]))}")
            stats.left_out.append((stats.inputs[req.file[i]], int(req.line[i]), cause, detail))
    stats.time_outliers = int(outlier.sum())
    stats.duplicates = int(dup.sum())
    drop = outlier | dup
    return (req.take(~drop) if drop.any() else req), stats
