"""Standard errors and confidence intervals of a fitted law's parameters (docs/methods.md,
"Uncertainty of the parameters").

Every interval is read off the likelihood the MLE maximised (``likelihood.Objective``: of exact
values, counts, grid cells or a truncation window, on the distinct values with their counts),
over the free coordinates φ it was maximised on (``mle.to_free``: log for positive parameters,
logit for probabilities, log(a − 1) for Zipf's exponent):

- ``wald``: the observed information J = −n ∇²ℓ̄(φ̂) (ℓ̄ the mean log-likelihood, its Hessian
  by central differences: ``mle.derivatives``), cov(φ̂) = J⁻¹, the interval φ̂ ± z·se(φ̂) mapped
  back (a positive parameter gets a positive, asymmetric interval) and se(θ̂) = |dθ/dφ|·se(φ̂),
  the delta method;
- ``profile``, where J is not positive definite, φ̂ is not a stationary point (the search
  stopped on a ridge toward a limit law), or the likelihood is far from quadratic over the
  Wald interval (it falls by less than half or more than twice χ²₁/2 at an end: a boundary,
  such as the zero-truncated negative binomial's n → 0): {θⱼ : 2·(ℓ(θ̂) − max over the other
  parameters of ℓ) ≤ χ²₁(1 − α)}, each end found on φⱼ by doubling steps and Brent's root; no
  standard error;
- ``minimum``: a scale that is the sample minimum (the Pareto's, on exact or truncated values),
  where the likelihood has no maximum in the interior: log x₍₁₎ − log xₘ is exponential with rate
  r = n·xₘ·f(xₘ) (exactly so for the Pareto), hence xₘ ∈ [x₍₁₎·(α/2)^{1/r}, x₍₁₎·(1 − α/2)^{1/r}]
  and se ≈ x₍₁₎/r;
- ``fixed``: a parameter that is not estimated (a discrete law's ``loc``): no interval.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import optimize, stats

from .mle import derivatives, free_slope, from_free, maximize, negated, to_free

__all__ = ["ParamUncertainty", "Uncertainty", "uncertainty", "profile_interval",
           "inverse_information", "percentile_intervals", "LEVEL"]

LEVEL = 0.95                    # the level of the intervals reported (and of the profile's)
SINGULAR = 1e-7                 # an eigenvalue of J as a correlation matrix below: singular
STATIONARY = 0.05               # log-likelihood a Newton step would still gain: not the maximum
FREE_REACH = 30.0               # a profile searches φⱼ this far from φ̂ⱼ (e^30 for a scale)
BEYOND = 1e6                    # a drop standing for "outside" where ℓ is not finite
XTOL = 1e-6                     # Brent's tolerance on φⱼ, times max(1, |φ̂ⱼ|)
QUADRATIC = (0.5, 2.0)          # the drop at a Wald end over χ²₁/2 within: quadratic enough
NOT_QUADRATIC = ("the likelihood is far from quadratic over the Wald interval (a boundary or "
                 "a limit law)")


@dataclass(frozen=True)
class ParamUncertainty:
    """One parameter's standard error and interval, and what an interval at any level needs."""

    method: str                              # wald | profile | minimum | fixed | n/a
    value: float
    se: float | None = None                  # on the parameter's scale (None: ``note`` says)
    free: tuple[float, float] | None = None  # wald: (φ̂, se(φ̂)); minimum: (log x₍₁₎, 1/r)
    domain: str = "real"
    bounds: tuple[float, float] | None = None    # profile: the interval at LEVEL
    note: str = ""                           # why there is no standard error or interval

    def interval(self, alpha: float = 1 - LEVEL) -> tuple[float, float] | None:
        """The 1 − ``alpha`` interval (None for a fixed parameter or none found)."""
        if not 0 < alpha < 1:
            raise ValueError(f"alpha must be in (0, 1), got {alpha}")
        if self.method == "wald":
            phi, se = self.free
            half = stats.norm.isf(alpha / 2) * se
            lo, hi = from_free([phi - half, phi + half], [self.domain] * 2)
            return lo, hi
        if self.method == "minimum":
            log_x, inv_rate = self.free
            return (math.exp(log_x + inv_rate * math.log(alpha / 2)),
                    math.exp(log_x + inv_rate * math.log1p(-alpha / 2)))
        if self.method == "profile":
            if not math.isclose(alpha, 1 - LEVEL):
                raise ValueError(f"the profile-likelihood interval was computed at "
                                 f"{LEVEL:.0%} only")
            return self.bounds
        return None


@dataclass(frozen=True)
class Uncertainty:
    """The uncertainty of a fit: each parameter's (``params``: every parameter of the fit, the
    fixed ones too) and the covariance of the Wald parameters on their own scale."""

    params: dict[str, ParamUncertainty]
    cov_names: tuple[str, ...] = ()
    cov: np.ndarray | None = None


def inverse_information(grad: np.ndarray, hess: np.ndarray, n: int
                         ) -> tuple[np.ndarray | None, str]:
    """cov(φ̂) = (n·H)⁻¹, H the Hessian of −ℓ̄ at φ̂; or None and why it is no covariance.
    Singular: an eigenvalue of H scaled to a unit diagonal (a correlation matrix, so that the
    parameters' units do not matter) below SINGULAR."""
    if not (np.all(np.isfinite(grad)) and np.all(np.isfinite(hess))):
        return None, "the likelihood is not finite around the estimate"
    diag = np.diag(hess)
    if np.any(diag <= 0) or np.linalg.eigvalsh(hess / np.sqrt(np.outer(diag, diag))).min() \
            <= SINGULAR:
        return None, "the observed information is singular or not positive definite"
    inverse = np.linalg.inv(hess)
    if n * float(grad @ inverse @ grad) / 2 > STATIONARY:
        return None, "the estimate is not a stationary point of the likelihood"
    return inverse / n, ""


def profile_interval(objective, values: list[float], j: int, n: int, step: float
                     ) -> tuple[float, float]:
    """The profile-likelihood interval at LEVEL of parameter ``j`` of ``objective`` (a mean
    log-likelihood of the estimated parameters' values) maximised at ``values`` for ``n``
    observations; ``step``: a first move of φⱼ (about its standard error). An end the
    likelihood does not reach within FREE_REACH of φ̂ⱼ (times |φ̂ⱼ| for a real parameter) is
    the domain's edge (0, 1 or ±inf)."""
    domains = list(objective.domains)
    phi = to_free(values, domains)
    others = [i for i in range(len(values)) if i != j]
    rest = [domains[i] for i in others]
    top = objective(values)
    cut = stats.chi2.ppf(LEVEL, 1) / 2

    def drop(psi: float) -> float:
        """n·(ℓ̂ − profile ℓ) − χ²₁/2 at φⱼ = ψ: positive outside the interval. The other
        parameters are maximised from the estimate's values, so that it is a function of ψ
        alone (Brent's method needs one)."""
        theta = from_free([psi], [domains[j]])[0]

        def with_j(vals) -> float:
            full = list(vals)
            full.insert(j, theta)
            return objective(full)
        try:
            with np.errstate(all="ignore"):
                best = maximize(with_j, [values[i] for i in others], rest) if others else []
                value = with_j(best)
        except (ValueError, OverflowError, ZeroDivisionError):
            return BEYOND
        return float(min(n * (top - value) - cut, BEYOND)) if math.isfinite(value) else BEYOND

    reach = FREE_REACH * (max(1.0, abs(phi[j])) if domains[j] == "real" else 1.0)

    def end(sign: int) -> float:
        inner, move = phi[j], step
        while move <= reach:
            outer = phi[j] + sign * move
            if drop(outer) > 0:
                psi = optimize.brentq(drop, min(inner, outer), max(inner, outer),
                                      xtol=XTOL * max(1.0, abs(phi[j])))
                return from_free([psi], [domains[j]])[0]
            inner, move = outer, 2 * move
        return from_free([sign * math.inf], [domains[j]])[0]
    return end(-1), end(1)


def _minimum(model, params: dict) -> ParamUncertainty:
    """A scale that is the sample minimum: log x₍₁₎ − log xₘ ~ Exp(r), r = n·xₘ·f(xₘ)."""
    x = params["scale"]
    rate = model.minimum_rate(params)
    if not (math.isfinite(rate) and rate > 0):
        return ParamUncertainty("n/a", x, note="the density at the sample minimum is not finite")
    return ParamUncertainty("minimum", x, se=x / rate, free=(math.log(x), 1 / rate),
                            domain="positive")


def uncertainty(model, params: dict) -> Uncertainty:
    """Standard errors and intervals of ``params``, the MLE of ``model`` (a
    ``likelihood.make_model``), by the module docstring's methods."""
    objective = model.objective(params)
    n = model.s.n
    out = {k: ParamUncertainty("fixed", float(v), note="not estimated")
           for k, v in params.items() if k not in objective.names}
    if "scale" in model.fixed(params):
        out["scale"] = _minimum(model, params)
    names, domains = objective.names, list(objective.domains)
    values = [params[k] for k in names]
    phi = to_free(values, domains)
    minus = negated(objective, domains)
    grad, hess = derivatives(minus, phi, minus(phi))
    cov_free, why = inverse_information(grad, hess, n)
    quadratic = (_quadratic(minus, phi, cov_free, n) if cov_free is not None
                 else np.zeros(len(names), bool))
    slope = free_slope(values, domains)
    for i, k in enumerate(names):
        if quadratic[i]:
            se_free = math.sqrt(cov_free[i, i])
            out[k] = ParamUncertainty("wald", values[i], float(abs(slope[i]) * se_free),
                                      (float(phi[i]), se_free), domains[i])
        else:
            out[k] = _profiled(objective, values, i, n, hess, why or NOT_QUADRATIC)
    wald = np.flatnonzero(quadratic)
    cov = (cov_free * np.outer(slope, slope))[np.ix_(wald, wald)] if len(wald) else None
    return Uncertainty(_in_order(out, params), tuple(names[i] for i in wald), cov)


def _quadratic(minus, phi: np.ndarray, cov_free: np.ndarray, n: int) -> np.ndarray:
    """Whether, for each parameter, the log-likelihood falls by χ²₁/2 (within QUADRATIC) at
    both ends of its Wald interval, the other parameters at their best under the quadratic
    model (φ̂ ± z·cov[:, j]/se(φ̂ⱼ)): 2k evaluations. Not so near a boundary or a limit law,
    where the likelihood flattens and a Wald interval says nothing of it."""
    z = stats.norm.isf((1 - LEVEL) / 2)
    top = minus(phi)
    out = []
    for j in range(len(phi)):
        move = z * cov_free[:, j] / math.sqrt(cov_free[j, j])
        ratios = [n * (minus(phi + sign * move) - top) / (z * z / 2) for sign in (-1, 1)]
        out.append(all(QUADRATIC[0] < r < QUADRATIC[1] for r in ratios))
    return np.array(out, bool)


def _profiled(objective, values: list[float], i: int, n: int, hess: np.ndarray, why: str
              ) -> ParamUncertainty:
    """Parameter ``i``'s profile-likelihood interval, first stepped by its standard error
    given the others (or a tenth of its free coordinate where the curvature is not positive);
    ``why``: why not a Wald interval."""
    domain = objective.domains[i]
    phi = to_free([values[i]], [domain])[0]
    curvature = n * hess[i, i] if np.isfinite(hess[i, i]) else 0.0
    step = 1 / math.sqrt(curvature) if curvature > 0 else 0.1 * max(1.0, abs(phi))
    try:
        bounds = profile_interval(objective, values, i, n, min(step, 1.0))
    except (ValueError, RuntimeError) as e:
        return ParamUncertainty("n/a", values[i], note=f"{why}; no profile interval: {e}")
    return ParamUncertainty("profile", values[i], domain=domain, bounds=bounds,
                            note=f"{why}: profile-likelihood interval, no standard error")


def _in_order(out: dict, params: dict) -> dict:
    return {k: out[k] for k in params}


def percentile_intervals(replicates: np.ndarray, names: list[str], alpha: float = 1 - LEVEL
                         ) -> dict[str, tuple[float, float]]:
    """The percentile bootstrap's intervals: the α/2 and 1 − α/2 quantiles of each parameter
    over the replicates that were refitted (rows of ``replicates``, NaN where not)."""
    done = replicates[np.all(np.isfinite(replicates), axis=1)]
    if not len(done):
        return {}
    q = np.quantile(done, [alpha / 2, 1 - alpha / 2], axis=0)
    return {k: (float(q[0, i]), float(q[1, i])) for i, k in enumerate(names)}
