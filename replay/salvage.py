"""What a run keeps of a process that died: its statistics, rebuilt from the rows it wrote.

A replay worker writes its rows to its part files at least once a second
(``record.CsvRecorder``). When it dies without sending its statistics (SIGKILL, out of memory),
or the parent dies before merging the parts (``recover``), those rows are what remains.
``settle_part`` completes them and counts them:

- a line cut by the death is dropped (it was never a row);
- every request of the process' sessions that were due by ``due_by`` (the run's seconds) and
  have no row gets one, ``not_started``: what the process had not yet written (at most its
  last second) is counted as not started, as a stopped run counts its unstarted requests;
- the rows are fed to a fresh ``Stats`` as the engine's events would have been, so the summary
  counts exactly the rows the CSV holds. What rows cannot tell (session start lag, event-loop
  lag) is left out of the histograms.
"""
from __future__ import annotations

import csv
import io
import os
from collections import Counter

from ..formats.results import (PAGE_COLUMNS, REQUEST_COLUMNS, ResultsError, ResultsWriter,
                               checked_frame)
from ..formats.scenario import Scenario
from .events import NOT_STARTED, UNFINISHED, Call, PageVisit
from .record import Stats

__all__ = ["settle_part", "cut_partial_line", "last_recorded"]


def cut_partial_line(f) -> None:
    """Truncate the binary file ``f`` after its last newline (a writer killed mid-line)."""
    end = f.seek(0, os.SEEK_END)
    pos = end
    while pos > 0:
        step = min(pos, 1 << 16)
        f.seek(pos - step)
        nl = f.read(step).rfind(b"\n")
        if nl >= 0:
            f.truncate(pos - step + nl + 1)
            return
        pos -= step
    f.truncate(0)


def _rows(path: str, columns: dict[str, str]) -> list[dict]:
    """The complete rows of a part file, cut after its last newline first; ResultsError (one
    line, the file's line and field) for a row the results reader refuses (every rule of the
    format): a part damaged by other means than a death mid-write."""
    if not os.path.exists(path):
        return []
    with open(path, "r+b") as f:
        cut_partial_line(f)
        f.seek(0)
        body = f.read()
    checked_frame(path, (",".join(columns) + "\r\n").encode() + body, first_line=1,
                  say="a damaged part file ({}); it cannot be recovered")
    text = io.StringIO(body.decode("utf-8"), newline="")
    return list(csv.DictReader(text, fieldnames=list(columns)))


def _known_classes(path: str, rows: list[dict], names: set[str]) -> None:
    """ResultsError (one line, the part file's line) for a row whose class the scenario does
    not have."""
    line = next((k for k, r in enumerate(rows, 1) if r["class"] not in names), None)
    if line is not None:
        raise ResultsError(f"{path}:{line}: a damaged part file (class {rows[line - 1]['class']!r}"
                           " is not a class of the run's scenario); it cannot be recovered")


def last_recorded(paths: list[str]) -> float:
    """The latest time the request files ``paths`` record (0 when they hold no row): when
    the processes that wrote them were last heard of."""
    times = [float(r[c]) for p in paths for r in _rows(p, REQUEST_COLUMNS)
             for c in ("start", "last_byte") if r[c]]
    return max(times, default=0.0)


def _t(x: str) -> float | None:
    return float(x) if x else None


def _missing(sc: Scenario, share: tuple[int, int], due_by: float, prefix: str,
             rows: list[dict]) -> list[tuple]:
    """Rows for the requests of the share's due sessions, and of every session it has a row of
    (a session may start a little ahead of its time, after the last time recorded), that have
    none (``not_started``), numbered after the session's last recorded request."""
    worker, n = share
    seen = Counter((int(r["session"]), int(r["page"]), r["url"]) for r in rows)
    numbered = Counter()                                 # session → requests numbered
    for r in rows:
        numbered[int(r["session"])] = max(numbered[int(r["session"])], int(r["request"]) + 1)
    begun = {int(r["session"]) for r in rows}           # not yet completed below
    names = [c.name for c in sc.classes]
    site, out = sc.site, []
    for s in sc.sessions():
        if s.start > due_by and s.id not in begun:
            if not begun:
                break
            continue
        begun.discard(s.id)
        if n > 1 and s.id % n != worker:
            continue
        for k, (page, _) in enumerate(s.clicks):
            for url, kind in [(s.url(k, site), "page")] + [
                    (site.object_urls[o], "object") for o in site.view(page, s.view(k)).objects]:
                key = (s.id, page, prefix + url)
                if seen[key] > 0:
                    seen[key] -= 1
                    continue
                out.append(_not_started(s.id, names[s.cls], page, prefix + url, kind,
                                        numbered[s.id], site.page_methods[page]
                                        if kind == "page" else "GET"))
                numbered[s.id] += 1
    return out


def _not_started(session: int, cls: str, page: int, url: str, kind: str, number: int,
                 method: str) -> tuple:
    """A request row (in REQUEST_COLUMNS' order) for a request that was never issued."""
    row = dict.fromkeys(REQUEST_COLUMNS, "")
    row.update({"session": session, "class": cls, "page": page, "url": url, "kind": kind,
                "conn": -1, "reused": 0, "retried": 0, "status": 0, "bytes": 0,
                "error": NOT_STARTED, "request": number, "method": method})
    return tuple(row.values())


def _stats(requests: list[dict], pages: list[dict], window: tuple[float, float | None]
           ) -> Stats:
    """A ``Stats`` of the rows (times are the run's seconds: t0 is 0) over the measured
    ``window``."""
    stats = Stats(0.0, window)
    opened: dict[int, tuple[float, float | None]] = {}    # conn → (opened at, connect time)
    closed: dict[int, float] = {}
    unfinished: set[int] = set()
    for r in requests:
        call = Call(int(r["session"]), 0, int(r["page"]), r["url"], r["kind"] == "page",
                    _t(r["intended"]))
        call.start, call.first_byte, call.last_byte = (_t(r["start"]), _t(r["first_byte"]),
                                                       _t(r["last_byte"]))
        call.status, call.bytes, call.error = int(r["status"]), int(r["bytes"]), r["error"] or None
        stats.on_call(call)
        if call.error in UNFINISHED:
            unfinished.add(call.session)
        conn, connect_start, connected = int(r["conn"]), _t(r["connect_start"]), _t(r["connected"])
        if conn >= 0:
            _seen(opened, closed, conn, call, connected,
                  None if connected is None else connected - connect_start)
    for conn, (at, connect) in opened.items():
        stats.on_connection(conn, connect, at=at)
    for conn, last in closed.items():
        stats.on_connection_close(conn, at=last)
    for p in pages:
        stats.on_page(PageVisit(int(p["session"]), 0, int(p["page"]), float(p["intended"]),
                                float(p["start"]), _t(p["html_first_byte"]), _t(p["done"]),
                                None, int(p["objects"]), int(p["errors"])))
    sessions = {int(r["session"]) for r in requests}
    stats.c["sessions_started"] += len(sessions)
    stats.c["sessions_completed"] += len(sessions - unfinished)
    stats.c["sessions_interrupted"] += len(sessions & unfinished)
    return stats


def _seen(opened: dict, closed: dict, conn: int, call: Call, connected: float | None,
          connect: float | None) -> None:
    """Note a row of connection ``conn``: it opened at its connect (on the row that opened
    it), else no later than its earliest row (the opening row may have died with its
    process); it closed at its last row's last byte. So no close comes before its open."""
    known = opened.get(conn)
    if connected is not None:
        if known is None or known[1] is None:
            opened[conn] = (connected, connect)
    elif known is None or known[1] is None:
        t = call.start if call.start is not None else call.last_byte
        if t is not None:
            opened[conn] = (t if known is None else min(t, known[0]), None)
    if call.last_byte is not None:
        closed[conn] = max(closed.get(conn, call.last_byte), call.last_byte)


def settle_part(sc: Scenario, share: tuple[int, int], due_by: float, prefix: str,
                requests: str, pages: str, window: tuple[float, float | None],
                why: str = "worker_died") -> dict:
    """Complete the part files ``requests`` and ``pages`` of the process playing ``share``
    (k, n) of the sessions, dead at ``due_by`` (module docstring), and return the statistics
    state its rows make over the run's measured ``window`` (``Stats.state``, with the duration
    and the stop, ``why``, that ``finish`` reads)."""
    rows = _rows(requests, REQUEST_COLUMNS)
    page_rows = _rows(pages, PAGE_COLUMNS)
    for path, got in ((requests, rows), (pages, page_rows)):
        _known_classes(path, got, {c.name for c in sc.classes})
    extra = _missing(sc, share, due_by, prefix, rows)
    with open(requests, "a", newline="") as f:
        writer = ResultsWriter(f, REQUEST_COLUMNS, header=False)
        for row in extra:
            writer.add(row)
        writer.flush()
    rows += [dict(zip(REQUEST_COLUMNS, map(str, row))) for row in extra]
    state = _stats(rows, page_rows, window).state()
    state.update(duration=due_by, cpu=None, stopped_by=why)
    return state
