"""``wagon compare``'s KS equivalence test by simulation: how often it says ``same`` and
``differs`` for one law on both sides (by size: where ``n_same`` puts 90 %), and for laws whose
Kolmogorov distance is the margin (the worst case of ``same``'s error) or 1.5 and 2 margins —
continuous (lognormal, normal shifts) and discrete (geometric, Poisson) laws; the old
DKW–Massart interval beside for one law.

    python bench/equivalence_bench.py [--seeds 1000] [--margin 0.1] [--alpha 0.05]
"""
from __future__ import annotations

import argparse
import math

import numpy as np
from scipy import optimize, stats

from wagon.analysis.equivalence import ks_equivalence, n_same

SIZES = (150, 300, 500, 1000, 2000, 3500)


def rates(a, b, n: int, seeds: int, margin: float, alpha: float) -> tuple[float, float, float]:
    """Shares of ``same``, ``differs`` and of the old DKW–Massart ``same`` over ``seeds``."""
    same = differs = dkw = 0
    eps = 2 * math.sqrt(math.log(4 / alpha) / (2 * n))
    for seed in range(seeds):
        rng = np.random.default_rng(seed)
        x, y = a(rng, n), b(rng, n)
        r = ks_equivalence(x, y, margin, alpha)
        same += r["verdict"] == "same"
        differs += r["verdict"] == "differs"
        dkw += r["effect"] + eps <= margin
    return same / seeds, differs / seeds, dkw / seeds


def shifted(delta: float):
    """Unit normals whose Kolmogorov distance is ``delta``."""
    d = 2 * stats.norm.ppf(0.5 + delta / 2)
    return (lambda r, n: r.normal(0, 1, n)), (lambda r, n: r.normal(d, 1, n))


def poisson_apart(delta: float):
    """Poisson(4) and the Poisson law whose Kolmogorov distance from it is ``delta``."""
    k = np.arange(80)

    def gap(lam: float) -> float:
        return np.max(np.abs(stats.poisson.cdf(k, 4.0) - stats.poisson.cdf(k, lam))) - delta
    lam = optimize.brentq(gap, 4.0, 12.0)
    return (lambda r, n: r.poisson(4.0, n).astype(float)), (lambda r, n: r.poisson(lam, n)
                                                            .astype(float))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=1000)
    ap.add_argument("--margin", type=float, default=0.1)
    ap.add_argument("--alpha", type=float, default=0.05)
    o = ap.parse_args()
    print(f"margin {o.margin}, alpha {o.alpha}, {o.seeds} seeds; n_same = "
          f"{n_same(o.margin, o.alpha):,} a side")
    one = {"lognormal": (lambda r, n: r.lognormal(3, 1.1, n),) * 2,
           "geometric": (lambda r, n: r.geometric(0.25, n).astype(float),) * 2}
    print("\none law on both sides: same / differs / old DKW same")
    for name, (a, b) in one.items():
        for n in SIZES + (n_same(o.margin, o.alpha),):
            s, d, old = rates(a, b, n, o.seeds, o.margin, o.alpha)
            print(f"  {name:10s} n={n:>5,}  same {s:6.3f}  differs {d:6.3f}  DKW same {old:6.3f}")
    print("\nlaws apart by k margins: same / differs")
    for k in (1.0, 1.5, 2.0):
        for name, (a, b) in (("normal", shifted(k * o.margin)),
                             ("poisson", poisson_apart(k * o.margin))):
            for n in (300, 1000, 3500):
                s, d, _ = rates(a, b, n, o.seeds, o.margin, o.alpha)
                print(f"  {k:3.1f} x margin {name:8s} n={n:>5,}  same {s:6.3f}  differs {d:6.3f}")


if __name__ == "__main__":
    main()
