"""Numerical maximum likelihood for the laws and observation models without a closed form.

Parameters are optimised on an unconstrained scale (log for positive ones, logit for
probabilities) by Newton's method on the mean log-likelihood per observation, with gradient and
Hessian from central differences (steps of ``FD_REL_STEP``, relative: quadrature leaves the
likelihood of grid cells about 1e-11 of noise, which shorter steps would turn into noisy
derivatives). The laws have one or two parameters, so a Hessian costs a few evaluations more
than a gradient, and from the exact-value MLE (the start the callers give) Newton reaches the
optimum in a few steps where BFGS, starting from the identity, spent tens to hundreds of
evaluations on its line searches. A Hessian that is not negative definite (away from the
optimum) is used with its eigenvalues' absolute values (the step still climbs); each step is
halved back until the likelihood rises, and a full step that gains more than ``EXPAND_GAIN`` is
doubled while that gains more (far from the optimum the quadratic model is short-sighted: along
a ridge it takes small steps). It stops when the gradient is below ``GTOL``, when a step would
gain or gains less than ``FTOL`` (the likelihood's own noise: nothing is left to find), or
after ``MAX_ITER`` steps: a likelihood still rising then runs along a ridge toward a limit law
(a normal truncated far from its mean becomes an exponential), and the value reached is kept.
"""
from __future__ import annotations

from typing import Callable

import numpy as np
from scipy import special

__all__ = ["maximize", "negated", "derivatives", "to_free", "from_free", "free_slope"]

PENALTY = 1e300
MAX_ITER = 20
FD_REL_STEP = 1e-4
GTOL = 1e-6                    # gradient of the mean log-likelihood, free coordinates
FTOL = 1e-11                   # gain of a step below the likelihood's noise: done
MAX_STEP = 4.0                 # a step moves a free coordinate x by at most this × max(1, |x|)
HALVINGS = 12                  # a step is halved at most this often before giving up
EXPAND_GAIN = 1e-6             # a full step that gains more is tried at twice its length


def to_free(values, domains) -> np.ndarray:
    """Parameters → unconstrained coordinates (``domains``: positive | real | unit | above_one
    each: log v, v, logit v, log(v − 1))."""
    out = []
    for v, d in zip(values, domains):
        out.append(np.log(v) if d == "positive" else special.logit(v) if d == "unit"
                   else np.log(v - 1) if d == "above_one" else v)
    return np.array(out, float)


def from_free(phi, domains) -> list[float]:
    out = []
    for v, d in zip(phi, domains):
        out.append(float(np.exp(v) if d == "positive" else special.expit(v) if d == "unit"
                         else 1 + np.exp(v) if d == "above_one" else v))
    return out


def free_slope(values, domains) -> np.ndarray:
    """dθ/dφ of each parameter θ at ``values`` (φ its free coordinate): the delta method's
    factor."""
    v, d = np.asarray(values, float), np.asarray(domains)
    return np.select([d == "positive", d == "unit", d == "above_one"], [v, v * (1 - v), v - 1],
                     1.0)


def derivatives(f: Callable[[np.ndarray], float], x: np.ndarray, fx: float
                ) -> tuple[np.ndarray, np.ndarray]:
    """Gradient and Hessian of ``f`` at ``x`` (``fx`` = f(x)) by central differences: 2k + 1
    evaluations for k coordinates, and two more per pair for the mixed derivatives."""
    k = len(x)
    h = FD_REL_STEP * np.maximum(1.0, np.abs(x))
    e = np.diag(h)
    plus = np.array([f(x + e[i]) for i in range(k)])
    minus = np.array([f(x - e[i]) for i in range(k)])
    grad = (plus - minus) / (2 * h)
    hess = np.diag((plus - 2 * fx + minus) / h ** 2)
    for i in range(k):
        for j in range(i + 1, k):
            both = f(x + e[i] + e[j]) + f(x - e[i] - e[j])
            hess[i, j] = hess[j, i] = (both - plus[i] - plus[j] - minus[i] - minus[j]
                                       + 2 * fx) / (2 * h[i] * h[j])
    return grad, hess


def newton_step(grad: np.ndarray, hess: np.ndarray, x: np.ndarray) -> np.ndarray:
    """The step toward a minimum: −H⁻¹g with H's eigenvalues taken in absolute value (floored
    at 1e-8 of the largest), each coordinate's move capped at ``MAX_STEP`` × max(1, |x|)."""
    lam, vec = np.linalg.eigh(hess)
    lam = np.maximum(np.abs(lam), 1e-8 * max(np.abs(lam).max(), 1e-300))
    step = -vec @ ((vec.T @ grad) / lam)
    cap = MAX_STEP * np.maximum(1.0, np.abs(x))
    return step * min(1.0, float(np.min(cap / np.maximum(np.abs(step), 1e-300))))


def negated(mean_loglik: Callable[[list[float]], float], domains
            ) -> Callable[[np.ndarray], float]:
    """What is minimised: −``mean_loglik`` of the free coordinates, ``PENALTY`` where the
    likelihood is zero, undefined or not finite."""
    def objective(phi: np.ndarray) -> float:
        with np.errstate(all="ignore"):
            try:
                v = mean_loglik(from_free(phi, domains))
            except (ValueError, OverflowError, ZeroDivisionError):
                return PENALTY
        return -v if np.isfinite(v) else PENALTY
    return objective


def maximize(mean_loglik: Callable[[list[float]], float], start, domains) -> list[float]:
    """Parameters maximising ``mean_loglik`` (a log-likelihood per observation), from
    ``start``; ValueError when no finite value is found near it."""
    if not len(start):
        return []                                   # nothing to estimate
    objective = negated(mean_loglik, domains)
    phi = to_free(start, domains)
    f = objective(phi)
    if f >= PENALTY:
        raise ValueError("the likelihood is zero at the starting point")
    for _ in range(MAX_ITER):
        grad, hess = derivatives(objective, phi, f)
        if not (np.all(np.isfinite(grad)) and np.all(np.isfinite(hess))):
            break                                   # at the edge of where the law is defined
        if np.max(np.abs(grad)) < GTOL:
            break
        step = newton_step(grad, hess, phi)
        if -float(grad @ step) < 2 * FTOL:          # the gain a quadratic model promises
            break
        for halved in range(HALVINGS):
            trial = objective(phi + step)
            if trial < f:
                break
            step = step / 2
        else:
            break                                   # no step gains: the optimum, to noise
        while not halved and f - trial > EXPAND_GAIN:   # a long way still: further along?
            further = objective(phi + 2 * step)
            if not further < trial - FTOL:
                break
            step, trial = 2 * step, further
        phi, gain, f = phi + step, f - trial, trial
        if gain < FTOL:
            break
    return from_free(phi, domains)
