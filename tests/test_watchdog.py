"""Every process of a run is watched (replay.watchdog, lifeline.Guardian): a worker, the packet
relay or the parent killed (SIGKILL) or frozen (SIGSTOP) mid-run. The observers are the
kernel's (/proc: which of the run's processes, resource tracker and namespace remain), nginx's
access log (what was served), the scenario (which sessions were due when the test cut the
run) and the test's own wall clock; the run is ``wagon replay`` in a process of its own, with
``--watchdog 1`` (a second of silence is a loss) to keep each test to a few seconds."""
from __future__ import annotations

import collections
import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from wagon import read_results
from wagon.cli import main
from wagon.replay.watchdog import Watched, _lagging

from .conftest import needs_packet_path
from .procs import alive, children, cmdline
from .servers import nginx
from .test_netpath import _namespaces, _relay_of
from .test_replay import sessions_whole, site_and_scenario  # noqa: F401 (a fixture)

BOUND = 1.0


def _start(scenario, server, results, *extra: str, bound: float = BOUND) -> subprocess.Popen:
    """``wagon replay`` of ``scenario`` against ``server`` in a process of its own, lost
    processes after ``bound`` seconds of silence."""
    return subprocess.Popen([sys.executable, "-m", "wagon", "replay", str(scenario),
                             "--target", server.url, "--results", str(results), "--json",
                             "--watchdog", str(bound), *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=results.parent)


def _playing(results, parts: int) -> None:
    """Wait until every process has flushed rows (it plays)."""
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and not all(
            (p := results.with_name(f"{results.name}.part{k}")).exists() and p.stat().st_size
            for k in range(parts)):
        time.sleep(0.05)


def _run_processes(pid: int) -> list[int]:
    """The replay's processes: its children (workers, resource tracker, relay, guardian) and
    theirs."""
    out = children(pid)
    return out + [g for c in out for g in children(c)]


def _two_workers(scenario, server, results) -> tuple[subprocess.Popen, list[int], list[int],
                                                     list[int]]:
    """A run of two workers, once both play: the run, its processes, its workers and its
    resource tracker."""
    proc = _start(scenario, server, results, "--workers", "2")
    _playing(results, 2)
    procs = _run_processes(proc.pid)
    return (proc, procs, [k for k in procs if b"spawn_main" in cmdline(k)],
            [k for k in procs if b"resource_tracker" in cmdline(k)])


def _gone_soon(pids: list[int], wait: float = 10.0) -> list[int]:
    """The ``pids`` still running (or stopped) after up to ``wait`` seconds."""
    deadline = time.monotonic() + wait
    while any(map(alive, pids)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return [p for p in pids if alive(p)]


def _accounted(results, scenario, summary: dict, cut_at: float) -> None:
    """Every request of the run has one row, every session in the rows has one per request,
    every session due when the test cut the run is there, and the summary counts the rows:
    ok + errors + not_started + in_flight = due."""
    got = read_results(results)
    r, kinds = summary["requests"], collections.Counter(got["error"].fillna(""))
    assert len(got) == r["total"] and kinds[""] == r["ok"] > 0
    assert kinds["not_started"] == r["not_started"] and kinds["in_flight"] == r["in_flight"]
    failed = sum(n for k, n in kinds.items() if k not in ("", "not_started", "in_flight"))
    assert failed == r["failed"]
    assert r["ok"] + r["failed"] + r["in_flight"] + r["not_started"] == r["total"]
    sessions_whole(got, scenario, cut_at)


def test_a_stopped_worker_is_named_its_share_settled_and_nothing_remains(tmp_path,
                                                                        site_and_scenario):
    """A worker stopped (it used to hang the run for ever): the run stops, the worker is named
    with its cause and pid, its due requests are settled, and no process of the run (the
    frozen worker, the resource tracker, the guardian) outlives it. (A killed worker:
    test_replay.test_workers_stop_together.)"""
    scenario = site_and_scenario("lan/http11", sessions=300, rate=30.0, think=(-1.0, 0.3))
    results = tmp_path / "r.csv"
    with nginx(tmp_path / "site", tmp_path / "ng") as server:
        proc, procs, workers, tracker = _two_workers(scenario, server, results)
        victim = workers[0]
        os.kill(victim, signal.SIGSTOP)
        cut = time.time()
        out, err = proc.communicate(timeout=30)
        summary = json.loads(out)
        served = server.access(expect=summary["requests"]["ok"])
    assert proc.returncode == 5 and "Traceback" not in err, err
    lost = summary["dead_processes"]
    assert [(p["kind"], p["pid"]) for p in lost] == [("worker", victim)]
    assert "silent for" in lost[0]["cause"] and lost[0]["cause"] in summary["dead_workers"][0]
    assert summary["stopped_by"] == "worker_died"
    _accounted(results, scenario, summary, cut)
    assert summary["requests"]["ok"] <= len(served)
    assert len(tracker) == 1 and _gone_soon(procs) == []


@pytest.mark.parametrize("how", ["SIGKILL with a worker stopped", "SIGSTOP"])
def test_a_lost_parent_leaves_nothing_and_wagon_recover_settles(tmp_path, site_and_scenario,
                                                                 how):
    """The parent killed after one of its workers was stopped (which never handles the
    parent-death SIGTERM), or the parent itself stopped: its guardian ends the workers (SIGKILL
    after the grace), the resource tracker goes with them, a stopped parent is killed too, and
    ``wagon recover`` settles every due request from the parts left."""
    scenario = site_and_scenario("lan/http11", sessions=300, rate=30.0, think=(-1.0, 0.3))
    results = tmp_path / "r.csv"
    with nginx(tmp_path / "site", tmp_path / "ng") as server:
        proc, procs, workers, tracker = _two_workers(scenario, server, results)
        cut = time.time()                    # what was due by now was due before the loss
        if how.startswith("SIGKILL"):
            os.kill(workers[0], signal.SIGSTOP)
            proc.kill()
        else:
            os.kill(proc.pid, signal.SIGSTOP)
        assert _gone_soon(procs + [proc.pid], wait=15) == []
        err = proc.communicate(timeout=30)[1]
        assert "Traceback" not in err, err
        recovered = CliRunner().invoke(main, ["recover", str(results)])
        assert recovered.exit_code == 5, recovered.output
        got = read_results(results)
        summary = got.attrs["run"]["summary"]
        served = server.access(expect=summary["requests"]["ok"])
    assert len(workers) == 2 and len(tracker) == 1
    assert proc.returncode == -signal.SIGKILL
    assert summary["stopped_by"] == "parent_died"
    _accounted(results, scenario, summary, cut)
    assert summary["requests"]["ok"] <= len(served)


@needs_packet_path
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGSTOP])
def test_a_lost_relay_stops_the_run_at_once_and_leaves_no_namespace(tmp_path,
                                                                    site_and_scenario, sig):
    """The packet relay killed or stopped: the run stops within the bound (it used to go on
    for 10 minutes of connect timeouts), names the relay with its pid and cause, settles every
    due request, and leaves no relay, device or namespace."""
    scenario = site_and_scenario("lan/http11", sessions=300, rate=30.0, think=(-1.0, 0.3))
    results = tmp_path / "r.csv"
    before = _namespaces()
    with nginx(tmp_path / "site", tmp_path / "ng") as server:
        proc = _start(scenario, server, results, "--network", "packet")
        _playing(results, 1)
        relay, inside = _relay_of(proc.pid), os.stat(f"/proc/{proc.pid}/ns/net").st_ino
        os.kill(relay, sig)
        cut = time.time()
        out, err = proc.communicate(timeout=30)
        summary = json.loads(out)
    assert proc.returncode == 5 and "Traceback" not in err, err
    assert [(p["kind"], p["pid"]) for p in summary["dead_processes"]] == [("relay", relay)]
    cause = "silent for" if sig == signal.SIGSTOP else "killed by signal 9"
    assert cause in summary["dead_processes"][0]["cause"]
    assert summary["stopped_by"] == "relay_died"
    _accounted(results, scenario, summary, cut)
    assert _gone_soon([relay]) == [] and inside not in _namespaces() - before


@needs_packet_path
def test_a_lagging_relay_stops_the_run_with_its_reason(tmp_path, site_and_scenario):
    """The packet relay kept alive but behind its schedule (the test stops it 150 ms of every
    200: the packets due meanwhile on 90-ms WAN paths go out up to 150 ms late): its
    heartbeats say so, and after a bound of them the run stops, ``relay_lagged``, the relay
    named with its cause and lag, every due request settled; the relay is not killed, it ends
    with the run."""
    scenario = site_and_scenario("wan/http11", sessions=300, rate=30.0, think=(-1.0, 0.3))
    results = tmp_path / "r.csv"
    with nginx(tmp_path / "site", tmp_path / "ng") as server:
        proc = _start(scenario, server, results, "--network", "packet")
        _playing(results, 1)
        relay = _relay_of(proc.pid)
        start, cut = time.monotonic(), time.time()      # what was due by now was played
        with contextlib.suppress(ProcessLookupError):       # until the relay ends
            while proc.poll() is None and time.monotonic() - start < 20:
                os.kill(relay, signal.SIGSTOP)
                time.sleep(0.15)
                os.kill(relay, signal.SIGCONT)
                time.sleep(0.05)
        took = time.monotonic() - start
        out, err = proc.communicate(timeout=30)
        summary = json.loads(out)
    assert proc.returncode == 5 and "Traceback" not in err, err
    assert summary["stopped_by"] == "relay_lagged"
    assert [(p["kind"], p["pid"]) for p in summary["dead_processes"]] == [("relay", relay)]
    assert "lagging" in summary["dead_processes"][0]["cause"]
    assert summary["network"]["relay"]["lag_p99_ms"] >= 50
    assert took < 10                       # the bound is 1 s: not the whole run (20 s or more)
    _accounted(results, scenario, summary, cut)
    assert _gone_soon([relay]) == []


@given(st.lists(st.text("!.", max_size=6), max_size=8))
def test_a_processs_lagging_heartbeats_are_counted_in_a_row(reads):
    """However the heartbeats come in reads, the count of "lagging" ones (``!``) is those
    since the last calm one (``.``): the trailing run of the bytes read, by a regex here."""
    w = Watched("relay", "relay", 0, -1, lambda: None)
    for chunk in reads:
        w.lagging = _lagging(w, chunk.encode())
    assert w.lagging == len(re.search(r"!*$", "".join(reads)).group())


def test_a_stopped_cluster_worker_is_lost_through_dasks_heartbeats(tmp_path, site_and_scenario):
    """A Dask worker of ``--cluster local:2`` stopped: Dask's heartbeats (the scheduler's
    ``last_seen``) name it silent, its Nanny kills it, the run stops with its segment settled,
    and the cluster leaves no process behind."""
    scenario = site_and_scenario("lan/http11", sessions=300, rate=30.0, think=(-1.0, 0.3))
    results = tmp_path / "r.csv"
    with nginx(tmp_path / "site", tmp_path / "ng") as server:
        proc = _start(scenario, server, results, "--cluster", "local:2", "--quiet",
                      bound=2.0)                        # Dask beats every 0.5 s
        pending = tmp_path / "r.run.json.part"          # written at t0
        deadline = time.monotonic() + 60
        while not pending.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(1.0)                                 # both segments play
        procs = _run_processes(proc.pid)
        victim = next(k for k in procs if b"spawn_main" in cmdline(k))
        os.kill(victim, signal.SIGSTOP)
        cut = time.time()
        out, err = proc.communicate(timeout=60)
        summary = json.loads(out)
    assert proc.returncode == 5, err
    lost = summary["dead_processes"]
    assert [(p["kind"], p["pid"]) for p in lost] == [("cluster worker", victim)]
    assert "silent for" in lost[0]["cause"], lost
    _accounted(results, scenario, summary, cut)
    assert _gone_soon(procs) == []
