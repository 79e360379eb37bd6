"""What ``wagon compare`` reads of a workload (``Digest``): its sessions with their clicks per
page, and its requests reduced to tallies — requests per URL, per size, per second — and the
earliest ``STACK_LIMIT`` of them, so that its memory grows with sessions, URLs and seconds,
never with requests. A workload held in memory (``Workload``) is digested at once; a log is
tallied one partition of its clients at a time (``wagon.analysis.logdigest``) and the tallies
merged (``merge_tallies``).

Nothing in a digest depends on the order of URLs in a table or of requests within a second
beyond what the input says (the earliest requests are in time order, ties in input order): the
counts per URL are kept most requested first, a log's think times sorted, sizes and
correlations summed exactly in integers.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from ..logs.parse import ParseStats, sorted_table
from ..logs.sessions import OBJECT_EXTENSIONS, extension_flags
from ..modeling.allocator import give_back_freed_memory
from .selfsim import MIN_BINS, TooFewPoints, wavelet
from .workload import Workload

__all__ = ["Digest", "Tally", "Value", "digest", "digest_of", "tally", "merge_tallies",
           "html_or_image", "STACK_LIMIT", "IMAGE_EXT"]

IMAGE_EXT = frozenset("gif jpg jpeg jpe png bmp xbm xpm tif tiff ico svg webp".split())
STACK_LIMIT = 200_000      # the earliest requests whose LRU stack distances are measured

Value = tuple[float, float] | str       # (value, standard error), or why there is none


@dataclass
class Tally:
    """Some requests reduced to what merges with other requests' tallies (URLs by text)."""

    urls: list[str]
    hits: np.ndarray                   # requests per URL of ``urls``
    html_or_image: int                 # requests of HTML pages or images
    success: int | None                # requests answered below 400 (None: no status)
    sizes: tuple[np.ndarray, np.ndarray]          # distinct positive sizes (bytes), counts
    times: tuple[np.ndarray, np.ndarray | None]   # request times (s), counts (None: one each)
    first: tuple[np.ndarray, np.ndarray, np.ndarray]   # the earliest STACK_LIMIT requests:
                                       # time, order among equal times (input order), URL code


@dataclass
class Digest:
    """One side of a comparison (module docstring); times in modeled seconds."""

    name: str
    kind: str                          # log | scenario | replay
    resolution: float                  # finest meaningful time bin (s; 0: exact)
    starts: np.ndarray                 # session starts, sorted
    clicks: np.ndarray
    think: np.ndarray
    requests: int
    hits: np.ndarray                   # requests per URL, most requested first (none zero)
    page_hits: np.ndarray              # clicks per page URL, most clicked first (none zero)
    html_or_image: int
    success: int | None
    sizes: tuple[np.ndarray, np.ndarray]
    first: np.ndarray                  # URL codes of the earliest STACK_LIMIT requests
    acf1: Value                        # of requests per second, at lag 1
    hurst: Value                       # wavelet estimate on requests per second
    read: ParseStats | None = None     # a log's: lines parsed, malformed, skipped, left out
    robot_requests: int = 0            # a log's requests of robots, left out of the tallies
    windows: np.ndarray | None = None  # a log's recording windows: its times are recorded time
    stamps: float | None = None        # a log read on a coarser clock (resolution): its own


def html_or_image(urls: list[str], url: np.ndarray, is_page: np.ndarray) -> np.ndarray:
    """Per request (URL codes ``url`` into ``urls``): an HTML page (a page that is no object
    by its extension) or an image."""
    return ((is_page & ~extension_flags(urls, OBJECT_EXTENSIONS)[url])
            | extension_flags(urls, IMAGE_EXT)[url])


def _earliest(time: np.ndarray, order: np.ndarray | None) -> np.ndarray:
    """Rows of the STACK_LIMIT earliest requests, in time order, ties by ``order`` (None: by
    position)."""
    rows = (np.argsort(time, kind="stable") if order is None
            else np.lexsort((order, time)))
    return rows[:STACK_LIMIT]


def tally(time: np.ndarray, url: np.ndarray, urls: list[str], flagged: np.ndarray,
          status: np.ndarray | None, size: np.ndarray | None,
          order: np.ndarray | None = None, distinct_times: bool = False) -> Tally:
    """The tally of requests (columns; ``flagged``: HTML page or image, per request);
    ``order``: their order in the input among equal times (None: as given);
    ``distinct_times``: keep each distinct time once with its count (a log's partition)."""
    positive = size[size > 0].astype(np.int64) if size is not None else np.zeros(0, np.int64)
    values, counts = np.unique(positive, return_counts=True)
    times = np.unique(time, return_counts=True) if distinct_times else (time, None)
    rows = _earliest(time, order)
    return Tally(list(urls), np.bincount(url, minlength=len(urls)), int(np.sum(flagged)),
                 None if status is None else int(np.sum(status < 400)), (values, counts),
                 times, (time[rows], rows if order is None else order[rows], url[rows]))


def _summed(values: list[np.ndarray], counts: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    distinct, at = np.unique(np.concatenate(values), return_inverse=True)
    total = np.zeros(len(distinct), np.int64)
    np.add.at(total, at.ravel(), np.concatenate(counts))
    return distinct, total


def merge_tallies(tallies: list[Tally]) -> Tally:
    """One tally of the requests of all ``tallies`` (disjoint sets of requests), but for their
    times (``_per_second`` counts them). A lone tally keeps its URL table as it is (its URLs
    are distinct already: nothing to merge)."""
    if len(tallies) == 1:
        return replace(tallies[0], times=(np.zeros(0), None))
    urls, maps = sorted_table([t.urls for t in tallies])
    hits = np.zeros(len(urls), np.int64)
    for t, m in zip(tallies, maps):
        np.add.at(hits, m, t.hits)
    successes = [t.success for t in tallies]
    time, order, url = (np.concatenate(c) for c in zip(*(
        (t.first[0], t.first[1], m[t.first[2]]) for t, m in zip(tallies, maps))))
    rows = _earliest(time, order)
    return Tally(urls, hits, sum(t.html_or_image for t in tallies),
                 None if None in successes else sum(successes),
                 _summed([t.sizes[0] for t in tallies], [t.sizes[1] for t in tallies]),
                 (np.zeros(0), None), (time[rows], order[rows], url[rows]))


_BLOCK = 1 << 20           # values at a time: temporaries of a few MB; an exact integer dot
                           # product (no int64 overflow below 3 million requests a second)


def _per_second(tallies: list[Tally]) -> np.ndarray:
    """Requests per one-second bin from the first request to the last
    (``selfsim.counts_per_bin``), counted tally by tally, each one's times let go once
    counted."""
    spans = [(t.times[0].min(), t.times[0].max()) for t in tallies if len(t.times[0])]
    if not spans:
        return np.zeros(0)
    first = min(lo for lo, _ in spans)
    p = np.zeros(int((max(hi for _, hi in spans) - first) // 1.0) + 1)
    for t in tallies:
        (times, counts), t.times = t.times, (np.zeros(0), None)
        for i in range(0, len(times), _BLOCK):          # temporaries of a block, not of all
            np.add.at(p, ((times[i:i + _BLOCK] - first) // 1.0).astype(np.int64),
                      1.0 if counts is None else counts[i:i + _BLOCK].astype(float))
    return p


def _busy(p: np.ndarray, least: int) -> str | None:
    """Why requests per second ``p`` cannot give a correlation or H, or None."""
    if len(p) < least:
        return f"{len(p)} one-second bins (at least {least} needed)"
    if np.ptp(p) == 0:
        return "the same number of requests every second"
    return None


def _dot(x: np.ndarray, y: np.ndarray) -> int:
    """Σ x·y of whole-number arrays, exactly (blocks in int64, summed as Python integers)."""
    return sum(int(np.dot(x[i:i + _BLOCK].astype(np.int64), y[i:i + _BLOCK].astype(np.int64)))
               for i in range(0, len(x), _BLOCK))


ACF_BLOCKS = 32            # consecutive blocks of seconds whose spread gives acf(1)'s error
PER_ACF_BLOCK = 8          # seconds a block holds at least (fewer seconds: fewer blocks)


def _acf1(p: np.ndarray) -> Value:
    """Pearson correlation of requests per second with the next second's, from exact integer
    sums (no copy of the series: np.corrcoef's would hold it twice more), summed over the
    ``ACF_BLOCKS`` blocks whose spread gives its standard error (``_acf1_error``)."""
    why = _busy(p, 4)
    if why:
        return why
    x, y = p[:-1], p[1:]
    n = len(x)
    blocks = min(ACF_BLOCKS, n // PER_ACF_BLOCK)
    edges = np.linspace(0, n, max(blocks, 1) + 1).astype(np.int64)
    sums = [_lag_sums(x[lo:hi], y[lo:hi]) for lo, hi in zip(edges[:-1], edges[1:])]
    _, sx, sy, sxy, sxx, syy = (sum(column) for column in zip(*sums))
    cxy = n * sxy - sx * sy
    cxx, cyy = n * sxx - sx * sx, n * syy - sy * sy
    if not cxx or not cyy:
        return "the same number of requests every second but the first or the last"
    r = max(-1.0, min(1.0, cxy / math.sqrt(cxx * cyy)))
    return r, (_acf1_error(sums, sx / n, sy / n, r) if blocks >= 2 else 1 / math.sqrt(n + 1))


def _lag_sums(xs: np.ndarray, ys: np.ndarray) -> tuple[int, ...]:
    """A block's seconds, Σx, Σy, Σxy, Σx², Σy², exactly."""
    return len(xs), int(xs.sum()), int(ys.sum()), _dot(xs, ys), _dot(xs, xs), _dot(ys, ys)


def _acf1_error(sums: list[tuple[int, ...]], mx: float, my: float, r: float) -> float:
    """The standard error of the correlation ``r`` of a series ``x`` with itself a second
    later (``y``; means ``mx``, ``my``) from the series' own spread (batch means), each block's
    ``sums`` (seconds, Σx, Σy, Σxy, Σx², Σy²): r − ρ ≈ Σₖ dₖ / √(SxxSyy), with
    dₖ = Sxyₖ − r(Sxxₖ + Syyₖ)/2 the blocks' centred sums, whose Σ dₖ² · B/(B − 1) estimates
    the variance of Σ dₖ when the blocks are nearly independent — as the seconds of a web
    workload are not (1/√n, the white-noise error, was a third of the spread of acf(1) over a
    model's seeds)."""
    d, sxx, syy = np.empty(len(sums)), 0.0, 0.0
    for k, (m, bx, by, bxy, bxx, byy) in enumerate(sums):
        cxx = bxx - 2 * mx * bx + m * mx * mx
        cyy = byy - 2 * my * by + m * my * my
        d[k] = bxy - mx * by - my * bx + m * mx * my - r * (cxx + cyy) / 2
        sxx, syy = sxx + cxx, syy + cyy
    return math.sqrt(len(sums) / (len(sums) - 1) * float(d @ d) / (sxx * syy))


def _hurst(p: np.ndarray) -> Value:
    why = _busy(p, MIN_BINS)
    if why:
        return why
    try:
        e = wavelet(p)
    except TooFewPoints as exc:
        return f"too few bins for the wavelet estimator ({exc})"
    return e.H, (e.ci[1] - e.ci[0]) / (2 * 1.96)


def digest_of(tallies: list[Tally], name: str, kind: str, resolution: float,
              starts: np.ndarray, clicks: np.ndarray, think: np.ndarray,
              page_hits: np.ndarray) -> Digest:
    """The digest of a workload's requests (the tallies of disjoint parts of them) and
    sessions (``page_hits``: clicks per page URL, any order)."""
    p = _per_second(tallies)
    give_back_freed_memory()                    # the tallies' times, before the wavelets
    acf1, hurst = _acf1(p), _hurst(p)
    del p
    t = merge_tallies(tallies)
    hits = -np.sort(-t.hits[t.hits > 0])
    first = np.unique(t.first[2], return_inverse=True)[1].ravel()
    return Digest(name, kind, resolution, np.sort(starts), clicks,
                  np.sort(think) if kind == "log" else think, int(t.hits.sum()), hits,
                  -np.sort(-page_hits[page_hits > 0]), t.html_or_image, t.success, t.sizes,
                  first, acf1, hurst)


def digest(w: Workload) -> Digest:
    """The digest of a workload held in memory, in modeled seconds (``Workload.modeled``)."""
    w = w.modeled()
    t = tally(w.time, w.url, w.urls, html_or_image(w.urls, w.url, w.is_page), w.status, w.size)
    out = digest_of([t], w.name, w.kind, w.resolution, w.starts, w.clicks, w.think,
                    w.clicks_per_page())
    out.robot_requests = w.robot_requests
    return out
