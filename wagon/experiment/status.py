"""The server's own status sampled during a run: a background thread reads ``status()`` (a
``servers.Running``'s) every ``every`` seconds, keeps the samples in memory, summarises them
(per field mean and maximum, the utilisation of the server's capacity) and writes them as CSV.
"""
from __future__ import annotations

import csv
import math
import os
import statistics
import threading
import time
from pathlib import Path
from typing import Collection, Protocol

from ..formats.atomic import atomic_write

__all__ = ["StatusSampler", "COUNTERS", "TCP_STATES", "busy", "established", "listen_drops",
           "machine_cpu", "tcp_states"]

#: fields that count since the server started (summarised by their increase over the samples);
#: the kernel's: SYNs its listen queues dropped, the machine's busy and total CPU-seconds
COUNTERS = frozenset(("accesses", "accepts", "handled", "requests", "listen_drops",
                      "cpu_busy_s", "cpu_s"))
#: clock ticks a second of /proc/stat's CPU times
TICK = os.sysconf("SC_CLK_TCK")


class HasStatus(Protocol):
    """What is sampled: a ``servers.Running``, or anything with its ``status()``."""

    def status(self) -> dict[str, float]: ...


def busy(sample: dict[str, float]) -> float | None:
    """Connections that hold the server's capacity in a sample: Apache's busy workers; nginx's
    connections being read or written (its waiting keep-alive ones hold no worker)."""
    if "busy" in sample:
        return sample["busy"]
    if "reading" in sample and "writing" in sample:
        return sample["reading"] + sample["writing"]
    return None


#: the TCP states the kernel lists (/proc/net/tcp's hex codes) that a server's connection
#: passes through once accepted: established, then closing from either side — Apache's
#: lingering close and a closed keep-alive connection still hold a socket (Banga & Druschel
#: counted them); LISTEN and the handshake's states are not connections yet
TCP_STATES = {"01": "established", "04": "fin_wait1", "05": "fin_wait2", "06": "time_wait",
              "08": "close_wait", "09": "last_ack", "0B": "closing"}


def tcp_states(port: int, pid: int | str = "self",
               exclude: Collection[int] = ()) -> dict[str, int]:
    """Connections of local ``port`` now, per state (``TCP_STATES``, every one present, 0 when
    none), as the kernel lists them in process ``pid``'s network namespace (the server's: a
    packet-path replay runs this process in another; /proc/PID/net/tcp and tcp6). Established
    ones are accepted by the server or still in its listen backlog — what a saturated Apache's
    own status page cannot say, its status request waiting in that backlog like any other.
    ``exclude``: remote ports whose connections are not counted (the status requests')."""
    suffix, skip = f":{port:04X}", {f":{p:04X}" for p in exclude}
    out = dict.fromkeys(TCP_STATES.values(), 0)
    for table in (f"/proc/{pid}/net/tcp", f"/proc/{pid}/net/tcp6"):
        try:
            with open(table) as f:
                next(f, None)
                for line in f:
                    cols = line.split(None, 4)
                    if cols[1].endswith(suffix) and cols[3] in TCP_STATES \
                            and cols[2][-5:] not in skip:
                        out[TCP_STATES[cols[3]]] += 1
        except OSError:
            continue
    return out


def established(port: int, pid: int | str = "self") -> int:
    """TCP connections established to local ``port`` now (``tcp_states``)."""
    return tcp_states(port, pid)["established"]


def listen_drops(pid: int | str = "self") -> int | None:
    """SYNs and handshakes the listen sockets of process ``pid``'s network namespace dropped
    since it was made (TcpExt ListenDrops: a full accept queue's, Banga & Druschel's "dropped
    at the full listen socket"; every listener of the namespace counts); None unreadable."""
    try:
        with open(f"/proc/{pid}/net/netstat") as f:
            lines = f.read().splitlines()
    except OSError:
        return None
    for names, values in zip(lines[::2], lines[1::2]):
        if names.startswith("TcpExt:"):
            fields = dict(zip(names.split()[1:], values.split()[1:]))
            return int(fields["ListenDrops"]) if "ListenDrops" in fields else None
    return None


def machine_cpu() -> tuple[float, float]:
    """The machine's CPU-seconds since boot, busy (neither idle nor waiting on I/O) and in all,
    over every core (/proc/stat's first line): whether the CPU was the limit of a run."""
    with open("/proc/stat") as f:
        ticks = [int(v) for v in f.readline().split()[1:9]]
    return (sum(ticks) - ticks[3] - ticks[4]) / TICK, sum(ticks) / TICK


def _kernel(port: int, pid: int | str, exclude: Collection[int]) -> dict[str, float]:
    """A sample's kernel fields: ``tcp_STATE`` per state and ``connections``, their sum; the
    namespace's ``listen_drops`` and the machine's ``cpu_busy_s`` and ``cpu_s``."""
    states = tcp_states(port, pid, set(exclude))
    busy_s, all_s = machine_cpu()
    drops = listen_drops(pid)
    return {"connections": sum(states.values()), **{f"tcp_{k}": v for k, v in states.items()},
            **({} if drops is None else {"listen_drops": drops}),
            "cpu_busy_s": busy_s, "cpu_s": all_s}


class StatusSampler:
    """``running.status()`` every ``every`` seconds from ``start()`` to ``stop()`` (or as a
    context manager), in a thread of its own. ``samples``: (time.monotonic(), fields) pairs;
    a status that could not be read counts in ``failed`` and never raises into the caller.
    With ``port``, every sample also holds the kernel's count of the port's connections per
    state in process ``pid``'s network namespace (``tcp_states``: ``tcp_established``,
    ``tcp_time_wait``, …) and ``connections``, their sum: every socket the server holds,
    read even when the status page cannot be; the connections of ``running``'s own status
    requests (its ``status_ports``, if it has them) left out; and the namespace's dropped SYNs
    (``listen_drops``) and the machine's CPU (``machine_cpu``)."""

    def __init__(self, running: HasStatus, every: float = 0.25, port: int | None = None,
                 pid: int | str = "self") -> None:
        if not (math.isfinite(every) and every > 0):
            raise ValueError(f"every must be a positive number of seconds, not {every!r}")
        self.running, self.every, self.port, self.pid = running, every, port, pid
        self.samples: list[tuple[float, dict[str, float]]] = []
        self.failed = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> StatusSampler:
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="wagon-status", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    def __enter__(self) -> StatusSampler:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def _run(self) -> None:
        due = time.monotonic()
        while not self._stop.is_set():
            kernel = {} if self.port is None else _kernel(
                self.port, self.pid, getattr(self.running, "status_ports", ()))
            try:
                fields = self.running.status()
            except Exception:                   # a sample lost is counted, never raised
                self.failed += 1
                fields = {}
            if fields or kernel:
                self.samples.append((time.monotonic(), {**kernel, **fields}))
            due = max(due + self.every, time.monotonic())    # a slow sample skips, not bursts
            self._stop.wait(due - time.monotonic())

    def fields(self) -> list[str]:
        """The fields of the samples, in the order the server gave them."""
        return list(dict.fromkeys(name for _, sample in self.samples for name in sample))

    def summary(self, capacity: float | None) -> dict[str, float | int | None]:
        """``samples`` and ``failed``; per field its ``_mean`` and ``_max`` over the samples (a
        counter: its ``_delta``, the increase from the first sample to the last;
        ``machine_cpu_busy``: the fraction of the machine's CPU busy between them); ``busy_mean``
        and ``busy_max`` of the connections holding the server (``busy``) for every kind that
        has them; and ``utilisation``: the mean of ``busy`` over ``capacity`` (None without a
        capacity or a busy count)."""
        out: dict[str, float | int | None] = {"samples": len(self.samples),
                                              "failed": self.failed}
        for name in self.fields():
            values = [sample[name] for _, sample in self.samples if name in sample]
            if name in COUNTERS:
                out[f"{name}_delta"] = values[-1] - values[0]
            else:
                out[f"{name}_mean"] = statistics.fmean(values)
                out[f"{name}_max"] = max(values)
        spent, elapsed = out.pop("cpu_busy_s_delta", None), out.pop("cpu_s_delta", None)
        if elapsed:                             # the machine's cores busy, as a fraction: at
            # most 1 in ticks, but the deltas of two large sums of seconds may divide to 1 + 1e-11
            out["machine_cpu_busy"] = min(spent / elapsed, 1.0)
        held = [b for _, sample in self.samples if (b := busy(sample)) is not None]
        if held and "busy_mean" not in out:     # nginx: its reading + writing connections
            out["busy_mean"], out["busy_max"] = statistics.fmean(held), max(held)
        out["utilisation"] = statistics.fmean(held) / capacity if held and capacity else None
        return out

    def write_csv(self, path: str | Path) -> None:
        """The samples as CSV: ``t`` (time.monotonic(), s) then the fields; written whole or
        not at all."""
        names = self.fields()
        with atomic_write(path, newline="") as f:
            out = csv.writer(f)
            out.writerow(["t", *names])
            for t, sample in self.samples:
                out.writerow([f"{t:.6f}", *(sample.get(n, "") for n in names)])
