"""HTTP/1.x client connections: non-blocking sockets on the event loop, httptools' parser.

aiohttp's client cannot pipeline and hides its connections; here each ``Connection`` is exactly
one TCP connection that the browser layer opens, reuses, pipelines on and closes as its protocol
profile says. Responses are matched to requests in order (pipelining).

Data is read with ``recvmsg`` and stamped with the kernel's receive time (SO_TIMESTAMPNS, where
the platform has it): first and last bytes are timed when the packets reached the socket, not
when the process woke up to read them, which is what a packet capture sees.

Over TLS (``replay.tls``) the connection reads and writes through a ``TlsLayer``: the socket,
its timestamps and the pacing stay the same; ``open_connection`` runs the handshake. Other
protocols (``replay.http2``) subclass ``Connection`` for its socket, timing and timeouts and
bring their own ``_feed``, ``send`` and ``_fail_all``.

Errors are recorded on the call, never raised past it: refused, connect_timeout, connect_error,
too_many_open_files, tls_error (the handshake failed), tls_verify (the certificate did not
verify), no_h2 (the server did not choose the protocol in ALPN), reset, closed (the server closed before answering), truncated (closed
mid-body), timeout (no byte for the inactivity timeout while the client was reading),
request_timeout (the optional cap on a whole request), bad_response, and http_4xx / http_5xx
for error statuses.
"""
from __future__ import annotations

import asyncio
import errno
import os
import socket
import ssl
import struct
import time
from collections import deque
from typing import Callable

import httptools

from .emulation import PATH_MSS, READ_AHEAD, ClientNet
from .events import Call, clock
from .identity import bind_source
from .tls import TlsFailed, TlsLayer

__all__ = ["Connection", "open_connection", "ConnectFailed", "KERNEL_TIMESTAMPS", "answered",
           "failed", "closes_sent"]

SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35 if hasattr(socket, "SO_REUSEPORT") else None)
KERNEL_TIMESTAMPS = SO_TIMESTAMPNS is not None and socket.SOL_SOCKET == 1     # Linux
READ_SIZE = 1 << 18
_KEPT = frozenset((8, 10))              # the lengths of "Location" and "Set-Cookie"
_ANC_SIZE = socket.CMSG_SPACE(16)
_STAMP = struct.Struct("qq")             # a struct timespec
# kernel stamps are CLOCK_REALTIME; clock() is CLOCK_MONOTONIC: the offset, measured once
_REALTIME_TO_CLOCK = clock() - time.clock_gettime(time.CLOCK_REALTIME)


class ConnectFailed(Exception):
    """The TCP connection could not be opened (the message is the error kind)."""


class Connection:
    """One TCP connection; ``send`` writes requests, a future resolves per response (when its
    last byte has reached the emulated client)."""

    ALPN = ("http/1.1",)                       # what it offers in TLS, in preference order
    ALPN_REFUSED = "tls_error"                 # the error when the server chose otherwise

    def __init__(self, conn_id: int, net: ClientNet, loop: asyncio.AbstractEventLoop,
                 sock: socket.socket, idle_timeout: float | None,
                 tls: TlsLayer | None = None) -> None:
        self.id, self.net, self.loop, self.sock, self.tls = conn_id, net, loop, sock, tls
        self.tls_start: float | None = None    # when its TLS handshake began (None: plain)
        self.opened = clock()                  # when the client could first use it
        self.on_close: Callable[[int], None] | None = None    # told once, when it closes
        self.idle_timeout = idle_timeout
        self.fd = sock.fileno()
        self.parser: httptools.HttpResponseParser | None = None   # from its first request
        self.answering: Call | None = None     # the call whose answer is being parsed
        self.pending: deque[tuple[Call, asyncio.Future]] = deque()
        self.open = True
        self.accepting = True                  # can it take a new request?
        self.used = 0                          # requests sent on it
        self._first = self._last = 0.0         # when the bytes just read reach the client
        self._arrived = 0.0                    # the latest kernel receive time read so far
        self._active = clock()                 # the last sign of life (for the idle timeout)
        self._idle_timer: asyncio.TimerHandle | None = None
        self._headers_done = False
        self._every_field = False              # does a script read this answer's fields?
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
            self._active = clock()

    def _read_off(self) -> None:
        if self._reading:
            self.loop.remove_reader(self.fd)
            self._reading = False

    def _readable(self) -> None:
        """Read while a response is outstanding and each read fills the buffer. An error
        queued behind the data (a reset after the last segment) must surface now, since the
        poller may not report it again (libuv stops a poll handle on POLLERR: reading once
        per wake-up, a reset behind data ended as a timeout in 1 of 4 runs of the faults
        test): after a short read the socket's pending error is asked for (SO_ERROR, 0.34
        µs), not found by a read that finds the socket empty (1.3 µs with its exception,
        0.66 of them a request: nginx sends a page's header and body in two segments). With
        nothing outstanding, one read is enough."""
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
            if not self.pending or not self.open:
                return
            if len(data) < READ_SIZE:
                err = self.sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
                if err:
                    self._lost(OSError(err, os.strerror(err)))
                return

    def _received(self, data: bytes, anc: list) -> None:
        """Stamp the bytes and parse them. They reached the socket at the kernel's receive time
        (SO_TIMESTAMPNS); on a paced link they reach the client when the link has carried them,
        first in first out behind what it carries already, and reading pauses while the link is
        behind (the data waits in the kernel, which is what slows the server). Either way, half
        a round trip of propagation later."""
        now = arrived = clock()
        for level, kind, cdata in anc:
            if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS and len(cdata) >= 16:
                sec, nsec = _STAMP.unpack_from(cdata)
                arrived = sec + nsec * 1e-9 + _REALTIME_TO_CLOCK
                if arrived > now:
                    arrived = now
        # a read's stamp is its first segment's: after a retransmission fills a gap, the
        # segments queued behind it arrived earlier than bytes read before; the connection's
        # bytes reach the client in order (min and max as comparisons: a call of either
        # costs ~600 machine instructions)
        if arrived < self._arrived:
            arrived = self._arrived
        self._arrived = arrived
        self._active = now
        down = self.net.down
        if down is None:
            first = last = arrived
        else:
            first, last = down.put(len(data), arrived)
            behind = last - now - READ_AHEAD
            if behind > 0:
                self._read_off()
                self.loop.call_later(behind, self._read_on)
        self._first, self._last = first + self.net.half, last + self.net.half
        closed = False
        if self.tls is not None:
            try:
                data, closed = self.tls.decrypt(data)
            except ssl.SSLError:
                self._fail_all("tls_error")
                self.close()
                return
        if data:
            self._feed(data)
        if closed:
            self._lost(None)

    @classmethod
    def accepts(cls, alpn: str | None) -> bool:
        """Can it talk over a TLS connection on which ALPN chose ``alpn``?"""
        return alpn is None or alpn in cls.ALPN

    def _feed(self, data: bytes) -> None:
        """Parse what the server sent."""
        if not self.pending:                       # bytes nobody asked for
            self.close()
            return
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
        if self.open:                          # which may have closed it already
            self._shut()
        self._fail_all("reset" if isinstance(exc, ConnectionResetError) else None)

    # ---- the inactivity timeout --------------------------------------------------------------
    def _arm(self) -> None:
        if self._idle_timer is None and self.idle_timeout:
            self._idle_timer = self.loop.call_later(self.idle_timeout, self._idle_check)

    def _idle_check(self) -> None:
        """No byte for ``idle_timeout`` while the client was reading: a timeout. Silence while
        the emulated link holds the reads is the link's, not the server's: it does not count.
        One timer per connection, re-armed when it fires (never on every byte, nor on every
        request: one armed while the connection was busy lapses here once it is idle)."""
        self._idle_timer = None
        if not self.pending or not self.open:
            return
        left = self._active + self.idle_timeout - clock() if self._reading else self.idle_timeout
        if left <= 0:
            self.expire("timeout")
        else:
            self._idle_timer = self.loop.call_later(left, self._idle_check)

    # ---- httptools callbacks -----------------------------------------------------------------
    # (``answering``: the oldest outstanding call while its answer is parsed, None for an
    # answer nobody asked for)
    def on_message_begin(self) -> None:
        call = self.answering = self.pending[0][0] if self.pending else None
        if call is not None:
            start = call.start or 0.0
            call.first_byte = self._first if self._first > start else start
        self._every_field = call is not None and call.answer is not None
        self._headers_done = False

    def on_header(self, name: bytes, value: bytes) -> None:
        """Called for every header field of every answer: the common one (neither Location
        nor Set-Cookie, no script reading the answer) does as little as it can (whether a
        script reads the answer is looked up once an answer, in ``on_message_begin``)."""
        if len(name) in _KEPT or self._every_field:
            self._header(name, value)

    def _header(self, name: bytes, value: bytes) -> None:
        call = self.answering
        if call is None:
            return
        if len(name) == 8 and name.lower() == b"location":
            call.location = value
        elif len(name) == 10 and name.lower() == b"set-cookie":
            call.set_cookie = (call.set_cookie or []) + [value]
        if call.answer is not None:
            call.answer.add_header(name, value)

    def on_headers_complete(self) -> None:
        call = self.answering
        if call is None:
            return
        self._headers_done = True
        self._keep_alive = self.parser.should_keep_alive()
        call.status = self.parser.get_status_code()
        if call.answer is not None:
            call.answer.status = call.status

    def on_body(self, body: bytes) -> None:
        call = self.answering
        if call is not None:
            call.bytes += len(body)
            if call.answer is not None:
                call.answer.add_body(body)

    def on_message_complete(self) -> None:
        """An answer is complete. The parser stays for the next one (a new parser per request
        cost ~1 us); the inactivity timer lapses when it fires (cancelling and arming one per
        request cost 4 % of a closed loop's CPU)."""
        if self.answering is None:
            return
        self.answering = None
        call, fut = self.pending.popleft()
        self._headers_done = False
        answered(self.loop, call, fut, self._last)
        if not self._keep_alive:
            self.close()

    def _disarm(self) -> None:
        if self._idle_timer is not None:
            self._idle_timer.cancel()
            self._idle_timer = None

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
        if self.parser is None:
            self.parser = httptools.HttpResponseParser(self)
        self._active = clock()
        self._arm()
        self._write(b"".join(requests))
        return futures

    def give_up(self, calls: list[Call], kind: str) -> None:
        """``calls`` took too long: on HTTP/1.x what is outstanding goes with the connection."""
        self.expire(kind)

    def _write(self, data: bytes) -> None:
        if self.tls is not None:
            data = self.tls.encrypt(data)
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
        """Settle every outstanding call that has no outcome yet."""
        while self.pending:
            failed(*self.pending.popleft(), kind)

    def _shut(self) -> None:
        """Closed for the client now; the socket itself when the client's FIN would reach the
        server: half a round trip after now, or after the last byte reached the client."""
        self.open = self.accepting = False
        self._read_off()
        self.parser = self.answering = None    # (the parser and the connection refer to each
        self._disarm()                         # other: gone without waiting for a collection)
        if self._wbuf:
            self.loop.remove_writer(self.fd)
            self._wbuf = b""
        now = clock()
        linger = max(self._last, now) + self.net.half - now if self.net.half else 0.0
        if linger > 0:
            _closing[self.sock] = now + linger
            self.loop.call_later(linger, _close, self.sock)
        else:
            self.sock.close()
        if self.on_close is not None:
            self.on_close(self.id)

    def close(self) -> None:
        """Close (pending calls, if any, end as 'closed' or 'truncated')."""
        if self.open:
            self._shut()
            self._fail_all(None)

    def expire(self, kind: str) -> None:
        """A timeout: what is outstanding ends as ``kind``, and the connection goes."""
        self._fail_all(kind)
        self.close()


#: sockets whose client has closed, whose FIN is still on its way: when it reaches the server
_closing: dict[socket.socket, float] = {}


def _close(sock: socket.socket) -> None:
    _closing.pop(sock, None)
    sock.close()


async def closes_sent(limit: float) -> None:
    """Wait until the FINs still on their way have reached the server (at most ``limit`` s),
    then close what is left: the run's end, so that no client's close is cut short."""
    if _closing:
        await asyncio.sleep(min(max(_closing.values()) - clock(), limit))
    for sock in list(_closing):
        _close(sock)


def _resolve(fut: asyncio.Future) -> None:
    if not fut.done():
        fut.set_result(None)


def answered(loop: asyncio.AbstractEventLoop, call: Call, fut: asyncio.Future,
             last: float) -> None:
    """``call``'s answer is complete, its last byte reaching the client at ``last``: its
    future resolves then (an error status is an ``http_Nxx`` error, unless the scenario asked
    for it: the logged server's answer)."""
    first = call.first_byte or 0.0
    call.last_byte = last = last if last > first else first    # never before its first byte
    if call.status >= 400 and call.status != call.asked:
        call.error = f"http_{call.status // 100}xx"
    if not fut.done():
        delay = last - clock()
        if delay > 0:
            loop.call_later(delay, _resolve, fut)
        else:
            fut.set_result(None)


def failed(call: Call, fut: asyncio.Future, kind: str | None) -> None:
    """Settle ``call`` unless it has an outcome: ``kind``, or truncated (some of the answer
    came) or closed (none came)."""
    if call.error is None:
        call.error = kind or ("truncated" if call.first_byte is not None else "closed")
        call.last_byte = clock()
    if not fut.done():
        fut.set_result(None)


def _error_kind(e: OSError) -> str:
    return "too_many_open_files" if e.errno == errno.EMFILE else "connect_error"


def _socket(net: ClientNet, source: str | None) -> socket.socket:
    """A client socket, set up before ``connect``: the window scale and the MSS are settled in
    the handshake; bound to ``source`` when the client has an address of its own."""
    try:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    except OSError as e:
        raise ConnectFailed(_error_kind(e)) from None
    try:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if net.rcvbuf is not None:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, net.rcvbuf)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG, PATH_MSS)
        if source is not None:
            bind_source(sock, source)
    except OSError as e:
        sock.close()
        raise ConnectFailed(_error_kind(e)) from None
    sock.setblocking(False)
    return sock


async def open_connection(conn_id: int, host: str, port: int, net: ClientNet,
                          timeout: float, idle_timeout: float | None,
                          source: str | None = None, tls: TlsLayer | None = None,
                          kind: type[Connection] = Connection) -> Connection:
    """Connect as over the client's link, from ``source`` (None: the kernel's choice): the real
    connect when the handshake's last ACK would reach the server, 1.5 round trips after the
    SYN left, which is when a server accepts (``timeout`` bounds it, and the TLS handshake if
    ``tls``: its first flight goes with that ACK). A ``kind`` connection whose ``opened`` is
    when the client could use it. Cancelled, it leaks no socket."""
    loop = asyncio.get_running_loop()
    sock = _socket(net, source)
    try:
        if net.half > 0:
            await asyncio.sleep(net.rtt + net.half)    # until the last ACK reaches the server
        try:
            async with asyncio.timeout(timeout):
                await loop.sock_connect(sock, (host, port))
        except TimeoutError:
            raise ConnectFailed("connect_timeout") from None
        except ConnectionRefusedError:
            raise ConnectFailed("refused") from None
        except OSError as e:
            raise ConnectFailed(_error_kind(e)) from None
        began = clock() - net.half             # the client's TCP handshake ended R/2 ago
        if tls is not None:
            await _handshake(sock, net, tls, timeout, kind)
        conn = kind(conn_id, net, loop, sock, idle_timeout, tls)
        conn.opened = began if tls is None else clock()
        if tls is not None:
            conn.tls_start = began
        return conn
    except BaseException:
        sock.close()
        raise


async def _handshake(sock: socket.socket, net: ClientNet, tls: TlsLayer, timeout: float,
                     kind: type[Connection]) -> None:
    """The TLS handshake of a new connection, within ``timeout``; ConnectFailed if it fails
    or ALPN chose a protocol ``kind`` does not speak."""
    try:
        async with asyncio.timeout(timeout):
            await tls.handshake(sock, net)
    except TimeoutError:
        raise ConnectFailed("connect_timeout") from None
    except TlsFailed as e:
        raise ConnectFailed(kind.ALPN_REFUSED if e.args[0] == "alpn" else e.args[0]) from None
    except ConnectionResetError:
        raise ConnectFailed("reset") from None
    except OSError:
        raise ConnectFailed("tls_error") from None
    if not kind.accepts(tls.alpn):
        raise ConnectFailed(kind.ALPN_REFUSED)
