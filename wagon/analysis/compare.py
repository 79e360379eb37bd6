"""``wagon compare``: does workload B reproduce workload A, on what WAGON validated?

Rows: session arrival rate; inter-arrival, clicks and think-time distributions; page popularity
(Zipf slope of the rank–frequency plot of the pages' clicks, log–log fit on the 100 most
clicked pages); temporal locality (LRU stack distances, lognormal fit of their log);
autocorrelation of requests per second at lag 1; the wavelet Hurst estimate of requests per
second; and Arlitt & Williamson's invariants over all URLs (success rate, HTML + image share of
requests, mean transfer size, distinct URLs per request, one-time references, concentration of
references on the top 10 % of URLs).

Verdicts are decided by effect sizes against equivalence margins, never by a p-value alone, so
that the number of values does not decide; each is a one-sided test at level α
(``wagon.analysis.equivalence``), and the table ends with one overall verdict (``overall``):

- distributions: the two-sample Kolmogorov–Smirnov distance D (largest gap between the two
  distribution functions), ``same`` when its upper bound is within the margin (0.1),
  ``differs`` when its lower bound is beyond it, ``undecided`` otherwise, with why (too few
  values: ``n_same`` a side are needed). Both samples are first put on the coarser time
  resolution of the two (a log's whole seconds; two logs are read on one clock before, by
  ``workload.on_one_clock``). The KS p-value and the Wasserstein distance
  between the logs of the values (a scale shift of 2 % is 0.02) are shown beside;
- numbers: the difference B − A with its normal bounds from both sides' standard errors;
  ``close`` when both lie within ± the margin, ``differs`` when one lies beyond, ``undecided``
  otherwise. The margin fits the quantity: relative (the tolerance, 10 %, of the larger value)
  for rates, ratios, sizes and the stack-distance parameters; absolute (half the tolerance,
  0.05) for shares, exponents, correlations and H. Every number has a standard error, so no
  interval has zero width: a share's is Agresti–Coull's (x + 2 successes in n + 4), the Zipf
  slope's a multinomial bootstrap of the clicks per page (the regression's own error measures
  the misfit of a Zipf line, not the slope's sampling noise), acf(1)'s from its spread over
  blocks of seconds (a workload's seconds are not independent: ``digest._acf1_error``).
Rows one side cannot give are ``n/a``, with the reason (``why``). A scenario synthesized with
``--speedup k``, and its replay, are compared with their times multiplied by k (the run file
records the speedup).
"""
from __future__ import annotations

import math

import numpy as np
from scipy import stats

from ..logs.locality import stack_distances
from .digest import Digest, Value, digest
from .equivalence import difference, ks_equivalence
from .options import CompareOptions
from .workload import Workload

__all__ = ["compare", "stack_distances", "CompareOptions", "rows_text", "ks_equivalence",
           "overall", "verdict_line", "dispersion", "poisson_bound"]


def _number_row(name: str, a: Value, b: Value, options, absolute: bool = False) -> dict:
    """(value, standard error) of each side, or the reason it has none; the margin is
    ``options.tolerance`` relative to the larger value, or half of it absolute for shares and
    exponents."""
    row = {"row": name, "a": None, "b": None, "effect": None, "interval": None, "margin": None,
           "test": "difference", "p": None, "verdict": "n/a", "why": None}
    missing = [f"{side}: {v}" for side, v in (("A", a), ("B", b)) if isinstance(v, str)]
    if missing:
        return {**row, "a": None if isinstance(a, str) else a[0],
                "b": None if isinstance(b, str) else b[0], "why": "; ".join(missing)}
    (va, sa), (vb, sb) = a, b
    margin = options.tolerance / 2 if absolute else options.tolerance * max(abs(va), abs(vb))
    if not math.hypot(sa, sb) > 0 or not margin > 0:
        return {**row, "a": va, "b": vb, "why": "no sampling error can be given (both values "
                                                 "exact or zero)"}
    return {**row, "a": va, "b": vb, **difference(va, sa, vb, sb, margin, options.alpha)}


def _log_wasserstein(a: np.ndarray, b: np.ndarray) -> float | None:
    a, b = a[a > 0], b[b > 0]
    return float(stats.wasserstein_distance(np.log(a), np.log(b))) if len(a) and len(b) else None


def _dist_row(name: str, a: np.ndarray, b: np.ndarray, options) -> dict:
    row = {"row": name, "a": None, "b": None, "effect": None, "interval": None, "margin": None,
           "test": "ks_2samp", "p": None, "log_wasserstein": None, "n_same": None,
           "verdict": "n/a", "why": None}
    few = [f"{side} has {len(x):,} values (at least 8 needed)"
           for side, x in (("A", a), ("B", b)) if len(x) < 8]
    if few:
        return {**row, "why": "; ".join(few)}
    return {**row, "a": float(np.median(a)), "b": float(np.median(b)),
            **ks_equivalence(a, b, options.margin, options.alpha),
            "log_wasserstein": _log_wasserstein(a, b)}


def _recorded(w: Digest, resolution: float, rng: np.random.Generator
              ) -> tuple[np.ndarray, np.ndarray]:
    """(inter-arrival gaps, think times) as a log with timestamps of ``resolution`` seconds
    would record them: gaps between the grid cells of the starts (a log's own starts, spread
    within their cell by its sessions, back in the cell they were logged in); think times
    off that grid (a finer side's, or a log's that ends a click at its logged durations) as
    differences of floored times (a uniform phase), which is how a log records them; those on
    it stay as they are."""
    if not resolution > 0:
        return np.diff(w.starts), w.think
    gaps = np.diff(np.floor(w.starts / resolution)) * resolution
    cells = w.think / resolution
    if np.allclose(cells, np.round(cells), rtol=0, atol=1e-6):
        return gaps, w.think
    return gaps, np.floor(rng.random(len(w.think)) + cells) * resolution


def _share(x: float, n: int) -> Value:
    """The share x/n and its Agresti–Coull standard error (never 0, even at 0 or n)."""
    if not n:
        return "nothing to count"
    p = (x + 2) / (n + 4)
    return x / n, math.sqrt(p * (1 - p) / (n + 4))


ZIPF_TOP = 100             # pages in the rank–frequency fit
ZIPF_REPLICATES = 200      # multinomial resamples for its standard error
ZIPF_BLOCK_VALUES = 1 << 22  # page counts resampled at once (32 MB), whatever the pages


def _slope(counts: np.ndarray) -> np.ndarray:
    """Least-squares slopes of log count on log rank of the ZIPF_TOP most clicked pages, one
    per row of ``counts`` (clicks per page, any order)."""
    top = -np.sort(-counts, axis=1)[:, :ZIPF_TOP]
    x = np.log(np.arange(1, top.shape[1] + 1))
    y = np.log(np.maximum(top, 0.5))          # a page a resample never drew counts as ½
    xc = x - x.mean()
    # a sum per row, not a matrix product: the same bits however many rows come at once
    return ((y - y.mean(axis=1, keepdims=True)) * xc).sum(axis=1) / (xc @ xc)


def _zipf_slope(counts: np.ndarray, seed: int = 0) -> Value:
    """Slope of the rank–frequency plot of ``counts`` (clicks per page, most clicked first:
    ``Digest.page_hits``) and its multinomial-bootstrap standard error (drawn over the pages
    most clicked first)."""
    if len(counts) < 5:
        return f"{len(counts)} pages clicked (at least 5 needed)"
    n, rng = int(counts.sum()), np.random.default_rng(seed)
    rows = max(1, ZIPF_BLOCK_VALUES // len(counts))     # resamples drawn at once: memory bound
    slopes = np.concatenate([_slope(rng.multinomial(n, counts / n, min(rows, ZIPF_REPLICATES - k)))
                             for k in range(0, ZIPF_REPLICATES, rows)])   # the same draws
    return float(_slope(counts[None, :])[0]), float(np.std(slopes, ddof=1))


def _mean_se(values: np.ndarray, counts: np.ndarray) -> Value:
    """Mean of whole numbers (distinct ``values``, their ``counts``) and its standard error
    (sample standard deviation / √n), from exact integer sums."""
    n = int(counts.sum())
    if n < 2:
        return "fewer than 2 transfers with a size"
    v, c = values.astype(object), counts.astype(object)
    s1, s2 = int((v * c).sum()), int((v * v * c).sum())
    return s1 / n, math.sqrt((n * s2 - s1 * s1) / (n * (n - 1))) / math.sqrt(n)


def _invariants(w: Digest) -> dict[str, Value]:
    n, counts = w.requests, w.hits
    top = counts[: max(1, len(counts) // 10)]
    out: dict[str, Value] = {
        "distinct_urls_per_request": _share(len(counts), n),   # a count ≤ n: as a share
        "one_time_references": _share(float(np.sum(counts == 1)), len(counts)),
        "top10pct_concentration": _share(float(top.sum()), n),
        "html_image_share": _share(float(w.html_or_image), n)}
    out["success_rate"] = (_share(float(w.success), n) if w.success is not None
                           else f"a {w.kind} has no status codes")
    out["mean_transfer_bytes"] = _mean_se(*w.sizes)
    return out


#: invariants compared with a relative margin (the others are shares: absolute)
RELATIVE = frozenset(("mean_transfer_bytes", "distinct_urls_per_request"))


def _stack_fit(w: Digest) -> tuple[Value, Value]:
    """((μ, se), (σ, se)) of the lognormal fit of 1 + LRU stack distance."""
    sd = stack_distances(w.first)
    if len(sd) <= 8:
        why = f"{len(sd)} re-references (at least 9 needed)"
        return why, why
    mu, sigma = stats.norm.fit(np.log1p(sd))
    return (mu, sigma / math.sqrt(len(sd))), (sigma, sigma / math.sqrt(2 * len(sd)))


RATE_BLOCKS = 32           # blocks of the starts' span whose counts measure their dispersion
PER_BLOCK = 8              # starts a block holds at least on average (fewer: fewer blocks)


def dispersion(starts: np.ndarray) -> tuple[float, int]:
    """The Hadamard factor of session starts and the blocks it was measured on: counts in
    equal blocks of their span, the mean squared second difference of successive counts over
    six times their mean. About 1 for a Poisson process, whatever a linear drift of its rate
    (a day's profile, block to block); above 1 when starts cluster, where the count over the
    span varies that many times more than a Poisson count (Hadamard variance of clock drift;
    the Allan factor of point processes, Lowen & Teich 1995, with second differences).
    (1, 0) when too few starts to say (3 blocks of ``PER_BLOCK``)."""
    blocks = min(RATE_BLOCKS, len(starts) // PER_BLOCK)
    span = float(starts[-1] - starts[0]) if len(starts) else 0.0
    if blocks < 3 or not span > 0:
        return 1.0, 0
    cell = np.minimum(((starts - starts[0]) * (blocks / span)).astype(np.int64), blocks - 1)
    counts = np.bincount(cell, minlength=blocks).astype(float)
    return float(np.mean(np.diff(counts, 2) ** 2) / (6 * counts.mean())), blocks


def poisson_bound(blocks: int, alpha: float = 0.05) -> float:
    """The Hadamard factor a Poisson process exceeds with probability ``alpha`` over
    ``blocks``: the second differences' sum of squares as a scaled χ² (Satterthwaite: ν =
    tr(A)² / tr(A²), A = DᵀD, D the second-difference matrix); 1.65 over 32 blocks."""
    d = np.diff(np.eye(blocks), 2, axis=0)
    a = d.T @ d
    nu = np.trace(a) ** 2 / np.trace(a @ a)
    return float(stats.chi2.ppf(1 - alpha, nu) / nu)


def _rate(starts: np.ndarray) -> Value:
    """Sessions per second over the span of the starts, with the Poisson standard error,
    widened by their ``dispersion`` when it shows clustering (beyond ``poisson_bound``: one
    run's count then says less of the rate), as a quasi-Poisson fit does."""
    if len(starts) < 2:
        return f"{len(starts)} sessions (at least 2 needed)"
    span = max(float(starts[-1] - starts[0]), 1e-9)
    n = len(starts) - 1
    h, blocks = dispersion(starts)
    inflate = h if blocks and h > poisson_bound(blocks) else 1.0
    return n / span, math.sqrt(n * inflate) / span


def compare(a: Workload | Digest, b: Workload | Digest,
            options: CompareOptions = CompareOptions(), seed: int = 0) -> list[dict]:
    """The comparison table (one dict per row), verdicts by ``options`` (module docstring).
    Both sides are compared in modeled seconds (a scenario's ``--speedup`` undone); a
    workload is read through its digest (``wagon.analysis.digest``)."""
    a, b = (x if isinstance(x, Digest) else digest(x) for x in (a, b))
    rows = [_number_row("session rate (/s)", _rate(a.starts), _rate(b.starts), options)]
    resolution = max(a.resolution, b.resolution)
    rng = np.random.default_rng(seed)
    (gap_a, think_a), (gap_b, think_b) = (_recorded(x, resolution, rng) for x in (a, b))
    rows.append(_dist_row("session inter-arrival (s)", gap_a, gap_b, options))
    rows.append(_dist_row("clicks per session", a.clicks.astype(float), b.clicks.astype(float),
                          options))
    rows.append(_dist_row("think time (s)", think_a, think_b, options))
    rows.append(_number_row("Zipf slope of page popularity", _zipf_slope(a.page_hits, seed),
                            _zipf_slope(b.page_hits, seed + 1), options, True))
    fits = [_stack_fit(x) for x in (a, b)]
    rows.append(_number_row("stack distance: lognormal mu", fits[0][0], fits[1][0], options))
    rows.append(_number_row("stack distance: lognormal sigma", fits[0][1], fits[1][1], options))
    rows.append(_number_row("acf(1) of requests/s", a.acf1, b.acf1, options, True))
    rows.append(_number_row("Hurst (wavelet, requests/s)", a.hurst, b.hurst, options, True))
    inv = [_invariants(x) for x in (a, b)]
    for key in inv[0]:
        rows.append(_number_row(key.replace("_", " "), inv[0][key], inv[1][key], options,
                                key not in RELATIVE))
    return rows


def rows_text(rows: list[dict]) -> str:
    """The comparison table as text: values, the effect (KS D, or B − A) with its interval
    against the margin, the p-value where there is one, and the verdict."""
    out = [f"{'':32s} {'A':>10s} {'B':>10s}  {'effect [interval]':>28s} {'margin':>8s} "
           f"{'p':>7s}  verdict"]
    for r in rows:
        fa = "" if r["a"] is None else f"{r['a']:10.4g}"
        fb = "" if r["b"] is None else f"{r['b']:10.4g}"
        effect = ("" if r["effect"] is None else
                  f"{r['effect']:.3g} [{r['interval'][0]:.3g}, {r['interval'][1]:.3g}]")
        margin = "" if r["margin"] is None else f"{r['margin']:8.3g}"
        p = "" if r["p"] is None else f"{r['p']:7.3g}"
        why = f" ({r['why']})" if r.get("why") else ""
        out.append(f"{r['row']:32s} {fa:>10s} {fb:>10s}  {effect:>28s} {margin:>8s} {p:>7s}  "
                   f"{r['verdict']}{why}")
    return "\n".join(out)


def overall(rows: list[dict]) -> dict:
    """The comparison's one verdict: ``differs`` when a row differs (those rows named),
    ``same`` when every row that could be compared (not ``n/a``) is same or close,
    ``undecided`` otherwise (the undecided rows named); with the counts of undecided and n/a
    rows."""
    named = {v: [r["row"] for r in rows if r["verdict"] == v]
             for v in ("differs", "undecided", "n/a")}
    if named["differs"]:
        decision = "differs"
    elif named["undecided"] or len(named["n/a"]) == len(rows):
        decision = "undecided"
    else:
        decision = "same"
    return {"decision": decision, "rows": named.get(decision, []),
            "undecided": len(named["undecided"]), "n_a": len(named["n/a"])}


def verdict_line(verdict: dict) -> str:
    """``overall``'s verdict as the line under the table: ``verdict: same``, ``differs:
    <rows>`` or ``undecided: <rows>``, with the rows left undecided or n/a counted."""
    counts = [f"{verdict[k]} {k.replace('_', '/')}" for k in ("undecided", "n_a")
              if verdict[k] and k != verdict["decision"]]
    tail = f" ({', '.join(counts)})" if counts else ""
    if verdict["decision"] == "same":
        return f"verdict: same{tail}"
    rows = ", ".join(verdict["rows"]) or "no row could be compared"
    return f"{verdict['decision']}: {rows}{tail}"
