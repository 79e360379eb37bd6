"""Start-up time: ``wagon --help`` and every command's ``--help`` against ``python -c pass``.

Each command runs ``--runs`` times in a fresh process; the best wall time of each is printed with
its ratio to the bare interpreter's, measured in the same run. Targets (issues 8 and 28): every
help screen in ≤ 0.3 s on this machine, a whole ``advise keepalive`` in ≤ 0.5 s. Also lists the
heavy modules a replay worker holds.

    python bench/startup_bench.py [--runs 15]
"""
from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import time

from wagon.cli import main

HEAVY = ("scipy", "statsmodels", "matplotlib", "pandas")


def best(cmd: list[str], runs: int) -> float:
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        times.append(time.perf_counter() - t)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=15)
    runs = ap.parse_args().runs
    py = sys.executable
    base = best([py, "-c", "pass"], runs)
    print(f"python -c pass                 {base * 1e3:7.1f} ms")
    wagon = [shutil.which("wagon") or py] + ([] if shutil.which("wagon") else ["-m", "wagon"])
    commands = {"python -m wagon --help": ([py, "-m", "wagon", "--help"], 0.3)}
    for sub in [[], *([c] for c in main.lazy), ["advise", "keepalive"]]:
        commands[" ".join(["wagon", *sub, "--help"])] = (wagon + sub + ["--help"], 0.3)
    commands["wagon advise keepalive --think ..."] = (
        wagon + ["advise", "keepalive", "--think", "lognormal(mu=3, sigma=1.1)", "--gain", "1"],
        0.5)
    for name, (cmd, target) in commands.items():
        t = best(cmd, runs)
        print(f"{name:34s} {t * 1e3:7.1f} ms  {t / base:5.2f}x python -c pass  "
              f"({'ok' if t <= target else 'OVER'} vs target {target * 1e3:.0f} ms)")
    code = ("import wagon.cli, wagon.replay.runner, sys; "
            f"print(' '.join(m for m in {HEAVY!r} if m in sys.modules) or 'none')")
    held = subprocess.run([py, "-c", code], capture_output=True, text=True, check=True).stdout
    print(f"heavy modules in a replay worker: {held.strip()}")


if __name__ == "__main__":
    main()
