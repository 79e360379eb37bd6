"""The live view of ``wagon replay --dashboard``: /metrics read by Prometheus' own parser
(prometheus_client) mid-run and at the end agrees with the run's summary, its results CSV and
nginx's access log; its per-page times (the table, each page's chart, wagon_page_seconds) with
the pages CSV; headless Chromium shows the page's figures between two scrapes of /metrics
and charts with points (its screenshot, their lines, the page chart's too), and once the run
has ended the summary's figures and text; ``--workers 2`` is one view of both."""
from __future__ import annotations

import csv
import json
import math
import re
import signal
import subprocess
import sys
import time
import urllib.request
from collections import Counter

import matplotlib.image
import numpy as np
import pytest
from click.testing import CliRunner
from prometheus_client.parser import text_string_to_metric_families

from wagon.cli import main
from wagon.formats.results import pages_path
from wagon.replay import ReplayOptions, replay
from wagon.replay.dashboard import linger

from .conftest import require_tool
from .servers import nginx
from .test_replay import site_and_scenario  # noqa: F401 - the fixture

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]
URL = re.compile(r"wagon: live view at (http://127\.0\.0\.1:\d+/)")


def scrape(base: str) -> dict[str, list]:
    """/metrics as Prometheus reads it: each family's samples (name, labels, value)."""
    with urllib.request.urlopen(base + "metrics", timeout=5) as r:
        assert r.headers["Content-Type"].startswith("text/plain; version=0.0.4")
        text = r.read().decode()
    return {f.name: f.samples for f in text_string_to_metric_families(text)}


def value(m: dict, family: str, name: str | None = None) -> float:
    return sum(s.value for s in m[family] if name is None or s.name == name)


def state_json(base: str) -> dict:
    with urllib.request.urlopen(base + "state.json", timeout=5) as r:
        return json.load(r)


def scrape_when(base: str, ok, within: float = 30.0, read=scrape) -> dict:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        m = read(base)
        if ok(m):
            return m
        time.sleep(0.1)
    raise AssertionError("the live view never showed what was awaited")


def page_dom(chromium: str, base: str, tmp_path, shot=None) -> str:
    """The live page as headless Chromium has it after its first update (and its screenshot
    at ``shot``)."""
    more = [f"--screenshot={shot}", "--window-size=1200,900"] if shot else []
    return subprocess.run([chromium, *FLAGS, f"--user-data-dir={tmp_path / 'chrome'}",
                           "--virtual-time-budget=500", *more, "--dump-dom", base],
                          capture_output=True, text=True, timeout=60).stdout


def drawn(shot) -> int:
    """Pixels of the screenshot in the first series' colour (#1f77b4: requests/s, p50 and
    sessions), the charts' lines and their legends' text."""
    rgb = matplotlib.image.imread(shot)[..., :3]
    return int(np.count_nonzero(np.all(np.abs(rgb - np.array([31, 119, 180]) / 255) < 0.1,
                                       axis=-1)))


def tiles(dom: str) -> dict[str, str]:
    """The page's tiles: name → the figure shown."""
    return dict((name, fig) for fig, name in
                re.findall(r'<div class="tile" id="tile-[^"]*"><b>([^<]*)</b>([^<]*)</div>', dom))


def csv_rows(path) -> list[dict]:
    with open(path, newline="") as f:
        return list(csv.DictReader(line for line in f if not line.startswith("#")))


def test_metrics_and_page_of_two_workers_agree_with_summary_results_and_nginx(
        tmp_path, site_and_scenario):  # noqa: F811 - the fixture
    chromium = require_tool("chromium")
    scenario = site_and_scenario("lan/http11,lan/http10x2", sessions=60, rate=30.0)
    results = tmp_path / "r.csv"
    with nginx(tmp_path / "site", tmp_path / "ng") as server:
        proc = subprocess.Popen(
            [sys.executable, "-m", "wagon", "replay", str(scenario), "--target", server.url,
             "--workers", "2", "--results", str(results), "--json", "--quiet", "--fail-on",
             "errors>50%", "--dashboard", "127.0.0.1:0", "--dashboard-hold", "60"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
        try:
            first = proc.stderr.readline()
            base = URL.fullmatch(first.strip()).group(1)
            total = lambda m: value(m, "wagon_requests")                    # noqa: E731
            # two seconds in: the series hold two points (a point a second, once the workers'
            # states have come), whenever the page loads
            mid = scrape_when(base, lambda m: total(m) > 0 and value(m, "wagon_run_seconds")
                              >= 2.0)
            assert value(mid, "wagon_run_finished") == 0
            before = scrape(base)
            dom = page_dom(chromium, base, tmp_path, tmp_path / "mid.png")
            after = scrape(base)
            final = scrape_when(base, lambda m: value(m, "wagon_run_finished") == 1)
            end = page_dom(chromium, base, tmp_path)           # the page during the hold
            # the view's last point has come once every page's visits in its series add up
            # to its rows in the pages CSV (the file is complete: the run has ended)
            timed = page_times(pages_path(results))
            state = scrape_when(base, lambda st: all(
                sum(p["visits"]) == len(timed[p["id"]]) for p in st["page_ms"]), read=state_json)
            proc.send_signal(signal.SIGINT)                   # ends the hold
            out, err = proc.communicate(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        log = server.access(expect=int(total(final)))
    assert proc.returncode == 0, err
    summary = json.loads(out)
    rows = csv_rows(results)

    # the end: the summary's totals, the CSV's rows by class, kind and outcome, nginx's log
    assert 0 < total(mid) < total(final) == summary["requests"]["total"] == len(rows)
    got = Counter({(s.labels["class"], s.labels["kind"], s.labels["outcome"]): s.value
                   for s in final["wagon_requests"]})
    assert got == Counter((r["class"], r["kind"], r["error"] or "ok") for r in rows)
    ok = sum(n for (_, _, o), n in got.items() if o == "ok")
    assert ok == summary["requests"]["ok"] and 0 < ok <= len(log)
    assert value(final, "wagon_sessions_started") == summary["sessions"]["started"] == 60
    assert value(final, "wagon_sessions_active") == 0
    assert len({s.labels["worker"] for s in final["wagon_generator_cpu_seconds"]}) == 2
    # the latency histogram against the CSV's times (written to the µs: a value within 1 µs
    # of a bound may fall either side of it)
    hist = final["wagon_request_seconds"]
    for cls, kind in {(r["class"], r["kind"]) for r in rows if not r["error"]}:
        took = [float(r["last_byte"]) - float(r["start"]) for r in rows
                if not r["error"] and (r["class"], r["kind"]) == (cls, kind)]
        mine = {s.labels.get("le"): s.value for s in hist
                if (s.labels["class"], s.labels["kind"]) == (cls, kind) and
                s.name.endswith("_bucket")}
        for le, n in mine.items():
            bound = math.inf if le == "+Inf" else float(le)
            near = sum(abs(t - bound) <= 2e-6 for t in took)
            assert abs(n - sum(t <= bound for t in took)) <= near, (cls, kind, le)
        count = [s.value for s in hist if s.name.endswith("_count") and
                 (s.labels["class"], s.labels["kind"]) == (cls, kind)]
        assert count == [len(took)] == [mine["+Inf"]]

    # each class's p99 over time: every point within the class's own latencies in the CSV (the
    # histogram keeps 3 digits), each class with points
    assert state["class_p99_ms"].keys() == {"lan/http11", "lan/http10x2"}
    for cls, series in state["class_p99_ms"].items():
        took = [1e3 * (float(r["last_byte"]) - float(r["start"])) for r in rows
                if r["class"] == cls and not r["error"]]
        shown = [v for v in series if v is not None]
        assert shown and all(0.99 * min(took) <= v <= 1.01 * max(took) for v in shown), cls

    # each page's visit times: the table's percentiles are the nearest rank of the page's
    # times in the pages CSV (the histogram keeps 3 digits, the CSV the µs), its most visited
    # pages are the CSV's, and /metrics' wagon_page_seconds holds the first 5 of them
    visits = Counter(int(r["page"]) for r in csv_rows(pages_path(results)))
    order = sorted(visits, key=lambda p: (-visits[p], p))
    assert [p["id"] for p in state["pages"]] == order[:15]
    assert [p["id"] for p in state["page_ms"]] == order[:5]
    for p in state["pages"]:
        x = 1e3 * np.array(timed[p["id"]])
        assert (p["visits"], p["timed"]) == (visits[p["id"]], len(x)) and len(x), p
        assert np.allclose([p["p50_ms"], p["p90_ms"], p["p99_ms"]],
                           np.percentile(x, (50, 90, 99), method="inverted_cdf"),
                           rtol=5.01e-4, atol=2e-3), p
    # each page's p90 over time: every point within the page's own times
    for p in state["page_ms"]:
        x = 1e3 * np.array(timed[p["id"]])
        shown = [v for v in p["p90"] if v is not None]
        assert shown and all(0.999 * x.min() - 2e-3 <= v <= 1.001 * x.max() + 2e-3
                             for v in shown), p
    hist = final["wagon_page_seconds"]
    assert {s.labels["id"] for s in hist} == {str(p) for p in order[:5]}
    for page in order[:5]:
        x = np.array(timed[page])
        mine = {s.labels.get("le", s.name): s.value for s in hist if s.labels["id"] == str(page)}
        assert mine["wagon_page_seconds_count"] == mine["+Inf"] == len(x)
        for le in set(mine) - {"+Inf", "wagon_page_seconds_count", "wagon_page_seconds_sum"}:
            bound = float(le)       # a time less than 0.1 % (or 2 µs) above it may count below
            near = np.count_nonzero((x > bound) & (x <= bound * 1.001 + 2e-6))
            assert 0 <= mine[le] - np.count_nonzero(x <= bound) <= near, (page, le)

    # the page at the end: the summary's figures, and its text
    shown = tiles(end)
    assert "the run has ended" in end
    assert [int(shown[k].replace(",", "")) for k in ("requests", "ok", "failed", "pages")] == [
        summary["requests"]["total"], summary["requests"]["ok"], summary["errors"]["total"],
        summary["pages"]["total"]], shown
    sent = summary["requests"]["total"] - summary["requests"]["not_started"]
    assert f"requests sent {sent:,} (ok {summary['requests']['ok']:,}" in end

    # the page, loaded mid-run: its figures lie between the scrapes around its load
    assert 'data-updates="' in dom, dom[-2000:]
    shown = re.search(r'id="tile-requests"><b>([\d,]+)</b>', dom).group(1)
    assert total(before) <= int(shown.replace(",", "")) <= total(after)
    assert "2 processes" in dom
    points = [int(n) for n in re.findall(r'class="series" data-points="(\d+)"', dom)]
    paths = re.findall(r'<path d="(M[^"]*)"[^>]*class="series"', dom)
    chart = re.search(r'<svg id="page-latency"[^>]*>(.*?)</svg>', dom, re.S).group(1)
    lines = [int(n) for n in re.findall(r'class="series" data-points="(\d+)"', chart)]
    assert 1 <= len(lines) <= 5 and max(lines) >= 1          # a line per most visited page
    assert len(points) == 7 + 2 + len(lines) and min(points[:9]) >= 1 and max(points) >= 2
    assert any(d.count("L") >= 1 for d in paths)
    # and its screenshot has the lines: the three legends' text alone is ~270 such pixels, a
    # line across a chart ~470 or more
    assert drawn(tmp_path / "mid.png") > 600
    table = re.search(r'<table id="classes">(.*?)</table>', dom, re.S).group(1)
    shown = {c[0]: int(c[1].replace(",", "")) for c in
             (re.findall(r"<td>(.*?)</td>", row) for row in re.findall(r"<tr>(.*?)</tr>", table))
             if c}
    assert shown.keys() == {"lan/http11", "lan/http10x2"}
    for cls, n in shown.items():
        of = lambda m: sum(s.value for s in m["wagon_requests"]                   # noqa: E731
                           if s.labels["class"] == cls)
        assert of(before) <= n <= of(after), cls


def page_times(path) -> dict[int, list[float]]:
    """Each page's visit times (s) in a pages CSV (the visits that have one)."""
    timed: dict[int, list[float]] = {}
    for r in csv_rows(path):
        timed.setdefault(int(r["page"]), [])
        if r["response_time"]:
            timed[int(r["page"])].append(float(r["response_time"]))
    return timed


def test_one_process_view_holds_the_final_figures_then_stops(tmp_path, site_and_scenario,  # noqa
                                                             capfd):
    scenario = site_and_scenario("lan/http11", sessions=10)
    with nginx(tmp_path / "site", tmp_path / "ng") as server:
        s = replay(str(scenario), ReplayOptions(target=server.url, dashboard="0",
                                                dashboard_hold=1.0))
        base = URL.search(capfd.readouterr().err).group(1)
        final = scrape(base)                                 # the hold: after the summary
        linger()
        log = server.access(expect=s["requests"]["total"])
    assert value(final, "wagon_run_finished") == 1
    assert value(final, "wagon_requests") == s["requests"]["total"] == len(log) > 0
    assert value(final, "wagon_sessions_started") == 10 == s["sessions"]["completed"]
    with pytest.raises(OSError):                             # URLError: refused, once over
        scrape(base)


@pytest.mark.parametrize("args, message", [
    (["--dashboard", "x"], "--dashboard 'x': give [HOST:]PORT"),
    (["--dashboard", "70000"], "a port from 0"),
    (["--dashboard-hold", "5"], "--dashboard-hold is seconds (at least 0) of a --dashboard"),
])
def test_a_bad_dashboard_is_one_line_and_exit_2(tmp_path, site_and_scenario, args,  # noqa: F811
                                                message):
    scenario = site_and_scenario("lan/http11", sessions=2)
    r = CliRunner().invoke(main, ["replay", str(scenario), "--target", "http://127.0.0.1:9/",
                                  *args])
    assert r.exit_code == 2 and message in r.output and len(r.output.splitlines()) == 1, \
        r.output
