"""A session's think times go together (a slow reader is slow throughout): the fit measures
it (``variables.think.dependence``) and synthesis draws it, judged against a log written here
whose think times follow a Gaussian copula of known correlation, and against SciPy's Spearman
correlation of what synthesis drew."""
from __future__ import annotations

import json
import math
from datetime import datetime, timezone

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from wagon.cli import main
from wagon.synth.generate import together


def _copula_log(path, rho: float, sessions: int = 700, seed: int = 1) -> float:
    """A Common log of ``sessions`` clients, each a session of 3-9 pages whose think times
    are lognormal(3, 0.8) (in [2, 600] s, whole seconds) with a one-factor Gaussian copula of
    correlation ``rho``; returns the Spearman correlation such a copula gives, (6/π)·asin(ρ/2)."""
    rng = np.random.default_rng(seed)
    lines, t0 = [], 800_000_000
    for s in range(sessions):
        k = int(rng.integers(3, 10))
        z = math.sqrt(rho) * rng.standard_normal() + math.sqrt(1 - rho) * rng.standard_normal(k - 1)
        think = np.clip(np.round(np.exp(3 + 0.8 * z)), 2, 600)
        t = t0 + 40 * s + np.r_[0, np.cumsum(think)]
        for i, when in enumerate(t):
            stamp = datetime.fromtimestamp(when, timezone.utc).strftime("%d/%b/%Y:%H:%M:%S +0000")
            lines.append((when, f'10.0.{s // 250}.{s % 250} - - [{stamp}] '
                                f'"GET /p{int(rng.integers(0, 50))}.html HTTP/1.0" 200 1000\n'))
    lines.sort(key=lambda x: x[0])
    path.write_text("".join(line for _, line in lines))
    return 6 / math.pi * math.asin(rho / 2)


@pytest.mark.parametrize("rho", [0.0, 0.6])
def test_the_fit_measures_how_a_sessions_think_times_go_together(tmp_path, rho):
    """The model's Spearman correlation of consecutive think times has the copula's within
    its 95 % interval (independent thinks: 0), and ``rho`` is the copula's within ±0.15."""
    truth = _copula_log(tmp_path / "a.log", rho)
    r = CliRunner().invoke(main, ["fit", str(tmp_path / "a.log"), "-o", str(tmp_path / "m.json"),
                                  "--workers", "1"])
    assert r.exit_code == 0, r.output
    dep = json.loads((tmp_path / "m.json").read_text())["variables"]["think"]["dependence"]
    assert dep["interval"][0] <= truth <= dep["interval"][1], (dep, truth)
    assert abs(dep["rho"] - rho) < 0.15, dep
    assert dep["sessions"] == 700


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(1, 6), min_size=1, max_size=30), st.floats(0, 1), st.integers(0, 99))
def test_together_moves_values_but_keeps_them_and_each_sessions_first(sizes, rho, seed):
    ptr = np.r_[0, np.cumsum(sizes)]
    values = np.random.default_rng(seed).random(int(ptr[-1]))
    out = together(values, ptr, rho, np.random.default_rng(seed))
    assert np.array_equal(np.sort(out), np.sort(values))
    assert np.array_equal(out[ptr[:-1]], values[ptr[:-1]])


@pytest.mark.parametrize("rho", [0.3, 0.8])
def test_together_gives_the_copulas_spearman_correlation(rho):
    """Over 20,000 sessions of 2-8 values, consecutive values of a session have Spearman
    correlation (6/π)·asin(ρ/2) (SciPy's, on the pairs), within 0.03."""
    rng = np.random.default_rng(5)
    sizes = rng.integers(2, 9, 20_000)
    ptr = np.r_[0, np.cumsum(sizes)]
    out = together(rng.lognormal(3, 1, int(ptr[-1])), ptr, rho, rng)
    first = np.zeros(len(out), bool)
    first[ptr[:-1]] = True
    pair = np.flatnonzero(~first[:-1] & ~first[1:])
    got = stats.spearmanr(out[pair], out[pair + 1])[0]
    assert abs(got - 6 / math.pi * math.asin(rho / 2)) < 0.03, got
