"""A scenario's requests at their offered times, in time order, streamed with bounded memory.

The offered time of a click is its session's start plus the think times before it (transfer
times are unknown before a replay); its embedded objects are offered at the same time. Sessions
are read in batches; since no later request can precede the next batch's first session start,
everything before it is sorted and released, and only the requests of sessions still running
stay in memory.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Iterator

import numpy as np

from ..formats.scenario import Scenario, SessionBatch

__all__ = ["Requests", "offered_requests"]


@dataclass
class Requests:
    """Requests in time order: ``url`` indexes ``Scenario.page_urls`` for pages (is_page) and
    ``Scenario.object_urls`` for objects."""

    time: np.ndarray
    session: np.ndarray
    cls: np.ndarray
    url: np.ndarray
    is_page: np.ndarray
    size: np.ndarray

    def __len__(self) -> int:
        return len(self.time)

    def take(self, idx) -> "Requests":
        return Requests(*(getattr(self, k)[idx] for k in
                          ("time", "session", "cls", "url", "is_page", "size")))

    @staticmethod
    def concat(parts: list["Requests"]) -> "Requests":
        return Requests(*(np.concatenate([getattr(p, k) for p in parts]) for k in
                          ("time", "session", "cls", "url", "is_page", "size")))


def _expand(b: SessionBatch, obj_ptr: np.ndarray, obj_flat: np.ndarray,
            page_sizes: np.ndarray, object_sizes: np.ndarray) -> Requests:
    """All requests of a batch of sessions (unsorted)."""
    counts = np.diff(b.click_ptr)
    pages, thinks = b.pages, b.thinks
    sid, cls, starts = (np.repeat(v, counts) for v in (b.ids, b.classes, b.starts))
    cum = np.cumsum(thinks)
    click_time = starts + cum - np.repeat(cum[b.click_ptr[:-1]], counts)
    n_obj = obj_ptr[pages + 1] - obj_ptr[pages]
    per_click = 1 + n_obj
    rows = np.repeat(np.arange(len(pages)), per_click)
    k = np.arange(len(rows)) - np.repeat(np.cumsum(per_click) - per_click, per_click)
    is_page = k == 0
    obj = obj_flat[np.minimum(obj_ptr[pages[rows]] + k - 1, max(len(obj_flat) - 1, 0))] \
        if len(obj_flat) else np.zeros(len(rows), np.int64)
    url = np.where(is_page, pages[rows], obj)
    size = np.where(is_page, page_sizes[pages[rows]], object_sizes[obj] if len(object_sizes)
                    else 0)
    return Requests(click_time[rows], sid[rows], cls[rows], url, is_page, size)


def offered_requests(sc: Scenario, batches: Iterable[SessionBatch] | None = None
                     ) -> Iterator[Requests]:
    """Time-ordered chunks of all the scenario's requests; ``batches``: its sessions when the
    caller reads them already (``sc.batches()`` by default)."""
    obj_ptr = np.concatenate(([0], np.cumsum([len(o) for o in sc.site.page_objects])))
    obj_ptr = obj_ptr.astype(np.int64)
    obj_flat = np.array([o for objs in sc.site.page_objects for o in objs], np.int64)
    page_sizes = np.array(sc.site.page_sizes, np.int64)
    object_sizes = np.array(sc.site.object_sizes, np.int64)
    batches = iter(sc.batches() if batches is None else batches)
    pending: Requests | None = None
    chunk = next(batches, None)
    while chunk is not None:
        nxt = next(batches, None)
        part = _expand(chunk, obj_ptr, obj_flat, page_sizes, object_sizes)
        pending = part if pending is None else Requests.concat([pending, part])
        horizon = float(nxt.starts[0]) if nxt is not None else np.inf
        pending = pending.take(np.argsort(pending.time, kind="stable"))
        cut = int(np.searchsorted(pending.time, horizon, side="left"))
        if cut:
            yield pending.take(slice(0, cut))
        pending = pending.take(slice(cut, None))
        chunk = nxt
