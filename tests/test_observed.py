"""A fitted law as parent and as recorded, and one fitting path for `wagon fit` and `wagon report`.

Observers: the recording simulated here, step by step (true gaps, timestamps with a random
phase floored to the grid, the window that keeps them), never wagon's own draws; and `wagon
fit`'s model for the report."""
from __future__ import annotations

import re

import numpy as np
import pytest

from wagon import load_model
from wagon.fitting.laws import LAWS
from wagon.fitting.observation import Observation
from wagon.fitting.observed import Observed

from .test_synth import hand_model


def _recorded(x: np.ndarray, step: float, lo: float | None, hi: float | None,
              rng: np.random.Generator) -> np.ndarray:
    """True gaps ``x`` as a log records them: two timestamps floored to ``step`` (the first at a
    uniform phase), their difference kept when it lies in [lo, hi]."""
    t0 = rng.uniform(0, 1000, len(x))
    d = np.floor((t0 + x) / step) * step - np.floor(t0 / step) * step
    d = np.round(d / step) * step
    keep = np.ones(len(d), bool)
    if lo is not None:
        keep &= d >= lo
    if hi is not None:
        keep &= d <= hi
    return d[keep]


@pytest.mark.parametrize("law,params,obs", [
    ("lognormal", {"mu": 3.0, "sigma": 1.1}, Observation.grid(1.0, 2.0, 600.0)),
    ("lognormal", {"mu": 3.0, "sigma": 1.1}, Observation.grid(1e-6, 2.0, 600.0)),   # 6e8 cells
    ("lognormal", {"mu": 3.0, "sigma": 1.1}, Observation.exact(2.0, 600.0)),
    ("exponential", {"scale": 0.04}, Observation.grid(0.001, 0.0)),
    ("weibull", {"shape": 0.7, "scale": 20.0}, Observation.grid(1.0, 0.0)),
])
def test_the_law_as_recorded_is_what_recording_makes_of_the_parent(law, params, obs):
    parent = LAWS[law].freeze(params)
    rng = np.random.default_rng(11)
    x = np.asarray(parent.rvs(size=400_000, random_state=rng), float)
    if obs.kind == "grid":
        seen = _recorded(x, obs.step, obs.lower, obs.upper, rng)
    else:
        seen = x[(x >= obs.lower) & (x <= obs.upper)]
    o = Observed(parent, obs, "grid" if obs.kind == "grid" else "truncated")
    n = len(seen)
    for q in (0.1, 0.3, 0.5, 0.7, 0.9):
        point = float(np.quantile(seen, q))
        p = float(o.cdf(point))
        emp = float(np.mean(seen <= point))
        assert abs(p - emp) < 5 * np.sqrt(emp * (1 - emp) / n) + 1e-12, (q, point, p, emp)
    assert o.mean() == pytest.approx(seen.mean(), abs=5 * seen.std() / np.sqrt(n))


def test_a_model_variable_names_its_parent_and_its_recorded_law():
    m = hand_model(think=(3.0, 1.1))
    m.data["variables"]["think"]["observation"] = {"kind": "exact", "lower": 2.0,
                                                   "upper": 600.0}
    m.data["variables"]["think"]["kind"] = "truncated"
    think = m.variables["think"]
    assert float(think.parent.cdf(2.0)) > 0.015              # the parent goes below Tmin
    assert float(think.observed.cdf(2.0 - 1e-9)) == 0.0      # what the log recorded does not
    draws = think.observed.rvs(20_000, np.random.default_rng(1))
    assert draws.min() >= 2.0 and draws.max() <= 600.0
    assert think.observed.latent.mean() == pytest.approx(draws.mean(), rel=0.05)


def test_report_of_a_log_shows_the_laws_fit_chose(nasa_fit_report, nasa_model):
    """``wagon report LOG --fit`` shows the laws and parameters ``wagon fit LOG`` wrote (the
    session's fit of the NASA trace)."""
    text = nasa_fit_report.read_text()
    shown = dict(re.findall(r"<h2>(\w+): (\w+) \(", text))
    model = load_model(nasa_model[0])
    assert shown == {name: v.law for name, v in model.variables.items()}
    for name, v in model.variables.items():
        for key, value in v.params.items():
            assert f"{key}={value:.4g}" in text, (name, key)
