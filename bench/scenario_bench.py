"""Scenario files at scale (issue 28): ``wagon synth`` against the NumPy limit, and the reader.

1. synth: ``synthesize`` writing N sessions of the NASA model (fitted from tests/data/) against
   the NumPy limit measured in the same run: the same variates drawn (``Generator.batches``,
   NumPy and SciPy only) plus the same bytes written from memory. Target: ≤ 3× at 10⁷.
   Peak RSS of fresh processes writing N/10 and N sessions (target: flat).
2. read: ``Scenario.batches`` over the N-session file, in sessions per CPU second (target
   ≥ 10⁶), against the line-by-line JSON reader (``json.loads`` per line, the reader before
   issue 28) on its first 10⁵ sessions; ``Scenario.sessions`` (one object per session) beside.
3. compare's scenario side: peak RSS of a fresh process loading the 10⁶-session scenario as a
   workload (``load_workload``); with ``--compare-lines L``, ``wagon compare`` of an L-line log
   (copies of the NASA trace, as bench/scale_bench.py builds it) against that scenario: its
   peak RSS (target at 10⁷ lines: ≤ 1 GB) and time; with ``--baseline DIR``, the same run
   of the code in DIR (a checkout of an earlier commit, first on PYTHONPATH) just before.

    python bench/scenario_bench.py [--sessions 10000000] [--runs 2] [--compare-lines 10000000]
                                   [--baseline DIR]
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from itertools import islice
from pathlib import Path

from wagon import fit_logs, load_model, save_model
from wagon.formats.scenario import read_scenario
from wagon.synth import Generator, SynthOptions

from scale_bench import build_log
from synth_bench import write as synth

NASA = Path(__file__).resolve().parent.parent / "tests" / "data" / "nasa-aug95-morning.log.gz"


def numpy_limit(model: str, n: int, out: str, sample: bytes) -> float:
    """The same variates drawn, and as many bytes as ``out`` holds written (from memory)."""
    gen = Generator(load_model(model), SynthOptions(sessions=n, seed=1))
    size = os.path.getsize(out)
    t0 = time.perf_counter()
    for _ in gen.batches():
        pass
    with open(out + ".limit", "wb") as f:
        for _ in range(size // len(sample)):
            f.write(sample)
        f.write(sample[:size % len(sample)])
    dt = time.perf_counter() - t0
    os.unlink(out + ".limit")
    return dt


def read_rate(path: str) -> tuple[float, float]:
    """(sessions per CPU second, sessions) of Scenario.batches over the file."""
    t0, n = time.process_time(), 0
    for b in read_scenario(path).batches():
        n += len(b)
    return n / (time.process_time() - t0), n


def json_rate(path: str, limit: int = 100_000) -> float:
    t0 = time.process_time()
    with open(path, "rb") as f:
        f.readline()
        for raw in islice(f, limit):
            json.loads(raw)
    return limit / (time.process_time() - t0)


def objects_rate(path: str, limit: int = 10 ** 6) -> float:
    t0 = time.process_time()
    n = sum(1 for _ in islice(read_scenario(path).sessions(), limit))
    return n / (time.process_time() - t0)


def compare_run(log: Path, scenario: str, code: str | None = None) -> tuple[float, int]:
    """(seconds, peak RSS in MB) of ``wagon compare`` of ``log`` against ``scenario`` in a
    fresh process, run from the code in ``code`` (None: this checkout's), in the log's folder
    (``-m`` puts the working directory first on the path: a checkout's would win)."""
    env = dict(os.environ, PYTHONPATH=code) if code else None
    t0 = time.perf_counter()
    done = subprocess.run(["/usr/bin/time", "-f", "%M", sys.executable, "-m", "wagon",
                           "compare", str(log), scenario], capture_output=True, text=True,
                          check=True, env=env, cwd=log.parent)
    return time.perf_counter() - t0, int(done.stderr.split()[-1]) // 1024


def child_rss(*args: str) -> int:
    out = subprocess.run([sys.executable, __file__, *args], capture_output=True, text=True,
                         check=True).stdout
    return int(out.split()[-1])


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] in ("--child-synth", "--child-workload"):
        if sys.argv[1] == "--child-synth":
            synth(sys.argv[2], int(sys.argv[3]), sys.argv[4])
        else:
            from wagon.analysis.workload import load_workload
            load_workload(sys.argv[2])
        print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024)
        return
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sessions", type=int, default=10 ** 7)
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--compare-lines", type=int, default=0)
    ap.add_argument("--baseline", help="a checkout of earlier code to run compare from too")
    a = ap.parse_args()
    n = a.sessions
    with tempfile.TemporaryDirectory() as tmp:
        model = os.path.join(tmp, "nasa.json")
        save_model(fit_logs([str(NASA)]).model, model)
        out, small = os.path.join(tmp, "s.jsonl"), os.path.join(tmp, "m.jsonl")
        synth(model, 10 ** 6, small)
        with open(small, "rb") as f:
            sample = f.read(1 << 20)
        pairs = [(synth(model, n, out), numpy_limit(model, n, out, sample))
                 for _ in range(a.runs)]                # interleaved: both see the same load
        t_synth, t_limit = (min(p[k] for p in pairs) for k in (0, 1))
        size = os.path.getsize(out)
        print(f"synth  : {n:,} sessions ({size / 1e6:,.0f} MB) in {t_synth:.2f} s; NumPy limit "
              f"{t_limit:.2f} s -> {t_synth / t_limit:.2f}x (target <= 3x)")
        rss_small = child_rss("--child-synth", model, str(n // 10), out)
        rss_big = child_rss("--child-synth", model, str(n), out)
        print(f"memory : peak RSS {rss_small} MB at {n // 10:,} sessions, {rss_big} MB at {n:,} "
              f"(x{rss_big / rss_small:.2f} for 10x the sessions)")
        rate, count = max(read_rate(out) for _ in range(a.runs))
        base = max(json_rate(out) for _ in range(a.runs))
        objs = objects_rate(out)
        print(f"read   : Scenario.batches {rate:,.0f} sessions/CPU s over {count:,} (target >= "
              f"1,000,000); json.loads per line {base:,.0f}/s -> {rate / base:.1f}x; "
              f"Scenario.sessions {objs:,.0f}/s")
        rss_w = child_rss("--child-workload", small)
        print(f"compare: the 10^6-session scenario as a workload: peak RSS {rss_w} MB")
        if a.compare_lines:
            log = Path(tmp) / "big.log"
            lines = build_log(log, a.compare_lines)
            runs = ([("baseline", a.baseline)] if a.baseline else []) + [("this code", None)]
            for label, code in runs:
                seconds, rss = compare_run(log, small, code)
                print(f"compare: {lines:,}-line log against the 10^6-session scenario "
                      f"({label}): {seconds:.1f} s, peak RSS {rss} MB (target <= 1024 MB)")


if __name__ == "__main__":
    main()
