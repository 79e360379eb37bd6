"""The order of one client's requests logged at one time stamp, read from their Referers.

A log's whole seconds tie a page with what it fetched, with the forms sent from it and with
their redirects' follow-ups (the shop's checkout without a login: ``POST /checkout`` → 303 →
``GET /login?next=/cart`` → ``POST /login?next=/cart`` → 303 → ``GET /cart`` → ``POST
/checkout`` → 303 → ``GET /orders/1``, all in one second). The sessions sort such ties by URL
(``sessions._canonical_order``); this module puts them in the order a browser made them in:

- a request comes after a tied request of the URL its Referer names (its referrer), in chains
  of any length;
- among the requests free to come next, a redirect's follow-up (a page with the redirected
  request's Referer) comes right after it, then a request sent from the page shown (the last
  page fetched, or before the tie the client's last page before it), then the first in the
  sorted order;
- a cycle (``/cart`` referred by the login form, which ``/cart`` referred) is broken by taking
  the request so preferred among all those left, when none is free;
- a form turned down (answered without a redirect: a wrong password) comes before a form of
  its URL that was redirected (the retry that went through).

Only ties whose sorted order puts a request before its referrer are reordered; the others, and
every untied row, keep their place. Each reordered tie costs O(k log k) for its k rows.
"""
from __future__ import annotations

import heapq

import numpy as np

from .parse import Requests

#: the answers a browser follows at once (the page's request for the next URL)
REDIRECTS = (301, 302, 303, 307, 308)

__all__ = ["referred_after", "REDIRECTS"]


class _Queues:
    """Rows by the order they may be taken in: all, and by Referer (every one, or only the
    pages that are no forms: a redirect's follow-ups), each the lowest row first; rows taken
    are skipped when met (``taken``)."""

    def __init__(self, taken: list[bool]) -> None:
        self.taken = taken
        self.heaps: dict[tuple[str, int], list[int]] = {}

    def add(self, row: int, ref: int, follow: bool) -> None:
        heapq.heappush(self.heaps.setdefault(("any", 0), []), row)
        heapq.heappush(self.heaps.setdefault(("ref", ref), []), row)
        if follow:
            heapq.heappush(self.heaps.setdefault(("follow", ref), []), row)

    def first(self, kind: str, ref: int = 0) -> int | None:
        heap = self.heaps.get((kind, ref), [])
        while heap and self.taken[heap[0]]:
            heapq.heappop(heap)
        return heap[0] if heap else None


def _browsed(url: list[int], ref: list[int], page: list[bool], form: list[bool],
             redirect: list[bool], shown: int, after: int | None) -> list[int]:
    """The rows (0..k-1, in their sorted order) of one tie in the order a browser made them
    (module docstring); ``shown``: the page the client was on before (-1: none), ``after``:
    the Referer of its request before when that was redirected (its follow-up may be here)."""
    k = len(url)
    taken = [False] * k
    inside = set(url)
    free, left = _Queues(taken), _Queues(taken)
    waiting: dict[int, list[int]] = {}
    for i in range(k):
        follow = page[i] and not form[i]
        left.add(i, ref[i], follow)
        if ref[i] in inside and ref[i] != url[i]:
            waiting.setdefault(ref[i], []).append(i)
        else:
            free.add(i, ref[i], follow)
    out = []
    for _ in range(k):
        picks = ([("follow", after)] if after is not None else []) + [("ref", shown), ("any", 0)]
        i = next(r for r in (q.first(*p) for q in (free, left) for p in picks) if r is not None)
        taken[i] = True
        out.append(i)
        for j in waiting.pop(url[i], []):
            free.add(j, ref[j], page[j] and not form[j])
        if redirect[i]:
            after = ref[i]
        elif page[i]:
            shown, after = url[i], None
    return out


def _late(group: np.ndarray, url: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """Per tied row (``group``: its tie): is a request of the URL its Referer names (another
    URL than its own) in its tie, the first such sorted after it?"""
    width = int(max(url.max(), ref.max())) + 1
    keys, first = np.unique(group * width + url, return_index=True)
    wanted = group * width + np.maximum(ref, 0)
    j = np.minimum(np.searchsorted(keys, wanted), len(keys) - 1)
    named = (ref >= 0) & (ref != url) & (keys[j] == wanted)
    return named & (first[j] > np.arange(len(url)))


def _text_ranks(codes: np.ndarray, texts: list[str]) -> np.ndarray:
    """Per code (an index into ``texts``; outside it: none, ranked first): the rank of its text
    among those of ``codes``."""
    used = np.unique(codes)
    named = used[(used >= 0) & (used < len(texts))]
    ranked = named[sorted(range(len(named)), key=lambda i: texts[named[i]])]
    rank = np.zeros(len(used), np.int64)
    rank[np.searchsorted(used, ranked)] = np.arange(1, len(ranked) + 1)
    return rank[np.searchsorted(used, codes)]


def _tie_ranks(rows: np.ndarray, group: np.ndarray, url: np.ndarray, moved: np.ndarray,
               req: Requests, order: np.ndarray) -> np.ndarray:
    """The rank of each of ``rows`` (tied, of ties ``group``, in the sorted order) in its tie:
    rows that sort alike (URL, status, size) share one; a form answered without a redirect
    (turned down: a wrong password) comes just before a form of its URL that was redirected
    (``moved``: its retry went through), wherever the sort put it."""
    status, size = req.status[order], req.size[order]
    alike = np.r_[False, (url[1:] == url[:-1]) & (status[1:] == status[:-1])
                  & (size[1:] == size[:-1])]
    rank = 2 * np.cumsum(~alike)[rows]
    width = int(url.max()) + 1
    key = group * width + url[rows]
    went = moved[rows]
    keys, first = np.unique(key[went], return_index=True)
    if len(keys):
        j = np.minimum(np.searchsorted(keys, key), len(keys) - 1)
        retried = ~went & (keys[j] == key)
        rank[retried] = rank[went][first[j[retried]]] - 1
    return rank


def _state_before(start: np.ndarray, c: np.ndarray, url: np.ndarray, ref: np.ndarray,
                  page: np.ndarray, redirect: np.ndarray) -> tuple[list[int], list[int | None]]:
    """For rows ``start`` of the sorted requests (clients ``c``): the page the client was
    shown before (its last page not redirected; -1: none) and, when its last page before was
    redirected, that request's Referer (else None)."""
    rows = np.arange(len(c))
    before = np.maximum(start - 1, 0)
    last_shown = np.maximum.accumulate(np.where(page & ~redirect, rows, -1))[before]
    last = np.maximum.accumulate(np.where(page, rows, -1))[before]
    ok = (start > 0) & (last >= 0)
    ok_shown = ok & (last_shown >= 0) & (c[np.maximum(last_shown, 0)] == c[start])
    shown = np.where(ok_shown, url[np.maximum(last_shown, 0)], -1).tolist()
    moved = ok & (c[np.maximum(last, 0)] == c[start]) & redirect[np.maximum(last, 0)]
    after = [int(x) if m else None for x, m in zip(ref[np.maximum(last, 0)].tolist(),
                                                    moved.tolist())]
    return shown, after


def referred_after(order: np.ndarray, req: Requests, client: np.ndarray,
                   referer_urls: np.ndarray, is_object: np.ndarray, action: np.ndarray
                   ) -> np.ndarray:
    """``order`` (requests sorted by client, time, then ``sessions._canonical_order``'s keys)
    with each tie of one client and one time stamp that puts a request before its referrer in
    the order a browser made them in (module docstring). ``referer_urls``: per Referer code,
    the URL code it names (< 0: none in the log); ``is_object`` per request (no page),
    ``action`` per URL code (a form). Requests the canonical order cannot tell apart but for
    their Referer go by its text, so that nothing depends on the order of the lines."""
    n = len(order)
    c, t, url = client[order], req.time[order], req.url[order].astype(np.int64)
    same = (c[1:] == c[:-1]) & (t[1:] == t[:-1])
    tied = np.flatnonzero(np.r_[same, False] | np.r_[False, same])
    if not len(tied):
        return order
    ref = referer_urls[req.referer[order]]
    group = np.cumsum(np.r_[True, ~same])[tied]              # one number per tie
    late = _late(group, url[tied], ref[tied])
    if not late.any():
        return order
    reorder = np.isin(group, group[late])                   # the ties to reorder
    rows, group = tied[reorder], group[reorder]
    redirect = np.isin(req.status[order], REDIRECTS)
    rows = rows[np.lexsort((_text_ranks(req.referer[order[rows]], req.referers),
                            _tie_ranks(rows, group, url, redirect & action[url], req, order)))]
    page = ~is_object[order]
    heads = np.flatnonzero(np.r_[True, group[1:] != group[:-1], True])
    at = np.sort(rows)
    shown, after = _state_before(at[heads[:-1]], c, url, ref, page, redirect)
    u, r, p, f, d = (x[rows].tolist() for x in (url, ref, page, action[url], redirect))
    picked = np.concatenate([lo + np.array(_browsed(u[lo:hi], r[lo:hi], p[lo:hi], f[lo:hi],
                                                    d[lo:hi], s, a), np.int64)
                             for lo, hi, s, a in zip(heads[:-1].tolist(), heads[1:].tolist(),
                                                     shown, after)])
    out = order.copy()
    out[at] = order[rows[picked]]
    return out
