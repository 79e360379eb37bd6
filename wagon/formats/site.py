"""The site a scenario requests, and its bytes.

A ``SiteSpec`` lists pages (URL, HTML size, embedded objects, links to the pages users went to
next) and objects (URL, size). It travels in the scenario's header, so every consumer renders
the same bytes from it: ``wagon serve`` from memory, ``wagon site build`` as files for nginx or
Apache. Pages are HTML of their modeled size that reference their objects and links; objects are
incompressible filler of their size. A page may list ``views``: what a click on it fetches
besides it (some of its objects, in order, some revalidated), as the log's clicks did; a
scenario's click names one (``SiteSpec.view``; 0: every object of the page).

A page of an application is a request template (version 6 of the scenario): its ``method``
(``METHODS``; GET when absent) and a URL whose path segments or query values may be
placeholders, ``/item/{id}?q={q}``; each click of it names its concrete URL (the scenario's
``urls``), which ``template_pattern`` checks. A site build has no file for a template page.
"""
from __future__ import annotations

import functools
import html
import os
import re
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote, unquote

import numpy as np

from .atomic import NAME_MAX, atomic_write

__all__ = ["FOLDER_NGINX", "FOLDER_APACHE", "METHODS_NGINX", "SiteSpec", "PageView", "Redirect",
           "FetchTable", "SITE_MTIME", "LAST_MODIFIED", "page_html", "object_bytes", "url_path",
           "build_site", "BuildReport", "check_url", "check_size", "check_indices",
           "STATUS_CODES", "STATUS_ARG", "status_url", "STATUS_NGINX", "STATUS_APACHE",
           "QUERY_DIR", "query_path", "METHODS", "PLACEHOLDER", "template_pattern",
           "fill_template", "PERCENTILES", "is_size_law", "sums_to_one"]

_FILL = np.random.default_rng(20011).integers(0, 256, 1 << 16, dtype=np.uint8).tobytes()


@dataclass(frozen=True)
class PageView:
    """What a click fetches besides its page: objects (indices into the site's objects, in
    order, one twice when fetched twice), which of them are revalidated (positions in
    ``objects``: asked with If-Modified-Since, answered 304), whether the page is, and whether
    the page is not asked for at all (``page_absent``: shown from a cache, its objects
    fetched)."""

    objects: tuple[int, ...]
    revalidated: frozenset[int] = frozenset()
    page_revalidated: bool = False
    page_absent: bool = False

    def to_dict(self) -> dict:
        return ({"objects": list(self.objects), "revalidated": sorted(self.revalidated),
                 "page_revalidated": self.page_revalidated}
                | ({"page_absent": True} if self.page_absent else {}))


#: the key that sets a follow-up's target's random stream apart (``Redirect.target``)
FOLLOW_STREAM = 0xF011


@dataclass(frozen=True)
class Redirect:
    """Where a form's redirect sends the browser (the model's ``site.redirects``): its
    follow-up's concrete URLs (each drawn once, as an object's), methods, shares (summing to
    1), statuses and sizes as logged, and its delay after the form (s). Exports write the
    follow-up; a replay sends it after the redirect a built site gives the form as logged,
    and follows an application's real Location."""

    urls: tuple[str, ...]
    methods: tuple[str, ...]
    shares: tuple[float, ...]
    statuses: tuple[int, ...]
    sizes: tuple[int, ...]
    delay: float

    def to_dict(self) -> dict:
        return {"delay": self.delay, "to": [
            {"url": u, "share": p, "status": s, "size": n} | ({"method": m} if m != "GET" else {})
            for u, m, p, s, n in zip(self.urls, self.methods, self.shares, self.statuses,
                                     self.sizes)]}

    def target(self, stream: Sequence[int]) -> int:
        """The follow-up's target (an index of ``urls``) drawn by the shares, from the random
        stream keyed ``stream`` (a scenario's seed, a session, a click or a request), as
        replay and exports draw it."""
        u = np.random.default_rng([*stream, FOLLOW_STREAM]).random()
        return min(int(np.searchsorted(np.cumsum(self.shares), u, side="right")),
                   len(self.urls) - 1)

    def asked(self, j: int, marks: bool = True) -> str:
        """Target ``j``'s URL as a client asks for it: marked with its logged status when that
        is not 200 (``status_url``), unless ``marks`` is off (an application answers)."""
        return status_url(self.urls[j], self.statuses[j]) if marks and self.statuses[j] != 200 \
            else self.urls[j]

    def mean_size(self) -> float:
        """The follow-up's expected body size (bytes)."""
        return float(np.dot(self.shares, self.sizes))


@dataclass
class FetchTable:
    """A site's views as flat arrays: the row of (page, view) is ``row[page] + view``; its
    objects are ``objects[ptr[row]:ptr[row + 1]]``, ``revalidated`` beside them."""

    row: np.ndarray
    ptr: np.ndarray
    objects: np.ndarray
    revalidated: np.ndarray
    page_revalidated: np.ndarray
    page_absent: np.ndarray

    def rows(self, pages: np.ndarray, views: np.ndarray | None) -> np.ndarray:
        return self.row[pages] + (0 if views is None else views)

    def sizes(self, rows: np.ndarray) -> np.ndarray:
        """Objects a click of each row asks for."""
        return self.ptr[rows + 1] - self.ptr[rows]

    def asked(self, rows: np.ndarray) -> np.ndarray:
        """Requests a click of each row makes: its page's (unless shown from a cache) and its
        objects'."""
        return ~self.page_absent[rows] + self.sizes(rows)


@dataclass
class SiteSpec:
    """Pages and objects with their sizes; ``page_objects`` and ``page_links`` hold indices;
    ``page_views`` each page's views (none: a click fetches every object of its page)."""

    page_urls: list[str]
    page_sizes: list[int]
    page_objects: list[list[int]]
    page_links: list[list[int]]
    object_urls: list[str]
    object_sizes: list[int]
    page_views: list[list[PageView]] = field(default_factory=list)
    page_methods: list[str] = field(default_factory=list)
    object_methods: list[str] = field(default_factory=list)    # a beacon's POST; else GET
    object_follows: list[bool] = field(default_factory=list)   # comes with the request before
                                        # it (a redirect's target, a frame: ``click_delays``)
    page_size_laws: dict[int, tuple[int, ...]] = field(default_factory=dict)   # a template
                                        # page's percentiles 0..100 of its concrete URLs' sizes
    page_redirects: dict[int, Redirect] = field(default_factory=dict)   # a form's follow-up

    def __post_init__(self) -> None:
        if not self.page_views:
            self.page_views = [[] for _ in self.page_urls]
        if not self.page_methods:
            self.page_methods = ["GET"] * len(self.page_urls)
        if not self.object_methods:
            self.object_methods = ["GET"] * len(self.object_urls)
        if not self.object_follows:
            self.object_follows = [False] * len(self.object_urls)

    @functools.cached_property
    def templates(self) -> list[re.Pattern | None]:
        """Each page's ``template_pattern`` (None: a page of one URL)."""
        return [template_pattern(u) for u in self.page_urls]

    def concrete_size(self, page: int, url: str) -> int:
        """The size of ``url``, a concrete URL of template ``page``: the percentile of the
        page's ``page_size_laws`` a hash of the URL picks (the same URL, one size), else the
        page's size."""
        law = self.page_size_laws.get(page)
        return self.page_sizes[page] if law is None else law[
            zlib.crc32(url.encode()) * len(law) >> 32]

    def view(self, page: int, view: int) -> PageView:
        """What a click on ``page`` fetching ``view`` asks for (0: all the page's objects)."""
        return self.page_views[page][view - 1] if view else PageView(
            tuple(self.page_objects[page]))

    def cached_view(self, page: int) -> int:
        """The view of ``page`` that fetches least with the page itself (what a browser asks
        for on a page whose objects it has cached); 0 (all its objects) when none does."""
        views = self.page_views[page]
        return min((k for k in range(1, len(views) + 1) if not views[k - 1].page_absent),
                   key=lambda k: len(views[k - 1].objects), default=0)

    def fetches(self) -> "FetchTable":
        """Every (page, view) as arrays: what a click asks for, for vectorised readers."""
        rows = [self.view(p, k) for p in range(len(self.page_urls))
                for k in range(len(self.page_views[p]) + 1)]
        sizes = np.array([len(v.objects) for v in rows], np.int64)
        return FetchTable(np.r_[0, np.cumsum([len(v) + 1 for v in self.page_views])],
                          np.r_[0, np.cumsum(sizes)],
                          np.array([o for v in rows for o in v.objects], np.int64),
                          np.array([k in v.revalidated for v in rows
                                    for k in range(len(v.objects))], bool),
                          np.array([v.page_revalidated for v in rows], bool),
                          np.array([v.page_absent for v in rows], bool))

    def to_dict(self) -> dict:
        """The site as the scenario header holds it (every page list of one length)."""
        if not len(self.page_urls) == len(self.page_views) == len(self.page_methods):
            raise ValueError(f"a site of {len(self.page_urls)} pages with "
                             f"{len(self.page_views)} pages' views and "
                             f"{len(self.page_methods)} methods")
        pages = [{"url": u, "size": s, "objects": o, "links": k} for u, s, o, k in
                 zip(self.page_urls, self.page_sizes, self.page_objects, self.page_links)]
        for i, (page, views, method) in enumerate(zip(pages, self.page_views,
                                                      self.page_methods)):
            if views:
                page["views"] = [v.to_dict() for v in views]
            if method != "GET":
                page["method"] = method
            if i in self.page_size_laws:
                page["sizes"] = list(self.page_size_laws[i])
            if i in self.page_redirects:
                page["redirect"] = self.page_redirects[i].to_dict()
        return {"pages": pages, "objects": [
            {"url": u, "size": s} | ({"method": m} if m != "GET" else {})
            | ({"follows": True} if f else {}) for u, s, m, f in
            zip(self.object_urls, self.object_sizes, self.object_methods, self.object_follows)]}

    @classmethod
    def from_dict(cls, d: dict) -> "SiteSpec":
        """Read and check a header's site, every field's type and range; ValueError names the
        field that is wrong (``site.pages[3].url``)."""
        pages = _items(d, "pages", "site")
        objects = _items(d, "objects", "site")
        if not pages:
            raise ValueError("site.pages: the site has no page")
        for p, w in zip(pages, (f"site.pages[{i}]" for i in range(len(pages)))):
            try:
                template_pattern(check_url(p, w))
            except re.error:
                raise ValueError(f"{w}.url: a template names a placeholder twice") from None
        where = [f"site.pages[{i}]" for i in range(len(pages))]
        owhere = [f"site.objects[{i}]" for i in range(len(objects))]
        return cls([check_url(p, w) for p, w in zip(pages, where)],
                   [check_size(p, w) for p, w in zip(pages, where)],
                   [check_indices(p, "objects", w, len(objects)) for p, w in zip(pages, where)],
                   [check_indices(p, "links", w, len(pages), required=False)
                    for p, w in zip(pages, where)],
                   [check_url(o, w) for o, w in zip(objects, owhere)],
                   [check_size(o, w) for o, w in zip(objects, owhere)],
                   [_views(p, w) for p, w in zip(pages, where)],
                   [_method(p, w) for p, w in zip(pages, where)],
                   [_method(o, w) for o, w in zip(objects, owhere)],
                   [_follows(o, w) for o, w in zip(objects, owhere)],
                   {i: law for i, law in enumerate(_size_law(p, w) for p, w in zip(pages, where))
                    if law is not None},
                   {i: r for i, r in enumerate(_page_redirect(p, w) for p, w in zip(pages, where))
                    if r is not None})

    def redirect_of(self, page: int, status: int | None) -> Redirect | None:
        """The ``Redirect`` a browser follows after ``page`` answered ``status`` (None: not a
        form with one, or not a redirect): ``followed`` for one click."""
        return self.page_redirects.get(page) if status is not None and _redirect(status) \
            else None

    def followed(self, pages: np.ndarray, marks: np.ndarray | None) -> np.ndarray:
        """The clicks (positions in ``pages``) whose page, a form with a ``Redirect``, is
        marked answered with a redirect (``marks``: (click, position, status) rows, a
        ``SessionBatch``'s ``statuses``): those a browser follows with one more request."""
        if marks is None or not len(marks) or not self.page_redirects:
            return np.zeros(0, np.int64)
        forms = np.zeros(len(self.page_urls), bool)
        forms[list(self.page_redirects)] = True
        click, status = marks[:, 0], marks[:, 2]
        hit = (marks[:, 1] == 0) & (status >= 300) & (status < 400) & forms[pages[click]]
        return np.unique(click[hit])


def is_size_law(sizes: object) -> bool:
    """Whether ``sizes`` is a page's ``sizes`` (model and scenario alike): PERCENTILES whole
    numbers of bytes ≥ 0, in order."""
    return (isinstance(sizes, list) and len(sizes) == PERCENTILES
            and all(isinstance(s, int) and not isinstance(s, bool) and 0 <= s < 1 << 63
                    for s in sizes) and all(a <= b for a, b in zip(sizes, sizes[1:])))


def _size_law(page: dict, where: str) -> tuple[int, ...] | None:
    """A header page's ``sizes``: its concrete URLs' percentiles 0..100 (None when absent)."""
    sizes = page.get("sizes")
    if sizes is None:
        return None
    if not is_size_law(sizes):
        raise ValueError(f"{where}.sizes must be {PERCENTILES} sizes in bytes, in order "
                         f"(got {sizes!r:.60})")
    return tuple(sizes)


def sums_to_one(shares: Sequence[float]) -> bool:
    """Do ``shares``, as the writers round them (6 decimals), sum to 1? Within half a unit of
    the sixth decimal a share, and 1e-5 at least: a form's 36 one-time targets summed to
    1.000012, which a fixed 1e-5 refused (the model ``wagon fit`` had just written)."""
    return abs(sum(shares) - 1) <= max(1e-5, 5e-7 * len(shares))


def _page_redirect(page: dict, where: str) -> Redirect | None:
    """A header page's ``redirect`` (None when absent), every field checked (a target's URL,
    size and method as an object's)."""
    r = page.get("redirect")
    if r is None:
        return None
    to = r.get("to") if isinstance(r, dict) else None
    ok = (isinstance(to, list) and to and isinstance(r.get("delay"), (int, float))
          and not isinstance(r["delay"], bool) and 0 <= r["delay"] < float("inf")
          and all(isinstance(t, dict) and isinstance(t.get("share"), (int, float))
                  and 0 < t["share"] <= 1 and isinstance(t.get("status"), int)
                  and 100 <= t["status"] < 600 for t in to)
          and sums_to_one([t["share"] for t in to]))
    if not ok:
        raise ValueError(f"{where}.redirect must be {{delay: seconds >= 0, to: [{{url: a path, "
                         "share in (0, 1], status, size, method}}] with shares summing to 1}} "
                         f"(got {r!r:.60})")
    there = [f"{where}.redirect.to[{k}]" for k in range(len(to))]
    return Redirect(tuple(check_url(t, w) for t, w in zip(to, there)),
                    tuple(_method(t, w) for t, w in zip(to, there)),
                    tuple(t["share"] for t in to), tuple(t["status"] for t in to),
                    tuple(check_size(t, w) for t, w in zip(to, there)), float(r["delay"]))


def _method(page: dict, where: str) -> str:
    """A header page's or object's ``method`` (GET when absent)."""
    method = page.get("method", "GET")
    if method not in METHODS:
        raise ValueError(f"{where}.method must be one of {', '.join(METHODS)} (got "
                         f"{method!r:.20})")
    return method


def _follows(obj: dict, where: str) -> bool:
    """A header object's ``follows`` (False when absent)."""
    follows = obj.get("follows", False)
    if not isinstance(follows, bool):
        raise ValueError(f"{where}.follows must be a boolean (got {follows!r:.20})")
    return follows


def _views(page: dict, where: str) -> list[PageView]:
    """A header page's ``views``, each checked against the page's objects."""
    views = page.get("views", [])
    mine = set(page["objects"])
    out = []
    for k, v in enumerate(views if isinstance(views, list) else [None]):
        objects = v.get("objects") if isinstance(v, dict) else None
        again = v.get("revalidated", []) if isinstance(v, dict) else None
        ok = (isinstance(objects, list) and all(_index(o) and o in mine for o in objects)
              and isinstance(again, list) and all(_index(r) and r < len(objects) for r in again)
              and isinstance(v.get("page_revalidated", False), bool)
              and isinstance(v.get("page_absent", False), bool)
              and not (v.get("page_absent") and (not objects or v.get("page_revalidated"))))
        if not ok:
            raise ValueError(f"{where}.views[{k}] must be {{objects: some of the page's "
                             "objects, revalidated: positions in them, page_revalidated, "
                             "page_absent: booleans (an absent page: some object, not "
                             f"revalidated)}} (got {v!r:.60})")
        out.append(PageView(tuple(objects), frozenset(again), v.get("page_revalidated", False),
                            v.get("page_absent", False)))
    return out


def _index(v: object) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0


#: every page and object was last modified then (a site build sets its files' times to it), so
#: that a revalidation's If-Modified-Since names the exact time (nginx's default
#: ``if_modified_since exact``) and is in the past (RFC 9110 13.1.3: a later date is ignored)
SITE_MTIME = 996624000
LAST_MODIFIED = "Wed, 01 Aug 2001 00:00:00 GMT"

MAX_SIZE = 1 << 36           # bytes of a page or object (64 GiB: any file a log may name)
PERCENTILES = 101            # a law kept as its percentiles 0..100 (a template's sizes, delays)
MAX_URL = 2048               # characters of a URL (what servers accept in a request line)
#: the methods a page (a request template) may have
METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS")
#: a placeholder of a page's URL template, ``{name}`` (its name: group 1)
PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]{0,63})\}")
_VALUE = r"[^/?&#\s{}]+"       # a placeholder's value in the path: one segment
_QUERY_VALUE = r"[^&#\s{}]+"   # in the query: "/" and "?" are data there (RFC 3986 3.4)


def template_pattern(url: str) -> re.Pattern | None:
    """The concrete URLs of the template ``url`` (each placeholder a non-empty value without
    ``/ ? & #``, whitespace or braces; in the query, ``/`` and ``?`` allowed, as RFC 3986
    allows them there: ``/login?next=/cart``), or None when ``url`` has no placeholder."""
    parts = PLACEHOLDER.split(url)
    if len(parts) == 1:
        return None
    query = [k for k in range(len(parts)) if "?" in "".join(parts[:k:2])]
    return re.compile("".join(re.escape(p) if k % 2 == 0 else
                              f"(?P<{p}>{_QUERY_VALUE if k in query else _VALUE})"
                              for k, p in enumerate(parts)))


def fill_template(url: str, values: dict[str, str]) -> str:
    """The template ``url`` with each placeholder replaced by its value, percent-encoded."""
    return PLACEHOLDER.sub(lambda m: quote(str(values[m.group(1)]), safe=""), url)


def _items(d: object, key: str, where: str) -> list[dict]:
    """``d[key]``, a list of objects."""
    items = d.get(key) if isinstance(d, dict) else None
    if not isinstance(items, list) or not all(isinstance(x, dict) for x in items):
        raise ValueError(f"{where}.{key} must be a list of objects")
    return items


def check_url(d: dict, where: str) -> str:
    """``d["url"]``, a path; ValueError naming ``where`` otherwise."""
    url = d.get("url")
    if not (isinstance(url, str) and url.startswith("/") and len(url) <= MAX_URL
            and url.isprintable()):
        raise ValueError(f"{where}.url must be a path: '/' then up to {MAX_URL} printable "
                         f"characters (got {url!r:.60})")
    return url


def check_size(d: dict, where: str) -> int:
    """``d["size"]``, a size in bytes; ValueError naming ``where`` otherwise."""
    size = d.get("size")
    if not (isinstance(size, int) and not isinstance(size, bool) and 0 <= size <= MAX_SIZE):
        raise ValueError(f"{where}.size must be an integer in [0, {MAX_SIZE:,}] bytes (got "
                         f"{size!r:.40})")
    return size


def check_indices(d: dict, key: str, where: str, n: int, required: bool = True) -> list[int]:
    """``d[key]``: indices into a list of ``n``."""
    got = d.get(key, None if required else [])
    if not (isinstance(got, list) and all(isinstance(k, int) and not isinstance(k, bool)
                                          and 0 <= k < n for k in got)):
        noun = "an object" if key == "objects" else "a page"
        raise ValueError(f"{where}.{key} refers to {noun} that does not exist, or is not a "
                         f"list of indices in [0, {n}) (got {got!r:.60})")
    return got


def page_html(site: SiteSpec, page: int, url: str | None = None) -> bytes:
    """The HTML of ``page`` (at ``url``, one of a template page's concrete URLs): exactly its
    size, unless its references need more room."""
    size = site.page_sizes[page] if url is None else site.concrete_size(page, url)
    url = site.page_urls[page] if url is None else url
    head = (f"<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>{html.escape(url)}"
            f"</title></head>\n<body>\n<h1>{html.escape(url)}</h1>\n")
    imgs = "".join(f'<img src="{html.escape(site.object_urls[o])}" alt="">\n'
                   for o in site.page_objects[page])
    links = "".join(f'<a href="{html.escape(site.page_urls[t])}">next</a>\n'
                    for t in site.page_links[page])
    tail = "</body></html>\n"
    text = (head + imgs + links).encode()
    room = int(size) - len(text) - len(tail) - len("<!--  -->\n")
    pad = b"<!-- " + (b"x" * max(room, 0)) + b" -->\n" if room >= 0 else b""
    return text + pad + tail.encode()


def object_bytes(size: int) -> bytes:
    """``size`` bytes of incompressible filler (compression would change what is transferred)."""
    reps, rest = divmod(int(size), len(_FILL))
    return _FILL * reps + _FILL[:rest]


def _segments(parts: list[str]) -> list[str] | None:
    """A path's segments as a file system takes them: empty and ``.`` ones dropped, None
    when one is ``..`` or longer than ``NAME_MAX`` bytes."""
    parts = [p for p in parts if p not in ("", ".")]
    if ".." in parts or any(len(p.encode()) > NAME_MAX for p in parts):
        return None
    return parts


def url_path(url: str) -> str | None:
    """Relative file path for a URL path, or None when it cannot be one (.., NUL, a segment
    longer than ``NAME_MAX`` bytes: EPA's /cgi-bin/waisgate?… queries). Empty and ``.``
    segments are dropped (``/a//b``, ``/./b``: the file nginx and Apache serve for the URL, as
    they merge them)."""
    if not url.startswith("/"):
        return None
    path = unquote(url)
    if "\0" in path or "\\" in path:
        return None
    parts = path.split("/")[1:]
    folder = parts[-1] in ("", ".")
    parts = _segments(parts)
    if parts is None:
        return None
    return "/".join(parts + ["index.html"] if folder else parts)


def query_path(url: str) -> str | None:
    """The file of a concrete URL with a query (``QUERY_DIR``), or None when it has none or
    cannot have one (``url_path``'s rules, on each segment of the query too)."""
    path, _, query = url.partition("?")
    base = url_path(path)
    if not query or base is None or path.endswith("/"):
        return None
    parts = _segments(f"@{query}".split("/"))
    if "\0" in query or parts is None:
        return None
    return "/".join([QUERY_DIR, base, *parts])


@dataclass
class BuildReport:
    pages: int = 0
    objects: int = 0
    bytes: int = 0
    grown: int = 0                         # pages whose references exceed their modeled size
    as_pages: int = 0                      # objects whose URL is a page's: the page serves them
    folders: int = 0                       # pages also a folder: served by its index.html
    skipped: dict[str, int] = field(default_factory=dict)

    def skip(self, why: str) -> None:
        self.skipped[why] = self.skipped.get(why, 0) + 1


#: where a built site keeps the concrete URLs with a query of its template pages, a file each
#: (``/item?id=5``: QUERY_DIR/item/@id=5, the query as sent), so that a static server answers
#: each with its own size (``query_path``)
QUERY_DIR = ".wagon-query"
#: how a server answers a page that is also a folder (/a beside /a/b.html) with 200, as the
#: logged server did, instead of a redirect to /a/: its file is the folder's index.html; and a
#: concrete URL with a query from its own file when the site has one
FOLDER_NGINX = f"try_files /{QUERY_DIR}$uri/@$args $uri $uri/index.html =404;"
#: how nginx answers a page asked for with a method that sends a body (a form's POST, PUT, ...)
#: with its file, as the logged server answered the form, instead of 405: a GET of it,
#: its query kept (a marked 405 is asked for again and answered 405). Apache answers a POST
#: with the file by itself (PUT, PATCH and DELETE 405).
METHODS_NGINX = "error_page 405 =200 $uri?$args;"
FOLDER_APACHE = f"""DirectorySlash Off
RewriteEngine On
RewriteCond "%{{QUERY_STRING}}" "."
RewriteCond "%{{DOCUMENT_ROOT}}/{QUERY_DIR}%{{REQUEST_URI}}/@%{{QUERY_STRING}}" -f
RewriteRule "^(.*)$" "/{QUERY_DIR}$1/@%{{QUERY_STRING}}?" [L]
RewriteCond "%{{DOCUMENT_ROOT}}%{{REQUEST_URI}}" -d
RewriteRule "^(.*[^/])$" "$1/index.html" [L]"""


#: the answers other than 200 and 304 a site build serves as logged (a model's ``statuses``;
#: a scenario marks the requests that get them): redirects, client and server errors
STATUS_CODES = (301, 302, 303, 307, 308, 400, 401, 403, 404, 405, 410, 413, 414, 500, 501,
                502, 503, 504)
#: the query argument that asks a built site for a logged answer: ``/a.html?wagon_status=404``
STATUS_ARG = "wagon_status"


def status_url(url: str, status: int) -> str:
    """``url`` as a client asks for it to be answered ``status`` by a built site (nginx and
    Apache with ``STATUS_NGINX``/``STATUS_APACHE``, ``wagon serve``): any HTTP client can."""
    return f"{url}{'&' if '?' in url else '?'}{STATUS_ARG}={status}"


def _redirect(code: int) -> bool:
    return 300 <= code < 400


#: how nginx answers a marked request (``status_url``): that status, a redirect to the URL
#: itself without the mark (a page of the site); before any file is looked for
STATUS_NGINX = "\n".join(
    f"if ($arg_{STATUS_ARG} = {c}) {{ return {c}{' $uri' if _redirect(c) else ''}; }}"
    for c in STATUS_CODES)
#: the same for Apache (mod_rewrite; before ``FOLDER_APACHE``, whose rule ends the rewriting)
STATUS_APACHE = "RewriteEngine On\n" + "\n".join(
    f'RewriteCond "%{{QUERY_STRING}}" "(^|&){STATUS_ARG}={c}(&|$)"\n'
    + (f'RewriteRule "^(.*)$" "$1?" [R={c},L]' if _redirect(c) else f'RewriteRule "^" "-" [R={c},L]')
    for c in STATUS_CODES)


def build_site(site: SiteSpec, outdir: str | os.PathLike,
               concrete: dict[str, int] | None = None) -> BuildReport:
    """Write every page and object under ``outdir``; unmappable URLs are counted, not fatal.
    A page whose path is also a folder is written as the folder's index.html (served at its
    URL by ``FOLDER_NGINX`` or ``FOLDER_APACHE``). ``concrete``: the concrete URLs a scenario
    asks for of its GET template pages (URL → page), each written as its page at that URL."""
    outdir = Path(outdir)
    report = BuildReport()
    entries = [(url_path(u), True, i) for i, u in enumerate(site.page_urls)] + \
              [(url_path(u), False, i) for i, u in enumerate(site.object_urls)]
    at = {}                                 # a concrete URL's entry: its URL
    known = {p for p, _, _ in entries}
    for url, i in sorted((concrete or {}).items()):
        path = url_path(url.split("?", 1)[0])
        if path not in known:               # a template of a query: its path is a page's too
            known.add(path)
            entries.append((path, True, i))
            at[len(entries) - 1] = url
        if query_path(url) is not None:     # and each of its queries a file of its own
            entries.append((query_path(url), True, i))
            at[len(entries) - 1] = url
    files = {p for p, _, _ in entries if p}
    dirs = {"/".join(p.split("/")[:k]) for p in files for k in range(1, p.count("/") + 1)}
    seen: set[str] = set()
    pages = {p for p, is_page, _ in entries if is_page and p}
    for k, (path, is_page, i) in enumerate(entries):
        if is_page and site.templates[i] is not None and k not in at:
            report.skip("a page of an application (a URL template)")
            continue
        if path is None:
            report.skip("URL cannot be a file path")
            continue
        if not is_page and path in pages and path not in dirs:
            report.as_pages += 1           # a page fetched within a click (views): it is there
            continue
        if is_page and path in dirs:       # /a beside /a/b.html: the folder's index.html
            path = f"{path}/index.html"
            report.folders += 1
            if path in seen:               # the page /a/ wrote it: one resource, two URLs
                continue
        if path in dirs or path in seen:
            report.skip("path is also a directory" if path in dirs else "duplicate path")
            continue
        seen.add(path)
        data = page_html(site, i, at.get(k)) if is_page else object_bytes(site.object_sizes[i])
        if is_page:
            report.pages += 1
            report.grown += len(data) > (site.page_sizes[i] if k not in at
                                         else site.concrete_size(i, at[k]))
        else:
            report.objects += 1
        target = outdir / path
        target.parent.mkdir(parents=True, exist_ok=True)
        with atomic_write(target, "wb", sync=False) as f:       # thousands of small files
            f.write(data)
        os.utime(target, (SITE_MTIME, SITE_MTIME))
        report.bytes += len(data)
    return report
