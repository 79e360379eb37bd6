"""Where the forms' redirects sent the browser, for the model's ``site.redirects``
(docs/formats.md): the sessions leave a form's follow-up out of the clicks (against an
application the replay follows the real Location), so the model keeps it here, for the exports,
a replay against a built site and the statistics of a scenario to count it as the log did."""
from __future__ import annotations

import numpy as np

from ..logs.sessions import Site
from ..logs.templates import split_key

__all__ = ["follow_targets", "redirect_lines", "redirects_json"]


def follow_targets(site: Site, forms: set[int]) -> set[str]:
    """The URL keys the redirects of ``forms`` (URL codes of the model's pages) sent the
    browser to: their placeholders need laws, as a page's do."""
    rows = site.follows
    return {site.urls[u] for u in rows[np.isin(rows[:, 0], list(forms)), 1].tolist()}


def _median_delay(site: Site, form: int) -> float:
    """The upper median delay (s) between ``form`` and its follow-ups."""
    rows = site.follow_delays[site.follow_delays[:, 0] == form]
    cum = np.cumsum(rows[:, 2])
    return float(rows[np.searchsorted(cum, cum[-1] // 2, side="right"), 1]) / 1e6


def _target(site: Site, rows: np.ndarray, total: int, laws: dict[str, dict]) -> dict:
    """One follow-up target of a form from its (form, to, status, size, n) rows: its URL (and
    method when not GET), share of the form's follow-ups, most frequent status, upper median
    size, placeholders' laws."""
    method, url = split_key(site.urls[int(rows[0, 1])])
    statuses = {}
    for s, n in zip(rows[:, 2].tolist(), rows[:, 4].tolist()):
        statuses[s] = statuses.get(s, 0) + n
    by_size = rows[np.argsort(rows[:, 3], kind="stable")]
    cum = np.cumsum(by_size[:, 4])
    size = int(by_size[np.searchsorted(cum, cum[-1] // 2, side="right"), 3])
    key = site.urls[int(rows[0, 1])]
    return ({"url": url} | ({"method": method} if method != "GET" else {})
            | {"share": round(int(cum[-1]) / total, 6), "requests": int(cum[-1]),
               "status": max(statuses, key=lambda s: (statuses[s], -s)), "size": size}
            | ({"params": laws[key]} if key in laws else {}))


def redirects_json(site: Site, forms: dict[int, str], laws: dict[str, dict]) -> list[dict]:
    """``site.redirects``: per form of ``forms`` (URL code → its ``status_key``) whose
    redirects the log shows followed, the median delay of its follow-ups and their targets,
    the most frequent first; sorted by form."""
    rows = site.follows
    out = []
    for form, key in sorted(forms.items(), key=lambda f: f[1]):
        mine = rows[rows[:, 0] == form]
        if not len(mine):
            continue
        total = int(mine[:, 4].sum())
        targets = [_target(site, mine[mine[:, 1] == to], total, laws)
                   for to in np.unique(mine[:, 1]).tolist()]
        targets.sort(key=lambda t: (-t["requests"], t["url"]))
        out.append({"from": key, "requests": total, "delay": _median_delay(site, form),
                    "to": targets})
    return out


#: forms the fit's summary names (the others counted)
SHOWN_FORMS = 6


def redirect_lines(site: dict) -> list[str]:
    """What the summary says of ``site.redirects``: per form, its followed redirects and
    where they went (the most frequent targets first)."""
    rows = site.get("redirects", [])
    if not rows:
        return []
    out = [f"redirects followed {sum(r['requests'] for r in rows):,} (not clicks: the "
           "follow-ups of forms; exports write them, replays follow the server's)"]
    for r in rows[:SHOWN_FORMS]:
        to = ", ".join(f"{t['url']} {100 * t['share']:.1f} %" for t in r["to"][:3])
        more = f", {len(r['to']) - 3} more" if len(r["to"]) > 3 else ""
        out.append(f"  {r['from']} → {to}{more} ({r['requests']:,}; median delay "
                   f"{r['delay']:.3g} s)")
    if len(rows) > SHOWN_FORMS:
        out.append(f"  and {len(rows) - SHOWN_FORMS} more forms")
    return out
