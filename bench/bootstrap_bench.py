"""The parametric bootstrap's cost per replicate, by law, with truncated draws by rejection (the
way ``fitting.likelihood.Truncated`` draws when the window holds ≥ ``REJECT_MASS`` of the law)
against inverse-transform draws (SciPy's ppf, the way it drew before), in the same run.

The sample is the NASA trace's think times (tests/data/, whole seconds within [2, 600]: how a
log records them), repeated ``--copies`` times (50: 222,250 values, the 1M-line log's count).
Each law is fitted once, then ``--replicates`` replicates are drawn as the data were recorded
and refitted (``fitting.report.run_bootstrap``); seconds per replicate, and the ratio.

    python bench/bootstrap_bench.py [--copies 50] [--replicates 4]
"""
from __future__ import annotations

import argparse
import math
import time
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

from wagon.fitting import fit, likelihood
from wagon.fitting.report import bootstrap_tasks, run_bootstrap
from wagon.modeling import FitOptions, fit_logs, observations

NASA = Path(__file__).resolve().parent.parent / "tests" / "data" / "nasa-aug95-morning.log.gz"


def per_replicate(task) -> float:
    """Seconds per replicate of one bootstrap task."""
    t0 = time.perf_counter()
    run_bootstrap(task)
    return (time.perf_counter() - t0) / task.replicates


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--copies", type=int, default=50)
    ap.add_argument("--replicates", type=int, default=4)
    args = ap.parse_args()
    result = fit_logs([str(NASA)], FitOptions())
    think = np.tile(result.sessions.samples["think"], args.copies)
    obs = observations(result.sessions)["think"]
    print(f"think times: {len(think):,} values, recorded {obs}")
    print(f"\n{'law':18s} {'rejection s':>12s} {'inverse s':>10s} {'speed-up':>9s}")
    totals = np.zeros(2)
    with threadpool_limits(limits=1, user_api="blas"):
        report = fit(think, observation=obs, name="think")
        for task in bootstrap_tasks(report, args.replicates, seed=0):
            reject = per_replicate(task)
            saved, likelihood.REJECT_MASS = likelihood.REJECT_MASS, math.inf
            try:
                inverse = per_replicate(task)
            finally:
                likelihood.REJECT_MASS = saved
            totals += reject, inverse
            print(f"{task.law:18s} {reject:12.3f} {inverse:10.3f} {inverse / reject:8.1f}x")
    print(f"{'all laws':18s} {totals[0]:12.3f} {totals[1]:10.3f} {totals[1] / totals[0]:8.1f}x")
    print(f"B = 1000 for this variable: {1000 * totals[0] / 60:.1f} CPU-minutes "
          f"(inverse transform: {1000 * totals[1] / 60:.1f})")


if __name__ == "__main__":
    main()
