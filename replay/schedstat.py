"""How long the event loop's thread waited for a CPU: the kernel's run-queue wait (Linux's
``/proc/thread-self/schedstat``, its second field).

A stall of the event loop that its own code did not fill was either time the thread was ready
to run while other processes had the CPU — the run-queue wait counts it — or time it was
blocked in the kernel (a disk write held back, a page read back from swap, a stop signal). The
wait tells the two apart by measurement; the load average cannot (it counts both, and every
other process)."""
from __future__ import annotations

import os

__all__ = ["RunQueueWait"]


class RunQueueWait:
    """Seconds the thread that made it has waited on a run queue so far; None where the
    kernel does not say (not Linux; a kernel keeping no scheduling statistics writes "0 0 0",
    and a thread that runs has run for more than 0 ns)."""

    def __init__(self) -> None:
        try:
            self.fd: int | None = os.open("/proc/thread-self/schedstat", os.O_RDONLY)
        except OSError:
            self.fd = None
        if self() is None:
            self.close()

    def __call__(self) -> float | None:
        if self.fd is None:
            return None
        try:
            ran, waited = os.pread(self.fd, 128, 0).split()[:2]
            return int(waited) / 1e9 if int(ran) else None
        except (OSError, ValueError):
            return None

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None
