"""Logged request targets as pages: what the model may keep of a URL.

- an absolute URI (``GET http://10.0.0.30:80/x``: load balancers, forward proxies) is reduced to
  its path and query, so a page is one page whatever host and port it was asked through, and
  no address reaches the model;
- a CONNECT target (``host:port``, forward proxies' tunnels) is the one page ``/{tunnel}``;
- a target that is no path (``GET page.html``, ``OPTIONS *``: what a server answers 400 or
  leaves alone) is made one with a leading ``/``, as an absolute URI without a path is, so that
  every page is a path (what the model's site and a replay's requests need);
- spaces around a target are trimmed (``GET /a  HTTP/1.0`` logs ``/a `` otherwise);
- a character that is not printable (a NUL, a tab, U+2028: bytes no request line may carry, which
  a damaged or hostile log holds) is percent-encoded as its UTF-8 bytes (``%00``), so the page
  is kept and the model's site holds only printable paths, as its reader requires;
- a target longer than ``MAX_URL_CHARS`` keeps its first ``MAX_URL_CHARS`` characters followed
  by ``{long}``, and the requests so shortened are counted (a 100 KB probe URL would otherwise
  be stored verbatim).
"""
from __future__ import annotations

import re
from urllib.parse import quote

import numpy as np

__all__ = ["MAX_URL_CHARS", "LONG", "TUNNEL", "page_url", "page_urls"]

MAX_URL_CHARS = 1024
LONG = "{long}"
TUNNEL = "/{tunnel}"
_ABSOLUTE = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^/?#]*")
_AUTHORITY = re.compile(r"[\w.-]+:\d+|\[[0-9A-Fa-f:.]+\]:\d+")


def page_url(url: str) -> str:
    """``url`` as a page: trimmed, printable, its scheme and authority dropped, capped."""
    text = url.strip() or url
    if not text.isprintable():
        text = "".join(c if c.isprintable() else quote(c, safe="") for c in text)
    if _AUTHORITY.fullmatch(text):
        return TUNNEL
    m = _ABSOLUTE.match(text)
    if m is not None:
        text = text[m.end():]
    text = text if text.startswith("/") else "/" + text
    return text if len(text) <= MAX_URL_CHARS else text[:MAX_URL_CHARS] + LONG


def page_urls(urls: list[str]) -> tuple[list[str], np.ndarray, np.ndarray]:
    """(the distinct pages of ``urls``, the page code of each URL, which URLs were capped)."""
    pages = [page_url(u) for u in urls]
    at: dict[str, int] = {}
    code = np.fromiter((at.setdefault(p, len(at)) for p in pages), np.int32, len(pages))
    capped = np.fromiter((len(p) > MAX_URL_CHARS for p in pages), bool, len(pages))
    return list(at), code, capped
