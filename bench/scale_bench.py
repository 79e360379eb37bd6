"""Scale: ``wagon fit`` end to end on 1M and 10M lines against the parsers it is measured
against, all in one run (issue 12).

Inputs are built into a temporary directory (never the checkout) from the real NASA trace
(tests/data/): copy k of its 20,000 lines is shifted k days and its clients renamed to IPv4
addresses of their own (10.x.y.z, so GoAccess's ``%h`` reads them and sessions of different
copies never meet). Every measurement runs in a child process; wall time, CPU time and peak RSS
come from that child's own ``wait4`` usage.

- baseline: bench/baseline_parser.py (one regex per line, strptime) on the 1M-line log;
- goaccess: ``goaccess LOG --log-format=COMMON -o out.json`` when installed;
- parse: wagon's parser alone (``parse_logs``), lines per CPU-second (best of 3);
- fit: ``wagon fit LOG`` (the CLI) on 1M and on 10M lines; then, in another child, the wall
  time of each of its stages on 1M lines (import, parse, sessionize, fit, model).

Targets: fit(1M) >= 5x the baseline; parse >= 1M lines per CPU-second; fit(10M) <= 10x
fit(1M); peak RSS of fit(10M) <= 1 GB.

    python bench/scale_bench.py [--lines 1000000] [--big 10000000 | --big 0] [--keep DIR]
"""
from __future__ import annotations

import argparse
import gzip
import os
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import date, timedelta
from pathlib import Path

HERE = Path(__file__).resolve().parent
NASA = HERE.parent / "tests" / "data" / "nasa-aug95-morning.log.gz"


def build_log(path: Path, lines: int) -> int:
    """Copies of the NASA trace, copy k shifted k days with its clients renamed to addresses
    10+k//256 . k%256 . i//256 . i%256 (i: the client's index in the trace)."""
    src = gzip.decompress(NASA.read_bytes()).splitlines(keepends=True)
    index: dict[bytes, int] = {}
    template = b"".join(b"%d.%d " % divmod(index.setdefault(line.split(b" ", 1)[0],
                                                            len(index)), 256)
                        + line.split(b" ", 1)[1] for line in src)
    per = len(src)
    copies = -(-lines // per)
    with open(path, "wb") as out:
        for k in range(copies):
            day = (date(1995, 8, 1) + timedelta(days=k)).strftime("%d/%b/%Y").encode()
            pre = b"%d.%d." % (10 + k // 256, k % 256)
            data = pre + template.replace(b"01/Aug/1995", day).replace(b"\n", b"\n" + pre)
            out.write(data[:-len(pre)])
    return copies * per


def run(cmd: list[str], cwd: str) -> dict:
    """Wall seconds, CPU seconds and peak RSS (MB) of a child process; fails loudly."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{err[-2000:]}")
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime,
            "rss_mb": usage.ru_maxrss / 1024}


PARSE = ("import sys, time\nfrom wagon.logs.parse import parse_logs\nbest = 1e9\n"
         "for _ in range(3):\n"
         "    t = time.process_time(); parse_logs([sys.argv[1]], fmt='common')\n"
         "    best = min(best, time.process_time() - t)\n"
         "print(best, file=sys.stderr)")
STAGES = ("import sys, time\nt0 = time.perf_counter()\nimport wagon.cli.fit\n"
          "from wagon.modeling import FitOptions, fit_logs\n"
          "marks = [('import', time.perf_counter())]\n"
          "def progress(stage, done, total):\n"
          "    if done == total and stage != marks[-1][0]:\n"
          "        marks.append((stage, time.perf_counter()))\n"
          "fit_logs([sys.argv[1]], FitOptions(), progress=progress)\n"
          "marks.append(('model', time.perf_counter()))\n"
          "print(' '.join(f'{s} {t - u:.2f}' for (s, t), (_, u) in "
          "zip(marks, [(None, t0)] + marks)), file=sys.stderr)")
BASELINE = ("import sys; sys.path.insert(0, sys.argv[2])\nfrom baseline_parser import parse_file\n"
            "records, bad = parse_file(sys.argv[1]); assert not bad")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lines", type=int, default=1_000_000)
    ap.add_argument("--big", type=int, default=10_000_000, help="0: skip the big run")
    ap.add_argument("--keep", default=None, help="build the logs here and keep them")
    args = ap.parse_args()
    py = sys.executable
    tmp = args.keep or tempfile.mkdtemp(prefix="wagon-scale-")
    os.makedirs(tmp, exist_ok=True)
    try:
        small = Path(tmp) / f"nasa-{args.lines}.log"
        if not small.exists():
            build_log(small, args.lines)
        n = sum(1 for _ in open(small, "rb"))
        print(f"log: {n:,} lines, {small.stat().st_size / 1e6:.0f} MB; load "
              f"{os.getloadavg()[0]:.2f}")
        rows = {"baseline (regex per line)": run([py, "-c", BASELINE, str(small), str(HERE)],
                                                 tmp)}
        if shutil.which("goaccess"):
            rows["goaccess --log-format=COMMON"] = run(
                ["goaccess", str(small), "--log-format=COMMON", "--no-global-config",
                 "-o", str(Path(tmp) / "goaccess.json")], tmp)
        parse = subprocess.run([py, "-c", PARSE, str(small)], capture_output=True, text=True,
                               check=True)
        parse_cpu = float(parse.stderr.strip().splitlines()[-1])
        rows["wagon fit (1 process)"] = run([py, "-m", "wagon", "fit", str(small), "-o",
                                             str(Path(tmp) / "model.json")], tmp)
        base = rows["baseline (regex per line)"]["wall"]
        print(f"\n{'on ' + format(n, ',') + ' lines':32s} {'wall s':>8s} {'CPU s':>8s} "
              f"{'peak MB':>8s} {'vs baseline':>12s}")
        for name, r in rows.items():
            print(f"{name:32s} {r['wall']:8.2f} {r['cpu']:8.2f} {r['rss_mb']:8.0f} "
                  f"{base / r['wall']:11.1f}x")
        fit1 = rows["wagon fit (1 process)"]
        print(f"\nparse alone: {n / parse_cpu:,.0f} lines per CPU-second, best of 3 "
              "(target >= 1,000,000)")
        print(f"fit end to end: {base / fit1['wall']:.1f}x the baseline (target >= 5x)")
        stages = subprocess.run([py, "-c", STAGES, str(small)], capture_output=True,
                                text=True, check=True).stderr.strip().splitlines()[-1]
        print(f"fit stages, wall s (the stage ending at each mark): {stages}")
        if args.big:
            big = Path(tmp) / f"nasa-{args.big}.log"
            if not big.exists():
                build_log(big, args.big)
            nb = sum(1 for _ in open(big, "rb"))
            r = run([py, "-m", "wagon", "fit", str(big), "-o", str(Path(tmp) / "big.json")],
                    tmp)
            print(f"\nwagon fit on {nb:,} lines ({big.stat().st_size / 1e9:.2f} GB): "
                  f"{r['wall']:.1f} s wall, {r['cpu']:.1f} CPU-s, peak RSS {r['rss_mb']:.0f} MB")
            print(f"  {r['wall'] / fit1['wall']:.1f}x the {n:,}-line time for "
                  f"{nb / n:.0f}x the lines (target <= 10x); peak RSS target <= 1024 MB")
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
