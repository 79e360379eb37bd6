"""``wagon experiment``: a recipe's cells played against the real servers it starts. The 2×2
recipe (server kind × protocol) is checked against what the servers themselves logged and the
scenario each cell played; bad recipes are one line each."""
from __future__ import annotations

import csv
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from wagon.cli import main
from wagon.experiment.recipe import RecipeError, read_recipe, shipped
from wagon.experiment.servers import NGINX_TEMPLATE
from wagon.formats.scenario import read_scenario

from .conftest import needs_packet_path, require_tool

#: the topology file iptne-loss ships (a recipe in a test's folder names it by its full path)
ROUTER = shipped()["iptne-loss"].parent / "topologies" / "iptne-router.toml"

TWO_BY_TWO = """
[experiment]
name = "two-by-two"
repetitions = 1
duration = 1
drain = 2
pause = 0
seed = 7

[workload]
model = "wagon"
rate = 4.0
pages = 30
classes = "lan/http11"
steady = true

[server]
kind = "wagon"

[axes]
"server.kind" = ["wagon", "nginx"]
"replay.protocol" = ["http10x1", "http11"]

[[plot]]
x = "replay.protocol"
y = "page_mean_with_cut_s"
series = "server.kind"
"""


def _table(path) -> list[dict]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def test_a_two_by_two_recipe_plays_each_cell_against_its_own_server(tmp_path):
    require_tool("nginx")
    recipe = tmp_path / "r.toml"
    recipe.write_text(TWO_BY_TWO)
    r = CliRunner().invoke(main, ["experiment", str(recipe), "--out", str(tmp_path / "run"),
                                  "--quiet"])
    assert r.exit_code == 0, r.output
    rows = _table(tmp_path / "run" / "table.csv")
    assert [(x["server.kind"], x["replay.protocol"]) for x in rows] == [
        ("wagon", "http10x1"), ("wagon", "http11"), ("nginx", "http10x1"), ("nginx", "http11")]
    for row in rows:
        folder = tmp_path / "run" / "cells" / f"c{int(row['cell']):03d}-r0"
        sc = read_scenario(folder / "scenario.jsonl")
        clicks = sum(len(s.clicks) for s in sc.sessions())
        # every click of the scenario is a page the table accounts for: done, cut or never begun
        assert int(row["page_finished"]) + int(row["page_cut"]) + int(row["page_not_started"]) \
            == clicks, row
        assert int(row["page_finished"]) > 0 and row["seed"] == "7"
        assert row["stopped_by"] == "", row               # its clicks all played, none cut
        # the server's own log: the answers the replay counts, on the protocol's connections
        log = [line.split() for line in (folder / "server" / "access.log").read_text(
            ).splitlines()]
        assert int(row["requests_ok"]) == len(log) == int(row["server_logged_requests"]), row
        if row["server.kind"] == "nginx":                  # $status $connection per request
            assert all(x[5] == "200" for x in log)
            connections = len({x[3] for x in log})
            if row["replay.protocol"] == "http10x1":
                assert connections == len(log)
            else:
                assert connections == len({x[1] for x in log}) <= int(row["sessions"])
    assert (tmp_path / "run" / "plot-0-page_mean_with_cut_s.png").stat().st_size > 1000


@pytest.mark.parametrize("text, message", [
    ("[experiment]\nname = 'x'\n[workload]\nrate = -1\n", "workload.rate must be positive"),
    ("[experiment]\nname = 'x'\n[workload]\nrat = 1\n", "[workload] has no key 'rat'"),
    ("[experiment]\nname = 'x'\n[wrkload]\n", "unknown table [wrkload]"),
    ("[experiment]\nname = 'x'\n[axes]\nserver.KeepAliveTimeout = [1, 2]\n",
     "quote the axis' name"),
    ("[experiment]\nname = 'x'\n[axes]\n'workload.rate' = [1, 1]\n", "a value is repeated"),
    ("[experiment]\nname = 'x'\n[axes]\n'workload.rate' = []\n", "one or more values"),
    ("[experiment]\nname = 'x'\n[axes]\n'workload.rate' = ['fast']\n", "must be a number"),
    ("[experiment]\nname = 'x'\n[axes]\n'replay.network' = ['wire']\n", "one of client, packet"),
    ("[experiment]\nname = 'x'\nmeasures = ['speed']\n", "unknown 'speed'"),
    ("[experiment]\nname = 'x'\nduration = nan\n", "must be finite"),
    ("[experiment]\nname = 'x'\nrepetitions = 0\n", "experiment.repetitions must be positive"),
    ("[experiment]\nname = 'x'\nrepetitions = 2.5\n", "repetitions must be an integer"),
    ("[experiment]\nname = 'x'\nrepetition = 3\n", "[experiment] has no key 'repetition'"),
    ("[experiment]\nname = 'x'\n[replay]\nconnect_timeout = 0\n",
     "replay.connect_timeout must be positive"),
    ("[experiment]\nname = 'x'\n[[plot]]\ny = 'a'\n", "needs x and y"),
    ("[experiment]\n", "needs a name"),
    ("[experiment\nname = 'x'\n", "not TOML"),
    ("[experiment]\nname = 'x'\n[workload]\nsteady = true\n[axes]\n"
     "'workload.deterministic' = [false, true]\n", "cell 1 (workload.deterministic=True): "
     "--steady needs"),
    ("[experiment]\nname = 'x'\n[workload]\nclasses = 'lan/http3'\n", "cell 0 (the one "
     "cell): unknown protocol 'http3'"),
    ("[experiment]\nname = 'x'\n[replay]\nprotocol = 'spdy'\n", "unknown protocol 'spdy'"),
    ("[experiment]\nname = 'x'\n[workload]\nmodel = 'nowhere.json'\n", "nowhere.json"),
    ("[experiment]\nname = 'x'\n[axes]\n'replay.topology' = ['nowhere.toml']\n",
     "replay.topology: "),
    ("[experiment]\nname = 'x'\n[axes]\n'topology.router.queue_kb' = [8, 4]\n",
     "cell topology.router.queue_kb=8: an axis on topology.LINK.KEY needs replay.topology"),
    ("[experiment]\nname = 'x'\n[axes]\n'topology.queue_kb' = [8, 4]\n",
     "name it topology.LINK.KEY, KEY one of"),
    ("[experiment]\nname = 'x'\n[axes]\n'topology.router.classes' = ['lan']\n",
     "name it topology.LINK.KEY, KEY one of"),
    (f"[experiment]\nname = 'x'\n[replay]\nnetwork = 'packet'\ntopology = '{ROUTER}'\n"
     "[axes]\n'topology.route.queue_kb' = [8]\n",
     "no link named 'route' to set queue_kb of (its links: router)"),
    (f"[experiment]\nname = 'x'\n[replay]\nnetwork = 'packet'\ntopology = '{ROUTER}'\n"
     "[axes]\n'topology.router.queue_kb' = [8, 1]\n",
     "queue_kb: 1 is not a number in [1.5"),
    ("[experiment]\nname = 'x'\n[replay]\nprotocol = 'h2'\n", "cell 0 (the one cell): HTTP/2 in "
     "plain text (h2c) is served by nginx alone"),                  # the default server: wagon
    ("[experiment]\nname = 'x'\n[server]\nkind = 'nginx'\n[workload]\nclasses = "
     "'lan/h2:1,lan/http11:1'\n", "to h2 browsers alone"),
    # found when the cell's server or replay started, after the cells before it had played
    ("[experiment]\nname = 'x'\nduration = 4\n[axes]\n'replay.warmup' = [0, 4]\n",
     "cell 1 (replay.warmup=4): replay.warmup 4 s leaves nothing of the 4 s of arrivals"),
    ("[experiment]\nname = 'x'\n[replay]\nloss = 0.01\n", "cell 0 (the one cell): --loss "
     "needs --network packet"),
    ("[experiment]\nname = 'x'\n[server]\nkind = 'nginx'\n[axes]\n'server.template' = "
     "['nowhere.conf']\n", "cell 0 (server.template=nowhere.conf): server.template "),
])
def test_a_recipe_wagon_cannot_run_is_one_line(tmp_path, text, message):
    recipe = tmp_path / "r.toml"
    recipe.write_text(text)
    r = CliRunner().invoke(main, ["experiment", str(recipe), "--dry-run"])
    assert r.exit_code == 2 and message in r.output, r.output
    assert len(r.output.strip().splitlines()) == 1 and "Traceback" not in r.output


def test_an_h2_cell_with_a_template_of_yours_without_http2_is_refused_first(tmp_path):
    """nginx filled from a template without {{ http2 }} speaks HTTP/1.1 only: the cell's h2
    browsers would be refused by the replay's preflight after the cells before it had played
    (exit 3, naming a --target the recipe never gave); now one line before anything starts."""
    (tmp_path / "mine.conf").write_text(NGINX_TEMPLATE.replace("{{ http2 }}", ""))
    recipe = tmp_path / "r.toml"
    recipe.write_text("[experiment]\nname = 'x'\n[server]\nkind = 'nginx'\ntemplate = "
                      "'mine.conf'\n[replay]\nprotocol = 'h2'\n")
    r = CliRunner().invoke(main, ["experiment", str(recipe), "--dry-run"])
    assert r.exit_code == 2 and "mine.conf has no {{ http2 }}" in r.output, r.output
    assert len(r.output.strip().splitlines()) == 1, r.output


def test_an_h2_cell_plays_against_nginx_speaking_h2c(tmp_path):
    """A cell of h2 browsers: the experiment's nginx listens for HTTP/2 in plain text, and its
    own log has every request the replay counts ok (before, nginx spoke HTTP/1.1 only and the
    replay was refused: no HTTP/2 there), and its status page is read (over h2c: every
    HTTP/1.1 sample failed, server_failed 10 of 10, no utilisation)."""
    require_tool("nginx")
    recipe = tmp_path / "r.toml"
    recipe.write_text(TWO_BY_TWO.split("[axes]")[0].replace('kind = "wagon"', 'kind = "nginx"')
                      + '[replay]\nprotocol = "h2"\n')
    r = CliRunner().invoke(main, ["experiment", str(recipe), "--out", str(tmp_path / "run"),
                                  "--quiet"])
    assert r.exit_code == 0, r.output
    row, = _table(tmp_path / "run" / "table.csv")
    log = (tmp_path / "run" / "cells" / "c000-r0" / "server" / "access.log").read_text()
    assert int(row["requests_ok"]) == len(log.splitlines()) > 0 and row["requests_failed"] == "0"
    conns = {line.split()[3] for line in log.splitlines()}          # $connection
    assert len(conns) == len({line.split()[1] for line in log.splitlines()})   # one a browser
    assert row["server_failed"] == "0" and int(row["server_samples"]) > 0   # its status page
    assert row["server_utilisation"] != ""                          # (read over h2c too)


def test_a_shipped_recipe_is_found_by_name_beside_its_own_run_folder(tmp_path):
    (tmp_path / "wagon-fig13").mkdir()                       # what a first run leaves here
    r = CliRunner().invoke(main, ["experiment", "wagon-fig13", "--dry-run"])
    assert r.exit_code == 0 and r.output.startswith("wagon-fig13: 6 cells"), r.output


def test_every_shipped_recipe_reads_and_names_what_its_plots_draw(tmp_path):
    """Each recipe wagon ships is valid, and every column its plots draw is one a run writes
    (a measure of its groups, or an axis)."""
    columns = {"pages": ("page_mean_with_cut_s", "page_km_median_s",
                         "page_html_latency_mean_s"),
               "requests": ("served_rps", "offered_rps", "requests_failed"),
               "server": ("server_busy_mean", "server_listen_drops_delta"), "hurst": ("hurst_aggregated_variance",
                                                           "hurst_wavelet")}
    assert len(shipped()) >= 6
    from wagon.experiment.run import check_cells
    for name, path in shipped().items():
        recipe = read_recipe(path)
        check_cells(recipe)                              # every cell's workload can be drawn
        assert recipe.name == name and recipe.plots
        known = set(recipe.axes) | {c for g in recipe.tables["experiment"]["measures"]
                                    for c in columns.get(g, ())}
        for plot in recipe.plots:
            assert {plot["x"], *plot["y"]} - {None} <= known, (name, plot)


@pytest.mark.parametrize("sig, status", [(signal.SIGTERM, 5), (signal.SIGKILL, -9)])
def test_a_stopped_experiment_leaves_no_server_running(tmp_path, sig, status):
    """SIGTERM: the replay under way stops, its row is kept (stopped_by signal), no later run
    is played, exit 5. SIGKILL: no row, but the server still goes (it dies with its parent)."""
    require_tool("nginx")
    recipe = tmp_path / "r.toml"
    recipe.write_text(TWO_BY_TWO.replace("duration = 4", "duration = 60").replace(
        '"server.kind" = ["wagon", "nginx"]', '"server.kind" = ["nginx", "wagon"]'))
    run = subprocess.Popen([sys.executable, "-m", "wagon", "experiment", str(recipe), "--out",
                            str(tmp_path / "run"), "--quiet"], stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE)
    log = tmp_path / "run" / "cells" / "c000-r0" / "server" / "access.log"
    deadline = time.monotonic() + 30
    while not (log.exists() and log.stat().st_size):        # nginx is answering the replay
        assert time.monotonic() < deadline and run.poll() is None, run.stderr.read()
        time.sleep(0.1)
    pid = int((log.parent / "nginx.pid").read_text())
    run.send_signal(sig)
    assert run.wait(30) == status
    deadline = time.monotonic() + 10
    while os.path.exists(f"/proc/{pid}") and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not os.path.exists(f"/proc/{pid}")                 # nginx's master is gone
    table = tmp_path / "run" / "table.csv"
    if sig == signal.SIGTERM:
        rows = _table(table)
        assert len(rows) == 1 and rows[0]["stopped_by"] == "signal"
        assert "stopped by a signal in cell 0" in run.stderr.read().decode()
    else:
        assert not table.exists()


def test_a_results_row_the_format_refuses_stops_its_run_and_the_cells_go_on(tmp_path,
                                                                             monkeypatch):
    """A run whose requests file has a row ``read_results`` refuses (here: one answer's last
    byte put before its first, as unordered kernel timestamps once made them) is a row of the
    table, stopped ``results_refused`` with the reader's line, counted stopped per cell and on
    the console; the next cell is played and measured (it was: the reader's error ended the
    experiment, that cell's row and every later one lost)."""
    from wagon.experiment import run as runner
    real = runner.replay

    def replay_then_spoil_cell_0(scenario, options):
        summary = real(scenario, options)
        if "c000-r0" in options.results:
            path = Path(options.results)
            with open(path, newline="") as f:
                rows = list(csv.reader(f))
            head = rows[0]
            start, first = head.index("start"), head.index("first_byte")
            row = next(r for r in rows[1:] if r[head.index("error")] == "")
            row[head.index("last_byte")] = repr((float(row[start]) + float(row[first])) / 2)
            with open(path, "w", newline="") as f:
                csv.writer(f, lineterminator="\n").writerows(rows)
        return summary

    monkeypatch.setattr(runner, "replay", replay_then_spoil_cell_0)
    recipe = tmp_path / "r.toml"
    recipe.write_text(TWO_BY_TWO.replace('"server.kind" = ["wagon", "nginx"]\n', ""))
    r = CliRunner().invoke(main, ["experiment", str(recipe), "--out", str(tmp_path / "run")])
    assert r.exit_code == 0, r.output
    rows = _table(tmp_path / "run" / "table.csv")
    assert [x["replay.protocol"] for x in rows] == ["http10x1", "http11"]
    spoiled, played = rows
    assert spoiled["stopped_by"] == "results_refused"
    assert "c000-r0/results.csv:" in spoiled["stopped_why"]
    assert "last_byte must not be before first_byte" in spoiled["stopped_why"]
    assert spoiled["page_finished"] == spoiled["requests_ok"] == ""      # nothing read
    assert int(spoiled["sessions"]) > 0 and spoiled["generator_lagged"] in ("True", "False")
    assert played["stopped_by"] == "" and int(played["page_finished"]) > 0
    assert [x["stopped"] for x in _table(tmp_path / "run" / "summary.csv")] == ["1", "0"]
    assert "cell 0 rep 0: pages - done" in r.output and "STOPPED (results_refused: " in r.output
    assert "2 runs;" in r.output and "; 1 stopped early" in r.output


def test_a_plot_point_is_the_mean_of_the_repetitions_with_its_t_interval():
    from scipy import stats
    from wagon.report.experiment import series
    rows = [{"x": 1, "s": "a", "y": 2.0}, {"x": 1, "s": "a", "y": 4.0}, {"x": 2, "s": "a", "y": ""},
            {"x": 1, "s": "b", "y": 9.0}, {"x": 2, "s": "a", "y": "7.5"}]
    half = stats.t.ppf(0.975, 1) * 2 ** 0.5 / 2 ** 0.5          # sd of (2, 4) over √2
    got = series(rows, "x", "y", "s")
    assert got["a"][0] == pytest.approx((1, 3.0, 3.0 - half, 3.0 + half))
    assert got["a"][1] == (2, 7.5, 7.5, 7.5) and got["b"] == [(1, 9.0, 9.0, 9.0)]   # one run


def test_an_axis_on_the_seed_or_the_pause_is_what_each_cell_plays(tmp_path, monkeypatch):
    """``experiment.seed`` and ``experiment.pause`` as axes: each cell's repetitions play that
    cell's seed + K and wait that cell's pause (they used the recipe's own values)."""
    from wagon.experiment import run as runner
    path = tmp_path / "r.toml"
    path.write_text("[experiment]\nname = 'x'\nrepetitions = 2\n[axes]\n"
                    "'experiment.seed' = [5, 40]\n'experiment.pause' = [0.25, 0.5]\n")
    played, slept = [], []
    monkeypatch.setattr(runner, "play", lambda recipe, run, sites, out: (
        played.append(run.seed), {"stopped_by": "duration", "experiment": "x", "server": "wagon",
                                  "cell": run.cell.index, **run.cell.axes})[1])
    monkeypatch.setattr(runner, "write_table", lambda rows, path: None)
    monkeypatch.setattr(runner.time, "sleep", slept.append)
    runner.run_experiment(read_recipe(path), tmp_path / "out")
    assert played == [5, 6, 5, 6, 40, 41, 40, 41]
    assert slept == [0.25, 0.5, 0.5, 0.25, 0.25, 0.5, 0.5]
    plan = CliRunner().invoke(main, ["experiment", str(path), "--dry-run"]).output
    assert "(seeds 5–6, 40–41)" in plan.splitlines()[0], plan      # what the runs will play


def test_a_plot_of_a_column_the_table_lacks_is_a_reported_skip(tmp_path):
    """A [[plot]] naming no column of the table (a typo in y, x or series): no figure, and why
    (it was an empty PNG, said nowhere); the others are drawn."""
    from wagon.report.experiment import plot_table
    rows = [{"cell": 0, "x": 1, "y": 2.0}, {"cell": 1, "x": 2, "y": 3.0}]
    flat = {"title": "", "logx": False, "logy": False}
    plots = [{"x": "x", "y": ["y_typo"], "series": None, **flat},
             {"x": "x", "y": ["y"], "series": "nope", **flat}]
    files, skipped = plot_table(rows, plots, tmp_path)
    assert files == [] and list(tmp_path.iterdir()) == []
    assert skipped == ["plot 0 skipped: the table has no column 'y_typo'",
                       "plot 1 skipped: the table has no column 'nope'"]


def test_logx_draws_numbers_on_a_log_axis_and_labels_on_a_linear_one(monkeypatch, tmp_path):
    """``logx`` (IP-TNE's clients, doubling): a log x axis where x is numeric; labels (a
    classes axis) keep their evenly spaced ticks."""
    from wagon.report import experiment as report
    drawn = []
    monkeypatch.setattr(report, "save_png", lambda fig, path, dpi: drawn.append(fig))
    plot = {"y": ["y"], "series": None, "title": "", "logx": True, "logy": False}
    rows = [{"n": 1, "c": "lan/http10", "y": 1.0}, {"n": 256, "c": "wan/http11", "y": 2.0}]
    report.plot_table(rows, [{**plot, "x": "n"}, {**plot, "x": "c"}], tmp_path)
    assert [fig.axes[0].get_xscale() for fig in drawn] == ["log", "linear"]
    assert [t.get_text() for t in drawn[1].axes[0].get_xticklabels()] == ["lan/http10",
                                                                           "wan/http11"]
    with pytest.raises(RecipeError, match="logx, logy\\); it has 'logz'"):
        (tmp_path / "r.toml").write_text("[experiment]\nname = 'x'\n[[plot]]\nx = 'a'\n"
                                         "y = 'b'\nlogz = true\n")
        read_recipe(tmp_path / "r.toml")


def test_s_clients_timeout_is_the_replays_connect_timeout():
    """``replay.connect_timeout`` (sclient-decline's T = 0.5 s) is what every cell's replay
    gives a connection to be established; a recipe without it keeps wagon replay's 10 s."""
    from wagon.experiment.run import replay_options
    decline = read_recipe(shipped()["sclient-decline"])
    assert {replay_options(c.settings, "http://127.0.0.1/", None).connect_timeout
            for c in decline.cells()} == {0.5}
    rtt = read_recipe(shipped()["sclient-rtt"])
    assert replay_options(rtt.cells()[0].settings, "http://127.0.0.1/", None).connect_timeout \
        == 10.0


@needs_packet_path
def test_an_axis_on_a_topologys_link_sets_what_the_packets_cross(tmp_path):
    """An axis on ``topology.x.rate`` plays each cell behind a link of its rate, not the file's
    100 Mbit/s: by nginx's own log, four closed-loop users asking a 1 KB document get at most
    400 kbit/s × the run's 4 s (and one answer each in flight) of bodies through at 400 kbit/s,
    and at 4 Mbit/s at least three times the answers."""
    require_tool("nginx")
    (tmp_path / "t.toml").write_text('[[link]]\nname = "x"\nrate = "100Mbit"\n'
                                     'classes = ["2ms-100000kbps"]\n')
    recipe = tmp_path / "r.toml"
    recipe.write_text(f"""[experiment]\nname = "link-axis"\nrepetitions = 1\nduration = 3
drain = 1\npause = 0\n[workload]\nmodel = "{shipped()['iptne-loss'].parent / 'file-1k.json'}"
classes = "2ms-100000kbps/http11"\nusers = 4\n[server]\nkind = "nginx"\n[replay]
network = "packet"\ntopology = "t.toml"\n[axes]\n"topology.x.rate" = ["400kbit", "4Mbit"]\n""")
    r = CliRunner().invoke(main, ["experiment", str(recipe), "--out", str(tmp_path / "run"),
                                  "--quiet"])
    assert r.exit_code == 0, r.output
    answers, bodies = [], []
    for cell in (0, 1):
        log = [line.split() for line in (tmp_path / "run" / "cells" / f"c{cell:03d}-r0" /
                                         "server" / "access.log").read_text().splitlines()]
        answers.append(len(log))
        bodies.append(sum(int(f[6]) for f in log))            # $body_bytes_sent
    assert 0 < bodies[0] <= 400e3 / 8 * 4 + 4 * 1024, bodies
    assert answers[1] >= 3 * answers[0], answers


def test_iptne_loss_plays_the_papers_site_behind_its_router():
    """``iptne-loss``'s site is the one Williamson, Simmonds & Arlitt describe (3,000 documents,
    about 30 MB, median 3,600 bytes, mean 9,963, none over 1.4 MB, hits with a Zipf slope of
    −0.8 by a least-squares fit of log hits on log rank), and its cells put every one of their
    four subnetworks' clients behind the one 100 Mbit/s router link of their buffer, from a
    server whose first flight is 2 segments of 536 bytes."""
    import json

    import numpy as np
    from wagon.formats.topology import read_topology
    recipe = read_recipe(shipped()["iptne-loss"])
    model = json.loads(recipe.resolve("iptne-variable.json").read_text())
    size = np.array([p["size"] for p in model["site"]["pages"]])
    hits = np.sort([p["hits"] for p in model["site"]["pages"]])[::-1]
    assert len(size) == 3000 and abs(size.sum() / 30e6 - 1) < 0.01
    assert np.median(size) == 3600 and abs(size.mean() - 9963) < 1 and size.max() <= 1.4e6
    slope = np.polyfit(np.log(np.arange(1, len(hits) + 1)), np.log(hits), 1)[0]
    assert abs(slope + 0.8) < 0.01, slope
    queues = set()
    for cell in recipe.cells():
        topo = read_topology(recipe.resolve(cell.settings["replay"]["topology"]),
                             cell.topology_links)
        (link,) = topo.links
        queues.add(link.down.queue)
        assert topo.initcwnd == 2                      # a TCP of 2002 (RFC 2581)
        assert topo.mss == 536                         # IP-TNE's clients' (their Section 4.1)
        assert link.up.rate == link.down.rate == 100e6 / 8 and sorted(link.classes) == [
            f"{r}ms-100000kbps" for r in (2, 4, 6, 8)]
    assert queues == {3.5e3, 5.5e3, 9.5e3, 64e3}      # 2, 4, 8 kB + the packet on the wire
