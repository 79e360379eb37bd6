"""The URL space of a log as the model records it (``url_space``, docs/formats.md): how many
URLs its clicks and embedded requests referenced and how many of them once (one-timers), the
popularity of pages and of objects by rank (a Zipf line), how size goes with popularity
(Spearman's ρ), how new pages appear as clicks go on (Heaps' law) and the temporal locality of
the clicks (lognormal LRU stack distances), each with its goodness of fit. ProWGen (Busari &
Williamson 2002) and SURGE (Barford & Crovella 1998) model a workload's URLs by these.

References are counted as the model's site holds them: a page's by its clicks, an object's by
the clicks whose view fetched it (every click of its page when the log gave no views); a page
also fetched within clicks (a view may hold a page) is a page with both.
"""
from __future__ import annotations

import math

import numpy as np
from scipy import stats

from ..logs.locality import stack_distances
from ..logs.sessions import Sessions, Site

__all__ = ["url_space", "references", "url_space_lines", "LOCALITY_LIMIT"]

LOCALITY_LIMIT = 200_000       # the earliest clicks whose stack distances are fitted
GROWTH_POINTS = 64             # log-spaced click counts the growth law is fitted on


def references(site: Site) -> tuple[dict[int, int], dict[int, int]]:
    """References per page (its clicks, and the clicks that fetched it within theirs) and per
    object (a URL never clicked: the clicks that fetched it), so that each URL is counted once
    with all its references, as ``wagon compare`` counts a log's."""
    objects: dict[int, int] = {}
    for page, hits in site.page_hits.items():
        views = site.page_views.get(page)
        fetched = ([(v.objects, v.first + v.repeat) for v in views] if views
                   else [(site.page_objects.get(page, []), hits)])
        for urls, clicks in fetched:
            for o in urls:
                objects[o] = objects.get(o, 0) + clicks
    pages = dict(site.page_hits)
    for o in set(objects) & set(pages):
        pages[o] += objects.pop(o)
    return pages, objects


def _zipf(refs: np.ndarray) -> dict | None:
    """Least-squares line of log₁₀ references on log₁₀ rank: α (minus its slope), its
    standard error and R² (how straight the rank–frequency plot is)."""
    if len(refs) < 5 or np.ptp(refs) == 0:
        return None
    y = np.log10(np.sort(refs)[::-1].astype(float))
    fit = stats.linregress(np.log10(np.arange(1, len(y) + 1)), y)
    return {"alpha": -fit.slope, "se": fit.stderr, "r2": fit.rvalue ** 2, "ranks": len(y)}


def _size_rank(sizes: np.ndarray, refs: np.ndarray) -> dict | None:
    """Spearman's ρ of size and references, with its 95 % interval (Fisher's z with the
    standard error 1.06/√(n − 3) of Fieller, Hartley & Pearson 1957)."""
    if len(sizes) < 10 or np.ptp(sizes) == 0 or np.ptp(refs) == 0:
        return None
    rho = float(stats.spearmanr(sizes, refs).statistic)
    z, h = math.atanh(max(min(rho, 0.999999), -0.999999)), 1.96 * 1.06 / math.sqrt(len(sizes) - 3)
    return {"spearman": rho, "ci": [math.tanh(z - h), math.tanh(z + h)], "n": len(sizes)}


def _kind(refs: dict[int, int], size: dict[int, int]) -> dict:
    """One kind of URL (pages or objects): counts, one-timers, popularity, size and rank."""
    codes = np.fromiter(refs, np.int64, len(refs))
    r = np.fromiter(refs.values(), np.int64, len(refs))
    s = np.array([size.get(int(c)) or 0 for c in codes], np.int64)
    once, sized = r == 1, s > 0
    return {"urls": len(r), "references": int(r.sum()), "once": int(once.sum()),
            "zipf": _zipf(r), "size_rank": _size_rank(s[sized], r[sized]),
            "median_size": {"once": _median(s[sized & once]), "others": _median(s[sized & ~once])}}


def _median(x: np.ndarray) -> float | None:
    return float(np.median(x)) if len(x) else None


def _growth(clicks: np.ndarray) -> dict | None:
    """Heaps' law D(n) = K·n^β of the distinct pages D among the first n clicks, fitted by
    least squares on log D at GROWTH_POINTS log-spaced n from 10; R² and the largest relative gap
    between the law and the log's D say how well."""
    if len(clicks) < 20:
        return None
    new = np.zeros(len(clicks), bool)
    new[np.unique(clicks, return_index=True)[1]] = True
    distinct = np.cumsum(new)
    n = np.unique(np.geomspace(10, len(clicks), GROWTH_POINTS).astype(np.int64))
    if len(n) < 3 or np.ptp(distinct[n - 1]) == 0:
        return None
    fit = stats.linregress(np.log(n), np.log(distinct[n - 1]))
    law = np.exp(fit.intercept) * n ** fit.slope
    return {"law": "heaps", "K": math.exp(fit.intercept), "beta": fit.slope,
            "r2": fit.rvalue ** 2, "max_relative_error": float(np.max(np.abs(
                law / distinct[n - 1] - 1))), "clicks": len(clicks)}


def _locality(clicks: np.ndarray) -> dict | None:
    """Lognormal law of 1 + the LRU stack distance of re-referenced pages (the earliest
    LOCALITY_LIMIT clicks): μ, σ with their standard errors, and the Kolmogorov–Smirnov
    distance between the law and the distances."""
    d = np.log1p(stack_distances(clicks, LOCALITY_LIMIT))
    if len(d) < 9 or np.ptp(d) == 0:
        return None
    mu, sigma = stats.norm.fit(d)
    return {"law": "lognormal", "mu": mu, "sigma": sigma,
            "se": {"mu": sigma / math.sqrt(len(d)), "sigma": sigma / math.sqrt(2 * len(d))},
            "ks": float(stats.kstest(d, stats.norm(mu, sigma).cdf).statistic), "n": len(d)}


def url_space(sessions: Sessions) -> dict:
    """The model's ``url_space`` (module docstring) of ``sessions``."""
    site = sessions.site
    assert site is not None
    pages, objects = references(site)
    # in time order, ties by URL: the same stream however the clients were partitioned
    clicks = sessions.click_url[np.lexsort((sessions.click_url, sessions.click_time))]
    out = {"pages": _kind(pages, site.page_size), "objects": _kind(objects, site.object_size),
           "growth": _growth(clicks), "locality": _locality(clicks)}
    out["urls"] = out["pages"]["urls"] + out["objects"]["urls"]
    out["references"] = out["pages"]["references"] + out["objects"]["references"]
    return out


def _share(part: int, whole: int) -> str:
    return f"{part:,} of {whole:,} ({100 * part / whole:.1f} %)" if whole else "0"


def url_space_lines(u: dict) -> list[str]:
    """What ``wagon fit`` prints of a model's ``url_space``."""
    out = [f"URL space: {u['urls']:,} URLs for {u['references']:,} references "
           f"({u['urls'] / max(u['references'], 1):.3f} a reference)"]
    for kind in ("pages", "objects"):
        k = u[kind]
        line = (f"  {kind:8s} {k['urls']:>7,} referenced {k['references']:,} times; once: "
                f"{_share(k['once'], k['urls'])}")
        if k["zipf"]:
            z = k["zipf"]
            line += f"; Zipf α {z['alpha']:.3f} ± {z['se']:.3f} (R² {z['r2']:.3f})"
        if k["size_rank"]:
            s = k["size_rank"]
            line += (f"; size–popularity ρ {s['spearman']:+.3f} "
                     f"[{s['ci'][0]:+.3f}, {s['ci'][1]:+.3f}]")
        m = k["median_size"]
        if m["once"] is not None and m["others"] is not None:
            line += f"; median size once {m['once']:,.0f} B, others {m['others']:,.0f} B"
        out.append(line)
    if u["growth"]:
        g = u["growth"]
        out.append(f"  new pages: Heaps D(n) = {g['K']:.3g}·n^{g['beta']:.3f} over "
                   f"{g['clicks']:,} clicks (R² {g['r2']:.4f}, largest gap "
                   f"{100 * g['max_relative_error']:.1f} %)")
    if u["locality"]:
        loc = u["locality"]
        out.append(f"  locality: 1 + LRU stack distance of clicks lognormal μ {loc['mu']:.3f} "
                   f"± {loc['se']['mu']:.3f}, σ {loc['sigma']:.3f} ± {loc['se']['sigma']:.3f} "
                   f"(KS D {loc['ks']:.3f}, {loc['n']:,} re-references)")
    return out
