"""Scenario exports for the tools people already use: httperf, Tsung, and a Common Log Format log.

- ``httperf``: a ``--wsesslog`` file. Sessions are separated by blank lines; a click is a
  non-indented line (its page) followed by its embedded objects indented (one burst), with
  ``think=`` on the page line: the pause after that burst before the next. httperf starts the
  sessions itself (``--rate``); the first comment line suggests the command.
- ``tsung``: a Tsung XML configuration: arrival phases follow the scenario's rate profile, each
  exported session is a Tsung session (chosen with equal probability), think times as
  ``thinktime`` elements.
- ``clf``: the requests as a server would have logged them at their offered times (transfer
  times unknown: the objects of a click after its page by the delays the log showed, at its
  second when the scenario has none; ``synth.timeline``), one host per session, a revalidated
  request answered 304 with no body, a form answered with a redirect followed by the
  browser's request of its target (``SiteSpec.page_redirects``: as logged, its status and
  size; the form's Referer).

A click asks for its page (with the page's method; a template page at the click's own URL,
``ScenarioSession.url``), the follow-up of a form the scenario marks answered with a redirect
(httperf and Tsung follow none themselves; every export and a replay draw the same target) and
the objects of its view (``SiteSpec.view``); Tsung asks for the
revalidated ones with ``if_modified_since`` (httperf's wsesslog cannot: plain requests); a
request the scenario marks with a status (``status``) is asked for as ``site.status_url``, which
a built site answers with it.
"""
from __future__ import annotations

import math
import time
from typing import TextIO
from urllib.parse import urlsplit
from xml.sax.saxutils import quoteattr

from ..formats.scenario import Scenario, ScenarioError, ScenarioSession
from ..formats.site import status_url
from .profiles import parse_profile
from .timeline import offered_requests

__all__ = ["export_httperf", "export_tsung", "export_clf", "clf_timestamp", "CLF_EPOCH",
           "TSUNG_MAX_SESSIONS"]

CLF_EPOCH = 996624000.0            # default time 0 of a CLF export: 2001-08-01 00:00:00 UTC
TSUNG_MAX_SESSIONS = 1000          # sessions a Tsung export keeps unless told otherwise

#: If-Modified-Since of a revalidated request: later than any file a site build writes
SINCE = "Fri, 01 Jan 2100 00:00:00 GMT"

MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


def clf_timestamp(epoch: float, offset_minutes: int = 0) -> str:
    """``01/Aug/1995:00:00:01 -0400`` for a UTC time shown in a zone (locale-independent)."""
    g = time.gmtime(int(epoch) + offset_minutes * 60)
    sign = "-" if offset_minutes < 0 else "+"
    hh, mm = divmod(abs(offset_minutes), 60)
    return (f"{g.tm_mday:02d}/{MONTHS[g.tm_mon - 1]}/{g.tm_year}:{g.tm_hour:02d}:{g.tm_min:02d}:"
            f"{g.tm_sec:02d} {sign}{hh:02d}{mm:02d}")


def _some(sc: Scenario, sessions: int) -> None:
    """ScenarioError for a scenario without sessions: httperf and Tsung have nothing to run
    (Tsung's session probabilities, 100 % shared among none, cannot be written)."""
    if not sessions:
        raise ScenarioError(f"{sc.path}: no session to export (the scenario holds none: a "
                            "longer --duration or more --sessions in wagon synth)")


def export_httperf(sc: Scenario, out: TextIO, target: str, max_sessions: int | None = None
                   ) -> int:
    """Write a wsesslog; returns the number of sessions written."""
    # the header's rate is in modeled seconds; the scenario's times are divided by its speedup,
    # so its sessions arrive ``speedup`` times faster
    rate = float(sc.header.get("options", {}).get("rate") or 1.0) * sc.speedup
    u = urlsplit(target)
    count = 0
    body = []
    for s in sc.sessions():
        if max_sessions is not None and count >= max_sessions:
            break
        for k in range(len(s.clicks)):
            nxt = s.clicks[k + 1][1] if k + 1 < len(s.clicks) else 0.0
            lines = [u + (f" method={m}" if m != "GET" else "") for u, _, m in
                     _click_urls(sc, s, k)]
            body.append(f"{lines[0]} think={nxt:.3f}\n" if nxt > 0 else f"{lines[0]}\n")
            body.extend(f"    {line}\n" for line in lines[1:])
        body.append("\n")
        count += 1
    _some(sc, count)
    out.write(f"# wagon scenario {sc.path}: {count} sessions. Suggested command:\n"
              f"# httperf --hog --server {u.hostname or '127.0.0.1'} --port {u.port or 80} "
              f"--wsesslog={count},0,FILE --rate={rate:.6g} --timeout=30\n")
    out.write("".join(body))
    return count


def _phases(sc: Scenario, horizon: float) -> list[tuple[float, float]]:
    """(duration, rate) arrival phases following the scenario's profile over ``horizon``."""
    opts = sc.header.get("options", {})
    speed = float(opts.get("speedup") or 1.0)
    rate = float(opts.get("rate") or 1.0) * speed
    prof = parse_profile(opts.get("profile") or "constant")
    edges, mult = list(prof.edges), list(prof.mult)
    if prof.period:
        reps = min(int(math.ceil(horizon * speed / prof.period)), 1000)
        edges = [e + r * prof.period for r in range(reps) for e in prof.edges]
        mult = mult * reps
    bounds = [e / speed for e in edges if e / speed < horizon] + [horizon]
    return [(b - a, rate * m) for a, b, m in zip(bounds[:-1], bounds[1:], mult) if b > a]


def export_tsung(sc: Scenario, out: TextIO, target: str,
                 max_sessions: int | None = TSUNG_MAX_SESSIONS) -> int:
    """Write a Tsung configuration; returns the number of sessions written."""
    u = urlsplit(target)
    sessions = []
    last_start = 0.0
    for s in sc.sessions():
        last_start = s.start
        if max_sessions is None or len(sessions) < max_sessions:
            sessions.append(s)
    n = len(sessions)
    _some(sc, n)
    opts = sc.header.get("options", {})
    horizon = float(opts.get("duration") or 0) / float(opts.get("speedup") or 1.0) \
        or max(last_start, 1.0)
    # probabilities in thousandths of a percent that add up to exactly 100
    share = [100_000 // n] * n
    share[0] += 100_000 - sum(share)
    w = out.write
    w('<?xml version="1.0"?>\n<!DOCTYPE tsung SYSTEM "/usr/share/tsung/tsung-1.0.dtd">\n')
    w('<tsung loglevel="notice" version="1.0">\n')
    w('  <clients>\n    <client host="localhost" use_controller_vm="true" maxusers="30000"/>\n'
      '  </clients>\n')
    w(f'  <servers>\n    <server host={quoteattr(u.hostname or "127.0.0.1")} '
      f'port="{u.port or 80}" type="tcp"/>\n  </servers>\n  <load>\n')
    for k, (dur, rate) in enumerate(_phases(sc, horizon), start=1):
        inter = 1.0 / rate if rate > 0 else 1e9
        w(f'    <arrivalphase phase="{k}" duration="{max(round(dur * 1000), 1)}" '
          f'unit="millisecond">\n'
          f'      <users interarrival="{inter:.6g}" unit="second"/>\n    </arrivalphase>\n')
    w('  </load>\n  <sessions>\n')
    for s, p in zip(sessions, share):
        w(f'    <session name="s{s.id}" probability="{p / 1000:.3f}" type="ts_http">\n')
        for k, (_, think) in enumerate(s.clicks):
            if k and think > 0:
                w(f'      <thinktime value="{think:.3f}" random="false"/>\n')
            for url, again, method in _click_urls(sc, s, k):
                since = f' if_modified_since="{SINCE}"' if again else ""
                w(f'      <request><http url={quoteattr(url)} method="{method}" version="1.1"'
                  f'{since}/></request>\n')
        w('    </session>\n')
    w('  </sessions>\n</tsung>\n')
    return n


def _click_urls(sc: Scenario, s: ScenarioSession, k: int) -> list[tuple[str, bool, str]]:
    """What click ``k`` of ``s`` asks for: its page (unless shown from a cache), a form's
    redirect's follow-up (``SiteSpec.page_redirects``, its target as ``export_clf`` and a
    replay draw it), then its view's objects, each URL marked for the status the scenario
    gives it (``site.status_url``), whether it revalidates, and its method."""
    page, site = s.clicks[k][0], sc.site
    view, marks = site.view(page, s.view(k)), s.marks(k)
    asked = [(s.url(k, site), view.page_revalidated, site.page_methods[page])] + [
        (site.object_urls[o], i in view.revalidated, site.object_methods[o])
        for i, o in enumerate(view.objects)]
    out = [(status_url(u, marks[i]) if i in marks else u, again, method)
           for i, (u, again, method) in enumerate(asked) if i or not view.page_absent]
    r = None if view.page_absent else site.redirect_of(page, marks.get(0))
    if r is not None:
        j = r.target((sc.stream_seed, s.id, k))      # the follow-up, right after its form
        out.insert(1, (r.asked(j), False, r.methods[j]))
    return out


def export_clf(sc: Scenario, out: TextIO, start_epoch: float = CLF_EPOCH,
               combined: str | None = None) -> int:
    """Write a Common Log Format log starting at ``start_epoch``; ``combined``: a server's
    base URL, and the NCSA combined layout, each line with the Referer a browser sends (an
    object its page, a followed link the page it left: on that server) and the session's
    User-Agent. Returns the lines written."""
    stamps: dict[int, str] = {}
    lines = 0
    base = f"{urlsplit(combined).scheme}://{urlsplit(combined).netloc}" if combined else ""
    agents = [_quoted(a["user_agent"]) for a in sc.agents] + ["-"]        # -1: none
    for req in offered_requests(sc):
        urls = [own or (sc.site.page_urls[u] if p else sc.site.object_urls[u])
                for u, p, own in zip(req.url.tolist(), req.is_page.tolist(), req.own.tolist())]
        methods = [m or (sc.site.page_methods[u] if p else sc.site.object_methods[u])
                   for u, p, m in zip(req.url.tolist(), req.is_page.tolist(), req.method.tolist())]
        tails = ([f' "{_quoted(base + r) if r else "-"}" "{agents[a]}"'
                  for r, a in zip(req.referer.tolist(), req.agent.tolist())] if combined
                 else [""] * len(req))
        rows = []
        for t, sid, c, url, method, size, code, tail in zip(
                req.time.tolist(), req.session.tolist(), req.cls.tolist(), urls, methods,
                req.size.tolist(), req.status.tolist(), tails):
            sec = int(start_epoch + t)
            stamp = stamps.get(sec)
            if stamp is None:
                if len(stamps) > 100_000:
                    stamps.clear()
                stamp = stamps[sec] = clf_timestamp(sec)
            rows.append(f's{sid}.c{c}.synthetic - - [{stamp}] "{method} {url} HTTP/1.0" {code} '
                        f'{size}{tail}\n')
        out.write("".join(rows))
        lines += len(rows)
    return lines


def _quoted(text: str) -> str:
    """``text`` inside a log's double quotes, as Apache escapes it (a quote, a backslash)."""
    return text.replace("\\", "\\\\").replace('"', '\\"')

