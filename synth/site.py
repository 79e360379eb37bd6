"""The modeled site, complete: every page and object with a size, entry and routing probabilities.

From a model's site when it has one (pages or objects whose size was never seen get a size drawn
from the model's size laws); otherwise a Zipf site: ``pages`` pages whose popularity follows
Zipf(exponent), each with a number of objects drawn from ``objects_per_page`` and sizes from
``page_size``/``object_size`` (defaults when the model lacks them). Its draws use a fixed seed,
never the scenario's. ``ModelSite.spec`` is what a scenario carries (``formats.site``): pages
link to the pages users went to next, so ``serve`` and ``site build`` render the same bytes
whether they start from the model or from the scenario.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ..formats.model import Model
from ..formats.site import SiteSpec

__all__ = ["ModelSite", "resolve_site", "DEFAULT_PAGE_SIZE", "DEFAULT_OBJECT_SIZE", "MAX_LINKS"]

DEFAULT_PAGE_SIZE = 8_000          # bytes, when the model has neither sizes nor a size law
DEFAULT_OBJECT_SIZE = 4_000
MAX_LINKS = 50                     # links written into a page's HTML


@dataclass
class ModelSite:
    """The site's content (``spec``), entry probabilities, routing as CSR cumulative rows."""

    spec: SiteSpec
    entry_p: np.ndarray               # probability of starting on each page
    popularity: np.ndarray            # probability of each page as a click (fallback routing)
    route_ptr: np.ndarray             # CSR row pointers into route_to / route_cum
    route_to: np.ndarray              # next page
    route_cum: np.ndarray             # cumulative probability within the row (last = 1)

    @cached_property
    def _route_keys(self) -> np.ndarray:
        """Routing rows searched as one array: row r's cumulative values moved into (r, r + 1]."""
        return self.route_cum + np.repeat(np.arange(len(self.entry_p)), np.diff(self.route_ptr))

    def next_pages(self, current: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """One Markov step for each current page; pages without recorded links use popularity."""
        start, stop = self.route_ptr[current], self.route_ptr[current + 1]
        u = rng.random(len(current))
        out = np.empty(len(current), np.int64)
        linked = stop > start
        if linked.any():
            pos = np.searchsorted(self._route_keys, current[linked] + u[linked], side="right")
            out[linked] = self.route_to[np.minimum(pos, stop[linked] - 1)]
        if (~linked).any():
            out[~linked] = _draw(self.popularity, u[~linked])
        return out

    def entries(self, n: int, rng: np.random.Generator) -> np.ndarray:
        return _draw(self.entry_p, rng.random(n))


def _draw(p: np.ndarray, u: np.ndarray) -> np.ndarray:
    cum = np.cumsum(p)
    return np.minimum(np.searchsorted(cum, u * cum[-1], side="right"), len(p) - 1)


def _sizes(model: Model | None, name: str, n: int, default: int, rng: np.random.Generator
           ) -> np.ndarray:
    law = model.variables.get(name) if model is not None else None
    if law is None or n == 0:
        return np.full(n, default, np.int64)
    draws = np.asarray(law.frozen.rvs(size=n, random_state=rng), float)
    return np.clip(np.round(np.nan_to_num(draws, nan=default)), 1, 1 << 30).astype(np.int64)


def _routing(n_pages: int, transitions: list) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    t = np.asarray(transitions, dtype=np.int64).reshape(-1, 3)
    t = t[np.lexsort((t[:, 1], t[:, 0]))]
    ptr = np.searchsorted(t[:, 0], np.arange(n_pages + 1))
    counts = t[:, 2].astype(float)
    cum = np.empty(len(t))
    for a, b in zip(ptr[:-1], ptr[1:]):
        if b > a:
            c = np.cumsum(counts[a:b])
            cum[a:b] = c / c[-1]
    return ptr, t[:, 1].copy(), cum


SITE_SEED = 0x5175


def _links(ptr: np.ndarray, to: np.ndarray) -> list[list[int]]:
    """Each page's links: the pages users went to next (at most MAX_LINKS)."""
    to = to.tolist()
    return [to[a:min(b, a + MAX_LINKS)] for a, b in zip(ptr[:-1].tolist(), ptr[1:].tolist())]


def resolve_site(model: Model | None, pages: int = 1000, zipf_exponent: float = 1.0
                 ) -> ModelSite:
    """The complete site of ``model`` (a Zipf site of ``pages`` pages when it has none)."""
    rng = np.random.default_rng(SITE_SEED)
    site = model.site if model is not None else {}
    if site.get("pages"):
        urls = [p["url"] for p in site["pages"]]
        known = np.array([p.get("size") or 0 for p in site["pages"]], np.int64)
        drawn = _sizes(model, "page_size", len(urls), DEFAULT_PAGE_SIZE, rng)
        page_sizes = np.where(known > 0, known, drawn)
        objects = site.get("objects", [])
        o_known = np.array([o.get("size") or 0 for o in objects], np.int64)
        o_drawn = _sizes(model, "object_size", len(objects), DEFAULT_OBJECT_SIZE, rng)
        hits = np.array([p.get("hits", 1) for p in site["pages"]], float)
        entry = np.zeros(len(urls))
        for page, count in site.get("entry", []):
            entry[page] += count
        ptr, to, cum = _routing(len(urls), site.get("transitions", []))
        spec = SiteSpec(urls, page_sizes.tolist(),
                        [list(p.get("objects", [])) for p in site["pages"]], _links(ptr, to),
                        [o["url"] for o in objects],
                        np.where(o_known > 0, o_known, o_drawn).tolist())
        return ModelSite(spec, entry / entry.sum() if entry.sum() > 0 else hits / hits.sum(),
                         hits / hits.sum(), ptr, to, cum)
    # no site in the model: Zipf popularity over generated pages
    pop = 1.0 / np.arange(1, pages + 1) ** zipf_exponent
    pop /= pop.sum()
    per_page = model.variables.get("objects_per_page") if model is not None else None
    counts = (np.clip(np.round(per_page.frozen.rvs(size=pages, random_state=rng)), 0, 50)
              .astype(int) if per_page is not None else rng.integers(0, 6, pages))
    offsets = np.concatenate(([0], np.cumsum(counts)))
    bounds = offsets.tolist()
    spec = SiteSpec([f"/pages/p{i:05d}.html" for i in range(pages)],
                    _sizes(model, "page_size", pages, DEFAULT_PAGE_SIZE, rng).tolist(),
                    [list(range(a, b)) for a, b in zip(bounds[:-1], bounds[1:])],
                    [[] for _ in range(pages)],
                    [f"/objects/o{i:06d}.gif" for i in range(bounds[-1])],
                    _sizes(model, "object_size", bounds[-1], DEFAULT_OBJECT_SIZE, rng).tolist())
    return ModelSite(spec, pop, pop, np.zeros(pages + 1, np.int64), np.zeros(0, np.int64),
                     np.zeros(0))
