"""The core's events and what they carry; statistics and recorders subscribe, the core never
knows who listens (httperf's design: core, workload generator and collectors apart)."""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable

__all__ = ["Call", "PageVisit", "Hooks", "clock"]

#: every timestamp the engine records: CLOCK_MONOTONIC at full resolution. (uvloop's loop.time()
#: is libuv's cached millisecond clock: fine for timers, too coarse to measure with.)
clock = time.perf_counter


class Call:
    """One HTTP request and its response, timed on the loop's monotonic clock (seconds)."""

    __slots__ = ("session", "cls", "page", "url", "is_page", "intended", "start", "connect_start",
                 "connected", "first_byte", "last_byte", "status", "bytes", "error", "conn",
                 "reused")

    def __init__(self, session: int, cls: int, page: int, url: str, is_page: bool,
                 intended: float) -> None:
        self.session, self.cls, self.page, self.url = session, cls, page, url
        self.is_page, self.intended = is_page, intended
        self.start = self.connect_start = self.connected = None
        self.first_byte = self.last_byte = None
        self.status = 0
        self.bytes = 0
        self.error: str | None = None
        self.conn = -1
        self.reused = False


@dataclass
class PageVisit:
    """A click: the page and its embedded objects, from the user's point of view."""

    session: int
    cls: int
    page: int
    intended: float                  # when the click should have happened
    start: float                     # when its first request was sent
    html_first_byte: float | None = None
    done: float | None = None        # last byte of the HTML or of the last object
    last_object_first_byte: float | None = None
    objects: int = 0
    errors: int = 0

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
    connection_open: list[Callable[[int], None]] = field(default_factory=list)
    call_done: list[Callable[[Call], None]] = field(default_factory=list)
    page_done: list[Callable[[PageVisit], None]] = field(default_factory=list)

    def emit(self, event: str, *args) -> None:
        for fn in getattr(self, event):
            fn(*args)
