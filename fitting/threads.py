"""BLAS on one thread where the fitting layer does its small linear algebra.

The p-values' eigenvalue problems (``gof.asymptotic_p``: ``eigvalsh`` of a 321 × 321 kernel)
and the Fisher-information solves are far too small to gain from BLAS threads, and lose to
them: on a busy 2-core machine a multi-threaded OpenBLAS spins its threads against the other
processes, and one ``eigvalsh`` took 0.5-1 s instead of 4-8 ms (a fit of n = 1,000: 1.88 s
instead of 0.064 s). A multi-threaded OpenBLAS also sums in another order and moves p-values
in their last digits, so a fit would depend on where it ran. The library's entry points
(``fit``, ``run_bootstrap``, ``arrival_report``) therefore run under ``one_blas_thread``,
whoever calls them, and give the caller's setting back when they return.
"""
from __future__ import annotations

import functools
from typing import Callable, TypeVar

from threadpoolctl import ThreadpoolController

__all__ = ["one_blas_thread"]

F = TypeVar("F", bound=Callable)


@functools.cache
def _blas() -> ThreadpoolController:
    """This process's BLAS libraries, looked up once (``threadpool_limits`` looks them up at
    every call: 2-9 ms). First called by a fit, once this layer has loaded NumPy and SciPy."""
    return ThreadpoolController()


def one_blas_thread(fn: F) -> F:
    """``fn`` run with every BLAS library of the process on one thread."""
    @functools.wraps(fn)
    def limited(*args, **kwargs):
        with _blas().limit(limits=1, user_api="blas"):
            return fn(*args, **kwargs)
    return limited                                       # type: ignore[return-value]
