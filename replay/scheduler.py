"""Session scheduling: absolute start times, never waiting on the server.

Sessions are read from the scenario as they come due and started with ``loop.call_at`` at
t0 + start — an absolute deadline, so no drift builds up the way chained relative sleeps drift.
A session whose time has passed is started at once and its lag recorded (Stats counts it late).
Inside a session the model is closed: the next click waits for the page to complete and then for
the think time. Session starts never wait on the server (S-Client: otherwise the generator can
never overload it). With ``pace``, a click's objects are asked for no earlier than their due
times after the page (the scenario's ``object_delays``: as the log placed them).

Each wake-up costs O(1): a finished session decrements a count, and the run waits on one future
that the last session resolves (never on the set of every running task). When the run stops,
every session due by then ends with all its requests recorded: running sessions settle what
they had issued (``in_flight``) and what they had not (``not_started``); sessions due but not
yet started record all their requests as ``not_started``.
"""
from __future__ import annotations

import asyncio
from typing import Callable, Iterable

from ..formats.classes import ClientClass, parse_protocol
from ..formats.scenario import ScenarioSession
from .browser import Client, Pace, Target
from .events import Call, Hooks, clock

__all__ = ["Scheduler", "class_override"]

LOOKAHEAD = 0.05          # sessions are handed to the loop's timers this long before they start
CANCEL_SLICE = 100        # running sessions ended per turn of the loop when the run stops
UNPLAYED_SLICE = 2_000    # the ended sessions' requests recorded per turn of the loop after it


class Scheduler:
    """Starts the sessions of ``sessions`` on time and runs each as a task. Times are on
    ``events.clock``; the loop's timers are given them through the measured skew."""

    def __init__(self, target: Target, classes: list[ClientClass],
                 sessions: Iterable[ScenarioSession], t0: float, hooks: Hooks,
                 pace: Callable[[int], Pace] | None = None) -> None:
        self.target, self.classes, self.sessions = target, classes, iter(sessions)
        self.pace = pace                             # session id → when its objects are due
        self.t0, self.hooks = t0, hooks
        self.loop = asyncio.get_running_loop()
        self.skew = 0.0                              # clock() = loop.time() + skew, set in run()
        self.stopped = self.loop.create_future()     # its result: why the run stopped
        self.stop_at: float | None = None
        self.tasks: set[asyncio.Task] = set()
        self.clicking: set[asyncio.Task] = set()     # the sessions with a click in flight
        self.unplayed: list[tuple[Client, list[Call], list[tuple[int, int]]]] = []  # to record
        self.scheduled = 0
        self.finished = 0
        self._fed = False
        self._idle: asyncio.Future | None = None

    @property
    def active(self) -> int:
        return len(self.tasks)

    def halt(self, why: str) -> None:
        """Stop the run: no more sessions start; the running ones end, recording everything."""
        if not self.stopped.done():
            self.stop_at = clock()
            self.stopped.set_result(why)
            self.hooks.emit("run_stop", self.stop_at)

    async def run(self) -> None:
        """Schedule every session, then wait for them (or for ``halt``)."""
        await asyncio.sleep(0)           # a fresh loop iteration: loop.time() is not stale now
        self.skew = clock() - self.loop.time()
        for s in self.sessions:
            due = self.t0 + s.start
            wait = due - LOOKAHEAD - clock()
            if wait > 0:
                await asyncio.wait((self.stopped,), timeout=wait)
            if self.stopped.done():
                self._not_started(s, due)
                break
            self.scheduled += 1
            self.loop.call_at(due - self.skew, self._spawn, s, due)
        self._fed = True
        if not self._all_done():
            self._idle = self.loop.create_future()
            await asyncio.wait((self._idle, self.stopped), return_when=asyncio.FIRST_COMPLETED)
        if self.stopped.done():
            await asyncio.sleep(0)       # sessions overdue in the loop's timers record now
            for s in self.sessions:      # due by the stop but never read (a lagging loop)
                if not self._not_started(s, self.t0 + s.start):
                    break
            await self._cancel_all()

    async def _cancel_all(self) -> None:
        """End the running sessions, and wait for any that take more than their turn: those
        with a click in flight at once (a click left running would ask for its page's objects
        and follow its redirects after the stop), the others CANCEL_SLICE per turn of the
        loop: 10,000 held sessions ended at once stopped the loop for 0.26-0.37 s (26-40 µs
        each to record and close), and gathering them 0.15 s more. A session whose turn has
        not come starts no click meanwhile (``_session``)."""
        clicking = list(self.clicking)
        others = [t for t in self.tasks if t not in self.clicking]
        tasks = clicking + others
        for part in [clicking] + [others[k:k + CANCEL_SLICE]
                                  for k in range(0, len(others), CANCEL_SLICE)]:
            for t in part:
                t.cancel()
            await asyncio.sleep(0)       # the part's sessions end in this turn
        left = [t for t in tasks if not t.done()]
        if left:
            await asyncio.wait(left)
        await self._record_unplayed()

    async def _record_unplayed(self) -> None:
        """Record what the ended sessions had issued and had not, UNPLAYED_SLICE requests per
        turn of the loop: 2,500 sessions stopped amid a click of five (65 requests each)
        recorded 160,000 rows in the turn that ended them and stopped the loop 50-90 ms."""
        rows = 0
        for client, cut, clicks in self.unplayed:
            rows += client.record_stop(cut, clicks)
            if rows >= UNPLAYED_SLICE:
                rows = 0
                await asyncio.sleep(0)
        self.unplayed = []

    def _all_done(self) -> bool:
        return self._fed and self.finished == self.scheduled

    def _spawn(self, s: ScenarioSession, due: float) -> None:
        if self.stopped.done():
            self._not_started(s, due)
            self._finished()
            return
        self.hooks.emit("session_start", s.id, due, clock())
        task = self.loop.create_task(self._session(s, due))
        self.tasks.add(task)
        task.add_done_callback(self._done)

    def _done(self, task: asyncio.Task) -> None:
        self.tasks.discard(task)
        self.clicking.discard(task)
        self._finished()

    def _finished(self) -> None:
        self.finished += 1
        if self._idle is not None and not self._idle.done() and self._all_done():
            self._idle.set_result(None)

    def _client(self, s: ScenarioSession) -> Client:
        cc = self.classes[s.cls]
        return Client(self.target, s.id, s.cls, cc.network, cc.protocol, self.loop, s.agent)

    def _not_started(self, s: ScenarioSession, due: float) -> bool:
        """A session the run stopped before: its requests end ``not_started`` when it was due
        by the stop (it belonged to the run). Returns whether it was."""
        if self.stop_at is None or due > self.stop_at:
            return False
        client = self._client(s)
        for k, (page, _) in enumerate(s.clicks):
            client.not_started(page, s.view(k), s.own_url(k))
        return True

    async def _session(self, s: ScenarioSession, due: float) -> None:
        client = self._client(s)
        pace = self.pace(s.id) if self.pace is not None else None
        me = asyncio.current_task()
        completed = False
        begun = 0                                    # clicks whose page was asked for
        try:
            self.clicking.add(me)
            ended = await client.prelude()       # a script's start pages (a login)
            self.clicking.discard(me)
            intended = previous_done = due if ended is None else ended
            for k, (page, think) in enumerate(s.clicks):
                if k:
                    intended = previous_done + think
                    delay = intended - clock()
                    if delay > 0:
                        await asyncio.sleep(delay)
                if self.stopped.done():      # stopped while it thought, before its turn to end
                    raise asyncio.CancelledError
                begun = k + 1
                self.clicking.add(me)
                visit = await client.visit(page, intended, s.view(k),
                                           s.marks(k) if s.statuses else None, pace,
                                           s.own_url(k), k)  # (marks: a dict made per call)
                self.clicking.discard(me)
                previous_done = visit.done if visit.done is not None else clock()
            completed = True
        except asyncio.CancelledError:
            self.unplayed.append((client, client.abandon(self.stop_at),
                                  [(page, s.view(k), s.own_url(k))
                                   for k, (page, _) in enumerate(s.clicks) if k >= begun]))
            raise
        finally:
            client.close()
            self.hooks.emit("session_end", s.id, completed)


def class_override(classes: list[ClientClass], protocol: str | None) -> list[ClientClass]:
    """The classes as played: each with ``protocol`` (``--protocol``'s text) over its own, or
    as they are without one (None). ClassError for a protocol wagon does not know, "" too."""
    if protocol is None:
        return classes
    played = parse_protocol(protocol)
    return [ClientClass(c.name, c.weight, c.network, played) for c in classes]
