"""The expected wall time ``wagon synth`` and ``wagon replay`` print, against real replays on
nginx: a modem class at --speedup 1, the same world 20 times faster (its network sped up with
it), and 20 times faster with --real-network (the transfers at their real length)."""
from __future__ import annotations

import io
import json
import re

import numpy as np
import pytest
from click.testing import CliRunner

from wagon.cli import main
from wagon.formats.model import save_model
from wagon.formats.scenario import read_scenario, scenario_from_bytes
from wagon.formats.site import build_site
from wagon.replay import ReplayOptions, replay
from wagon.replay.walltime import _pacing, expected_wall_time
from wagon.synth import Generator, SynthOptions, synthesize
from wagon.synth.site import resolve_site

from .servers import nginx
from .test_synth import hand_model

CLASSES = "modem/http10x4:0.6,t1-dsl/http11:0.4"
#: a replay's measured length against the estimate: within 15 %, plus 0.3 s of the replay's
#: own start and stop (workers, the results written) above it
LOW, HIGH, SLACK = 0.85, 1.15, 0.3


@pytest.mark.parametrize("sessions, rate, speedup, real", [
    (6, 5.0, 1, False),          # 1 s of arrivals, modem clicks of ~1–2 s
    (30, 1.0, 20, False),        # 30 s of arrivals in 1.5 s, the modems 20 times faster
    (6, 5.0, 20, True)])         # arrivals in 0.06 s, the modems' transfers as slow as ever
def test_a_replay_lasts_what_was_expected(tmp_path, capfd, sessions, rate, speedup, real):
    """The figure ``wagon synth`` prints (its --json's ``expected_wall_s``) and the one
    ``wagon replay`` prints before it plays, against the replay's own length."""
    model = hand_model(think=(-1.0, 0.5), rate=rate, clicks_p=0.8, sizes=(7.0, 6.0))
    build_site(resolve_site(model, pages=10).spec, tmp_path / "site")
    save_model(model, tmp_path / "m.json")
    path = tmp_path / "s.jsonl"
    r = CliRunner().invoke(main, ["synth", str(tmp_path / "m.json"), "--sessions",
                                  str(sessions), "--seed", "5", "--pages", "10", "--classes",
                                  CLASSES, "--speedup", str(speedup), "-o", str(path), "--json",
                                  *(["--real-network"] if real else [])])
    assert r.exit_code == 0, r.output
    printed = json.loads(r.stdout)["expected_wall_s"]
    capfd.readouterr()
    with nginx(tmp_path / "site", tmp_path / "ng", access_log=False) as server:
        summary = replay(str(path), ReplayOptions(target=server.url, progress=True,
                                                  progress_every=60))
    told = float(re.search(r"^wagon replay: expected wall time ([\d,.]+) s",
                           capfd.readouterr().err, re.M).group(1).replace(",", ""))
    measured = summary["duration_s"]
    for wall in (printed, told):
        assert LOW * wall <= measured <= HIGH * wall + SLACK, (printed, told, measured)
    wall = expected_wall_time(read_scenario(str(path)))
    assert summary["requests"]["failed"] == 0
    if real:           # the modems' sessions outlast the sped-up arrivals many times over
        assert wall.drain_s > 10 * wall.arrivals_s


def test_the_batch_pacing_is_the_replays_own_draw_of_each_click():
    """``_pacing`` (one draw per session, the copula over the batch) gives each click's last
    object the delay the replay draws for it: ``Scenario.object_offsets`` click by click on
    the session's own stream, with correlated delays and a speedup."""
    model = hand_model(think=(-1.0, 0.5), rate=5.0, clicks_p=0.8, sizes=(7.0, 6.0))
    buf = io.StringIO()
    synthesize(Generator(model, SynthOptions(sessions=300, seed=3, pages=10, speedup=4)), buf)
    head, body = buf.getvalue().split("\n", 1)
    quantiles = np.sort(np.random.default_rng(0).exponential(0.2, (3, 11)), axis=1).tolist()
    header = {**json.loads(head), "object_delays": {"quantiles": quantiles, "rho": 0.6}}
    for o in header["site"]["objects"][::3]:        # a redirect's target, a frame
        o["follows"] = True
    sc = scenario_from_bytes((json.dumps(header) + "\n" + body).encode(), "<test>")
    fetch = sc.site.fetches()
    for b in sc.batches():
        rows = fetch.rows(b.pages, b.views)
        objects = fetch.sizes(rows)
        expected = np.zeros(len(objects))
        for i, sid in enumerate(b.ids.tolist()):
            rng = sc.pacing(sid)
            for k in range(b.click_ptr[i], b.click_ptr[i + 1]):
                if objects[k]:
                    mine = fetch.objects[fetch.ptr[rows[k]]:fetch.ptr[rows[k] + 1]]
                    expected[k] = sc.object_offsets(mine.tolist(), rng).max()
        assert objects.max() > 3 and expected.max() > 0
        assert np.array_equal(_pacing(sc, b, fetch, rows, True), expected)
        # a click whose network time outlasts what its objects could draw is not drawn
        network = np.random.default_rng(1).exponential(expected.mean() + 1e-9, len(rows))
        pruned = _pacing(sc, b, fetch, rows, True, network)
        assert np.array_equal(np.maximum(network, pruned), np.maximum(network, expected))
        assert 0 < np.count_nonzero(pruned < expected) < np.count_nonzero(expected)
