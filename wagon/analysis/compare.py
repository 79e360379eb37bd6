"""``wagon compare``: does workload B reproduce workload A, on what WAGON validated?

Rows: session arrival rate; inter-arrival, clicks and think-time laws (two-sample k-sample
Anderson–Darling, scipy); page popularity (Zipf slope of the rank–frequency plot, log–log fit on
the 100 most requested URLs); temporal locality (LRU stack distances, lognormal fit of their
log); autocorrelation of requests per second at lag 1; the wavelet Hurst estimate of requests
per second; and Arlitt & Williamson's invariants (success rate, HTML + image share of requests,
mean transfer size, distinct URLs per request, one-time references, concentration of references
on the top 10 % of URLs).

Verdict per row: distributions are ``same`` when the two-sample test's p ≥ alpha (0.01), numbers
are ``close`` when they differ by at most the tolerance (10 %; half of it in absolute terms for
shares and exponents), else ``differs``; rows one side cannot give are ``n/a``.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
from scipy import stats

from ..logs.sessions import OBJECT_EXTENSIONS, extension_flags
from .selfsim import counts_per_bin, wavelet
from .workload import Workload

__all__ = ["compare", "stack_distances", "CompareOptions", "rows_text"]



@dataclass(frozen=True)
class CompareOptions:
    """Verdict thresholds: p ≥ ``alpha`` is ``same``; a relative difference ≤ ``tolerance``
    (half of it, absolute, for shares and exponents) is ``close``."""

    alpha: float = 0.01
    tolerance: float = 0.10


IMAGE_EXT = frozenset("gif jpg jpeg jpe png bmp xbm xpm tif tiff ico svg webp".split())


def stack_distances(codes: np.ndarray, limit: int = 200_000) -> np.ndarray:
    """LRU stack distance of each re-reference (first references excluded), on at most
    ``limit`` requests (a Fenwick tree over positions: O(n log n))."""
    codes = codes[:limit]
    n = len(codes)
    tree = np.zeros(n + 1, np.int64)

    def add(i: int, v: int) -> None:
        i += 1
        while i <= n:
            tree[i] += v
            i += i & -i

    def total(i: int) -> int:          # sum over positions < i
        s = 0
        while i > 0:
            s += tree[i]
            i -= i & -i
        return s
    last: dict[int, int] = {}
    out = []
    for i, c in enumerate(codes.tolist()):
        j = last.get(c)
        if j is not None:
            out.append(total(i) - total(j + 1))   # distinct URLs referenced since
            add(j, -1)
        add(i, 1)
        last[c] = i
    return np.asarray(out, float)


def _zipf_slope(w: Workload) -> float:
    counts = np.sort(np.bincount(w.url))[::-1]
    counts = counts[counts > 0][:100]
    if len(counts) < 5:
        return float("nan")
    return float(np.polyfit(np.log(np.arange(1, len(counts) + 1)), np.log(counts), 1)[0])


def _invariants(w: Workload) -> dict[str, float]:
    n = len(w.time)
    counts = np.bincount(w.url)
    counts = counts[counts > 0]
    top = np.sort(counts)[::-1][: max(1, len(counts) // 10)]
    ext = extension_flags(w.urls, IMAGE_EXT)[w.url]
    html = w.is_page & ~extension_flags(w.urls, OBJECT_EXTENSIONS)[w.url]
    out = {"distinct_urls_per_request": len(counts) / n,
           "one_time_references": float(np.mean(counts == 1)),
           "top10pct_concentration": float(top.sum() / n),
           "html_image_share": float(np.mean(html | ext))}
    out["success_rate"] = float(np.mean(w.status < 400)) if w.status is not None else float("nan")
    out["mean_transfer_bytes"] = (float(np.mean(w.size[w.size > 0]))
                                  if w.size is not None and np.any(w.size > 0) else float("nan"))
    return out


def _number_row(name: str, a: float, b: float, tolerance: float, absolute: bool = False) -> dict:
    """``close`` within ``tolerance`` relative (half of it absolute for shares and exponents)."""
    if not (np.isfinite(a) and np.isfinite(b)):
        verdict = "n/a"
    elif absolute:
        verdict = "close" if abs(a - b) <= tolerance / 2 else "differs"
    else:
        verdict = "close" if abs(a - b) <= tolerance * max(abs(a), abs(b), 1e-12) else "differs"
    return {"row": name, "a": a, "b": b, "test": "difference", "p": None, "verdict": verdict}


def _dist_row(name: str, a: np.ndarray, b: np.ndarray, alpha: float) -> dict:
    if len(a) < 8 or len(b) < 8:
        return {"row": name, "a": None, "b": None, "test": "anderson_ksamp", "p": None,
                "verdict": "n/a"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = stats.anderson_ksamp([a, b])
    p = float(res.pvalue)
    return {"row": name, "a": float(np.median(a)), "b": float(np.median(b)),
            "test": "anderson_ksamp (medians shown)", "p": p,
            "verdict": "same" if p >= alpha else "differs"}


def _per_second(w: Workload) -> np.ndarray:
    return counts_per_bin(w.time, 1.0)


def compare(a: Workload, b: Workload, options: CompareOptions = CompareOptions()) -> list[dict]:
    """The comparison table (one dict per row), verdicts by ``options``."""
    alpha, tolerance = options.alpha, options.tolerance
    rows = []
    span = [max(x.starts[-1] - x.starts[0], 1e-9) if len(x.starts) > 1 else np.nan for x in (a, b)]
    rows.append(_number_row("session rate (/s)", (len(a.starts) - 1) / span[0],
                            (len(b.starts) - 1) / span[1], tolerance))
    rows.append(_dist_row("session inter-arrival (s)", np.diff(np.sort(a.starts)),
                          np.diff(np.sort(b.starts)), alpha))
    rows.append(_dist_row("clicks per session", a.clicks.astype(float), b.clicks.astype(float),
                          alpha))
    rows.append(_dist_row("think time (s)", a.think, b.think, alpha))
    rows.append(_number_row("Zipf slope of popularity", _zipf_slope(a), _zipf_slope(b),
                            tolerance, True))
    sd = [stack_distances(x.url[np.argsort(x.time, kind="stable")]) for x in (a, b)]
    fits = [stats.norm.fit(np.log1p(s)) if len(s) > 8 else (np.nan, np.nan) for s in sd]
    rows.append(_number_row("stack distance: lognormal mu", fits[0][0], fits[1][0], tolerance))
    rows.append(_number_row("stack distance: lognormal sigma", fits[0][1], fits[1][1], tolerance))
    ps = [_per_second(x) for x in (a, b)]
    acf = [float(np.corrcoef(p[:-1], p[1:])[0, 1]) if len(p) > 3 and np.ptp(p) > 0 else np.nan
           for p in ps]
    rows.append(_number_row("acf(1) of requests/s", acf[0], acf[1], tolerance, True))
    hs = [wavelet(p).H if len(p) >= 256 and np.ptp(p) > 0 else np.nan for p in ps]
    rows.append(_number_row("Hurst (wavelet, requests/s)", hs[0], hs[1], tolerance, True))
    inv = [_invariants(x) for x in (a, b)]
    for key in inv[0]:
        share = key in ("one_time_references", "top10pct_concentration", "html_image_share",
                        "success_rate", "distinct_urls_per_request")
        rows.append(_number_row(key.replace("_", " "), inv[0][key], inv[1][key], tolerance, share))
    return rows


def rows_text(rows: list[dict]) -> str:
    """The comparison table as text."""
    out = [f"{'':34s} {'A':>12s} {'B':>12s}  {'p':>7s}  verdict"]
    for r in rows:
        fa = "" if r["a"] is None else f"{r['a']:12.4g}"
        fb = "" if r["b"] is None else f"{r['b']:12.4g}"
        p = "" if r["p"] is None else f"{r['p']:7.3f}"
        out.append(f"{r['row']:34s} {fa:>12s} {fb:>12s}  {p:>7s}  {r['verdict']}")
    return "\n".join(out)
