"""A scenario's requests at their offered times, in time order, streamed with bounded memory.

The offered time of a click is its session's start plus the think times before it (transfer
times are unknown before a replay). Its embedded requests are those of the view it fetches;
they come after it by the delays the log showed for their rank in a click (the header's
``object_delays``: each drawn from its rank's percentiles, those of one click together as the
log's went together — ``rho``, a Gaussian copula with one factor a click —, then sorted so
that they come in order), or at its time when the scenario has none. The think time before
the next click then runs from the last of them, as a log's think times were measured (from a
click's completion). A revalidated request is answered 304 with no body, a request the scenario
marks (``status``) with its status and no body. Sessions are read in batches; since no later
request can precede the next batch's first session start, everything before it is sorted and
released, and only the requests of sessions still running stay in memory.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Iterator

import numpy as np

from ..formats.scenario import Scenario, SessionBatch, click_delays
from ..formats.site import FetchTable, SiteSpec

__all__ = ["Requests", "offered_requests"]

_FIELDS = ("time", "session", "cls", "url", "is_page", "size", "status", "own", "referer",
           "agent", "method")


@dataclass
class Requests:
    """Requests in time order: ``url`` indexes ``Scenario.page_urls`` for pages (is_page) and
    ``Scenario.object_urls`` for objects; ``own``: a template page's concrete URL (the click's,
    ``SessionBatch.urls``), else ""; ``referer``: the path a browser names as the Referer (an
    object's: its click's page; a page's: the previous click's when that page links to it;
    else ""); ``agent``: the session's index into ``Scenario.agents`` (-1: none);
    ``method``: a form's follow-up's (its ``own`` URL, right after the form's request, ``url``
    the form's page), else "" (the site's method of ``url``)."""

    time: np.ndarray
    session: np.ndarray
    cls: np.ndarray
    url: np.ndarray
    is_page: np.ndarray
    size: np.ndarray
    status: np.ndarray
    own: np.ndarray
    referer: np.ndarray
    agent: np.ndarray
    method: np.ndarray

    def __len__(self) -> int:
        return len(self.time)

    def take(self, idx) -> "Requests":
        return Requests(*(getattr(self, k)[idx] for k in _FIELDS))

    @staticmethod
    def concat(parts: list["Requests"]) -> "Requests":
        return Requests(*(np.concatenate([getattr(p, k) for p in parts]) for k in _FIELDS))


@dataclass(frozen=True)
class _Layout:
    """What a scenario's site gives the requests of every batch: ``follows``, per object,
    whether it comes with the request before it (``SiteSpec.object_follows``); ``site``, for
    a template page's concrete URLs' sizes (``SiteSpec.concrete_size``); ``links``, the followed links as sorted keys ``from · pages + to``."""

    fetch: FetchTable
    page_sizes: np.ndarray
    object_sizes: np.ndarray
    follows: np.ndarray
    site: SiteSpec
    page_urls: np.ndarray
    links: np.ndarray

    @classmethod
    def of(cls, site: SiteSpec) -> "_Layout":
        n = len(site.page_urls)
        return cls(site.fetches(), np.array(site.page_sizes, np.int64),
                   np.array(site.object_sizes, np.int64), np.asarray(site.object_follows, bool),
                   site, np.array(site.page_urls, object),
                   np.sort(np.array([a * n + b for a, to in enumerate(site.page_links)
                                     for b in to], np.int64)))


def _expand(b: SessionBatch, lay: _Layout, delays: np.ndarray | None, rho: float,
            speedup: float, rng: np.random.Generator, seed: int) -> Requests:
    """All requests of a batch of sessions (unsorted); ``seed``: the scenario's stream seed
    (``Scenario.stream_seed``: its follow-ups' targets)."""
    fetch, page_sizes, object_sizes = lay.fetch, lay.page_sizes, lay.object_sizes
    counts = np.diff(b.click_ptr)
    pages, thinks = b.pages, b.thinks
    sid, cls, starts = (np.repeat(v, counts) for v in (b.ids, b.classes, b.starts))
    row = fetch.rows(pages, b.views)
    per_click = 1 + fetch.sizes(row)
    rows = np.repeat(np.arange(len(pages)), per_click)
    k = np.arange(len(rows)) - np.repeat(np.cumsum(per_click) - per_click, per_click)
    is_page = k == 0
    at = np.minimum(fetch.ptr[row[rows]] + k - 1, max(len(fetch.objects) - 1, 0))
    obj = fetch.objects[at] if len(fetch.objects) else np.zeros(len(rows), np.int64)
    again = np.where(is_page, fetch.page_revalidated[row[rows]],
                     fetch.revalidated[at] if len(fetch.objects) else False)
    url = np.where(is_page, pages[rows], obj)
    size = np.where(is_page, page_sizes[pages[rows]], object_sizes[obj] if len(object_sizes)
                    else 0)
    after = np.zeros(len(rows))                 # each request's delay after its click
    if delays is not None and (~is_page).any():
        after[~is_page] = click_delays(delays, k[~is_page], rows[~is_page], len(pages), rho,
                                       rng, lay.follows[obj[~is_page]]) / speedup
    done = np.zeros(len(pages))                 # each click's completion after its start
    np.maximum.at(done, rows, after)
    follow = _follow_ups(lay.site, b, seed)
    np.maximum.at(done, follow.click, follow.delay / speedup)
    busy = np.r_[0.0, done[:-1]]                # the previous click's, before each think
    busy[b.click_ptr[:-1]] = 0.0
    cum = np.cumsum(thinks + busy)
    click_time = starts + cum - np.repeat(cum[b.click_ptr[:-1]], counts)
    time = click_time[rows] + after
    status = np.where(again, 304, 200)
    if b.statuses is not None:                  # answered as the logged server did
        marked = (np.cumsum(per_click) - per_click)[b.statuses[:, 0]] + b.statuses[:, 1]
        status[marked] = b.statuses[:, 2]
    own = np.full(len(rows), "", object)
    named = lay.page_urls[pages]                # each click's URL, as a Referer names it
    if b.urls:
        clicks, texts = zip(*b.urls)
        at = (np.cumsum(per_click) - per_click)[list(clicks)]
        own[at] = named[list(clicks)] = texts
        for i, click, text in zip(at.tolist(), clicks, texts):
            size[i] = lay.site.concrete_size(int(pages[click]), text)   # the URL's own
    before = np.r_[-1, np.arange(len(pages) - 1)]
    before[b.click_ptr[:-1]] = -1               # a session's first click comes from nowhere
    linked = (before >= 0) & np.isin(pages[before] * len(lay.page_urls) + pages, lay.links)
    came = np.where(linked, named[before], "")
    referer = np.where(is_page, came[rows], named[rows])
    agent = (np.repeat(b.agents, counts)[rows] if b.agents is not None
             else np.full(len(rows), -1, np.int64))
    asked = ~(is_page & fetch.page_absent[row[rows]])      # a page shown from a cache: not
    out = Requests(time, sid[rows], cls[rows], url, is_page, np.where(status == 200, size, 0),
                   status, own, referer, agent, np.full(len(rows), "", object))
    form = (np.cumsum(per_click) - per_click)[follow.click]  # each follow-up's form's row
    after_form = Requests(time[form] + follow.delay / speedup, *(getattr(out, k)[form] for k in
                          ("session", "cls", "url", "is_page")), follow.size, follow.status,
                          follow.url, referer[form], agent[form], follow.method)
    return Requests(*(np.insert(getattr(out, k), form + 1, getattr(after_form, k))
                      for k in _FIELDS)).take(np.insert(asked, form + 1, True))


@dataclass
class _FollowUps:
    """The follow-ups of a batch's redirected forms: each one's click, delay after its form
    (modeled seconds), URL, method, status and size as logged."""

    click: np.ndarray
    delay: np.ndarray
    url: np.ndarray
    method: np.ndarray
    status: np.ndarray
    size: np.ndarray


def _follow_ups(site: SiteSpec, b: SessionBatch, seed: int) -> _FollowUps:
    """The follow-up of each click of ``b`` ``SiteSpec.followed`` names, its target drawn by
    the shares of its form's ``Redirect`` from the click's own stream (the scenario's ``seed``,
    the click's session and its index in it), as a replay draws it."""
    click, ptr = site.followed(b.pages, b.statuses), np.asarray(b.click_ptr)
    session = np.searchsorted(ptr, click, side="right") - 1
    rows = []
    for c, k, i in zip(click.tolist(), np.asarray(b.ids)[session].tolist(),
                       (click - ptr[session]).tolist()):
        r = site.page_redirects[int(b.pages[c])]
        j = r.target((seed, k, i))
        rows.append((r.delay, r.urls[j], r.methods[j], r.statuses[j], r.sizes[j]))
    delay, url, method, status, size = zip(*rows) if rows else ((),) * 5
    return _FollowUps(click, np.array(delay, float), np.array(url, object),
                      np.array(method, object), np.array(status, np.int64),
                      np.array(size, np.int64))


def offered_requests(sc: Scenario, batches: Iterable[SessionBatch] | None = None
                     ) -> Iterator[Requests]:
    """Time-ordered chunks of all the scenario's requests; ``batches``: its sessions when the
    caller reads them already (``sc.batches()`` by default)."""
    lay = _Layout.of(sc.site)
    delays = sc.object_delays
    seed = sc.stream_seed
    batches = iter(sc.batches() if batches is None else batches)
    pending: Requests | None = None
    chunk = next(batches, None)
    while chunk is not None:
        nxt = next(batches, None)
        part = _expand(chunk, lay, delays, sc.delay_rho, sc.speedup,
                       np.random.default_rng([seed, 0xDE1A, int(chunk.ids[0])]), seed)
        pending = part if pending is None else Requests.concat([pending, part])
        horizon = float(nxt.starts[0]) if nxt is not None else np.inf
        pending = pending.take(np.argsort(pending.time, kind="stable"))
        cut = int(np.searchsorted(pending.time, horizon, side="left"))
        if cut:
            yield pending.take(slice(0, cut))
        pending = pending.take(slice(cut, None))
        chunk = nxt
