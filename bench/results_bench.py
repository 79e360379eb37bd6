"""What checking a results file costs (issue 27): ``read_results`` on an N-row requests file and
an N/4-row pages file against the typed ``pandas.read_csv`` it starts from (the reader before
the checks: same dtypes, same NA rules), best of R runs each, in the same process.

The rows are a real replay's shape: successes with every time, 404s, an object never issued
(``skipped``), a not-started request; sessions numbered up to N/8. Once more with the 404s'
URL holding a comma (5 % of the rows quoted: the per-line path).

    python bench/results_bench.py [--rows 1000000] [--runs 3]
"""
from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from wagon.formats.results import PAGE_COLUMNS, REQUEST_COLUMNS, ResultsWriter, read_results


def requests(n: int, odd_url: str = "/img/a.gif") -> list[tuple]:
    """n request rows of a replay's mix, 8 per session (numbered 0-7); 5 % of them (the 404s)
    for ``odd_url``."""
    rng = np.random.default_rng(1)
    t = np.cumsum(rng.exponential(0.001, n))
    shapes = [
        lambda s, x: (s, "lan/http11", 3, "/index.html", "page", s, 0, 0, f"{x:.6f}",
                      f"{x + 1e-4:.6f}", f"{x + 1e-4:.6f}", "", f"{x + 4e-4:.6f}",
                      f"{x + 9e-4:.6f}", f"{x + 1e-3:.6f}", 200, 5120, ""),
        lambda s, x: (s, "lan/http11", 3, odd_url, "object", s, 1, 0, f"{x:.6f}",
                      f"{x + 1e-4:.6f}", "", "", "", f"{x + 5e-4:.6f}", f"{x + 6e-4:.6f}", 404,
                      0, "http_4xx"),
        lambda s, x: (s, "modem/http10x4", 0, "/o.gif", "object", -1, 0, 0, f"{x:.6f}", "",
                      "", "", "", "", "", 0, 0, "skipped"),
        lambda s, x: (s, "modem/http10x4", 1, "/p.html", "page", -1, 0, 0, "", "", "", "", "",
                      "", "", 0, 0, "not_started"),
    ]
    weights = np.array([0.9, 0.05, 0.03, 0.02])
    kinds = rng.choice(len(shapes), n, p=weights)
    return [shapes[k](i // 8, x) + (i % 8, "GET") for i, (k, x) in enumerate(zip(kinds, t))]


def pages(n: int) -> list[tuple]:
    t = np.cumsum(np.random.default_rng(2).exponential(0.004, n))
    return [(i // 2, "lan/http11", i % 2, f"{x:.6f}", f"{x + 1e-4:.6f}", f"{x + 9e-4:.6f}",
             f"{x + 2e-3:.6f}", f"{2e-3 - 1e-4:.6f}", f"{1.5e-3:.6f}", 4, 0)
            for i, x in enumerate(t)]


def write(path: Path, columns: dict, rows: list[tuple]) -> Path:
    with open(path, "w", newline="") as f:
        w = ResultsWriter(f, columns)
        w.rows += rows                              # the replay's buffer, flushed at once
        w.flush()
    return path


def typed_read(path: Path, columns: dict):
    """The reader before issue 27's checks: the typed parse alone."""
    kinds = {"int": "int64", "bool": "int64", "float": "float64", "str": "string"}
    return pd.read_csv(path, dtype={c: kinds[t] for c, t in columns.items()},
                       keep_default_na=False,
                       na_values={c: [""] for c, t in columns.items() if t == "float"})


def best(fn, runs: int) -> float:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        for name, columns, n, make in (
                ("requests", REQUEST_COLUMNS, args.rows, requests),
                ("requests, 5 % quoted", REQUEST_COLUMNS, args.rows,
                 lambda n: requests(n, "/img/a,b.gif")),
                ("pages", PAGE_COLUMNS, args.rows // 4, pages)):
            path = write(Path(d) / f"{name[:5]}.csv", columns, make(n))
            assert len(read_results(path)) == n
            base = best(lambda: typed_read(path, columns), args.runs)
            checked = best(lambda: read_results(path), args.runs)
            print(f"{name}: {n:,} rows, {path.stat().st_size / 1e6:.0f} MB: parse {base:.2f} s, "
                  f"read_results (parse + checks) {checked:.2f} s: checks +{checked - base:.2f} s "
                  f"({100 * (checked / base - 1):.0f} %)")


if __name__ == "__main__":
    main()
