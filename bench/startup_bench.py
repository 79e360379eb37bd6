"""Start-up time: ``wagon --help`` and every command's ``--help`` against ``python -c pass``.

Each command runs ``--runs`` times in a fresh process; the best wall time of each is printed with
its ratio to the bare interpreter's, measured in the same run. Targets (issues 8 and 28): every
help screen in ≤ 0.3 s on this machine, a whole ``advise keepalive`` in ≤ 0.5 s. Also lists the
heavy modules a replay worker holds.

    python bench/startup_bench.py [--runs 15]
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import time

from wagon.cli import main as cli

HEAVY = ("scipy", "statsmodels", "matplotlib", "pandas")


def best(cmds: list[list[str]], runs: int) -> list[float]:
    """Best wall time of each command over ``runs`` rounds, the commands interleaved (inf for
    one that fails)."""
    times = [[] for _ in cmds]
    for _ in range(runs):
        for cmd, out in zip(cmds, times):
            t = time.perf_counter()
            ok = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                cwd="/")        # each interpreter's own wagon, not the cwd's
            out.append(time.perf_counter() - t if ok.returncode == 0 else float("inf"))
    return [min(t) for t in times]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--against", metavar="PYTHON",
                    help="also time the same commands with this interpreter's wagon (another "
                         "checkout), interleaved, for a ratio measured under the same load")
    a = ap.parse_args()
    py = sys.executable
    pythons = [py] + ([a.against] if a.against else [])
    base, = best([[py, "-c", "pass"]], a.runs)
    print(f"python -c pass                     {base * 1e3:7.1f} ms")
    commands = {" ".join(["wagon", *sub, "--help"]): (sub + ["--help"], 0.3)
                for sub in [[], *([c] for c in cli.lazy), ["advise", "keepalive"]]}
    commands["wagon advise keepalive --think ..."] = (
        ["advise", "keepalive", "--think", "lognormal(mu=3, sigma=1.1)", "--gain", "1"], 0.5)
    for name, (args, target) in commands.items():
        t = best([[p, "-m", "wagon", *args] for p in pythons], a.runs)
        other = f"  against {t[1] * 1e3:7.1f} ms ({t[1] / t[0]:4.2f}x)" if a.against else ""
        print(f"{name:34s} {t[0] * 1e3:7.1f} ms  {t[0] / base:5.2f}x python -c pass  "
              f"({'ok' if t[0] <= target else 'OVER'} vs target {target * 1e3:.0f} ms){other}")
    code = ("import wagon.cli, wagon.replay.runner, sys; "
            f"print(' '.join(m for m in {HEAVY!r} if m in sys.modules) or 'none')")
    held = subprocess.run([py, "-c", code], capture_output=True, text=True, check=True).stdout
    print(f"heavy modules in a replay worker: {held.strip()}")


if __name__ == "__main__":
    main()
