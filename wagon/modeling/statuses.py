"""How the logged server answered each modeled URL: the share of its requests answered with each
status other than 200 and 304 (redirects, client and server errors), for the model's
``site.statuses`` (docs/formats.md), so that a synthesized request can be answered as it was."""
from __future__ import annotations

import numpy as np

from ..formats.site import STATUS_CODES
from ..logs.sessions import Site

__all__ = ["logged_answers", "status_shares"]


def logged_answers(status: np.ndarray) -> np.ndarray:
    """The answer a built site gives for each logged status: the status itself when a site
    serves it (``STATUS_CODES``), else its class's usual one (3xx → 302, 4xx → 400, 5xx →
    500); 0 where the log shows content (1xx, 2xx — 206 included — and 304)."""
    status = np.asarray(status, np.int64)
    known = np.isin(status, STATUS_CODES)
    fold = np.select([status >= 500, status >= 400, status >= 300], [500, 400, 302], 0)
    out = np.where(known, status, fold)
    out[(status == 304) | (status >= 600)] = 0
    return out


def status_shares(site: Site, urls: set[str]) -> dict[str, dict[str, float]]:
    """For each URL of ``urls`` (the model's pages and objects) answered otherwise than with
    content at least once: answer → share of its requests, sorted by URL."""
    rows = site.statuses
    if not len(rows):
        return {}
    url, answer, n = rows[:, 0], logged_answers(rows[:, 1]), rows[:, 2]
    total = np.bincount(url, weights=n, minlength=len(site.urls))
    out: dict[str, dict[str, float]] = {}
    for u, a, k in zip(url.tolist(), answer.tolist(), n.tolist()):
        if a and site.urls[u] in urls:
            shares = out.setdefault(site.urls[u], {})
            shares[str(a)] = shares.get(str(a), 0.0) + k / total[u]
    return {u: {a: round(s, 6) for a, s in sorted(out[u].items())} for u in sorted(out)}
