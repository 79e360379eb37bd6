"""HTTPS and HTTP/2 against Debian's nginx with a certificate the test makes: nginx's access log
(its protocol, TLS version, session reuse, connection and rank on it, $msec) and a packet
capture (tshark) are the observers."""
from __future__ import annotations

import collections
import json
import signal
import socket
import ssl
import subprocess
import threading
import time

import pytest
from click.testing import CliRunner

from wagon import read_results
from wagon.cli import main
from wagon.formats.classes import ClassError, parse_protocol
from wagon.replay import ReplayOptions, h2lib, replay
from wagon.replay.runner import TargetUnreachable, preflight

from .conftest import require_tool
from .servers import certificate, nginx, replay_on_h2, write_scenario_file

LOG = ("$connection $connection_requests $status $server_protocol $ssl_protocol "
       "$ssl_session_reused $msec $body_bytes_sent $request_uri")


class Line(collections.namedtuple("Line", "conn rank status protocol tls reused msec bytes uri")):
    """One line of the LOG layout."""


def lines(server, expect: int) -> list[Line]:
    return [Line(int(c), int(r), int(st), p, t, u, float(m), int(b), uri)
            for c, r, st, p, t, u, m, b, uri in
            (x.split(" ", 8) for x in server.log_lines(expect))]


def _site(tmp_path, objects: int = 4):
    site = tmp_path / "site"
    site.mkdir(exist_ok=True)
    (site / "p.html").write_bytes(b"p" * 2000)
    for i in range(objects):
        (site / f"o{i}.gif").write_bytes(b"o" * (3000 + 100 * i))
    pages = [("/p.html", 2000, list(range(objects)))]
    return site, pages, [(f"/o{i}.gif", 3000 + 100 * i) for i in range(objects)]


def _capture(tshark: str, port: int, cap):
    shark = subprocess.Popen([tshark, "-i", "lo", "-f", f"tcp port {port}", "-w", str(cap)],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 20
    while "Capturing" not in shark.stderr.readline() and time.monotonic() < deadline:
        pass
    return shark


PREFLIGHT = "127.0.0.1"    # the pre-flight check's address; sessions have their own (identity)


def _handshakes(tshark: str, cap, port: int) -> list[tuple[float, float, int]]:
    """Per TCP connection of the capture: when the ClientHello left, when the client's first
    application data left, and how many client packets carried only handshake records before
    it (the handshake's round trips; the client's last flight leaves with the request). The
    server's packets and the pre-flight check's connection are left out."""
    out = subprocess.run([tshark, "-r", str(cap), "-d", f"tcp.port=={port},tls", "-T", "fields",
                          "-E", "separator=;", "-e", "frame.time_epoch", "-e", "tcp.stream", "-e",
                          "ip.src", "-e", "tls.record.content_type"],
                         capture_output=True, text=True, check=True).stdout
    seen: dict[str, list] = {}
    for line in out.splitlines():
        t, stream, src, types = line.split(";")
        if src == PREFLIGHT or not types:
            continue
        kinds = set(types.split(","))
        w = seen.setdefault(stream, [None, None, 0])
        if w[1] is not None:
            continue
        if "22" in kinds and "23" not in kinds:
            w[0] = w[0] or float(t)
            w[2] += 1
        else:                          # TLS 1.3's Finished is encrypted: the request's packet
            w[1] = float(t)
    return [tuple(w) for w in seen.values() if w[1] is not None]


# ---- TLS ---------------------------------------------------------------------------------------
def test_tls_handshakes_cost_their_round_trips_on_the_wire(tmp_path):
    """Two browsers of a 200 ms class over HTTPS, twice: with TLS 1.2 the first connection's
    full handshake costs two round trips and the second, resumed, one; with TLS 1.3 both cost
    one. The capture counts the client's handshake flights and times ClientHello → first
    request; the recorded TLS time is that, and RTT × the flights, within 10 %. nginx logs
    every request 200 with its TLS version, the second connection of each browser resumed."""
    tshark = require_tool("tshark")
    rtt = 0.200
    site, pages, objects = _site(tmp_path, 2)
    scenario = write_scenario_file(tmp_path / "s.jsonl", pages, objects,
                                   [f"{rtt * 1e3:g}ms-100000kbps/http11x2"],
                                   [(0.0, 0, [(0, 0.0)]), (0.05, 0, [(0, 0.0)])])
    cert = certificate(tmp_path / "cert")
    cap = tmp_path / "tls.pcap"
    runs = {}
    with nginx(site, tmp_path / "ng", tls=cert, log_format=LOG) as server:
        shark = _capture(tshark, server.port, cap)
        for version in ("1.2", "1.3"):
            began = time.time()
            s = replay(str(scenario), ReplayOptions(target=server.url, ca_file=str(cert[0]),
                                                    tls_version=version,
                                                    results=str(tmp_path / f"{version}.csv")))
            runs[version] = (began, s)
        time.sleep(0.3)
        shark.send_signal(signal.SIGINT)
        shark.wait(20)
        log = lines(server, 12)
    assert len(log) == 12 and all(x.status == 200 for x in log)
    assert [x.tls for x in log] == ["TLSv1.2"] * 6 + ["TLSv1.3"] * 6
    resumed = {x.conn for x in log if x.reused == "r"}
    assert len(resumed) == 4 and len({x.conn for x in log}) == 8   # each browser's second
    wire = sorted(_handshakes(tshark, cap, server.port))
    assert len(wire) == 8
    for version, flights in (("1.2", [1, 1, 2, 2]), ("1.3", [1, 1, 1, 1])):
        _, s = runs[version]
        assert s["errors"]["total"] == 0 and s["tls"] == {"handshakes": 4, "resumed": 2}
        df = read_results(tmp_path / f"{version}.csv").dropna(subset=["tls_start"])
        ours = sorted((df["connected"] - df["tls_start"]).unique())
        theirs = sorted((end - hello, n) for hello, end, n in wire
                        if (hello > runs["1.3"][0]) == (version == "1.3"))
        assert [n for _, n in theirs] == flights
        for mine, (on_wire, n) in zip(ours, theirs):
            assert abs(mine - n * rtt) < 0.1 * n * rtt, (version, ours, theirs)
            assert abs(mine - on_wire) < 0.1 * rtt, (version, ours, theirs)


@pytest.mark.untimed      # OpenSSL's store counts, nothing timed
def test_an_insecure_context_loads_no_certificate_store(tmp_path):
    """``--insecure`` verifies nothing, so it loads no certificate (OpenSSL's own store
    counts: the system's CA store, 50-150 ms of CPU a process, was loaded all the same); a
    verifying context has the system's, and ``--ca-file`` that file's one certificate."""
    from wagon.replay.tls import TlsConfig
    cert, _ = certificate(tmp_path)
    stats = {name: TlsConfig("localhost", **kw).context(("http/1.1",)).cert_store_stats()
             for name, kw in (("insecure", {"insecure": True}), ("verify", {}),
                              ("file", {"ca_file": str(cert)}))}
    system = ssl.create_default_context().cert_store_stats()["x509_ca"]
    assert (stats["insecure"]["x509"], stats["verify"]["x509_ca"], stats["file"]["x509"]) == (
        0, system, 1)


@pytest.mark.untimed      # exit statuses and cookies, nothing timed
def test_certificates_are_verified_unless_insecure(tmp_path):
    """A self-signed certificate: the pre-flight check stops the run at once with one line
    (exit 3); --ca-file or --insecure let it run (and a Secure cookie is kept and sent back
    over HTTPS); TLS options on an http:// target, or a CA file that is not one, are bad input
    (exit 2)."""
    site, pages, objects = _site(tmp_path, 1)
    scenario = write_scenario_file(tmp_path / "s.jsonl", pages, objects, ["lan/http11"],
                                   [(0.0, 0, [(0, 0.0)])])
    cert = certificate(tmp_path / "cert")
    (tmp_path / "bad.pem").write_text("not a certificate\n")
    with nginx(site, tmp_path / "ng", tls=cert, set_cookie="sid=$connection; Secure") as server:
        def run(*args):
            return CliRunner().invoke(main, ["replay", str(scenario), "--target", server.url,
                                             "--quiet", *args])
        untrusted = run()
        trusted, insecure = run("--ca-file", str(cert[0])), run("--insecure")
        bad_ca = run("--ca-file", str(tmp_path / "bad.pem"))
        plain = CliRunner().invoke(main, ["replay", str(scenario), "--target",
                                          f"http://127.0.0.1:{server.port}/", "--insecure"])
        hits = server.combined()
    assert untrusted.exit_code == 3 and untrusted.stderr.count("\n") == 1
    assert "certificate does not verify" in untrusted.stderr and "--insecure" in untrusted.stderr
    assert trusted.exit_code == 0 and insecure.exit_code == 0, trusted.output + insecure.output
    assert "1 TLS handshakes, 0 resumed" in trusted.stdout
    assert [h.cookie is not None and h.cookie.startswith("sid=") for h in hits] == [
        False, True] * 2                                  # each run: the page, then its object
    assert bad_ca.exit_code == 2 and "--ca-file" in bad_ca.stderr
    assert plain.exit_code == 2 and "https://" in plain.stderr


@pytest.mark.untimed      # exit statuses and counts, nothing timed
def test_a_sweep_verifies_the_certificate_of_an_https_target(tmp_path):
    """wagon sweep takes replay's TLS options: a self-signed certificate stops it in one line
    (exit 3); with --ca-file every step runs over TLS (nginx's log: every request offered)."""
    site, pages, objects = _site(tmp_path, 1)
    scenario = write_scenario_file(tmp_path / "s.jsonl", pages, objects, ["lan/http11"],
                                   [(i / 20, 0, [(0, 0.0)]) for i in range(60)])
    cert = certificate(tmp_path / "cert")
    with nginx(site, tmp_path / "ng", tls=cert) as server:
        def sweep(*args):
            return CliRunner().invoke(main, ["sweep", str(scenario), "--target", server.url,
                                             "--rates", "1", "--step-time", "2", "--warmup",
                                             "0", "--json", *args])
        untrusted = sweep()
        trusted = sweep("--ca-file", str(cert[0]))
        logged = server.log_lines(expect=2 * 40)
    assert untrusted.exit_code == 3 and "certificate does not verify" in untrusted.stderr
    assert trusted.exit_code == 0, trusted.output
    step = json.loads(trusted.stdout)["steps"][0]
    assert step["offered"] == step["ok"] == len(logged) == 2 * 40


# ---- HTTP/2 ------------------------------------------------------------------------------------
@pytest.mark.parametrize("tls", [True, False], ids=["h2", "h2c"])
def test_http2_multiplexes_a_browser_on_one_connection(tmp_path, tls):
    """HTTP/2 over TLS (ALPN) and in plain text (h2c, prior knowledge): nginx logs HTTP/2.0 for
    every request, one connection per browser carrying all its requests (both clicks), and the
    results one row per request, bytes as nginx sent them. The objects are concurrent streams:
    nginx receives a page's 4 objects within a fraction of the 100 ms round trip (h2), and 2
    at a time a round trip apart with a limit of 2 streams (h2x2)."""
    site, pages, objects = _site(tmp_path)
    scenario = write_scenario_file(tmp_path / "s.jsonl", pages, objects,
                                   ["100ms-100000kbps/h2", "100ms-100000kbps/h2x2"],
                                   [(0.0, 0, [(0, 0.2), (0, 0.0)]), (0.0, 1, [(0, 0.0)])])
    cert = certificate(tmp_path / "cert") if tls else None
    with nginx(site, tmp_path / "ng", tls=cert, http2=True, log_format=LOG) as server:
        s = replay(str(scenario), ReplayOptions(target=server.url, insecure=tls,
                                                results=str(tmp_path / "r.csv")))
        log = lines(server, 15)
    rows = read_results(tmp_path / "r.csv")
    assert s["errors"]["total"] == 0 and len(rows) == len(log) == 15
    assert {x.protocol for x in log} == {"HTTP/2.0"} and s["connections"] == 2
    assert collections.Counter(rows["url"]) == collections.Counter(x.uri for x in log)
    assert rows["bytes"].sum() == sum(x.bytes for x in log)
    by_conn = collections.defaultdict(list)
    for x in log:
        by_conn[x.conn].append(x)
    assert sorted(len(v) for v in by_conn.values()) == [5, 10]
    assert all(max(x.rank for x in v) == len(v) for v in by_conn.values())
    for v in by_conn.values():
        objs = sorted(x.msec for x in v if x.uri != "/p.html")
        if len(v) == 10:                                  # h2: the first click's 4 at once
            assert objs[3] - objs[0] < 0.03
        else:                                             # h2x2: two waves, one RTT apart
            assert objs[1] - objs[0] < 0.03 and 0.08 < objs[2] - objs[1] < 0.15


def _replay_on(library: str, scenario, **options) -> dict:
    """``replay`` on the installed HTTP/2 library, or on h2 (``replay_on_h2``)."""
    if library == "h2":
        return replay_on_h2(scenario, **options)[1]
    return replay(str(scenario), ReplayOptions(**options))


@pytest.mark.parametrize("library", ["installed", "h2"])
def test_goaway_streams_are_sent_again_once_on_a_new_connection(tmp_path, library):
    """nginx ends a connection after 4 requests with GOAWAY: the streams it did not process
    end as closed and are sent once more on a new connection (retried, the TLS session
    resumed), as HTTP/1.1's stale connections are; nginx serves each URL once and every
    request has one row. On either HTTP/2 library (h2 itself ends the connection at GOAWAY:
    the engine overrides it)."""
    site, pages, objects = _site(tmp_path, 6)
    scenario = write_scenario_file(tmp_path / "s.jsonl", pages, objects, ["lan/h2"],
                                   [(0.0, 0, [(0, 0.0)])])
    cert = certificate(tmp_path / "cert")
    with nginx(site, tmp_path / "ng", tls=cert, http2=True, log_format=LOG,
               keepalive_requests=4) as server:
        s = _replay_on(library, scenario, target=server.url, ca_file=str(cert[0]),
                       results=str(tmp_path / "r.csv"))
        log = lines(server, 7)
    rows = read_results(tmp_path / "r.csv")
    assert s["errors"]["total"] == 0 and len(rows) == 7
    assert sorted(x.uri for x in log) == sorted(rows["url"])          # each served once
    assert len({x.conn for x in log}) == s["connections"] == 2
    assert rows["retried"].sum() == 3 and s["tls"] == {"handshakes": 2, "resumed": 1}


def test_a_reset_stream_fails_alone_and_windows_reopen(tmp_path):
    """nginx resets the stream of a request it drops (``return 444``): that request is one row,
    ``reset``; the page's other streams on the same connection complete, one of them 7 MiB,
    more than the stream's flow-control window (6 MiB): the window is re-opened as data is
    read, and nginx sends it all."""
    site, pages, objects = _site(tmp_path, 3)
    objects[1] = ("/drop", 10)
    big = 7 << 20
    (site / "o2.gif").write_bytes(b"b" * big)
    scenario = write_scenario_file(tmp_path / "s.jsonl", pages, objects, ["lan/h2"],
                                   [(0.0, 0, [(0, 0.0)])])
    cert = certificate(tmp_path / "cert")
    with nginx(site, tmp_path / "ng", tls=cert, http2=True, log_format=LOG,
               locations="location = /drop { return 444; }") as server:
        s = replay(str(scenario), ReplayOptions(target=server.url, insecure=True, fail_on=(),
                                                results=str(tmp_path / "r.csv")))
        log = lines(server, 4)
    rows = read_results(tmp_path / "r.csv").set_index("url")
    assert s["errors"]["by_kind"] == {"reset": 1} and len(rows) == 4 and s["connections"] == 1
    assert rows.loc["/drop", "error"] == "reset" and rows["conn"].nunique() == 1
    assert {x.uri: x.status for x in log}["/drop"] == 444                 # nginx dropped it
    assert (rows.drop("/drop")["status"] == 200).all()
    assert rows.loc["/o2.gif", "bytes"] == big == {x.uri: x.bytes for x in log}["/o2.gif"]


def test_a_request_timeout_cancels_its_stream_only(tmp_path):
    """--request-timeout on HTTP/2: the object that takes too long over a 1 Mbit/s link is
    cancelled (RST_STREAM: nginx logs less than the object sent) and ends ``request_timeout``;
    the page's other streams complete on the same connection."""
    site, pages, objects = _site(tmp_path, 3)
    (site / "o2.gif").write_bytes(b"s" * 2_000_000)   # 16 s at 1 Mbit/s, the last requested
    scenario = write_scenario_file(tmp_path / "s.jsonl", pages, objects, ["20ms-1000kbps/h2"],
                                   [(0.0, 0, [(0, 0.0)])])
    with nginx(site, tmp_path / "ng", http2=True, log_format=LOG) as server:
        s = replay(str(scenario), ReplayOptions(target=server.url, request_timeout=1.0,
                                                fail_on=(), results=str(tmp_path / "r.csv")))
        log = {x.uri: x for x in lines(server, 4)}
    rows = read_results(tmp_path / "r.csv").set_index("url")
    assert s["errors"]["by_kind"] == {"request_timeout": 1} and s["connections"] == 1
    assert rows.loc["/o2.gif", "error"] == "request_timeout"
    assert log["/o2.gif"].bytes < 1_500_000    # nginx stopped: its send buffer and 1 s went
    assert all(log[u].status == 200 and rows.loc[u, "status"] == 200
               for u in ("/p.html", "/o0.gif", "/o1.gif"))


def test_a_redirected_stream_is_followed_while_the_others_run(tmp_path):
    """An object that redirects (302) is followed as soon as its stream ends, on the same
    connection, while another object of the page is still coming (nginx sends it at 60 kB/s:
    the first 60 kB at once, the rest a second later): nginx serves the redirect's target
    long before it has sent that object."""
    site, pages, objects = _site(tmp_path, 3)
    objects[1] = ("/r", 0)
    (site / "o0.gif").write_bytes(b"b" * 90_000)
    scenario = write_scenario_file(tmp_path / "s.jsonl", pages, objects, ["lan/h2"],
                                   [(0.0, 0, [(0, 0.0)])])
    with nginx(site, tmp_path / "ng", http2=True, log_format=LOG,
               locations="location = /r { return 302 /o2.gif; } "
                         "location = /o0.gif { limit_rate 60k; }") as server:
        s = replay(str(scenario), ReplayOptions(target=server.url, fail_on=(),
                                                results=str(tmp_path / "r.csv")))
        log = lines(server, 5)
    rows = read_results(tmp_path / "r.csv")
    assert s["errors"]["total"] == 0 and s["connections"] == 1 and len(rows) == 5
    assert sorted(rows["url"]) == sorted(x.uri for x in log)
    assert list(rows[rows["url"] == "/r"]["status"]) == [302]
    assert list(rows[rows["url"] == "/o2.gif"]["status"]) == [200, 200]    # its own, the hop's
    served = collections.defaultdict(list)
    for x in log:
        served[x.uri].append(x.msec)
    assert served["/r"][0] <= max(served["/o2.gif"]) < served["/o0.gif"][0] - 0.5


def test_both_http2_libraries_give_nginx_the_same_run(tmp_path):
    """The engine on jh2 (installed: the test extra) and on h2 (jh2 hidden, in a process of
    its own) replays the same scenario: nginx logs HTTP/2.0 for every request of both runs, the
    same URLs, statuses and bytes, one row each, a 7 MiB object (beyond the stream's window)
    included."""
    pytest.importorskip("jh2")
    site, pages, objects = _site(tmp_path, 4)
    big = 7 << 20
    (site / "o3.gif").write_bytes(b"b" * big)
    scenario = write_scenario_file(tmp_path / "s.jsonl", pages, objects, ["lan/h2"],
                                   [(0.0, 0, [(0, 0.0), (0, 0.0)])])
    cert = certificate(tmp_path / "cert")
    with nginx(site, tmp_path / "ng", tls=cert, http2=True, log_format=LOG) as server:
        s = replay(str(scenario), ReplayOptions(target=server.url, ca_file=str(cert[0]),
                                                results=str(tmp_path / "jh2.csv")))
        first = lines(server, 10)
        module, pure = replay_on_h2(scenario, target=server.url, ca_file=str(cert[0]),
                                    results=str(tmp_path / "h2.csv"))
        second = lines(server, 20)[10:]
    assert module == "h2.connection" and s["errors"]["total"] == pure["errors"]["total"] == 0
    assert h2lib.H2State.__module__ == "jh2.connection"
    for log, name in ((first, "jh2"), (second, "h2")):
        rows = read_results(tmp_path / f"{name}.csv")
        assert {x.protocol for x in log} == {"HTTP/2.0"} and len(rows) == len(log) == 10
        assert collections.Counter(zip(rows["url"], rows["status"], rows["bytes"])) == \
            collections.Counter((x.uri, x.status, x.bytes) for x in log)
    assert sorted((x.uri, x.status, x.bytes) for x in first) == \
        sorted((x.uri, x.status, x.bytes) for x in second)
    assert {x.uri: x.bytes for x in first}["/o3.gif"] == big


def test_http2_needs_the_server_to_choose_it(tmp_path, monkeypatch):
    """An HTTPS server without HTTP/2 answers ALPN with nothing: the run does not start, one
    line, exit 3, as for h2c (it played, every page failed no_h2, exit 4); past the pre-flight
    (a server that stopped choosing h2) every request is one row failed as no_h2. nginx saw no
    request."""
    site, pages, objects = _site(tmp_path, 2)
    scenario = write_scenario_file(tmp_path / "s.jsonl", pages, objects, ["lan/h2"],
                                   [(0.0, 0, [(0, 0.0)])])
    cert = certificate(tmp_path / "cert")
    with nginx(site, tmp_path / "ng", tls=cert, log_format=LOG) as server:
        r = CliRunner().invoke(main, ["replay", str(scenario), "--target", server.url,
                                      "--insecure", "--quiet"])
        monkeypatch.setattr("wagon.replay.runner.preflight", lambda *args: None)
        s = replay(str(scenario), ReplayOptions(target=server.url, insecure=True, fail_on=()))
        log = lines(server, 0)
    assert r.exit_code == 3 and len(r.output.strip().splitlines()) == 1, r.output
    assert "does not choose HTTP/2 (h2) in ALPN" in r.output, r.output
    assert s["errors"]["by_kind"] == {"no_h2": 1, "skipped": 2} and log == []


def test_h2_browsers_need_h2_chosen_in_alpn_not_just_a_server_without_alpn(tmp_path,
                                                                          monkeypatch):
    """A TLS server that does no ALPN (chooses nothing) speaks HTTP/1.x: the pre-flight refused
    it, but a connection past it sent HTTP/2's preface there (the server, answering it 400
    and closing, made the row another error). Every request is one row, no_h2, and the server
    read no preface."""
    site, pages, objects = _site(tmp_path, 2)
    scenario = write_scenario_file(tmp_path / "s.jsonl", pages, objects, ["lan/h2"],
                                   [(0.0, 0, [(0, 0.0)])])
    cert, key = certificate(tmp_path / "cert")
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    heard = []
    listener = socket.create_server(("127.0.0.1", 0))

    def serve():
        with listener:
            while True:
                try:
                    conn, _ = listener.accept()
                except OSError:
                    return
                try:
                    with ctx.wrap_socket(conn, server_side=True) as tls:
                        heard.append(tls.recv(1 << 16))
                        tls.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
                except (OSError, ssl.SSLError):
                    continue
    threading.Thread(target=serve, daemon=True).start()
    monkeypatch.setattr("wagon.replay.runner.preflight", lambda *args: None)
    s = replay(str(scenario), ReplayOptions(target=f"https://127.0.0.1:"
                                            f"{listener.getsockname()[1]}/", insecure=True,
                                            fail_on=()))
    listener.close()
    assert s["errors"]["by_kind"] == {"no_h2": 1, "skipped": 2}, s["errors"]
    assert not any(h.startswith(b"PRI * HTTP/2.0") for h in heard), heard


def test_h2c_without_the_server_speaking_it_is_refused_at_once(tmp_path):
    """A plain-text nginx without HTTP/2 answers h2c's preface with HTTP/1.1's 400 (its log has
    the preface as a request, "PRI * HTTP/2.0"): the run does not start, one line, exit 3
    (it played, every page failed "closed": nginx closed with the request unread, a reset)."""
    site, pages, objects = _site(tmp_path, 2)
    scenario = write_scenario_file(tmp_path / "s.jsonl", pages, objects, ["lan/http11"],
                                   [(0.0, 0, [(0, 0.0)])])
    with nginx(site, tmp_path / "ng", log_format=LOG) as server:
        r = CliRunner().invoke(main, ["replay", str(scenario), "--target", server.url,
                                      "--protocol", "h2"])
        log = lines(server, 1)
    assert r.exit_code == 3 and len(r.output.strip().splitlines()) == 1, r.output
    assert "no HTTP/2 without TLS" in r.output and "400 Bad Request" in r.output, r.output
    assert [x.status for x in log] == [400]


def _answering(reply: bytes, keep_open: bool = False) -> str:
    """The URL of a server on loopback that answers one connection's first read ``reply``,
    then closes it (``keep_open``: when the client does), in a thread."""
    listener = socket.create_server(("127.0.0.1", 0))

    def answer():
        with listener, listener.accept()[0] as conn:
            conn.recv(1 << 16)
            conn.sendall(reply)
            if keep_open:
                conn.recv(1 << 16)
    threading.Thread(target=answer, daemon=True).start()
    return f"http://127.0.0.1:{listener.getsockname()[1]}/"


def test_h2c_preflight_names_an_http1_answer_on_a_connection_kept_open():
    """A server that answers the preface with HTTP/1.1's status line and keeps the connection
    (nginx, Apache and wagon serve close it): the preflight waited its 2 s for HTTP/2 frames
    and said "no answer"."""
    url = _answering(b"HTTP/1.1 505 HTTP Version Not Supported\r\nContent-Length: 0\r\n\r\n",
                     keep_open=True)
    with pytest.raises(TargetUnreachable, match="it answered 'HTTP/1.1 505 HTTP Version"):
        preflight(url, 30.0, None, http2=True)


@pytest.mark.parametrize("reply, said", [
    (b"\x00\x00\x08\x07\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x0d",
     r"ended the connection at once \(GOAWAY, HTTP_1_1_REQUIRED\)"),
    (b"\x15\x03\x01\x00\x02\x02\x46", r"answered in TLS \(an https:// server\)"),
    (b"SSH-2.0-OpenSSH_9.2\r\n", r"21 bytes of neither HTTP/1.x nor HTTP/2 \(53 53 48 2d")])
def test_h2c_preflight_says_what_a_server_did_with_the_preface(reply, said):
    """A GOAWAY frame (RFC 9113 section 6.8: length 8, type 7, code 0xd) before any SETTINGS,
    a TLS alert record (RFC 8446 section 5.1), another protocol's banner: each named, not
    shown as raw bytes."""
    with pytest.raises(TargetUnreachable, match=said) as e:
        preflight(_answering(reply), 30.0, None, http2=True)
    assert "\\x" not in str(e.value), e.value


@pytest.mark.parametrize("text, want", [
    ("h2", (100, True, True)), ("h2x6", (6, True, True)), ("http11x6+noresume", (6, False, False)),
    ("h2+noresume", (100, True, False)), ("h2x0", "between 1 and 1000"),
    ("http11+resume", "only option"), ("h3", "unknown protocol")])
def test_protocol_names(text, want):
    if isinstance(want, str):
        with pytest.raises(ClassError, match=want):
            parse_protocol(text)
        return
    p = parse_protocol(text)
    assert (p.connections, p.http2, p.resume) == want and p.name == text
    assert p.sockets == (1 if p.http2 else p.connections)
