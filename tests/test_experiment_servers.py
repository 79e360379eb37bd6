"""The servers an experiment starts: a parameter filled into the config reaches the server (its
own status page, its processes as ``ps`` sees them, its access log, what a raw socket sees), a
bad parameter or template is one line, the status sampler counts what slow clients hold, and
the test's own process group outlives Apache's stop."""
from __future__ import annotations

import csv
import os
import re
import socket
import subprocess
import time
import urllib.request

import pytest

from wagon.experiment.servers import (APACHE_TEMPLATE, DEFAULTS, NGINX_TEMPLATE, SERVER_KINDS,
                                      ServerError, resolve, start)
from wagon.experiment.status import StatusSampler, busy, established

from .conftest import require_tool


@pytest.fixture
def site(tmp_path):
    root = tmp_path / "site"
    root.mkdir()
    (root / "index.html").write_text("<p>hello</p>\n")
    return root


def children(pid: int) -> int:
    """Processes whose parent is ``pid``, as ``ps`` sees them."""
    out = subprocess.run(["ps", "-o", "pid=", "--ppid", str(pid)], capture_output=True,
                         text=True)
    return len(out.stdout.split())


def raw_status(url: str) -> str:
    with urllib.request.urlopen(url, timeout=5) as r:
        return r.read().decode()


def test_apache_starts_the_workers_it_is_given_and_each_kind_has_its_defaults(site, tmp_path):
    require_tool("apache2")
    with start("apache", {"MaxRequestWorkers": 5, "KeepAlive": False}, site,
               tmp_path / "a") as ap:
        page = raw_status(ap.url + "server-status?auto")        # mod_status, read by hand
        busy = int(re.search(r"BusyWorkers: (\d+)", page).group(1))
        idle = int(re.search(r"IdleWorkers: (\d+)", page).group(1))
        assert busy + idle == 5 and children(ap.pid) == 5
        assert ap.capacity == 5 and ap.params["KeepAlive"] == "Off"
        status = ap.status()                                    # one page: one moment
        assert status["busy"] + status["idle"] == 5
        assert raw_status(ap.url) == "<p>hello</p>\n"
    assert set(DEFAULTS) == set(SERVER_KINDS)
    assert resolve("apache", {})["MaxRequestWorkers"] == 150
    assert resolve("wagon", {})["max_connections"] is None


def request(sock: socket.socket) -> bytes:
    """One GET / on ``sock``, its answer read by its Content-Length."""
    sock.sendall(b"GET / HTTP/1.1\r\nHost: localhost\r\n\r\n")
    data = b""
    while b"\r\n\r\n" not in data:
        data += sock.recv(4096)
    head, body = data.split(b"\r\n\r\n", 1)
    length = int(re.search(rb"Content-Length: (\d+)", head, re.I).group(1))
    while len(body) < length:
        body += sock.recv(4096)
    return head


@pytest.mark.parametrize("keepalive", [0, 75])
def test_nginx_keepalive_timeout_zero_closes_each_connection(site, tmp_path, keepalive):
    """keepalive_timeout 0: nginx closes after each answer (the socket reads its FIN); 75 s:
    a second request goes on the same connection ($connection in its log)."""
    require_tool("nginx")
    with start("nginx", {"keepalive_timeout": keepalive, "worker_processes": 2}, site,
               tmp_path / "n") as ng:
        assert children(ng.pid) == 2 and ng.capacity == 2 * 1024
        with socket.create_connection(("127.0.0.1", ng.port), timeout=2) as s:
            request(s)
            if keepalive:
                request(s)
            else:
                assert s.recv(1) == b""
        deadline = time.monotonic() + 2
        while len(ng.access_log.read_text().splitlines()) < (2 if keepalive else 1):
            assert time.monotonic() < deadline
            time.sleep(0.02)
        connections = [line.split()[3] for line in ng.access_log.read_text().splitlines()]
    assert len(connections) == (2 if keepalive else 1) and len(set(connections)) == 1


def test_a_template_fills_its_placeholders_and_refuses_one_without_a_value(site, tmp_path):
    require_tool("nginx")
    mine = tmp_path / "mine.conf"
    mine.write_text(NGINX_TEMPLATE.replace(
        "index index.html;", 'location = /n { return 200 "{{ keepalive_requests }}"; }'))
    with start("nginx", {"keepalive_requests": 7}, site, tmp_path / "ok", mine) as ng:
        assert raw_status(ng.url + "n") == "7"
    mine.write_text(mine.read_text() + "# {{ MaxClients }}\n")
    with pytest.raises(ServerError) as e:
        with start("nginx", {}, site, tmp_path / "bad", mine):
            pass
    assert "no value for {{ MaxClients }}" in str(e.value) and "\n" not in str(e.value)


@pytest.mark.parametrize("kind, params, says", [
    ("apache", {"MaxClients": 5}, "apache has no parameter 'MaxClients'; its parameters: "
                                  "MaxRequestWorkers, KeepAlive,"),
    ("apache", {"MaxRequestWorkers": 0}, "MaxRequestWorkers must be an integer from 1"),
    ("nginx", {"keepalive_timeout": "long"}, "keepalive_timeout must be a number of seconds"),
    ("wagon", {"max_connections": 2.5}, "max_connections must be an integer"),
    ("lighttpd", {}, "unknown server 'lighttpd': one of apache, nginx, wagon"),
])
def test_a_bad_parameter_is_one_line(kind, params, says):
    with pytest.raises(ServerError) as e:
        resolve(kind, params)
    assert says in str(e.value) and "\n" not in str(e.value)


def test_a_server_that_does_not_start_says_why_in_one_line(site, tmp_path):
    require_tool("apache2")
    bad = tmp_path / "bad.conf"
    bad.write_text(APACHE_TEMPLATE + "BogusDirective on\n")
    with pytest.raises(ServerError) as e:
        with start("apache", {}, site, tmp_path / "a", bad):
            pass
    assert str(e.value).startswith("apache2 did not start: ")
    assert re.search(r"Syntax error on line \d+ of .*httpd.conf: Invalid command "
                     r"'BogusDirective'", str(e.value)) and "\n" not in str(e.value)


@pytest.mark.parametrize("kind, params", [("apache", {"MaxRequestWorkers": 8}),
                                          ("nginx", {})])
def test_the_sampler_counts_the_slow_clients_the_server_holds(site, tmp_path, kind, params):
    """K clients that connected and send their request slowly hold K Apache workers (K nginx
    connections being read); the status request itself is not counted, nor its connection,
    which the server closes (its TIME-WAIT is not the workload's)."""
    require_tool("apache2" if kind == "apache" else "nginx")
    k = 3
    with start(kind, params, site, tmp_path / kind) as srv:
        slow = [socket.create_connection(("127.0.0.1", srv.port)) for _ in range(k)]
        for s in slow:
            s.sendall(b"GET / HTTP/1.1\r\nHost: loc")
        deadline = time.monotonic() + 3
        while busy(srv.status()) != k:
            assert time.monotonic() < deadline, srv.status()
            time.sleep(0.02)
        with StatusSampler(srv, every=0.05, port=srv.port) as sampler:
            time.sleep(0.4)
        for s in slow:
            s.close()
        summary = sampler.summary(srv.capacity)
    assert summary["samples"] >= 3 and summary["failed"] == 0
    held = "busy" if kind == "apache" else "reading"
    assert summary[f"{held}_mean"] == summary[f"{held}_max"] == k
    assert summary["tcp_established_max"] == summary["connections_max"] == k
    assert summary["utilisation"] == pytest.approx(k / srv.capacity)
    sampler.write_csv(tmp_path / "status.csv")
    rows = list(csv.DictReader((tmp_path / "status.csv").open()))
    assert len(rows) == summary["samples"] and {int(r[held]) for r in rows} == {k}


def test_an_apache_with_every_worker_held_is_read_as_saturated(site, tmp_path):
    """Both workers of a 2-worker Apache held by slow clients: its status request waits in the
    listen backlog, and the sample says every worker busy (``unanswered``); once the clients
    leave, the page answers again. The kernel lists the held connections and the waiting
    one."""
    require_tool("apache2")
    with start("apache", {"MaxRequestWorkers": 2}, site, tmp_path / "a") as srv:
        srv.timeout = 0.3
        slow = [socket.create_connection(("127.0.0.1", srv.port)) for _ in range(2)]
        for s in slow:
            s.sendall(b"GET / HTTP/1.1\r\nHost: loc")
        deadline = time.monotonic() + 3
        while established(srv.port) < 2:
            assert time.monotonic() < deadline
            time.sleep(0.02)
        time.sleep(0.2)                                   # both accepted by their workers
        assert srv.status() == {"busy": 2, "idle": 0, "unanswered": 1}
        for s in slow:
            s.close()
        deadline = time.monotonic() + 5
        while (answer := srv.status())["unanswered"]:
            assert time.monotonic() < deadline
        assert answer["busy"] + answer["idle"] == 2


def test_an_apache_with_a_worker_busy_has_not_reached_max_request_workers(site, tmp_path):
    """One of 4 workers held by a slow client through 2.5 s of prefork's once-a-second
    maintenance: no "server reached MaxRequestWorkers" (AH00161) in its error log. With
    MinSpareServers = MaxRequestWorkers every Apache cell logged it ~2 s in: one busy worker
    left fewer idle than the minimum, and a full scoreboard cannot fork another."""
    require_tool("apache2")
    with start("apache", {"MaxRequestWorkers": 4}, site, tmp_path / "a") as srv:
        with socket.create_connection(("127.0.0.1", srv.port)) as slow:
            slow.sendall(b"GET / HTTP/1.1\r\nHost: loc")
            time.sleep(2.5)
            assert srv.status()["busy"] == 1
    assert "resuming normal operations" in (tmp_path / "a" / "error.log").read_text()
    assert "MaxRequestWorkers" not in (tmp_path / "a" / "error.log").read_text()


def test_a_status_that_cannot_be_read_is_counted_not_raised(site, tmp_path):
    require_tool("nginx")
    with start("nginx", {}, site, tmp_path / "n") as ng:
        pass
    with StatusSampler(ng, every=0.02) as sampler:
        time.sleep(0.1)
    assert sampler.failed >= 2 and sampler.samples == []
    assert sampler.summary(ng.capacity) == {"samples": 0, "failed": sampler.failed,
                                            "utilisation": None}


def test_the_callers_process_group_outlives_apaches_stop_twice(site, tmp_path):
    """Apache's prefork, stopping in the foreground, SIGTERMs its process group: the server
    has one of its own, and is gone (with its workers) once the block ends."""
    require_tool("apache2")
    for n in range(2):
        with start("apache", {"MaxRequestWorkers": 2}, site, tmp_path / f"a{n}") as ap:
            assert os.getpgid(ap.pid) != os.getpgrp()
            group = os.getpgid(ap.pid)
        assert subprocess.run(["pgrep", "-g", str(group)], capture_output=True).stdout == b""


def test_wagon_serve_serves_the_site_with_its_limits_and_has_no_status(site, tmp_path):
    with start("wagon", {"max_connections": 2}, site, tmp_path / "w") as ws:
        assert raw_status(ws.url) == "<p>hello</p>\n"
        assert ws.capacity == 2 and ws.status() == {}
        argv = open(f"/proc/{ws.pid}/cmdline").read().split("\0")
        assert argv[argv.index("--max-connections") + 1] == "2"
    assert '"GET / HTTP/1.1" 200' in ws.access_log.read_text()


def test_a_missing_server_names_its_debian_package(site, tmp_path, monkeypatch):
    monkeypatch.setattr("wagon.experiment.servers.shutil.which", lambda *a, **k: None)
    with pytest.raises(ServerError, match=r"^nginx is not installed: apt-get install nginx"):
        with start("nginx", {}, site, tmp_path / "n"):
            pass
