"""Scale: ``wagon fit`` end to end on 1M and 10M lines against the parsers it is measured
against, all in one run (issue 12).

Inputs are built into a temporary directory (never the checkout) from the real NASA trace
(tests/data/): copy k of its 20,000 lines is shifted k days and its clients renamed to IPv4
addresses of their own (10.x.y.z, so GoAccess's ``%h`` reads them and sessions of different
copies never meet). Every measurement runs in a child process; wall time and CPU time come
from that child's own ``wait4`` usage (its worker processes included), peak memory from the
pages resident in the child and its descendants, each page once (``tree_memory``: anonymous
pages by their PSS, file-backed ones once; PSS and RSS summed are printed beside it), read
from /proc every 20 ms (or the child's own peak RSS, when larger: a short peak between two
readings), in a run of its own: reading /proc that often takes CPU the timed runs would lose.

- baseline: bench/baseline_parser.py (one regex per line, strptime) on the 1M-line log; it
  and the two fits on that log run ``--repeat`` times (default 3), interleaved, and each keeps
  its fastest run (the ratio of each round is printed too: the machine's load moves them);
- goaccess: ``goaccess LOG --log-format=COMMON -o out.json`` when installed;
- parse: wagon's parser alone (``parse_logs``), lines per CPU-second (best of 3);
- fit: ``wagon fit LOG`` (the CLI) on 1M lines with ``--workers 1`` (one process) and with its
  default (a worker per usable core), then on 10M lines both ways; in another child, the wall
  time of each stage on 1M lines (import, parse, sessionize, fit, model), for both;
- ``--big-baseline``: the baseline on the 10M-line log too (about 90 s and 4 GB here).

Targets: fit(1M) >= 5x the baseline; parse >= 1M lines per CPU-second; fit(N lines) no
slower than linear from fit(1M) (10M: <= 10x); peak of fit(10M) <= 1 GB (issue 40: of 30M
lines too, ``--big 30000000``); peak of fit(1M) <= 2x GoAccess's.

    python bench/scale_bench.py [--lines 1000000] [--big 10000000 | --big 0] [--big-baseline]
                                [--repeat 3] [--keep DIR]
"""
from __future__ import annotations

import argparse
import gzip
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from datetime import date, timedelta
from pathlib import Path

HERE = Path(__file__).resolve().parent
NASA = HERE.parent / "tests" / "data" / "nasa-aug95-morning.log.gz"


def build_log(path: Path, lines: int, first: int = 0) -> int:
    """Copies of the NASA trace, copy k (from ``first``) shifted k days with its clients
    renamed to addresses 10+k//256 . k%256 . i//256 . i%256 (i: the client's index in the
    trace)."""
    src = gzip.decompress(NASA.read_bytes()).splitlines(keepends=True)
    index: dict[bytes, int] = {}
    template = b"".join(b"%d.%d " % divmod(index.setdefault(line.split(b" ", 1)[0],
                                                            len(index)), 256)
                        + line.split(b" ", 1)[1] for line in src)
    per = len(src)
    copies = -(-lines // per)
    with open(path, "wb") as out:
        for k in range(first, first + copies):
            day = (date(1995, 8, 1) + timedelta(days=k)).strftime("%d/%b/%Y").encode()
            pre = b"%d.%d." % (10 + k // 256, k % 256)
            data = pre + template.replace(b"01/Aug/1995", day).replace(b"\n", b"\n" + pre)
            out.write(data[:-len(pre)])
    return copies * per


def tree_memory(pid: int) -> dict[str, int]:
    """Resident bytes of process ``pid`` and all its descendants (zeros once it is gone), three
    ways: ``unique``, each page once (the sum of the anonymous pages' PSS, which splits a page
    only among the processes of this tree that share it through fork, plus the file-backed
    pages of the process that maps the most, libraries and mapped files counted once: what
    the tree takes from the machine, and a single process's RSS); ``pss``, the sum of PSS (a
    library's pages are split with every process of the machine that maps them, so the
    figure falls as other programs run); ``rss``, the sum of RSS (a page a forked worker
    shares with its parent counted in each)."""
    children: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                with open(f"/proc/{entry.name}/stat", "rb") as f:
                    ppid = int(f.read().rsplit(b")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            children.setdefault(ppid, []).append(int(entry.name))
    anon = pss = rss = files = 0
    todo = [pid]
    while todo:
        p = todo.pop()
        todo += children.get(p, [])
        try:
            with open(f"/proc/{p}/smaps_rollup", "rb") as f:
                kb = {k: int(v.split()[0]) for k, _, v in
                      (line.partition(b":") for line in f.read().splitlines()[1:])}
        except (OSError, ValueError, IndexError):
            continue
        anon += kb[b"Pss_Anon"]
        pss += kb[b"Pss"]
        rss += kb[b"Rss"]
        files = max(files, kb[b"Rss"] - kb[b"Anonymous"])
    return {"unique": (anon + files) * 1024, "pss": pss * 1024, "rss": rss * 1024}


def run(cmd: list[str], cwd: str, sample: bool = True, also: tuple[int, ...] = ()) -> dict:
    """Wall seconds, CPU seconds (workers included) and peak resident memory (MB) of a child
    process; fails loudly. ``sample``: the peaks of the child and its descendants together
    (and the processes ``also``, with theirs: a cluster's; ``tree_memory``'s three ways:
    ``rss_mb`` the unique pages, ``pss_mb``, ``rss_sum_mb``), read every 20 ms, which costs
    CPU beside the run (on 2 cores it slowed a 2-worker fit by 0.35-1.0 s): timed runs go
    without it, and their peak is the largest single process's (``ru_maxrss``)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    peak, done = {"unique": 0, "pss": 0, "rss": 0}, threading.Event()

    def sampling() -> None:
        while not done.wait(0.02):
            now = [tree_memory(pid) for pid in (proc.pid, *also)]
            for k in peak:
                peak[k] = max(peak[k], sum(m[k] for m in now))
    sampler = threading.Thread(target=sampling, daemon=True) if sample else None
    if sampler:
        sampler.start()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    done.set()
    if sampler:
        sampler.join()
    err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{err[-2000:]}")
    own = usage.ru_maxrss * 1024            # the largest process's own peak: a short one
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime,
            "rss_mb": max(peak["unique"], own) / 2**20, "pss_mb": max(peak["pss"], own) / 2**20,
            "rss_sum_mb": max(peak["rss"], own) / 2**20}


# as the ``wagon`` program runs: BLAS on one thread, set before NumPy loads (wagon.cli.run)
PROGRAM = ("import os\nfrom wagon.cli import ONE_THREAD\n"
           "for name in ONE_THREAD:\n    os.environ.setdefault(name, '1')\n")
PARSE = (PROGRAM + "import sys, time\nfrom wagon.logs.parse import parse_logs\nbest = 1e9\n"
         "for _ in range(3):\n"
         "    t = time.process_time(); parse_logs([sys.argv[1]], fmt='common')\n"
         "    best = min(best, time.process_time() - t)\n"
         "print(best, file=sys.stderr)")
STAGES = (PROGRAM + "import sys, time\nt0 = time.perf_counter()\nimport wagon.cli.fit\n"
          "from wagon.modeling.allocator import keep_freed_memory\nkeep_freed_memory()\n"
          "from wagon.modeling import FitOptions, fit_logs\n"
          "from wagon.modeling.processes import ProcessRunner, usable_cores\n"
          "marks = [('import', time.perf_counter())]\n"
          "def progress(stage, done, total):\n"
          "    if done == total and stage != marks[-1][0]:\n"
          "        marks.append((stage, time.perf_counter()))\n"
          "workers = usable_cores() if sys.argv[2] == 'default' else int(sys.argv[2])\n"
          "fit_logs([sys.argv[1]], FitOptions(), progress=progress,\n"
          "         runner=ProcessRunner(workers) if workers > 1 else None)\n"
          "marks.append(('model', time.perf_counter()))\n"
          "print(' '.join(f'{s} {t - u:.2f}' for (s, t), (_, u) in "
          "zip(marks, [(None, t0)] + marks)), file=sys.stderr)")
BASELINE = ("import sys; sys.path.insert(0, sys.argv[2])\nfrom baseline_parser import parse_file\n"
            "records, bad = parse_file(sys.argv[1]); assert not bad")


def peak_of(r: dict) -> dict:
    """The peak memory figures of a ``run``."""
    return {k: r[k] for k in ("rss_mb", "pss_mb", "rss_sum_mb")}


def scipy_rss(py: str) -> float:
    """Peak RSS (MB) of a bare ``import scipy.stats`` (the floor of any process that fits with
    SciPy), from the child's own ``wait4``."""
    proc = subprocess.Popen([py, "-c", "import scipy.stats"])
    return os.wait4(proc.pid, 0)[2].ru_maxrss / 1024


def fit_cmd(py: str, log: Path, out: Path, workers: str) -> list[str]:
    return [py, "-m", "wagon", "fit", str(log), "-o", str(out)] + (
        [] if workers == "default" else ["--workers", workers])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lines", type=int, default=1_000_000)
    ap.add_argument("--big", type=int, default=10_000_000, help="0: skip the big run")
    ap.add_argument("--big-baseline", action="store_true",
                    help="run the baseline on the big log too")
    ap.add_argument("--repeat", type=int, default=3,
                    help="rounds of the baseline and the two fits on the small log (best kept)")
    ap.add_argument("--keep", default=None, help="build the logs here and keep them")
    args = ap.parse_args()
    py = sys.executable
    cores = len(os.sched_getaffinity(0))
    modes = {"1": "wagon fit --workers 1", "default": f"wagon fit ({cores} workers)"}
    tmp = args.keep or tempfile.mkdtemp(prefix="wagon-scale-")
    os.makedirs(tmp, exist_ok=True)
    try:
        small = Path(tmp) / f"nasa-{args.lines}.log"
        if not small.exists():
            build_log(small, args.lines)
        n = sum(1 for _ in open(small, "rb"))
        print(f"log: {n:,} lines, {small.stat().st_size / 1e6:.0f} MB; load "
              f"{os.getloadavg()[0]:.2f}; {cores} usable cores")
        baseline = "baseline (regex per line)"
        commands = {baseline: [py, "-c", BASELINE, str(small), str(HERE)]}
        if shutil.which("goaccess"):
            commands["goaccess --log-format=COMMON"] = [
                "goaccess", str(small), "--log-format=COMMON", "--no-global-config",
                "-o", str(Path(tmp) / "goaccess.json")]
        for workers, name in modes.items():
            commands[name] = fit_cmd(py, small, Path(tmp) / "model.json", workers)
        rounds = [{name: run(cmd, tmp, sample=False) for name, cmd in commands.items()}
                  for _ in range(max(1, args.repeat))]
        peaks = {name: peak_of(run(cmd, tmp)) for name, cmd in commands.items()}
        rows = {name: {**min((r[name] for r in rounds), key=lambda x: x["wall"]),
                       **peaks[name]} for name in commands}
        parse = subprocess.run([py, "-c", PARSE, str(small)], capture_output=True, text=True,
                               check=True)
        parse_cpu = float(parse.stderr.strip().splitlines()[-1])
        base = rows[baseline]["wall"]
        print(f"\n{'on ' + format(n, ',') + ' lines, best of ' + str(len(rounds)):32s} "
              f"{'wall s':>8s} {'CPU s':>8s} "
              f"{'peak MB':>8s} {'vs baseline':>12s} {'PSS sum':>8s} {'RSS sum':>8s}")
        for name, r in rows.items():
            print(f"{name:32s} {r['wall']:8.2f} {r['cpu']:8.2f} {r['rss_mb']:8.0f} "
                  f"{base / r['wall']:11.1f}x {r['pss_mb']:8.0f} {r['rss_sum_mb']:8.0f}")
        fit = rows[modes["default"]]["rss_mb"]
        if "goaccess --log-format=COMMON" in rows:
            ga = rows["goaccess --log-format=COMMON"]["rss_mb"]
            print(f"\npeak of {modes['default']}: {fit / ga:.2f}x GoAccess's (target <= 2x); "
                  f"a bare 'import scipy.stats': {scipy_rss(py):.0f} MB")
        print(f"\nparse alone: {n / parse_cpu:,.0f} lines per CPU-second, best of 3 "
              "(target >= 1,000,000)")
        for workers, name in modes.items():
            each = ", ".join(f"{r[baseline]['wall'] / r[name]['wall']:.1f}x" for r in rounds)
            print(f"{name}: {base / rows[name]['wall']:.1f}x the baseline end to end, best "
                  f"against best (target >= 5x); round by round {each}")
        for workers, name in modes.items():
            stages = subprocess.run([py, "-c", STAGES, str(small), workers], capture_output=True,
                                    text=True, check=True).stderr.strip().splitlines()[-1]
            print(f"{name} stages, wall s (the stage ending at each mark): {stages}")
        if args.big:
            big = Path(tmp) / f"nasa-{args.big}.log"
            if not big.exists():
                build_log(big, args.big)
            nb = sum(1 for _ in open(big, "rb"))
            print(f"\non {nb:,} lines ({big.stat().st_size / 1e9:.2f} GB):")
            big_base = None
            if args.big_baseline:
                big_cmd = [py, "-c", BASELINE, str(big), str(HERE)]
                big_base = {**run(big_cmd, tmp, sample=False), **peak_of(run(big_cmd, tmp))}
                print(f"  baseline (regex per line): {big_base['wall']:.1f} s wall, "
                      f"peak {big_base['rss_mb']:.0f} MB")
            for workers, name in modes.items():
                cmd = fit_cmd(py, big, Path(tmp) / "big.json", workers)
                r = {**run(cmd, tmp, sample=False), **peak_of(run(cmd, tmp))}
                vs = f", {big_base['wall'] / r['wall']:.1f}x the baseline" if big_base else ""
                grow = r["wall"] / rows[name]["wall"]
                print(f"  {name}: {r['wall']:.1f} s wall, {r['cpu']:.1f} CPU-s, peak "
                      f"{r['rss_mb']:.0f} MB (target <= 1024; PSS sum {r['pss_mb']:.0f}, RSS "
                      f"sum {r['rss_sum_mb']:.0f}); {grow:.1f}x the {n:,}-line "
                      f"time for {nb / n:.0f}x the lines (target <= {nb / n:.0f}x: linear){vs}")
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
