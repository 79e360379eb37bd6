"""Candidate laws and their maximum-likelihood estimators (location fixed at 0).

Closed forms where they exist (exponential, normal, lognormal, Pareto, inverse Gaussian,
geometric, Poisson); one-dimensional Newton for Weibull (profile on log-data, so the scale of the
values does not matter) and gamma (on a scalar equation); two-dimensional Newton for the
log-logistic; a 1-D root for the negative binomial and a bounded 1-D search for Zipf. Densities
and distribution functions are SciPy's: each law freezes a ``scipy.stats`` distribution.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Callable

import numpy as np
from scipy import optimize, special, stats

__all__ = ["Sample", "Law", "LAWS", "CONTINUOUS", "DISCRETE", "FitFailed", "law"]


class FitFailed(ValueError):
    """A law that cannot be fitted to this sample (the reason is the message)."""


class Sample:
    """A sorted sample with the statistics every candidate shares, computed once."""

    def __init__(self, values, discrete: bool = False) -> None:
        x = np.asarray(values, dtype=np.float64).ravel()
        if x.size == 0 or not np.all(np.isfinite(x)):
            raise ValueError("the sample is empty or holds NaN/inf values")
        self.x = np.sort(x)
        self.n = len(x)
        self.discrete = discrete
        self.support_min = int(min(1.0, max(0.0, np.floor(self.x[0])))) if discrete else 0

    @cached_property
    def mean(self) -> float:
        return float(self.x.mean())

    @cached_property
    def var(self) -> float:
        return float(self.x.var())

    @cached_property
    def positive(self) -> bool:
        return bool(self.x[0] > 0)

    @cached_property
    def log(self) -> np.ndarray:
        return np.log(self.x)

    @cached_property
    def log_mean(self) -> float:
        return float(self.log.mean())

    @cached_property
    def log_std(self) -> float:
        return float(self.log.std())

    @cached_property
    def counts(self) -> tuple[np.ndarray, np.ndarray]:
        """Distinct values and how often each occurs (discrete samples)."""
        return np.unique(self.x, return_counts=True)


@dataclass(frozen=True)
class Law:
    """A candidate family: its estimator and how its parameters freeze a SciPy distribution."""

    name: str
    kind: str                                   # "continuous" or "discrete"
    params: tuple[str, ...]                     # estimated parameters (discrete laws also carry
                                                # a fixed integer ``loc``: where support starts)
    positive: bool                              # needs values > 0
    estimate: Callable[[Sample], dict]
    make: Callable[..., "stats.rv_frozen"]

    @property
    def nparams(self) -> int:
        return len(self.params)

    def freeze(self, params: dict) -> "stats.rv_frozen":
        return self.make(**params)


def _need_spread(s: Sample) -> None:
    if s.x[0] == s.x[-1]:
        raise FitFailed("all values are equal")


# --------------------------------------------------------------------------------------------
# continuous estimators

def _exponential(s: Sample) -> dict:
    return {"scale": s.mean}


def _normal(s: Sample) -> dict:
    _need_spread(s)
    return {"mu": s.mean, "sigma": float(np.sqrt(s.var))}


def _lognormal(s: Sample) -> dict:
    _need_spread(s)
    return {"mu": s.log_mean, "sigma": s.log_std}


def _pareto(s: Sample) -> dict:
    xm = float(s.x[0])
    total = float(np.sum(s.log - np.log(xm)))
    if total <= 0:
        raise FitFailed("all values are equal")
    return {"shape": s.n / total, "scale": xm}


def _inverse_gaussian(s: Sample) -> dict:
    m = s.mean
    denom = float(np.sum(1.0 / s.x) - s.n / m)
    if denom <= 0:
        raise FitFailed("all values are equal")
    return {"mu": m, "lambda": s.n / denom}


def _weibull(s: Sample) -> dict:
    """Newton on the shape k of the profile equation Σ w·u / Σ w = 1/k, u = centred log x."""
    _need_spread(s)
    u = s.log - s.log_mean
    k = 1.2825 / s.log_std                       # moment estimate: sd(log X) = π/(k√6)
    for _ in range(100):
        ku = k * u
        w = np.exp(ku - ku.max())
        s0, s1, s2 = w.sum(), w @ u, w @ (u * u)
        g = s1 / s0 - 1.0 / k
        dg = s2 / s0 - (s1 / s0) ** 2 + 1.0 / k ** 2
        step = g / dg
        k = k - step if k - step > 0 else k / 2
        if abs(step) <= 1e-12 * k:
            break
    ku = k * u
    top = ku.max()
    scale = np.exp(s.log_mean + (np.log(np.mean(np.exp(ku - top))) + top) / k)
    return {"shape": float(k), "scale": float(scale)}


def _gamma(s: Sample) -> dict:
    """Shape from log k − ψ(k) = log(mean) − mean(log x) by Newton from Minka's start."""
    r = np.log(s.mean) - s.log_mean
    if r <= 0:
        raise FitFailed("all values are equal")
    k = (3 - r + np.sqrt((r - 3) ** 2 + 24 * r)) / (12 * r)
    for _ in range(100):
        f = np.log(k) - special.digamma(k) - r
        df = 1 / k - special.polygamma(1, k)
        step = f / df
        k = k - step if k - step > 0 else k / 2
        if abs(step) <= 1e-13 * k:
            break
    return {"shape": float(k), "scale": s.mean / float(k)}


def _loglogistic(s: Sample) -> dict:
    """Logistic MLE on log x by Newton in (μ, s) with the exact Hessian, step-halving."""
    _need_spread(s)
    y, n = s.log, s.n

    def state(mu: float, sc: float) -> tuple[float, np.ndarray]:
        z = (y - mu) / sc
        return float(-z.sum() - n * np.log(sc) - 2 * np.logaddexp(0, -z).sum()), z

    mu, sc = float(np.median(y)), s.log_std * np.sqrt(3) / np.pi
    current, z = state(mu, sc)
    for _ in range(100):
        p = special.expit(z)
        a, q = 1 - 2 * p, p * (1 - p)
        az = a @ z
        g = np.array([-a.sum() / sc, -az / sc - n / sc])
        h_ms = (-2 * (q @ z) + a.sum()) / sc ** 2
        hess = np.array([[-2 * q.sum() / sc ** 2, h_ms],
                         [h_ms, (-2 * (q @ (z * z)) + 2 * az + n) / sc ** 2]])
        try:
            step = np.linalg.solve(hess, g)
        except np.linalg.LinAlgError:
            break
        t = 1.0
        while t > 1e-6:
            mu_new, sc_new = mu - t * step[0], sc - t * step[1]
            if sc_new > 0:
                value, z_new = state(mu_new, sc_new)
                if value >= current - 1e-12 * abs(current):
                    break
            t /= 2
        else:
            break
        done = abs(t * step[0]) <= 1e-12 * (1 + abs(mu)) and abs(t * step[1]) <= 1e-12 * sc
        mu, sc, current, z = mu_new, sc_new, value, z_new
        if done:
            break
    return {"shape": 1.0 / sc, "scale": float(np.exp(mu))}


# --------------------------------------------------------------------------------------------
# discrete estimators: support starts at Sample.support_min (0 or 1), kept as a fixed ``loc``

def _shifted(s: Sample) -> np.ndarray:
    return s.x - s.support_min


def _geometric(s: Sample) -> dict:
    m = s.mean - s.support_min + 1                # mean of the number of trials (≥ 1)
    return {"p": 1.0 / m, "loc": s.support_min - 1}


def _poisson(s: Sample) -> dict:
    m = s.mean - s.support_min
    if m <= 0:
        raise FitFailed("all values are equal")
    return {"mu": m, "loc": s.support_min}


def _negative_binomial(s: Sample) -> dict:
    """r from Σ ψ(k + r) − n ψ(r) + n log(r / (r + m)) = 0 (on distinct values), p = r/(r+m)."""
    values, counts = s.counts
    k = values - s.support_min
    m = float(_shifted(s).mean())
    v = float(_shifted(s).var())
    if v <= m:
        raise FitFailed("not over-dispersed (variance ≤ mean): the MLE is a Poisson")

    def score(log_r: float) -> float:
        r = np.exp(log_r)
        return float(counts @ special.digamma(k + r) - s.n * special.digamma(r)
                     + s.n * np.log(r / (r + m)))

    r0 = m * m / (v - m)
    lo, hi = np.log(r0) - 3, np.log(r0) + 3
    for _ in range(20):
        if score(lo) > 0 > score(hi) or score(lo) < 0 < score(hi):
            break
        lo, hi = lo - 3, hi + 3
    else:
        raise FitFailed("no maximum of the likelihood found")
    r = float(np.exp(optimize.brentq(score, lo, hi, xtol=1e-12)))
    return {"n": r, "p": r / (r + m), "loc": s.support_min}


def _zipf(s: Sample) -> dict:
    """a maximising −a Σ log k − n log ζ(a), k = value − support_min + 1 ≥ 1."""
    values, counts = s.counts
    sum_log = float(counts @ np.log(values - s.support_min + 1))
    if sum_log <= 0:
        raise FitFailed("all values are at the smallest one")
    res = optimize.minimize_scalar(lambda a: a * sum_log + s.n * np.log(special.zeta(a)),
                                   bounds=(1.0 + 1e-9, 50.0), method="bounded",
                                   options={"xatol": 1e-10})
    return {"a": float(res.x), "loc": s.support_min - 1}


# --------------------------------------------------------------------------------------------

LAWS: dict[str, Law] = {law.name: law for law in (
    Law("exponential", "continuous", ("scale",), True, _exponential,
        lambda scale: stats.expon(scale=scale)),
    Law("normal", "continuous", ("mu", "sigma"), False, _normal,
        lambda mu, sigma: stats.norm(loc=mu, scale=sigma)),
    Law("lognormal", "continuous", ("mu", "sigma"), True, _lognormal,
        lambda mu, sigma: stats.lognorm(s=sigma, scale=np.exp(mu))),
    Law("weibull", "continuous", ("shape", "scale"), True, _weibull,
        lambda shape, scale: stats.weibull_min(c=shape, scale=scale)),
    Law("pareto", "continuous", ("shape", "scale"), True, _pareto,
        lambda shape, scale: stats.pareto(b=shape, scale=scale)),
    Law("inverse_gaussian", "continuous", ("mu", "lambda"), True, _inverse_gaussian,
        lambda mu, **kw: stats.invgauss(mu=mu / kw["lambda"], scale=kw["lambda"])),
    Law("gamma", "continuous", ("shape", "scale"), True, _gamma,
        lambda shape, scale: stats.gamma(a=shape, scale=scale)),
    Law("loglogistic", "continuous", ("shape", "scale"), True, _loglogistic,
        lambda shape, scale: stats.fisk(c=shape, scale=scale)),
    Law("geometric", "discrete", ("p",), False, _geometric,
        lambda p, loc: stats.geom(p, loc=loc)),
    Law("poisson", "discrete", ("mu",), False, _poisson,
        lambda mu, loc: stats.poisson(mu, loc=loc)),
    Law("negative_binomial", "discrete", ("n", "p"), False, _negative_binomial,
        lambda n, p, loc: stats.nbinom(n, p, loc=loc)),
    Law("zipf", "discrete", ("a",), False, _zipf,
        lambda a, loc: stats.zipf(a, loc=loc)),
)}

CONTINUOUS = tuple(n for n, law_ in LAWS.items() if law_.kind == "continuous")
DISCRETE = tuple(n for n, law_ in LAWS.items() if law_.kind == "discrete")


def law(name: str) -> Law:
    """The law called ``name`` (a KeyError lists the known ones)."""
    try:
        return LAWS[name]
    except KeyError:
        raise KeyError(f"unknown law {name!r}; known: {', '.join(LAWS)}") from None
