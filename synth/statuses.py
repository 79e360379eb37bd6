"""Which synthesized requests the logged server would have answered otherwise than with content:
each request of a click (its page, the objects of its view) is marked with a status drawn from
its URL's shares in the model (``Model.statuses``: 404, redirects, 403, 5xx, ...), so that
exports write that status and a replay asks a built site for it (``site.status_url``). A form's
page is drawn from its shares on the move its session makes next (``Model.move_statuses``: a
login tried again was answered 200, one its user went on from 303), where the model has them."""
from __future__ import annotations

import numpy as np

from ..formats.model import status_key
from ..formats.scenario import SessionBatch
from ..formats.site import SiteSpec

__all__ = ["StatusDraw"]


class StatusDraw:
    """The model's status shares laid out for the site's pages and objects."""

    def __init__(self, statuses: dict[str, dict[int, float]], site: SiteSpec,
                 moves: dict[tuple[int, int | None], dict[int, float]] | None = None) -> None:
        moves = moves or {}
        self.codes = np.array(sorted({c for s in (*statuses.values(), *moves.values())
                                      for c in s}), np.int64)
        self.fetch = site.fetches()
        pages = [status_key({"url": u, "method": m})
                 for u, m in zip(site.page_urls, site.page_methods)]
        self.page_cum = self._cumulative([statuses.get(u, {}) for u in pages])
        self.object_cum = self._cumulative([statuses.get(u, {}) for u in site.object_urls])
        self.moves = [(a, -1 if b is None else b) for a, b in moves]      # -1: the session's end
        self.move_cum = self._cumulative(list(moves.values()))

    def _cumulative(self, rows: list[dict[int, float]]) -> np.ndarray:
        """(row, code) cumulative shares of each row's {code: share}: a uniform draw below
        column j's is answered with codes[j] or an earlier one; at or above the last, with
        content."""
        shares = np.zeros((len(rows), len(self.codes)))
        column = {int(c): j for j, c in enumerate(self.codes)}
        for i, row in enumerate(rows):
            for code, share in row.items():
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
        page_cum = self._on_moves(b) if self.moves else self.page_cum[b.pages]
        cum = np.where((pos == 0)[:, None], page_cum[click],
                       self.object_cum[obj] if len(self.object_cum) else 1.0)
        j = (rng.random(len(click))[:, None] >= cum).sum(axis=1)
        j[(pos == 0) & f.page_absent[row[click]]] = len(self.codes)    # a page not asked for
        hit = np.flatnonzero(j < len(self.codes))
        return np.c_[click[hit], pos[hit], self.codes[j[hit]]] if len(hit) else None

    def _on_moves(self, b: SessionBatch) -> np.ndarray:
        """Each click's page's cumulative shares: its move's (the page of its session's next
        click, or the session's end) where the model has them, else its page's."""
        pages = np.asarray(b.pages, np.int64)
        ends = np.zeros(len(pages), bool)
        ends[np.asarray(b.click_ptr[1:], np.int64) - 1] = True
        nxt = np.where(ends, -1, np.r_[pages[1:], -1])
        out = self.page_cum[pages]
        for k, (a, to) in enumerate(self.moves):
            out[(pages == a) & (nxt == to)] = self.move_cum[k]
        return out
