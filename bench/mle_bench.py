"""Numerical MLEs: wagon's Newton (``wagon.fitting.mle.maximize``) against SciPy's BFGS on the
same likelihoods, in the same run.

Random samples (lognormal, Weibull, exponential, Lomax, gamma, inverse Gaussian; n of 30, 200
or 3,000) recorded four ways — whole-second gaps, think times on the grid within [2, 600],
counts from 1, exact values truncated below — and every continuous law whose MLE is numerical
there fitted twice: by wagon, and by ``scipy.optimize.minimize(method="BFGS")`` with
3-point gradients on the same mean log-likelihood, the same free coordinates and start (what
wagon used before; BFGS's own polish by Nelder–Mead when it loses precision included). Prints
the likelihood evaluations and CPU time of each (the ratio), and how the log-likelihoods
reached compare (per observation): better, worse and their largest gaps, apart for the normal,
which on such data runs along a ridge toward its limit law (no maximum: where either stops is
arbitrary).

    python bench/mle_bench.py [--samples 40] [--seed 1]
"""
from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
from scipy import optimize, stats

import wagon.fitting.likelihood as likelihood
from wagon.fitting import LAWS, Observation, gof
from wagon.fitting.laws import Sample
from wagon.fitting.mle import PENALTY, from_free, negated, to_free

LAW_NAMES = ("exponential", "normal", "lognormal", "weibull", "pareto", "lomax",
             "inverse_gaussian", "gamma", "loglogistic")


def scipy_bfgs(mean_loglik, start, domains) -> list[float]:
    """The baseline: SciPy's BFGS, 3-point gradients (steps 1e-4, relative), 40 iterations,
    Nelder–Mead polish when it loses precision."""
    objective = negated(mean_loglik, domains)
    phi0 = to_free(start, domains)
    f0 = objective(phi0)
    if f0 >= PENALTY:
        raise ValueError("the likelihood is zero at the starting point")
    res = optimize.minimize(objective, phi0, method="BFGS", jac="3-point",
                            options={"gtol": 1e-6, "maxiter": 40, "finite_diff_rel_step": 1e-4})
    best = res.x if res.fun <= f0 else phi0
    if res.status == 2:
        polish = optimize.minimize(objective, best, method="Nelder-Mead",
                                   options={"xatol": 1e-9, "fatol": 1e-13, "maxfev": 200})
        if polish.fun <= objective(best):
            best = polish.x
    return from_free(best, domains)


def samples(rng: np.random.Generator, count: int):
    """(sample, how it was recorded) pairs drawn as the module docstring says."""
    laws = [lambda n: stats.lognorm(s=rng.uniform(0.3, 2), scale=np.exp(rng.uniform(0, 4))),
            lambda n: stats.weibull_min(c=rng.uniform(0.4, 3), scale=rng.uniform(1, 100)),
            lambda n: stats.expon(scale=rng.uniform(0.3, 200)),
            lambda n: stats.lomax(c=rng.uniform(0.5, 5), scale=rng.uniform(1, 50)),
            lambda n: stats.gamma(a=rng.uniform(0.3, 5), scale=rng.uniform(1, 50)),
            lambda n: stats.invgauss(mu=rng.uniform(0.2, 3), scale=rng.uniform(1, 30))]
    out = []
    while len(out) < count:
        n = int(rng.choice([30, 200, 3000]))
        x = laws[rng.integers(len(laws))](n).rvs(n, random_state=rng)
        kind = rng.choice(["gaps", "think", "counts", "truncated"])
        if kind == "gaps":
            obs, x = Observation.grid(1.0, lower=0.0), np.floor(x + rng.random(n))
        elif kind == "think":
            x = np.floor(x + rng.random(n))
            obs, x = Observation.grid(1.0, lower=2, upper=600), x[(x >= 2) & (x <= 600)]
        elif kind == "counts":
            obs, x = Observation.counts(1), np.maximum(1, np.round(x))
        else:
            lo = float(np.quantile(x, 0.1))
            obs, x = Observation.exact(lower=lo), x[x >= lo]
        if len(x) >= 5 and np.ptp(x) > 0:
            out.append((Sample(x, observation=obs), kind))
    return out


wagon_maximize = likelihood.maximize


def fitted(law, s: Sample, maximizer) -> tuple[float, int, float]:
    """(mean log-likelihood reached, evaluations, CPU seconds) of ``law``'s numerical MLE."""
    calls = [0]

    def counting(f, start, domains):
        def g(v):
            calls[0] += 1
            return f(v)
        return maximizer(g, start, domains)
    likelihood.maximize = counting
    try:
        t = time.process_time()
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = likelihood.make_model(law, s)
            params = model.estimate(None)
            cpu = time.process_time() - t
            ll = model.measure(params, gof.bin_edges(s))[0] / s.n
    finally:
        likelihood.maximize = wagon_maximize
    return ll, calls[0], cpu


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", type=int, default=40)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    totals = {"wagon": [0, 0.0], "scipy": [0, 0.0]}
    gaps: dict[str, list[float]] = {"other": [], "normal": []}
    fits = 0
    for s, kind in samples(np.random.default_rng(args.seed), args.samples):
        for name in LAW_NAMES:
            law = LAWS[name]
            try:
                ours = fitted(law, s, wagon_maximize)
                theirs = fitted(law, s, scipy_bfgs)
            except Exception:                       # a law that cannot describe the sample
                continue
            if ours[1] == 0:                         # a closed form: nothing numerical
                continue
            fits += 1
            for key, r in (("wagon", ours), ("scipy", theirs)):
                totals[key][0] += r[1]
                totals[key][1] += r[2]
            gaps["normal" if name == "normal" else "other"].append(ours[0] - theirs[0])
    (ew, tw), (es, ts) = totals["wagon"], totals["scipy"]
    print(f"{fits} numerical MLEs on {args.samples} samples (seed {args.seed})")
    print(f"evaluations: wagon {ew:,}, scipy BFGS {es:,} ({es / ew:.2f}x)")
    print(f"CPU: wagon {tw:.2f} s, scipy BFGS {ts:.2f} s ({ts / tw:.2f}x)")
    for group, d in gaps.items():
        d = np.array(d)
        if len(d):
            print(f"log-likelihood per observation, wagon minus scipy, {group} laws ({len(d)}): "
                  f"higher by > 1e-7 in {int(np.sum(d > 1e-7))}, lower in "
                  f"{int(np.sum(d < -1e-7))}; largest {d.max():+.1e}, smallest {d.min():+.1e}")


if __name__ == "__main__":
    main()
