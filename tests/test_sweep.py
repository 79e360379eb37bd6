"""``wagon sweep`` against servers of known capacity: an idle nginx, where every step keeps up
and no knee is claimed, with the scenario's own (emulated, slow) client classes; and nginx
limiting itself to R requests/s (``limit_req``, the excess answered 503), where the knee is R.
Offered load is the scenario's schedule, checked against ``synth.timeline``'s own count."""
from __future__ import annotations

import json

import matplotlib.image
import numpy as np
import pytest
from click.testing import CliRunner

from wagon.analysis.capacity import (SweepError, SweepOptions, knee, parse_rates, remedy,
                                     scaled_scenario, short_step)
from wagon.cli import main
from wagon.formats.classes import DEFAULT_CLASSES
from wagon.formats.scenario import read_scenario
from wagon.formats.site import build_site
from wagon.replay.walltime import expected_wall_time
from wagon.synth import Generator, SynthOptions, synthesize
from wagon.synth.site import resolve_site
from wagon.synth.timeline import offered_requests

from .servers import nginx, write_scenario_file
from .test_synth import hand_model

CAPACITY = 100                             # nginx limit_req: requests/s


def sweep(scenario, url: str, *options: str) -> dict:
    r = CliRunner().invoke(main, ["sweep", str(scenario), "--target", url, "--json",
                                  "--pause", "0.2", *options])
    assert r.exit_code == 0, r.output
    assert "NaN" not in r.output and "Infinity" not in r.output      # strict JSON
    return json.loads(r.stdout)


def test_the_knee_is_the_rate_nginx_limits_itself_to(tmp_path):
    # one-page sessions every 20 ms (50/s at rate scale 1): offered 95 and 150 requests/s, the
    # step that keeps up below the limit and the one beyond it
    scenario = write_scenario_file(tmp_path / "s.jsonl", [("/index.html", 100, [])], [],
                                   ["lan/http11"], [(i / 50, 0, [(0, 0.0)]) for i in range(301)])
    site = tmp_path / "site"
    site.mkdir()
    (site / "index.html").write_bytes(b"x" * 100)
    with nginx(site, tmp_path / "ng", limit_rate=CAPACITY, access_log=False) as server:
        out = sweep(scenario, server.url, "--rates", "1.9,3", "--step-time", "2",
                    "--warmup", "0.5", "--plot", str(tmp_path / "c.png"))
    steps = out["steps"]
    assert [s["offered_rps"] for s in steps] == pytest.approx([95, 150], rel=0.02)
    assert out["knee"]["offered_rps"] == pytest.approx(CAPACITY, rel=0.1), steps
    assert out["max_served_rps"] == pytest.approx(CAPACITY, rel=0.1), steps
    assert steps[-1]["errors_by_kind"].get("http_5xx", 0) > 0                  # nginx's 503s
    for st in steps:                                   # a page a request: the counts agree
        p = st["pages"]
        assert p["finished"] + p["cut"] + p["not_started"] == st["offered"], st
        assert p["finished"] == st["ok"] + st["failed"] and p["with_errors"] == st["failed"]
    assert not out["kept_up"] and out["seed"] == 0
    assert out["short_step"] is None                   # one-page sessions on a LAN: no note
    assert matplotlib.image.imread(tmp_path / "c.png").shape[2] in (3, 4)


def test_the_objects_of_a_refused_page_fail_with_it_and_nothing_is_cut(tmp_path):
    """A page and its object every 5 ms (400 requests/s offered) against nginx letting 100 a
    second through: the objects of the pages it refuses are never asked for (``skipped``) and
    count as failed, so that ok + failed is every request offered, none of them cut."""
    scenario = write_scenario_file(tmp_path / "s.jsonl", [("/index.html", 100, [0])],
                                   [("/o.gif", 100)], ["lan/http11"],
                                   [(i / 200, 0, [(0, 0.0)]) for i in range(601)])
    site = tmp_path / "site"
    site.mkdir()
    (site / "index.html").write_bytes(b"x" * 100)
    (site / "o.gif").write_bytes(b"y" * 100)
    with nginx(site, tmp_path / "ng", limit_rate=CAPACITY, access_log=False) as server:
        step = sweep(scenario, server.url, "--rates", "1", "--step-time", "2",
                     "--warmup", "0.5")["steps"][0]
    assert step["offered"] == 2 * 300 and step["cut"] == 0, step
    assert step["ok"] + step["failed"] == step["offered"]
    assert step["errors_by_kind"]["skipped"] > 0 and step["errors_by_kind"]["http_5xx"] > 0


def test_an_idle_nginx_keeps_up_at_every_step_on_slow_links(tmp_path):
    """The default classes (a quarter on 56 kbit/s modems, 300 ms RTT): clicks come seconds
    after they are due, and still every step's achieved load is its offered one."""
    model = hand_model(think=(-1.0, 0.3), rate=20.0, clicks_p=0.9, sizes=(7.0, 6.0))
    build_site(resolve_site(model, pages=20).spec, tmp_path / "site")
    scenario = tmp_path / "s.jsonl"
    with open(scenario, "w") as f:
        synthesize(Generator(model, SynthOptions(sessions=200, seed=4, pages=20,
                                                 classes=DEFAULT_CLASSES)), f)
    with nginx(tmp_path / "site", tmp_path / "ng", access_log=False) as server:
        out = sweep(scenario, server.url, "--rates", "1,3", "--step-time", "2",
                    "--warmup", "0.5")
    for s in out["steps"]:
        assert s["achieved_rps"] == pytest.approx(s["offered_rps"], rel=0.1), out["steps"]
    assert out["kept_up"] and out["knee"] is None
    assert out["steps"][0]["overrun_s"] > 0.5              # the slow links' lateness, drained
    # ... which the sweep said before it began: the modems' transfers, over 10 % of the window
    assert "modem/http10x4" in out["short_step"] and out["expected_network_s"][
        "modem/http10x4"] > 0.15
    for s, rate in zip(out["steps"], (1, 3)):              # every click due in the window
        p = s["pages"]
        plan = scaled_scenario(str(scenario), rate, 2.0, 0.5, str(tmp_path / "step.jsonl"))
        assert p["finished"] + p["cut"] + p["not_started"] == plan.pages > 0, s


def test_a_short_step_says_what_would_lengthen_it(tmp_path):
    """A modem session's network time is 1/20 at --speedup 20 and the real one with
    --real-network; a step short for it says so, and what would help as the scenario was made:
    --speedup for a real-time one, not for one whose network is sped up already."""
    model = hand_model(think=(-1.0, 0.5), rate=5.0, clicks_p=0.8, sizes=(7.0, 6.0))
    made, net = {}, {}
    for speedup, real in ((1, False), (20, False), (20, True)):
        path = tmp_path / f"s{speedup}{real}.jsonl"
        with open(path, "w") as f:
            synthesize(Generator(model, SynthOptions(sessions=30, seed=5, pages=10,
                                                     classes="modem/http10x4", speedup=speedup,
                                                     real_network=real)), f)
        made[speedup, real] = read_scenario(str(path))
        net[speedup, real] = expected_wall_time(made[speedup, real]).network_s["modem/http10x4"]
    assert net[20, False] == pytest.approx(net[1, False] / 20, rel=1e-6)
    assert net[20, True] == pytest.approx(net[1, False], rel=1e-6)
    opts = SweepOptions(target="http://127.0.0.1:9/", step_time=1.5, warmup=0.5)   # 1-s window
    notes = {k: short_step(expected_wall_time(sc), opts, remedy(sc)) for k, sc in made.items()}
    for k, note in notes.items():
        assert f"take about {net[k]:,.2f} s" in note and f"{100 * net[k]:.0f} % of" in note
    assert "wagon synth --speedup" in notes[1, False]
    assert "without --real-network" in notes[20, True]
    assert "already 20 times faster" in notes[20, False] and "--speedup" not in notes[20, False]


def test_a_steps_offered_load_is_the_schedules(tmp_path):
    model = hand_model(think=(0.0, 1.0), rate=20.0, clicks_p=0.3)
    scenario = tmp_path / "s.jsonl"
    with open(scenario, "w") as f:
        synthesize(Generator(model, SynthOptions(sessions=300, seed=2, pages=20)), f)
    for rate in (0.5, 2.0):
        plan = scaled_scenario(str(scenario), rate, 4.0, 1.0, str(tmp_path / "step.jsonl"))
        times = np.concatenate([r.time for r in offered_requests(read_scenario(
            str(tmp_path / "step.jsonl")))])
        assert times.max() < 4.0                               # nothing due after the step
        assert plan.offered == np.count_nonzero(times >= 1.0) > 0
        clicks = np.concatenate([r.time[r.is_page] for r in offered_requests(read_scenario(
            str(tmp_path / "step.jsonl")))])
        assert plan.pages == np.count_nonzero(clicks >= 1.0) > 0
        assert plan.sessions == sum(s.start / rate < 4.0 for s in read_scenario(
            str(scenario)).sessions())


def test_a_cut_of_a_steady_scenario_plays_until_its_clicks_are_done(tmp_path):
    """A steady scenario stops the replay at its end; the cut a step or an experiment's run
    plays keeps only the clicks due by then and has no end of its own, so the pages under way
    finish during the drain instead of being stopped with it."""
    from wagon.replay.runner import steady_end
    from wagon.synth.reference import wagon_model
    source = tmp_path / "steady.jsonl"
    with open(source, "w") as f:
        synthesize(Generator(wagon_model(1.0), SynthOptions(duration=30, steady=True, seed=1)),
                   f)
    scaled_scenario(str(source), 1.0, 30.0, 0.0, str(tmp_path / "cut.jsonl"))
    assert steady_end(read_scenario(source)) == 30.0
    assert steady_end(read_scenario(tmp_path / "cut.jsonl")) is None


def test_knee_rule_and_rates():
    def step(offered, achieved, errors=0.0):
        return {"offered_rps": offered, "achieved_rps": achieved, "error_rate": errors}
    assert knee([step(10, 10), step(20, 19), step(30, 25), step(40, 39)], 0.1) == 1
    assert knee([step(10, 8)], 0.1) is None
    assert knee([step(10, 10), step(20, 20)], 0.1) is None               # no knee in the range
    assert knee([step(10, 10), step(20, 20, errors=0.2)], 0.1) == 0
    assert parse_rates("0.5,1,2") == (0.5, 1.0, 2.0)
    for bad in ("1,0.5", "0,1", "a", "1,1", "nan"):
        with pytest.raises(SweepError):
            parse_rates(bad)


def test_the_table_shows_page_response_time_with_the_cut_pages():
    """A step whose Kaplan–Meier curve never fell to 0.1 shows its p90 as beyond the longest
    time observed; ``--latency request`` the requests' percentiles instead."""
    from wagon.analysis.capacity import steps_text
    from wagon.analysis.pages import PageTimes
    pages = PageTimes(np.array([0.5, 1.0, 1.5, 4.0]), np.array([1, 1, 1, 0], bool),
                      np.array([]), 0, 0).summary()
    step = {"rate_scale": 1, "offered_rps": 4.0, "achieved_rps": 3.0, "served_rps": 3.0,
            "error_rate": 0.0, "cut": 1, "pages": pages,
            "latency_ms": {"p50": 12.5, "p90": 40.0, "p99": 99.0}}
    result = {"steps": [step], "knee": None, "kept_up": True, "options": {"within": 0.1},
              "max_served_rps": 3.0}
    row = steps_text(result).splitlines()[1].split()
    assert row[5:8] == ["1.50", ">4.00", "1"]              # S: 0.75, 0.5, 0.25 (< 0.5 at 1.5)
    assert steps_text(result, "request").splitlines()[1].split()[5:8] == ["12.5", "40.0", "99.0"]


def test_a_plot_into_a_missing_folder_is_refused_before_the_sweep(tmp_path):
    """--plot into a folder that does not exist: one line, exit 2, before any step is played
    (it was found after the sweep, and the table of every step was lost with it); here the
    target listens nowhere, so a sweep that started would end in exit 3 instead."""
    scenario = write_scenario_file(tmp_path / "s.jsonl", [("/a.html", 10, [])], [],
                                   ["lan/http11"], [(t, 0, [(0, 0.0)]) for t in range(4)])
    r = CliRunner().invoke(main, ["sweep", str(scenario), "--target", "http://127.0.0.1:9/",
                                  "--rates", "1", "--step-time", "2",
                                  "--plot", str(tmp_path / "no" / "curve.png")])
    assert r.exit_code == 2 and len(r.output.strip().splitlines()) == 1, r.output
    assert f"--plot {tmp_path / 'no' / 'curve.png'}: no folder {tmp_path / 'no'}" in r.output
