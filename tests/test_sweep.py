"""``wagon sweep`` against ``wagon serve --service-time S --max-connections M``: a server that
answers at most M requests at a time, each after S seconds, has the capacity M/S requests/s
(one request per connection with HTTP/1.0); the knee the sweep finds is within 20 % of it."""
from __future__ import annotations

import json
import subprocess
import sys

import matplotlib.image
import pytest
from click.testing import CliRunner

from wagon.analysis.capacity import SweepError, knee, parse_rates
from wagon.cli import main

from .servers import free_port, wait_port, write_scenario_file

SERVICE, SLOTS = 0.05, 5                   # capacity 100 requests/s


def test_the_knee_is_the_servers_capacity(tmp_path):
    # one-page sessions every 40 ms (25/s at rate scale 1): 18 s, the longest step (2.5 s at 6x);
    # offered 50, 85 (under the capacity of 100, with room for a loaded machine's jitter: at
    # exactly 100 a slow second drops it under the 10 % rule) and 150 requests/s
    scenario = write_scenario_file(tmp_path / "s.jsonl", [("/index.html", 100, [])], [],
                                   ["lan/http10x1"], [(i / 25, 0, [(0, 0.0)]) for i in range(451)])
    site = tmp_path / "site"
    site.mkdir()
    (site / "index.html").write_bytes(b"x" * 100)
    port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "wagon", "serve", "--site", str(site),
                               "--port", str(port), "--service-time", str(SERVICE),
                               "--max-connections", str(SLOTS), "--max-time", "60"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_port(port)
        r = CliRunner().invoke(main, ["sweep", str(scenario), "--target",
                                      f"http://127.0.0.1:{port}/", "--rates", "2,3.4,6",
                                      "--step-time", "2", "--warmup", "0.5", "--pause", "0.5",
                                      "--no-emulation", "--plot", str(tmp_path / "c.png"),
                                      "--json"])
    finally:
        server.terminate()
        server.wait(10)
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)                    # strict JSON: json.loads rejects no NaN, so
    assert "NaN" not in r.output and "Infinity" not in r.output       # look for them too
    capacity = SLOTS / SERVICE
    steps = out["steps"]
    assert [s["rate_scale"] for s in steps] == [2, 3.4, 6]
    assert [s["offered_rps"] for s in steps] == pytest.approx([50, 85, 150], rel=0.05)
    assert out["knee"]["offered_rps"] == pytest.approx(capacity, rel=0.2), steps
    assert out["max_achieved_rps"] == pytest.approx(capacity, rel=0.2), steps
    assert steps[-1]["achieved_rps"] < 0.8 * steps[-1]["offered_rps"]          # saturated
    assert steps[-1]["latency_ms"]["p50"] > 2 * steps[0]["latency_ms"]["p50"]  # queued
    assert matplotlib.image.imread(tmp_path / "c.png").shape[2] in (3, 4)


def test_knee_rule_and_rates():
    def step(offered, achieved, errors=0.0):
        return {"offered_rps": offered, "achieved_rps": achieved, "error_rate": errors}
    assert knee([step(10, 10), step(20, 19), step(30, 25), step(40, 39)], 0.1) == 1
    assert knee([step(10, 8)], 0.1) is None
    assert knee([step(10, 10), step(20, 20, errors=0.2)], 0.1) == 0
    assert parse_rates("0.5,1,2") == (0.5, 1.0, 2.0)
    for bad in ("1,0.5", "0,1", "a", "1,1", "nan"):
        with pytest.raises(SweepError):
            parse_rates(bad)
