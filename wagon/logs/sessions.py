"""User sessions from parsed requests: clients, robots, clicks, embedded objects, WAGON thresholds.

Rules (documented in docs/methods.md, "Sessions"):
- a client is a host (or the first X-Forwarded-For address) + the user agent (the default,
  GoAccess's visitor: people behind one proxy stay apart), or the host alone;
- robots (clients that fetch /robots.txt or whose agent matches a robot pattern,
  ``wagon.logs.robots``) are left out and counted by rule;
- each client's requests are put in a canonical order: time, then pages before objects, then URL
  (so nothing depends on the order of lines within a second or of input files); requests
  logged at one time stamp then go in the order their Referers imply (``wagon.logs.tied``);
- a request within ``tmin`` of the previous one joins the current click (frames, redirects);
  otherwise a page starts a click; an object (by extension, or by content type when logged)
  belongs to the page that precedes it: to the click of the latest earlier request of the
  client named by its referer, or, without a referer, to the current click, however late it
  comes. An object starts a click only when nothing it could belong to precedes it: it is the
  client's first request or comes more than ``tmax`` after the previous one, or its referer
  names nothing the client fetched before (the page came from a cache, or from another site).
  When that referer names a page of the log, the click is a view of that page from a cache:
  its page is the referer's, fetched without the page's own request (``View.page_absent``),
  the object one of the view's;
  ``embed_window`` (off by default) restores the older rule: an object more than that after
  the previous request starts a click;
- a click's completion is the latest end (start + logged duration, or the start when no
  duration is logged) of its requests that began before the client's next click; the idle
  time before a click is its start minus the previous click's completion; an idle time over
  ``tmax`` starts a new session; with ``timeout`` a session is also cut at the first click past
  ``timeout`` seconds from its start;
- think times are the idle times inside sessions; those below ``tmin`` (the user clicked
  before or just as the previous page completed) are counted, not sampled, so the sample lies
  in [tmin, tmax]; each is also tallied with its transition (from page, to page) in one of
  ``THINK_BINS`` log-spaced bins over [tmin, tmax] (``think_bins``), for the think times per
  transition of the model;
- the inter-arrival sample holds the gaps between session starts as recorded, on the grid of
  the log's timestamps (whole seconds in most logs, milliseconds or microseconds in others: the
  fit treats them as interval-censored, ties included); ``session_start`` is spread uniformly
  within each cell of that grid (seeded): for a Poisson process this reconstruction is exact
  (given its count in a cell, its points are independent and uniform in it), which is what the
  arrival checks need;
- a session's browser family is that of the agent of its first request (``wagon.logs.agents``);
- client codes are ranks of the clients' identity strings, so that nothing depends on the order
  in which clients first appear in the input (the spreading draws for the sorted starts).
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import numpy as np

from .agents import FAMILIES, family_codes
from .delays import delay_bin
from .parse import MAX_PLACES, Requests, sorted_table
from .paths import referer_origin, referer_path
from .robots import robot_clients, robot_rules
from .templates import KEPT_METHODS
from .tied import REDIRECTS, referred_after
from .windows import recording_windows

__all__ = ["SessionRules", "Sessions", "Site", "View", "Partial", "DELAY_RANKS", "sessionize", "sessionize_requests",
           "sessionize_kept",
           "THINK_BINS", "think_edges", "think_bins",
           "dilate",
           "merge_partials", "OBJECT_EXTENSIONS",
           "extension_flags", "object_flags"]

#: extensions of objects a browser fetches by itself when it renders a page
OBJECT_EXTENSIONS = frozenset(
    "gif jpg jpeg jpe png bmp xbm xpm tif tiff ico svg webp css js woff woff2 ttf otf eot".split())

_PAGE_TYPES = ("text/html", "application/xhtml+xml")
_OBJECT_TYPES = ("image/", "text/css", "javascript", "ecmascript", "font/", "application/font",
                 "application/x-font", "application/vnd.ms-fontobject")


@dataclass(frozen=True)
class SessionRules:
    """How requests become clicks and sessions; every value is a command-line option.

    Example:

    >>> req, _ = wagon.parse_logs(["access_log.gz"])
    >>> len(wagon.sessionize(req, wagon.SessionRules(tmin=2, tmax=1800)).session_start)
    926
    """

    tmin: float = 2.0
    tmax: float = 600.0
    timeout: float | None = None
    embed_window: float | None = None
    identity: str = "host+agent"           # GoAccess's visitor: robots and NAT users apart
    keep_robots: bool = False
    object_extensions: frozenset[str] = OBJECT_EXTENSIONS
    robots: str | None = None            # None: the built-in list; a file or one pattern

    def __post_init__(self) -> None:
        if self.identity not in ("host", "host+agent"):
            raise ValueError(f"identity must be 'host' or 'host+agent', not {self.identity!r}")
        if not 0 <= self.tmin <= self.tmax:
            raise ValueError(f"need 0 <= tmin <= tmax (got tmin={self.tmin}, tmax={self.tmax})")
        if self.timeout is not None and self.timeout <= 0:
            raise ValueError("timeout must be positive")
        if self.embed_window is not None and self.embed_window < 0:
            raise ValueError("embed_window must be >= 0")
        robot_rules(self.robots)                 # ValueError when the list is bad


@dataclass
class Site:
    """The site as the sessions saw it: pages, their sizes and objects, entries, transitions."""

    urls: list[str]
    page_size: dict[int, int]               # url code → typical size of its HTML (bytes)
    object_size: dict[int, int]             # url code → typical size of the object
    page_objects: dict[int, list[int]]      # url code of a page → url codes of its objects
    page_hits: dict[int, int]               # url code → clicks on it
    entry: dict[int, int]                   # url code → sessions that started on it
    transitions: np.ndarray                 # (k, 3) int64: from url, to url, count
    page_views: dict[int, list["View"]] = field(default_factory=dict)   # url code of a page →
                                            # what its clicks fetched, most frequent first
    delays: np.ndarray = field(default_factory=lambda: np.zeros((0, 3), np.int64))
                                            # (rank, delay in µs, requests): when a click's
                                            # embedded requests began after its page
    delay_pairs: np.ndarray = field(default_factory=lambda: np.zeros((0, 4), np.int64))
                                            # (rank, delay bin, next delay bin, pairs): how
                                            # a click's consecutive delays go together
    think_pairs: np.ndarray = field(default_factory=lambda: np.zeros((0, 4), np.int64))
                                            # (rank, think bin, next think bin, pairs): how
                                            # a session's consecutive think times go together
    statuses: np.ndarray = field(default_factory=lambda: np.zeros((0, 3), np.int64))
                                            # (url, status, requests): how each was answered
    thinks: np.ndarray = field(default_factory=lambda: np.zeros((0, 4), np.int64))
                                            # (from url, to url, think bin, moves): the think
                                            # times of each transition (``think_bins``)
    joined: frozenset[int] = frozenset()    # embedded URLs that are no objects (a redirect's
                                            # target, a frame): in a click by Tmin alone
    page_size_rows: np.ndarray = field(default_factory=lambda: np.zeros((0, 3), np.int64))
                                            # (url, size, responses): every size of each page
                                            # (a template's concrete URLs: many)
    follows: np.ndarray = field(default_factory=lambda: np.zeros((0, 5), np.int64))
                                            # (form url, follow-up url, status, size,
                                            # follow-ups): where forms' redirects went
    follow_delays: np.ndarray = field(default_factory=lambda: np.zeros((0, 3), np.int64))
                                            # (form url, delay in µs, follow-ups): how long
                                            # after the form its follow-up began
    form_moves: np.ndarray = field(default_factory=lambda: np.zeros((0, 4), np.int64))
                                            # (form url, next click's url, the form's status,
                                            # moves): how a form was answered, by where its
                                            # user went next (a failed login: the form again)
    form_exits: np.ndarray = field(default_factory=lambda: np.zeros((0, 3), np.int64))
                                            # (form url, status, sessions ended there)


@dataclass(frozen=True)
class View:
    """What some clicks on a page fetched besides it: embedded URLs (in the URL table's order,
    a URL twice when fetched twice), which of them were revalidated (answered 304), whether the page
    itself was, and how many clicks did so on their first view of the page in their session
    and on a repeat view (a browser's cache keeps what the first view fetched); ``page_absent``:
    the page itself was not asked for (shown from a cache, its objects fetched)."""

    objects: tuple[int, ...]
    revalidated: tuple[bool, ...]
    page_revalidated: bool
    first: int
    repeat: int
    page_absent: bool = False               # the page shown from a cache: not asked for


#: embedded requests ranked past this one share the last rank's delays
DELAY_RANKS = 16


@dataclass
class Sessions:
    """Clicks grouped into sessions, with the samples the model is fitted to.

    Example:

    >>> req, _ = wagon.parse_logs(["access_log.gz"])
    >>> s = wagon.sessionize(req)
    >>> len(s.session_start), len(s.click_time), len(s.samples["think"])
    (931, 4963, 4032)
    """

    rules: SessionRules
    counts: dict[str, int]
    click_time: np.ndarray                  # float64, start of each click
    click_session: np.ndarray               # session index of each click (``narrow``)
    click_url: np.ndarray                   # int32 url code (of the Requests) of each click's
                                            # page; the click arrays are empty when merged
    session_start: np.ndarray               # float64, sorted
    samples: dict[str, np.ndarray] = field(default_factory=dict)
    site: Site | None = None
    resolution: float = 0.0                 # the grid of the logged timestamps (s): 1.0 for
                                            # whole seconds, 0.001 for ms, ...; 0.0: exact
    recorded_start: np.ndarray = field(default_factory=lambda: np.zeros(0))
                                            # sorted, as logged: what the arrival check spreads
    windows: np.ndarray | None = None       # [start, end] rows: the windows a log recorded
                                            # in windows was recorded in (``logs.windows``)
    agents: dict[str, int] = field(default_factory=dict)   # sessions per browser family (of
                                            # the agent of their first request); {} without agents


#: float64 error of a difference of two epoch times before 2106 (each the double nearest a time
#: computed in a few roundings: the logged time, less a duration, plus a duration): 4 ulps
TIME_SLACK = 4 * float(np.spacing(2.0 ** 32))


def on_grid(x: np.ndarray, step: float) -> np.ndarray:
    """Differences of logged times ``x`` with each value that lies on the ``step`` grid but for
    float64 noise (``TIME_SLACK``, or half a step if that is less) put exactly on it; the other
    values (times less a duration off the grid) unchanged; ``x`` itself when ``step`` is 0."""
    if not step > 0:
        return x
    cells = np.round(x / step)
    near = np.abs(x - cells * step) <= min(TIME_SLACK, step / 2)
    return np.where(near, cells * step, x)


def dilate(req: Requests, k: float, base: float | None = None) -> Requests:
    """``req`` with every time ``k`` times as long from ``base`` (a whole second: the grid
    stays aligned; default the first second of ``req``): a log a server wrote during a replay
    at ``--speedup k``, back in the scenario's seconds, so that session rules, laws and the
    grid are in modeled seconds."""
    if k == 1.0 or not len(req):
        return req
    base = float(np.floor(req.time.min())) if base is None else base
    # on the grid first: an epoch time's float64 error (0.2 µs) would grow k-fold
    since = on_grid(req.time - base, req.resolution or 0.0)
    return replace(req, time=base + since * k, duration=req.duration * k,
                   resolution=None if req.resolution is None else req.resolution * k,
                   cell=req.cell * k)


def coarsened(req: Requests, step: float) -> Requests:
    """``req`` as a log stamping every ``step`` seconds would have recorded it: each time
    floored to that grid (``step`` a decimal grid, 1 s or a power of ten below, as a log's).
    Two logs read on one clock are sessionized alike (``wagon compare``: Tmin and Tmax on
    floored stamps cut clicks where exact times do not); ``req`` itself when its own grid is
    as coarse."""
    if not step > (req.resolution or 0.0) or not len(req):
        return req
    cells = np.floor((on_grid(req.time, req.resolution or 0.0) + TIME_SLACK) / step)
    return replace(req, time=cells * step, resolution=step)


def float_resolution(t: np.ndarray) -> float:
    """The coarsest grid of 1 s, 0.1 s, ... 1 µs that float times ``t`` lie on within their
    float64 rounding (two ulps of the largest); 0.0 (exact) when none: for ``Requests`` built
    without a ``resolution`` (the parser's comes from the digits it read)."""
    if not len(t):
        return 1.0                        # no time: no constraint (the coarsest grid)
    fraction = t - np.floor(t)
    slack = 2 * float(np.spacing(np.abs(t).max()))
    for places in range(MAX_PLACES + 1):
        units = fraction * 10.0 ** places
        if np.all(np.abs(units - np.round(units)) <= slack * 10.0 ** places + 1e-9):
            return 10.0 ** -places
    return 0.0


def _ranks(strings: list[str]) -> np.ndarray:
    """Rank of each string in sorted order (codes that do not depend on input order)."""
    rank = np.empty(len(strings), np.int64)
    rank[sorted(range(len(strings)), key=strings.__getitem__)] = np.arange(len(strings))
    return rank


def _client_codes(req: Requests, identity: str) -> np.ndarray:
    """A client code per request, ordered as the clients' identity strings sort."""
    host = _ranks(req.hosts)[req.host] if len(req) else req.host.astype(np.int64)
    if identity == "host+agent" and len(req) and req.agent.max() >= 0:
        agent = np.where(req.agent >= 0, _ranks(req.agents)[np.maximum(req.agent, 0)] + 1, 0)
        key = host * (len(req.agents) + 1) + agent
        return np.unique(key, return_inverse=True)[1].ravel()
    return host


def extension_flags(urls: list[str], extensions: frozenset[str]) -> np.ndarray:
    """True for URLs whose last path segment ends in one of ``extensions``: the path's, before
    any query (``/style.css?v=3`` is a style sheet, ``/search?q=a.jpg`` a page)."""
    flags = np.zeros(len(urls), bool)
    for i, u in enumerate(urls):
        leaf = u.split("?", 1)[0].rsplit("/", 1)[-1]
        dot = leaf.rfind(".")
        flags[i] = dot >= 0 and leaf[dot + 1:].lower() in extensions
    return flags


def object_flags(req: Requests, extensions: frozenset[str]) -> np.ndarray:
    """True for requests of objects: by the response's content type when the log has it and it
    says (HTML: a page; images, style sheets, scripts, fonts: an object), else by extension."""
    flags = extension_flags(req.urls, extensions)[req.url] if len(req) else np.zeros(0, bool)
    if req.content_types and (req.content_type >= 0).any():
        kinds = np.zeros(len(req.content_types) + 1, np.int8)      # last: no content type
        for i, ct in enumerate(req.content_types):
            ct = ct.split(";")[0].strip().lower()
            kinds[i] = 1 if ct in _PAGE_TYPES else 2 if any(o in ct for o in _OBJECT_TYPES) else 0
        k = kinds[req.content_type]
        flags = np.where(k == 2, True, np.where(k == 1, False, flags))
    return flags


#: distinct URLs of the log an origin's Referers name, at least, for the origin to be the site's
OWN_URLS = 2
#: an answer that is never a page view (a navigation answered 204 stays where it was: the HTML
#: standard's "process a navigate response"): an analytics beacon's, an XHR's
NO_CONTENT = 204
#: the redirects a browser follows with the form's own method (RFC 9110 15.4: the others, a
#: POST's 301, 302 and 303, with a GET): a form after another's 303 is a click of its own
KEEP_METHOD = (307, 308)
#: requests after a form looked at for its follow-up (those of one client in ``tmin``)
FOLLOW_LOOKAHEAD = 64


def _gaps(t: np.ndarray, c: np.ndarray) -> np.ndarray:
    """Each request's time since its client's previous request (inf for a client's first),
    requests in client then time order."""
    gap = np.full(len(t), np.inf)
    if len(t) > 1:
        gap[1:] = np.where(c[1:] == c[:-1], np.diff(t), np.inf)
    return gap


def _actions(req: Requests) -> np.ndarray:
    """Per URL code: is it a user's action (a page keyed with a method that sends a body,
    ``templates.page_key``: a form's submission), a click of its own however soon it came?"""
    return np.array([u.split(" ", 1)[0] in KEPT_METHODS and " " in u for u in req.urls]
                    + [False], bool)


def _redirect_follows(req: Requests, order: np.ndarray, client: np.ndarray,
                      is_object: np.ndarray, action: np.ndarray, within: float) -> np.ndarray:
    """Per request in ``order``: the position in ``order`` of the form whose redirect it
    follows (-1: none). A follow-up is the client's first later request within ``within`` s
    that is no object, with a GET (the form's method after a 307 or 308), not yet taken, and
    with the form's Referer when the form has one (a browser keeps it across a redirect):
    so the forms of one logged second, sorted first, each get their own. The replay follows
    it itself (it carries what the action made: an order's page, a login form's next page),
    so the follow-up is neither a click nor an object. A GET's redirect (a directory's
    missing slash) keeps its follow-up as the click's embedded request, as the log shows it:
    an export and a replay that does not follow ask for it so."""
    form_of = np.full(len(order), -1, np.int64)
    if not len(order):
        return form_of
    c, t, status = client[order], req.time[order], req.status[order]
    acted, ref = action[req.url[order]], req.referer[order]
    named = np.array([r not in ("", "-") for r in req.referers] + [False])[ref]
    free = ~is_object[order]
    for i in np.flatnonzero(np.isin(status, REDIRECTS) & acted).tolist():
        any_method = status[i] in KEEP_METHOD
        for j in range(i + 1, min(i + 1 + FOLLOW_LOOKAHEAD, len(order))):
            if c[j] != c[i] or t[j] - t[i] >= within:
                break
            if free[j] and (any_method or not acted[j]) and (not named[i] or ref[j] == ref[i]):
                free[j], form_of[j] = False, i
                break
    return form_of


def _follow_tallies(req: Requests, order: np.ndarray, form_of: np.ndarray
                    ) -> tuple[np.ndarray, np.ndarray]:
    """Where the forms' redirects went, as ``Site.follows`` and ``Site.follow_delays`` rows:
    each follow-up (``form_of`` >= 0, per request of ``order``) with its form."""
    at = np.flatnonzero(form_of >= 0)
    form, to = order[form_of[at]], order[at]
    delay = np.round(np.maximum(req.time[to] - req.time[form], 0) * 1e6).astype(np.int64)
    return (_tally(req.url[form], req.url[to], req.status[to], req.size[to]),
            _tally(req.url[form], delay))


def _referer_urls(req: Requests) -> np.ndarray:
    """Per referer code: the URL code its path names (-1: no referer, -2: a URL not in the log)."""
    index = {u: i for i, u in enumerate(req.urls)}
    out = np.full(len(req.referers) + 1, -1, np.int64)       # last: the layout has no referer
    for i, ref in enumerate(req.referers):
        if ref in ("", "-"):
            continue
        path = referer_path(ref)
        out[i] = index.get(path, index.get(path.split("?", 1)[0], -2))
    return out


def _origin_tallies(req: Requests, order: np.ndarray, lone: np.ndarray, ref: np.ndarray,
                    referer_urls: np.ndarray) -> dict[str, dict[str, int]]:
    """The origins (``paths.referer_origin``) of the Referers of the clicks that begin on an
    object at positions ``lone`` of ``order`` naming no URL of the log, with their counts;
    and for each origin the ``OWN_URLS`` first (in text order) of the URLs of the log its
    Referers name, as ``origin URL`` keys: merged over the partitions (summed, the keys
    united: an origin names ``OWN_URLS`` URLs in all when it does in the union of every
    partition's first ones), for ``merge_partials``' ``linked_clicks``."""
    code = req.referer[order]
    rows = lone[ref[lone] == -2]
    codes, n = np.unique(code[rows], return_counts=True)
    alone: dict[str, int] = {}
    for c, k in zip(codes.tolist(), n.tolist()):
        o = referer_origin(req.referers[c])
        alone[o] = alone.get(o, 0) + k
    named_urls: dict[str, set[str]] = {}
    for c in np.unique(code[ref >= 0]).tolist():       # a referer names one URL (``ref``)
        named_urls.setdefault(referer_origin(req.referers[c]), set()).add(
            req.urls[referer_urls[c]])
    named = {f"{o} {u}": 1 for o, urls in named_urls.items() for u in sorted(urls)[:OWN_URLS]}
    return {"lone_referer_origins": alone, "named_referer_origins": named}


def _form_answers(page: np.ndarray, status: np.ndarray, form: np.ndarray, moved: np.ndarray
                  ) -> dict[str, np.ndarray]:
    """``Partial.form_moves`` and ``form_exits``: each click on a form (``form``: a page of
    another method than GET whose request the log has), its status and the page of the
    session's next click (``moved``: click i's session goes on to click i + 1), or the
    session's end."""
    goes_on = np.r_[moved, False] if len(page) else np.zeros(0, bool)
    on = np.flatnonzero(form & goes_on)
    end = form & ~goes_on
    return {"form_moves": _tally(page[on], page[on + 1], status[on]),
            "form_exits": _tally(page[end], status[end])}


def _cut_long_sessions(t_click: np.ndarray, new_session: np.ndarray, timeout: float) -> None:
    """Start a new session at the first click more than ``timeout`` after its session began."""
    starts = np.flatnonzero(new_session)
    ends = np.r_[starts[1:], len(t_click)]
    long = np.flatnonzero(t_click[ends - 1] - t_click[starts] > timeout)
    for s in long:
        begin = t_click[starts[s]]
        for k in range(starts[s] + 1, ends[s]):
            if t_click[k] - begin > timeout:
                new_session[k] = True
                begin = t_click[k]


def _canonical_order(req: Requests, idx: np.ndarray, client: np.ndarray,
                     is_object: np.ndarray) -> np.ndarray:
    """``idx`` sorted by client, time, pages before objects, redirects before the rest (what
    a redirect sent the browser to came after it), URL (as strings), status, size: an order
    that does not depend on the order of the input lines. The last four keys packed
    into one integer, and client and time into another when times are whole seconds (most
    logs): two keys sort in half the time of six (``_by_pairs``)."""
    if not len(idx):
        return idx
    url_rank = _ranks(req.urls)[req.url[idx]]
    t = req.time[idx]
    followed = ~np.isin(req.status[idx], REDIRECTS)
    minor = _packed([is_object[idx], followed, url_rank, req.status[idx], req.size[idx]])
    major = _packed([client[idx], t.astype(np.int64)]) if np.all(t == np.floor(t)) else None
    if minor is None or major is None:
        keys = (req.size[idx], req.status[idx], url_rank, followed, is_object[idx], t,
                client[idx])
        return idx[np.lexsort(keys)]
    return idx[_by_pairs(major, minor)]


def _packed(columns: list[np.ndarray]) -> np.ndarray | None:
    """Integer columns as one int64 key that sorts as they do lexicographically (the first
    most significant): each column less its minimum, in as many bits as its range needs; None
    when they need more than 63 bits."""
    key, bits = np.zeros(len(columns[0]), np.int64), 0
    for c in columns:
        c = c.astype(np.int64)
        low = int(c.min())
        width = (int(c.max()) - low).bit_length()
        bits += width
        if bits > 63:
            return None
        key = (key << width) | (c - low)
    return key


def _by_pairs(major: np.ndarray, minor: np.ndarray) -> np.ndarray:
    """``np.lexsort((minor, major))`` as one stable sort of ``major`` and a sort by ``minor``
    of the rows whose ``major`` ties (a sixth of them on NASA's log): half the time of
    lexsort's two full sorts."""
    order = np.argsort(major, kind="stable")
    ranked = major[order]
    tie = np.zeros(len(order), bool)
    tie[1:] = ranked[1:] == ranked[:-1]
    tie[:-1] |= tie[1:]
    rows = np.flatnonzero(tie)
    tied = order[rows]
    order[rows] = tied[np.lexsort((minor[tied], ranked[rows]))]
    return order


def _referer_parents(url: np.ndarray, ref: np.ndarray, segment: np.ndarray,
                     shown: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
    """For each request whose referer names a URL: the latest earlier request of the same
    segment (client, since its last gap over tmax) with that URL, else -1; ``shown``: (URL,
    position) pairs of pages shown at a request's position without a request of their own
    (a form's follow-up, at the form's)."""
    n = len(url)
    pos = np.arange(n, dtype=np.int64)
    keys = url.astype(np.int64) * n + pos
    if shown is not None and len(shown[0]):
        keys = np.concatenate([keys, shown[0] * n + shown[1]])
    keys = np.sort(keys)
    out = np.full(n, -1, np.int64)
    ask = np.flatnonzero(ref >= 0)
    if len(ask) == 0:
        return out
    j = np.searchsorted(keys, ref[ask] * n + ask) - 1
    hit = keys[np.maximum(j, 0)]
    found = (j >= 0) & (hit // n == ref[ask]) & (hit % n >= segment[ask])
    out[ask[found]] = hit[found] % n
    return out


def sessionize(req: Requests, rules: SessionRules = SessionRules(), seed: int = 0) -> Sessions:
    """Group requests into clicks and sessions and draw the model's samples from them.

    ``seed`` drives the dithering of whole-second session starts (module docstring).

    Example:

    >>> req, _ = wagon.parse_logs(["access_log.gz"])
    >>> sessions = wagon.sessionize(req, wagon.SessionRules(tmin=2, tmax=600))
    >>> sessions.counts["sessions"], sessions.counts["clicks"]
    (931, 4963)
    """
    return merge_partials([sessionize_requests(req, rules)], rules, seed)


def sessionize_requests(req: Requests, rules: SessionRules = SessionRules()) -> Partial:
    """Sessions of ``req`` as a ``Partial``: what merges with the partials of other clients
    (``merge_partials``), with each click's time, session and URL."""
    return sessionize_kept(req, rules)[0]


def sessionize_kept(req: Requests, rules: SessionRules = SessionRules()
                    ) -> tuple[Partial, np.ndarray]:
    """``sessionize_requests``'s partial, and per request whether a client the sessions keep
    sent it (not a robot): the requests a model is made of, and so what a synthetic workload
    is compared with."""
    client = _client_codes(req, rules.identity)
    counts: dict = {"requests": len(req), "clients": int(np.count_nonzero(np.bincount(client)))}
    if rules.keep_robots:
        robots, by_rule = np.zeros(0, np.int64), {}
    else:
        robots, by_rule = robot_clients(client, req.url, req.urls, req.agent, req.agents,
                                        robot_rules(rules.robots))
    keep = ~np.isin(client, robots)
    counts["robot_clients"] = int(len(robots))
    counts["robot_requests"] = int((~keep).sum())
    counts["robots_by_rule"] = by_rule
    all_objects = object_flags(req, rules.object_extensions) | (req.status == NO_CONTENT)
    referer_urls = _referer_urls(req)
    action = _actions(req)                              # per URL code, once
    files = extension_flags(req.urls, rules.object_extensions)
    fetched = all_objects | files[req.url]              # no page: a file by its extension too
    order = referred_after(_canonical_order(req, np.flatnonzero(keep), client, all_objects),
                           req, client, referer_urls, fetched, action)
    form_of = _redirect_follows(req, order, client, fetched, action, rules.tmin)
    followed = form_of >= 0
    counts["redirect_follows"] = int(followed.sum())
    follows, follow_delays = _follow_tallies(req, order, form_of)
    # a follow-up is no click nor object, but the page the form led to: objects naming it in
    # their Referer belong to the form's click (not to an older click of that URL)
    kept_at = np.cumsum(~followed) - 1
    shown = (req.url[order[followed]].astype(np.int64), kept_at[form_of[followed]])
    gap = _gaps(req.time[order], client[order])[~followed]   # a follow-up is a request too:
    order = order[~followed]                                 # a frame 1 s after it joins it
    t, c = req.time[order], client[order]
    url, status, size = req.url[order], req.status[order], req.size[order]
    is_object = all_objects[order]
    ref = referer_urls[req.referer[order]] if len(order) else np.zeros(0, np.int64)
    n = len(t)

    first = np.ones(n, bool)
    first[1:] = c[1:] != c[:-1]
    lapse = first | (gap > rules.tmax)                 # nothing earlier to belong to
    segment = np.maximum.accumulate(np.where(lapse, np.arange(n), 0)) if n else first
    parent = _referer_parents(url, ref, segment, shown)
    late = (is_object & (gap >= rules.embed_window) if rules.embed_window is not None
            else np.zeros(n, bool))
    orphan = is_object & (ref != -1) & (parent < 0)    # a referer naming nothing fetched before
    start = lapse | (action[url] & ~is_object) | ((gap >= rules.tmin) &
                                                      (~is_object | late | orphan))
    cs = np.flatnonzero(start)                          # click starts (every client's first too)
    k = len(cs)
    own = np.cumsum(start) - 1                          # the click in progress at each request
    a_page = ~extension_flags(req.urls, rules.object_extensions)
    cached = start & is_object & (parent < 0) & (ref >= 0) & a_page[np.maximum(ref, 0)]
    page = np.where(cached[cs], ref[cs], url[cs])       # each click's page
    attach = ~start & is_object & (parent >= 0)
    link = np.where(attach, parent, np.arange(n))
    for _ in range(64):                                 # referer chains: page ← css ← image
        nxt = link[link]
        if np.array_equal(nxt, link):
            break
        link = nxt
    click_of = own[link]

    # completion of each click: latest end of its requests begun before the next click
    end = t + np.nan_to_num(req.duration[order]) if n else t
    same_client_next = np.r_[~first[cs[1:]], False] if k else np.zeros(0, bool)
    next_start = np.where(same_client_next, np.r_[t[cs[1:]], np.inf] if k else t, np.inf)
    counted = start | (t < next_start[click_of])
    completion = t[cs].copy()
    np.maximum.at(completion, click_of[counted], end[counted])
    idle = np.full(k, np.inf)
    if k > 1:
        idle[1:] = np.where(same_client_next[:-1], t[cs[1:]] - completion[:-1], np.inf)
    new_session = idle > rules.tmax
    if rules.timeout is not None:
        _cut_long_sessions(t[cs], new_session, rules.timeout)
    session = np.cumsum(new_session) - 1

    ok200 = status == 200
    member = ~start | cached                            # embedded requests (not a click's page)
    page_size = (np.bincount(click_of, weights=np.where(ok200, size, 0), minlength=k)
                 .astype(np.int64) if n else np.zeros(0, np.int64))
    page_ok = ok200[cs] & (page_size > 0) & ~cached[cs]
    obj_ok = member & ok200 & (size > 0)
    resolution = req.resolution if req.resolution is not None else float_resolution(t)
    inside = on_grid(idle[~new_session], resolution)
    moved = ~new_session[1:]                            # the moves, one a think time (inside)
    thought = inside >= rules.tmin
    samples = {
        "clicks": narrow(np.bincount(session) if len(session) else np.zeros(0, np.int64)),
        "think": inside[inside >= rules.tmin],
        "page_size": narrow(page_size[page_ok]),
        "objects_per_page": narrow(np.bincount(click_of, minlength=k) - ~cached[cs]),
        "object_size": narrow(size[obj_ok]),
    }
    counts.update(sessions=int(new_session.sum()), clicks=int(k),
                  requests_used=int(n) + counts["redirect_follows"],
                  embedded_requests=int(member.sum()),
                  object_clicks=int(is_object[cs].sum()), cached_views=int(cached.sum()),
                  referer_attached=int((attach & (click_of != own)).sum()),
                  think_below_tmin=int((inside < rules.tmin).sum()),
                  with_duration=int(np.isfinite(req.duration[order]).sum()))
    counts.update(_origin_tallies(req, order, cs[is_object[cs] & ~cached[cs]], ref,
                                  referer_urls))
    full = ok200 & (size > 0)                 # complete responses: their size is the object's
    first_agent = req.agent[order][cs][new_session] if n else np.zeros(0, np.int64)
    partial = Partial(counts=counts, urls=list(req.urls), session_start=t[cs][new_session],
                      samples=samples, resolution=resolution, cell=req.cell,
                      agents=_families(first_agent, req.agents),
                      page_hits=_tally(page),
                      page_objects=_tally(page[click_of][member], url[member],
                                          distinct=click_of[member]),
                      page_sizes=_tally(url[~member & full], size[~member & full]),
                      object_sizes=_tally(url[member & full], size[member & full]),
                      entry=_tally(page[new_session]),
                      transitions=_tally(page[:-1][moved], page[1:][moved]),
                      thinks=_tally(page[:-1][moved][thought], page[1:][moved][thought],
                                    think_bins(inside[thought], rules)),
                      views=_click_views(url, status == 304, page, cached[cs], cs, click_of, member,
                                         session, len(req.urls)),
                      delays=_delays(t, cs, click_of, member),
                      delay_pairs=_delay_pairs(t, cs, click_of, member),
                      think_pairs=_think_pairs(inside, moved, rules),
                      statuses=_tally(url, status),
                      joined=_tally(url[member & ~is_object]),
                      follows=follows, follow_delays=follow_delays,
                      **_form_answers(page, status[cs], action[page] & ~cached[cs], moved),
                      clicks=(t[cs], narrow(session), page))
    return partial, keep


def _click_views(url: np.ndarray, revalidated: np.ndarray, page: np.ndarray,
                 absent: np.ndarray, cs: np.ndarray, click_of: np.ndarray, member: np.ndarray,
                 session: np.ndarray, n_urls: int) -> list[tuple]:
    """What the clicks (on ``page``, ``absent``: not asked for) fetched, as rows (page, page
    revalidated, embedded tokens, clicks on a first view, clicks on a repeat view, page
    absent): a token is ``2 × url + revalidated``, in the order of the requests. Clicks are
    grouped by a sum of random 64-bit keys of their tokens (equal multisets, equal sums) with
    their page, view kind and the page's state (revalidated, absent)."""
    k = len(cs)
    if not k:
        return []
    page = page.astype(np.int64)
    state = np.where(absent, 2, revalidated[cs])          # the page: 0 asked, 1 revalidated
    _, first_at = np.unique(session.astype(np.int64) * n_urls + page, return_index=True)
    repeat = np.ones(k, np.int64)
    repeat[first_at] = 0
    m = np.flatnonzero(member)
    token = url[m].astype(np.int64) * 2 + revalidated[m]
    key = np.random.default_rng(0x71E5).integers(0, 1 << 63, 2 * n_urls, np.int64
                                                 ).astype(np.uint64)
    h = np.zeros(k, np.uint64)
    np.add.at(h, click_of[m], key[token])
    group = np.lexsort((h, state, repeat, page))
    g = np.c_[page, state, repeat][group]
    new = np.r_[True, (np.diff(g, axis=0) != 0).any(axis=1) | (np.diff(h[group]) != 0)]
    heads = np.flatnonzero(new)
    sizes = np.diff(np.r_[heads, k])
    by_click = np.argsort(click_of[m], kind="stable")        # requests in order, per click
    ptr = np.searchsorted(click_of[m][by_click], np.arange(k + 1))
    tokens = token[by_click]
    rows = []
    for c, n in zip(group[heads].tolist(), sizes.tolist()):
        rep = int(repeat[c])
        rows.append((int(page[c]), bool(state[c] == 1),
                     tuple(tokens[ptr[c]:ptr[c + 1]].tolist()), n * (1 - rep), n * rep,
                     bool(state[c] == 2)))
    return rows


def _ranked(t: np.ndarray, cs: np.ndarray, click_of: np.ndarray, member: np.ndarray
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The embedded requests by click, in time order: each one's rank in its click (from 1),
    its delay after its click's page (s), and whether the one before it is of the same click."""
    m = np.flatnonzero(member)
    click = click_of[m]
    order = np.argsort(click, kind="stable")
    m, click = m[order], click[order]
    first = np.diff(click, prepend=-1) != 0            # clicks are codes >= 0
    return _run_ranks(first), np.maximum(t[m] - t[cs][click], 0), ~first


def _run_ranks(first: np.ndarray) -> np.ndarray:
    """Each element's place (from 1) in its run, runs beginning where ``first`` is true (the
    first element begins one)."""
    at = np.arange(len(first))
    return at - np.maximum.accumulate(np.where(first, at, 0)) + 1


def _delays(t: np.ndarray, cs: np.ndarray, click_of: np.ndarray, member: np.ndarray
            ) -> np.ndarray:
    """(rank, delay in µs, requests): how long after its click's page each embedded request
    began, by its rank among the click's embedded requests (from 1; the last rank
    ``DELAY_RANKS`` holds the later ones too)."""
    rank, delay, _ = _ranked(t, cs, click_of, member)
    return _tally(np.minimum(rank, DELAY_RANKS), np.round(delay * 1e6).astype(np.int64))


def _delay_pairs(t: np.ndarray, cs: np.ndarray, click_of: np.ndarray, member: np.ndarray
                 ) -> np.ndarray:
    """(rank, bin of its delay, bin of the next one's, pairs): each two consecutive embedded
    requests of a click (a pair's rank is its first's, the ranks from ``DELAY_RANKS`` - 1 on
    as one), delays on ``delays.delay_bin``'s log grid: how the delays of one click go
    together (the model's ``object_delays.dependence``)."""
    rank, delay, pair = _ranked(t, cs, click_of, member)
    at = np.flatnonzero(pair[1:])
    d = delay_bin(delay)
    return _tally(np.minimum(rank[at], DELAY_RANKS - 1), d[at], d[at + 1])


#: a session's pairs of think times ranked apart (``_think_pairs``), the later ones together
THINK_PAIR_RANKS = 4


def _think_pairs(inside: np.ndarray, moved: np.ndarray, rules: SessionRules) -> np.ndarray:
    """(rank, bin of a think time, bin of the next one's, pairs): each two consecutive think
    times of a session (``inside``: one a move of ``moved``, clicks in session order; both
    within [Tmin, Tmax]), on ``delays.delay_bin``'s log grid, ranked by their place in the
    session (from 1; the later ones as ``THINK_PAIR_RANKS``): how a session's think times go
    together (a slow reader is slow throughout; the model's ``variables.think.dependence``),
    the first rank counting the sessions."""
    at = np.flatnonzero(moved)                  # the click before each move
    ok = inside >= rules.tmin
    pair = np.flatnonzero((at[1:] == at[:-1] + 1) & ok[1:] & ok[:-1])
    rank = _run_ranks(np.diff(pair, prepend=-2) != 1)           # from a session's first pair
    b = delay_bin(inside)
    return _tally(np.minimum(rank, THINK_PAIR_RANKS), b[pair], b[pair + 1])


def _families(agent: np.ndarray, agents: list[str]) -> np.ndarray:
    """Sessions per browser family (FAMILIES' order) from the agent codes of their first
    requests; all zero when none of them logged an agent."""
    known = agent[agent >= 0]
    return np.bincount(family_codes(agents)[known], minlength=len(FAMILIES))


#: bins of a transition's think times: log-spaced from ``max(tmin, THINK_FLOOR)`` to ``tmax``
THINK_BINS = 32
THINK_FLOOR = 0.1


def think_edges(rules: SessionRules) -> np.ndarray:
    """The THINK_BINS + 1 edges (s) of the think-time bins: log-spaced over [tmin, tmax] (from
    THINK_FLOOR when tmin is below it)."""
    lo = max(rules.tmin, THINK_FLOOR)
    return np.geomspace(lo, max(rules.tmax, lo * 1.001), THINK_BINS + 1)


def think_bins(think: np.ndarray, rules: SessionRules) -> np.ndarray:
    """The bin of ``think_edges`` each think time falls in (the ends' bins take what lies
    beyond)."""
    edges = think_edges(rules)
    return np.clip(np.searchsorted(edges, think, side="right") - 1, 0, THINK_BINS - 1)


def _tally(*columns: np.ndarray, distinct: np.ndarray | None = None) -> np.ndarray:
    """Rows (key columns..., count): how often each combination of the non-negative integer
    ``columns`` occurs (counted once per value of ``distinct`` when given: clicks that fetched
    an object, not fetches), sorted by key; keys packed into one int64, not np.unique(axis=0)."""
    cols = [np.asarray(c, np.int64) for c in columns]
    if distinct is not None:
        cols = [np.asarray(distinct, np.int64)] + cols
    if not len(cols[0]):
        return np.zeros((0, len(columns) + 1), np.int64)
    widths = [int(c.max()) + 1 for c in cols]
    if float(np.prod(widths, dtype=float)) >= 2.0 ** 62:          # keys would not fit
        rows = _sum_rows(np.c_[np.stack(cols, axis=1), np.ones(len(cols[0]), np.int64)])
        if distinct is not None:
            rows = _sum_rows(np.c_[rows[:, 1:-1], np.ones(len(rows), np.int64)])
        return rows
    key = np.zeros(len(cols[0]), np.int64)
    for c, w in zip(cols, widths):
        key = key * w + c
    keys, n = np.unique(key, return_counts=True)
    if distinct is not None:                 # one per (distinct, key...): drop the distinct
        keys = keys % int(np.prod(widths[1:]))
        keys, n = np.unique(keys, return_counts=True)
        widths = widths[1:]
    out = np.empty((len(keys), len(widths) + 1), np.int64)
    for j in range(len(widths) - 1, -1, -1):
        out[:, j] = keys % widths[j]
        keys = keys // widths[j]
    out[:, -1] = n
    return out


@dataclass
class Partial:
    """The sessions of some clients in a form that merges with other clients' (keyed by URL
    text, counted, never by position): counts, the recorded session starts, the samples, and
    the site's tallies as rows (URL codes into ``urls``..., count)."""

    counts: dict
    urls: list[str]
    session_start: np.ndarray               # recorded (on the log's grid), unsorted
    samples: dict[str, np.ndarray]          # every sample but the inter-arrival gaps
    resolution: float
    cell: float                             # Requests.cell: times known to their cell only
    agents: np.ndarray                      # sessions per browser family (FAMILIES' order)
    page_hits: np.ndarray                   # (url, clicks)
    page_objects: np.ndarray                # (page url, object url, clicks that fetched it)
    page_sizes: np.ndarray                  # (url, size of a complete response, responses)
    object_sizes: np.ndarray                # (url, size, responses)
    entry: np.ndarray                       # (url, sessions that started there)
    transitions: np.ndarray                 # (from url, to url, moves)
    views: list[tuple] = field(default_factory=list)    # (page, page revalidated, tokens,
                                            # first views, repeat views, page absent):
                                            # ``_click_views``
    delays: np.ndarray = field(default_factory=lambda: np.zeros((0, 3), np.int64))
                                            # (rank, delay in µs, requests)
    delay_pairs: np.ndarray = field(default_factory=lambda: np.zeros((0, 4), np.int64))
                                            # (rank, delay bin, next delay bin, pairs)
    think_pairs: np.ndarray = field(default_factory=lambda: np.zeros((0, 4), np.int64))
                                            # (rank, think bin, next think bin, pairs)
    statuses: np.ndarray = field(default_factory=lambda: np.zeros((0, 3), np.int64))
                                            # (url, status, requests)
    thinks: np.ndarray = field(default_factory=lambda: np.zeros((0, 4), np.int64))
                                            # (from url, to url, think bin, moves)
    joined: np.ndarray = field(default_factory=lambda: np.zeros((0, 2), np.int64))
                                            # (url, requests): embedded requests of no object
    follows: np.ndarray = field(default_factory=lambda: np.zeros((0, 5), np.int64))
                                            # (form, follow-up, status, size, follow-ups)
    follow_delays: np.ndarray = field(default_factory=lambda: np.zeros((0, 3), np.int64))
                                            # (form, delay in µs, follow-ups)
    form_moves: np.ndarray = field(default_factory=lambda: np.zeros((0, 4), np.int64))
                                            # (form, next click's url, status, moves)
    form_exits: np.ndarray = field(default_factory=lambda: np.zeros((0, 3), np.int64))
                                            # (form, status, sessions ended there)
    clicks: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None   # time, session, url
                                            # of each click


def narrow(counts: np.ndarray) -> np.ndarray:
    """Integers (sizes, counts, indices) as int32 when every one fits, else int64: the samples
    and clicks the merge holds for the fit take half the memory (a month's: 200 MB)."""
    counts = np.asarray(counts)
    small = not len(counts) or (counts.min() >= -2**31 and counts.max() < 2**31)
    return counts.astype(np.int32 if small else np.int64, copy=False)


def _merged_clicks(partials: list[Partial], maps: list[np.ndarray],
                   released: Callable[[], None]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The partials' clicks as one stream (time, session, URL in the merged table), sessions
    numbered partial after partial, clicks in order of time (ties by URL text, then session:
    the same stream whatever the partition but for the sessions' numbers). The clicks move out
    of the partials, which then hold none (``released`` is called then, before the sort), and
    the stream is put in order a column at a time: a month's 10M clicks (16 bytes each) are
    held about twice instead of four times."""
    if len(partials) == 1 and partials[0].clicks is not None:
        return partials[0].clicks
    first = np.cumsum([0] + [p.counts.get("sessions", 0) for p in partials])
    mine = [(p, f, m) for p, f, m in zip(partials, first.tolist(), maps) if p.clicks is not None]
    time = np.concatenate([p.clicks[0] for p, _, _ in mine])
    as_int = narrow(first[-1:]).dtype
    session = np.concatenate([p.clicks[1].astype(as_int, copy=False) + f for p, f, _ in mine])
    url = np.concatenate([m[p.clicks[2]].astype(np.int32) for p, _, m in mine])
    for p, _, _ in mine:
        p.clicks = None
    released()
    order = np.lexsort((session, url, time))
    time = time[order]
    session = session[order]
    return time, session, url[order]


def _merged(tallies: list[np.ndarray], maps: list[np.ndarray], url_columns: int) -> np.ndarray:
    """Tallies of several partials, their first ``url_columns`` (URL codes) mapped to the
    merged table, summed by key."""
    rows = [np.c_[m[t[:, :url_columns]], t[:, url_columns:]] if len(t) else t
            for t, m in zip(tallies, maps)]
    rows = [r for r in rows if len(r)]
    if not rows:
        return tallies[0][:0]
    return _sum_rows(np.concatenate(rows))


def _sum_rows(rows: np.ndarray) -> np.ndarray:
    """Rows (keys..., count) with equal keys summed, sorted by key."""
    keys = rows[:, :-1]
    order = np.lexsort(keys.T[::-1])
    keys, n = keys[order], rows[order, -1]
    new = np.r_[True, np.any(keys[1:] != keys[:-1], axis=1)]
    return np.c_[keys[new], np.add.reduceat(n, np.flatnonzero(new))]


def _upper_median(rows: np.ndarray) -> dict[int, int]:
    """Upper median of the values per key from (key, value, count) rows sorted by key, value."""
    if not len(rows):
        return {}
    key, value, n = rows[:, 0], rows[:, 1], rows[:, 2]
    first = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
    before = np.cumsum(n) - n                        # values before each row, overall
    total = np.add.reduceat(n, first)
    target = before[first] + total // 2              # index of the upper median, overall
    at = np.searchsorted(np.cumsum(n), target, side="right")
    return dict(zip(key[first].tolist(), value[at].tolist()))


def _merged_views(partials: list[Partial], maps: list[np.ndarray]) -> dict[int, list[View]]:
    """The partials' views keyed by merged URL codes: clicks that fetched the same embedded
    requests (as multisets) on the same page, summed, their URLs in the order of the merged
    table (which sorts them: the same whatever the partition); each page's views most
    frequent first."""
    tally: dict[tuple, list[int]] = {}
    for part, m in zip(partials, maps):
        for page, again, tokens, first, repeat, absent in part.views:
            mapped = sorted(int(m[tok >> 1]) * 2 + (tok & 1) for tok in tokens)
            counts = tally.setdefault((int(m[page]), again, absent, tuple(mapped)), [0, 0])
            counts[0] += first
            counts[1] += repeat
    out: dict[int, list[View]] = {}
    for (page, again, absent, tokens), (first, repeat) in tally.items():
        out.setdefault(page, []).append(View(tuple(t >> 1 for t in tokens),
                                             tuple(bool(t & 1) for t in tokens), again, first,
                                             repeat, absent))
    for views in out.values():
        views.sort(key=lambda v: (-(v.first + v.repeat), v.objects, v.revalidated,
                                  v.page_revalidated, v.page_absent))
    return out


def _add_counts(partials: list[Partial]) -> dict:
    counts: dict = {}
    for p in partials:
        for k, v in p.counts.items():
            if isinstance(v, dict):
                mine = counts.setdefault(k, {})
                for rule, c in v.items():
                    mine[rule] = mine.get(rule, 0) + c
            else:
                counts[k] = counts.get(k, 0) + v
    return counts


def _linked_clicks(lone: dict[str, int], named: dict[str, int]) -> int:
    """The clicks that begin on an object linked from another site's page: their Referer's
    origin is not the site's — one whose Referers name at least ``OWN_URLS`` URLs of the log
    (a search engine's bare origin, ``https://www.google.com/``, names only ``/``)."""
    urls = Counter(key.split(" ", 1)[0] for key in named)
    return sum(n for o, n in lone.items() if o and urls[o] < OWN_URLS)


def merge_partials(partials: list[Partial], rules: SessionRules = SessionRules(),
                   seed: int = 0, min_share: float = 0.1,
                   released: Callable[[], None] | None = None) -> Sessions:
    """One ``Sessions`` from the partials of disjoint sets of clients: the same whatever the
    partition of the clients (samples concatenated in the partials' order; the fit sorts
    them; they move out of the partials, which then hold none, so that the memory of a large
    log holds them once). Objects of a page: those fetched in at least ``min_share`` of its
    clicks. ``released`` is called each time a part of the partials (their clicks, a sample)
    is merged and freed (``wagon fit`` hands the freed heap back there: a month's 64 partials'
    clicks leave 250 MB of it, their samples in one process as much)."""
    urls, maps = sorted_table([p.urls for p in partials])
    counts = _add_counts(partials)
    counts["linked_clicks"] = _linked_clicks(counts.pop("lone_referer_origins", {}),
                                             counts.pop("named_referer_origins", {}))
    order = ["robots.txt"] + robot_rules(rules.robots).names()
    by_rule = counts.get("robots_by_rule", {})
    counts["robots_by_rule"] = {r: by_rule[r] for r in order if r in by_rule}

    def merged(attr: str, url_columns: int = 1) -> np.ndarray:
        return _merged([getattr(p, attr) for p in partials], maps, url_columns)
    hits = merged("page_hits")
    page_hits = {int(u): int(h) for u, h in hits.tolist()}
    pairs = merged("page_objects", 2)
    page_objects: dict[int, list[int]] = {}
    if len(pairs):
        clicks = np.zeros(len(urls), np.int64)
        clicks[hits[:, 0]] = hits[:, 1]
        keep = pairs[:, 2] >= np.maximum(1, min_share * clicks[pairs[:, 0]])
        for p, o in pairs[keep, :2].tolist():
            page_objects.setdefault(p, []).append(o)
    entry = merged("entry")
    delays = [p.delays for p in partials if len(p.delays)]
    pairs = [p.delay_pairs for p in partials if len(p.delay_pairs)]
    think_pairs = [p.think_pairs for p in partials if len(p.think_pairs)]
    page_sizes = merged("page_sizes")
    site = Site(urls=urls, page_size=_upper_median(page_sizes),
                object_size=_upper_median(merged("object_sizes")), page_objects=page_objects,
                page_hits=page_hits, entry=dict(zip(entry[:, 0].tolist(), entry[:, 1].tolist())),
                transitions=merged("transitions", 2).reshape(-1, 3),
                page_views=_merged_views(partials, maps),
                delays=_sum_rows(np.concatenate(delays)) if delays else
                np.zeros((0, 3), np.int64),
                delay_pairs=_sum_rows(np.concatenate(pairs)) if pairs else
                np.zeros((0, 4), np.int64),
                think_pairs=_sum_rows(np.concatenate(think_pairs)) if think_pairs else
                np.zeros((0, 4), np.int64), statuses=merged("statuses"),
                thinks=merged("thinks", 2).reshape(-1, 4),
                joined=frozenset(merged("joined")[:, 0].tolist()), page_size_rows=page_sizes,
                follows=merged("follows", 2).reshape(-1, 5),
                follow_delays=merged("follow_delays").reshape(-1, 3),
                form_moves=merged("form_moves", 2).reshape(-1, 4),
                form_exits=merged("form_exits").reshape(-1, 3))
    recorded = np.sort(np.concatenate([p.session_start for p in partials]))
    resolution = min(p.resolution for p in partials)   # decimal grids nest: the finest holds all
    starts = recorded
    if resolution:
        # timestamps on a grid: each start spread uniformly inside its cell (seeded, drawn for
        # the sorted starts); the inter-arrival sample keeps the recorded gaps
        starts = np.sort(recorded + np.random.default_rng(seed).uniform(0.0, resolution,
                                                                         len(recorded)))
    released = released or (lambda: None)
    click_time, click_session, click_url = _merged_clicks(partials, maps, released)
    windows = recording_windows(click_time if len(click_time) else recorded, rules.tmax,
                                resolution, max(p.cell for p in partials))
    gaps = np.diff(recorded)
    if windows is not None:       # a log recorded in windows: no gap across a silence
        counts["recording_windows"] = len(windows)
        counts["recorded_s"] = float(np.sum(windows[:, 1] - windows[:, 0]))
        inside = np.searchsorted(windows[:, 0], recorded, side="right")
        gaps = gaps[inside[1:] == inside[:-1]]
    samples = {"interarrival": on_grid(gaps, resolution)}
    for name in list(partials[0].samples):    # moved: each partial's part goes once merged
        samples[name] = np.concatenate([p.samples.pop(name) for p in partials])
        released()
    families = sum(p.agents for p in partials)
    agents = {f: int(c) for f, c in zip(FAMILIES, families) if c}
    return Sessions(rules=rules, counts=counts, click_time=click_time,
                    click_session=click_session, click_url=click_url, session_start=starts,
                    samples=samples, site=site, resolution=resolution, recorded_start=recorded,
                    agents=agents, windows=windows)
