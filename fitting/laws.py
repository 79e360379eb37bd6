"""Candidate laws and their maximum-likelihood estimators (location fixed at 0).

Closed forms where they exist (exponential, normal, lognormal, Pareto, inverse Gaussian,
geometric, Poisson); one-dimensional Newton for Weibull (profile on log-data, so the scale of the
values does not matter) and gamma (on a scalar equation); two-dimensional Newton for the
log-logistic; a 1-D root for the negative binomial and the zero-truncated Poisson, bounded 1-D
searches for Zipf and for the Lomax (profile in its scale), a 2-D numerical MLE for the
zero-truncated negative binomial. Densities and distribution functions are SciPy's: each law
freezes a ``scipy.stats`` distribution (the zero-truncated laws are small ``rv_discrete``
subclasses of SciPy's Poisson and negative binomial).

These are the MLEs of exactly observed values (and of counts, for the discrete laws); samples
observed otherwise (rounded, on a whole-second grid, truncated) are fitted by ``likelihood``,
which starts from them.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property, partial
from typing import Callable

import numpy as np
from scipy import optimize, special, stats

from .mle import maximize
from .observation import EXACT, Observation

__all__ = ["Sample", "Law", "LAWS", "CONTINUOUS", "DISCRETE", "FitFailed", "law", "Frozen"]


class FitFailed(ValueError):
    """A law that cannot be fitted to this sample (the reason is the message)."""


class Sample:
    """A sample as its distinct sorted values ``v`` with their counts ``w`` (every statistic,
    likelihood and estimator is a weighted sum over them: exact, and as fast for 10⁶ values
    with 2,000 distinct ones as for 2,000), how it was observed, and the statistics every
    candidate shares. ``counts``: ``values`` are already sorted (ties allowed), with these
    counts."""

    def __init__(self, values, discrete: bool = False, observation: Observation | None = None,
                 counts=None) -> None:
        x = np.asarray(values, dtype=np.float64).ravel()
        if x.size == 0 or not np.all(np.isfinite(x)):
            raise ValueError("the sample is empty or holds NaN/inf values")
        if counts is None:
            self.v, w = np.unique(x, return_counts=True)
        else:
            self.v, w = x, np.asarray(counts, np.int64)
        self.w = w.astype(np.int64)
        self.n = int(self.w.sum())
        self.obs = observation or (Observation.counts() if discrete else EXACT)
        self.discrete = self.obs.kind == "counts"
        if not self.discrete:
            self.support_min = 0
        elif self.obs.support_min is not None:
            self.support_min = int(self.obs.support_min)
        else:
            self.support_min = int(min(1.0, max(0.0, np.floor(self.v[0]))))
        self.unit = self.obs.step if self.obs.kind == "grid" else 1.0

    @cached_property
    def cum(self) -> np.ndarray:
        """Values at or below each distinct value (cumulative counts)."""
        return np.cumsum(self.w)

    def at(self, ranks) -> np.ndarray:
        """The values of the sorted sample at 0-based ``ranks``."""
        return self.v[np.searchsorted(self.cum, ranks, side="right")]

    def below(self, edges: np.ndarray) -> np.ndarray:
        """How many values are below each of ``edges``."""
        return np.concatenate(([0], self.cum))[np.searchsorted(self.v, edges, side="left")]

    def median_of(self, f: np.ndarray) -> float:
        """``np.median`` of f(X) for an increasing f given at the distinct values."""
        lo, hi = f[np.searchsorted(self.cum, [(self.n - 1) // 2, self.n // 2], side="right")]
        return float((lo + hi) / 2)

    @property
    def x(self) -> np.ndarray:
        """Every value, sorted (rare uses: the statistics work on ``v`` and ``w``)."""
        return np.repeat(self.v, self.w)

    @cached_property
    def mean(self) -> float:
        return float(self.w @ self.v) / self.n

    @cached_property
    def var(self) -> float:
        return float(self.w @ (self.v - self.mean) ** 2) / self.n

    @cached_property
    def positive(self) -> bool:
        return bool(self.v[0] > 0)

    @cached_property
    def log(self) -> np.ndarray:
        """log of the distinct values."""
        return np.log(self.v)

    @cached_property
    def log_mean(self) -> float:
        return float(self.w @ self.log) / self.n

    @cached_property
    def log_std(self) -> float:
        return float(np.sqrt(self.w @ (self.log - self.log_mean) ** 2 / self.n))

    @property
    def counts(self) -> tuple[np.ndarray, np.ndarray]:
        """Distinct values and how often each occurs."""
        return self.v, self.w

    @cached_property
    def cells(self) -> tuple[np.ndarray, np.ndarray]:
        """Distinct integer cells (values in units of the grid step) and their counts."""
        cells, at = np.unique(np.round(self.v / self.unit), return_inverse=True)
        return cells, np.bincount(at.ravel(), weights=self.w).astype(np.int64)


class Frozen:
    """A SciPy distribution at fixed parameters — the methods of SciPy's frozen distributions,
    without building a new distribution object per freeze (SciPy's costs 0.2 ms, which the
    numerical MLEs would pay at every step).

    ``cdf`` and ``sf`` of a continuous law at an array of points inside its support call the
    law's own formula (``_cdf``, ``_sf``: what a SciPy distribution defines) on the
    standardised points, as SciPy's public method does once it has checked the parameters and
    masked the points outside the support: checks made here once per freeze instead of at
    every call (about 20 µs each, and the cell likelihoods make thousands). Any other point,
    scalar or parameter goes through SciPy's public method."""

    AT_A_VALUE = frozenset("ppf isf pdf logpdf pmf logpmf logcdf logsf moment".split())
    OF_THE_LAW = frozenset("mean var std median support entropy".split())

    def __init__(self, dist, *args, **kwds) -> None:
        self.dist, self.args, self.kwds = dist, args, kwds
        self.integrated: Callable | None = None     # (x, upper) → ∫₀ˣ F, or ∫ₓ^∞ S where upper
        self._standard: tuple | None = None         # (shapes, loc, scale, support): checked
        if isinstance(dist, stats.rv_continuous):
            shapes, loc, scale = dist._parse_args(*args, **kwds)
            shapes = tuple(map(np.asarray, shapes))
            loc, scale = np.asarray(loc), np.asarray(scale)
            if (all(v.ndim == 0 for v in (*shapes, loc, scale)) and scale > 0
                    and bool(dist._argcheck(*shapes))):
                self._standard = shapes, loc, scale, dist._get_support(*shapes)

    def __repr__(self) -> str:
        return f"Frozen({self.dist.name}, {self.args}, {self.kwds})"

    def __getattr__(self, name: str):
        """SciPy's method with the parameters bound: ``cdf(x)``, ``mean()``, ..."""
        if name in Frozen.AT_A_VALUE:
            method = getattr(self.dist, name)
            return lambda x: method(x, *self.args, **self.kwds)
        if name in Frozen.OF_THE_LAW:
            method = getattr(self.dist, name)
            return lambda: method(*self.args, **self.kwds)
        raise AttributeError(name)

    def cdf(self, x):
        return self._in_support("cdf", x)

    def sf(self, x):
        return self._in_support("sf", x)

    def _in_support(self, name: str, x):
        """SciPy's ``name`` (cdf or sf) at ``x``: its formula directly on an array of points
        inside the open support of valid parameters (class docstring), else its method."""
        if self._standard is not None and np.size(x) > 0 and np.ndim(x) > 0:
            shapes, loc, scale, (a, b) = self._standard
            x = np.asarray(x)
            z = np.asarray((x - loc if loc else x) / scale,      # x - 0 is x, bit for bit
                           dtype=np.promote_types(x.dtype, np.float64))
            if z.min() > a and z.max() < b:                       # False when a NaN is there
                # shapes as arrays of z's shape, as SciPy's argsreduce hands them: NumPy
                # computes x ** 0-d array by a faster formula (1/x for -1) than pow, 1 ulp apart
                return getattr(self.dist, "_" + name)(
                    z, *(np.broadcast_to(c, z.shape) for c in shapes))
        return getattr(self.dist, name)(x, *self.args, **self.kwds)

    def rvs(self, size=None, random_state=None):
        return self.dist.rvs(*self.args, size=size, random_state=random_state, **self.kwds)

    def stats(self, moments="mv"):
        return self.dist.stats(*self.args, moments=moments, **self.kwds)

    def interval(self, confidence):
        return self.dist.interval(confidence, *self.args, **self.kwds)


@dataclass(frozen=True)
class Law:
    """A candidate family: its estimator and how its parameters freeze a SciPy distribution."""

    name: str
    kind: str                                   # "continuous" or "discrete"
    params: tuple[str, ...]                     # estimated parameters (discrete laws also carry
                                                # a fixed integer ``loc``: where support starts)
    positive: bool                              # needs values > 0
    estimate: Callable[[Sample], dict]
    make: Callable[..., Frozen]
    domains: tuple[str, ...] = ()               # per parameter: positive (default) | real |
                                                # unit | above_one (mle.to_free)
    support_from: int | None = None             # discrete laws whose support is fixed (1: the
                                                # zero-truncated ones) rather than shifted by loc
    scale_at_min: bool = False                  # Pareto: its scale is the sample minimum (MLE)
    integrated: Callable | None = None          # (params, x, upper) → ∫₀ˣ F, or ∫ₓ^∞ S where
                                                # ``upper``, in closed form,
                                                # where SciPy's F is too slow for quadrature
    median: Callable | None = None              # params → the median in closed form, SciPy's
                                                # own ppf(0.5) formula without its argument
                                                # checks (the cell likelihoods ask at each step)

    def __reduce__(self):
        """Pickled by name (its functions are lambdas): a fit report crosses processes."""
        return law, (self.name,)

    @property
    def nparams(self) -> int:
        return len(self.params)

    def takes(self) -> tuple[str, ...]:
        """The parameters ``freeze`` takes: the estimated ones, and a discrete law's ``loc``
        where its support is shifted rather than fixed."""
        shifted = self.kind == "discrete" and self.support_from is None
        return self.params + (("loc",) if shifted else ())

    def freeze(self, params: dict) -> Frozen:
        """The distribution of ``params``; TypeError naming the parameters the law takes
        when they are others."""
        if params.keys() != set(self.takes()):
            raise TypeError(f"{self.name} takes {', '.join(self.takes())}, not "
                            f"{', '.join(map(str, params)) or 'none'}")
        frozen = self.make(**params)
        if self.integrated is not None:
            frozen.integrated = partial(self.integrated, params)
        if self.median is not None:
            frozen.median = partial(self.median, params)
        return frozen

    @property
    def domain(self) -> tuple[str, ...]:
        return self.domains or ("positive",) * self.nparams


def _need_spread(s: Sample) -> None:
    if s.v[0] == s.v[-1]:
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
    xm = float(s.v[0])
    total = float(s.w @ (s.log - np.log(xm)))
    if total <= 0:
        raise FitFailed("all values are equal")
    return {"shape": s.n / total, "scale": xm}


def _inverse_gaussian(s: Sample) -> dict:
    m = s.mean
    denom = float(s.w @ (1.0 / s.v) - s.n / m)
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
        w = s.w * np.exp(ku - ku.max())
        s0, s1, s2 = w.sum(), w @ u, w @ (u * u)
        g = s1 / s0 - 1.0 / k
        dg = s2 / s0 - (s1 / s0) ** 2 + 1.0 / k ** 2
        step = g / dg
        k = k - step if k - step > 0 else k / 2
        if abs(step) <= 1e-12 * k:
            break
    ku = k * u
    top = ku.max()
    scale = np.exp(s.log_mean + (np.log(s.w @ np.exp(ku - top) / s.n) + top) / k)
    return {"shape": float(k), "scale": float(scale)}


def _gamma_integrated(params: dict, x: np.ndarray, upper: np.ndarray) -> np.ndarray:
    """∫₀ˣ F = x·P(k, x/θ) − kθ·P(k + 1, x/θ), or ∫ₓ^∞ S = kθ·Q(k + 1, x/θ) − x·Q(k, x/θ) where
    ``upper`` (the side that does not cancel; each computed only where it is asked for)."""
    k, theta = params["shape"], params["scale"]
    out = np.where(upper, k * theta - x, 0.0)                 # x ≤ 0: F = 0, S = 1 below it
    lo, hi = ~upper & (x > 0), upper & (x > 0)
    z_lo, z_hi = x[lo] / theta, x[hi] / theta
    out[lo] = x[lo] * special.gammainc(k, z_lo) - k * theta * special.gammainc(k + 1, z_lo)
    out[hi] = k * theta * special.gammaincc(k + 1, z_hi) - x[hi] * special.gammaincc(k, z_hi)
    return out


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
    y, n, c = s.log, s.n, s.w

    def state(mu: float, sc: float) -> tuple[float, np.ndarray]:
        z = (y - mu) / sc
        return float(-(c @ z) - n * np.log(sc) - 2 * (c @ np.logaddexp(0, -z))), z

    mu, sc = s.median_of(y), s.log_std * np.sqrt(3) / np.pi
    current, z = state(mu, sc)
    for _ in range(100):
        p = special.expit(z)
        a, q = c * (1 - 2 * p), c * p * (1 - p)
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


def _lomax(s: Sample) -> dict:
    """Pareto II: for a scale σ the shape is n/Σ log(1 + x/σ); the profile in θ = log σ is
    minimised through the root of its derivative, −R/T + 1 − R/n with T = Σ log(1 + x/σ),
    R = Σ x/(σ + x). A finite maximum exists only when the coefficient of variation exceeds 1
    (otherwise the likelihood grows toward the exponential limit, shape and scale → ∞)."""
    _need_spread(s)
    if s.var <= s.mean ** 2:
        raise FitFailed("coefficient of variation ≤ 1: no finite maximum (the exponential "
                        "limit fits better)")
    def slope(x: np.ndarray, c: np.ndarray, theta: float) -> float:
        sigma = np.exp(theta)
        t = float(c @ np.log1p(x / sigma))
        r = float(c @ (x / (sigma + x)))
        return -r / t + 1 - r / c.sum()

    def root(x: np.ndarray, c: np.ndarray, lo: float, hi: float, step: float) -> float:
        for _ in range(60):
            if slope(x, c, hi) > 0:
                break
            hi += step
        else:
            raise FitFailed("no finite maximum (the exponential limit fits better)")
        for _ in range(60):
            if slope(x, c, lo) < 0:
                break
            lo -= step
        else:
            raise FitFailed("no maximum of the likelihood found")
        return optimize.brentq(lambda t: slope(x, c, t), lo, hi, xtol=1e-12)

    # bracket on every k-th sorted value, then solve on them all from there
    zeros = int(s.below(np.array([np.nextafter(0.0, 1.0)]))[0])
    start = float(np.log(s.at([zeros + (s.n - zeros - 1) // 2, zeros + (s.n - zeros) // 2])
                         .mean()))
    every = s.at(np.arange(0, s.n, max(1, s.n // 20_000)))
    rough = root(every, np.ones(len(every)), start, start, 2.0)
    sigma = float(np.exp(root(s.v, s.w.astype(float), rough - 0.05, rough + 0.05, 0.5)))
    return {"shape": s.n / float(s.w @ np.log1p(s.v / sigma)), "scale": sigma}


# --------------------------------------------------------------------------------------------
# discrete estimators: support starts at Sample.support_min (0 or 1), kept as a fixed ``loc``

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
    m, v = s.mean - s.support_min, s.var
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


def _need_from_one(s: Sample) -> None:
    if s.v[0] < 1:
        raise FitFailed("needs counts ≥ 1 (zero-truncated law)")
    if s.v[-1] == 1:
        raise FitFailed("all values are 1")


def _zt_poisson(s: Sample) -> dict:
    """μ from μ/(1 − e^−μ) = mean (increasing in μ, from 1 at μ → 0)."""
    _need_from_one(s)
    m = s.mean
    mu = optimize.brentq(lambda u: u / -np.expm1(-u) - m, 1e-12, m, xtol=1e-14, rtol=1e-15)
    return {"mu": float(mu)}


def _zt_negative_binomial(s: Sample) -> dict:
    """Numerical MLE of Σ log nbinom(k; r, p) − n log(1 − p^r) over (r, p), on distinct values
    with their counts."""
    _need_from_one(s)
    values, counts = s.counts
    m, v = s.mean, s.var
    r0 = m * m / (v - m) if v > m else 10.0
    start = [r0, r0 / (r0 + m)]

    def mean_loglik(params: list[float]) -> float:
        r, p = params
        log_p0 = r * np.log(p)
        return float(counts @ stats.nbinom.logpmf(values, r, p)) / s.n \
            - float(np.log(-np.expm1(log_p0)))
    r, p = maximize(mean_loglik, start, ("positive", "unit"))
    return {"n": r, "p": p}


class _ZeroTruncated(stats.rv_discrete):
    """A law on 0, 1, 2, ... conditioned on being ≥ 1; subclasses name the base law."""

    base: stats.rv_discrete

    def _p0(self, *args):
        return self.base.pmf(0, *args)

    def _logpmf(self, k, *args):
        return self.base.logpmf(k, *args) - np.log1p(-self._p0(*args))

    def _pmf(self, k, *args):
        return np.exp(self._logpmf(k, *args))

    def _cdf(self, k, *args):
        p0 = self._p0(*args)
        return (self.base.cdf(k, *args) - p0) / (1 - p0)

    def _sf(self, k, *args):
        return self.base.sf(k, *args) / (1 - self._p0(*args))

    def _ppf(self, q, *args):
        p0 = self._p0(*args)
        return np.maximum(self.base.ppf(p0 + q * (1 - p0), *args), 1)

    def _stats(self, *args):
        p0 = self._p0(*args)
        m, v = self.base.stats(*args, moments="mv")
        mean = m / (1 - p0)
        return mean, (v + m * m) / (1 - p0) - mean * mean, None, None


class _ZTPoisson(_ZeroTruncated):
    base = stats.poisson

    def _argcheck(self, mu):
        return mu > 0


class _ZTNegativeBinomial(_ZeroTruncated):
    base = stats.nbinom

    def _argcheck(self, n, p):
        return (n > 0) & (p > 0) & (p < 1)


class _Zipf(type(stats.zipf)):
    """SciPy's Zipf law with its distribution function in closed form (Hurwitz ζ): SciPy sums
    the pmf up to k, which costs O(k) per value."""

    def _sf(self, k, a):
        return special.zeta(a, np.floor(k) + 1) / special.zeta(a)

    def _cdf(self, k, a):
        return 1 - self._sf(k, a)


class _LogLogistic(type(stats.fisk)):
    """SciPy's fisk (log-logistic) with its survival function in closed form, 1 / (1 + x^c):
    SciPy computes it through the Burr law's log-survival, 5e-12 off in the far tail, and the
    likelihood of whole-second cells there (differences of survival values) turned that into
    noise that stalled the numerical MLE (hundreds of evaluations instead of ~25)."""

    def _sf(self, x, c):
        with np.errstate(divide="ignore"):                      # x = 0: log 0 = -inf, S = 1
            return special.expit(-c * np.log(x))

    def _logsf(self, x, c):
        with np.errstate(divide="ignore"):
            return special.log_expit(-c * np.log(x))


zipf = _Zipf(a=1, name="zipf")
loglogistic = _LogLogistic(a=0.0, name="fisk")
zt_poisson = _ZTPoisson(a=1, name="zt_poisson", shapes="mu")
zt_nbinom = _ZTNegativeBinomial(a=1, name="zt_nbinom", shapes="n, p")

# --------------------------------------------------------------------------------------------

LAWS: dict[str, Law] = {law.name: law for law in (
    Law("exponential", "continuous", ("scale",), True, _exponential,
        lambda scale: Frozen(stats.expon, scale=scale),
        median=lambda p: float(-special.log1p(-0.5) * p["scale"])),
    Law("normal", "continuous", ("mu", "sigma"), False, _normal,
        lambda mu, sigma: Frozen(stats.norm, loc=mu, scale=sigma), ("real", "positive"),
        median=lambda p: p["mu"]),
    Law("lognormal", "continuous", ("mu", "sigma"), True, _lognormal,
        lambda mu, sigma: Frozen(stats.lognorm, s=sigma, scale=np.exp(mu)), ("real", "positive"),
        median=lambda p: float(np.exp(p["mu"]))),
    Law("weibull", "continuous", ("shape", "scale"), True, _weibull,
        lambda shape, scale: Frozen(stats.weibull_min, c=shape, scale=scale),
        median=lambda p: float(np.power(-special.log1p(-0.5), 1.0 / p["shape"]) * p["scale"])),
    Law("pareto", "continuous", ("shape", "scale"), True, _pareto,
        lambda shape, scale: Frozen(stats.pareto, b=shape, scale=scale), scale_at_min=True,
        median=lambda p: float(np.power(1 - 0.5, -1.0 / p["shape"]) * p["scale"])),
    Law("lomax", "continuous", ("shape", "scale"), True, _lomax,
        lambda shape, scale: Frozen(stats.lomax, c=shape, scale=scale),
        median=lambda p: float(special.expm1(-special.log1p(-0.5) / p["shape"]) * p["scale"])),
    Law("inverse_gaussian", "continuous", ("mu", "lambda"), True, _inverse_gaussian,
        lambda mu, **kw: Frozen(stats.invgauss, mu=mu / kw["lambda"], scale=kw["lambda"])),
    Law("gamma", "continuous", ("shape", "scale"), True, _gamma,
        lambda shape, scale: Frozen(stats.gamma, a=shape, scale=scale),
        integrated=_gamma_integrated),
    Law("loglogistic", "continuous", ("shape", "scale"), True, _loglogistic,
        lambda shape, scale: Frozen(loglogistic, c=shape, scale=scale),
        median=lambda p: p["scale"]),
    Law("geometric", "discrete", ("p",), False, _geometric,
        lambda p, loc: Frozen(stats.geom, p, loc=loc), ("unit",)),
    Law("poisson", "discrete", ("mu",), False, _poisson,
        lambda mu, loc: Frozen(stats.poisson, mu, loc=loc)),
    Law("negative_binomial", "discrete", ("n", "p"), False, _negative_binomial,
        lambda n, p, loc: Frozen(stats.nbinom, n, p, loc=loc), ("positive", "unit")),
    Law("zt_poisson", "discrete", ("mu",), False, _zt_poisson,
        lambda mu: Frozen(zt_poisson, mu), support_from=1),
    Law("zt_negative_binomial", "discrete", ("n", "p"), False, _zt_negative_binomial,
        lambda n, p: Frozen(zt_nbinom, n, p), ("positive", "unit"), support_from=1),
    Law("zipf", "discrete", ("a",), False, _zipf,
        lambda a, loc: Frozen(zipf, a, loc=loc), ("above_one",)),
)}

CONTINUOUS = tuple(n for n, law_ in LAWS.items() if law_.kind == "continuous")
DISCRETE = tuple(n for n, law_ in LAWS.items() if law_.kind == "discrete")


def law(name: str) -> Law:
    """The law called ``name`` (a KeyError lists the known ones)."""
    try:
        return LAWS[name]
    except KeyError:
        raise KeyError(f"unknown law {name!r}; known: {', '.join(LAWS)}") from None
