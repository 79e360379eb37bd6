"""``--cluster`` against this machine's own ways of using its cores, in one run (issue 12).

1. fit: ``wagon fit LOG`` in one process vs ``wagon fit LOG --cluster local:N`` on the same
   1M-line log (built as bench/scale_bench.py builds it); wall time ratio, and the two models
   compared (they must be identical but for 'created');
2. replay: the same scenario (SESSIONS one-page sessions at RATE per second against nginx) with
   ``--workers N`` vs ``--cluster local:N``: achieved requests/s, session start lag p99 and
   the workers' clock offsets.

    python bench/cluster_bench.py [--lines 1000000] [--workers 2] [--sessions 20000 --rate 1000]
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from scale_bench import build_log  # noqa: E402
from tests.servers import nginx, write_scenario_file  # noqa: E402

WAGON = [sys.executable, "-m", "wagon"]


def timed(cmd: list[str], cwd: Path) -> tuple[float, str]:
    t0 = time.perf_counter()
    out = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    if out.returncode not in (0, 4):
        raise SystemExit(f"{' '.join(cmd)} failed:\n{out.stderr[-2000:]}")
    return time.perf_counter() - t0, out.stdout


def fit(tmp: Path, lines: int, n: int) -> None:
    log = tmp / "big.log"
    built = build_log(log, lines)
    one, _ = timed(WAGON + ["fit", str(log), "-o", "one.json"], tmp)
    many, _ = timed(WAGON + ["fit", str(log), "-o", "many.json", "--cluster", f"local:{n}"], tmp)
    models = [json.loads((tmp / f).read_text()) for f in ("one.json", "many.json")]
    for m in models:
        m.pop("created")
    print(f"1. fit {built:,} lines: one process {one:.2f} s, --cluster local:{n} {many:.2f} s "
          f"(incl. cluster start) = {one / many:.2f}x; models identical: {models[0] == models[1]}")


def replay(tmp: Path, n: int, sessions: int, rate: float) -> None:
    scenario = write_scenario_file(tmp / "s.jsonl", [("/p.html", 1024, [])], [], ["lan/http11"],
                                   [(i / rate, 0, [(0, 0.0)]) for i in range(sessions)])
    site = tmp / "site"
    site.mkdir()
    (site / "p.html").write_bytes(b"x" * 1024)
    with nginx(site, tmp / "ng", access_log=False) as server:
        for how in (["--workers", str(n)], ["--cluster", f"local:{n}"]):
            _, out = timed(WAGON + ["replay", str(scenario), "--target", server.url,
                                    "--no-emulation", "--json", "--fail-on", "errors>100%",
                                    *how], tmp)
            s = json.loads(out)
            offsets = ", ".join(f"{c['clock_offset_ms']:+.3f} ms (± {c['uncertainty_ms']:.3f})"
                                for c in s.get("cluster", {}).get("workers", []))
            print(f"2. replay {' '.join(how)}: {s['requests']['total']:,} requests, "
                  f"{s['requests']['total'] / s['duration_s']:,.0f} req/s, start lag p99 "
                  f"{s['generator']['start_lag']['p99']:.2f} ms, errors {s['errors']['total']}"
                  + (f"; clock offsets {offsets}" if offsets else ""))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lines", type=int, default=1_000_000)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--sessions", type=int, default=20_000)
    ap.add_argument("--rate", type=float, default=1_000.0)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="wagon-cluster-bench-") as d:
        fit(Path(d), a.lines, a.workers)
        replay(Path(d), a.workers, a.sessions, a.rate)


if __name__ == "__main__":
    main()
