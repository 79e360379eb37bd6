"""The modeled site, complete: every page and object with a size, entry and routing probabilities.

From a model's site when it has one (pages or objects whose size was never seen get a size drawn
from the model's size laws; templated URLs such as ``/user/{id}/profile`` become one concrete URL
each, derived from a hash of the template; the model's ``remainder``, the pages past its
``--max-pages``, becomes at most ``TAIL_PAGES`` generated pages ``/wagon-tail/…`` whose
popularity follows the remainder's click counts); otherwise a Zipf site: ``pages`` pages whose
popularity follows Zipf(exponent), each with a number of objects drawn from ``objects_per_page`` and sizes from
``page_size``/``object_size`` (defaults when the model lacks them). Its draws use a fixed seed,
never the scenario's. ``ModelSite.spec`` is what a scenario carries (``formats.site``): pages
link to the pages users went to next, so ``serve`` and ``site build`` render the same bytes
whether they start from the model or from the scenario. A page's ``views`` (what the log's
clicks on it fetched besides it) are drawn per click by how often they came on a first view of
the page in a session and on a repeat view (``ModelSite.views``): a browser's cache.
"""
from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from functools import cached_property

import numpy as np

from ..formats.model import Model, status_key
from ..formats.site import PLACEHOLDER, PageView, Redirect, SiteSpec
from .once import OncePool, copies_for, once_url
from .params import ParamDraw, fixed_url

__all__ = ["ModelSite", "resolve_site", "concrete_url", "DEFAULT_PAGE_SIZE",
           "DEFAULT_OBJECT_SIZE", "MAX_LINKS", "TAIL_PAGES"]

DEFAULT_PAGE_SIZE = 8_000          # bytes, when the model has neither sizes nor a size law
DEFAULT_OBJECT_SIZE = 4_000
MAX_LINKS = 50                     # links written into a page's HTML
TAIL_PAGES = 1000                  # pages the model's remainder becomes, at most
BALANCE = -2                       # a route drawn by the flow balance (``_flow_balance``)
#: the share of a row's gap the balance routes: a run's sessions go on more often than q from
#: their first pages (the clicks law's hazard), so the whole gap over-fed the rare pages (NASA,
#: seed 1: pages clicked 1, 2, 5 times got 1.16, 1.07, 1.12 times their clicks, and 4.4 %
#: fewer requests); half of it gave 1.09, 1.11, 1.03 but too few distinct URLs at seed 2;
#: three quarters: no compare row differs on NASA and EPA at seeds 1–3 (docs/fidelity.md)
BALANCE_SHARE = 0.75


@dataclass
class ModelSite:
    """The site's content (``spec``), entry probabilities, routing as CSR cumulative rows.

    Pages from ``tail_start`` on stand for the model's remainder: they share the routing row
    ``tail_start``, and a route to page -1 goes to one of them, drawn by ``tail_p``."""

    spec: SiteSpec
    entry_p: np.ndarray               # probability of starting on each page
    popularity: np.ndarray            # where a page without routes goes: clicks, GETs only
    route_ptr: np.ndarray             # CSR row pointers into route_to / route_cum
    route_to: np.ndarray              # next page (-1: a remainder page; BALANCE: balance_to)
    route_cum: np.ndarray             # cumulative probability within the row (last = 1)
    tail_start: int = -1              # first remainder page (-1: none)
    tail_p: np.ndarray | None = None  # popularity within the remainder
    view_rows: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
                                      # CSR rows 2·page (first view), 2·page + 1 (repeat)
                                      # of (view, cumulative probability): ``_routing``
    once: OncePool | None = None      # the copies of one-time pages and views (synth.once)
    balance_to: np.ndarray | None = None    # where a BALANCE route goes (-1: the remainder)
    balance_p: np.ndarray | None = None     # and with which probability
    params: ParamDraw | None = None   # the template pages' value laws (None: no template)
    thinks: "TransitionThinks | None" = None   # think times per transition (None: global law)

    @cached_property
    def _route_keys(self) -> np.ndarray:
        return _row_keys(self.route_ptr, self.route_cum)

    @cached_property
    def _view_keys(self) -> np.ndarray:
        assert self.view_rows is not None
        return _row_keys(self.view_rows[0], self.view_rows[2])

    def next_pages(self, current: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """One Markov step for each current page; pages without recorded links use popularity."""
        row = current if self.tail_start < 0 else np.minimum(current, self.tail_start)
        start, stop = self.route_ptr[row], self.route_ptr[row + 1]
        u = rng.random(len(current))
        out = np.empty(len(current), np.int64)
        linked = stop > start
        if linked.any():
            out[linked] = _draw_rows(self.route_ptr, self.route_to, self._route_keys,
                                     row[linked], u[linked])
        if (~linked).any():
            out[~linked] = _draw(self.popularity, u[~linked])
        balance = out == BALANCE
        if balance.any():
            out[balance] = self.balance_to[_draw(self.balance_p, rng.random(int(balance.sum())))]
        tail = out < 0
        if tail.any():
            out[tail] = self.tail_start + _draw(self.tail_p, rng.random(int(tail.sum())))
        return out

    def entries(self, n: int, rng: np.random.Generator) -> np.ndarray:
        return _draw(self.entry_p, rng.random(n))

    def views(self, pages: np.ndarray, repeat: np.ndarray, rng: np.random.Generator
              ) -> np.ndarray:
        """The view each click fetches (0 where its page has none): drawn from the page's
        first-view or repeat-view counts."""
        out = np.zeros(len(pages), np.int64)
        if self.view_rows is None:
            return out
        ptr, to, _ = self.view_rows
        row = 2 * pages + repeat
        has = ptr[row + 1] > ptr[row]
        out[has] = _draw_rows(ptr, to, self._view_keys, row[has], rng.random(int(has.sum())))
        return out


#: ``within(lo, hi, n, rng)``: n think times whose recorded value lay in [lo, hi), or None
Within = Callable[[float, float, int, np.random.Generator], "np.ndarray | None"]


@dataclass
class TransitionThinks:
    """Think times per transition (the model's ``site.thinks``): sorted keys ``from · pages +
    to``, each row's cumulative bin probabilities, the bins' edges, and the other moves'
    (``rest``; None in a model before version 11: the global law's draws kept for them)."""

    pages: int
    keys: np.ndarray
    cum: np.ndarray
    log_edges: np.ndarray
    rest: np.ndarray | None = None

    @classmethod
    def of(cls, thinks: dict | None, pages: int) -> "TransitionThinks | None":
        if not thinks or not thinks["transitions"]:
            return None
        rows = sorted(thinks["transitions"], key=lambda r: r[0] * pages + r[1])
        counts = np.array([r[2] for r in rows], float)
        rest = np.asarray(thinks["rest"], float) if thinks.get("rest") else None
        return cls(pages, np.array([a * pages + b for a, b, _ in rows], np.int64),
                   np.cumsum(counts, axis=1) / counts.sum(axis=1, keepdims=True),
                   np.log(np.asarray(thinks["edges"], float)),
                   None if rest is None else np.cumsum(rest) / rest.sum())

    def draw(self, before: np.ndarray, after: np.ndarray, thinks: np.ndarray,
             rng: np.random.Generator, within: Within | None = None
             ) -> tuple[np.ndarray, np.ndarray]:
        """``thinks`` with those of the moves ``before`` → ``after`` drawn from their own
        transition's bins, the others' from ``rest`` (when the model has it), and which moves
        had their own (a mask): a bin by its counts, then a value inside it: ``within(lo, hi,
        n, rng)`` (the think law given that its value was recorded in the bin: on a log's
        grid, a bin holds a few recorded values, not a spread of them), else log-uniform."""
        key = before * self.pages + after
        at = np.minimum(np.searchsorted(self.keys, key), len(self.keys) - 1)
        mine = self.keys[at] == key
        rest = ~mine if self.rest is not None else np.zeros(len(key), bool)
        out = thinks.copy()
        out[mine] = self._values(self.cum[at[mine]], rng, within)
        if rest.any():
            out[rest] = self._values(np.broadcast_to(self.rest, (int(rest.sum()),
                                                                 len(self.rest))), rng, within)
        return out, mine

    def _values(self, cum: np.ndarray, rng: np.random.Generator, within: Within | None
                ) -> np.ndarray:
        """One think time per row of cumulative bin probabilities ``cum`` (``draw``)."""
        b = np.minimum((rng.random(len(cum))[:, None] > cum).sum(axis=1), cum.shape[1] - 1)
        lo, hi = self.log_edges[b], self.log_edges[b + 1]
        drawn = np.exp(lo + rng.random(len(cum)) * (hi - lo))
        for k in np.unique(b).tolist() if within is not None else []:
            these = np.flatnonzero(b == k)
            got = within(float(np.exp(self.log_edges[k])), float(np.exp(self.log_edges[k + 1])),
                         len(these), rng)
            if got is not None:
                drawn[these] = got
        return drawn


def _row_keys(ptr: np.ndarray, cum: np.ndarray) -> np.ndarray:
    """The rows of a CSR draw table (``_routing``) searched as one array: row r's cumulative
    probabilities moved into (r, r + 1]."""
    return cum + np.repeat(np.arange(len(ptr) - 1), np.diff(ptr))


def _draw_rows(ptr: np.ndarray, to: np.ndarray, keys: np.ndarray, row: np.ndarray,
               u: np.ndarray) -> np.ndarray:
    """The entry of each of ``row`` (rows that have entries) that the uniform ``u`` draws."""
    pos = np.searchsorted(keys, row + u, side="right")
    return to[np.minimum(pos, ptr[row + 1] - 1)]


def concrete_url(template: str, keep: Iterable[str] = ()) -> str:
    """A templated URL's concrete form: each placeholder ({id}, {uuid}, {email}, {hex},
    {token}, any other name but those of ``keep``: the parameters with a law, drawn per
    click) replaced by a value derived from a hash of the template, so the same model always
    gives the same URL."""
    if "{" not in template:
        return template
    h = hashlib.sha256(template.encode()).hexdigest()
    fills = {"id": str(100000 + int(h[:8], 16) % 900000),
             "uuid": f"{h[:8]}-{h[8:12]}-4{h[13:16]}-a{h[17:20]}-{h[20:32]}",
             "email": f"user{int(h[:6], 16)}@example.invalid", "hex": h[:40], "token": h[:32]}
    kept = set(keep)
    return PLACEHOLDER.sub(lambda m: m.group(0) if m.group(1) in kept else
                            fills.get(m.group(1).split("_")[0], h[:12]), template)


def _draw(p: np.ndarray, u: np.ndarray) -> np.ndarray:
    cum = np.cumsum(p)
    return np.minimum(np.searchsorted(cum, u * cum[-1], side="right"), len(p) - 1)


def _sizes(model: Model | None, name: str, n: int, default: int, rng: np.random.Generator
           ) -> np.ndarray:
    law = model.variables.get(name) if model is not None else None
    if law is None or n == 0:
        return np.full(n, default, np.int64)
    draws = np.asarray(law.parent.rvs(size=n, random_state=rng), float)
    return np.clip(np.round(np.nan_to_num(draws, nan=default)), 1, 1 << 30).astype(np.int64)


def _routing(n_rows: int, transitions: list) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """CSR draw table of (row, to, weight) rows: pointers, targets, cumulative probabilities."""
    t = np.asarray(transitions, dtype=float).reshape(-1, 3)
    t = t[np.lexsort((t[:, 1], t[:, 0]))]
    ptr = np.searchsorted(t[:, 0], np.arange(n_rows + 1))
    counts = t[:, 2]
    cum = np.empty(len(t))
    for a, b in zip(ptr[:-1], ptr[1:]):
        if b > a:
            c = np.cumsum(counts[a:b])
            cum[a:b] = c / c[-1]
    return ptr, t[:, 1].astype(np.int64), cum


def _flow_balance(transitions: list, row_hits: np.ndarray, gets: np.ndarray
                  ) -> tuple[list, np.ndarray, np.ndarray]:
    """Routes that give each page the clicks the log gave it though every session's length
    comes from the clicks law. A run goes on from a page in the share q of its clicks (the
    log's moves over its clicks), the log went on from row i in o_i of its h_i clicks: a row
    the log left less often than q (a search or index page) sends its targets fewer clicks
    than the log did, (o_i − q·h_i)·t_ij / o_i each; a row the log left more often (q·h_i >
    o_i: an exit page, or a page never left) gets a route ``BALANCE`` of weight
    BALANCE_SHARE·(q·h_i − o_i), drawn among the targets in proportion to what they lack.
    A balance route is a jump, as a typed address is: it neither leaves nor reaches a row
    that is not a GET (``gets``, per row; the remainder's are): a form's answer leads where
    its users went (a shop's checkout to its login form: a balance route from it diluted
    that move, 0.527 → 0.47), and a form is sent from its page, never jumped to (the
    script opened the form first: the replay's log had login forms the scenario never
    asked for). Returns those routes, the targets and their probabilities (none when
    nothing lacks)."""
    t = np.asarray(transitions, float).reshape(-1, 3)
    rows = t[:, 0].astype(np.int64)
    out = np.bincount(rows, weights=t[:, 2], minlength=len(row_hits))
    gap = out.sum() / row_hits.sum() * row_hits - out
    lack = np.maximum(-gap, 0)[rows] * t[:, 2] / np.maximum(out[rows], 1e-300)
    targets, at = np.unique(t[:, 1].astype(np.int64), return_inverse=True)
    reachable = np.where(targets >= 0, gets[np.maximum(targets, 0)], True)  # -1: remainder
    need = np.bincount(at.ravel(), weights=lack, minlength=len(targets)) * reachable
    if not len(t) or need.sum() <= 0:
        return [], np.zeros(0, np.int64), np.zeros(0)
    return ([[i, BALANCE, BALANCE_SHARE * g] for i, g in enumerate(gap.tolist())
             if g > 0 and gets[i]],
            targets,
            need / need.sum())


SITE_SEED = 0x5175


def _links(ptr: np.ndarray, to: np.ndarray, pages: int, tail_start: int) -> list[list[int]]:
    """Each page's links: the pages users went to next (at most MAX_LINKS; the remainder's
    first page stands for the remainder; remainder pages share its row; the flow balance's
    routes are no links)."""
    to = to.tolist()
    rows = [[tail_start if p == -1 else p for p in to[a:b] if p != BALANCE][:MAX_LINKS]
            for a, b in zip(ptr[:-1].tolist(), ptr[1:].tolist())]
    return [rows[min(p, tail_start) if tail_start >= 0 else p] for p in range(pages)]


@dataclass
class _Generated:
    """Pages made from the model's laws: URLs, sizes, objects (indices from ``first_object``)."""

    urls: list[str]
    sizes: list[int]
    objects: list[list[int]]
    object_urls: list[str]
    object_sizes: list[int]


def _generate(model: Model | None, n: int, rng: np.random.Generator, page_url: str,
              object_url: str, first_object: int = 0) -> _Generated:
    per_page = model.variables.get("objects_per_page") if model is not None else None
    counts = (np.clip(np.round(per_page.parent.rvs(size=n, random_state=rng)), 0, 50)
              .astype(int) if per_page is not None else rng.integers(0, 6, n))
    bounds = np.concatenate(([0], np.cumsum(counts))).tolist()
    return _Generated([page_url.format(i) for i in range(n)],
                      _sizes(model, "page_size", n, DEFAULT_PAGE_SIZE, rng).tolist(),
                      [list(range(first_object + a, first_object + b))
                       for a, b in zip(bounds[:-1], bounds[1:])],
                      [object_url.format(i) for i in range(bounds[-1])],
                      _sizes(model, "object_size", bounds[-1], DEFAULT_OBJECT_SIZE, rng).tolist())


def _tail_popularity(rem: dict, m: int) -> np.ndarray:
    """Clicks of the remainder's pages (its hit_counts, most clicked first) summed into ``m``
    groups of consecutive ranks: the popularity of the ``m`` pages that stand for them."""
    rows = np.asarray(rem.get("hit_counts") or [[1, rem["pages"]]], np.int64).reshape(-1, 2)
    rows = rows[np.argsort(-rows[:, 0], kind="stable")]
    hits = np.repeat(rows[:, 0], rows[:, 1]).astype(float)
    group = np.arange(len(hits)) * m // max(len(hits), 1)
    p = np.bincount(group, weights=hits, minlength=m)[:m]
    return p / p.sum() if p.sum() > 0 else np.full(m, 1.0 / m)


def resolve_site(model: Model | None, pages: int = 1000, zipf_exponent: float = 1.0,
                 scale: float = 1.0) -> ModelSite:
    """The complete site of ``model`` (a Zipf site of ``pages`` pages when it has none), with
    the copies of its one-timers that a run of ``scale`` times the log's clicks needs
    (``synth.once``)."""
    rng = np.random.default_rng(SITE_SEED)
    site = model.site if model is not None else {}
    if site.get("pages"):
        return _model_site(model, site, rng, scale)
    # no site in the model: Zipf popularity over generated pages
    pop = 1.0 / np.arange(1, pages + 1) ** zipf_exponent
    pop /= pop.sum()
    gen = _generate(model, pages, rng, "/pages/p{:05d}.html", "/objects/o{:06d}.gif")
    spec = SiteSpec(gen.urls, gen.sizes, gen.objects, [[] for _ in range(pages)],
                    gen.object_urls, gen.object_sizes)
    return ModelSite(spec, pop, pop, np.zeros(pages + 1, np.int64), np.zeros(0, np.int64),
                     np.zeros(0))


def _model_site(model: Model, site: dict, rng: np.random.Generator, scale: float) -> ModelSite:
    """The site a model describes, its remainder (if any) as generated pages at the end."""
    head = site["pages"]
    n = len(head)
    urls = [concrete_url(p["url"], p.get("params", {})) for p in head]
    methods = [p.get("method", "GET") for p in head]
    known = np.array([p.get("size") or 0 for p in head], np.int64)
    drawn = _sizes(model, "page_size", n, DEFAULT_PAGE_SIZE, rng)
    page_sizes = np.where(known > 0, known, drawn).tolist()
    objects = site.get("objects", [])
    o_known = np.array([o.get("size") or 0 for o in objects], np.int64)
    o_drawn = _sizes(model, "object_size", len(objects), DEFAULT_OBJECT_SIZE, rng)
    object_urls = [fixed_url(concrete_url(o["url"], o.get("params", {})), o.get("params", {}))
                   for o in objects]
    object_sizes = np.where(o_known > 0, o_known, o_drawn).tolist()
    object_methods = [o.get("method", "GET") for o in objects]
    object_follows = [o.get("follows", False) for o in objects]
    page_objects = [list(p.get("objects", [])) for p in head]
    hits = np.array([p.get("hits", 1) for p in head], float)
    entry = np.zeros(n)
    for page, count in site.get("entry", []):
        entry[page] += count
    transitions = list(site.get("transitions", []))
    rem = site.get("remainder")
    tail_start, tail_p, n_rows = -1, None, n
    if rem:
        m = min(int(rem["pages"]), TAIL_PAGES)
        tail_start, tail_p, n_rows = n, _tail_popularity(rem, m), n + 1
        gen = _generate(model, m, rng, "/wagon-tail/p{:05d}.html", "/wagon-tail/o{:06d}.gif",
                        len(object_urls))
        urls += gen.urls
        methods += ["GET"] * m
        page_sizes += gen.sizes
        page_objects += gen.objects
        object_urls += gen.object_urls
        object_sizes += gen.object_sizes
        object_methods += ["GET"] * len(gen.object_urls)
        object_follows += [False] * len(gen.object_urls)
        hits = np.r_[hits, rem.get("hits", m) * tail_p]
        entry = np.r_[entry, rem.get("entry", 0) * tail_p]
        transitions += [[p, -1, c] for p, c in rem.get("from", [])]
        transitions += [[n, p, c] for p, c in rem.get("to", [])]
        if rem.get("within"):
            transitions.append([n, -1, rem["within"]])
    row_hits = np.r_[hits[:n], [rem.get("hits", 1)] if rem else []]
    is_get = np.array([m == "GET" for m in methods])          # a jump reaches no form
    gets = np.r_[is_get[:n], np.ones(len(row_hits) - n, bool)]   # per row: the remainder's
    balance, balance_to, balance_p = _flow_balance(transitions, row_hits, gets)
    jumps = hits * is_get
    jumps = jumps if jumps.sum() > 0 else hits
    ptr, to, cum = _routing(n_rows, transitions + balance)
    views = [[PageView(tuple(v["objects"]), frozenset(v.get("revalidated", [])),
                       v.get("page_revalidated", False), v.get("page_absent", False))
              for v in p.get("views", [])]
             for p in head] + [[] for _ in range(len(urls) - n)]
    spec = SiteSpec(urls, page_sizes, page_objects, _links(ptr, to, len(urls), tail_start),
                    object_urls, object_sizes, views, methods, object_methods, object_follows,
                    {p: tuple(page["sizes"]) for p, page in enumerate(head) if "sizes" in page})
    once = _once_pool(head, spec, scale)
    spec.page_redirects = _redirects(site.get("redirects", []), head, once.origin.tolist())
    templates = {k: (spec.page_urls[k], head[p]["params"])      # copies of one-time templates too
                 for k, p in enumerate(once.origin.tolist()) if p < n and head[p].get("params")}
    return ModelSite(spec, entry / entry.sum() if entry.sum() > 0 else hits / hits.sum(),
                     jumps / jumps.sum(), ptr, to, cum, tail_start, tail_p,
                     _view_rows([head[o] if o < n else {} for o in once.origin.tolist()],
                                len(spec.page_urls)), once, balance_to, balance_p,
                     ParamDraw(templates) if templates else None,
                     TransitionThinks.of(site.get("thinks"), len(spec.page_urls)))


def _redirects(rows: list[dict], head: list[dict], origin: list[int]) -> dict[int, Redirect]:
    """The site's pages' ``Redirect`` (a one-time page's copies too, by ``origin``) from the
    model's ``site.redirects``; each target's concrete URL drawn once, as an object's."""
    by_key = {r["from"]: r for r in rows}
    out = {}
    for k, p in enumerate(origin):
        r = by_key.get(status_key(head[p])) if p < len(head) else None
        if r is not None:
            to = r["to"]
            out[k] = Redirect(tuple(fixed_url(concrete_url(t["url"], t.get("params", {})),
                                              t.get("params", {})) for t in to),
                              tuple(t.get("method", "GET") for t in to),
                              tuple(t["share"] for t in to), tuple(t["status"] for t in to),
                              tuple(t["size"] for t in to), r["delay"])
    return out


def _object_references(head: list[dict], objects: int) -> np.ndarray:
    """How many clicks of the model's pages fetched each object (by its views; every click
    of a page without views fetched all its objects)."""
    refs = np.zeros(objects, np.int64)
    for page in head:
        fetched = ([(v["objects"], v["first"] + v["repeat"]) for v in page["views"]]
                   if page.get("views") else [(page.get("objects", []), page.get("hits", 1))])
        for objs, clicks in fetched:
            np.add.at(refs, np.asarray(objs, np.int64), clicks)
    return refs


def _once_pool(head: list[dict], spec: SiteSpec, scale: float) -> OncePool:
    """Copies of the one-time views of the model's pages (appended to their pages' views,
    with copies of their one-time objects) and of its one-time pages (appended to the site)
    for a run of ``scale`` times the log's clicks, written into ``spec``; where they are and
    how often a click reuses one (``synth.once``)."""
    copies = copies_for(scale)
    clicked = {spec.page_urls[p] for p, page in enumerate(head) if page.get("hits")}
    refs = _object_references(head, len(spec.object_urls))
    refs[[o for o, u in enumerate(spec.object_urls) if u in clicked]] += 2   # pages: not once
    fetched = {spec.object_urls[o] for o in np.flatnonzero(refs).tolist()}
    slots = {}
    for p, page in enumerate(head):
        for v, view in enumerate(page.get("views", [])):
            lone = [o for o in view["objects"] if refs[o] == 1]
            if view["first"] + view["repeat"] != 1 or not lone:
                continue
            slots[(p, v + 1)] = (len(spec.page_views[p]) + 1, len(lone))
            base = spec.view(p, v + 1)
            for c in range(1, copies):
                fresh = {o: len(spec.object_urls) + i for i, o in enumerate(lone)}
                spec.object_urls += [once_url(spec.object_urls[o], c) for o in lone]
                spec.object_sizes += [spec.object_sizes[o] for o in lone]
                spec.object_methods += [spec.object_methods[o] for o in lone]
                spec.object_follows += [spec.object_follows[o] for o in lone]
                spec.page_objects[p] += fresh.values()
                spec.page_views[p].append(replace(base, objects=tuple(fresh.get(o, o)
                                                                      for o in base.objects)))
    pages = np.array([p for p, page in enumerate(head) if page.get("hits") == 1
                      and spec.page_urls[p] not in fetched],
                     np.int64)
    first, origin = len(spec.page_urls), np.arange(len(spec.page_urls))
    for p in pages.tolist():
        for c in range(1, copies):
            spec.page_urls.append(once_url(spec.page_urls[p], c))
            spec.page_sizes.append(spec.page_sizes[p])
            spec.page_objects.append(spec.page_objects[p])
            spec.page_links.append(spec.page_links[p])
            spec.page_views.append(spec.page_views[p])
            spec.page_methods.append(spec.page_methods[p])
    origin = np.r_[origin, np.repeat(pages, copies - 1)]
    lam = scale * np.array([p.get("hits", 1) for p in head], float)
    lam = lam[lam > scale]
    wanted = len(pages) * scale
    extra = float(np.sum(lam * np.exp(-lam)))
    keep = max(0.0, 1 - extra / wanted) if wanted else 1.0
    return OncePool(copies, pages, keep, max(0.0, wanted - extra), first, slots, origin,
                    view_cap=sum(k for _, k in slots.values()) * scale)


def _view_rows(pages: list[dict], n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """The views' draw table (``ModelSite.view_rows``) for ``n`` pages, None without views: a
    page whose views never came on a repeat view (or a first) draws by the other counts, a
    repeat view so drawn not one with the page absent unless all are (a log reads the objects
    of a page the session fetched before as that click's, not as a view from a cache)."""
    rows = []
    for p, page in enumerate(pages):
        views = page.get("views", [])
        counts = np.array([[v["first"], v["repeat"]] for v in views], np.int64).reshape(-1, 2)
        cached = np.array([v.get("page_absent", False) for v in views], bool)
        borrowed = np.where(cached, 0, counts[:, 0])       # a repeat view drawn by first views
        for kind in (0, 1):
            mine = (counts[:, kind] if counts[:, kind].sum() else
                    borrowed if kind and borrowed.sum() else counts[:, 1 - kind])
            rows += [[2 * p + kind, k + 1, c] for k, c in enumerate(mine.tolist()) if c]
    return _routing(2 * n, rows) if rows else None
