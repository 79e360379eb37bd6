"""Parse throughput: wagon's vectorised parser vs a one-regex-per-line parser, same run.

Builds a log of ≥2,000,000 lines by repeating the NASA trace (tests/data/) with its
date shifted one day per copy, then prints lines/s of both parsers and their ratio.
Targets (issue 2): wagon ≥ 1,000,000 lines/s on one core and ≥ 7× the baseline.

    python bench/parse_bench.py [--lines 2000000] [--baseline-lines 200000]
"""
from __future__ import annotations

import argparse
import gzip
import os
import tempfile
import time
from datetime import date, timedelta
from pathlib import Path

from baseline_parser import parse_file
from wagon.logs.parse import parse_logs

NASA = Path(__file__).resolve().parent.parent / "tests" / "data" / "nasa-aug95-morning.log.gz"


def build_log(path: Path, lines: int) -> int:
    """Write copies of the NASA log, each shifted by one more day; returns lines written."""
    src = gzip.decompress(NASA.read_bytes())
    per_copy = src.count(b"\n")
    copies = -(-lines // per_copy)
    with open(path, "wb") as out:
        for k in range(copies):
            day = date(1995, 8, 1) + timedelta(days=k)
            out.write(src.replace(b"01/Aug/1995", day.strftime("%d/%b/%Y").encode()))
    return copies * per_copy


def best_of(runs: int, fn) -> float:
    best = float("inf")
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lines", type=int, default=2_000_000)
    ap.add_argument("--baseline-lines", type=int, default=200_000,
                    help="the baseline is timed on a prefix this long (it is slow)")
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        big, small = Path(tmp) / "big.log", Path(tmp) / "small.log"
        n = build_log(big, args.lines)
        n_small = build_log(small, args.baseline_lines)
        t_wagon = best_of(args.runs, lambda: parse_logs([str(big)], fmt="common"))
        t_wagon_small = best_of(args.runs, lambda: parse_logs([str(small)], fmt="common"))
        t_base = best_of(1, lambda: parse_file(str(small)))
        rate = n / t_wagon
        print(f"log: {n:,} lines, {os.path.getsize(big) / 1e6:.0f} MB (NASA Aug 1995, days shifted)")
        print(f"wagon    : {rate:,.0f} lines/s on {n:,} lines (best of {args.runs})")
        print(f"baseline : {n_small / t_base:,.0f} lines/s on {n_small:,} lines (regex per line)")
        print(f"ratio    : {t_base / t_wagon_small:.1f}x on the same {n_small:,} lines "
              f"(target >= 7x); wagon {'meets' if rate >= 1e6 else 'misses'} 1,000,000 lines/s")


if __name__ == "__main__":
    main()
