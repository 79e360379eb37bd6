"""Compressed logs (issue 28): ``wagon fit`` of a .gz beside the same log plain, and a month of
daily .gz files beside one day, all in one run.

Logs are built as bench/scale_bench.py builds them (copies of the NASA trace, each shifted a
day, clients of their own), compressed with ``gzip`` at its default level (what logrotate
keeps), in a temporary directory. Every measurement is a child process, measured as
scale_bench measures it (``run``: wall and CPU from ``wait4``, workers included; peak memory
the largest sum of the proportional resident sets of the child and its workers, read every
20 ms in a run of its own).

- part 1: ``wagon fit LOG.gz`` and ``wagon fit LOG`` (a worker per usable core) on
  ``--lines`` lines (default 10M), and the decompression's own cost, ``gzip -dc LOG.gz >
  /dev/null``; timed runs interleaved, ``--repeat`` rounds, the fastest of each kept.
  Targets: peak(.gz) <= 1.1 x peak(plain); wall(.gz) <= 1.3 x wall(plain) + wall(gzip -d).
- part 2: a month, ``--days`` daily .gz files of ``--day`` lines (default 30 x 1M), copies
  continuing from day to day, ``wagon fit --workers 2`` on all of them beside the same on the
  first day alone, interleaved as in part 1. Targets: time <= days x the one day's; peak <= 1 GB.

    python bench/compressed_bench.py [--part 1 2] [--lines 10000000] [--days 30]
                                     [--day 1000000] [--repeat 2]
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from scale_bench import build_log, run  # noqa: E402

PER_COPY = 20_000                       # lines of the NASA trace: one copy, one shifted day


def gzipped(plain: Path) -> Path:
    """``plain`` compressed by ``gzip`` at its default level, beside it (kept)."""
    out = plain.with_name(plain.name + ".gz")
    with open(out, "wb") as f:
        subprocess.run(["gzip", "-c", str(plain)], stdout=f, check=True)
    return out


def gunzip_wall(path: Path) -> float:
    """Wall seconds of ``gzip -dc path > /dev/null``."""
    t0 = time.perf_counter()
    subprocess.run(["gzip", "-dc", str(path)], stdout=subprocess.DEVNULL, check=True)
    return time.perf_counter() - t0


def fit(paths: list[Path], tmp: Path, workers: str | None = None) -> list[str]:
    return [sys.executable, "-m", "wagon", "fit", *map(str, paths), "-o",
            str(tmp / "model.json")] + (["--workers", workers] if workers else [])


    """The fastest of ``rounds`` timed runs, with the peak of a sampled run."""
    best = min((run(cmd, str(tmp), sample=False) for _ in range(rounds)),
               key=lambda r: r["wall"])
    return {**best, "rss_mb": run(cmd, str(tmp))["rss_mb"]}


def interleaved(cmds: dict[str, list[str]], tmp: Path, rounds: int,
                between: Callable[[], None] = lambda: None
                ) -> tuple[dict[str, dict], dict[str, list[dict]]]:
    """Each command's fastest of ``rounds`` timed runs, interleaved (the machine's load moves
    them alike; ``between()`` after each round), with its peak from a sampled run of its own;
    and every timed run."""
    timed: dict[str, list[dict]] = {name: [] for name in cmds}
    for _ in range(rounds):
        for name, cmd in cmds.items():
            timed[name].append(run(cmd, str(tmp), sample=False))
        between()
    return {name: {**min(timed[name], key=lambda r: r["wall"]),
                   "rss_mb": run(cmd, str(tmp))["rss_mb"]} for name, cmd in cmds.items()}, timed


def part_gz(tmp: Path, lines: int, rounds: int) -> None:
    plain = tmp / f"nasa-{lines}.log"
    build_log(plain, lines)
    packed = gzipped(plain)
    print(f"part 1: {lines:,} lines, {plain.stat().st_size / 1e6:.0f} MB plain, "
          f"{packed.stat().st_size / 1e6:.0f} MB gzipped; load {os.getloadavg()[0]:.2f}; "
          f"{len(os.sched_getaffinity(0))} usable cores")
    cmds = {"plain": fit([plain], tmp), ".gz": fit([packed], tmp)}
    gunzip: list[float] = []
    rows, timed = interleaved(cmds, tmp, rounds, lambda: gunzip.append(gunzip_wall(packed)))
    g = min(gunzip)
    print(f"{'wagon fit (default workers)':30s} {'wall s':>8s} {'CPU s':>8s} {'peak MB':>8s}")
    for name, r in rows.items():
        print(f"{name:30s} {r['wall']:8.2f} {r['cpu']:8.2f} {r['rss_mb']:8.0f}")
    print(f"{'gzip -dc > /dev/null':30s} {g:8.2f}")
    p, z = rows["plain"], rows[".gz"]
    print(f"peak .gz / plain: {z['rss_mb'] / p['rss_mb']:.2f} (target <= 1.1); wall .gz "
          f"{z['wall']:.2f} s against 1.3 x plain + gzip -d = {1.3 * p['wall'] + g:.2f} s "
          f"(.gz / plain {z['wall'] / p['wall']:.2f}; round by round "
          + ", ".join(f"{a['wall'] / b['wall']:.2f}" for a, b in zip(timed['.gz'],
                                                                     timed['plain'])) + ")")


def part_month(tmp: Path, days: int, day: int, rounds: int) -> None:
    files = []
    for d in range(days):
        plain = tmp / f"access-{d + 1:02d}.log"
        build_log(plain, day, first=d * -(-day // PER_COPY))
        files.append(gzipped(plain))
        plain.unlink()
    size = sum(f.stat().st_size for f in files)
    print(f"\npart 2: {days} daily .gz files of {day:,} lines ({size / 1e6:.0f} MB gzipped); "
          f"load {os.getloadavg()[0]:.2f}")
    cmds = {"1 day": fit(files[:1], tmp, "2"), f"{days} days": fit(files, tmp, "2")}
    rows, timed = interleaved(cmds, tmp, rounds)
    one, month = rows.values()
    for name, r in ((f"1 day, --workers 2", one), (f"{days} days, --workers 2", month)):
        print(f"{name:30s} {r['wall']:8.2f} s wall {r['cpu']:8.2f} CPU-s {r['rss_mb']:6.0f} MB")
    print(f"{days} days / 1 day: {month['wall'] / one['wall']:.1f}x the time (target <= "
          f"{days}x; CPU {month['cpu'] / one['cpu']:.1f}x; round by round "
          + ", ".join(f"{b['wall'] / a['wall']:.1f}x" for a, b in zip(*timed.values()))
          + f"); peak {month['rss_mb']:.0f} MB (target <= 1024)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--part", type=int, nargs="*", choices=(1, 2), default=[1, 2])
    ap.add_argument("--lines", type=int, default=10_000_000)
    ap.add_argument("--days", type=int, default=30)
    ap.add_argument("--day", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=2)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="wagon-compressed-") as tmp:
        if 1 in args.part:
            part_gz(Path(tmp), args.lines, args.repeat)
        if 2 in args.part:
            part_month(Path(tmp), args.days, args.day, args.repeat)


if __name__ == "__main__":
    main()
