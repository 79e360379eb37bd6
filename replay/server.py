"""``wagon serve``: the modeled site from memory (aiohttp.web), with the limits of the servers it
stands in for: connections served at once (Apache's MaxClients), the kernel's listen backlog
beyond them (ListenBacklog), a header-read timeout (RequestReadTimeout), a keep-alive timeout,
a service time, and an access log (ACCESS_LOG_FORMAT: who asked for what, when, and the request's
time as the server measured it).

The site is a ``formats.site.SiteSpec`` — a scenario's, or a model's resolved the same way —
rendered by ``page_html`` and ``object_bytes``: the same bytes nginx serves from
``wagon site build``.

Connections are accepted by ``Listener``, not by asyncio's server: at ``max_connections`` it
stops accepting, so new connections wait in the kernel's listen backlog and, once that is full,
the kernel drops their SYNs (the client retries after 1 s, 3 s, ...), as with Apache.
"""
from __future__ import annotations

import asyncio
import errno
import itertools
import logging
import mimetypes
import signal
import socket
import sys
from pathlib import Path
from time import time as wall_time
from typing import Callable

from aiohttp import web
from aiohttp.abc import AbstractAccessLogger

from ..formats.site import (LAST_MODIFIED, SITE_MTIME, STATUS_ARG, STATUS_CODES, SiteSpec,
                            object_bytes, page_html)
from .limits import open_files_limit, raise_nofile
from .rejected import rejection_logger
from .serve_options import ServeOptions

__all__ = ["make_app", "serve", "run_server", "ServeOptions", "Listener"]

_OUT_OF_FILES = (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM)


_MODIFIED = {"Last-Modified": LAST_MODIFIED}     # what site build gives every file


def make_app(site: SiteSpec | None = None, directory: str | None = None,
             service_time: float = 0.0) -> web.Application:
    """An app serving ``site`` from memory, or the files under ``directory``."""
    app = web.Application()
    if service_time > 0:
        @web.middleware
        async def slow(request: web.Request, handler):
            await asyncio.sleep(service_time)
            return await handler(request)
        app.middlewares.append(slow)
    if directory is not None:
        root = Path(directory)
        if not root.is_dir():
            raise FileNotFoundError(f"{directory}: not a directory")

        async def index(request: web.Request) -> web.StreamResponse:
            return web.FileResponse(root / "index.html")
        app.router.add_get("/", index)
        app.router.add_static("/", root, show_index=False)
        return app
    assert site is not None
    where = {u: ("page", i) for i, u in enumerate(site.page_urls)}
    where.update({u: ("object", i) for i, u in enumerate(site.object_urls) if u not in where})
    pages: dict[int, bytes] = {}

    templates = [(i, t) for i, t in enumerate(site.templates) if t is not None]

    async def handle(request: web.Request) -> web.Response:
        marked = _marked(request)
        if marked is not None:                   # a logged answer (site.status_url), as
            return web.Response(status=marked, headers={"Location": request.path}  # nginx's
                                if 300 <= marked < 400 else None)                    # ``if``
        hit, url = where.get(request.path), None
        if hit is None:                          # a template page's concrete URL (site build
            url = request.raw_path               # writes a file for each a scenario asks for)
            hit = next((("page", i) for i, t in templates if t.fullmatch(url)), None)
        if hit is None:
            raise web.HTTPNotFound()
        kind, i = hit
        since = request.if_modified_since
        if since is not None and since.timestamp() >= SITE_MTIME:    # a revalidation
            return web.Response(status=304, headers=_MODIFIED)
        if kind == "page":
            body = pages.get(i) if url is None else page_html(site, i, url)
            if body is None:
                body = pages[i] = page_html(site, i)
            return web.Response(body=body, content_type="text/html", headers=_MODIFIED)
        ctype = mimetypes.guess_type(request.path)[0] or "application/octet-stream"
        return web.Response(body=object_bytes(site.object_sizes[i]), content_type=ctype,
                            headers=_MODIFIED)

    app.router.add_route("*", "/{tail:.*}", handle)     # a form's POST too, as logged
    return app


def _marked(request: web.Request) -> int | None:
    """The status a request asks for with the site's mark (``STATUS_ARG``), None without
    one or with one a built site does not answer either."""
    code = request.query.get(STATUS_ARG, "")
    return int(code) if code.isdigit() and int(code) in STATUS_CODES else None


class Listener:
    """Accepts connections at most ``limit`` at a time (None: no limit) and guards each with
    the header-read timeout. Out of descriptors, it says so once and waits for some to close."""

    def __init__(self, sock: socket.socket, factory: Callable[[], asyncio.Protocol],
                 limit: int | None, header_timeout: float | None) -> None:
        self.sock, self.factory = sock, factory
        self.limit, self.header_timeout = limit, header_timeout
        self.loop = asyncio.get_running_loop()
        self.active = 0
        self.serials: dict[int, list[int]] = {}   # id(protocol) → [connection, requests]
        self._ids = itertools.count(1)
        self._accepting = False
        self._starting: set[asyncio.Task] = set()    # connections being set up (referenced)
        self.out_of_files = 0

    def start(self) -> None:
        if not self._accepting:
            self.loop.add_reader(self.sock.fileno(), self._accept)
            self._accepting = True

    def stop(self) -> None:
        if self._accepting:
            self.loop.remove_reader(self.sock.fileno())
            self._accepting = False

    def _accept(self) -> None:
        while self.limit is None or self.active < self.limit:
            try:
                conn, _ = self.sock.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError as e:
                if e.errno in _OUT_OF_FILES:
                    self._no_files()
                    return
                continue                             # the client went away meanwhile
            conn.setblocking(False)
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self.active += 1
            inner = self.factory()
            self.serials[id(inner)] = [next(self._ids), 0]
            task = self.loop.create_task(self.loop.connect_accepted_socket(
                lambda inner=inner: _Guarded(self, inner), conn))
            self._starting.add(task)
            task.add_done_callback(lambda t, inner=inner: self._started(t, inner))
        self.stop()                                  # at the limit: the backlog holds the rest

    def _started(self, task: asyncio.Task, inner: asyncio.Protocol) -> None:
        self._starting.discard(task)
        if task.cancelled() or task.exception() is not None:    # never served: its slot frees
            self.released(inner)

    def _no_files(self) -> None:
        """One line for the run (not one per refused accept); retry in 0.1 s or when a
        connection closes."""
        if not self.out_of_files:
            print(f"wagon serve: out of file descriptors (limit {open_files_limit():,}): new "
                  "connections wait in the listen backlog until some close", file=sys.stderr,
                  flush=True)
        self.out_of_files += 1
        self.stop()
        self.loop.call_later(0.1, self.start)

    def released(self, inner: asyncio.Protocol) -> None:
        self.active -= 1
        self.serials.pop(id(inner), None)
        if self.limit is not None and self.active < self.limit:
            self.start()


class _Guarded(asyncio.Protocol):
    """aiohttp's protocol for one connection, with the header-read timeout: a request's header
    must arrive complete within ``header_timeout`` of its first byte (of the connection, for
    the first one), or the connection is closed — slowloris cannot hold it."""

    def __init__(self, listener: Listener, inner: asyncio.Protocol) -> None:
        self.listener, self.inner = listener, inner
        self.transport: asyncio.Transport | None = None
        self.tail = b""                       # the last bytes seen, to find "\r\n\r\n" across reads
        self.timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport) -> None:
        self.transport = transport
        self.inner.connection_made(transport)
        self._arm()

    def _arm(self) -> None:
        if self.timer is None and self.listener.header_timeout:
            self.timer = self.listener.loop.call_later(self.listener.header_timeout,
                                                       self.transport.close)

    def _disarm(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None

    def data_received(self, data: bytes) -> None:
        seen = self.tail + data
        end = seen.rfind(b"\r\n\r\n")
        after = seen if end < 0 else seen[end + 4:]
        if end >= 0:
            self._disarm()
        if after:                             # a header under way (begun now, or before)
            self._arm()
        self.tail = after[-3:]
        self.inner.data_received(data)

    def eof_received(self):
        return self.inner.eof_received()

    def pause_writing(self) -> None:
        self.inner.pause_writing()

    def resume_writing(self) -> None:
        self.inner.resume_writing()

    def connection_lost(self, exc) -> None:
        self._disarm()
        self.inner.connection_lost(exc)
        self.listener.released(self.inner)


#: the access log's layout, as nginx would write it (``wagon fit`` reads it as the named layout
#: ``wagon``): client address, end time to the millisecond, request line, status, body bytes,
#: Referer, User-Agent, request time (s), connection serial and its request count
ACCESS_LOG_FORMAT = ('$remote_addr - $remote_user [$msec] "$request" $status $body_bytes_sent '
                     '"$http_referer" "$http_user_agent" $request_time $connection '
                     '$connection_requests')


def _quoted(value: str | None) -> str:
    """A header value as nginx logs it between quotes: '-' when absent, quotes escaped."""
    return "-" if not value else value.replace("\\", "\\x5C").replace('"', "\\x22")


def _access_log_class(listener: list[Listener]):
    """An aiohttp access logger writing ACCESS_LOG_FORMAT. The request time is aiohttp's own
    (request header read → response handed to the kernel), the end time the moment it logs."""
    class AccessLog(AbstractAccessLogger):
        def log(self, request, response, time: float) -> None:
            serial = listener[0].serials.get(id(request.protocol), [0, 0])
            serial[1] += 1
            size = response.content_length          # files go by sendfile: not in body_length
            v = request.version
            self.logger.info('%s - - [%.3f] "%s %s HTTP/%d.%d" %d %d "%s" "%s" %.3f %d %d',
                             request.remote or "-", wall_time(), request.method,
                             request.raw_path, v.major, v.minor, response.status,
                             response.body_length if size is None else size,
                             _quoted(request.headers.get("Referer")),
                             _quoted(request.headers.get("User-Agent")), time, serial[0],
                             serial[1])
    return AccessLog


def _access_logger(path: str) -> logging.Logger:
    log = logging.getLogger(f"wagon.serve.access.{path}")
    log.propagate = False
    log.setLevel(logging.INFO)
    handler = logging.FileHandler(path, mode="w")
    handler.setFormatter(logging.Formatter("%(message)s"))
    log.addHandler(handler)
    return log


async def serve(app: web.Application, opts: ServeOptions, stop: asyncio.Event | None = None,
                ready: Callable[[int], None] | None = None) -> None:
    """Serve ``app`` as ``opts`` say until ``stop`` is set (or forever)."""
    holder: list[Listener] = []
    logging_kw = ({"access_log": _access_logger(opts.access_log),
                   "access_log_class": _access_log_class(holder)} if opts.access_log
                  else {"access_log": None})
    runner = web.AppRunner(app, keepalive_timeout=opts.keepalive_timeout, handle_signals=False,
                           logger=rejection_logger(sys.stderr), **logging_kw)
    await runner.setup()
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((opts.host, opts.port))
        sock.listen(opts.backlog)
    except OSError:
        sock.close()
        await runner.cleanup()
        raise
    sock.setblocking(False)
    listener = Listener(sock, runner.server, opts.max_connections, opts.header_timeout)
    holder.append(listener)
    listener.start()
    if ready is not None:
        ready(sock.getsockname()[1])
    try:
        await (stop.wait() if stop is not None else asyncio.Future())
    finally:
        listener.stop()
        sock.close()
        await runner.cleanup()


def run_server(app: web.Application, opts: ServeOptions,
               ready: Callable[[int], None] | None = None) -> None:
    """Serve ``app`` until SIGINT/SIGTERM or ``opts.max_time``, with the open-files limit
    raised; ``ready(port)`` once listening. OSError when the address cannot be listened on."""
    raise_nofile()

    async def main() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        if opts.max_time:
            loop.call_later(opts.max_time, stop.set)
        await serve(app, opts, stop, ready)
    asyncio.run(main())
