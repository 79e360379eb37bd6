"""What the server feels, with the kernel's own shaping as the observer instead of wagon's relay.

The same clients, nginx and objects as ``netpath_bench.py`` part 4, over two paths of the same
bandwidth each way and the same tail-drop queue (``PathOptions``: 200 ms of the link, at least
16 packets):

- **kernel**: the kernel's own forwarding and shaping: the clients' network namespace joined to
  this machine's through a router namespace (two veth pairs), whose HTB classes shape each
  direction at the link's rate into a bfifo queue (TSO off on the server's device, so the
  queues hold 1500-byte packets, not 64 KB super-packets);
- **packet**: ``wagon replay --network packet``'s path (TUN devices and ``replay.relay``).

This kernel has no netem (nor tbf): it cannot delay packets, so both paths run at RTT 0 (a
round trip of the queues alone; HTB lets a packet go at the start of its transmission time where
a wire, and the relay, deliver it at its end, so the kernel path's round trip is one packet's
serialization shorter). Each fetch comes from an address of its own, its TCP metrics (a
remembered ssthresh or RTT) deleted first. nginx's ``$request_time`` (request read → last byte
handed to its kernel) is divided by the time it would spend if it felt the whole transfer (the
client's request-to-last-byte time). ``ss -tmi`` of nginx's socket during each transfer gives
its send buffer (``skmem`` ``tb``: sk_sndbuf) and congestion window; the best of 3 TCP connects
gives each path's round trip at RTT 0 (the SYN's and SYN-ACK's serialization, on a wire); the
packets and queue drops are the relay's counts or the router's qdiscs'. A third row per class
serves the kernel path from an nginx whose sockets have an 8 KB send buffer (``listen ...
sndbuf=8k``: the kernel doubles it and stops sizing it from the window). ``--nasa`` adds part 4's
byte-weighted ratio over objects drawn from the NASA trace.

    sudo python bench/kernelpath_bench.py [--classes modem wan t1-dsl satellite] [--sizes KB ...]
                                          [--nasa] [--congestion reno]

The send buffer Linux gives a socket is a multiple of its congestion window (tcp_sndbuf_expand):
twice for Reno and CUBIC, three times for BBR; ``--congestion`` sets nginx's towards the clients
(a ``congctl`` on the route to them), to see both.

Everything created (namespaces, veth pairs, qdiscs, routes) goes when the run ends, however it
ends: the namespaces have no name, so a killed run's go with its descriptors, and the veth pairs
with them.
"""
from __future__ import annotations

import argparse
import contextlib
import ctypes
import fcntl
import ipaddress
import itertools
import json
import os
import re
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from netpath_bench import SIZES_KB, fetch, objects, wanted  # noqa: E402
from tests.servers import Sender, bound_client, nginx  # noqa: E402
from wagon.formats.classes import NETWORKS, Network  # noqa: E402
from wagon.replay.netpath import (CLONE_NEWNET, MTU, PacketPath, PathError,  # noqa: E402
                                  PathOptions, _device_up, _ip, _libc, _queue, _setns, _sysctl)

SERVER_LINK = ipaddress.ip_network("198.19.255.0/30")   # this namespace .1, the router .2
CLIENT_LINK = ipaddress.ip_network("198.19.255.4/30")   # the router .5, the clients .6
CLIENTS = ipaddress.ip_network("198.19.224.0/20")       # one address per connection
ROUTER_DEVS = ("whtb-r0", "whtb-r1")                     # towards the server, the clients
CLIENT_DEV = "whtb-c"
MACS = [f"02:00:c6:13:ff:0{k}" for k in range(4)]      # server, router ×2, clients
FETCHES = itertools.count()   # an address per connection, any path (a --nasa run: 850 of 4095)
ETHERNET = 14          # HTB counts the frame: its rate is raised so that IP packets get the link's


def _run(*argv: str, fds: tuple[int, ...] = ()) -> str:
    """One command (tc, ip); PathError with its message when it fails."""
    done = subprocess.run(argv, capture_output=True, text=True, pass_fds=fds)
    if done.returncode:
        raise PathError(f"{' '.join(argv)}: {done.stderr.strip()}")
    return done.stdout


def _host(net: ipaddress.IPv4Network, k: int) -> str:
    return str(net.network_address + k)


class KernelPath(PacketPath):
    """``PacketPath``'s interface (``sources``, ``inside``) over the kernel's own forwarding:
    this namespace ── veth ── a router namespace ── veth ── the clients' namespace. The router
    shapes each direction with an HTB class at ``networks[0]``'s bandwidth and a bfifo queue of
    ``opts``' size; no delay. The bottleneck is a router's queue, as on a real path, not the
    server's own device (whose queue TCP small queues would keep at two packets, holding the
    rest in the socket)."""

    def __init__(self, networks: list[Network], opts: PathOptions = PathOptions()) -> None:
        super().__init__(networks[:1], opts)
        self.device = ""
        self._router = -1

    def _namespace(self) -> int:
        """A new network namespace (no name: it lives while its descriptor is open)."""
        if _libc.unshare(CLONE_NEWNET) != 0:
            raise PathError("unshare: cannot make a network namespace")
        try:
            return os.open("/proc/thread-self/ns/net", os.O_RDONLY)
        finally:
            _setns(self._root)

    @contextlib.contextmanager
    def _in(self, namespace: int):
        _setns(namespace)
        try:
            yield
        finally:
            _setns(self._root)

    def _open(self) -> None:
        net = self.networks[0]
        self.block, self.shift = CLIENTS, 32 - CLIENTS.prefixlen
        self._root = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
        self._router = self._namespace()
        self._fds.append(self._router)
        self._clients = self._namespace()
        device = f"whtb{os.getpid()}"[:15]
        _run("ip", "link", "add", device, "address", MACS[0], "type", "veth", "peer", "name",
             ROUTER_DEVS[0], "address", MACS[1], "netns", f"/proc/self/fd/{self._router}",
             fds=(self._router,))
        self.device = device
        _end(device, _host(SERVER_LINK, 1), SERVER_LINK, _host(SERVER_LINK, 2), MACS[1])
        _no_tso(device)
        _ip("route", "add", str(CLIENTS), "via", _host(SERVER_LINK, 2), "dev", device)
        with self._in(self._router):
            _run("ip", "link", "add", ROUTER_DEVS[1], "address", MACS[2], "type", "veth",
                 "peer", "name", CLIENT_DEV, "address", MACS[3], "netns",
                 f"/proc/self/fd/{self._clients}", fds=(self._clients,))
            _sysctl("ipv4.ip_forward", "1")
            _end(ROUTER_DEVS[0], _host(SERVER_LINK, 2), SERVER_LINK, _host(SERVER_LINK, 1),
                 MACS[0])
            _end(ROUTER_DEVS[1], _host(CLIENT_LINK, 1), CLIENT_LINK, _host(CLIENT_LINK, 2),
                 MACS[3])
            _ip("route", "add", "127.0.0.0/8", "via", _host(SERVER_LINK, 1))
            _ip("route", "add", str(CLIENTS), "via", _host(CLIENT_LINK, 2))
            self._shape(ROUTER_DEVS[0], net.up_kbps)
            self._shape(ROUTER_DEVS[1], net.down_kbps)
        with self.inside():
            _end(CLIENT_DEV, _host(CLIENT_LINK, 2), CLIENT_LINK, _host(CLIENT_LINK, 1), MACS[2])
            _ip("route", "add", "local", str(CLIENTS), "dev", CLIENT_DEV, "table", "local")
            _ip("route", "add", "127.0.0.0/8", "via", _host(CLIENT_LINK, 1),
                "src", self.sources().address(0, 0))

    def _shape(self, device: str, kbps: float) -> None:
        """``device``'s traffic through one HTB class at ``kbps`` with a bfifo leaf queue."""
        rate = f"{kbps * 1000 * (MTU + ETHERNET) / MTU:.0f}bit"
        limit = _queue(kbps * 125, self.opts)
        _run("tc", "qdisc", "add", "dev", device, "root", "handle", "1:", "htb", "default", "1")
        _run("tc", "class", "add", "dev", device, "parent", "1:", "classid", "1:1", "htb",
             "rate", rate, "ceil", rate, "burst", "1600", "cburst", "1600", "quantum", "1514")
        _run("tc", "qdisc", "add", "dev", device, "parent", "1:1", "handle", "10:", "bfifo",
             "limit", f"{limit:.0f}")

    def _queues(self) -> list[dict]:
        """The router's two bfifo queues' counters (``tc -s -j``)."""
        with self._in(self._router):
            out = [_run("tc", "-s", "-j", "qdisc", "show", "dev", d) for d in ROUTER_DEVS]
        return [next(q for q in json.loads(o) if q["kind"] == "bfifo") for o in out]

    def close(self) -> None:
        """The queues' counts in ``report``; the veth pairs (their qdiscs and routes with
        them) and the namespaces removed."""
        if self.device:
            with contextlib.suppress(PathError, StopIteration, ValueError):
                up, down = self._queues()
                self.report = {"packets": down["packets"] + up["packets"],
                               "queue_drops": down["drops"] + up["drops"]}
            subprocess.run(("ip", "link", "del", self.device), capture_output=True)
            self.device = ""
        super().close()


def _end(device: str, address: str, link: ipaddress.IPv4Network, peer: str,
         peer_mac: str) -> None:
    """One end of a veth link: addressed, its peer's link address fixed (no ARP on the link),
    up."""
    _ip("address", "add", f"{address}/{link.prefixlen}", "dev", device)
    _ip("neigh", "replace", peer, "lladdr", peer_mac, "dev", device, "nud", "permanent")
    _device_up(device)


SIOCETHTOOL, ETHTOOL_STSO = 0x8946, 0x1F


def _no_tso(device: str) -> None:
    """TCP segmentation offload off on ``device`` (``ethtool -K DEV tso off``, which this
    machine lacks), GSO left on: the server's TCP still queues 64 KB buffers, as over a NIC or
    the packet path's TUN device, but they are cut into 1500-byte packets as they leave it, so
    the router's queues hold packets, not 64 KB super-packets."""
    value = ctypes.create_string_buffer(struct.pack("II", ETHTOOL_STSO, 0))
    request = struct.pack("16sP", device.encode(), ctypes.addressof(value)).ljust(40, b"\0")
    with socket.socket() as s:
        fcntl.ioctl(s, SIOCETHTOOL, request)


_SKMEM = re.compile(r"\btb(\d+)\b.*?\bw(\d+)\b")
_CWND = re.compile(r"\bcwnd:(\d+)")


@contextlib.contextmanager
def send_buffer(port: int, client: str, every: float = 0.1):
    """Watch the server's socket on ``port`` to ``client`` (``ss -tmi``, this namespace) while
    the block runs; yields a dict that gets the largest sk_sndbuf (``tb``) and congestion
    window seen."""
    seen = {"sndbuf": 0, "cwnd": 0}
    stop = threading.Event()

    def watch() -> None:
        while not stop.is_set():
            out = subprocess.run(("ss", "-tmiHn", "state", "connected",
                                  f"( sport = :{port} and dst {client} )"),
                                 capture_output=True, text=True).stdout
            for m in _SKMEM.finditer(out):
                seen["sndbuf"] = max(seen["sndbuf"], int(m[1]))
            for m in _CWND.finditer(out):
                seen["cwnd"] = max(seen["cwnd"], int(m[1]))
            stop.wait(every)

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    try:
        yield seen
    finally:
        stop.set()
        thread.join()


def connect_ms(path: PacketPath, port: int, tries: int = 3) -> float:
    """The best of ``tries`` TCP connects to ``port`` through ``path`` (ms): the round trip
    with the SYN's and SYN-ACK's serialization."""
    best = float("inf")
    with path.inside():
        for k in range(tries):
            s = bound_client(path.sources().address(next(FETCHES), 0))
            t0 = time.perf_counter()
            s.connect(("127.0.0.1", port))
            best = min(best, 1000 * (time.perf_counter() - t0))
            s.close()
    return best


def congestion(path: PacketPath, name: str) -> None:
    """The server's connections to ``path``'s clients use congestion control ``name`` (the
    route's ``congctl``), whatever this machine's default."""
    route = _run("ip", "route", "show", str(path.block)).split()
    _run("ip", "route", "replace", str(path.block), *route[1:], "congctl", name)


def measure(kind, net: Network, ng, sizes: list[int], mix: list[str], probe: int,
            cc: str | None) -> tuple[list[str], dict]:
    """Each object once through a fresh ``kind`` path at ``net`` (congestion control ``cc``,
    else the default): a cell per size (ratio, largest send buffer in KB, largest window in
    segments), the byte-weighted ratio over the objects ``mix`` names (if any), the best TCP
    connect to ``probe`` (a port; ms); and the path's counts."""
    cells = []
    with kind([net]) as path:
        if cc:
            congestion(path, cc)
        connect = connect_ms(path, probe)
        seen = [felt_ratio(path, ng, f"f{kb}") for kb in sizes]
        cells += [f"{f / full:.2f} ({buf['sndbuf'] / 1024:.0f} KB, {buf['cwnd']})"
                  for f, full, buf in seen]
        if mix:
            pairs = [felt_ratio(path, ng, name)[:2] for name in mix]
            cells.append(f"{sum(f for f, _ in pairs) / sum(full for _, full in pairs):.2f}")
        cells.append(f"{connect:.1f}")
    return cells, path.report or {}


def felt_ratio(path: PacketPath, ng, name: str) -> tuple[float, float, dict]:
    """Fetch ``/name.bin`` once through ``path`` from an address of its own: nginx's
    ``$request_time``, the client's request-to-last-byte time, and what ``send_buffer`` saw."""
    source = path.sources().address(next(FETCHES), 0)     # no socket of an earlier one
    # no ssthresh or RTT remembered from an earlier connection from this address
    subprocess.run(("ip", "tcp_metrics", "delete", source), capture_output=True)
    done = len(ng.access())
    with send_buffer(ng.port, source) as seen, path.inside():
        full = fetch(source, ng.port, f"GET /{name}.bin HTTP/1.0\r\n\r\n".encode(), 0.0)
    return ng.access(expect=done + 1)[-1].request_time, full, seen


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--classes", nargs="*", default=["modem", "wan", "t1-dsl", "satellite"])
    ap.add_argument("--sizes", type=int, nargs="*", default=[16, 32, 64, 128, 256, 512])
    ap.add_argument("--nasa", action="store_true",
                    help="a column more: the byte-weighted ratio over netpath_bench's NASA mix "
                         "(60 objects; on the modem and WAN the 30 under 60 KB)")
    ap.add_argument("--congestion", metavar="NAME",
                    help="nginx's congestion control towards the clients (e.g. reno; default: "
                         "net.ipv4.tcp_congestion_control)")
    args = ap.parse_args()
    if not set(args.sizes) <= set(SIZES_KB):
        ap.error(f"--sizes are among {', '.join(map(str, SIZES_KB))} (KB)")
    try:
        compare(args.classes, args.sizes, args.nasa, args.congestion)
    except PathError as e:
        raise SystemExit(f"kernelpath_bench: {e}") from None


def compare(classes: list[str], sizes: list[int], nasa: bool, cc: str | None) -> None:
    """The table: per class, each object through the kernel path, the packet path, and the
    kernel path to an nginx with an 8 KB send buffer."""
    files = Path(tempfile.mkdtemp())
    mix = objects(files)
    cc = cc or Path("/proc/sys/net/ipv4/tcp_congestion_control").read_text().strip()
    print(f"nginx's $request_time / the client's transfer time, at RTT 0, congestion control "
          f"{cc}; in brackets the largest sk_sndbuf (ss's tb) and cwnd (segments) of nginx's "
          "socket")
    print("| class | path | " + " | ".join(f"{kb} KB" for kb in sizes) +
          (" | NASA mix" if nasa else "") +
          " | connect (ms) | packets | queue drops |")
    print("|---|---|" + "---:|" * (len(sizes) + 3 + nasa))
    with nginx(files, Path(tempfile.mkdtemp())) as ng, \
            nginx(files, Path(tempfile.mkdtemp()), sndbuf=8192) as small:
        probe = Sender()
        for name in classes:
            base = NETWORKS[name]
            net = Network(f"{name}-rtt0", 0.0, base.down_kbps, base.up_kbps)
            names = [n for n, mixed in wanted(base, mix) if mixed] if nasa else []
            for label, kind, server in (("kernel (HTB)", KernelPath, ng),
                                        ("packet (relay)", PacketPath, ng),
                                        ("kernel, sndbuf=8k", KernelPath, small)):
                t0 = time.perf_counter()
                cells, report = measure(kind, net, server, sizes, names, probe.port, cc)
                print(f"| {name} | {label} | " + " | ".join(cells) +
                      f" | {report.get('packets', '?')} | {report.get('queue_drops', '?')} |",
                      flush=True)
                print(f"  ({time.perf_counter() - t0:.0f} s)", file=sys.stderr)


if __name__ == "__main__":
    main()
