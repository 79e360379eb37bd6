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

__all__ = ["clean_requests", "time_outliers", "median_run", "distinct_times",
           "cross_file_duplicates", "MIN_GAP_S"]

MIN_GAP_S = 86400.0          # a gap shorter than a day never cuts a file
SHOWN = 5                    # left-out lines listed per cause


def _ranked(counts: np.ndarray, ranks: list[int], step: int = 1 << 20) -> np.ndarray:
    """``np.searchsorted(np.cumsum(counts), ranks, side="right")`` (the distinct value each
    0-based rank of the expanded sample falls on), ``step`` counts at a time: a month's 15M
    distinct times' cumulative counts held 120 MB more."""
    ranks = np.asarray(ranks, np.int64)
    out = np.full(len(ranks), len(counts))
    below = 0
    for i in range(0, len(counts), step):
        cum = below + np.cumsum(counts[i:i + step], dtype=np.int64)
        here = (ranks >= below) & (ranks < cum[-1])
        out[here] = i + np.searchsorted(cum, ranks[here], side="right")
        below = int(cum[-1])
    return out


def _quantiles(values: np.ndarray, counts: np.ndarray, n: int, qs: list[float]) -> list[float]:
    """``np.quantile`` (linear) at each of ``qs`` of the sample of n values, distinct sorted
    ``values`` with their ``counts``, without expanding it (one pass over the counts)."""
    hs = [(n - 1) * q for q in qs]
    ks = [int(np.floor(h)) for h in hs]
    at = values[_ranked(counts, [r for k in ks for r in (k, min(k + 1, n - 1))])]
    out = []
    for (a, b), h, k in zip(at.reshape(-1, 2), hs, ks):
        t = h - k
        out.append(float(b - (b - a) * (1 - t) if t >= 0.5 else a + (b - a) * t))
    return out


def _runs(values: np.ndarray) -> np.ndarray | None:
    """Where each run of equal values starts, when ``values`` are in order (None otherwise)."""
    if not len(values) or not bool(np.all(values[1:] >= values[:-1])):
        return None
    new = np.empty(len(values), bool)
    new[0] = True
    np.not_equal(values[1:], values[:-1], out=new[1:])
    return np.flatnonzero(new)


def distinct_times(time: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(time, return_counts=True)``, the counts as int32 (the main process holds
    every piece's until they are merged: 12 bytes a distinct time instead of 16); in one pass
    when the times are already in order (a log's usually are), without np.unique's sort."""
    first = _runs(time)
    if first is None:
        values, counts = np.unique(time, return_counts=True)
        return values, counts.astype(np.int32)
    return time[first], np.diff(np.append(first, len(time))).astype(np.int32)


def merge_counted(pieces: list[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    """The distinct times of a file's pieces (each piece's sorted distinct times and their
    counts, in piece order) as the file's: when each piece starts at or after the second the
    one before it ended (a log's pieces usually do), the pieces joined, a second shared at a
    seam counted once; otherwise a stable sort merges the pieces' sorted runs. (np.unique of
    the 6.6M distinct times of a 10M-line log took 0.7 s and 400 MB, mostly page faults.)"""
    pieces = [(v, c) for v, c in pieces if len(v)]
    if not pieces:
        return np.zeros(0), np.zeros(0, np.int32)
    if all(a[-1] <= b[0] for (a, _), (b, _) in zip(pieces, pieces[1:])):
        values, counts = [pieces[0][0]], [pieces[0][1]]
        for v, c in pieces[1:]:
            if v[0] == values[-1][-1]:                 # the seam's second: counted once
                counts[-1] = counts[-1].copy()
                counts[-1][-1] += c[0]
                v, c = v[1:], c[1:]
            if len(v):
                values.append(v)
                counts.append(c)
        return np.concatenate(values), np.concatenate(counts)
    values = np.concatenate([v for v, _ in pieces])
    counts = np.concatenate([c for _, c in pieces])
    order = np.argsort(values, kind="stable")
    values, counts = values[order], counts[order]
    first = _runs(values)
    return values[first], np.add.reduceat(counts, first, dtype=np.int64)


def _cuts(values: np.ndarray, gap: float, step: int = 1 << 20) -> np.ndarray:
    """Where sorted ``values`` jump by more than ``gap`` (the index after each jump), found
    ``step`` values at a time: ``np.diff`` of a month's 15M distinct times held 135 MB more."""
    return np.concatenate([np.flatnonzero(np.diff(values[i:i + step + 1]) > gap) + (i + 1)
                           for i in range(0, max(len(values) - 1, 1), step)])


def median_run(values: np.ndarray, counts: np.ndarray) -> tuple[float, float]:
    """(first, last) time of the run holding the median time, from one file's distinct sorted
    times and their counts (module docstring): times outside it are outliers."""
    n = int(np.sum(counts, dtype=np.int64))
    low, high = _quantiles(values, counts, n, [0.01, 0.99])
    gap = max(MIN_GAP_S, high - low)
    if values[-1] - values[0] <= gap:
        return float(values[0]), float(values[-1])
    cut = _cuts(values, gap)
    mid = int(_ranked(counts, [n // 2])[0])
    k = int(np.searchsorted(cut, mid, side="right"))              # run of the median
    first = cut[k - 1] if k else 0
    last = cut[k] - 1 if k < len(cut) else len(values) - 1
    return float(values[first]), float(values[last])


def time_outliers(time: np.ndarray, file: np.ndarray) -> np.ndarray:
    """True for times outside the run of their file's median time (module docstring)."""
    out = np.zeros(len(time), bool)
    for f in np.unique(file):
        rows = np.flatnonzero(file == f)
        lo, hi = median_run(*distinct_times(time[rows]))
        out[rows] = (time[rows] < lo) | (time[rows] > hi)
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


def clean_requests(req, stats, keep: dict[int, tuple[float, float]] | None = None):
    """``req`` (``parse.Requests``) without its time outliers and cross-file duplicates;
    ``stats`` (``parse.ParseStats``) counts them and lists the first few (file, line, cause,
    detail). ``keep``: each file's run of its median time (``median_run``) when ``req`` holds
    only some of the file's requests. The types are not imported: ``parse`` imports this
    module."""
    if len(req) == 0:
        return req, stats
    if keep is None:
        outlier = time_outliers(req.time, req.file)
    else:
        bounds = np.array([keep.get(f, (-np.inf, np.inf))
                           for f in range(int(req.file.max()) + 1)])
        outlier = (req.time < bounds[req.file, 0]) | (req.time > bounds[req.file, 1])
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
