"""``wagon sweep`` against servers of known capacity, on the sample's own model and client
classes (a quarter of the users on 56 kbit/s modems):

1. an idle nginx: every step must keep up (achieved within 10 % of offered) and no knee be
   claimed;
2. nginx limiting itself to R requests/s (``limit_req``, all clients together, burst B, the
   excess answered 503 at once): the knee and the largest served throughput must be within
   10 % of R.

The scenario: ``wagon fit`` of the bundled sample, ``wagon synth --duration D --speedup S
--seed 1``; its site built by ``wagon site build``. Prints each sweep's table (as ``wagon
sweep`` prints it) and the checks.

    python bench/sweep_bench.py [--rates 1,2,4,8] [--limited-rates 2,4,4.5,5,5.5,6,8]
                                [--limit 100] [--step-time 10] [--warmup 2]
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from wagon.analysis.capacity import SweepOptions, parse_rates, steps_text, sweep  # noqa: E402
from tests.servers import nginx  # noqa: E402

WAGON = [sys.executable, "-m", "wagon"]
DURATION, SPEEDUP = 2400.0, 10.0          # the scenario: 240 s of arrivals
BURST = 20                                # limit_req: requests served at once ahead of the rate


def scenario(tmp: Path, duration: float, speedup: float) -> Path:
    """The sample's model, synthesized (seed 1), and its site."""
    run = lambda *a: subprocess.run([*WAGON, *a], check=True, capture_output=True)  # noqa: E731
    run("fit", str(ROOT / "data" / "sample-combined.log.gz"), "-o", str(tmp / "model.json"))
    run("synth", str(tmp / "model.json"), "--duration", f"{duration:g}", "--speedup",
        f"{speedup:g}", "--seed", "1", "-o", str(tmp / "s.jsonl"))
    run("site", "build", "--scenario", str(tmp / "s.jsonl"), str(tmp / "site"))
    return tmp / "s.jsonl"


def measure(path: Path, url: str, rates: tuple[float, ...], a: argparse.Namespace) -> dict:
    began = time.perf_counter()
    out = sweep(str(path), SweepOptions(url, rates, step_time=a.step_time, warmup=a.warmup))
    print(steps_text(out), flush=True)
    print(f"calibrated drain {out['drain_s']:.1f} s; the sweep took "
          f"{time.perf_counter() - began:.0f} s")
    return out


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--rates", default="1,2,4,8")
    p.add_argument("--limited-rates", default="2,4,4.5,5,5.5,6,8")
    p.add_argument("--limit", type=int, default=100)
    p.add_argument("--step-time", type=float, default=10.0)
    p.add_argument("--warmup", type=float, default=2.0)
    a = p.parse_args()
    with tempfile.TemporaryDirectory(prefix="wagon-sweep-bench-") as d:
        tmp = Path(d)
        path = scenario(tmp, DURATION, SPEEDUP)
        print("== idle nginx")
        with nginx(tmp / "site", tmp / "ng1", access_log=False) as server:
            idle = measure(path, server.url, parse_rates(a.rates), a)
        worst = min(s["achieved_rps"] / s["offered_rps"] for s in idle["steps"])
        print(f"check: every step kept up {idle['kept_up']} (worst achieved/offered "
              f"{worst:.3f}); knee claimed: {idle['knee'] is not None}")
        print(f"== nginx limit_req rate={a.limit}r/s burst={BURST}")
        with nginx(tmp / "site", tmp / "ng2", access_log=False, limit_rate=a.limit,
                   limit_burst=BURST) as server:
            lim = measure(path, server.url, parse_rates(a.limited_rates), a)
        k = lim["knee"]
        knee = "none" if k is None else (f"{k['offered_rps']:.1f} requests/s offered "
                                         f"({k['offered_rps'] / a.limit - 1:+.1%} of R)")
        print(f"check: knee {knee}; largest served {lim['max_served_rps']:.1f} "
              f"({lim['max_served_rps'] / a.limit - 1:+.1%} of R = {a.limit})")


if __name__ == "__main__":
    main()
