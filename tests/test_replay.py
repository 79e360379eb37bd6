"""Replay on loopback: nginx serving a built site, the project's own server, a fault server;
the server's own view (nginx's access log and stub_status, a packet capture) is the observer."""
from __future__ import annotations

import asyncio
import collections
import contextlib
import json
import os
import re
import resource
import signal
import socket
import shutil
import subprocess
import sys
import threading
import time

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from wagon import read_results
from wagon.cli import main
from wagon.formats.scenario import ScenarioSession, read_scenario
from wagon.formats.site import build_site
from wagon.replay import ReplayOptions, replay
from wagon.replay.capture import response_times
from wagon.replay.events import Hooks, PageVisit, clock
from wagon.replay.histogram import Histogram
from wagon.replay.runner import TargetUnreachable
from wagon.replay.scheduler import Scheduler
from wagon.replay.thresholds import ThresholdError, parse_threshold
from wagon.synth import Generator, SynthOptions, synthesize
from wagon.synth.site import resolve_site

from .conftest import require_tool
from .procs import alive, children, cmdline
from .servers import _Fault, fault_server, free_port, nginx, wait_port, write_scenario_file
from .test_synth import hand_model
from wagon.formats.model import save_model

JSON_LATENCY = {"request", "request_all", "connect", "first_byte", "page"}
STATS = {"p50", "p90", "p99", "max"}


def rows(path) -> list[dict]:
    return read_results(path).to_dict("records")


def scenario_requests(sc, s) -> list[str]:
    """The URLs session ``s`` of scenario ``sc`` asks for."""
    site = sc.site
    return [u for p, _ in s.clicks
            for u in [site.page_urls[p]] + [site.object_urls[o] for o in site.page_objects[p]]]


def sessions_whole(got, scenario, cut: float) -> None:
    """Every session in the results ``got`` has a row per request of ``scenario``, and every
    session due when the test cut the run (``cut``, Unix seconds) is there."""
    sc = read_scenario(scenario)
    want = {s.id: len(scenario_requests(sc, s)) for s in sc.sessions()}
    assert all(n == want[k] for k, n in got.groupby("session").size().items())
    due = {s.id for s in sc.sessions() if s.start / sc.speedup <= cut -
           got.attrs["run"]["t0_unix"]}
    assert due <= set(got["session"])


def expected_urls(scenario) -> collections.Counter:
    sc = read_scenario(scenario)
    return collections.Counter(u for s in sc.sessions() for u in scenario_requests(sc, s))


@contextlib.contextmanager
def listening():
    """A port where the kernel completes connections that nobody accepts (the pre-flight
    passes; requests hang)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(128)
        yield f"http://127.0.0.1:{s.getsockname()[1]}/"


@contextlib.contextmanager
def refusing_after_preflight():
    """A port that accepts the pre-flight connect, then refuses."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(1)

    def one():
        s.accept()[0].close()
        s.close()
    t = threading.Thread(target=one, daemon=True)
    t.start()
    yield f"http://127.0.0.1:{s.getsockname()[1]}/"
    t.join(5)


@pytest.fixture
def site_and_scenario(tmp_path):
    def make(classes: str, sessions: int = 30, think=(-2.5, 0.3), rate: float = 30.0,
             clicks_p: float = 0.34):
        model = hand_model(think=think, rate=rate, clicks_p=clicks_p)
        scenario = tmp_path / f"s-{abs(hash(classes))}.jsonl"
        with open(scenario, "w") as f:
            synthesize(Generator(model, SynthOptions(sessions=sessions, seed=3, pages=40,
                                                     classes=classes)), f)
        if not (tmp_path / "site").exists():
            build_site(resolve_site(model, pages=40).spec, tmp_path / "site")
        return scenario
    return make


def big_site(tmp_path, size: int):
    site = tmp_path / "big"
    site.mkdir(exist_ok=True)
    (site / "big.bin").write_bytes(np.random.default_rng(0).bytes(size))
    return site


# ---- what reaches the server ---------------------------------------------------------------
def test_every_request_made_once_without_errors(tmp_path, site_and_scenario):
    scenario = site_and_scenario("lan/http10x4,t1-dsl/http11,wan/pipeline,lan/early-close,"
                                 "satellite/http11x2", sessions=40, clicks_p=0.5)
    with nginx(tmp_path / "site", tmp_path / "ng") as server:
        s = replay(str(scenario), ReplayOptions(target=server.url,
                                                results=str(tmp_path / "r.csv")))
        want = expected_urls(scenario)
        log = server.access(expect=sum(want.values()))
    assert s["errors"]["total"] == 0 and s["requests"]["total"] == sum(want.values())
    assert collections.Counter(a.uri for a in log) == want
    assert all(a.status == 200 for a in log)
    got = rows(tmp_path / "r.csv")
    assert collections.Counter(r["url"] for r in got) == want
    assert sum(r["bytes"] for r in got) == sum(a.bytes for a in log)
    assert s["sessions"]["completed"] == 40 and s["stopped_by"] is None and s["complete"]
    pages = rows(tmp_path / "r.pages.csv")
    assert len(pages) == sum(len(x.clicks) for x in read_scenario(scenario).sessions())


def test_open_connections_over_time_are_what_nginx_holds(tmp_path):
    """20 sessions at t0, each a page, 2 s of think time on its kept-alive connection, a page:
    the summary's count of open connections (end of each second) against nginx's own
    stub_status, sampled while the replay runs."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "p.html").write_bytes(b"x" * 100)
    scenario = write_scenario_file(tmp_path / "k.jsonl", [("/p.html", 100, [])], [],
                                   ["lan/http11"], [(0.0, 0, [(0, 0.0), (0, 2.0)])] * 20)
    seen: list[tuple[float, int]] = []
    with nginx(site, tmp_path / "ng") as server:
        done = threading.Event()
        out: dict = {}

        def run():
            out["s"] = replay(str(scenario), ReplayOptions(target=server.url, emulation=False,
                                                           results=str(tmp_path / "r.csv")))
            done.set()
        threading.Thread(target=run, daemon=True).start()
        while not done.wait(0.2):
            seen.append((time.time(), server.active() - 1))        # less the status request
        time.sleep(1.5)
        seen.append((time.time(), server.active() - 1))
    s = out["s"]
    t0 = read_results(tmp_path / "r.csv").attrs["run"]["t0_unix"]
    held = s["open_connections"]["per_second"]
    assert s["open_connections"]["peak"] == 20 and held[:2] == [20, 20]
    assert len(held) <= 3                                   # closed at the sessions' end (~2 s)
    for t, nginx_holds in seen:
        k = t - t0
        if 0.3 < k < 1.7:                                   # everyone thinking, kept alive
            assert nginx_holds == 20 == held[int(k)]
        if k > len(held) + 0.5:                             # all closed, on both sides
            assert nginx_holds == 0
    assert any(0.3 < t - t0 < 1.7 for t, _ in seen) and seen[-1][1] == 0


@pytest.mark.untimed      # connections counted without emulation, nothing timed: two at a time
@pytest.mark.parametrize("protocol, per_session", [
    ("http10x4", "requests"), ("http11", "one"), ("pipeline", "one"), ("early-close", "clicks"),
    ("http11x3", "at most 3"), ("early-closex3", "clicks, at most 3"),
    ("early-close-pipeline", "clicks"),
])
def test_connections_seen_by_the_server(tmp_path, site_and_scenario, protocol, per_session):
    scenario = site_and_scenario(f"lan/{protocol}", sessions=12)
    with nginx(tmp_path / "site", tmp_path / "ng") as server:
        replay(str(scenario), ReplayOptions(target=server.url, results=str(tmp_path / "r.csv"),
                                            emulation=False))
        log = server.access(expect=sum(expected_urls(scenario).values()))
    by_conn = collections.Counter(a.conn for a in log)
    sc = read_scenario(scenario)
    sessions = list(sc.sessions())
    requests = sum(1 + len(sc.site.page_objects[p]) for s in sessions for p, _ in s.clicks)
    clicks = sum(len(s.clicks) for s in sessions)
    ours = rows(tmp_path / "r.csv")
    conns_per_session = collections.defaultdict(set)
    for r in ours:
        conns_per_session[r["session"]].add(r["conn"])
    if per_session == "requests":
        assert len(by_conn) == requests and set(by_conn.values()) == {1}
    elif per_session == "one":
        assert len(by_conn) == len(sessions)
        assert all(len(c) == 1 for c in conns_per_session.values())
    elif per_session == "clicks":
        assert len(by_conn) == clicks
    elif per_session == "clicks, at most 3":            # WAGON's 1.1-EC with K connections
        assert clicks < len(by_conn) <= 3 * clicks
        page_urls = set(sc.site.page_urls)              # a connection serves one page visit:
        pages_on = collections.Counter(a.conn for a in log if a.uri in page_urls)
        assert max(pages_on.values()) == 1              # never a second page after the first
    else:
        assert len(sessions) < len(by_conn) <= 3 * len(sessions)
        assert max(len(c) for c in conns_per_session.values()) == 3
    if "pipeline" in protocol:
        # a page's objects are written together: one start time per (session, page visit)
        objs = [r for r in ours if r["kind"] == "object"]
        starts = collections.Counter((r["session"], r["intended"]) for r in objs)
        same = collections.Counter((r["session"], r["intended"], r["start"]) for r in objs)
        assert len(starts) == len(same)


@contextlib.contextmanager
def _sampled(read, every: float):
    """``read()`` every ``every`` s on a thread while the block runs: (seconds since the block
    began, value) pairs, the list growing until the block ends."""
    samples, stop = [], threading.Event()

    def sample():
        t0 = time.monotonic()
        while not stop.is_set():
            samples.append((time.monotonic() - t0, read()))
            stop.wait(every)
    t = threading.Thread(target=sample)
    t.start()
    try:
        yield samples
    finally:
        stop.set()
        t.join()


def _served_while(server, run) -> tuple[dict, list[tuple[float, int]]]:
    """Run ``run()`` while sampling the server's open connections every 0.1 s."""
    with _sampled(lambda: server.active() - 1, 0.1) as samples:       # not the sampler
        return run(), samples


def _send_buffer(port: int) -> int:
    """The largest send buffer the kernel has grown for the server's connections on ``port``
    (``ss``'s ``tb``): what the server may have handed the kernel that its client has not read
    yet, so the server logs its request that much early."""
    out = subprocess.run(["ss", "-tmnH", "state", "established", f"sport = :{port}"],
                         capture_output=True, text=True).stdout
    return max(map(int, re.findall(r"\btb(\d+)", out)), default=0)


def _felt(took: np.ndarray, transfer: float, rate_kbps: int, sndbuf: int) -> bool:
    """The server's own request times are the emulated transfer's, less what its send buffer (and
    the 64 KiB asyncio or nginx may hold above it) still held when it wrote the last byte, and
    at most 15 % more."""
    early = (sndbuf + 65_536) / (rate_kbps * 1e3 / 8)
    return sndbuf > 0 and bool(np.all((took > transfer - early) & (took < 1.15 * transfer)))


def test_the_server_is_held_as_long_as_the_emulated_client_downloads(tmp_path):
    """4 MB to clients of 16 Mbit/s and 20 ms (a 2.0 s transfer), three new sessions a second for
    6 s, HTTP/1.0: nginx's own $request_time is the emulated transfer time (less what the kernel
    held in its send buffer, seen by ``ss``, up to 15 % more), and
    the connections nginx holds (stub_status) follow Little's law, λ·W = 3/s × 2.02 s."""
    size, rate, rtt, lam, n = 4_000_000, 16_000, 0.020, 3.0, 18
    transfer = size * 8 / (rate * 1e3)
    scenario = write_scenario_file(tmp_path / "b.jsonl", [("/big.bin", size, [])], [],
                                   [f"{rtt * 1e3:g}ms-{rate}kbps/http10x1"],
                                   [(i / lam, 0, [(0, 0.0)]) for i in range(n)])
    with nginx(big_site(tmp_path, size), tmp_path / "ng") as server, \
            _sampled(lambda: _send_buffer(server.port), 0.05) as buffers:
        s, samples = _served_while(server, lambda: replay(str(scenario), ReplayOptions(
            target=server.url, results=str(tmp_path / "r.csv"))))
        log = server.access(expect=n)
    assert s["errors"]["total"] == 0 and len(log) == n
    took = np.array([a.request_time for a in log])
    sndbuf = max(b for _, b in buffers)
    assert _felt(took, transfer, rate, sndbuf), (transfer, took.min(), took.max(), sndbuf)
    steady = [a for t, a in samples if transfer + 1.0 < t < n / lam - 0.3]
    assert len(steady) > 20
    little = lam * (rtt + transfer)
    assert abs(np.mean(steady) / little - 1) < 0.15, (little, np.mean(steady))
    ours = np.array([r["last_byte"] - r["first_byte"] for r in rows(tmp_path / "r.csv")])
    assert np.all(np.abs(ours / transfer - 1) < 0.01)


def test_the_embedded_server_feels_the_emulated_client(tmp_path):
    """The same with ``wagon serve --access-log``: its own request time (3 MB: a 1.5 s transfer;
    the send buffer held ~0.3 MB, 0.15 s of it, here and ~0.5 MB on CI once)."""
    size, rate = 3_000_000, 16_000
    transfer = size * 8 / (rate * 1e3)
    site = big_site(tmp_path, size)
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "wagon", "serve", "--site", str(site), "--port",
                             str(port), "--access-log", str(tmp_path / "a.log"), "--max-time",
                             "60"], cwd=tmp_path, stderr=subprocess.DEVNULL)
    try:
        wait_port(port)
        scenario = write_scenario_file(tmp_path / "b.jsonl", [("/big.bin", size, [])], [],
                                       [f"20ms-{rate}kbps/http11"],
                                       [(0.2 * i, 0, [(0, 0.0)]) for i in range(3)])
        with _sampled(lambda: _send_buffer(port), 0.05) as buffers:
            s = replay(str(scenario), ReplayOptions(target=f"http://127.0.0.1:{port}/"))
    finally:
        proc.terminate()
        proc.wait(10)
    assert s["errors"]["total"] == 0
    logged = [re.match(r'^(\S+) - - \[([\d.]+)\] "GET (\S+) HTTP/1\.1" (\d+) (\d+) "[^"]*" "[^"]*" '
                       r'([\d.]+) (\d+) (\d+)$', line).groups()
              for line in (tmp_path / "a.log").read_text().splitlines()]
    took = np.array([float(x[5]) for x in logged if x[2] == "/big.bin"])
    assert len(took) == 3 and all(int(x[4]) == size for x in logged)
    sndbuf = max(b for _, b in buffers)
    assert _felt(took, transfer, rate, sndbuf), (transfer, took, sndbuf)


def test_connect_costs_one_round_trip_and_the_first_byte_two_plus_service(tmp_path):
    """Seen on the wire (tshark): the server accepts with the request right behind (its upload
    time after the handshake, which goes as the last ACK reaches the server), so it never
    waits idle; the client's FIN comes one RTT after the server's answer (R/2 for the answer
    to reach the client, R/2 for the FIN to come back). The client's connect takes one RTT and
    its first byte comes 2 RTT + upload + the server's own service time (capture: request →
    response) after it began to connect."""
    tshark = require_tool("tshark")
    rtt, up = 0.200, 8.0                               # 8 kbit/s up: a request takes ~0.1 s
    site = tmp_path / "site"
    site.mkdir()
    (site / "a.html").write_bytes(b"a" * 300)
    scenario = write_scenario_file(tmp_path / "c.jsonl", [("/a.html", 300, [])], [],
                                   [f"{rtt * 1e3:g}ms-100000kbps-{up:g}kbps/http10x1"],
                                   [(0.5 * i, 0, [(0, 0.0)]) for i in range(3)])
    cap = tmp_path / "cap.pcap"
    with nginx(site, tmp_path / "ng") as server:
        shark = subprocess.Popen([tshark, "-i", "lo", "-f", f"tcp port {server.port}", "-w",
                                  str(cap)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                 text=True)
        deadline = time.monotonic() + 20
        while "Capturing" not in shark.stderr.readline() and time.monotonic() < deadline:
            pass
        replay(str(scenario), ReplayOptions(target=server.url, results=str(tmp_path / "r.csv")))
        time.sleep(0.3)
        shark.send_signal(signal.SIGINT)
        shark.wait(20)
    out = subprocess.run([tshark, "-r", str(cap), "-T", "fields", "-E", "separator=,", "-e",
                          "frame.time_epoch", "-e", "tcp.stream", "-e", "tcp.flags.syn", "-e",
                          "tcp.flags.ack", "-e", "tcp.flags.fin", "-e", "tcp.srcport", "-e",
                          "tcp.len"], capture_output=True, text=True, check=True).stdout
    wire = collections.defaultdict(dict)
    yes = ("1", "True")
    for line in out.splitlines():
        t, stream, syn, ack, fin, src, length = line.split(",")
        w = wire[stream]
        if syn in yes and ack not in yes:
            w.setdefault("syn", float(t))
        elif fin in yes and int(src) != server.port:
            w.setdefault("client_fin", float(t))
        elif int(length or 0) and int(src) != server.port:
            w.setdefault("request", float(t))
        elif int(length or 0):
            w["response"] = float(t)                   # its last segment
    streams = [w for w in wire.values()
               if {"syn", "request", "response", "client_fin"} <= set(w)]
    ours = rows(tmp_path / "r.csv")
    assert len(streams) == 3 == len(ours)
    request = len(f"GET /a.html HTTP/1.0\r\nHost: 127.0.0.1:{server.port}\r\nUser-Agent: "
                  "wagon-replay\r\nAccept: */*\r\n\r\n")
    upload = request * 8 / (up * 1e3)
    for w in streams:
        assert abs(w["request"] - w["syn"] - upload) < 0.015, w
        assert abs(w["client_fin"] - w["response"] - rtt) < 0.015, w
    service = np.mean([w["response"] - w["request"] for w in streams])
    for r in ours:
        assert abs(r["connected"] - r["connect_start"] - rtt) < 0.01
        assert abs(r["first_byte"] - r["connect_start"] - (2 * rtt + upload + service)) < 0.015


def test_emulated_bandwidth_and_delay_hold_for_100_clients(tmp_path):
    """200 KB to a 1.5 Mbit/s, 20 ms client: connect RTT + request RTT + upload + 200 KB at
    1.5 Mbit/s, for each of 100 clients at once, within 10 %."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "big.bin").write_bytes(b"\0" * 200_000)
    sessions = [(0.001 * i, 0, [(0, 0.0)]) for i in range(100)]
    scenario = write_scenario_file(tmp_path / "b.jsonl", [("/big.bin", 200_000, [])], [],
                                   ["20ms-1500kbps/http11"], sessions)
    with nginx(site, tmp_path / "ng") as server:
        s = replay(str(scenario), ReplayOptions(target=server.url, results=str(tmp_path / "r.csv")))
    assert s["errors"]["total"] == 0
    got = rows(tmp_path / "r.csv")
    request = len(b"GET /big.bin HTTP/1.1\r\nHost: 127.0.0.1:00000\r\nUser-Agent: wagon-replay\r\n"
                  b"Accept: */*\r\n\r\n")
    theory = 0.020 + 0.020 + request * 8 / 1.5e6 + (200_000 + 240) * 8 / 1.5e6
    times = np.array([r["last_byte"] - r["intended"] for r in got])
    assert len(times) == 100
    assert np.all(np.abs(times / theory - 1) < 0.10), (theory, times.min(), times.max())


def test_mean_response_time_matches_a_packet_capture(tmp_path, site_and_scenario):
    """As in the RUBiS study: the engine's mean response time (from the request's write) against
    tshark's view of the same requests on loopback, at moderate load: within 100 µs."""
    tshark = require_tool("tshark")
    # 40 sessions, ~270 requests: the means differ by 20-35 µs from run to run
    scenario = site_and_scenario("lan/http11", sessions=40, rate=20.0, think=(-3.0, 0.3))
    cap = tmp_path / "cap.pcap"
    with nginx(tmp_path / "site", tmp_path / "ng") as server:
        shark = subprocess.Popen([tshark, "-i", "lo", "-f", f"tcp port {server.port}",
                                  "-w", str(cap)], stdout=subprocess.DEVNULL,
                                 stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 20
        line = ""
        while "Capturing" not in line and time.monotonic() < deadline:
            line = shark.stderr.readline()
        replay(str(scenario), ReplayOptions(target=server.url, results=str(tmp_path / "r.csv"),
                                            emulation=False))
        time.sleep(0.5)
        shark.send_signal(signal.SIGINT)
        shark.wait(20)
    captured = response_times(str(cap), server.port)
    df = read_results(tmp_path / "r.csv")
    sent = df["connected"].where(df["connected"].notna(), df["start"])   # no emulated delay
    ours = (df["last_byte"] - sent).to_numpy()
    assert len(captured) == len(ours)
    assert abs(np.mean(ours) - np.mean(captured)) < 100e-6, (np.mean(ours), np.mean(captured))


# ---- outcomes --------------------------------------------------------------------------------
@pytest.mark.untimed      # each fault's kind counted, nothing timed but a 1-s timeout
def test_faults_are_recorded_by_kind_and_survived(tmp_path):
    pages = [(u, 10, []) for u in ("/ok", "/500", "/reset", "/truncate", "/hang", "/close")]
    sessions = [(0.05 * i, 0, [(i, 0.0), (0, 0.0)]) for i in range(len(pages))]
    scenario = write_scenario_file(tmp_path / "f.jsonl", pages, [], ["lan/http11"], sessions)
    with fault_server() as port:
        s = replay(str(scenario), ReplayOptions(target=f"http://127.0.0.1:{port}/",
                                                results=str(tmp_path / "r.csv"), timeout=1.0))
    kinds = s["errors"]["by_kind"]
    assert kinds == {"http_5xx": 1, "reset": 1, "truncated": 1, "timeout": 1, "closed": 1}
    assert s["requests"]["ok"] == 1 + 6              # /ok, and every session's second click
    assert s["sessions"]["completed"] == 6 and s["complete"]
    refused = write_scenario_file(tmp_path / "r.jsonl", [("/ok", 10, [])], [], ["lan/http10x1"],
                                  [(0.3, 0, [(0, 0.0)])])
    with refusing_after_preflight() as url:
        s = replay(str(refused), ReplayOptions(target=url))
    assert s["errors"]["by_kind"] == {"refused": 1}


def test_a_slow_transfer_is_never_a_timeout_but_the_request_cap_is_one(tmp_path):
    """12.5 KB at 40 kbit/s takes 2.5 s: with an inactivity timeout of 0.5 s it completes (bytes
    keep coming, 1.4 KB at a time); a cap of 1 s on the whole request ends it as
    request_timeout; a server that says nothing is a timeout after 0.5 s."""
    site = big_site(tmp_path, 12_500)
    scenario = write_scenario_file(tmp_path / "s.jsonl", [("/big.bin", 12_500, [])], [],
                                   ["0ms-40kbps/http11"], [(0.0, 0, [(0, 0.0)])])
    with nginx(site, tmp_path / "ng") as server:
        slow = replay(str(scenario), ReplayOptions(target=server.url, timeout=0.5,
                                                   results=str(tmp_path / "a.csv")))
        capped = replay(str(scenario), ReplayOptions(target=server.url, timeout=0.5,
                                                     request_timeout=1.0,
                                                     results=str(tmp_path / "b.csv")))
    assert slow["errors"]["total"] == 0
    took = rows(tmp_path / "a.csv")[0]
    assert took["last_byte"] - took["start"] > 2.5
    assert capped["errors"]["by_kind"] == {"request_timeout": 1}
    cut = rows(tmp_path / "b.csv")[0]
    assert 0.95 < cut["last_byte"] - cut["start"] < 1.2
    hang = write_scenario_file(tmp_path / "h.jsonl", [("/hang", 10, [])], [],
                               ["0ms-40kbps/http11"], [(0.0, 0, [(0, 0.0)])])
    with fault_server() as port:
        s = replay(str(hang), ReplayOptions(target=f"http://127.0.0.1:{port}/", timeout=0.5,
                                            results=str(tmp_path / "c.csv")))
    assert s["errors"]["by_kind"] == {"timeout": 1}
    r = rows(tmp_path / "c.csv")[0]
    assert 0.45 < r["last_byte"] - r["start"] < 0.8


def test_every_request_of_the_run_has_exactly_one_outcome_at_max_time(tmp_path):
    """Stopped at --max-time: every session due by then has a row for each of its requests
    (done, in flight, or not started); sessions due after it have none; what nginx answered is
    in the file as done or in flight. Pages in flight count with their time so far, and what
    was in flight ends at the stop itself, however late the loop reached its session (it ended
    when the session was cancelled: under a lagging loop 256 sessions' rows ran 1.1 s past the
    run's end, which the reader refuses)."""
    site = big_site(tmp_path, 400_000)
    (site / "p.html").write_bytes(b"p" * 2000)
    pages = [("/p.html", 2000, [0, 0]), ("/big.bin", 400_000, [])]
    objects = [("/p.html", 2000)]
    sessions = [(0.1 * i + 0.05, i % 2, [(i % 2, 0.0), (0, 0.3), (1, 0.2)]) for i in range(40)]
    scenario = write_scenario_file(tmp_path / "m.jsonl", pages, objects,
                                   ["20ms-2000kbps/http11x2", "60ms-3000kbps/http10x2"],
                                   sessions)
    with nginx(site, tmp_path / "ng") as server:
        s = replay(str(scenario), ReplayOptions(target=server.url, results=str(tmp_path / "r.csv"),
                                                max_time=2.0))
        got = read_results(tmp_path / "r.csv")
        served = server.access(expect=s["requests"]["ok"])
    sc = read_scenario(scenario)
    due = [x for x in sc.sessions() if x.start <= 2.0]
    assert set(got["session"]) == {x.id for x in due}
    for x in due:
        mine = got[got["session"] == x.id]
        assert sorted(mine["url"]) == sorted(scenario_requests(sc, x)), x.id
    kinds = collections.Counter(got["error"])
    assert kinds["in_flight"] > 0 and kinds["not_started"] > 0 and kinds[""] > 0
    assert s["requests"]["total"] == len(got) and s["requests"]["ok"] == kinds[""]
    assert s["requests"]["in_flight"] == kinds["in_flight"] and s["errors"]["total"] == 0
    assert s["requests"]["not_started"] == kinds["not_started"]
    assert not s["complete"] and s["stopped_by"] == "max_time"
    assert s["duration_s"] == pytest.approx(2.0, abs=0.05)       # the stop's, not its teardown's
    assert got[got["error"] == ""]["last_byte"].max() <= s["duration_s"]
    assert kinds[""] <= len(served) <= kinds[""] + kinds["in_flight"]
    flying = got[got["error"] == "in_flight"]
    assert flying["start"].notna().all()
    assert (flying["last_byte"] - s["duration_s"]).abs().max() < 1e-5        # the stop's time
    assert got[got["error"] == "not_started"]["start"].isna().all()
    pages_file = read_results(tmp_path / "r.pages.csv")
    assert pages_file["done"].notna().all()
    assert s["pages"]["total"] == len(pages_file)


def test_the_stop_closes_http10_connections_in_flight(tmp_path):
    """HTTP/1.0 browsers stopped amid two rate-limited 300 kB objects (3 s each at 100 kB/s):
    their connections close at the stop, so nginx ends both transfers short then (left open,
    nginx would go on sending them after the stop, and their answers would rewrite the rows
    recorded in flight)."""
    site = big_site(tmp_path, 300_000)
    (site / "p.html").write_bytes(b"p" * 200)
    scenario = write_scenario_file(tmp_path / "s.jsonl", [("/p.html", 200, [0, 0])],
                                   [("/big.bin", 300_000)], ["lan/http10x2"],
                                   [(0.0, 0, [(0, 0.0)])])
    with nginx(site, tmp_path / "ng", locations="location = /big.bin { limit_rate 100k; }") as ng:
        s = replay(str(scenario), ReplayOptions(target=ng.url, results=str(tmp_path / "r.csv"),
                                                max_time=0.5))
        log = ng.access(expect=3, wait=5.0)
    got = read_results(tmp_path / "r.csv")
    assert s["requests"]["in_flight"] == 2 == (got["error"] == "in_flight").sum()
    cut = [a for a in log if a.uri == "/big.bin"]
    assert len(cut) == 2 and all(a.bytes < 300_000 for a in cut), log


class _Clicking:
    """A browser simulated for the scheduler: each click waits for its page (``pages``: one
    future per click, set by the test), then asks for three objects, one a turn of the loop,
    noting whether the run had stopped (``asked``); ``record_stop`` notes ``ticks[0]``."""

    def __init__(self, sched: Scheduler, pages: list, asked: list, ticks: list,
                 recorded: list) -> None:
        self.sched, self.pages, self.asked, self.ticks, self.recorded = (sched, pages, asked,
                                                                         ticks, recorded)

    async def prelude(self) -> None:
        return None

    async def visit(self, page: int, intended: float, view: int = 0,
                    marks: dict[int, int] | None = None, pace=None, url=None,
                    click: int = 0) -> PageVisit:
        self.pages.append(asyncio.get_running_loop().create_future())
        await self.pages[-1]
        for _ in range(3):
            self.asked.append(self.sched.stopped.done())
            await asyncio.sleep(0)
        return PageVisit(0, 0, page, intended, clock(), done=clock())

    def abandon(self, at: float | None = None) -> list: return []
    def close(self) -> None: ...

    def record_stop(self, cut: list, clicks: list[tuple[int, int]]) -> int:
        self.recorded.append(self.ticks[0])
        return 13 * (1 + len(clicks))                # the click in flight and those to come


def _stop_amid_clicks(n: int, clicks: int, hooks: Hooks,
                      pages: list) -> tuple[list, list]:
    """``n`` sessions of ``clicks`` clicks of ``_Clicking`` browsers (their pages' futures
    put in ``pages``), halted once all are in their first click while a coroutine counts the
    loop's turns: what the browsers asked after the stop, the turn at each ``record_stop``."""
    asked, ticks, recorded = [], [0], []

    async def ticker() -> None:
        while True:
            ticks[0] += 1
            await asyncio.sleep(0)

    async def play() -> None:
        loop = asyncio.get_running_loop()
        sessions = [ScenarioSession(i, 0.0, 0, [(0, 0.0)] * clicks) for i in range(n)]
        sched = Scheduler(None, [], sessions, clock(), hooks)
        sched._client = lambda s: _Clicking(sched, pages, asked, ticks, recorded)
        run = loop.create_task(sched.run())
        while len(pages) < n:
            await asyncio.sleep(0.01)
        tick = loop.create_task(ticker())
        sched.halt("max_time")
        await run
        tick.cancel()
    asyncio.run(play())
    return asked, recorded


def test_a_connection_open_at_the_stop_before_its_request_is_named_in_its_row(tmp_path):
    """A page's four objects on four HTTP/1.0 connections share a 2 kbit/s upload (~0.7 s a
    request): at the stop, 0.5 s in, three connections are open with their requests still
    queued. The summary counted them, their rows named none (conn -1): the results held fewer
    connections than the summary said (found in wagon demo's modem/http10x4 class)."""
    site = tmp_path / "site"
    site.mkdir()
    for name in ("a", "o0", "o1", "o2", "o3"):
        (site / name).write_bytes(b"x" * 10)
    scenario = write_scenario_file(tmp_path / "s.jsonl", [("/a", 10, [0, 1, 2, 3])],
                                   [(f"/o{i}", 10) for i in range(4)],
                                   ["20ms-100000kbps-2kbps/http10x4"], [(0.0, 0, [(0, 0.0)])])
    with nginx(site, tmp_path / "ng", access_log=False) as server:
        s = replay(str(scenario), ReplayOptions(target=server.url, max_time=0.5, fail_on=(),
                                                results=str(tmp_path / "r.csv")))
    rows = read_results(tmp_path / "r.csv")
    flying = rows[(rows["error"] == "in_flight") & rows["connected"].notna()]
    assert len(flying) >= 1, rows[["url", "conn", "connected", "error"]]
    assert s["connections"] == rows.loc[rows["conn"] >= 0, "conn"].nunique(), rows["conn"]


def test_a_click_in_flight_at_the_stop_asks_for_nothing_more():
    """300 sessions (three of the stop's slices of 100), each in a click whose page is still
    coming when the run stops; the pages come as the first session ends. A session that then
    asked for the page's objects would issue requests after the stop: none does."""
    hooks, pages = Hooks(), []

    def answer(session: int, completed: bool) -> None:     # the pages come
        for p in pages:
            if not p.done():
                p.set_result(None)
    hooks.session_end.append(answer)
    asked, _ = _stop_amid_clicks(300, 1, hooks, pages)
    assert not any(asked), sum(asked)


def test_the_stops_records_leave_the_loop_turns():
    """300 sessions stopped amid the first of five clicks of 13 requests record 19,500 rows
    after the stop (recorded in the turn that ended them, 2,500 such sessions held the loop
    50-90 ms): another coroutine gets turns of the loop meanwhile; each session is recorded."""
    _, recorded = _stop_amid_clicks(300, 5, Hooks(), [])
    assert len(recorded) == 300 and recorded[-1] - recorded[0] >= 5, recorded[::50]


def test_interrupted_run_keeps_every_outcome_and_exits_non_zero(tmp_path, site_and_scenario):
    scenario = site_and_scenario("lan/http11", sessions=400, rate=40.0, think=(-1.5, 0.3))
    with nginx(tmp_path / "site", tmp_path / "ng") as server:
        proc = subprocess.Popen([sys.executable, "-m", "wagon", "replay", str(scenario),
                                 "--target", server.url, "--results", str(tmp_path / "r.csv"),
                                 "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, cwd=tmp_path)
        server.access(expect=300, wait=30)    # ~1.5 s into 10 s of arrivals: ~50 sessions
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
        summary = json.loads(out)
        served = server.access(expect=summary["requests"]["ok"])
    assert proc.returncode == 5, err
    assert summary["stopped_by"] == "signal" and 0 < summary["sessions"]["started"] < 400
    assert summary["complete"] is False
    got = read_results(tmp_path / "r.csv")
    sc = read_scenario(scenario)
    want = {x.id: len(scenario_requests(sc, x)) for x in sc.sessions()}
    per_session = got.groupby("session").size()
    assert all(per_session[k] == want[k] for k in per_session.index)
    done = (got["error"] == "").sum()
    assert len(got) == summary["requests"]["total"] and done == summary["requests"]["ok"]
    assert done <= len(served) <= done + (got["error"] == "in_flight").sum()


def test_redirects_are_followed_as_their_own_requests(tmp_path):
    pages = [(u, 0, []) for u in ("/redirect", "/redirect-rel", "/loop", "/away")]
    sessions = [(0.02 * i, 0, [(i, 0.0)]) for i in range(4)]
    scenario = write_scenario_file(tmp_path / "r.jsonl", pages, [], ["lan/http11"], sessions)
    with fault_server() as port:
        s = replay(str(scenario), ReplayOptions(target=f"http://127.0.0.1:{port}/",
                                                results=str(tmp_path / "r.csv")))
        served = collections.Counter(p for _, p in _Fault.served)
    got = read_results(tmp_path / "r.csv")
    by = {k: g for k, g in got.groupby("session")}
    assert list(by[0]["url"]) == ["/redirect", "/ok"] and list(by[0]["status"]) == [302, 200]
    assert list(by[1]["url"]) == ["/redirect-rel", "/ok"] and list(by[1]["error"]) == ["", ""]
    assert len(by[2]) == 21 and list(by[2]["error"])[-1] == "too_many_redirects"
    assert list(by[3]["status"]) == [302] and list(by[3]["error"]) == [""]   # elsewhere
    assert served[b"/loop"] == 21 and served[b"/ok"] == 2
    assert s["errors"]["by_kind"] == {"too_many_redirects": 1}
    assert by[0]["intended"].iloc[1] == pytest.approx(by[0]["last_byte"].iloc[0])
    with fault_server() as port:
        s = replay(str(scenario), ReplayOptions(target=f"http://127.0.0.1:{port}/",
                                                follow_redirects=False))
    assert s["requests"]["total"] == 4 and s["errors"]["total"] == 0


def test_idle_resets_and_unanswered_pipelined_requests_are_sent_once_more(tmp_path):
    """A reset on a reused connection before any answer, and pipelined requests left unanswered
    when nginx closes after keepalive_requests: sent again on a new connection, once."""
    scenario = write_scenario_file(tmp_path / "o.jsonl", [("/once", 100, [])], [],
                                   ["lan/http11"], [(0.0, 0, [(0, 0.0), (0, 0.2)])])
    with fault_server() as port:
        s = replay(str(scenario), ReplayOptions(target=f"http://127.0.0.1:{port}/",
                                                results=str(tmp_path / "o.csv")))
        served = list(_Fault.served)
    got = rows(tmp_path / "o.csv")
    assert s["errors"]["total"] == 0 and [r["retried"] for r in got] == [False, True]
    ids = [c for c, _ in served]
    assert ids[0] == ids[1] != ids[2] and len(ids) == 3  # the reset, then a new connection
    site = tmp_path / "site"
    site.mkdir()
    (site / "p.html").write_bytes(b"p" * 500)
    for i in range(5):
        (site / f"o{i}.gif").write_bytes(b"o" * 300)
    pipelined = write_scenario_file(tmp_path / "p.jsonl", [("/p.html", 500, list(range(5)))],
                                    [(f"/o{i}.gif", 300) for i in range(5)], ["lan/pipeline"],
                                    [(0.0, 0, [(0, 0.0)])])
    with nginx(site, tmp_path / "ng", keepalive_requests=3) as server:
        s = replay(str(pipelined), ReplayOptions(target=server.url,
                                                 results=str(tmp_path / "p.csv")))
        log = server.access(expect=6)
    got = rows(tmp_path / "p.csv")
    assert s["errors"]["total"] == 0 and len(got) == 6
    assert sum(r["retried"] for r in got) == 3 and len({a.conn for a in log}) == 2, log
    assert collections.Counter(a.uri for a in log) == collections.Counter(r["url"] for r in got), \
        (log, got)


# ---- the summary, thresholds, exit status --------------------------------------------------
@pytest.mark.untimed      # keys and exit statuses, nothing timed
def test_cli_json_keys_thresholds_and_exit_statuses(tmp_path, site_and_scenario):
    scenario = site_and_scenario("lan/http11", sessions=5)
    with nginx(tmp_path / "site", tmp_path / "ng") as server:
        ok = CliRunner().invoke(main, ["replay", str(scenario), "--target", server.url, "--json"])
        slow = CliRunner().invoke(main, ["replay", str(scenario), "--target", server.url,
                                         "--fail-on", "errors>1%", "--fail-on",
                                         "request.p99>0.001"])
        missing = write_scenario_file(tmp_path / "gone.jsonl", [("/nope.html", 10, [])], [],
                                      ["lan/http11"], [(0.0, 0, [(0, 0.0)])] * 3)
        notfound = CliRunner().invoke(main, ["replay", str(missing), "--target", server.url])
    assert ok.exit_code == 0, ok.output
    summary = json.loads(ok.stdout)
    assert {"requests", "errors", "latency", "generator", "complete"} <= set(summary)
    assert {"total", "ok"} <= set(summary["requests"]) and set(summary["errors"]) == {
        "total", "by_kind"}
    assert JSON_LATENCY <= set(summary["latency"])
    assert all(set(v) == STATS for v in summary["latency"].values())
    assert set(summary["generator"]) == {"start_lag", "loop_lag", "cpu", "stalls", "machine"}
    assert all(set(summary["generator"][k]) == STATS for k in ("start_lag", "loop_lag"))
    assert summary["complete"] is True and summary["requests"]["total"] > 0
    assert slow.exit_code == 4 and "request.p99>0.001" in slow.output and "FAILED" in slow.output
    assert notfound.exit_code == 4 and "http_4xx" in notfound.output
    for args, message in ((["replay", str(scenario), "--target", "ftp://x/"], "http://"),
                          (["replay", str(tmp_path / "none.jsonl"), "--target", "http://x/"],
                           "No such file"),
                          (["replay", str(scenario), "--target", "http://x/", "--protocol",
                            "http3"], "unknown protocol"),
                          (["replay", str(scenario), "--target", "http://127.0.0.1:1/",
                            "--fail-on", "latency>3"], "unknown metric")):
        r = CliRunner().invoke(main, args)
        assert r.exit_code == 2 and message in r.stderr, r.output


def test_preflight_fails_fast_with_one_line(tmp_path):
    scenario = write_scenario_file(tmp_path / "s.jsonl", [("/a", 10, [])], [], ["lan/http11"],
                                   [(0.0, 0, [(0, 0.0)])])
    began = time.monotonic()
    r = CliRunner().invoke(main, ["replay", str(scenario), "--target",
                                  f"http://127.0.0.1:{free_port()}/"])
    assert r.exit_code == 3 and time.monotonic() - began < 2
    assert r.stderr.count("\n") == 1 and "cannot connect" in r.stderr
    port = free_port()                                # an IPv6 address as URLs write it
    with pytest.raises(TargetUnreachable, match=re.escape(f"connect to [::1]:{port} (")):
        replay(str(scenario), ReplayOptions(target=f"http://[::1]:{port}/"))
    with socket.socket() as full:                     # a backlog that is full: SYNs dropped
        full.bind(("127.0.0.1", 0))
        full.listen(0)
        port = full.getsockname()[1]
        with socket.create_connection(("127.0.0.1", port), 1):
            began = time.monotonic()
            with pytest.raises(TargetUnreachable, match="no answer"):
                replay(str(scenario), ReplayOptions(target=f"http://127.0.0.1:{port}/"))
            assert time.monotonic() - began < 2.5


@pytest.mark.parametrize("text, message", [
    ("errors>1%", None), ("errors >= 10", None), ("request.p99>2000", None),
    ("start_lag.max<=5.5", None), ("request>3", "statistic"), ("errors.p99>1", "no statistic"),
    ("connect.p99>5%", "milliseconds"), ("cpu>1", "unknown metric"), ("request.p95>1", "write"),
])
def test_threshold_syntax(text, message):
    if message is None:
        t = parse_threshold(text)
        assert t.text == text.strip()
    else:
        with pytest.raises(ThresholdError, match=message):
            parse_threshold(text)


@given(st.lists(st.floats(1e-6, 3000.0), min_size=1, max_size=400),
       st.lists(st.floats(1e-6, 3000.0), max_size=400))
def test_histogram_percentiles_are_numpys_within_a_tenth_of_a_percent(a, b):
    h, other = Histogram(), Histogram()
    for x in a:
        h.add(x)
    for x in b:
        other.add(x)
    h.merge(other.state())
    both = np.array(a + b)
    got = h.percentiles((50, 90, 99, 100))
    want = np.percentile(both, [50, 90, 99, 100], method="inverted_cdf")
    assert np.allclose(got, want, rtol=1e-3, atol=0)
    assert h.top == both.max() and h.count == len(both)


def test_a_scenario_without_sessions_replays_to_an_empty_summary(tmp_path, site_and_scenario):
    scenario = site_and_scenario("lan/http11", sessions=3)
    empty = tmp_path / "empty.jsonl"
    empty.write_text(scenario.read_text().splitlines()[0] + "\n")
    with listening() as url:
        s = replay(str(empty), ReplayOptions(target=url))
    assert s["requests"]["total"] == 0 and s["sessions"]["started"] == 0 and s["complete"]
    assert s["warnings"] == []      # (its CPU share over a run of milliseconds is noise: not asserted)
    assert s["latency"]["request"] == dict.fromkeys(STATS)
    assert s["thresholds"] == [{"threshold": "errors>1%", "value": 0.0, "failed": False}]


def test_warns_before_a_run_that_needs_more_files_than_the_limit(tmp_path):
    sessions = [(0.0, 0, [(0, 0.0), (0, 30.0)])] * 200          # 200 connections held 30 s
    scenario = write_scenario_file(tmp_path / "n.jsonl", [("/a", 10, [])], [], ["lan/http11"],
                                   sessions)
    with listening() as url:
        r = subprocess.run([sys.executable, "-m", "wagon", "replay", str(scenario), "--target",
                            url, "--max-time", "1"], cwd=tmp_path, capture_output=True,
                           text=True, timeout=60,
                           preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_NOFILE,
                                                                 (64, 64)))
    assert r.returncode == 4, r.stderr    # out of files: errors>1% fails (--max-time is planned)
    assert "would hold about 200 connections" in r.stderr and "limit is 64" in r.stderr


# ---- workers -------------------------------------------------------------------------------
def test_workers_share_the_sessions_start_together_and_merge(tmp_path, site_and_scenario):
    scenario = site_and_scenario("lan/http11,lan/http10x2", sessions=30)
    burst = write_scenario_file(tmp_path / "t0.jsonl", [("/index.html", 0, [])], [],
                                ["lan/http11"], [(i / 1000, 0, [(0, 0.0)]) for i in range(300)])
    with nginx(tmp_path / "site", tmp_path / "ng") as server:
        s = replay(str(scenario), ReplayOptions(target=server.url, results=str(tmp_path / "r.csv"),
                                                workers=2))
        log = server.access(expect=sum(expected_urls(scenario).values()))
        t0 = replay(str(burst), ReplayOptions(target=server.url, workers=2, fail_on=()))
    got = rows(tmp_path / "r.csv")
    assert s["requests"]["total"] == len(got) == len(log) == sum(expected_urls(scenario).values())
    assert s["sessions"]["completed"] == 30 and s["workers"] == 2 and s["complete"]
    assert (tmp_path / "r.csv").read_text().count("session,class,page") == 1
    assert not list(tmp_path.glob("r.csv.part*"))
    assert t0["sessions"]["started"] == 300 and t0["generator"]["start_lag"]["p99"] < 10


def _workers_of(pid: int) -> list[int]:
    """The worker processes of a replay (its children running multiprocessing's spawn)."""
    return [k for k in children(pid) if b"spawn_main" in cmdline(k)]


#: how a replay with two workers is cut: a signal to the parent, or to one worker only
CUTS = {"sigint to the parent": None, "a worker killed": signal.SIGKILL,
        "a worker terminated": signal.SIGTERM}


@pytest.mark.parametrize("how", list(CUTS))
def test_workers_stop_together(tmp_path, site_and_scenario, how):
    """A signal to the parent stops the run; a worker that ends alone (SIGKILL, or a SIGTERM
    of its own) is a dead worker and the other stops within 2 s. Either way the CSV and the
    summary count the same requests, every session in the CSV has a row for each of its
    requests, and nginx served what the CSV says was done (a killed worker's unwritten last
    second counts as not started)."""
    scenario = site_and_scenario("lan/http11", sessions=300, rate=30.0, think=(-1.0, 0.3))
    with nginx(tmp_path / "site", tmp_path / "ng") as server:
        proc = subprocess.Popen([sys.executable, "-m", "wagon", "replay", str(scenario),
                                 "--target", server.url, "--results", str(tmp_path / "r.csv"),
                                 "--workers", "2", "--json"], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, cwd=tmp_path)
        deadline = time.monotonic() + 20
        part = tmp_path / "r.csv.part0"                 # rows flushed: the workers play
        while not (part.exists() and part.stat().st_size) and time.monotonic() < deadline:
            time.sleep(0.1)
        if CUTS[how] is None:
            proc.send_signal(signal.SIGINT)
        else:
            victim = _workers_of(proc.pid)[0]
            os.kill(victim, CUTS[how])
        cut = time.time()
        out, err = proc.communicate(timeout=30)
        summary = json.loads(out)
        served = server.access(expect=summary["requests"]["ok"])
    assert proc.returncode == 5, err
    assert summary["complete"] is False and "Traceback" not in err
    got = read_results(tmp_path / "r.csv")
    kinds = collections.Counter(got["error"])
    r = summary["requests"]
    assert len(got) == r["total"] and kinds[""] == r["ok"]
    assert kinds["in_flight"] == r["in_flight"] and kinds["not_started"] == r["not_started"]
    sc = read_scenario(scenario)
    want = {x.id: len(scenario_requests(sc, x)) for x in sc.sessions()}
    assert all(n == want[k] for k, n in got.groupby("session").size().items())
    lost = r["not_started"] if CUTS[how] == signal.SIGKILL else 0
    assert r["ok"] <= len(served) <= r["ok"] + r["in_flight"] + lost
    if CUTS[how] is None:
        assert summary["stopped_by"] == "signal" and summary["dead_workers"] == []
    else:
        assert summary["stopped_by"] == "worker_died" and len(summary["dead_workers"]) == 1
        dead = summary["dead_workers"][0]
        assert ("signal 9" if CUTS[how] == signal.SIGKILL else "a signal of its own") in dead
        assert [(p["kind"], p["pid"], p["cause"]) for p in summary["dead_processes"]] == [
            ("worker", victim, dead.split(": ", 1)[1])]
        k = int(re.match(r"worker (\d+):", dead).group(1))
        other = got[(got["session"] % 2 != k) & got["start"].notna()]
        assert other["start"].max() < cut - got.attrs["run"]["t0_unix"] + 2.0
    assert not list(tmp_path.glob("r.csv.part*"))


@pytest.mark.parametrize("workers", [1, 2])
def test_a_killed_parent_leaves_results_wagon_recover_completes(tmp_path, site_and_scenario,
                                                                  workers):
    """SIGKILL to the replay's parent: its workers end with it (seen in /proc), without a
    traceback, their rows left in their part files and no results file (none half written);
    ``wagon recover`` merges them and publishes them with the summary: the CSV and the summary
    count the same requests, every session in the CSV has a row for each of its requests, every
    session due when the test killed the run is there (a single process' last second too: its
    guardian wrote when it died), nginx served at least what the CSV says was done and at most
    what it says was sent or not started; a second recover has nothing to do."""
    scenario = site_and_scenario("lan/http11", sessions=300, rate=30.0, think=(-1.0, 0.3))
    results = tmp_path / "r.csv"
    with nginx(tmp_path / "site", tmp_path / "ng") as server:
        proc = subprocess.Popen([sys.executable, "-m", "wagon", "replay", str(scenario),
                                 "--target", server.url, "--results", str(results),
                                 "--workers", str(workers), "--quiet"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                cwd=tmp_path)
        server.access(expect=200, wait=30)                # ~1 s into 10 s of arrivals
        kids = _workers_of(proc.pid)
        cut = time.time()
        proc.kill()
        err = proc.communicate(timeout=30)[1]       # its workers, too, have closed stderr
        deadline = time.monotonic() + 10
        while any(map(alive, kids)) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert len(kids) == (workers if workers > 1 else 0) and not any(map(alive, kids))
        assert "Traceback" not in err, err
        assert not results.exists() and not (tmp_path / "r.run.json").exists()  # none half
        assert (tmp_path / "r.run.json.part").exists()
        damaged = tmp_path / "damaged"                      # the same parts, one row mangled
        damaged.mkdir()
        for part in tmp_path.glob("r.*part*"):
            shutil.copy(part, damaged / part.name)
        with open(damaged / "r.csv.part0", "r+b") as f:
            f.seek(0)
            f.write(b"x,")
        bad = CliRunner().invoke(main, ["recover", str(damaged / "r.csv")])
        assert bad.exit_code == 2 and "r.csv.part0:1: a damaged part file (session" in \
            bad.output and len(bad.output.strip().splitlines()) == 1, bad.output
        (damaged / "r.csv.part0").write_bytes((tmp_path / "r.csv.part0").read_bytes())
        (damaged / "r.run.json.lost").write_text(f"{cut + 86400:.6f}\n")   # not this run's
        bad = CliRunner().invoke(main, ["recover", str(damaged / "r.csv")])
        assert bad.exit_code == 2 and "r.run.json.lost: " in bad.output and \
            "is not a time of this run" in bad.output and \
            len(bad.output.strip().splitlines()) == 1, bad.output
        r = CliRunner().invoke(main, ["recover", str(results)])
        assert r.exit_code == 5, r.output
        got = read_results(results)
        summary = got.attrs["run"]["summary"]
        served = server.access(expect=summary["requests"]["ok"])
    assert summary["stopped_by"] == "parent_died" and summary["complete"] is False
    assert f"requests sent {summary['requests']['sent']:,} (ok {summary['requests']['ok']:,}" \
        in r.output
    counts, kinds = summary["requests"], collections.Counter(got["error"])
    assert len(got) == counts["total"] and kinds[""] == counts["ok"] > 0
    assert kinds["not_started"] == counts["not_started"] > 0
    sessions_whole(got, scenario, cut)
    assert counts["ok"] <= len(served) <= counts["ok"] + counts["in_flight"] + counts[
        "not_started"]
    assert not list(tmp_path.glob("r*.part*"))
    again = CliRunner().invoke(main, ["recover", str(results)])
    assert again.exit_code == 2 and "nothing to recover" in again.output


# ---- wagon serve ---------------------------------------------------------------------------
def test_embedded_server_serves_the_model_site_with_limits(tmp_path):
    model = hand_model()
    site = resolve_site(model, pages=10).spec
    model_path = tmp_path / "m.json"
    model_path.write_text(json.dumps(model.data))
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "wagon", "serve", "--model", str(model_path),
                             "--port", str(port), "--max-connections", "2", "--service-time",
                             "0.3", "--pages", "10", "--max-time", "60"], cwd=tmp_path,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_port(port)
        pages = [(u, int(z), o) for u, z, o in zip(site.page_urls, site.page_sizes,
                                                    site.page_objects)]
        objects = list(zip(site.object_urls, map(int, site.object_sizes)))
        # four one-click sessions at once, no objects: 2 served at a time → two rounds of 0.3 s
        scenario = write_scenario_file(tmp_path / "s.jsonl", [(pages[0][0], pages[0][1], [])],
                                       [], ["lan/http10x1"], [(0.0, 0, [(0, 0.0)])] * 4)
        s = replay(str(scenario), ReplayOptions(target=f"http://127.0.0.1:{port}/",
                                                results=str(tmp_path / "r.csv")))
        ends = sorted(r["last_byte"] - r["intended"] for r in rows(tmp_path / "r.csv"))
        assert s["errors"]["total"] == 0
        assert ends[1] < 0.45 and 0.55 < ends[2] < 0.9, ends
        # pages 0-3 and their objects, pipelined: two sessions of two pages, one per slot
        full = write_scenario_file(tmp_path / "f.jsonl", pages, objects, ["lan/pipeline"],
                                   [(0.0, 0, [(i, 0.0), (i + 1, 0.0)]) for i in (0, 2)])
        s = replay(str(full), ReplayOptions(target=f"http://127.0.0.1:{port}/",
                                            results=str(tmp_path / "f.csv")))
        got = rows(tmp_path / "f.csv")
        assert s["errors"]["total"] == 0
        sizes = dict(objects)
        for r in got:
            want = sizes[r["url"]] if r["kind"] == "object" else None
            assert want is None or r["bytes"] == want
    finally:
        proc.terminate()
        proc.wait(10)


@contextlib.contextmanager
def wagon_serve(tmp_path, *args, preexec_fn=None):
    """``wagon serve --site`` on a free port: yields (port, process); stderr is kept."""
    site = tmp_path / "ssite"
    site.mkdir(exist_ok=True)
    (site / "index.html").write_bytes(b"i" * 100)
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "wagon", "serve", "--site", str(site),
                             "--port", str(port), "--max-time", "60", *args], cwd=tmp_path,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            preexec_fn=preexec_fn)
    try:
        wait_port(port)
        yield port, proc
    finally:
        proc.terminate()
        proc.wait(10)


def _get(port: int, timeout: float = 10.0) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout) as s:
        s.sendall(b"GET / HTTP/1.0\r\n\r\n")
        return b"".join(iter(lambda: s.recv(65536), b""))


def test_serve_leaves_connections_beyond_its_limit_in_the_kernel_backlog(tmp_path):
    """--max-connections 1 --backlog 1: one connection served, two in the accept queue (the
    kernel holds backlog + 1), the SYNs of the others dropped: their connect takes the kernel's
    1 s SYN retry."""
    with wagon_serve(tmp_path, "--max-connections", "1", "--backlog", "1") as (port, _):
        wait_port(port)
        time.sleep(0.3)                                   # the probe's connection is gone
        holders = [socket.create_connection(("127.0.0.1", port), 5) for _ in range(3)]
        waited = []

        def late():
            began = time.monotonic()
            socket.create_connection(("127.0.0.1", port), 5).close()
            waited.append(time.monotonic() - began)
        t = threading.Thread(target=late)
        t.start()
        time.sleep(0.5)
        for h in holders:
            h.close()
        t.join(10)
        assert waited and waited[0] > 0.9, waited
        assert _get(port).startswith(b"HTTP/1.0 200")


def test_serve_header_timeout_defeats_slowloris(tmp_path):
    """Two slowloris sockets hold both slots of --max-connections 2; with --header-timeout 1
    they are closed after 1 s and a real request is served, not 75 s later."""
    with wagon_serve(tmp_path, "--max-connections", "2", "--header-timeout", "1") as (port, _):
        time.sleep(0.3)
        slow = [socket.create_connection(("127.0.0.1", port), 5) for _ in range(2)]
        for s in slow:
            s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n")
        began = time.monotonic()

        def drip():
            for _ in range(10):
                time.sleep(0.3)
                for s in slow:
                    with contextlib.suppress(OSError):
                        s.sendall(b"X-a: b\r\n")
        t = threading.Thread(target=drip, daemon=True)
        t.start()
        assert _get(port).startswith(b"HTTP/1.0 200")
        assert time.monotonic() - began < 2.5
        for s in slow:
            s.settimeout(2)
            with contextlib.suppress(ConnectionResetError):   # closed by the server
                assert s.recv(100) == b""
            s.close()


#: requests aiohttp's parser refuses: a bad method, a bad Content-Length, Content-Length beside
#: Transfer-Encoding (smuggling), a header over 8 KiB, TLS bytes, a NUL in the method
MALFORMED = [b"GARBAGE\r\n\r\n", b"GET / HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n",
             b"GET / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Length: 5"
             b"\r\n\r\n", b"GET / HTTP/1.1\r\nHost: x\r\nX: " + b"a" * 20_000 + b"\r\n\r\n",
             b"\x16\x03\x01\x00\xa5\x01\x00\r\n\r\n", b"G\x00T / HTTP/1.1\r\n\r\n"]


def test_serve_logs_one_line_per_rejected_request(tmp_path):
    """Each malformed request gets a 400 (as the client reads it) and one line on the server's
    log naming who sent it and why, never a traceback; a good request gets no line."""
    with wagon_serve(tmp_path) as (port, proc):
        answers = []
        for request in MALFORMED + [b"GET / HTTP/1.0\r\n\r\n"]:
            with socket.create_connection(("127.0.0.1", port), 5) as s:
                s.sendall(request)
                answers.append(b"".join(iter(lambda: s.recv(65536), b"")).split(b" ")[1])
        proc.terminate()
        err = proc.communicate(timeout=10)[1]
    assert answers == [b"400"] * len(MALFORMED) + [b"200"]
    lines = err.splitlines()
    rejected = [x for x in lines if x.startswith("wagon serve: rejected a request from "
                                                 "127.0.0.1: 400 ")]
    assert len(rejected) == len(MALFORMED) and "Traceback" not in err, err
    assert "Content-Length can't be present with Transfer-Encoding" in err
    assert len(lines) == len(rejected) + 1                # and "serving on ..."


def test_serve_raises_its_open_files_limit_and_warns_once_when_out(tmp_path):
    def low(soft, hard):
        return lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    with wagon_serve(tmp_path, preexec_fn=low(64, 4096)) as (port, proc):
        limits = open(f"/proc/{proc.pid}/limits").read()
        assert any(line.startswith("Max open files") and line.split()[3] == "4096"
                   for line in limits.splitlines())
    with wagon_serve(tmp_path, "--header-timeout", "2", preexec_fn=low(48, 48)) as (port, proc):
        held = [socket.create_connection(("127.0.0.1", port), 5) for _ in range(80)]
        time.sleep(0.5)
        for h in held:
            h.close()
        time.sleep(0.5)
        assert _get(port).startswith(b"HTTP/1.0 200")
        proc.terminate()
        err = proc.communicate(timeout=10)[1]
    assert err.count("out of file descriptors") == 1 and "Traceback" not in err, err


def test_keepalive_timeout_closes_idle_connections_and_the_client_reconnects(tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    (site / "a.html").write_bytes(b"a" * 500)
    scenario = write_scenario_file(tmp_path / "k.jsonl", [("/a.html", 500, [])], [], ["lan/http11"],
                                   [(0.0, 0, [(0, 0.0), (0, 1.5), (0, 0.1)])])
    with nginx(site, tmp_path / "ng", keepalive=1) as server:
        s = replay(str(scenario), ReplayOptions(target=server.url, results=str(tmp_path / "r.csv")))
        log = server.access(expect=3)
    assert s["errors"]["total"] == 0 and len(log) == 3
    assert len({a.conn for a in log}) == 2          # the idle connection was closed after 1 s
    assert s["connections"] == 2


def test_a_kept_connection_closed_during_the_round_trip_wait_is_reopened(tmp_path):
    """Click 2 is issued 0.9 s after nginx sent the answer to click 1 (half of the 0.6 s round
    trip, then 0.6 s of thought), within nginx's 1 s keep-alive; it goes out half a round trip
    later, 1.2 s: meanwhile the server closed the idle connection. The request, never sent, goes
    out on a new connection instead of failing."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "a.html").write_bytes(b"a" * 500)
    scenario = write_scenario_file(tmp_path / "k.jsonl", [("/a.html", 500, [])], [],
                                   ["600ms-100000kbps/http11"], [(0.0, 0, [(0, 0.0), (0, 0.6)])])
    with nginx(site, tmp_path / "ng", keepalive=1) as server:
        s = replay(str(scenario), ReplayOptions(target=server.url))
        log = server.access(expect=2)
    assert s["errors"]["total"] == 0, s["errors"]
    assert len(log) == 2 and s["connections"] == 2


def test_a_steady_scenario_holds_its_throughput_against_nginx(tmp_path):
    """wagon synth --steady, replayed: it plays --duration (sped up) and stops there, exit 0;
    requests per 1.25-s window (~1,600 each), counted in nginx's own log, within ±20 % of the
    run's mean from the first window on (tests/test_synth.py: without --steady the first window
    is a ramp)."""
    model = hand_model(think=(1.0, 0.5), clicks_p=0.25, rate=8.0)
    site = tmp_path / "site"
    build_site(resolve_site(model, pages=40).spec, site)
    save_model(model, tmp_path / "m.json")
    run = CliRunner().invoke
    r = run(main, ["synth", str(tmp_path / "m.json"), "--duration", "200", "--speedup", "40",
                   "--pages", "40", "--classes", "lan/http11", "--seed", "3", "--steady", "-o",
                   str(tmp_path / "s.jsonl")])
    assert r.exit_code == 0, r.output
    with nginx(site, tmp_path / "ng") as server:
        r = run(main, ["replay", str(tmp_path / "s.jsonl"), "--target", server.url, "--quiet",
                       "--json"])
        logged = np.array([h.msec for h in server.combined()])
    assert r.exit_code == 0, r.output
    summary = json.loads(r.output)
    assert summary["stopped_by"] == "duration" and summary["errors"]["total"] == 0
    assert 4.75 < summary["duration_s"] < 5.75
    per_window = np.histogram(logged - logged.min(), np.arange(0.0, 5.001, 1.25))[0]
    assert np.all(np.abs(per_window / per_window.mean() - 1) < 0.2), per_window
