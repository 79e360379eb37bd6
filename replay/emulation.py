"""Per-client network emulation inside the client: propagation delay and access-link bandwidth.

Model (docs/replay.md): every exchange with the server costs one round trip — one RTT after the
TCP connection is set up (the handshake), one RTT before each request or pipelined batch of
requests (request out, response back). Bandwidth is a token bucket per client, shared by all its
connections: downloads are paced by pausing the socket's reads (with a small receive buffer, so
the server's writes really block and it holds the connection as long as with a slow client);
uploads by delaying the request's write. There is no packet loss or TCP congestion dynamics:
in-process emulation cannot reproduce them (``tc netem`` would, and is not available here).
"""
from __future__ import annotations

from ..formats.classes import Network
from .events import clock

__all__ = ["TokenBucket", "ClientNet", "RCVBUF_MIN"]

RCVBUF_MIN = 4096


class TokenBucket:
    """``rate`` bytes/s with a burst of ``burst`` bytes; may go negative (a debt to wait out)."""

    __slots__ = ("rate", "burst", "tokens", "stamp")

    def __init__(self, rate: float, burst: float) -> None:
        self.rate, self.burst = rate, burst
        self.tokens = burst
        self.stamp = clock()

    def _refill(self) -> None:
        now = clock()
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now

    def take(self, n: int) -> float:
        """Spend ``n`` bytes; returns how long (s) until the bucket is out of debt (0 if none)."""
        self._refill()
        self.tokens -= n
        return -self.tokens / self.rate if self.tokens < 0 else 0.0


class ClientNet:
    """One emulated client's link; ``None`` buckets when emulation is off or the link is a LAN."""

    __slots__ = ("rtt", "down", "up", "rcvbuf")

    def __init__(self, net: Network | None) -> None:
        if net is None:
            self.rtt, self.down, self.up, self.rcvbuf = 0.0, None, None, None
            return
        self.rtt = net.rtt_ms / 1000.0
        down, up = net.down_kbps * 125.0, net.up_kbps * 125.0          # kbit/s → bytes/s
        slow = net.down_kbps < 100_000
        # a burst of 10 ms of traffic (at least one segment): smooth, yet few timer wake-ups
        self.down = TokenBucket(down, max(1460.0, down * 0.01)) if slow else None
        self.up = TokenBucket(up, max(1460.0, up * 0.01)) if net.up_kbps < 100_000 else None
        # a receive window of about a bandwidth-delay product (≥ 4 KiB) keeps the server's
        # writes blocked instead of letting the kernel swallow the whole response
        self.rcvbuf = int(max(RCVBUF_MIN, down * max(self.rtt, 0.01))) if slow else None

    def exchange_delay(self, request_bytes: int) -> float:
        """Seconds before a request goes out: one round trip and its upload time."""
        wait = self.rtt
        if self.up is not None:        # serialisation time, or the debt of earlier uploads
            wait += max(self.up.take(request_bytes), request_bytes / self.up.rate)
        return wait
