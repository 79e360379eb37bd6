"""TLS for the replay's connections: Python's ``ssl`` over memory buffers, the handshake's
round trips emulated on the client's path.

The connection keeps its own non-blocking socket (its kernel receive timestamps and paced reads
stay as for plain HTTP); an ``ssl.SSLObject`` between two ``MemoryBIO`` buffers encrypts what it
writes and decrypts what it reads. The handshake is driven here, one flight at a time: each
flight the client sends waits half a round trip before it is written, and each flight of the
server reaches the client half a round trip after it was read. A full TLS 1.3 handshake costs
one round trip, a full TLS 1.2 handshake two, a resumed TLS 1.2 handshake one (TLS 1.3 resumes in
one as well: ``ssl`` offers no 0-RTT early data). The client's last flight (its Finished) leaves
with the first request, as browsers send it.

Verification is on by default (the system's CA store, or ``--ca-file``); ``--insecure``
accepts any certificate (curl ``-k``). SNI and the certificate's expected name are the target's
host name; the Host header (HTTP/1.x) or ``:authority`` (HTTP/2) is the target's too.
"""
from __future__ import annotations

import asyncio
import socket
import ssl
from dataclasses import dataclass, field

from .emulation import ClientNet

__all__ = ["TlsConfig", "TlsLayer", "TlsFailed", "TLS_VERSIONS"]

READ_SIZE = 1 << 16
TLS_VERSIONS = {"1.2": ssl.TLSVersion.TLSv1_2, "1.3": ssl.TLSVersion.TLSv1_3}


class TlsFailed(Exception):
    """The handshake failed: its error kind (``tls_error``, ``tls_verify``, or ``alpn``: the
    server speaks none of the protocols offered) and why."""


@dataclass
class TlsConfig:
    """How a replay speaks TLS: verification (``ca_file``; ``insecure``: none), the highest
    version offered (None: TLS 1.3), and the server name sent in SNI and checked."""

    server_name: str
    ca_file: str | None = None
    insecure: bool = False
    max_version: str | None = None
    _contexts: dict[tuple[str, ...], ssl.SSLContext] = field(default_factory=dict, repr=False)

    def context(self, alpn: tuple[str, ...]) -> ssl.SSLContext:
        """The client context offering ``alpn`` (one per ALPN list, shared by connections:
        contexts are costly to build and hold the session cache)."""
        ctx = self._contexts.get(alpn)
        if ctx is None:
            if self.insecure:           # no verification: no certificate store to load (the
                ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)   # system's costs 50-150 ms)
                ctx.check_hostname = False
                ctx.verify_mode = ssl.CERT_NONE
            else:
                ctx = ssl.create_default_context(cafile=self.ca_file)
            ctx.minimum_version = ssl.TLSVersion.TLSv1_2
            if self.max_version is not None:
                ctx.maximum_version = TLS_VERSIONS[self.max_version]
            ctx.set_alpn_protocols(list(alpn))
            self._contexts[alpn] = ctx
        return ctx


class TlsLayer:
    """One connection's TLS state: encrypt what is written, decrypt what is read."""

    __slots__ = ("obj", "incoming", "outgoing", "rounds", "kept")

    def __init__(self, ctx: ssl.SSLContext, server_name: str,
                 session: ssl.SSLSession | None) -> None:
        self.incoming, self.outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
        self.obj = ctx.wrap_bio(self.incoming, self.outgoing, server_hostname=server_name,
                                session=session)
        self.rounds = 0                 # the handshake's round trips
        self.kept = False               # its session was handed on (``resumable``)

    @property
    def alpn(self) -> str | None:
        return self.obj.selected_alpn_protocol()

    def resumable(self) -> ssl.SSLSession | None:
        """The session later connections may resume, the first time it is ready (TLS 1.3:
        once its ticket came, after the handshake); None before and after (reading it
        serialises it: 0.1 ms)."""
        if self.kept:
            return None
        session = self.obj.session
        if session is None or not (session.has_ticket or self.obj.version() == "TLSv1.2"):
            return None
        self.kept = True
        return session

    @property
    def resumed(self) -> bool:
        return self.obj.session_reused

    @property
    def version(self) -> str | None:
        return self.obj.version()

    async def handshake(self, sock: socket.socket, net: ClientNet) -> None:
        """Run the handshake on ``sock`` (connected, non-blocking), as over the client's path.
        The client's final flight is left in ``outgoing``: it goes with the first request."""
        loop = asyncio.get_running_loop()
        answered = False                       # a server flight was read since the last write
        while True:
            try:
                self.obj.do_handshake()
                done = True
            except ssl.SSLWantReadError:
                done = False
            except ssl.SSLCertVerificationError as e:
                raise TlsFailed("tls_verify", e.verify_message) from None
            except ssl.SSLError as e:
                raise TlsFailed("alpn" if _alpn_refused(e) else "tls_error",
                                e.reason or str(e)) from None
            progressed = done or self.outgoing.pending
            if answered and progressed and net.half > 0:
                await asyncio.sleep(net.half)  # the server's flight travels back
            answered = answered and not progressed
            if done:
                return
            if self.outgoing.pending:
                if net.half > 0 and self.rounds:    # the first flight went with the TCP
                    await asyncio.sleep(net.half)   # handshake's last ACK (the connect waited)
                await loop.sock_sendall(sock, self.outgoing.read())
                self.rounds += 1
            data = await loop.sock_recv(sock, READ_SIZE)
            if not data:
                raise TlsFailed("tls_error", "the server closed during the handshake")
            self.incoming.write(data)
            answered = True

    def encrypt(self, data: bytes) -> bytes:
        """``data`` as TLS records (after what the handshake left to send)."""
        if data:
            self.obj.write(data)
        return self.outgoing.read()

    def decrypt(self, data: bytes) -> tuple[bytes, bool]:
        """The plain text in the records ``data`` completes, and whether the server closed
        TLS (close_notify). ssl.SSLError for a record that does not decrypt. Read while
        records are left to read (not until OpenSSL says it wants more, whose exception
        cost more than the record's decryption)."""
        self.incoming.write(data)
        out = []
        closed = False
        while self.incoming.pending or self.obj.pending():
            try:
                chunk = self.obj.read(READ_SIZE)
            except ssl.SSLWantReadError:
                break
            except ssl.SSLZeroReturnError:
                closed = True
                break
            if not chunk:
                break
            out.append(chunk)
        return b"".join(out), closed


def _alpn_refused(e: ssl.SSLError) -> bool:
    """Did the server end the handshake for want of a protocol it speaks among those offered
    (its no_application_protocol alert)?"""
    return "NO_APPLICATION_PROTOCOL" in str(e).upper().replace(" ", "_")


def check_handshake(sock: socket.socket, config: TlsConfig, http2: bool = False) -> None:
    """A blocking handshake on connected ``sock`` (the pre-flight check), offering what the
    run's browsers offer: ``http2``, HTTP/2 alone, which the server must choose. TlsFailed
    with a one-line reason when it fails."""
    no_h2 = "the server does not choose HTTP/2 (h2) in ALPN: give an HTTP/1.x protocol"
    try:
        with config.context(("h2",) if http2 else ("http/1.1",)).wrap_socket(
                sock, server_hostname=config.server_name) as tls:
            chosen = tls.selected_alpn_protocol()
    except ssl.SSLCertVerificationError as e:
        raise TlsFailed("tls_verify", f"the certificate does not verify ({e.verify_message}): "
                        "give --ca-file, or --insecure") from None
    except ssl.SSLError as e:
        if http2 and _alpn_refused(e):
            raise TlsFailed("alpn", no_h2) from None
        raise TlsFailed("tls_error", f"the TLS handshake failed ({e.reason or e})") from None
    if http2 and chosen != "h2":
        raise TlsFailed("alpn", no_h2)
