"""Numerical maximum likelihood for the laws and observation models without a closed form.

Parameters are optimised on an unconstrained scale (log for positive ones, logit for
probabilities), by BFGS with central-difference gradients on the mean log-likelihood per
observation (steps of ``FD_REL_STEP``, relative: quadrature leaves the likelihood of grid cells
about 1e-11 of noise, which SciPy's default step of ~6e-6 would turn into gradients noisier than
the tolerance, and BFGS would spend hundreds of evaluations on it), polished by Nelder–Mead
when BFGS loses precision in a line search. A likelihood still rising after ``MAX_ITER`` steps
runs along a ridge toward a limit law (a normal truncated far from its mean becomes an
exponential): the value reached is kept.
"""
from __future__ import annotations

from typing import Callable

import numpy as np
from scipy import optimize, special

__all__ = ["maximize", "to_free", "from_free"]

PENALTY = 1e300
MAX_ITER = 40
FD_REL_STEP = 1e-4


def to_free(values, domains) -> np.ndarray:
    """Parameters → unconstrained coordinates (``domains``: positive | real | unit each)."""
    out = []
    for v, d in zip(values, domains):
        out.append(np.log(v) if d == "positive" else special.logit(v) if d == "unit" else v)
    return np.array(out, float)


def from_free(phi, domains) -> list[float]:
    out = []
    for v, d in zip(phi, domains):
        out.append(float(np.exp(v) if d == "positive" else special.expit(v) if d == "unit"
                         else v))
    return out


def maximize(mean_loglik: Callable[[list[float]], float], start, domains) -> list[float]:
    """Parameters maximising ``mean_loglik`` (a log-likelihood per observation), from
    ``start``; ValueError when no finite value is found near it."""
    def objective(phi: np.ndarray) -> float:
        with np.errstate(all="ignore"):
            try:
                v = mean_loglik(from_free(phi, domains))
            except (ValueError, OverflowError, ZeroDivisionError):
                return PENALTY
        return -v if np.isfinite(v) else PENALTY

    phi0 = to_free(start, domains)
    f0 = objective(phi0)
    if f0 >= PENALTY:
        raise ValueError("the likelihood is zero at the starting point")
    res = optimize.minimize(objective, phi0, method="BFGS", jac="3-point",
                            options={"gtol": 1e-6, "maxiter": MAX_ITER,
                                     "finite_diff_rel_step": FD_REL_STEP})
    best = res.x if res.fun <= f0 else phi0
    if res.status == 2:                 # precision lost in the line search: polish
        polish = optimize.minimize(objective, best, method="Nelder-Mead",
                                   options={"xatol": 1e-9, "fatol": 1e-13,
                                            "maxfev": 5 * MAX_ITER})
        if polish.fun <= objective(best):
            best = polish.x
    return from_free(best, domains)
