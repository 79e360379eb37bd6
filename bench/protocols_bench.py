"""HTTPS and HTTP/2 against nginx on loopback (TLS, HTTP/2), each beside a baseline of the same
run against the same nginx:

1. HTTPS keep-alive requests/s of one engine process (50 persistent connections, no think time)
   vs ``wrk`` with one thread and 50 connections over TLS (target ≥ 0.5×); the CPU each spends
   per request (the engine's process; wrk's, once it ended), the best of each (target ≤ 1.6×);
2. HTTP/2 requests/s: 50 browsers on one connection each, pages of a 1 KB page and 9 1 KB
   objects fetched as concurrent streams, vs ``h2load`` with 50 clients and 10 streams each on
   the same ten URLs (target ≥ 0.3×); with jh2 installed (``wagon-workload[h2fast]``), the
   engine on h2 as well, in a process where jh2 is hidden; and the engine's CPU per request
   beside what the HTTP/2 library alone spends on the same requests and answers (no sockets,
   no engine): the floor under the engine's, and the ratio it would cap; CPU per request
   against h2load's (target ≤ 3×);
3. new TLS connections/s: HTTP/1.0 over HTTPS (a connection and a handshake per request, full
   or resumed) vs ``httperf --ssl``'s best rate without errors (full handshakes with
   ``--ssl-no-reuse``, resumed without it); stated, no target.

Each side three times, alternately (parts 1 and 2; part 3 twice), the best of each.

    python bench/protocols_bench.py [--part 1 2 3]
"""
from __future__ import annotations

import functools
import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from wagon.replay import ReplayOptions, h2lib, http2 as engine_h2, replay  # noqa: E402
from wagon.replay.identity import DEFAULT_AGENT  # noqa: E402
from parts import run_parts  # noqa: E402
from replay_bench import (KEEPALIVE_CLICKS, closed_loop_scenario, engine_run,  # noqa: E402
                          wrk_keepalive)
from tests.servers import certificate, nginx, replay_on_h2, write_scenario_file  # noqa: E402

OBJECTS = 9
SIZE = 1024
RUNS = 3                # each side, alternately; the best of each


@functools.cache
def _certificate(tmp: Path) -> tuple[Path, Path]:
    """The run's certificate (one for every part)."""
    return certificate(tmp / "cert")


def _site(tmp: Path) -> Path:
    site = tmp / "site"
    site.mkdir(exist_ok=True)
    (site / "p.html").write_bytes(b"p" * SIZE)
    for i in range(OBJECTS):
        (site / f"o{i}.gif").write_bytes(b"o" * SIZE)
    return site


def _scenario(tmp: Path, cls: str, conns: int, clicks: int, objects: int = 0) -> Path:
    pages = [("/p.html", SIZE, list(range(objects)))]
    objs = [(f"/o{i}.gif", SIZE) for i in range(objects)]
    name = re.sub(r"\W", "_", cls)
    return write_scenario_file(tmp / f"{name}-{objects}.jsonl", pages, objs, [cls],
                               [(0.0, 0, [(0, 0.0)] * clicks)] * conns)


def _ours(scenario: Path, server, cert: Path) -> tuple[float, int]:
    s = replay(str(scenario), ReplayOptions(target=server.url, emulation=False,
                                            ca_file=str(cert), fail_on=()))
    return s["requests"]["ok"] / s["duration_s"], s["errors"]["total"]


def _timed(run, *args) -> tuple[tuple[float, int], float]:
    """``run(*args)`` (the engine here, or h2load as a child): its result, and the CPU seconds
    this process and its ended children spent on it."""
    def cpu() -> float:
        t = os.times()
        return t.user + t.system + t.children_user + t.children_system
    began = cpu()
    return run(*args), cpu() - began


def _best(runs: list[tuple[float, int]]) -> str:
    return (f"{max(r for r, _ in runs):,.0f} req/s (best of "
            f"{', '.join(f'{r:,.0f}' for r, _ in runs)}; errors {sum(e for _, e in runs)})")


def _cpu_line(label: str, ours: list[float], theirs: list[float], base: str,
              target: float) -> str:
    """CPU per request of each side (µs, best of its runs) and their ratio: the engine's
    best against the baseline's best."""
    return (f"{label}: wagon {min(ours):.1f} µs (best of {', '.join(f'{c:.1f}' for c in ours)})"
            f", {base} {min(theirs):.1f} µs (best of {', '.join(f'{c:.1f}' for c in theirs)})"
            f" -> {min(ours) / min(theirs):.2f}x {base}'s (target <= {target:g})")


def keepalive(tmp: Path) -> None:
    """Part 1: replay_bench's part 1 over TLS, its closed loop and its 200,000 requests."""
    cert = _certificate(tmp)
    scenario = closed_loop_scenario(tmp, "lan/http11", 50, KEEPALIVE_CLICKS)
    ours, theirs, cpu, wrk_cpu = [], [], [], []
    with nginx(_site(tmp), tmp / "ng1", access_log=False, tls=cert) as server:
        for _ in range(RUNS):
            rate, spent, n, s = engine_run(scenario, server.url, str(cert[0]))
            ours.append((rate, s["errors"]["total"]))
            cpu.append(spent / n * 1e6)
            rate, spent, n = wrk_keepalive(server.url)
            theirs.append((rate, 0))
            wrk_cpu.append(spent / n * 1e6)
    ratio = max(r for r, _ in ours) / max(r for r, _ in theirs)
    print(f"1. HTTPS keep-alive: wagon {_best(ours)} (1 process, 50 connections, TLS 1.3), "
          f"wrk -t1 -c50 {_best(theirs)} -> ratio {ratio:.2f} (target >= 0.5)")
    print(_cpu_line("1. HTTPS keep-alive CPU per request", cpu, wrk_cpu, "wrk", 1.6))


def _h2load(url: str, requests: int) -> tuple[float, int]:
    uris = [url + "p.html"] + [f"{url}o{i}.gif" for i in range(OBJECTS)]
    out = subprocess.run(["h2load", "-n", str(requests), "-c", "50", "-m", str(OBJECTS + 1),
                          *uris], capture_output=True, text=True, check=True).stdout
    rate = float(re.search(r"finished in [\d.]+\w+, ([\d.]+) req/s", out).group(1))
    failed = int(re.search(r"(\d+) failed", out).group(1))
    return rate, failed


def _ours_on_h2(scenario: Path, server, cert: Path) -> tuple[float, int]:
    """``_ours`` with the engine on the pure-Python h2 (a process where jh2 is hidden)."""
    _, s = replay_on_h2(scenario, target=server.url, emulation=False, ca_file=str(cert),
                        fail_on=[])
    return s["requests"]["ok"] / s["duration_s"], s["errors"]["total"]


#: nginx's answer to each request of part 2 (its header fields, as it sends them)
ANSWER = [(b":status", b"200"), (b"server", b"nginx/1.22.1"),
          (b"date", b"Wed, 25 Nov 2026 22:00:00 GMT"), (b"content-type", b"image/gif"),
          (b"content-length", str(SIZE).encode()),
          (b"last-modified", b"Wed, 25 Nov 2026 21:59:00 GMT"), (b"etag", b'"6566b1f4-400"'),
          (b"accept-ranges", b"bytes")]


def _request(url: bytes, referer: bool) -> list[tuple[bytes, bytes]]:
    """The engine's header fields for ``url`` of part 2 (a session's identity: its Referer)."""
    fields = [(b":method", b"GET"), (b":scheme", b"https"), (b":authority", b"127.0.0.1:8443"),
              (b":path", url), (b"user-agent", DEFAULT_AGENT.encode()),
              (b"accept", b"*/*")]
    return fields + [(b"referer", b"https://127.0.0.1:8443/p.html")] if referer else fields


def _library_cost(pages: int = 3000) -> float:
    """CPU µs per request that the HTTP/2 library alone spends on part 2's traffic on the
    client's side: the engine's state machine sends a page's requests, reads the answers (a
    server connection of the same library makes nginx's) in two reads and acknowledges their
    DATA; no sockets, no engine. The floor under the engine's time per request."""
    client = engine_h2.client_state()
    server = h2lib.H2State(h2lib.H2Configuration(client_side=False, header_encoding=None))
    server.initiate_connection()
    server.receive_data(client.data_to_send())           # the prefaces and their ACKs
    client.receive_data(server.data_to_send())
    server.receive_data(client.data_to_send())
    urls = [b"/p.html"] + [f"/o{i}.gif".encode() for i in range(OBJECTS)]
    requests = [_request(u, i > 0) for i, u in enumerate(urls)]
    body = b"o" * SIZE
    spent = 0.0
    for _ in range(pages):
        began = time.process_time()
        sids = []
        for fields in requests:
            sids.append(client.get_next_available_stream_id())
            client.send_headers(sids[-1], fields, end_stream=True)
        wire = client.data_to_send()
        spent += time.process_time() - began
        server.receive_data(wire)
        for sid in sids:
            server.send_headers(sid, ANSWER)
            server.send_data(sid, body, end_stream=True)
        wire = server.data_to_send()
        began = time.process_time()
        for read in (wire[:len(wire) // 2], wire[len(wire) // 2:]):
            for ev in client.receive_data(read):
                if isinstance(ev, h2lib.DataReceived):
                    client.acknowledge_received_data(ev.flow_controlled_length, ev.stream_id)
        wire = client.data_to_send()
        spent += time.process_time() - began
        server.receive_data(wire)
    return spent / (pages * len(urls)) * 1e6


def http2(tmp: Path) -> None:
    """The engine on the installed HTTP/2 library and, when that is jh2, on h2 as well."""
    cert = _certificate(tmp)
    clicks = 60
    requests = 50 * clicks * (OBJECTS + 1)
    scenario = _scenario(tmp, "lan/h2", 50, clicks, OBJECTS)
    ours, pure, theirs, cpu, h2load_cpu = [], [], [], [], []
    with nginx(_site(tmp), tmp / "ng2", access_log=False, tls=cert, http2=True) as server:
        for _ in range(RUNS):
            got, spent = _timed(_ours, scenario, server, cert[0])
            ours.append(got)
            cpu.append(spent / requests * 1e6)
            if h2lib.NAME == "jh2":
                pure.append(_ours_on_h2(scenario, server, cert[0]))
            got, spent = _timed(_h2load, server.url, requests)
            theirs.append(got)
            h2load_cpu.append(spent / requests * 1e6)
    best = max(r for r, _ in theirs)
    for label, runs in ((h2lib.NAME, ours), ("h2", pure)):
        if runs:
            print(f"2. HTTP/2: wagon on {label} {_best(runs)} (1 process, 50 connections, pages "
                  f"of 1 + {OBJECTS} streams), h2load -c50 -m{OBJECTS + 1} {_best(theirs)} -> "
                  f"ratio {max(r for r, _ in runs) / best:.2f} (target >= 0.3)")
    floor = _library_cost()
    print(f"2. HTTP/2 CPU per request: wagon on {h2lib.NAME} {min(cpu):.1f} µs (its process, "
          f"best of {', '.join(f'{c:.1f}' for c in cpu)}), of which {h2lib.NAME} alone "
          f"{floor:.1f} µs (the same requests and answers, no sockets): {h2lib.NAME} alone "
          f"would run {1e6 / floor:,.0f} req/s, ratio {1e6 / floor / best:.2f}")
    print(_cpu_line(f"2. HTTP/2 CPU per request on {h2lib.NAME}", cpu, h2load_cpu, "h2load", 3))


def _httperf_best(port: int, reuse: bool) -> tuple[float, int]:
    """httperf --ssl's best request rate without errors over rates 100 to 3,000/s."""
    best = 0.0
    for rate in (100, 200, 400, 700, 1000, 1500, 2000, 3000):
        time.sleep(1)
        cmd = ["httperf", "--hog", "--ssl", "--server", "127.0.0.1", "--port", str(port),
               "--uri", "/p.html", "--num-conns", str(rate * 2), "--num-calls", "1",
               "--rate", str(rate), "--timeout", "5"] + ([] if reuse else ["--ssl-no-reuse"])
        try:
            out = subprocess.run(cmd, capture_output=True, text=True, timeout=60).stdout
        except subprocess.TimeoutExpired:
            break
        got = re.search(r"Request rate: ([\d.]+) req/s", out)
        errors = re.search(r"Errors: total (\d+)", out)
        if got is None or errors is None or int(errors.group(1)):
            break
        best = max(best, float(got.group(1)))
    return best, 0


def new_connections(tmp: Path) -> None:
    cert = _certificate(tmp)
    with nginx(_site(tmp), tmp / "ng3", access_log=False, tls=cert) as server:
        for label, cls, reuse in (("full", "lan/http10x1+noresume", False),
                                  ("resumed", "lan/http10x1", True)):
            scenario = _scenario(tmp, cls, 50, 40)
            ours, theirs = [], []
            for _ in range(2):
                time.sleep(1)
                ours.append(_ours(scenario, server, cert[0]))
                theirs.append(_httperf_best(server.port, reuse))
            print(f"3. new TLS connections ({label} handshakes): wagon {_best(ours)} (1 "
                  f"process, 50 at once, HTTP/1.0 over TLS 1.3), httperf --ssl"
                  f"{'' if reuse else ' --ssl-no-reuse'} best error-free {_best(theirs)} -> "
                  f"ratio {max(r for r, _ in ours) / max(max(r for r, _ in theirs), 1):.2f}")


def main() -> None:
    run_parts(__doc__, {1: keepalive, 2: http2, 3: new_connections})


if __name__ == "__main__":
    main()
