"""``wagon report LOG`` against GoAccess in the same run (issue 38): wall time of each on the
same log, best of R, for the Elastic Apache log (10,000 real combined lines) and for 10 and 100
copies of it (each copy's addresses moved to another /8, so that every copy adds visitors and
requests as a longer log would; its times are the original's).

GoAccess writes its HTML report (``-o report.html``, ``--log-format=COMBINED``); wagon its own
(``-o``). Both parse every line and count the same panels (GoAccess more of them).

    python bench/logreport_bench.py [--copies 1,10,100] [--runs 3]
"""
from __future__ import annotations

import argparse
import gzip
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

LOG = Path(__file__).parent.parent / "tests" / "data" / "elastic-apache-may15.log.gz"


def copies(lines: list[bytes], k: int) -> bytes:
    """``k`` copies of ``lines``, copy i with its addresses' first byte set to i + 1."""
    first = re.compile(rb"^\d+")
    return b"".join(first.sub(str(i + 1).encode(), line) + b"\n"
                    for i in range(k) for line in lines)


def best(cmd: list[str], runs: int) -> float:
    """The fastest of ``runs`` runs of ``cmd`` (each must succeed), wall seconds."""
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--copies", default="1,10,100")
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    goaccess = shutil.which("goaccess")
    wagon = [sys.executable, "-m", "wagon"]
    lines = gzip.open(LOG).read().splitlines()
    with tempfile.TemporaryDirectory() as d:
        for k in map(int, args.copies.split(",")):
            log = Path(d) / f"x{k}.log"
            log.write_bytes(copies(lines, k))
            w = best([*wagon, "report", str(log), "-o", f"{d}/w.html"], args.runs)
            said = f"{k * len(lines):,} lines, {log.stat().st_size / 1e6:.1f} MB: wagon report " \
                   f"{w:.2f} s ({w / k / len(lines) * 1e6:.1f} µs/line)"
            if goaccess:
                g = best([goaccess, str(log), "--log-format=COMBINED", "--no-global-config",
                          "-o", f"{d}/g.html"], args.runs)
                said += f", goaccess {g:.2f} s ({g / k / len(lines) * 1e6:.1f} µs/line)"
            print(said, flush=True)
    if not goaccess:
        print("goaccess is not installed (apt-get install goaccess): wagon alone")


if __name__ == "__main__":
    main()
