"""Real servers on loopback for tests: Debian's nginx started on a free port with a private config.

The access log records the connection serial number, the request's rank on it and nginx's own
``$request_time`` (first byte of the request read → last byte of the response handed to the
kernel), so tests can count connections and time requests on the server side; ``/nginx-status``
(stub_status) says how many connections nginx holds at a moment. A second log, ``combined.log``,
is the Combined layout with the Cookie header and ``$msec`` (millisecond times) appended: who
the server saw, read back by ``Nginx.combined`` with a regular expression of its own; a third,
``wagon.log``, is the layout ``wagon fit`` reads as ``wagon`` (``Nginx.wagon_log``)."""
from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import re
import socket
import struct
import subprocess
import sys
import threading
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from wagon.experiment.servers import Running, free_port, listening, start, wait_port
from wagon.formats.site import FOLDER_NGINX, METHODS_NGINX, STATUS_NGINX

from .conftest import require_tool


CONF = """daemon off;
master_process off;
worker_processes 1;
worker_rlimit_nofile {nofile};
error_log {d}/error.log warn;
pid {d}/nginx.pid;
events {{ worker_connections {connections}; }}
http {{
  log_format wagon '{log_format}';
  log_format combined_ms '$remote_addr - $remote_user [$time_local] "$request" $status '
                         '$body_bytes_sent "$http_referer" "$http_user_agent" "$http_cookie" '
                         '$msec';
  log_format wagon_layout '$remote_addr - $remote_user [$msec] "$request" $status '
                          '$body_bytes_sent "$http_referer" "$http_user_agent" $request_time '
                          '$connection $connection_requests';
  access_log {d}/access.log wagon;
  access_log {d}/combined.log combined_ms;
  access_log {d}/wagon.log wagon_layout;
  default_type application/octet-stream;
  sendfile on;
  keepalive_timeout {keepalive};
  keepalive_requests {keepalive_requests};
  {limit_zone}
  client_body_temp_path {d}/body; proxy_temp_path {d}/proxy; fastcgi_temp_path {d}/fcgi;
  uwsgi_temp_path {d}/uwsgi; scgi_temp_path {d}/scgi;
  server {{
    listen 127.0.0.1:{port}{listen} backlog=4096;
    {tls}
    root {root};
    index index.html;
    {folder}
    {limit}
    {cookie}
    {locations}
    location = /nginx-status {{ stub_status; access_log off; }}
  }}
}}
"""


class Hit(NamedTuple):
    """One line of ``combined.log``: who asked for what, as nginx saw it."""

    address: str
    uri: str
    status: int
    referer: str | None
    agent: str
    cookie: str | None
    msec: float


_COMBINED = re.compile(r'^(\S+) - \S+ \[[^]]+\] "GET (\S+) HTTP/1\.[01]" (\d+) \d+ "([^"]*)" '
                       r'"([^"]*)" "([^"]*)" (\d+\.\d{3})$')


class Access(NamedTuple):
    """One access-log line."""

    conn: int              # $connection
    rank: int              # $connection_requests
    status: int
    bytes: int             # $body_bytes_sent
    request_time: float    # $request_time (s, millisecond resolution)
    uri: str


@dataclass
class Nginx:
    port: int
    workdir: Path
    scheme: str = "http"

    @property
    def url(self) -> str:
        return f"{self.scheme}://127.0.0.1:{self.port}/"

    def access(self, expect: int = 0, wait: float = 2.0) -> list[Access]:
        """The access log, a typed row per request; waits up to ``wait`` s for ``expect`` rows
        (nginx writes a request's line after it has sent the answer)."""
        out = []
        for line in self.log_lines(expect, wait):
            c, r, st, b, t, uri = line.split(" ", 5)
            out.append(Access(int(c), int(r), int(st), int(b), float(t), uri))
        return out

    def log_lines(self, expect: int = 0, wait: float = 2.0) -> list[str]:
        """access.log's lines, after waiting up to ``wait`` s for ``expect`` of them."""
        deadline = time.monotonic() + wait
        while len(self._lines()) < expect and time.monotonic() < deadline:
            time.sleep(0.05)
        return self._lines()

    def _lines(self, name: str = "access.log") -> list[str]:
        return (self.workdir / name).read_text().splitlines()

    @property
    def wagon_log(self) -> Path:
        return self.workdir / "wagon.log"

    def combined(self) -> list[Hit]:
        """``combined.log``, a typed row per request ("-" read as None)."""
        out = []
        for line in self._lines("combined.log"):
            m = _COMBINED.match(line)
            assert m, f"unexpected combined.log line: {line!r}"
            a, uri, st, ref, agent, cookie, msec = m.groups()
            out.append(Hit(a, uri, int(st), None if ref == "-" else ref, agent,
                           None if cookie == "-" else cookie, float(msec)))
        return out

    def log(self) -> list[list[str]]:
        """Access-log rows as text: connection, rank on the connection, status, bytes, URI."""
        return [[str(a.conn), str(a.rank), str(a.status), str(a.bytes), a.uri]
                for a in self.access()]

    def active(self) -> int:
        """Connections nginx holds now (stub_status's "Active connections", this one
        included)."""
        return self._status(rb"Active connections: (\d+)")

    def held(self) -> int:
        """Connections nginx is reading or writing now (stub_status, this one included)."""
        return self._status(rb"Reading: (\d+)") + self._status(rb"Writing: (\d+)")

    def _status(self, pattern: bytes) -> int:
        with urllib.request.urlopen(self.url + "nginx-status", timeout=5) as r:
            return int(re.search(pattern, r.read()).group(1))


#: the access log ``Nginx.access`` reads
ACCESS_FORMAT = ("$connection $connection_requests $status $body_bytes_sent $request_time "
                 "$request_uri")


@contextlib.contextmanager
def nginx(root: Path, workdir: Path, keepalive: int = 65, connections: int = 8192,
          access_log: bool = True, keepalive_requests: int = 1_000_000,
          log_format: str = ACCESS_FORMAT, set_cookie: str | None = None,
          tls: tuple[Path, Path] | None = None, http2: bool = False, locations: str = "",
          limit_rate: int | None = None, limit_burst: int = 5, sndbuf: int | None = None):
    """nginx serving ``root``; ``log_format``: access.log's layout; ``set_cookie``: a
    Set-Cookie value added to every answer of ``/`` and below (nginx variables allowed);
    ``tls``: its certificate and key (HTTPS); ``http2``: HTTP/2 (over TLS with ALPN, h2c with
    prior knowledge without); ``locations``: more of the server's configuration;
    ``limit_rate``: a server of known capacity — ``limit_req`` lets that many requests a second
    through, all clients together (``limit_burst`` ahead of the rate, served at once), and
    answers the excess 503 at once; ``sndbuf``: its sockets' send buffer (``listen ...
    sndbuf=``, bytes; the kernel doubles it and no longer sizes it from the window)."""
    binary = require_tool("nginx")
    workdir.mkdir(parents=True, exist_ok=True)
    port = free_port()
    conf = workdir / "nginx.conf"
    text = CONF.format(d=workdir, port=port, root=root, keepalive=keepalive,
                       connections=connections, nofile=min(connections * 2 + 100, 19_000),
                       keepalive_requests=keepalive_requests, log_format=log_format,
                       listen=(" ssl" if tls else "") + (" http2" if http2 else "") +
                       (f" sndbuf={sndbuf}" if sndbuf else ""),
                       locations=locations,
                       folder="\n".join((FOLDER_NGINX, METHODS_NGINX, STATUS_NGINX)),
                       tls=f"ssl_certificate {tls[0]}; ssl_certificate_key {tls[1]}; "
                           "ssl_protocols TLSv1.2 TLSv1.3; ssl_session_cache shared:tls:1m;"
                       if tls else "",
                       limit_zone=f"limit_req_zone $server_port zone=cap:1m rate={limit_rate}r/s;"
                       if limit_rate else "",
                       limit=f"limit_req zone=cap burst={limit_burst} nodelay;"
                       if limit_rate else "",
                       cookie=f'location / {{ add_header Set-Cookie "{set_cookie}"; }}'
                       if set_cookie else "")
    if not access_log:
        text = text.replace(f"access_log {workdir}/access.log wagon;", "access_log off;")
        text = text.replace(f"access_log {workdir}/combined.log combined_ms;", "")
        text = text.replace(f"access_log {workdir}/wagon.log wagon_layout;", "")
    conf.write_text(text)
    with running([binary, "-c", str(conf), "-p", str(workdir)], port,
                 Nginx(port, workdir, "https" if tls else "http")) as ng:
        yield ng


@contextlib.contextmanager
def running(argv: list[str], port: int, server):
    """Run a server started by a test until the block ends: ``server`` once ``port`` listens;
    then stopped by its PID, in a session of its own (``wagon.experiment.servers.listening``)."""
    with listening(argv, port):
        yield server


@dataclass
class Apache:
    server: Running

    @property
    def url(self) -> str:
        return self.server.url

    def status(self) -> dict[str, str]:
        """mod_status's machine-readable page (``?auto``), its fields by name."""
        with urllib.request.urlopen(self.url + "server-status?auto", timeout=5) as r:
            lines = r.read().decode().splitlines()
        return dict(line.split(": ", 1) for line in lines if ": " in line)

    def held(self) -> int:
        """Workers busy now (mod_status's BusyWorkers, this request's included)."""
        return int(self.status()["BusyWorkers"])

    def access(self) -> list[tuple[str, int, int, float, float, str]]:
        """Access-log rows (``APACHE_TEMPLATE``'s layout): client address, status, bytes, time
        taken (s, %D), when the request came (s since the epoch, ms resolution), path."""
        rows = []
        for line in self.server.access_log.read_text().splitlines():
            a, _, _, st, b, us, ms, _, uri = line.split(" ", 8)
            rows.append((a, int(st), 0 if b == "-" else int(b), int(us) / 1e6, int(ms) / 1e3,
                         uri))
        return rows


@contextlib.contextmanager
def apache(root: Path, workdir: Path, workers: int = 150, keepalive: bool = False,
           keepalive_timeout: int = 15):
    """Debian's Apache, prefork MPM with ``workers`` processes (all started at once: none is
    forked during a measurement), mod_status, serving ``root`` on a free loopback port
    (``wagon.experiment.servers``' template)."""
    require_tool("apache2")
    with start("apache", {"MaxRequestWorkers": workers, "KeepAlive": keepalive,
                          "KeepAliveTimeout": keepalive_timeout}, root, workdir) as server:
        yield Apache(server)


def certificate(workdir: Path) -> tuple[Path, Path]:
    """A self-signed certificate (and its key) for 127.0.0.1 and localhost, made by openssl:
    the CA file of a client that verifies it is the certificate itself."""
    binary = require_tool("openssl")
    workdir.mkdir(parents=True, exist_ok=True)
    cert, key = workdir / "cert.pem", workdir / "key.pem"
    subprocess.run([binary, "req", "-x509", "-newkey", "ec", "-pkeyopt",
                    "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2", "-subj",
                    "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
                    "-keyout", str(key), "-out", str(cert)], check=True, capture_output=True)
    return cert, key


FAULT_BODY = b"x" * 100
OK = b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n" + FAULT_BODY


def _redirect(status: int, location: bytes) -> bytes:
    return b"HTTP/1.1 %d Moved\r\nLocation: %s\r\nContent-Length: 0\r\n\r\n" % (status,
                                                                                  location)


class _Fault(asyncio.Protocol):
    """Answers by path: /ok 200, /500 a 500, /reset a RST mid-body, /truncate a short body then
    FIN, /hang nothing, /close a FIN without answer, /redirect a 302 to /ok, /redirect-rel a 301
    to the relative "ok", /loop a 302 to itself, /away a 302 to another host, /once a 200 to the
    first request of a connection and a RST without answer to any later one. ``served`` lists
    (connection, path) of every request read."""

    served: list[tuple[int, bytes]] = []
    _ids = itertools.count()

    def connection_made(self, transport):
        self.t = transport
        self.buf = b""
        self.id = next(self._ids)
        self.requests = 0

    def _reset(self) -> None:
        sock = self.t.get_extra_info("socket")
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.t.abort()

    def data_received(self, data):
        self.buf += data
        while b"\r\n\r\n" in self.buf:
            head, self.buf = self.buf.split(b"\r\n\r\n", 1)
            path = head.split(b" ")[1]
            self.served.append((self.id, path))
            self.requests += 1
            if path == b"/ok" or (path == b"/once" and self.requests == 1):
                self.t.write(OK)
            elif path == b"/once":
                self._reset()
                return
            elif path == b"/500":
                self.t.write(b"HTTP/1.1 500 Oops\r\nContent-Length: 2\r\n\r\nno")
            elif path == b"/reset":
                self.t.write(b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n" + b"y" * 1000)
                self._reset()
                return
            elif path == b"/truncate":
                self.t.write(b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n" + b"z" * 10)
                self.t.close()
                return
            elif path == b"/close":
                self.t.close()
                return
            elif path in REDIRECTS:
                self.t.write(_redirect(*REDIRECTS[path]))
            # /hang: say nothing


REDIRECTS = {b"/redirect": (302, b"/ok"), b"/redirect-rel": (301, b"ok"),
             b"/loop": (302, b"/loop"), b"/away": (302, b"http://elsewhere.invalid/ok")}


@contextlib.contextmanager
def fault_server():
    """The fault server in a thread of its own; yields its port."""
    _Fault.served = []
    port = free_port()
    loop = asyncio.new_event_loop()
    ready = threading.Event()

    def run():
        asyncio.set_event_loop(loop)
        server = loop.run_until_complete(loop.create_server(_Fault, "127.0.0.1", port))
        ready.set()
        loop.run_forever()
        server.close()
        loop.run_until_complete(server.wait_closed())

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    ready.wait(5)
    try:
        yield port
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(5)


_ON_H2 = """import json, sys
sys.modules["jh2"] = None                  # as if jh2 were not installed
from wagon.replay import ReplayOptions, h2lib, replay
s = replay(sys.argv[1], ReplayOptions(**json.loads(sys.argv[2])))
print(json.dumps([h2lib.H2State.__module__, s]))
"""


def replay_on_h2(scenario: Path, **options) -> tuple[str, dict]:
    """``replay`` in a process of its own where jh2 cannot be imported, so that the engine
    runs on the pure-Python h2 whether jh2 is installed or not (``replay.h2lib``): the module
    of the HTTP/2 state machine it used, and the run's summary."""
    out = subprocess.run([sys.executable, "-c", _ON_H2, str(scenario), json.dumps(options)],
                         capture_output=True, text=True, check=True, timeout=120).stdout
    module, summary = json.loads(out.splitlines()[-1])
    return module, summary


def write_scenario_file(path: Path, pages: list[tuple[str, int, list[int]]],
                        objects: list[tuple[str, int]], classes: list[str],
                        sessions: list[tuple[float, int, list[tuple[int, float]]]]) -> Path:
    """A hand-made scenario: pages (url, size, object indices), objects (url, size), class
    specs, sessions (start, class, [(page, think)])."""
    import json
    from wagon.formats.classes import parse_classes
    header = {"format": "wagon-scenario", "version": 1, "seed": 0, "model": {},
              "options": {}, "classes": [c.to_dict() for c in parse_classes(",".join(classes))],
              "site": {"pages": [{"url": u, "size": s, "objects": o} for u, s, o in pages],
                       "objects": [{"url": u, "size": s} for u, s in objects]}}
    lines = [json.dumps(header)] + [json.dumps({"id": i, "start": st, "class": c,
                                                "clicks": [list(x) for x in clicks]})
                                    for i, (st, c, clicks) in enumerate(sessions)]
    path.write_text("\n".join(lines) + "\n")
    return path


class Sender:
    """A listener on this machine's loopback for path measurements: each connection that
    writes a byte gets ``send`` bytes (or one byte, ``y``), from a socket using congestion
    control ``cc`` (e.g. ``reno``)."""

    def __init__(self, send: int = 0, cc: str | None = None) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0), backlog=64)
        self.port, self.send, self.cc = self.sock.getsockname()[1], send, cc
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._answer, args=(conn,), daemon=True).start()

    def _answer(self, conn: socket.socket) -> None:
        with conn:
            if self.cc:
                conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, self.cc.encode())
            if conn.recv(1) and self.send:
                conn.sendall(b"x" * self.send)
            else:
                conn.sendall(b"y")


def bound_client(source: str | None) -> socket.socket:
    """A TCP socket bound to ``source`` (its port left to connect)."""
    s = socket.socket()
    if source:
        s.setsockopt(socket.IPPROTO_IP, 24, 1)             # IP_BIND_ADDRESS_NO_PORT
        s.bind((source, 0))
    return s


MSS, MTU = 1448, 1500        # TCP payload of a 1500-byte packet with timestamps; the packet


def steady_rate(marks: list[tuple[float, int]]) -> float:
    """Wire bytes/s of a ``download`` from a fifth of its bytes to the end (past slow start):
    the payload's rate × MTU/MSS."""
    total = marks[-1][1]
    t0, b0 = next(m for m in marks if m[1] >= total // 5)
    return (total - b0) / (marks[-1][0] - t0) * MTU / MSS


def download(source: str | None, port: int, request: bytes = b"?") -> list[tuple[float, int]]:
    """Send ``request`` to loopback ``port`` from ``source``, read to the end: (time, bytes so
    far) after each read; the first mark is the request's send."""
    s = bound_client(source)
    s.connect(("127.0.0.1", port))
    s.sendall(request)
    got, marks = 0, [(time.perf_counter(), 0)]
    while chunk := s.recv(1 << 16):
        got += len(chunk)
        marks.append((time.perf_counter(), got))
    s.close()
    return marks
