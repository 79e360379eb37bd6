"""Real servers on loopback for tests: Debian's nginx started on a free port with a private config.

The access log records the connection serial number and the request's rank on it, so tests can
count connections on the server side."""
from __future__ import annotations

import contextlib
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from .conftest import require_tool


CONF = """daemon off;
master_process off;
worker_processes 1;
worker_rlimit_nofile {nofile};
error_log {d}/error.log warn;
pid {d}/nginx.pid;
events {{ worker_connections {connections}; }}
http {{
  log_format wagon '$connection $connection_requests $status $body_bytes_sent $request_uri';
  access_log {d}/access.log wagon;
  default_type application/octet-stream;
  sendfile on;
  keepalive_timeout {keepalive};
  keepalive_requests 1000000;
  client_body_temp_path {d}/body; proxy_temp_path {d}/proxy; fastcgi_temp_path {d}/fcgi;
  uwsgi_temp_path {d}/uwsgi; scgi_temp_path {d}/scgi;
  server {{
    listen 127.0.0.1:{port} backlog=4096;
    root {root};
    index index.html;
  }}
}}
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port: int, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
            return
        time.sleep(0.05)
    raise TimeoutError(f"nothing listens on 127.0.0.1:{port}")


@dataclass
class Nginx:
    port: int
    workdir: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    def log(self) -> list[list[str]]:
        """Access-log rows: connection, rank on the connection, status, bytes, URI."""
        return [line.split(" ", 4) for line in
                (self.workdir / "access.log").read_text().splitlines()]


@contextlib.contextmanager
def nginx(root: Path, workdir: Path, keepalive: int = 65, connections: int = 8192,
          access_log: bool = True):
    binary = require_tool("nginx")
    workdir.mkdir(parents=True, exist_ok=True)
    port = free_port()
    conf = workdir / "nginx.conf"
    text = CONF.format(d=workdir, port=port, root=root, keepalive=keepalive,
                       connections=connections, nofile=min(connections * 2 + 100, 19_000))
    if not access_log:
        text = text.replace(f"access_log {workdir}/access.log wagon;", "access_log off;")
    conf.write_text(text)
    proc = subprocess.Popen([binary, "-c", str(conf), "-p", str(workdir)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        wait_port(port)
        yield Nginx(port, workdir)
    finally:
        proc.terminate()
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


FAULT_BODY = b"x" * 100


class _Fault(__import__("asyncio").Protocol):
    """Answers by path: /ok 200, /500 a 500, /reset a RST mid-body, /truncate a short body then
    FIN, /hang nothing, /close a FIN without answer."""

    def connection_made(self, transport):
        self.t = transport
        self.buf = b""

    def data_received(self, data):
        import socket as _s
        import struct
        self.buf += data
        while b"\r\n\r\n" in self.buf:
            head, self.buf = self.buf.split(b"\r\n\r\n", 1)
            path = head.split(b" ")[1]
            if path == b"/ok":
                self.t.write(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n" + FAULT_BODY)
            elif path == b"/500":
                self.t.write(b"HTTP/1.1 500 Oops\r\nContent-Length: 2\r\n\r\nno")
            elif path == b"/reset":
                self.t.write(b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n" + b"y" * 1000)
                sock = self.t.get_extra_info("socket")
                sock.setsockopt(_s.SOL_SOCKET, _s.SO_LINGER, struct.pack("ii", 1, 0))
                self.t.abort()
                return
            elif path == b"/truncate":
                self.t.write(b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n" + b"z" * 10)
                self.t.close()
                return
            elif path == b"/close":
                self.t.close()
                return
            # /hang: say nothing


@contextlib.contextmanager
def fault_server():
    """The fault server in a thread of its own; yields its port."""
    import asyncio
    import threading
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
