"""A packet-level network path for every client (``wagon replay --network packet``).

As Mahimahi's shells (Netravali et al. 2015), around the unmodified server: the replay runs in a
network namespace of its own whose only way out is a TUN device; a second TUN device on the
server's side (this machine's namespace) takes the packets back in, and ``replay.relay`` moves
every packet from one to the other with its client's delay, bandwidth, queue and loss. The
server's real TCP feels the path: its handshake, slow start, send buffer, retransmissions and
close all run against the emulated round trip and link.

Addresses: each path takes a /17 of the benchmarking range 198.18.0.0/15 (RFC 2544) for its
clients, one equal block per client class, and each session one address of its class's block.
Loopback targets (127.0.0.0/8) are reached through the path, so a server listening on this
machine's loopback is reached unmodified; the client namespace has no loopback of its own.

Nothing outlives the run: the namespace has no name (it lives while the replay's processes and
the descriptor held here do), the TUN devices are not persistent (they, with their routes, go
when the relay process holding them ends) and the relay dies with its parent
(PR_SET_PDEATHSIG), so even a SIGKILL leaves no namespace, device or route behind.

Needs root or CAP_NET_ADMIN, /dev/net/tun and iproute2's ``ip``.
"""
from __future__ import annotations

import contextlib
import ctypes
import fcntl
import ipaddress
import json
import os
import shutil
import struct
import subprocess
import sys
from dataclasses import dataclass

from ..formats.classes import Network
from ..formats.topology import Topology
from .identity import SourcePool
from .topology import loss_config, relay_links

__all__ = ["PacketPath", "PathError", "PathOptions", "CLIENT_RANGE", "relay_config",
           "path_sources"]

CLIENT_RANGE = ipaddress.ip_network("198.18.0.0/15")
BLOCK = 17                     # each path's clients: one /17 (so four paths can run at once)
CLIENT_DEV = "wagon0"          # the client namespace's TUN device (private to the namespace)
MTU = 1500                     # an Ethernet path's: TCP's segments are 1448 bytes of payload
CLONE_NEWNET = 0x40000000
TUNSETIFF = 0x400454CA
IFF_TUN, IFF_NO_PI = 0x0001, 0x1000

_libc = ctypes.CDLL(None, use_errno=True)


class PathError(RuntimeError):
    """The packet path cannot be set up here (the message says why, in one line)."""


@dataclass(frozen=True)
class PathOptions:
    """``queue_ms``: each link's queue holds this long of its traffic, at least ``queue_min``
    bytes (a tail-drop FIFO); ``loss``: a packet loss probability for every class that does not
    give its own; ``seed``: the losses' random stream; ``topology``: shared links in front of
    the access links, and the access links' own losses (``formats.topology``)."""

    queue_ms: float = 200.0
    queue_min: int = 16 * MTU
    loss: float = 0.0
    seed: int = 0
    topology: Topology | None = None
    beat_s: float = 1.0        # the relay's heartbeat (``watchdog``)


def _queue(rate: float, opts: PathOptions) -> float:
    return max(rate * opts.queue_ms / 1000.0, opts.queue_min)


def relay_config(networks: list[Network], base: int, shift: int, opts: PathOptions,
                 names: list[tuple[str, str]] | None = None) -> dict:
    """What the relay process is told: a path per class (its access links), the shared links
    and which sessions of a class are behind each, and how an address maps to its class.
    ``names``: each class's name and network name (the topology's names), its network's by
    default."""
    names = names or [(n.name, n.name) for n in networks]
    access = opts.topology.access if opts.topology else {}
    paths = []
    for n, pair in zip(networks, names):
        up, down = n.up_kbps * 125.0, n.down_kbps * 125.0          # kbit/s → bytes/s
        loss = next((access[k] for k in pair if k in access), n.loss or opts.loss)
        paths.append({"delay": n.rtt_ms / 2000.0, "up": up, "down": down,
                      "loss": loss_config(loss),
                      "queue_up": _queue(up, opts), "queue_down": _queue(down, opts)})
    links: list = []
    if opts.topology:
        links, groups = relay_links(opts.topology, names)
        for path, mine in zip(paths, groups):
            path["groups"] = mine
    return {"paths": paths, "links": links, "base": base, "shift": shift, "seed": opts.seed,
            "beat_s": opts.beat_s}


def path_sources(block: str, shift: int) -> SourcePool:
    """The source addresses of a path's ``block`` whose classes are ``1 << shift`` apart: one
    per session in its class's block, the blocks' first addresses left out."""
    net = ipaddress.ip_network(block)
    return SourcePool(int(net.network_address) + 1, (1 << shift) - 1, class_shift=shift,
                      describe=f"one address per session in {net} (a /{32 - shift} per class) "
                               "through the packet path")


def _ip(*args: str) -> None:
    """One iproute2 command; PathError with its message when it fails."""
    done = subprocess.run(("ip", *args), capture_output=True, text=True)
    if done.returncode:
        raise PathError(f"ip {' '.join(args)}: {done.stderr.strip()}")


def _sysctl(key: str, value: str) -> None:
    with open(f"/proc/sys/net/{key.replace('.', '/')}", "w") as f:
        f.write(value)


def _tun(name: str) -> int:
    """A new (non-persistent) TUN device ``name`` in this thread's namespace; its descriptor."""
    fd = os.open("/dev/net/tun", os.O_RDWR)
    try:
        fcntl.ioctl(fd, TUNSETIFF, struct.pack("16sH22x", name.encode(), IFF_TUN | IFF_NO_PI))
    except OSError as e:
        os.close(fd)
        raise PathError(f"cannot create TUN device {name}: {e.strerror}") from None
    return fd


def _device_up(name: str) -> None:
    """No IPv6 (its neighbour discovery would cross the path), loopback addresses routable
    through it (the targets), an Ethernet MTU, up."""
    _sysctl(f"ipv6.conf.{name}.disable_ipv6", "1")
    _sysctl(f"ipv4.conf.{name}.route_localnet", "1")
    _ip("link", "set", name, "mtu", str(MTU), "up")


def _setns(fd: int) -> None:
    if _libc.setns(fd, CLONE_NEWNET) != 0:
        raise PathError(f"setns: {os.strerror(ctypes.get_errno())}")


def _check_host() -> None:
    if os.geteuid() != 0:
        raise PathError("--network packet needs root (or CAP_NET_ADMIN): it creates a network "
                        "namespace and TUN devices")
    if not os.path.exists("/dev/net/tun"):
        raise PathError("--network packet needs /dev/net/tun (modprobe tun)")
    if shutil.which("ip") is None:
        raise PathError("--network packet needs iproute2's ip command")


class PacketPath:
    """The namespaces, devices and relay of one run; a context manager. ``sources()`` gives
    each session its address; ``inside()`` runs a block in the clients' namespace
    (sockets made there, and processes started there, use the path). ``relay`` is the relay
    process, ``heartbeat`` the descriptor its heartbeats come on (``watchdog``)."""

    def __init__(self, networks: list[Network], opts: PathOptions = PathOptions(),
                 names: list[tuple[str, str]] | None = None) -> None:
        self.networks, self.opts, self.names = list(networks), opts, names
        self.block: ipaddress.IPv4Network | None = None
        self.shift = 0
        self.report: dict | None = None
        self._fds: list[int] = []
        self._root = self._clients = -1
        self.relay: subprocess.Popen | None = None
        self.heartbeat = -1

    # ---- addresses --------------------------------------------------------------------------
    def sources(self) -> SourcePool:
        """One address per session in its class's block (the block's first address is left to
        the namespace itself)."""
        return path_sources(str(self.block), self.shift)

    # ---- set up and tear down ---------------------------------------------------------------
    def __enter__(self) -> "PacketPath":
        _check_host()
        try:
            self._open()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _claim_block(self, device: str) -> None:
        """The first /17 of CLIENT_RANGE no other path routes, routed to ``device`` (with the
        topology's initial congestion window and segment size for the server's connections to
        the clients: the route's MTU bounds what the server sends, its advmss what it asks
        the clients to send)."""
        t = self.opts.topology
        metric = (("initcwnd", str(t.initcwnd)) if t and t.initcwnd else ()) + (
            ("mtu", str(t.mss + 40), "advmss", str(t.mss)) if t and t.mss else ())
        for block in CLIENT_RANGE.subnets(new_prefix=BLOCK):
            try:
                _ip("route", "add", str(block), "dev", device, *metric)
            except PathError as e:
                if "File exists" in str(e):
                    continue
                raise
            self.block = block
            return
        raise PathError(f"every /{BLOCK} of {CLIENT_RANGE} is in use by other packet paths")

    def _open(self) -> None:
        classes = max(len(self.networks), 1)
        self.shift = (32 - BLOCK) - max(classes - 1, 0).bit_length()
        self._root = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
        server_dev = f"wagon-s{os.getpid()}"[:15]
        server = _tun(server_dev)
        self._fds.append(server)
        _device_up(server_dev)
        self._claim_block(server_dev)
        if _libc.unshare(CLONE_NEWNET) != 0:
            raise PathError(f"unshare: {os.strerror(ctypes.get_errno())}")
        try:
            client = _tun(CLIENT_DEV)
            self._fds.append(client)
            _device_up(CLIENT_DEV)
            _ip("route", "add", "local", str(self.block), "dev", CLIENT_DEV, "table", "local")
            _ip("route", "add", "127.0.0.0/8", "dev", CLIENT_DEV,
                "src", self.sources().address(0, 0))
            self._clients = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
        finally:
            _setns(self._root)
        cfg = relay_config(self.networks, int(self.block.network_address), self.shift, self.opts,
                           self.names)
        self.heartbeat, beat = os.pipe()
        try:
            self.relay = subprocess.Popen(
                (sys.executable, "-m", "wagon.replay.relay", json.dumps(cfg), str(client),
                 str(server), str(beat)), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                text=True, pass_fds=(client, server, beat))
        finally:
            os.close(beat)                  # the relay's alone: its death closes the pipe
        if not self.relay.stdout.readline():
            raise PathError("the packet relay did not start")

    def close(self) -> None:
        """Stop the relay (its counts in ``report``), close the devices and namespaces."""
        if self.relay is not None:
            out, _ = self.relay.communicate(timeout=30)        # closes its stdin: it stops
            with contextlib.suppress(ValueError, IndexError):
                self.report = json.loads(out.splitlines()[-1])
            self.relay = None
        for fd in (*self._fds, self._clients, self._root, self.heartbeat):
            if fd >= 0:
                os.close(fd)
        self._fds, self._clients, self._root, self.heartbeat = [], -1, -1, -1

    @contextlib.contextmanager
    def inside(self):
        """Run the block in the clients' namespace (this thread), then come back."""
        _setns(self._clients)
        try:
            yield
        finally:
            _setns(self._root)
