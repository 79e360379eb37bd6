"""The emulated browser: how one user fetches a page and its embedded objects.

Protocol profiles (formats.classes.Protocol):
- HTTP/1.0 × K: a new connection per request, the HTML first, then objects K at a time;
- persistent (HTTP/1.1) × K: the HTML on the first connection, objects spread over K kept-alive
  connections, each used one request at a time; connections are kept across clicks (a browser's
  keep-alive), and reopened when the server has closed them meanwhile;
- pipelined: one persistent connection, the objects' requests written back to back;
- early close: persistent during a page, closed by the client once the page is complete.
A request that fails on a reused connection before any byte of response (the server closed it
while idle) is retried once on a new connection, as browsers do.
"""
from __future__ import annotations

import asyncio
import itertools
from dataclasses import dataclass
from urllib.parse import quote

from ..formats.classes import Network, Protocol
from ..formats.site import SiteSpec
from .emulation import ClientNet
from .events import Call, Hooks, PageVisit, clock
from .http import ConnectFailed, Connection, open_connection

__all__ = ["Target", "Client"]


@dataclass
class Target:
    """Where requests go and what they look like; shared by every client of a process."""

    host: str
    port: int
    host_header: str
    connect_timeout: float
    timeout: float
    hooks: Hooks
    site: SiteSpec
    conn_ids: itertools.count
    emulation: bool = True

    def __post_init__(self) -> None:
        self._cache: dict[tuple[str, bool], bytes] = {}

    def request(self, url: str, http10: bool) -> bytes:
        key = (url, http10)
        raw = self._cache.get(key)
        if raw is None:
            path = quote(url, safe="/:@&=+$,;~!*'()?#[]%")
            raw = (f"GET {path} HTTP/1.{0 if http10 else 1}\r\nHost: {self.host_header}\r\n"
                   f"User-Agent: wagon-replay\r\nAccept: */*\r\n\r\n").encode("latin-1", "replace")
            self._cache[key] = raw
        return raw


def _expire(calls: list[Call], conn: Connection) -> None:
    """The request timeout: what has not completed is a timeout, and the connection goes."""
    now = clock()
    for c in calls:
        if c.last_byte is None:
            c.error, c.last_byte = "timeout", now
    conn.abort()


class Client:
    """One session's user: its link, its connections, its protocol."""

    def __init__(self, target: Target, session: int, cls: int, network: Network,
                 protocol: Protocol, loop: asyncio.AbstractEventLoop) -> None:
        self.t, self.session, self.cls, self.p, self.loop = target, session, cls, protocol, loop
        self.net = ClientNet(network if target.emulation else None)
        self.kept: list[Connection | None] = [None] * max(1, protocol.connections)
        self.http10 = not protocol.persistent

    # ---- connections -------------------------------------------------------------------------
    async def _connect(self, call: Call) -> Connection | None:
        call.connect_start = clock()
        try:
            conn = await open_connection(next(self.t.conn_ids), self.t.host, self.t.port,
                                         self.net, self.t.connect_timeout)
        except ConnectFailed as e:
            call.error, call.start = str(e), call.connect_start
            call.last_byte = clock()
            return None
        call.connected = clock()
        self.t.hooks.emit("connection_open", conn.id)
        return conn

    async def _exchange(self, conn: Connection, calls: list[Call]) -> None:
        """Issue the requests (their start: now, before the emulated round trip and upload)."""
        reqs = [self.t.request(c.url, self.http10) for c in calls]
        now = clock()
        for c in calls:
            c.start = now
        wait = self.net.exchange_delay(sum(map(len, reqs)))
        if wait > 0:
            await asyncio.sleep(wait)
        if not conn.open:              # closed during the wait: nothing was sent on it
            for c in calls:
                c.error, c.last_byte = "closed", clock()
                c.conn, c.reused = conn.id, conn.used > 0
            return
        futures = conn.send(calls, reqs)
        # responses come in order and a failure resolves them all: the last one is enough
        timer = self.loop.call_later(self.t.timeout, _expire, calls, conn)
        try:
            await futures[-1]
        finally:
            timer.cancel()

    async def _one_shot(self, call: Call) -> None:
        """A request on a connection of its own (HTTP/1.0)."""
        conn = await self._connect(call)
        if conn is not None:
            await self._exchange(conn, [call])
            conn.close()
        self.t.hooks.emit("call_done", call)

    async def _kept(self, slot: int, calls: list[Call]) -> None:
        """Requests on kept-alive connection ``slot``: pipelined together, or one at a time."""
        batches = [calls] if self.p.pipeline else [[c] for c in calls]
        for batch in batches:
            todo = batch
            for attempt in (0, 1):
                conn = self.kept[slot]
                if conn is None or not conn.open:
                    conn = self.kept[slot] = await self._connect(todo[0])
                    if conn is None:
                        for c in todo[1:]:
                            c.error, c.start, c.last_byte = todo[0].error, todo[0].start, \
                                todo[0].last_byte
                        break
                    for c in todo[1:]:
                        c.connect_start, c.connected = todo[0].connect_start, todo[0].connected
                await self._exchange(conn, todo)
                stale = [c for c in todo if c.reused and c.error == "closed"]
                if attempt or not stale:
                    break
                # the server closed the idle connection: retry what it never answered
                for c in stale:
                    c.error = c.first_byte = c.last_byte = None
                    c.bytes, c.status = 0, 0
                todo = stale
            for c in batch:
                self.t.hooks.emit("call_done", c)

    # ---- a click -----------------------------------------------------------------------------
    async def visit(self, page: int, intended: float) -> PageVisit:
        visit = PageVisit(self.session, self.cls, page, intended, clock())
        html = Call(self.session, self.cls, page, self.t.site.page_urls[page], True, intended)
        if self.http10:
            await self._one_shot(html)
        else:
            await self._kept(0, [html])
        visit.html_first_byte, visit.done = html.first_byte, html.last_byte
        visit.start = html.start if html.start is not None else visit.start
        if html.error is not None:
            visit.errors = 1
            self.t.hooks.emit("page_done", visit)
            return visit
        site = self.t.site
        objs = [Call(self.session, self.cls, page, site.object_urls[o], False, html.last_byte)
                for o in site.page_objects[page]]
        if objs:
            k = max(1, self.p.connections)
            if self.http10:
                gate = asyncio.Semaphore(k)

                async def limited(c: Call) -> None:
                    async with gate:
                        await self._one_shot(c)
                await asyncio.gather(*(limited(c) for c in objs))
            elif self.p.pipeline:
                await self._kept(0, objs)
            else:
                await asyncio.gather(*(self._kept(i, objs[i::k]) for i in range(min(k, len(objs)))))
            visit.objects = len(objs)
            visit.errors = sum(c.error is not None for c in objs)
            visit.done = max(c.last_byte for c in objs)
            firsts = [c.first_byte for c in objs if c.first_byte is not None]
            visit.last_object_first_byte = max(firsts) if firsts else None
        if self.p.close_after_page:
            self.close()
        self.t.hooks.emit("page_done", visit)
        return visit

    def close(self) -> None:
        for i, conn in enumerate(self.kept):
            if conn is not None:
                conn.close()
                self.kept[i] = None
