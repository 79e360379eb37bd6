"""Per-client network emulation inside the client: propagation delay and access-link bandwidth.

Model (docs/replay.md): each direction costs half the round-trip time. The real ``connect``
happens 1.5 RTT after the SYN would have left — when the handshake's last ACK reaches the
server, which accepts then — and the client counts its connect as one RTT; the first request
follows at once (after its upload time), as it leaves with that ACK, so the server never waits
idle after accepting. A later request is written half an RTT (plus its upload time) after the
client issues it; response bytes are stamped half an RTT after they are read, and the client's
close (its FIN) leaves half an RTT after the last byte reached the emulated client. So a new
connection's first response byte reaches the client at 2 RTT + upload + service, and a server
that waits for the client's FIN (Apache's lingering close) waits one RTT for it.

Bandwidth is a FIFO link per direction and client, shared by all its connections: each chunk
read is stamped with the time its last byte would be through the link, and reading pauses while
the link is more than READ_AHEAD behind. What makes the pacing reach the server is the socket
itself, set up before ``connect`` (the window and the MSS are settled in the handshake): a small
receive buffer keeps the advertised window at a few segments (4 ms of the link's traffic, at
least 4 KiB), and TCP_MAXSEG makes the server send a real path's 1460-byte segments instead of
loopback's 64 KB. The server's send buffer, which Linux sizes from the MSS and its congestion
window, then stays at 0.25–1.2 MB instead of growing to 4 MB, and the server holds the connection
until all but that much has reached the client (as over a real path, where it grows likewise).
Uploads are paced by delaying the request's write. There is no packet loss and no congestion
dynamics on the emulated path (in-process emulation cannot produce them).
"""
from __future__ import annotations

from ..formats.classes import Network
from .events import clock

__all__ = ["Link", "ClientNet", "RCVBUF", "WINDOW_S", "PATH_MSS", "PACED_BELOW_KBPS", "READ_AHEAD"]

RCVBUF = 4096             # SO_RCVBUF of a paced client at least: a window of 1–2 segments,
WINDOW_S = 0.004          # or this long at the link's rate (the server refills it in time)
PATH_MSS = 1460           # TCP_MAXSEG of a paced client: an Ethernet path's MSS
PACED_BELOW_KBPS = 100_000  # links at least this fast are not paced (loopback is faster anyway)
READ_AHEAD = 0.002        # reads may run this far ahead of the emulated link


class Link:
    """One direction of a client's access link, ``rate`` bytes/s, first in first out: when the
    last byte of each chunk put on it is through. Shared by all the client's connections."""

    __slots__ = ("rate", "free")

    def __init__(self, rate: float) -> None:
        self.rate = rate
        self.free = 0.0                  # when the link has sent everything put on it so far

    def put(self, n: int, now: float) -> tuple[float, float]:
        """``n`` bytes ready at ``now``: when their first and last bytes are through."""
        first = max(self.free, now)
        self.free = first + n / self.rate
        return first, self.free


def _link(kbps: float) -> Link | None:
    """A link slower than PACED_BELOW_KBPS (faster ones are not paced)."""
    return Link(kbps * 125.0) if kbps < PACED_BELOW_KBPS else None        # kbit/s → bytes/s


class ClientNet:
    """One emulated client's link; no pacing when emulation is off or the link is fast."""

    __slots__ = ("rtt", "half", "down", "up", "rcvbuf", "delays")

    def __init__(self, net: Network | None) -> None:
        self.rtt = 0.0 if net is None else net.rtt_ms / 1000.0
        self.half = self.rtt / 2
        self.down = None if net is None else _link(net.down_kbps)
        self.up = None if net is None else _link(net.up_kbps)
        #: SO_RCVBUF for a paced download (None: the kernel's default)
        self.rcvbuf = None if self.down is None else int(max(RCVBUF, self.down.rate * WINDOW_S))
        #: does a request wait before it is written (``send_delay`` is 0 otherwise)?
        self.delays = self.half > 0 or self.up is not None

    def send_delay(self, request_bytes: int, fresh: bool = False) -> float:
        """Seconds from issuing a request to writing it: its upload (after what the link is
        still sending) and half a round trip; on a ``fresh`` connection the half is already
        spent (the connect waited for the handshake's last ACK to reach the server, and the
        request travels right behind it)."""
        half = 0.0 if fresh else self.half
        if self.up is None:
            return half
        now = clock()
        return self.up.put(request_bytes, now)[1] - now + half
