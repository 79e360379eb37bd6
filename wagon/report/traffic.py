"""What a log's report opens with, as GoAccess opens with it: requests and sessions over time,
totals, status codes, the most requested pages and objects, referrers and browsers."""
from __future__ import annotations

import numpy as np

from ..analysis.selfsim import counts_per_bin
from ..analysis.workload import Workload
from .common import fig, howto, png, table
from .replay import plot_width

__all__ = ["traffic_sections"]

TOP = 15                   # rows of each "most requested" table


def _over_time(w: Workload) -> str:
    """Requests and session starts per second, in bins of a readable width."""
    t0 = float(w.time.min())
    width = plot_width(float(w.time.max()) - t0)
    req = counts_per_bin(w.time - t0, width) / width
    ses = counts_per_bin(np.asarray(w.starts, float) - t0, width)[: len(req)] / width
    f, ax = fig(1, 9, 3.2)
    mid = (np.arange(len(req)) + 0.5) * width
    ax[0, 0].plot(mid, req, lw=1, color="black", label="requests/s")
    ax[0, 0].set(xlabel="time from the first request (s)", ylabel="requests per second",
                 title=f"requests and sessions ({width:g} s bins)")
    twin = ax[0, 0].twinx()
    twin.plot(mid[: len(ses)], ses, lw=1, color="tab:red", label="sessions started/s")
    twin.set_ylabel("sessions started per second", color="tab:red")
    return png(f) + howto("black: requests per second; red (right axis): sessions that start "
                          "per second, the arrival rate the model fits.")


def _top(w: Workload, pages: bool) -> str:
    """The most requested pages (or objects): requests, share, bytes."""
    mine = w.is_page == pages
    n = np.bincount(w.url[mine], minlength=len(w.urls))
    sent = np.bincount(w.url[mine], weights=w.size[mine], minlength=len(w.urls))
    order = np.argsort(-n, kind="stable")[:TOP]
    total = max(int(mine.sum()), 1)
    rows = [[w.urls[u], int(n[u]), f"{100 * n[u] / total:.1f} %", int(sent[u])]
            for u in order if n[u]]
    what = "pages" if pages else "objects"
    return (f"<h3>Most requested {what}</h3>"
            + table(["URL", "requests", f"share of {what}", "bytes"], rows, f"top-{what}"))


def _statuses(w: Workload) -> str:
    codes, n = np.unique(w.status, return_counts=True)
    return "<h3>Status codes</h3>" + table(
        ["status", "requests", "share"],
        [[int(c), int(k), f"{100 * k / len(w.status):.2f} %"] for c, k in zip(codes, n)],
        "statuses")


def _referrers(w: Workload) -> str:
    """The most frequent referrers (requests that sent none are not counted)."""
    if w.referer is None or not w.referers:
        return ""
    named = np.array([r not in ("", "-") for r in w.referers] + [False])
    codes = w.referer[named[w.referer]]
    if not len(codes):
        return "<p class='note'>No request sent a Referer.</p>"
    n = np.bincount(codes, minlength=len(w.referers))
    order = np.argsort(-n, kind="stable")[:TOP]
    return "<h3>Referrers</h3>" + table(
        ["referrer", "requests"], [[w.referers[r], int(n[r])] for r in order
                                   if n[r]], "referrers")


def _browsers(agents: dict[str, int]) -> str:
    total = sum(agents.values())
    if not total:
        return ""
    return "<h3>Browsers (sessions)</h3>" + table(
        ["browser family", "sessions", "share"],
        [[f, n, f"{100 * n / total:.1f} %"] for f, n in sorted(agents.items(),
                                                                key=lambda kv: -kv[1])],
        "browsers")


def traffic_sections(w: Workload, agents: dict[str, int] | None = None) -> list[str]:
    """The traffic of a log (``w``) and its sessions' browser families (``agents``)."""
    if not len(w.time):
        return ["<p class='note'>The log holds no request.</p>"]
    span = float(w.time.max() - w.time.min())
    totals = table(["requests", "sessions", "bytes sent", "span (s)", "requests/s",
                    "pages", "objects"],
                   [[len(w.time), len(w.starts), int(w.size.sum()), span,
                     len(w.time) / span if span > 0 else float("nan"), int(w.is_page.sum()),
                     int((~w.is_page).sum())]], "totals")
    return ["<h2>Traffic</h2>", totals, _over_time(w), _statuses(w), _top(w, True),
            _top(w, False), _referrers(w), _browsers(agents or {})]
