"""Any workload wagon knows — an access log, a scenario, a replay's results — as one set of
arrays, so that analyses (Hurst, comparisons) treat them alike."""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import numpy as np

__all__ = ["Workload", "load_workload", "WorkloadError"]


class WorkloadError(ValueError):
    pass


@dataclass
class Workload:
    """Requests (time, URL code, status, bytes, page or object) and sessions (start, clicks,
    think times). ``status``/``size`` are None where the source has none (a scenario)."""

    name: str
    kind: str                      # log | scenario | replay
    time: np.ndarray
    url: np.ndarray
    urls: list[str]
    is_page: np.ndarray
    status: np.ndarray | None
    size: np.ndarray | None
    starts: np.ndarray
    clicks: np.ndarray
    think: np.ndarray
    resolution: float              # finest meaningful time bin (s)
    source: str = ""               # the file it was read from


def _kind(path: str) -> str:
    with open(path, "rb") as f:
        head = f.read(64)
    if head.startswith(b'{"format": "wagon-scenario"') or head.startswith(b'{"format":"wagon-scenario"'):
        return "scenario"
    if head.startswith(b"# wagon replay"):
        return "replay"
    return "log"


def _from_log(paths: list[str], fmt: str, base_month: str | None) -> Workload:
    from .parse import parse_logs
    from .sessions import OBJECT_EXTENSIONS, extension_flags, sessionize
    req, _ = parse_logs(paths, fmt, base_month=base_month)
    s = sessionize(req)
    whole = bool(np.all(req.time == np.floor(req.time)))
    is_obj = extension_flags(req.urls, OBJECT_EXTENSIONS)[req.url]
    return Workload(", ".join(Path(p).name for p in paths), "log", req.time, req.url, req.urls,
                    ~is_obj, req.status.astype(int), req.size.astype(float),
                    s.session_start, s.samples["clicks"], s.samples["think"],
                    1.0 if whole else 0.001)


def _from_scenario(path: str) -> Workload:
    from synth.scenario import read_scenario
    from synth.timeline import offered_requests
    sc = read_scenario(path)
    parts = list(offered_requests(sc))
    if not parts:
        raise WorkloadError(f"{path}: the scenario has no session")
    t = np.concatenate([p.time for p in parts])
    page = np.concatenate([p.is_page for p in parts])
    idx = np.concatenate([p.url for p in parts])
    size = np.concatenate([p.size for p in parts]).astype(float)
    starts, clicks, think = [], [], []
    for s in sc.sessions():
        starts.append(s.start)
        clicks.append(len(s.clicks))
        think.extend(th for _, th in s.clicks[1:])
    code = np.where(page, idx, idx + len(sc.page_urls))
    return Workload(Path(path).name, "scenario", t, code, sc.page_urls + sc.object_urls, page,
                    None, size, np.array(starts), np.array(clicks), np.array(think), 1e-3)


def _from_replay(path: str) -> Workload:
    from replay.record import pages_path, read_results
    rows = [r for r in read_results(path) if r["start"]]
    vocab: dict[str, int] = {}
    codes = np.array([vocab.setdefault(r["url"], len(vocab)) for r in rows], np.int64)
    p = Path(path)
    by_session: dict[str, list[tuple[float, float]]] = defaultdict(list)
    if Path(pages_path(path)).exists():
        for r in read_results(pages_path(path)):
            if r["done"]:
                by_session[r["session"]].append((float(r["intended"]), float(r["done"])))
    starts, clicks, think = [], [], []
    for visits in by_session.values():
        visits.sort()
        starts.append(visits[0][0])
        clicks.append(len(visits))
        think.extend(b[0] - a[1] for a, b in zip(visits, visits[1:]))
    return Workload(p.name, "replay", np.array([float(r["start"]) for r in rows]), codes,
                    list(vocab), np.array([r["kind"] == "page" for r in rows]),
                    np.array([int(r["status"] or 0) for r in rows]),
                    np.array([float(r["bytes"] or 0) for r in rows]), np.sort(starts),
                    np.array(clicks), np.array(think), 1e-6, path)


def load_workload(paths: list[str] | str, fmt: str = "auto",
                  base_month: str | None = None) -> Workload:
    """A workload from a scenario, a replay results CSV, or access logs (kind detected)."""
    paths = [paths] if isinstance(paths, str) else list(paths)
    for p in paths:
        if not Path(p).exists():
            raise WorkloadError(f"{p}: No such file")
    kind = _kind(paths[0])
    if kind != "log" and len(paths) > 1:
        raise WorkloadError("give one scenario or one results file at a time")
    if kind == "scenario":
        return _from_scenario(paths[0])
    if kind == "replay":
        return _from_replay(paths[0])
    return _from_log(paths, fmt, base_month)
