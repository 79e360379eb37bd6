"""Replay engine against nginx on loopback, each figure beside a baseline from the same run.

1. keep-alive requests/s of one engine process (50 persistent connections, no think time)
   vs wrk with one thread and 50 connections (target ≥ 0.5×), and the CPU each uses per request
   (the engine's process over its whole replay, wrk's from its rusage): the engine's CPU per
   request ≤ 1.6× wrk's (issue 40). Three runs of each, alternately; each ratio the best of
   one side against the best of the other;
2. new-connection requests/s (HTTP/1.0, a connection per request) vs httperf's best rate
   without errors (target ≥ 1×), and CPU per request (the engine's process; httperf's own
   account in its best run: target ≤ 2×); each side twice, alternately, the best of each;
3. 10,000 concurrent sessions started at 1,000/s by one process (WAGON's class mix, emulation
   on), each holding its connection through a 60 s think time: start lag (target p99 < 10 ms),
   the event loop's lag and its stalls (target: none over 50 ms), peak memory (target < 1 GB),
   and the CPU the process uses while it holds them all — with a scheduler doing O(1) work per
   wake-up it stays what holding 1,000 costs;
4. session start lag at 1,000 sessions/s (target p99 < 2 ms), beside the floor: the lag of
   bare timers on the same event loop;
5. a stop amid clicks: 3,000 sessions of five clicks (a page of 12 objects, WAN class) started
   at 1,000/s and stopped at 2.5 s, 2,500 of them in a click: the event loop's lag max, beside
   the same starts of one-click sessions that end by themselves (target: no stall over 50 ms);
6. the engine's own work per request, free of the machine's load: the user-space machine
   instructions its event loop runs per request of part 1's closed loop (50 sessions of 200
   clicks), counted by valgrind's callgrind (the kernel's part, the same as wrk's, is not
   counted); no target: the figure to compare across changes when CPU seconds are noisy.

    python bench/replay_bench.py [--part 1 2 3 4 5 6]
"""
from __future__ import annotations

import json
import os
import re
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from wagon.formats.classes import DEFAULT_CLASSES  # noqa: E402
from wagon.formats.scenario import ScenarioWriter, read_scenario  # noqa: E402
from wagon.replay import ReplayOptions, replay  # noqa: E402
from parts import run_parts  # noqa: E402
from tests.servers import nginx, write_scenario_file  # noqa: E402

PAGE = ("/p.html", 1024, [])


def _site(tmp: Path) -> Path:
    site = tmp / "site"
    site.mkdir(exist_ok=True)
    (site / "p.html").write_bytes(b"p" * 1024)
    return site


def closed_loop_scenario(tmp: Path, cls: str, conns: int, clicks: int) -> Path:
    """``conns`` sessions of ``clicks`` clicks without think time, as ``wagon synth`` writes
    them (the form the engine reads fastest)."""
    name = cls.replace("/", "_")
    sc = read_scenario(write_scenario_file(tmp / f"{name}-hand.jsonl", [PAGE], [], [cls],
                                           [(0.0, 0, [(0, 0.0)] * clicks)] * conns))
    path = tmp / f"{name}.jsonl"
    with open(path, "w") as out:
        writer = ScenarioWriter(out, {k: v for k, v in sc.header.items()
                                      if k not in ("format", "version")})
        for batch in sc.batches():
            writer.write(batch)
    return path


KEEPALIVE_RUNS = 3


def engine_run(scenario: Path, url: str, ca_file: str | None = None
               ) -> tuple[float, float, int, dict]:
    """The engine's run: requests/s, CPU seconds of this process over the whole replay,
    requests, and its summary (``ca_file``: the certificate of an HTTPS ``url``)."""
    c0 = os.times()
    s = replay(str(scenario), ReplayOptions(target=url, emulation=False, ca_file=ca_file))
    c1 = os.times()
    return (s["requests"]["ok"] / s["duration_s"], c1.user - c0.user + c1.system - c0.system,
            s["requests"]["ok"], s)


def wrk_keepalive(url: str) -> tuple[float, float, int]:
    """wrk -t1 -c50 for 8 s: requests/s, its CPU seconds (its rusage, once it has ended),
    requests (also protocols_bench's baseline over TLS)."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run(["wrk", "-t1", "-c50", "-d8s", url + "p.html"],
                         capture_output=True, text=True, check=True).stdout
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1)),
            r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime,
            int(re.search(r"(\d+) requests in", out).group(1)))


#: part 1's closed loop: 50 sessions of 4,000 clicks (200,000 requests; also
#: protocols_bench's over TLS), long enough that the run's start-up and connections weigh
#: under 0.5 µs a request, as wrk's over its 8 s
KEEPALIVE_CLICKS = 4000


def keepalive(tmp: Path) -> None:
    scenario = closed_loop_scenario(tmp, "lan/http11", 50, KEEPALIVE_CLICKS)
    runs = []
    with nginx(_site(tmp), tmp / "ng1", access_log=False) as server:
        for _ in range(KEEPALIVE_RUNS):
            runs.append((engine_run(scenario, server.url), wrk_keepalive(server.url)))

    for k, ((rate, cpu, n, s), (wrate, wcpu, wn)) in enumerate(runs, 1):
        print(f"   run {k}: wagon {rate:,.0f} req/s, {cpu:.2f} CPU-s for {n:,} requests = "
              f"{1e6 * cpu / n:.1f} us/request ({100 * s['generator']['cpu']:.0f} % of a core "
              f"while playing, errors {s['errors']['total']}); wrk {wrate:,.0f} req/s, "
              f"{wcpu:.2f} CPU-s for {wn:,} = {1e6 * wcpu / wn:.1f} us/request")
    ours = min(1e6 * cpu / n for (_, cpu, n, _), _ in runs)
    theirs = min(1e6 * wcpu / wn for _, (_, wcpu, wn) in runs)
    rate, wrate = max(r[0][0] for r in runs), max(r[1][0] for r in runs)
    print(f"1. keep-alive (best of {len(runs)} each): wagon {rate:,.0f} req/s (1 process, 50 "
          f"connections), wrk -t1 -c50 {wrate:,.0f} req/s -> ratio {rate / wrate:.2f} (target "
          f">= 0.5); CPU per request wagon {ours:.1f} us, wrk {theirs:.1f} us -> "
          f"{ours / theirs:.2f}x wrk's (target <= 1.6)")


def _httperf(port: int, rate: int, conns: int) -> tuple[float, int, float]:
    """(request rate, errors, CPU µs per request by its own account) of one httperf run; a
    run that prints no summary failed."""
    try:
        out = subprocess.run(["httperf", "--hog", "--server", "127.0.0.1", "--port", str(port),
                              "--uri", "/p.html", "--num-conns", str(conns), "--num-calls", "1",
                              "--rate", str(rate), "--timeout", "5"],
                             capture_output=True, text=True, timeout=60).stdout
    except subprocess.TimeoutExpired:             # httperf can spin when overloaded
        return 0.0, 1, 0.0
    got = re.search(r"Request rate: ([\d.]+) req/s", out)
    errors = re.search(r"Errors: total (\d+)", out)
    cpu = re.search(r"CPU time \[s\]: user ([\d.]+) system ([\d.]+)", out)
    requests = re.search(r"Total: connections \d+ requests (\d+)", out)
    if got is None or errors is None or cpu is None or requests is None:
        return 0.0, 1, 0.0
    return (float(got.group(1)), int(errors.group(1)),
            1e6 * (float(cpu.group(1)) + float(cpu.group(2))) / max(int(requests.group(1)), 1))


def _httperf_best(port: int) -> tuple[float, float]:
    """httperf's best request rate without errors over rates 1,000 to 10,000/s, and its CPU
    per request in that run (µs)."""
    best = (0.0, 0.0)
    for rate in (1000, 2000, 3000, 4000, 5000, 6000, 8000, 10000):
        time.sleep(2)                        # let the last run's TIME_WAIT sockets age a little
        got, errors, cpu = _httperf(port, rate, rate * 2)
        if errors:
            break
        best = max(best, (got, cpu))
    return best


def new_connections(tmp: Path) -> None:
    scenario = closed_loop_scenario(tmp, "lan/http10x1", 50, 200)
    ours, theirs, cpu, errors = [], [], [], 0
    with nginx(_site(tmp), tmp / "ng2", access_log=False) as server:
        for _ in range(2):
            time.sleep(2)
            rate, spent, n, s = engine_run(scenario, server.url)
            ours.append(rate)
            cpu.append(1e6 * spent / n)
            errors += s["errors"]["total"]
            theirs.append(_httperf_best(server.port))
    best = max(theirs)
    print(f"2. new connections: wagon {max(ours):,.0f} req/s (best of {ours[0]:,.0f}, "
          f"{ours[1]:,.0f}; 1 process, HTTP/1.0, errors {errors}), httperf best error-free "
          f"{best[0]:,.0f} req/s (best of {theirs[0][0]:,.0f}, {theirs[1][0]:,.0f}) -> ratio "
          f"{max(ours) / best[0]:.2f} (target >= 1)")
    print(f"2. new connections CPU per request: wagon {min(cpu):.1f} us (best of "
          f"{cpu[0]:.1f}, {cpu[1]:.1f}), httperf {best[1]:.1f} us in its best run (--hog: it "
          f"polls without sleeping, so its CPU is its run's length) -> {min(cpu) / best[1]:.2f}x "
          f"httperf's (target <= 2)")


def _cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (/proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _held(tmp: Path, server, n: int) -> dict:
    """n sessions started at 1,000/s, each holding a connection through a 60 s think time;
    the replay's summary, peak RSS, and its CPU use over 3 s once all are held."""
    sessions = [(i / 1000.0, i % 4, [(0, 0.0), (0, 60.0)]) for i in range(n)]
    scenario = write_scenario_file(tmp / f"c{n}.jsonl", [PAGE], [], DEFAULT_CLASSES.split(","),
                                   sessions)
    hold = n / 1000.0 + 2.0
    code = ("import json, resource\n"
            "from wagon.replay import replay, ReplayOptions\n"
            "s = replay(%r, ReplayOptions(target=%r, max_time=%r))\n"
            "print(json.dumps({'rss': resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, "
            "'s': s}))" % (str(scenario), server.url, hold + 4.0))
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    time.sleep(hold + 0.5)                 # start-up, all sessions started, their first page
    cpu0, t0 = _cpu_seconds(proc.pid), time.monotonic()
    time.sleep(3.0)
    held_cpu = (_cpu_seconds(proc.pid) - cpu0) / (time.monotonic() - t0)
    out = proc.communicate()[0]
    r = json.loads(out.splitlines()[-1])
    r["held_cpu"] = held_cpu
    return r


def concurrent(tmp: Path) -> None:
    with nginx(_site(tmp), tmp / "ng3", connections=12_000, access_log=False) as server:
        small = _held(tmp, server, 1_000)
        big = _held(tmp, server, 10_000)
    s = big["s"]
    g = s["generator"]
    lag, loop, stalls = g["start_lag"], g["loop_lag"], g["stalls"]
    waiting = "-" if stalls.get("waiting_s") is None else f"{stalls['waiting_s']:.3f}"
    print(f"3. concurrency: {s['sessions']['started']:,} sessions started at 1,000/s, "
          f"{s['connections']:,} connections, errors {s['errors']['total']}: start lag p50 "
          f"{lag['p50']:.2f} ms, p99 {lag['p99']:.2f} ms, max {lag['max']:.2f} ms (target p99 "
          f"< 10 ms, max <= 50 ms); event-loop lag p99 {loop['p99']:.2f} ms, max "
          f"{loop['max']:.2f} ms; stalls over 5 ms: {stalls['own_s']:.3f} s running its own "
          f"code, {stalls['elsewhere_s']:.3f} s not running ({waiting} s of it waiting for a "
          f"core); peak RSS {big['rss'] / 1024:,.0f} MB (target < 1024 MB); CPU while "
          f"holding them {100 * big['held_cpu']:.1f} % of a core, holding 1,000: "
          f"{100 * small['held_cpu']:.1f} %; load average {g['machine']['load_1min']:.2f}")
    for w in s["warnings"]:
        print(f"   WARNING: {w}")


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
    lag = s["generator"]["start_lag"]
    print(f"4. start lag at 1,000 sessions/s: p50 {lag['p50']:.2f} ms, p99 {lag['p99']:.2f} ms, "
          f"max {lag['max']:.2f} ms (target p99 < 2 ms); bare timers on the same loop: p50 "
          f"{np.percentile(bare, 50):.2f} ms, p99 {np.percentile(bare, 99):.2f} ms; "
          f"{s['sessions']['late']} late sessions, errors {s['errors']['total']}")


def _mid_click(tmp: Path, server, clicks: int, max_time: float) -> dict:
    """The summary of 3,000 sessions of ``clicks`` clicks on part 5's page started at 1,000/s
    (its own process), stopped at ``max_time``."""
    sessions = [(i / 1000.0, 0, [(0, 0.0)] * clicks) for i in range(3_000)]
    scenario = write_scenario_file(tmp / f"m{clicks}.jsonl", [("/p.html", 1024, list(range(12)))],
                                   [(f"/o{i}.gif", 8192) for i in range(12)], ["wan/http11"],
                                   sessions)
    code = ("import json\nfrom wagon.replay import replay, ReplayOptions\n"
            "print(json.dumps(replay(%r, ReplayOptions(target=%r, max_time=%r))))"
            % (str(scenario), server.url, max_time))
    out = subprocess.run([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    return json.loads(out.stdout.splitlines()[-1])


def stop_amid_clicks(tmp: Path) -> None:
    site = _site(tmp)
    for i in range(12):
        (site / f"o{i}.gif").write_bytes(b"o" * 8192)
    with nginx(site, tmp / "ng5", connections=12_000, access_log=False) as server:
        stopped = _mid_click(tmp, server, 5, 2.5)
        ended = _mid_click(tmp, server, 1, 12.0)
    r = stopped["requests"]
    print(f"5. stop amid clicks: {r['in_flight']:,} requests in flight and {r['not_started']:,} "
          f"not started at the stop; event-loop lag max "
          f"{stopped['generator']['loop_lag']['max']:.1f} ms (p99 "
          f"{stopped['generator']['loop_lag']['p99']:.1f} ms); the same starts ending by "
          f"themselves: max {ended['generator']['loop_lag']['max']:.1f} ms (target: no stall "
          f"over 50 ms)")


def instructions(tmp: Path) -> None:
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        print("6. instructions: skipped, valgrind is not installed")
        return
    scenario = closed_loop_scenario(tmp, "lan/http11", 50, 200)
    code = ("import json; from wagon.replay import ReplayOptions, replay; "
            "print(json.dumps(replay(%r, ReplayOptions(target=%r, emulation=False))))")
    with nginx(_site(tmp), tmp / "ng6", access_log=False) as server:
        run = subprocess.run([valgrind, "--tool=callgrind", f"--callgrind-out-file={tmp}/cg.out",
                              "--toggle-collect=*pw_*run_until_complete", sys.executable, "-c",
                              code % (str(scenario), server.url)],
                             capture_output=True, text=True, cwd=ROOT, check=True)
    n = json.loads(run.stdout.splitlines()[-1])["requests"]["ok"]
    counted = int(re.search(r"Collected : (\d+)", run.stderr).group(1))
    print(f"6. instructions: {counted / n:,.0f} user-space machine instructions per request in "
          f"the engine's event loop ({n:,} requests, callgrind)")


def main() -> None:
    run_parts(__doc__, {1: keepalive, 2: new_connections, 3: concurrent, 4: start_lag,
                        5: stop_amid_clicks, 6: instructions})


if __name__ == "__main__":
    main()
