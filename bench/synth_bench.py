"""Scenario writing speed and memory: wagon's chunked generator vs a plain per-session writer.

Writes 1,000,000 sessions of the NASA model (fitted from tests/data/) with
``wagon.synth.synthesize`` and times it (target ≤ 10 s on one core), measures peak memory at 10⁵ and
10⁶ sessions in fresh processes (target: flat), and times a straightforward generator — one
session at a time, ``json.dumps`` per line, the same laws — on 10⁵ sessions for the ratio.

    python bench/synth_bench.py
"""
from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from wagon import fit_logs, load_model, save_model
from wagon.synth import Generator, SynthOptions, synthesize

NASA = Path(__file__).resolve().parent.parent / "tests" / "data" / "nasa-aug95-morning.log.gz"


def write(model_path: str, sessions: int, out: str) -> float:
    gen = Generator(load_model(model_path), SynthOptions(sessions=sessions, seed=1))
    t0 = time.perf_counter()
    with open(out, "w") as f:
        synthesize(gen, f)
    return time.perf_counter() - t0


def plain(model_path: str, sessions: int, out: str) -> float:
    """One session at a time with the same laws, json.dumps per line."""
    gen = Generator(load_model(model_path), SynthOptions(sessions=1, seed=1))
    rng = np.random.default_rng(1)
    site, clicks_law, think_law = gen.site, gen.clicks.frozen, gen.think.frozen
    t0 = time.perf_counter()
    with open(out, "w") as f:
        t = 0.0
        for i in range(sessions):
            t += rng.exponential(1 / gen.rate)
            n = max(1, int(round(float(clicks_law.rvs(random_state=rng)))))
            page = int(site.entries(1, rng)[0])
            clicks = [[page, 0.0]]
            for _ in range(n - 1):
                page = int(site.next_pages(np.array([page]), rng)[0])
                clicks.append([page, round(float(think_law.rvs(random_state=rng)), 3)])
            f.write(json.dumps({"id": i, "start": round(t, 6), "class": int(rng.integers(4)),
                                "clicks": clicks}) + "\n")
    return time.perf_counter() - t0


def main() -> None:
    if len(sys.argv) == 4:                      # child: measure one size, print peak RSS
        write(sys.argv[1], int(sys.argv[2]), sys.argv[3])
        print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024)
        return
    with tempfile.TemporaryDirectory() as tmp:
        model = os.path.join(tmp, "nasa.json")
        save_model(fit_logs([str(NASA)]).model, model)
        out = os.path.join(tmp, "s.jsonl")
        rss = {}
        for n in (100_000, 1_000_000):
            rss[n] = int(subprocess.run([sys.executable, __file__, model, str(n), out],
                                        capture_output=True, text=True, check=True).stdout)
        t_wagon = min(write(model, 1_000_000, out) for _ in range(2))
        size = os.path.getsize(out)
        t_wagon_small = write(model, 100_000, out)
        t_plain = plain(model, 100_000, out)
    print(f"wagon  : 1,000,000 sessions in {t_wagon:.2f} s ({size / 1e6:.0f} MB; target <= 10 s)")
    print(f"memory : peak RSS {rss[100_000]} MB at 1e5 sessions, {rss[1_000_000]} MB at 1e6 "
          f"(x{rss[1_000_000] / rss[100_000]:.2f} for 10x the sessions)")
    print(f"plain  : 100,000 sessions in {t_plain:.2f} s; wagon {t_wagon_small:.2f} s "
          f"-> ratio {t_plain / t_wagon_small:.1f}x")


if __name__ == "__main__":
    main()
