"""URL paths as the model keeps them: identifiers collapsed into templates (privacy by default).

A path segment (or query value, when queries are kept) that looks like an identifier becomes a
placeholder, so ``/user/12345/profile`` and ``/user/67890/profile`` are one page,
``/user/{id}/profile``:

- ``{id}``: a number of 4 digits or more (``12345``, ``12345.html``);
- ``{uuid}``: a UUID anywhere in the segment;
- ``{email}``: an e-mail address (``@`` or ``%40``) anywhere in the segment;
- ``{hex}``: 16 or more hexadecimal digits holding both digits and letters (tokens, hashes);
- ``{token}``: 24 or more letters, digits, ``-`` or ``_`` mixing upper case, lower case and
  digits (session tokens, base64);
- path parameters (``;jsessionid=…``) are dropped;
- ``{long}`` ends a URL cut at ``MAX_URL_CHARS``, ``/{tunnel}`` is a CONNECT target
  (``wagon.logs.urls``).

Literal braces of logged URLs are percent-encoded first, so a placeholder is never ambiguous.
"""
from __future__ import annotations

import re
from dataclasses import replace

import numpy as np

from .parse import Requests, sorted_table
from .urls import LONG, MAX_URL_CHARS, TUNNEL

__all__ = ["template_path", "template_requests", "referer_path", "referer_origin",
           "PLACEHOLDERS"]

PLACEHOLDERS = ("{id}", "{uuid}", "{email}", "{hex}", "{token}", LONG, TUNNEL)

_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-"
                   r"[0-9a-fA-F]{12}")
#: (its local part never begins inside a percent escape: EPA's ``ACCESS%3Dgopher%40earth1…``
#: is ``ACCESS%3D{email}``, not ``ACCESS%{email}``, which no server takes)
_EMAIL = re.compile(r"(?<!%)(?<!%[0-9A-Fa-f])"
                    r"[\w.+-]+(?:@|%40)[\w-]+(?:\.[\w-]+)*\.[A-Za-z]{2,}")
_NUMBER = re.compile(r"\d{4,}")
_HEX = re.compile(r"(?=[0-9a-fA-F]*\d)(?=[0-9a-fA-F]*[a-fA-F])[0-9a-fA-F]{16,}")
_TOKEN = re.compile(r"(?=[\w-]*\d)(?=[\w-]*[a-z])(?=[\w-]*[A-Z])[\w-]{24,}")


#: a segment no rule can change: no digit (numbers, hex, tokens), '@' or '%' (e-mail), ';'
#: (path parameters), shorter than a UUID
_PLAIN = re.compile(r"[A-Za-z._~+-]{0,35}")


def _segment(seg: str) -> str:
    return seg if _PLAIN.fullmatch(seg) else _templated(seg)


def _templated(seg: str) -> str:
    seg = seg.split(";", 1)[0]
    seg = _EMAIL.sub("{email}", _UUID.sub("{uuid}", seg))
    stem, dot, ext = seg.rpartition(".")
    if not dot or not ext.isalnum() or len(ext) > 5:
        stem, dot, ext = seg, "", ""
    for rx, name in ((_NUMBER, "{id}"), (_HEX, "{hex}"), (_TOKEN, "{token}")):
        if rx.fullmatch(stem):
            return name + dot + ext
    return seg


def template_path(url: str) -> str:
    """``url`` with its identifier-like segments (and query values) as placeholders (a URL cut
    at ``MAX_URL_CHARS`` keeps its ``{long}`` mark)."""
    if url.endswith(LONG) and len(url) > MAX_URL_CHARS:
        return template_path(url[:-len(LONG)]) + LONG
    if url == TUNNEL:
        return url
    path, q, query = url.replace("{", "%7B").replace("}", "%7D").partition("?")
    path = "/".join(_segment(s) for s in path.split("/"))
    if q:
        pairs = (p.partition("=") for p in query.split("&"))
        query = "&".join(k + eq + (_segment(v) if eq else "") for k, eq, v in pairs)
    return path + q + query


def referer_path(ref: str) -> str:
    """The path of a referer URL (``http://host/a/b?q`` → ``/a/b?q``); other text unchanged."""
    if "://" not in ref:
        return ref
    rest = ref.split("://", 1)[1]
    return "/" + rest.split("/", 1)[1] if "/" in rest else "/"


def referer_origin(ref: str) -> str:
    """The scheme and host of a referer URL (``http://host/a/b?q`` → ``http://host``, lower
    case); ``""`` for other text (a path, ``-``)."""
    if "://" not in ref:
        return ""
    scheme, rest = ref.split("://", 1)
    return (scheme + "://" + rest.split("/", 1)[0]).lower()


def template_requests(req: Requests) -> tuple[Requests, np.ndarray]:
    """``req`` with templated URLs (referers reduced to templated paths, so that they still
    name the templated pages), and the new URL code of each logged URL of ``req.urls``."""
    names, (code,) = sorted_table([[template_path(u) for u in req.urls]])
    code = code.astype(np.int32)
    referers = [template_path(p) if p.startswith("/") else p
                 for p in map(referer_path, req.referers)]
    out = replace(req, url=code[req.url] if len(req) else req.url, urls=names,
                  referers=referers)
    return out, code
