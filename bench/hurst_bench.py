"""Coverage of the wavelet Hurst interval by first octave: exact fGn (Davies & Harte), the
share of 95 % intervals that hold the true H, the mean bias and the spread of the estimates,
for each first octave j1 and the rule's (j1 = max(3, ⌊log₂ n / 4⌋)).

    python bench/hurst_bench.py [--reps 100] [--sizes 16384,65536] [--hs 0.5,0.7,0.9]
"""
from __future__ import annotations

import argparse

import numpy as np

from wagon.analysis.selfsim import fgn, wavelet, wavelet_first_octave


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=100)
    ap.add_argument("--sizes", default="16384,65536")
    ap.add_argument("--hs", default="0.5,0.7,0.9")
    ap.add_argument("--octaves", default="1,2,3,4,5")
    args = ap.parse_args()
    print(f"{'n':>7s} {'H':>5s} {'j1':>4s} {'coverage':>9s} {'bias':>8s} {'sd':>7s}")
    for n in (int(v) for v in args.sizes.split(",")):
        for h in (float(v) for v in args.hs.split(",")):
            series = [fgn(n, h, 10_000 + r) for r in range(args.reps)]
            for j1 in (int(v) for v in args.octaves.split(",")):
                est = [wavelet(x, j1) for x in series]
                hs = np.array([e.H for e in est])
                cover = np.mean([e.ci[0] <= h <= e.ci[1] for e in est])
                rule = " (rule)" if j1 == wavelet_first_octave(n) else ""
                print(f"{n:>7d} {h:>5.2f} {j1:>4d} {cover:>9.2f} {hs.mean() - h:>8.4f} "
                      f"{hs.std():>7.4f}{rule}", flush=True)


if __name__ == "__main__":
    main()
