"""Start-up time: ``wagon --help`` and ``wagon replay --help`` against ``python -c pass``.

Each command runs ``--runs`` times in a fresh process; the best wall time of each is printed with
its ratio to the bare interpreter's, measured in the same run. Target (issue 8): both help
commands in ≤ 0.3 s on this machine. Also lists the heavy modules a replay worker holds.

    python bench/startup_bench.py [--runs 15]
"""
from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import time

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
    commands = {"python -m wagon --help": [py, "-m", "wagon", "--help"],
                "python -m wagon replay --help": [py, "-m", "wagon", "replay", "--help"]}
    script = shutil.which("wagon")
    if script:
        commands["wagon --help (console script)"] = [script, "--help"]
        commands["wagon replay --help (script)"] = [script, "replay", "--help"]
    for name, cmd in commands.items():
        t = best(cmd, runs)
        print(f"{name:30s} {t * 1e3:7.1f} ms  {t / base:5.2f}x python -c pass  "
              f"({'ok' if t <= 0.3 else 'OVER'} vs target 300 ms)")
    code = ("import wagon.cli, wagon.replay.runner, sys; "
            f"print(' '.join(m for m in {HEAVY!r} if m in sys.modules) or 'none')")
    held = subprocess.run([py, "-c", code], capture_output=True, text=True, check=True).stdout
    print(f"heavy modules in a replay worker: {held.strip()}")


if __name__ == "__main__":
    main()
