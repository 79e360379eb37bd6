"""Replay engine against nginx on loopback, each figure beside a baseline from the same run.

1. keep-alive requests/s of one engine process (50 persistent connections, no think time)
   vs wrk with one thread and 50 connections (target ≥ 0.3×);
2. new-connection requests/s (HTTP/1.0, a connection per request) vs httperf's best rate
   without errors (target ≥ 1×);
3. 10,000 concurrent sessions held by one process (WAGON's class mix, emulation on): peak
   memory (target < 1 GB);
4. session start lag at 1,000 sessions/s (target p99 < 2 ms), beside the floor: the lag of
   bare timers on the same event loop.

    python bench/replay_bench.py [--part 1 2 3 4]
"""
from __future__ import annotations

import argparse
import json
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from wagon.formats.classes import DEFAULT_CLASSES  # noqa: E402
from wagon.replay import ReplayOptions, replay  # noqa: E402
from tests.servers import nginx, write_scenario_file  # noqa: E402

PAGE = ("/p.html", 1024, [])


def _site(tmp: Path) -> Path:
    site = tmp / "site"
    site.mkdir(exist_ok=True)
    (site / "p.html").write_bytes(b"p" * 1024)
    return site


def _closed_loop(tmp: Path, cls: str, conns: int, clicks: int) -> Path:
    return write_scenario_file(tmp / f"{cls.replace('/', '_')}.jsonl", [PAGE], [], [cls],
                               [(0.0, 0, [(0, 0.0)] * clicks)] * conns)


def keepalive(tmp: Path) -> None:
    scenario = _closed_loop(tmp, "lan/http11", 50, 600)
    with nginx(_site(tmp), tmp / "ng1", access_log=False) as server:
        s = replay(str(scenario), ReplayOptions(target=server.url, emulation=False))
        out = subprocess.run(["wrk", "-t1", "-c50", "-d8s", server.url + "p.html"],
                             capture_output=True, text=True, check=True).stdout
    wrk = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    ours = s["requests"]["ok"] / s["duration_s"]
    print(f"1. keep-alive: wagon {ours:,.0f} req/s (1 process, 50 connections, errors "
          f"{s['errors']['total']}), wrk -t1 -c50 {wrk:,.0f} req/s -> ratio {ours / wrk:.2f} "
          "(target >= 0.3)")


def _httperf(port: int, rate: int, conns: int) -> tuple[float, int]:
    """(request rate, errors) of one httperf run; a run that prints no summary failed."""
    try:
        out = subprocess.run(["httperf", "--hog", "--server", "127.0.0.1", "--port", str(port),
                              "--uri", "/p.html", "--num-conns", str(conns), "--num-calls", "1",
                              "--rate", str(rate), "--timeout", "5"],
                             capture_output=True, text=True, timeout=60).stdout
    except subprocess.TimeoutExpired:             # httperf can spin when overloaded
        return 0.0, 1
    got = re.search(r"Request rate: ([\d.]+) req/s", out)
    errors = re.search(r"Errors: total (\d+)", out)
    if got is None or errors is None:
        return 0.0, 1
    return float(got.group(1)), int(errors.group(1))


def new_connections(tmp: Path) -> None:
    scenario = _closed_loop(tmp, "lan/http10x1", 50, 200)
    with nginx(_site(tmp), tmp / "ng2", access_log=False) as server:
        s = replay(str(scenario), ReplayOptions(target=server.url, emulation=False))
        best = 0.0
        for rate in (1000, 2000, 3000, 4000, 5000, 6000, 8000, 10000):
            time.sleep(2)                    # let the last run's TIME_WAIT sockets age a little
            got, errors = _httperf(server.port, rate, rate * 2)
            if errors:
                break
            best = max(best, got)
    ours = s["requests"]["ok"] / s["duration_s"]
    print(f"2. new connections: wagon {ours:,.0f} req/s (1 process, HTTP/1.0, errors "
          f"{s['errors']['total']}), httperf best error-free {best:,.0f} req/s -> ratio "
          f"{ours / best:.2f} (target >= 1)")


def concurrent(tmp: Path) -> None:
    n = 10_000
    sessions = [(i * 0.0005, i % 4, [(0, 0.0), (0, 60.0)]) for i in range(n)]
    scenario = write_scenario_file(tmp / "c.jsonl", [PAGE], [], DEFAULT_CLASSES.split(","),
                                   sessions)
    with nginx(_site(tmp), tmp / "ng3", connections=12_000, access_log=False) as server:
        code = ("import json, resource\n"
                "from wagon.replay import replay, ReplayOptions\n"
                "s = replay(%r, ReplayOptions(target=%r, max_time=20))\n"
                "print(json.dumps({'rss': resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, "
                "'started': s['sessions']['started'], 'completed': s['sessions']['completed'], "
                "'errors': s['errors'], 'connections': s['connections']}))"
                % (str(scenario), server.url))
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             check=True).stdout
    r = json.loads(out.splitlines()[-1])
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    mb = r["rss"] / 1024
    print(f"3. concurrency: {r['started']:,} sessions started, {r['completed']} completed while "
          f"held, {r['connections']:,} connections, errors {r['errors']['total']}: peak RSS "
          f"{mb:,.0f} MB ({r['rss'] / r['started']:.0f} KB/session; this bench process: "
          f"{base / 1024:,.0f} MB) (target < 1024 MB)")


def start_lag(tmp: Path) -> None:
    import asyncio

    import numpy as np
    import uvloop

    sessions = [(i / 1000.0, 0, [(0, 0.0)]) for i in range(10_000)]
    scenario = write_scenario_file(tmp / "l.jsonl", [PAGE], [], ["lan/http11"], sessions)
    with nginx(_site(tmp), tmp / "ng4", access_log=False) as server:
        s = replay(str(scenario), ReplayOptions(target=server.url, emulation=False))

    async def floor() -> list[float]:
        loop = asyncio.get_running_loop()
        lags = []
        await asyncio.sleep(0)               # measured as the scheduler does: fresh loop time
        t0 = time.perf_counter() + 0.2
        skew = time.perf_counter() - loop.time()
        done = loop.create_future()
        for i in range(10_000):
            due = t0 + i / 1000.0

            def fire(due=due, last=i == 9_999):
                lags.append(abs(time.perf_counter() - due))
                if last:
                    done.set_result(None)
            loop.call_at(due - skew, fire)
        await done
        return lags
    bare = np.array(uvloop.run(floor())) * 1e3
    lag = s["send_lag_ms"]
    print(f"4. start lag at 1,000 sessions/s: p50 {lag['p50']:.2f} ms, p99 {lag['p99']:.2f} ms, "
          f"max {lag['max']:.2f} ms (target p99 < 2 ms); bare timers on the same loop: p50 "
          f"{np.percentile(bare, 50):.2f} ms, p99 {np.percentile(bare, 99):.2f} ms; "
          f"{s['sessions']['late']} late sessions, errors {s['errors']['total']}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--part", type=int, nargs="*", default=[1, 2, 3, 4])
    args = ap.parse_args()
    parts = {1: keepalive, 2: new_connections, 3: concurrent, 4: start_lag}
    with tempfile.TemporaryDirectory() as tmp:
        for k in args.part:
            parts[k](Path(tmp))


if __name__ == "__main__":
    main()
