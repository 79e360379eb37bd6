"""The core's events and what they carry; statistics and recorders subscribe, the core never
knows who listens (httperf's design: core, workload generator and collectors apart)."""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable

__all__ = ["Call", "PageVisit", "Hooks", "clock", "NOT_STARTED", "IN_FLIGHT", "SKIPPED",
           "UNFINISHED"]

#: every timestamp the engine records: CLOCK_MONOTONIC at full resolution. (uvloop's loop.time()
#: is libuv's cached millisecond clock: fine for timers, too coarse to measure with.)
clock = time.perf_counter

NOT_STARTED = "not_started"     # the run stopped before the request was issued
IN_FLIGHT = "in_flight"         # issued, and not complete when the run stopped
SKIPPED = "skipped"             # an object of a page whose HTML failed (never learnt of)
UNFINISHED = (IN_FLIGHT, NOT_STARTED)   # outcomes of the run's stop, not of the server


class Call:
    """One HTTP request and its outcome, timed on ``clock`` (seconds). ``start`` is when the
    browser issued it (before any connect); ``tls_start`` when the TLS handshake of the
    connection it opened began (the TCP handshake done; None without TLS or a new connection);
    ``last_byte`` when its outcome was settled (the last byte, or the error); ``error`` None for
    a success; ``number`` its number in its session (the results' ``request``: with the
    session, a key no other row has)."""

    __slots__ = ("session", "cls", "page", "url", "is_page", "intended", "start", "connect_start",
                 "tls_start", "connected", "first_byte", "last_byte", "status", "bytes", "error",
                 "conn", "reused", "retried", "location", "hops", "referer", "set_cookie",
                 "since", "asked", "number", "method", "body", "extra", "answer")

    def __init__(self, session: int, cls: int, page: int, url: str, is_page: bool,
                 intended: float | None, hops: int = 0, referer: str | None = None,
                 number: int = 0) -> None:
        self.session, self.cls, self.page, self.url = session, cls, page, url
        self.number = number
        self.method = "GET"             # its page's (a template page's may be another)
        self.body: bytes | None = None  # what it sends after its header (a script's)
        self.extra: list[tuple[str, str]] = []   # header fields of its own (a script's)
        self.answer = None              # a script's Answer: the answer kept for it to read
        self.is_page, self.intended, self.hops, self.referer = is_page, intended, hops, referer
        self.since: str | None = None   # If-Modified-Since: a revalidation (answered 304)
        self.asked: int | None = None   # the status the scenario marks it for (not an error)
        self.start = self.connect_start = self.tls_start = self.connected = None
        self.first_byte = self.last_byte = None
        self.status = 0
        self.bytes = 0
        self.error: str | None = None
        self.conn = -1
        self.reused = False
        self.retried = False
        self.location: bytes | None = None      # a redirect's Location header
        self.set_cookie: list[bytes] | None = None   # the answer's Set-Cookie values

    def retry(self) -> None:
        """Forget an attempt that got no answer byte: the request is sent again (once)."""
        self.error = self.first_byte = self.last_byte = self.location = self.set_cookie = None
        self.bytes = self.status = 0
        self.retried = True


@dataclass(slots=True)
class PageVisit:
    """A click: the page and its embedded objects, from the user's point of view."""

    session: int
    cls: int
    page: int
    intended: float                  # when the click should have happened
    start: float                     # when its first request was issued
    html_first_byte: float | None = None
    done: float | None = None        # last byte of the HTML or of the last object
    last_object_first_byte: float | None = None
    objects: int = 0
    errors: int = 0                  # its requests (redirects included) that failed (not those
                                     # the run's stop cut off: in_flight, not_started)

    @property
    def response_time(self) -> float | None:
        return None if self.done is None else self.done - self.start

    @property
    def html_latency(self) -> float | None:
        """Click to first byte of the last embedded object (WAGON's user-perceived latency);
        the HTML's first byte for pages without objects."""
        end = self.last_object_first_byte if self.objects else self.html_first_byte
        return None if end is None else end - self.start


@dataclass
class Hooks:
    """Subscriber lists, one per event."""

    session_start: list[Callable[[int, float, float], None]] = field(default_factory=list)
    session_end: list[Callable[[int, bool], None]] = field(default_factory=list)
    #: the run stopped (its clock time): what the stop settles is placed there
    run_stop: list[Callable[[float], None]] = field(default_factory=list)
    connection_open: list[Callable[[int, float], None]] = field(default_factory=list)
    #: a connection's TLS handshake: its id, seconds, whether the session was resumed
    tls_handshake: list[Callable[[int, float, bool], None]] = field(default_factory=list)
    connection_close: list[Callable[[int], None]] = field(default_factory=list)
    call_done: list[Callable[[Call], None]] = field(default_factory=list)
    page_done: list[Callable[[PageVisit], None]] = field(default_factory=list)
    #: a request a user's script failed (its kind is the call's error), and why
    script_failed: list[Callable[[Call, str], None]] = field(default_factory=list)

    def emit(self, event: str, *args) -> None:
        for fn in getattr(self, event):
            fn(*args)
