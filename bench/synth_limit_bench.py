"""`wagon synth` as users run it against an independent NumPy limit (issue 40).

The limit is written here, importing nothing of wagon: it reads the model file's JSON, draws the
same laws (Poisson session arrivals at the model's ``rate_per_s``, classes and agents uniform,
clicks IG(μ, λ) rounded ≥ 1, think times lognormal clipped to the model's window, pages as a
Markov chain over the model's transition counts — every live session's k-th click in one
searchsorted over the rows' cumulative probabilities — and each click's view by its page's
view counts) and writes the scenario's session lines (docs/formats.md) with digits placed in a
byte matrix, in chunks of 20,000 sessions as wagon does. CPU seconds of child processes
(``RUSAGE_CHILDREN``), wagon's CLI including its start-up (its bytecode cached, as a user's
Python has it after the first run), interleaved runs, best of N.

    python bench/synth_limit_bench.py [--model M] [--sessions 100000 1000000] [--runs 3]
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "data" / "sample-combined.log.gz"
CHUNK = 20_000
POW10 = 10 ** np.arange(19, dtype=np.int64)


def digits(v: np.ndarray, width: int) -> tuple[np.ndarray, np.ndarray]:
    """Zero-padded ASCII digits of non-negative ints (n × width) and the mask of shown ones."""
    d = (v[:, None] // POW10[width - 1::-1][None, :]) % 10
    shown = np.cumsum(d != 0, axis=1) > 0
    shown[:, -1] = True
    return (d + 48).astype(np.uint8), shown


def text(s: bytes, n: int) -> tuple[np.ndarray, np.ndarray]:
    """The same bytes on n rows, all shown."""
    m = np.frombuffer(s, np.uint8)
    return np.broadcast_to(m, (n, len(m))), np.ones((n, len(m)), bool)


def fixed(x: np.ndarray, places: int, width: int) -> list:
    """``%.{places}f`` of non-negative floats as (int digits, '.', decimals) segments."""
    k = np.rint(x * 10.0 ** places).astype(np.int64)
    n = len(k)
    frac_d, _ = digits(k % POW10[places], places)
    return [digits(k // POW10[places], width), text(b".", n),
            (frac_d, np.ones((n, places), bool))]


def rows(segments: list) -> tuple[np.ndarray, np.ndarray]:
    return (np.hstack([s[0] for s in segments]), np.hstack([s[1] for s in segments]))


class Limit:
    """The model's laws, drawn and written with NumPy alone."""

    def __init__(self, model: dict) -> None:
        v, site = model["variables"], model["site"]
        self.rate = model["arrivals"]["rate_per_s"]
        self.ig = v["clicks"]["params"]["mu"], v["clicks"]["params"]["lambda"]
        think = v["think"]
        self.ln = think["params"]["mu"], think["params"]["sigma"]
        self.window = think["observation"].get("lower", 0), think["observation"].get("upper",
                                                                                     np.inf)
        n = len(site["pages"])
        entry = np.zeros(n)
        for p, c in site["entry"]:
            entry[p] += c
        self.entry = np.cumsum(entry) / entry.sum()
        hits = np.array([p.get("hits", 1) for p in site["pages"]], float)
        t = np.zeros((n, n))
        for a, b, c in site["transitions"]:
            t[a, b] += c
        t[t.sum(axis=1) == 0] = hits                  # a page never left: popularity
        self.route = np.cumsum(t, axis=1) / t.sum(axis=1, keepdims=True) + np.arange(n)[:, None]
        self.route = self.route.ravel()
        self.n = n
        views = np.zeros((n, 1 + max(len(p.get("views", [])) for p in site["pages"])))
        for i, p in enumerate(site["pages"]):
            for k, w in enumerate(p.get("views", [])):
                views[i, k + 1] = w["first"] + w["repeat"]
        views[views.sum(axis=1) == 0, 0] = 1          # no views: 0, every object
        self.views = (np.cumsum(views, axis=1) / views.sum(axis=1, keepdims=True)
                      + np.arange(n)[:, None]).ravel()
        self.n_views = views.shape[1]

    def chunk(self, rng: np.random.Generator, t0: float, first: int, n: int) -> tuple:
        """Sessions ``first`` .. ``first + n``: (their lines as bytes, the last start)."""
        starts = t0 + np.cumsum(rng.exponential(1 / self.rate, n))
        classes, agents = rng.integers(0, 4, n), rng.integers(0, 3, n)
        clicks = np.clip(np.rint(rng.wald(*self.ig, n)), 1, 10_000).astype(np.int64)
        ptr = np.concatenate(([0], np.cumsum(clicks)))
        total = int(ptr[-1])
        thinks = np.clip(rng.lognormal(*self.ln, total), *self.window)
        thinks[ptr[:-1]] = 0.0
        pages = np.empty(total, np.int64)
        cur = np.minimum(np.searchsorted(self.entry, rng.random(n), side="right"), self.n - 1)
        pages[ptr[:-1]] = cur
        live = np.arange(n)
        for k in range(1, int(clicks.max())):
            keep = clicks[live] > k
            live, cur = live[keep], cur[keep]
            at = np.searchsorted(self.route, cur + rng.random(len(cur)), side="right")
            cur = np.minimum(at - cur * self.n, self.n - 1)
            pages[ptr[live] + k] = cur
        at = np.searchsorted(self.views, pages + rng.random(total), side="right")
        views = np.minimum(at - pages * self.n_views, self.n_views - 1)
        return self.lines(first, starts, classes, agents, ptr, pages, thinks, views), starts[-1]

    @staticmethod
    def lines(first: int, starts, classes, agents, ptr, pages, thinks, views) -> bytes:
        n, total = len(starts), len(pages)
        ids = np.arange(first, first + n)
        head = rows([text(b'{"id":', n), digits(ids, 12), text(b',"start":', n),
                     *fixed(starts, 6, 12), text(b',"class":', n), digits(classes, 1),
                     text(b',"agent":', n), digits(agents, 1), text(b',"clicks":[', n)])
        last = np.zeros(total, bool)
        last[ptr[1:] - 1] = True
        tail_d = np.where(last[:, None], np.frombuffer(b"]]}\n", np.uint8),
                          np.frombuffer(b"],\0\0", np.uint8)).astype(np.uint8)
        tail_m = np.ones((total, 4), bool)
        tail_m[~last, 2:] = False
        click = rows([text(b"[", total), digits(pages, 6), text(b",", total),
                      *fixed(thinks, 3, 6), text(b",", total), digits(views, 3),
                      (tail_d, tail_m)])
        width = max(head[0].shape[1], click[0].shape[1])
        mat = np.zeros((n + total, width), np.uint8)
        mask = np.zeros((n + total, width), bool)
        order = np.arange(total) + np.repeat(np.arange(1, n + 1), np.diff(ptr))
        heads = ptr[:-1] + np.arange(n)
        mat[heads, :head[0].shape[1]], mask[heads, :head[1].shape[1]] = head
        mat[order, :click[0].shape[1]], mask[order, :click[1].shape[1]] = click
        return mat[mask].tobytes()


def limit(model_path: str, sessions: int, out: str, seed: int = 1) -> None:
    """Write ``sessions`` sessions of the limit to ``out`` (the model's header line first)."""
    model = json.loads(Path(model_path).read_text())
    lim = Limit(model)
    with open(out, "wb") as f:
        f.write(json.dumps({"format": "wagon-scenario", "site": model["site"]}).encode() + b"\n")
        t, first = 0.0, 0
        while first < sessions:
            rng = np.random.default_rng([seed, first])
            data, t = lim.chunk(rng, t, first, min(CHUNK, sessions - first))
            f.write(data)
            first += CHUNK


#: children run as a user's Python does: modules compiled once and cached (a shell that sets
#: PYTHONDONTWRITEBYTECODE, as this machine's does, would have wagon's ~60 modules compiled from
#: source at every start, 0.06 CPU-s, while NumPy's and SciPy's were compiled at install)
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def child_cpu(cmd: list[str]) -> float:
    """CPU seconds (user + system) a child process took."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   env=ENV)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def body_bytes(path: str) -> int:
    """The file's size without its header line."""
    with open(path, "rb") as f:
        return os.path.getsize(path) - len(f.readline())


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--model", help="a model file (default: wagon fit of the bundled sample)")
    p.add_argument("--sessions", type=int, nargs="+", default=[100_000, 1_000_000])
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--limit-child", nargs=3, help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.limit_child:
        limit(a.limit_child[0], int(a.limit_child[1]), a.limit_child[2])
        return
    wagon = str(Path(sys.executable).with_name("wagon"))
    with tempfile.TemporaryDirectory() as tmp:
        model = a.model or os.path.join(tmp, "model.json")
        if not a.model:
            subprocess.run([wagon, "fit", str(SAMPLE), "-o", model], check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        w_out, l_out = os.path.join(tmp, "w.jsonl"), os.path.join(tmp, "l.jsonl")
        child_cpu([wagon, "synth", model, "--sessions", "10", "-o", w_out])   # cached bytecode
        for n in a.sessions:
            w_cpu, l_cpu = [], []
            for _ in range(a.runs):
                w_cpu.append(child_cpu([wagon, "synth", model, "--sessions", str(n),
                                        "--seed", "1", "-o", w_out]))
                l_cpu.append(child_cpu([sys.executable, __file__, "--limit-child", model,
                                        str(n), l_out]))
            wb, lb = body_bytes(w_out), body_bytes(l_out)
            print(f"{n:>9,} sessions: wagon synth {min(w_cpu):.2f} CPU-s "
                  f"({', '.join(f'{c:.2f}' for c in w_cpu)}), NumPy limit {min(l_cpu):.2f} "
                  f"({', '.join(f'{c:.2f}' for c in l_cpu)}) -> {min(w_cpu) / min(l_cpu):.2f}x; "
                  f"session lines {wb / 1e6:.1f} MB vs {lb / 1e6:.1f} MB ({lb / wb - 1:+.1%})")


if __name__ == "__main__":
    main()
