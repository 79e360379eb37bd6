"""Calibration of the fit: is the true family picked, and are the p-values uniform under the null?

Samples of every family are drawn and recorded the way the sessionizer records them:
- ``think``: whole-second differences of timestamps (a uniform phase), kept within [2, 600];
- ``interarrival``: whole-second differences, from 0;
- ``clicks``: counts ≥ 1 — the discrete laws as they are, the continuous ones as
  max(1, round X) (WAGON's own click law is the rounded inverse Gaussian μ = 5, λ = 3);
- ``sizes``: exact values.

Two tables:
1. picks: for each scenario, family and n (500, 5,000, 50,000), in how many of ``--seeds``
   samples ``fit`` picks the true family (every candidate fitted, the selection rule of
   ``wagon.fitting.report``);
2. null: for each scenario and family, ``--reps`` samples of size ``--null-n`` fitted with the
   true family only; the A² and W² p-values (asymptotic, or Stephens' for exact normal and
   lognormal samples) should be uniform: KS p-value of their uniformity, and the share below
   0.05 and 0.01.
A third, slower table checks the parametric bootstrap's p-values the same way on a few families
(``BOOTSTRAP_FAMILIES``; ``--bootstrap-reps`` samples of ``--bootstrap-n`` values, B =
``--bootstrap``).

    python bench/fit_calibration.py [--seeds 10] [--reps 300] [--null-n 50000] [--only think]
"""
from __future__ import annotations

import argparse
import time

import numpy as np
from scipy import stats

from wagon.fitting import LAWS, Observation, fit
from wagon.fitting.likelihood import draw_observed, mode_of
from wagon.fitting.laws import Sample

SCENARIOS = {
    "think": (Observation.grid(1.0, lower=2, upper=600), {
        "exponential": {"scale": 30.0},
        "normal": {"mu": 60.0, "sigma": 20.0},
        "lognormal": {"mu": 3.0, "sigma": 1.1},
        "weibull": {"shape": 0.6, "scale": 25.0},
        "pareto": {"shape": 1.2, "scale": 3.0},
        "lomax": {"shape": 2.5, "scale": 40.0},
        "inverse_gaussian": {"mu": 30.0, "lambda": 15.0},
        "gamma": {"shape": 0.6, "scale": 50.0},
        "loglogistic": {"shape": 1.8, "scale": 20.0}}),
    "interarrival": (Observation.grid(1.0, lower=0), {
        "exponential": {"scale": 4.0},
        "normal": {"mu": 10.0, "sigma": 3.0},
        "lognormal": {"mu": 1.0, "sigma": 0.8},
        "weibull": {"shape": 0.7, "scale": 3.0},
        "pareto": {"shape": 1.5, "scale": 0.5},
        "lomax": {"shape": 3.0, "scale": 6.0},
        "inverse_gaussian": {"mu": 4.0, "lambda": 3.0},
        "gamma": {"shape": 2.5, "scale": 1.6},
        "loglogistic": {"shape": 2.5, "scale": 3.0}}),
    "clicks": (Observation.counts(1), {
        "geometric": {"p": 0.25, "loc": 0},
        "poisson": {"mu": 3.0, "loc": 1},
        "negative_binomial": {"n": 0.6, "p": 0.12, "loc": 1},
        "zt_poisson": {"mu": 2.5},
        "zt_negative_binomial": {"n": 1.5, "p": 0.3},
        "zipf": {"a": 2.2, "loc": 0},
        "inverse_gaussian": {"mu": 5.0, "lambda": 3.0},
        "lognormal": {"mu": 1.0, "sigma": 1.0},
        "weibull": {"shape": 0.8, "scale": 4.0},
        "gamma": {"shape": 1.5, "scale": 3.0},
        "loglogistic": {"shape": 1.6, "scale": 3.0},
        "lomax": {"shape": 3.0, "scale": 8.0},
        "normal": {"mu": 6.0, "sigma": 3.0}}),
    "sizes": (Observation(), {
        "exponential": {"scale": 3000.0},
        "normal": {"mu": 5000.0, "sigma": 1000.0},
        "lognormal": {"mu": 8.0, "sigma": 1.5},
        "weibull": {"shape": 0.6, "scale": 4000.0},
        "pareto": {"shape": 1.2, "scale": 200.0},
        "lomax": {"shape": 2.5, "scale": 5000.0},
        "inverse_gaussian": {"mu": 5000.0, "lambda": 2000.0},
        "gamma": {"shape": 0.6, "scale": 8000.0},
        "loglogistic": {"shape": 1.8, "scale": 3000.0}}),
}


BOOTSTRAP_FAMILIES = {"think": ["lognormal", "weibull"], "interarrival": ["exponential"],
                      "clicks": ["inverse_gaussian", "negative_binomial"], "sizes": ["gamma"]}


def draw(scenario: str, family: str, n: int, rng: np.random.Generator) -> np.ndarray:
    obs, params = SCENARIOS[scenario][0], SCENARIOS[scenario][1][family]
    law = LAWS[family]
    s = Sample(np.ones(2), observation=obs)
    return draw_observed(law.freeze(params), obs, mode_of(law, s), 1, n, rng)


def picks(scenarios, sizes, seeds: int) -> None:
    print(f"1. true family picked (of {seeds} seeds)")
    print(f"{'scenario':13s} {'family':21s} " + " ".join(f"{'n=' + format(n, ','):>9s}"
                                                           for n in sizes) + "  picked instead")
    for scenario in scenarios:
        obs, families = SCENARIOS[scenario]
        for family in families:
            row, wrong = [], {}
            for n in sizes:
                hit = 0
                for seed in range(seeds):
                    x = draw(scenario, family, n, np.random.default_rng([seed, n]))
                    best = fit(x, observation=obs).best
                    name = best.name if best else "none"
                    hit += name == family
                    if name != family and n >= 5000:
                        wrong[name] = wrong.get(name, 0) + 1
                row.append(hit)
            print(f"{scenario:13s} {family:21s} " + " ".join(f"{h:>6d}/{seeds:<2d}" for h in row)
                  + "  " + " ".join(f"{k}×{v}" for k, v in sorted(wrong.items())), flush=True)


def null(scenarios, n: int, reps: int, bootstrap: int = 0) -> None:
    """Uniformity of the null p-values (every family, or BOOTSTRAP_FAMILIES with the
    bootstrap)."""
    what = f"bootstrap B={bootstrap}" if bootstrap else "asymptotic/Stephens"
    print(f"\n2. null p-values ({what}): {reps} samples of {n:,} from each fitted family")
    print(f"{'scenario':13s} {'family':21s} {'method':16s} {'KS p(A²)':>9s} {'KS p(W²)':>9s} "
          f"{'A²<.05':>7s} {'A²<.01':>7s} {'s/rep':>6s}")
    for scenario in scenarios:
        obs, families = SCENARIOS[scenario]
        for family in (BOOTSTRAP_FAMILIES.get(scenario, []) if bootstrap else families):
            pa, pw, method = [], [], ""
            t0 = time.perf_counter()
            for r in range(reps):
                x = draw(scenario, family, n, np.random.default_rng([r, n, 7]))
                c = fit(x, candidates=[family], observation=obs, bootstrap=bootstrap,
                        seed=r).candidates[0]
                if c.ok and c.p_a2 is not None:
                    pa.append(c.p_a2)
                    pw.append(c.p_w2)
                    method = c.p_method
            pa, pw = np.array(pa), np.array(pw)
            dt = (time.perf_counter() - t0) / reps
            print(f"{scenario:13s} {family:21s} {method:16s} "
                  f"{stats.kstest(pa, 'uniform').pvalue:9.3f} "
                  f"{stats.kstest(pw, 'uniform').pvalue:9.3f} {np.mean(pa < 0.05):7.3f} "
                  f"{np.mean(pa < 0.01):7.3f} {dt:6.2f}" + ("" if len(pa) == reps else
                                                           f"  ({reps - len(pa)} failed)"),
                  flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--sizes", default="500,5000,50000")
    ap.add_argument("--reps", type=int, default=300)
    ap.add_argument("--null-n", type=int, default=50_000)
    ap.add_argument("--bootstrap", type=int, default=49)
    ap.add_argument("--bootstrap-reps", type=int, default=100)
    ap.add_argument("--bootstrap-n", type=int, default=500)
    ap.add_argument("--only", default=",".join(SCENARIOS))
    ap.add_argument("--tables", default="picks,null,bootstrap")
    args = ap.parse_args()
    scenarios = args.only.split(",")
    tables = args.tables.split(",")
    if "picks" in tables:
        picks(scenarios, [int(n) for n in args.sizes.split(",")], args.seeds)
    if "null" in tables:
        null(scenarios, args.null_n, args.reps)
    if "bootstrap" in tables:
        null(scenarios, args.bootstrap_n, args.bootstrap_reps, args.bootstrap)


if __name__ == "__main__":
    main()
