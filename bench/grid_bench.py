"""The cost of fitting samples recorded on a fine grid: logs of millisecond or microsecond
timestamps, whose gaps and think times are cells of that grid (ties included).

The grid likelihood works on the distinct cells with their counts, two knots a cell and 16
quadrature nodes a knot, so its cost follows the number of distinct cells, not n. Two cases:

- ``gaps``: inter-arrival gaps of a Poisson process of mean gap ``--scale`` s, recorded as
  differences of floored times, ``Observation.grid(step, lower=0)``;
- ``think``: lognormal(3, 1.1) think times recorded as differences of floored times (a uniform
  phase), kept within [2, 600], ``Observation.grid(step, lower=2, upper=600)``.

Prints the distinct cells, then per law the CPU seconds of ``fit`` (MLE, λ², W², A², p-values),
the chosen parameters and the process's peak memory so far.

    python bench/grid_bench.py think --n 1000000 --step 1e-6 [--laws lognormal normal]
    python bench/grid_bench.py gaps --n 400000 --scale 100 --step 1e-3
"""
from __future__ import annotations

import argparse
import resource
import time

import numpy as np
from scipy import stats

from wagon.fitting import CONTINUOUS, Observation, fit


def sample(case: str, n: int, step: float, scale: float, rng: np.random.Generator
           ) -> tuple[np.ndarray, Observation]:
    """n values of ``case`` as a log of ``step`` s timestamps records them, and how."""
    if case == "gaps":
        cells = np.diff(np.floor(np.cumsum(rng.exponential(scale, n + 1)) / step))
        return cells * step, Observation.grid(step, lower=0.0)
    g = stats.lognorm(1.1, scale=np.exp(3)).rvs(size=2 * n, random_state=rng)
    d = np.floor(rng.random(len(g)) + g / step) * step
    return d[(d >= 2) & (d <= 600)][:n], Observation.grid(step, lower=2.0, upper=600.0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("case", choices=("gaps", "think"))
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--step", type=float, default=1e-3)
    ap.add_argument("--scale", type=float, default=100.0, help="mean gap (s), case gaps")
    ap.add_argument("--laws", nargs="*", default=list(CONTINUOUS))
    args = ap.parse_args()
    x, obs = sample(args.case, args.n, args.step, args.scale, np.random.default_rng(1))
    print(f"{args.case}: n = {len(x):,} on a {args.step:g} s grid, "
          f"{len(np.unique(x)):,} distinct cells, {int(np.sum(x == 0)):,} ties at 0")
    total = 0.0
    for law in args.laws:
        t0 = time.process_time()
        c = fit(x, candidates=[law], observation=obs, name=args.case).candidates[0]
        spent = time.process_time() - t0
        total += spent
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"{law:17s} {spent:7.2f} CPU-s  peak {peak:5.0f} MB  "
              + (c.error or " ".join(f"{k}={v:.5g}" for k, v in c.params.items())), flush=True)
    print(f"total {total:.1f} CPU-s")


if __name__ == "__main__":
    main()
