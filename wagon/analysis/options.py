"""The analyses' options and defaults, apart from the analyses (SciPy, PyWavelets), so that
the commands' help is written without them."""
from __future__ import annotations

from dataclasses import dataclass

__all__ = ["CompareOptions", "DEFAULT_SCALES", "DEFAULT_CLICKS"]

DEFAULT_SCALES = (0.01, 0.1, 1.0)      # bin widths (s) at which requests are counted (Hurst)
DEFAULT_CLICKS = 5.0                # E[N] when neither a model nor the user gives one (keep-alive)


@dataclass(frozen=True)
class CompareOptions:
    """Equivalence margins: a KS distance ``margin`` for distributions (0.1: no probability
    level of A's law moved by more than 10 points in B's, docs/methods.md), a relative
    ``tolerance`` for numbers (half of it, absolute, for shares and exponents); each verdict
    is wrong with probability at most ``alpha``."""

    alpha: float = 0.05
    tolerance: float = 0.10
    margin: float = 0.10
