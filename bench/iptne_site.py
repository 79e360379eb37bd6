"""IP-TNE's variable-size site as a wagon model (``data/recipes/iptne-variable.json``).

Williamson, Simmonds & Arlitt's Section 5.2.2: 3,000 static documents, about 30 MB, median
3,600 bytes, mean 9,963, largest 1.4 MB; sizes a lognormal body with a Pareto tail (α = 1.2,
k = 10,000 bytes), popularity Zipf-like with slope −0.8 (ProWGen, Busari & Williamson 2002).
The law is SURGE's hybrid (Barford & Crovella 1998): the lognormal up to K, and above K
its remaining mass q = 1 − LN(K) on the Pareto, here conditioned on ending by the paper's
largest document; μ and σ solved so that the site has the paper's median and mean. The sizes
are the law's quantiles at (i − ½)/3,000, not random draws, so the site is that law's and no
seed's. Popularity is by rank, hits ∝ rank^−0.8, the ranks in an order drawn apart from the
sizes (ProWGen's default: no size–popularity correlation). Sessions are 4 clicks (4 requests a
persistent connection, the paper's Section 5.4), the recipe's closed loop draws no think time.

    python bench/iptne_site.py [--out data/recipes/iptne-variable.json]
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
from scipy import optimize, stats

N, MEDIAN, MEAN, LARGEST = 3000, 3600.0, 9963.0, 1.4e6
ALPHA, K, SLOPE, CLICKS = 1.2, 10_000.0, -0.8, 4


def sizes(mu: float, sigma: float) -> tuple[np.ndarray, float]:
    """The hybrid law's quantiles at (i − ½)/N, and its tail's mass q: the lognormal below K,
    above it the Pareto with the lognormal's mass there, conditioned on ending by LARGEST."""
    u = (np.arange(N) + 0.5) / N
    body = stats.lognorm(sigma, scale=np.exp(mu))
    q = float(body.sf(K))
    beyond = 1 - (K / LARGEST) ** ALPHA                 # the Pareto's mass up to LARGEST
    tail = K * (1 - np.clip((u - (1 - q)) / q, 0, 1) * beyond) ** (-1 / ALPHA)
    return np.where(u < 1 - q, body.ppf(u), tail), q


def solve() -> tuple[float, float, float, np.ndarray]:
    """(μ, σ, q, sizes) with the paper's median and mean."""
    def miss(p: np.ndarray) -> list[float]:
        s = sizes(p[0], np.exp(p[1]))[0]
        return [np.log(np.median(s) / MEDIAN), np.log(s.mean() / MEAN)]
    fit = optimize.least_squares(miss, [np.log(MEDIAN), 0.0])
    mu, sigma = float(fit.x[0]), float(np.exp(fit.x[1]))
    size, q = sizes(mu, sigma)
    return mu, sigma, q, np.round(size).astype(int)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(Path(__file__).resolve().parents[1] / "data" / "recipes"
                                         / "iptne-variable.json"))
    out = Path(ap.parse_args().out)
    mu, sigma, q, size = solve()
    rank = np.random.default_rng(2002).permutation(N) + 1
    hits = np.round(1e6 * rank ** SLOPE).astype(int)
    pages = [{"url": f"/d{i // 100:02d}/doc{i:04d}.html", "size": int(s), "hits": int(h)}
             for i, (s, h) in enumerate(zip(size, hits))]
    model = {
        "format": "wagon-model", "version": 9,
        "description": (
            f"IP-TNE's variable-size site (Williamson, Simmonds & Arlitt, Section 5.2.2), made by "
            f"bench/iptne_site.py: {N:,} static documents, {size.sum() / 1e6:.1f} MB, median "
            f"{np.median(size):,.0f} bytes, mean {size.mean():,.0f}, largest {size.max():,}; sizes "
            f"the quantiles of SURGE's hybrid law, a lognormal (mu {mu:.3f}, sigma {sigma:.3f}) up "
            f"to {K:,.0f} bytes and its mass above ({q:.4f}) on a Pareto tail (alpha {ALPHA:g}, k "
            f"{K:,.0f}) ending by the paper's largest document, {LARGEST / 1e6:g} MB; hits by rank, "
            f"rank^{SLOPE:g}, the ranks drawn apart from the sizes. A session is {CLICKS} clicks, "
            f"one document each: {CLICKS} requests a persistent connection (their Section 5.4); a "
            "closed loop draws no think time."),
        "variables": {
            "interarrival": {"best": "exponential", "params": {"scale": 1.0}},
            "clicks": {"best": "geometric", "params": {"p": 1.0, "loc": CLICKS - 1},
                       "kind": "discrete"},
            "think": {"best": "lognormal", "params": {"mu": 3.0, "sigma": 1.1}}},
        "site": {"pages": pages}}
    out.write_text(json.dumps(model, separators=(",", ":")) + "\n")
    print(f"{out}: {N:,} documents, {size.sum():,} bytes, median {np.median(size):,.0f}, mean "
          f"{size.mean():,.1f}, largest {size.max():,}; mu {mu:.4f} sigma {sigma:.4f} q {q:.5f}")


if __name__ == "__main__":
    main()
