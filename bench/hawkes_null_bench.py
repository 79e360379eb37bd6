"""How often the Hawkes fit is preferred to the Poisson process on Poisson starts (issue 35).

The Hawkes process nests the Poisson one at η = 0, where its decay β is not identified: the
likelihood ratio LR = 2(ℓ_Hawkes − ℓ_Poisson) is then the supremum over β of a process of
(boundary) χ² variables, larger than any one of them (Davies 1987), so AIC's rule (LR > 4)
calls Poisson starts clustered far more often than its nominal rate. This bench draws Poisson
streams of n starts with NumPy, fits them with ``fit_hawkes`` and prints the quantiles of LR
under that null, the share AIC alone would call clustered, and the share above
``fitting.hawkes.CRITICAL_LR`` (the 1 % level the fit uses).

    python bench/hawkes_null_bench.py [--sizes 1000 3000 10000 30000 100000] [--seeds 300]
"""
from __future__ import annotations

import argparse
import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")   # as wagon fit runs its fits

import numpy as np  # noqa: E402

from wagon.fitting.hawkes import CRITICAL_LR, fit_hawkes  # noqa: E402


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--sizes", type=int, nargs="+", default=[1000, 3000, 10000, 30000, 100000])
    p.add_argument("--seeds", type=int, default=300)
    a = p.parse_args()
    print(f"LR = 2(loglik Hawkes - loglik Poisson) on Poisson starts, {a.seeds} streams a size; "
          f"CRITICAL_LR = {CRITICAL_LR}")
    print(f"{'starts':>8}  {'median':>6}  {'90 %':>6}  {'95 %':>6}  {'99 %':>6}  {'max':>6}  "
          f"{'AIC (LR > 4)':>12}  {'LR > critical':>13}")
    for n in a.sizes:
        lr = np.array([2 * (f.loglik - f.poisson_loglik) for f in (
            fit_hawkes(np.cumsum(np.random.default_rng([n, s]).exponential(1.0, n)))
            for s in range(a.seeds))])
        q = np.quantile(lr, [0.5, 0.9, 0.95, 0.99])
        print(f"{n:>8,}  " + "  ".join(f"{x:6.2f}" for x in (*q, lr.max()))
              + f"  {np.mean(lr > 4):12.1%}  {np.mean(lr > CRITICAL_LR):13.1%}")


if __name__ == "__main__":
    main()
