"""CSV or Parquet results (issue 38): ``read_results`` of the same 1M-row requests file
published both ways from the same part file, best of R reads each, in the same process; and
what the conversion adds to publishing.

The rows are results_bench's replay mix (successes, 404s, skipped, not started).

    python bench/parquet_bench.py [--rows 1000000] [--runs 5]
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from results_bench import best, requests  # noqa: E402 (the bench's own folder)

from wagon.formats.results import REQUEST_COLUMNS, ResultsWriter, read_results  # noqa: E402
from wagon.replay.parts import part_paths, publish  # noqa: E402


def published(results: Path, rows: list[tuple]) -> float:
    """``results`` published from one part file holding ``rows``: the seconds it took."""
    with open(part_paths(str(results), 0)[0], "w", newline="") as f:
        w = ResultsWriter(f, REQUEST_COLUMNS, header=False)
        w.rows += rows
        w.flush()
    t0 = time.perf_counter()
    publish(str(results), 1, {"scenario": "s.jsonl", "target": "http://127.0.0.1:1/",
                              "t0": "2026-11-28T00:00:00+00:00", "t0_unix": 1.8e9,
                              "classes": [], "speedup": 1.0, "model": None,
                              "options": {"target": "http://127.0.0.1:1/", "workers": 1,
                                          "fail_on": []}, "summary": None})
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    rows = requests(args.rows)
    with tempfile.TemporaryDirectory() as d:
        reads = {}
        for name in ("r.csv", "r.parquet"):
            path = Path(d) / name
            took = published(path, rows)
            assert len(read_results(path)) == args.rows
            reads[name] = best(lambda: read_results(path), args.runs)
            print(f"{name}: {args.rows:,} rows, {path.stat().st_size / 1e6:.0f} MB, published "
                  f"in {took:.2f} s; read_results best of {args.runs}: {reads[name]:.2f} s")
        print(f"Parquet reads {reads['r.csv'] / reads['r.parquet']:.1f}x faster")


if __name__ == "__main__":
    main()
