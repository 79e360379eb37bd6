"""Logs recorded in windows (``wagon.logs.windows``): told from logs recorded throughout by
their periodic silences, and fitted in recorded time — judged by counts made here over the
lines of elastic's example log (the first minute of every hour) with a regex."""
from __future__ import annotations

import gzip
import json
import re
from datetime import datetime, timezone

import numpy as np
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from wagon.cli import main
from wagon.logs.windows import from_recorded, recording_windows, to_recorded, widened

from .conftest import ELASTIC


def test_periodic_silences_are_windows_and_nights_are_not():
    """A minute of traffic every hour is recorded in windows; the same traffic with silences
    of varying lengths (nights of 5 to 9 hours) or too few silences is recorded throughout."""
    rng = np.random.default_rng(1)
    minute = lambda start: start + np.sort(rng.uniform(0, 60, 100))      # noqa: E731
    hourly = np.concatenate([minute(3600.0 * k) for k in range(24)])
    w = recording_windows(hourly, 600)
    assert w is not None and len(w) == 24
    assert np.all(w[:, 0] == [hourly[hourly >= 3600 * k].min() for k in range(24)])
    nights = np.concatenate([minute(s) for s in np.cumsum(3600 * rng.uniform(5, 9, 24))])
    assert recording_windows(nights, 600) is None
    assert recording_windows(hourly[hourly < 3 * 3600], 600) is None     # two silences


@given(st.lists(st.floats(0, 5000, allow_nan=False), min_size=1, max_size=50))
def test_recorded_time_maps_back_to_the_times_in_the_windows(times):
    """Every time inside a window comes back from recorded time as it was; recorded time
    keeps the order of the times."""
    windows = np.array([[0.0, 60.0], [3600.0, 3660.0], [7200.0, 7230.0]])
    t = np.sort(np.asarray(times))
    u = to_recorded(t, windows)
    assert np.all(np.diff(u) >= 0)
    inside = np.any((t[:, None] >= windows[:, 0]) & (t[:, None] < windows[:, 1]), axis=1)
    assert np.allclose(from_recorded(u[inside], windows), t[inside])


def test_elastics_hourly_minutes_are_fitted_at_the_rate_they_were_recorded_at(tmp_path):
    """The fit finds the log's 84 windows (counted here: silences over 10 minutes between its
    lines) and its session rate per recorded second, within 5 % of the sessions it reports
    over the seconds of its windows as the lines give them."""
    text = gzip.decompress(ELASTIC.read_bytes()).decode("utf-8", "replace")
    when = [datetime.strptime(m, "%d/%b/%Y:%H:%M:%S").replace(tzinfo=timezone.utc).timestamp()
            for m in re.findall(r"\[(\d\d/\w{3}/\d{4}:\d\d:\d\d:\d\d) ", text)]
    t = np.sort(when)
    cut = np.flatnonzero(np.diff(t) > 600)
    recorded = float(np.sum(np.r_[t[cut], t[-1]] - np.r_[t[0], t[cut + 1]]))
    r = CliRunner().invoke(main, ["fit", str(ELASTIC), "-o", str(tmp_path / "m.json")])
    assert r.exit_code == 0, r.output
    assert "recorded in 84 windows" in r.output
    model = json.loads((tmp_path / "m.json").read_text())
    a = model["arrivals"]
    assert len(a["recorded"]["windows"]) == len(cut) + 1 == 84
    sessions = model["provenance"]["sessions"]
    assert abs(a["rate_per_s"] / (sessions / recorded) - 1) < 0.05, (a["rate_per_s"], recorded)
    assert a["rate_per_s"] > 30 * sessions / (t[-1] - t[0])
    # no think time outlasts the window it was seen in: the law as observed stops at the
    # longest window, not at Tmax (a synthetic think of minutes would go on past the window's
    # end); the log's seconds shuffled inside their minute (wagon.logs.shuffled), its lines
    # are spread over that minute: the longest window is at most the minute, and at least
    # the longest the stamps give (their last second included)
    longest = float(np.max(np.r_[t[cut], t[-1]] - np.r_[t[0], t[cut + 1]])) + 1
    think = model["variables"]["think"]
    assert think["max"] < think["observation"]["upper"] <= 60
    assert think["observation"]["upper"] > longest - 1


def test_compare_reads_a_log_recorded_in_windows_in_its_recorded_time():
    """``wagon compare`` of elastic's log says it reads it in recorded time: its session rate
    is per recorded second; its requests per second, the silences
    taken out, are those counted here with the regex: their lag-1 autocorrelation (0.66 over
    the log's span), not the on–off of 84 minutes in 83 hours of silence."""
    r = CliRunner().invoke(main, ["compare", str(ELASTIC), str(ELASTIC), "--json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert out["read"]["a"]["recording_windows"]["windows"] == 84
    rows = {row["row"]: row for row in out["rows"]}
    text = gzip.decompress(ELASTIC.read_bytes()).decode("utf-8", "replace")
    when = np.sort([datetime.strptime(m, "%d/%b/%Y:%H:%M:%S").timestamp() for m in
                    re.findall(r"\[(\d\d/\w{3}/\d{4}:\d\d:\d\d:\d\d) ", text)])
    cut = np.flatnonzero(np.diff(when) > 600)
    recorded = float(np.sum(np.r_[when[cut], when[-1]] - np.r_[when[0], when[cut + 1]]))
    rate = rows["session rate (/s)"]["a"]
    # a session has a request at least: fewer sessions a recorded second than lines; over the
    # log's span (silences in) there would be fewer sessions a second than lines over it
    assert len(when) / (when[-1] - when[0]) < rate < len(when) / recorded, rate
    # requests per second of recorded time (robots' requests in: a bound, not the value)
    silences = np.r_[0, np.cumsum(when[cut + 1] - when[cut])]
    u = when - np.repeat(silences, np.diff(np.r_[0, cut + 1, len(when)]))
    p = np.bincount((u - u[0]).astype(int)).astype(float)
    p -= p.mean()
    acf1 = float(p[1:] @ p[:-1] / (p @ p))
    assert abs(rows["acf(1) of requests/s"]["a"] - acf1) < 0.1, (rows["acf(1) of requests/s"], acf1)
    assert rows["acf(1) of requests/s"]["a"] < 0.2 and rows["session rate (/s)"]["b"] == rate


@given(st.lists(st.floats(-100, 8000, allow_nan=False), max_size=60))
def test_widened_windows_hold_every_time_and_keep_their_silences(times):
    """Windows widened to hold times (each to its nearest window) hold every one of them,
    contain the windows they were, and stay apart when the times do not bridge a silence."""
    windows = np.array([[0.0, 60.0], [3600.0, 3660.0], [7200.0, 7230.0]])
    t = np.asarray(times, float)
    w = widened(windows, t)
    assert np.all(w[:, 0] <= windows[:, 0]) and np.all(w[:, 1] >= windows[:, 1])
    assert np.all(np.any((t[:, None] >= w[:, 0]) & (t[:, None] < w[:, 1]), axis=1))
    middle = windows.mean(axis=1)
    if np.all(np.min(np.abs(t[:, None] - middle), axis=1, initial=np.inf) < 1000):
        assert np.all(w[1:, 0] > w[:-1, 1])       # no time far from every window's middle
