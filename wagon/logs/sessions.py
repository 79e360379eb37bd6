"""User sessions from parsed requests: clients, robots, clicks, embedded objects, WAGON thresholds.

Rules (documented in docs/methods.md):
- a client is a host, or a host + user agent;
- robots (clients that fetch /robots.txt or whose agent looks like a crawler) are left out, counted;
- requests of one client sorted by time; a request belongs to the current click when it comes less
  than ``tmin`` after the previous request, or when it is an embedded-type object (image, style
  sheet, script, font) less than ``embed_window`` after it; otherwise it starts a new click;
- a click whose idle time (from the last request of the previous click) exceeds ``tmax`` starts a
  new session; with ``timeout`` a session is also cut at the first click past ``timeout`` seconds
  from its start;
- the inter-arrival sample holds the gaps between session starts as recorded (whole seconds
  in most logs: the fit treats them as interval-censored); ``session_start`` of a whole-second
  log is spread uniformly within each second (seeded): for a Poisson process this reconstruction
  is exact (given its count in a second, its points are independent and uniform in it), which
  is what the arrival checks need;
- client codes are ranks of the clients' identity strings, so that nothing depends on the order
  in which clients first appear in the input (the spreading draws for the sorted starts).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from .parse import Requests

__all__ = ["SessionRules", "Sessions", "Site", "sessionize", "OBJECT_EXTENSIONS", "ROBOT_AGENT"]

#: extensions of objects a browser fetches by itself when it renders a page
OBJECT_EXTENSIONS = frozenset(
    "gif jpg jpeg jpe png bmp xbm xpm tif tiff ico svg webp css js woff woff2 ttf otf eot".split())

#: user agents of robots (case-insensitive search)
ROBOT_AGENT = r"bot\b|bot/|crawl|spider|slurp|archiver|indexer|wget|curl|python-requests|libwww"


@dataclass(frozen=True)
class SessionRules:
    """How requests become clicks and sessions; every value is a command-line option."""

    tmin: float = 2.0
    tmax: float = 600.0
    timeout: float | None = None
    embed_window: float = 10.0
    identity: str = "host"
    keep_robots: bool = False
    object_extensions: frozenset[str] = OBJECT_EXTENSIONS
    robot_agent: str = ROBOT_AGENT

    def __post_init__(self) -> None:
        if self.identity not in ("host", "host+agent"):
            raise ValueError(f"identity must be 'host' or 'host+agent', not {self.identity!r}")
        if not 0 <= self.tmin <= self.tmax:
            raise ValueError(f"need 0 <= tmin <= tmax (got tmin={self.tmin}, tmax={self.tmax})")
        if self.timeout is not None and self.timeout <= 0:
            raise ValueError("timeout must be positive")


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


@dataclass
class Sessions:
    """Clicks grouped into sessions, with the samples the model is fitted to."""

    rules: SessionRules
    counts: dict[str, int]
    click_time: np.ndarray                  # float64, start of each click
    click_session: np.ndarray               # int64 session index of each click
    click_url: np.ndarray                   # int32 url code of each click's page
    session_start: np.ndarray               # float64, sorted
    samples: dict[str, np.ndarray] = field(default_factory=dict)
    site: Site | None = None
    resolution: float = 0.0                 # of the timestamps (s): 1.0 for whole seconds,
                                            # 0.0 when finer than the analysis needs


def _ranks(strings: list[str]) -> np.ndarray:
    """Rank of each string in sorted order (codes that do not depend on input order)."""
    rank = np.empty(len(strings), np.int64)
    rank[np.argsort(np.array(strings, dtype=object), kind="stable")] = np.arange(len(strings))
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
    """True for URLs whose last path segment ends in one of ``extensions``."""
    flags = np.zeros(len(urls), bool)
    for i, u in enumerate(urls):
        leaf = u.rsplit("/", 1)[-1]
        dot = leaf.rfind(".")
        flags[i] = dot >= 0 and leaf[dot + 1:].lower() in extensions
    return flags


def _robot_clients(req: Requests, client: np.ndarray, pattern: str) -> np.ndarray:
    """Client codes that fetched /robots.txt or sent a crawler's user agent."""
    robots = [client[req.url == req.urls.index("/robots.txt")]] if "/robots.txt" in req.urls else []
    if req.agents:
        rx = re.compile(pattern, re.I)
        bad_agent = np.fromiter((bool(rx.search(a)) for a in req.agents), bool, len(req.agents))
        has = req.agent >= 0
        robots.append(client[has][bad_agent[req.agent[has]]])
    return np.unique(np.concatenate(robots)) if robots else np.zeros(0, np.int64)


def _typical(codes: np.ndarray, values: np.ndarray) -> dict[int, int]:
    """Median value per code (upper median), as a dict."""
    if len(codes) == 0:
        return {}
    order = np.lexsort((values, codes))
    c, v = codes[order], values[order]
    bounds = np.flatnonzero(np.r_[True, c[1:] != c[:-1], True])
    mid = (bounds[:-1] + bounds[1:]) // 2
    return dict(zip(c[mid].tolist(), v[mid].tolist()))


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


def sessionize(req: Requests, rules: SessionRules = SessionRules(), seed: int = 0) -> Sessions:
    """Group requests into clicks and sessions and draw the model's samples from them.

    ``seed`` drives the dithering of whole-second session starts (module docstring)."""
    client = _client_codes(req, rules.identity)
    counts = {"requests": len(req), "clients": int(len(np.unique(client)))}
    robots = np.zeros(0, np.int64) if rules.keep_robots else _robot_clients(req, client, rules.robot_agent)
    keep = ~np.isin(client, robots)
    counts["robot_clients"] = int(len(robots))
    counts["robot_requests"] = int((~keep).sum())
    idx = np.flatnonzero(keep)
    order = idx[np.lexsort((req.time[idx], client[idx]))]
    t, c = req.time[order], client[order]
    url, status, size = req.url[order], req.status[order], req.size[order]
    is_object = extension_flags(req.urls, rules.object_extensions)[url] if len(url) else url.astype(bool)
    n = len(t)

    first = np.ones(n, bool)
    first[1:] = c[1:] != c[:-1]
    gap = np.empty(n)
    gap[:1] = np.inf
    gap[1:] = np.diff(t)
    gap[first] = np.inf
    in_click = (gap < rules.tmin) | (is_object & (gap < rules.embed_window))
    cs = np.flatnonzero(~in_click)                    # click starts (every client's first too)
    ce = np.r_[cs[1:], n] - 1                         # last request of each click
    idle = np.empty(len(cs))
    idle[:1] = np.inf
    idle[1:] = t[cs[1:]] - t[ce[:-1]]
    idle[first[cs]] = np.inf
    new_session = idle > rules.tmax
    if rules.timeout is not None:
        _cut_long_sessions(t[cs], new_session, rules.timeout)
    session = np.cumsum(new_session) - 1
    click_time = t[cs]
    click_url = url[cs]

    ok200 = status == 200
    page_size = np.add.reduceat(np.where(ok200, size, 0), cs) if n else np.zeros(0, np.int64)
    page_ok = ok200[cs] & (page_size > 0)
    member = np.ones(n, bool)
    member[cs] = False                                # embedded requests (not the click's page)
    obj_ok = member & ok200 & (size > 0)
    recorded = np.sort(click_time[new_session])
    resolution = 1.0 if n and np.all(t == np.floor(t)) else 0.0
    starts = recorded
    if resolution:
        # whole-second timestamps: each start spread uniformly inside its second (seeded, drawn
        # for the sorted starts); the inter-arrival sample keeps the recorded gaps
        starts = np.sort(recorded + np.random.default_rng(seed).uniform(0.0, 1.0, len(recorded)))
    samples = {
        "interarrival": np.diff(recorded),
        "clicks": np.bincount(session).astype(np.int64) if len(session) else np.zeros(0, np.int64),
        "think": idle[~new_session],
        "page_size": page_size[page_ok].astype(np.float64),
        "objects_per_page": (ce - cs).astype(np.int64),
        "object_size": size[obj_ok].astype(np.float64),
    }
    counts.update(sessions=int(new_session.sum()), clicks=int(len(cs)),
                  requests_used=int(n), embedded_requests=int(member.sum()))

    click_of = np.cumsum(~in_click) - 1               # click index of every request
    site = _site(req.urls, click_url, url, size, ok200, member, click_of, new_session)
    return Sessions(rules=rules, counts=counts, click_time=click_time, click_session=session,
                    click_url=click_url, session_start=starts, samples=samples, site=site,
                    resolution=resolution)


def _site(urls: list[str], click_url: np.ndarray, url: np.ndarray, size: np.ndarray,
          ok200: np.ndarray, member: np.ndarray, click_of: np.ndarray, new_session: np.ndarray,
          min_share: float = 0.1) -> Site:
    """Pages, objects, entry counts and page-to-page transitions of the sessions."""
    page_hits = np.bincount(click_url, minlength=len(urls)) if len(click_url) else np.zeros(0, int)
    full = ok200 & (size > 0)                 # complete responses: their size is the object's
    p_sizes = _typical(url[~member & full], size[~member & full])
    o_sizes = _typical(url[member & full], size[member & full])
    # objects of a page: those fetched in at least min_share of its clicks
    pairs = np.unique(np.c_[click_of[member], url[member]], axis=0) if member.any() else np.zeros((0, 2), int)
    page_objects: dict[int, list[int]] = {}
    if len(pairs):
        key_page = click_url[pairs[:, 0]].astype(np.int64)
        po, cnt = np.unique(np.c_[key_page, pairs[:, 1]], axis=0, return_counts=True)
        keep = cnt >= np.maximum(1, min_share * page_hits[po[:, 0]])
        for p, o in po[keep].tolist():
            page_objects.setdefault(p, []).append(o)
    entry_codes, entry_counts = np.unique(click_url[new_session], return_counts=True)
    same = ~new_session[1:]
    if same.any():
        moves = np.c_[click_url[:-1][same], click_url[1:][same]].astype(np.int64)
        tr, tr_n = np.unique(moves, axis=0, return_counts=True)
        transitions = np.c_[tr, tr_n]
    else:
        transitions = np.zeros((0, 3), np.int64)
    return Site(urls=urls, page_size=p_sizes, object_size=o_sizes, page_objects=page_objects,
                page_hits={int(u): int(h) for u, h in enumerate(page_hits) if h},
                entry=dict(zip(entry_codes.tolist(), entry_counts.tolist())),
                transitions=transitions)
