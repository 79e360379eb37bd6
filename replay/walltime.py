"""How long a scenario's replay should last, known before it starts.

A session lasts its clicks' think times plus each click's network time; a click's network time
is its round trips (as its class' protocol fetches: a connect per new connection, a request
round per wave of objects, one for a redirected form's follow-up) plus its bytes (bodies and
HEADER_BYTES of response headers a request) over its class' bandwidths, or when its last
paced object is due, if that is later (the replay's own draw of it).
The run's expected end is the latest session start plus duration; the server is taken as idle
(its service times are not in the scenario), TLS handshakes as free.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..formats.classes import ClientClass, Protocol
from ..formats.scenario import Scenario, SessionBatch, copula_uniform, in_click_order
from ..formats.site import FetchTable
from ..formats.streams import normals

__all__ = ["WallTime", "WallTally", "expected_wall_time", "HEADER_BYTES", "REQUEST_BYTES"]

HEADER_BYTES = 250        # a response's status line and headers, about (nginx: 230–260)
REQUEST_BYTES = 300       # a request's line and headers, about (with identity: agent, referer)


@dataclass(frozen=True)
class WallTime:
    """A run's expected length: its arrivals' span, its expected end, and per class the mean
    session length and the mean of its clicks' network times, in all (how late its last click
    comes after it is due; s)."""

    arrivals_s: float
    end_s: float
    session_s: dict[str, float]
    network_s: dict[str, float]

    @property
    def drain_s(self) -> float:
        """What the sessions still running after the last arrival need."""
        return self.end_s - self.arrivals_s

    def text(self) -> str:
        """One line: the figure and where it comes from."""
        longest = max(self.session_s, key=self.session_s.get, default=None)
        why = (f"; the longest sessions on average: {longest}, {self.session_s[longest]:,.1f} s"
               if longest else "")
        return (f"expected wall time {self.end_s:,.1f} s: {self.arrivals_s:,.1f} s of "
                f"arrivals + {self.drain_s:,.1f} s for the last sessions' clicks, think times "
                f"and transfers (an idle server){why}")


def _round_trips(protocols: list[Protocol], cls: np.ndarray, objects: np.ndarray,
                 first: np.ndarray, asked: np.ndarray) -> np.ndarray:
    """Round trips of each click by its class's protocol (``cls``: its index in
    ``protocols``): its page's request when ``asked`` (not from a cache; and a connect, on a
    new connection) and its objects' waves over the protocol's connections or streams."""
    def per_click(attribute: Callable[[Protocol], int | bool]) -> np.ndarray:
        return np.array([attribute(p) for p in protocols])[cls]
    k = per_click(lambda p: max(1, p.connections))
    persistent = per_click(lambda p: p.persistent)
    waves = np.where(per_click(lambda p: p.pipeline), np.minimum(objects, 1), -(-objects // k))
    fresh = first | ~persistent | per_click(lambda p: p.close_after_page)
    page = np.where(asked > 0, 1 + fresh, fresh & persistent)   # a connect for the objects
    extra = fresh & (k > 1) & (objects > 1) & ~per_click(lambda p: p.http2)
    return page + np.where(persistent, waves + extra, 2 * waves)   # HTTP/1.0: a connect each


def _click_bytes(sc: Scenario, fetch: FetchTable) -> np.ndarray:
    """Response bytes of a click of each fetch row: its page's body (none when revalidated or
    shown from a cache), its objects' bodies (none for a revalidated one), and a header for
    each answer."""
    site = sc.site
    page_of_row = np.repeat(np.arange(len(site.page_urls)), np.diff(fetch.row))
    page = (np.asarray(site.page_sizes, float)[page_of_row]
            * ~(fetch.page_revalidated | fetch.page_absent))
    body = np.asarray(site.object_sizes, float)[fetch.objects] * ~fetch.revalidated
    cum = np.concatenate(([0.0], np.cumsum(body)))
    return page + cum[fetch.ptr[1:]] - cum[fetch.ptr[:-1]] + HEADER_BYTES * (
        ~fetch.page_absent + np.diff(fetch.ptr))


def _pacing(sc: Scenario, b: SessionBatch, fetch: FetchTable, rows: np.ndarray, paced: bool,
            network: np.ndarray | None = None) -> np.ndarray:
    """When each click's last object is due after its page (played seconds), drawn as the
    replay draws it (each session's own stream, ``Scenario.pacing``: the same delays in every
    run); 0 when objects are not paced, and for a click whose ``network`` time is as long as
    its objects can be late (its length is that time whatever they draw). ``rows``: each
    click's fetch row. A click of n objects draws a normal for itself then n for its objects
    (``click_delays``); a draw of a session's stream is a function of its place in it
    (``formats.streams``), so the batch's are drawn at once, and the copula and percentiles
    go over the batch."""
    objects = fetch.sizes(rows)
    out = np.zeros(len(objects))
    q = sc.object_delays
    if not paced or q is None or not objects.any():
        return out
    per_click = np.where(objects > 0, 1 + objects, 0)
    before = np.cumsum(per_click) - per_click              # the batch's draws before each click
    session = np.repeat(np.arange(len(b)), np.diff(b.click_ptr))
    latest = np.maximum.accumulate(q[:, -1]) / sc.speedup  # by rank: the latest so far
    late = objects > 0
    if network is not None:
        late &= network < latest[np.minimum(objects, len(q)) - 1]
    clicks = np.flatnonzero(late)
    if not len(clicks):
        return out
    n = objects[clicks]
    at = (before - before[b.click_ptr[:-1]][session])[clicks]   # its normal's place in its stream
    keys = sc.pacing_keys(b.ids)[session[clicks]]
    first = np.cumsum(n) - n                               # its first object among the batch's
    place = np.arange(int(first[-1] + n[-1]))
    rank = place - np.repeat(first, n)                     # from 0 in its click
    own = normals(np.repeat(keys, n), place + np.repeat(at + 1 - first, n))
    u = copula_uniform(np.repeat(normals(keys, at), n), own, sc.delay_rho)
    pick = np.minimum(rank, len(q) - 1) * q.shape[1] + np.ceil(u * (q.shape[1] - 1)).astype(
        np.int64)
    drawn = q.ravel()[pick]
    last = np.maximum.reduceat(drawn, first)               # each click's last once in order,
    odd = np.flatnonzero(_last_follows(sc, fetch, rows[clicks]))   # but where that follows
    if len(odd):
        last[odd] = _ordered_last(drawn, first[odd], n[odd],
                                  _follows(sc, fetch, rows[clicks[odd]], n[odd]))
    out[clicks] = last / sc.speedup
    return out


def _ordered_last(drawn: np.ndarray, first: np.ndarray, n: np.ndarray, follows: np.ndarray
                  ) -> np.ndarray:
    """The last delay of each click whose ``n`` delays start at ``first`` in ``drawn``, once
    ``in_click_order`` orders them (``follows``: of their objects, in click order)."""
    start = np.cumsum(n) - n
    at = np.repeat(first - start, n) + np.arange(int(n.sum()))
    return in_click_order(drawn[at], np.repeat(np.arange(len(n)), n), follows)[start + n - 1]


def _last_follows(sc: Scenario, fetch: FetchTable, rows: np.ndarray) -> np.ndarray:
    """Whether the last object of each of ``rows`` (each with one at least) follows."""
    return np.asarray(sc.site.object_follows, bool)[fetch.objects[fetch.ptr[rows + 1] - 1]]


def _follows(sc: Scenario, fetch: FetchTable, rows: np.ndarray, objects: np.ndarray
             ) -> np.ndarray:
    """Per object the clicks of ``rows`` fetch, in click order: whether it follows."""
    start = np.repeat(fetch.ptr[rows] - np.cumsum(objects) + objects, objects)
    at = start + np.arange(int(objects.sum()))
    return np.asarray(sc.site.object_follows, bool)[fetch.objects[at]]


def _follow_ups(sc: Scenario, b: SessionBatch) -> tuple[np.ndarray, np.ndarray]:
    """Per click of ``b``: 1 when it is a redirected form the browser follows
    (``SiteSpec.followed``: one more request, a round trip after the form's, at once: the
    replay follows the server's Location), and the follow-up's expected bytes (its body by
    its targets' shares, and a header)."""
    site = sc.site
    follow = np.zeros(len(b.pages), np.int64)
    nbytes = np.zeros(len(b.pages))
    at = site.followed(b.pages, b.statuses)
    follow[at] = 1
    nbytes[at] = [site.page_redirects[p].mean_size() + HEADER_BYTES for p in b.pages[at].tolist()]
    return follow, nbytes


def _batch_lengths(sc: Scenario, b: SessionBatch, classes: list[ClientClass], fetch: FetchTable,
                   per_row: np.ndarray, emulation: bool, paced: bool
                   ) -> tuple[np.ndarray, np.ndarray]:
    """Each session's expected length and its clicks' network times in all (s) in batch
    ``b``."""
    session = np.repeat(np.arange(len(b)), np.diff(b.click_ptr))
    rows = fetch.rows(b.pages, b.views)
    objects, size = fetch.sizes(rows), per_row[rows]
    asked = (~fetch.page_absent[rows]).astype(np.int64)     # the page's own request
    first = np.zeros(len(rows), bool)
    first[b.click_ptr[:-1]] = True
    cls = b.classes[session]
    follow, follow_bytes = _follow_ups(sc, b)
    size = size + follow_bytes
    network = np.zeros(len(rows))
    if emulation and len(classes):
        rtt, down, up = (np.array([getattr(c.network, a) for c in classes], float)[cls]
                         for a in ("rtt_ms", "down_kbps", "up_kbps"))
        network = ((_round_trips([c.protocol for c in classes], cls, objects, first, asked)
                    + follow) * rtt / 1e3 + size * 8 / (down * 1e3)
                   + REQUEST_BYTES * (asked + objects + follow) * 8 / (up * 1e3))
    click = np.maximum(network, _pacing(sc, b, fetch, rows, paced, network))
    if not len(click):
        return np.zeros(len(b)), np.zeros(len(b))
    busy = np.add.reduceat(click, b.click_ptr[:-1])
    return busy + np.add.reduceat(b.thinks, b.click_ptr[:-1]), busy


class WallTally:
    """The expected wall time summed batch by batch: of a file's sessions as they are read
    (``expected_wall_time``), or of a scenario's as they are written (``wagon synth``, which
    then does not read it back). ``classes``: as played (a ``--protocol`` override; the
    header's by default), ``emulation`` False: no network, ``paced``: objects wait for their
    delays (``--objects paced``)."""

    def __init__(self, sc: Scenario, classes: list[ClientClass] | None = None,
                 emulation: bool = True, paced: bool = True) -> None:
        self.sc, self.emulation, self.paced = sc, emulation, paced
        self.classes = sc.classes if classes is None else classes
        self.fetch = sc.site.fetches()
        self.per_row = _click_bytes(sc, self.fetch)
        self.last, self.end = 0.0, 0.0
        self.total, self.busy, self.count = (np.zeros(len(self.classes)) for _ in range(3))

    def add(self, b: SessionBatch) -> None:
        """Count the sessions of ``b`` (its times as the file holds them)."""
        k = len(self.classes)
        if not len(b):
            return
        length, network = _batch_lengths(self.sc, b, self.classes, self.fetch, self.per_row,
                                         self.emulation, self.paced)
        self.last = max(self.last, float(b.starts[-1]))
        self.end = max(self.end, float((b.starts + length).max()))
        self.total += np.bincount(b.classes, length, k)
        self.busy += np.bincount(b.classes, network, k)
        self.count += np.bincount(b.classes, minlength=k)

    def result(self) -> WallTime:
        """The run's expected length from the sessions added."""
        seen = self.count > 0
        return WallTime(self.last, self.end, *(
            {c.name: float(x / n) for c, x, n, k in zip(self.classes, sums, self.count, seen)
             if k} for sums in (self.total, self.busy)))


def expected_wall_time(sc: Scenario, classes: list[ClientClass] | None = None,
                       emulation: bool = True, paced: bool = True) -> WallTime:
    """The run's expected length against an idle server (``WallTally``'s options)."""
    tally = WallTally(sc, classes, emulation, paced)
    for b in sc.batches():
        tally.add(b)
    return tally.result()
