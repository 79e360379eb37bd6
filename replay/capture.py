"""An independent observer: per-request response times read from a packet capture (tshark).

For validating the engine as Hashemian et al. did for the RUBiS client: on a sequential HTTP/1.1
or HTTP/1.0 connection, a response time is from the client's packet carrying a request to the
server's last payload packet before the next request."""
from __future__ import annotations

import collections
import shutil
import subprocess

__all__ = ["response_times", "CaptureError"]


class CaptureError(RuntimeError):
    pass


def response_times(pcap: str, server_port: int) -> list[float]:
    """Seconds per request/response exchange found in ``pcap`` for the server on ``server_port``
    (pipelined connections cannot be split this way)."""
    if shutil.which("tshark") is None:
        raise CaptureError("tshark is not installed (apt-get install tshark)")
    out = subprocess.run(["tshark", "-r", pcap, "-T", "fields", "-E", "separator=,",
                          "-e", "frame.time_epoch", "-e", "tcp.stream", "-e", "tcp.srcport",
                          "-e", "tcp.len"], capture_output=True, text=True)
    if out.returncode != 0:
        raise CaptureError(out.stderr.strip().splitlines()[-1] if out.stderr else "tshark failed")
    streams: dict[str, list[tuple[float, bool]]] = collections.defaultdict(list)
    for line in out.stdout.splitlines():
        t, stream, src, length = line.split(",")
        if length and int(length) > 0:
            streams[stream].append((float(t), int(src) == server_port))
    times = []
    for packets in streams.values():
        request_at = last = None
        for t, from_server in packets:
            if from_server:
                last = t
                continue
            if request_at is not None and last is not None:
                times.append(last - request_at)
            request_at, last = t, None
        if request_at is not None and last is not None:
            times.append(last - request_at)
    return times
