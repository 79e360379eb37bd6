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

The pages the log clicked k ≥ 2 times are drawn Poisson(λ = k·scale) times as well: E₁ =
Σ λ·e^-λ of them come out clicked once, one-timers the log did not have. So that the run's
one-time pages stay the log's (O·scale, O the log's one-time pages), the clicks on one-time
pages keep at most ``keep`` = 1 − E₁ / (O·scale) of them, and at most O·scale − E₁ in all,
on URLs clicked once: a click that would pass that goes to the URL clicked once most recently
(which is then clicked twice) instead of a new one. A one-time view's copies, whose objects
bring at most B·scale one-time objects in all (B: the one-time objects of the log's one-time
views); a view drawn past that fetches its last copy again.
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
    keep: float                       # the share of one-time clicks left on URLs clicked once
    cap: float                        # and their most (E₁ taken from O·scale)
    first_copy: int                   # site index of pages[0]'s copy 1; then by page and copy
    views: dict[tuple[int, int], tuple[int, int]] = field(default_factory=dict)
                                      # (page, one-time view) → index of its copy 1 among the
                                      # page's views (copies c = 1.. follow it), and how many
                                      # one-time objects it has
    origin: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
                                      # site index → the page it copies (itself if none)
    used_pages: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    lone: list[int] = field(default_factory=list)   # URLs clicked once, in order
    clicks: int = 0                   # clicks on one-time pages so far
    used_views: dict[tuple[int, int], int] = field(default_factory=dict)
    view_cap: float = 0.0             # one-time objects the views' copies bring, at most
    fresh_objects: int = 0            # one-time objects the views' copies brought so far
    exhausted: int = 0

    def __post_init__(self) -> None:
        self.used_pages = np.zeros(len(self.pages), np.int64)
        self._slot = np.full(int(self.pages.max(initial=0)) + 1, -1, np.int64)
        self._slot[self.pages] = np.arange(len(self.pages))     # page → its place in pages

    def pages_of(self, pages: np.ndarray) -> np.ndarray:
        """The clicks' pages with each click on a one-time page moved to the next URL of its
        family, or to the URL clicked once most recently when one more URL clicked once would
        pass ``keep`` of the clicks or ``cap``."""
        inside = pages < len(self._slot)
        slot = np.where(inside, self._slot[np.where(inside, pages, 0)], -1)
        hit = np.flatnonzero(slot >= 0)
        out = pages.copy()
        for i, s in zip(hit.tolist(), slot[hit].tolist()):
            self.clicks += 1
            if self.lone and len(self.lone) >= min(self.keep * self.clicks, self.cap):
                out[i] = self.lone.pop()
                continue
            used = int(self.used_pages[s])
            self.used_pages[s] = used + 1
            if used >= self.copies:
                self.exhausted += 1
            c = min(used, self.copies - 1)
            out[i] = pages[i] if c == 0 else self.first_copy + s * (self.copies - 1) + c - 1
            if used < self.copies:
                self.lone.append(int(out[i]))
        return out

    def views_of(self, pages: np.ndarray, views: np.ndarray) -> np.ndarray:
        """The clicks' views with each one-time view's c-th fetch moved to its c-th copy, but
        for a fetch whose one-time objects would pass ``view_cap``: it takes the view's last
        copy again (whose objects are then fetched twice)."""
        out = views.copy()
        if not self.views:
            return out
        for i, (p, v) in enumerate(zip(self.origin[pages].tolist(), views.tolist())):
            if (p, v) not in self.views:
                continue
            first, lone = self.views[(p, v)]
            used = self.used_views.get((p, v), 0)
            if used and self.fresh_objects + lone > self.view_cap:
                c = min(used, self.copies) - 1
            else:
                self.used_views[(p, v)] = used + 1
                self.fresh_objects += lone if used < self.copies else 0
                self.exhausted += used >= self.copies
                c = min(used, self.copies - 1)
            if c:
                out[i] = first + c - 1
        return out
