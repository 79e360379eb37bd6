"""A transition with think times of its own takes them out of the global law's sample: the
other moves draw from what is left (``site.thinks.rest``), not from the whole. Judged on a log
written here whose frequent move a → b is read in 2-3 s and every other move after a
lognormal(ln 60, 0.5): what synthesis draws for the other moves against SciPy's lognormal."""
from __future__ import annotations

import io
from datetime import datetime, timezone

import numpy as np
from scipy import stats

from wagon import load_model
from wagon.formats.scenario import read_scenario
from wagon.modeling import FitOptions, fit_logs
from wagon.synth import Generator, SynthOptions, synthesize

LONG = stats.lognorm(s=0.5, scale=60.0)     # every move but a → b


def _log(path, sessions: int = 400, seed: int = 2) -> None:
    """``sessions`` clients, each /a.html then /b.html 2-3 s later, then 2-5 pages of 40 drawn
    at random after LONG think times (whole seconds, as a Common log stamps them)."""
    rng = np.random.default_rng(seed)
    lines = []
    for s in range(sessions):
        pages = ["/a.html", "/b.html"] + [f"/p{k}.html" for k in rng.integers(0, 40,
                                                                            rng.integers(2, 6))]
        think = np.r_[rng.uniform(2.0, 3.0), LONG.rvs(len(pages) - 2, random_state=rng)]
        t = 900_000_000 + 50.0 * s + np.r_[0.0, np.cumsum(think)]
        for page, when in zip(pages, t.tolist()):
            stamp = datetime.fromtimestamp(int(when), timezone.utc).strftime(
                "%d/%b/%Y:%H:%M:%S +0000")
            lines.append((int(when), s, f'10.1.{s // 250}.{s % 250} - - [{stamp}] '
                                        f'"GET {page} HTTP/1.0" 200 1000\n'))
    lines.sort()
    path.write_text("".join(line for _, _, line in lines))


def test_the_other_moves_draw_the_think_times_left_to_them(tmp_path):
    _log(tmp_path / "a.log")
    model = fit_logs([str(tmp_path / "a.log")], FitOptions(seed=1)).model
    thinks = model.site["thinks"]
    urls = [p["url"] for p in model.site["pages"]]
    assert [urls[r[0]] + ">" + urls[r[1]] for r in thinks["transitions"]] == ["/a.html>/b.html"]
    out = io.StringIO()
    synthesize(Generator(load_model_from(model, tmp_path), SynthOptions(sessions=3000, seed=4)),
               out)
    (tmp_path / "s.jsonl").write_text(out.getvalue())
    sc = read_scenario(str(tmp_path / "s.jsonl"))
    short, other = [], []
    for s in sc.sessions():
        for k in range(1, len(s.clicks)):
            move = (s.url(k - 1, sc.site), s.url(k, sc.site))
            (short if move == ("/a.html", "/b.html") else other).append(s.clicks[k][1])
    assert len(short) > 1000 and len(other) > 1000
    assert np.all(np.array(short) < 5.0)
    d = stats.kstest(other, LONG.cdf).statistic       # the other moves' law, not the mixture
    assert d < 0.06, d


def load_model_from(model, tmp_path):
    """The model as synth reads it: written, then loaded (its file is the contract)."""
    from wagon import save_model
    save_model(model, str(tmp_path / "m.json"))
    return load_model(str(tmp_path / "m.json"))
