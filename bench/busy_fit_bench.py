"""A fit as a library call beside a busy sibling process (issue 28): ``wagon.fitting.fit`` limits
BLAS to one thread itself (``fitting.threads``), whoever calls it.

In one process that sets no thread variable (as a user's script or notebook would), with
NumPy's and SciPy's OpenBLAS left at their default (a thread per core): ``fit`` of a lognormal
sample of ``--n`` values (default 1,000, every candidate law), and the same function without
its limit (``fit.__wrapped__``: what the library did before), each run ``--repeat`` times,
interleaved, first on the idle machine, then beside a sibling process that keeps a core busy
(a Python loop). The median and the best of each; the target is median(busy) <= 2 x
median(idle) for ``fit``.

    python bench/busy_fit_bench.py [--n 1000] [--repeat 15]
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

for name in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "OMP_NUM_THREADS"):
    os.environ.pop(name, None)                    # as a user's own process would have them

import numpy as np  # noqa: E402
from threadpoolctl import threadpool_info  # noqa: E402

from wagon.fitting import fit  # noqa: E402

WAYS = {"fit (BLAS limited)": fit, "fit.__wrapped__ (no limit)": fit.__wrapped__}


def timings(x: np.ndarray, repeat: int) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {name: [] for name in WAYS}
    for _ in range(repeat):
        for name, f in WAYS.items():
            t0 = time.perf_counter()
            f(x)
            out[name].append(time.perf_counter() - t0)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1_000)
    ap.add_argument("--repeat", type=int, default=15)
    args = ap.parse_args()
    x = np.random.default_rng(7).lognormal(1.0, 0.8, args.n)
    fit(x)                                              # warm: imports, caches
    blas = [(i["internal_api"], i["num_threads"]) for i in threadpool_info()
            if i["user_api"] == "blas"]
    print(f"n = {args.n:,}; BLAS outside the fit: {blas}; {len(os.sched_getaffinity(0))} "
          f"usable cores; load {os.getloadavg()[0]:.2f}")
    idle = timings(x, args.repeat)
    sibling = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        time.sleep(0.5)
        busy = timings(x, args.repeat)
    finally:
        sibling.kill()
        sibling.wait()
    print(f"\n{'':28s} {'idle median':>12s} {'idle best':>10s} {'busy median':>12s} "
          f"{'busy best':>10s} {'busy/idle':>10s}")
    for name in WAYS:
        a, b = statistics.median(idle[name]), statistics.median(busy[name])
        print(f"{name:28s} {a * 1e3:10.1f}ms {min(idle[name]) * 1e3:8.1f}ms "
              f"{b * 1e3:10.1f}ms {min(busy[name]) * 1e3:8.1f}ms {b / a:9.2f}x")
    print("target: fit (BLAS limited) busy median <= 2x its idle median")


if __name__ == "__main__":
    main()
