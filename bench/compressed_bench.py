"""Compressed logs (issue 28): ``wagon fit`` of a .gz beside the same log plain, and a month of
daily .gz files beside one day, all in one run.

Logs are built as bench/scale_bench.py builds them (copies of the NASA trace, each shifted a
day, clients of their own), compressed with ``gzip`` at its default level (what logrotate
keeps), in a temporary directory. Every measurement is a child process, measured as
scale_bench measures it (``run``: wall and CPU from ``wait4``, workers included; peak memory
the largest sum of the proportional resident sets of the child and its workers, read every
20 ms in a run of its own).

- part 1: ``wagon fit LOG.gz``, ``wagon fit LOG.zst`` (``zstd`` at its default level) and
  ``wagon fit LOG`` (a worker per usable core) on ``--lines`` lines (default 10M), and the
  decompressions' own cost, ``gzip -dc LOG.gz > /dev/null`` and ``zstd -dc``; timed runs
  interleaved, ``--repeat`` rounds, the fastest of each kept. Targets, for each: peak <= 1.1 x
  peak(plain); wall <= 1.3 x wall(plain) + the decompression's wall.
- part 2: a month, ``--days`` daily .gz files of ``--day`` lines (default 30 x 1M), copies
  continuing from day to day, ``wagon fit --workers 2`` on all of them beside the same on the
  first day alone, interleaved as in part 1. Targets: time <= days x the one day's; peak <= 1 GB.
- part 3 (on demand): the same month on ``--cluster`` with a real ``dask scheduler`` and two
  ``dask worker`` processes started here, beside ``--workers 2`` (one run each): wall, peak of
  all the processes, and whether the two models are identical (they must be, but for
  'created').

    python bench/compressed_bench.py [--part 1 2 3] [--lines 10000000] [--days 30]
                                     [--day 1000000] [--repeat 2]
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable, Iterator

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from scale_bench import build_log, run  # noqa: E402

PER_COPY = 20_000                       # lines of the NASA trace: one copy, one shifted day


SUFFIX = {"gzip": ".gz", "zstd": ".zst"}


def packed_by(plain: Path, tool: str = "gzip") -> Path:
    """``plain`` compressed by ``tool`` (gzip, zstd) at its default level, beside it (kept)."""
    out = plain.with_name(plain.name + SUFFIX[tool])
    with open(out, "wb") as f:
        subprocess.run([tool, "-c", str(plain)], stdout=f, check=True)
    return out


def unpack_wall(path: Path, tool: str) -> float:
    """Wall seconds of ``tool -dc path > /dev/null``."""
    t0 = time.perf_counter()
    subprocess.run([tool, "-dc", str(path)], stdout=subprocess.DEVNULL, check=True)
    return time.perf_counter() - t0


def fit(paths: list[Path], tmp: Path, workers: str | None = None, cluster: str | None = None,
        model: str = "model.json") -> list[str]:
    return ([sys.executable, "-m", "wagon", "fit", *map(str, paths), "-o", str(tmp / model)]
            + (["--workers", workers] if workers else [])
            + (["--cluster", cluster] if cluster else []))


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
    packed = {tool: packed_by(plain, tool) for tool in SUFFIX}
    print(f"part 1: {lines:,} lines, {plain.stat().st_size / 1e6:.0f} MB plain, "
          + ", ".join(f"{p.stat().st_size / 1e6:.0f} MB {SUFFIX[tool]}"
                      for tool, p in packed.items())
          + f"; load {os.getloadavg()[0]:.2f}; {len(os.sched_getaffinity(0))} usable cores")
    cmds = {"plain": fit([plain], tmp), **{SUFFIX[t]: fit([p], tmp) for t, p in packed.items()}}
    unpack: dict[str, list[float]] = {tool: [] for tool in SUFFIX}

    def between() -> None:
        for tool, p in packed.items():
            unpack[tool].append(unpack_wall(p, tool))
    rows, timed = interleaved(cmds, tmp, rounds, between)
    print(f"{'wagon fit (default workers)':30s} {'wall s':>8s} {'CPU s':>8s} {'peak MB':>8s}")
    for name, r in rows.items():
        print(f"{name:30s} {r['wall']:8.2f} {r['cpu']:8.2f} {r['rss_mb']:8.0f}")
    for tool in SUFFIX:
        print(f"{tool + ' -dc > /dev/null':30s} {min(unpack[tool]):8.2f}")
    p = rows["plain"]
    for tool, suffix in SUFFIX.items():
        z, g = rows[suffix], min(unpack[tool])
        print(f"peak {suffix} / plain: {z['rss_mb'] / p['rss_mb']:.2f} (target <= 1.1); wall "
              f"{suffix} {z['wall']:.2f} s against 1.3 x plain + {tool} -d = "
              f"{1.3 * p['wall'] + g:.2f} s ({suffix} / plain {z['wall'] / p['wall']:.2f}; "
              "round by round " + ", ".join(f"{a['wall'] / b['wall']:.2f}" for a, b in
                                            zip(timed[suffix], timed['plain'])) + ")")


def month(tmp: Path, days: int, day: int) -> list[Path]:
    """``days`` daily .gz files of ``day`` lines in ``tmp``, copies continuing from day to day
    (built once for parts 2 and 3)."""
    files = [tmp / f"access-{d + 1:02d}.log.gz" for d in range(days)]
    for d, packed in enumerate(files):
        if not packed.exists():
            plain = packed.with_suffix("")
            build_log(plain, day, first=d * -(-day // PER_COPY))
            packed_by(plain)
            plain.unlink()
    return files


def part_month(tmp: Path, files: list[Path], day: int, rounds: int) -> None:
    days = len(files)
    size = sum(f.stat().st_size for f in files)
    print(f"\npart 2: {days} daily .gz files of {day:,} lines ({size / 1e6:.0f} MB gzipped); "
          f"load {os.getloadavg()[0]:.2f}")
    cmds = {"1 day": fit(files[:1], tmp, "2"), f"{days} days": fit(files, tmp, "2")}
    rows, timed = interleaved(cmds, tmp, rounds)
    one, month = rows.values()
    for name, r in (("1 day, --workers 2", one), (f"{days} days, --workers 2", month)):
        print(f"{name:30s} {r['wall']:8.2f} s wall {r['cpu']:8.2f} CPU-s {r['rss_mb']:6.0f} MB")
    print(f"{days} days / 1 day: {month['wall'] / one['wall']:.1f}x the time (target <= "
          f"{days}x; CPU {month['cpu'] / one['cpu']:.1f}x; round by round "
          + ", ".join(f"{b['wall'] / a['wall']:.1f}x" for a, b in zip(*timed.values()))
          + f"); peak {month['rss_mb']:.0f} MB (target <= 1024)")


@contextlib.contextmanager
def dask_cluster(tmp: Path, workers: int) -> Iterator[tuple[str, tuple[int, ...]]]:
    """A real ``dask scheduler`` and ``workers`` single-threaded ``dask worker`` processes on
    loopback (as tests/test_cluster.py starts them): its address and their process ids."""
    import distributed
    from wagon.experiment.servers import free_port
    address = f"tcp://127.0.0.1:{free_port()}"
    dask = [sys.executable, "-m", "dask"]
    quiet = {"cwd": tmp, "stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    procs = [subprocess.Popen(dask + ["scheduler", "--host", "127.0.0.1", "--port",
                                      address.rsplit(":", 1)[1], "--no-dashboard"], **quiet)]
    procs += [subprocess.Popen(dask + ["worker", address, "--nworkers", "1", "--nthreads", "1",
                                       "--no-dashboard", "--local-directory", str(tmp)], **quiet)
              for _ in range(workers)]
    try:
        with distributed.Client(address, timeout=30) as client:
            client.wait_for_workers(workers, timeout=60)
        yield address, tuple(p.pid for p in procs)
    finally:
        for p in procs[1:] + procs[:1]:          # the workers first, then the scheduler
            p.terminate()
            p.wait()


def part_cluster(tmp: Path, files: list[Path]) -> None:
    """The month on a real scheduler with 2 workers beside ``--workers 2``: one run each, the
    peak the sum of every process's (client, scheduler, workers); the two models compared."""
    print(f"\npart 3: the {len(files)} files on --cluster (a dask scheduler and 2 dask workers "
          f"on this machine) beside --workers 2; load {os.getloadavg()[0]:.2f}")
    here = run(fit(files, tmp, "2", model="workers.json"), str(tmp))
    with dask_cluster(tmp, 2) as (address, pids):
        there = run(fit(files, tmp, cluster=address, model="cluster.json"), str(tmp), also=pids)
    for name, r in (("--workers 2", here), ("--cluster (scheduler + 2 workers)", there)):
        print(f"{name:34s} {r['wall']:8.2f} s wall {r['rss_mb']:6.0f} MB (all its processes)")
    models = [json.loads((tmp / name).read_text()) for name in ("workers.json", "cluster.json")]
    for m in models:
        m.pop("created")
    print(f"models identical (but for 'created'): {models[0] == models[1]}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--part", type=int, nargs="*", choices=(1, 2, 3), default=[1, 2])
    ap.add_argument("--lines", type=int, default=10_000_000)
    ap.add_argument("--days", type=int, default=30)
    ap.add_argument("--day", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=2)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="wagon-compressed-") as tmp:
        if 1 in args.part:
            part_gz(Path(tmp), args.lines, args.repeat)
        files = month(Path(tmp), args.days, args.day) if {2, 3} & set(args.part) else []
        if 2 in args.part:
            part_month(Path(tmp), files, args.day, args.repeat)
        if 3 in args.part:
            part_cluster(Path(tmp), files)


if __name__ == "__main__":
    main()
