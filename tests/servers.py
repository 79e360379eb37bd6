"""Real servers on loopback for tests: Debian's nginx started on a free port with a private config.

The access log records the connection serial number and the request's rank on it, so tests can
count connections on the server side."""
from __future__ import annotations

import contextlib
import shutil
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

NGINX = shutil.which("nginx") or "/usr/sbin/nginx"

CONF = """daemon off;
master_process off;
worker_processes 1;
error_log {d}/error.log warn;
pid {d}/nginx.pid;
events {{ worker_connections 8192; }}
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
def nginx(root: Path, workdir: Path, keepalive: int = 65):
    if not Path(NGINX).exists():
        pytest.fail("nginx is not installed (apt-get install nginx-light); .ci/run installs it")
    workdir.mkdir(parents=True, exist_ok=True)
    port = free_port()
    conf = workdir / "nginx.conf"
    conf.write_text(CONF.format(d=workdir, port=port, root=root, keepalive=keepalive))
    proc = subprocess.Popen([NGINX, "-c", str(conf), "-p", str(workdir)],
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
