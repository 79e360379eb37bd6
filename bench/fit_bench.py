"""Fitting speed: wagon's whole candidate set with λ², W², A² and their p-values vs scipy's
``dist.fit``.

On n = 1,000,000 lognormal(μ=3, σ=1.1) values (WAGON's think-time law), times
``fitting.fit`` (9 continuous families, each with all three statistics and the asymptotic or
Stephens p-values) against scipy's ``dist.fit`` with the location fixed at 0 for the same 9
families (fitting alone), in the same run, and prints the ratio (target ≥ 5×). Then the same
million values recorded as a log records think times — whole seconds, within [2, 600] — fitted
by the likelihood of that record (numerical MLEs on the distinct values: the time no longer
grows with n). Last, what the ``fitter`` package (if installed: ``pip install fitter``) picks
for a lognormal sample of 100,000 with its free location, beside wagon's pick.

    python bench/fit_bench.py [--n 1000000] [--runs 3]
"""
from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
from scipy import stats

from wagon.fitting import Observation, fit

SCIPY_FAMILIES = {"exponential": stats.expon, "normal": stats.norm, "lognormal": stats.lognorm,
                  "weibull": stats.weibull_min, "pareto": stats.pareto,
                  "inverse_gaussian": stats.invgauss, "gamma": stats.gamma,
                  "loglogistic": stats.fisk, "lomax": stats.lomax}


def scipy_fit_all(x: np.ndarray) -> dict[str, float]:
    """Seconds per family of scipy's fit (loc fixed at 0 except for the normal)."""
    times = {}
    for name, dist in SCIPY_FAMILIES.items():
        t0 = time.perf_counter()
        dist.fit(x) if name == "normal" else dist.fit(x, floc=0)
        times[name] = time.perf_counter() - t0
    return times


def fitter_pick(x: np.ndarray) -> str:
    try:
        from fitter import Fitter
    except ImportError:
        return "fitter not installed (pip install fitter)"
    f = Fitter(x, distributions=["expon", "norm", "lognorm", "weibull_min", "pareto", "invgauss",
                                 "gamma", "fisk"], timeout=120)
    f.fit(progress=False)
    (name, params), = f.get_best().items()
    return f"{name} {dict((k, round(v, 3)) for k, v in params.items())}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    warnings.filterwarnings("ignore")
    rng = np.random.default_rng(20011)
    law = stats.lognorm(s=1.1, scale=np.exp(3))
    x = law.rvs(size=args.n, random_state=rng)
    wagon_t = min(_timed(lambda: fit(x)) for _ in range(args.runs))
    report = fit(x)
    scipy_t = min((scipy_fit_all(x) for _ in range(args.runs)), key=lambda d: sum(d.values()))
    total = sum(scipy_t.values())
    print(f"n = {args.n:,} lognormal(mu=3, sigma=1.1) values")
    print(f"wagon fitting.fit, 9 laws + lambda2, W2, A2, p : {wagon_t:.2f} s "
          f"-> {report.best.name} {report.best.params}")
    print(f"scipy dist.fit (floc=0), 9 laws, fit only     : {total:.2f} s  "
          + " ".join(f"{k}={v:.2f}" for k, v in scipy_t.items()))
    print(f"ratio scipy/wagon: {total / wagon_t:.1f}x (target >= 5x)")
    think = Observation.grid(1.0, lower=2, upper=600)
    recorded = np.floor(rng.random(args.n) + x)
    recorded = recorded[(recorded >= 2) & (recorded <= 600)]
    grid_t = min(_timed(lambda: fit(recorded, observation=think)) for _ in range(args.runs))
    best = fit(recorded, observation=think).best
    print(f"the same values as whole seconds within [2, 600] (n = {len(recorded):,}, "
          f"{len(np.unique(recorded))} distinct): {grid_t:.2f} s -> {best.name} "
          f"{best.params}")
    small = law.rvs(size=100_000, random_state=rng)
    print(f"n = 100,000 lognormal: wagon picks {fit(small).best.name} "
          f"{fit(small).best.params}; fitter picks {fitter_pick(small)}")


def _timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


if __name__ == "__main__":
    main()
