"""The servers an experiment starts, one per cell: Debian's Apache (prefork MPM) or nginx from a
config template filled with the cell's parameters, or ``wagon serve``.

Each runs on a free 127.0.0.1 port with its config, pid file and logs in the cell's folder (never
a system service), in a session of its own (Apache's prefork, stopping in the foreground,
SIGTERMs its whole process group), and is stopped by its PID. Templates are real config files
with ``{{ Name }}`` placeholders — neither Apache's nor nginx's syntax uses ``{{`` — filled with
the kind's parameters (``DEFAULTS``) and ``port``, ``root`` (the document root), ``workdir``.
``Running.status`` reads the server's own status page (Apache's mod_status, nginx's
stub_status) with the status request itself taken out of what it reports.
"""
from __future__ import annotations

import contextlib
import http.client
import math
import os
import re
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Callable, Iterator

from ..formats.site import (FOLDER_APACHE, FOLDER_NGINX, METHODS_NGINX, STATUS_APACHE,
                            STATUS_NGINX)
from ..lifeline import die_with_parent
from ..replay.http2 import h2c_get
from ..replay.serve_options import ServeOptions

__all__ = ["SERVER_KINDS", "DEFAULTS", "APACHE_TEMPLATE", "NGINX_TEMPLATE", "ServerError",
           "Running", "resolve", "fill", "has_placeholder", "capacity", "start", "listening",
           "free_port", "wait_port"]

SERVER_KINDS = ("apache", "nginx", "wagon")


class ServerError(ValueError):
    """A server that cannot be configured or started, in one line."""


Check = Callable[[str, object], object]


def _count(low: int, high: int, none: bool = False) -> Check:
    """An integer in [low, high] (None too when ``none``)."""
    def check(name: str, value: object) -> object:
        if value is None and none:
            return None
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise ServerError(f"{name} must be an integer from {low} to {high}"
                              f"{' or none' if none else ''}, not {value!r}")
        return value
    return check


def _seconds(none: bool = False) -> Check:
    """A finite number of seconds ≥ 0 (None too when ``none``)."""
    def check(name: str, value: object) -> object:
        if value is None and none:
            return None
        if (isinstance(value, bool) or not isinstance(value, (int, float))
                or not math.isfinite(value) or value < 0):
            raise ServerError(f"{name} must be a number of seconds ≥ 0"
                              f"{' or none' if none else ''}, not {value!r}")
        return value
    return check


def _on_off(name: str, value: object) -> object:
    """Apache's On/Off (a boolean taken for it)."""
    if isinstance(value, bool):
        return "On" if value else "Off"
    if isinstance(value, str) and value.lower() in ("on", "off"):
        return value.capitalize()
    raise ServerError(f"{name} must be On or Off, not {value!r}")


_SERVE = {f.name: f.default for f in fields(ServeOptions)}

#: per kind, its parameters' defaults (Apache's and nginx's own; ``wagon serve``'s ServeOptions)
#: and how a value is checked
_PARAMETERS: dict[str, dict[str, tuple[object, Check]]] = {
    "apache": {"MaxRequestWorkers": (150, _count(1, 20_000)),       # WAGON's MaxClients
               "KeepAlive": ("On", _on_off),
               "KeepAliveTimeout": (15, _seconds()),
               "MaxKeepAliveRequests": (100, _count(0, 10**9)),
               "ListenBacklog": (511, _count(1, 10**6))},
    "nginx": {"worker_processes": (1, _count(1, 1024)),
              "worker_connections": (1024, _count(2, 10**6)),
              "keepalive_timeout": (75, _seconds()),
              "keepalive_requests": (1000, _count(1, 10**9))},
    "wagon": {"max_connections": (_SERVE["max_connections"], _count(1, 10**6, none=True)),
              "keepalive_timeout": (_SERVE["keepalive_timeout"], _seconds()),
              "header_timeout": (_SERVE["header_timeout"], _seconds(none=True)),
              "service_time": (_SERVE["service_time"], _seconds()),
              "backlog": (_SERVE["backlog"], _count(1, 10**6))},
}

#: per kind, its parameters and their defaults
DEFAULTS: dict[str, dict[str, object]] = {
    kind: {name: default for name, (default, _) in spec.items()}
    for kind, spec in _PARAMETERS.items()}

APACHE_TEMPLATE = """\
# Apache for one experiment cell (filled by wagon): prefork, every worker started at once
ServerRoot "{{ workdir }}"
LoadModule mpm_prefork_module /usr/lib/apache2/modules/mod_mpm_prefork.so
LoadModule authz_core_module /usr/lib/apache2/modules/mod_authz_core.so
LoadModule dir_module /usr/lib/apache2/modules/mod_dir.so
LoadModule mime_module /usr/lib/apache2/modules/mod_mime.so
LoadModule status_module /usr/lib/apache2/modules/mod_status.so
LoadModule rewrite_module /usr/lib/apache2/modules/mod_rewrite.so
TypesConfig /etc/mime.types
Listen 127.0.0.1:{{ port }}
ListenBacklog {{ ListenBacklog }}
ServerName localhost
PidFile "{{ workdir }}/httpd.pid"
ErrorLog "{{ workdir }}/error.log"
LogLevel warn
User www-data
Group www-data
DocumentRoot "{{ root }}"
DirectoryIndex index.html
# a request marked for a logged answer (/a.html?wagon_status=404) answered it
""" + STATUS_APACHE + """
# a page that is also a folder (/a beside /a/b.html) answered 200 from the folder's index.html
""" + FOLDER_APACHE + """
<Directory />
  AllowOverride None
</Directory>
<Directory "{{ root }}">
  Require all granted
</Directory>
# every worker started at once and none stopped when idle; MinSpareServers 1, not all of
# them: below it prefork wants to fork and, its scoreboard full, logs "server reached
# MaxRequestWorkers" as soon as one worker is busy (AH00161); with 1 only when all are
StartServers {{ MaxRequestWorkers }}
MinSpareServers 1
MaxSpareServers {{ MaxRequestWorkers }}
ServerLimit {{ MaxRequestWorkers }}
MaxRequestWorkers {{ MaxRequestWorkers }}
KeepAlive {{ KeepAlive }}
KeepAliveTimeout {{ KeepAliveTimeout }}
MaxKeepAliveRequests {{ MaxKeepAliveRequests }}
ExtendedStatus On
<Location /server-status>
  SetHandler server-status
</Location>
# client, its port, requests on the connection before this one, status, body bytes,
# time taken (µs), when the request came (ms since the epoch), connection state after, path
LogFormat "%a %{remote}p %k %>s %B %D %{msec}t %X %U" wagon
CustomLog "{{ workdir }}/access.log" wagon "expr=%{REQUEST_URI} != '/server-status'"
"""

NGINX_TEMPLATE = """\
# nginx for one experiment cell (filled by wagon)
daemon off;
master_process on;
user www-data;
worker_processes {{ worker_processes }};
worker_rlimit_nofile {{ nofile }};
pid {{ workdir }}/nginx.pid;
error_log {{ workdir }}/error.log warn;
events { worker_connections {{ worker_connections }}; }
http {
  include /etc/nginx/mime.types;
  default_type application/octet-stream;
  sendfile on;
  keepalive_timeout {{ keepalive_timeout }};
  keepalive_requests {{ keepalive_requests }};
  log_format wagon '$msec $remote_addr $remote_port $connection $connection_requests '
                   '$status $body_bytes_sent $request_time $request_uri';
  access_log {{ workdir }}/access.log wagon;
  client_body_temp_path {{ workdir }}/body; proxy_temp_path {{ workdir }}/proxy;
  fastcgi_temp_path {{ workdir }}/fcgi; uwsgi_temp_path {{ workdir }}/uwsgi;
  scgi_temp_path {{ workdir }}/scgi;
  server {
    listen 127.0.0.1:{{ port }}{{ http2 }};
    root {{ root }};
    index index.html;
    """ + FOLDER_NGINX + """   # a page that is also a folder: its index.html, 200
    """ + METHODS_NGINX + """   # a form's POST: the page's file, 200
    # a request marked for a logged answer (/a.html?wagon_status=404) answered it
    """ + STATUS_NGINX.replace("\n", "\n    ") + """
    location = /nginx-status { stub_status; access_log off; }
  }
}
"""

_TEMPLATES = {"apache": APACHE_TEMPLATE, "nginx": NGINX_TEMPLATE}
_CONFIG = {"apache": "httpd.conf", "nginx": "nginx.conf"}
_BINARY = {"apache": "apache2", "nginx": "nginx"}
_STATUS = {"apache": "server-status?auto", "nginx": "nginx-status"}
PLACEHOLDER = re.compile(r"\{\{\s*(\w+)\s*\}\}")
START_TIMEOUT = 10.0           # seconds a server has to listen, and to stop before SIGKILL


def resolve(kind: str, params: dict[str, object]) -> dict[str, object]:
    """Every parameter of ``kind``: ``params`` checked, over the defaults. ServerError (one
    line) on an unknown kind or parameter, or a value of the wrong type or range."""
    if kind not in _PARAMETERS:
        raise ServerError(f"unknown server {kind!r}: one of {', '.join(SERVER_KINDS)}")
    spec = _PARAMETERS[kind]
    unknown = [name for name in params if name not in spec]
    if unknown:
        raise ServerError(f"{kind} has no parameter {unknown[0]!r}; its parameters: "
                          f"{', '.join(spec)}")
    return {name: check(name, params.get(name, default))
            for name, (default, check) in spec.items()}


def _text(value: object) -> str:
    """A value as a config file says it: whole seconds as such, others in milliseconds."""
    if isinstance(value, float):
        return f"{value:g}" if value.is_integer() else f"{round(value * 1000)}ms"
    return str(value)


def fill(template: str, values: dict[str, object], source: str = "template") -> str:
    """``template`` with each ``{{ name }}`` replaced by ``values[name]``; ServerError (one
    line) for a placeholder without a value."""
    missing = [m.group(1) for m in PLACEHOLDER.finditer(template) if m.group(1) not in values]
    if missing:
        raise ServerError(f"{source}: no value for {{{{ {missing[0]} }}}}; known: "
                          f"{', '.join(values)}")
    return PLACEHOLDER.sub(lambda m: _text(values[m.group(1)]), template)


def has_placeholder(template: Path, name: str) -> bool:
    """Does the template file hold ``{{ name }}``? (True when it cannot be read: ``start``
    says why, in one line.)"""
    try:
        text = template.read_text()
    except (OSError, UnicodeDecodeError):
        return True
    return any(m.group(1) == name for m in PLACEHOLDER.finditer(text))


def capacity(kind: str, params: dict[str, object]) -> int | None:
    """Connections the server serves at once: Apache's MaxRequestWorkers, nginx's
    worker_processes × worker_connections, ``wagon serve``'s max_connections (None: no
    limit)."""
    if kind == "apache":
        return params["MaxRequestWorkers"]
    if kind == "nginx":
        return params["worker_processes"] * params["worker_connections"]
    return params["max_connections"]


@dataclass
class Running:
    """A server started by ``start``, listening on ``url``."""

    kind: str
    url: str
    port: int
    workdir: Path
    pid: int
    params: dict[str, object]          # every parameter, as filled
    access_log: Path
    capacity: int | None
    timeout: float = 5.0               # seconds a status request may take
    http2: bool = False                # the port speaks HTTP/2 in plain text alone (nginx)
    #: the local ports of this object's status requests: their connections, closing on the
    #: server's side (TIME-WAIT), are not the workload's (``status.tcp_states``' ``exclude``)
    status_ports: set[int] = field(default_factory=set, init=False, repr=False)
    _polls: int = field(default=0, init=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)

    def status(self) -> dict[str, float]:
        """The server's own status now, without the status request itself.

        Apache (mod_status ``?auto``): ``busy`` and ``idle`` workers (the worker serving this
        request counted idle), ``accesses`` (requests served, earlier status requests of this
        object left out). nginx (stub_status): ``active`` connections, ``reading``,
        ``writing``, ``waiting``, and the counters ``accepts``, ``handled``, ``requests``
        (this object's status requests and their connections left out). ``wagon serve`` has
        no status page: {}. Raises OSError or ValueError when the page cannot be read.

        Apache's ``unanswered`` is 1 when its page did not come within ``timeout``: a prefork
        Apache accepts a connection only with a worker free, so a status request left waiting
        in the listen backlog means every worker was busy — the sample is then ``busy`` =
        MaxRequestWorkers, ``idle`` 0, read from the server's behaviour when its page cannot
        say it; 0 otherwise."""
        if self.kind == "wagon":
            return {}
        with self._lock:
            self._polls += 1
            polls = self._polls
        try:
            text = self._page(_STATUS[self.kind])
        except OSError as e:
            if self.kind == "apache" and isinstance(e, TimeoutError):
                return {"busy": self.capacity, "idle": 0, "unanswered": 1}
            raise
        out = (_apache_status if self.kind == "apache" else _nginx_status)(text, polls)
        return {**out, "unanswered": 0} if self.kind == "apache" else out

    def _page(self, path: str) -> str:
        """The server's page at ``path`` (over h2c when its port speaks nothing else)."""
        if self.http2:
            return h2c_get("127.0.0.1", self.port, "/" + path, self.timeout).decode(
                "ascii", "replace")
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=self.timeout)
        try:
            conn.connect()
            self.status_ports.add(conn.sock.getsockname()[1])
            conn.request("GET", "/" + path, headers={"Connection": "close"})
            answer = conn.getresponse()
            body = answer.read()
        except http.client.HTTPException as e:
            raise ConnectionError(f"status page /{path}: {e!r}") from None
        finally:
            conn.close()
        if answer.status != 200:
            raise ConnectionError(f"status page /{path}: HTTP {answer.status}")
        return body.decode("ascii", "replace")


def _apache_status(text: str, polls: int) -> dict[str, float]:
    """mod_status's ``?auto`` page; ``polls``: status requests made, this one included
    (Apache counts a request in Total Accesses once it is done)."""
    f = dict(line.split(": ", 1) for line in text.splitlines() if ": " in line)
    try:
        return {"busy": int(f["BusyWorkers"]) - 1, "idle": int(f["IdleWorkers"]) + 1,
                "accesses": int(f["Total Accesses"]) - (polls - 1)}
    except (KeyError, ValueError):
        raise ValueError("not a mod_status page with ExtendedStatus On") from None


_STUB = re.compile(r"Active connections:\s*(\d+)\s+server accepts handled requests\s+(\d+)\s+"
                   r"(\d+)\s+(\d+)\s+Reading:\s*(\d+)\s+Writing:\s*(\d+)\s+Waiting:\s*(\d+)")


def _nginx_status(text: str, polls: int) -> dict[str, float]:
    """stub_status's page; ``polls``: status requests made, each on a connection of its own,
    this one included (nginx counts it as active, writing, accepted, handled, requested), and
    ``start``'s one connection that saw the port listen is not in accepts and handled."""
    m = _STUB.search(text)
    if m is None:
        raise ValueError("not an nginx stub_status page")
    active, accepts, handled, requests, reading, writing, waiting = map(int, m.groups())
    return {"active": active - 1, "reading": reading, "writing": writing - 1,
            "waiting": waiting, "accepts": accepts - polls - 1, "handled": handled - polls - 1,
            "requests": requests - polls}


def free_port() -> int:
    """A TCP port of 127.0.0.1 that nothing uses now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port: int, timeout: float = START_TIMEOUT,
              proc: subprocess.Popen | None = None) -> None:
    """Return once something listens on 127.0.0.1:``port``: TimeoutError after ``timeout``
    seconds, ChildProcessError as soon as ``proc`` (the server) has exited."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
            return
        if proc is not None and proc.poll() is not None:
            raise ChildProcessError(f"exited with status {proc.returncode}")
        time.sleep(0.05)
    raise TimeoutError(f"nothing listens on 127.0.0.1:{port} after {timeout:g} s")


def _last_line(path: Path | None, since: int) -> str:
    """The last line written to ``path`` after its first ``since`` bytes, with the line before
    when that one announces it (Apache's "Syntax error on line N of FILE:")."""
    with contextlib.suppress(OSError):
        if path is not None:
            with open(path, "rb") as f:
                f.seek(since)
                lines = [s.strip() for s in f.read().decode(errors="replace").splitlines()
                         if s.strip()]
            if not lines:
                return "nothing in its error log"
            return " ".join(lines[-2:]) if len(lines) > 1 and lines[-2].endswith(":") \
                else lines[-1]
    return "no error log"


@contextlib.contextmanager
def listening(argv: list[str], port: int, log: Path | None = None, name: str | None = None
              ) -> Iterator[subprocess.Popen]:
    """Run ``argv`` (a server) until the block ends, from once ``port`` listens; then SIGTERM
    by its PID, SIGKILL after 10 s. Its stderr is appended to ``log`` (else discarded). It gets
    a session of its own: Apache's prefork, stopping in the foreground, SIGTERMs its whole
    process group. ServerError with ``log``'s last line when it does not start (``name``: the
    server's, its binary's by default). It gets SIGTERM when this process dies, however it
    dies (``lifeline.die_with_parent``): a killed experiment leaves no server running."""
    name = name or Path(argv[0]).name
    since = log.stat().st_size if log and log.exists() else 0
    parent = os.getpid()
    with open(log, "ab") if log else open(os.devnull, "wb") as err:
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=err, start_new_session=True,
                                preexec_fn=lambda: die_with_parent(parent, signal.SIGTERM))
    try:
        try:
            wait_port(port, START_TIMEOUT, proc)
        except ChildProcessError:
            raise ServerError(f"{name} did not start: {_last_line(log, since)}") from None
        except TimeoutError as e:
            raise ServerError(f"{name} did not start ({e}): {_last_line(log, since)}") from None
        yield proc
    finally:
        proc.terminate()
        try:
            proc.wait(START_TIMEOUT)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _reachable(root: Path) -> bool:
    """Whether any user can list ``root`` and reach it (its folders' others-execute bits)."""
    path = root.resolve()
    if path.stat().st_mode & (stat.S_IROTH | stat.S_IXOTH) != stat.S_IROTH | stat.S_IXOTH:
        return False
    return all(p.stat().st_mode & stat.S_IXOTH for p in path.parents)


@contextlib.contextmanager
def _served(kind: str, root: Path) -> Iterator[Path]:
    """The document root the server is given: ``root``, or — when this process is root, so
    that Apache's and nginx's workers run as www-data, and they could not reach ``root`` — a
    world-readable copy of it, removed afterwards."""
    if not root.is_dir():
        raise ServerError(f"{root}: not a directory (the site the server serves)")
    if kind == "wagon" or os.geteuid() != 0 or _reachable(root):
        yield root
        return
    copy = Path(tempfile.mkdtemp(prefix="wagon-root-"))
    try:
        os.chmod(copy, 0o755)
        shutil.copytree(root, copy, dirs_exist_ok=True)
        yield copy
    finally:
        shutil.rmtree(copy, ignore_errors=True)


def _binary(kind: str) -> str:
    name = _BINARY[kind]
    path = shutil.which(name) or shutil.which(name, path="/usr/sbin:/sbin")
    if path is None:
        raise ServerError(f"{name} is not installed: apt-get install {name} (Debian's package)")
    return path


def _argv(kind: str, params: dict[str, object], root: Path, workdir: Path, port: int,
          template: Path | None) -> list[str]:
    """The command that runs ``kind``, its config (if any) written into ``workdir``."""
    if kind == "wagon":
        if template is not None:
            raise ServerError("wagon serve takes its parameters, not a config template")
        argv = [sys.executable, "-m", "wagon", "serve", "--site", str(root),
                "--host", "127.0.0.1", "--port", str(port),
                "--access-log", str(workdir / "access.log"),
                "--backlog", str(params["backlog"]),
                "--keepalive-timeout", str(params["keepalive_timeout"]),
                "--service-time", str(params["service_time"]),
                "--header-timeout", str(params["header_timeout"] or 0)]
        if params["max_connections"] is not None:
            argv += ["--max-connections", str(params["max_connections"])]
        return argv
    binary = _binary(kind)
    values = {**params, "port": port, "root": root, "workdir": workdir}
    if kind == "nginx":
        values["nofile"] = 2 * params["worker_connections"] + 64
    if template is None:
        text = fill(_TEMPLATES[kind], values, f"{kind}'s template")
    else:
        try:
            text = fill(template.read_text(), values, str(template))
        except (OSError, UnicodeDecodeError) as e:
            raise ServerError(f"{template}: {getattr(e, 'strerror', None) or e}") from None
    conf = workdir / _CONFIG[kind]
    conf.write_text(text)
    if kind == "apache":
        return [binary, "-f", str(conf), "-DFOREGROUND"]
    return [binary, "-c", str(conf), "-p", f"{workdir}/", "-e", str(workdir / "error.log")]


@contextlib.contextmanager
def start(kind: str, params: dict[str, object], root: Path, workdir: Path,
          template: Path | None = None, http2: bool = False) -> Iterator[Running]:
    """``kind`` (Apache, nginx or ``wagon serve``) serving the files under ``root`` on a free
    127.0.0.1 port, with ``params`` over its defaults, until the block ends. Apache's and
    nginx's config is ``template`` (else wagon's) filled and written into ``workdir``, where
    the server's pid file, ``access.log`` and ``error.log`` go too (stderr appended to the
    latter); ``http2``: nginx speaks HTTP/2 in plain text (h2c, prior knowledge; the
    template's ``{{ http2 }}``). ServerError (one line) on bad parameters, a missing binary,
    or a server that does not start (its error log's last line)."""
    values = resolve(kind, params)
    workdir = Path(workdir).resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    with _served(kind, Path(root).resolve()) as served:
        port = free_port()
        argv = _argv(kind, {**values, "http2": " http2" if http2 else ""}, served, workdir,
                     port, template)
        with listening(argv, port, workdir / "error.log",
                       "wagon serve" if kind == "wagon" else None) as proc:
            running = Running(kind, f"http://127.0.0.1:{port}/", port, workdir, proc.pid,
                              values, workdir / "access.log", capacity(kind, values),
                              http2=http2)
            if kind == "apache":
                _all_workers(running)
            elif kind == "nginx":
                _nginx_workers(running)
            yield running


def _nginx_workers(running: Running) -> None:
    """Return once nginx's master has forked its worker processes (it forks them after it
    listens: what starts at once may find one of two), or at once where the kernel does not
    list a process's children."""
    want = int(running.params["worker_processes"])
    children = Path(f"/proc/{running.pid}/task/{running.pid}/children")
    deadline = time.monotonic() + START_TIMEOUT
    while True:
        try:
            workers = len(children.read_text().split())
        except OSError:
            return
        if workers >= want:
            return
        if time.monotonic() > deadline:
            raise ServerError(f"nginx started {workers} of its {want} worker processes in "
                              f"{START_TIMEOUT:g} s")
        time.sleep(0.02)


def _all_workers(running: Running) -> None:
    """Return once Apache's status page shows all its workers ready (prefork forks them after
    it listens), or at once without a status page (a template without mod_status)."""
    deadline = time.monotonic() + START_TIMEOUT
    while True:
        try:
            now = running.status()
        except (OSError, ValueError):
            return
        workers = now["busy"] + now["idle"]
        if workers >= running.capacity:
            return
        if time.monotonic() > deadline:
            raise ServerError(f"apache2 started {workers} of its {running.capacity} workers "
                              f"in {START_TIMEOUT:g} s")
        time.sleep(0.05)
