"""The application's closed loop (issue 37): the shop's own log → wagon fit → wagon synth →
wagon replay --script against the shop (Flask + SQLite behind gunicorn behind Debian's nginx,
tests/shop.py) → wagon fit of nginx's own log of the replay (its `wagon` layout: millisecond
times; ``--speedup K`` puts them back in the scenario's seconds) → the model again?

For each, the refit's value with its 95 % interval and whether it holds the model's:

- the method mix and each page template's share of the clicks (binomial, normal interval over
  the refit's clicks), the ten largest;
- the ten most frequent moves between templates, P(to | from) (binomial over the refit's moves
  from ``from``);
- the mean think time and the mean clicks of a session (the refit's sample mean ± 1.96 s/√n),
  against the model's law means.

    python bench/shop_loop.py [--sessions 400] [--speedup 10] [--seed 11] [--keep DIR]
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.shop import shop  # noqa: E402

LOG = ROOT / "tests" / "data" / "shop-access.log.gz"
SCRIPT = ROOT / "tests" / "apps" / "shop" / "wagon_script.py"
Z = 1.96


def wagon(*args: str) -> str:
    r = subprocess.run([sys.executable, "-m", "wagon", *args], capture_output=True, text=True)
    if r.returncode not in (0, 4):                  # 4: a threshold failed (errors > 1 %)
        sys.exit(f"wagon {args[0]} failed ({r.returncode}): {r.stderr.strip()[-500:]}")
    return r.stdout


def _pages(model: dict) -> tuple[list[str], np.ndarray]:
    pages = model["site"]["pages"]
    return ([f"{p.get('method', 'GET')} {p['url']}" for p in pages],
            np.array([p["hits"] for p in pages], float))


def _share_rows(model: dict, refit: dict) -> list[tuple[str, float, float, float]]:
    """(what, model's share, refit's share, refit's interval half-width)."""
    names, hits = _pages(model)
    rnames, rhits = _pages(refit)
    got = dict(zip(rnames, rhits))
    n = rhits.sum()
    rows = []
    post = hits[[k.startswith("POST") for k in names]].sum() / hits.sum()
    rpost = rhits[[k.startswith("POST") for k in rnames]].sum() / n
    rows.append(("POST share of clicks", post, rpost, Z * np.sqrt(rpost * (1 - rpost) / n)))
    for i in np.argsort(-hits)[:10]:
        p, q = hits[i] / hits.sum(), got.get(names[i], 0.0) / n
        rows.append((names[i], p, q, Z * np.sqrt(max(q * (1 - q), 1e-12) / n)))
    return rows


def _moves(model: dict) -> dict[tuple[str, str], tuple[float, float]]:
    """(from, to) → (P(to | from), moves from ``from``)."""
    names, _ = _pages(model)
    rows = model["site"]["transitions"]
    out_of: dict[str, float] = {}
    for a, _, c in rows:
        out_of[names[a]] = out_of.get(names[a], 0) + c
    return {(names[a], names[b]): (c / out_of[names[a]], out_of[names[a]]) for a, b, c in rows}


def _move_rows(model: dict, refit: dict) -> list[tuple[str, float, float, float]]:
    m, r = _moves(model), _moves(refit)
    top = sorted(m, key=lambda k: -m[k][0] * m[k][1])[:10]
    rows = []
    for k in top:
        q, n = r.get(k, (0.0, max((v[1] for kk, v in r.items() if kk[0] == k[0]), default=1)))
        rows.append((f"{k[0]} → {k[1]}", m[k][0], q, Z * np.sqrt(max(q * (1 - q), 1e-12) / n)))
    return rows


def _mean_rows(model: dict, refit: dict) -> list[tuple[str, float, float, float]]:
    out = []
    for v in ("think", "clicks"):
        a, b = model["variables"][v], refit["variables"][v]
        out.append((f"mean {v}", a["law_mean"], b["mean"], Z * b["std"] / np.sqrt(b["n"])))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sessions", type=int, default=400)
    ap.add_argument("--speedup", type=float, default=10.0)
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--keep", type=Path, help="a folder for the files (default: a temporary one)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        d = args.keep or Path(tmp)
        d.mkdir(parents=True, exist_ok=True)
        wagon("fit", str(LOG), "-o", str(d / "model.json"))
        wagon("synth", str(d / "model.json"), "--sessions", str(args.sessions), "--seed",
              str(args.seed), "--speedup", f"{args.speedup:g}", "--classes", "lan/http11",
              "-o", str(d / "s.jsonl"))
        with shop(d / "shop") as app:
            summary = json.loads(wagon("replay", str(d / "s.jsonl"), "--target", app.url,
                                       "--script", str(SCRIPT), "--no-status-marks", "--json",
                                       "--quiet"))
            served = app.access_log.parent / "wagon.log"
            wagon("fit", str(served), "--speedup", f"{args.speedup:g}", "-o",
                  str(d / "refit.json"))
            counts = app.counts()
        model = json.loads((d / "model.json").read_text())
        refit = json.loads((d / "refit.json").read_text())
    print(f"replay: {summary['requests']['total']:,} requests, errors "
          f"{summary['errors']['by_kind']}, {summary['duration_s']:.0f} s; the shop's rows "
          f"{counts}")
    held = total = 0
    for title, rows in (("shares of the clicks", _share_rows(model, refit)),
                        ("moves P(to | from)", _move_rows(model, refit)),
                        ("means", _mean_rows(model, refit))):
        print(f"\n{title:<48} {'model':>8} {'refit':>8} {'± 95 %':>8}  holds")
        for what, a, b, w in rows:
            ok = abs(a - b) <= w
            held, total = held + ok, total + 1
            print(f"{what[:48]:<48} {a:8.4f} {b:8.4f} {w:8.4f}  {'yes' if ok else 'NO'}")
    print(f"\n{held} of {total} intervals hold the model's value")


if __name__ == "__main__":
    main()
