"""One-timers by construction: a URL the log referenced once stays referenced once.

Drawing clicks from the log's popularity visits a page the log clicked once e^-λ·λᵏ/k! times
(λ: the run's clicks over the log's): a run as long as the log misses 37 % of its one-timers
and clicks another 26 % of them again, so it has fewer distinct URLs and one-timers than the log
(NASA: 0.056 distinct URLs a request against 0.077). Here each such URL stands for a family of
``copies`` URLs, ``/wagon-once/<c>/<its path>`` for c = 1, 2, ... (c = 0: the URL itself): the
c-th click on a one-time page gets the c-th URL of its family, with the page's size, objects
and views, and the c-th click fetching a one-time view (a view of one click that fetched an
object referenced once) gets a copy of it whose one-time objects are the c-th of their
families, with their sizes. One-timers then appear at the log's rate (the routing reaches them
as often as the log did), each referenced once, their sizes the log's one-timers' (the
size–popularity relation of ProWGen, Busari & Williamson 2002). A run that needs more than
``copies`` of a URL reuses the last (``exhausted`` counts them).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

__all__ = ["OncePool", "copies_for", "once_url"]

ONCE_PREFIX = "/wagon-once"


def copies_for(scale: float) -> int:
    """URLs per family for a run of ``scale`` times the log's clicks: the number of visits
    to a once-clicked page (Poisson(scale)) stays below it but for 0.2 % of them."""
    return max(2, math.ceil(scale + 3 * math.sqrt(scale)) + 1)


def once_url(url: str, c: int) -> str:
    """The c-th URL of ``url``'s family (c = 0: ``url`` itself)."""
    return url if c == 0 else f"{ONCE_PREFIX}/{c}{url if url.startswith('/') else '/' + url}"


@dataclass
class OncePool:
    """Where the copies of one-time pages and views sit in the site, and how many of each the
    run has used so far (the generator's batches come in order: a seed gives one scenario)."""

    copies: int
    pages: np.ndarray                 # one-time pages (site indices)
    first_copy: int                   # site index of pages[0]'s copy 1; then by page and copy
    views: dict[tuple[int, int], int] = field(default_factory=dict)
                                      # (page, one-time view) → index of its copy 1 among the
                                      # page's views (copies c = 1.. follow it)
    origin: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
                                      # site index → the page it copies (itself if none)
    used_pages: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    used_views: dict[tuple[int, int], int] = field(default_factory=dict)
    exhausted: int = 0

    def __post_init__(self) -> None:
        self.used_pages = np.zeros(len(self.pages), np.int64)
        self._slot = {int(p): i for i, p in enumerate(self.pages.tolist())}

    def _turns(self, keys: np.ndarray, used: np.ndarray) -> np.ndarray:
        """Each key's copy number: how many times it came before, in this batch and before."""
        order = np.argsort(keys, kind="stable")
        k = keys[order]
        start = np.r_[0, np.flatnonzero(k[1:] != k[:-1]) + 1]
        rank = np.arange(len(k)) - np.repeat(start, np.diff(np.r_[start, len(k)]))
        out = np.empty(len(keys), np.int64)
        out[order] = rank + used[k]
        np.add.at(used, keys, 1)
        self.exhausted += int(np.sum(out >= self.copies))
        return np.minimum(out, self.copies - 1)

    def pages_of(self, pages: np.ndarray) -> np.ndarray:
        """The clicks' pages with each one-time page's c-th click moved to its c-th copy."""
        slot = np.array([self._slot.get(int(p), -1) for p in pages.tolist()], np.int64)
        hit = slot >= 0
        if not hit.any():
            return pages
        c = self._turns(slot[hit], self.used_pages)
        out = pages.copy()
        out[hit] = np.where(c == 0, pages[hit],
                            self.first_copy + slot[hit] * (self.copies - 1) + c - 1)
        return out

    def views_of(self, pages: np.ndarray, views: np.ndarray) -> np.ndarray:
        """The clicks' views with each one-time view's c-th fetch moved to its c-th copy."""
        if not self.views:
            return views
        origin = self.origin[pages]
        keys = [self.views.get((int(p), int(v)), -1)
                for p, v in zip(origin.tolist(), views.tolist())]
        hit = np.flatnonzero(np.array(keys) >= 0)
        if not len(hit):
            return views
        names = [(int(origin[i]), int(views[i])) for i in hit.tolist()]
        ids = {k: i for i, k in enumerate(dict.fromkeys(names))}
        used = np.array([self.used_views.get(k, 0) for k in ids], np.int64)
        c = self._turns(np.array([ids[k] for k in names], np.int64), used)
        for k, n in zip(ids, used.tolist()):
            self.used_views[k] = n
        out = views.copy()
        out[hit] = np.where(c == 0, views[hit],
                            np.array([keys[i] for i in hit.tolist()]) + c - 1)
        return out
