"""Replay on loopback: nginx serving a built site, the project's own server, a fault server."""
from __future__ import annotations

import collections
import json
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
from click.testing import CliRunner

from wagon import read_results
from wagon.cli import main
from wagon.formats.scenario import read_scenario
from wagon.formats.site import build_site
from wagon.replay import ReplayOptions, replay
from wagon.replay.capture import response_times
from wagon.synth import Generator, SynthOptions, synthesize
from wagon.synth.site import resolve_site

from .conftest import require_tool
from .servers import fault_server, free_port, nginx, wait_port, write_scenario_file
from .test_synth import hand_model


def rows(path) -> list[dict]:
    return read_results(path).to_dict("records")


def expected_urls(scenario) -> collections.Counter:
    sc = read_scenario(scenario)
    return collections.Counter(
        u for s in sc.sessions() for p, _ in s.clicks
        for u in [sc.site.page_urls[p]] + [sc.site.object_urls[o] for o in sc.site.page_objects[p]])


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


def test_every_request_made_once_without_errors(tmp_path, site_and_scenario):
    scenario = site_and_scenario("lan/http10x4,t1-dsl/http11,wan/pipeline,lan/early-close,"
                                 "satellite/http11x2", sessions=40)
    with nginx(tmp_path / "site", tmp_path / "ng") as server:
        s = replay(str(scenario), ReplayOptions(target=server.url,
                                                results=str(tmp_path / "r.csv")))
        log = server.log()
    want = expected_urls(scenario)
    assert s["errors"]["total"] == 0 and s["requests"]["total"] == sum(want.values())
    assert collections.Counter(r[4] for r in log) == want
    assert all(r[2] == "200" for r in log)
    got = rows(tmp_path / "r.csv")
    assert collections.Counter(r["url"] for r in got) == want
    assert sum(int(r["bytes"]) for r in got) == sum(int(r[3]) for r in log)
    assert s["sessions"]["completed"] == 40 and s["stopped_by"] is None
    pages = rows(tmp_path / "r.pages.csv")
    assert len(pages) == sum(len(x.clicks) for x in read_scenario(scenario).sessions())


@pytest.mark.parametrize("protocol, per_session", [
    ("http10x4", "requests"), ("http11", "one"), ("pipeline", "one"), ("early-close", "clicks"),
    ("http11x3", "at most 3"),
])
def test_connections_seen_by_the_server(tmp_path, site_and_scenario, protocol, per_session):
    scenario = site_and_scenario(f"lan/{protocol}", sessions=12, rate=2.0)
    with nginx(tmp_path / "site", tmp_path / "ng") as server:
        replay(str(scenario), ReplayOptions(target=server.url, results=str(tmp_path / "r.csv"),
                                            emulation=False))
        log = server.log()
    by_conn = collections.Counter(r[0] for r in log)
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
    else:
        assert len(sessions) < len(by_conn) <= 3 * len(sessions)
        assert max(len(c) for c in conns_per_session.values()) == 3
    if protocol == "pipeline":
        # a page's objects are written together: one start time per (session, page visit)
        objs = [r for r in ours if r["kind"] == "object"]
        starts = collections.Counter((r["session"], r["intended"]) for r in objs)
        same = collections.Counter((r["session"], r["intended"], r["start"]) for r in objs)
        assert len(starts) == len(same)


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
    assert s["sessions"]["completed"] == 6
    refused = write_scenario_file(tmp_path / "r.jsonl", [("/ok", 10, [])], [], ["lan/http10x1"],
                                  [(0.0, 0, [(0, 0.0)])])
    s = replay(str(refused), ReplayOptions(target=f"http://127.0.0.1:{free_port()}/"))
    assert s["errors"]["by_kind"] == {"refused": 1}


def test_interrupted_run_keeps_its_results(tmp_path, site_and_scenario):
    scenario = site_and_scenario("lan/http11", sessions=400, rate=40.0, think=(-1.5, 0.3))
    with nginx(tmp_path / "site", tmp_path / "ng") as server:
        proc = subprocess.Popen([sys.executable, "-m", "wagon", "replay", str(scenario),
                                 "--target", server.url, "--results", str(tmp_path / "r.csv"),
                                 "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, cwd=tmp_path)
        time.sleep(4)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
        served = server.log()
    assert proc.returncode == 0, err
    summary = json.loads(out)
    assert summary["stopped_by"] == "signal" and 0 < summary["sessions"]["started"] < 400
    got = rows(tmp_path / "r.csv")
    done = [r for r in got if not r["error"]]
    assert len(got) == summary["requests"]["total"] and len(done) == summary["requests"]["ok"]
    # every answer the server logged is in the file, but those in flight at the interruption
    assert len(done) <= len(served) <= len(done) + summary["sessions"]["interrupted"]


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
    times = np.array([float(r["last_byte"]) - float(r["intended"]) for r in got])
    assert len(times) == 100
    assert np.all(np.abs(times / theory - 1) < 0.10), (theory, times.min(), times.max())


def test_mean_response_time_matches_a_packet_capture(tmp_path, site_and_scenario):
    """As in the RUBiS study: the engine's mean response time against tshark's view of the same
    requests on loopback, at moderate load: within 100 µs."""
    tshark = require_tool("tshark")
    scenario = site_and_scenario("lan/http11", sessions=80, rate=20.0, think=(-3.0, 0.3))
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
    ours = [float(r["last_byte"]) - float(r["start"]) for r in rows(tmp_path / "r.csv")]
    assert len(captured) == len(ours)
    assert abs(np.mean(ours) - np.mean(captured)) < 100e-6, (np.mean(ours), np.mean(captured))


def test_workers_share_the_sessions_and_merge(tmp_path, site_and_scenario):
    scenario = site_and_scenario("lan/http11,lan/http10x2", sessions=60)
    with nginx(tmp_path / "site", tmp_path / "ng") as server:
        s = replay(str(scenario), ReplayOptions(target=server.url, results=str(tmp_path / "r.csv"),
                                                workers=2))
        log = server.log()
    got = rows(tmp_path / "r.csv")
    assert s["requests"]["total"] == len(got) == len(log) == sum(expected_urls(scenario).values())
    assert s["sessions"]["completed"] == 60 and s["workers"] == 2
    assert (tmp_path / "r.csv").read_text().count("session,class,page") == 1
    assert not list(tmp_path.glob("r.csv.part*"))
    assert s["latency_ms"]["count"] == len(got)


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
        ends = sorted(float(r["last_byte"]) - float(r["intended"]) for r in rows(tmp_path / "r.csv"))
        assert s["errors"]["total"] == 0
        assert ends[1] < 0.45 and 0.55 < ends[2] < 0.9, ends
        full = write_scenario_file(tmp_path / "f.jsonl", pages, objects, ["lan/pipeline"],
                                   [(0.0, 0, [(i, 0.0) for i in range(10)])])
        s = replay(str(full), ReplayOptions(target=f"http://127.0.0.1:{port}/",
                                            results=str(tmp_path / "f.csv")))
        got = rows(tmp_path / "f.csv")
        assert s["errors"]["total"] == 0
        sizes = dict(objects)
        for r in got:
            want = sizes[r["url"]] if r["kind"] == "object" else None
            assert want is None or int(r["bytes"]) == want
    finally:
        proc.terminate()
        proc.wait(10)


def test_keepalive_timeout_closes_idle_connections_and_the_client_reconnects(tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    (site / "a.html").write_bytes(b"a" * 500)
    scenario = write_scenario_file(tmp_path / "k.jsonl", [("/a.html", 500, [])], [], ["lan/http11"],
                                   [(0.0, 0, [(0, 0.0), (0, 1.5), (0, 0.1)])])
    with nginx(site, tmp_path / "ng", keepalive=1) as server:
        s = replay(str(scenario), ReplayOptions(target=server.url, results=str(tmp_path / "r.csv")))
        log = server.log()
    assert s["errors"]["total"] == 0 and len(log) == 3
    assert len({r[0] for r in log}) == 2          # the idle connection was closed after 1 s
    assert s["connections"] == 2


def test_cli_replay_json_keys_and_errors(tmp_path, site_and_scenario):
    scenario = site_and_scenario("lan/http11", sessions=5)
    with nginx(tmp_path / "site", tmp_path / "ng") as server:
        r = CliRunner().invoke(main, ["replay", str(scenario), "--target", server.url, "--json"])
    assert r.exit_code == 0, r.output
    summary = json.loads(r.stdout)
    assert {"requests", "errors", "throughput", "latency_ms", "latency_from_intended_ms",
            "send_lag_ms", "pages"} <= set(summary)
    for args, message in ((["replay", str(scenario), "--target", "ftp://x/"], "http://"),
                          (["replay", str(tmp_path / "none.jsonl"), "--target", "http://x/"],
                           "No such file"),
                          (["replay", str(scenario), "--target", "http://x/", "--protocol",
                            "http3"], "unknown protocol")):
        r = CliRunner().invoke(main, args)
        assert r.exit_code == 2 and message in r.stderr, r.output


def test_a_scenario_without_sessions_replays_to_an_empty_summary(tmp_path, site_and_scenario):
    scenario = site_and_scenario("lan/http11", sessions=3)
    empty = tmp_path / "empty.jsonl"
    empty.write_text(scenario.read_text().splitlines()[0] + "\n")
    s = replay(str(empty), ReplayOptions(target="http://127.0.0.1:1/"))
    assert s["requests"]["total"] == 0 and s["sessions"]["started"] == 0
    assert s["warnings"] == [] and s["cpu_fraction"] < 1


def test_warns_before_a_run_that_needs_more_files_than_the_limit(tmp_path):
    import resource
    sessions = [(0.0, 0, [(0, 0.0), (0, 30.0)])] * 200          # 200 connections held 30 s
    scenario = write_scenario_file(tmp_path / "n.jsonl", [("/a", 10, [])], [], ["lan/http11"],
                                   sessions)
    r = subprocess.run([sys.executable, "-m", "wagon", "replay", str(scenario), "--target",
                        f"http://127.0.0.1:{free_port()}/", "--max-time", "1"], cwd=tmp_path,
                       capture_output=True, text=True, timeout=60,
                       preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64)))
    assert r.returncode == 0, r.stderr
    assert "would hold about 200 connections" in r.stderr and "limit is 64" in r.stderr


def test_a_kept_connection_closed_during_the_round_trip_wait_is_reopened(tmp_path):
    """Click 2 comes 0.8 s after click 1, within nginx's 1 s keep-alive; then the client waits its
    0.4 s round trip, during which the server closes the idle connection: the request, never
    sent, goes out on a new connection instead of failing."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "a.html").write_bytes(b"a" * 500)
    scenario = write_scenario_file(tmp_path / "k.jsonl", [("/a.html", 500, [])], [],
                                   ["400ms-100000kbps/http11"], [(0.0, 0, [(0, 0.0), (0, 0.8)])])
    with nginx(site, tmp_path / "ng", keepalive=1) as server:
        s = replay(str(scenario), ReplayOptions(target=server.url))
        log = server.log()
    assert s["errors"]["total"] == 0, s["errors"]
    assert len(log) == 2 and s["connections"] == 2
