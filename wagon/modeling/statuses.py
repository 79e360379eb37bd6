"""How the logged server answered each modeled URL: the share of its requests answered with each
status other than 200 and 304 (redirects, client and server errors), for the model's
``site.statuses`` (docs/formats.md), so that a synthesized request can be answered as it was."""
from __future__ import annotations

import numpy as np

from ..formats.site import STATUS_CODES
from ..logs.sessions import Site

__all__ = ["logged_answers", "status_shares", "move_statuses", "MIN_MOVES"]

#: moves out of a form seen at least this often to keep how the form was answered on them
MIN_MOVES = 5


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
    rows, out = site.statuses, {}
    answers = logged_answers(rows[:, 1])             # once for all rows, not once a URL
    for lo, hi in _groups(rows, 1):
        url = site.urls[int(rows[lo, 0])]
        if answers[lo:hi].any() and url in urls:
            out[url] = _shares(answers[lo:hi], rows[lo:hi, 2])
    return dict(sorted(out.items()))


def _groups(rows: np.ndarray, width: int) -> list[tuple[int, int]]:
    """(start, end) of each run of rows with the same first ``width`` columns (rows sorted by
    them, as tallies are)."""
    if not len(rows):
        return []
    keys = rows[:, :width]
    start = np.flatnonzero(np.r_[True, np.any(keys[1:] != keys[:-1], axis=1)])
    return list(zip(start.tolist(), np.r_[start[1:], len(rows)].tolist()))


def _shares(answers: np.ndarray, n: np.ndarray) -> dict[str, float]:
    """Answer (``logged_answers``' other than content, 0) → share of ``n`` (rows of one key),
    sorted."""
    total = float(n.sum())
    out: dict[str, float] = {}
    for a, k in zip(answers.tolist(), n.tolist()):
        if a:
            out[str(a)] = out.get(str(a), 0.0) + k / total
    return {a: round(s, 6) for a, s in sorted(out.items())}


def move_statuses(site: Site, page_index: dict[int, int]) -> list[dict]:
    """The model's ``site.move_statuses``: for each move out of a form between kept pages
    (``to``: the next click's page index; None: the session ended there) seen at least
    ``MIN_MOVES`` times, how the form was answered then — the shares of its answers other
    than content, as ``site.statuses`` has them for all its requests (a login that failed is
    answered 200 and tried again; one that succeeded, 303 and the user goes on)."""
    out = []
    for rows, width in ((site.form_moves, 2), (site.form_exits, 1)):
        for lo, hi in _groups(rows, width):
            a, b = int(rows[lo, 0]), int(rows[lo, 1]) if width == 2 else None
            n = rows[lo:hi, -1]
            if n.sum() < MIN_MOVES or a not in page_index or (b is not None
                                                             and b not in page_index):
                continue
            out.append({"from": page_index[a], "to": None if b is None else page_index[b],
                        "moves": int(n.sum()),
                        "statuses": _shares(logged_answers(rows[lo:hi, width]), n)})
    return sorted(out, key=lambda r: (r["from"], r["to"] is None, r["to"] or 0))
