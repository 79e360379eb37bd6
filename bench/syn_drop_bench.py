"""What a SYN dropped at a full listen queue costs this machine's kernel, against the 325 µs
Banga & Druschel (1999) measured on theirs, and how fast one process can send such SYNs.
``python bench/syn_drop_bench.py``.

A listener on loopback whose accept queue one connection fills; N non-blocking connects to it
(each SYN built, looped back, dropped: TcpExt ListenDrops counts each) against N sockets opened
and closed without a connect (the baseline). On loopback the receiving side runs in the
sender's system call, so the machine's busy CPU (``/proc/stat``, every core) over each loop is
the whole cost; the difference per connect is the SYN's (built, sent, received, dropped): an
upper bound of the server's share. Best of five interleaved rounds.

Their server lost 130 − 75 = 55 of its 130 transactions/s at 2,065 SYNs/s: a CPU-bound server
gives up the share R·s of its CPU to SYNs arriving at rate R and costing s each; the rate of
SYNs that would cost it that share here is 0.42 / s.
"""
from __future__ import annotations

import socket
import time

from wagon.experiment.status import listen_drops, machine_cpu

N = 100_000
#: Banga & Druschel's measured slope (s of CPU per SYN dropped) and their decline's share
PAPER_S, PAPER_SHARE = 325e-6, (130 - 75) / 130


def busy_per_iteration(port: int | None) -> tuple[float, float]:
    """Busy CPU-seconds of the machine and wall seconds per iteration: a socket opened, a
    connect to ``port`` (None: none) and closed."""
    cpu0, t0 = machine_cpu()[0], time.monotonic()
    for _ in range(N):
        s = socket.socket()
        if port is not None:
            s.setblocking(False)
            s.connect_ex(("127.0.0.1", port))
        s.close()
    return (machine_cpu()[0] - cpu0) / N, (time.monotonic() - t0) / N


def main() -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(0)
        port = listener.getsockname()[1]
        first = socket.create_connection(("127.0.0.1", port))
        drops0 = listen_drops()
        rounds = [(busy_per_iteration(port), busy_per_iteration(None)) for _ in range(5)]
        dropped = listen_drops() - drops0
        first.close()
    connect, alone = min(a[0] for a, _ in rounds), min(b[0] for _, b in rounds)
    syn, rate = connect - alone, 1 / min(a[1] for a, _ in rounds)
    print(f"SYNs dropped (kernel's ListenDrops): {dropped:,} of {5 * N:,} connects")
    print(f"CPU per connect {connect * 1e6:.2f} µs, per socket alone "
          f"{alone * 1e6:.2f} µs: a dropped SYN costs at most "
          f"{syn * 1e6:.2f} µs ({PAPER_S / syn:,.0f}x less than the paper's 325 µs)")
    print(f"one process sends at most {rate:,.0f} SYNs/s; the paper's decline "
          f"({PAPER_SHARE:.0%} of a CPU-bound server) would need {PAPER_SHARE / syn:,.0f} "
          f"SYNs/s here ({PAPER_SHARE / PAPER_S:,.0f}/s there)")


if __name__ == "__main__":
    main()
