"""Requests as the log shows them: each request mapped to a template — its method, its path with
placeholders, its query's names — and the values each placeholder took (issue 37).

- a page's key is its template, prefixed by its method when that is one a request body goes with
  (``POST /cart``); GET, HEAD and methods outside ``KEPT_METHODS`` are GET (``/cart``), so a
  static site's pages keep the URLs they always had;
- a path segment is a placeholder when ``paths`` takes it for an identifier (``{id}``,
  ``{uuid}``, ``{email}``, ``{hex}``, ``{token}``), or when it stands in a *route* (a path whose
  last segment has no extension and that does not end with ``/``: static files and directory
  indexes stay pages) at a position where, under one prefix, the log's routes take at least
  ``DYNAMIC_VALUES`` distinct values that are not directories of static files (no file with
  an extension below them, never asked for with a trailing ``/``: ``/item/17`` ...
  ``/item/812`` → ``/item/{item}``, but not a static site's folders);
- each query value is a placeholder named after its key, the keys sorted
  (``/search?q={q}&page={page}``); a part without ``=`` stays when it is a name (``?print``),
  else it is one value ``{arg}``; an empty value stays empty (``?q=``). With ``keep_query`` the query keeps its values as
  ``paths.template_path`` leaves them (the older ``--keep-query``);
- placeholder names are unique in a template (``{id}``, ``{id_2}``), valid for
  ``formats.site.template_pattern``.

The values are tallied per (page key, placeholder, value) with their requests and distinct
clients (``ValueTally``), for ``wagon.modeling.params`` to fit each placeholder's law; they never
reach the model themselves.
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from functools import lru_cache

import numpy as np

from .parse import Requests, sorted_table
from .paths import _segment, referer_origin, referer_path, template_path
from .urls import LONG, MAX_URL_CHARS, TUNNEL

__all__ = ["KEPT_METHODS", "DYNAMIC_VALUES", "ValueTally", "route_paths", "dynamic_prefixes",
           "page_key", "split_key", "templated", "template_requests"]

#: methods a page's key keeps (the others are asked for as GET, as before issue 37)
KEPT_METHODS = ("POST", "PUT", "PATCH", "DELETE", "OPTIONS")
#: distinct values at one position of the routes under one prefix that make it a placeholder:
#: a hand-made site's navigation rarely has 50 sibling routes without an extension under one
#: prefix (NASA, EPA and the sample log: none), a catalogue's items or users' names have
#: hundreds; below it, a value may be a person's but is then also one of few pages
DYNAMIC_VALUES = 50
TEMPLATED_CACHE = 8192                  # URLs whose templates a process keeps (~3 MB)
_MARK = "{}"                            # a dynamic position in a prefix, before naming
_EXT = re.compile(r"\.[A-Za-z0-9]{1,5}$")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_-]{0,63}")
_ONE = re.compile(r"\{([a-z]+)\}(\.[A-Za-z0-9]{1,5})?")


def _is_route(path: str) -> bool:
    last = path.rsplit("/", 1)[-1]
    return bool(last) and not _EXT.search(last)


def route_paths(urls: Iterable[str]) -> list[str]:
    """What ``dynamic_prefixes`` needs from a piece of the log (query cut, identifiers already
    placeholders), small enough to send around: its distinct routes, and the directories that
    hold a static file or were asked for as directories (``/docs/air/``, ending with ``/``)."""
    out = set()
    for u in urls:
        segs = [_segment(s) for s in u.partition("?")[0].split("/")]
        if _is_route("/".join(segs)):
            out.add("/".join(segs))
        else:
            out.update("/".join(segs[:i]) + "/" for i in range(2, len(segs)))
    return sorted(out)


def _next(prefix: str, seg: str, dynamic: frozenset[str] | set[str]) -> str:
    """The templated text of ``seg`` after ``prefix`` (a dynamic position: ``_MARK``)."""
    plain = _segment(seg)
    return _MARK if prefix in dynamic and plain == seg else plain


def dynamic_prefixes(paths: Iterable[str], threshold: int = DYNAMIC_VALUES) -> frozenset[str]:
    """The templated prefixes under which the routes of ``paths`` (``route_paths``) take at
    least ``threshold`` distinct values at the next position that are no directory of static
    files, level by level (a prefix holds the placeholders found at lower levels)."""
    paths = set(paths)
    dirs = {p for p in paths if p.endswith("/")}
    rows = [p.split("/") for p in paths - dirs]
    prefix = [""] * len(rows)
    dynamic: set[str] = set()
    for i in range(1, max((len(r) for r in rows), default=0)):
        values: dict[str, set[str]] = {}
        for r, pre in zip(rows, prefix):
            if len(r) > i and f"{pre}/{r[i]}/" not in dirs:
                values.setdefault(pre, set()).add(_segment(r[i]))
        dynamic |= {pre for pre, v in values.items() if len(v) >= threshold}
        prefix = [pre + "/" + _next(pre, r[i], dynamic) if len(r) > i else pre
                  for r, pre in zip(rows, prefix)]
    return frozenset(dynamic)


def page_key(method: str, template: str) -> str:
    """A page's key: its template, after its method when that is kept."""
    return f"{method} {template}" if method in KEPT_METHODS else template


def split_key(key: str) -> tuple[str, str]:
    """(method, URL template) of a page key."""
    method, space, url = key.partition(" ")
    return (method, url) if space and method in KEPT_METHODS else ("GET", key)


class _Names:
    """Unique placeholder names within one template."""

    def __init__(self) -> None:
        self.used: set[str] = set()

    def __call__(self, base: str) -> str:
        base = re.sub(r"\W", "_", base)[:60] or "p"
        base = base if base[0].isalpha() or base[0] == "_" else "p" + base
        name, k = base, 1
        while name in self.used:
            k += 1
            name = f"{base}_{k}"
        self.used.add(name)
        return name


def _path(path: str, dynamic: frozenset[str], names: _Names
          ) -> tuple[str, list[tuple[str, str]]]:
    segs = path.split("/")
    route = _is_route(path)
    out, values, prefix = [segs[0]], [], segs[0]
    for i, seg in enumerate(segs[1:], 1):
        seg = seg.split(";", 1)[0]
        plain = _next(prefix, seg, dynamic if route else frozenset())
        prefix += "/" + plain
        one = _ONE.fullmatch(plain)
        if plain == _MARK:
            name = names(segs[i - 1] if i > 1 and _NAME.fullmatch(segs[i - 1]) else "seg")
            out.append("{" + name + "}")
            values.append((name, seg))
        elif one and plain != seg:
            name = names(one.group(1))
            ext = one.group(2) or ""
            out.append("{" + name + "}" + ext)
            values.append((name, seg[:len(seg) - len(ext)]))
        else:
            out.append(plain)
    return "/".join(out), values


def _query(query: str, names: _Names) -> tuple[str, list[tuple[str, str]]]:
    parts, values = [], []
    for key, eq, value in sorted(p.partition("=") for p in query.split("&") if p):
        if (not eq and _NAME.fullmatch(key)) or (eq and not value):
            parts.append(key + eq)
            continue
        name = names(key if eq else "arg")
        parts.append((key + "=" if eq else "") + "{" + name + "}")
        values.append((name, value if eq else key))
    return "&".join(parts), values


@lru_cache(maxsize=TEMPLATED_CACHE)
def templated(url: str, dynamic: frozenset[str] = frozenset(), keep_query: bool = False
              ) -> tuple[str, list[tuple[str, str]]]:
    """``url``'s template and the (placeholder, value) pairs it took (module docstring);
    kept for the URLs met again (a worker's next partition holds most of the site's URLs
    again, and its referers the same pages). Read-only: the list is shared."""
    if url == TUNNEL or (url.endswith(LONG) and len(url) > MAX_URL_CHARS):
        return template_path(url), []
    path, q, query = url.replace("{", "%7B").replace("}", "%7D").partition("?")
    names = _Names()
    out, values = _path(path, dynamic, names)
    if q and keep_query:
        return out + "?" + template_path("/?" + query).partition("?")[2], values
    if q:
        text, more = _query(query, names)
        return out + ("?" + text if text else ""), values + more
    return out, values


@dataclass
class ValueTally:
    """The values placeholders took in one partition: per (page key, placeholder, value), its
    requests and the distinct clients that asked for it (partitions hold disjoint clients, so
    tallies add up)."""

    counts: dict[tuple[str, str, str], list[int]] = field(default_factory=dict)

    def add(self, other: "ValueTally") -> None:
        for k, (n, c) in other.counts.items():
            mine = self.counts.setdefault(k, [0, 0])
            mine[0] += n
            mine[1] += c


def template_requests(req: Requests, dynamic: frozenset[str] = frozenset(),
                      keep_query: bool = False
                      ) -> tuple[Requests, list[str], list[str], ValueTally]:
    """``req`` with URLs as page keys (method and template; referers templated as GET pages,
    so that they still name the templated pages, ``/item?id={id}`` for ``/item?id=36``), the (method, URL) pairs of the log
    as keys (GET folded as in ``page_key``) with the page key of each, and the values the
    placeholders took."""
    kept = np.array([m in KEPT_METHODS for m in req.methods] + [False])
    method = np.where(kept[req.method], req.method, -1).astype(np.int64)   # -1: GET
    both, pair = np.unique((method + 1) * max(len(req.urls), 1) + req.url, return_inverse=True)
    pair = pair.ravel()
    pairs = [(req.methods[b // max(len(req.urls), 1) - 1] if b >= len(req.urls) else "GET",
              req.urls[b % max(len(req.urls), 1)]) for b in both.tolist()]
    raw = [page_key(m, u) for m, u in pairs]
    done = [templated(u, dynamic, keep_query) for _, u in pairs]
    keys = [page_key(m, t) for (m, _), (t, _) in zip(pairs, done)]
    names, (code,) = sorted_table([keys])
    code = code.astype(np.int32)
    # a referer keeps its origin (scheme and host): whose page it was (``sessions``' links
    # from other sites); its path is templated as the pages are
    referers = [referer_origin(r) + templated(p, dynamic, keep_query)[0] if p.startswith("/")
                else p for r, p in zip(req.referers, map(referer_path, req.referers))]
    out = replace(req, url=code[pair] if len(req) else req.url, urls=names, referers=referers)
    return out, raw, keys, _tally(pair, req.host, keys, done)


def _tally(pair: np.ndarray, host: np.ndarray, keys: list[str],
           done: list[tuple[str, list[tuple[str, str]]]]) -> ValueTally:
    """Requests and distinct clients per (page key, placeholder, value)."""
    tally = ValueTally()
    rows = [(p, (keys[p], name, value)) for p, (_, values) in enumerate(done)
            for name, value in values]
    if not rows or not len(pair):
        return tally
    triples, vid = np.unique(np.array([t for _, t in rows], object).astype(str), axis=0,
                             return_inverse=True)
    owner = np.array([p for p, _ in rows])
    # each request as many rows as its pair has values: (value id, client)
    order = np.argsort(owner, kind="stable")
    starts = np.searchsorted(owner[order], np.arange(len(done) + 1))
    per = np.diff(starts)[pair]
    req_rows = np.repeat(np.arange(len(pair)), per)
    offset = np.arange(len(req_rows)) - np.repeat(np.cumsum(per) - per, per)
    v = vid.ravel()[order][starts[pair[req_rows]] + offset]
    both, n = np.unique(np.c_[v, host[req_rows]], axis=0, return_counts=True)
    requests = np.bincount(both[:, 0], weights=n, minlength=len(triples))
    clients = np.bincount(both[:, 0], minlength=len(triples))
    for t, k, c in zip(triples.tolist(), requests.tolist(), clients.tolist()):
        if k:
            tally.counts[tuple(t)] = [int(k), int(c)]
    return tally
