"""Logs whose time stamps were shuffled inside a coarser unit: the lines are in the order the
server wrote them, their stamps are not.

elastic's Apache example (tests/data) is one: 49.6 % of its consecutive lines go back in time,
each inside its minute, by 20 s on average, and none across minutes: what two independent
uniform seconds of a minute do ((1 − 1/60) / 2 = 49.2 % of pairs go back, by 60/3 = 20 s on
average), not a server (a clock's lines go back only where a request that began earlier ended
later: NASA's and EPA's logs 0.000). Its publisher rewrote the seconds; sorted by its stamps, a
page's objects came before the page (54 % of its clicks were objects), its think times were
the shuffle's.

- ``disorder``: a piece's consecutive lines, per candidate ``UNITS``: pairs inside one cell of
  the unit and how many go back, by how much, pairs across cells and how many go back, and the
  runs of lines of one cell (cell, first line, last line);
- ``decided``: an input's pieces merged; its stamps are shuffled in the smallest unit inside
  whose cells at least ``SHUFFLED`` of the pairs go back, by at least ``MEAN_BACK`` of the
  unit on average, while across cells at most ``ORDERED`` do;
- ``restamped``: each line of such an input given a time inside its cell in file order — the
  k-th of a run's n lines (raw line numbers: a malformed line keeps its slot) at the k-th of
  n sorted uniforms of the cell (Rényi's representation: cumulative sums of n + 1
  exponentials over their total, drawn from the run's own seed, so that every partition and
  every cut of the input gives each line the same time). Sorted uniforms are, as a set, what
  the shuffle's uniform seconds are: the counts per second keep their law, the order is the
  file's.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["UNITS", "Disorder", "Shuffle", "disorder", "merged", "decided", "restamped",
           "restamp_inputs", "shuffles_of"]

UNITS = (60.0, 3600.0)          # a minute, an hour: the units a publisher rewrites stamps in
SHUFFLED = 0.25                 # share of a cell's consecutive lines going back, at least
MEAN_BACK = 1 / 6               # by this share of the unit on average at least (uniform: 1/3)
ORDERED = 0.001                 # share of consecutive lines going back across cells, at most
MIN_PAIRS = 50                  # pairs inside cells, at least, to tell


@dataclass
class Disorder:
    """One piece's (or input's) consecutive lines per unit of ``UNITS`` (module docstring):
    ``counts`` rows (pairs inside a cell, going back, seconds back, pairs across cells, going
    back); ``runs`` only where a piece is in order across cells (a log out of order there is
    no shuffle of that unit, and its runs would be as many as its lines)."""

    counts: np.ndarray = field(default_factory=lambda: np.zeros((len(UNITS), 5)))
    runs: list[np.ndarray] = field(
        default_factory=lambda: [np.zeros((0, 3), np.int64) for _ in UNITS])


@dataclass(frozen=True)
class Shuffle:
    """An input's stamps shuffled inside ``unit`` s: the shares that tell it, and its runs."""

    unit: float
    share: float                  # of the consecutive lines of a cell that go back
    mean_back: float              # by this many seconds on average
    across: float                 # share going back across cells
    runs: np.ndarray              # (k, 3) int64: cell, first line, last line (of the input)

    @property
    def lines(self) -> int:
        return int(np.sum(self.runs[:, 2] - self.runs[:, 1] + 1))

    def describe(self) -> str:
        unit = {60.0: "minute", 3600.0: "hour"}.get(self.unit, f"{self.unit:g} s")
        return (f"time stamps shuffled within the {unit} ({100 * self.share:.1f} % of the "
                f"consecutive lines of a {unit} go back in time, by {self.mean_back:.1f} s on "
                f"average; across {unit}s {100 * self.across:.2f} %): lines kept in file "
                f"order, spread over their {unit}")

    def as_dict(self) -> dict:
        return {"unit_s": self.unit, "back_share": self.share, "mean_back_s": self.mean_back,
                "back_share_across": self.across, "lines": self.lines}


def disorder(time: np.ndarray, line: np.ndarray) -> Disorder:
    """The disorder of requests ``time`` in the order of their ``line`` numbers."""
    order = np.argsort(line, kind="stable")
    t, ln = np.asarray(time, float)[order], np.asarray(line, np.int64)[order]
    out = Disorder()
    if len(t) < 2:
        return out
    step = np.diff(t)
    for u, unit in enumerate(UNITS):
        cell = np.floor(t / unit).astype(np.int64)
        same = cell[1:] == cell[:-1]
        back = step < 0
        out.counts[u] = (same.sum(), (back & same).sum(), -step[back & same].sum(),
                         (~same).sum(), (back & ~same).sum())
        if out.counts[u, 4] > ORDERED * max(out.counts[u, 3], 1):
            continue
        first = np.flatnonzero(np.r_[True, ~same])
        last = np.r_[first[1:], len(t)] - 1
        out.runs[u] = np.c_[cell[first], ln[first], ln[last]]
    return out


def merged(parts: list[tuple[Disorder, int]]) -> Disorder:
    """The disorder of an input from its pieces' (each with the lines before it), in order:
    counts summed, runs in the input's line numbers, a run cut by a seam joined."""
    out = Disorder()
    for d, offset in parts:
        out.counts += d.counts
        for u in range(len(UNITS)):
            runs = d.runs[u] + np.array([0, offset, offset])
            have = out.runs[u]
            if len(have) and len(runs) and have[-1, 0] == runs[0, 0]:
                have = have.copy()
                have[-1, 2] = runs[0, 2]
                runs = runs[1:]
            out.runs[u] = np.concatenate([have, runs])
    return out


def decided(d: Disorder) -> Shuffle | None:
    """The shuffle of an input of disorder ``d`` (module docstring), or None."""
    for u, unit in enumerate(UNITS):
        within, back, back_s, across, back_across = d.counts[u]
        if within < MIN_PAIRS or back < SHUFFLED * within:
            continue
        if back_s / back < MEAN_BACK * unit or back_across > ORDERED * max(across, 1):
            continue
        return Shuffle(unit, float(back / within), float(back_s / back),
                       float(back_across / max(across, 1)), d.runs[u])
    return None


def shuffles_of(time: np.ndarray, line: np.ndarray, file: np.ndarray
                ) -> dict[int, Shuffle]:
    """The shuffle of each input (``file`` index) of whole inputs' requests."""
    found = {}
    for f in np.unique(file).tolist():
        rows = np.flatnonzero(file == f)
        s = decided(disorder(time[rows], line[rows]))
        if s is not None:
            found[int(f)] = s
    return found


def restamped(time: np.ndarray, line: np.ndarray, file_index: int, shuffle: Shuffle
              ) -> np.ndarray:
    """``time`` of lines ``line`` of input ``file_index`` put back in file order inside their
    cells (module docstring); a line outside every run (none, by construction) keeps its time."""
    runs, unit = shuffle.runs, shuffle.unit
    out = np.asarray(time, float).copy()
    line = np.asarray(line, np.int64)
    r = np.searchsorted(runs[:, 1], line, side="right") - 1
    inside = np.flatnonzero((r >= 0) & (line <= runs[np.maximum(r, 0), 2]))
    inside = inside[np.argsort(r[inside], kind="stable")]
    bounds = np.flatnonzero(np.r_[True, np.diff(r[inside]) != 0, True])
    for a, b in zip(bounds[:-1].tolist(), bounds[1:].tolist()):
        rows = inside[a:b]
        cell, first, last = runs[r[rows[0]]].tolist()
        e = np.random.default_rng([file_index, first]).exponential(size=last - first + 2)
        cum = np.cumsum(e)
        out[rows] = (cell + cum[line[rows] - first] / cum[-1]) * unit
    return out


def restamp_inputs(req, shuffles: dict[int, Shuffle]) -> None:
    """Requests ``req`` (``parse.Requests``: a whole parse's, or a partition's) with the times
    of each shuffled input (``file`` index → its ``Shuffle``) put back in file order, in place:
    they are then exact values, known to their cell (``Requests.resolution`` 0, ``cell``)."""
    for index, shuffle in shuffles.items():
        rows = np.flatnonzero(req.file == index)
        req.time[rows] = restamped(req.time[rows], req.line[rows], index, shuffle)
    if shuffles:
        req.resolution = 0.0
        req.cell = max(s.unit for s in shuffles.values())
