"""Page response time with the cut pages kept in (``wagon.analysis.pages``): the Kaplan–Meier
figures of a textbook example, properties of censoring against simulated true times, and a
replay cut by ``--max-time`` whose cut pages are those nginx's own log did not finish."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from wagon.analysis.pages import PageTimes, page_times, request_percentiles
from wagon.formats.results import pages_path, read_results
from wagon.replay import ReplayOptions, replay

from .servers import nginx, write_scenario_file

# Freireich et al. (1963), Blood 21:699–716, the 6-MP group: weeks of remission, 0 = still in
# remission at the end of the study (censored). Kleinbaum & Klein, Survival Analysis: A
# Self-Learning Text (Springer), ch. 2, tabulate its Kaplan–Meier curve: 0.857 at 6 weeks, 0.807
# at 7, 0.753 at 10, 0.690 at 13, 0.628 at 16, 0.538 at 22, 0.448 at 23: the median is 23 weeks.
MP_WEEKS = [6, 6, 6, 6, 7, 9, 10, 10, 11, 13, 16, 17, 19, 20, 22, 23, 25, 32, 32, 34, 35]
MP_RELAPSE = [1, 1, 1, 0, 1, 0, 1, 0, 0, 1, 1, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0]
MP_CURVE = {6: 0.857, 7: 0.807, 10: 0.753, 13: 0.690, 16: 0.628, 22: 0.538, 23: 0.448}


def times(duration, event) -> PageTimes:
    return PageTimes(np.asarray(duration, float), np.asarray(event, bool), np.array([]), 0, 0)


def test_the_kaplan_meier_median_of_the_6mp_group_is_23_weeks():
    from statsmodels.duration.survfunc import SurvfuncRight
    curve = SurvfuncRight(np.array(MP_WEEKS, float), np.array(MP_RELAPSE, float))
    assert dict(zip(curve.surv_times, curve.surv_prob)) == pytest.approx(MP_CURVE, abs=6e-4)
    s = times(MP_WEEKS, MP_RELAPSE).summary()
    assert s["km_median_s"] == 23 and s["km_median_lower_bound_s"] is None
    assert s["km_p90_s"] is None and s["km_p90_lower_bound_s"] == 35      # S stays at 0.448
    assert (s["pages"], s["finished"], s["cut"]) == (21, 9, 12)
    # the 9 relapses alone average 12.1 weeks; with the 12 censored at their last visit 17.1
    assert s["mean_finished_s"] == pytest.approx(109 / 9)
    assert s["mean_with_cut_s"] == pytest.approx(359 / 21)


def test_a_curve_that_never_falls_to_one_half_has_no_median_but_a_bound():
    s = times([1.0, 2.0, 3.0, 4.0], [1, 0, 0, 0]).summary()          # S = 0.75 from 1 s on
    assert s["km_median_s"] is None and s["km_median_lower_bound_s"] == 4.0
    s = times([2.0, 5.0], [0, 0]).summary()                           # nothing finished
    assert (s["km_median_s"], s["km_median_lower_bound_s"], s["mean_finished_s"]) == (None, 5.0,
                                                                                      None)
    s = times([], []).summary()
    assert s["pages"] == 0 and s["km_median_s"] is None and s["finished_s"]["p50"] is None


durations = st.lists(st.floats(0.001, 100.0), min_size=1, max_size=40)


@settings(max_examples=60, deadline=None)
@given(durations)
@example([1.0, 1.0, 1.0, 2.0, 2.0, 2.0, 2.0, 0.5])      # 7/8 · 4/7 computed 0.49999999999999994
def test_without_cuts_the_km_median_is_the_samples_upper_median(x):
    """statsmodels' convention (SAS's): the first time the curve falls *below* 0.5, so for an
    even count the upper of the two middle values, for an odd count the middle one — also when
    the curve that is 0.5 is computed a hair below it."""
    assert times(x, [1] * len(x)).summary()["km_median_s"] == sorted(x)[len(x) // 2]


@settings(max_examples=60, deadline=None)
@given(durations, st.data())
def test_censoring_only_raises_the_km_median(x, data):
    """A cut page took at least its time: counting it as finished then can only lower the
    median (None: beyond every time observed)."""
    event = data.draw(st.lists(st.booleans(), min_size=len(x), max_size=len(x)))
    censored = times(x, event).summary()["km_median_s"]
    as_finished = times(x, [1] * len(x)).summary()["km_median_s"]
    assert censored is None or censored >= as_finished


def pages_frame(start, done, errors=None) -> pd.DataFrame:
    n = len(start)
    return pd.DataFrame({"session": np.arange(n), "page": 0, "start": start, "done": done,
                         "html_latency": np.full(n, 0.01), "objects": 0,
                         "errors": np.zeros(n, int) if errors is None else errors})


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.floats(0, 10), st.floats(0.001, 20)), min_size=1, max_size=40),
       st.floats(1, 20))
def test_a_cell_cut_at_end(pages, end):
    """Pages with true start and time, cut at ``end``: the counts are the simulation's, the
    mean with the cut pages is a lower bound of the true mean of the pages that started, and
    the completed-only mean is the true mean of those that finished."""
    start, true = (np.array(c) for c in zip(*pages))
    done = start + true
    pt = page_times(pages_frame(start, done), end)
    s = pt.summary()
    began, finished = start < end, done <= end
    assert (s["pages"], s["finished"]) == (began.sum(), (began & finished).sum())
    assert s["cut"] == (began & ~finished).sum() and s["not_started"] == 0
    if began.any():
        assert s["mean_with_cut_s"] <= true[began].mean() + 1e-9
    if (began & finished).any():
        assert s["mean_finished_s"] == pytest.approx(true[began & finished].mean())


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(0.001, 10), min_size=1, max_size=30), st.floats(0.001, 10))
def test_pages_started_together_and_cut_are_the_longest(true, end):
    """Started at one instant and cut at ``end``: the cut pages are the longest, so the
    completed-only mean is at most the mean with them."""
    true = np.array(true)
    s = page_times(pages_frame(np.zeros(len(true)), true), end).summary()
    if s["finished"]:
        assert s["mean_finished_s"] <= s["mean_with_cut_s"] + 1e-9


def test_request_percentiles_are_of_the_successful_requests():
    req = pd.DataFrame({"start": [0.0, 0.0, 0.0, 0.0], "last_byte": [0.1, 0.2, 0.3, 9.0],
                        "error": ["", "", "", "timeout"]})
    got = request_percentiles(req)
    assert got == pytest.approx({"p50": 200.0, "p90": 280.0, "p99": 298.0})
    assert request_percentiles(req[req["error"] != ""]) == {"p50": None, "p90": None,
                                                            "p99": None}


def test_a_run_cut_at_max_time_counts_what_nginx_did_not_finish(tmp_path):
    """Ten sessions: the even ones click a small page, then a second one due 5 s later (never
    begun by the 1.5 s stop); the odd ones a page whose object nginx sends at 100 kB/s (cut:
    nginx allows rate x (whole seconds since the request + 1), so at most 300 kB of its 500 kB
    by the stop). Finished pages are those whose every request nginx logged with all its
    bytes."""
    site = tmp_path / "site"
    site.mkdir()
    sizes, pages, objects, sessions = {}, [], [], []
    for i in range(10):
        if i % 2 == 0:
            for name in (f"s{i}.html", f"t{i}.html"):
                sizes[name] = 200
                pages.append((f"/{name}", 200, []))
            sessions.append((0.1 * i, 0, [(len(pages) - 2, 0.0), (len(pages) - 1, 5.0)]))
        else:
            sizes[f"b{i}.html"], sizes[f"o{i}.bin"] = 200, 500_000
            objects.append((f"/o{i}.bin", 500_000))
            pages.append((f"/b{i}.html", 200, [len(objects) - 1]))
            sessions.append((0.1 * i, 0, [(len(pages) - 1, 0.0)]))
    for name, size in sizes.items():
        (site / name).write_bytes(b"x" * size)
    scenario = write_scenario_file(tmp_path / "s.jsonl", pages, objects, ["lan/http11"],
                                   sessions)
    results = tmp_path / "r.csv"
    with nginx(site, tmp_path / "ng", locations="location ~ \\.bin$ { limit_rate 100k; }") as ng:
        s = replay(str(scenario), ReplayOptions(target=ng.url, results=str(results),
                                                max_time=1.5))
        req = read_results(results)
        log = ng.access(expect=int(req["start"].notna().sum()))
    complete = {a.uri.lstrip("/") for a in log if a.status == 200 and a.bytes == sizes[
        a.uri.lstrip("/")]}
    rows = read_results(pages_path(results))
    urls = {(p["url"].lstrip("/")): [p["url"].lstrip("/")] + [
        objects[o][0].lstrip("/") for o in p["objects"]]
        for p in [{"url": u, "objects": o} for u, _, o in pages]}
    started = [pages[int(p)][0].lstrip("/") for p in rows["page"]]
    nginx_finished = sum(all(u in complete for u in urls[name]) for name in started)
    got = page_times(rows, s["duration_s"], req).summary()
    assert got["finished"] == nginx_finished == 5
    assert got["cut"] == len(started) - nginx_finished == 5
    assert got["not_started"] == 5                              # the even sessions' 2nd clicks
    assert got["mean_with_cut_s"] > got["mean_finished_s"]
    assert got["km_median_s"] is None and got["km_median_lower_bound_s"] <= 1.5


def test_every_logged_target_becomes_a_page_the_model_reader_accepts(tmp_path):
    """Targets with a control byte, a tab or U+2028, a relative one, OPTIONS * and a CONNECT
    tunnel: the model 'wagon fit' wrote was refused by its own reader ('site.pages[50].url must
    be a path: '/' then up to 2048 printable characters'), so 'wagon synth' could not use it.
    Each is now a path: percent-encoded as urllib quotes the character, a '/' put first (a
    NUL makes its line malformed, 'NUL bytes', before it is a target)."""
    from urllib.parse import quote
    from click.testing import CliRunner
    from wagon import load_model
    from wagon.cli import main
    targets = ["/a\x01b.html", "/c\td.html", "/e\u2028f.html", "g.html", "*", "example.com:443"]
    log = tmp_path / "odd.log"
    with open(log, "w", encoding="utf-8") as f:
        for k, target in enumerate(targets * 2):    # one client, a page every 30 s
            f.write(f'10.0.0.1 - - [01/Aug/2001:10:{k:02d}:00 +0000] "GET {target} HTTP/1.0" '
                    f'200 100 "-" "Mozilla/4.0"\n')
    r = CliRunner().invoke(main, ["fit", str(log), "-o", str(tmp_path / "m.json"),
                                  "--keep-paths", "--workers", "1"])
    assert r.exit_code == 0, r.output
    pages = {p["url"] for p in load_model(tmp_path / "m.json").site["pages"]}
    assert pages == {f"/a{quote(chr(1))}b.html", f"/c{quote(chr(9))}d.html",
                     f"/e{quote(chr(0x2028))}f.html", "/g.html", "/*", "/{tunnel}"}
