"""The application's closed loop (issue 37): the shop's own log → wagon fit → wagon synth →
wagon replay --script against the shop (Flask + SQLite behind gunicorn behind Debian's nginx,
tests/shop.py) → wagon fit of nginx's own log of the replay (its `wagon` layout: millisecond
times; ``--speedup K`` puts them back in the scenario's seconds) → the model again?

For each, the refit's value with its 95 % interval and whether it holds the model's:

- the method mix and each page template's share of the clicks, the ten largest;
- the ten most frequent moves between templates, P(to | from);
- the mean think time and the mean clicks of a session (the refit's sample mean ± 1.96 s/√n),
  against the model's laws as the refit records them.

Shares and moves are ratios over the refit's sessions, with two normal 95 % intervals:
binomial, as if every click were an independent trial (what this bench printed first), and
with the session as the unit (a session's clicks are one walk of the chain, drawn together:
300 sessions' POST share spreads over 25.1-28.9 % across synth seeds, twice the binomial
variance). And the 95 % range of the same figure over ``--draws`` scenarios of as many
sessions drawn from the model (a parametric bootstrap: the spread of a sample of sessions,
which an interval computed on one sample understates when a law's tail is long: seeds 1-30
of 300 sessions spread the POST share with an sd of 1.3 points, where one run's session
interval says 0.97), with three verdicts: the refit's value within that range (the loop
whole), the model's value within it (synth draws what the model says), and the scenario's own
figure within the refit's session interval (replay and refit give back what was asked). The
column "asked" is the scenario's own figure (its clicks, moves, think times over Tmin and
clicks per session): what the model's sample of sessions asked the replay for. The count of
the refit's session intervals that miss the model's value is judged against the same count
in each draw (its own intervals against the model's values): the figures move together (a
sample with shorter sessions has fewer checkouts and logins), so how many miss at once is the
draws' to say, not 5 % of 23.

    python bench/shop_loop.py [--sessions 400] [--speedup 10] [--seed 11] [--draws 40]
                              [--keep DIR]
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
from wagon import FitOptions, fit_logs, load_model, save_model  # noqa: E402
from wagon.fitting.likelihood import latent_mean  # noqa: E402
from wagon.formats.scenario import read_scenario  # noqa: E402

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


def _ratio(y: np.ndarray, n: np.ndarray) -> tuple[float, float, float]:
    """Σy / Σn over sessions (y_i events among n_i trials of session i) and two 95 %
    half-widths: binomial, as if every trial were independent, and with the session as the
    unit (a session's clicks are one walk of the chain and one drawn length, drawn together:
    the variance of a ratio estimator by linearisation, Cochran 1977, §6.11)."""
    total, k = n.sum(), len(n)
    if not total:
        return 0.0, 0.0, 0.0
    r = y.sum() / total
    clustered = k / max(k - 1, 1) * np.sum((y - r * n) ** 2) / total ** 2
    return r, Z * np.sqrt(r * (1 - r) / total), Z * np.sqrt(clustered)


Row = tuple[str, float, float, float, float]        # what, model, refit, ± clicks, ± sessions


def _share_rows(model: dict, session: np.ndarray, name: np.ndarray) -> list[Row]:
    """The POST share and the ten largest pages' shares of the clicks (``session``,
    ``name``: the refit's clicks)."""
    names, hits = _pages(model)
    per = np.bincount(session).astype(float)
    rows = [("POST share of clicks", hits[[k.startswith("POST") for k in names]].sum()
             / hits.sum(), np.char.startswith(name, "POST"))]
    rows += [(names[i], hits[i] / hits.sum(), name == names[i]) for i in np.argsort(-hits)[:10]]
    return [(what, p, *_ratio(np.bincount(session, weights=hit, minlength=len(per)), per))
            for what, p, hit in rows]


def _moves(model: dict) -> dict[tuple[str, str], tuple[float, float]]:
    """(from, to) → (P(to | from), moves from ``from``)."""
    names, _ = _pages(model)
    rows = model["site"]["transitions"]
    out_of: dict[str, float] = {}
    for a, _, c in rows:
        out_of[names[a]] = out_of.get(names[a], 0) + c
    return {(names[a], names[b]): (c / out_of[names[a]], out_of[names[a]]) for a, b, c in rows}


def _move_rows(model: dict, session: np.ndarray, name: np.ndarray) -> list[Row]:
    """The model's ten most frequent moves, P(to | from), against the refit's moves."""
    m = _moves(model)
    same = session[1:] == session[:-1]
    at, a, b = session[:-1][same], name[:-1][same], name[1:][same]
    k = int(session.max()) + 1
    rows = []
    for f, t in sorted(m, key=lambda x: -m[x][0] * m[x][1])[:10]:
        n = np.bincount(at[a == f], minlength=k).astype(float)
        y = np.bincount(at[(a == f) & (b == t)], minlength=k).astype(float)
        rows.append((f"{f} → {t}", m[f, t][0], *_ratio(y, n)))
    return rows


def _scenario(path: Path) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The scenario's clicks (each one's session and page name) and think times: what the
    replay was asked for, drawn from the model."""
    sc = read_scenario(str(path))
    names = np.array([f"{m} {u}" for m, u in zip(sc.site.page_methods, sc.site.page_urls)])
    rows = [(i, p, t) for i, s in enumerate(sc.sessions()) for p, t in s.clicks]
    session, page, think = (np.array(c) for c in zip(*rows))
    return session, names[page], think


def _clicks(result) -> tuple[np.ndarray, np.ndarray]:
    """The refit's clicks in each session's order: each one's session and page name."""
    s = result.sessions
    order = np.lexsort((s.click_time, s.click_session))
    names = np.array([u if " " in u else f"GET {u}" for u in s.site.urls])
    return s.click_session[order], names[s.click_url[order]]


def _mean_rows(model: dict, refit: dict, d: Path) -> list[Row]:
    """The refit's sample means against the model's laws as the refit records them: think
    times on nginx's millisecond grid, not the shop log's seconds (the law of the log's
    whole-second think times has a mean of 5.72 s as recorded there, 5.81 s as exact times
    of 2 s or more), clicks as counts, as the log did."""
    recorded = latent_mean(load_model(str(d / "model.json")).variables["think"].parent,
                           load_model(str(d / "refit.json")).variables["think"].observation)
    out = []
    for v in ("think", "clicks"):
        a, b = model["variables"][v], refit["variables"][v]
        mean = recorded if v == "think" else a["law_mean"]
        w = Z * b["std"] / np.sqrt(b["n"])            # think times, sessions: independent draws
        out.append((f"mean {v}", mean, b["mean"], w, w))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sessions", type=int, default=400)
    ap.add_argument("--speedup", type=float, default=10.0)
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--draws", type=int, default=40,
                    help="scenarios drawn from the model for each figure's 95 %% range")
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
            result = fit_logs([str(served)], FitOptions(speedup=args.speedup))  # wagon fit's
            save_model(result.model, d / "refit.json")
            counts = app.counts()
        model = json.loads((d / "model.json").read_text())
        refit = json.loads((d / "refit.json").read_text())
        means = _mean_rows(model, refit, d)
        asked, asked_name, asked_think = _scenario(d / "s.jsonl")
        drawn = [_figures(model, *_scenario(path)) for path in _draws(d, args)]
    session, name = _clicks(result)
    print(f"replay: {summary['requests']['total']:,} requests, errors "
          f"{summary['errors']['by_kind']}, {summary['duration_s']:.0f} s; the shop's rows "
          f"{counts}; the refit: {len(np.unique(session))} sessions, {len(session)} clicks")
    scenario = _figures(model, asked, asked_name, asked_think)[0]
    values, widths = (np.array([f[k] for f in drawn]) for k in (0, 1))
    low, high = np.percentile(values, [2.5, 97.5], axis=0)
    model_values = []
    held = drawn_held = faithful = binomial = sessions = total = 0
    for title, rows in (("shares of the clicks", _share_rows(model, session, name)),
                        ("moves P(to | from)", _move_rows(model, session, name)),
                        ("means", means)):
        print(f"\n{title:<40} {'model':>7} {'asked':>7} {'refit':>7} {'± clicks':>8} "
              f"{'± sess.':>7} {'draws 95 %':>15}  refit  model  asked")
        for what, a, b, w, ws in rows:
            ok, synth_ok = low[total] <= b <= high[total], low[total] <= a <= high[total]
            kept = abs(scenario[total] - b) <= ws
            print(f"{what[:40]:<40} {a:7.4f} {scenario[total]:7.4f} {b:7.4f} {w:8.4f} {ws:7.4f}"
                  f" {low[total]:7.4f}-{high[total]:7.4f}" + "".join(
                      f"  {'yes' if v else 'NO':>5}" for v in (ok, synth_ok, kept)))
            held, drawn_held, faithful = held + ok, drawn_held + synth_ok, faithful + kept
            binomial, sessions = binomial + (abs(a - b) <= w), sessions + (abs(a - b) <= ws)
            model_values.append(a)
            total += 1
    print(f"\n{held} of {total} refit figures within the 95 % range of {args.draws} draws of "
          f"{args.sessions} sessions from the model; {drawn_held} of {total} model values "
          f"within it (synth draws what the model says); {faithful} of {total} asked within the "
          f"refit's interval over sessions (replay and refit give back what the scenario "
          f"asked); {sessions} of {total} such intervals hold the model's value, {binomial} of "
          f"{total} binomial over clicks")
    misses = np.sum(np.abs(values - model_values) > widths, axis=1)
    q95 = int(np.percentile(misses, 95, method="inverted_cdf"))
    print(f"the refit's session intervals miss the model's value in {total - sessions} of "
          f"{total}; those of a draw of {args.sessions} sessions from the model itself miss it "
          f"in {np.median(misses):g} (median), at most {q95} in 95 % of the {args.draws} draws "
          f"(most {misses.max()}): the refit's {'within' if total - sessions <= q95 else 'OUTSIDE'}"
          " what the model's own samples show (the figures are correlated: one long session "
          "moves several)")


def _figures(model: dict, session: np.ndarray, name: np.ndarray, think: np.ndarray
             ) -> tuple[list[float], list[float]]:
    """A scenario's figures, row by row as printed (its shares, its moves, its mean think
    time over Tmin as a refit samples them, its mean clicks per session), and each one's 95 %
    half-width over its sessions, as the refit's column "± sess." is computed."""
    later = np.r_[False, session[1:] == session[:-1]]          # a think time before a click
    thought = think[later & (think >= FitOptions().rules.tmin)]
    per = np.bincount(session)
    per = per[per > 0]
    rows = _share_rows(model, session, name) + _move_rows(model, session, name)
    means = [(x.mean(), Z * x.std() / np.sqrt(len(x))) for x in (thought, per)]
    return ([r[2] for r in rows] + [m for m, _ in means],
            [r[4] for r in rows] + [w for _, w in means])


def _draws(d: Path, args: argparse.Namespace) -> list[Path]:
    """``--draws`` scenarios of ``--sessions`` sessions from the model, each of its own seed
    (none the replayed one's): the spread of a figure over samples of sessions drawn from
    the model, which a refit faithful to the model falls within 95 % of the time whatever
    its laws' tails (the intervals over one refit's sessions assume its sample shows them)."""
    paths = []
    for i in range(args.draws):
        path = d / f"draw{i}.jsonl"
        wagon("synth", str(d / "model.json"), "--sessions", str(args.sessions), "--seed",
              str(10_000 + args.seed * 100 + i), "--classes", "lan/http11", "-o", str(path))
        paths.append(path)
    return paths


if __name__ == "__main__":
    main()
