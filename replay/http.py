"""HTTP/1.x client connections: non-blocking sockets on the event loop, httptools' parser.

aiohttp's client cannot pipeline and hides its connections; here each ``Connection`` is exactly
one TCP connection that the browser layer opens, reuses, pipelines on and closes as its protocol
profile says. Responses are matched to requests in order (pipelining).

Data is read with ``recvmsg`` and stamped with the kernel's receive time (SO_TIMESTAMPNS, where
the platform has it): first and last bytes are timed when the packets reached the socket, not
when the process woke up to read them, which is what a packet capture sees.

Errors are recorded on the call, never raised past it: refused, connect_timeout, connect_error,
too_many_open_files, reset, closed (the server closed before answering), truncated (closed
mid-body), timeout, bad_response, and http_4xx / http_5xx for error statuses.
"""
from __future__ import annotations

import asyncio
import errno
import socket
import struct
import time
from collections import deque

import httptools

from .emulation import ClientNet
from .events import Call, clock

__all__ = ["Connection", "open_connection", "ConnectFailed", "KERNEL_TIMESTAMPS"]

SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35 if hasattr(socket, "SO_REUSEPORT") else None)
KERNEL_TIMESTAMPS = SO_TIMESTAMPNS is not None and socket.SOL_SOCKET == 1     # Linux
READ_SIZE = 1 << 18
_ANC_SIZE = socket.CMSG_SPACE(16)
# kernel stamps are CLOCK_REALTIME; clock() is CLOCK_MONOTONIC: the offset, measured once
_REALTIME_TO_CLOCK = clock() - time.clock_gettime(time.CLOCK_REALTIME)


class ConnectFailed(Exception):
    """The TCP connection could not be opened (the message is the error kind)."""


class Connection:
    """One TCP connection; ``send`` writes requests, a future resolves per response."""

    def __init__(self, conn_id: int, net: ClientNet, loop: asyncio.AbstractEventLoop,
                 sock: socket.socket) -> None:
        self.id, self.net, self.loop, self.sock = conn_id, net, loop, sock
        self.fd = sock.fileno()
        self.parser = httptools.HttpResponseParser(self)
        self.pending: deque[tuple[Call, asyncio.Future]] = deque()
        self.open = True
        self.used = 0                          # requests sent on it
        self._now = 0.0
        self._paused_until = 0.0
        self._headers_done = False
        self._keep_alive = True
        self._reading = False
        self._wbuf = b""
        self._stamps = KERNEL_TIMESTAMPS
        if self._stamps:
            try:
                sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
            except OSError:
                self._stamps = False
        self._read_on()

    # ---- reading -----------------------------------------------------------------------------
    def _read_on(self) -> None:
        if self.open and not self._reading:
            self.loop.add_reader(self.fd, self._readable)
            self._reading = True

    def _read_off(self) -> None:
        if self._reading:
            self.loop.remove_reader(self.fd)
            self._reading = False

    def _readable(self) -> None:
        """Read until the socket would block while a response is outstanding: an error queued
        behind data (a reset after the last segment) surfaces now, since the poller may not
        report it again. With nothing outstanding, one read is enough (and saves a syscall)."""
        while self._reading:
            try:
                if self._stamps:
                    data, anc, _, _ = self.sock.recvmsg(READ_SIZE, _ANC_SIZE)
                else:
                    data, anc = self.sock.recv(READ_SIZE), ()
            except (BlockingIOError, InterruptedError):
                return
            except OSError as e:
                self._lost(e)
                return
            if not data:
                self._lost(None)
                return
            self._received(data, anc)
            if not self.pending:
                return

    def _received(self, data: bytes, anc: list) -> None:
        self._now = clock()
        for level, kind, cdata in anc:
            if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS and len(cdata) >= 16:
                sec, nsec = struct.unpack("qq", cdata[:16])
                self._now = min(self._now, sec + nsec * 1e-9 + _REALTIME_TO_CLOCK)
        if self.net.down is not None:
            wait = self.net.down.take(len(data))
            if wait > 0:
                self._read_off()
                self._paused_until = self._now + wait
                self.loop.call_later(wait, self._read_on)
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserError:
            self._fail_all("bad_response")
            self.close()

    def _lost(self, exc: Exception | None) -> None:
        if not self.open:
            return
        if self.pending and self._headers_done and not self._keep_alive and exc is None:
            self.on_message_complete()         # a body delimited by the end of the connection
        self._shut()
        self._fail_all("reset" if isinstance(exc, ConnectionResetError) else None)

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

    # ---- writing -----------------------------------------------------------------------------
    def send(self, calls: list[Call], requests: list[bytes]) -> list[asyncio.Future]:
        """Write the requests of ``calls`` at once (one, or a pipelined batch)."""
        futures = []
        for call in calls:
            call.conn, call.reused = self.id, self.used > 0
            fut = self.loop.create_future()
            self.pending.append((call, fut))
            futures.append(fut)
            self.used += 1
        self._write(b"".join(requests))
        return futures

    def _write(self, data: bytes) -> None:
        if self._wbuf:
            self._wbuf += data
            return
        try:
            sent = self.sock.send(data)
        except (BlockingIOError, InterruptedError):
            sent = 0
        except OSError as e:
            self._lost(e)
            return
        if sent < len(data):
            self._wbuf = data[sent:]
            self.loop.add_writer(self.fd, self._writable)

    def _writable(self) -> None:
        try:
            sent = self.sock.send(self._wbuf)
        except (BlockingIOError, InterruptedError):
            return
        except OSError as e:
            self._lost(e)
            return
        self._wbuf = self._wbuf[sent:]
        if not self._wbuf:
            self.loop.remove_writer(self.fd)

    # ---- ending ------------------------------------------------------------------------------
    def _fail_all(self, kind: str | None) -> None:
        while self.pending:
            call, fut = self.pending.popleft()
            if call.error is None:
                call.error = kind or ("truncated" if call.first_byte is not None else "closed")
            call.last_byte = clock()
            if not fut.done():
                fut.set_result(None)

    def _shut(self) -> None:
        self.open = False
        self._read_off()
        if self._wbuf:
            self.loop.remove_writer(self.fd)
            self._wbuf = b""
        self.sock.close()

    def close(self) -> None:
        """Close (pending calls, if any, end as 'closed' or 'truncated')."""
        if self.open:
            self._shut()
            self._fail_all(None)

    abort = close


def _resolve(fut: asyncio.Future) -> None:
    if not fut.done():
        fut.set_result(None)


async def open_connection(conn_id: int, host: str, port: int, net: ClientNet,
                          timeout: float) -> Connection:
    """Connect (with the client's receive buffer), then wait the handshake's round trip."""
    loop = asyncio.get_running_loop()
    try:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    except OSError as e:
        raise ConnectFailed("too_many_open_files" if e.errno == errno.EMFILE
                            else "connect_error") from None
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    if net.rcvbuf is not None:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, net.rcvbuf)
    sock.setblocking(False)
    try:
        async with asyncio.timeout(timeout):
            await loop.sock_connect(sock, (host, port))
    except TimeoutError:
        sock.close()
        raise ConnectFailed("connect_timeout") from None
    except ConnectionRefusedError:
        sock.close()
        raise ConnectFailed("refused") from None
    except OSError as e:
        sock.close()
        raise ConnectFailed("too_many_open_files" if e.errno == errno.EMFILE
                            else "connect_error") from None
    conn = Connection(conn_id, net, loop, sock)
    if net.rtt > 0:
        await asyncio.sleep(net.rtt)
    return conn
