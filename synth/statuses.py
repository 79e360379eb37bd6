"""Which synthesized requests the logged server would have answered otherwise than with content:
each request of a click (its page, the objects of its view) is marked with a status drawn from
its URL's shares in the model (``Model.statuses``: 404, redirects, 403, 5xx, ...), so that
exports write that status and a replay asks a built site for it (``site.status_url``)."""
from __future__ import annotations

import numpy as np

from ..formats.model import status_key
from ..formats.scenario import SessionBatch
from ..formats.site import SiteSpec

__all__ = ["StatusDraw"]


class StatusDraw:
    """The model's status shares laid out for the site's pages and objects."""

    def __init__(self, statuses: dict[str, dict[int, float]], site: SiteSpec) -> None:
        self.codes = np.array(sorted({c for s in statuses.values() for c in s}), np.int64)
        self.fetch = site.fetches()
        self.page_cum = self._cumulative(statuses, [status_key({"url": u, "method": m}) for u, m
                                                    in zip(site.page_urls, site.page_methods)])
        self.object_cum = self._cumulative(statuses, site.object_urls)

    def _cumulative(self, statuses: dict[str, dict[int, float]], urls: list[str]) -> np.ndarray:
        """(URL, code) cumulative shares: a uniform draw below column j's is answered with
        codes[j] or an earlier one; at or above the last, with content."""
        shares = np.zeros((len(urls), len(self.codes)))
        column = {int(c): j for j, c in enumerate(self.codes)}
        for i, url in enumerate(urls):
            for code, share in statuses.get(url, {}).items():
                shares[i, column[code]] = share
        return np.cumsum(shares, axis=1)

    def marks(self, b: SessionBatch, rng: np.random.Generator) -> np.ndarray | None:
        """``SessionBatch.statuses`` of ``b``: (click, position, status) of every request of its
        clicks whose draw falls within its URL's shares; None when none does."""
        f = self.fetch
        row = f.rows(b.pages, b.views)
        per_click = 1 + f.sizes(row)
        click = np.repeat(np.arange(len(row)), per_click)
        pos = np.arange(len(click)) - np.repeat(np.cumsum(per_click) - per_click, per_click)
        obj = f.objects[np.minimum(f.ptr[row[click]] + pos - 1, max(len(f.objects) - 1, 0))] \
            if len(f.objects) else np.zeros(len(click), np.int64)
        cum = np.where((pos == 0)[:, None], self.page_cum[b.pages[click]],
                       self.object_cum[obj] if len(self.object_cum) else 1.0)
        j = (rng.random(len(click))[:, None] >= cum).sum(axis=1)
        j[(pos == 0) & f.page_absent[row[click]]] = len(self.codes)    # a page not asked for
        hit = np.flatnonzero(j < len(self.codes))
        return np.c_[click[hit], pos[hit], self.codes[j[hit]]] if len(hit) else None
