"""How an emulated user looks to the server: its own source address, its browser's User-Agent,
a Referer where a browser sends one, and a cookie jar of its own.

- Addresses: a loopback target is reached from one address per session in 127.64.0.0/10 (Linux
  answers on all of 127.0.0.0/8; the address is bound before ``connect``, with
  IP_BIND_ADDRESS_NO_PORT so that the port is chosen at connect time, per address). Any other
  target from ``--source-addresses`` (a CIDR or a list of this machine's addresses, as Tsung's
  per-client IPs), session id modulo their number; without it, from the one address the kernel
  picks, with a warning: the server then sees one client.
- User-Agent: the session's agent from the scenario (its model's browser mix); scenarios
  without agents send ``wagon-replay``.
- Referer: on an embedded object, the page's URL; on a click that follows a link of the
  previous page (the page's HTML links to it), the previous page's URL (RFC 9110 §10.1.3).
- Cookies: Set-Cookie answers are kept per session and sent back on its later requests (RFC
  6265: name=value pairs, path-matched, removed by Max-Age ≤ 0 or a past Expires; Secure ones
  only over HTTPS; the jar lives as long as the session).

``--no-identity`` restores the old behaviour: one address, ``wagon-replay``, no Referer, no
cookies.
"""
from __future__ import annotations

import ipaddress
import socket
from datetime import datetime, timezone
from email.utils import parsedate_to_datetime
from http.cookies import CookieError, SimpleCookie

__all__ = ["SourcePool", "source_pool", "bind_source", "loopback", "CookieJar", "LOOPBACK_POOL",
           "DEFAULT_AGENT", "IdentityError"]

LOOPBACK_POOL = ipaddress.ip_network("127.64.0.0/10")
DEFAULT_AGENT = "wagon-replay"
IP_BIND_ADDRESS_NO_PORT = getattr(socket, "IP_BIND_ADDRESS_NO_PORT", 24)   # Linux's value


class IdentityError(ValueError):
    """A --source-addresses value that cannot be used (the message says why)."""


class SourcePool:
    """Source addresses handed out by session id: the addresses ``first`` .. ``first + size``
    (a network's hosts), or an explicit list. With ``class_shift`` each client class has a
    block of its own, class k's starting at ``first + (k << class_shift)`` (the packet path
    tells a client's class by its address)."""

    def __init__(self, first: int = 0, size: int = 0, listed: tuple[str, ...] = (),
                 describe: str = "", warning: str | None = None, class_shift: int = 0) -> None:
        self.first, self.size, self.listed = first, size, listed
        self.describe, self.warning, self.class_shift = describe, warning, class_shift

    def address(self, session: int, cls: int = 0) -> str | None:
        """The source address of ``session``'s connections (None: the kernel's choice)."""
        if self.listed:
            return self.listed[session % len(self.listed)]
        if self.size:
            block = cls << self.class_shift if self.class_shift else 0
            return str(ipaddress.IPv4Address(self.first + block + session % self.size))
        return None


def _hosts(net: ipaddress.IPv4Network) -> tuple[int, int]:
    """First host and number of hosts of ``net`` (network and broadcast left out)."""
    if net.num_addresses <= 2:
        return int(net.network_address), net.num_addresses
    return int(net.network_address) + 1, net.num_addresses - 2


def _bindable(address: str) -> None:
    """IdentityError unless this machine can send from ``address``."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        try:
            s.bind((address, 0))
        except OSError as e:
            raise IdentityError(f"--source-addresses: {address} is not an address of this "
                                f"machine ({e.strerror or e})") from None


def loopback(host: str) -> bool:
    """Whether ``host`` names an address of 127.0.0.0/8."""
    try:
        return ipaddress.ip_address(socket.gethostbyname(host)).is_loopback
    except (OSError, ValueError):
        return False


def source_pool(host: str, spec: str | None) -> SourcePool:
    """The addresses a replay of target ``host`` connects from (module docstring);
    IdentityError for a bad ``spec`` (``CIDR`` or ``ADDR,ADDR,...``)."""
    if spec:
        if "/" in spec:
            try:
                net = ipaddress.IPv4Network(spec.strip(), strict=False)
            except ValueError as e:
                raise IdentityError(f"--source-addresses {spec!r}: {e}") from None
            first, size = _hosts(net)
            for a in {first, first + size - 1}:
                _bindable(str(ipaddress.IPv4Address(a)))
            return SourcePool(first, size, describe=f"{size:,} addresses of {net}")
        listed = tuple(dict.fromkeys(a.strip() for a in spec.split(",") if a.strip()))
        for a in listed:
            try:
                ipaddress.IPv4Address(a)
            except ValueError:
                raise IdentityError(f"--source-addresses: {a!r} is not an IPv4 address") \
                    from None
            _bindable(a)
        if not listed:
            raise IdentityError("--source-addresses: no address given")
        return SourcePool(listed=listed, describe=f"{len(listed):,} listed addresses")
    if loopback(host):
        first, size = _hosts(LOOPBACK_POOL)
        return SourcePool(first, size, describe=f"one address per session in {LOOPBACK_POOL}")
    return SourcePool(describe="one address", warning=(
        "every emulated user connects from one address, so the server sees one client: give "
        "--source-addresses (a CIDR or list of this machine's addresses) for one per session"))


def bind_source(sock: socket.socket, address: str) -> None:
    """Bind ``sock`` to ``address`` before ``connect``, the port left to the connect."""
    try:
        sock.setsockopt(socket.IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, 1)
    except OSError:
        pass                                        # not Linux: a port is taken at bind
    sock.bind((address, 0))


# ---- cookies ---------------------------------------------------------------------------------
def _default_path(url: str) -> str:
    """RFC 6265 §5.1.4: the directory of the request's path."""
    path = url.split("?", 1)[0]
    if not path.startswith("/") or path.count("/") == 1:
        return "/"
    return path[:path.rfind("/")]


def _path_match(request_path: str, cookie_path: str) -> bool:
    """RFC 6265 §5.1.4 path-match."""
    if request_path == cookie_path:
        return True
    return request_path.startswith(cookie_path) and (
        cookie_path.endswith("/") or request_path[len(cookie_path)] == "/")


def _expired(morsel) -> bool:
    """Max-Age ≤ 0, or an Expires in the past: the server deletes the cookie."""
    age = morsel["max-age"]
    if age:
        try:
            return int(age) <= 0
        except ValueError:
            return False
    if morsel["expires"]:
        try:
            when = parsedate_to_datetime(morsel["expires"])
        except (TypeError, ValueError):
            return False
        if when.tzinfo is None:
            when = when.replace(tzinfo=timezone.utc)
        return when <= datetime.now(timezone.utc)
    return False


class CookieJar:
    """One session's cookies: (path, name) → value."""

    __slots__ = ("cookies", "secure")

    def __init__(self, secure: bool = False) -> None:
        self.cookies: dict[tuple[str, str], str] = {}
        self.secure = secure                        # over HTTPS: Secure cookies too

    def update(self, headers: list[bytes], url: str) -> None:
        """Take the Set-Cookie header values of the answer to a request of ``url``; a value
        that does not parse is ignored, as browsers ignore it."""
        for raw in headers:
            jar = SimpleCookie()
            try:
                jar.load(raw.decode("latin-1"))
            except CookieError:
                continue
            for name, morsel in jar.items():
                if morsel["secure"] and not self.secure:
                    continue                        # never set from, nor sent over, plain HTTP
                path = morsel["path"] if morsel["path"].startswith("/") else _default_path(url)
                key = (path, name)
                if _expired(morsel):
                    self.cookies.pop(key, None)
                else:
                    self.cookies[key] = morsel.coded_value

    def header(self, url: str) -> str | None:
        """The Cookie header's value for a request of ``url`` (longer paths first)."""
        if not self.cookies:
            return None
        path = url.split("?", 1)[0]
        pairs = [(p, n, v) for (p, n), v in self.cookies.items() if _path_match(path, p)]
        pairs.sort(key=lambda c: -len(c[0]))
        return "; ".join(f"{n}={v}" for _, n, v in pairs) or None
