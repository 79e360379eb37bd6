"""Time outliers and repeated lines left out (counted, shown), and a model that does not depend on
the order of input files or of lines within a second, on the NASA trace."""
from __future__ import annotations

import gzip
import json
import random

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from wagon import parse_bytes, parse_logs, sessionize
from wagon.cli import main
from wagon.logs.clean import _cuts, distinct_times, merge_counted, time_outliers


@pytest.fixture(scope="module")
def nasa_lines(nasa) -> list[bytes]:
    return gzip.decompress(nasa.read_bytes()).splitlines(keepends=True)


STRAY = b'stray.example.com - - [01/Aug/2100:10:00:00 -0400] "GET /ksc.html HTTP/1.0" 200 7280\n'


def _fit(tmp_path, name: str, *files: bytes, args=()) -> dict:
    paths = []
    for i, data in enumerate(files):
        paths.append(tmp_path / f"{name}{i}.log")
        paths[-1].write_bytes(data)
    r = CliRunner().invoke(main, ["fit", *map(str, paths), "-o", str(tmp_path / f"{name}.json"),
                                  "--json", *args])
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout) | {"stderr": r.stderr}


@pytest.fixture(scope="module")
def whole(tmp_path_factory, nasa_lines) -> dict:
    """``wagon fit --json`` of the NASA trace as one file, once for the tests that compare."""
    return _fit(tmp_path_factory.mktemp("whole"), "whole", b"".join(nasa_lines))


def test_a_stray_line_dated_2100_does_not_change_the_arrival_rate(tmp_path, nasa_lines, whole):
    mid = len(nasa_lines) // 2
    stray = _fit(tmp_path, "stray", b"".join(nasa_lines[:mid] + [STRAY] + nasa_lines[mid:]))
    assert stray["time_outliers"] == 1 and stray["parsed"] == 20_001
    assert "left out stray0.log:10001 (time outlier): 2100-08-01T14:00:00" in stray["stderr"]
    assert stray["arrivals"]["rate_per_s"] == whole["arrivals"]["rate_per_s"]
    assert stray["variables"]["interarrival"]["best"] == whole["variables"]["interarrival"]["best"]
    assert whole["arrivals"]["rate_per_s"] == pytest.approx(0.0567, rel=0.01)


def test_outlier_rule_keeps_quiet_hours_and_cuts_far_runs():
    rng = np.random.default_rng(1)
    hour = 3600.0
    # a morning whose traffic grows tenfold: the quiet first hours stay
    t = np.sort(np.r_[rng.uniform(0, 6 * hour, 300), rng.uniform(6 * hour, 12 * hour, 3000)])
    assert not time_outliers(t, np.zeros(len(t), int)).any()
    # a clock that jumped a year ahead for 10 lines, a stray line 3 days back
    jumped = np.r_[t, t[:10] + 365 * 86400, t[0] - 3 * 86400]
    out = time_outliers(jumped, np.zeros(len(jumped), int))
    assert out.sum() == 11 and out[-11:].all()
    # each file is judged on its own: two days in two files are no outliers
    both = np.r_[t, t + 86400 * 2]
    assert not time_outliers(both, np.r_[np.zeros(len(t), int), np.ones(len(t), int)]).any()


def test_overlapping_inputs_are_reported_and_counted_once(tmp_path, nasa_lines, whole):
    a, b = b"".join(nasa_lines[:12_000]), b"".join(nasa_lines[8_000:])   # 4,000 lines twice
    split = _fit(tmp_path, "split", a, b)
    assert split["duplicate_lines"] == 4_000
    assert "(repeated from an earlier input)" in split["stderr"]
    for name in ("clicks", "think", "objects_per_page", "page_size"):
        assert split["variables"][name]["params"] == whole["variables"][name]["params"], name
    assert split["counts"]["embedded_requests"] == whole["counts"]["embedded_requests"]


def test_model_does_not_depend_on_file_order_or_line_order_within_a_second(nasa_lines):
    """Shuffle the lines of every second and reverse the order of two input files: the same
    sessions, samples and site."""
    seconds: dict[bytes, list[bytes]] = {}
    for line in nasa_lines:
        seconds.setdefault(line.split(b"[", 1)[1][:26], []).append(line)
    rng = random.Random(5)
    shuffled = []
    for group in seconds.values():
        group = group[:]
        rng.shuffle(group)
        shuffled += group
    a, _ = parse_bytes(b"".join(nasa_lines))
    b, _ = parse_bytes(b"".join(shuffled))
    sa, sb = sessionize(a, seed=2), sessionize(b, seed=2)
    for name in sa.samples:
        assert np.array_equal(np.sort(sa.samples[name]), np.sort(sb.samples[name])), name
    assert np.array_equal(sa.session_start, sb.session_start)
    assert [a.urls[u] for u in sa.click_url] == [b.urls[u] for u in sb.click_url]


def test_file_order_does_not_change_the_model(tmp_path, nasa_lines):
    half = len(nasa_lines) // 2
    parts = [b"".join(nasa_lines[:half]), b"".join(nasa_lines[half:])]
    for i, p in enumerate(parts):
        (tmp_path / f"p{i}.log").write_bytes(p)
    one = parse_logs([str(tmp_path / "p0.log"), str(tmp_path / "p1.log")])[0]
    two = parse_logs([str(tmp_path / "p1.log"), str(tmp_path / "p0.log")])[0]
    s1, s2 = sessionize(one), sessionize(two)
    for name in s1.samples:
        assert np.array_equal(np.sort(s1.samples[name]), np.sort(s2.samples[name])), name


@given(st.lists(st.integers(0, 40), max_size=60), st.booleans())
def test_distinct_times_is_np_unique(values, in_order):
    """The one-pass count of times already in order gives np.unique's answer, in order or not."""
    t = np.sort(np.array(values, float)) if in_order else np.array(values, float)
    got, want = distinct_times(t), np.unique(t, return_counts=True)
    assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])


@given(st.lists(st.integers(0, 100), max_size=40), st.integers(0, 10), st.integers(1, 8))
def test_jumps_found_a_step_at_a_time_are_those_of_np_diff(values, gap, step):
    """Where sorted times jump by more than the gap, found a few values at a time (any step,
    the seams between steps included): where np.diff of them all says."""
    t = np.sort(np.array(values, float))
    assert np.array_equal(_cuts(t, gap, step), np.flatnonzero(np.diff(t) > gap) + 1)


@given(st.lists(st.lists(st.integers(0, 40), max_size=20), max_size=5), st.booleans())
def test_pieces_distinct_times_merge_as_np_unique(pieces, in_order):
    """The distinct times of pieces (with counts) merged, joined when the pieces are in order
    (a seam may share a second), by a sort otherwise: every time's count, as np.unique of all
    of them gives."""
    times = [np.array(p, float) for p in pieces]
    if in_order and times:
        times = np.array_split(np.sort(np.concatenate(times)), len(times))
    got = merge_counted([distinct_times(t) for t in times if len(t)])
    want = np.unique(np.concatenate(times + [np.zeros(0)]), return_counts=True)
    assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])
