"""``wagon serve``: the modeled site from memory (aiohttp.web), with the limits the seed papers
vary: connections served at once (Apache's MaxClients), a keep-alive timeout, a service time.

The site is a ``formats.site.SiteSpec`` — a scenario's, or a model's resolved the same way —
rendered by ``page_html`` and ``object_bytes``: the same bytes nginx serves from
``wagon site build``.
A connection over the limit is accepted by the kernel but not read until a slot frees, as a
server whose workers are all busy.
"""
from __future__ import annotations

import asyncio
import mimetypes
import signal
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from aiohttp import web

from ..formats.site import SiteSpec, object_bytes, page_html

__all__ = ["make_app", "serve", "run_server", "ServeOptions", "ConnectionGate"]


@dataclass(frozen=True)
class ServeOptions:
    """What ``wagon serve`` can be told (besides what to serve)."""

    host: str = "127.0.0.1"
    port: int = 8080
    max_connections: int | None = None
    keepalive_timeout: float = 75.0
    service_time: float = 0.0
    max_time: float | None = None


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

    async def handle(request: web.Request) -> web.Response:
        hit = where.get(request.path)
        if hit is None:
            raise web.HTTPNotFound()
        kind, i = hit
        if kind == "page":
            body = pages.get(i)
            if body is None:
                body = pages[i] = page_html(site, i)
            return web.Response(body=body, content_type="text/html")
        ctype = mimetypes.guess_type(request.path)[0] or "application/octet-stream"
        return web.Response(body=object_bytes(site.object_sizes[i]), content_type=ctype)

    app.router.add_get("/{tail:.*}", handle)
    return app


class ConnectionGate:
    """At most ``limit`` connections served at once; the others wait unread, in arrival order."""

    def __init__(self, limit: int) -> None:
        self.limit, self.active = limit, 0
        self.waiting: deque = deque()

    def wrap(self, factory):
        gate = self

        class Gated(asyncio.Protocol):
            def __init__(self) -> None:
                self.inner = factory()
                self.admitted = False
                self.buffer: list[bytes] = []
                self.transport = None

            def connection_made(self, transport) -> None:
                self.transport = transport
                if gate.active < gate.limit:
                    self.admit()
                else:
                    transport.pause_reading()
                    gate.waiting.append(self)

            def admit(self) -> None:
                gate.active += 1
                self.admitted = True
                self.inner.connection_made(self.transport)
                for data in self.buffer:
                    self.inner.data_received(data)
                self.buffer.clear()
                if not self.transport.is_closing():
                    self.transport.resume_reading()

            def data_received(self, data: bytes) -> None:
                if self.admitted:
                    self.inner.data_received(data)
                else:
                    self.buffer.append(data)

            def eof_received(self):
                return self.inner.eof_received() if self.admitted else None

            def pause_writing(self) -> None:
                if self.admitted:
                    self.inner.pause_writing()

            def resume_writing(self) -> None:
                if self.admitted:
                    self.inner.resume_writing()

            def connection_lost(self, exc) -> None:
                if not self.admitted:
                    if self in gate.waiting:
                        gate.waiting.remove(self)
                    return
                self.inner.connection_lost(exc)
                gate.active -= 1
                while gate.waiting and gate.active < gate.limit:
                    gate.waiting.popleft().admit()

        return Gated


async def serve(app: web.Application, host: str, port: int, max_connections: int | None = None,
                keepalive_timeout: float = 75.0, stop: asyncio.Event | None = None,
                ready=None) -> None:
    """Serve ``app`` until ``stop`` is set (or forever)."""
    runner = web.AppRunner(app, keepalive_timeout=keepalive_timeout, access_log=None,
                           handle_signals=False)
    await runner.setup()
    loop = asyncio.get_running_loop()
    factory = runner.server
    if max_connections:
        factory = ConnectionGate(max_connections).wrap(factory)
    server = await loop.create_server(factory, host, port, backlog=4096, reuse_address=True)
    if ready is not None:
        ready(server.sockets[0].getsockname()[1])
    try:
        await (stop.wait() if stop is not None else asyncio.Future())
    finally:
        server.close()
        await server.wait_closed()
        await runner.cleanup()


def run_server(app: web.Application, opts: ServeOptions,
               ready: Callable[[int], None] | None = None) -> None:
    """Serve ``app`` until SIGINT/SIGTERM or ``opts.max_time``; ``ready(port)`` once listening.
    OSError when the address cannot be listened on."""
    async def main() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        if opts.max_time:
            loop.call_later(opts.max_time, stop.set)
        await serve(app, opts.host, opts.port, opts.max_connections, opts.keepalive_timeout,
                    stop, ready)
    asyncio.run(main())
