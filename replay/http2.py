"""HTTP/2 client connections: the ``h2`` protocol library's state machine on the core's socket
(or its compiled-HPACK fork ``jh2`` when installed: ``replay.h2lib``).

One ``H2Connection`` is one TCP connection (over TLS with ALPN ``h2``, or h2c with prior
knowledge on plain text) carrying concurrent streams, one per request. It shares the HTTP/1.x
connection's socket, kernel timestamps, link pacing and timeouts (``replay.http.Connection``)
and the same events; framing, HPACK and flow control are h2's. As a browser's:

- requests beyond the stream limit (the browser's, and the server's MAX_CONCURRENT_STREAMS) wait
  for a stream to end, and leave one round trip after it ended (its end reaches the client, the
  next request the server);
- flow control: windows of 6 MiB per stream and 15 MiB per connection, as Chrome announces,
  re-opened (WINDOW_UPDATE) as data arrives; server push is refused (SETTINGS_ENABLE_PUSH 0);
- a stream the server resets ends as ``reset`` (``closed`` when refused, REFUSED_STREAM: it was
  not processed); on GOAWAY the streams above its last stream id end as ``closed`` (not
  processed: the browser sends them once more on a new connection), the others run to their
  end and the connection takes no new request;
- a frame that breaks the protocol ends every stream as ``bad_response``.
"""
from __future__ import annotations

import asyncio
import socket
from collections import deque

from .emulation import ClientNet
from .events import Call, clock
from .h2lib import (ConnectionTerminated, DataReceived, ErrorCodes, GoAwayFrame, H2Configuration,
                    H2Error, H2State, RemoteSettingsChanged, ResponseReceived, SettingCodes,
                    Settings, StreamEnded, StreamReset)
from .http import Connection, answered, failed
from .tls import TlsLayer

__all__ = ["H2Connection", "STREAM_WINDOW", "CONNECTION_WINDOW", "client_state",
           "prior_knowledge_refused", "h2c_get"]

STREAM_WINDOW = 6 * 1024 * 1024            # Chrome's SETTINGS_INITIAL_WINDOW_SIZE
CONNECTION_WINDOW = 15 * 1024 * 1024       # Chrome's connection window
DEFAULT_WINDOW = 65_535                    # every window's size before it is changed

Headers = list[tuple[bytes, bytes]]
#: a client's; the request headers are ours (lower case, valid) and the answers' are read, not
#: policed: h2's header validation and normalisation took 12 % of the engine's CPU (cProfile)
CONFIG = H2Configuration(client_side=True, header_encoding=None, validate_outbound_headers=False,
                         normalize_outbound_headers=False, validate_inbound_headers=False,
                         normalize_inbound_headers=False)


class _Draining(H2State):
    """h2's state machine, which on GOAWAY refuses every later frame (python-hyper/h2#1181),
    where RFC 9113 §6.8 lets the streams up to the last stream id run to their end (nginx sends
    GOAWAY, then the answers of those it took): the event is reported, the connection stays
    open for them, and ``H2Connection`` opens no new stream on it."""

    def _receive_goaway_frame(self, frame: GoAwayFrame) -> tuple[list, list]:
        event = ConnectionTerminated()
        event.error_code = _error_code(frame.error_code)
        event.last_stream_id = frame.last_stream_id
        event.additional_data = frame.additional_data or None
        return [], [event]


def client_state() -> H2State:
    """A browser's HTTP/2 state machine, its preface (settings, connection window) to send."""
    h2 = _Draining(CONFIG)
    # settings in force from the start (``update`` would leave them pending until the server's
    # ACK, while the first SETTINGS frame carries the old ones)
    h2.local_settings = Settings(client=True, initial_values={
        SettingCodes.MAX_CONCURRENT_STREAMS: 100, SettingCodes.ENABLE_PUSH: 0,
        SettingCodes.INITIAL_WINDOW_SIZE: STREAM_WINDOW,
        SettingCodes.MAX_HEADER_LIST_SIZE: H2State.DEFAULT_MAX_HEADER_LIST_SIZE})
    h2.initiate_connection()
    h2.increment_flow_control_window(CONNECTION_WINDOW - DEFAULT_WINDOW)
    return h2


def prior_knowledge_refused(sock: socket.socket) -> str | None:
    """Why the server on connected ``sock`` does not speak HTTP/2 without TLS (h2c with prior
    knowledge): what it did with the preface; None when its SETTINGS came. (A request behind
    the preface would not tell: nginx answers the preface 400 and closes with the request
    unread, a reset that loses the answer.)"""
    h2 = client_state()
    sock.sendall(h2.data_to_send())
    got = b""
    while len(got) < 1 << 16:
        data = sock.recv(1 << 16)
        if not data:
            break
        got += data
        if got.startswith(b"HTTP/") and b"\r\n" in got:
            break                                   # HTTP/1.x's status line, kept open or not
        try:
            events = h2.receive_data(data)
        except H2Error:
            break
        for e in events:
            if isinstance(e, RemoteSettingsChanged):
                return None
            if isinstance(e, ConnectionTerminated):
                code = _error_code(e.error_code)
                return f"it ended the connection at once (GOAWAY, {getattr(code, 'name', code)})"
    return _answer(got)


def _answer(got: bytes) -> str:
    """What a server answered to HTTP/2's preface, said in a few words: its HTTP/1.x status
    line, TLS (a record's header: alert or handshake, version 3.x), or its first bytes."""
    if not got:
        return "it closed the connection"
    if got.startswith(b"HTTP/"):
        line = got.split(b"\r\n", 1)[0][:80].decode("latin-1")
        return f"it answered {line!r}"
    if got[:1] in (b"\x15", b"\x16") and got[1:2] == b"\x03":
        return "it answered in TLS (an https:// server)"
    return f"it answered {len(got):,} bytes of neither HTTP/1.x nor HTTP/2 ({got[:8].hex(' ')} ...)"


def h2c_get(host: str, port: int, path: str, timeout: float) -> bytes:
    """The body of one GET of ``path`` over HTTP/2 in plain text (prior knowledge), blocking
    (a server's status page on a port that speaks nothing else); OSError when it does not
    come."""
    h2 = client_state()
    h2.send_headers(1, [(b":method", b"GET"), (b":scheme", b"http"),
                        (b":authority", f"{host}:{port}".encode()), (b":path", path.encode())],
                    end_stream=True)
    body = bytearray()
    with socket.create_connection((host, port), timeout=timeout) as sock:
        while True:
            sock.sendall(h2.data_to_send())
            data = sock.recv(1 << 16)
            if not data:
                raise ConnectionResetError(f"{host}:{port} closed before the answer")
            try:
                events = h2.receive_data(data)
            except H2Error as e:
                raise ConnectionError(f"{host}:{port}: not HTTP/2 ({e})") from None
            for e in events:
                if isinstance(e, DataReceived) and e.stream_id == 1:
                    body += e.data
                elif isinstance(e, StreamEnded) and e.stream_id == 1:
                    return bytes(body)
                elif isinstance(e, (StreamReset, ConnectionTerminated)):
                    raise ConnectionResetError(f"{host}:{port} reset the request")


def _error_code(code: int) -> ErrorCodes | int:
    try:
        return ErrorCodes(code)
    except ValueError:
        return code


class H2Connection(Connection):
    """One HTTP/2 connection: ``send`` opens a stream per request, a future resolves per
    response (when its last byte has reached the emulated client)."""

    ALPN = ("h2",)
    ALPN_REFUSED = "no_h2"

    @classmethod
    def accepts(cls, alpn: str | None) -> bool:
        """HTTP/2 over TLS only where the server chose it in ALPN (RFC 9113, section 3.2): a
        server that chose nothing speaks HTTP/1.x, as the pre-flight says."""
        return alpn in cls.ALPN

    def __init__(self, conn_id: int, net: ClientNet, loop: asyncio.AbstractEventLoop,
                 sock: socket.socket, idle_timeout: float | None,
                 tls: TlsLayer | None = None) -> None:
        super().__init__(conn_id, net, loop, sock, idle_timeout, tls)
        self.pending: dict[int, tuple[Call, asyncio.Future]] = {}     # stream id → request
        self.waiting: deque[tuple[Call, Headers, asyncio.Future]] = deque()  # for a stream
        self.limit = 100                   # the browser's concurrent streams (set by it)
        self.draining = False              # GOAWAY came: no new stream
        self._flush_due = False            # a write is due at the end of this loop turn
        self.h2 = client_state()           # the preface leaves with the first request

    # ---- requests ----------------------------------------------------------------------------
    def send(self, calls: list[Call], requests: list[Headers]) -> list[asyncio.Future]:
        """A stream per request of ``calls`` (``requests``: their header lists), now or when
        a stream is free."""
        futures = []
        for call, headers in zip(calls, requests):
            call.conn, call.reused = self.id, self.used > 0
            fut = self.loop.create_future()
            self.waiting.append((call, headers, fut))
            futures.append(fut)
            self.used += 1
        self._active = clock()
        self._start()
        self._arm()
        return futures

    def _start(self) -> None:
        """Open streams for the waiting requests while the limits allow."""
        if not self.open:
            return
        room = min(self.limit, self.h2.remote_settings.max_concurrent_streams)
        while self.waiting and len(self.pending) < room:
            call, headers, fut = self.waiting.popleft()
            sid = self.h2.get_next_available_stream_id()
            self.h2.send_headers(sid, headers, end_stream=not call.body)
            if call.body:            # a script's (within the stream's first window: 64 KiB)
                step = self.h2.max_outbound_frame_size
                for at in range(0, len(call.body), step):
                    self.h2.send_data(sid, call.body[at:at + step],
                                      end_stream=at + step >= len(call.body))
            self.pending[sid] = (call, fut)
        self._flush()

    def _flush(self) -> None:
        """Write what h2 has to send at the end of this turn of the event loop: the streams
        opened in one turn (a page's objects) leave in one write, not a system call and a TLS
        record each (protocols_bench part 2: 6,100 writes for 30,000 requests, not 30,100)."""
        if not self._flush_due:
            self._flush_due = True
            self.loop.call_soon(self._flush_now)

    def _flush_now(self) -> None:
        self._flush_due = False
        data = self.h2.data_to_send() if self.open else b""
        if data:
            self._write(data)

    # ---- answers -----------------------------------------------------------------------------
    def _feed(self, data: bytes) -> None:
        try:
            events = self.h2.receive_data(data)
        except H2Error:
            self._fail_all("bad_response")
            self.close()
            return
        for ev in events:
            if isinstance(ev, ResponseReceived):
                self._headers(ev.stream_id, ev.headers)
            elif isinstance(ev, DataReceived):
                self.h2.acknowledge_received_data(ev.flow_controlled_length, ev.stream_id)
                got = self.pending.get(ev.stream_id)
                if got is not None:
                    got[0].bytes += len(ev.data)
                    if got[0].answer is not None:
                        got[0].answer.add_body(ev.data)
            elif isinstance(ev, StreamEnded):
                self._ended(ev.stream_id, None)
            elif isinstance(ev, StreamReset):
                self._ended(ev.stream_id, "closed" if ev.error_code ==
                            ErrorCodes.REFUSED_STREAM else "reset")
            elif isinstance(ev, ConnectionTerminated):
                self._goaway(ev.last_stream_id)
            elif isinstance(ev, RemoteSettingsChanged):
                self._start()
        if self.open:
            self._flush()

    def _headers(self, sid: int, headers: Headers) -> None:
        got = self.pending.get(sid)
        if got is None:
            return
        call = got[0]
        call.first_byte = max(self._first, call.start or 0.0)
        for name, value in headers:
            if call.answer is not None and not name.startswith(b":"):
                call.answer.add_header(name, value)
            if name == b":status":
                call.status = int(value)
                if call.answer is not None:
                    call.answer.status = call.status
            elif name == b"location":
                call.location = value
            elif name == b"set-cookie":
                call.set_cookie = (call.set_cookie or []) + [value]

    def _ended(self, sid: int, error: str | None) -> None:
        """Stream ``sid`` ended: complete, or with ``error``; a freed stream takes the next
        waiting request one round trip later."""
        got = self.pending.pop(sid, None)
        if got is None:
            return
        call, fut = got
        if error is None:
            answered(self.loop, call, fut, self._last)
        else:
            failed(call, fut, error)
        if self.waiting:
            if self.net.rtt > 0:
                self.loop.call_later(self.net.rtt, self._start)
            else:
                self._start()
        elif not self.pending and self.draining:
            self.close()

    def _goaway(self, last_stream_id: int | None) -> None:
        """The server goes away: streams it did not process, and the waiting requests, end as
        ``closed``; the connection closes once the others have ended."""
        self.draining = True
        self.accepting = False
        last = last_stream_id if last_stream_id is not None else 0
        for sid in [s for s in self.pending if s > last]:
            failed(*self.pending.pop(sid), "closed")
        while self.waiting:
            call, _, fut = self.waiting.popleft()
            failed(call, fut, "closed")
        if not self.pending:
            self.close()

    # ---- ending ------------------------------------------------------------------------------
    def give_up(self, calls: list[Call], kind: str) -> None:
        """``calls`` took too long: their streams are cancelled (RST_STREAM), the others go
        on."""
        gone = set(calls)
        for sid in [s for s, (c, _) in self.pending.items() if c in gone]:
            failed(*self.pending.pop(sid), kind)
            if self.open:
                self.h2.reset_stream(sid, ErrorCodes.CANCEL)
        for item in [w for w in self.waiting if w[0] in gone]:
            self.waiting.remove(item)
            failed(item[0], item[2], kind)
        if self.open:
            self._flush()
            if self.waiting:
                self._start()

    def _fail_all(self, kind: str | None) -> None:
        for call, fut in self.pending.values():
            failed(call, fut, kind)
        self.pending.clear()
        while self.waiting:
            call, _, fut = self.waiting.popleft()
            failed(call, fut, kind)

    def close(self) -> None:
        """Close, saying so first (GOAWAY), as a browser does."""
        if self.open and self.used:
            try:
                self.h2.close_connection()
            except H2Error:
                pass                       # the state machine is past saying goodbye
            self._flush_now()
        super().close()
