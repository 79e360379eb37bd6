"""``wagon report LOG``'s first panel, as GoAccess opens with it: totals, visitors per day (and
per hour for a log of at most two days), the most requested URLs, status codes, referrers,
browsers, then what the parse left aside: robots and malformed lines, with counts and top agents.

Everything is counted with NumPy over the parsed log's columns (``parse_logs``), in one pass per
table, and shown as sortable tables in readable units (``units``); times in the log's own UTC
offset (``wagon.logs.zone``). No SciPy, matplotlib or pandas: 10,000 lines take well under 2 s
(docs/benchmarks.md). A visitor is GoAccess's: one address with one User-Agent on one day.
"""
from __future__ import annotations

import html
import os
from dataclasses import dataclass
from http import HTTPStatus

import numpy as np

from ..logs.agents import FAMILIES, family_codes
from ..logs.parse import ParseStats, Requests, parse_logs
from ..logs.robots import robot_clients, robot_rules
from ..logs.sessions import OBJECT_EXTENSIONS, extension_flags, sessionize
from ..logs.zone import utc_offset
from . import units
from .htmlpage import howto, sortable

__all__ = ["LogView", "read_log", "log_sections"]

TOP = 20                    # rows of each "most requested" table
HOURLY_UP_TO_S = 2 * 86400  # a log of at most two days also gets a table per hour
SHOWN_LINES = 10            # malformed lines shown


@dataclass
class LogView:
    """A parsed log and what its panel needs besides: the UTC offset of its times (None: the
    layout writes none, shown as UTC), its sessions, its robots."""
    req: Requests
    stats: ParseStats
    offset: int | None
    sessions: int
    robot: np.ndarray              # per request: its client is a robot
    robot_rules: dict[str, int]    # clients caught by each rule


def read_log(paths: list[str], fmt: str = "auto") -> LogView:
    """The logs at ``paths`` parsed once (LogError: one line), with sessions and robots found
    by the rules ``wagon fit`` uses."""
    req, stats = parse_logs(paths, fmt)
    robots, caught = robot_clients(req.host, req.url, req.urls, req.agent, req.agents,
                                   robot_rules())
    sessions = sessionize(req).counts["sessions"]
    return LogView(req, stats, utc_offset(paths[0]), sessions, np.isin(req.host, robots), caught)


def _zone(offset: int | None) -> str:
    """``UTC−04:00`` (the log's offset), or ``UTC``."""
    if not offset:
        return "UTC"
    sign = "+" if offset > 0 else "−"
    return f"UTC{sign}{abs(offset) // 3600:02d}:{abs(offset) % 3600 // 60:02d}"


def local_times(view: LogView, unit: str) -> np.ndarray:
    """Each request's time in the log's offset, cut to ``unit`` ('D' days, 'h' hours, 's')."""
    local = np.floor(view.req.time + (view.offset or 0)).astype(np.int64)
    return local.astype("datetime64[s]").astype(f"datetime64[{unit}]")


def _visitor(view: LogView) -> np.ndarray:
    """Per request, its visitor's code: (day, address, User-Agent) numbered."""
    day = local_times(view, "D").astype(np.int64)
    r = view.req
    key = np.stack([day - day.min(), r.host.astype(np.int64), r.agent.astype(np.int64)])
    return np.unique(key, axis=1, return_inverse=True)[1].ravel()


def _per_group(group: np.ndarray, groups: int, visitor: np.ndarray, size: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Requests, distinct visitors and bytes of each of ``groups`` groups (codes ``group``)."""
    n = np.bincount(group, minlength=groups)
    pairs = np.unique(group.astype(np.int64) * (int(visitor.max(initial=0)) + 1) + visitor)
    seen = np.bincount(pairs // (int(visitor.max(initial=0)) + 1), minlength=groups)
    return n, seen, np.bincount(group, weights=size, minlength=groups)


def _rows(labels, n, seen, sent, order, total) -> list[list]:
    """Table rows: label, requests, share, visitors, bytes (readable, sorted by value)."""
    return [[labels[g], (units.count(n[g]), int(n[g])), (units.share(n[g], total), float(n[g])),
             (units.count(seen[g]), int(seen[g])), (units.size(sent[g]), int(sent[g]))]
            for g in order if n[g]]


def _keyed(rows: list[list], keys: np.ndarray) -> list[list]:
    """``rows`` (one per key, every group present) with their first cell sorted by its key (a
    date or a status code in numeric order, not as text)."""
    for row, k in zip(rows, keys):
        row[0] = (row[0], int(k))
    return rows


_HEAD = ["requests", "share", "visitors", "bytes"]


def _totals(view: LogView, visitor: np.ndarray) -> str:
    r, s = view.req, view.stats
    first, last = (str(local_times(view, "s")[i]).replace("T", " ")
                   for i in (r.time.argmin(), r.time.argmax()))
    span = float(r.time.max() - r.time.min())
    named = np.array([x not in ("", "-") for x in r.referers] + [False])
    rows = [
        ("first request", first), ("last request", last), ("times in", _zone(view.offset)),
        ("span", (units.duration(span), span)),
        ("requests", (units.count(len(r)), len(r))),
        ("requests per second", (f"{len(r) / span:.3g}" if span else "", len(r) / (span or 1))),
        ("unique visitors (address, agent, day)", (units.count(visitor.max() + 1),
                                                   int(visitor.max() + 1))),
        ("clients (addresses)", (units.count(len(np.unique(r.host))), len(np.unique(r.host)))),
        ("sessions (wagon fit's rules, robots left out)",
         (units.count(view.sessions), view.sessions)),
        ("unique URLs", (units.count(len(np.unique(r.url))), len(np.unique(r.url)))),
        ("unique referrers", (units.count(int(named[:-1].sum())), int(named[:-1].sum()))),
        ("not found (404)", (units.count(int((r.status == 404).sum())), int((r.status == 404).sum()))),
        ("bytes sent", (units.size(int(r.size.sum())), int(r.size.sum()))),
        ("robot requests", (units.count(int(view.robot.sum())), int(view.robot.sum()))),
        ("lines read", (units.count(s.lines), s.lines)),
        ("malformed lines", (units.count(s.malformed_total), s.malformed_total)),
        ("lines left out (time outliers, repeated across files)",
         (units.count(s.time_outliers + s.duplicates), s.time_outliers + s.duplicates)),
    ] + [(f"{os.path.basename(path)}: stamps", (shuffle.describe(), shuffle.share))
         for path, shuffle in s.shuffled.items()]
    return ("<section><h3>Totals</h3>" + sortable(["figure", "value"], [list(x) for x in rows],
                                                   "totals")
            + howto("the log at a glance; times are the log's own (its UTC offset), a visitor "
                    "is one address with one browser on one day, as GoAccess counts them.")
            + "</section>")


def _over_time(view: LogView, visitor: np.ndarray) -> str:
    """Requests, visitors and bytes per day, and per hour for a short log."""
    out = []
    span = float(view.req.time.max() - view.req.time.min())
    for unit, what, ident in (("D", "day", "per-day"), ("h", "hour", "per-hour")):
        if unit == "h" and span > HOURLY_UP_TO_S:
            continue
        t = local_times(view, unit)
        when, group = np.unique(t, return_inverse=True)
        n, seen, sent = _per_group(group.ravel(), len(when), visitor, view.req.size)
        labels = [str(w).replace("T", " ") + (":00" if unit == "h" else "") for w in when]
        rows = _keyed(_rows(labels, n, seen, sent, range(len(when)), len(view.req)),
                      when.astype(np.int64))
        out.append(f"<section><h3>Visitors per {what}</h3>"
                   + sortable([what] + _HEAD, rows, ident) + "</section>")
    return "".join(out)


def _urls(view: LogView, visitor: np.ndarray) -> str:
    r = view.req
    n, seen, sent = _per_group(r.url, len(r.urls), visitor, r.size)
    order = np.argsort(-n, kind="stable")[:TOP]
    obj = extension_flags(r.urls, OBJECT_EXTENSIONS)
    rows = _rows(r.urls, n, seen, sent, order, len(r))
    for row, u in zip(rows, order):
        row.insert(1, "object" if obj[u] else "page")
    missing = r.status == 404
    m, mseen, msent = _per_group(r.url[missing], len(r.urls), visitor[missing], r.size[missing])
    worst = np.argsort(-m, kind="stable")[:TOP]
    not_found = (sortable(["URL"] + _HEAD, _rows(r.urls, m, mseen, msent, worst,
                                                 int(missing.sum())), "not-found")
                 if missing.any() else "<p class='note'>No request was answered 404.</p>")
    return ("<section class='wide'><h3>Requested URLs</h3>"
            + sortable(["URL", "kind"] + _HEAD, rows, "top-urls")
            + "</section><section class='wide'><h3>Not found URLs (404)</h3>" + not_found
            + "</section>")


def _statuses(view: LogView, visitor: np.ndarray) -> str:
    r = view.req
    codes, group = np.unique(r.status, return_inverse=True)
    n, seen, sent = _per_group(group.ravel(), len(codes), visitor, r.size)
    labels = [f"{c} {_phrase(int(c))}".rstrip() for c in codes]
    rows = _keyed(_rows(labels, n, seen, sent, range(len(codes)), len(r)), codes)
    return ("<section><h3>Status codes</h3>" + sortable(["status"] + _HEAD, rows, "statuses")
            + "</section>")


def _phrase(code: int) -> str:
    try:
        return HTTPStatus(code).phrase
    except ValueError:
        return ""


def _referrers(view: LogView, visitor: np.ndarray) -> str:
    r = view.req
    named = np.array([x not in ("", "-") for x in r.referers] + [False])
    has = named[r.referer]                          # -1 (no field) reads the last: False
    if not has.any():
        return "<section><h3>Referrers</h3><p class='note'>No request sent a Referer.</p></section>"
    n, seen, sent = _per_group(r.referer[has], len(r.referers), visitor[has], r.size[has])
    order = np.argsort(-n, kind="stable")[:TOP]
    return ("<section class='wide'><h3>Referrers</h3>"
            + sortable(["referrer"] + _HEAD, _rows(r.referers, n, seen, sent, order,
                                                   int(has.sum())), "referrers")
            + "</section>")


def _browsers(view: LogView, visitor: np.ndarray) -> str:
    r = view.req
    family = family_codes(r.agents)[r.agent]       # -1 (no agent) reads the last: other
    n, seen, sent = _per_group(family, len(FAMILIES), visitor, r.size)
    order = np.argsort(-n, kind="stable")
    return ("<section><h3>Browsers</h3>"
            + sortable(["browser family"] + _HEAD, _rows(list(FAMILIES), n, seen, sent, order,
                                                         len(r)), "browsers")
            + "</section>")


def _robots(view: LogView, visitor: np.ndarray) -> str:
    r = view.req
    if not view.robot.any():
        return ("<section><h3>Robots</h3><p class='note'>No robot found (robots.txt, "
                "crawler agents).</p></section>")
    agent = np.where(r.agent >= 0, r.agent, len(r.agents))[view.robot]
    names = list(r.agents) + ["(no agent)"]
    n, seen, sent = _per_group(agent, len(names), visitor[view.robot], r.size[view.robot])
    order = np.argsort(-n, kind="stable")[:TOP]
    rules = [[rule, (units.count(k), k)] for rule, k in view.robot_rules.items()]
    return ("<section><h3>Robots</h3>"
            + sortable(["found by", "clients"], rules, "robot-rules")
            + sortable(["robot agent"] + _HEAD, _rows(names, n, seen, sent, order,
                                                      int(view.robot.sum())), "robots")
            + howto("clients that fetched /robots.txt or whose agent is a crawler's; wagon fit "
                    "leaves their sessions out (--keep-robots keeps them).")
            + "</section>")


def _malformed(view: LogView) -> str:
    s = view.stats
    reasons = [[k, (units.count(v), v)] for k, v in s.malformed.most_common()]
    if not reasons and not s.left_out:
        return ("<section><h3>Malformed lines</h3><p class='note'>None: every line was read."
                "</p></section>")
    lines = [[f"{name}:{line}", why, text[:200]] for name, line, why, text in
             (s.examples + s.left_out)[:SHOWN_LINES]]
    return ("<section><h3>Malformed lines</h3>"
            + sortable(["reason", "lines"], reasons, "malformed")
            + sortable(["line", "reason", "text"], lines, "malformed-lines")
            + f"<p class='note'>{len(lines)} shown of {units.count(s.malformed_total)} malformed "
              f"and {units.count(len(s.left_out))} left out.</p></section>")


def log_sections(view: LogView) -> list[str]:
    """The panel of the log ``view``: every table in a grid that fills the page's width."""
    if not len(view.req):
        return ["<p class='note'>The log holds no request.</p>"]
    visitor = _visitor(view)
    names = ", ".join(html.escape(i) for i in view.stats.inputs)
    return [f"<h2>Traffic: {names}</h2>",
            "<div class='panels'>", _totals(view, visitor), _over_time(view, visitor),
            _statuses(view, visitor), _browsers(view, visitor), _urls(view, visitor),
            _referrers(view, visitor), _robots(view, visitor), _malformed(view), "</div>",
            howto("click a column's header to sort the table by it (again: the other way); "
                  "shares are of the table's requests.")]
