"""The emulated browser: how one user fetches a page and its embedded objects.

Protocol profiles (formats.classes.Protocol):
- HTTP/1.0 × K: a new connection per request, the HTML first, then objects K at a time;
- persistent (HTTP/1.1) × K: the HTML on the first connection, objects spread over K kept-alive
  connections, each used one request at a time; connections are kept across clicks (a browser's
  keep-alive), and reopened when the server has closed them meanwhile;
- pipelined: one persistent connection, the objects' requests written back to back;
- early close: persistent during a page, closed by the client once the page is complete;
- HTTP/2 (``h2``, ``replay.http2``): one connection, the HTML then the objects as concurrent
  streams (K at most), kept across clicks; h2c (prior knowledge) on a plain-text target.

Over HTTPS (``Target.tls``) every connection starts with a TLS handshake (``replay.tls``); a
browser offers the session of its previous connection, so its later connections resume (unless
its class says ``+noresume``).

As browsers do: a request that got no byte of answer on a reused connection (the server closed
or reset it while idle, or closed it with pipelined requests unanswered) is sent once more on a
new connection (RFC 9112 §9.3.2); a redirect to the same server is followed (up to 20 hops),
each hop recorded as a request of its own. Every request the browser knows of ends with exactly
one ``call_done``: the objects of a page whose HTML failed end as ``skipped``, and ``abandon``
settles what is outstanding when the run stops.
"""
from __future__ import annotations

import asyncio
import itertools
from collections import deque
from dataclasses import dataclass
from functools import partial
from typing import Awaitable, Callable, Sequence
from urllib.parse import quote, urljoin, urlsplit

from ..formats.classes import Network, Protocol
from ..formats.site import LAST_MODIFIED, PageView, SiteSpec, status_url
from .emulation import ClientNet
from .events import IN_FLIGHT, NOT_STARTED, SKIPPED, UNFINISHED, Call, Hooks, PageVisit, clock
from .http import ConnectFailed, Connection, open_connection
from .http2 import H2Connection
from .identity import DEFAULT_AGENT, CookieJar, SourcePool
from .script import Answer, BoundScript, Failure
from .tls import TlsConfig, TlsLayer

__all__ = ["Target", "Client", "MAX_REDIRECTS", "Pace"]

#: when a click's n embedded requests are due after its page (seconds, in order)
Pace = Callable[[Sequence[int]], Sequence[float]]   # a click's objects → when each is due

REDIRECTS = frozenset((301, 302, 303, 307, 308))
MAX_REDIRECTS = 20                     # Chrome's and Firefox's limit
RESENT = frozenset(("closed", "reset"))  # failures before any answer byte that are sent again
BODY_METHODS = frozenset(("POST", "PUT", "PATCH"))   # methods whose requests carry a body
KEEP_METHOD = frozenset((307, 308))    # redirects that keep the method (RFC 9110 15.4)


@dataclass
class Target:
    """Where requests go, what they look like and how long to wait; shared by every client of a
    process. ``agents``: the scenario's User-Agent strings; ``sources``: where each session
    connects from (None: no identity, the old behaviour of one address and ``wagon-replay``,
    no Referer, no cookies; ``replay.identity``)."""

    host: str
    port: int
    host_header: str
    connect_timeout: float
    timeout: float | None              # no byte for this long: a timeout
    request_timeout: float | None      # a whole request taking longer: a request_timeout
    hooks: Hooks
    site: SiteSpec
    conn_ids: itertools.count
    emulation: bool = True
    follow_redirects: bool = True
    agents: tuple[str, ...] = ()
    sources: SourcePool | None = None
    prefix: str = ""                   # every site URL is requested under this path
    tls: TlsConfig | None = None       # HTTPS (None: plain HTTP)
    script: BoundScript | None = None  # a user's script (bodies, logins, checks: ``script``)
    status_marks: bool = True          # ask for the scenario's logged statuses (a built site)
    seed: int = 0                      # the scenario's: modeled follow-ups' draws (``_modeled``)
    statuses_drawn: bool = False       # the scenario's statuses drawn from a model: a request
                                       # it left unmarked was drawn answered with content

    def path(self, url: str) -> str:
        """The server path of the site's ``url`` (under the target's prefix)."""
        return self.prefix + url

    def __post_init__(self) -> None:
        self._cache: dict[tuple, bytes | list | str] = {}
        self._views: dict[tuple[int, int], PageView] = {}

    def view(self, page: int, view: int) -> PageView:
        """``site.view``, made once per (page, view) (a click cost ~1 us making it anew)."""
        got = self._views.get((page, view))
        if got is None:
            got = self._views[page, view] = self.site.view(page, view)
        return got

    @property
    def identity(self) -> bool:
        return self.sources is not None

    def agent(self, index: int | None) -> str:
        """The User-Agent of a session whose scenario agent is ``index``."""
        if not self.identity or index is None or not self.agents:
            return DEFAULT_AGENT
        return self.agents[index]

    @property
    def scheme(self) -> str:
        return "http" if self.tls is None else "https"

    def request(self, url: str, http10: bool, agent: str,
                extra: list[tuple[str, str]] = (), method: str = "GET",
                body: bytes | None = None) -> bytes:
        """The HTTP/1.x request bytes for ``method`` ``url``; ``extra``: header fields of this
        request only; ``body`` after them, its length said (0 for a method that carries one
        when there is none)."""
        key = (method, url, http10, agent)
        raw = self._cache.get(key)
        if raw is None:
            length = "Content-Length: 0\r\n" if method in BODY_METHODS else ""
            raw = (f"{method} {_path(url)} HTTP/1.{0 if http10 else 1}\r\nHost: "
                   f"{self.host_header}\r\nUser-Agent: {agent}\r\nAccept: */*\r\n{length}"
                   "\r\n").encode("latin-1", "replace")
            self._cache[key] = raw
        if body:                       # its length instead of the 0 (the last line but one)
            head = raw[:raw.rindex(b"Content-Length: 0")] if method in BODY_METHODS else \
                raw[:-2]
            extra = [*extra, ("Content-Length", str(len(body)))]
        elif not extra:
            return raw
        else:
            head = raw[:-2]
        lines = "".join(f"{name}: {value}\r\n" for name, value in extra)
        return head + lines.encode("latin-1", "replace") + b"\r\n" + (body or b"")

    def fields(self, url: str, agent: str, extra: list[tuple[str, str]] = (),
               method: str = "GET") -> list[tuple[bytes, bytes]]:
        """The HTTP/2 header list of the same request (RFC 9113 §8.3: the Host header is the
        ``:authority``, names in lower case)."""
        key = ("h2", method, url, agent)
        fields = self._cache.get(key)
        if fields is None:
            fields = self._cache[key] = _encoded([
                (":method", method), (":scheme", self.scheme), (":authority", self.host_header),
                (":path", _path(url)), ("user-agent", agent), ("accept", "*/*")])
        return fields + _encoded(extra) if extra else fields

    def absolute(self, url: str) -> str:
        """``url`` of this server as a browser names it in a Referer (kept: ``urljoin`` takes
        4 µs, twice a click)."""
        key = ("absolute", url)
        name = self._cache.get(key)
        if name is None:
            name = self._cache[key] = urljoin(f"{self.scheme}://{self.host_header}/", url)
        return name

    def same_origin_path(self, base: str, location: bytes) -> str | None:
        """The path to request for a redirect to ``location`` from ``base``; None when it
        leaves this server (a replay only talks to its target)."""
        u = urlsplit(urljoin(base, location.decode("latin-1")))
        if u.scheme not in ("", self.scheme) or (u.netloc and u.netloc.lower() !=
                                            self.host_header.lower()):
            return None
        return (u.path or "/") + (f"?{u.query}" if u.query else "")


def _encoded(fields: list[tuple[str, str]]) -> list[tuple[bytes, bytes]]:
    """Header fields as HTTP/2 sends them: names in lower case, bytes."""
    return [(n.lower().encode("latin-1"), v.encode("latin-1", "replace")) for n, v in fields]


def _stale(calls: list[Call]) -> list[Call]:
    """Those of ``calls`` that got no byte of answer on a reused connection, which the server
    closed or reset (requests a browser sends once more, on a new connection)."""
    stale = []
    for c in calls:
        if c.reused and c.first_byte is None and c.error in RESENT:
            stale.append(c)
    return stale


def _fresh(conn: Connection) -> bool:
    """Is ``conn`` plain and unused? Its first request then needs no half round trip of its
    own: it goes right behind the handshake's last ACK, which the connect waited for to reach
    the server (a TLS connect ends as the server's last flight reaches the client: the
    request then travels its half)."""
    return conn.used == 0 and conn.tls is None


class _Ended:
    """The order in which a page's streams end (``Client._streams``): their indices, and the
    coroutine waiting for the next (to which an error of a delayed write goes, as it would
    from a task of its own)."""

    __slots__ = ("loop", "queue", "waiter", "error")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.queue: deque[int] = deque()
        self.waiter: asyncio.Future | None = None
        self.error: Exception | None = None

    def _wake(self) -> None:
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_result(None)

    def add(self, i: int, _fut: asyncio.Future | None = None) -> None:
        self.queue.append(i)
        self._wake()

    def later(self, fn: Callable[..., None], *args) -> None:
        """Run ``fn(*args)`` (a timer's callback), its error raised by ``next``."""
        try:
            fn(*args)
        except Exception as e:
            self.error = e
            self._wake()

    async def next(self) -> int:
        if not self.queue and self.error is None:
            self.waiter = self.loop.create_future()
            await self.waiter
        if self.error is not None:
            raise self.error
        return self.queue.popleft()


def _marked(url: str, k: int, marks: dict[int, int]) -> str:
    """``url`` as request ``k`` of a click asks for it (``marks``: ``Client.visit``'s)."""
    return status_url(url, marks[k]) if k in marks else url


def _path(url: str) -> str:
    """``url`` as the request target (percent-encoded where it must be)."""
    return quote(url, safe="/:@&=+$,;~!*'()?#[]%")


class Client:
    """One session's user: its link, its connections, its protocol, its open requests."""

    def __init__(self, target: Target, session: int, cls: int, network: Network,
                 protocol: Protocol, loop: asyncio.AbstractEventLoop,
                 agent: int | None = None) -> None:
        self.t, self.session, self.cls, self.p, self.loop = target, session, cls, protocol, loop
        self.net = ClientNet(network if target.emulation else None)
        self.agent = target.agent(agent)
        self.source = target.sources.address(session, cls) if target.sources else None
        self.jar = (CookieJar(secure=target.tls is not None)
                    if target.identity or target.script is not None else None)
        self.script = target.script.session(session) if target.script is not None else None
        self.last_page: tuple[int, str] | None = None     # the previous click's page and URL
        self.kept: list[Connection | None] = [None] * protocol.sockets
        self.kind = H2Connection if protocol.http2 else Connection
        self.opening: dict[int, asyncio.Future] = {}      # slot → its connect in progress
        self.retired: list[Connection] = []      # replaced while still open (HTTP/2 GOAWAY)
        self.tls_session = None                  # the session the next connection resumes
        self.resumes = target.tls is not None and protocol.resume   # (``_resumable``)
        self.referers = target.identity          # does it name the page a click left?
        self.http10 = not protocol.persistent
        self.open: dict[Call, None] = {}          # issued or known, outcome not yet emitted
        self.visit_now: PageVisit | None = None
        self.page_calls: list[Call] = []
        self.click = 0                            # the click being played (its index)
        self.numbered = 0                         # requests of the session numbered so far

    def _call(self, page: int, url: str, is_page: bool, intended: float | None,
              hops: int = 0, referer: str | None = None) -> Call:
        """A request of this session, with the next number (its key in the results)."""
        self.numbered += 1
        return Call(self.session, self.cls, page, url, is_page, intended, hops, referer,
                    self.numbered - 1)

    # ---- requests and their outcomes -------------------------------------------------------
    def _new(self, page: int, url: str, is_page: bool, intended: float | None,
             hops: int = 0, referer: str | None = None) -> Call:
        call = self._call(page, url, is_page, intended, hops, referer)
        self.open[call] = None
        self.page_calls.append(call)
        return call

    def _done(self, call: Call) -> None:
        if call.set_cookie and self.jar is not None:
            self.jar.update(call.set_cookie, call.url)
        if call.answer is not None and call.error is None:
            try:
                self.script.answered(call.page, call.answer)
            except Failure as e:
                call.error = e.kind
                self.t.hooks.emit("script_failed", call, str(e))
            call.answer = None
        del self.open[call]
        for fn in self.t.hooks.call_done:      # (Hooks.emit's loop: a call less per request)
            fn(call)

    def _follow(self, call: Call) -> Call | None:
        """The request a redirect leads to, or None (not a redirect, not followed, elsewhere).
        A redirect the scenario asked a built site for (``asked``: the logged answer, whose
        Location is the page itself) leads where the model's form went (``_modeled``)."""
        if call.status not in REDIRECTS or call.error is not None:
            return None
        if call.asked == call.status:
            return self._modeled(call)
        if call.location is None or not self.t.follow_redirects:
            return None
        path = self.t.same_origin_path(call.url, call.location)
        if path is None:
            return None
        if call.hops >= MAX_REDIRECTS:
            call.error = "too_many_redirects"
            return None
        nxt = self._new(call.page, path, call.is_page, call.last_byte, call.hops + 1,
                        call.referer)
        if call.status in KEEP_METHOD:       # 301-303 after a POST: a GET, as browsers do
            nxt.method, nxt.body, nxt.extra = call.method, call.body, call.extra
        if call.answer is not None:          # a script reads the answer after the redirects
            nxt.answer, call.answer = Answer(), None
        return nxt

    def _modeled(self, call: Call) -> Call | None:
        """The follow-up the logged client sent after ``call``'s form's redirect (the site's
        ``page_redirects``; None for another page, or a follow-up's own redirect), its target
        drawn by the form's shares from its click's own stream, asked for with its logged
        status: the one ``wagon export`` writes."""
        r = self.t.site.redirect_of(call.page, call.status) if call.is_page and not call.hops \
            else None
        if r is None:
            return None
        j = r.target((self.t.seed, self.session, self.click))
        nxt = self._new(call.page, self.t.path(r.asked(j, self.t.status_marks)), True,
                        call.last_byte, 1, call.referer)
        nxt.method, nxt.asked = r.methods[j], (r.statuses[j] if self.t.status_marks else None)
        return nxt

    # ---- connections -------------------------------------------------------------------------
    async def _connect(self, calls: list[Call]) -> Connection | None:
        """A new connection for ``calls``; on failure they all end with its error."""
        began = clock()
        for c in calls:
            c.connect_start = began
        tls = None
        if self.t.tls is not None:
            tls = TlsLayer(self.t.tls.context(self.kind.ALPN), self.t.tls.server_name,
                           self.tls_session if self.p.resume else None)
        try:
            conn = await open_connection(next(self.t.conn_ids), self.t.host, self.t.port,
                                         self.net, self.t.connect_timeout, self.t.timeout,
                                         self.source, tls, self.kind)
        except ConnectFailed as e:
            now = clock()
            for c in calls:
                c.error, c.last_byte = str(e), now
            return None
        now = conn.opened
        for c in calls:                # (its conn again when written: a stop may come first)
            c.connected, c.tls_start, c.conn = now, conn.tls_start, conn.id
        if self.p.http2:
            conn.limit = self.p.connections
        self.t.hooks.emit("connection_open", conn.id, now - began)
        if tls is not None:
            self.t.hooks.emit("tls_handshake", conn.id, now - conn.tls_start, tls.resumed)
        conn.on_close = partial(self.t.hooks.emit, "connection_close")
        return conn

    def _open(self, slot: int) -> Connection | None:
        """Kept-alive connection ``slot`` when it takes requests (else ``_slot`` opens one: a
        coroutine only then)."""
        conn = self.kept[slot]
        return conn if conn is not None and conn.accepting else None

    async def _slot(self, slot: int, calls: list[Call]) -> Connection | None:
        """A new kept-alive connection ``slot`` for ``calls`` (the one open can take no
        more). Requests that need it while it is being opened (HTTP/2's concurrent streams)
        wait for that one connection and share its outcome."""
        conn = self.kept[slot]
        opening = self.opening.get(slot)
        if opening is not None:
            began = clock()
            for c in calls:
                c.connect_start = began
            conn, error = await asyncio.shield(opening)
            now = clock()
            for c in calls:
                if conn is None:
                    c.error, c.last_byte = error, now
                else:
                    c.connected, c.tls_start = now, conn.tls_start
            return conn
        if conn is not None and conn.open:     # going away, its last streams still running
            self.retired = [c for c in self.retired if c.open] + [conn]
        opening = self.opening[slot] = self.loop.create_future()
        conn = None
        try:
            conn = self.kept[slot] = await self._connect(calls)
        finally:
            del self.opening[slot]
            opening.set_result((conn, calls[0].error or "closed"))
        return conn

    def _resumable(self, conn: Connection) -> None:
        """Keep ``conn``'s TLS session for the next connection (TLS 1.3 sends it after the
        handshake, so it is taken once an answer came); called only if ``resumes``."""
        self.tls_session = conn.tls.resumable() or self.tls_session

    def _headers(self, calls: list[Call]) -> list[list[tuple[str, str]]]:
        """The header fields of each request of ``calls`` of its own: its Referer,
        If-Modified-Since when it revalidates, and the session's cookies."""
        extras = []
        for call in calls:
            extra = [("Referer", call.referer)] if call.referer else []
            extra += call.extra
            if call.since is not None:
                extra.append(("If-Modified-Since", call.since))
            cookie = self.jar.header(call.url) if self.jar is not None else None
            extras.append(extra + [("Cookie", cookie)] if cookie else extra)
        return extras

    def _click_referer(self, page: int) -> str | None:
        """The previous page's URL when its HTML links to ``page`` (a followed link), else
        None (a typed address, a bookmark, the first click)."""
        if self.last_page is None or not self.referers:
            return None
        previous, url = self.last_page
        return self.t.absolute(url) if page in self.t.site.page_links[previous] else None

    def _upload(self, calls: list[Call], extras: list[list[tuple[str, str]]]) -> int:
        """The bytes the requests of ``calls`` put on the client's upload link: their HTTP/1.x
        form (HTTP/2's too: HPACK is not credited); 0 when the link is not paced (unused)."""
        if self.net.up is None:
            return 0
        return sum(len(self.t.request(c.url, self.http10, self.agent, x, c.method, c.body))
                   for c, x in zip(calls, extras))

    def _write(self, conn: Connection, calls: list[Call],
               extras: list[list[tuple[str, str]]]) -> list[asyncio.Future] | None:
        """Write the requests of ``calls`` on ``conn`` now: the futures of their answers; None
        when ``conn`` has stopped taking requests meanwhile (they end ``closed``, not sent)."""
        if not conn.accepting:
            now = clock()
            for c in calls:
                c.error, c.last_byte = "closed", now
                c.conn, c.reused = conn.id, conn.used > 0
            return None
        reqs = []                      # (a loop: a list comprehension is a call of its own)
        for c, x in zip(calls, extras):
            reqs.append(self.t.fields(c.url, self.agent, x, c.method) if self.p.http2 else
                        self.t.request(c.url, self.http10, self.agent, x, c.method, c.body))
        return conn.send(calls, reqs)

    def _timer(self, conn: Connection, calls: list[Call]) -> asyncio.TimerHandle:
        """The cap on the whole of each request of ``calls`` (``request_timeout``, when the
        run has one)."""
        left = min(c.start for c in calls) + self.t.request_timeout - clock()
        return self.loop.call_later(max(left, 0.0), conn.give_up, calls, "request_timeout")

    def _exchange(self, conn: Connection, calls: list[Call]) -> Awaitable[None] | None:
        """Write the requests of ``calls`` on ``conn`` after the emulated propagation and upload:
        what to await for their answers (the last one's future: answers come in order, a
        failure settles them all), None when ``conn`` took none. A plain function, so that a
        request with nothing to wait for costs no coroutine of its own."""
        extras = self._headers(calls)
        wait = self.net.send_delay(self._upload(calls, extras), _fresh(conn)) \
            if self.net.delays else 0.0
        if wait > 0:
            return self._delayed(wait, conn, calls, extras)
        return self._sent(conn, calls, extras)

    async def _delayed(self, wait: float, conn: Connection, calls: list[Call],
                       extras: list[list[tuple[str, str]]]) -> None:
        """``_exchange`` once the requests have crossed the emulated link (``wait`` s)."""
        await asyncio.sleep(wait)
        answer = self._sent(conn, calls, extras)
        if answer is not None:
            await answer

    def _sent(self, conn: Connection, calls: list[Call],
              extras: list[list[tuple[str, str]]]) -> asyncio.Future | None:
        """Write now: the future of the last answer, which ends the request timer too (also
        when the run's stop cancels it)."""
        futures = self._write(conn, calls, extras)
        if futures is None:
            return None
        if self.t.request_timeout is not None:
            timer = self._timer(conn, calls)
            futures[-1].add_done_callback(lambda _: timer.cancel())
        return futures[-1]

    async def _one_shot(self, call: Call) -> Call:
        """A request on a connection of its own (HTTP/1.0), and the redirects it leads to;
        returns the last request of the chain."""
        while True:
            call.start = clock()
            conn = await self._connect([call])
            if conn is not None:
                try:
                    answer = self._exchange(conn, [call])
                    if answer is not None:
                        await answer
                        if self.resumes:
                            self._resumable(conn)
                finally:                   # the run's stop too: no answer after it
                    conn.close()
            nxt = self._follow(call)
            self._done(call)
            if nxt is None:
                return call
            call = nxt

    async def _kept(self, slot: int, calls: list[Call], resent: bool = False) -> list[Call]:
        """Requests on kept-alive connection ``slot`` (pipelined together, or one at a time)
        and the redirects they lead to; returns the last request of each chain. What a reused
        connection left unanswered is sent once more on a new one (``resent``: ``calls`` are
        that second attempt). One coroutine for all of it: a click of one request awaits its
        answer's future with no coroutine between (three nested ones cost ~2 us a request)."""
        queue = [calls] if self.p.pipeline or len(calls) == 1 else [[c] for c in calls]
        finals = []
        while queue:
            batch = todo = queue.pop(0)
            if not resent:
                now = clock()
                for c in batch:
                    c.start = now
            for attempt in ((1,) if resent else (0, 1)):
                conn = self._open(slot) or await self._slot(slot, todo)
                if conn is None:
                    break
                answer = self._exchange(conn, todo)
                if answer is not None:
                    await answer
                    if self.resumes:
                        self._resumable(conn)
                stale = [] if attempt else _stale(todo)
                if not stale:
                    break
                for c in stale:
                    c.retry()
                todo = stale
            resent = False
            follows = []
            for c in batch:
                nxt = self._follow(c)
                self._done(c)
                if nxt is None:
                    finals.append(c)
                else:
                    follows.append(nxt)
            if follows:
                queue[:0] = [follows] if self.p.pipeline else [[f] for f in follows]
        return finals

    async def _streams(self, objs: list[Call]) -> list[Call]:
        """HTTP/2: a page's objects as concurrent streams of its connection, each as ``_kept``
        fetches it (its request leaves after its upload and half a round trip; sent once more
        on a new connection if the reused one took it and closed; its redirects followed), but
        without a task each until it needs one: the streams that end are settled together as
        the answers come (a task per object cost 17 of the engine's 75 µs per request in
        protocols_bench part 2). Returns the last request of each chain."""
        now = clock()
        for c in objs:
            c.start = now
        conn = self._open(0) or await self._slot(0, objs)
        if conn is None:
            for c in objs:
                self._done(c)
            return objs
        ended = _Ended(self.loop)
        extras = self._headers(objs)
        fresh = _fresh(conn)
        due: dict[float, list[int]] = {}
        for i, (c, x) in enumerate(zip(objs, extras)):
            wait = self.net.send_delay(self._upload([c], [x]), fresh) if self.net.delays else 0.0
            fresh = fresh and wait > 0         # (a request written makes the connection used)
            due.setdefault(wait, []).append(i)
        timers: list[asyncio.TimerHandle] = []
        chains: list[Call | asyncio.Task] = list(objs)
        try:
            for wait, idx in due.items():
                if wait > 0:
                    timers.append(self.loop.call_later(wait, ended.later, self._put, conn, objs,
                                                       extras, idx, ended, timers))
                else:
                    self._put(conn, objs, extras, idx, ended, timers)
            for _ in objs:
                i = await ended.next()
                chains[i] = self._went_on(objs[i])
            if self.resumes:
                self._resumable(conn)
            return [c if isinstance(c, Call) else (await c)[0] for c in chains]
        except asyncio.CancelledError:         # the run stops: so do the chains gone on
            for t in timers:                   # (no request written while they end)
                t.cancel()
            tasks = [t for t in chains if isinstance(t, asyncio.Task)]
            for t in tasks:
                t.cancel()
            if tasks:
                await asyncio.wait(tasks)
            raise
        finally:
            for t in timers:
                t.cancel()

    def _put(self, conn: Connection, objs: list[Call], extras: list[list[tuple[str, str]]],
             idx: list[int], ended: _Ended, timers: list[asyncio.TimerHandle]) -> None:
        """``_streams``: write the requests of ``objs`` at ``idx``; each ends in ``ended``."""
        calls = [objs[i] for i in idx]
        futures = self._write(conn, calls, [extras[i] for i in idx])
        if futures is None:
            for i in idx:
                ended.add(i)
            return
        for i, fut in zip(idx, futures):
            fut.add_done_callback(partial(ended.add, i))
        if self.t.request_timeout is not None:
            timers.append(self._timer(conn, calls))

    def _went_on(self, call: Call) -> Call | asyncio.Task:
        """``_streams``: ``call``'s stream ended: the call settled, or the task that goes on
        with it (sent once more, or redirected; its result the last request of the chain)."""
        if _stale([call]):
            call.retry()
            return self.loop.create_task(self._kept(0, [call], resent=True))
        nxt = self._follow(call)
        self._done(call)
        return call if nxt is None else self.loop.create_task(self._kept(0, [nxt]))

    # ---- a click -----------------------------------------------------------------------------
    async def visit(self, page: int, intended: float, view: int = 0,
                    marks: dict[int, int] | None = None, pace: Pace | None = None,
                    url: str | None = None, click: int = 0) -> PageVisit:
        """A click: ``page`` (at ``url``, a template page's concrete URL; else the page's, with
        the page's method) and the objects of its ``view`` (``SiteSpec.view``); ``marks``:
        position (0: the page) → the status the request asks to be answered with
        (``ScenarioSession.marks``, ``site.status_url``); ``pace``: when the objects are due
        after the page's request (none before; ``_paced``); ``click``: its index in the
        session (the stream of its form's follow-up, ``_modeled``)."""
        site = self.t.site
        form = self._form_page(page) if self.script is not None else None
        if form is not None:        # the page a form is sent from, opened first (from cache)
            opened = await self.visit(form[0], intended, site.cached_view(form[0]), url=form[1])
            intended = opened.done if opened.done is not None else clock()
        self.page_calls, self.click = [], click
        fetch = self.t.view(page, view)
        drawn = (marks or {}).get(0, 200 if self.t.statuses_drawn else None) \
            if self.script is not None else None                 # for the script
        marks = marks if marks and self.t.status_marks else {}
        own = url or site.page_urls[page]
        if not fetch.page_absent:
            html = self._new(page, self.t.path(_marked(own, 0, marks)), True, intended, 0,
                             self._click_referer(page))     # (positional: a faster call)
            html.method = site.page_methods[page]
            failed = self.script is not None and self._scripted(html, own, marks, drawn)
        objs = self._objects_of(page, fetch, marks) if fetch.objects else []
        visit = self.visit_now = PageVisit(self.session, self.cls, page, intended, clock(),
                                           None, None, None, len(objs))   # (its objects)
        if fetch.page_absent:
            return await self._cached(visit, objs, fetch.objects, own, pace)
        html.asked = marks.get(0)
        if fetch.page_revalidated:
            html.since = LAST_MODIFIED
        if failed:
            final = html
        else:
            final = await self._one_shot(html) if self.http10 else \
                (await self._kept(0, [html]))[0]
        visit.start = html.start
        visit.html_first_byte, visit.done = final.first_byte, final.last_byte
        if final.error is not None:
            for c in objs:
                c.error, c.intended = SKIPPED, final.last_byte    # when they would have been due
                self._done(c)
        elif objs:
            await self._embedded(visit, objs, fetch.objects, final.url, html.start,
                                 final.last_byte, pace)
        return self._ended(visit, final.url if final.error is None else None)

    def _objects_of(self, page: int, fetch: PageView, marks: dict[int, int]) -> list[Call]:
        """The requests of a click's embedded objects (``fetch``'s), in order."""
        site = self.t.site
        objs = [self._new(page, self.t.path(_marked(site.object_urls[o], k, marks)), False,
                          None) for k, o in enumerate(fetch.objects, start=1)]
        for k, (c, o) in enumerate(zip(objs, fetch.objects), start=1):
            c.method = site.object_methods[o]
            c.asked = marks.get(k)
        for i in fetch.revalidated:
            objs[i].since = LAST_MODIFIED
        return objs

    async def _cached(self, visit: PageVisit, objs: list[Call], objects: tuple[int, ...],
                      own: str, pace: Pace | None) -> PageVisit:
        """A click on a page the browser shows from its cache: the view's objects alone, due
        from the click, naming the page as their Referer, as a browser asks for what its cache
        lacks; the page becomes the one the next click leaves."""
        document = self.t.path(own)
        await self._embedded(visit, objs, objects, document, visit.intended, visit.intended,
                             pace)
        visit.start = min((c.start for c in objs if c.start is not None), default=visit.start)
        return self._ended(visit, document)

    async def _embedded(self, visit: PageVisit, objs: list[Call], objects: tuple[int, ...],
                        document: str, since: float, after: float, pace: Pace | None) -> None:
        """A click's objects, none before ``after``, each due ``pace`` after ``since``, named
        by ``document`` (their Referer); the visit's end and its last object's first byte."""
        referer = self.t.absolute(document) if self.t.identity else None
        due = [since + d for d in pace(objects)] if pace is not None else []
        for k, c in enumerate(objs):
            c.intended = max(after, due[k]) if due else after
            c.referer = referer
        finals = await (self._paced(objs) if due and due[-1] > after else self._objects(objs))
        visit.done = max((c.last_byte for c in finals if c.last_byte is not None), default=None)
        visit.last_object_first_byte = max(
            (c.first_byte for c in finals if c.first_byte is not None), default=None)

    def _ended(self, visit: PageVisit, url: str | None) -> PageVisit:
        """A click over: ``url`` (None: the page failed) the page the next click leaves."""
        if url is not None:
            self.last_page = (visit.page, url)
        if self.p.close_after_page:
            self.close()
        self._page_done(visit)
        return visit

    def _form_page(self, page: int) -> tuple[int, str] | None:
        """The page (and URL) the script says ``page`` is sent from, when the session is not
        on it (a script's missing value: None, and ``page`` fails as it would)."""
        try:
            return self.script.before(page, self.last_page)
        except Failure:
            return None

    def _scripted(self, html: Call, url: str, marks: dict[int, int], drawn: int | None) -> bool:
        """The script's URL values, body, header fields and answer reading for ``html``
        (``marks``: its click's, ``visit``; ``drawn``: the status the scenario drew for it,
        200 for content, None when it drew none); True when the script failed it before it
        was sent (settled now: ``script_error``)."""
        try:
            asked, html.body, html.extra, reads = self.script.request(html.page, url, drawn)
            if asked != url:
                html.url = self.t.path(_marked(asked, 0, marks))
        except Failure as e:
            html.start = html.last_byte = clock()
            html.error = e.kind
            self.t.hooks.emit("script_failed", html, str(e))
            self._done(html)
            return True
        if reads:
            html.answer = Answer(drawn=drawn)
        return False

    async def prelude(self) -> float | None:
        """The script's start pages, before the session's first click (a login), one after
        the other; when the last ended (None: there are none)."""
        ended = None
        for page in self.script.start if self.script is not None else ():
            visit = await self.visit(page, clock() if ended is None else ended)
            ended = visit.done if visit.done is not None else clock()
        return ended

    async def _paced(self, objs: list[Call]) -> list[Call]:
        """A page's objects in waves: those due by now (``Call.intended``, in order) fetched
        together as the protocol fetches objects, then the next ones once due."""
        finals: list[Call] = []
        i = 0
        while i < len(objs):
            wait = objs[i].intended - clock()
            if wait > 0:
                await asyncio.sleep(wait)
            now = clock()
            j = i + 1
            while j < len(objs) and objs[j].intended <= now:
                j += 1
            finals += await self._objects(objs[i:j])
            i = j
        return finals

    async def _objects(self, objs: list[Call]) -> list[Call]:
        """A page's embedded objects as the protocol fetches them; the last call of each."""
        k = max(1, self.p.connections)
        if self.http10:
            gate = asyncio.Semaphore(k)

            async def limited(c: Call) -> Call:
                async with gate:
                    return await self._one_shot(c)
            return list(await asyncio.gather(*(limited(c) for c in objs)))
        if self.p.pipeline:
            return await self._kept(0, objs)
        if self.p.http2:               # every object a stream of its own (the connection queues)
            return await self._streams(objs)
        parts = await asyncio.gather(*(self._kept(i, objs[i::k]) for i in range(min(k, len(objs)))))
        return [c for part in parts for c in part]

    def _page_done(self, visit: PageVisit) -> None:
        errors = 0                      # failed; the stop's cuts are not
        for c in self.page_calls:
            if c.error is not None and c.error not in UNFINISHED:
                errors += 1
        visit.errors = errors
        self.visit_now, self.page_calls = None, []
        for fn in self.t.hooks.page_done:      # (as ``_done``)
            fn(visit)

    # ---- the run stops -----------------------------------------------------------------------
    def abandon(self, at: float | None = None) -> list[Call]:
        """The run stopped at ``at`` (None: now): what was issued ends ``in_flight``, settled at
        the stop (at its start if it began later, when the loop reached this session after
        the stop: a loaded loop ends 256 sessions over a second), what was not
        ``not_started``; the page in progress ends then; the connections close. Returns the
        requests so settled, which ``record_stop`` records when the loop has the time."""
        stop = clock() if at is None else at
        for c in self.open:
            if c.start is not None:
                c.error, c.last_byte = IN_FLIGHT, max(stop, c.start)
            else:
                c.error = NOT_STARTED
        cut, self.open = list(self.open), {}
        if self.visit_now is not None:
            self.visit_now.done = max(stop, self.visit_now.start)
        self.close()
        return cut

    def record_stop(self, cut: list[Call], clicks: list[tuple[int, int, str]]) -> int:
        """Record ``cut`` (what ``abandon`` settled) and, ``not_started``, the ``clicks``
        (page, view, URL) the run stopped before; returns how many requests that is."""
        for c in cut:
            self.t.hooks.emit("call_done", c)
        if self.visit_now is not None:
            self._page_done(self.visit_now)
        return len(cut) + sum(self.not_started(*click) for click in clicks)

    def not_started(self, page: int, view: int = 0, url: str | None = None) -> int:
        """A click the run stopped before: its page (at ``url``, as ``visit``) and its view's
        objects end ``not_started``; returns how many requests that is."""
        site = self.t.site
        urls = [(url or site.page_urls[page], site.page_methods[page], True)] + [
            (site.object_urls[o], site.object_methods[o], False)
            for o in site.view(page, view).objects]
        for u, method, is_page in urls:
            call = self._call(page, self.t.path(u), is_page, None)
            call.method = method
            call.error = NOT_STARTED
            self.t.hooks.emit("call_done", call)
        return len(urls)

    def close(self) -> None:
        for i, conn in enumerate(self.kept):
            if conn is not None:
                conn.close()
                self.kept[i] = None
        for conn in self.retired:
            conn.close()
        self.retired = []
