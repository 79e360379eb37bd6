"""``wagon replay --warmup --cooldown``: the statistics of the measured window only, the same
numbers in the console, the run file (what ``--json`` prints), the CSV and the report, and the
window's requests as nginx's own log times them."""
from __future__ import annotations

import re

import pandas as pd
import pytest

from click.testing import CliRunner

from wagon import read_results
from wagon.cli import main
from wagon.formats.results import measured, read_run
from wagon.replay.events import NOT_STARTED, Call, Hooks, clock
from wagon.replay.record import Stats

from .servers import nginx, write_scenario_file
from .test_report import _table

WARMUP, END, COOLDOWN = 1.0, 3.2, 0.6          # measured: [1.0, 2.6) s of the run


def test_warmup_and_cooldown_are_left_out_everywhere_alike(tmp_path):
    # two-click sessions every 0.2 s from 0.1 s, the second click 0.4 s after the first: every
    # request is due 0.1 s from either edge of the window, so nginx's millisecond clock places
    # each on the same side as the replay does; the last clicks are cut by the --max-time stop
    site = tmp_path / "site"
    site.mkdir()
    (site / "p.html").write_bytes(b"x" * 500)
    scenario = write_scenario_file(tmp_path / "s.jsonl", [("/p.html", 500, [])], [],
                                   ["lan/http11"], [(0.1 + 0.2 * i, 0, [(0, 0.0), (0, 0.4)])
                                                    for i in range(16)])
    with nginx(site, tmp_path / "ng") as server:
        r = CliRunner().invoke(main, ["replay", str(scenario), "--target", server.url,
                                      "--results", str(tmp_path / "r.csv"), "--quiet",
                                      "--max-time", str(END), "--warmup", str(WARMUP),
                                      "--cooldown", str(COOLDOWN)])
        assert r.exit_code == 0, r.output
        t0 = read_run(tmp_path / "r.csv")["t0_unix"]
        seen = [h.msec - t0 for h in server.combined()]
    in_window = sum(WARMUP <= t < END - COOLDOWN for t in seen)
    assert 0 < in_window < len(seen)

    summary = read_run(tmp_path / "r.csv")["summary"]
    req = read_results(tmp_path / "r.csv")
    inside = req[measured(req, read_run(tmp_path / "r.csv"))]
    counts = {"sent": int(inside["start"].notna().sum()), "ok": int((inside["error"] == "").sum()),
              "not_started": int((inside["error"] == "not_started").sum())}
    assert counts["sent"] == counts["ok"] == in_window           # nginx answered them all
    assert counts["not_started"] == 0                            # the stop falls in the cool-down
    left = summary["window"]["left_out"]
    assert left["warmup"]["requests"] == sum(t < WARMUP for t in seen)
    assert left["cooldown"]["requests"] == len(req) - len(inside) - left["warmup"]["requests"]
    assert left["cooldown"]["requests"] > sum(t >= END - COOLDOWN for t in seen)   # + not sent

    head = re.match(r"requests sent ([\d,]+) \(ok ([\d,]+), failed 0\)", r.output)
    assert head and [int(g) for g in head.groups()] == [counts["sent"], counts["ok"]], r.output
    assert summary["requests"]["sent"] == summary["requests"]["ok"] == in_window
    assert summary["window"]["seconds"] == pytest.approx(END - COOLDOWN - WARMUP)
    assert summary["throughput"]["requests_per_s"] == pytest.approx(in_window /
                                                                    (END - COOLDOWN - WARMUP))
    line = (f"left out: warm-up {left['warmup']['requests']:,} requests "
            f"due ({left['warmup']['sessions']:,} sessions started); cool-down "
            f"{left['cooldown']['requests']:,} requests")
    assert line in r.output

    out = tmp_path / "r.html"
    assert CliRunner().invoke(main, ["report", str(tmp_path / "r.csv"), "-o",
                                     str(out)]).exit_code == 0
    text = out.read_text()
    rows = dict(_table(text, "summary"))
    assert rows["requests sent (ok, failed, in flight at the stop)"] == \
        f"{in_window:,} ({in_window:,}, 0, 0)"
    assert line in rows["measured window"]
    classes = _table(text, "classes")
    assert sum(int(c[2]) for c in classes) == in_window
    started = int(re.search(r"^sessions started ([\d,]+), completed", r.output,
                            re.M).group(1).replace(",", ""))
    assert sum(int(c[1]) for c in classes) == started      # not the warm-up's late clicks'


def test_a_cooldown_needs_a_planned_end(tmp_path):
    scenario = write_scenario_file(tmp_path / "s.jsonl", [("/p.html", 5, [])], [], ["lan/http11"],
                                   [(0.0, 0, [(0, 0.0)])])
    for extra in (["--cooldown", "1"], ["--max-time", "2", "--warmup", "1.5", "--cooldown", "1"]):
        r = CliRunner().invoke(main, ["replay", str(scenario), "--target",
                                      "http://127.0.0.1:9/", *extra])
        assert r.exit_code == 2 and len(r.output.strip().splitlines()) == 1, r.output
        assert "Traceback" not in r.output


def test_what_the_stop_settles_is_placed_at_the_stop_as_the_results_place_it():
    """A run stopped 0.2 s in, within its 0.5 s warm-up, records what it never issued after
    the stop (up to ~0.4 s later for thousands of sessions): the summary counted such a row
    as measured once the recording reached past the warm-up, the results file (``measured``)
    at the stop, in the warm-up. Both place it at the stop now."""
    t0 = clock() - 1.0                                   # the recording, 1 s into the run
    stats, hooks = Stats(t0, (0.5, None)), Hooks()
    stats.subscribe(hooks)
    hooks.emit("run_stop", t0 + 0.2)
    call = Call(0, 0, 0, "/a", True, None)
    call.error = NOT_STARTED
    hooks.emit("call_done", call)
    row = pd.DataFrame({"session": [0], "start": [float("nan")], "intended": [float("nan")]})
    run = {"summary": {"window": {"from_s": 0.5, "to_s": None}, "duration_s": 0.2}}
    assert stats.c["requests"] == int(measured(row, run).sum()) == 0
    assert stats.c["warmup_requests"] == 1
