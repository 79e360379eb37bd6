"""Session scheduling: absolute start times, never waiting on the server.

Sessions are read from the scenario as they come due and started with ``loop.call_at`` at
t0 + start — an absolute deadline, so no drift builds up the way chained relative sleeps drift.
A session whose time has passed is started at once and its lag recorded (Stats counts it late).
Inside a session the model is closed: the next click waits for the page to complete and then for
the think time. Session starts never wait on the server (S-Client: otherwise the generator can
never overload it).
"""
from __future__ import annotations

import asyncio
from typing import Iterable

from ..formats.classes import ClientClass, Protocol
from ..formats.scenario import ScenarioSession
from .browser import Client, Target
from .events import Hooks, clock

__all__ = ["Scheduler", "class_override"]

LOOKAHEAD = 0.05          # sessions are handed to the loop's timers this long before they start


class Scheduler:
    """Starts the sessions of ``sessions`` on time and runs each as a task. Times are on
    ``events.clock``; the loop's timers are given them through the measured skew."""

    def __init__(self, target: Target, classes: list[ClientClass], sessions: Iterable[ScenarioSession],
                 t0: float, stop: asyncio.Event, hooks: Hooks) -> None:
        self.target, self.classes, self.sessions = target, classes, sessions
        self.t0, self.stop, self.hooks = t0, stop, hooks
        self.loop = asyncio.get_running_loop()
        self.skew = 0.0                              # clock() = loop.time() + skew, set in run()
        self.tasks: set[asyncio.Task] = set()
        self.scheduled = 0
        self.finished = 0

    @property
    def active(self) -> int:
        return len(self.tasks)

    async def run(self) -> None:
        """Schedule every session, then wait for them (or for ``stop``)."""
        await asyncio.sleep(0)           # a fresh loop iteration: loop.time() is not stale now
        self.skew = clock() - self.loop.time()
        for s in self.sessions:
            due = self.t0 + s.start
            wait = due - LOOKAHEAD - clock()
            if wait > 0:
                try:
                    await asyncio.wait_for(self.stop.wait(), wait)
                except asyncio.TimeoutError:
                    pass
            if self.stop.is_set():
                break
            self.scheduled += 1
            self.loop.call_at(due - self.skew, self._spawn, s, due)
        waiter = asyncio.ensure_future(self.stop.wait())
        while (self.tasks or self._pending_timers()) and not self.stop.is_set():
            pending = set(self.tasks) | {waiter}
            await asyncio.wait(pending, timeout=0.1, return_when=asyncio.FIRST_COMPLETED)
        waiter.cancel()
        if self.stop.is_set():
            for t in list(self.tasks):
                t.cancel()
            await asyncio.gather(*self.tasks, return_exceptions=True)

    def _pending_timers(self) -> bool:
        """Sessions handed to the loop's timers that have not started yet."""
        return self.finished + len(self.tasks) < self.scheduled

    def _spawn(self, s: ScenarioSession, due: float) -> None:
        if self.stop.is_set():
            self.finished += 1
            return
        self.hooks.emit("session_start", s.id, due, clock())
        task = self.loop.create_task(self._session(s, due))
        self.tasks.add(task)
        task.add_done_callback(self._done)

    def _done(self, task: asyncio.Task) -> None:
        self.tasks.discard(task)
        self.finished += 1

    async def _session(self, s: ScenarioSession, due: float) -> None:
        cc = self.classes[s.cls]
        client = Client(self.target, s.id, s.cls, cc.network, cc.protocol, self.loop)
        completed = False
        try:
            intended = previous_done = due
            for k, (page, think) in enumerate(s.clicks):
                if k:
                    intended = previous_done + think
                    delay = intended - clock()
                    if delay > 0:
                        await asyncio.sleep(delay)
                visit = await client.visit(page, intended)
                previous_done = visit.done if visit.done is not None else clock()
            completed = True
        finally:
            client.close()
            self.hooks.emit("session_end", s.id, completed)


def class_override(classes: list[ClientClass], protocol: Protocol | None) -> list[ClientClass]:
    """Every class with its protocol replaced (``--protocol``)."""
    if protocol is None:
        return classes
    return [ClientClass(c.name, c.weight, c.network, protocol) for c in classes]
