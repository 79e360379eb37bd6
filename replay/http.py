"""HTTP/1.x client connections on asyncio protocols with httptools' response parser.

aiohttp's client cannot pipeline and hides its connections; here each ``Connection`` is exactly
one TCP connection that the browser layer opens, reuses, pipelines on and closes as its protocol
profile says. Responses are matched to requests in order (pipelining). Errors are recorded on
the call, never raised past it: refused, connect_timeout, connect_error, reset, closed (the
server closed before answering), truncated (closed mid-body), timeout, bad_response, and
http_4xx / http_5xx for error statuses.
"""
from __future__ import annotations

import asyncio
import socket
from collections import deque

import httptools

from .emulation import ClientNet
from .events import Call, clock

__all__ = ["Connection", "open_connection", "ConnectFailed"]


class ConnectFailed(Exception):
    """The TCP connection could not be opened (the message is the error kind)."""


class Connection(asyncio.Protocol):
    """One TCP connection; ``send`` writes requests, ``done`` futures resolve per response."""

    def __init__(self, conn_id: int, net: ClientNet, loop: asyncio.AbstractEventLoop) -> None:
        self.id, self.net, self.loop = conn_id, net, loop
        self.transport: asyncio.Transport | None = None
        self.parser = httptools.HttpResponseParser(self)
        self.pending: deque[tuple[Call, asyncio.Future]] = deque()
        self.open = False
        self.used = 0                          # requests sent on it
        self._now = 0.0
        self._paused_until = 0.0
        self._headers_done = False
        self._keep_alive = True

    # ---- asyncio protocol ------------------------------------------------------------------
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        self.open = True

    def data_received(self, data: bytes) -> None:
        self._now = clock()
        if self.net.down is not None:
            wait = self.net.down.take(len(data))
            if wait > 0 and self.transport is not None:
                self.transport.pause_reading()
                self._paused_until = self._now + wait
                self.loop.call_later(wait, self._resume)
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserError:
            self._fail_all("bad_response")
            self.close()

    def _resume(self) -> None:
        if self.transport is not None and not self.transport.is_closing():
            self.transport.resume_reading()

    def connection_lost(self, exc: Exception | None) -> None:
        self.open = False
        if self.pending and self._headers_done and not self._keep_alive and exc is None:
            self.on_message_complete()         # a body delimited by the end of the connection
        kind = "reset" if isinstance(exc, ConnectionResetError) else None
        self._fail_all(kind)

    # ---- httptools callbacks -----------------------------------------------------------------
    def on_message_begin(self) -> None:
        if self.pending:
            self.pending[0][0].first_byte = self._now
        self._headers_done = False

    def on_headers_complete(self) -> None:
        self._headers_done = True
        self._keep_alive = self.parser.should_keep_alive()
        if self.pending:
            self.pending[0][0].status = self.parser.get_status_code()

    def on_body(self, body: bytes) -> None:
        if self.pending:
            self.pending[0][0].bytes += len(body)

    def on_message_complete(self) -> None:
        if not self.pending:
            return
        call, fut = self.pending.popleft()
        # the last byte is in only when the bucket's debt for it is paid
        call.last_byte = max(self._now, self._paused_until)
        if call.status >= 400:
            call.error = f"http_{call.status // 100}xx"
        self._headers_done = False
        if not fut.done():
            delay = call.last_byte - clock()
            if delay > 0:
                self.loop.call_later(delay, _resolve, fut)
            else:
                fut.set_result(None)
        if not self._keep_alive:
            self.close()

    # ---- use ---------------------------------------------------------------------------------
    def send(self, calls: list[Call], requests: list[bytes]) -> list[asyncio.Future]:
        """Write the requests of ``calls`` at once (one, or a pipelined batch)."""
        futures = []
        for call in calls:
            call.conn, call.reused = self.id, self.used > 0
            fut = self.loop.create_future()
            self.pending.append((call, fut))
            futures.append(fut)
            self.used += 1
        assert self.transport is not None
        self.transport.write(b"".join(requests))
        return futures

    def _fail_all(self, kind: str | None) -> None:
        while self.pending:
            call, fut = self.pending.popleft()
            if call.error is None:
                call.error = kind or ("truncated" if call.first_byte is not None else "closed")
            call.last_byte = clock()
            if not fut.done():
                fut.set_result(None)

    def close(self) -> None:
        self.open = False
        if self.transport is not None and not self.transport.is_closing():
            self.transport.close()

    def abort(self) -> None:
        self.open = False
        if self.transport is not None:
            self.transport.abort()


def _resolve(fut: asyncio.Future) -> None:
    if not fut.done():
        fut.set_result(None)


async def open_connection(conn_id: int, host: str, port: int, net: ClientNet,
                          timeout: float) -> Connection:
    """Connect (with the client's receive buffer), then wait the handshake's round trip."""
    loop = asyncio.get_running_loop()
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    if net.rcvbuf is not None:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, net.rcvbuf)
    sock.setblocking(False)
    try:
        await asyncio.wait_for(loop.sock_connect(sock, (host, port)), timeout)
    except asyncio.TimeoutError:
        sock.close()
        raise ConnectFailed("connect_timeout") from None
    except ConnectionRefusedError:
        sock.close()
        raise ConnectFailed("refused") from None
    except OSError as e:
        sock.close()
        raise ConnectFailed("too_many_open_files" if e.errno == 24 else "connect_error") from None
    conn = Connection(conn_id, net, loop)
    await loop.create_connection(lambda: conn, sock=sock)
    if net.rtt > 0:
        await asyncio.sleep(net.rtt)
    return conn
