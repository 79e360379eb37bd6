"""Where a fit's memory peaks (issue 40): ``fit_logs`` on a log in a child process, as ``wagon
fit`` runs it (BLAS on one thread, malloc tuned), the peak of its processes by stage.

A thread of this process reads every 20 ms the pages resident in the child and its workers
(``scale_bench.tree_memory``: each page once; the main process's RSS and the largest worker's
own pages, USS, beside it); the child prints a mark as each stage begins (``progress``, and
around the merge of the partitions and the import of the fitting layer), and each reading
counts for the stage it falls in. Build a log with ``scale_bench.py --keep DIR``.

    python bench/fit_memory_stages.py LOG [--workers 2]
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from scale_bench import PROGRAM, tree_memory  # noqa: E402

CHILD = PROGRAM + """import sys, time
import wagon.cli.fit
from wagon.modeling.allocator import keep_freed_memory
keep_freed_memory()
import wagon.modeling as modeling
from wagon.modeling.processes import ProcessRunner
from wagon.modeling.stages import LocalRunner
def mark(stage):
    print(f"mark {time.time()} {stage}", file=sys.stderr, flush=True)
seen = []
def progress(stage, done, total):
    if stage not in seen:
        seen.append(stage)
        mark(stage)
merge, load = modeling.merge_partitions, modeling._load_fitting
def merged(*args):
    mark("merge")
    return merge(*args)
def loaded():
    mark("import SciPy")
    load()
modeling.merge_partitions, modeling._load_fitting = merged, loaded
workers = int(sys.argv[2])
modeling.fit_logs([sys.argv[1]], progress=progress,
                  runner=ProcessRunner(workers) if workers > 1 else LocalRunner())
mark("end")
"""


def children_uss(pid: int) -> int:
    """The largest private resident set (USS) among ``pid``'s children, in bytes."""
    best = 0
    try:
        kids = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return 0
    for kid in kids:
        try:
            rollup = Path(f"/proc/{kid}/smaps_rollup").read_text().splitlines()[1:]
        except OSError:
            continue
        kb = {k: int(v.split()[0]) for k, _, v in (line.partition(":") for line in rollup)}
        best = max(best, (kb["Private_Clean"] + kb["Private_Dirty"]) * 1024)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("log")
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()
    proc = subprocess.Popen([sys.executable, "-c", CHILD, args.log, str(args.workers)],
                            stderr=subprocess.PIPE, text=True, cwd="/tmp")
    readings, done = [], threading.Event()

    def sampling() -> None:
        while not done.wait(0.02):
            readings.append((time.time(), tree_memory(proc.pid)["unique"], children_uss(proc.pid)))
    sampler = threading.Thread(target=sampling, daemon=True)
    sampler.start()
    err = proc.communicate()[1]
    done.set()
    sampler.join()
    if proc.returncode:
        raise SystemExit(err[-2000:])
    marks = [(float(t), stage) for _, t, stage in
             (line.split(" ", 2) for line in err.splitlines() if line.startswith("mark "))]
    print(f"{args.log}, {args.workers} worker(s): peak MB of all processes (each page once) "
          "by stage; the largest worker's own pages (USS)")
    for (start, stage), (end, _) in zip(marks, marks[1:]):
        inside = [(m, w) for t, m, w in readings if start <= t < end] or [(0, 0)]
        print(f"  {stage:14s} {end - start:7.2f} s  {max(m for m, _ in inside) / 2**20:7.0f} MB"
              f"  worker {max(w for _, w in inside) / 2**20:5.0f} MB")


if __name__ == "__main__":
    main()
