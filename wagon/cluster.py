"""Where ``--cluster`` work runs: a Dask (distributed) client from a spec, and clock offsets.

``local:N`` starts a LocalCluster of N single-threaded worker processes on this machine;
``tcp://host:port`` (or ``tls://``) joins an existing scheduler. Dask is an optional extra
(``pip install 'wagon-workload[cluster]'``): it is imported only here, only when a cluster is
asked for, so single-machine use never loads it.
"""
from __future__ import annotations

import contextlib
import logging
import re
import signal
import threading
import time
from dataclasses import dataclass
from typing import Any, Iterator

__all__ = ["ClusterError", "ClusterSpec", "parse_cluster", "connect", "shippable",
           "ClockOffset", "clock_offsets", "quiet_dask"]

_LOCAL = re.compile(r"local:(\d+)")
_REMOTE = re.compile(r"(tcp|tls|inproc)://[^\s/]+")


class ClusterError(ValueError):
    """A cluster that cannot be used: bad spec, Dask missing, scheduler unreachable."""


@dataclass(frozen=True)
class ClusterSpec:
    """``local`` workers on this machine, or the ``address`` of a running scheduler."""

    local: int | None = None
    address: str | None = None

    def __str__(self) -> str:
        return f"local:{self.local}" if self.local else str(self.address)


def parse_cluster(spec: str) -> ClusterSpec:
    """``local:N`` (N ≥ 1) or a scheduler address ``tcp://host:port``."""
    m = _LOCAL.fullmatch(spec.strip())
    if m and int(m.group(1)) >= 1:
        return ClusterSpec(local=int(m.group(1)))
    if _REMOTE.fullmatch(spec.strip()):
        return ClusterSpec(address=spec.strip())
    raise ClusterError(f"--cluster {spec!r}: expected local:N (N ≥ 1) or a scheduler address "
                       "such as tcp://host:8786")


def shippable(paths: list[str]) -> None:
    """Inputs that workers can read themselves: standard input ('-') cannot be shipped."""
    if "-" in paths:
        raise ClusterError("standard input cannot be parsed on a cluster: give a file")


def _distributed():
    try:
        import distributed  # lazy: Dask is an optional extra, loaded only for --cluster
    except ImportError:
        raise ClusterError("--cluster needs Dask: pip install 'wagon-workload[cluster]'") from None
    return distributed


@contextlib.contextmanager
def connect(spec: ClusterSpec, timeout: float = 10.0, scratch: str | None = None
            ) -> Iterator[Any]:
    """A ``distributed.Client`` on ``spec``, closed (with its LocalCluster) on exit; a
    LocalCluster's workers spill to ``scratch`` (Dask's default: ``dask-scratch-space`` in the
    temporary folder, left behind by a killed run)."""
    distributed = _distributed()
    cluster = None
    try:
        if spec.local:
            import dask  # lazy: with distributed, only for --cluster
            with dask.config.set({"temporary-directory": scratch} if scratch else {}), \
                    _spared_from_ctrl_c():
                cluster = distributed.LocalCluster(n_workers=spec.local, threads_per_worker=1,
                                                   processes=True, dashboard_address=":0")
            client = distributed.Client(cluster, timeout=timeout)
        else:
            client = distributed.Client(spec.address, timeout=timeout)
    except (OSError, TimeoutError) as e:
        if cluster is not None:
            cluster.close()
        raise ClusterError(f"cannot reach the Dask scheduler {spec}: {e}") from None
    try:
        if not client.scheduler_info()["workers"]:
            client.wait_for_workers(1, timeout=timeout)
        yield client
    except TimeoutError:
        raise ClusterError(f"the Dask scheduler {spec} has no worker") from None
    except KeyboardInterrupt:
        quiet_dask()
        if cluster is not None:             # our own workers: their cancelled tasks too
            with contextlib.suppress(Exception):
                client.run(quiet_dask)
        raise
    finally:
        try:
            client.close()
            if cluster is not None:
                cluster.close()
        except KeyboardInterrupt:           # during the close: Dask finishes it at exit
            quiet_dask()
            raise


@contextlib.contextmanager
def _spared_from_ctrl_c() -> Iterator[None]:
    """Processes started meanwhile (a LocalCluster's workers) ignore SIGINT, as an ignored
    signal stays ignored across exec: a Ctrl-C at a terminal reaches every process of its
    group, and each Dask worker printed a KeyboardInterrupt traceback; this process handles
    it and closes them. (A Ctrl-C in these 1-2 s of start-up is lost.)"""
    if threading.current_thread() is not threading.main_thread():
        yield                               # signal handlers are the main thread's
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def quiet_dask() -> None:
    """Silence Dask's loggers from now on: after a Ctrl-C or SIGTERM (the workers got the
    signal too) or once wagon has itself named a lost worker, the nannies' and the scheduler's
    warnings about it ("Worker process still alive after 3.2 seconds, killing", "did not shut
    down within 1s; force closing") are not the user's news: the command says what happened,
    in one line or in its summary."""
    logging.getLogger("distributed").setLevel(logging.CRITICAL + 1)


@dataclass(frozen=True)
class ClockOffset:
    """A clock's offset from this process's ``time.time()`` and the round trip it was read in
    (the offset is known to ± half of it)."""

    offset_s: float
    rtt_s: float


def _bracketed(call, rounds: int) -> tuple[dict[str, ClockOffset], ClockOffset]:
    """NTP-style: read the remote clocks between two local readings, keep the round with the
    shortest trip per clock."""
    best: dict[str, ClockOffset] = {}
    for _ in range(rounds):
        before = time.time()
        remote = call()
        after = time.time()
        for who, t in remote.items():
            c = ClockOffset(t - (before + after) / 2, after - before)
            if who not in best or c.rtt_s < best[who].rtt_s:
                best[who] = c
    return best


def clock_offsets(client: Any, rounds: int = 5) -> tuple[ClockOffset, dict[str, ClockOffset]]:
    """The scheduler's clock offset and each worker's (by address), from this process."""
    sched = _bracketed(lambda: {"scheduler": client.run_on_scheduler(time.time)}, rounds)
    workers = _bracketed(lambda: client.run(time.time), rounds)
    return sched["scheduler"], workers
